/*-------------------------------------------------------------------------
 *
 * host_buffers.c
 *	  Drains one join input into host memory, column by column: the columns
 *	  the join returns or tests on the host are kept as Datum arrays (values
 *	  passed by reference are copied into large arena blocks), so forming the
 *	  scan tuple of a joined pair is a few array reads, with no tuple to
 *	  deform; the key columns the device program reads are extracted into
 *	  typed arrays, structure-of-arrays, ready to copy to the device, each
 *	  value encoded as key_encoding.h says: a key the device cannot hold
 *	  (text, uuid, bytea) as its 64-bit hash, timetz and interval keys as
 *	  order-preserving int64s as they are drained, numeric keys kept as they
 *	  are until the join knows the scale of its fixed point
 *	  (gj_host_buffer_encode, key_encoding.c).  A value no int64 holds exactly
 *	  is never rounded: its row is flagged, and the executor leaves that
 *	  row's pairs to the host.
 *
 * All memory belongs to the buffer's own context, so a rescan or the end of
 * the query frees it in one step, on success and on ERROR alike.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/datum.h"
#include "utils/date.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "host_chunking/host_buffers.h"
#include "kernels/backend.h"

/* Tuples are copied into blocks of this size (bigger tuples get their own). */
#define ARENA_BLOCK_SIZE	((Size) 1024 * 1024)
#define INITIAL_ROWS		1024

void
gj_host_buffer_init(HostSideBuffer *buf, MemoryContext parent, const char *name,
				 List *key_attnos, List *key_types, List *col_attnos, TupleDesc child_desc)
{
	ListCell   *la,
			   *lt;

	memset(buf, 0, sizeof(HostSideBuffer));
	buf->cxt = AllocSetContextCreate(parent, "GpuJoin rows", ALLOCSET_DEFAULT_SIZES);
	buf->numeric_scale = -1;
	MemoryContextSetIdentifier(buf->cxt, name);
	forboth(la, key_attnos, lt, key_types)
	{
		HostKeyColumn *key = &buf->keys[buf->nkeys++];

		key->attno = lfirst_int(la);
		key->type = lfirst_int(lt);
		buf->max_attno = Max(buf->max_attno, key->attno);
	}
	buf->cols = MemoryContextAllocZero(parent, sizeof(HostDatumColumn) * Max(list_length(col_attnos), 1));
	foreach(la, col_attnos)
	{
		HostDatumColumn *col = &buf->cols[buf->ncols++];
		Form_pg_attribute attr = TupleDescAttr(child_desc, lfirst_int(la) - 1);

		col->attno = lfirst_int(la);
		col->byval = attr->attbyval;
		col->typlen = attr->attlen;
		buf->max_attno = Max(buf->max_attno, col->attno);
	}
}

/*
 * Make key columns hashed: the device reads hashfunc(value, 0) computed with
 * the collation, as int8 (InvalidOid entries leave a column as it is).  The
 * function lookups live in the parent context, which outlives a rescan's
 * reset of the buffer's own.
 */
void
gj_host_buffer_set_key_hashes(HostSideBuffer *buf, List *hashfuncs, List *collations)
{
	ListCell   *lf,
			   *lc;

	Assert(list_length(hashfuncs) == 0 || list_length(hashfuncs) == buf->nkeys);
	forboth(lf, hashfuncs, lc, collations)
	{
		HostKeyColumn *key = &buf->keys[foreach_current_index(lf)];

		if (!OidIsValid(lfirst_oid(lf)))
			continue;
		Assert(key->type == GJT_INT8);
		key->hashed = true;
		key->hash_collation = lfirst_oid(lc);
		fmgr_info_cxt(lfirst_oid(lf), &key->hash_fn, MemoryContextGetParent(buf->cxt));
	}
}

void
gj_host_buffer_reset(HostSideBuffer *buf)
{
	int			i;

	MemoryContextReset(buf->cxt);
	buf->nrows = 0;
	buf->capacity = 0;
	buf->arena_next = NULL;
	buf->arena_left = 0;
	buf->bytes_stored = 0;
	buf->complete = false;
	buf->numeric_scale = -1;
	for (i = 0; i < buf->nkeys; i++)
	{
		buf->keys[i].values = NULL;
		buf->keys[i].isnull = NULL;
		buf->keys[i].device_isnull = NULL;
		buf->keys[i].numerics = NULL;
		buf->keys[i].max_scale = 0;
	}
	buf->drain_inexact = NULL;
	buf->inexact = NULL;
	buf->inexact_rows = NULL;
	buf->ninexact = 0;
	buf->encoded = false;
	for (i = 0; i < buf->ncols; i++)
	{
		buf->cols[i].values = NULL;
		buf->cols[i].isnull = NULL;
		buf->cols[i].has_nulls = false;
	}
}

static void
host_buffer_grow(HostSideBuffer *buf)
{
	int64		newcap = buf->capacity == 0 ? INITIAL_ROWS : buf->capacity * 2;
	int			i;

	if (buf->capacity >= GJ_MAX_SIDE_ROWS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("GpuJoin input has more than %lld rows",
						(long long) GJ_MAX_SIDE_ROWS),
				 errhint("Set gpujoin.enabled to off for this query.")));
	newcap = Min(newcap, GJ_MAX_SIDE_ROWS);

	for (i = 0; i < buf->ncols; i++)
	{
		HostDatumColumn *col = &buf->cols[i];

		if (col->values == NULL)
		{
			col->values = MemoryContextAllocHuge(buf->cxt, sizeof(Datum) * newcap);
			col->isnull = MemoryContextAllocHuge(buf->cxt, sizeof(bool) * newcap);
		}
		else
		{
			col->values = repalloc_huge(col->values, sizeof(Datum) * newcap);
			col->isnull = repalloc_huge(col->isnull, sizeof(bool) * newcap);
		}
	}

	for (i = 0; i < buf->nkeys; i++)
	{
		HostKeyColumn *key = &buf->keys[i];

		if (key->values == NULL)
			key->values = MemoryContextAllocHuge(buf->cxt, sizeof(int64) * newcap);
		else
			key->values = repalloc_huge(key->values, sizeof(int64) * newcap);
		if (key->type == GJT_NUMERIC && key->numerics == NULL)
			key->numerics = MemoryContextAllocHuge(buf->cxt, sizeof(Datum) * newcap);
		else if (key->type == GJT_NUMERIC)
			key->numerics = repalloc_huge(key->numerics, sizeof(Datum) * newcap);
		if (key->isnull != NULL)
		{
			key->isnull = repalloc_huge(key->isnull, newcap);
			memset(key->isnull + buf->capacity, 0, newcap - buf->capacity);
		}
	}
	if (buf->drain_inexact != NULL)
	{
		buf->drain_inexact = repalloc_huge(buf->drain_inexact, newcap);
		memset(buf->drain_inexact + buf->capacity, 0, newcap - buf->capacity);
	}
	buf->capacity = newcap;
}

/* A stable copy of a by-reference value, in the arena. */
static Datum
arena_copy(HostSideBuffer *buf, Datum value, int16 typlen)
{
	Size		len;
	char	   *dst;

	/* expanded objects (from a projection) are flattened by datumCopy */
	if (typlen == -1 && VARATT_IS_EXTERNAL_EXPANDED(DatumGetPointer(value)))
	{
		MemoryContext old = MemoryContextSwitchTo(buf->cxt);
		Datum		copy = datumCopy(value, false, typlen);

		MemoryContextSwitchTo(old);
		buf->bytes_stored += VARSIZE_ANY(DatumGetPointer(copy));
		return copy;
	}
	len = datumGetSize(value, false, typlen);
	if (MAXALIGN(len) > buf->arena_left)
	{
		Size		block = Max(MAXALIGN(len), ARENA_BLOCK_SIZE);

		buf->arena_next = MemoryContextAllocHuge(buf->cxt, block);
		buf->arena_left = block;
	}
	dst = buf->arena_next;
	memcpy(dst, DatumGetPointer(value), len);
	buf->arena_next += MAXALIGN(len);
	buf->arena_left -= MAXALIGN(len);
	buf->bytes_stored += MAXALIGN(len);
	return PointerGetDatum(dst);
}

/* Keep a numeric key value until the join's scale is known. */
static void
append_numeric(HostSideBuffer *buf, HostKeyColumn *key, int64 row, Datum value)
{
	struct varlena *plain = pg_detoast_datum_packed((struct varlena *) DatumGetPointer(value));
	int			scale;

	key->numerics[row] = arena_copy(buf, PointerGetDatum(plain), -1);
	if ((Pointer) plain != DatumGetPointer(value))
		pfree(plain);
	key->values[row] = 0;
	/* a special value (-1) needs no scale; one over the maximum fits none */
	scale = gj_host_numeric_min_scale(key->numerics[row]);
	if (scale >= 0 && scale <= GJ_NUMERIC_MAX_SCALE)
		key->max_scale = Max(key->max_scale, scale);
}

void
gj_host_buffer_append(HostSideBuffer *buf, TupleTableSlot *slot)
{
	int64		row = buf->nrows;
	int			i;

	if (buf->nrows >= buf->capacity)
		host_buffer_grow(buf);
	if (buf->max_attno > 0)
		slot_getsomeattrs(slot, buf->max_attno);

	for (i = 0; i < buf->ncols; i++)
	{
		HostDatumColumn *col = &buf->cols[i];
		Datum		value = slot->tts_values[col->attno - 1];
		bool		isnull = slot->tts_isnull[col->attno - 1];

		col->isnull[row] = isnull;
		if (isnull)
		{
			col->values[row] = (Datum) 0;
			col->has_nulls = true;
		}
		else if (col->byval)
			col->values[row] = value;
		else
			col->values[row] = arena_copy(buf, value, col->typlen);
	}

	for (i = 0; i < buf->nkeys; i++)
	{
		HostKeyColumn *key = &buf->keys[i];

		if (slot->tts_isnull[key->attno - 1])
		{
			if (key->isnull == NULL)
				key->isnull = MemoryContextAllocZero(buf->cxt, buf->capacity);
			key->isnull[row] = 1;
			key->values[row] = 0;
		}
		else if (key->hashed)
			key->values[row] = gj_hashed_key_value(&key->hash_fn, key->hash_collation,
												   slot->tts_values[key->attno - 1]);
		else if (key->type == GJT_NUMERIC)
			append_numeric(buf, key, row, slot->tts_values[key->attno - 1]);
		else if (!gj_datum_to_exact_value(slot->tts_values[key->attno - 1], key->type,
										  &key->values[row]))
		{
			if (buf->drain_inexact == NULL)
				buf->drain_inexact = MemoryContextAllocZero(buf->cxt, buf->capacity);
			key->values[row] = 0;
			buf->drain_inexact[row] = 1;
			/* NULL to the backends: see device_isnull */
			if (key->isnull == NULL)
				key->isnull = MemoryContextAllocZero(buf->cxt, buf->capacity);
			key->isnull[row] = 1;
		}
	}
	buf->bytes_stored += buf->ncols * (sizeof(Datum) + 1) + buf->nkeys * sizeof(int64);
	buf->nrows++;
}

void
gj_host_buffer_key_columns(const HostSideBuffer *buf, GjKeyColumns *out)
{
	int			i;

	memset(out, 0, sizeof(GjKeyColumns));
	out->ncols = buf->nkeys;
	for (i = 0; i < buf->nkeys; i++)
	{
		out->values[i] = buf->keys[i].values;
		out->isnull[i] = buf->keys[i].device_isnull != NULL ?
			buf->keys[i].device_isnull : buf->keys[i].isnull;
	}
}

/* Bytes one row's key columns take on the device: value and null flag. */
int
gj_host_buffer_key_row_bytes(const HostSideBuffer *buf)
{
	return buf->nkeys * (sizeof(int64) + 1);
}

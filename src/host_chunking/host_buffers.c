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

#include "gpujoin.h"
#include "host_chunking/column_cache.h"
#include "host_chunking/host_buffers.h"
#include "kernels/backend.h"

/* Tuples are copied into blocks of this size (bigger tuples get their own). */
#define ARENA_BLOCK_SIZE	((Size) 1024 * 1024)
#define INITIAL_ROWS		1024

static void host_buffer_grow(HostSideBuffer *buf, int64 min_rows);

/*
 * The column arrays: huge allocations, as one input may hold more than 1 GB
 * of a column, the large ones kept by the process for its next query
 * (column_cache.c).  (Asking for transparent huge pages behind them with
 * madvise was measured: it saved the page faults of a 5M-row drain, 105 ms
 * down to 73 ms, but the first such query of a backend stalled 250 ms in
 * the kernel's compaction, so it is not done.)
 */
static void *
column_alloc(HostSideBuffer *buf, Size len)
{
	return gj_column_alloc(buf->cxt, len);
}

static void *
column_realloc(HostSideBuffer *buf, void *p, Size oldlen, Size len)
{
	return gj_column_realloc(buf->cxt, p, oldlen, len);
}

static inline Size row_bytes(const HostSideBuffer *buf);

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

/*
 * Make room for nrows rows at once, ahead of a drain whose size is roughly
 * known, so that the columns are not copied again as they grow.
 */
void
gj_host_buffer_reserve(HostSideBuffer *buf, int64 nrows)
{
	/* never more than gpujoin.max_host_memory (or a spill chunk) would hold */
	int64		limit = buf->spill != NULL ? buf->spill_limit :
		(int64) gpujoin_max_host_memory_kb * 1024;
	int64		most = limit / Max(row_bytes(buf), 1);

	nrows = Min(nrows, Min(most, GJ_MAX_SIDE_ROWS));
	if (nrows > buf->capacity)
		host_buffer_grow(buf, nrows);
}

/*
 * Room for nrows rows, exactly as asked: a spilled chunk read back
 * (spill_files.c) knows its size.
 */
void
gj_host_buffer_make_room(HostSideBuffer *buf, int64 nrows)
{
	if (nrows > buf->capacity)
		host_buffer_grow(buf, nrows);
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

/* Room for at least min_rows rows (and at least twice the current room). */
static void
host_buffer_grow(HostSideBuffer *buf, int64 min_rows)
{
	int64		newcap = buf->capacity == 0 ? INITIAL_ROWS : buf->capacity * 2;
	int			i;

	newcap = Max(newcap, min_rows);

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
			col->values = column_alloc(buf, sizeof(Datum) * newcap);
			col->isnull = column_alloc(buf, sizeof(bool) * newcap);
		}
		else
		{
			col->values = column_realloc(buf, col->values, sizeof(Datum) * buf->capacity,
										 sizeof(Datum) * newcap);
			col->isnull = column_realloc(buf, col->isnull, sizeof(bool) * buf->capacity,
										 sizeof(bool) * newcap);
		}
	}

	for (i = 0; i < buf->nkeys; i++)
	{
		HostKeyColumn *key = &buf->keys[i];

		if (key->values == NULL)
			key->values = column_alloc(buf, sizeof(int64) * newcap);
		else
			key->values = column_realloc(buf, key->values, sizeof(int64) * buf->capacity,
										 sizeof(int64) * newcap);
		if (key->type == GJT_NUMERIC && key->numerics == NULL)
			key->numerics = column_alloc(buf, sizeof(Datum) * newcap);
		else if (key->type == GJT_NUMERIC)
			key->numerics = column_realloc(buf, key->numerics, sizeof(Datum) * buf->capacity,
										   sizeof(Datum) * newcap);
		if (key->isnull != NULL)
		{
			key->isnull = column_realloc(buf, key->isnull, buf->capacity, newcap);
			memset(key->isnull + buf->capacity, 0, newcap - buf->capacity);
		}
	}
	if (buf->drain_inexact != NULL)
	{
		buf->drain_inexact = column_realloc(buf, buf->drain_inexact, buf->capacity, newcap);
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

/* Store one value of a returned column. */
static inline void
store_datum(HostSideBuffer *buf, HostDatumColumn *col, int64 row, Datum value, bool isnull)
{
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

/* Store one value of a key column, encoded as key_encoding.h says. */
static inline void
store_key(HostSideBuffer *buf, HostKeyColumn *key, int64 row, Datum value, bool isnull)
{
	if (isnull)
	{
		if (key->isnull == NULL)
			key->isnull = MemoryContextAllocZero(buf->cxt, buf->capacity);
		key->isnull[row] = 1;
		key->values[row] = 0;
	}
	else if (key->hashed)
		key->values[row] = gj_hashed_key_value(&key->hash_fn, key->hash_collation, value);
	else if (key->type == GJT_NUMERIC)
		append_numeric(buf, key, row, value);
	else if (!gj_datum_to_exact_value(value, key->type, &key->values[row]))
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

/* Memory a row takes besides its by-reference values. */
static inline Size
row_bytes(const HostSideBuffer *buf)
{
	return buf->ncols * (sizeof(Datum) + 1) + buf->nkeys * sizeof(int64);
}

void
gj_host_buffer_append(HostSideBuffer *buf, TupleTableSlot *slot)
{
	int64		row = buf->nrows;
	int			i;

	if (buf->nrows >= buf->capacity)
		host_buffer_grow(buf, 0);
	if (buf->max_attno > 0)
		slot_getsomeattrs(slot, buf->max_attno);

	for (i = 0; i < buf->ncols; i++)
	{
		int			att = buf->cols[i].attno - 1;

		store_datum(buf, &buf->cols[i], row, slot->tts_values[att], slot->tts_isnull[att]);
	}
	for (i = 0; i < buf->nkeys; i++)
	{
		int			att = buf->keys[i].attno - 1;

		store_key(buf, &buf->keys[i], row, slot->tts_values[att], slot->tts_isnull[att]);
	}
	buf->bytes_stored += row_bytes(buf);
	buf->nrows++;
}

/*
 * Append n rows given column by column: values[attno - 1][j] and
 * isnull[attno - 1][j] are attribute attno of row j, for every attribute a
 * column or key of the buffer reads (the others may be NULL).  A column at
 * a time, so each loop is over one array: the columnar heap reader
 * (heap_reader.c) hands a page of rows at once.
 */
void
gj_host_buffer_append_columns(HostSideBuffer *buf, int n, Datum *const *values,
							  bool *const *isnull)
{
	int64		row0 = buf->nrows;
	int			i,
				j;

	if (buf->nrows + n > buf->capacity)
		host_buffer_grow(buf, buf->nrows + n);
	for (i = 0; i < buf->ncols; i++)
	{
		HostDatumColumn *col = &buf->cols[i];
		const Datum *v = values[col->attno - 1];
		const bool *nl = isnull[col->attno - 1];

		if (col->byval)
		{
			/* the common case, a loop the compiler can unroll */
			for (j = 0; j < n; j++)
			{
				col->values[row0 + j] = nl[j] ? (Datum) 0 : v[j];
				col->isnull[row0 + j] = nl[j];
				col->has_nulls |= nl[j];
			}
		}
		else
		{
			for (j = 0; j < n; j++)
				store_datum(buf, col, row0 + j, v[j], nl[j]);
		}
	}
	for (i = 0; i < buf->nkeys; i++)
	{
		HostKeyColumn *key = &buf->keys[i];
		const Datum *v = values[key->attno - 1];
		const bool *nl = isnull[key->attno - 1];
		int64	   *out = key->values + row0;

		/* the plain types in loops of their own: no switch per value */
		if (!key->hashed && (key->type == GJT_INT4 || key->type == GJT_DATE))
		{
			for (j = 0; j < n; j++)
				out[j] = nl[j] ? 0 : DatumGetInt32(v[j]);
		}
		else if (!key->hashed && key->type == GJT_FLOAT8)
		{
			for (j = 0; j < n; j++)
				out[j] = nl[j] ? 0 : gj_double_to_bits(DatumGetFloat8(v[j]));
		}
		else if (!key->hashed && (key->type == GJT_INT8 || key->type == GJT_TIMESTAMP ||
								  key->type == GJT_TIMESTAMPTZ))
		{
			for (j = 0; j < n; j++)
				out[j] = nl[j] ? 0 : DatumGetInt64(v[j]);
		}
		else
		{
			for (j = 0; j < n; j++)
				store_key(buf, key, row0 + j, v[j], nl[j]);
			continue;
		}
		/* the NULLs of a plain type, as store_key marks them */
		for (j = 0; j < n; j++)
		{
			if (unlikely(nl[j]))
			{
				if (key->isnull == NULL)
					key->isnull = MemoryContextAllocZero(buf->cxt, buf->capacity);
				key->isnull[row0 + j] = 1;
			}
		}
	}
	buf->bytes_stored += n * row_bytes(buf);
	buf->nrows += n;
}

/*
 * When the rows drained so far outgrow the side's share of
 * gpujoin.max_host_memory: spill them, if the buffer may spill (see
 * HostSideBuffer.spill), else ERROR when they and the other side's outgrow
 * gpujoin.max_host_memory.
 */
void
gj_host_buffer_check_limit(HostSideBuffer *buf, int64 other_side_bytes)
{
	int64		host_limit = (int64) gpujoin_max_host_memory_kb * 1024;

	if (buf->spill != NULL)
	{
		if (unlikely(buf->bytes_stored > buf->spill_limit && buf->nrows > 0))
			buf->spill(buf, buf->spill_arg);
		return;
	}
	if (unlikely(buf->bytes_stored + other_side_bytes > host_limit))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("GpuJoin inputs need more than gpujoin.max_host_memory (%d kB) of host memory",
						gpujoin_max_host_memory_kb),
				 errdetail("GpuJoin holds both inputs in memory; %lld rows of one input took %lld kB.",
						   (long long) buf->nrows, (long long) (buf->bytes_stored / 1024)),
				 errhint("Raise gpujoin.max_host_memory, or set gpujoin.enabled to off for this query.")));
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

/*
 * A cleared bitmap of one match flag per row, reusing the previous one
 * (kept in join_cxt across rescans) when it is big enough.
 */
uint8 *
gpujoin_match_flags_reset(MemoryContext cxt, uint8 *flags, int64 *allocated, int64 nrows)
{
	int64		bytes = Max((nrows + 7) / 8, 1);

	if (flags == NULL || bytes > *allocated)
	{
		if (flags != NULL)
			pfree(flags);
		flags = MemoryContextAlloc(cxt, bytes);
		*allocated = bytes;
	}
	memset(flags, 0, bytes);
	return flags;
}

/*-------------------------------------------------------------------------
 *
 * host_buffers.c
 *	  Drains one join input into host memory, column by column: the columns
 *	  the join returns or tests on the host are kept as Datum arrays (values
 *	  passed by reference are copied into large arena blocks), so forming the
 *	  scan tuple of a joined pair is a few array reads, with no tuple to
 *	  deform; the key columns the device program reads are extracted into
 *	  typed arrays, structure-of-arrays, ready to copy to the device.  A key
 *	  the device cannot hold (text, uuid, bytea) is replaced by its 64-bit
 *	  hash, computed here with PostgreSQL's own hash function for the type.
 *	  timetz and interval keys are encoded into order-preserving int64s as
 *	  they are drained; numeric keys once the join knows the scale of its
 *	  fixed point (host_buffer_encode).  A value no int64 holds exactly is
 *	  never rounded: its row is flagged, and the executor leaves that row's
 *	  pairs to the host.
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
host_buffer_init(HostSideBuffer *buf, MemoryContext parent, const char *name,
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
host_buffer_set_key_hashes(HostSideBuffer *buf, List *hashfuncs, List *collations)
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
host_buffer_reset(HostSideBuffer *buf)
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

/*
 * numeric's storage format (src/backend/utils/adt/numeric.c, the on-disk
 * format, which pg_upgrade keeps stable): a uint16 header, then for the long
 * form an int16 weight, then base-10000 digits, most significant first; the
 * value is the sum of digit[i] * 10000^(weight - i).  numeric.c keeps these
 * macros private, so the few we need are repeated here.
 */
#define NUMERIC_SIGN_MASK		0xC000
#define NUMERIC_NEG				0x4000
#define NUMERIC_SHORT			0x8000
#define NUMERIC_SPECIAL			0xC000
#define NUMERIC_EXT_SIGN_MASK	0xF000
#define NUMERIC_NAN				0xC000
#define NUMERIC_PINF			0xD000
#define NUMERIC_SHORT_SIGN_MASK 0x2000
#define NUMERIC_SHORT_WEIGHT_SIGN_MASK 0x0040
#define NUMERIC_SHORT_WEIGHT_MASK 0x003F
#define NUMERIC_DEC_DIGITS		4	/* decimal digits per base-10000 digit */

typedef struct NumericView
{
	int			special;		/* 0, or NUMERIC_NAN / NUMERIC_PINF / NINF */
	bool		negative;
	int			weight;
	int			ndigits;
	const char *digits;			/* int16 digits, possibly unaligned */
} NumericView;

/* Read a numeric (not toasted; a short varlena header is fine). */
static void
numeric_view(Datum d, NumericView *v)
{
	const char *data = VARDATA_ANY(DatumGetPointer(d));
	int			len = VARSIZE_ANY_EXHDR(DatumGetPointer(d));
	uint16		header;
	int16		weight;

	memset(v, 0, sizeof(NumericView));
	memcpy(&header, data, sizeof(uint16));
	if ((header & NUMERIC_SIGN_MASK) == NUMERIC_SPECIAL)
		v->special = header & NUMERIC_EXT_SIGN_MASK;
	else if ((header & NUMERIC_SIGN_MASK) == NUMERIC_SHORT)
	{
		v->negative = (header & NUMERIC_SHORT_SIGN_MASK) != 0;
		v->weight = (header & NUMERIC_SHORT_WEIGHT_MASK) |
			((header & NUMERIC_SHORT_WEIGHT_SIGN_MASK) ? ~NUMERIC_SHORT_WEIGHT_MASK : 0);
		v->digits = data + sizeof(uint16);
		v->ndigits = (len - sizeof(uint16)) / sizeof(int16);
	}
	else
	{
		v->negative = (header & NUMERIC_SIGN_MASK) == NUMERIC_NEG;
		memcpy(&weight, data + sizeof(uint16), sizeof(int16));
		v->weight = weight;
		v->digits = data + sizeof(uint16) + sizeof(int16);
		v->ndigits = (len - sizeof(uint16) - sizeof(int16)) / sizeof(int16);
	}
}

static inline int
numeric_digit(const NumericView *v, int i)
{
	int16		digit;

	memcpy(&digit, v->digits + i * sizeof(int16), sizeof(int16));
	return digit;
}

/* Fractional decimal digits a finite numeric needs to be exact (0.50 -> 1). */
static int
numeric_min_scale(const NumericView *v)
{
	int			last = v->ndigits - 1;
	int			digit;
	int			scale;

	/* numeric.c strips zero digits at the ends, but do not rely on it */
	while (last >= 0 && numeric_digit(v, last) == 0)
		last--;
	if (last < 0)
		return 0;
	scale = NUMERIC_DEC_DIGITS * (last - v->weight);
	for (digit = numeric_digit(v, last); digit % 10 == 0; digit /= 10)
		scale--;
	return Max(scale, 0);
}

/*
 * value * 10^scale as an int64 in the finite range, or false if that is
 * not an integer (never, at the join's scale) or does not fit.
 */
static bool
numeric_scaled(const NumericView *v, int scale, int64 *result)
{
	static const int64 pow10[] = {
		INT64CONST(1), INT64CONST(10), INT64CONST(100), INT64CONST(1000),
		INT64CONST(10000), INT64CONST(100000), INT64CONST(1000000),
		INT64CONST(10000000), INT64CONST(100000000), INT64CONST(1000000000),
		INT64CONST(10000000000), INT64CONST(100000000000),
		INT64CONST(1000000000000), INT64CONST(10000000000000),
		INT64CONST(100000000000000), INT64CONST(1000000000000000),
		INT64CONST(10000000000000000), INT64CONST(100000000000000000),
		INT64CONST(1000000000000000000)
	};
	int128		acc = 0;
	int			i;

	for (i = 0; i < v->ndigits; i++)
	{
		int			digit = numeric_digit(v, i);
		/* the decimal exponent of this digit's units in the scaled value */
		int64		exp10 = (int64) NUMERIC_DEC_DIGITS * (v->weight - i) + scale;

		if (digit == 0)
			continue;
		if (exp10 < 0)
		{
			if (exp10 < -(NUMERIC_DEC_DIGITS - 1) || digit % pow10[-exp10] != 0)
				return false;	/* digits below the scale */
			acc += digit / pow10[-exp10];
		}
		else if (exp10 >= lengthof(pow10))
			return false;		/* at least 10^19 */
		else
			acc += (int128) digit * pow10[exp10];
		if (acc > GJ_NUMERIC_MAX_FINITE)
			return false;
	}
	*result = v->negative ? -(int64) acc : (int64) acc;
	return true;
}

/*
 * A numeric constant of a device program, independent of the join's scale:
 * value * 10^scale at the constant's own scale (the fewest fractional digits
 * it needs), or a special value's int64 with scale -1 (no rescaling).
 * Returns false if even that does not fit: the constant stays on the host.
 */
bool
host_numeric_const(Datum d, int64 *value, int *scale)
{
	struct varlena *plain = pg_detoast_datum_packed((struct varlena *) DatumGetPointer(d));
	NumericView v;
	bool		ok = true;

	numeric_view(PointerGetDatum(plain), &v);
	*scale = -1;
	if (v.special == NUMERIC_NAN)
		*value = GJ_NUMERIC_NAN;
	else if (v.special == NUMERIC_PINF)
		*value = GJ_NUMERIC_PINF;
	else if (v.special != 0)
		*value = GJ_NUMERIC_NINF;
	else
	{
		*scale = numeric_min_scale(&v);
		ok = numeric_scaled(&v, *scale, value);
	}
	if ((Pointer) plain != DatumGetPointer(d))
		pfree(plain);
	return ok;
}

/*
 * A constant from host_numeric_const at the join's scale (which is at least
 * the constant's own).  Returns false if it does not fit.
 */
bool
host_numeric_rescale(int64 value, int from_scale, int to_scale, int64 *result)
{
	int128		scaled = value;
	int			i;

	if (from_scale < 0 || value == 0)
	{
		*result = value;		/* a special value, or zero at any scale */
		return true;
	}
	Assert(to_scale >= from_scale);
	for (i = from_scale; i < to_scale; i++)
	{
		scaled *= 10;
		if (scaled > GJ_NUMERIC_MAX_FINITE || scaled < -GJ_NUMERIC_MAX_FINITE)
			return false;
	}
	*result = (int64) scaled;
	return true;
}

/* Keep a numeric key value until the join's scale is known. */
static void
append_numeric(HostSideBuffer *buf, HostKeyColumn *key, int64 row, Datum value)
{
	struct varlena *plain = pg_detoast_datum_packed((struct varlena *) DatumGetPointer(value));
	NumericView v;

	key->numerics[row] = arena_copy(buf, PointerGetDatum(plain), -1);
	if ((Pointer) plain != DatumGetPointer(value))
		pfree(plain);
	key->values[row] = 0;
	numeric_view(key->numerics[row], &v);
	if (v.special == 0)
	{
		int			scale = numeric_min_scale(&v);

		if (scale <= GJ_NUMERIC_MAX_SCALE)
			key->max_scale = Max(key->max_scale, scale);
	}
}

/* The scale every numeric key of this side needs, or -1 if it has none. */
int
host_buffer_numeric_scale(const HostSideBuffer *buf)
{
	int			scale = -1;
	int			i;

	for (i = 0; i < buf->nkeys; i++)
	{
		if (buf->keys[i].type == GJT_NUMERIC)
			scale = Max(scale, buf->keys[i].max_scale);
	}
	return scale;
}

/*
 * Prepare the key columns for a join execution: the numeric ones' values[]
 * as value * 10^scale (the special values at the reserved extremes; scale
 * -1 when the join has none), and the rows whose keys have no exact int64
 * (inexact).  Returns how many rows those are.
 */
int64
host_buffer_encode(HostSideBuffer *buf, int scale)
{
	int			i;

	if (buf->encoded && buf->numeric_scale == scale)
		return buf->ninexact;	/* a rescan that kept this side's rows */
	buf->inexact = buf->drain_inexact;
	for (i = 0; i < buf->nkeys; i++)
		buf->keys[i].device_isnull = NULL;	/* another scale: all anew */
	for (i = 0; i < buf->nkeys && scale >= 0; i++)
	{
		HostKeyColumn *key = &buf->keys[i];
		int64		row;

		if (key->type != GJT_NUMERIC)
			continue;
		for (row = 0; row < buf->nrows; row++)
		{
			NumericView v;

			if (key->isnull != NULL && key->isnull[row])
				continue;
			numeric_view(key->numerics[row], &v);
			if (v.special == NUMERIC_NAN)
				key->values[row] = GJ_NUMERIC_NAN;
			else if (v.special == NUMERIC_PINF)
				key->values[row] = GJ_NUMERIC_PINF;
			else if (v.special != 0)
				key->values[row] = GJ_NUMERIC_NINF;
			else if (!numeric_scaled(&v, scale, &key->values[row]))
			{
				if (buf->inexact == NULL || buf->inexact == buf->drain_inexact)
				{
					uint8	   *flags = MemoryContextAllocZero(buf->cxt, Max(buf->nrows, 1));

					if (buf->drain_inexact != NULL)
						memcpy(flags, buf->drain_inexact, buf->nrows);
					buf->inexact = flags;
				}
				key->values[row] = 0;
				buf->inexact[row] = 1;
				if (key->device_isnull == NULL)
				{
					key->device_isnull = MemoryContextAllocZero(buf->cxt, Max(buf->nrows, 1));
					if (key->isnull != NULL)
						memcpy(key->device_isnull, key->isnull, buf->nrows);
				}
				key->device_isnull[row] = 1;
			}
		}
	}
	buf->ninexact = 0;
	buf->inexact_rows = NULL;
	if (buf->inexact != NULL)
	{
		int64		row;

		for (row = 0; row < buf->nrows; row++)
			buf->ninexact += buf->inexact[row];
		buf->inexact_rows = MemoryContextAllocHuge(buf->cxt,
												   sizeof(uint32) * Max(buf->ninexact, 1));
		buf->ninexact = 0;
		for (row = 0; row < buf->nrows; row++)
		{
			if (buf->inexact[row])
				buf->inexact_rows[buf->ninexact++] = (uint32) row;
		}
	}
	buf->numeric_scale = scale;
	buf->encoded = true;
	return buf->ninexact;
}

void
host_buffer_append(HostSideBuffer *buf, TupleTableSlot *slot)
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
			key->values[row] =
				DatumGetInt64(FunctionCall2Coll(&key->hash_fn, key->hash_collation,
												slot->tts_values[key->attno - 1],
												Int64GetDatum(0)));
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
host_buffer_key_columns(const HostSideBuffer *buf, GjKeyColumns *out)
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
host_buffer_key_row_bytes(const HostSideBuffer *buf)
{
	return buf->nkeys * (sizeof(int64) + 1);
}

/*-------------------------------------------------------------------------
 *
 * key_encoding.c
 *	  numeric keys and constants as 64-bit fixed point, at one scale for the
 *	  whole join execution.
 *
 * Most device values depend on the value alone (key_encoding.h).  A
 * numeric's depends on the join: the integers of two numeric columns
 * compare as the numerics do only at one scale, the largest number of
 * fractional digits their values (those that can fit at all) or the device
 * program's numeric constants need.  So the host buffers keep numeric keys
 * as they are while draining and note the scale each column needs
 * (gj_host_numeric_min_scale), and once both inputs are drained
 * gj_host_encode_join_keys picks the join's scale, encodes both sides' keys at
 * it (gj_host_buffer_encode) and rescales the program's constants, which the
 * planner encoded at their own scales (gj_host_numeric_const).  A key value
 * that does not fit flags its row: the device's answer for such a row's
 * pairs is never used.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "host_chunking/host_buffers.h"
#include "host_chunking/key_encoding.h"

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
 * Fractional decimal digits a finite numeric needs to be exact (0.50 -> 1),
 * or -1 for a special value (NaN, +/-Infinity), which needs no scale.
 */
int
gj_host_numeric_min_scale(Datum d)
{
	NumericView v;

	numeric_view(d, &v);
	if (v.special != 0)
		return -1;
	return numeric_min_scale(&v);
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
gj_host_numeric_const(Datum d, int64 *value, int *scale)
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
 * A constant from gj_host_numeric_const at the join's scale (which is at least
 * the constant's own).  Returns false if it does not fit.
 */
bool
gj_host_numeric_rescale(int64 value, int from_scale, int to_scale, int64 *result)
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

/* The scale every numeric key of this side needs, or -1 if it has none. */
int
gj_host_buffer_numeric_scale(const HostSideBuffer *buf)
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
gj_host_buffer_encode(HostSideBuffer *buf, int scale)
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

/* The largest scale of the numeric constants among the instructions. */
static int
numeric_const_scale(const GjInstr *instrs, int ninstrs, int scale)
{
	int			i;

	for (i = 0; i < ninstrs; i++)
	{
		if (instrs[i].op == GJOP_CONST && instrs[i].type == GJT_NUMERIC)
			scale = Max(scale, instrs[i].arg);
	}
	return scale;
}

/*
 * Rescale the numeric constants (planned at their own scales) to the join's
 * scale, in place.  False if one does not fit.
 */
static bool
rescale_numeric_consts(GjInstr *instrs, int ninstrs, int scale)
{
	int			i;

	for (i = 0; i < ninstrs; i++)
	{
		if (instrs[i].op == GJOP_CONST && instrs[i].type == GJT_NUMERIC &&
			!gj_host_numeric_rescale(instrs[i].imm, instrs[i].arg, scale, &instrs[i].imm))
			return false;
	}
	return true;
}

/*
 * Encode what depends on the whole input: numeric keys as fixed point at
 * the largest scale their values (those that can fit at all) or the
 * program's numeric constants need, on both sides alike, so that the
 * integers compare as the numerics do; the constants (in instrs, the
 * execution's copy of the plan's program, and in range's bounds) at the
 * same scale, in place.  A key value with no exact int64 flags its row
 * (gj_host_buffer_encode).  Returns NULL, or why every pair of this execution
 * must go to the host: a numeric constant that does not fit the scale.
 * Nothing is ever rounded or wrapped.
 */
const char *
gj_host_encode_join_keys(HostSideBuffer *outer, HostSideBuffer *inner,
					  GjInstr *instrs, int ninstrs, GjRangeSpec *range)
{
	int			scale = Max(gj_host_buffer_numeric_scale(outer),
							gj_host_buffer_numeric_scale(inner));

	scale = numeric_const_scale(instrs, ninstrs, scale);
	scale = numeric_const_scale(range->lo_instrs, range->lo_ninstrs, scale);
	scale = numeric_const_scale(range->hi_instrs, range->hi_ninstrs, scale);
	gj_host_buffer_encode(outer, scale);
	gj_host_buffer_encode(inner, scale);
	if (scale >= 0 &&
		(!rescale_numeric_consts(instrs, ninstrs, scale) ||
		 !rescale_numeric_consts(range->lo_instrs, range->lo_ninstrs, scale) ||
		 !rescale_numeric_consts(range->hi_instrs, range->hi_ninstrs, scale)))
		return "a numeric constant does not fit the join's 64-bit fixed point: all quals on the host";
	return NULL;
}

/*-------------------------------------------------------------------------
 *
 * gj_conjunction.h
 *	  How the row counters of a compare conjunction (cpu/cpu_rowcount.c,
 *	  cuda/cuda_rowcount.cu) turn each compare into a test of one inner key
 *	  against one threshold of the outer row, compiled for the host and the
 *	  device, so that both backends count exactly alike.
 *
 * A compare "x OP y" (gj_program_compare_conjunction) is read on int64
 * order keys (gj_order_key: PostgreSQL's float order, NaN largest, -0.0 =
 * 0.0), inner key Y on the left, complemented where that makes it a
 * "greater" compare (x > y is ~y > ~x, ~ reversing the order):
 *
 *	x < y  ->  Y > X		x <= y	->	Y >= X		(Y = y, X = x)
 *	x > y  ->  Y > X		x >= y	->	Y >= X		(Y = ~y, X = ~x)
 *	x = y  ->  Y = X		x <> y	->	Y <> X
 *
 * An outer row then tests every inner key of a compare one of two ways:
 *
 *	direct	 only > and >=: Y > T, with T = X, or X - 1 for >=.  Where X is
 *			 the smallest int64, ">= X" always holds but is "> T" for no
 *			 int64 T: such a row must be counted the cyclic way.
 *	cyclic	 any operator: the keys it admits are one interval [lo, hi] of
 *			 the int64 circle (for <>, [X + 1, X - 1] around the end),
 *			 tested as (Y - lo) <= (hi - lo) in unsigned arithmetic.  With
 *			 the sign bit flipped on both sides the unsigned compare is a
 *			 signed one (which SSE2 and AVX2 have): (Y - base) <= width,
 *			 base = lo ^ sign, width = (hi - lo) ^ sign.  An empty interval
 *			 (> the largest key) means the row matches nothing.
 *
 * Where every inner key lies strictly between INT32_MIN and INT32_MAX
 * (gj_conj_narrow: int4 and date columns, small int8 values), the same
 * tests run on int32 keys, at twice the vector width on the host and in
 * half the registers on the device.  The outer threshold is clamped into
 * int32 first, which changes no answer because no inner key is INT32_MIN
 * or INT32_MAX: every compare of a narrow block becomes direct, and an
 * empty interval is [INT32_MAX, INT32_MAX].  INT32_MIN (INT64_MIN in a wide
 * block) is the key that no direct test admits, the counters' padding.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_GJ_CONJUNCTION_H
#define GPUJOIN_GJ_CONJUNCTION_H

#include "kernels/shared/gj_keys.h"

/* A compare normalised as above. */
#define GJ_CONJ_GT		0		/* Y > X */
#define GJ_CONJ_GE		1		/* Y >= X */
#define GJ_CONJ_EQ		2		/* Y = X */
#define GJ_CONJ_NE		3		/* Y <> X */

#define GJ_CONJ_SIGN64	((uint64_t) 1 << 63)
#define GJ_CONJ_SIGN32	((uint32_t) 1 << 31)

static inline GJ_HOSTDEV int
gj_conj_kind(int op)
{
	return (op == GJOP_LT || op == GJOP_GT) ? GJ_CONJ_GT :
		(op == GJOP_LE || op == GJOP_GE) ? GJ_CONJ_GE :
		op == GJOP_EQ ? GJ_CONJ_EQ : GJ_CONJ_NE;
}

/* Are the keys of this compare complemented? */
static inline GJ_HOSTDEV bool
gj_conj_complement(int op)
{
	return op == GJOP_GT || op == GJOP_GE;
}

/* The key of one value of a compare's column (X or Y). */
static inline GJ_HOSTDEV int64_t
gj_conj_key(int64_t value, int cls, bool complement)
{
	int64_t		key = gj_order_key(value, cls);

	return complement ? ~key : key;
}

/* Is the key strictly inside int32 (may a block of such keys be narrow)? */
static inline GJ_HOSTDEV bool
gj_conj_narrow(int64_t y)
{
	return (uint64_t) y - (uint64_t) (INT32_MIN + 1) <=
		(uint64_t) (INT32_MAX - 1) - (uint64_t) (INT32_MIN + 1);
}

static inline GJ_HOSTDEV int32_t
gj_conj_clamp32(int64_t x)
{
	return x < INT32_MIN ? INT32_MIN : x > INT32_MAX ? INT32_MAX : (int32_t) x;
}

/* Does an outer key need the cyclic test in a wide block (see above)? */
static inline GJ_HOSTDEV bool
gj_conj_edge(int kind, int64_t x)
{
	return kind == GJ_CONJ_GE && x == INT64_MIN;
}

/* The direct threshold T in a wide block ("> T"); not for an edge. */
static inline GJ_HOSTDEV int64_t
gj_conj_direct64(int kind, int64_t x)
{
	return kind == GJ_CONJ_GT ? x : x - 1;
}

/* The direct threshold T in a narrow block, clamped. */
static inline GJ_HOSTDEV int32_t
gj_conj_direct32(int kind, int64_t x)
{
	if (kind == GJ_CONJ_GT)
		return gj_conj_clamp32(x);
	return x == INT64_MIN ? INT32_MIN : gj_conj_clamp32(x - 1);
}

/*
 * The cyclic test of a wide block: base and width of the interval of keys
 * "Y kind X" admits; false when it is empty.
 */
static inline GJ_HOSTDEV bool
gj_conj_interval64(int kind, int64_t x, int64_t *base, int64_t *width)
{
	uint64_t	lo,
				hi;

	switch (kind)
	{
		case GJ_CONJ_GT:
			if (x == INT64_MAX)
				return false;
			lo = (uint64_t) x + 1;
			hi = (uint64_t) INT64_MAX;
			break;
		case GJ_CONJ_GE:
			lo = (uint64_t) x;
			hi = (uint64_t) INT64_MAX;
			break;
		case GJ_CONJ_EQ:
			lo = hi = (uint64_t) x;
			break;
		default:
			/* every key but x: around the end of the circle */
			lo = (uint64_t) x + 1;
			hi = (uint64_t) x - 1;
			break;
	}
	*base = (int64_t) (lo ^ GJ_CONJ_SIGN64);
	*width = (int64_t) ((hi - lo) ^ GJ_CONJ_SIGN64);
	return true;
}

/* The cyclic test of a narrow block (x clamped; never empty, see above). */
static inline GJ_HOSTDEV void
gj_conj_interval32(int kind, int64_t x64, int32_t *base, int32_t *width)
{
	int32_t		x = gj_conj_clamp32(x64);
	uint32_t	lo,
				hi;

	switch (kind)
	{
		case GJ_CONJ_GT:
			lo = x == INT32_MAX ? (uint32_t) INT32_MAX : (uint32_t) x + 1;
			hi = (uint32_t) INT32_MAX;
			break;
		case GJ_CONJ_GE:
			lo = (uint32_t) x;
			hi = (uint32_t) INT32_MAX;
			break;
		case GJ_CONJ_EQ:
			lo = hi = (uint32_t) x;
			break;
		default:
			lo = (uint32_t) x + 1;
			hi = (uint32_t) x - 1;
			break;
	}
	*base = (int32_t) (lo ^ GJ_CONJ_SIGN32);
	*width = (int32_t) ((hi - lo) ^ GJ_CONJ_SIGN32);
}

/* The cyclic tests themselves, for one key. */
static inline GJ_HOSTDEV bool
gj_conj_in64(int64_t y, int64_t base, int64_t width)
{
	return (int64_t) ((uint64_t) y - (uint64_t) base) <= width;
}

static inline GJ_HOSTDEV bool
gj_conj_in32(int32_t y, int32_t base, int32_t width)
{
	return (int32_t) ((uint32_t) y - (uint32_t) base) <= width;
}

#endif							/* GPUJOIN_GJ_CONJUNCTION_H */

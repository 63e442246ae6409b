/*-------------------------------------------------------------------------
 *
 * gj_keys.h
 *	  The keys, hashes and bounds that order the rows of a sort-merge/range
 *	  or hash join, compiled once for the host (the cpu backend, C) and once
 *	  for the device (the cuda backend, CUDA C++).
 *
 * Both backends must put the rows of a join in exactly the same order: a
 * tile is a range of positions in that order, so the tiles, which of them
 * are pruned, and the order in which pairs come back (which decides the
 * error a host recheck raises first) agree only if every key, hash and
 * bound is computed the same way.  So there is one copy of them, here.
 *
 * Every function is static inline and, under nvcc, __host__ __device__
 * (GJ_HOSTDEV), except tile pruning, which only the host runs.  Like
 * backend.h this header must stay free of PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_GJ_KEYS_H
#define GPUJOIN_GJ_KEYS_H

#include <stdint.h>
#include <stdbool.h>

#include "kernels/backend.h"

/*
 * Code for both the host and the device.  (device_program.h's GJ_HD adds
 * the inline specifier itself; this one leaves it to the declaration, so
 * that it reads "static inline GJ_HOSTDEV" in both languages.)
 */
#ifdef __CUDACC__
#define GJ_HOSTDEV	__host__ __device__
#else
#define GJ_HOSTDEV
#endif

/* How an outer row of a sorted join finds its candidates. */
#define GJ_OUTER_BOUNDED	0		/* inner positions with key in [lo, hi] */
#define GJ_OUTER_EMPTY		1		/* no candidates (NULL key or bound) */
#define GJ_OUTER_ALL		2		/* every inner row: bounds need the host */

static inline GJ_HOSTDEV int64_t
gj_min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static inline GJ_HOSTDEV int64_t
gj_max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static inline GJ_HOSTDEV int64_t
gj_ceil_div(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

/* splitmix64's finaliser: a cheap, well-mixed 64-bit hash. */
static inline GJ_HOSTDEV uint64_t
gj_hash64(uint64_t x)
{
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	x ^= x >> 31;
	return x;
}

/* Comparable int64 of one key value: ints as they are, floats ordered. */
static inline GJ_HOSTDEV int64_t
gj_order_key(int64_t value, int cls)
{
	return cls == GJ_CLASS_FLOAT ? gj_float_order_key(gj_bits_to_double(value)) : value;
}

/* Order key of a key column value; false when it is NULL. */
static inline GJ_HOSTDEV bool
gj_column_key(const GjKeyColumns *cols, int col, int cls, int64_t row, int64_t *key)
{
	if (cols->isnull[col] != NULL && cols->isnull[col][row])
		return false;
	*key = gj_order_key(cols->values[col][row], cls);
	return true;
}

/* Hash of the equi-join keys of one row; false when one of them is NULL. */
static inline GJ_HOSTDEV bool
gj_equi_hash(const GjEquiSpec *equi, const GjKeyColumns *cols, const int32_t *key_cols,
			 int64_t row, int64_t *hash)
{
	uint64_t	h = 0;
	int			k;

	for (k = 0; k < equi->nkeys; k++)
	{
		int64_t		key;

		if (!gj_column_key(cols, key_cols[k], equi->cls[k], row, &key))
			return false;
		h = gj_hash64(h ^ gj_hash64((uint64_t) key + (uint64_t) k));
	}
	*hash = (int64_t) h;
	return true;
}

/*
 * One bound of a range join for one outer row, as an inclusive order key.
 * Returns GJ_OUTER_BOUNDED, GJ_OUTER_EMPTY (NULL bound, or an exclusive
 * bound at the end of the key space) or GJ_OUTER_ALL (the bound would raise
 * an error, so the host must see every pair of the row).
 */
static inline GJ_HOSTDEV int
gj_range_bound(const GjRangeSpec *range, const GjKeyColumns *outer, int64_t row,
			   bool upper, int64_t *bound)
{
	const GjInstr *instrs = upper ? range->hi_instrs : range->lo_instrs;
	int			ninstrs = upper ? range->hi_ninstrs : range->lo_ninstrs;
	bool		inclusive = upper ? range->hi_inclusive : range->lo_inclusive;
	GjSlot		value;
	bool		isnull;
	int64_t		key;

	if (ninstrs == 0)
	{
		*bound = upper ? INT64_MAX : INT64_MIN;
		return GJ_OUTER_BOUNDED;
	}
	if (gj_program_run(instrs, ninstrs, outer, row, NULL, 0, &value, &isnull) ==
		GJ_RESULT_RECHECK)
		return GJ_OUTER_ALL;
	if (isnull)
		return GJ_OUTER_EMPTY;
	key = range->cls == GJ_CLASS_FLOAT ? gj_float_order_key(value.f) : value.i;
	if (!inclusive)
	{
		if (key == (upper ? INT64_MIN : INT64_MAX))
			return GJ_OUTER_EMPTY;
		key += upper ? -1 : 1;
	}
	*bound = key;
	return GJ_OUTER_BOUNDED;
}

/*
 * An outer row's status from its two bounds' (gj_range_bound), given the
 * bounds themselves: a row whose interval is empty cannot match.
 */
static inline GJ_HOSTDEV int
gj_range_status(int s_lo, int s_hi, int64_t lo, int64_t hi)
{
	int			status;

	status = (s_lo == GJ_OUTER_ALL || s_hi == GJ_OUTER_ALL) ? GJ_OUTER_ALL :
		(s_lo == GJ_OUTER_EMPTY || s_hi == GJ_OUTER_EMPTY) ? GJ_OUTER_EMPTY : GJ_OUTER_BOUNDED;
	if (status == GJ_OUTER_BOUNDED && lo > hi)
		status = GJ_OUTER_EMPTY;
	return status;
}

/* First position in [begin, end) whose key is >= key. */
static inline GJ_HOSTDEV int64_t
gj_lower_bound(const int64_t *keys, int64_t begin, int64_t end, int64_t key)
{
	while (begin < end)
	{
		int64_t		mid = begin + (end - begin) / 2;

		if (keys[mid] < key)
			begin = mid + 1;
		else
			end = mid;
	}
	return begin;
}

/* First position in [begin, end) whose key is > key. */
static inline GJ_HOSTDEV int64_t
gj_upper_bound(const int64_t *keys, int64_t begin, int64_t end, int64_t key)
{
	while (begin < end)
	{
		int64_t		mid = begin + (end - begin) / 2;

		if (keys[mid] <= key)
			begin = mid + 1;
		else
			end = mid;
	}
	return begin;
}

/*
 * Tile pruning of a sorted join, host only: can any pair of the tile match?
 * The outer rows are in sorted order (GJ_OUTER_ALL first, then the bounded
 * rows by lower bound, then the empty ones) and the inner keys sorted with
 * the keyless rows from inner_valid on.  A tile with a GJ_OUTER_ALL row may
 * match; otherwise some bounded row's [lo, hi] must meet the tile's inner
 * key range.
 */
static inline bool
gj_sorted_tile_can_match(const GjTile *tile, const uint8_t *outer_status,
						 const int64_t *outer_lo, const int64_t *outer_hi,
						 const int64_t *inner_keys, int64_t inner_valid)
{
	int64_t		valid_end = gj_min64(tile->inner_end, inner_valid);
	int64_t		kmin,
				kmax,
				p;

	if (tile->inner_end <= tile->inner_begin)
		return false;
	for (p = tile->outer_begin; p < tile->outer_end; p++)
	{
		if (outer_status[p] == GJ_OUTER_ALL)
			return true;
		if (outer_status[p] == GJ_OUTER_BOUNDED)
			break;
	}
	if (valid_end <= tile->inner_begin)
		return false;
	kmin = inner_keys[tile->inner_begin];
	kmax = inner_keys[valid_end - 1];
	/* bounded outer rows are sorted by lo: stop once lo passes kmax */
	for (; p < tile->outer_end && outer_status[p] == GJ_OUTER_BOUNDED; p++)
	{
		if (outer_lo[p] > kmax)
			break;
		if (outer_hi[p] >= kmin)
			return true;
	}
	return false;
}

/*
 * Device memory a sort-merge or hash join of no x ni rows keeps for all its
 * tiles, given how many key columns of each side its programs load: those
 * columns (value and NULL flag), the sorted arrays of both whole sides, and
 * the temporaries of the sort, which are there at the same time while it
 * runs.  The cuda backend refuses a join over three quarters of its budget
 * (GJ_RESIDENT_SHARE); the executor cuts such a join into device partitions
 * with the same formula (device_partitions.c), whichever backend runs it,
 * so one copy of it lives here.
 */
#define GJ_RESIDENT_SHARE(budget)	((budget) / 4 * 3)

static inline GJ_HOSTDEV int64_t
gj_sorted_resident_bytes(int64_t no, int64_t ni, int outer_cols, int inner_cols)
{
	int64_t		bytes = 0;

	bytes += (int64_t) outer_cols * no * (int64_t) (sizeof(int64_t) + 1);
	bytes += (int64_t) inner_cols * ni * (int64_t) (sizeof(int64_t) + 1);
	bytes += ni * (int64_t) (sizeof(int64_t) + sizeof(uint32_t));	/* keys, perm */
	bytes += no * (int64_t) (sizeof(uint32_t) + 2 * sizeof(int64_t) + 1);	/* perm, lo, hi,
																			 * status */
	bytes += gj_max64(no, ni) * (int64_t) (3 + 3 * sizeof(int64_t) + 2 * sizeof(uint32_t));
	return bytes;
}

#endif							/* GPUJOIN_GJ_KEYS_H */

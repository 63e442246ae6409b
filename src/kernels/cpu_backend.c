/*-------------------------------------------------------------------------
 *
 * cpu_backend.c
 *	  The cpu backend: the tile algorithms of GpuJoin in plain C.
 *
 * It runs exactly the schedule the cuda backend runs (same tiles, same steps,
 * same match-buffer contract, see backend.h), so it is the reference for the
 * cuda backend and the backend CI tests.  It is also meant to be fast on its
 * own: the nested loop is cache-blocked over the inner tile and writes
 * matches branch-free, and the common "outer column OP inner column" shape
 * runs as integer compares without the interpreter.
 *
 * The sort-merge/range and hash algorithms share one machinery here: each
 * side is put in the order of a 64-bit key (the inner key column's order key
 * for range joins, a hash of the equi-join keys for hash joins), each outer
 * row gets an inclusive key interval [lo, hi], and its candidates in a tile
 * are the inner positions whose key falls in it, found by binary search.
 * Tiles whose key ranges cannot meet are pruned.  Outer rows whose bounds
 * could not be computed exactly (a bound expression would raise an error)
 * are compared with every inner row of the tile through the device program,
 * so the host sees exactly the pairs PostgreSQL would evaluate.
 *
 * Plain C without PostgreSQL headers (see backend.h): memory comes from
 * malloc and is released by end_join, which the executor calls from a memory
 * context callback, so it is also released on ERROR.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "backend.h"
#include "agg_reduce.h"
#include "agg_runs.h"

/*
 * Inner rows per cache block: 2048 rows of one 8-byte key plus null flags
 * stay well inside L1/L2 while every outer row of the step passes over them.
 */
#define CPU_INNER_BLOCK_ROWS	2048

/*
 * Work per step, in pairs.  About 10-20 ms for the specialised compare loop
 * and well under a second for the interpreter, so that cancel and
 * statement_timeout are honoured promptly between steps.
 */
#define CPU_PAIRS_PER_STEP		((int64_t) 1 << 24)

/*
 * Matches a step of the sorted algorithms returns (unless one outer row has
 * more): 512 kB of match buffer, which stays in the cache while the
 * executor reads it back, and whose pages the next step reuses instead of
 * faulting in fresh ones.
 */
#define CPU_MATCHES_PER_STEP	((int64_t) 1 << 16)

/* Outer rows of a step for the sorted algorithms (bounds binary searches). */
#define CPU_OUTER_ROWS_PER_STEP	((int64_t) 1 << 20)

/*
 * Sorting the 64-bit key hashes of a hash join (cpu_hash_sort): one counting
 * pass on the top bits puts every row in its bucket, about one row a bucket,
 * so at most 2^22 buckets (16 MB of bucket starts); a bucket of more rows
 * than CPU_HASH_BUCKET_INSERTION (many rows of one key, or a collision of
 * hot keys) is radix sorted instead of insertion sorted.
 */
#define CPU_HASH_MAX_BUCKET_BITS	22
#define CPU_HASH_BUCKET_INSERTION	32

/*
 * A hash join fetches the inner buckets of the outer keys this many outer
 * positions ahead into the cache (measured on the 2-core development
 * machine, 333k outer x 100k inner rows in row order: the steps took 9.7 ms
 * without the prefetch, 7.4 ms with it; fetching the inner key values a
 * third level ahead gained nothing).
 */
#define CPU_PROBE_PREFETCH_DISTANCE	16

#if defined(__GNUC__) || defined(__clang__)
#define cpu_prefetch(addr)		__builtin_prefetch(addr)
#else
#define cpu_prefetch(addr)		((void) 0)
#endif

/* How an outer row of a sorted join finds its candidates. */
#define OUTER_BOUNDED	0			/* inner positions with key in [lo, hi] */
#define OUTER_EMPTY		1			/* no candidates (NULL key or bound) */
#define OUTER_ALL		2			/* every inner row: bounds need the host */

typedef struct CpuJoinState
{
	GjJoinInput input;
	GjInstr		instrs[GJ_MAX_INSTRS];
	bool		simple;			/* program is one outer/inner compare */
	GjSimpleCompare compare;

	/*
	 * Hash join whose program is the equality of its one integer-class key:
	 * the key hash is a bijection of the key there (see cpu_begin_join), so
	 * equal hashes are equal keys and a candidate needs no other test.
	 */
	bool		hash_is_key_equality;
	int64_t		capacity;
	uint32_t   *outer_rows;
	uint32_t   *inner_rows;

	/*
	 * Step overlap (cpu_double_buffer): the other match buffer, holding the
	 * previous step's matches while the executor emits them; run_step swaps
	 * the two.  NULL until the executor asks.
	 */
	uint32_t   *spare_outer_rows;
	uint32_t   *spare_inner_rows;

	/* sort-merge and hash: both sides in key order */
	uint32_t   *outer_perm;		/* position -> outer row */
	int64_t    *outer_lo;
	int64_t    *outer_hi;
	uint8_t    *outer_status;
	uint32_t   *inner_perm;		/* position -> inner row */
	int64_t    *inner_keys;		/* sorted; rows without a key at the end */
	int64_t		inner_valid;	/* positions [0, inner_valid) have keys */

	/*
	 * Hash join: inner positions [inner_bucket_start[b], inner_bucket_start[b
	 * + 1]) hold the keys whose top inner_bucket_bits bits (of the key with
	 * its sign flipped, as it sorts) are b, so an outer key's candidates are
	 * found in its bucket instead of by a binary search over every key.
	 */
	int			inner_bucket_bits;
	uint32_t   *inner_bucket_start;
	int64_t		outer_nall;		/* positions [0, outer_nall) are OUTER_ALL */

	/*
	 * Hash join: the outer arrays are still indexed by row (outer_perm and
	 * outer_hi NULL), and whether they stay so for the whole join was
	 * decided at its first tile (cpu_fix_outer_order).
	 */
	bool		outer_by_row;
	bool		outer_order_fixed;

	/* aggregate fast path: prefix arrays built at the first agg_step */
	GjAggRuns  *agg_runs;
} CpuJoinState;

/* splitmix64's finaliser: a cheap, well-mixed 64-bit hash. */
static inline uint64_t
cpu_hash64(uint64_t x)
{
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	x ^= x >> 31;
	return x;
}

/*
 * LSD radix sort of (key, row) by signed key, 8 bits a pass, skipping passes
 * in which every key has the same digit.  O(n), stable.
 */
static bool
cpu_radix_sort(int64_t *keys, uint32_t *rows, int64_t n)
{
	int64_t    *src_keys = keys,
			   *dst_keys;
	uint32_t   *src_rows = rows,
			   *dst_rows;
	int64_t    *keys_tmp;
	uint32_t   *rows_tmp;
	int			shift;

	if (n < 2)
		return true;
	keys_tmp = malloc(sizeof(int64_t) * n);
	rows_tmp = malloc(sizeof(uint32_t) * n);
	if (keys_tmp == NULL || rows_tmp == NULL)
	{
		free(keys_tmp);
		free(rows_tmp);
		return false;
	}
	dst_keys = keys_tmp;
	dst_rows = rows_tmp;
	for (shift = 0; shift < 64; shift += 8)
	{
		int64_t		count[257] = {0};
		int64_t		i;
		int			d;
		int64_t    *kt;
		uint32_t   *rt;

		/* the sign bit is flipped so that signed order is unsigned order */
		for (i = 0; i < n; i++)
			count[(((uint64_t) src_keys[i] ^ UINT64_C(0x8000000000000000)) >> shift & 0xff) + 1]++;
		for (d = 0; d < 256; d++)
		{
			if (count[d + 1] == n)
				break;
		}
		if (d < 256)
			continue;			/* one digit value only: the pass changes nothing */
		for (d = 0; d < 256; d++)
			count[d + 1] += count[d];
		for (i = 0; i < n; i++)
		{
			int			digit = ((uint64_t) src_keys[i] ^ UINT64_C(0x8000000000000000)) >> shift & 0xff;
			int64_t		to = count[digit]++;

			dst_keys[to] = src_keys[i];
			dst_rows[to] = src_rows[i];
		}
		kt = src_keys;
		src_keys = dst_keys;
		dst_keys = kt;
		rt = src_rows;
		src_rows = dst_rows;
		dst_rows = rt;
	}
	if (src_keys != keys)
	{
		memcpy(keys, src_keys, sizeof(int64_t) * n);
		memcpy(rows, src_rows, sizeof(uint32_t) * n);
	}
	free(keys_tmp);
	free(rows_tmp);
	return true;
}

/* Bits of the bucket numbers of cpu_hash_sort() for n keys. */
static int
cpu_hash_bucket_bits(int64_t n)
{
	int			bits = 1;

	while (bits < CPU_HASH_MAX_BUCKET_BITS && ((int64_t) 1 << bits) < n)
		bits++;
	return bits;
}

/* Bucket of a key: its top bits, the sign flipped as in cpu_radix_sort. */
static inline uint32_t
cpu_hash_bucket(int64_t key, int bits)
{
	return (uint32_t) (((uint64_t) key ^ UINT64_C(0x8000000000000000)) >> (64 - bits));
}

/*
 * Sort (key, row) by signed key, as cpu_radix_sort() does, for keys that are
 * hashes and so spread evenly over the key space: a counting sort on the top
 * cpu_hash_bucket_bits(n) bits leaves about one key a bucket, and each bucket
 * is then insertion sorted (radix sorted when it is large).  Two passes over
 * the data instead of eight.  Both steps are stable, so the order, ties
 * included, is exactly cpu_radix_sort()'s, and with it the tiles and their
 * pruning.  With starts_out, the bucket starts (2^bits + 1 positions) are
 * returned in malloc'd memory.
 */
static bool
cpu_hash_sort(int64_t *keys, uint32_t *rows, int64_t n, int bits, uint32_t **starts_out)
{
	int64_t		nbuckets = (int64_t) 1 << bits;
	uint32_t   *starts;
	int64_t    *sorted_keys;
	uint32_t   *sorted_rows;
	int64_t		i,
				b;
	bool		ok = true;

	starts = calloc(nbuckets + 1, sizeof(uint32_t));
	sorted_keys = malloc(sizeof(int64_t) * (n > 0 ? n : 1));
	sorted_rows = malloc(sizeof(uint32_t) * (n > 0 ? n : 1));
	if (starts == NULL || sorted_keys == NULL || sorted_rows == NULL)
	{
		free(starts);
		free(sorted_keys);
		free(sorted_rows);
		return false;
	}

	/* counting sort on the bucket: starts[b] ends up as the end of b ... */
	for (i = 0; i < n; i++)
		starts[cpu_hash_bucket(keys[i], bits) + 1]++;
	for (b = 0; b < nbuckets; b++)
		starts[b + 1] += starts[b];
	for (i = 0; i < n; i++)
	{
		uint32_t	to = starts[cpu_hash_bucket(keys[i], bits)]++;

		sorted_keys[to] = keys[i];
		sorted_rows[to] = rows[i];
	}
	/* ... which is the start of b + 1 */
	for (b = nbuckets; b > 0; b--)
		starts[b] = starts[b - 1];
	starts[0] = 0;

	/* each bucket in key order */
	for (b = 0; b < nbuckets && ok; b++)
	{
		int64_t		begin = starts[b];
		int64_t		end = starts[b + 1];

		if (end - begin > CPU_HASH_BUCKET_INSERTION)
			ok = cpu_radix_sort(sorted_keys + begin, sorted_rows + begin, end - begin);
		else
		{
			for (i = begin + 1; i < end; i++)
			{
				int64_t		key = sorted_keys[i];
				uint32_t	row = sorted_rows[i];
				int64_t		j = i;

				for (; j > begin && sorted_keys[j - 1] > key; j--)
				{
					sorted_keys[j] = sorted_keys[j - 1];
					sorted_rows[j] = sorted_rows[j - 1];
				}
				sorted_keys[j] = key;
				sorted_rows[j] = row;
			}
		}
	}
	if (ok)
	{
		memcpy(keys, sorted_keys, sizeof(int64_t) * n);
		memcpy(rows, sorted_rows, sizeof(uint32_t) * n);
	}
	free(sorted_keys);
	free(sorted_rows);
	if (ok && starts_out != NULL)
		*starts_out = starts;
	else
		free(starts);
	return ok;
}

/* Order key of a key column value; false when it is NULL. */
static inline bool
cpu_column_key(const GjKeyColumns *cols, int col, int cls, int64_t row, int64_t *key)
{
	if (cols->isnull[col] != NULL && cols->isnull[col][row])
		return false;
	*key = cls == GJ_CLASS_FLOAT ?
		gj_float_order_key(gj_bits_to_double(cols->values[col][row])) :
		cols->values[col][row];
	return true;
}

/* Hash of the equi-join keys of one row; false when one of them is NULL. */
static inline bool
cpu_equi_hash(const GjEquiSpec *equi, const GjKeyColumns *cols, const int32_t *key_cols,
			  int64_t row, int64_t *hash)
{
	uint64_t	h = 0;
	int			k;

	for (k = 0; k < equi->nkeys; k++)
	{
		int64_t		key;

		if (!cpu_column_key(cols, key_cols[k], equi->cls[k], row, &key))
			return false;
		h = cpu_hash64(h ^ cpu_hash64((uint64_t) key + (uint64_t) k));
	}
	*hash = (int64_t) h;
	return true;
}

/*
 * One bound of a range join for one outer row, as an inclusive order key.
 * Returns OUTER_BOUNDED, OUTER_EMPTY (NULL bound, or an exclusive bound at
 * the end of the key space) or OUTER_ALL (the bound would raise an error).
 */
static int
cpu_range_bound(const GjRangeSpec *range, const GjKeyColumns *outer, int64_t row,
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
		return OUTER_BOUNDED;
	}
	if (gj_program_run(instrs, ninstrs, outer, row, NULL, 0, &value, &isnull) == GJ_RESULT_RECHECK)
		return OUTER_ALL;
	if (isnull)
		return OUTER_EMPTY;
	key = range->cls == GJ_CLASS_FLOAT ? gj_float_order_key(value.f) : value.i;
	if (!inclusive)
	{
		if (key == (upper ? INT64_MIN : INT64_MAX))
			return OUTER_EMPTY;
		key += upper ? -1 : 1;
	}
	*bound = key;
	return OUTER_BOUNDED;
}

/*
 * Put the outer rows of a sort-merge or hash join in key order: OUTER_ALL
 * first, then bounded ones by lower bound, then empty ones.  Until then
 * outer_lo, outer_hi and outer_status are indexed by row (outer_hi is NULL
 * for a hash join, whose bounds are one key); afterwards by position, with
 * outer_perm mapping positions to rows.
 */
static bool
cpu_sort_outer(CpuJoinState *state)
{
	const GjJoinInput *in = &state->input;
	int64_t		no = in->outer_nrows;
	int64_t		alloc_rows = no > 0 ? no : 1;
	int64_t    *sort_keys = malloc(sizeof(int64_t) * alloc_rows);
	uint32_t   *sort_rows = malloc(sizeof(uint32_t) * alloc_rows);
	uint32_t   *perm = malloc(sizeof(uint32_t) * alloc_rows);
	int64_t    *lo = malloc(sizeof(int64_t) * alloc_rows);
	int64_t    *hi = malloc(sizeof(int64_t) * alloc_rows);
	uint8_t    *status = malloc(alloc_rows);
	int64_t		nall = 0;
	int64_t		nbounded = 0;
	int64_t		pos;
	int64_t		r;

	if (!sort_keys || !sort_rows || !perm || !lo || !hi || !status)
		goto oom;

	/* OUTER_ALL rows first, in row order; gather the bounded ones */
	for (r = 0; r < no; r++)
	{
		if (state->outer_status[r] == OUTER_ALL)
		{
			perm[nall] = (uint32_t) r;
			status[nall] = OUTER_ALL;
			lo[nall] = INT64_MIN;
			hi[nall++] = INT64_MAX;
		}
		else if (state->outer_status[r] == OUTER_BOUNDED)
		{
			sort_keys[nbounded] = state->outer_lo[r];
			sort_rows[nbounded++] = (uint32_t) r;
		}
	}
	if (in->algorithm == GJ_ALGO_HASH ?
		!cpu_hash_sort(sort_keys, sort_rows, nbounded, cpu_hash_bucket_bits(nbounded), NULL) :
		!cpu_radix_sort(sort_keys, sort_rows, nbounded))
		goto oom;
	for (pos = nall; pos < nall + nbounded; pos++)
	{
		uint32_t	row = sort_rows[pos - nall];

		perm[pos] = row;
		status[pos] = OUTER_BOUNDED;
		lo[pos] = sort_keys[pos - nall];
		hi[pos] = state->outer_hi != NULL ? state->outer_hi[row] : lo[pos];
	}
	/* the empty rows last, in row order */
	for (r = 0; r < no; r++)
	{
		if (state->outer_status[r] != OUTER_EMPTY)
			continue;
		perm[pos] = (uint32_t) r;
		status[pos] = OUTER_EMPTY;
		lo[pos] = INT64_MAX;
		hi[pos++] = INT64_MIN;
	}

	free(state->outer_lo);
	free(state->outer_hi);
	free(state->outer_status);
	state->outer_perm = perm;
	state->outer_lo = lo;
	state->outer_hi = hi;
	state->outer_status = status;
	state->outer_nall = nall;
	state->outer_by_row = false;
	free(sort_keys);
	free(sort_rows);
	return true;

oom:
	free(sort_keys);
	free(sort_rows);
	free(perm);
	free(lo);
	free(hi);
	free(status);
	return false;
}

/*
 * Prepare both sides of a sort-merge or hash join: inner rows in key order
 * (rows without a key last), and each outer row's bounds.  The outer rows of
 * a sort-merge join are sorted at once; those of a hash join stay in row
 * order until a tile shows that they must be sorted (cpu_fix_outer_order).
 */
static bool
cpu_prepare_sorted(CpuJoinState *state)
{
	const GjJoinInput *in = &state->input;
	bool		hash = in->algorithm == GJ_ALGO_HASH;
	int64_t		no = in->outer_nrows;
	int64_t		ni = in->inner_nrows;
	int64_t		nvalid = 0;
	int64_t		r;

	state->inner_perm = malloc(sizeof(uint32_t) * (ni > 0 ? ni : 1));
	state->inner_keys = malloc(sizeof(int64_t) * (ni > 0 ? ni : 1));
	state->outer_lo = malloc(sizeof(int64_t) * (no > 0 ? no : 1));
	state->outer_hi = hash ? NULL : malloc(sizeof(int64_t) * (no > 0 ? no : 1));
	state->outer_status = malloc(no > 0 ? no : 1);
	state->outer_by_row = true;
	if (!state->inner_perm || !state->inner_keys || !state->outer_lo ||
		(!hash && !state->outer_hi) || !state->outer_status)
		return false;

	/* inner: keyed rows from the front, rows without a key from the back */
	{
		int64_t		nkeyless = 0;

		for (r = 0; r < ni; r++)
		{
			int64_t		key;
			bool		has_key = hash ?
			cpu_equi_hash(&in->equi, &in->inner, in->equi.inner_cols, r, &key) :
			cpu_column_key(&in->inner, in->range.inner_col, in->range.cls, r, &key);

			if (has_key)
			{
				state->inner_keys[nvalid] = key;
				state->inner_perm[nvalid++] = (uint32_t) r;
			}
			else
			{
				nkeyless++;
				state->inner_keys[ni - nkeyless] = INT64_MAX;
				state->inner_perm[ni - nkeyless] = (uint32_t) r;
			}
		}
	}
	state->inner_valid = nvalid;
	if (hash)
	{
		state->inner_bucket_bits = cpu_hash_bucket_bits(nvalid);
		if (!cpu_hash_sort(state->inner_keys, state->inner_perm, nvalid,
						   state->inner_bucket_bits, &state->inner_bucket_start))
			return false;
	}
	else if (!cpu_radix_sort(state->inner_keys, state->inner_perm, nvalid))
		return false;

	/* outer: each row's bounds and status, by row */
	for (r = 0; r < no; r++)
	{
		int64_t		lo = 0,
					hi = 0;
		int			status;

		if (hash)
		{
			status = cpu_equi_hash(&in->equi, &in->outer, in->equi.outer_cols, r, &lo) ?
				OUTER_BOUNDED : OUTER_EMPTY;
			state->outer_lo[r] = lo;
			state->outer_status[r] = status;
			continue;
		}
		else
		{
			int			s_lo = cpu_range_bound(&in->range, &in->outer, r, false, &lo);
			int			s_hi = cpu_range_bound(&in->range, &in->outer, r, true, &hi);

			status = (s_lo == OUTER_ALL || s_hi == OUTER_ALL) ? OUTER_ALL :
				(s_lo == OUTER_EMPTY || s_hi == OUTER_EMPTY) ? OUTER_EMPTY : OUTER_BOUNDED;
		}
		if (status == OUTER_BOUNDED && lo > hi)
			status = OUTER_EMPTY;
		state->outer_lo[r] = lo;
		state->outer_hi[r] = hi;
		state->outer_status[r] = status;
	}
	return hash || cpu_sort_outer(state);
}

/*
 * Before the first tile of a hash join: when its outer range is every outer
 * row, so is every tile's (the tile planner cuts the outer side into equal
 * tiles), and the outer rows are probed in row order, with no sort at all
 * (and the executor then reads the outer side's stored columns in order);
 * otherwise they are sorted now, so that outer tiles are key ranges and
 * tiles whose key ranges cannot meet are pruned.  The answer to which tiles
 * can match is the same either way (see cpu_sorted_tile_can_match).
 * Returns false when the sort runs out of memory, or when a tile after the
 * first covers only part of the outer rows after all.
 */
static bool
cpu_fix_outer_order(CpuJoinState *state, const GjTile *tile)
{
	bool		all_rows = tile->outer_begin == 0 && tile->outer_end >= state->input.outer_nrows;

	if (!state->outer_by_row)
		return true;
	if (all_rows)
	{
		/* from now on the rows stay in row order */
		state->outer_order_fixed = true;
		return true;
	}
	if (state->outer_order_fixed)
		return false;
	return cpu_sort_outer(state);
}

/* First position in [begin, end) whose key is >= key. */
static inline int64_t
cpu_lower_bound(const int64_t *keys, int64_t begin, int64_t end, int64_t key)
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
static inline int64_t
cpu_upper_bound(const int64_t *keys, int64_t begin, int64_t end, int64_t key)
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

static bool
cpu_sorted_tile_can_match(void *arg, const GjTile *tile)
{
	CpuJoinState *state = arg;
	int64_t		valid_end = tile->inner_end < state->inner_valid ? tile->inner_end : state->inner_valid;
	int64_t		kmin,
				kmax,
				p;

	if (tile->inner_end <= tile->inner_begin)
		return false;
	if (!cpu_fix_outer_order(state, tile))
		return true;			/* run_step reports the failure */
	if (state->outer_by_row)
	{
		/*
		 * A hash join's outer rows in row order, all of them in the tile:
		 * the sorted walk below finds a key in [kmin, kmax] if there is one,
		 * and so does this one.
		 */
		if (valid_end <= tile->inner_begin)
			return false;
		kmin = state->inner_keys[tile->inner_begin];
		kmax = state->inner_keys[valid_end - 1];
		for (p = tile->outer_begin; p < tile->outer_end; p++)
		{
			if (state->outer_status[p] == OUTER_BOUNDED &&
				state->outer_lo[p] >= kmin && state->outer_lo[p] <= kmax)
				return true;
		}
		return false;
	}
	for (p = tile->outer_begin; p < tile->outer_end; p++)
	{
		if (state->outer_status[p] == OUTER_ALL)
			return true;
		if (state->outer_status[p] == OUTER_BOUNDED)
			break;
	}
	if (valid_end <= tile->inner_begin)
		return false;
	kmin = state->inner_keys[tile->inner_begin];
	kmax = state->inner_keys[valid_end - 1];
	/* bounded outer rows are sorted by lo: stop once lo passes kmax */
	for (; p < tile->outer_end && state->outer_status[p] == OUTER_BOUNDED; p++)
	{
		if (state->outer_lo[p] > kmax)
			break;
		if (state->outer_hi[p] >= kmin)
			return true;
	}
	return false;
}

/* One step of a sort-merge or hash join tile. */
static int64_t
cpu_sorted_step(CpuJoinState *state, const GjTile *tile, int64_t *outer_next, int64_t *pairs)
{
	const GjJoinInput *in = &state->input;
	int64_t		valid_end = tile->inner_end < state->inner_valid ? tile->inner_end : state->inner_valid;
	int64_t		n = 0;
	int64_t		work = 0;
	int64_t		p;

	/*
	 * A hash join whose whole program is "outer key = inner key" on an
	 * integer-class column: the candidates have keys (NULL keys never get
	 * here), so the equality of the stored values is the program's answer,
	 * without the interpreter.
	 */
	const int64_t *eq_outer = NULL;
	const int64_t *eq_inner = NULL;

	if (in->algorithm == GJ_ALGO_HASH && state->simple && state->compare.op == GJOP_EQ &&
		state->compare.cls == GJ_CLASS_INT)
	{
		eq_outer = in->outer.values[state->compare.outer_col];
		eq_inner = in->inner.values[state->compare.inner_col];
	}

	for (p = *outer_next; p < tile->outer_end; p++)
	{
		int			status = state->outer_status[p];
		uint32_t	orow;
		int64_t		first,
					last,
					q;
		bool		filter = in->filter_needed || status == OUTER_ALL;

		if (status == OUTER_EMPTY)
		{
			if (state->outer_by_row)
				continue;
			/* sorted: empty rows are last, the rest of the tile has nothing */
			p = tile->outer_end;
			break;
		}
		orow = state->outer_by_row ? (uint32_t) p : state->outer_perm[p];
		if (state->inner_bucket_start != NULL && p + CPU_PROBE_PREFETCH_DISTANCE < tile->outer_end)
		{
			/*
			 * The buckets of the outer keys a few rows ahead, then the
			 * first inner key and row of a bucket nearer by: the probes of
			 * rows in row order land anywhere in the inner side's arrays.
			 */
			int64_t		ahead = p + CPU_PROBE_PREFETCH_DISTANCE;
			int64_t		near = p + CPU_PROBE_PREFETCH_DISTANCE / 2;
			uint32_t	start;

			cpu_prefetch(&state->inner_bucket_start[cpu_hash_bucket(state->outer_lo[ahead],
																	 state->inner_bucket_bits)]);
			start = state->inner_bucket_start[cpu_hash_bucket(state->outer_lo[near],
															  state->inner_bucket_bits)];
			cpu_prefetch(&state->inner_keys[start]);
			cpu_prefetch(&state->inner_perm[start]);
		}
		if (status == OUTER_ALL)
		{
			first = tile->inner_begin;
			last = tile->inner_end;
		}
		else if (state->inner_bucket_start != NULL)
		{
			/* hash join: lo = hi = the key, searched in its bucket only */
			uint32_t	b = cpu_hash_bucket(state->outer_lo[p], state->inner_bucket_bits);
			int64_t		begin = state->inner_bucket_start[b];
			int64_t		end = state->inner_bucket_start[b + 1];

			begin = begin > tile->inner_begin ? begin : tile->inner_begin;
			end = end < valid_end ? end : valid_end;
			first = cpu_lower_bound(state->inner_keys, begin, end, state->outer_lo[p]);
			last = cpu_upper_bound(state->inner_keys, first, end, state->outer_lo[p]);
		}
		else
		{
			first = cpu_lower_bound(state->inner_keys, tile->inner_begin, valid_end, state->outer_lo[p]);
			last = cpu_upper_bound(state->inner_keys, first, valid_end, state->outer_hi[p]);
		}
		if (n + (last - first) > state->capacity ||
			(p > *outer_next && (work >= CPU_PAIRS_PER_STEP || n >= CPU_MATCHES_PER_STEP ||
								 p - *outer_next >= CPU_OUTER_ROWS_PER_STEP)))
			break;
		for (q = first; q < last; q++)
		{
			uint32_t	irow = state->inner_perm[q];
			int			r = GJ_RESULT_TRUE;

			if (state->hash_is_key_equality)
				r = GJ_RESULT_TRUE; /* the candidate's hash is the key's */
			else if (filter && eq_outer != NULL && status != OUTER_ALL)
				r = (eq_outer[orow] == eq_inner[irow]) ? GJ_RESULT_TRUE : GJ_RESULT_FALSE;
			else if (filter)
				r = gj_program_eval(in->instrs, in->ninstrs, &in->outer, orow, &in->inner, irow);
			state->outer_rows[n] = orow | (r == GJ_RESULT_RECHECK ? GJ_PAIR_RECHECK : 0);
			state->inner_rows[n] = irow;
			n += (r != GJ_RESULT_FALSE);
		}
		work += (last - first) + 1;
		*pairs += last - first;
	}
	*outer_next = p;
	return n;
}

static void cpu_end_join(void *arg);

static void *
cpu_begin_join(const GjJoinInput *input, GjError *err)
{
	CpuJoinState *state = calloc(1, sizeof(CpuJoinState));

	if (state == NULL)
		goto oom;
	state->input = *input;
	memcpy(state->instrs, input->instrs, sizeof(GjInstr) * input->ninstrs);
	state->input.instrs = state->instrs;
	state->simple = gj_program_simple_compare(state->instrs, input->ninstrs,
											  &state->compare);

	/*
	 * One integer key: its hash is cpu_hash64(cpu_hash64(key)), and
	 * splitmix64's finaliser is a bijection of 64-bit words (xor with a right
	 * shift of itself, and multiplication by an odd constant, are each
	 * invertible), so two rows have equal hashes exactly when their keys are
	 * equal, which is the program's answer for rows with keys.
	 */
	state->hash_is_key_equality = input->algorithm == GJ_ALGO_HASH && state->simple &&
		state->compare.op == GJOP_EQ && state->compare.cls == GJ_CLASS_INT &&
		input->equi.nkeys == 1 && input->equi.cls[0] == GJ_CLASS_INT &&
		input->equi.outer_cols[0] == state->compare.outer_col &&
		input->equi.inner_cols[0] == state->compare.inner_col;
	state->capacity = input->match_capacity > 0 ? input->match_capacity : 1;
	state->outer_rows = malloc(sizeof(uint32_t) * state->capacity);
	state->inner_rows = malloc(sizeof(uint32_t) * state->capacity);
	if (state->outer_rows == NULL || state->inner_rows == NULL ||
		(input->algorithm != GJ_ALGO_NESTLOOP && !cpu_prepare_sorted(state)))
	{
		cpu_end_join(state);
		goto oom;
	}
	return state;

oom:
	err->code = GJ_ERR_OUT_OF_MEMORY;
	snprintf(err->message, sizeof(err->message),
			 "could not allocate host memory for a join of %lld x %lld rows (match buffer of %lld pairs)",
			 (long long) input->outer_nrows, (long long) input->inner_nrows,
			 (long long) input->match_capacity);
	return NULL;
}

static void
cpu_end_join(void *arg)
{
	CpuJoinState *state = arg;

	if (state == NULL)
		return;
	free(state->outer_rows);
	free(state->inner_rows);
	free(state->spare_outer_rows);
	free(state->spare_inner_rows);
	free(state->outer_perm);
	free(state->outer_lo);
	free(state->outer_hi);
	free(state->outer_status);
	free(state->inner_perm);
	free(state->inner_keys);
	free(state->inner_bucket_start);
	gj_agg_runs_free(state->agg_runs);
	free(state);
}

/* Comparable int64 of one key value: ints as they are, floats ordered. */
static inline int64_t
cpu_order_key(const int64_t *values, int cls, int64_t row)
{
	return cls == GJ_CLASS_FLOAT ? gj_float_order_key(gj_bits_to_double(values[row]))
		: values[row];
}

/*
 * The specialised nested loop for "outer.col OP inner.col": one loop per
 * operator so that the compare is a single instruction in the inner loop,
 * and the match is written unconditionally and kept by advancing the count
 * only on a hit.
 */
#define CPU_COMPARE_LOOP(COND) \
	for (ib = tile->inner_begin; ib < tile->inner_end; ib += CPU_INNER_BLOCK_ROWS) \
	{ \
		int64_t		ie = ib + CPU_INNER_BLOCK_ROWS < tile->inner_end ? \
			ib + CPU_INNER_BLOCK_ROWS : tile->inner_end; \
		for (o = o_begin; o < o_end; o++) \
		{ \
			int64_t		x; \
			if (onull && onull[o]) \
				continue; \
			x = cpu_order_key(ovals, cls, o); \
			for (i = ib; i < ie; i++) \
			{ \
				int64_t		y = cpu_order_key(ivals, cls, i); \
				bool		hit = (COND) && !(inull && inull[i]); \
				out_o[n] = (uint32_t) o; \
				out_i[n] = (uint32_t) i; \
				n += hit; \
			} \
		} \
	}

static int64_t
cpu_nestloop_compare(CpuJoinState *state, const GjTile *tile,
					 int64_t o_begin, int64_t o_end)
{
	const GjSimpleCompare *sc = &state->compare;
	const int64_t *ovals = state->input.outer.values[sc->outer_col];
	const uint8_t *onull = state->input.outer.isnull[sc->outer_col];
	const int64_t *ivals = state->input.inner.values[sc->inner_col];
	const uint8_t *inull = state->input.inner.isnull[sc->inner_col];
	int			cls = sc->cls;
	uint32_t   *out_o = state->outer_rows;
	uint32_t   *out_i = state->inner_rows;
	int64_t		n = 0;
	int64_t		ib,
				o,
				i;

	switch (sc->op)
	{
		case GJOP_EQ:
			CPU_COMPARE_LOOP(x == y);
			break;
		case GJOP_NE:
			CPU_COMPARE_LOOP(x != y);
			break;
		case GJOP_LT:
			CPU_COMPARE_LOOP(x < y);
			break;
		case GJOP_LE:
			CPU_COMPARE_LOOP(x <= y);
			break;
		case GJOP_GT:
			CPU_COMPARE_LOOP(x > y);
			break;
		default:
			CPU_COMPARE_LOOP(x >= y);
			break;
	}
	return n;
}

/* The general nested loop: the device program per pair. */
static int64_t
cpu_nestloop_program(CpuJoinState *state, const GjTile *tile,
					 int64_t o_begin, int64_t o_end)
{
	const GjJoinInput *in = &state->input;
	uint32_t   *out_o = state->outer_rows;
	uint32_t   *out_i = state->inner_rows;
	int64_t		n = 0;
	int64_t		ib,
				o,
				i;

	for (ib = tile->inner_begin; ib < tile->inner_end; ib += CPU_INNER_BLOCK_ROWS)
	{
		int64_t		ie = ib + CPU_INNER_BLOCK_ROWS < tile->inner_end ?
			ib + CPU_INNER_BLOCK_ROWS : tile->inner_end;

		for (o = o_begin; o < o_end; o++)
		{
			for (i = ib; i < ie; i++)
			{
				int			r = gj_program_eval(in->instrs, in->ninstrs,
												&in->outer, o, &in->inner, i);

				out_o[n] = (uint32_t) o | (r == GJ_RESULT_RECHECK ? GJ_PAIR_RECHECK : 0);
				out_i[n] = (uint32_t) i;
				n += (r != GJ_RESULT_FALSE);
			}
		}
	}
	return n;
}

static bool
cpu_run_step(void *arg, const GjTile *tile, int64_t *outer_next,
			 GjMatches *matches, GjStats *stats, GjError *err)
{
	CpuJoinState *state = arg;
	int64_t		inner_rows = tile->inner_end - tile->inner_begin;
	int64_t		o_begin = *outer_next;
	uint32_t   *swap;
	int64_t		rows_fit,
				rows_work,
				o_end,
				n;

	/* double buffered: write into the buffer the executor is done with */
	if (state->spare_outer_rows != NULL)
	{
		swap = state->outer_rows;
		state->outer_rows = state->spare_outer_rows;
		state->spare_outer_rows = swap;
		swap = state->inner_rows;
		state->inner_rows = state->spare_inner_rows;
		state->spare_inner_rows = swap;
	}

	/*
	 * Take as many outer rows as surely fit the match buffer (each can match
	 * every inner row of the tile) and as the work bound allows.
	 */
	if (inner_rows <= 0)
	{
		*outer_next = tile->outer_end;
		matches->count = 0;
		return true;
	}
	if (state->capacity < inner_rows)
	{
		err->code = GJ_ERR_DEVICE;
		snprintf(err->message, sizeof(err->message),
				 "match buffer of %lld pairs is smaller than an inner tile of %lld rows",
				 (long long) state->capacity, (long long) inner_rows);
		return false;
	}
	if (state->input.algorithm != GJ_ALGO_NESTLOOP)
	{
		int64_t		pairs = 0;

		if (!cpu_fix_outer_order(state, tile))
		{
			if (state->outer_order_fixed)
			{
				err->code = GJ_ERR_DEVICE;
				snprintf(err->message, sizeof(err->message),
						 "a tile covers part of the outer rows of a hash join whose first tile covered all of them");
			}
			else
			{
				err->code = GJ_ERR_OUT_OF_MEMORY;
				snprintf(err->message, sizeof(err->message),
						 "could not allocate host memory to sort %lld outer rows",
						 (long long) state->input.outer_nrows);
			}
			return false;
		}

		n = cpu_sorted_step(state, tile, outer_next, &pairs);
		stats->pairs_evaluated += pairs;
		stats->device_matches += n;
		matches->outer_rows = state->outer_rows;
		matches->inner_rows = state->inner_rows;
		matches->count = n;
		return true;
	}

	rows_fit = state->capacity / inner_rows;
	rows_work = CPU_PAIRS_PER_STEP / inner_rows;
	if (rows_work < 1)
		rows_work = 1;
	if (rows_fit > rows_work)
		rows_fit = rows_work;
	o_end = o_begin + rows_fit < tile->outer_end ? o_begin + rows_fit : tile->outer_end;

	if (state->simple)
		n = cpu_nestloop_compare(state, tile, o_begin, o_end);
	else
		n = cpu_nestloop_program(state, tile, o_begin, o_end);

	stats->pairs_evaluated += (o_end - o_begin) * inner_rows;
	stats->device_matches += n;
	matches->outer_rows = state->outer_rows;
	matches->inner_rows = state->inner_rows;
	matches->count = n;
	*outer_next = o_end;
	return true;
}

/*
 * The aggregate fast path (agg_runs.h): a sort-merge join whose bounds are
 * its whole condition matches each outer row with one run of inner
 * positions, which the step reduces instead of writing its pairs.  Outer
 * rows whose bounds the host must see (OUTER_ALL) return their pairs as
 * run_step does.  The caller guarantees that no argument row is flagged
 * GJ_AGG_ROW_ERROR.  Any other join is run_step.
 */
static bool
cpu_agg_step(void *arg, const GjTile *tile, int64_t *outer_next,
			 const GjAggSpec *spec, GjAggPartial *partial,
			 GjMatches *matches, GjStats *stats, GjError *err)
{
	CpuJoinState *state = arg;
	int64_t		valid_end = tile->inner_end < state->inner_valid ? tile->inner_end : state->inner_valid;
	int64_t		work = 0;
	int64_t		p;

	if (state->input.algorithm != GJ_ALGO_SORTMERGE || state->input.filter_needed ||
		tile->inner_end <= tile->inner_begin)
		return cpu_run_step(arg, tile, outer_next, matches, stats, err);
	if (*outer_next < state->outer_nall)
	{
		/* the OUTER_ALL rows of the tile, alone, as pairs */
		GjTile		all_rows = *tile;

		if (all_rows.outer_end > state->outer_nall)
			all_rows.outer_end = state->outer_nall;
		return cpu_run_step(arg, &all_rows, outer_next, matches, stats, err);
	}
	if (state->agg_runs == NULL)
	{
		state->agg_runs = gj_agg_runs_create(spec, state->inner_perm,
											 state->input.inner_nrows);
		if (state->agg_runs == NULL)
		{
			err->code = GJ_ERR_OUT_OF_MEMORY;
			snprintf(err->message, sizeof(err->message),
					 "could not allocate host memory for the prefix sums of %lld inner rows",
					 (long long) state->input.inner_nrows);
			return false;
		}
	}

	matches->count = 0;
	for (p = *outer_next; p < tile->outer_end; p++)
	{
		int64_t		first,
					last;

		if (state->outer_status[p] == OUTER_EMPTY)
		{
			/* empty rows are last: the rest of the tile has nothing */
			p = tile->outer_end;
			break;
		}
		if (p > *outer_next && (work >= CPU_PAIRS_PER_STEP ||
								p - *outer_next >= CPU_OUTER_ROWS_PER_STEP))
			break;
		first = cpu_lower_bound(state->inner_keys, tile->inner_begin, valid_end, state->outer_lo[p]);
		last = cpu_upper_bound(state->inner_keys, first, valid_end, state->outer_hi[p]);
		work += gj_agg_runs_reduce(state->agg_runs, spec, partial, state->outer_perm[p],
								   first, last);
		stats->pairs_evaluated += last - first;
		stats->device_matches += last - first;
	}
	*outer_next = p;
	return true;
}

/*
 * Step overlap: a second match buffer of the same capacity.  malloc only
 * reserves address space; the pages a step writes are the memory it costs.
 */
static bool
cpu_double_buffer(void *arg)
{
	CpuJoinState *state = arg;

	if (state->spare_outer_rows != NULL)
		return true;
	state->spare_outer_rows = malloc(sizeof(uint32_t) * state->capacity);
	state->spare_inner_rows = malloc(sizeof(uint32_t) * state->capacity);
	if (state->spare_outer_rows == NULL || state->spare_inner_rows == NULL)
	{
		free(state->spare_outer_rows);
		free(state->spare_inner_rows);
		state->spare_outer_rows = state->spare_inner_rows = NULL;
		return false;
	}
	return true;
}

static bool
cpu_tile_can_match(void *arg, const GjTile *tile)
{
	CpuJoinState *state = arg;

	if (state->input.algorithm == GJ_ALGO_NESTLOOP)
		return true;
	return cpu_sorted_tile_can_match(arg, tile);
}

const GjBackend gj_cpu_backend = {
	.name = "cpu",
	.begin_join = cpu_begin_join,
	.run_step = cpu_run_step,
	.end_join = cpu_end_join,
	.algorithms = (1 << GJ_ALGO_NESTLOOP) | (1 << GJ_ALGO_SORTMERGE) | (1 << GJ_ALGO_HASH),
	.tile_can_match = cpu_tile_can_match,
	.agg_step = cpu_agg_step,
	.double_buffer = cpu_double_buffer,
};

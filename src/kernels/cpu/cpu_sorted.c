/*-------------------------------------------------------------------------
 *
 * cpu_sorted.c
 *	  The cpu backend's sort-merge/range and hash algorithms: both sides in
 *	  key order, tile pruning, and the sorted step.
 *
 * The two algorithms share one machinery: each side is put in the order of
 * a 64-bit key (the inner key column's order key for range joins, a hash of
 * the equi-join keys for hash joins; ../shared/gj_keys.h, which the cuda
 * backend compiles too, so that both backends sort alike), each outer row
 * gets an inclusive key interval [lo, hi], and its candidates in a tile are
 * the inner positions whose key falls in it, found by binary search.  Tiles
 * whose key ranges cannot meet are pruned.  Outer rows whose bounds could
 * not be computed exactly (a bound expression would raise an error) are
 * compared with every inner row of the tile through the device program, so
 * the host sees exactly the pairs PostgreSQL would evaluate.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

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

/*
 * Put the outer rows of a sort-merge or hash join in key order: GJ_OUTER_ALL
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

	/* GJ_OUTER_ALL rows first, in row order; gather the bounded ones */
	for (r = 0; r < no; r++)
	{
		if (state->outer_status[r] == GJ_OUTER_ALL)
		{
			perm[nall] = (uint32_t) r;
			status[nall] = GJ_OUTER_ALL;
			lo[nall] = INT64_MIN;
			hi[nall++] = INT64_MAX;
		}
		else if (state->outer_status[r] == GJ_OUTER_BOUNDED)
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
		status[pos] = GJ_OUTER_BOUNDED;
		lo[pos] = sort_keys[pos - nall];
		hi[pos] = state->outer_hi != NULL ? state->outer_hi[row] : lo[pos];
	}
	/* the empty rows last, in row order */
	for (r = 0; r < no; r++)
	{
		if (state->outer_status[r] != GJ_OUTER_EMPTY)
			continue;
		perm[pos] = (uint32_t) r;
		status[pos] = GJ_OUTER_EMPTY;
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
 * order until a tile shows that they must be sorted (gj_cpu_fix_outer_order).
 */
/*
 * Do inputs a and b have the same inner side (columns, rows), algorithm
 * and inner key spec, so that one prepared inner side serves both?
 */
bool
gj_inner_prepared_alike(const GjJoinInput *a, const GjJoinInput *b)
{
	int			k;

	if (a->algorithm != b->algorithm || a->inner_nrows != b->inner_nrows ||
		a->inner.ncols != b->inner.ncols)
		return false;
	for (k = 0; k < a->inner.ncols; k++)
		if (a->inner.values[k] != b->inner.values[k] || a->inner.isnull[k] != b->inner.isnull[k])
			return false;
	if (a->algorithm == GJ_ALGO_SORTMERGE)
		return a->range.inner_col == b->range.inner_col && a->range.cls == b->range.cls;
	if (a->algorithm != GJ_ALGO_HASH || a->equi.nkeys != b->equi.nkeys)
		return false;
	for (k = 0; k < a->equi.nkeys; k++)
		if (a->equi.inner_cols[k] != b->equi.inner_cols[k] || a->equi.cls[k] != b->equi.cls[k])
			return false;
	return true;
}

/*
 * The inner rows of a sort-merge or hash join in key order (rows without a
 * key last), for one join or, through prepare_inner, for several.
 */
bool
gj_cpu_prepare_inner_arrays(const GjJoinInput *in, CpuPreparedInner *out)
{
	bool		hash = in->algorithm == GJ_ALGO_HASH;
	int64_t		ni = in->inner_nrows;
	int64_t		nvalid = 0;
	int64_t		nkeyless = 0;
	int64_t		r;

	out->inner_perm = malloc(sizeof(uint32_t) * (ni > 0 ? ni : 1));
	out->inner_keys = malloc(sizeof(int64_t) * (ni > 0 ? ni : 1));
	out->inner_bucket_start = NULL;
	if (!out->inner_perm || !out->inner_keys)
		return false;

	/* keyed rows from the front, rows without a key from the back */
	for (r = 0; r < ni; r++)
	{
		int64_t		key;
		bool		has_key = hash ?
		gj_equi_hash(&in->equi, &in->inner, in->equi.inner_cols, r, &key) :
		gj_column_key(&in->inner, in->range.inner_col, in->range.cls, r, &key);

		if (has_key)
		{
			out->inner_keys[nvalid] = key;
			out->inner_perm[nvalid++] = (uint32_t) r;
		}
		else
		{
			nkeyless++;
			out->inner_keys[ni - nkeyless] = INT64_MAX;
			out->inner_perm[ni - nkeyless] = (uint32_t) r;
		}
	}
	out->inner_valid = nvalid;
	out->inner_bucket_bits = 0;
	if (hash)
	{
		out->inner_bucket_bits = cpu_hash_bucket_bits(nvalid);
		return cpu_hash_sort(out->inner_keys, out->inner_perm, nvalid,
							 out->inner_bucket_bits, &out->inner_bucket_start);
	}
	return cpu_radix_sort(out->inner_keys, out->inner_perm, nvalid);
}

bool
gj_cpu_prepare_sorted(CpuJoinState *state)
{
	const GjJoinInput *in = &state->input;
	bool		hash = in->algorithm == GJ_ALGO_HASH;
	int64_t		no = in->outer_nrows;
	int64_t		r;
	const CpuPreparedInner *prepared = in->prepared_inner;

	state->outer_lo = malloc(sizeof(int64_t) * (no > 0 ? no : 1));
	state->outer_hi = hash ? NULL : malloc(sizeof(int64_t) * (no > 0 ? no : 1));
	state->outer_status = malloc(no > 0 ? no : 1);
	state->outer_by_row = true;
	if (!state->outer_lo || (!hash && !state->outer_hi) || !state->outer_status)
		return false;

	/* inner: as prepared once for several joins, or now */
	if (prepared != NULL && gj_inner_prepared_alike(&prepared->input, in))
	{
		state->inner_perm = prepared->inner_perm;
		state->inner_keys = prepared->inner_keys;
		state->inner_valid = prepared->inner_valid;
		state->inner_bucket_bits = prepared->inner_bucket_bits;
		state->inner_bucket_start = prepared->inner_bucket_start;
		state->inner_borrowed = true;
	}
	else
	{
		CpuPreparedInner own;
		bool		ok = gj_cpu_prepare_inner_arrays(in, &own);

		/* end_join frees what was allocated, ok or not */
		state->inner_perm = own.inner_perm;
		state->inner_keys = own.inner_keys;
		state->inner_valid = own.inner_valid;
		state->inner_bucket_bits = own.inner_bucket_bits;
		state->inner_bucket_start = own.inner_bucket_start;
		if (!ok)
			return false;
	}

	/* outer: each row's bounds and status, by row */
	for (r = 0; r < no; r++)
	{
		int64_t		lo = 0,
					hi = 0;
		int			status;

		if (hash)
		{
			status = gj_equi_hash(&in->equi, &in->outer, in->equi.outer_cols, r, &lo) ?
				GJ_OUTER_BOUNDED : GJ_OUTER_EMPTY;
			state->outer_lo[r] = lo;
			state->outer_status[r] = status;
			continue;
		}
		else
		{
			int			s_lo = gj_range_bound(&in->range, &in->outer, r, false, &lo);
			int			s_hi = gj_range_bound(&in->range, &in->outer, r, true, &hi);

			status = gj_range_status(s_lo, s_hi, lo, hi);
		}
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
 * can match is the same either way (see gj_cpu_sorted_tile_can_match).
 * Returns false when the sort runs out of memory, or when a tile after the
 * first covers only part of the outer rows after all.
 */
bool
gj_cpu_fix_outer_order(CpuJoinState *state, const GjTile *tile)
{
	bool		all_rows = tile->outer_begin == 0 && tile->outer_end >= state->input.outer_nrows;
	double		start;
	bool		sorted;

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
	start = gj_clock_ms();
	sorted = cpu_sort_outer(state);
	state->pending_times.sort_ms += gj_clock_ms() - start;
	return sorted;
}

/*
 * Tile pruning (tile_can_match of backend.h) of a sort-merge or hash join:
 * fixes the order of a hash join's outer rows at its first tile, then asks
 * gj_sorted_tile_can_match(), as the cuda backend does.
 */
bool
gj_cpu_sorted_tile_can_match(CpuJoinState *state, const GjTile *tile)
{
	int64_t		valid_end = tile->inner_end < state->inner_valid ? tile->inner_end : state->inner_valid;
	int64_t		kmin,
				kmax,
				p;

	if (tile->inner_end <= tile->inner_begin)
		return false;
	if (!gj_cpu_fix_outer_order(state, tile))
		return true;			/* run_step reports the failure */
	if (state->outer_by_row)
	{
		/*
		 * A hash join's outer rows in row order, all of them in the tile:
		 * the sorted walk of gj_sorted_tile_can_match finds a key in [kmin,
		 * kmax] if there is one, and so does this one.
		 */
		if (valid_end <= tile->inner_begin)
			return false;
		kmin = state->inner_keys[tile->inner_begin];
		kmax = state->inner_keys[valid_end - 1];
		for (p = tile->outer_begin; p < tile->outer_end; p++)
		{
			if (state->outer_status[p] == GJ_OUTER_BOUNDED &&
				state->outer_lo[p] >= kmin && state->outer_lo[p] <= kmax)
				return true;
		}
		return false;
	}
	return gj_sorted_tile_can_match(tile, state->outer_status, state->outer_lo,
									state->outer_hi, state->inner_keys, state->inner_valid);
}

/* One step of a sort-merge or hash join tile. */
int64_t
gj_cpu_sorted_step(CpuJoinState *state, const GjTile *tile, int64_t *outer_next, int64_t *pairs)
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
		bool		filter = in->filter_needed || status == GJ_OUTER_ALL;

		if (status == GJ_OUTER_EMPTY)
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
		if (status == GJ_OUTER_ALL)
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
			first = gj_lower_bound(state->inner_keys, begin, end, state->outer_lo[p]);
			last = gj_upper_bound(state->inner_keys, first, end, state->outer_lo[p]);
		}
		else
		{
			first = gj_lower_bound(state->inner_keys, tile->inner_begin, valid_end, state->outer_lo[p]);
			last = gj_upper_bound(state->inner_keys, first, valid_end, state->outer_hi[p]);
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
			else if (filter && eq_outer != NULL && status != GJ_OUTER_ALL)
				r = (eq_outer[orow] == eq_inner[irow]) ? GJ_RESULT_TRUE : GJ_RESULT_FALSE;
			else if (filter && state->affine.valid)
				r = gj_cpu_affine_eval(&state->affine, &in->outer, orow, &in->inner, irow);
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

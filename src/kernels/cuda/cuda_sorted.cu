/*-------------------------------------------------------------------------
 *
 * cuda_sorted.cu
 *	  The cuda backend's sort-merge/range and hash joins: putting both sides
 *	  in key order when a join begins, and the sorted step.
 *
 * He et al., SIGMOD'08, section 4.1: a sorted array as the index.  Both sides
 * are put in exactly the order the cpu backend uses (the keys, hashes and
 * bounds of ../shared/gj_keys.h), on the device: begin_join computes each
 * inner row's key (the order key of the range column, or the hash of the
 * equi-join keys) and each outer row's bounds, partitions and radix-sorts
 * them with CUB, and keeps the sorted arrays and the whole sides' key
 * columns resident for all tiles (a join whose sides do not fit the
 * device memory budget so is refused with out-of-memory, and the executor
 * runs it on the cpu backend); tile pruning copies the sorted keys at
 * its tiles' ends and blocks of the bounds it walks.  A step binary-searches each outer row's
 * bounds in the tile's inner keys, scans the candidate counts, evaluates
 * candidate pairs one per thread (so hot keys and wide ranges spread over
 * the device) when the device program must decide, cuts at the match
 * capacity on an outer-row boundary and writes the pairs; see
 * gj_cuda_sorted_step().  The inner half of the preparation
 * (gj_cuda_sort_inner) also serves prepare_inner, which sorts an inner side
 * once for several joins (cuda_backend.cu).
 *
 *-------------------------------------------------------------------------
 */
/* no NVTX ranges (and no NVTX injection library) in a database server */
#define CCCL_DISABLE_NVTX
#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "cuda_internal.cuh"
#include "kernels/cuda/compiled_count.cuh"

/* ---------------------------------------------------------------------
 * Sort-merge and hash kernels
 *
 * Both sides are put in the order gj_cpu_prepare_sorted() in ../cpu/cpu_sorted.c
 * puts them in, with the same keys and the same hash function, so that a
 * tile (positions in that order) holds the same rows on both backends and
 * tile pruning agrees.  Inner: rows with a key sorted by it (CUB's radix
 * sort is stable, so equal keys stay in row order), then the rows without
 * one in reverse row order (what DevicePartition leaves at the back, and
 * what the cpu backend does).  Outer: the rows whose bounds need the host
 * (GJ_OUTER_ALL) in row order, then the bounded rows by lower bound, then the
 * rows that cannot match.
 * ---------------------------------------------------------------------
 */

typedef struct KeyArgs
{
	GjKeyColumns cols;			/* device columns of the whole side */
	GjRangeSpec range;
	GjEquiSpec	equi;
	int32_t		algorithm;
	int64_t		nrows;
	uint32_t   *rows;			/* out: 0, 1, 2, ... */
	int64_t    *keys;			/* out, by row: inner key / outer lower bound */
	int64_t    *his;			/* out, by row: outer upper bound */
	uint8_t    *flags[3];		/* out, by row: 1 where status is OUTER_x */
} KeyArgs;

/* Inner side: each row's key, and whether it has one (flags[0]). */
__global__ void
inner_key_kernel(const __grid_constant__ KeyArgs a)
{
	int64_t		r = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	int64_t		key = INT64_MAX;
	bool		has_key;

	if (r >= a.nrows)
		return;
	has_key = a.algorithm == GJ_ALGO_HASH ?
		gj_equi_hash(&a.equi, &a.cols, a.equi.inner_cols, r, &key) :
		gj_column_key(&a.cols, a.range.inner_col, a.range.cls, r, &key);
	a.rows[r] = (uint32_t) r;
	a.keys[r] = has_key ? key : INT64_MAX;
	a.flags[0][r] = has_key;
}

/* Outer side: each row's status and bounds, as gj_cpu_prepare_sorted(). */
__global__ void
outer_bound_kernel(const __grid_constant__ KeyArgs a)
{
	int64_t		r = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	int64_t		lo = 0,
				hi = 0;
	int			status;

	if (r >= a.nrows)
		return;
	if (a.algorithm == GJ_ALGO_HASH)
	{
		status = gj_equi_hash(&a.equi, &a.cols, a.equi.outer_cols, r, &lo) ?
			GJ_OUTER_BOUNDED : GJ_OUTER_EMPTY;
		hi = lo;
	}
	else
	{
		int			s_lo = gj_range_bound(&a.range, &a.cols, r, false, &lo);
		int			s_hi = gj_range_bound(&a.range, &a.cols, r, true, &hi);

		status = gj_range_status(s_lo, s_hi, lo, hi);
	}
	a.rows[r] = (uint32_t) r;
	a.keys[r] = lo;
	a.his[r] = hi;
	for (int s = 0; s < 3; s++)
		a.flags[s][r] = (status == s);
}

/* out[i] = by_row[rows[i]] */
__global__ void
gather_kernel(const uint32_t *rows, const int64_t *by_row, int64_t *out, int64_t n)
{
	int64_t		i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = by_row[rows[i]];
}

/* Inner positions [begin, n) hold the rows without a key. */
__global__ void
inner_tail_kernel(const uint32_t *part_rows, int64_t begin, int64_t n,
				  int64_t *keys, uint32_t *perm)
{
	int64_t		i = begin + (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
	{
		keys[i] = INT64_MAX;
		perm[i] = part_rows[i];
	}
}

/*
 * Outer positions: status and bounds by position, once outer_perm and the
 * sorted lower bounds of the bounded rows are in place.
 */
__global__ void
outer_finish_kernel(const uint32_t *perm, const int64_t *hi_by_row, int64_t nall,
					int64_t nbounded, int64_t n, uint8_t *status, int64_t *lo, int64_t *hi)
{
	int64_t		p = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (p >= n)
		return;
	if (p < nall)
	{
		status[p] = GJ_OUTER_ALL;
		lo[p] = INT64_MIN;
		hi[p] = INT64_MAX;
	}
	else if (p < nall + nbounded)
	{
		status[p] = GJ_OUTER_BOUNDED;
		hi[p] = hi_by_row[perm[p]];
	}
	else
	{
		status[p] = GJ_OUTER_EMPTY;
		lo[p] = INT64_MAX;
		hi[p] = INT64_MIN;
	}
}

/* Arguments of the per-row bounds kernel of a sorted step. */
typedef struct BoundsArgs
{
	const uint8_t *status;		/* outer, by position */
	const int64_t *lo;
	const int64_t *hi;
	const int64_t *inner_keys;	/* sorted */
	int64_t		o_begin;		/* position of the step's first row */
	int64_t		nrows;
	int64_t		inner_begin;
	int64_t		inner_end;
	int64_t		valid_end;		/* end of the tile's keyed positions */
	uint32_t   *first;			/* out: first candidate position */
	uint64_t   *cand;			/* out: candidates; cand[nrows] = 0 */
} BoundsArgs;

/* Each step row's candidates: a binary search in the tile's inner keys. */
__global__ void
bounds_kernel(BoundsArgs a)
{
	int64_t		j = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	int64_t		p = a.o_begin + j;
	int64_t		first = a.inner_begin,
				last = a.inner_begin;

	if (j > a.nrows)
		return;
	if (j < a.nrows)
	{
		if (a.status[p] == GJ_OUTER_ALL)
			last = a.inner_end;
		else if (a.status[p] == GJ_OUTER_BOUNDED)
		{
			first = gj_lower_bound(a.inner_keys, a.inner_begin, a.valid_end, a.lo[p]);
			last = gj_upper_bound(a.inner_keys, first, a.valid_end, a.hi[p]);
		}
		a.first[j] = (uint32_t) first;
	}
	a.cand[j] = (uint64_t) (last - first);
}

/*
 * After the scan of the candidates: the rows a filtered step may evaluate.
 * Row j may start while the candidates before it are fewer than the work
 * limit, so a step has at least one row.  cut[0]: rows, cut[1]: pairs.
 */
__global__ void
work_cut_kernel(const uint64_t *cand_off, int64_t nrows, uint64_t limit, uint64_t *cut)
{
	int64_t		lo = 0,
				hi = nrows - 1;

	/* largest p in [0, nrows) with cand_off[p] < limit; cand_off[0] = 0 */
	while (lo < hi)
	{
		int64_t		mid = (lo + hi + 1) / 2;

		if (cand_off[mid] < limit)
			lo = mid;
		else
			hi = mid - 1;
	}
	cut[0] = (uint64_t) (lo + 1);
	cut[1] = cand_off[lo + 1];
}

/*
 * The rows of the step whose matches fit the buffer: the largest k (at most
 * cut[0] when filtering, nrows otherwise) with off[k] <= capacity.
 * cut[2]: k, cut[3]: its matches, cut[4]: its candidates, cut[5]: cleared,
 * for the number of matches the filtered write pass selects.
 */
__global__ void
sorted_cut_kernel(const uint64_t *cand_off, const uint64_t *match_off, int64_t nrows,
				  uint64_t capacity, uint64_t *cut)
{
	const uint64_t *off = match_off != NULL ? match_off : cand_off;
	int64_t		lo = 0,
				hi = match_off != NULL ? (int64_t) cut[0] : nrows;

	while (lo < hi)
	{
		int64_t		mid = (lo + hi + 1) / 2;

		if (off[mid] <= capacity)
			lo = mid;
		else
			hi = mid - 1;
	}
	cut[2] = (uint64_t) lo;
	cut[3] = off[lo];
	cut[4] = cand_off[lo];
	cut[5] = 0;
}

/*
 * Arguments of the pair kernels of a sorted step (well under 4 KB): the
 * count pass's (compiled_count.cuh's, which the compiled count kernel
 * takes), the program and the write pass's.
 */
typedef struct PairArgs
{
	GjcSortedArgs s;
	GjProgram	program;
	uint64_t	npairs;			/* write pass: pairs to do */
	int32_t		filter;			/* evaluate the program (else every pair matches) */
	uint32_t   *out_outer;
	uint32_t   *out_inner;
} PairArgs;

/* The rows of candidate pair t: its step row j, outer and inner row. */
__device__ __forceinline__ void
pair_rows(const GjcSortedArgs *s, uint64_t t, int64_t *j, uint32_t *orow, uint32_t *irow)
{
	*j = gjc_pair_row(s->cand_off, s->nrows, t);
	*orow = s->outer_perm[s->o_begin + *j];
	*irow = s->inner_perm[(int64_t) s->first[*j] + (int64_t) (t - s->cand_off[*j])];
}

/*
 * Evaluate candidate pair t of the step: its rows and the program's verdict
 * (GJ_RESULT_TRUE without filtering).
 */
__device__ __forceinline__ int
eval_pair(const PairArgs *a, uint64_t t, int64_t *j, uint32_t *orow, uint32_t *irow)
{
	pair_rows(&a->s, t, j, orow, irow);
	if (!a->filter)
		return GJ_RESULT_TRUE;
	return gj_program_eval(a->program.instrs, a->program.ninstrs,
						   &a->s.outer, *orow, &a->s.inner, *irow);
}

/*
 * Count pass of a filtered step, one candidate pair per thread (so a hot key
 * or a wide range is spread over the whole device, not one thread), in
 * warp-wide rounds of a grid-stride loop (gjc_sorted_round: the counts per
 * step row, and the verdicts where the step keeps them).  The program
 * interpreted; compiled_count.cuh's gjc_sorted_count_kernel is the same
 * pass with the program compiled.
 */
__global__ void __launch_bounds__(SORTED_BLOCK)
count_pairs_kernel(const __grid_constant__ PairArgs a)
{
	uint64_t	total = *a.s.npairs_at;
	uint64_t	warp = ((uint64_t) blockIdx.x * blockDim.x + threadIdx.x) >> 5;
	uint64_t	nwarps = ((uint64_t) gridDim.x * blockDim.x) >> 5;

	for (uint64_t base = warp * 32; base < total; base += nwarps * 32)
	{
		uint64_t	t = base + (threadIdx.x & 31);
		int64_t		j = -1;
		uint32_t	orow,
					irow;
		int			res = GJ_RESULT_FALSE;

		if (t < total)
			res = eval_pair(&a, t, &j, &orow, &irow);
		gjc_sorted_round(&a.s, base, j, res);
	}
}

/*
 * Write pass of an unfiltered step: candidate pair t is match t.
 */
__global__ void __launch_bounds__(SORTED_BLOCK)
write_pairs_kernel(const __grid_constant__ PairArgs a)
{
	uint64_t	t = (uint64_t) blockIdx.x * blockDim.x + threadIdx.x;
	int64_t		j;
	uint32_t	orow,
				irow;

	if (t >= a.npairs)
		return;
	(void) eval_pair(&a, t, &j, &orow, &irow);
	a.out_outer[t] = orow;
	a.out_inner[t] = irow;
}

/*
 * Write pass of a filtered step: CUB's stable selection over the candidate
 * pairs, so that the matches come out in candidate order, as the cpu
 * backend returns them.  The order matters where the host rechecks pairs:
 * the first pair whose recheck raises an error decides which error the
 * query reports, and a semi or anti join stops evaluating an outer row's
 * pairs at its first match.  A pair is packed as (outer row | recheck flag)
 * << 32 | inner row; NO_PAIR (row numbers never reach 2^31 - 1) is a
 * candidate that does not match.
 */
#define NO_PAIR		UINT64_MAX

struct PackPair
{
	const PairArgs *args;		/* in device memory: too large to copy per thread */

	__device__ uint64_t operator() (uint64_t t) const
	{
		int64_t		j;
		uint32_t	orow,
					irow;
		int			r;

		if (args->s.match_bits != NULL)
		{
			/* the count pass's verdict: no program evaluated again */
			uint32_t	bit = 1u << (t % 32);

			if ((args->s.match_bits[t / 32] & bit) == 0)
				return NO_PAIR;
			pair_rows(&args->s, t, &j, &orow, &irow);
			r = (args->s.recheck_bits[t / 32] & bit) != 0 ? GJ_RESULT_RECHECK : GJ_RESULT_TRUE;
		}
		else
			r = eval_pair(args, t, &j, &orow, &irow);

		if (r == GJ_RESULT_FALSE)
			return NO_PAIR;
		if (r == GJ_RESULT_RECHECK)
			orow |= GJ_PAIR_RECHECK;
		return ((uint64_t) orow << 32) | irow;
	}
};

struct IsPair
{
	__device__ bool operator() (uint64_t packed) const
	{
		return packed != NO_PAIR;
	}
};

__global__ void
unpack_pairs_kernel(const uint64_t *packed, int64_t n, uint32_t *out_outer,
					uint32_t *out_inner)
{
	int64_t		i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
	{
		out_outer[i] = (uint32_t) (packed[i] >> 32);
		out_inner[i] = (uint32_t) packed[i];
	}
}

/* ---------------------------------------------------------------------
 * Sort-merge and hash: preparing the sorted sides
 * ---------------------------------------------------------------------
 */

/* In-place exclusive prefix sum of n counters. */
static bool
scan_counts(CudaJoinState *state, uint64_t *data, int64_t n, GjError *err)
{
	return gj_cuda_cub_run(state, [&] (void *temp, size_t &bytes) {
		return cub::DeviceScan::ExclusiveSum(temp, bytes, data, (int) n, state->stream);
	}, "could not run the prefix sum", err);
}

/* Stable radix sort of n (int64 key, uint32 row) pairs, by signed key. */
static bool
sort_pairs(CudaJoinState *state, const int64_t *keys_in, int64_t *keys_out,
		   const uint32_t *rows_in, uint32_t *rows_out, int64_t n, GjError *err)
{
	if (n < 1)
		return true;
	return gj_cuda_cub_run(state, [&] (void *temp, size_t &bytes) {
		return cub::DeviceRadixSort::SortPairs(temp, bytes, keys_in, keys_out, rows_in,
											   rows_out, (int) n, 0, 64, state->stream);
	}, "could not sort the join keys", err);
}

/*
 * Rows r in [0, n) with flags[r] set, in row order, to out; their number to
 * *nselected (a host sync).  With partition, the other rows follow them in
 * reverse row order, as DevicePartition leaves them.
 */
static bool
select_rows(CudaJoinState *state, const uint32_t *rows, const uint8_t *flags,
			uint32_t *out, int64_t n, bool partition, int *d_num, int64_t *nselected,
			GjError *err)
{
	int			h_num = 0;

	*nselected = 0;
	if (n < 1)
		return true;
	if (!gj_cuda_cub_run(state, [&] (void *temp, size_t &bytes) {
		return partition ?
			cub::DevicePartition::Flagged(temp, bytes, rows, flags, out, d_num, (int) n,
										  state->stream) :
			cub::DeviceSelect::Flagged(temp, bytes, rows, flags, out, d_num, (int) n,
									   state->stream);
	}, "could not select join rows", err))
		return false;
	CUDA_TRY(cudaMemcpyAsync(state->h_prefix, d_num, sizeof(int), cudaMemcpyDeviceToHost,
							 state->stream),
			 "could not copy a row count from the device");
	CUDA_TRY(cudaStreamSynchronize(state->stream), "could not select join rows");
	memcpy(&h_num, state->h_prefix, sizeof(int));
	*nselected = h_num;
	return true;
}

/* Device memory of preparing one sorted side, freed once it is. */
typedef struct PrepareTemp
{
	uint8_t    *flags;			/* 3 x n */
	int64_t    *keys_by_row;
	int64_t    *his_by_row;
	uint32_t   *rows;
	uint32_t   *part_rows;
	int64_t    *part_keys;
	int		   *num;
} PrepareTemp;

/* The temporaries for a side of n rows (n >= 1). */
/* One of alloc_prepare_temp's buffers (NULL where it fails). */
static cudaError_t
temp_alloc(CudaJoinState *state, void **ptr, size_t bytes)
{
	cudaError_t rc = cudaMallocAsync(ptr, bytes, state->stream);

	if (rc != cudaSuccess)
		*ptr = NULL;
	return rc;
}

static bool
alloc_prepare_temp(CudaJoinState *state, PrepareTemp *tmp, int64_t n, GjError *err)
{
	/*
	 * From the pool on the state's stream even where the state's own
	 * buffers are cudaMalloc's (plain_alloc, an inner side prepared for
	 * several joins): only this stream uses them, and free_prepare_temp
	 * frees them on it.  cudaMalloc and cudaFree of seven buffers each time
	 * a shared inner side was sorted, each cudaFree waiting for the whole
	 * device, were most of that sort's time.  One synchronisation after
	 * them all, as gj_device_alloc waits after each.
	 */
#define ALLOC(ptr, bytes) \
	CUDA_TRY(temp_alloc(state, (void **) &(ptr), (bytes)), \
			 "could not allocate device memory to sort the join keys")
	ALLOC(tmp->flags, 3 * n);
	ALLOC(tmp->keys_by_row, sizeof(int64_t) * n);
	ALLOC(tmp->his_by_row, sizeof(int64_t) * n);
	ALLOC(tmp->rows, sizeof(uint32_t) * n);
	ALLOC(tmp->part_rows, sizeof(uint32_t) * n);
	ALLOC(tmp->part_keys, sizeof(int64_t) * n);
	ALLOC(tmp->num, sizeof(int));
#undef ALLOC
	CUDA_TRY(cudaStreamSynchronize(state->stream),
			 "could not allocate device memory to sort the join keys");
	return true;
}

/* Free the temporaries once nothing may still use them. */
static void
free_prepare_temp(CudaJoinState *state, PrepareTemp *tmp)
{
	/* a failure has synchronised already; errors are moot then */
	if (state->have_stream)
		cudaStreamSynchronize(state->stream);
	/* alloc_prepare_temp's, from the pool whatever the state's memory */
	if (state->have_stream)
	{
		void	   *temps[] = {tmp->flags, tmp->keys_by_row, tmp->his_by_row, tmp->rows,
			tmp->part_rows, tmp->part_keys, tmp->num};

		for (size_t i = 0; i < sizeof(temps) / sizeof(temps[0]); i++)
			if (temps[i] != NULL)
				(void) cudaFreeAsync(temps[i], state->stream);
	}
	memset(tmp, 0, sizeof(PrepareTemp));
	(void) cudaGetLastError();
}

/* The KeyArgs of a side of n rows over tmp. */
static void
key_args(const CudaJoinState *state, PrepareTemp *tmp, int64_t n, KeyArgs *a)
{
	memset(a, 0, sizeof(KeyArgs));
	a->range = state->input.range;
	a->equi = state->input.equi;
	a->algorithm = state->input.algorithm;
	a->rows = tmp->rows;
	a->keys = tmp->keys_by_row;
	a->his = tmp->his_by_row;
	for (int s = 0; s < 3; s++)
		a->flags[s] = tmp->flags + s * n;
}

/*
 * Inner: the whole side's key columns on the device, the keyed rows sorted
 * by key, then the rows without a key.  All of it depends on the inner side
 * and the key spec alone, so that one preparation serves several joins
 * (CudaPreparedInner).
 */
static bool
sort_inner_work(CudaJoinState *state, PrepareTemp *tmp, GjError *err)
{
	const GjJoinInput *in = &state->input;
	int64_t		ni = in->inner_nrows;
	int64_t		n = gj_max64(ni, 1);
	int64_t		nvalid;
	KeyArgs		a;
	GjStats		ignored;

	memset(&ignored, 0, sizeof(ignored));
	if (ni > 0 && !gj_cuda_upload_side(state, &state->inner, &in->inner, 0, ni, &ignored, err))
		return false;
	CUDA_TRY(gj_device_alloc(state, (void **) &state->d_inner_keys, sizeof(int64_t) * n),
			 "could not allocate device memory to sort the join keys");
	CUDA_TRY(gj_device_alloc(state, (void **) &state->d_inner_perm, sizeof(uint32_t) * n),
			 "could not allocate device memory to sort the join keys");
	if (!alloc_prepare_temp(state, tmp, n, err))
		return false;
	key_args(state, tmp, n, &a);

	if (ni > 0)
	{
		gj_cuda_device_columns(&state->inner, in->inner.ncols, &a.cols);
		a.nrows = ni;
		inner_key_kernel<<<gj_cuda_grid_for(ni, 256), 256, 0, state->stream>>>(a);
		CUDA_LAUNCHED("the inner key kernel");
	}
	if (!select_rows(state, tmp->rows, a.flags[0], tmp->part_rows, ni, true, tmp->num,
					 &nvalid, err))
		return false;
	if (nvalid > 0)
	{
		gather_kernel<<<gj_cuda_grid_for(nvalid, 256), 256, 0, state->stream>>>(
			tmp->part_rows, tmp->keys_by_row, tmp->part_keys, nvalid);
		CUDA_LAUNCHED("the gather kernel");
	}
	if (!sort_pairs(state, tmp->part_keys, state->d_inner_keys, tmp->part_rows,
					state->d_inner_perm, nvalid, err))
		return false;
	if (ni > nvalid)
	{
		inner_tail_kernel<<<gj_cuda_grid_for(ni - nvalid, 256), 256, 0, state->stream>>>(
			tmp->part_rows, nvalid, ni, state->d_inner_keys, state->d_inner_perm);
		CUDA_LAUNCHED("the inner tail kernel");
	}
	state->inner_valid = nvalid;
	/* tile pruning copies the keys it reads (cuda_backend.c's inner_key_at) */
	CUDA_TRY(cudaStreamSynchronize(state->stream), "sorting the join keys failed");
	return true;
}

/*
 * Outer: the whole side's key columns on the device, the GJ_OUTER_ALL rows,
 * the bounded rows by lower bound, the empty rows (their counts on the
 * host: gj_cuda_outer_status), and the per-row scratch of the steps.
 */
static bool
sort_outer_work(CudaJoinState *state, PrepareTemp *tmp, GjError *err)
{
	const GjJoinInput *in = &state->input;
	int64_t		no = in->outer_nrows;
	int64_t		n = gj_max64(no, 1);
	int64_t		nall,
				nbounded,
				nempty;
	KeyArgs		a;
	GjStats		ignored;

	memset(&ignored, 0, sizeof(ignored));
	if (no > 0 && !gj_cuda_upload_side(state, &state->outer, &in->outer, 0, no, &ignored, err))
		return false;

#define ALLOC(ptr, bytes) \
	CUDA_TRY(gj_device_alloc(state, (void **) &(ptr), (bytes)), \
			 "could not allocate device memory to sort the join keys")
	ALLOC(state->d_outer_perm, sizeof(uint32_t) * n);
	ALLOC(state->d_outer_lo, sizeof(int64_t) * n);
	ALLOC(state->d_outer_hi, sizeof(int64_t) * n);
	ALLOC(state->d_outer_status, n);
#undef ALLOC
	if (!alloc_prepare_temp(state, tmp, n, err))
		return false;
	key_args(state, tmp, n, &a);

	if (no > 0)
	{
		gj_cuda_device_columns(&state->outer, in->outer.ncols, &a.cols);
		a.nrows = no;
		outer_bound_kernel<<<gj_cuda_grid_for(no, 256), 256, 0, state->stream>>>(a);
		CUDA_LAUNCHED("the outer bounds kernel");
	}
	if (!select_rows(state, tmp->rows, a.flags[GJ_OUTER_ALL], state->d_outer_perm, no, false,
					 tmp->num, &nall, err) ||
		!select_rows(state, tmp->rows, a.flags[GJ_OUTER_BOUNDED], tmp->part_rows, no, false,
					 tmp->num, &nbounded, err) ||
		!select_rows(state, tmp->rows, a.flags[GJ_OUTER_EMPTY],
					 state->d_outer_perm + nall + nbounded, no, false, tmp->num, &nempty, err))
		return false;
	if (nall + nbounded + nempty != no)
	{
		err->code = GJ_ERR_DEVICE;
		snprintf(err->message, sizeof(err->message),
				 "outer rows were lost while sorting (%lld + %lld + %lld of %lld)",
				 (long long) nall, (long long) nbounded, (long long) nempty, (long long) no);
		return false;
	}
	if (nbounded > 0)
	{
		gather_kernel<<<gj_cuda_grid_for(nbounded, 256), 256, 0, state->stream>>>(
			tmp->part_rows, tmp->keys_by_row, tmp->part_keys, nbounded);
		CUDA_LAUNCHED("the gather kernel");
	}
	if (!sort_pairs(state, tmp->part_keys, state->d_outer_lo + nall, tmp->part_rows,
					state->d_outer_perm + nall, nbounded, err))
		return false;
	if (no > 0)
	{
		outer_finish_kernel<<<gj_cuda_grid_for(no, 256), 256, 0, state->stream>>>(
			state->d_outer_perm, tmp->his_by_row, nall, nbounded, no,
			state->d_outer_status, state->d_outer_lo, state->d_outer_hi);
		CUDA_LAUNCHED("the outer finish kernel");
	}
	state->outer_all = nall;
	state->outer_bounded = nbounded;

	/*
	 * No host copies of the bounds: tile pruning fetches the few it reads
	 * (cuda_tile_can_match).  Copying all of them took 85% of this
	 * function's time (H200: 2.3 of 2.7 s over 80 shares of 10M rows).
	 */
	CUDA_TRY(cudaStreamSynchronize(state->stream), "sorting the join keys failed");

	/* per-row scratch of a step */
	state->step_cap = gj_min64(SORTED_ROWS_PER_STEP, n);
	CUDA_TRY(gj_device_alloc(state, (void **) &state->d_first, sizeof(uint32_t) * state->step_cap),
			 "could not allocate device scratch memory");
	CUDA_TRY(gj_device_alloc(state, (void **) &state->d_cand, sizeof(uint64_t) * (state->step_cap + 1)),
			 "could not allocate device scratch memory");
	CUDA_TRY(gj_device_alloc(state, (void **) &state->d_count, sizeof(uint64_t) * (state->step_cap + 1)),
			 "could not allocate device scratch memory");
	CUDA_TRY(gj_device_alloc(state, (void **) &state->d_cut, sizeof(uint64_t) * CUT_ENTRIES),
			 "could not allocate device memory");
	CUDA_TRY(gj_pinned_alloc((void **) &state->h_cut, sizeof(uint64_t) * CUT_ENTRIES),
			 "could not allocate pinned host memory");
	return true;
}

/*
 * The inner side alone in key order on the device (sort_inner_work), for
 * one join or, with plain_alloc, for several (cuda_prepare_inner).
 * Synchronises the stream.
 */
bool
gj_cuda_sort_inner(CudaJoinState *state, GjError *err)
{
	PrepareTemp tmp;
	bool		ok;

	memset(&tmp, 0, sizeof(tmp));
	ok = sort_inner_work(state, &tmp, err);
	free_prepare_temp(state, &tmp);
	return ok;
}

/*
 * Put both sides in key order on the device (see the kernels above).  An
 * inner side borrowed from prepare_inner is in key order already.
 */
bool
gj_cuda_prepare_sorted(CudaJoinState *state, GjError *err)
{
	PrepareTemp tmp;
	bool		ok;

	if (!state->inner_borrowed && !gj_cuda_sort_inner(state, err))
		return false;
	memset(&tmp, 0, sizeof(tmp));
	ok = sort_outer_work(state, &tmp, err);
	free_prepare_temp(state, &tmp);
	return ok;
}

/* ---------------------------------------------------------------------
 * Sort-merge and hash: steps
 * ---------------------------------------------------------------------
 */

/*
 * The candidates of step rows [o_begin, o_begin + rows) of a sorted step:
 * each row's first inner position in d_first and their number in d_cand.
 */
bool
gj_cuda_launch_bounds(CudaJoinState *state, const GjTile *tile, int64_t o_begin, int64_t rows,
					  GjError *err)
{
	BoundsArgs	b;

	b.status = state->d_outer_status;
	b.lo = state->d_outer_lo;
	b.hi = state->d_outer_hi;
	b.inner_keys = state->d_inner_keys;
	b.o_begin = o_begin;
	b.nrows = rows;
	b.inner_begin = tile->inner_begin;
	b.inner_end = tile->inner_end;
	b.valid_end = gj_max64(gj_min64(tile->inner_end, state->inner_valid), tile->inner_begin);
	b.first = state->d_first;
	b.cand = state->d_cand;
	bounds_kernel<<<gj_cuda_grid_for(rows + 1, 256), 256, 0, state->stream>>>(b);
	CUDA_LAUNCHED("the bounds kernel");
	return true;
}

/*
 * The candidates of an aggregate step (cuda_agg.cu): bounds and their scan
 * for up to rows step rows from o_begin, cut at limit candidates (the work
 * limit of a filtered step: SORTED_PAIRS_PER_STEP, or gj_cuda_verdict_pairs()
 * where the step keeps its verdicts).  *k receives the rows the step takes
 * and *pairs their candidates; d_first and d_cand (scanned: row j's
 * candidates are [d_cand[j], d_cand[j + 1])) describe them.  Synchronises
 * the stream.
 */
bool
gj_cuda_sorted_candidates(CudaJoinState *state, const GjTile *tile, int64_t o_begin,
						  int64_t rows, int64_t limit, int64_t *k, int64_t *pairs, GjError *err)
{
	if (!gj_cuda_launch_bounds(state, tile, o_begin, rows, err))
		return false;
	if (!scan_counts(state, state->d_cand, rows + 1, err))
		return false;
	work_cut_kernel<<<1, 1, 0, state->stream>>>(state->d_cand, rows, (uint64_t) limit,
												 state->d_cut);
	CUDA_LAUNCHED("the work cut kernel");
	CUDA_TRY(cudaMemcpyAsync(state->h_cut, state->d_cut, 2 * sizeof(uint64_t),
							 cudaMemcpyDeviceToHost, state->stream),
			 "could not copy the step's cut from the device");
	CUDA_TRY(cudaStreamSynchronize(state->stream), "the bounds kernel failed");
	*k = (int64_t) state->h_cut[0];
	*pairs = (int64_t) state->h_cut[1];
	return true;
}

/*
 * The write pass of a filtered step (a.npairs candidates, total of them
 * matching): the matches in candidate order into the device match buffer,
 * and the number CUB selected into h_cut[5], which the caller checks
 * against total once the stream is synchronised.
 */
static bool
write_filtered_pairs(CudaJoinState *state, const PairArgs *a, int64_t total, GjError *err)
{
	uint64_t   *packed;
	uint64_t   *nselected = state->d_cut + 5;
	thrust::counting_iterator<uint64_t> first_pair(0);

	if (state->d_pair_args == NULL)
		CUDA_TRY(gj_device_alloc(state, (void **) &state->d_pair_args, sizeof(PairArgs)),
				 "could not allocate device memory");
	/* pageable source: the copy has left *a when this returns */
	CUDA_TRY(cudaMemcpyAsync(state->d_pair_args, a, sizeof(PairArgs), cudaMemcpyHostToDevice,
							 state->stream),
			 "could not copy the step's arguments to the device");
	packed = state->d_packed;
	if (!gj_cuda_cub_run(state, [&] (void *temp, size_t &bytes) {
		return cub::DeviceSelect::If(temp, bytes,
									 thrust::make_transform_iterator(first_pair,
																	 PackPair {state->d_pair_args}),
									 packed, nselected, (int64_t) a->npairs, IsPair(),
									 state->stream);
	}, "could not select the matches of a step", err))
		return false;
	unpack_pairs_kernel<<<gj_cuda_grid_for(total, 256), 256, 0, state->stream>>>(
		packed, total, state->d_out_outer, state->d_out_inner);
	CUDA_LAUNCHED("the match unpack kernel");
	CUDA_TRY(cudaMemcpyAsync(&state->h_cut[5], nselected, sizeof(uint64_t),
							 cudaMemcpyDeviceToHost, state->stream),
			 "could not copy the match count from the device");
	return true;
}

/*
 * The count pass's arguments for rows step rows from o_begin (after the
 * bounds and their scan): the sides' device columns, their row orders, the
 * rows' first candidates and scanned candidate counts, and the per-row
 * match counts; no verdicts yet.
 */
static void
sorted_args(CudaJoinState *state, int64_t o_begin, int64_t rows, GjcSortedArgs *s)
{
	memset(s, 0, sizeof(*s));
	gj_cuda_device_columns(&state->outer, state->input.outer.ncols, &s->outer);
	gj_cuda_device_columns(&state->inner, state->input.inner.ncols, &s->inner);
	s->outer_perm = state->d_outer_perm;
	s->inner_perm = state->d_inner_perm;
	s->first = state->d_first;
	s->cand_off = state->d_cand;
	s->o_begin = o_begin;
	s->nrows = rows;
	s->count = (unsigned long long *) state->d_count;
}

/*
 * The verdict bitmaps of a filtered step of rows step rows
 * (GjcSortedArgs.match_bits): a bit for each candidate the step may
 * evaluate, which is at most every inner row of the tile for each row, and
 * at most SORTED_VERDICT_PAIRS and one more row (the work cut lets the
 * last row of a step run past its limit): 2 x 32 MB at most, and the
 * inner tile's bits.  false where the device has no memory for them: the
 * step then runs without, its write pass evaluating the program again.
 */
static int64_t verdict_pairs = SORTED_VERDICT_PAIRS;

/*
 * For test/kernels (kernel_test compiled-sorted) only: cut the steps that
 * keep their verdicts at n candidates instead (n <= 0: SORTED_VERDICT_PAIRS),
 * so that sides of a few thousand rows meet the cut.
 */
extern "C" void
gj_cuda_test_set_verdict_pairs(int64_t n)
{
	verdict_pairs = n > 0 ? n : SORTED_VERDICT_PAIRS;
}

/* Candidates a step that keeps its verdicts is cut at. */
int64_t
gj_cuda_verdict_pairs(void)
{
	return verdict_pairs;
}

static bool
ensure_verdict_bits(CudaJoinState *state, const GjTile *tile, int64_t rows)
{
	int64_t		ninner = tile->inner_end - tile->inner_begin;
	int64_t		candidates = ninner > 0 && rows > verdict_pairs / ninner ?
		verdict_pairs + ninner : rows * ninner + ninner;

	return gj_cuda_ensure_verdict_words(state, candidates / 32 + 2);
}

/*
 * d_match_bits and d_recheck_bits of at least words words each (they
 * never shrink); false where the device has no memory for them.
 */
bool
gj_cuda_ensure_verdict_words(CudaJoinState *state, int64_t words)
{
	if (state->verdict_words >= words)
		return true;
	gj_device_free(state, state->d_match_bits);
	gj_device_free(state, state->d_recheck_bits);
	state->d_match_bits = state->d_recheck_bits = NULL;
	state->verdict_words = 0;
	if (gj_device_alloc(state, (void **) &state->d_match_bits, sizeof(uint32_t) * words) != cudaSuccess ||
		gj_device_alloc(state, (void **) &state->d_recheck_bits, sizeof(uint32_t) * words) != cudaSuccess)
	{
		(void) cudaGetLastError();
		gj_device_free(state, state->d_match_bits);
		state->d_match_bits = NULL;
		return false;
	}
	state->verdict_words = words;
	return true;
}

/*
 * The compiled count pass of a filtered step where there is one, as
 * gj_cuda_program_kernels decides.  Whether to compile is decided on the
 * candidates of the steps run so far, projected over the join's cross
 * product: before the first step's count only a kernel compiled already is
 * taken (and gpujoin.compile_programs = always compiles).
 */
static const void *
sorted_compiled_kernel(CudaJoinState *state, GjStats *stats)
{
	double		pairs = 0;

	/*
	 * the candidates' share of the pairs the steps covered, over the whole
	 * cross product: an outer row meets each inner tile
	 */
	if (state->sorted_cross > 0)
		pairs = state->sorted_candidates / state->sorted_cross *
			(double) state->input.outer_nrows * (double) state->input.inner_nrows;
	return gj_cuda_program_kernels(state, GJ_COMPILED_SORTED, stats, pairs)->kernel;
}

/*
 * The count pass of a filtered step (a->s describes its rows): cut the
 * rows at the work limit, clear and fill the per-row match counts, keep
 * the verdicts where the device has room for them, scan the counts.  The
 * program runs compiled where it can, which needs the verdicts (the write
 * pass cannot call a compiled program).
 */
static bool
count_filtered(CudaJoinState *state, const GjTile *tile, PairArgs *a, GjStats *stats,
			   GjError *err)
{
	const void *compiled = sorted_compiled_kernel(state, stats);
	bool		verdicts = ensure_verdict_bits(state, tile, a->s.nrows);
	unsigned	blocks = (unsigned) state->sm_count * SORTED_BLOCKS_PER_SM;

	work_cut_kernel<<<1, 1, 0, state->stream>>>(state->d_cand, a->s.nrows,
												 (uint64_t) (verdicts ? verdict_pairs :
															 SORTED_PAIRS_PER_STEP),
												 state->d_cut);
	CUDA_LAUNCHED("the work cut kernel");
	CUDA_TRY(cudaMemsetAsync(state->d_count, 0, sizeof(uint64_t) * (a->s.nrows + 1),
							 state->stream),
			 "could not clear device scratch memory");
	a->s.npairs_at = state->d_cut + 1;
	if (verdicts)
	{
		a->s.match_bits = state->d_match_bits;
		a->s.recheck_bits = state->d_recheck_bits;
	}
	if (compiled != NULL && verdicts)
	{
		void	   *params[1] = {&a->s};

		CUDA_TRY(cudaLaunchKernel(compiled, dim3(blocks), dim3(GJC_BLOCK), params, 0,
								  state->stream),
				 "could not launch the compiled pair count kernel");
		stats->program_steps_compiled++;
		stats->program_steps_quick += state->sorted_kernels.quick;
	}
	else
	{
		count_pairs_kernel<<<blocks, SORTED_BLOCK, 0, state->stream>>>(*a);
		CUDA_LAUNCHED("the pair count kernel");
		stats->program_steps_interpreted++;
		stats->interpreted_why = compiled != NULL ? GJ_INTERPRETED_NO_MEMORY :
			state->sorted_kernels.why;
	}
	return scan_counts(state, state->d_count, a->s.nrows + 1, err);
}

/*
 * For an aggregate step of a filtered sort-merge or hash join (cuda_agg.cu):
 * the compiled count kernel, where the program has one and the device room
 * for the verdicts of a step of rows step rows, else NULL with *why set
 * (the fold then evaluates the program itself).  A step that takes it cuts
 * its candidates at gj_cuda_verdict_pairs() and runs gj_cuda_sorted_verdicts
 * before folding.
 */
const void *
gj_cuda_sorted_verdict_kernel(CudaJoinState *state, const GjTile *tile, int64_t rows,
							  GjStats *stats, int *why)
{
	const void *kernel = sorted_compiled_kernel(state, stats);

	*why = state->sorted_kernels.why;
	if (kernel != NULL && !ensure_verdict_bits(state, tile, rows))
	{
		*why = GJ_INTERPRETED_NO_MEMORY;
		return NULL;
	}
	return kernel;
}

/*
 * The compiled count pass over the candidates gj_cuda_sorted_candidates
 * found for rows step rows from o_begin: their verdicts into d_match_bits
 * and d_recheck_bits (a bit a candidate, in the order cand_off numbers
 * them), each row's matches into d_count.  Queued on the stream.
 */
bool
gj_cuda_sorted_verdicts(CudaJoinState *state, const void *kernel, int64_t o_begin,
						int64_t rows, GjError *err)
{
	GjcSortedArgs s;
	void	   *params[1] = {&s};

	sorted_args(state, o_begin, rows, &s);
	s.npairs_at = state->d_cut + 1;
	s.match_bits = state->d_match_bits;
	s.recheck_bits = state->d_recheck_bits;
	CUDA_TRY(cudaMemsetAsync(state->d_count, 0, sizeof(uint64_t) * (rows + 1), state->stream),
			 "could not clear device scratch memory");
	CUDA_TRY(cudaLaunchKernel(kernel, dim3((unsigned) state->sm_count * SORTED_BLOCKS_PER_SM),
							  dim3(GJC_BLOCK), params, 0, state->stream),
			 "could not launch the compiled pair count kernel");
	return true;
}

/*
 * One step of a sorted tile, count then write:
 *
 *	1. per step row, its candidates: a binary search of its bounds in the
 *	   tile's sorted inner keys (every inner row of the tile for GJ_OUTER_ALL);
 *	2. a scan of the candidates;
 *	3. filtered (the device program must decide, or the step has GJ_OUTER_ALL
 *	   rows): cut the rows at the work limit, evaluate every candidate pair,
 *	   count matches per row, scan; unfiltered, every candidate is a match;
 *	4. cut the rows at the match capacity (at a row boundary, exact), and
 *	   write the pairs of that prefix.
 *
 * A step never mixes GJ_OUTER_ALL rows with bounded ones, so "filtered" is a
 * property of the step.
 */
bool
gj_cuda_sorted_step(CudaJoinState *state, const GjTile *tile, int64_t *outer_next,
					GjMatches *matches, GjStats *stats, GjError *err)
{
	int64_t		o_begin = *outer_next;
	int64_t		rows = gj_min64(state->step_cap, tile->outer_end - o_begin);
	bool		filter = state->input.filter_needed || o_begin < state->outer_all;
	PairArgs	a;
	int64_t		k,
				total,
				pairs;

	/* empty rows come last and have no candidates: the tile is done */
	if (gj_cuda_outer_status(state, o_begin) == GJ_OUTER_EMPTY)
	{
		*outer_next = tile->outer_end;
		return true;
	}
	if (o_begin < state->outer_all)
		rows = gj_min64(rows, state->outer_all - o_begin);

	CUDA_TRY(cudaEventRecord(state->events[EV_START], state->stream),
			 "could not record a CUDA event");
	CUDA_TRY(cudaEventRecord(state->events[EV_UPLOADED], state->stream),
			 "could not record a CUDA event");
	if (!gj_cuda_launch_bounds(state, tile, o_begin, rows, err))
		return false;
	if (!scan_counts(state, state->d_cand, rows + 1, err))
		return false;

	memset(&a, 0, sizeof(a));
	a.program = state->program;
	sorted_args(state, o_begin, rows, &a.s);
	a.filter = filter;
	a.out_outer = state->d_out_outer;
	a.out_inner = state->d_out_inner;
	if (filter && !count_filtered(state, tile, &a, stats, err))
		return false;
	sorted_cut_kernel<<<1, 1, 0, state->stream>>>(state->d_cand,
												  filter ? state->d_count : NULL, rows,
												  (uint64_t) state->d_capacity, state->d_cut);
	CUDA_LAUNCHED("the cut kernel");
	CUDA_TRY(cudaMemcpyAsync(state->h_cut, state->d_cut, sizeof(uint64_t) * CUT_ENTRIES,
							 cudaMemcpyDeviceToHost, state->stream),
			 "could not copy the match count from the device");
	CUDA_TRY(cudaEventRecord(state->events[EV_COUNTED], state->stream),
			 "could not record a CUDA event");
	CUDA_TRY(cudaStreamSynchronize(state->stream), "count kernel failed");
	k = (int64_t) state->h_cut[2];
	total = (int64_t) state->h_cut[3];
	pairs = (int64_t) state->h_cut[4];
	stats->bytes_from_device += sizeof(uint64_t) * CUT_ENTRIES;
	stats->kernel_ms += gj_cuda_event_ms(state, EV_UPLOADED, EV_COUNTED);
	if (filter)
	{
		/* what the steps so far say the join's candidates are */
		state->sorted_candidates += (double) pairs;
		state->sorted_cross += (double) k * (double) (tile->inner_end - tile->inner_begin);
	}
	if (k < 1 || total > state->d_capacity || total > pairs)
	{
		/* cannot happen: one row has at most inner_rows <= d_capacity matches */
		err->code = GJ_ERR_DEVICE;
		snprintf(err->message, sizeof(err->message),
				 "count kernel returned an invalid prefix (%lld rows, %lld matches, %lld pairs)",
				 (long long) k, (long long) total, (long long) pairs);
		return false;
	}

	if (total > 0)
	{
		if (!gj_cuda_ensure_host_matches(state, total, err))
			return false;
		a.npairs = (uint64_t) pairs;
		CUDA_TRY(cudaEventRecord(state->events[EV_WRITE], state->stream),
				 "could not record a CUDA event");
		if (filter)
		{
			if (!write_filtered_pairs(state, &a, total, err))
				return false;
		}
		else
		{
			write_pairs_kernel<<<gj_cuda_grid_for(pairs, SORTED_BLOCK), SORTED_BLOCK, 0,
				state->stream>>>(a);
			CUDA_LAUNCHED("the pair write kernel");
		}
		if (!gj_cuda_download_matches(state, total, stats, err))
			return false;
		if (filter && (int64_t) state->h_cut[5] != total)
		{
			/* cannot happen: the count and write passes evaluate the same pairs */
			err->code = GJ_ERR_DEVICE;
			snprintf(err->message, sizeof(err->message),
					 "the write pass selected %lld matches where the count pass found %lld",
					 (long long) state->h_cut[5], (long long) total);
			return false;
		}
	}

	stats->pairs_evaluated += pairs;
	stats->device_matches += total;
	matches->outer_rows = state->h_out_outer;
	matches->inner_rows = state->h_out_inner;
	matches->count = total;
	*outer_next = o_begin + k;
	/* most likely cut short by the buffer: a larger one for the next step */
	if (k < rows && total > state->d_capacity / 2)
		return gj_cuda_ensure_device_matches(state, tile->inner_end - tile->inner_begin,
											 2 * state->d_capacity, err);
	return true;
}

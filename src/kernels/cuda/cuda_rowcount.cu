/*-------------------------------------------------------------------------
 *
 * cuda_rowcount.cu
 *	  Per outer row, the number of inner rows of a nested-loop tile that a
 *	  conjunction of simple compares admits ("r.a < s.a AND r.b > s.b"),
 *	  on the device: all an aggregate over the join needs when it reads
 *	  only outer columns.  No pair is written anywhere.
 *
 * Each compare becomes a test of one inner key against one threshold of
 * the outer row, exactly as the cpu backend's cpu_rowcount.c does it
 * (../shared/gj_conjunction.h): "Y > T" (direct) where every compare is
 * one of < <= > >=, an interval test (cyclic) otherwise, on int32 keys
 * where every inner key of the tile lies strictly inside int32.  A first
 * small kernel finds out which (rc_flags_kernel: any wide inner key, any
 * outer row that >= makes cyclic), the host reads the two flags and
 * launches the kernel for that case:
 *
 *	rc_count_kernel<N, T, DIRECT>: a 2-D grid, blockIdx.x over blocks of
 *	outer rows, blockIdx.y over slices of the inner tile (as the nested
 *	loop's compare_kernel).  Each thread holds the thresholds of several
 *	outer rows in registers; the block stages the slice's inner keys chunk
 *	by chunk in shared memory (every thread reads the same key: a
 *	broadcast), and the inner loop is compare, compare, add.  Each row's
 *	count of a slice is added atomically into the per-row array, or, when
 *	only the total is wanted, reduced in the block and added once.
 *
 * Inner rows with a NULL key get the key no direct test admits (the
 * smallest) or, for the cyclic tests, a flag; outer rows with one count
 * nothing.
 *
 *-------------------------------------------------------------------------
 */
#include "cuda_internal.cuh"
#include "kernels/shared/gj_conjunction.h"

/*
 * Tuning constants.  RC_BLOCK threads a block; RC_CHUNK inner rows staged
 * at a time (8 kB of int32 key pairs, 32 kB of four int64 keys), always a
 * whole chunk, the rows past the slice's end padded: with a trip count it
 * knows, nvcc pipelines the shared-memory loads of the inner loop (8.02
 * instead of 7.50 10^12 pairs/s on an H100, see RcShape).  A launch splits
 * the inner tile into RC_MIN_ROUNDS to RC_MAX_ROUNDS rounds of resident
 * blocks (rc_slices).
 */
#define RC_BLOCK		256
#define RC_CHUNK		1024
#define RC_MIN_ROUNDS	16
#define RC_MAX_ROUNDS	32

/* rc_flags_kernel's answer */
#define RC_FLAG_WIDE	0		/* an inner key outside (INT32_MIN, INT32_MAX) */
#define RC_FLAG_EDGE	1		/* an outer row whose >= needs the cyclic test */

typedef struct RcColumn
{
	const int64_t *values;
	const uint8_t *isnull;		/* NULL when the column has no NULLs */
} RcColumn;

/* Arguments of the kernels. */
typedef struct RcArgs
{
	RcColumn	outer[GJ_MAX_CONJUNCTS];	/* from the first outer row counted */
	RcColumn	inner[GJ_MAX_CONJUNCTS];	/* from the tile's first inner row */
	int			kind[GJ_MAX_CONJUNCTS]; /* GJ_CONJ_GT .. GJ_CONJ_NE */
	int			cls[GJ_MAX_CONJUNCTS];
	int			complement[GJ_MAX_CONJUNCTS];
	int			n;
	int64_t		nrows;			/* outer rows */
	int64_t		ninner;
	int64_t		slice_len;		/* a multiple of RC_CHUNK */
	unsigned long long *counts; /* per outer row, zeroed; NULL: total only */
	unsigned long long *total;	/* zeroed */
	int		   *flags;			/* RC_FLAG_*, zeroed */
} RcArgs;

/*
 * Outer rows per thread: as many as keep the thresholds in about 24 to 32
 * registers (an int64, or a cyclic test's base and width, takes two).  For
 * two int32 compares 12 rows (4 blocks of 256 threads resident per SM)
 * ran best on an H100, ahead of 8 and 16 ("r.a < s.a AND r.b > s.b" on 1M
 * x 1M int4 rows, in a stripped-down kernel: 8.07, 8.02 and 7.4 10^12
 * pairs/s).
 */
template <typename T, int N, bool DIRECT>
struct RcShape
{
	static constexpr int words = (int) (sizeof(T) / 4) * N * (DIRECT ? 1 : 2);
	static constexpr int rows = words <= 2 ? 12 : words <= 4 ? 8 : words <= 8 ? 4 : 2;
};

/* The keys of one inner row in shared memory (three padded to four). */
template <typename T, int N>
struct __align__(sizeof(T) * (N == 3 ? 4 : N)) RcKeys
{
	T			k[N == 3 ? 4 : N];
};

/* ---------------------------------------------------------------------
 * Kernels
 * ---------------------------------------------------------------------
 */

/* Compare k's key of a row of one side; false if it is NULL. */
__device__ __forceinline__ bool
rc_key(const RcArgs &a, const RcColumn &col, int k, int64_t row, int64_t *key)
{
	if (col.isnull != NULL && col.isnull[row])
		return false;
	*key = gj_conj_key(col.values[row], a.cls[k], a.complement[k] != 0);
	return true;
}

/*
 * Which kernel the counting needs: does a row of the inner tile without a
 * NULL key have a key outside (INT32_MIN, INT32_MAX), does an outer row
 * have a >= whose key is the smallest?  A grid-stride loop over both sides.
 */
__global__ void
rc_flags_kernel(const __grid_constant__ RcArgs a)
{
	int64_t		end = gj_max64(a.ninner, a.nrows);
	bool		wide = false,
				edge = false;

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < end;
		 i += (int64_t) gridDim.x * blockDim.x)
	{
		bool		ok = true,
					w = false,
					e = false;

		for (int k = 0; k < a.n; k++)
		{
			int64_t		key = 0;

			if (i < a.ninner)
			{
				ok = rc_key(a, a.inner[k], k, i, &key) && ok;
				w = w || !gj_conj_narrow(key);
			}
			if (i < a.nrows && rc_key(a, a.outer[k], k, i, &key))
				e = e || gj_conj_edge(a.kind[k], key);
		}
		wide = wide || (i < a.ninner && ok && w);
		edge = edge || e;
	}
	if (wide)
		atomicOr(&a.flags[RC_FLAG_WIDE], 1);
	if (edge)
		atomicOr(&a.flags[RC_FLAG_EDGE], 1);
}

/* Outer row j's thresholds (and widths); false when it matches nothing. */
template <typename T, int N, bool DIRECT>
__device__ __forceinline__ bool
rc_thresholds(const RcArgs &a, int64_t j, T *thr, T *wid)
{
	bool		valid = j < a.nrows;

#pragma unroll
	for (int k = 0; k < N; k++)
	{
		int64_t		x = 0;

		valid = valid && rc_key(a, a.outer[k], k, j, &x);
		thr[k] = 0;
		wid[k] = 0;
		if constexpr (DIRECT && sizeof(T) == 4)
			thr[k] = gj_conj_direct32(a.kind[k], x);
		else if constexpr (DIRECT)
			thr[k] = gj_conj_direct64(a.kind[k], x);
		else if constexpr (sizeof(T) == 4)
		{
			int32_t		base,
						width;

			gj_conj_interval32(a.kind[k], x, &base, &width);
			thr[k] = base;
			wid[k] = width;
		}
		else
		{
			int64_t		base = 0,
						width = 0;

			valid = gj_conj_interval64(a.kind[k], x, &base, &width) && valid;
			thr[k] = base;
			wid[k] = width;
		}
	}
	return valid;
}

/*
 * Stage inner rows [ib, ib + n) of the tile, padded to a whole chunk, into
 * shared memory: keys, and for the cyclic tests whether the row counts at
 * all.
 */
template <typename T, int N, bool DIRECT>
__device__ __forceinline__ void
rc_stage(const RcArgs &a, int64_t ib, int n, RcKeys<T, N> *skeys, uint8_t *sok)
{
	for (int t = threadIdx.x; t < RC_CHUNK; t += RC_BLOCK)
	{
		RcKeys<T, N> keys;
		bool		ok = t < n;

#pragma unroll
		for (int k = 0; k < (N == 3 ? 4 : N); k++)
			keys.k[k] = 0;
#pragma unroll
		for (int k = 0; k < N; k++)
		{
			int64_t		y = 0;

			ok = ok && rc_key(a, a.inner[k], k, ib + t, &y);
			keys.k[k] = (T) y;	/* fits: rc_flags_kernel said so */
		}
		if constexpr (DIRECT && sizeof(T) == 4)
			keys.k[0] = ok ? keys.k[0] : INT32_MIN;
		else if constexpr (DIRECT)
			keys.k[0] = ok ? keys.k[0] : INT64_MIN;
		else
			sok[t] = ok;
		skeys[t] = keys;
	}
}

/*
 * count += hit as one predicated add.  Written in C, nvcc adds into a new
 * register and selects (two instructions on the FMA pipe per pair, beside
 * the two compares on the ALU pipe); with the predicated add a stripped-
 * down direct kernel ran 7.97 instead of 7.58 10^12 pairs/s on an H100 (1M
 * x 1M int4 rows, two compares), within 5% of the compares' ALU bound.
 */
__device__ __forceinline__ void
rc_add_if(uint32_t &count, bool hit)
{
	asm("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %1, 0;\n\t@p add.u32 %0, %0, 1;\n\t}"
		: "+r"(count) : "r"((uint32_t) hit));
}

/* Does inner row keys pass every test of one outer row? */
template <typename T, int N, bool DIRECT>
__device__ __forceinline__ bool
rc_holds(const RcKeys<T, N> &keys, const T *thr, const T *wid)
{
	bool		hit = true;

#pragma unroll
	for (int k = 0; k < N; k++)
	{
		if constexpr (DIRECT)
			hit = hit & (keys.k[k] > thr[k]);
		else if constexpr (sizeof(T) == 4)
			hit = hit & gj_conj_in32(keys.k[k], thr[k], wid[k]);
		else
			hit = hit & gj_conj_in64(keys.k[k], thr[k], wid[k]);
	}
	return hit;
}

/*
 * The counts of one block of outer rows against one slice of the inner
 * tile.  Thread t of block (bx, by) owns outer rows bx * rows_per_block +
 * t + r * RC_BLOCK (coalesced loads).
 */
template <int N, typename T, bool DIRECT>
__global__ void __launch_bounds__(RC_BLOCK)
rc_count_kernel(const __grid_constant__ RcArgs a)
{
	constexpr int ROWS = RcShape<T, N, DIRECT>::rows;
	__shared__ RcKeys<T, N> skeys[RC_CHUNK];
	__shared__ uint8_t sok[DIRECT ? 1 : RC_CHUNK];
	__shared__ unsigned long long swarp[RC_BLOCK / 32];
	int64_t		first = (int64_t) blockIdx.x * (RC_BLOCK * ROWS) + threadIdx.x;
	int64_t		slice_begin = (int64_t) blockIdx.y * a.slice_len;
	int64_t		slice_end = gj_min64(slice_begin + a.slice_len, a.ninner);
	T			thr[ROWS][N];
	T			wid[ROWS][N];
	bool		valid[ROWS];
	uint32_t	count[ROWS];
	unsigned long long sum = 0;

#pragma unroll
	for (int r = 0; r < ROWS; r++)
	{
		valid[r] = rc_thresholds<T, N, DIRECT>(a, first + r * RC_BLOCK, thr[r], wid[r]);
		count[r] = 0;
	}

	for (int64_t ib = slice_begin; ib < slice_end; ib += RC_CHUNK)
	{
		__syncthreads();		/* everyone is done with the previous chunk */
		rc_stage<T, N, DIRECT>(a, ib, (int) gj_min64(RC_CHUNK, slice_end - ib), skeys, sok);
		__syncthreads();

#pragma unroll 4
		for (int t = 0; t < RC_CHUNK; t++)
		{
			RcKeys<T, N> keys = skeys[t];
			bool		ok = DIRECT || sok[t];

#pragma unroll
			for (int r = 0; r < ROWS; r++)
				rc_add_if(count[r], ok & rc_holds<T, N, DIRECT>(keys, thr[r], wid[r]));
		}
	}

#pragma unroll
	for (int r = 0; r < ROWS; r++)
	{
		if (!valid[r])
			continue;
		if (a.counts != NULL && count[r] != 0)
			atomicAdd(&a.counts[first + r * RC_BLOCK], (unsigned long long) count[r]);
		sum += count[r];
	}
	if (a.counts != NULL)
		return;
	/* the total only: one atomic a block */
	for (int off = 16; off > 0; off /= 2)
		sum += __shfl_down_sync(0xffffffffu, sum, off);
	if (threadIdx.x % 32 == 0)
		swarp[threadIdx.x / 32] = sum;
	__syncthreads();
	if (threadIdx.x == 0)
	{
		for (int w = 1; w < RC_BLOCK / 32; w++)
			sum += swarp[w];
		if (sum != 0)
			atomicAdd(a.total, sum);
	}
}

/* ---------------------------------------------------------------------
 * Launching
 * ---------------------------------------------------------------------
 */

/*
 * Into how many slices of whole chunks to split the inner tile: of the
 * counts that make the grid (oblocks times the slices) RC_MIN_ROUNDS to
 * RC_MAX_ROUNDS rounds of resident blocks, the one whose last round is
 * fullest (the fewest slices unless more fill 2% better).  On an H100, 1M
 * x 1M int4 rows: 8 slices (4.9 rounds) 7.90, 34 slices (21 rounds) 8.02
 * 10^12 pairs/s; 4.3 rounds had cost 3%.
 */
static int64_t
rc_slices(int64_t oblocks, int64_t ninner, int64_t resident)
{
	int64_t		chunks = gj_ceil_div(ninner, RC_CHUNK);
	int64_t		most = gj_min64(gj_min64(chunks, 65535),
								gj_max64(gj_ceil_div(RC_MAX_ROUNDS * resident, oblocks), 1));
	int64_t		least = gj_min64(most, gj_max64(gj_ceil_div(RC_MIN_ROUNDS * resident, oblocks), 1));
	int64_t		best = least;
	double		best_fill = -1;

	for (int64_t s = least; s <= most; s++)
	{
		int64_t		slice_chunks = gj_ceil_div(chunks, s);
		double		rounds = (double) (oblocks * gj_ceil_div(chunks, slice_chunks)) / resident;
		double		fill = rounds < 1 ? rounds : rounds / ceil(rounds);

		if (fill > best_fill + 0.02)
		{
			best_fill = fill;
			best = s;
		}
	}
	return best;
}

/* Launch the count kernel of one case: outer blocks by inner slices. */
template <int N, typename T, bool DIRECT>
static bool
rc_launch(CudaJoinState *state, RcArgs *a, GjError *err)
{
	constexpr int rows_per_block = RC_BLOCK * RcShape<T, N, DIRECT>::rows;
	int64_t		oblocks = gj_ceil_div(a->nrows, rows_per_block);
	int64_t		slices;
	int			resident = 1;
	dim3		grid;

	CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident,
														   rc_count_kernel<N, T, DIRECT>,
														   RC_BLOCK, 0),
			 "could not size the row count kernel");
	slices = rc_slices(oblocks, a->ninner,
					   (int64_t) state->sm_count * gj_max64(resident, 1));
	a->slice_len = gj_ceil_div(gj_ceil_div(a->ninner, RC_CHUNK), slices) * RC_CHUNK;
	grid = dim3((unsigned) oblocks, (unsigned) gj_ceil_div(a->ninner, a->slice_len));
	rc_count_kernel<N, T, DIRECT><<<grid, RC_BLOCK, 0, state->stream>>>(*a);
	CUDA_LAUNCHED("the row count kernel");
	return true;
}

template <int N>
static bool
rc_launch_case(CudaJoinState *state, RcArgs *a, bool narrow, bool direct, GjError *err)
{
	if (narrow)
		return direct ? rc_launch<N, int32_t, true>(state, a, err) :
			rc_launch<N, int32_t, false>(state, a, err);
	return direct ? rc_launch<N, int64_t, true>(state, a, err) :
		rc_launch<N, int64_t, false>(state, a, err);
}

/*
 * The kernels' arguments for conjunction conj over outer rows [o_begin,
 * o_begin + rows) of the resident tiles; false with *err set when the
 * conjunction reads a column the program does not load (so not resident).
 */
static bool
rc_args(CudaJoinState *state, const GjCompareConjunction *conj, int64_t o_begin,
		int64_t rows, int64_t ninner, RcArgs *a, GjError *err)
{
	int64_t		o_off = o_begin - state->outer.begin;

	memset(a, 0, sizeof(RcArgs));
	a->n = conj->n;
	a->nrows = rows;
	a->ninner = ninner;
	for (int k = 0; k < conj->n; k++)
	{
		const GjSimpleCompare *sc = &conj->cmp[k];

		if (sc->outer_col < 0 || sc->outer_col >= GJ_MAX_KEY_COLS ||
			sc->inner_col < 0 || sc->inner_col >= GJ_MAX_KEY_COLS ||
			state->outer.values[sc->outer_col] == NULL ||
			state->inner.values[sc->inner_col] == NULL)
		{
			err->code = GJ_ERR_DEVICE;
			snprintf(err->message, sizeof(err->message),
					 "row count: compare %d reads a column that is not on the device", k);
			return false;
		}
		a->outer[k].values = state->outer.values[sc->outer_col] + o_off;
		a->outer[k].isnull = state->outer.isnull[sc->outer_col] != NULL ?
			state->outer.isnull[sc->outer_col] + o_off : NULL;
		a->inner[k].values = state->inner.values[sc->inner_col];
		a->inner[k].isnull = state->inner.isnull[sc->inner_col];
		a->kind[k] = gj_conj_kind(sc->op);
		a->cls[k] = sc->cls;
		a->complement[k] = gj_conj_complement(sc->op);
	}
	return true;
}

/*
 * Run the flags kernel and read its answer: wide inner keys, edge outer
 * rows.  Synchronises the stream.
 */
static bool
rc_flags(CudaJoinState *state, const RcArgs *a, bool *wide, bool *edge, GjError *err)
{
	int64_t		n = gj_max64(a->ninner, a->nrows);
	int			flags[2];

	rc_flags_kernel<<<(unsigned) gj_min64(gj_ceil_div(n, RC_BLOCK),
										  (int64_t) state->sm_count * 8),
		RC_BLOCK, 0, state->stream>>>(*a);
	CUDA_LAUNCHED("the row count flags kernel");
	CUDA_TRY(cudaMemcpyAsync(state->h_prefix, a->flags, 2 * sizeof(int),
							 cudaMemcpyDeviceToHost, state->stream),
			 "could not copy the row count flags from the device");
	CUDA_TRY(cudaStreamSynchronize(state->stream), "row count flags kernel failed");
	memcpy(flags, state->h_prefix, sizeof(flags));
	*wide = flags[RC_FLAG_WIDE] != 0;
	*edge = flags[RC_FLAG_EDGE] != 0;
	return true;
}

/*
 * Per-row counts of a conjunction over a nested-loop tile on the device:
 * rows outer rows from o_begin against the whole inner tile.  h_counts
 * (host memory, rows entries) receives each row's count, or is NULL;
 * *total receives the sum.  Uploads the tile's key columns as the
 * nested-loop step does (only those the program loads are resident, and
 * the conjunction must read no other).  Uses the scratch (rows + 2
 * entries) and h_prefix; synchronises the stream.
 */
bool
gj_cuda_rowcount(CudaJoinState *state, const GjCompareConjunction *conj, const GjTile *tile,
				 int64_t o_begin, int64_t rows, uint64_t *h_counts, uint64_t *total,
				 GjStats *stats, GjError *err)
{
	int64_t		ninner = tile->inner_end - tile->inner_begin;
	RcArgs		a;
	bool		wide = true,
				edge = true,
				ok;

	*total = 0;
	if (conj->n < 1 || conj->n > GJ_MAX_CONJUNCTS || o_begin < tile->outer_begin ||
		o_begin + rows > tile->outer_end)
	{
		err->code = GJ_ERR_DEVICE;
		snprintf(err->message, sizeof(err->message),
				 "row count: invalid conjunction or outer rows [%lld, %lld)",
				 (long long) o_begin, (long long) (o_begin + rows));
		return false;
	}
	if (rows <= 0)
		return true;
	if (ninner <= 0)
	{
		if (h_counts != NULL)
			memset(h_counts, 0, sizeof(uint64_t) * rows);
		return true;
	}

	CUDA_TRY(cudaEventRecord(state->events[EV_START], state->stream),
			 "could not record a CUDA event");
	if (!gj_cuda_upload_side(state, &state->outer, &state->input.outer,
							 tile->outer_begin, tile->outer_end, stats, err) ||
		!gj_cuda_upload_side(state, &state->inner, &state->input.inner,
							 tile->inner_begin, tile->inner_end, stats, err) ||
		!rc_args(state, conj, o_begin, rows, ninner, &a, err) ||
		!gj_cuda_ensure_scratch(state, rows + 2, err))
		return false;
	CUDA_TRY(cudaEventRecord(state->events[EV_UPLOADED], state->stream),
			 "could not record a CUDA event");

	/* scratch: the per-row counts, the total, the two flags */
	a.counts = h_counts != NULL ? (unsigned long long *) state->d_scratch : NULL;
	a.total = (unsigned long long *) state->d_scratch + rows;
	a.flags = (int *) (state->d_scratch + rows + 1);
	CUDA_TRY(cudaMemsetAsync(h_counts != NULL ? state->d_scratch : state->d_scratch + rows, 0,
							 sizeof(uint64_t) * (h_counts != NULL ? rows + 2 : 2),
							 state->stream),
			 "could not clear device scratch memory");
	if (!rc_flags(state, &a, &wide, &edge, err))
		return false;

	/* direct where every compare is < <= > >= (and, on int64, no edge) */
	ok = true;
	for (int k = 0; k < conj->n; k++)
		ok = ok && (a.kind[k] == GJ_CONJ_GT || a.kind[k] == GJ_CONJ_GE);
	ok = ok && (!wide || !edge);
	switch (conj->n)
	{
		case 1:
			ok = rc_launch_case<1>(state, &a, !wide, ok, err);
			break;
		case 2:
			ok = rc_launch_case<2>(state, &a, !wide, ok, err);
			break;
		case 3:
			ok = rc_launch_case<3>(state, &a, !wide, ok, err);
			break;
		default:
			ok = rc_launch_case<4>(state, &a, !wide, ok, err);
			break;
	}
	if (!ok)
		return false;
	CUDA_TRY(cudaEventRecord(state->events[EV_COUNTED], state->stream),
			 "could not record a CUDA event");
	CUDA_TRY(cudaMemcpyAsync(h_counts != NULL ? (void *) h_counts : (void *) state->h_prefix,
							 h_counts != NULL ? (void *) a.counts : (void *) a.total,
							 sizeof(uint64_t) * (h_counts != NULL ? rows : 1),
							 cudaMemcpyDeviceToHost, state->stream),
			 "could not copy row counts from the device");
	CUDA_TRY(cudaEventRecord(state->events[EV_DONE], state->stream),
			 "could not record a CUDA event");
	CUDA_TRY(cudaStreamSynchronize(state->stream), "row count kernel failed");

	if (h_counts != NULL)
	{
		for (int64_t k = 0; k < rows; k++)
			*total += h_counts[k];
	}
	else
		*total = (uint64_t) state->h_prefix[0];
	stats->pairs_evaluated += rows * ninner;
	stats->bytes_from_device += sizeof(uint64_t) * (h_counts != NULL ? rows : 1) + 2 * sizeof(int);
	stats->transfer_ms += gj_cuda_event_ms(state, EV_START, EV_UPLOADED) +
		gj_cuda_event_ms(state, EV_COUNTED, EV_DONE);
	stats->kernel_ms += gj_cuda_event_ms(state, EV_UPLOADED, EV_COUNTED);
	return true;
}

/*
 * For test/kernels/kt_rowcount.c only, not part of the backend contract:
 * gj_cuda_rowcount on the state of the cuda backend's begin_join.
 */
extern "C" bool
gj_cuda_test_rowcount(void *state, const GjCompareConjunction *conj, const GjTile *tile,
					  int64_t o_begin, int64_t rows, uint64_t *h_counts, uint64_t *total,
					  GjStats *stats, GjError *err)
{
	return gj_cuda_rowcount((CudaJoinState *) state, conj, tile, o_begin, rows, h_counts,
							total, stats, err);
}

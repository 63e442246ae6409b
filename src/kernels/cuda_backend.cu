/*-------------------------------------------------------------------------
 *
 * cuda_backend.cu
 *	  The cuda backend: the nested-loop, sort-merge/range and hash tile
 *	  algorithms of GpuJoin on an NVIDIA GPU, implementing the contract of
 *	  backend.h.
 *
 * A nested-loop step counts, then writes (Bellas & Gounaris, section 5.2):
 *
 *	1. the count kernel counts the matches of every candidate outer row
 *	   against the whole inner tile;
 *	2. an exclusive prefix sum (CUB) turns the counts into output offsets;
 *	3. a one-thread kernel finds the longest prefix of candidate rows whose
 *	   matches fit the match buffer, so a step is exact, never conservative;
 *	4. the write kernel evaluates that prefix again and stores each pair at
 *	   its offset, and the pairs are copied back into pinned host memory.
 *
 * Both kernels run a 2-D grid: blockIdx.x walks the outer rows of the step,
 * blockIdx.y walks slices of the inner tile, so that a step of a few
 * thousand outer rows against a huge inner tile still fills the device.
 * Counts are kept per (outer row, inner slice), row-major, so the offsets of
 * one outer row are contiguous and the prefix can be cut at row boundaries.
 * Inner rows go through shared memory in chunks; the "outer column OP inner
 * column" shape has a specialised kernel comparing int64 order keys with
 * several outer rows per thread in registers, everything else runs
 * gj_program_eval per pair, exactly the interpreter the cpu backend runs.
 *
 * The key columns of the current outer and inner tile stay resident on the
 * device and are uploaded again only when the tile's range changes.  Rows
 * in the match buffer are row numbers of the whole side, as on the cpu
 * backend.
 *
 * Sort-merge/range and hash joins (He et al., SIGMOD'08, section 4.1: a
 * sorted array as the index) put both sides in exactly the order the cpu
 * backend uses, on the device: begin_join computes each inner row's key
 * (the order key of the range column, or the cpu backend's hash of the
 * equi-join keys) and each outer row's bounds, partitions and radix-sorts
 * them with CUB, and keeps the sorted arrays and the whole sides' key
 * columns resident for all tiles (a join whose sides do not fit the
 * device memory budget so is refused with out-of-memory, and the executor
 * runs it on the cpu backend); host copies of the sorted keys and
 * bounds serve tile pruning.  A step binary-searches each outer row's
 * bounds in the tile's inner keys, scans the candidate counts, evaluates
 * candidate pairs one per thread (so hot keys and wide ranges spread over
 * the device) when the device program must decide, cuts at the match
 * capacity on an outer-row boundary and writes the pairs; see
 * sorted_run_step().
 *
 * No PostgreSQL headers here (see backend.h), and nothing may throw across
 * the extern "C" boundary: memory comes from calloc and the CUDA runtime,
 * errors travel back in GjError.  A backend process is single-threaded, so
 * the probe's cache needs no locking.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>
/* no NVTX ranges (and no NVTX injection library) in a database server */
#define CCCL_DISABLE_NVTX
#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "backend.h"
#include "agg_runs.h"

/*
 * Tuning constants.
 *
 * Simple-compare kernel: CMP_BLOCK threads each hold CMP_ROWS outer keys in
 * registers, so every inner key read from shared memory (a broadcast, all
 * threads of a warp read the same word) is compared CMP_ROWS times.  An
 * inner chunk of CMP_CHUNK rows takes 8 KB of keys plus 1 KB of null flags,
 * small enough for several blocks per SM.
 */
#define CMP_BLOCK			256
#define CMP_ROWS			8
#define CMP_CHUNK			1024

/*
 * Interpreter kernel: one outer row per thread (the interpreter, not memory,
 * is the bottleneck); a chunk of GEN_CHUNK inner rows of up to
 * GJ_MAX_KEY_COLS columns takes 9 KB of shared memory.
 */
#define GEN_BLOCK			128
#define GEN_CHUNK			128

/*
 * Work per step, in pairs, so that the executor checks for interrupts often
 * enough: the compare kernel does well over 10^11 pairs/s on a current
 * device, the interpreter a few 10^10.  Both bounds keep a step far below a
 * second.  MAX_STEP_ROWS bounds the per-row scratch when the inner tile is
 * tiny.
 */
#define CMP_PAIRS_PER_STEP	((int64_t) 1 << 34)
#define GEN_PAIRS_PER_STEP	((int64_t) 1 << 30)
#define MAX_STEP_ROWS		((int64_t) 1 << 24)

/* Blocks per SM a step aims for before it splits the inner tile. */
#define TARGET_BLOCKS_PER_SM	8

/*
 * Scratch entries (one uint64 per outer row and inner slice).  The tile
 * planner reserves 8 bytes per outer row of a tile; splitting the inner tile
 * may use up to SCRATCH_MIN_ENTRIES (8 MB) even for small tiles, never more
 * than SCRATCH_MAX_ENTRIES.
 */
#define SCRATCH_MIN_ENTRIES ((int64_t) 1 << 20)
#define SCRATCH_MAX_ENTRIES ((int64_t) 1 << 26)

/*
 * The match buffers grow on demand up to the match capacity: the default
 * budget (half the free memory of an H100) gives a capacity of over a
 * billion pairs, and allocating 10 GB of device memory, or pinning 8 GB of
 * host memory, for a join that returns a few rows would be a waste of
 * milliseconds and memory.  The device buffer starts at DEVICE_MATCH_MIN_PAIRS
 * (32 MB) or the inner tile, whichever is more; a step cut short by it
 * doubles it for the next step.
 */
#define HOST_MATCH_MIN_PAIRS	((int64_t) 1 << 16)
#define DEVICE_MATCH_MIN_PAIRS	((int64_t) 1 << 22)

/*
 * Sort-merge and hash steps.  SORTED_ROWS_PER_STEP outer rows at most (their
 * bounds, counts and offsets are the per-row scratch), as the cpu backend's
 * CPU_OUTER_ROWS_PER_STEP; a filtered step evaluates about
 * SORTED_PAIRS_PER_STEP candidate pairs through the interpreter (the same
 * bound as the nested loop's interpreter, well under a second).  The pair
 * kernels run SORTED_BLOCK threads a block; the count pass is a grid-stride
 * loop over SORTED_BLOCKS_PER_SM blocks per SM.
 */
#define SORTED_ROWS_PER_STEP	((int64_t) 1 << 20)
#define SORTED_PAIRS_PER_STEP	GEN_PAIRS_PER_STEP
#define SORTED_BLOCK			256
#define SORTED_BLOCKS_PER_SM	8

/*
 * Aggregate steps (cuda_agg_step): the host reduces the runs the device
 * found, and walks a run only for float sums and min/max of inner
 * arguments; a step stops after about this many positions walked, as the
 * cpu backend's CPU_PAIRS_PER_STEP, so cancel is honoured between steps.
 */
#define AGG_HOST_WORK_PER_STEP	((int64_t) 1 << 24)

/* Entries of a sorted step's cut (see sorted_cut_kernel). */
#define CUT_ENTRIES			6

/* Events of one step, recorded in this order on the stream. */
enum
{
	EV_START,					/* before the uploads */
	EV_UPLOADED,				/* before the count pass */
	EV_COUNTED,					/* after the prefix is known */
	EV_WRITE,					/* before the write pass */
	EV_WRITTEN,					/* before the download */
	EV_DONE,					/* after the download */
	NUM_EVENTS
};

static __host__ __device__ inline int64_t
min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static __host__ __device__ inline int64_t
max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static __host__ __device__ inline int64_t
ceil_div(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

/* The key columns of one side's resident tile on the device. */
typedef struct DeviceSide
{
	int64_t		begin;			/* resident rows [begin, end); -1: none */
	int64_t		end;
	int64_t		capacity;		/* rows allocated per column */
	bool		used[GJ_MAX_KEY_COLS];	/* columns the program loads */
	int64_t    *values[GJ_MAX_KEY_COLS];
	uint8_t    *isnull[GJ_MAX_KEY_COLS];
} DeviceSide;

typedef struct CudaJoinState
{
	GjJoinInput input;			/* host key columns */
	GjProgram	program;
	bool		simple;
	GjSimpleCompare compare;
	int64_t		capacity;		/* pairs a step may return (the contract) */
	int64_t		d_capacity;		/* pairs the device match buffer holds now */
	int			sm_count;
	double		density;		/* matches per pair last counted; 0: unknown */

	cudaStream_t stream;
	bool		have_stream;
	cudaEvent_t events[NUM_EVENTS];
	int			nevents;

	DeviceSide	outer;
	DeviceSide	inner;
	uint32_t   *d_out_outer;
	uint32_t   *d_out_inner;
	uint64_t   *d_scratch;		/* counts, then offsets */
	int64_t		scratch_entries;
	void	   *d_cub_temp;
	size_t		cub_temp_bytes;
	int64_t    *d_prefix;		/* find_prefix_kernel's answer */
	int64_t    *h_prefix;		/* pinned */
	uint32_t   *h_out_outer;	/* pinned */
	uint32_t   *h_out_inner;
	int64_t		h_capacity;

	/*
	 * Step overlap (cuda_double_buffer): the other pinned match buffer, which
	 * holds the previous step's matches while the executor emits them and
	 * this step's download fills the first; run_step swaps the two.
	 */
	bool		double_buffered;
	uint32_t   *h_spare_outer;
	uint32_t   *h_spare_inner;
	int64_t		h_spare_capacity;

	/* sort-merge and hash: both sides in key order, by position */
	int64_t    *d_inner_keys;	/* sorted; rows without a key at the end */
	uint32_t   *d_inner_perm;	/* position -> inner row */
	uint32_t   *d_outer_perm;	/* position -> outer row */
	int64_t    *d_outer_lo;
	int64_t    *d_outer_hi;
	uint8_t    *d_outer_status;
	int64_t		inner_valid;	/* positions [0, inner_valid) have keys */
	int64_t		outer_all;		/* positions [0, outer_all) are OUTER_ALL */
	int64_t    *h_inner_keys;	/* host copies, for tile pruning */
	int64_t    *h_outer_lo;
	int64_t    *h_outer_hi;
	uint8_t    *h_outer_status;
	int64_t		step_cap;		/* rows of the per-row scratch */
	uint32_t   *d_first;		/* per step row: first candidate position */
	uint64_t   *d_cand;			/* per step row: candidates, then offsets */
	uint64_t   *d_count;		/* per step row: matches, then offsets */
	uint64_t   *d_cut;			/* sorted_cut_kernel's answer */
	uint64_t   *h_cut;			/* pinned */
	struct PairArgs *d_pair_args;	/* a filtered step's arguments, for CUB */
	GjAggRuns  *agg_runs;		/* aggregate fast path, at the first agg_step */
	uint32_t   *h_outer_perm;	/* its host copy of d_outer_perm */
	uint32_t   *h_run_first;	/* pinned, per step row: the run's first position */
	uint64_t   *h_run_width;	/* pinned, per step row: the run's width */
	int64_t		agg_rows_hint;	/* rows the last agg step reduced, when the
								 * host's work bound stopped it; else 0 */
	uint64_t   *d_packed;		/* a filtered step's matches, packed (d_capacity) */
	bool		packed_needed;	/* sorted join with filtered steps */
} CudaJoinState;

/* One step's shape: candidate outer rows and the split of the inner tile. */
typedef struct StepPlan
{
	int64_t		nrows;
	int64_t		nslices;
	int64_t		slice_len;		/* a multiple of the kernel's chunk */
} StepPlan;

/* Arguments of the simple-compare kernels. */
typedef struct CompareArgs
{
	const int64_t *ovals;		/* outer key column, from the step's first row */
	const uint8_t *onull;		/* NULL when the column has no NULLs */
	const int64_t *ivals;		/* inner key column, from the tile's first row */
	const uint8_t *inull;
	int64_t		nrows;			/* outer rows of this pass */
	int64_t		ninner;			/* inner rows of the tile */
	int64_t		nslices;
	int64_t		slice_len;
	uint64_t   *scratch;		/* count pass: counts out; write: offsets in */
	uint32_t   *out_outer;
	uint32_t   *out_inner;
	uint32_t	outer_first;	/* row number of ovals[0] */
	uint32_t	inner_first;	/* row number of ivals[0] */
	int			cls;
} CompareArgs;

/* Arguments of the interpreter kernels (well under the 4 KB limit). */
typedef struct ProgramArgs
{
	GjProgram	program;
	GjKeyColumns outer;			/* device columns, from the step's first row */
	GjKeyColumns inner;			/* device columns, from the tile's first row */
	int64_t		nrows;
	int64_t		ninner;
	int64_t		nslices;
	int64_t		slice_len;
	uint64_t   *scratch;
	uint32_t   *out_outer;
	uint32_t   *out_inner;
	uint32_t	outer_first;
	uint32_t	inner_first;
} ProgramArgs;

/* ---------------------------------------------------------------------
 * Kernels
 * ---------------------------------------------------------------------
 */

/* Comparable int64 of a key value, as cpu_order_key() in cpu_backend.c. */
__device__ __forceinline__ int64_t
order_key(int64_t value, int cls)
{
	return cls == GJ_CLASS_FLOAT ? gj_float_order_key(gj_bits_to_double(value)) : value;
}

template <int OP>
__device__ __forceinline__ bool
compare_holds(int64_t x, int64_t y)
{
	if constexpr (OP == GJOP_EQ)
		return x == y;
	else if constexpr (OP == GJOP_NE)
		return x != y;
	else if constexpr (OP == GJOP_LT)
		return x < y;
	else if constexpr (OP == GJOP_LE)
		return x <= y;
	else if constexpr (OP == GJOP_GT)
		return x > y;
	else
		return x >= y;
}

/*
 * "outer.col OP inner.col".  Thread t of block (bx, by) owns outer rows
 * bx * CMP_BLOCK * CMP_ROWS + t + r * CMP_BLOCK (coalesced loads) against
 * inner slice by.  The count pass stores each row's count in its scratch
 * entry; the write pass reads the entry back as the row's output offset.
 * NULL never matches: a NULL outer row is invalid, a NULL inner row fails
 * "ok".
 */
template <int OP, bool INNER_NULLS, bool WRITE>
__global__ void __launch_bounds__(CMP_BLOCK)
compare_kernel(CompareArgs a)
{
	__shared__ int64_t skey[CMP_CHUNK];
	__shared__ uint8_t snull[INNER_NULLS ? CMP_CHUNK : 1];
	int64_t		first = (int64_t) blockIdx.x * (CMP_BLOCK * CMP_ROWS) + threadIdx.x;
	int64_t		slice_begin = (int64_t) blockIdx.y * a.slice_len;
	int64_t		slice_end = min64(slice_begin + a.slice_len, a.ninner);
	int64_t		x[CMP_ROWS];
	bool		valid[CMP_ROWS];
	uint32_t	count[CMP_ROWS];
	uint64_t	pos[CMP_ROWS];

#pragma unroll
	for (int r = 0; r < CMP_ROWS; r++)
	{
		int64_t		j = first + r * CMP_BLOCK;

		valid[r] = j < a.nrows && !(a.onull != NULL && a.onull[j]);
		x[r] = valid[r] ? order_key(a.ovals[j], a.cls) : 0;
		count[r] = 0;
		pos[r] = 0;
		if (WRITE && j < a.nrows)
			pos[r] = a.scratch[j * a.nslices + blockIdx.y];
	}

	for (int64_t ib = slice_begin; ib < slice_end; ib += CMP_CHUNK)
	{
		int			n = (int) min64(CMP_CHUNK, slice_end - ib);

		__syncthreads();		/* everyone is done with the previous chunk */
		for (int t = threadIdx.x; t < n; t += CMP_BLOCK)
		{
			skey[t] = order_key(a.ivals[ib + t], a.cls);
			if (INNER_NULLS)
				snull[t] = a.inull[ib + t];
		}
		__syncthreads();

		for (int t = 0; t < n; t++)
		{
			int64_t		y = skey[t];
			bool		ok = !INNER_NULLS || !snull[t];

#pragma unroll
			for (int r = 0; r < CMP_ROWS; r++)
			{
				bool		hit = ok && compare_holds<OP>(x[r], y);

				if constexpr (WRITE)
				{
					if (hit && valid[r])
					{
						a.out_outer[pos[r]] = a.outer_first + (uint32_t) (first + r * CMP_BLOCK);
						a.out_inner[pos[r]] = a.inner_first + (uint32_t) (ib + t);
						pos[r]++;
					}
				}
				else
					count[r] += hit;
			}
		}
	}

	if constexpr (!WRITE)
	{
#pragma unroll
		for (int r = 0; r < CMP_ROWS; r++)
		{
			int64_t		j = first + r * CMP_BLOCK;

			if (j < a.nrows)
				a.scratch[j * a.nslices + blockIdx.y] = valid[r] ? count[r] : 0;
		}
	}
}

/*
 * Any other program: gj_program_eval per pair.  The program and the outer
 * columns are read from the parameter space (__grid_constant__ lets the
 * interpreter take their address without a per-thread copy); the inner
 * columns the program loads are staged in shared memory and handed to the
 * interpreter as a GjKeyColumns indexed from the chunk's first row.
 */
template <bool WRITE>
__global__ void __launch_bounds__(GEN_BLOCK)
program_kernel(const __grid_constant__ ProgramArgs a)
{
	__shared__ int64_t svalues[GJ_MAX_KEY_COLS][GEN_CHUNK];
	__shared__ uint8_t snull[GJ_MAX_KEY_COLS][GEN_CHUNK];
	int64_t		j = (int64_t) blockIdx.x * GEN_BLOCK + threadIdx.x;
	bool		active = j < a.nrows;
	int64_t		slice_begin = (int64_t) blockIdx.y * a.slice_len;
	int64_t		slice_end = min64(slice_begin + a.slice_len, a.ninner);
	GjKeyColumns chunk;
	uint32_t	count = 0;
	uint64_t	pos = 0;

	chunk.ncols = a.inner.ncols;
	for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
	{
		chunk.values[c] = a.inner.values[c] != NULL ? svalues[c] : NULL;
		chunk.isnull[c] = a.inner.isnull[c] != NULL ? snull[c] : NULL;
	}
	if (WRITE && active)
		pos = a.scratch[j * a.nslices + blockIdx.y];

	for (int64_t ib = slice_begin; ib < slice_end; ib += GEN_CHUNK)
	{
		int			n = (int) min64(GEN_CHUNK, slice_end - ib);

		__syncthreads();
		for (int t = threadIdx.x; t < n; t += GEN_BLOCK)
		{
			for (int c = 0; c < a.inner.ncols; c++)
			{
				if (a.inner.values[c] != NULL)
					svalues[c][t] = a.inner.values[c][ib + t];
				if (a.inner.isnull[c] != NULL)
					snull[c][t] = a.inner.isnull[c][ib + t];
			}
		}
		__syncthreads();

		if (!active)
			continue;
		for (int t = 0; t < n; t++)
		{
			int			r = gj_program_eval(a.program.instrs, a.program.ninstrs,
											&a.outer, j, &chunk, t);

			if constexpr (WRITE)
			{
				if (r != GJ_RESULT_FALSE)
				{
					a.out_outer[pos] = (a.outer_first + (uint32_t) j) |
						(r == GJ_RESULT_RECHECK ? GJ_PAIR_RECHECK : 0);
					a.out_inner[pos] = a.inner_first + (uint32_t) (ib + t);
					pos++;
				}
			}
			else
				count += (r != GJ_RESULT_FALSE);
		}
	}

	if (!WRITE && active)
		a.scratch[j * a.nslices + blockIdx.y] = count;
}

/*
 * After the exclusive scan, offsets[k * nslices] is the number of matches of
 * the first k candidate rows.  Find the largest k whose matches fit the
 * buffer; offsets[0] = 0 always fits.  result: k, its matches, and the
 * matches of all candidate rows (for the density estimate).
 */
__global__ void
find_prefix_kernel(const uint64_t *offsets, int64_t nrows, int64_t nslices,
				   uint64_t capacity, int64_t *result)
{
	int64_t		lo = 0,
				hi = nrows;

	while (lo < hi)
	{
		int64_t		mid = (lo + hi + 1) / 2;

		if (offsets[mid * nslices] <= capacity)
			lo = mid;
		else
			hi = mid - 1;
	}
	result[0] = lo;
	result[1] = (int64_t) offsets[lo * nslices];
	result[2] = (int64_t) offsets[nrows * nslices];
}

/* ---------------------------------------------------------------------
 * Sort-merge and hash kernels
 *
 * Both sides are put in the order cpu_prepare_sorted() in cpu_backend.c
 * puts them in, with the same keys and the same hash function, so that a
 * tile (positions in that order) holds the same rows on both backends and
 * tile pruning agrees.  Inner: rows with a key sorted by it (CUB's radix
 * sort is stable, so equal keys stay in row order), then the rows without
 * one in reverse row order (what DevicePartition leaves at the back, and
 * what the cpu backend does).  Outer: the rows whose bounds need the host
 * (OUTER_ALL) in row order, then the bounded rows by lower bound, then the
 * rows that cannot match.
 * ---------------------------------------------------------------------
 */

/* How an outer row of a sorted join finds its candidates (cpu_backend.c). */
#define OUTER_BOUNDED	0			/* inner positions with key in [lo, hi] */
#define OUTER_EMPTY		1			/* no candidates (NULL key or bound) */
#define OUTER_ALL		2			/* every inner row: bounds need the host */

/* splitmix64's finaliser, exactly cpu_hash64() in cpu_backend.c */
__device__ __forceinline__ uint64_t
hash64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/* Order key of a key column value; false when it is NULL. */
__device__ __forceinline__ bool
column_key(const GjKeyColumns *cols, int col, int cls, int64_t row, int64_t *key)
{
	if (cols->isnull[col] != NULL && cols->isnull[col][row])
		return false;
	*key = order_key(cols->values[col][row], cls);
	return true;
}

/* Hash of the equi-join keys of one row, as cpu_equi_hash(). */
__device__ __forceinline__ bool
equi_hash(const GjEquiSpec *equi, const GjKeyColumns *cols, const int32_t *key_cols,
		  int64_t row, int64_t *hash)
{
	uint64_t	h = 0;

	for (int k = 0; k < equi->nkeys; k++)
	{
		int64_t		key;

		if (!column_key(cols, key_cols[k], equi->cls[k], row, &key))
			return false;
		h = hash64(h ^ hash64((uint64_t) key + (uint64_t) k));
	}
	*hash = (int64_t) h;
	return true;
}

/* One bound of a range join for one outer row, as cpu_range_bound(). */
__device__ int
range_bound(const GjRangeSpec *range, const GjKeyColumns *outer, int64_t row,
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
	if (gj_program_run(instrs, ninstrs, outer, row, NULL, 0, &value, &isnull) ==
		GJ_RESULT_RECHECK)
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
		equi_hash(&a.equi, &a.cols, a.equi.inner_cols, r, &key) :
		column_key(&a.cols, a.range.inner_col, a.range.cls, r, &key);
	a.rows[r] = (uint32_t) r;
	a.keys[r] = has_key ? key : INT64_MAX;
	a.flags[0][r] = has_key;
}

/* Outer side: each row's status and bounds, as cpu_prepare_sorted(). */
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
		status = equi_hash(&a.equi, &a.cols, a.equi.outer_cols, r, &lo) ?
			OUTER_BOUNDED : OUTER_EMPTY;
		hi = lo;
	}
	else
	{
		int			s_lo = range_bound(&a.range, &a.cols, r, false, &lo);
		int			s_hi = range_bound(&a.range, &a.cols, r, true, &hi);

		status = (s_lo == OUTER_ALL || s_hi == OUTER_ALL) ? OUTER_ALL :
			(s_lo == OUTER_EMPTY || s_hi == OUTER_EMPTY) ? OUTER_EMPTY : OUTER_BOUNDED;
	}
	if (status == OUTER_BOUNDED && lo > hi)
		status = OUTER_EMPTY;
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
		status[p] = OUTER_ALL;
		lo[p] = INT64_MIN;
		hi[p] = INT64_MAX;
	}
	else if (p < nall + nbounded)
	{
		status[p] = OUTER_BOUNDED;
		hi[p] = hi_by_row[perm[p]];
	}
	else
	{
		status[p] = OUTER_EMPTY;
		lo[p] = INT64_MAX;
		hi[p] = INT64_MIN;
	}
}

/* First position in [begin, end) whose key is >= key. */
__device__ __forceinline__ int64_t
lower_bound(const int64_t *keys, int64_t begin, int64_t end, int64_t key)
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
__device__ __forceinline__ int64_t
upper_bound(const int64_t *keys, int64_t begin, int64_t end, int64_t key)
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
		if (a.status[p] == OUTER_ALL)
			last = a.inner_end;
		else if (a.status[p] == OUTER_BOUNDED)
		{
			first = lower_bound(a.inner_keys, a.inner_begin, a.valid_end, a.lo[p]);
			last = upper_bound(a.inner_keys, first, a.valid_end, a.hi[p]);
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

/* Arguments of the pair kernels of a sorted step (well under 4 KB). */
typedef struct PairArgs
{
	GjProgram	program;
	GjKeyColumns outer;			/* device columns of the whole side, by row */
	GjKeyColumns inner;
	const uint32_t *outer_perm;	/* position -> row */
	const uint32_t *inner_perm;
	const uint32_t *first;		/* per step row */
	const uint64_t *cand_off;	/* per step row, scanned */
	int64_t		o_begin;
	int64_t		nrows;
	const uint64_t *npairs_at;	/* count pass: pairs to do, on the device */
	uint64_t	npairs;			/* write pass: pairs to do */
	int32_t		filter;			/* evaluate the program (else every pair matches) */
	uint64_t   *count;			/* count pass: matches per step row */
	uint32_t   *out_outer;
	uint32_t   *out_inner;
} PairArgs;

/* The step row of candidate pair t: the last j with cand_off[j] <= t. */
__device__ __forceinline__ int64_t
pair_row(const uint64_t *cand_off, int64_t nrows, uint64_t t)
{
	int64_t		lo = 0,
				hi = nrows - 1;

	while (lo < hi)
	{
		int64_t		mid = (lo + hi + 1) / 2;

		if (cand_off[mid] <= t)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * Evaluate candidate pair t of the step: its rows and the program's verdict
 * (GJ_RESULT_TRUE without filtering).
 */
__device__ __forceinline__ int
eval_pair(const PairArgs *a, uint64_t t, int64_t *j, uint32_t *orow, uint32_t *irow)
{
	int64_t		pos;

	*j = pair_row(a->cand_off, a->nrows, t);
	pos = (int64_t) a->first[*j] + (int64_t) (t - a->cand_off[*j]);
	*orow = a->outer_perm[a->o_begin + *j];
	*irow = a->inner_perm[pos];
	if (!a->filter)
		return GJ_RESULT_TRUE;
	return gj_program_eval(a->program.instrs, a->program.ninstrs,
						   &a->outer, *orow, &a->inner, *irow);
}

/*
 * Count pass of a filtered step, one candidate pair per thread (so a hot key
 * or a wide range is spread over the whole device, not one thread), in
 * warp-wide rounds of a grid-stride loop.  Lanes of one step row add their
 * matches with one atomic.
 */
__global__ void __launch_bounds__(SORTED_BLOCK)
count_pairs_kernel(const __grid_constant__ PairArgs a)
{
	uint64_t	total = *a.npairs_at;
	int			lane = threadIdx.x & 31;
	uint64_t	warp = ((uint64_t) blockIdx.x * blockDim.x + threadIdx.x) >> 5;
	uint64_t	nwarps = ((uint64_t) gridDim.x * blockDim.x) >> 5;

	for (uint64_t base = warp * 32; base < total; base += nwarps * 32)
	{
		uint64_t	t = base + lane;
		int64_t		j = -1;
		uint32_t	orow,
					irow;
		bool		hit = false;
		unsigned	same,
					hits;

		if (t < total)
			hit = eval_pair(&a, t, &j, &orow, &irow) != GJ_RESULT_FALSE;
		same = __match_any_sync(0xffffffffu, j);
		hits = __ballot_sync(0xffffffffu, hit);
		if (j >= 0 && lane == __ffs(same) - 1 && (same & hits) != 0)
			atomicAdd((unsigned long long *) &a.count[j],
					  (unsigned long long) __popc(same & hits));
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
		int			r = eval_pair(args, t, &j, &orow, &irow);

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
 * Errors and the probe
 * ---------------------------------------------------------------------
 */

/*
 * Fill *err from a failed CUDA call; returns false for "return fail(...)".
 * Also clears the runtime's last error, so that a later launch check does
 * not see this (non-sticky) one again.
 */
static bool
cuda_fail(GjError *err, int code, const char *what, cudaError_t rc)
{
	(void) cudaGetLastError();
	if (err != NULL)
	{
		if (code == 0)
			code = rc == cudaErrorMemoryAllocation ? GJ_ERR_OUT_OF_MEMORY : GJ_ERR_DEVICE;
		err->code = code;
		snprintf(err->message, sizeof(err->message), "%s: %s", what,
				 cudaGetErrorString(rc));
	}
	return false;
}

#define CUDA_TRY(call, what) \
	do { \
		cudaError_t rc_ = (call); \
		if (rc_ != cudaSuccess) \
			return cuda_fail(err, 0, (what), rc_); \
	} while (0)

static bool probe_done = false;
static bool probe_ok = false;
static GjError probe_error;
static GjDeviceInfo probe_info;

static double
elapsed_ms(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000.0 + (b->tv_nsec - a->tv_nsec) / 1e6;
}

/* Open the runtime and device 0; without a driver this fails cleanly. */
static bool
cuda_open(GjDeviceInfo *info, GjError *err)
{
	struct timespec start,
				end;
	cudaDeviceProp prop;
	cudaError_t rc;
	int			count = 0;
	size_t		free_bytes,
				total_bytes;

	clock_gettime(CLOCK_MONOTONIC, &start);
	rc = cudaGetDeviceCount(&count);
	if (rc == cudaSuccess && count < 1)
		rc = cudaErrorNoDevice;
	if (rc != cudaSuccess)
		return cuda_fail(err, GJ_ERR_UNAVAILABLE, "no usable CUDA device", rc);
	if ((rc = cudaSetDevice(0)) != cudaSuccess)
		return cuda_fail(err, GJ_ERR_UNAVAILABLE, "could not select CUDA device 0", rc);
	if ((rc = cudaFree(0)) != cudaSuccess)
		return cuda_fail(err, GJ_ERR_UNAVAILABLE, "could not open a CUDA context", rc);
	clock_gettime(CLOCK_MONOTONIC, &end);

	if ((rc = cudaGetDeviceProperties(&prop, 0)) != cudaSuccess)
		return cuda_fail(err, GJ_ERR_UNAVAILABLE, "could not read CUDA device properties", rc);
	if ((rc = cudaMemGetInfo(&free_bytes, &total_bytes)) != cudaSuccess)
		return cuda_fail(err, GJ_ERR_UNAVAILABLE, "could not read CUDA device memory", rc);

	memset(info, 0, sizeof(GjDeviceInfo));
	snprintf(info->name, sizeof(info->name), "%.*s", (int) sizeof(info->name) - 1, prop.name);
	info->total_memory = (int64_t) total_bytes;
	info->free_memory = (int64_t) free_bytes;
	info->sm_count = prop.multiProcessorCount;
	info->cc_major = prop.major;
	info->cc_minor = prop.minor;
	info->init_ms = elapsed_ms(&start, &end);
	/* a context that opened in under a microsecond must still read as first */
	if (info->init_ms <= 0)
		info->init_ms = 0.001;
	return true;
}

extern "C" bool
gj_cuda_probe(GjDeviceInfo *info, GjError *err)
{
	bool		first = false;
	size_t		free_bytes,
				total_bytes;
	cudaError_t rc;

	if (!probe_done)
	{
		memset(&probe_error, 0, sizeof(probe_error));
		probe_ok = cuda_open(&probe_info, &probe_error);
		probe_done = true;
		first = true;
	}
	if (!probe_ok)
	{
		if (err != NULL)
			*err = probe_error;
		return false;
	}

	/* free memory changes; a broken context shows up here too */
	rc = cudaMemGetInfo(&free_bytes, &total_bytes);
	if (rc != cudaSuccess)
		return cuda_fail(err, GJ_ERR_UNAVAILABLE, "could not read CUDA device memory", rc);
	probe_info.free_memory = (int64_t) free_bytes;
	if (info != NULL)
	{
		*info = probe_info;
		if (!first)
			info->init_ms = 0;
	}
	return true;
}

/* ---------------------------------------------------------------------
 * Join state
 * ---------------------------------------------------------------------
 */

static void
free_side(DeviceSide *side)
{
	for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
	{
		cudaFree(side->values[c]);
		cudaFree(side->isnull[c]);
		side->values[c] = NULL;
		side->isnull[c] = NULL;
	}
	side->capacity = 0;
	side->begin = side->end = -1;
}

/* Free the device match buffers (and the packed one of filtered steps). */
static void
free_device_matches(CudaJoinState *state)
{
	cudaFree(state->d_out_outer);
	cudaFree(state->d_out_inner);
	cudaFree(state->d_packed);
	state->d_out_outer = state->d_out_inner = NULL;
	state->d_packed = NULL;
	state->d_capacity = 0;
}

static void
cuda_end_join(void *arg)
{
	CudaJoinState *state = (CudaJoinState *) arg;

	if (state == NULL)
		return;
	/* nothing may still be writing into what we free (errors are moot now) */
	if (state->have_stream)
		cudaStreamSynchronize(state->stream);
	free_side(&state->outer);
	free_side(&state->inner);
	free_device_matches(state);
	cudaFree(state->d_scratch);
	cudaFree(state->d_cub_temp);
	cudaFree(state->d_prefix);
	cudaFreeHost(state->h_prefix);
	cudaFreeHost(state->h_out_outer);
	cudaFreeHost(state->h_out_inner);
	cudaFreeHost(state->h_spare_outer);
	cudaFreeHost(state->h_spare_inner);
	cudaFree(state->d_inner_keys);
	cudaFree(state->d_inner_perm);
	cudaFree(state->d_outer_perm);
	cudaFree(state->d_outer_lo);
	cudaFree(state->d_outer_hi);
	cudaFree(state->d_outer_status);
	cudaFree(state->d_first);
	cudaFree(state->d_cand);
	cudaFree(state->d_count);
	cudaFree(state->d_cut);
	cudaFreeHost(state->h_cut);
	cudaFree(state->d_pair_args);
	gj_agg_runs_free(state->agg_runs);
	free(state->h_outer_perm);
	cudaFreeHost(state->h_run_first);
	cudaFreeHost(state->h_run_width);
	free(state->h_inner_keys);
	free(state->h_outer_lo);
	free(state->h_outer_hi);
	free(state->h_outer_status);
	for (int i = 0; i < state->nevents; i++)
		cudaEventDestroy(state->events[i]);
	if (state->have_stream)
		cudaStreamDestroy(state->stream);
	(void) cudaGetLastError();
	free(state);
}

/* Grow the pinned host match buffer to at least npairs (<= capacity). */
static bool
ensure_host_matches(CudaJoinState *state, int64_t npairs, GjError *err)
{
	int64_t		size;

	if (npairs <= state->h_capacity)
		return true;
	size = min64(max64(npairs, 2 * state->h_capacity), state->capacity);
	cudaFreeHost(state->h_out_outer);
	cudaFreeHost(state->h_out_inner);
	state->h_out_outer = state->h_out_inner = NULL;
	state->h_capacity = 0;
	CUDA_TRY(cudaMallocHost((void **) &state->h_out_outer, sizeof(uint32_t) * size),
			 "could not allocate pinned host memory for matches");
	CUDA_TRY(cudaMallocHost((void **) &state->h_out_inner, sizeof(uint32_t) * size),
			 "could not allocate pinned host memory for matches");
	state->h_capacity = size;
	return true;
}

/*
 * Step overlap: write into the pinned buffer the executor is done with.  The
 * spare grows on its own, by ensure_host_matches, once it is current.
 */
static void
swap_host_matches(CudaJoinState *state)
{
	uint32_t   *outer_rows = state->h_out_outer;
	uint32_t   *inner_rows = state->h_out_inner;
	int64_t		capacity = state->h_capacity;

	state->h_out_outer = state->h_spare_outer;
	state->h_out_inner = state->h_spare_inner;
	state->h_capacity = state->h_spare_capacity;
	state->h_spare_outer = outer_rows;
	state->h_spare_inner = inner_rows;
	state->h_spare_capacity = capacity;
}

/* Allocate the device match buffers for size pairs; false if out of memory. */
static bool
alloc_device_matches(CudaJoinState *state, int64_t size)
{
	cudaError_t rc;

	rc = cudaMalloc((void **) &state->d_out_outer, sizeof(uint32_t) * size);
	if (rc == cudaSuccess)
		rc = cudaMalloc((void **) &state->d_out_inner, sizeof(uint32_t) * size);
	if (rc == cudaSuccess && state->packed_needed)
		rc = cudaMalloc((void **) &state->d_packed, sizeof(uint64_t) * size);
	if (rc != cudaSuccess)
	{
		free_device_matches(state);
		(void) cudaGetLastError();
		return false;
	}
	state->d_capacity = size;
	return true;
}

/*
 * Grow the device match buffers towards want pairs (never past capacity);
 * their contents are gone.  Only between steps, once the last step's
 * matches are on the host.  The old buffers go first, so that growing never
 * holds both; when the device has no memory for more, the buffers are
 * allocated again as they were (or for need pairs, a step's minimum, if
 * that is more) and the steps stay shorter; below need it is out of memory.
 */
static bool
ensure_device_matches(CudaJoinState *state, int64_t need, int64_t want, GjError *err)
{
	int64_t		size;
	int64_t		fallback;

	need = min64(need, state->capacity);
	want = min64(max64(want, need), state->capacity);
	if (want <= state->d_capacity)
		return true;
	size = min64(max64(max64(want, 2 * state->d_capacity), DEVICE_MATCH_MIN_PAIRS),
				 state->capacity);
	fallback = max64(need, state->d_capacity);
	free_device_matches(state);
	if (alloc_device_matches(state, size) ||
		(fallback < size && alloc_device_matches(state, fallback)))
		return true;
	err->code = GJ_ERR_OUT_OF_MEMORY;
	snprintf(err->message, sizeof(err->message),
			 "could not allocate a device match buffer of %lld pairs", (long long) fallback);
	return false;
}

/*
 * CUB's in-place exclusive prefix sum (temp == NULL: size the temporary
 * storage).  CCCL's device bookkeeping may throw cuda::cuda_error, and no
 * exception may leave this file, so it becomes an error code here.
 */
static cudaError_t
exclusive_sum(void *temp, size_t &temp_bytes, uint64_t *data, int64_t n,
			  cudaStream_t stream)
{
	try
	{
		return cub::DeviceScan::ExclusiveSum(temp, temp_bytes, data, (int) n, stream);
	}
	catch (...)
	{
		return cudaErrorUnknown;
	}
}

/* Grow the scratch and CUB's temporary storage for a scan of n entries. */
static bool
ensure_scratch(CudaJoinState *state, int64_t n, GjError *err)
{
	size_t		temp_bytes = 0;

	if (n > state->scratch_entries)
	{
		cudaFree(state->d_scratch);
		state->d_scratch = NULL;
		state->scratch_entries = 0;
		CUDA_TRY(cudaMalloc((void **) &state->d_scratch, sizeof(uint64_t) * n),
				 "could not allocate device scratch memory");
		state->scratch_entries = n;
	}
	CUDA_TRY(exclusive_sum(NULL, temp_bytes, state->d_scratch, n, state->stream),
			 "could not size the prefix sum");
	if (temp_bytes > state->cub_temp_bytes)
	{
		cudaFree(state->d_cub_temp);
		state->d_cub_temp = NULL;
		state->cub_temp_bytes = 0;
		CUDA_TRY(cudaMalloc(&state->d_cub_temp, temp_bytes),
				 "could not allocate device scratch memory");
		state->cub_temp_bytes = temp_bytes;
	}
	return true;
}

/*
 * Make rows [begin, end) of one side resident, uploading only the columns
 * the program loads.  The range is marked invalid while the copy is in
 * flight, so a failure leaves nothing that looks resident.
 */
static bool
upload_side(CudaJoinState *state, DeviceSide *side, const GjKeyColumns *host,
			int64_t begin, int64_t end, GjStats *stats, GjError *err)
{
	int64_t		rows = end - begin;

	if (side->begin == begin && side->end == end)
		return true;
	side->begin = side->end = -1;
	if (rows > side->capacity)
	{
		free_side(side);
		for (int c = 0; c < host->ncols; c++)
		{
			if (!side->used[c])
				continue;
			CUDA_TRY(cudaMalloc((void **) &side->values[c], sizeof(int64_t) * rows),
					 "could not allocate device memory for key columns");
			if (host->isnull[c] != NULL)
				CUDA_TRY(cudaMalloc((void **) &side->isnull[c], rows),
						 "could not allocate device memory for key columns");
		}
		side->capacity = rows;
	}
	for (int c = 0; c < host->ncols; c++)
	{
		if (!side->used[c])
			continue;
		CUDA_TRY(cudaMemcpyAsync(side->values[c], host->values[c] + begin,
								 sizeof(int64_t) * rows, cudaMemcpyHostToDevice,
								 state->stream),
				 "could not copy key columns to the device");
		stats->bytes_to_device += sizeof(int64_t) * rows;
		if (host->isnull[c] != NULL)
		{
			CUDA_TRY(cudaMemcpyAsync(side->isnull[c], host->isnull[c] + begin, rows,
									 cudaMemcpyHostToDevice, state->stream),
					 "could not copy key columns to the device");
			stats->bytes_to_device += rows;
		}
	}
	side->begin = begin;
	side->end = end;
	return true;
}

/* The allocations of begin_join; on failure the caller frees what exists. */
static bool
begin_join_allocate(CudaJoinState *state, GjError *err)
{
	CUDA_TRY(cudaStreamCreateWithFlags(&state->stream, cudaStreamNonBlocking),
			 "could not create a CUDA stream");
	state->have_stream = true;
	for (; state->nevents < NUM_EVENTS; state->nevents++)
		CUDA_TRY(cudaEventCreate(&state->events[state->nevents]),
				 "could not create a CUDA event");
	CUDA_TRY(cudaMalloc((void **) &state->d_prefix, 3 * sizeof(int64_t)),
			 "could not allocate device memory");
	CUDA_TRY(cudaMallocHost((void **) &state->h_prefix, 3 * sizeof(int64_t)),
			 "could not allocate pinned host memory");
	return ensure_host_matches(state, min64(state->capacity, HOST_MATCH_MIN_PAIRS), err);
}

/* Mark one key column used; false if it does not exist. */
static bool
mark_column(CudaJoinState *state, bool outer, int col)
{
	const GjKeyColumns *host = outer ? &state->input.outer : &state->input.inner;

	if (col < 0 || col >= host->ncols || host->values[col] == NULL)
		return false;
	(outer ? &state->outer : &state->inner)->used[col] = true;
	return true;
}

/* Mark the columns the instructions load; false if one does not exist. */
static bool
mark_program_columns(CudaJoinState *state, const GjInstr *instrs, int ninstrs)
{
	for (int pc = 0; pc < ninstrs; pc++)
	{
		if ((instrs[pc].op == GJOP_LOAD_OUTER || instrs[pc].op == GJOP_LOAD_INNER) &&
			!mark_column(state, instrs[pc].op == GJOP_LOAD_OUTER, instrs[pc].arg))
			return false;
	}
	return true;
}

/*
 * Mark the columns the device reads: those the program loads, and for the
 * sorted algorithms the key columns and those the bounds load.
 */
static bool
mark_used_columns(CudaJoinState *state)
{
	const GjJoinInput *input = &state->input;

	if (!mark_program_columns(state, state->program.instrs, state->program.ninstrs))
		return false;
	if (input->algorithm == GJ_ALGO_SORTMERGE)
	{
		const GjRangeSpec *range = &input->range;

		if (range->lo_ninstrs < 0 || range->lo_ninstrs > GJ_MAX_INSTRS ||
			range->hi_ninstrs < 0 || range->hi_ninstrs > GJ_MAX_INSTRS ||
			!mark_column(state, false, range->inner_col) ||
			!mark_program_columns(state, range->lo_instrs, range->lo_ninstrs) ||
			!mark_program_columns(state, range->hi_instrs, range->hi_ninstrs))
			return false;
	}
	else if (input->algorithm == GJ_ALGO_HASH)
	{
		const GjEquiSpec *equi = &input->equi;

		if (equi->nkeys < 1 || equi->nkeys > GJ_MAX_KEY_COLS)
			return false;
		for (int k = 0; k < equi->nkeys; k++)
		{
			if (!mark_column(state, true, equi->outer_cols[k]) ||
				!mark_column(state, false, equi->inner_cols[k]))
				return false;
		}
	}
	return true;
}

static bool prepare_sorted(CudaJoinState *state, GjError *err);

/*
 * Device memory a sort-merge or hash join keeps for all its tiles: the key
 * columns the program loads and the sorted arrays of both whole sides, and
 * the temporaries of the sort (prepare_sorted_work), which are there at the
 * same time while it runs.
 */
static int64_t
sorted_resident_bytes(const CudaJoinState *state)
{
	int64_t		no = state->input.outer_nrows;
	int64_t		ni = state->input.inner_nrows;
	int64_t		bytes = 0;

	for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
	{
		bytes += state->outer.used[c] ? no * (int64_t) (sizeof(int64_t) + 1) : 0;
		bytes += state->inner.used[c] ? ni * (int64_t) (sizeof(int64_t) + 1) : 0;
	}
	bytes += ni * (int64_t) (sizeof(int64_t) + sizeof(uint32_t));	/* keys, perm */
	bytes += no * (int64_t) (sizeof(uint32_t) + 2 * sizeof(int64_t) + 1);	/* perm, lo, hi,
																			 * status */
	bytes += max64(no, ni) * (int64_t) (3 + 3 * sizeof(int64_t) + 2 * sizeof(uint32_t));
	return bytes;
}

static void *
cuda_begin_join(const GjJoinInput *input, GjError *err)
{
	CudaJoinState *state;
	GjDeviceInfo info;

	if (!gj_cuda_probe(&info, err))
		return NULL;
	state = (CudaJoinState *) calloc(1, sizeof(CudaJoinState));
	if (state == NULL)
	{
		err->code = GJ_ERR_OUT_OF_MEMORY;
		snprintf(err->message, sizeof(err->message), "out of host memory");
		return NULL;
	}
	state->outer.begin = state->outer.end = -1;
	state->inner.begin = state->inner.end = -1;
	state->input = *input;
	if (input->ninstrs < 1 || input->ninstrs > GJ_MAX_INSTRS ||
		input->outer.ncols > GJ_MAX_KEY_COLS || input->inner.ncols > GJ_MAX_KEY_COLS)
		goto bad_program;
	state->program.ninstrs = input->ninstrs;
	memcpy(state->program.instrs, input->instrs, sizeof(GjInstr) * input->ninstrs);
	state->input.instrs = state->program.instrs;
	if (!mark_used_columns(state))
		goto bad_program;
	state->simple = gj_program_simple_compare(state->program.instrs, input->ninstrs,
											  &state->compare);
	state->capacity = input->match_capacity > 0 ? input->match_capacity : 1;
	state->sm_count = info.sm_count > 0 ? info.sm_count : 1;

	/*
	 * The sorted sides stay on the device for every tile, so they must fit
	 * the budget's share for inputs (tile_planner.c keeps a quarter for the
	 * matches): gpujoin.device_memory is a bound on what one join takes
	 * from a shared GPU.  Out of memory here is where the executor runs the
	 * join on the cpu backend instead, which holds the sides in host memory.
	 */
	if (input->algorithm != GJ_ALGO_NESTLOOP && input->budget_bytes > 0 &&
		sorted_resident_bytes(state) > input->budget_bytes / 4 * 3)
	{
		err->code = GJ_ERR_OVER_BUDGET;
		snprintf(err->message, sizeof(err->message),
				 "the sorted keys of %lld x %lld rows take %lld kB of device memory, more than three quarters of the join's budget of %lld kB (gpujoin.device_memory)",
				 (long long) input->outer_nrows, (long long) input->inner_nrows,
				 (long long) (sorted_resident_bytes(state) / 1024),
				 (long long) (input->budget_bytes / 1024));
		free(state);
		return NULL;
	}

	if (!begin_join_allocate(state, err) ||
		(input->algorithm != GJ_ALGO_NESTLOOP && !prepare_sorted(state, err)))
	{
		cuda_end_join(state);
		return NULL;
	}

	/*
	 * The match buffers, now that it is known whether steps are filtered:
	 * at least one outer row's matches of any tile, so that running out of
	 * device memory shows here, where the executor retries with smaller
	 * tiles, and not in the middle of the join.
	 */
	state->packed_needed = input->algorithm != GJ_ALGO_NESTLOOP &&
		(input->filter_needed || state->outer_all > 0);
	if (!ensure_device_matches(state, input->inner_nrows, DEVICE_MATCH_MIN_PAIRS, err))
	{
		cuda_end_join(state);
		return NULL;
	}
	return state;

bad_program:
	free(state);
	err->code = GJ_ERR_DEVICE;
	snprintf(err->message, sizeof(err->message),
			 "device program of %d instructions does not fit its key columns",
			 (int) input->ninstrs);
	return NULL;
}

/* ---------------------------------------------------------------------
 * Steps
 * ---------------------------------------------------------------------
 */

/*
 * Choose the candidate outer rows of a step and the split of the inner tile.
 * The candidates are bounded by the work per step and, once the density of
 * matches is known, by about what the match buffer takes at that density,
 * so that a dense join does not count far more rows than it can write.
 * They are never fewer than surely fit.
 */
static void
plan_step(const CudaJoinState *state, const GjTile *tile, int64_t o_begin,
		  StepPlan *plan)
{
	int64_t		inner_rows = tile->inner_end - tile->inner_begin;
	int64_t		pairs = state->simple ? CMP_PAIRS_PER_STEP : GEN_PAIRS_PER_STEP;
	int64_t		block_rows = state->simple ? CMP_BLOCK * CMP_ROWS : GEN_BLOCK;
	int64_t		chunk = state->simple ? CMP_CHUNK : GEN_CHUNK;
	int64_t		work = min64(max64(pairs / inner_rows, 1), MAX_STEP_ROWS);
	int64_t		rows = work;
	int64_t		scratch_cap,
				slices;

	if (state->density > 0)
	{
		double		est = (double) state->d_capacity / (state->density * inner_rows) * 1.25;

		if (est < (double) rows)
			rows = max64((int64_t) est, min64(state->d_capacity / inner_rows, work));
	}
	rows = max64(min64(rows, tile->outer_end - o_begin), 1);

	/* split the inner tile until the grid has enough blocks */
	scratch_cap = min64(max64(tile->outer_end - tile->outer_begin, SCRATCH_MIN_ENTRIES),
						SCRATCH_MAX_ENTRIES);
	slices = ceil_div((int64_t) state->sm_count * TARGET_BLOCKS_PER_SM,
					  ceil_div(rows, block_rows));
	slices = min64(slices, ceil_div(inner_rows, chunk));
	slices = min64(slices, scratch_cap / rows);
	slices = max64(min64(slices, 65535), 1);

	plan->nrows = rows;
	plan->slice_len = ceil_div(ceil_div(inner_rows, slices), chunk) * chunk;
	plan->nslices = ceil_div(inner_rows, plan->slice_len);
}

typedef void (*CompareKernel) (CompareArgs);

template <bool INNER_NULLS, bool WRITE>
static CompareKernel
compare_kernel_for(int op)
{
	switch (op)
	{
		case GJOP_EQ:
			return compare_kernel<GJOP_EQ, INNER_NULLS, WRITE>;
		case GJOP_NE:
			return compare_kernel<GJOP_NE, INNER_NULLS, WRITE>;
		case GJOP_LT:
			return compare_kernel<GJOP_LT, INNER_NULLS, WRITE>;
		case GJOP_LE:
			return compare_kernel<GJOP_LE, INNER_NULLS, WRITE>;
		case GJOP_GT:
			return compare_kernel<GJOP_GT, INNER_NULLS, WRITE>;
		default:
			return compare_kernel<GJOP_GE, INNER_NULLS, WRITE>;
	}
}

/*
 * Launch the count pass (write = false) or the write pass over outer rows
 * [o_begin, o_begin + nrows) of the tile.
 */
static bool
launch_pass(CudaJoinState *state, const GjTile *tile, const StepPlan *plan,
			int64_t o_begin, int64_t nrows, bool write, GjError *err)
{
	int64_t		o_off = o_begin - state->outer.begin;

	if (state->simple)
	{
		const GjSimpleCompare *sc = &state->compare;
		CompareArgs a;
		bool		inner_nulls = state->inner.isnull[sc->inner_col] != NULL;
		CompareKernel kernel;
		dim3		grid((unsigned) ceil_div(nrows, CMP_BLOCK * CMP_ROWS),
						 (unsigned) plan->nslices);

		memset(&a, 0, sizeof(a));
		a.ovals = state->outer.values[sc->outer_col] + o_off;
		a.onull = state->outer.isnull[sc->outer_col] != NULL ?
			state->outer.isnull[sc->outer_col] + o_off : NULL;
		a.ivals = state->inner.values[sc->inner_col];
		a.inull = state->inner.isnull[sc->inner_col];
		a.nrows = nrows;
		a.ninner = tile->inner_end - tile->inner_begin;
		a.nslices = plan->nslices;
		a.slice_len = plan->slice_len;
		a.scratch = state->d_scratch;
		a.out_outer = state->d_out_outer;
		a.out_inner = state->d_out_inner;
		a.outer_first = (uint32_t) o_begin;
		a.inner_first = (uint32_t) tile->inner_begin;
		a.cls = sc->cls;
		if (write)
			kernel = inner_nulls ? compare_kernel_for<true, true>(sc->op) :
				compare_kernel_for<false, true>(sc->op);
		else
			kernel = inner_nulls ? compare_kernel_for<true, false>(sc->op) :
				compare_kernel_for<false, false>(sc->op);
		kernel<<<grid, CMP_BLOCK, 0, state->stream>>>(a);
	}
	else
	{
		ProgramArgs a;
		dim3		grid((unsigned) ceil_div(nrows, GEN_BLOCK), (unsigned) plan->nslices);

		memset(&a, 0, sizeof(a));
		a.program = state->program;
		a.outer.ncols = state->input.outer.ncols;
		a.inner.ncols = state->input.inner.ncols;
		for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
		{
			if (state->outer.values[c] != NULL)
				a.outer.values[c] = state->outer.values[c] + o_off;
			if (state->outer.isnull[c] != NULL)
				a.outer.isnull[c] = state->outer.isnull[c] + o_off;
			a.inner.values[c] = state->inner.values[c];
			a.inner.isnull[c] = state->inner.isnull[c];
		}
		a.nrows = nrows;
		a.ninner = tile->inner_end - tile->inner_begin;
		a.nslices = plan->nslices;
		a.slice_len = plan->slice_len;
		a.scratch = state->d_scratch;
		a.out_outer = state->d_out_outer;
		a.out_inner = state->d_out_inner;
		a.outer_first = (uint32_t) o_begin;
		a.inner_first = (uint32_t) tile->inner_begin;
		if (write)
			program_kernel<true><<<grid, GEN_BLOCK, 0, state->stream>>>(a);
		else
			program_kernel<false><<<grid, GEN_BLOCK, 0, state->stream>>>(a);
	}
	CUDA_TRY(cudaGetLastError(), write ? "could not launch the write kernel" :
			 "could not launch the count kernel");
	return true;
}

/*
 * Count the candidate rows of plan, scan, and find the prefix that fits
 * `fit` pairs; h_prefix receives k, its matches and all candidates' matches.
 * Synchronises the stream.
 */
static bool
count_step(CudaJoinState *state, const GjTile *tile, const StepPlan *plan,
		   int64_t o_begin, uint64_t fit, GjError *err)
{
	int64_t		n = plan->nrows * plan->nslices;

	if (!ensure_scratch(state, n + 1, err))
		return false;
	if (!launch_pass(state, tile, plan, o_begin, plan->nrows, false, err))
		return false;
	/* the extra last entry turns into the total of all candidates */
	CUDA_TRY(cudaMemsetAsync(state->d_scratch + n, 0, sizeof(uint64_t), state->stream),
			 "could not clear device scratch memory");
	CUDA_TRY(exclusive_sum(state->d_cub_temp, state->cub_temp_bytes, state->d_scratch,
						   n + 1, state->stream),
			 "could not run the prefix sum");
	find_prefix_kernel<<<1, 1, 0, state->stream>>>(state->d_scratch, plan->nrows,
												   plan->nslices, fit, state->d_prefix);
	CUDA_TRY(cudaGetLastError(), "could not launch the prefix kernel");
	CUDA_TRY(cudaMemcpyAsync(state->h_prefix, state->d_prefix, 3 * sizeof(int64_t),
							 cudaMemcpyDeviceToHost, state->stream),
			 "could not copy the match count from the device");
	CUDA_TRY(cudaEventRecord(state->events[EV_COUNTED], state->stream),
			 "could not record a CUDA event");
	CUDA_TRY(cudaStreamSynchronize(state->stream), "count kernel failed");
	return true;
}

static double
event_ms(CudaJoinState *state, int from, int to)
{
	float		ms = 0;

	if (cudaEventElapsedTime(&ms, state->events[from], state->events[to]) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return 0;
	}
	return ms;
}

/* ---------------------------------------------------------------------
 * Sort-merge and hash: preparing the sorted sides
 * ---------------------------------------------------------------------
 */

/* Grow CUB's temporary storage to at least bytes. */
static bool
ensure_cub_temp(CudaJoinState *state, size_t bytes, GjError *err)
{
	if (bytes <= state->cub_temp_bytes)
		return true;
	cudaFree(state->d_cub_temp);
	state->d_cub_temp = NULL;
	state->cub_temp_bytes = 0;
	CUDA_TRY(cudaMalloc(&state->d_cub_temp, bytes),
			 "could not allocate device scratch memory");
	state->cub_temp_bytes = bytes;
	return true;
}

/*
 * Run a CUB device-wide algorithm: size its temporary storage, grow ours,
 * run it.  call(temp, bytes) is the CUB call; CCCL may throw, and nothing
 * may leave this file as an exception, so that becomes an error too.
 */
template <typename Call>
static bool
cub_run(CudaJoinState *state, Call call, const char *what, GjError *err)
{
	size_t		bytes = 0;
	cudaError_t rc;

	try
	{
		rc = call(NULL, bytes);
		if (rc == cudaSuccess)
		{
			if (!ensure_cub_temp(state, bytes, err))
				return false;
			rc = call(state->d_cub_temp, bytes);
		}
	}
	catch (...)
	{
		rc = cudaErrorUnknown;
	}
	if (rc != cudaSuccess)
		return cuda_fail(err, 0, what, rc);
	return true;
}

/* In-place exclusive prefix sum of n counters. */
static bool
scan_counts(CudaJoinState *state, uint64_t *data, int64_t n, GjError *err)
{
	return cub_run(state, [&] (void *temp, size_t &bytes) {
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
	return cub_run(state, [&] (void *temp, size_t &bytes) {
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
	if (!cub_run(state, [&] (void *temp, size_t &bytes) {
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

/* Device memory of preparing the sorted sides, freed once they are. */
typedef struct PrepareTemp
{
	uint8_t    *flags;			/* 3 x nmax */
	int64_t    *keys_by_row;
	int64_t    *his_by_row;
	uint32_t   *rows;
	uint32_t   *part_rows;
	int64_t    *part_keys;
	int		   *num;
} PrepareTemp;

static void
free_prepare_temp(PrepareTemp *tmp)
{
	cudaFree(tmp->flags);
	cudaFree(tmp->keys_by_row);
	cudaFree(tmp->his_by_row);
	cudaFree(tmp->rows);
	cudaFree(tmp->part_rows);
	cudaFree(tmp->part_keys);
	cudaFree(tmp->num);
}

/* The key columns of a side resident on the device, as the kernels see them. */
static void
device_columns(const DeviceSide *side, int ncols, GjKeyColumns *cols)
{
	memset(cols, 0, sizeof(GjKeyColumns));
	cols->ncols = ncols;
	for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
	{
		cols->values[c] = side->values[c];
		cols->isnull[c] = side->isnull[c];
	}
}

static unsigned
grid_for(int64_t n, int block)
{
	return (unsigned) max64(ceil_div(n, block), 1);
}

#define CUDA_LAUNCHED(what) CUDA_TRY(cudaGetLastError(), "could not launch " what)

static bool
prepare_sorted_work(CudaJoinState *state, PrepareTemp *tmp, GjError *err)
{
	const GjJoinInput *in = &state->input;
	int64_t		ni = in->inner_nrows;
	int64_t		no = in->outer_nrows;
	int64_t		nmax = max64(max64(ni, no), 1);
	int64_t		nvalid,
				nall,
				nbounded,
				nempty;
	KeyArgs		a;
	GjStats		ignored;

	memset(&ignored, 0, sizeof(ignored));
	/* the whole of each side's key columns stays on the device */
	if ((no > 0 && !upload_side(state, &state->outer, &in->outer, 0, no, &ignored, err)) ||
		(ni > 0 && !upload_side(state, &state->inner, &in->inner, 0, ni, &ignored, err)))
		return false;

#define ALLOC(ptr, bytes) \
	CUDA_TRY(cudaMalloc((void **) &(ptr), (bytes)), \
			 "could not allocate device memory to sort the join keys")
	ALLOC(state->d_inner_keys, sizeof(int64_t) * max64(ni, 1));
	ALLOC(state->d_inner_perm, sizeof(uint32_t) * max64(ni, 1));
	ALLOC(state->d_outer_perm, sizeof(uint32_t) * max64(no, 1));
	ALLOC(state->d_outer_lo, sizeof(int64_t) * max64(no, 1));
	ALLOC(state->d_outer_hi, sizeof(int64_t) * max64(no, 1));
	ALLOC(state->d_outer_status, max64(no, 1));
	ALLOC(tmp->flags, 3 * nmax);
	ALLOC(tmp->keys_by_row, sizeof(int64_t) * nmax);
	ALLOC(tmp->his_by_row, sizeof(int64_t) * nmax);
	ALLOC(tmp->rows, sizeof(uint32_t) * nmax);
	ALLOC(tmp->part_rows, sizeof(uint32_t) * nmax);
	ALLOC(tmp->part_keys, sizeof(int64_t) * nmax);
	ALLOC(tmp->num, sizeof(int));
#undef ALLOC

	memset(&a, 0, sizeof(a));
	a.range = in->range;
	a.equi = in->equi;
	a.algorithm = in->algorithm;
	a.rows = tmp->rows;
	a.keys = tmp->keys_by_row;
	a.his = tmp->his_by_row;
	for (int s = 0; s < 3; s++)
		a.flags[s] = tmp->flags + s * nmax;

	/* inner: keyed rows sorted by key, then the rows without a key */
	if (ni > 0)
	{
		device_columns(&state->inner, in->inner.ncols, &a.cols);
		a.nrows = ni;
		inner_key_kernel<<<grid_for(ni, 256), 256, 0, state->stream>>>(a);
		CUDA_LAUNCHED("the inner key kernel");
	}
	if (!select_rows(state, tmp->rows, a.flags[0], tmp->part_rows, ni, true, tmp->num,
					 &nvalid, err))
		return false;
	if (nvalid > 0)
	{
		gather_kernel<<<grid_for(nvalid, 256), 256, 0, state->stream>>>(
			tmp->part_rows, tmp->keys_by_row, tmp->part_keys, nvalid);
		CUDA_LAUNCHED("the gather kernel");
	}
	if (!sort_pairs(state, tmp->part_keys, state->d_inner_keys, tmp->part_rows,
					state->d_inner_perm, nvalid, err))
		return false;
	if (ni > nvalid)
	{
		inner_tail_kernel<<<grid_for(ni - nvalid, 256), 256, 0, state->stream>>>(
			tmp->part_rows, nvalid, ni, state->d_inner_keys, state->d_inner_perm);
		CUDA_LAUNCHED("the inner tail kernel");
	}
	state->inner_valid = nvalid;

	/* outer: OUTER_ALL rows, bounded rows by lower bound, empty rows */
	if (no > 0)
	{
		device_columns(&state->outer, in->outer.ncols, &a.cols);
		a.nrows = no;
		outer_bound_kernel<<<grid_for(no, 256), 256, 0, state->stream>>>(a);
		CUDA_LAUNCHED("the outer bounds kernel");
	}
	if (!select_rows(state, tmp->rows, a.flags[OUTER_ALL], state->d_outer_perm, no, false,
					 tmp->num, &nall, err) ||
		!select_rows(state, tmp->rows, a.flags[OUTER_BOUNDED], tmp->part_rows, no, false,
					 tmp->num, &nbounded, err) ||
		!select_rows(state, tmp->rows, a.flags[OUTER_EMPTY],
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
		gather_kernel<<<grid_for(nbounded, 256), 256, 0, state->stream>>>(
			tmp->part_rows, tmp->keys_by_row, tmp->part_keys, nbounded);
		CUDA_LAUNCHED("the gather kernel");
	}
	if (!sort_pairs(state, tmp->part_keys, state->d_outer_lo + nall, tmp->part_rows,
					state->d_outer_perm + nall, nbounded, err))
		return false;
	if (no > 0)
	{
		outer_finish_kernel<<<grid_for(no, 256), 256, 0, state->stream>>>(
			state->d_outer_perm, tmp->his_by_row, nall, nbounded, no,
			state->d_outer_status, state->d_outer_lo, state->d_outer_hi);
		CUDA_LAUNCHED("the outer finish kernel");
	}
	state->outer_all = nall;

	/* host copies for tile pruning */
	state->h_inner_keys = (int64_t *) malloc(sizeof(int64_t) * max64(ni, 1));
	state->h_outer_lo = (int64_t *) malloc(sizeof(int64_t) * max64(no, 1));
	state->h_outer_hi = (int64_t *) malloc(sizeof(int64_t) * max64(no, 1));
	state->h_outer_status = (uint8_t *) malloc(max64(no, 1));
	if (state->h_inner_keys == NULL || state->h_outer_lo == NULL ||
		state->h_outer_hi == NULL || state->h_outer_status == NULL)
	{
		err->code = GJ_ERR_OUT_OF_MEMORY;
		snprintf(err->message, sizeof(err->message),
				 "could not allocate host memory for the sorted keys of %lld x %lld rows",
				 (long long) no, (long long) ni);
		return false;
	}
	CUDA_TRY(cudaMemcpyAsync(state->h_inner_keys, state->d_inner_keys, sizeof(int64_t) * ni,
							 cudaMemcpyDeviceToHost, state->stream),
			 "could not copy sorted keys from the device");
	CUDA_TRY(cudaMemcpyAsync(state->h_outer_lo, state->d_outer_lo, sizeof(int64_t) * no,
							 cudaMemcpyDeviceToHost, state->stream),
			 "could not copy sorted keys from the device");
	CUDA_TRY(cudaMemcpyAsync(state->h_outer_hi, state->d_outer_hi, sizeof(int64_t) * no,
							 cudaMemcpyDeviceToHost, state->stream),
			 "could not copy sorted keys from the device");
	CUDA_TRY(cudaMemcpyAsync(state->h_outer_status, state->d_outer_status, no,
							 cudaMemcpyDeviceToHost, state->stream),
			 "could not copy sorted keys from the device");
	CUDA_TRY(cudaStreamSynchronize(state->stream), "sorting the join keys failed");

	/* per-row scratch of a step */
	state->step_cap = min64(SORTED_ROWS_PER_STEP, max64(no, 1));
	CUDA_TRY(cudaMalloc((void **) &state->d_first, sizeof(uint32_t) * state->step_cap),
			 "could not allocate device scratch memory");
	CUDA_TRY(cudaMalloc((void **) &state->d_cand, sizeof(uint64_t) * (state->step_cap + 1)),
			 "could not allocate device scratch memory");
	CUDA_TRY(cudaMalloc((void **) &state->d_count, sizeof(uint64_t) * (state->step_cap + 1)),
			 "could not allocate device scratch memory");
	CUDA_TRY(cudaMalloc((void **) &state->d_cut, sizeof(uint64_t) * CUT_ENTRIES),
			 "could not allocate device memory");
	CUDA_TRY(cudaMallocHost((void **) &state->h_cut, sizeof(uint64_t) * CUT_ENTRIES),
			 "could not allocate pinned host memory");
	return true;
}

/*
 * Put both sides in key order on the device (see the kernels above), and
 * keep host copies of what tile pruning reads.
 */
static bool
prepare_sorted(CudaJoinState *state, GjError *err)
{
	PrepareTemp tmp;
	bool		ok;

	memset(&tmp, 0, sizeof(tmp));
	ok = prepare_sorted_work(state, &tmp, err);
	/* nothing may still use the temporaries (a failure has synchronised) */
	if (state->have_stream)
		cudaStreamSynchronize(state->stream);
	free_prepare_temp(&tmp);
	(void) cudaGetLastError();
	return ok;
}

/* As cpu_sorted_tile_can_match(), on the host copies of the sorted keys. */
static bool
sorted_tile_can_match(const CudaJoinState *state, const GjTile *tile)
{
	int64_t		valid_end = min64(tile->inner_end, state->inner_valid);
	int64_t		kmin,
				kmax,
				p;

	if (tile->inner_end <= tile->inner_begin)
		return false;
	for (p = tile->outer_begin; p < tile->outer_end; p++)
	{
		if (state->h_outer_status[p] == OUTER_ALL)
			return true;
		if (state->h_outer_status[p] == OUTER_BOUNDED)
			break;
	}
	if (valid_end <= tile->inner_begin)
		return false;
	kmin = state->h_inner_keys[tile->inner_begin];
	kmax = state->h_inner_keys[valid_end - 1];
	/* bounded outer rows are sorted by lo: stop once lo passes kmax */
	for (; p < tile->outer_end && state->h_outer_status[p] == OUTER_BOUNDED; p++)
	{
		if (state->h_outer_lo[p] > kmax)
			break;
		if (state->h_outer_hi[p] >= kmin)
			return true;
	}
	return false;
}

static bool
cuda_tile_can_match(void *arg, const GjTile *tile)
{
	CudaJoinState *state = (CudaJoinState *) arg;

	if (state->input.algorithm == GJ_ALGO_NESTLOOP)
		return true;
	return sorted_tile_can_match(state, tile);
}

/* ---------------------------------------------------------------------
 * Sort-merge and hash: steps
 * ---------------------------------------------------------------------
 */

/*
 * The candidates of step rows [o_begin, o_begin + rows) of a sorted step:
 * each row's first inner position in d_first and their number in d_cand.
 */
static bool
launch_bounds(CudaJoinState *state, const GjTile *tile, int64_t o_begin, int64_t rows,
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
	b.valid_end = max64(min64(tile->inner_end, state->inner_valid), tile->inner_begin);
	b.first = state->d_first;
	b.cand = state->d_cand;
	bounds_kernel<<<grid_for(rows + 1, 256), 256, 0, state->stream>>>(b);
	CUDA_LAUNCHED("the bounds kernel");
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
		CUDA_TRY(cudaMalloc((void **) &state->d_pair_args, sizeof(PairArgs)),
				 "could not allocate device memory");
	/* pageable source: the copy has left *a when this returns */
	CUDA_TRY(cudaMemcpyAsync(state->d_pair_args, a, sizeof(PairArgs), cudaMemcpyHostToDevice,
							 state->stream),
			 "could not copy the step's arguments to the device");
	packed = state->d_packed;
	if (!cub_run(state, [&] (void *temp, size_t &bytes) {
		return cub::DeviceSelect::If(temp, bytes,
									 thrust::make_transform_iterator(first_pair,
																	 PackPair {state->d_pair_args}),
									 packed, nselected, (int64_t) a->npairs, IsPair(),
									 state->stream);
	}, "could not select the matches of a step", err))
		return false;
	unpack_pairs_kernel<<<grid_for(total, 256), 256, 0, state->stream>>>(
		packed, total, state->d_out_outer, state->d_out_inner);
	CUDA_LAUNCHED("the match unpack kernel");
	CUDA_TRY(cudaMemcpyAsync(&state->h_cut[5], nselected, sizeof(uint64_t),
							 cudaMemcpyDeviceToHost, state->stream),
			 "could not copy the match count from the device");
	return true;
}

/*
 * One step of a sorted tile, count then write:
 *
 *	1. per step row, its candidates: a binary search of its bounds in the
 *	   tile's sorted inner keys (every inner row of the tile for OUTER_ALL);
 *	2. a scan of the candidates;
 *	3. filtered (the device program must decide, or the step has OUTER_ALL
 *	   rows): cut the rows at the work limit, evaluate every candidate pair,
 *	   count matches per row, scan; unfiltered, every candidate is a match;
 *	4. cut the rows at the match capacity (at a row boundary, exact), and
 *	   write the pairs of that prefix.
 *
 * A step never mixes OUTER_ALL rows with bounded ones, so "filtered" is a
 * property of the step.
 */
static bool
sorted_run_step(CudaJoinState *state, const GjTile *tile, int64_t *outer_next,
				GjMatches *matches, GjStats *stats, GjError *err)
{
	int64_t		o_begin = *outer_next;
	int64_t		rows = min64(state->step_cap, tile->outer_end - o_begin);
	bool		filter = state->input.filter_needed || o_begin < state->outer_all;
	PairArgs	a;
	int64_t		k,
				total,
				pairs;

	/* empty rows come last and have no candidates: the tile is done */
	if (state->h_outer_status[o_begin] == OUTER_EMPTY)
	{
		*outer_next = tile->outer_end;
		return true;
	}
	if (o_begin < state->outer_all)
		rows = min64(rows, state->outer_all - o_begin);

	CUDA_TRY(cudaEventRecord(state->events[EV_START], state->stream),
			 "could not record a CUDA event");
	CUDA_TRY(cudaEventRecord(state->events[EV_UPLOADED], state->stream),
			 "could not record a CUDA event");
	if (!launch_bounds(state, tile, o_begin, rows, err))
		return false;
	if (!scan_counts(state, state->d_cand, rows + 1, err))
		return false;

	memset(&a, 0, sizeof(a));
	a.program = state->program;
	device_columns(&state->outer, state->input.outer.ncols, &a.outer);
	device_columns(&state->inner, state->input.inner.ncols, &a.inner);
	a.outer_perm = state->d_outer_perm;
	a.inner_perm = state->d_inner_perm;
	a.first = state->d_first;
	a.cand_off = state->d_cand;
	a.o_begin = o_begin;
	a.nrows = rows;
	a.filter = filter;
	a.count = state->d_count;
	a.out_outer = state->d_out_outer;
	a.out_inner = state->d_out_inner;
	if (filter)
	{
		work_cut_kernel<<<1, 1, 0, state->stream>>>(state->d_cand, rows,
													 (uint64_t) SORTED_PAIRS_PER_STEP,
													 state->d_cut);
		CUDA_LAUNCHED("the work cut kernel");
		CUDA_TRY(cudaMemsetAsync(state->d_count, 0, sizeof(uint64_t) * (rows + 1),
								 state->stream),
				 "could not clear device scratch memory");
		a.npairs_at = state->d_cut + 1;
		count_pairs_kernel<<<(unsigned) state->sm_count * SORTED_BLOCKS_PER_SM,
			SORTED_BLOCK, 0, state->stream>>>(a);
		CUDA_LAUNCHED("the pair count kernel");
		if (!scan_counts(state, state->d_count, rows + 1, err))
			return false;
	}
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
	stats->kernel_ms += event_ms(state, EV_UPLOADED, EV_COUNTED);
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
		if (!ensure_host_matches(state, total, err))
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
			write_pairs_kernel<<<grid_for(pairs, SORTED_BLOCK), SORTED_BLOCK, 0,
				state->stream>>>(a);
			CUDA_LAUNCHED("the pair write kernel");
		}
		CUDA_TRY(cudaEventRecord(state->events[EV_WRITTEN], state->stream),
				 "could not record a CUDA event");
		CUDA_TRY(cudaMemcpyAsync(state->h_out_outer, state->d_out_outer,
								 sizeof(uint32_t) * total, cudaMemcpyDeviceToHost,
								 state->stream),
				 "could not copy matches from the device");
		CUDA_TRY(cudaMemcpyAsync(state->h_out_inner, state->d_out_inner,
								 sizeof(uint32_t) * total, cudaMemcpyDeviceToHost,
								 state->stream),
				 "could not copy matches from the device");
		CUDA_TRY(cudaEventRecord(state->events[EV_DONE], state->stream),
				 "could not record a CUDA event");
		CUDA_TRY(cudaStreamSynchronize(state->stream), "write kernel failed");
		stats->kernel_ms += event_ms(state, EV_WRITE, EV_WRITTEN);
		stats->transfer_ms += event_ms(state, EV_WRITTEN, EV_DONE);
		stats->bytes_from_device += 2 * sizeof(uint32_t) * total;
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
		return ensure_device_matches(state, tile->inner_end - tile->inner_begin,
									 2 * state->d_capacity, err);
	return true;
}

static bool
cuda_run_step(void *arg, const GjTile *tile, int64_t *outer_next,
			  GjMatches *matches, GjStats *stats, GjError *err)
{
	CudaJoinState *state = (CudaJoinState *) arg;
	int64_t		inner_rows = tile->inner_end - tile->inner_begin;
	int64_t		o_begin = *outer_next;
	StepPlan	plan;
	int64_t		k,
				total;

	if (state->double_buffered)
		swap_host_matches(state);
	matches->outer_rows = state->h_out_outer;
	matches->inner_rows = state->h_out_inner;
	matches->count = 0;
	if (inner_rows <= 0 || o_begin >= tile->outer_end)
	{
		*outer_next = tile->outer_end;
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

	/* the device buffer holds at least one outer row's matches */
	if (!ensure_device_matches(state, inner_rows, inner_rows, err))
		return false;
	if (state->input.algorithm != GJ_ALGO_NESTLOOP)
		return sorted_run_step(state, tile, outer_next, matches, stats, err);

	CUDA_TRY(cudaEventRecord(state->events[EV_START], state->stream),
			 "could not record a CUDA event");
	if (!upload_side(state, &state->outer, &state->input.outer,
					 tile->outer_begin, tile->outer_end, stats, err) ||
		!upload_side(state, &state->inner, &state->input.inner,
					 tile->inner_begin, tile->inner_end, stats, err))
		return false;
	CUDA_TRY(cudaEventRecord(state->events[EV_UPLOADED], state->stream),
			 "could not record a CUDA event");

	plan_step(state, tile, o_begin, &plan);
	if (!count_step(state, tile, &plan, o_begin, (uint64_t) state->d_capacity, err))
		return false;
	k = state->h_prefix[0];
	total = state->h_prefix[1];
	stats->bytes_from_device += 3 * sizeof(int64_t);
	stats->transfer_ms += event_ms(state, EV_START, EV_UPLOADED);
	stats->kernel_ms += event_ms(state, EV_UPLOADED, EV_COUNTED);
	state->density = (double) state->h_prefix[2] / ((double) plan.nrows * inner_rows);
	if (k < 1 || total > state->d_capacity)
	{
		/* cannot happen: one outer row has at most inner_rows <= d_capacity */
		err->code = GJ_ERR_DEVICE;
		snprintf(err->message, sizeof(err->message),
				 "count kernel returned an invalid prefix (%lld rows, %lld matches)",
				 (long long) k, (long long) total);
		return false;
	}

	if (total > 0)
	{
		if (!ensure_host_matches(state, total, err))
			return false;
		CUDA_TRY(cudaEventRecord(state->events[EV_WRITE], state->stream),
				 "could not record a CUDA event");
		if (!launch_pass(state, tile, &plan, o_begin, k, true, err))
			return false;
		CUDA_TRY(cudaEventRecord(state->events[EV_WRITTEN], state->stream),
				 "could not record a CUDA event");
		CUDA_TRY(cudaMemcpyAsync(state->h_out_outer, state->d_out_outer,
								 sizeof(uint32_t) * total, cudaMemcpyDeviceToHost,
								 state->stream),
				 "could not copy matches from the device");
		CUDA_TRY(cudaMemcpyAsync(state->h_out_inner, state->d_out_inner,
								 sizeof(uint32_t) * total, cudaMemcpyDeviceToHost,
								 state->stream),
				 "could not copy matches from the device");
		CUDA_TRY(cudaEventRecord(state->events[EV_DONE], state->stream),
				 "could not record a CUDA event");
		CUDA_TRY(cudaStreamSynchronize(state->stream), "write kernel failed");
		stats->kernel_ms += event_ms(state, EV_WRITE, EV_WRITTEN);
		stats->transfer_ms += event_ms(state, EV_WRITTEN, EV_DONE);
		stats->bytes_from_device += 2 * sizeof(uint32_t) * total;
	}

	stats->pairs_evaluated += k * inner_rows;
	stats->device_matches += total;
	matches->outer_rows = state->h_out_outer;
	matches->inner_rows = state->h_out_inner;
	matches->count = total;
	*outer_next = o_begin + k;
	/* cut short by the buffer: a larger one for the next step */
	if (k < plan.nrows)
		return ensure_device_matches(state, inner_rows, 2 * state->d_capacity, err);
	return true;
}

/*
 * The host side of the aggregate fast path: the sorted sides' row order and
 * the prefix arrays of the inner arguments (agg_runs.h), once per join.
 */
static bool
cuda_agg_prepare(CudaJoinState *state, const GjAggSpec *spec, GjError *err)
{
	int64_t		ni = state->input.inner_nrows;
	int64_t		no = state->input.outer_nrows;
	uint32_t   *inner_perm;
	cudaError_t rc;

	if (state->h_run_first == NULL)
		CUDA_TRY(cudaMallocHost((void **) &state->h_run_first, sizeof(uint32_t) * state->step_cap),
				 "could not allocate pinned host memory");
	if (state->h_run_width == NULL)
		CUDA_TRY(cudaMallocHost((void **) &state->h_run_width, sizeof(uint64_t) * state->step_cap),
				 "could not allocate pinned host memory");
	if (state->h_outer_perm == NULL)
		state->h_outer_perm = (uint32_t *) malloc(sizeof(uint32_t) * max64(no, 1));
	inner_perm = (uint32_t *) malloc(sizeof(uint32_t) * max64(ni, 1));
	if (inner_perm == NULL || state->h_outer_perm == NULL)
	{
		free(inner_perm);
		err->code = GJ_ERR_OUT_OF_MEMORY;
		snprintf(err->message, sizeof(err->message),
				 "could not allocate host memory for the row order of %lld x %lld rows",
				 (long long) no, (long long) ni);
		return false;
	}
	rc = cudaMemcpy(inner_perm, state->d_inner_perm, sizeof(uint32_t) * ni,
					cudaMemcpyDeviceToHost);
	if (rc == cudaSuccess)
		rc = cudaMemcpy(state->h_outer_perm, state->d_outer_perm, sizeof(uint32_t) * no,
						cudaMemcpyDeviceToHost);
	if (rc != cudaSuccess)
	{
		free(inner_perm);
		return cuda_fail(err, 0, "could not copy the sorted row order from the device", rc);
	}
	/* last: a join whose agg_runs exist is prepared */
	state->agg_runs = gj_agg_runs_create(spec, inner_perm, ni);
	free(inner_perm);
	if (state->agg_runs == NULL)
	{
		err->code = GJ_ERR_OUT_OF_MEMORY;
		snprintf(err->message, sizeof(err->message),
				 "could not allocate host memory for the prefix sums of %lld inner rows",
				 (long long) ni);
		return false;
	}
	return true;
}

/*
 * The aggregate fast path of a sort-merge join whose bounds are its whole
 * condition (agg_runs.h): the bounds kernel finds each outer row's run of
 * inner positions on the device, and only the runs come back, 12 bytes an
 * outer row and never a pair, to be reduced with the prefix arrays.  Outer
 * rows whose bounds the host must see (OUTER_ALL) return their pairs as
 * run_step does; any other join is run_step.  Over the same tiles these are
 * the cpu backend's steps (2^20 rows, AGG_HOST_WORK_PER_STEP positions
 * walked), so both give the same partials, unless the work bound cuts steps
 * (then float sums may differ in their last bits: another summation order).
 */
static bool
cuda_agg_step(void *arg, const GjTile *tile, int64_t *outer_next, const GjAggSpec *spec,
			  GjAggPartial *partial, GjMatches *matches, GjStats *stats, GjError *err)
{
	CudaJoinState *state = (CudaJoinState *) arg;
	int64_t		o_begin = *outer_next;
	int64_t		rows,
				j,
				work = 0;

	if (state->input.algorithm != GJ_ALGO_SORTMERGE || state->input.filter_needed ||
		tile->inner_end <= tile->inner_begin || o_begin >= tile->outer_end)
		return cuda_run_step(arg, tile, outer_next, matches, stats, err);
	if (o_begin < state->outer_all)
	{
		/* the OUTER_ALL rows of the tile, alone, as pairs */
		GjTile		all_rows = *tile;

		all_rows.outer_end = min64(tile->outer_end, state->outer_all);
		return cuda_run_step(arg, &all_rows, outer_next, matches, stats, err);
	}
	matches->count = 0;
	if (state->h_outer_status[o_begin] == OUTER_EMPTY)
	{
		/* empty rows are last: the rest of the tile has nothing */
		*outer_next = tile->outer_end;
		return true;
	}
	if (state->agg_runs == NULL && !cuda_agg_prepare(state, spec, err))
		return false;

	/*
	 * Wide runs that the host walks (float sums, min/max) stop a step after
	 * AGG_HOST_WORK_PER_STEP positions: then search only about as many rows
	 * as the last step reduced, not the step's whole 2^20 again.
	 */
	rows = min64(state->step_cap, tile->outer_end - o_begin);
	if (state->agg_rows_hint > 0)
		rows = min64(rows, max64(2 * state->agg_rows_hint, 1024));
	CUDA_TRY(cudaEventRecord(state->events[EV_UPLOADED], state->stream),
			 "could not record a CUDA event");
	if (!launch_bounds(state, tile, o_begin, rows, err))
		return false;
	CUDA_TRY(cudaEventRecord(state->events[EV_COUNTED], state->stream),
			 "could not record a CUDA event");
	CUDA_TRY(cudaMemcpyAsync(state->h_run_first, state->d_first, sizeof(uint32_t) * rows,
							 cudaMemcpyDeviceToHost, state->stream),
			 "could not copy the runs from the device");
	CUDA_TRY(cudaMemcpyAsync(state->h_run_width, state->d_cand, sizeof(uint64_t) * rows,
							 cudaMemcpyDeviceToHost, state->stream),
			 "could not copy the runs from the device");
	CUDA_TRY(cudaEventRecord(state->events[EV_DONE], state->stream),
			 "could not record a CUDA event");
	CUDA_TRY(cudaStreamSynchronize(state->stream), "the bounds kernel failed");
	stats->kernel_ms += event_ms(state, EV_UPLOADED, EV_COUNTED);
	stats->transfer_ms += event_ms(state, EV_COUNTED, EV_DONE);
	stats->bytes_from_device += (sizeof(uint32_t) + sizeof(uint64_t)) * rows;

	for (j = 0; j < rows; j++)
	{
		int64_t		p = o_begin + j;
		int64_t		first = state->h_run_first[j];
		int64_t		width = (int64_t) state->h_run_width[j];

		if (state->h_outer_status[p] == OUTER_EMPTY)
		{
			j = tile->outer_end - o_begin;
			break;
		}
		if (j > 0 && work >= AGG_HOST_WORK_PER_STEP)
		{
			state->agg_rows_hint = j;
			break;
		}
		work += gj_agg_runs_reduce(state->agg_runs, spec, partial, state->h_outer_perm[p],
								   first, first + width);
		stats->pairs_evaluated += width;
		stats->device_matches += width;
	}
	if (j >= rows)
		state->agg_rows_hint = 0;
	*outer_next = o_begin + j;
	return true;
}

/*
 * For test/kernels/kernel_test.c only, not part of the backend contract:
 * run the count pass over a whole tile, step by step as run_step plans it,
 * and return the number of matches and the device time of the counting.
 */
extern "C" bool
gj_cuda_bench_count(void *arg, const GjTile *tile, int64_t *nmatches,
					double *kernel_ms, GjError *err)
{
	CudaJoinState *state = (CudaJoinState *) arg;
	GjStats		stats;
	int64_t		o = tile->outer_begin;

	memset(&stats, 0, sizeof(stats));
	*nmatches = 0;
	*kernel_ms = 0;
	if (tile->inner_end <= tile->inner_begin)
		return true;
	if (!upload_side(state, &state->outer, &state->input.outer,
					 tile->outer_begin, tile->outer_end, &stats, err) ||
		!upload_side(state, &state->inner, &state->input.inner,
					 tile->inner_begin, tile->inner_end, &stats, err))
		return false;
	while (o < tile->outer_end)
	{
		StepPlan	plan;

		plan_step(state, tile, o, &plan);
		CUDA_TRY(cudaEventRecord(state->events[EV_UPLOADED], state->stream),
				 "could not record a CUDA event");
		if (!count_step(state, tile, &plan, o, UINT64_MAX, err))
			return false;
		*kernel_ms += event_ms(state, EV_UPLOADED, EV_COUNTED);
		*nmatches += state->h_prefix[2];
		o += plan.nrows;
	}
	return true;
}

extern "C" bool gj_cuda_compiled = true;

/*
 * Step overlap (backend.h).  The second pinned buffer starts empty and is
 * allocated by the first step that writes into it, so this cannot fail.
 */
static bool
cuda_double_buffer(void *arg)
{
	CudaJoinState *state = (CudaJoinState *) arg;

	state->double_buffered = true;
	return true;
}

extern "C" const GjBackend gj_cuda_backend = {
	"cuda",
	cuda_begin_join,
	cuda_run_step,
	cuda_end_join,
	(1u << GJ_ALGO_NESTLOOP) | (1u << GJ_ALGO_SORTMERGE) | (1u << GJ_ALGO_HASH),
	cuda_tile_can_match,
	cuda_agg_step,
	cuda_double_buffer
};

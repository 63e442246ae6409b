/*-------------------------------------------------------------------------
 *
 * cuda_backend.cu
 *	  The cuda backend: the nested-loop tile algorithm of GpuJoin on an
 *	  NVIDIA GPU, implementing the contract of backend.h.
 *
 * A step counts, then writes (Bellas & Gounaris, section 5.2):
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

#include "backend.h"

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
 * The pinned host match buffer grows on demand up to the match capacity:
 * the default budget gives a capacity of a billion pairs, and pinning 8 GB
 * of host memory for a join that returns a few rows would be a waste.
 */
#define HOST_MATCH_MIN_PAIRS ((int64_t) 1 << 20)

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
	int64_t		capacity;		/* pairs of the device match buffer */
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
	cudaFree(state->d_out_outer);
	cudaFree(state->d_out_inner);
	cudaFree(state->d_scratch);
	cudaFree(state->d_cub_temp);
	cudaFree(state->d_prefix);
	cudaFreeHost(state->h_prefix);
	cudaFreeHost(state->h_out_outer);
	cudaFreeHost(state->h_out_inner);
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
	CUDA_TRY(cudaMalloc((void **) &state->d_out_outer, sizeof(uint32_t) * state->capacity),
			 "could not allocate the device match buffer");
	CUDA_TRY(cudaMalloc((void **) &state->d_out_inner, sizeof(uint32_t) * state->capacity),
			 "could not allocate the device match buffer");
	CUDA_TRY(cudaMalloc((void **) &state->d_prefix, 3 * sizeof(int64_t)),
			 "could not allocate device memory");
	CUDA_TRY(cudaMallocHost((void **) &state->h_prefix, 3 * sizeof(int64_t)),
			 "could not allocate pinned host memory");
	return ensure_host_matches(state, min64(state->capacity, HOST_MATCH_MIN_PAIRS), err);
}

/* Mark the columns the program loads; false if one does not exist. */
static bool
mark_used_columns(CudaJoinState *state)
{
	const GjJoinInput *input = &state->input;

	for (int pc = 0; pc < state->program.ninstrs; pc++)
	{
		const GjInstr *in = &state->program.instrs[pc];
		bool		outer = (in->op == GJOP_LOAD_OUTER);
		int			ncols = outer ? input->outer.ncols : input->inner.ncols;

		if (in->op != GJOP_LOAD_OUTER && in->op != GJOP_LOAD_INNER)
			continue;
		if (in->arg < 0 || in->arg >= ncols ||
			(outer ? input->outer.values : input->inner.values)[in->arg] == NULL)
			return false;
		(outer ? &state->outer : &state->inner)->used[in->arg] = true;
	}
	return true;
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

	if (!begin_join_allocate(state, err))
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
		double		est = (double) state->capacity / (state->density * inner_rows) * 1.25;

		if (est < (double) rows)
			rows = max64((int64_t) est, min64(state->capacity / inner_rows, work));
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
	if (!count_step(state, tile, &plan, o_begin, (uint64_t) state->capacity, err))
		return false;
	k = state->h_prefix[0];
	total = state->h_prefix[1];
	stats->bytes_from_device += 3 * sizeof(int64_t);
	stats->transfer_ms += event_ms(state, EV_START, EV_UPLOADED);
	stats->kernel_ms += event_ms(state, EV_UPLOADED, EV_COUNTED);
	state->density = (double) state->h_prefix[2] / ((double) plan.nrows * inner_rows);
	if (k < 1 || total > state->capacity)
	{
		/* cannot happen: one outer row has at most inner_rows <= capacity */
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

/* sortmerge and hash have no kernels yet: the executor runs them on cpu */
extern "C" const GjBackend gj_cuda_backend = {
	"cuda",
	cuda_begin_join,
	cuda_run_step,
	cuda_end_join,
	(1u << GJ_ALGO_NESTLOOP),
	NULL,
	NULL
};

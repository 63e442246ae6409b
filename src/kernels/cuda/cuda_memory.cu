/*-------------------------------------------------------------------------
 *
 * cuda_memory.cu
 *	  The cuda backend's memory: the device and pinned host match buffers,
 *	  the per-step scratch and CUB's temporary storage, the key columns
 *	  of the resident tiles, and what the GPU service's process keeps of
 *	  freed memory (gj_cuda_pool_retain).
 *
 * Everything grows on demand and is released by end_join (cuda_backend.cu),
 * which the executor calls from a memory context callback, also on ERROR.
 * Growing the match buffers happens only between steps, once the last
 * step's matches are on the host.
 *
 *-------------------------------------------------------------------------
 */
/* no NVTX ranges (and no NVTX injection library) in a database server */
#define CCCL_DISABLE_NVTX
#include <cub/cub.cuh>

#include <pthread.h>

#include "cuda_internal.cuh"

/*
 * Pinned host memory, kept for the next join.  cudaMallocHost pins pages
 * (milliseconds for a match buffer) and cudaFreeHost synchronizes the whole
 * device: a join that ended freed its pinned buffers while another join's
 * kernels ran on the device, and waited for them.  In the GPU service, where
 * one process runs every join, and device partitions open a join per piece,
 * that serialized the joins.  Freed blocks now go to a small cache (at most
 * PINNED_CACHE_BLOCKS of them, PINNED_CACHE_BYTES in all, per process),
 * by power-of-two size, and a later allocation of the same size class takes
 * one; only what does not fit the cache is given back.  The blocks are
 * portable (every device of the process may copy from them).  A header in
 * front of each block holds its size.  The cache lives until the process
 * exits, when the driver frees it with the context.  Only the GPU service
 * caches (gj_cuda_pool_retain turns it on, as it keeps device memory): a
 * backend that runs cuda itself keeps no pinned memory between its joins,
 * since memory it pins no other process can have.
 */
#define PINNED_CACHE_BLOCKS		32
#define PINNED_CACHE_BYTES		((size_t) 256 << 20)
#define PINNED_HEADER			((size_t) 64)	/* keeps the block 64-byte aligned */
#define PINNED_MIN_BYTES		((size_t) 4096)

static pthread_mutex_t pinned_lock = PTHREAD_MUTEX_INITIALIZER;
static void *pinned_cache[PINNED_CACHE_BLOCKS];
static int	pinned_cached = 0;
static size_t pinned_cached_bytes = 0;
static bool pinned_cache_on = false;

static void
gj_pinned_cache_enable(void)
{
	pinned_cache_on = true;
}

static inline size_t
pinned_block_size(void *base)
{
	return *(size_t *) base;
}

cudaError_t
gj_pinned_alloc(void **ptr, size_t bytes)
{
	size_t		size = PINNED_MIN_BYTES;
	void	   *base = NULL;
	cudaError_t rc;

	*ptr = NULL;
	while (size < bytes + PINNED_HEADER)
		size *= 2;
	pthread_mutex_lock(&pinned_lock);
	for (int i = 0; i < pinned_cached; i++)
	{
		if (pinned_block_size(pinned_cache[i]) == size)
		{
			base = pinned_cache[i];
			pinned_cache[i] = pinned_cache[--pinned_cached];
			pinned_cached_bytes -= size;
			break;
		}
	}
	pthread_mutex_unlock(&pinned_lock);
	if (base == NULL)
	{
		if ((rc = cudaHostAlloc(&base, size, cudaHostAllocPortable)) != cudaSuccess)
			return rc;
		*(size_t *) base = size;
	}
	*ptr = (char *) base + PINNED_HEADER;
	return cudaSuccess;
}

void
gj_pinned_free(void *ptr)
{
	void	   *base;
	size_t		size;
	bool		kept = false;

	if (ptr == NULL)
		return;
	base = (char *) ptr - PINNED_HEADER;
	size = pinned_block_size(base);
	pthread_mutex_lock(&pinned_lock);
	if (pinned_cache_on && pinned_cached < PINNED_CACHE_BLOCKS &&
		pinned_cached_bytes + size <= PINNED_CACHE_BYTES)
	{
		pinned_cache[pinned_cached++] = base;
		pinned_cached_bytes += size;
		kept = true;
	}
	pthread_mutex_unlock(&pinned_lock);
	if (!kept)
		cudaFreeHost(base);
}


void
gj_cuda_free_side(CudaJoinState *state, DeviceSide *side)
{
	for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
	{
		gj_device_free(state, side->values[c]);
		gj_device_free(state, side->isnull[c]);
		side->values[c] = NULL;
		side->isnull[c] = NULL;
	}
	side->capacity = 0;
	side->begin = side->end = -1;
}

/* Free the device match buffers (and the packed one of filtered steps). */
void
gj_cuda_free_device_matches(CudaJoinState *state)
{
	gj_device_free(state, state->d_out_outer);
	gj_device_free(state, state->d_out_inner);
	gj_device_free(state, state->d_packed);
	state->d_out_outer = state->d_out_inner = NULL;
	state->d_packed = NULL;
	state->d_capacity = 0;
}

/* Grow the pinned host match buffer to at least npairs (<= capacity). */
bool
gj_cuda_ensure_host_matches(CudaJoinState *state, int64_t npairs, GjError *err)
{
	int64_t		size;

	if (npairs <= state->h_capacity)
		return true;
	size = gj_min64(gj_max64(npairs, 2 * state->h_capacity), state->capacity);
	gj_pinned_free(state->h_out_outer);
	gj_pinned_free(state->h_out_inner);
	state->h_out_outer = state->h_out_inner = NULL;
	state->h_capacity = 0;
	CUDA_TRY(gj_pinned_alloc((void **) &state->h_out_outer, sizeof(uint32_t) * size),
			 "could not allocate pinned host memory for matches");
	CUDA_TRY(gj_pinned_alloc((void **) &state->h_out_inner, sizeof(uint32_t) * size),
			 "could not allocate pinned host memory for matches");
	state->h_capacity = size;
	return true;
}

/*
 * Step overlap: write into the pinned buffer the executor is done with.  The
 * spare grows on its own, by gj_cuda_ensure_host_matches, once it is current.
 */
void
gj_cuda_swap_host_matches(CudaJoinState *state)
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

	rc = gj_device_alloc(state, (void **) &state->d_out_outer, sizeof(uint32_t) * size);
	if (rc == cudaSuccess)
		rc = gj_device_alloc(state, (void **) &state->d_out_inner, sizeof(uint32_t) * size);
	if (rc == cudaSuccess && state->packed_needed)
		rc = gj_device_alloc(state, (void **) &state->d_packed, sizeof(uint64_t) * size);
	if (rc != cudaSuccess)
	{
		gj_cuda_free_device_matches(state);
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
bool
gj_cuda_ensure_device_matches(CudaJoinState *state, int64_t need, int64_t want, GjError *err)
{
	int64_t		size;
	int64_t		fallback;

	need = gj_min64(need, state->capacity);
	want = gj_min64(gj_max64(want, need), state->capacity);
	if (want <= state->d_capacity)
		return true;
	size = gj_min64(gj_max64(gj_max64(want, 2 * state->d_capacity), DEVICE_MATCH_MIN_PAIRS),
					state->capacity);
	fallback = gj_max64(need, state->d_capacity);
	gj_cuda_free_device_matches(state);
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
cudaError_t
gj_cuda_exclusive_sum(void *temp, size_t &temp_bytes, uint64_t *data, int64_t n,
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
bool
gj_cuda_ensure_scratch(CudaJoinState *state, int64_t n, GjError *err)
{
	size_t		temp_bytes = 0;

	if (n > state->scratch_entries)
	{
		gj_device_free(state, state->d_scratch);
		state->d_scratch = NULL;
		state->scratch_entries = 0;
		CUDA_TRY(gj_device_alloc(state, (void **) &state->d_scratch, sizeof(uint64_t) * n),
				 "could not allocate device scratch memory");
		state->scratch_entries = n;
	}
	CUDA_TRY(gj_cuda_exclusive_sum(NULL, temp_bytes, state->d_scratch, n, state->stream),
			 "could not size the prefix sum");
	if (temp_bytes > state->cub_temp_bytes)
	{
		gj_device_free(state, state->d_cub_temp);
		state->d_cub_temp = NULL;
		state->cub_temp_bytes = 0;
		CUDA_TRY(gj_device_alloc(state, (void **) &state->d_cub_temp, temp_bytes),
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
bool
gj_cuda_upload_side(CudaJoinState *state, DeviceSide *side, const GjKeyColumns *host,
					int64_t begin, int64_t end, GjStats *stats, GjError *err)
{
	int64_t		rows = end - begin;

	if (side->begin == begin && side->end == end)
		return true;
	side->begin = side->end = -1;
	if (rows > side->capacity)
	{
		gj_cuda_free_side(state, side);
		for (int c = 0; c < host->ncols; c++)
		{
			if (!side->used[c])
				continue;
			CUDA_TRY(gj_device_alloc(state, (void **) &side->values[c], sizeof(int64_t) * rows),
					 "could not allocate device memory for key columns");
			if (host->isnull[c] != NULL)
				CUDA_TRY(gj_device_alloc(state, (void **) &side->isnull[c], rows),
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

/* Milliseconds between two events of a step (0 if they cannot tell). */
double
gj_cuda_event_ms(CudaJoinState *state, int from, int to)
{
	float		ms = 0;

	if (cudaEventElapsedTime(&ms, state->events[from], state->events[to]) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return 0;
	}
	return ms;
}

/*
 * The end of a step that wrote total > 0 matches to the device match
 * buffers, after EV_WRITE was recorded and the write pass launched: copy
 * the matches into the host buffers, wait for them, and account the write
 * pass's kernel time, the copy's transfer time and its bytes.  Shared by
 * the nested-loop and the sorted steps.
 */
bool
gj_cuda_download_matches(CudaJoinState *state, int64_t total, GjStats *stats, GjError *err)
{
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
	stats->kernel_ms += gj_cuda_event_ms(state, EV_WRITE, EV_WRITTEN);
	stats->transfer_ms += gj_cuda_event_ms(state, EV_WRITTEN, EV_DONE);
	stats->bytes_from_device += 2 * sizeof(uint32_t) * total;
	return true;
}

/* Grow CUB's temporary storage to at least bytes. */
bool
gj_cuda_ensure_cub_temp(CudaJoinState *state, size_t bytes, GjError *err)
{
	if (bytes <= state->cub_temp_bytes)
		return true;
	gj_device_free(state, state->d_cub_temp);
	state->d_cub_temp = NULL;
	state->cub_temp_bytes = 0;
	CUDA_TRY(gj_device_alloc(state, (void **) &state->d_cub_temp, bytes),
			 "could not allocate device scratch memory");
	state->cub_temp_bytes = bytes;
	return true;
}

/* The key columns of a side resident on the device, as the kernels see them. */
void
gj_cuda_device_columns(const DeviceSide *side, int ncols, GjKeyColumns *cols)
{
	memset(cols, 0, sizeof(GjKeyColumns));
	cols->ncols = ncols;
	for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
	{
		cols->values[c] = side->values[c];
		cols->isnull[c] = side->isnull[c];
	}
}

/*
 * The device's memory pool keeps what joins free, up to bytes, instead of
 * giving it back to the driver at the next synchronisation: the service
 * retains its budget, so a join's allocations are the pool's, not the
 * driver's, and keeps freed pinned host memory for its next joins.  A
 * backend keeps the default (nothing retained), since memory it keeps is
 * memory other processes cannot have.  Here, with the pinned cache it turns
 * on, so that cuda_memory.cu calls cuda_device.cu and not the other way.
 */
extern "C" void
gj_cuda_pool_retain(int device, int64_t bytes)
{
	cudaMemPool_t pool;
	uint64_t	threshold = bytes > 0 ? (uint64_t) bytes : 0;

	if (!gj_cuda_probe_device(device, NULL, NULL))
		return;
	/* pinned host memory too: one process runs every join */
	gj_pinned_cache_enable();
	if (cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess)
		(void) cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
	(void) cudaGetLastError();
}

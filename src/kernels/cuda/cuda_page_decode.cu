/*-------------------------------------------------------------------------
 *
 * cuda_page_decode.cu
 *	  Heap pages decoded on the device (issue 36): batches of raw heap
 *	  pages, staged in pinned host memory, copied to the device and decoded
 *	  there by the page decoder of ../shared/gj_page_decode.h, the code the
 *	  host's columnar heap reader runs, into device columns (per needed
 *	  attribute 8-byte values and null flags) that grow batch by batch: a
 *	  CudaPageColumns (cuda_internal.cuh).  The rows come in the order the
 *	  host's decoder gives them, page after page and in line pointer order
 *	  within a page, so that the device's columns and the host's match row
 *	  for row; the rows the decoder flags come back to the host as a list.
 *	  kernel_test checks it against the host's decoder and times it
 *	  ("kernel_test page-decode", "kernel_test bench-page-decode"); nothing
 *	  in the server calls it yet (the next step, below).
 *
 * What is decoded.  Every LP_NORMAL line pointer of every page of a batch
 * (gj_page_decode's GJ_PAGE_ALL_NORMAL): the pages the visibility map marks
 * all-visible, where heapgetpage itself checks nothing per tuple.  Which
 * pages those are is the caller's to decide; the kernel does not look at
 * PD_ALL_VISIBLE.  A by-reference attribute gets the offset of its value in
 * the batch (the page's index times the page size, plus the offset in the
 * page: the ref_base of gj_page_decode_tuple), where the host finds it in
 * its staged copy of the page.
 *
 * The kernels, one batch after the other on the decoder's stream:
 *
 *	pd_count_kernel: a warp per page counts its LP_NORMAL line pointers
 *	(reading only the page header and the line pointer array, about a
 *	ninth of the page), then a CUB exclusive sum over the pages gives each
 *	page its first row in the batch;
 *
 *	pd_decode_kernel: a warp per page walks its line pointers 32 at a time,
 *	a lane each; a ballot of the LP_NORMAL ones and a popcount of the
 *	lanes before give each lane its row, the page's first row plus the
 *	LP_NORMAL line pointers before, and the lane decodes its tuple with
 *	gj_page_decode_tuple straight into that row.  The lanes whose tuple is
 *	flagged append (row, page, line pointer) to the batch's list, one
 *	atomic per warp and group of 32;
 *
 *	pd_advance_kernel: one thread adds the batch's rows to the rows before
 *	(kept on the device, so that the next batch can be launched before
 *	this one's count is known on the host).
 *
 * Why a warp per page and not a thread per (page, line pointer) with a
 * compaction after: the rows must be compacted in line pointer order, and
 * within a warp that costs a ballot and a popcount per 32 line pointers;
 * a thread per line pointer would write every slot (291 a page, NULLs and
 * dead line pointers included) and a CUB select would read and write the
 * columns again, three times the output traffic of the kernel that
 * matters.  The lanes of a warp read 32 consecutive line pointers (128
 * bytes) and tuples that lie next to each other (a page's tuples lie from
 * pd_upper to its end in line pointer order, backwards), so the loads
 * coalesce.  The cost is the last group of a page (226 int4 tuples: 7
 * groups of 32 and 2 lanes of an eighth), about a tenth of the lanes
 * idle, and the count pass, which reads the line pointers once more.
 * The device's decode is far from the batch's copy over PCIe in time
 * (kernel_test bench-page-decode shows both), so neither is tuned further
 * here: staging a page in shared memory with 16-byte loads first, or one
 * pass with a decoupled look-back instead of count and scan, are the next
 * things to measure if the decode ever shows.
 *
 * Batches in flight.  Two batches may be in flight (PD_SLOTS): each has its
 * slot of device pages, flagged list and counters, and its copy runs on a
 * stream of its own (copy_stream), so that the copy of batch k + 1 overlaps
 * the decode of batch k; counting, decoding and growing the columns run in
 * order on the decoder's stream.  gj_cuda_page_columns_append enqueues a
 * batch and returns; gj_cuda_page_columns_wait waits for the oldest batch
 * and returns its rows and flagged list.  The caller keeps a batch's pinned
 * pages untouched until its wait.
 *
 * Memory.  The caller says how many rows a batch may have at most (its
 * pages' line pointers, gj_page_item_count: what PageGetMaxOffsetNumber
 * says, which the staging side has at hand), and the columns grow to hold
 * that before the batch is launched; the decode kernel writes no row of a
 * batch past its bound and no flagged entry past the list's, and a batch
 * that would have is an error at its wait (the bound is a promise the
 * kernel checks, so that a wrong one cannot write past the columns; the
 * host's counterpart, ../cpu/cpu_page_decode.c, checks the same).  The
 * columns come from the device's memory pool in the order of the
 * decoder's stream, so growing them (allocate, copy, free) needs no
 * synchronisation with the batches before; the slots' pages, read and
 * written on two streams, come from cudaMalloc.
 *
 * The next step: the heap reader hands pages to the backend.
 *
 *	1. The backend interface (backend.h) gets the decoder as optional
 *	   GjBackend members, begin_pages (spec, rows hint, device), append_pages
 *	   (pinned pages, count, rows bound), wait_pages (a batch's first row,
 *	   rows, flagged list) and end_pages, over CudaPageColumns here; the cpu
 *	   backend's are ../cpu/cpu_page_decode.c's, the same calls and results
 *	   on the host (kernel_test checks the two against each other), so that
 *	   CI runs the path.  GjJoinInput gets, per side, the decoded columns
 *	   (like prepared_inner): begin_join takes them as the side's resident
 *	   key columns (DeviceSide rows [0, nrows)), allocated, so that no tile
 *	   of that side uploads host key columns.  The GPU service's proxy
 *	   forwards the four calls, with the pages in the client's staging
 *	   chunk (service_staging.c), which the service has pinned.
 *
 *	2. heap_reader.c stages pages where it uses the page decoder today
 *	   (no scan quals, gpujoin.page_decoder on) and, in addition, the side's
 *	   host buffer has no returned columns (a count, or aggregates over key
 *	   columns: the issue's queries) and every key column is one whose
 *	   device value is its Datum's bits (int2, int4, int8, float8, date,
 *	   time, timestamp, timestamptz, bool: not float4, widened to a double,
 *	   oid, zero-extended, or a hashed or numeric key).  For each block, as
 *	   now, heapgetpage pins and prunes it, takes the predicate lock and
 *	   counts the scan; then, where PageIsAllVisible(page) &&
 *	   !snapshot->takenDuringRecovery (heapgetpage's own all_visible rule),
 *	   LockBuffer(rs_cbuf, BUFFER_LOCK_SHARE), memcpy of the BLCKSZ bytes
 *	   into the staging batch, LockBuffer(rs_cbuf, BUFFER_LOCK_UNLOCK), and
 *	   the rows bound grows by PageGetMaxOffsetNumber(page); counters and
 *	   t_tuples_returned by rs_ntuples, as now.  Any other page is decoded
 *	   on the host, as now.  A batch (GJ_PAGE_BATCH pages, a few MB) full,
 *	   append_pages; the reader stages the next one into its second pinned
 *	   buffer and waits for batch k - 1 before it reuses that one's.
 *
 *	3. Rows.  The device's rows are the side's first rows, [0, D), batch
 *	   after batch; the host-decoded rows follow, [D, D + H), uploaded
 *	   after them into the same device columns (the host buffer keeps only
 *	   those).  A flagged row's tuple is in its batch's staged page (kept
 *	   until the rows flagged have been read, after the batch's wait): the
 *	   host deforms it as read_tuple_slow does and
 *	   writes its key values into the device columns at its row (a scatter
 *	   of the flagged rows' values, once per batch); on a valid table that
 *	   happens only for a by-reference missing value, never to a key of the
 *	   types above.  Row numbers stay below GJ_MAX_SIDE_ROWS, and a side
 *	   that would spill (gpujoin.max_host_memory) keeps the host path.
 *
 *-------------------------------------------------------------------------
 */
#include "cuda_internal.cuh"
#include "kernels/shared/gj_page_decode.h"

/*
 * Tuning constants.  PD_BLOCK threads a block, 8 warps, 8 pages: the count
 * and decode kernels launch a warp per page and leave the balance to the
 * block scheduler (a page of tuples with NULLs takes the decoder's walk,
 * longer than one without).  The decode kernel takes 38 registers on sm_90
 * (nvcc 13.0, ptxas -v), 6 blocks an SM; held to 32 for 8 blocks
 * (__launch_bounds__), it spilled 44 bytes a thread, so it is left at 6.
 */
#define PD_BLOCK			256
#define PD_WARPS			(PD_BLOCK / 32)
#define PD_FULL_MASK		0xffffffffu

/* Batches in flight (see the header comment). */
#define PD_SLOTS			2

/*
 * Limits.  The kernel's arguments carry a pointer per column (the device
 * joins read at most GJ_MAX_KEY_COLS; kernel_test decodes more); a spec
 * walks at most MaxHeapAttributeNumber attributes, which shared memory
 * holds; a flagged entry packs the row (31 bits), the page of its batch (20
 * bits) and the line pointer (13 bits: a 32 kB page has fewer than 8192).
 */
#define PD_MAX_COLS			32
#define PD_MAX_ATTS			1600
#define PD_MAX_PAGE_SIZE	32768
#define PD_MAX_BATCH_PAGES	((int64_t) 1 << 20)

/* The counters of a batch, on the device and back on the host. */
enum
{
	PD_FIRST_ROW,				/* rows of the batches before */
	PD_ROWS,					/* the batch's rows */
	PD_FLAGGED,					/* entries of its flagged list */
	PD_OVERFLOW,				/* a row past the bound, an entry past the list */
	PD_NUM_COUNTERS
};

/* A batch's events, in this order (the first two on the copy stream). */
enum
{
	PD_EV_COPY_START,
	PD_EV_COPIED,
	PD_EV_DECODE_START,
	PD_EV_DONE,
	PD_NUM_EVENTS
};

/* One batch in flight: its pages on the device, flagged list, counters. */
typedef struct PdSlot
{
	uint8_t    *d_pages;
	int64_t		pages_cap;
	uint64_t   *d_flagged;		/* pd_pack_flagged entries */
	int64_t		flagged_cap;
	unsigned long long *d_counters; /* PD_NUM_COUNTERS */
	unsigned long long *h_counters; /* pinned */
	cudaEvent_t events[PD_NUM_EVENTS];
	int			nevents;
	bool		in_flight;
	int64_t		npages;
} PdSlot;

struct CudaPageColumns
{
	int			device;
	bool		failed;			/* an error left the columns unusable */
	GjPageSpec	spec;			/* attrs and cols point into d_spec */
	void	   *d_spec;
	size_t		shared_bytes;	/* the decode kernel's copy of the spec */

	cudaStream_t stream;		/* count, scan, decode, grow, in order */
	cudaStream_t copy_stream;	/* the batches' pages to the device */
	cudaStream_t return_stream; /* flagged lists back to the host */
	bool		have_streams;

	/* the columns: rows [0, nrows) are the batches waited for */
	uint64_t   *values[PD_MAX_COLS];
	bool	   *isnull[PD_MAX_COLS];
	uint8_t    *host;			/* 1: the row is flagged */
	int64_t		capacity;
	int64_t		reserved;		/* rows the batches appended may have */
	int64_t		nrows;
	unsigned long long *d_running;	/* rows of the batches decoded so far */

	/* the pages' rows, then first rows, of the batch being decoded */
	uint64_t   *d_page_rows;
	int64_t		page_rows_cap;
	void	   *d_cub_temp;
	size_t		cub_temp_bytes;

	PdSlot		slots[PD_SLOTS];
	int64_t		appended;		/* batch b uses slot b % PD_SLOTS */
	int64_t		waited;

	/* the last wait's flagged list */
	uint64_t   *h_packed;
	GjPageFlagged *h_flagged;
	int64_t		h_flagged_cap;
};

/* ---------------------------------------------------------------------
 * Kernels
 * ---------------------------------------------------------------------
 */

/* Arguments of the decode kernel. */
typedef struct PdDecodeArgs
{
	const uint8_t *pages;		/* the batch, npages * page_size bytes */
	int64_t		npages;
	const uint64_t *page_rows;	/* each page's first row in the batch */
	GjPageSpec	spec;			/* attrs and cols in device memory */
	uint64_t   *values[PD_MAX_COLS];
	bool	   *isnull[PD_MAX_COLS];
	uint8_t    *host;
	int64_t		rows_bound;		/* the batch's rows at most */
	const unsigned long long *running;	/* rows before the batch */
	uint64_t   *flagged;
	int64_t		flagged_cap;
	unsigned long long *counters;
} PdDecodeArgs;

__device__ __forceinline__ uint64_t
pd_pack_flagged(uint64_t row, uint64_t page, uint64_t lineoff)
{
	return (row << 33) | (page << 13) | lineoff;
}

static void
pd_unpack_flagged(uint64_t packed, GjPageFlagged *f)
{
	f->row = (int64_t) (packed >> 33);
	f->page = (int32_t) ((packed >> 13) & 0xFFFFF);
	f->lineoff = (int32_t) (packed & 0x1FFF);
}

/* The LP_NORMAL line pointers of each page of the batch. */
__global__ void __launch_bounds__(PD_BLOCK)
pd_count_kernel(const uint8_t *pages, int64_t npages, uint32_t page_size, uint64_t *page_rows)
{
	const unsigned lane = threadIdx.x & 31;
	const int64_t p = ((int64_t) blockIdx.x * blockDim.x + threadIdx.x) >> 5;
	const uint8_t *page = pages + p * page_size;
	unsigned	normal = 0;
	int			nlp;

	if (p >= npages)
		return;
	nlp = gj_page_item_count(page, page_size);
	for (int lineoff = lane + 1; lineoff <= nlp; lineoff += 32)
		normal += gj_page_lp_is_normal(gj_page_lp(page, lineoff));
	normal = __reduce_add_sync(PD_FULL_MASK, normal);
	if (lane == 0)
		page_rows[p] = normal;
}

/*
 * Decode every LP_NORMAL tuple of the batch into its row (see the header
 * comment).  The block first copies the spec and the column pointers into
 * shared memory, where the decoder reads them for every tuple.
 */
__global__ void __launch_bounds__(PD_BLOCK)
pd_decode_kernel(const __grid_constant__ PdDecodeArgs a)
{
	extern __shared__ uint64_t pd_shared[];
	const int	ncols = a.spec.ncols;
	GjPageColumn *cols = (GjPageColumn *) pd_shared;
	uint64_t  **values = (uint64_t **) (cols + ncols);
	bool	  **isnull = (bool **) (values + ncols);
	GjPageAttr *attrs = (GjPageAttr *) (isnull + ncols);
	const unsigned lane = threadIdx.x & 31;
	const unsigned lanes_before = (1u << lane) - 1;
	const uint32_t page_size = a.spec.page_size;
	const int64_t p = ((int64_t) blockIdx.x * blockDim.x + threadIdx.x) >> 5;
	const uint8_t *page = a.pages + p * page_size;
	GjPageSpec	spec = a.spec;
	GjPageOutput out;
	uint64_t	first_row;
	uint64_t	row;
	bool		overflow = false;
	int			nlp;

	for (int i = threadIdx.x; i < ncols; i += blockDim.x)
	{
		cols[i] = a.spec.cols[i];
		values[i] = a.values[i];
		isnull[i] = a.isnull[i];
	}
	for (int i = threadIdx.x; i < a.spec.walk_natts; i += blockDim.x)
		attrs[i] = a.spec.attrs[i];
	__syncthreads();
	spec.attrs = attrs;
	spec.cols = cols;
	out.values = values;
	out.isnull = isnull;
	out.host = a.host;
	out.lineoffs = NULL;
	out.data_offs = NULL;
	if (p >= a.npages)
		return;

	nlp = gj_page_item_count(page, page_size);
	first_row = *a.running;
	row = a.page_rows[p];		/* in the batch */
	for (int group = 0; group < nlp; group += 32)
	{
		const int	lineoff = group + (int) lane + 1;
		const bool	normal = lineoff <= nlp && gj_page_lp_is_normal(gj_page_lp(page, lineoff));
		const unsigned normals = __ballot_sync(PD_FULL_MASK, normal);
		const uint64_t in_batch = row + __popc(normals & lanes_before);
		const uint64_t r = first_row + in_batch;
		bool		flag = false;
		unsigned	flags;

		/* first_row + rows_bound is within the columns (append grew them) */
		if (normal && in_batch < (uint64_t) a.rows_bound)
			flag = gj_page_decode_tuple(page, (uint64_t) p * page_size, &spec, nlp, lineoff,
										&out, (uint32_t) r) == GJ_PAGE_HOST;
		else if (normal)
			overflow = true;

		/* the flagged lanes' entries, one atomic for the warp */
		flags = __ballot_sync(PD_FULL_MASK, flag);
		if (flags != 0)
		{
			const int	leader = __ffs(flags) - 1;
			unsigned long long at = 0;

			if ((int) lane == leader)
				at = atomicAdd(&a.counters[PD_FLAGGED], (unsigned long long) __popc(flags));
			at = __shfl_sync(PD_FULL_MASK, at, leader) + __popc(flags & lanes_before);
			if (flag && at < (unsigned long long) a.flagged_cap)
				a.flagged[at] = pd_pack_flagged(r, (uint64_t) p, (uint64_t) lineoff);
			else if (flag)
				overflow = true;
		}
		row += __popc(normals);
	}
	if (overflow)
		atomicOr(&a.counters[PD_OVERFLOW], 1ull);
}

/*
 * After a batch's decode: its first row and rows into its counters, and
 * the rows before the next batch.
 */
__global__ void
pd_advance_kernel(unsigned long long *running, const uint64_t *page_rows, int64_t npages,
				  unsigned long long *counters)
{
	counters[PD_FIRST_ROW] = *running;
	counters[PD_ROWS] = page_rows[npages];
	*running += page_rows[npages];
}

/* ---------------------------------------------------------------------
 * Memory
 * ---------------------------------------------------------------------
 */

/* Fail with a message of our own (no CUDA call failed). */
static bool
pd_fail(GjError *err, int code, const char *message)
{
	if (err != NULL)
	{
		err->code = code;
		snprintf(err->message, sizeof(err->message), "%s", message);
	}
	return false;
}

/*
 * Grow the columns to hold need rows, in the order of the stream: the
 * batches before are still writing into the old columns, whose rows
 * [0, reserved) are copied once they are done.
 */
static bool
pd_grow_columns(CudaPageColumns *pc, int64_t need, GjError *err)
{
	const int	ncols = pc->spec.ncols;
	uint64_t   *values[PD_MAX_COLS];
	bool	   *isnull[PD_MAX_COLS];
	uint8_t    *host = NULL;
	int64_t		cap;
	cudaError_t rc = cudaSuccess;

	if (need <= pc->capacity)
		return true;
	cap = gj_min64(gj_max64(need, 2 * pc->capacity), GJ_MAX_SIDE_ROWS);
	memset(values, 0, sizeof(values));
	memset(isnull, 0, sizeof(isnull));
	for (int k = 0; k < ncols && rc == cudaSuccess; k++)
	{
		rc = cudaMallocAsync((void **) &values[k], sizeof(uint64_t) * cap, pc->stream);
		if (rc == cudaSuccess)
			rc = cudaMallocAsync((void **) &isnull[k], cap, pc->stream);
	}
	if (rc == cudaSuccess)
		rc = cudaMallocAsync((void **) &host, cap, pc->stream);
	if (rc != cudaSuccess)
	{
		for (int k = 0; k < ncols; k++)
		{
			if (values[k] != NULL)
				cudaFreeAsync(values[k], pc->stream);
			if (isnull[k] != NULL)
				cudaFreeAsync(isnull[k], pc->stream);
		}
		if (host != NULL)
			cudaFreeAsync(host, pc->stream);
		return gj_cuda_fail(err, 0, "could not allocate device memory for decoded pages", rc);
	}
	for (int k = 0; k < ncols; k++)
	{
		if (pc->reserved > 0)
		{
			CUDA_TRY(cudaMemcpyAsync(values[k], pc->values[k], sizeof(uint64_t) * pc->reserved,
									 cudaMemcpyDeviceToDevice, pc->stream),
					 "could not copy decoded columns");
			CUDA_TRY(cudaMemcpyAsync(isnull[k], pc->isnull[k], pc->reserved,
									 cudaMemcpyDeviceToDevice, pc->stream),
					 "could not copy decoded columns");
		}
		if (pc->values[k] != NULL)
			cudaFreeAsync(pc->values[k], pc->stream);
		if (pc->isnull[k] != NULL)
			cudaFreeAsync(pc->isnull[k], pc->stream);
		pc->values[k] = values[k];
		pc->isnull[k] = isnull[k];
	}
	if (pc->reserved > 0)
		CUDA_TRY(cudaMemcpyAsync(host, pc->host, pc->reserved, cudaMemcpyDeviceToDevice,
								 pc->stream),
				 "could not copy decoded columns");
	if (pc->host != NULL)
		cudaFreeAsync(pc->host, pc->stream);
	pc->host = host;
	pc->capacity = cap;
	return true;
}

/* Grow what a batch of npages pages and bound rows needs in its slot. */
static bool
pd_grow_batch(CudaPageColumns *pc, PdSlot *slot, int64_t npages, int64_t bound, GjError *err)
{
	if (npages + 1 > pc->page_rows_cap)
	{
		int64_t		cap = gj_max64(npages + 1, 2 * pc->page_rows_cap);
		size_t		bytes = 0;

		if (pc->d_page_rows != NULL)
			cudaFreeAsync(pc->d_page_rows, pc->stream);
		pc->d_page_rows = NULL;
		pc->page_rows_cap = 0;
		CUDA_TRY(cudaMallocAsync((void **) &pc->d_page_rows, sizeof(uint64_t) * cap, pc->stream),
				 "could not allocate device memory for decoded pages");
		pc->page_rows_cap = cap;
		CUDA_TRY(gj_cuda_exclusive_sum(NULL, bytes, pc->d_page_rows, cap, pc->stream),
				 "could not size the pages' scan");
		if (bytes > pc->cub_temp_bytes)
		{
			if (pc->d_cub_temp != NULL)
				cudaFreeAsync(pc->d_cub_temp, pc->stream);
			pc->d_cub_temp = NULL;
			pc->cub_temp_bytes = 0;
			CUDA_TRY(cudaMallocAsync(&pc->d_cub_temp, bytes, pc->stream),
					 "could not allocate device memory for decoded pages");
			pc->cub_temp_bytes = bytes;
		}
	}

	/* the slot's batch was waited for: nothing uses its buffers */
	if (npages > slot->pages_cap)
	{
		cudaFree(slot->d_pages);
		slot->d_pages = NULL;
		slot->pages_cap = 0;
		CUDA_TRY(cudaMalloc((void **) &slot->d_pages, (size_t) npages * pc->spec.page_size),
				 "could not allocate device memory for pages");
		slot->pages_cap = npages;
	}
	if (bound > slot->flagged_cap)
	{
		int64_t		cap = gj_max64(bound, 2 * slot->flagged_cap);

		cudaFree(slot->d_flagged);
		slot->d_flagged = NULL;
		slot->flagged_cap = 0;
		CUDA_TRY(cudaMalloc((void **) &slot->d_flagged, sizeof(uint64_t) * cap),
				 "could not allocate device memory for decoded pages");
		slot->flagged_cap = cap;
	}
	return true;
}

/* ---------------------------------------------------------------------
 * The decoder
 * ---------------------------------------------------------------------
 */

/* Whether the decode kernel can decode by spec exactly as the host does. */
static bool
pd_spec_ok(const GjPageSpec *spec)
{
	int			prev = 0;

	if (spec->page_size < 64 || spec->page_size > PD_MAX_PAGE_SIZE ||
		spec->page_size % GJ_MAXALIGN != 0 || spec->ncols < 1 || spec->ncols > PD_MAX_COLS ||
		spec->walk_natts < 1 || spec->walk_natts > PD_MAX_ATTS)
		return false;
	for (int k = 0; k < spec->ncols; k++)
	{
		const GjPageColumn *col = &spec->cols[k];

		/* ascending attnos up to walk_natts, as gj_page_decode_tuple walks them */
		if (col->attno < prev || col->attno < 1 || col->attno > spec->walk_natts)
			return false;
		if (col->byval && col->attlen != 1 && col->attlen != 2 && col->attlen != 4 &&
			col->attlen != 8)
			return false;
		prev = col->attno;
	}
	return true;
}

static bool
pd_begin(CudaPageColumns *pc, const GjPageSpec *spec, int64_t rows_hint, GjError *err)
{
	size_t		attrs_bytes = sizeof(GjPageAttr) * spec->walk_natts;
	size_t		cols_off = (attrs_bytes + 7) & ~(size_t) 7;
	size_t		cols_bytes = sizeof(GjPageColumn) * spec->ncols;
	char	   *d_spec;

	CUDA_TRY(cudaSetDevice(pc->device), "could not select the CUDA device");
	CUDA_TRY(cudaStreamCreateWithFlags(&pc->stream, cudaStreamNonBlocking),
			 "could not create a CUDA stream");
	pc->have_streams = true;
	CUDA_TRY(cudaStreamCreateWithFlags(&pc->copy_stream, cudaStreamNonBlocking),
			 "could not create a CUDA stream");
	CUDA_TRY(cudaStreamCreateWithFlags(&pc->return_stream, cudaStreamNonBlocking),
			 "could not create a CUDA stream");

	/*
	 * The spec: the host's copy points into the device's.  Copies and
	 * memsets on the decoder's stream, not the legacy one, which our
	 * non-blocking streams do not wait for (a copy from pageable memory may
	 * return before it lands); begin waits for the stream at its end.
	 */
	CUDA_TRY(cudaMalloc(&pc->d_spec, cols_off + cols_bytes), "could not allocate device memory");
	d_spec = (char *) pc->d_spec;
	CUDA_TRY(cudaMemcpyAsync(d_spec, spec->attrs, attrs_bytes, cudaMemcpyHostToDevice,
							 pc->stream),
			 "could not copy the page spec to the device");
	CUDA_TRY(cudaMemcpyAsync(d_spec + cols_off, spec->cols, cols_bytes, cudaMemcpyHostToDevice,
							 pc->stream),
			 "could not copy the page spec to the device");
	pc->spec = *spec;
	pc->spec.attrs = (const GjPageAttr *) d_spec;
	pc->spec.cols = (const GjPageColumn *) (d_spec + cols_off);
	pc->shared_bytes = (sizeof(GjPageColumn) + 2 * sizeof(void *)) * spec->ncols + attrs_bytes;

	CUDA_TRY(cudaMalloc((void **) &pc->d_running, sizeof(unsigned long long)),
			 "could not allocate device memory");
	CUDA_TRY(cudaMemsetAsync(pc->d_running, 0, sizeof(unsigned long long), pc->stream),
			 "could not clear device memory");
	for (int s = 0; s < PD_SLOTS; s++)
	{
		PdSlot	   *slot = &pc->slots[s];

		CUDA_TRY(cudaMalloc((void **) &slot->d_counters,
							sizeof(unsigned long long) * PD_NUM_COUNTERS),
				 "could not allocate device memory");
		CUDA_TRY(gj_pinned_alloc((void **) &slot->h_counters,
								 sizeof(unsigned long long) * PD_NUM_COUNTERS),
				 "could not allocate pinned host memory");
		for (; slot->nevents < PD_NUM_EVENTS; slot->nevents++)
			CUDA_TRY(cudaEventCreate(&slot->events[slot->nevents]),
					 "could not create a CUDA event");
	}
	if (!pd_grow_columns(pc, gj_max64(rows_hint, 1), err))
		return false;
	CUDA_TRY(cudaStreamSynchronize(pc->stream), "could not allocate decoded columns");
	return true;
}

/*
 * A decoder of pages by spec on the device, its columns room for rows_hint
 * rows to begin with; NULL with *err set (GJ_ERR_UNAVAILABLE: a spec the
 * device does not decode, the caller decodes on the host).
 */
CudaPageColumns *
gj_cuda_page_columns_begin(int device, const GjPageSpec *spec, int64_t rows_hint, GjError *err)
{
	CudaPageColumns *pc;

	if (!pd_spec_ok(spec))
	{
		pd_fail(err, GJ_ERR_UNAVAILABLE, "the device's page decoder cannot decode these attributes");
		return NULL;
	}
	if (!gj_cuda_probe_device(device, NULL, err))
		return NULL;
	pc = (CudaPageColumns *) calloc(1, sizeof(CudaPageColumns));
	if (pc == NULL)
	{
		pd_fail(err, GJ_ERR_OUT_OF_MEMORY, "out of memory");
		return NULL;
	}
	pc->device = device;
	if (!pd_begin(pc, spec, rows_hint, err))
	{
		gj_cuda_page_columns_end(pc);
		return NULL;
	}
	return pc;
}

/*
 * Enqueue the decode of a batch of npages raw pages at pages (pinned host
 * memory, untouched until the batch's wait), whose line pointers number
 * rows_bound at most (-1: count them here).  At most two batches are in
 * flight: the third append waits for the first's wait.
 */
bool
gj_cuda_page_columns_append(CudaPageColumns *pc, const uint8_t *pages, int64_t npages,
							int64_t rows_bound, GjError *err)
{
	PdSlot	   *slot = &pc->slots[pc->appended % PD_SLOTS];
	const uint32_t page_size = pc->spec.page_size;
	PdDecodeArgs a;
	unsigned	grid;

	if (pc->failed)
		return pd_fail(err, GJ_ERR_DEVICE, "the page decoder failed before");
	if (slot->in_flight)
		return pd_fail(err, GJ_ERR_DEVICE, "two batches of pages are in flight already");
	if (npages < 0 || npages > PD_MAX_BATCH_PAGES)
		return pd_fail(err, GJ_ERR_DEVICE, "a batch of pages too large for the device");
	CUDA_TRY(cudaSetDevice(pc->device), "could not select the CUDA device");

	/* the batch's pages' line pointers bound its rows */
	if (rows_bound < 0)
	{
		rows_bound = 0;
		for (int64_t p = 0; p < npages; p++)
			rows_bound += gj_page_item_count(pages + p * page_size, page_size);
	}
	if (pc->reserved + rows_bound > GJ_MAX_SIDE_ROWS)
		return pd_fail(err, GJ_ERR_OVER_BUDGET, "too many rows of pages for one side");
	if (!pd_grow_columns(pc, pc->reserved + rows_bound, err) ||
		!pd_grow_batch(pc, slot, npages, rows_bound, err))
	{
		pc->failed = true;
		return false;
	}
	pc->failed = true;			/* until the batch is enqueued */

	CUDA_TRY(cudaMemsetAsync(slot->d_counters, 0, sizeof(unsigned long long) * PD_NUM_COUNTERS,
							 pc->stream),
			 "could not clear device memory");
	CUDA_TRY(cudaMemsetAsync(pc->d_page_rows + npages, 0, sizeof(uint64_t), pc->stream),
			 "could not clear device memory");
	CUDA_TRY(cudaEventRecord(slot->events[PD_EV_COPY_START], pc->copy_stream),
			 "could not record a CUDA event");
	if (npages > 0)
		CUDA_TRY(cudaMemcpyAsync(slot->d_pages, pages, (size_t) npages * page_size,
								 cudaMemcpyHostToDevice, pc->copy_stream),
				 "could not copy pages to the device");
	CUDA_TRY(cudaEventRecord(slot->events[PD_EV_COPIED], pc->copy_stream),
			 "could not record a CUDA event");
	CUDA_TRY(cudaStreamWaitEvent(pc->stream, slot->events[PD_EV_COPIED], 0),
			 "could not order the decode after the copy");
	CUDA_TRY(cudaEventRecord(slot->events[PD_EV_DECODE_START], pc->stream),
			 "could not record a CUDA event");
	if (npages > 0)
	{
		grid = gj_cuda_grid_for(npages, PD_WARPS);
		pd_count_kernel<<<grid, PD_BLOCK, 0, pc->stream>>>(slot->d_pages, npages, page_size,
															pc->d_page_rows);
		CUDA_LAUNCHED("the page count kernel");
		CUDA_TRY(gj_cuda_exclusive_sum(pc->d_cub_temp, pc->cub_temp_bytes, pc->d_page_rows,
									   npages + 1, pc->stream),
				 "could not scan the pages' rows");

		memset(&a, 0, sizeof(a));
		a.pages = slot->d_pages;
		a.npages = npages;
		a.page_rows = pc->d_page_rows;
		a.spec = pc->spec;
		for (int k = 0; k < pc->spec.ncols; k++)
		{
			a.values[k] = pc->values[k];
			a.isnull[k] = pc->isnull[k];
		}
		a.host = pc->host;
		a.rows_bound = rows_bound;
		a.running = pc->d_running;
		a.flagged = slot->d_flagged;
		a.flagged_cap = slot->flagged_cap;
		a.counters = slot->d_counters;
		pd_decode_kernel<<<grid, PD_BLOCK, pc->shared_bytes, pc->stream>>>(a);
		CUDA_LAUNCHED("the page decode kernel");
	}
	pd_advance_kernel<<<1, 1, 0, pc->stream>>>(pc->d_running, pc->d_page_rows, npages,
												slot->d_counters);
	CUDA_LAUNCHED("the page advance kernel");
	CUDA_TRY(cudaMemcpyAsync(slot->h_counters, slot->d_counters,
							 sizeof(unsigned long long) * PD_NUM_COUNTERS,
							 cudaMemcpyDeviceToHost, pc->stream),
			 "could not copy counters from the device");
	CUDA_TRY(cudaEventRecord(slot->events[PD_EV_DONE], pc->stream),
			 "could not record a CUDA event");

	pc->failed = false;
	slot->in_flight = true;
	slot->npages = npages;
	pc->reserved += rows_bound;
	pc->appended++;
	return true;
}

static int
pd_cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a;
	uint64_t	y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

/* Elapsed milliseconds between two events (0 if they cannot tell). */
static double
pd_event_ms(cudaEvent_t from, cudaEvent_t to)
{
	float		ms = 0;

	if (cudaEventElapsedTime(&ms, from, to) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return 0;
	}
	return ms;
}

static bool
pd_wait(CudaPageColumns *pc, PdSlot *slot, GjPageBatch *batch, GjStats *stats, GjError *err)
{
	const unsigned long long *counters = slot->h_counters;
	int64_t		nflagged;

	CUDA_TRY(cudaSetDevice(pc->device), "could not select the CUDA device");
	CUDA_TRY(cudaEventSynchronize(slot->events[PD_EV_DONE]), "could not decode pages");
	if (counters[PD_OVERFLOW] != 0)
		return pd_fail(err, GJ_ERR_DEVICE, "a batch of pages had more rows than its bound");
	if ((int64_t) counters[PD_FIRST_ROW] != pc->nrows)
		return pd_fail(err, GJ_ERR_DEVICE, "a batch of pages decoded out of order");
	nflagged = (int64_t) counters[PD_FLAGGED];
	if (nflagged > pc->h_flagged_cap)
	{
		int64_t		cap = gj_max64(nflagged, 2 * pc->h_flagged_cap);

		free(pc->h_packed);
		free(pc->h_flagged);
		pc->h_flagged_cap = 0;
		pc->h_packed = (uint64_t *) malloc(sizeof(uint64_t) * cap);
		pc->h_flagged = (GjPageFlagged *) malloc(sizeof(GjPageFlagged) * cap);
		if (pc->h_packed == NULL || pc->h_flagged == NULL)
			return pd_fail(err, GJ_ERR_OUT_OF_MEMORY, "out of memory");
		pc->h_flagged_cap = cap;
	}
	if (nflagged > 0)
	{
		/* in the order the warps took their places: sorted, it is by row */
		CUDA_TRY(cudaMemcpyAsync(pc->h_packed, slot->d_flagged, sizeof(uint64_t) * nflagged,
								 cudaMemcpyDeviceToHost, pc->return_stream),
				 "could not copy flagged rows from the device");
		CUDA_TRY(cudaStreamSynchronize(pc->return_stream),
				 "could not copy flagged rows from the device");
		qsort(pc->h_packed, nflagged, sizeof(uint64_t), pd_cmp_u64);
		for (int64_t i = 0; i < nflagged; i++)
			pd_unpack_flagged(pc->h_packed[i], &pc->h_flagged[i]);
	}
	batch->first_row = pc->nrows;
	batch->nrows = (int64_t) counters[PD_ROWS];
	batch->nflagged = nflagged;
	batch->flagged = pc->h_flagged;
	pc->nrows += batch->nrows;
	if (stats != NULL)
	{
		stats->transfer_ms += pd_event_ms(slot->events[PD_EV_COPY_START],
										  slot->events[PD_EV_COPIED]);
		stats->kernel_ms += pd_event_ms(slot->events[PD_EV_DECODE_START],
										slot->events[PD_EV_DONE]);
		stats->bytes_to_device += slot->npages * pc->spec.page_size;
		stats->bytes_from_device += sizeof(unsigned long long) * PD_NUM_COUNTERS +
			sizeof(uint64_t) * nflagged;
	}
	return true;
}

/*
 * Wait for the oldest batch in flight: its rows are [first_row, first_row +
 * nrows) of the columns, and its flagged rows, ascending, are in
 * batch->flagged until the next wait.  Adds the batch's copy and decode
 * times to *stats (if not NULL).
 */
bool
gj_cuda_page_columns_wait(CudaPageColumns *pc, GjPageBatch *batch, GjStats *stats,
						  GjError *err)
{
	PdSlot	   *slot = &pc->slots[pc->waited % PD_SLOTS];
	bool		ok;

	memset(batch, 0, sizeof(GjPageBatch));
	if (pc->failed)
		return pd_fail(err, GJ_ERR_DEVICE, "the page decoder failed before");
	if (!slot->in_flight)
		return pd_fail(err, GJ_ERR_DEVICE, "no batch of pages in flight");
	ok = pd_wait(pc, slot, batch, stats, err);
	slot->in_flight = false;
	pc->waited++;
	if (!ok)
		pc->failed = true;
	return ok;
}

/* Rows of the batches waited for, and column k of them on the device. */
int64_t
gj_cuda_page_columns_rows(const CudaPageColumns *pc)
{
	return pc->nrows;
}

void
gj_cuda_page_columns_column(const CudaPageColumns *pc, int k, const int64_t **values,
							const uint8_t **isnull)
{
	*values = (const int64_t *) pc->values[k];
	*isnull = (const uint8_t *) pc->isnull[k];
}

/* Free everything; safe on a decoder begin left half made, once. */
void
gj_cuda_page_columns_end(CudaPageColumns *pc)
{
	if (pc == NULL)
		return;
	(void) cudaSetDevice(pc->device);
	if (pc->have_streams)
	{
		cudaStreamSynchronize(pc->copy_stream);
		cudaStreamSynchronize(pc->return_stream);
		for (int k = 0; k < PD_MAX_COLS; k++)
		{
			if (pc->values[k] != NULL)
				cudaFreeAsync(pc->values[k], pc->stream);
			if (pc->isnull[k] != NULL)
				cudaFreeAsync(pc->isnull[k], pc->stream);
		}
		if (pc->host != NULL)
			cudaFreeAsync(pc->host, pc->stream);
		if (pc->d_page_rows != NULL)
			cudaFreeAsync(pc->d_page_rows, pc->stream);
		if (pc->d_cub_temp != NULL)
			cudaFreeAsync(pc->d_cub_temp, pc->stream);
		cudaStreamSynchronize(pc->stream);
	}
	for (int s = 0; s < PD_SLOTS; s++)
	{
		PdSlot	   *slot = &pc->slots[s];

		cudaFree(slot->d_pages);
		cudaFree(slot->d_flagged);
		cudaFree(slot->d_counters);
		gj_pinned_free(slot->h_counters);
		for (int i = 0; i < slot->nevents; i++)
			cudaEventDestroy(slot->events[i]);
	}
	cudaFree(pc->d_running);
	cudaFree(pc->d_spec);
	if (pc->have_streams)
	{
		cudaStreamDestroy(pc->stream);
		cudaStreamDestroy(pc->copy_stream);
		cudaStreamDestroy(pc->return_stream);
	}
	(void) cudaGetLastError();
	free(pc->h_packed);
	free(pc->h_flagged);
	free(pc);
}

/* ---------------------------------------------------------------------
 * Test hooks, for test/kernels/kt_page_decode.c only (which declares them
 * itself; cuda_stub.c has them without nvcc): the decoder on device 0, and
 * its columns copied back.
 * ---------------------------------------------------------------------
 */

extern "C" void *
gj_cuda_test_page_begin(const GjPageSpec *spec, int64_t rows_hint, GjError *err)
{
	return gj_cuda_page_columns_begin(0, spec, rows_hint, err);
}

extern "C" bool
gj_cuda_test_page_append(void *pc, const uint8_t *pages, int64_t npages, int64_t rows_bound,
						 GjError *err)
{
	return gj_cuda_page_columns_append((CudaPageColumns *) pc, pages, npages, rows_bound, err);
}

extern "C" bool
gj_cuda_test_page_wait(void *pc, GjPageBatch *batch, GjStats *stats, GjError *err)
{
	return gj_cuda_page_columns_wait((CudaPageColumns *) pc, batch, stats, err);
}

/* Rows [0, rows) of every column and of the flags, once no batch is in flight. */
extern "C" bool
gj_cuda_test_page_download(void *arg, uint64_t *const *values, bool *const *isnull,
						   uint8_t *host, GjError *err)
{
	CudaPageColumns *pc = (CudaPageColumns *) arg;
	int64_t		rows = pc->nrows;

	CUDA_TRY(cudaSetDevice(pc->device), "could not select the CUDA device");
	CUDA_TRY(cudaStreamSynchronize(pc->stream), "could not decode pages");
	for (int k = 0; k < pc->spec.ncols && rows > 0; k++)
	{
		CUDA_TRY(cudaMemcpy(values[k], pc->values[k], sizeof(uint64_t) * rows,
							cudaMemcpyDeviceToHost),
				 "could not copy decoded columns from the device");
		CUDA_TRY(cudaMemcpy(isnull[k], pc->isnull[k], rows, cudaMemcpyDeviceToHost),
				 "could not copy decoded columns from the device");
	}
	if (rows > 0)
		CUDA_TRY(cudaMemcpy(host, pc->host, rows, cudaMemcpyDeviceToHost),
				 "could not copy decoded columns from the device");
	return true;
}

/* Start the columns again at row 0 (the bench's repetitions), nothing in flight. */
extern "C" bool
gj_cuda_test_page_reset(void *arg, GjError *err)
{
	CudaPageColumns *pc = (CudaPageColumns *) arg;

	CUDA_TRY(cudaSetDevice(pc->device), "could not select the CUDA device");
	CUDA_TRY(cudaMemsetAsync(pc->d_running, 0, sizeof(unsigned long long), pc->stream),
			 "could not clear device memory");
	CUDA_TRY(cudaStreamSynchronize(pc->stream), "could not decode pages");
	pc->nrows = 0;
	pc->reserved = 0;
	return true;
}

extern "C" void
gj_cuda_test_page_end(void *pc)
{
	gj_cuda_page_columns_end((CudaPageColumns *) pc);
}

/*-------------------------------------------------------------------------
 *
 * cuda_program_count.cu
 *	  Per outer row, the number of inner rows of a nested-loop tile for
 *	  which the device program is TRUE, and the number of pairs the host
 *	  must recheck, on the device, without writing a pair: the row-count
 *	  path of the aggregate step for any program (cuda_rowcount.cu counts
 *	  compare conjunctions, faster), as cpu_program_count.c does on the
 *	  host.
 *
 * pc_count_kernel: a 2-D grid, blockIdx.x over blocks of outer rows,
 * blockIdx.y over slices of the inner tile.  The block stages a chunk of
 * the inner columns the program loads in shared memory; each warp then
 * takes PC_ROWS_PER_WARP outer rows, one at a time, its lanes over the
 * chunk's rows:
 *
 *	- the program's leading compares (gj_program_leading_compares) are
 *	  tested first on order keys, the outer row's key the same in every
 *	  lane;
 *	- the lanes whose pair passes write its chunk row into a queue of the
 *	  warp (a ballot gives each its place), and each time 32 are queued the
 *	  whole warp runs the rest of the program (gj_program_eval_from) on
 *	  them at once, so that no lane idles through the interpreter while
 *	  another evaluates;
 *	- each lane adds its TRUE results to the row's count in a register; at
 *	  the slice's end the warp sums them and lane 0 adds the sum to the
 *	  row's count (or, for the total only, to the block's).
 *
 * The pairs the interpreter sends to the host are counted alike; the
 * caller runs a step that has any as pairs.
 *
 * Where the program is compiled to GPU code (cuda_compile.cu), the step
 * runs compiled_count.cuh's gjc_count_kernel instead, the same counts:
 * several outer rows a thread, the whole program inline for every pair.
 *
 *-------------------------------------------------------------------------
 */
#include "cuda_internal.cuh"
#include "kernels/cuda/compiled_count.cuh"

/*
 * Tuning constants.  PC_BLOCK threads a block; PC_CHUNK inner rows staged
 * at a time (36 kB for eight columns, 9 kB for the usual two), each warp
 * passing PC_ROWS_PER_WARP outer rows over each chunk, so a chunk staged
 * serves 64 outer rows.
 */
#define PC_BLOCK			256
#define PC_WARPS			(PC_BLOCK / 32)
#define PC_CHUNK			512
#define PC_ROWS_PER_WARP	8
#define PC_ROWS_PER_BLOCK	(PC_WARPS * PC_ROWS_PER_WARP)

/* Arguments of pc_count_kernel. */
typedef struct PcArgs
{
	GjProgram	program;
	GjLeadingCompares lead;
	GjKeyColumns outer;			/* device columns; row r at [r - outer_base] */
	GjKeyColumns inner;			/* the tile's inner rows from [0] */
	int32_t		slot[GJ_MAX_KEY_COLS];	/* inner column -> staged slot, -1 */
	int32_t		nslots;
	int64_t		outer_base;
	int64_t		o_begin;		/* first outer row counted */
	int64_t		nrows;
	int64_t		ninner;
	int64_t		slice_len;		/* a multiple of PC_CHUNK */
	unsigned long long *counts; /* per outer row, zeroed; NULL: total only */
	unsigned long long *total;	/* zeroed */
	unsigned long long *host;	/* zeroed */
} PcArgs;

/* Does "x op y" hold on order keys? (op is the same in every lane) */
__device__ __forceinline__ bool
pc_holds(int op, int64_t x, int64_t y)
{
	return gj_cmp_holds(op, gj_int_cmp(x, y));
}

/* Do the leading compares hold for chunk row c, given the row's keys x? */
__device__ __forceinline__ bool
pc_prefilter(const PcArgs &a, const GjKeyColumns &chunk, const int64_t *x, int c)
{
	bool		hit = true;

#pragma unroll
	for (int k = 0; k < GJ_MAX_CONJUNCTS; k++)
	{
		if (k < a.lead.conj.n)
		{
			const GjSimpleCompare *sc = &a.lead.conj.cmp[k];
			int64_t		y;

			hit = hit && gj_column_key(&chunk, sc->inner_col, sc->cls, c, &y) &&
				pc_holds(sc->op, x[k], y);
		}
	}
	return hit;
}

/* Run the rest of the program on one queued pair into the lane's counts. */
__device__ __forceinline__ void
pc_eval(const PcArgs &a, const GjKeyColumns &chunk, int64_t orow, int c,
		uint32_t *count, uint32_t *host)
{
	int			r = gj_program_eval_from(a.program.instrs, a.program.ninstrs, &a.lead,
										 &a.outer, orow - a.outer_base, &chunk, c);

	*count += r == GJ_RESULT_TRUE;
	*host += r == GJ_RESULT_RECHECK;
}

__global__ void __launch_bounds__(PC_BLOCK)
pc_count_kernel(const __grid_constant__ PcArgs a)
{
	extern __shared__ int64_t pc_shared[];
	__shared__ int16_t queue[PC_WARPS][64];
	__shared__ unsigned long long row_count[PC_WARPS][PC_ROWS_PER_WARP];
	__shared__ unsigned long long row_host[PC_WARPS][PC_ROWS_PER_WARP];
	__shared__ unsigned long long block_total[2];
	int64_t    *svalues = pc_shared;
	uint8_t    *snull = (uint8_t *) (pc_shared + a.nslots * PC_CHUNK);
	int			lane = threadIdx.x & 31;
	int			warp = threadIdx.x >> 5;
	unsigned	below = (1u << lane) - 1;
	int64_t		first = (int64_t) blockIdx.x * PC_ROWS_PER_BLOCK + warp * PC_ROWS_PER_WARP;
	int64_t		slice_begin = (int64_t) blockIdx.y * a.slice_len;
	int64_t		slice_end = gj_min64(slice_begin + a.slice_len, a.ninner);
	GjKeyColumns chunk;

	chunk.ncols = a.inner.ncols;
	for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
	{
		int			s = a.slot[c];

		chunk.values[c] = s >= 0 ? svalues + s * PC_CHUNK : NULL;
		chunk.isnull[c] = s >= 0 && a.inner.isnull[c] != NULL ? snull + s * PC_CHUNK : NULL;
	}
	if (lane < PC_ROWS_PER_WARP)
		row_count[warp][lane] = row_host[warp][lane] = 0;
	if (threadIdx.x < 2)
		block_total[threadIdx.x] = 0;

	for (int64_t ib = slice_begin; ib < slice_end; ib += PC_CHUNK)
	{
		int			n = (int) gj_min64(PC_CHUNK, slice_end - ib);

		__syncthreads();
		for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
		{
			int			s = a.slot[c];

			if (s < 0)
				continue;
			for (int t = threadIdx.x; t < n; t += PC_BLOCK)
			{
				svalues[s * PC_CHUNK + t] = a.inner.values[c][ib + t];
				if (a.inner.isnull[c] != NULL)
					snull[s * PC_CHUNK + t] = a.inner.isnull[c][ib + t];
			}
		}
		__syncthreads();

#pragma unroll 1
		for (int r = 0; r < PC_ROWS_PER_WARP; r++)
		{
			int64_t		j = first + r;
			int64_t		orow = a.o_begin + j;
			int64_t		x[GJ_MAX_CONJUNCTS];
			bool		live = j < a.nrows;
			int			queued = 0;
			uint32_t	count = 0,
						host = 0;

			/* an outer row with a NULL compare key passes nothing */
			for (int k = 0; live && k < a.lead.conj.n; k++)
				live = gj_column_key(&a.outer, a.lead.conj.cmp[k].outer_col,
									 a.lead.conj.cmp[k].cls, orow - a.outer_base, &x[k]);
			if (!live)
				continue;		/* the same in every lane */
			if (a.lead.conj.n == 0)
			{
				for (int c = lane; c < n; c += 32)
					pc_eval(a, chunk, orow, c, &count, &host);
			}
			else
			{
				for (int base = 0; base < n; base += 32)
				{
					bool		pass = base + lane < n &&
						pc_prefilter(a, chunk, x, base + lane);
					unsigned	mask = __ballot_sync(0xffffffffu, pass);

					if (pass)
						queue[warp][queued + __popc(mask & below)] = (int16_t) (base + lane);
					queued += __popc(mask);
					if (queued >= 32)
					{
						__syncwarp();
						pc_eval(a, chunk, orow, queue[warp][lane], &count, &host);
						__syncwarp();
						if (lane < queued - 32)
							queue[warp][lane] = queue[warp][lane + 32];
						__syncwarp();
						queued -= 32;
					}
				}
				__syncwarp();
				if (lane < queued)
					pc_eval(a, chunk, orow, queue[warp][lane], &count, &host);
				__syncwarp();
			}
			for (int off = 16; off > 0; off /= 2)
			{
				count += __shfl_down_sync(0xffffffffu, count, off);
				host += __shfl_down_sync(0xffffffffu, host, off);
			}
			if (lane == 0)
			{
				row_count[warp][r] += count;
				row_host[warp][r] += host;
			}
		}
	}

	/* the slice's counts: per row, and the block's total */
	__syncwarp();
	if (lane == 0)
	{
		unsigned long long wtotal = 0,
					whost = 0;

		for (int r = 0; r < PC_ROWS_PER_WARP; r++)
		{
			if (a.counts != NULL && row_count[warp][r] > 0)
				atomicAdd(&a.counts[first + r], row_count[warp][r]);
			wtotal += row_count[warp][r];
			whost += row_host[warp][r];
		}
		atomicAdd(&block_total[0], wtotal);
		atomicAdd(&block_total[1], whost);
	}
	__syncthreads();
	if (threadIdx.x == 0)
	{
		if (block_total[0] > 0)
			atomicAdd(a.total, block_total[0]);
		if (block_total[1] > 0)
			atomicAdd(a.host, block_total[1]);
	}
}

/*
 * Into how many slices to split the inner tile: enough that the grid is
 * TARGET_BLOCKS_PER_SM rounds of resident blocks or more, whole chunks
 * each, at most 65535 (the grid's y limit).
 */
static int64_t
pc_slices(const CudaJoinState *state, int64_t oblocks, int64_t ninner, int resident)
{
	int64_t		chunks = gj_ceil_div(ninner, PC_CHUNK);
	int64_t		want = gj_ceil_div((int64_t) state->sm_count * gj_max64(resident, 1) *
								   TARGET_BLOCKS_PER_SM, oblocks);

	return gj_max64(gj_min64(gj_min64(want, chunks), 65535), 1);
}

/*
 * Pairs an aggregate step of the program count path takes at most: as
 * many as the interpreter counts in well under a second
 * (PROGRAM_COUNT_PAIRS_PER_STEP), 16 times that compiled (about 20 ms at
 * 3e12 pairs/s).  Compiles the program, or finds it compiled, first.
 */
int64_t
gj_cuda_program_count_step_pairs(CudaJoinState *state, GjStats *stats)
{
	return gj_cuda_program_kernels(state, GJ_COMPILED_COUNT, stats, -1)->kernel != NULL ?
		PROGRAM_COUNT_PAIRS_PER_STEP * 16 : PROGRAM_COUNT_PAIRS_PER_STEP;
}

/*
 * Into how many slices of whole chunks to split the inner tile for
 * gjc_count_kernel: the fewest that make the grid GJC_MIN_ROUNDS rounds of
 * resident blocks, at most 65535 (the grid's y limit).
 */
#define GJC_MIN_ROUNDS		16

static int64_t
gjc_slices(int64_t oblocks, int64_t ninner, int64_t resident)
{
	int64_t		chunks = gj_ceil_div(ninner, GJC_CHUNK);

	return gj_max64(gj_min64(gj_min64(gj_ceil_div(GJC_MIN_ROUNDS * resident, oblocks), chunks),
							 65535), 1);
}

/*
 * Launch the compiled count kernel, of rows outer rows a thread, with
 * pc_count_kernel's arguments.
 */
static bool
pc_launch_compiled(CudaJoinState *state, const void *kernel, int rows, const PcArgs *a,
				   GjError *err)
{
	int64_t		oblocks = gj_ceil_div(a->nrows, (int64_t) GJC_BLOCK * rows);
	int			resident = 1;
	void	   *params[1];
	GjcArgs		g;

	memset(&g, 0, sizeof(g));
	g.outer = a->outer;
	g.inner = a->inner;
	g.outer_base = a->outer_base;
	g.o_begin = a->o_begin;
	g.nrows = a->nrows;
	g.ninner = a->ninner;
	g.counts = a->counts;
	g.total = a->total;
	g.host = a->host;
	CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, GJC_BLOCK, 0),
			 "could not size the compiled program count kernel");
	g.slice_len = gj_ceil_div(gj_ceil_div(g.ninner, GJC_CHUNK),
							  gjc_slices(oblocks, g.ninner,
										 (int64_t) state->sm_count * gj_max64(resident, 1))) *
		GJC_CHUNK;
	params[0] = &g;
	CUDA_TRY(cudaLaunchKernel(kernel,
							  dim3((unsigned) oblocks, (unsigned) gj_ceil_div(g.ninner, g.slice_len)),
							  dim3(GJC_BLOCK), params, 0, state->stream),
			 "could not launch the compiled program count kernel");
	return true;
}

/*
 * Per-row counts of the device program over a nested-loop tile: rows outer
 * rows from o_begin against the whole inner tile.  h_counts (host memory,
 * rows entries) receives each row's count, or is NULL; *total receives the
 * sum and *host_pairs the pairs the host must recheck.  Uploads the tile's
 * key columns as the nested-loop step does.  Uses the scratch (rows + 2
 * entries) and h_prefix; synchronises the stream.
 */
bool
gj_cuda_program_count(CudaJoinState *state, const GjTile *tile, int64_t o_begin, int64_t rows,
					  uint64_t *h_counts, uint64_t *total, uint64_t *host_pairs,
					  GjStats *stats, GjError *err)
{
	int64_t		ninner = tile->inner_end - tile->inner_begin;
	int64_t		oblocks = gj_ceil_div(rows, PC_ROWS_PER_BLOCK);
	size_t		shared;
	int			resident = 1;
	const void *kernel;
	const GjCompiledKernels *compiled;
	PcArgs		a;

	*total = 0;
	*host_pairs = 0;
	if (rows <= 0 || ninner <= 0)
	{
		if (h_counts != NULL && rows > 0)
			memset(h_counts, 0, sizeof(uint64_t) * rows);
		return true;
	}

	CUDA_TRY(cudaEventRecord(state->events[EV_START], state->stream),
			 "could not record a CUDA event");
	if (!gj_cuda_upload_side(state, &state->outer, &state->input.outer,
							 tile->outer_begin, tile->outer_end, stats, err) ||
		!gj_cuda_upload_side(state, &state->inner, &state->input.inner,
							 tile->inner_begin, tile->inner_end, stats, err) ||
		!gj_cuda_ensure_scratch(state, rows + 2, err))
		return false;
	CUDA_TRY(cudaEventRecord(state->events[EV_UPLOADED], state->stream),
			 "could not record a CUDA event");

	memset(&a, 0, sizeof(a));
	a.program = state->program;
	gj_program_leading_compares(a.program.instrs, a.program.ninstrs, &a.lead);
	gj_cuda_device_columns(&state->outer, state->input.outer.ncols, &a.outer);
	gj_cuda_device_columns(&state->inner, state->input.inner.ncols, &a.inner);
	a.outer_base = state->outer.begin;
	for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
	{
		/* the inner side's resident columns are those the program loads */
		a.slot[c] = a.inner.values[c] != NULL ? a.nslots++ : -1;
		if (a.inner.values[c] != NULL)
			a.inner.values[c] += tile->inner_begin - state->inner.begin;
		if (a.inner.isnull[c] != NULL)
			a.inner.isnull[c] += tile->inner_begin - state->inner.begin;
	}
	a.o_begin = o_begin;
	a.nrows = rows;
	a.ninner = ninner;
	a.counts = h_counts != NULL ? (unsigned long long *) state->d_scratch : NULL;
	a.total = (unsigned long long *) state->d_scratch + rows;
	a.host = (unsigned long long *) state->d_scratch + rows + 1;
	shared = (size_t) a.nslots * PC_CHUNK * (sizeof(int64_t) + 1);

	CUDA_TRY(cudaMemsetAsync(h_counts != NULL ? state->d_scratch : state->d_scratch + rows, 0,
							 sizeof(uint64_t) * (h_counts != NULL ? rows + 2 : 2),
							 state->stream),
			 "could not clear device scratch memory");
	/* the compiled kernel where there is one for the columns as they are */
	compiled = gj_cuda_program_kernels(state, GJ_COMPILED_COUNT, stats, -1);
	kernel = compiled->kernel;
	if (kernel != NULL)
	{
		if (!pc_launch_compiled(state, kernel, compiled->rows, &a, err))
			return false;
		stats->program_steps_compiled++;
		stats->program_steps_quick += compiled->quick;
	}
	else
	{
		CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, pc_count_kernel,
															   PC_BLOCK, shared),
				 "could not size the program count kernel");
		a.slice_len = gj_ceil_div(gj_ceil_div(ninner, PC_CHUNK),
								  pc_slices(state, oblocks, ninner, resident)) * PC_CHUNK;
		pc_count_kernel<<<dim3((unsigned) oblocks, (unsigned) gj_ceil_div(ninner, a.slice_len)),
			PC_BLOCK, shared, state->stream>>>(a);
		CUDA_LAUNCHED("the program count kernel");
		stats->program_steps_interpreted++;
		stats->interpreted_why = state->count_kernels.why;
	}
	CUDA_TRY(cudaEventRecord(state->events[EV_COUNTED], state->stream),
			 "could not record a CUDA event");
	if (h_counts != NULL)
		CUDA_TRY(cudaMemcpyAsync(h_counts, a.counts, sizeof(uint64_t) * rows,
								 cudaMemcpyDeviceToHost, state->stream),
				 "could not copy row counts from the device");
	CUDA_TRY(cudaMemcpyAsync(state->h_prefix, a.total, 2 * sizeof(uint64_t),
							 cudaMemcpyDeviceToHost, state->stream),
			 "could not copy row counts from the device");
	CUDA_TRY(cudaEventRecord(state->events[EV_DONE], state->stream),
			 "could not record a CUDA event");
	CUDA_TRY(cudaStreamSynchronize(state->stream), "the program count kernel failed");

	*total = (uint64_t) state->h_prefix[0];
	*host_pairs = (uint64_t) state->h_prefix[1];
	stats->pairs_evaluated += rows * ninner;
	stats->bytes_from_device += sizeof(uint64_t) * ((h_counts != NULL ? rows : 0) + 2);
	stats->transfer_ms += gj_cuda_event_ms(state, EV_START, EV_UPLOADED) +
		gj_cuda_event_ms(state, EV_COUNTED, EV_DONE);
	stats->kernel_ms += gj_cuda_event_ms(state, EV_UPLOADED, EV_COUNTED);
	return true;
}

/*
 * For test/kernels/kt_rowcount.c only, not part of the backend contract:
 * gj_cuda_program_count on the state of the cuda backend's begin_join.
 */
extern "C" bool
gj_cuda_test_program_count(void *state, const GjTile *tile, int64_t o_begin, int64_t rows,
						   uint64_t *h_counts, uint64_t *total, uint64_t *host_pairs,
						   GjStats *stats, GjError *err)
{
	return gj_cuda_program_count((CudaJoinState *) state, tile, o_begin, rows, h_counts,
								 total, host_pairs, stats, err);
}

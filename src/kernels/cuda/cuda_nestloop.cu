/*-------------------------------------------------------------------------
 *
 * cuda_nestloop.cu
 *	  The cuda backend's nested loop: its kernels and its step.
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
 * several outer rows per thread in registers.  Any other program runs
 * compiled to GPU code where cuda_compile.cu has its pairs kernels
 * (compiled_count.cuh's count and write passes, several outer rows per
 * thread), else interpreted: gj_program_eval per pair, exactly the
 * interpreter the cpu backend runs.
 *
 *-------------------------------------------------------------------------
 */
#include "cuda_internal.cuh"
#include "kernels/cuda/compiled_count.cuh"

static_assert(GJC_PAIR_RECHECK == GJ_PAIR_RECHECK, "compiled_count.cuh's recheck flag");

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
	GjLeadingCompares lead;		/* its prefilter (gj_program_leading_compares) */
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
	int64_t		slice_end = gj_min64(slice_begin + a.slice_len, a.ninner);
	int64_t		x[CMP_ROWS];
	bool		valid[CMP_ROWS];
	uint32_t	count[CMP_ROWS];
	uint64_t	pos[CMP_ROWS];

#pragma unroll
	for (int r = 0; r < CMP_ROWS; r++)
	{
		int64_t		j = first + r * CMP_BLOCK;

		valid[r] = j < a.nrows && !(a.onull != NULL && a.onull[j]);
		x[r] = valid[r] ? gj_order_key(a.ovals[j], a.cls) : 0;
		count[r] = 0;
		pos[r] = 0;
		if (WRITE && j < a.nrows)
			pos[r] = a.scratch[j * a.nslices + blockIdx.y];
	}

	for (int64_t ib = slice_begin; ib < slice_end; ib += CMP_CHUNK)
	{
		int			n = (int) gj_min64(CMP_CHUNK, slice_end - ib);

		__syncthreads();		/* everyone is done with the previous chunk */
		for (int t = threadIdx.x; t < n; t += CMP_BLOCK)
		{
			skey[t] = gj_order_key(a.ivals[ib + t], a.cls);
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
 * interpreter as a GjKeyColumns indexed from the chunk's first row.  The
 * program's leading compares are tested first, on order keys, and only a
 * pair that passes them runs the rest of the program (as the cpu backend's
 * gj_cpu_nestloop_program: a pair that fails one is neither a match nor
 * sent to the host).
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
	int64_t		slice_end = gj_min64(slice_begin + a.slice_len, a.ninner);
	GjKeyColumns chunk;
	uint32_t	count = 0;
	uint64_t	pos = 0;
	int64_t		x[GJ_MAX_CONJUNCTS];
	bool		live = active;

	/* a row with a NULL compared key passes no leading compare */
	for (int k = 0; live && k < a.lead.conj.n; k++)
		live = gj_column_key(&a.outer, a.lead.conj.cmp[k].outer_col, a.lead.conj.cmp[k].cls,
							 j, &x[k]);
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
		int			n = (int) gj_min64(GEN_CHUNK, slice_end - ib);

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

		if (!live)
			continue;
		for (int t = 0; t < n; t++)
		{
			bool		pass = true;
			int			r;

			for (int k = 0; pass && k < a.lead.conj.n; k++)
			{
				const GjSimpleCompare *sc = &a.lead.conj.cmp[k];
				int64_t		y;

				pass = gj_column_key(&chunk, sc->inner_col, sc->cls, t, &y) &&
					gj_cmp_holds(sc->op, gj_int_cmp(x[k], y));
			}
			r = pass ? gj_program_eval_from(a.program.instrs, a.program.ninstrs, &a.lead,
											&a.outer, j, &chunk, t) : GJ_RESULT_FALSE;

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
	bool		compiled = !state->simple && state->pairs_kernels.kernel != NULL;
	int64_t		inner_rows = tile->inner_end - tile->inner_begin;
	int64_t		pairs = state->simple || compiled ? CMP_PAIRS_PER_STEP : GEN_PAIRS_PER_STEP;
	int64_t		block_rows = state->simple ? CMP_BLOCK * CMP_ROWS :
		compiled ? GJC_BLOCK * state->pairs_kernels.rows : GEN_BLOCK;
	int64_t		chunk = state->simple ? CMP_CHUNK : compiled ? GJC_CHUNK : GEN_CHUNK;
	int64_t		work = gj_min64(gj_max64(pairs / inner_rows, 1), MAX_STEP_ROWS);
	int64_t		rows = work;
	int64_t		scratch_cap,
				slices;

	if (state->density > 0)
	{
		double		est = (double) state->d_capacity / (state->density * inner_rows) * 1.25;

		if (est < (double) rows)
			rows = gj_max64((int64_t) est, gj_min64(state->d_capacity / inner_rows, work));
	}
	rows = gj_max64(gj_min64(rows, tile->outer_end - o_begin), 1);

	/* split the inner tile until the grid has enough blocks */
	scratch_cap = gj_min64(gj_max64(tile->outer_end - tile->outer_begin, SCRATCH_MIN_ENTRIES),
						   SCRATCH_MAX_ENTRIES);
	slices = gj_ceil_div((int64_t) state->sm_count * TARGET_BLOCKS_PER_SM,
						 gj_ceil_div(rows, block_rows));
	slices = gj_min64(slices, gj_ceil_div(inner_rows, chunk));
	slices = gj_min64(slices, scratch_cap / rows);
	slices = gj_max64(gj_min64(slices, 65535), 1);

	plan->nrows = rows;
	plan->slice_len = gj_ceil_div(gj_ceil_div(inner_rows, slices), chunk) * chunk;
	plan->nslices = gj_ceil_div(inner_rows, plan->slice_len);
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
 * The arguments of a compiled kernel of the nested-loop body
 * (compiled_count.cuh) over outer rows [o_begin, o_begin + nrows) of the
 * tile against its inner rows, the rest zeroed: the nested loop's passes
 * and an aggregate step's verdict kernel (cuda_agg.cu) fill in theirs.
 */
void
gj_cuda_compiled_tile_args(const CudaJoinState *state, const GjTile *tile, int64_t o_begin,
						   int64_t nrows, GjcArgs *g)
{
	memset(g, 0, sizeof(*g));
	gj_cuda_device_columns(&state->outer, state->input.outer.ncols, &g->outer);
	gj_cuda_device_columns(&state->inner, state->input.inner.ncols, &g->inner);
	for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
	{
		/* the kernel reads the inner tile from its first row */
		if (g->inner.values[c] != NULL)
			g->inner.values[c] += tile->inner_begin - state->inner.begin;
		if (g->inner.isnull[c] != NULL)
			g->inner.isnull[c] += tile->inner_begin - state->inner.begin;
	}
	g->outer_base = state->outer.begin;
	g->o_begin = o_begin;
	g->nrows = nrows;
	g->ninner = tile->inner_end - tile->inner_begin;
}

/* Launch a compiled pairs kernel: the count pass or the write pass. */
static bool
launch_compiled_pass(CudaJoinState *state, const GjTile *tile, const StepPlan *plan,
					 int64_t o_begin, int64_t nrows, bool write, GjError *err)
{
	int			rows = state->pairs_kernels.rows;
	void	   *params[1];
	GjcArgs		g;

	gj_cuda_compiled_tile_args(state, tile, o_begin, nrows, &g);
	g.slice_len = plan->slice_len;
	g.scratch = (unsigned long long *) state->d_scratch;
	g.nslices = plan->nslices;
	g.out_outer = state->d_out_outer;
	g.out_inner = state->d_out_inner;
	g.outer_first = (uint32_t) o_begin;
	g.inner_first = (uint32_t) tile->inner_begin;
	params[0] = &g;
	CUDA_TRY(cudaLaunchKernel(write ? state->pairs_kernels.second : state->pairs_kernels.kernel,
							  dim3((unsigned) gj_ceil_div(nrows, (int64_t) GJC_BLOCK * rows),
								   (unsigned) plan->nslices),
							  dim3(GJC_BLOCK), params, 0, state->stream),
			 write ? "could not launch the compiled write kernel" :
			 "could not launch the compiled count kernel");
	return true;
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

	if (!state->simple && state->pairs_kernels.kernel != NULL)
		return launch_compiled_pass(state, tile, plan, o_begin, nrows, write, err);
	if (state->simple)
	{
		const GjSimpleCompare *sc = &state->compare;
		CompareArgs a;
		bool		inner_nulls = state->inner.isnull[sc->inner_col] != NULL;
		CompareKernel kernel;
		dim3		grid((unsigned) gj_ceil_div(nrows, CMP_BLOCK * CMP_ROWS),
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
		dim3		grid((unsigned) gj_ceil_div(nrows, GEN_BLOCK), (unsigned) plan->nslices);

		memset(&a, 0, sizeof(a));
		a.program = state->program;
		gj_program_leading_compares(a.program.instrs, a.program.ninstrs, &a.lead);
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

	if (!gj_cuda_ensure_scratch(state, n + 1, err))
		return false;
	if (!launch_pass(state, tile, plan, o_begin, plan->nrows, false, err))
		return false;
	/* the extra last entry turns into the total of all candidates */
	CUDA_TRY(cudaMemsetAsync(state->d_scratch + n, 0, sizeof(uint64_t), state->stream),
			 "could not clear device scratch memory");
	CUDA_TRY(gj_cuda_exclusive_sum(state->d_cub_temp, state->cub_temp_bytes, state->d_scratch,
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

/*
 * A nested-loop step (gj_cuda_run_step has checked the tile and the match
 * buffer): upload the tiles' key columns if they changed, count, cut at the
 * match buffer, write and download the pairs.
 */
bool
gj_cuda_nestloop_step(CudaJoinState *state, const GjTile *tile, int64_t *outer_next,
					  GjMatches *matches, GjStats *stats, GjError *err)
{
	int64_t		inner_rows = tile->inner_end - tile->inner_begin;
	int64_t		o_begin = *outer_next;
	StepPlan	plan;
	int64_t		k,
				total;

	/*
	 * Any other program than one compare: compiled where it can be (a
	 * compile the step waits for is no kernel's time: before the events)
	 */
	if (!state->simple)
	{
		const GjCompiledKernels *k = gj_cuda_program_kernels(state, GJ_COMPILED_PAIRS, stats, -1);

		if (k->kernel != NULL)
		{
			stats->program_steps_compiled++;
			stats->program_steps_quick += k->quick;
		}
		else
		{
			stats->program_steps_interpreted++;
			stats->interpreted_why = k->why;
		}
	}
	CUDA_TRY(cudaEventRecord(state->events[EV_START], state->stream),
			 "could not record a CUDA event");
	if (!gj_cuda_upload_side(state, &state->outer, &state->input.outer,
							 tile->outer_begin, tile->outer_end, stats, err) ||
		!gj_cuda_upload_side(state, &state->inner, &state->input.inner,
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
	stats->transfer_ms += gj_cuda_event_ms(state, EV_START, EV_UPLOADED);
	stats->kernel_ms += gj_cuda_event_ms(state, EV_UPLOADED, EV_COUNTED);
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
		if (!gj_cuda_ensure_host_matches(state, total, err))
			return false;
		CUDA_TRY(cudaEventRecord(state->events[EV_WRITE], state->stream),
				 "could not record a CUDA event");
		if (!launch_pass(state, tile, &plan, o_begin, k, true, err))
			return false;
		if (!gj_cuda_download_matches(state, total, stats, err))
			return false;
	}

	stats->pairs_evaluated += k * inner_rows;
	stats->device_matches += total;
	matches->outer_rows = state->h_out_outer;
	matches->inner_rows = state->h_out_inner;
	matches->count = total;
	*outer_next = o_begin + k;
	/* cut short by the buffer: a larger one for the next step */
	if (k < plan.nrows)
		return gj_cuda_ensure_device_matches(state, inner_rows, 2 * state->d_capacity, err);
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
	if (!gj_cuda_upload_side(state, &state->outer, &state->input.outer,
							 tile->outer_begin, tile->outer_end, &stats, err) ||
		!gj_cuda_upload_side(state, &state->inner, &state->input.inner,
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
		*kernel_ms += gj_cuda_event_ms(state, EV_UPLOADED, EV_COUNTED);
		*nmatches += state->h_prefix[2];
		o += plan.nrows;
	}
	return true;
}

/*-------------------------------------------------------------------------
 *
 * cuda_agg.cu
 *	  The cuda backend's aggregate fast path (agg_step of backend.h).
 *
 * A sort-merge join whose bounds are its whole condition matches each outer
 * row with one run of inner positions: the device finds the runs with the
 * sorted step's bounds kernel (cuda_sorted.cu), and the host reduces them
 * with the prefix arrays of ../shared/agg_runs.h, as the cpu backend does.
 *
 *-------------------------------------------------------------------------
 */
#include "cuda_internal.cuh"

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
		state->h_outer_perm = (uint32_t *) malloc(sizeof(uint32_t) * gj_max64(no, 1));
	inner_perm = (uint32_t *) malloc(sizeof(uint32_t) * gj_max64(ni, 1));
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
		return gj_cuda_fail(err, 0, "could not copy the sorted row order from the device", rc);
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
 * rows whose bounds the host must see (GJ_OUTER_ALL) return their pairs as
 * run_step does; any other join is run_step.  Over the same tiles these are
 * the cpu backend's steps (2^20 rows, AGG_HOST_WORK_PER_STEP positions
 * walked), so both give the same partials, unless the work bound cuts steps
 * (then float sums may differ in their last bits: another summation order).
 */
bool
gj_cuda_agg_step(void *arg, const GjTile *tile, int64_t *outer_next, const GjAggSpec *spec,
				 GjAggPartial *partial, GjMatches *matches, GjStats *stats, GjError *err)
{
	CudaJoinState *state = (CudaJoinState *) arg;
	int64_t		o_begin = *outer_next;
	int64_t		rows,
				j,
				work = 0;

	if (state->input.algorithm != GJ_ALGO_SORTMERGE || state->input.filter_needed ||
		tile->inner_end <= tile->inner_begin || o_begin >= tile->outer_end)
		return gj_cuda_run_step(arg, tile, outer_next, matches, stats, err);
	if (o_begin < state->outer_all)
	{
		/* the GJ_OUTER_ALL rows of the tile, alone, as pairs */
		GjTile		all_rows = *tile;

		all_rows.outer_end = gj_min64(tile->outer_end, state->outer_all);
		return gj_cuda_run_step(arg, &all_rows, outer_next, matches, stats, err);
	}
	matches->count = 0;
	if (state->h_outer_status[o_begin] == GJ_OUTER_EMPTY)
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
	rows = gj_min64(state->step_cap, tile->outer_end - o_begin);
	if (state->agg_rows_hint > 0)
		rows = gj_min64(rows, gj_max64(2 * state->agg_rows_hint, 1024));
	CUDA_TRY(cudaEventRecord(state->events[EV_UPLOADED], state->stream),
			 "could not record a CUDA event");
	if (!gj_cuda_launch_bounds(state, tile, o_begin, rows, err))
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
	stats->kernel_ms += gj_cuda_event_ms(state, EV_UPLOADED, EV_COUNTED);
	stats->transfer_ms += gj_cuda_event_ms(state, EV_COUNTED, EV_DONE);
	stats->bytes_from_device += (sizeof(uint32_t) + sizeof(uint64_t)) * rows;

	for (j = 0; j < rows; j++)
	{
		int64_t		p = o_begin + j;
		int64_t		first = state->h_run_first[j];
		int64_t		width = (int64_t) state->h_run_width[j];

		if (state->h_outer_status[p] == GJ_OUTER_EMPTY)
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

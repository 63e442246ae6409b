/*-------------------------------------------------------------------------
 *
 * cuda_step.cu
 *	  The cuda backend's run_step (backend.h): what every algorithm's step
 *	  shares, then the dispatch to the nested loop (cuda_nestloop.cu) or the
 *	  sorted step (cuda_sorted.cu).
 *
 * A file of its own, below both cuda_backend.cu (whose GjBackend table
 * names it) and cuda_agg.cu (whose pairs path runs a step as run_step
 * does), so that the calls between the backend's files go one way
 * (test/check_layers.sh).
 *
 *-------------------------------------------------------------------------
 */
#include "cuda_internal.cuh"

/*
 * run_step: what every algorithm's step shares (the double buffer, an empty
 * tile, the inner tile against the match capacity, the device buffer for at
 * least one outer row's matches), then the algorithm's own step.
 */
bool
gj_cuda_run_step(void *arg, const GjTile *tile, int64_t *outer_next,
				 GjMatches *matches, GjStats *stats, GjError *err)
{
	CudaJoinState *state = (CudaJoinState *) arg;
	int64_t		inner_rows = tile->inner_end - tile->inner_begin;
	int64_t		o_begin = *outer_next;

	gj_cuda_take_pending_times(state, stats);
	if (!gj_cuda_use_device(state, err))
		return false;
	if (state->double_buffered)
		gj_cuda_swap_host_matches(state);
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
	if (!gj_cuda_ensure_device_matches(state, inner_rows, inner_rows, err))
		return false;
	if (state->input.algorithm != GJ_ALGO_NESTLOOP)
		return gj_cuda_sorted_step(state, tile, outer_next, matches, stats, err);
	return gj_cuda_nestloop_step(state, tile, outer_next, matches, stats, err);
}

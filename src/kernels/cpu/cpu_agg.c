/*-------------------------------------------------------------------------
 *
 * cpu_agg.c
 *	  The cpu backend's aggregate fast path (agg_step of backend.h).
 *
 * A sort-merge join whose bounds are its whole condition matches each outer
 * row with one run of inner positions: the step finds the run by binary
 * search, as the sorted step does (cpu_sorted.c), and reduces it with the
 * prefix arrays of ../shared/agg_runs.h instead of writing its pairs.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>

#include "cpu_internal.h"

/*
 * The aggregate fast path (agg_runs.h): a sort-merge join whose bounds are
 * its whole condition matches each outer row with one run of inner
 * positions, which the step reduces instead of writing its pairs.  Outer
 * rows whose bounds the host must see (GJ_OUTER_ALL) return their pairs as
 * run_step does.  The caller guarantees that no argument row is flagged
 * GJ_AGG_ROW_ERROR.  Any other join is run_step.
 */
bool
gj_cpu_agg_step(void *arg, const GjTile *tile, int64_t *outer_next,
				const GjAggSpec *spec, GjAggPartial *partial,
				GjMatches *matches, GjStats *stats, GjError *err)
{
	CpuJoinState *state = arg;
	int64_t		valid_end = tile->inner_end < state->inner_valid ? tile->inner_end : state->inner_valid;
	int64_t		work = 0;
	int64_t		p;

	if (state->input.algorithm != GJ_ALGO_SORTMERGE || state->input.filter_needed ||
		tile->inner_end <= tile->inner_begin)
		return gj_cpu_run_step(arg, tile, outer_next, matches, stats, err);
	if (*outer_next < state->outer_nall)
	{
		/* the GJ_OUTER_ALL rows of the tile, alone, as pairs */
		GjTile		all_rows = *tile;

		if (all_rows.outer_end > state->outer_nall)
			all_rows.outer_end = state->outer_nall;
		return gj_cpu_run_step(arg, &all_rows, outer_next, matches, stats, err);
	}
	if (state->agg_runs == NULL)
	{
		state->agg_runs = gj_agg_runs_create(spec, state->inner_perm,
											 state->input.inner_nrows);
		if (state->agg_runs == NULL)
		{
			err->code = GJ_ERR_OUT_OF_MEMORY;
			snprintf(err->message, sizeof(err->message),
					 "could not allocate host memory for the prefix sums of %lld inner rows",
					 (long long) state->input.inner_nrows);
			return false;
		}
	}

	matches->count = 0;
	for (p = *outer_next; p < tile->outer_end; p++)
	{
		int64_t		first,
					last;

		if (state->outer_status[p] == GJ_OUTER_EMPTY)
		{
			/* empty rows are last: the rest of the tile has nothing */
			p = tile->outer_end;
			break;
		}
		if (p > *outer_next && (work >= CPU_PAIRS_PER_STEP ||
								p - *outer_next >= CPU_OUTER_ROWS_PER_STEP))
			break;
		first = gj_lower_bound(state->inner_keys, tile->inner_begin, valid_end, state->outer_lo[p]);
		last = gj_upper_bound(state->inner_keys, first, valid_end, state->outer_hi[p]);
		work += gj_agg_runs_reduce(state->agg_runs, spec, partial, state->outer_perm[p],
								   first, last);
		stats->pairs_evaluated += last - first;
		stats->device_matches += last - first;
	}
	*outer_next = p;
	return true;
}

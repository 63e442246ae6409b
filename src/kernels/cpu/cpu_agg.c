/*-------------------------------------------------------------------------
 *
 * cpu_agg.c
 *	  The cpu backend's aggregate step (agg_step of backend.h).
 *
 * Every join and every device program is reduced in the backend; only the
 * pairs the host must decide come back.  Three ways, fastest first:
 *
 *	- range runs: a sort-merge join whose bounds are its whole condition
 *	  matches each outer row with one run of inner positions, which the
 *	  prefix arrays of ../shared/agg_runs.h reduce without forming a pair;
 *	- row counts: a nested loop with every argument on the outer side needs
 *	  only each outer row's number of matches, folded with the row's values
 *	  as weights: counted by cpu_rowcount.c (or the dominance counter of
 *	  cpu_dominance.c where the planner chose it) when the program is a
 *	  conjunction of simple compares, by cpu_program_count.c for any other
 *	  program, unless a pair of the step needs the host;
 *	- pairs: any other step runs as run_step does, into the match buffer,
 *	  and its pairs are folded there (../shared/agg_fold.c), the buffer then
 *	  holding only those the host must see.  Grouping by keys of the inner
 *	  side always comes here: each pair has its own group.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>

#include "cpu_internal.h"
#include "kernels/shared/agg_fold.h"

/* Any step as run_step runs it, its pairs folded where the spec allows. */
static bool
cpu_agg_pairs_step(CpuJoinState *state, const GjTile *tile, int64_t *outer_next,
				   const GjAggSpec *spec, GjAggPartial *partial,
				   GjMatches *matches, GjStats *stats, GjError *err)
{
	if (!gj_cpu_run_step(state, tile, outer_next, matches, stats, err))
		return false;
	/* the agg node never double-buffers: the matches are in our buffer */
	matches->count = gj_agg_fold_pairs(spec, partial, (uint32_t *) matches->outer_rows,
									   (uint32_t *) matches->inner_rows, matches->count);
	return true;
}

/*
 * The range-run path: each outer row's run found by binary search, as the
 * sorted step finds it (cpu_sorted.c), reduced with the prefix arrays.
 */
static bool
cpu_agg_runs_step(CpuJoinState *state, const GjTile *tile, int64_t *outer_next,
				  const GjAggSpec *spec, GjAggPartial *partial,
				  GjMatches *matches, GjStats *stats, GjError *err)
{
	int64_t		valid_end = tile->inner_end < state->inner_valid ? tile->inner_end : state->inner_valid;
	int64_t		work = 0;
	int64_t		p;

	if (*outer_next < state->outer_nall)
	{
		/* the GJ_OUTER_ALL rows of the tile, alone, as pairs */
		GjTile		all_rows = *tile;

		if (all_rows.outer_end > state->outer_nall)
			all_rows.outer_end = state->outer_nall;
		return cpu_agg_pairs_step(state, &all_rows, outer_next, spec, partial, matches,
								  stats, err);
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

/* Out of host memory in an aggregate step. */
static bool
cpu_agg_oom(GjError *err, const char *what, int64_t n)
{
	err->code = GJ_ERR_OUT_OF_MEMORY;
	snprintf(err->message, sizeof(err->message), "could not allocate host memory for %s of %lld rows",
			 what, (long long) n);
	return false;
}

/* Room for the match counts of rows outer rows in state->row_counts. */
static bool
cpu_agg_row_counts(CpuJoinState *state, int64_t rows, GjError *err)
{
	if (rows <= state->row_counts_cap)
		return true;
	free(state->row_counts);
	state->row_counts = malloc(sizeof(uint64_t) * rows);
	state->row_counts_cap = state->row_counts != NULL ? rows : 0;
	return state->row_counts != NULL || cpu_agg_oom(err, "the match counts", rows);
}

/*
 * The row-count path: each outer row's matches against the inner tile,
 * counted by the blocked compare loop (cpu_rowcount.c) or, where the
 * planner chose it, by dominance (cpu_dominance.c, the inner tile indexed
 * once per tile), then folded with the rows' values as weights.  A step is
 * about CPU_COUNT_PAIRS_PER_STEP pairs of the loop, or
 * CPU_OUTER_ROWS_PER_STEP rows of the dominance count.
 */
static bool
cpu_agg_count_step(CpuJoinState *state, const GjCompareConjunction *conj, const GjTile *tile,
				   int64_t *outer_next, const GjAggSpec *spec, GjAggPartial *partial,
				   GjMatches *matches, GjStats *stats, GjError *err)
{
	int64_t		ninner = tile->inner_end - tile->inner_begin;
	int64_t		o_begin = *outer_next;
	bool		dominance = state->input.agg_dominance && gj_conjunction_is_dominance(conj);
	int64_t		rows = dominance ? CPU_OUTER_ROWS_PER_STEP :
		CPU_COUNT_PAIRS_PER_STEP / (ninner > 0 ? ninner : 1);
	int64_t		j;

	if (rows < 1)
		rows = 1;
	if (rows > tile->outer_end - o_begin)
		rows = tile->outer_end - o_begin;
	if (!cpu_agg_row_counts(state, rows, err))
		return false;
	if (dominance)
	{
		if (state->dominance == NULL || state->dominance_inner_begin != tile->inner_begin ||
			state->dominance_inner_end != tile->inner_end)
		{
			gj_dominance_free(state->dominance);
			state->dominance = gj_dominance_build(&state->input, conj, tile->inner_begin,
												  tile->inner_end);
			if (state->dominance == NULL)
				return cpu_agg_oom(err, "the dominance index", ninner);
			state->dominance_inner_begin = tile->inner_begin;
			state->dominance_inner_end = tile->inner_end;
		}
		if (!gj_dominance_count(state->dominance, &state->input, o_begin, o_begin + rows,
								state->row_counts))
			return cpu_agg_oom(err, "the dominance count", rows);
	}
	else
	{
		gj_cpu_rowcount_conjunction(&state->input, conj, tile, o_begin, o_begin + rows,
									state->row_counts);
		stats->pairs_evaluated += rows * ninner;
	}
	for (j = 0; j < rows; j++)
		stats->device_matches += (int64_t) state->row_counts[j];
	gj_agg_fold_row_counts(spec, partial, NULL, o_begin, state->row_counts, rows);
	matches->count = 0;
	*outer_next = o_begin + rows;
	return true;
}

/*
 * The row-count path of any other program: each outer row's pairs that the
 * program finds TRUE, CPU_PAIRS_PER_STEP pairs a step (they run through the
 * interpreter, as run_step's would).  A step with a pair the host must
 * recheck runs again as run_step, its pairs folded on the host.
 */
static bool
cpu_agg_program_count_step(CpuJoinState *state, const GjTile *tile, int64_t *outer_next,
						   const GjAggSpec *spec, GjAggPartial *partial,
						   GjMatches *matches, GjStats *stats, GjError *err)
{
	int64_t		ninner = tile->inner_end - tile->inner_begin;
	int64_t		o_begin = *outer_next;
	int64_t		rows = CPU_PAIRS_PER_STEP / (ninner > 0 ? ninner : 1);
	uint64_t	host_pairs = 0;
	int64_t		j;

	rows = rows < 1 ? 1 : rows;
	rows = rows > tile->outer_end - o_begin ? tile->outer_end - o_begin : rows;
	if (!cpu_agg_row_counts(state, rows, err))
		return false;
	if (!gj_cpu_program_count(&state->input, tile, o_begin, o_begin + rows, state->row_counts,
							  &host_pairs))
		return cpu_agg_oom(err, "the program counts", rows);
	if (host_pairs > 0)
		return cpu_agg_pairs_step(state, tile, outer_next, spec, partial, matches, stats, err);
	stats->pairs_evaluated += rows * ninner;
	for (j = 0; j < rows; j++)
		stats->device_matches += (int64_t) state->row_counts[j];
	gj_agg_fold_row_counts(spec, partial, NULL, o_begin, state->row_counts, rows);
	matches->count = 0;
	*outer_next = o_begin + rows;
	return true;
}

bool
gj_cpu_agg_step(void *arg, const GjTile *tile, int64_t *outer_next,
				const GjAggSpec *spec, GjAggPartial *partial,
				GjMatches *matches, GjStats *stats, GjError *err)
{
	CpuJoinState *state = arg;
	GjCompareConjunction conj;

	if (state->input.algorithm == GJ_ALGO_SORTMERGE && !state->input.filter_needed &&
		tile->inner_end > tile->inner_begin && gj_agg_spec_reads_rows(spec))
		return cpu_agg_runs_step(state, tile, outer_next, spec, partial, matches, stats, err);
	if (state->input.algorithm == GJ_ALGO_NESTLOOP && gj_agg_spec_outer_only(spec) &&
		gj_program_compare_conjunction(state->input.instrs, state->input.ninstrs, &conj))
		return cpu_agg_count_step(state, &conj, tile, outer_next, spec, partial, matches,
								  stats, err);
	if (state->input.algorithm == GJ_ALGO_NESTLOOP && gj_agg_spec_outer_only(spec) &&
		tile->inner_end > tile->inner_begin)
		return cpu_agg_program_count_step(state, tile, outer_next, spec, partial, matches,
										  stats, err);
	return cpu_agg_pairs_step(state, tile, outer_next, spec, partial, matches, stats, err);
}

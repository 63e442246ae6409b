/*-------------------------------------------------------------------------
 *
 * cpu_step.c
 *	  The cpu backend's run_step (backend.h): one step of a tile, into the
 *	  match buffer, by the nested loop (cpu_nestloop.c) or the sorted step
 *	  (cpu_sorted.c).
 *
 * A file of its own, below both cpu_backend.c (whose GjBackend table names
 * it) and cpu_agg.c (whose pairs path runs a step as run_step does), so
 * that the calls between the backend's files go one way
 * (test/check_layers.sh).
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

bool
gj_cpu_run_step(void *arg, const GjTile *tile, int64_t *outer_next,
				GjMatches *matches, GjStats *stats, GjError *err)
{
	CpuJoinState *state = arg;
	int64_t		inner_rows = tile->inner_end - tile->inner_begin;
	int64_t		o_begin = *outer_next;
	uint32_t   *swap;
	int64_t		rows_fit,
				rows_work,
				o_end,
				n;

	/* double buffered: write into the buffer the executor is done with */
	if (state->spare_outer_rows != NULL)
	{
		swap = state->outer_rows;
		state->outer_rows = state->spare_outer_rows;
		state->spare_outer_rows = swap;
		swap = state->inner_rows;
		state->inner_rows = state->spare_inner_rows;
		state->spare_inner_rows = swap;
	}

	/*
	 * Take as many outer rows as surely fit the match buffer (each can match
	 * every inner row of the tile) and as the work bound allows.
	 */
	if (inner_rows <= 0)
	{
		*outer_next = tile->outer_end;
		matches->count = 0;
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
	if (state->input.algorithm != GJ_ALGO_NESTLOOP)
	{
		int64_t		pairs = 0;

		if (!gj_cpu_fix_outer_order(state, tile))
		{
			if (state->outer_order_fixed)
			{
				err->code = GJ_ERR_DEVICE;
				snprintf(err->message, sizeof(err->message),
						 "a tile covers part of the outer rows of a hash join whose first tile covered all of them");
			}
			else
			{
				err->code = GJ_ERR_OUT_OF_MEMORY;
				snprintf(err->message, sizeof(err->message),
						 "could not allocate host memory to sort %lld outer rows",
						 (long long) state->input.outer_nrows);
			}
			return false;
		}

		n = gj_cpu_sorted_step(state, tile, outer_next, &pairs);
		stats->pairs_evaluated += pairs;
		stats->device_matches += n;
		matches->outer_rows = state->outer_rows;
		matches->inner_rows = state->inner_rows;
		matches->count = n;
		return true;
	}

	rows_fit = state->capacity / inner_rows;
	rows_work = CPU_PAIRS_PER_STEP / inner_rows;
	if (rows_work < 1)
		rows_work = 1;
	if (rows_fit > rows_work)
		rows_fit = rows_work;
	o_end = o_begin + rows_fit < tile->outer_end ? o_begin + rows_fit : tile->outer_end;

	if (state->simple)
		n = gj_cpu_nestloop_compare(state, tile, o_begin, o_end);
	else
		n = gj_cpu_nestloop_program(state, tile, o_begin, o_end);

	stats->pairs_evaluated += (o_end - o_begin) * inner_rows;
	stats->device_matches += n;
	matches->outer_rows = state->outer_rows;
	matches->inner_rows = state->inner_rows;
	matches->count = n;
	*outer_next = o_end;
	return true;
}

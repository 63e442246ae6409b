/*-------------------------------------------------------------------------
 *
 * cpu_backend.c
 *	  The cpu backend: the tile algorithms of GpuJoin in plain C.  This file
 *	  holds the GjBackend table, beginning and ending a join and the second
 *	  match buffer of step overlap; run_step is cpu_step.c's.
 *
 * It runs exactly the schedule the cuda backend runs (same tiles, same steps,
 * same match-buffer contract, see backend.h), so it is the reference for the
 * cuda backend and the backend CI tests.  It is also meant to be fast on its
 * own: the nested loop (cpu_nestloop.c) is cache-blocked over the inner tile
 * and writes matches branch-free, and the common "outer column OP inner
 * column" shape runs as integer compares without the interpreter.  The
 * sort-merge/range and hash algorithms are in cpu_sorted.c, the aggregate
 * fast path in cpu_agg.c.
 *
 * Plain C without PostgreSQL headers (see backend.h): memory comes from
 * malloc and is released by end_join, which the executor calls from a memory
 * context callback, so it is also released on ERROR.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "cpu_internal.h"

static void cpu_end_join(void *arg);
static void cpu_release_inner(const void *arg);

static void *
cpu_begin_join(const GjJoinInput *input, GjError *err)
{
	CpuJoinState *state = calloc(1, sizeof(CpuJoinState));

	if (state == NULL)
		goto oom;
	state->input = *input;
	memcpy(state->instrs, input->instrs, sizeof(GjInstr) * input->ninstrs);
	state->input.instrs = state->instrs;
	state->simple = gj_program_simple_compare(state->instrs, input->ninstrs,
											  &state->compare);
	gj_cpu_affine_init(&state->affine, state->instrs, input->ninstrs, 0, 0);

	/*
	 * One integer key: its hash is gj_hash64(gj_hash64(key)), and
	 * splitmix64's finaliser is a bijection of 64-bit words (xor with a right
	 * shift of itself, and multiplication by an odd constant, are each
	 * invertible), so two rows have equal hashes exactly when their keys are
	 * equal, which is the program's answer for rows with keys.
	 */
	state->hash_is_key_equality = input->algorithm == GJ_ALGO_HASH && state->simple &&
		state->compare.op == GJOP_EQ && state->compare.cls == GJ_CLASS_INT &&
		input->equi.nkeys == 1 && input->equi.cls[0] == GJ_CLASS_INT &&
		input->equi.outer_cols[0] == state->compare.outer_col &&
		input->equi.inner_cols[0] == state->compare.inner_col;
	state->capacity = input->match_capacity > 0 ? input->match_capacity : 1;
	state->outer_rows = malloc(sizeof(uint32_t) * state->capacity);
	state->inner_rows = malloc(sizeof(uint32_t) * state->capacity);
	if (state->outer_rows == NULL || state->inner_rows == NULL)
	{
		cpu_end_join(state);
		goto oom;
	}
	if (input->algorithm != GJ_ALGO_NESTLOOP)
	{
		double		start = gj_clock_ms();
		bool		ok = gj_cpu_prepare_sorted(state);

		state->pending_times.sort_ms += gj_clock_ms() - start;
		if (!ok)
		{
			cpu_end_join(state);
			goto oom;
		}
	}
	return state;

oom:
	err->code = GJ_ERR_OUT_OF_MEMORY;
	snprintf(err->message, sizeof(err->message),
			 "could not allocate host memory for a join of %lld x %lld rows (match buffer of %lld pairs)",
			 (long long) input->outer_nrows, (long long) input->inner_nrows,
			 (long long) input->match_capacity);
	return NULL;
}

/*
 * The inner side prepared once for several joins (backend.h): the arrays
 * gj_cpu_prepare_sorted would build, which every join that is given them
 * reads and never changes or frees.
 */
static const void *
cpu_prepare_inner(const GjJoinInput *input, GjError *err)
{
	CpuPreparedInner *prepared;

	if (input->algorithm != GJ_ALGO_SORTMERGE && input->algorithm != GJ_ALGO_HASH)
	{
		err->code = GJ_ERR_DEVICE;
		snprintf(err->message, sizeof(err->message),
				 "only a sort-merge or hash join's inner side is prepared");
		return NULL;
	}
	prepared = calloc(1, sizeof(CpuPreparedInner));
	if (prepared == NULL || (prepared->input = *input,
							 !gj_cpu_prepare_inner_arrays(input, prepared)))
	{
		cpu_release_inner(prepared);
		err->code = GJ_ERR_OUT_OF_MEMORY;
		snprintf(err->message, sizeof(err->message),
				 "could not allocate host memory for an inner side of %lld rows",
				 (long long) input->inner_nrows);
		return NULL;
	}
	/* what it fits, not what it points to: only the inner side is kept */
	prepared->input.instrs = NULL;
	prepared->input.agg_spec = NULL;
	prepared->input.prepared_inner = NULL;
	return prepared;
}

static void
cpu_release_inner(const void *arg)
{
	CpuPreparedInner *prepared = (CpuPreparedInner *) arg;

	if (prepared == NULL)
		return;
	free(prepared->inner_perm);
	free(prepared->inner_keys);
	free(prepared->inner_bucket_start);
	free(prepared);
}

static void
cpu_end_join(void *arg)
{
	CpuJoinState *state = arg;

	if (state == NULL)
		return;
	free(state->outer_rows);
	free(state->inner_rows);
	free(state->spare_outer_rows);
	free(state->spare_inner_rows);
	free(state->outer_perm);
	free(state->outer_lo);
	free(state->outer_hi);
	free(state->outer_status);
	if (!state->inner_borrowed)
	{
		free(state->inner_perm);
		free(state->inner_keys);
		free(state->inner_bucket_start);
	}
	gj_agg_runs_free(state->agg_runs);
	free(state->row_counts);
	gj_dominance_free(state->dominance);
	free(state);
}

/*
 * Step overlap: a second match buffer of the same capacity.  malloc only
 * reserves address space; the pages a step writes are the memory it costs.
 */
static bool
cpu_double_buffer(void *arg)
{
	CpuJoinState *state = arg;

	if (state->spare_outer_rows != NULL)
		return true;
	state->spare_outer_rows = malloc(sizeof(uint32_t) * state->capacity);
	state->spare_inner_rows = malloc(sizeof(uint32_t) * state->capacity);
	if (state->spare_outer_rows == NULL || state->spare_inner_rows == NULL)
	{
		free(state->spare_outer_rows);
		free(state->spare_inner_rows);
		state->spare_outer_rows = state->spare_inner_rows = NULL;
		return false;
	}
	return true;
}

/*
 * A step's times: its time less what it spent sorting (the outer rows at
 * a hash join's first tile, into pending_times) is the loops', and the
 * work done outside steps since the last one goes with it (backend.h).
 */
static void
cpu_step_times(CpuJoinState *state, double start, double sort_before, GjStats *stats)
{
	double		sorting = state->pending_times.sort_ms - sort_before;

	stats->times.compute_ms += gj_clock_ms() - start - sorting;
	gj_times_add(&stats->times, &state->pending_times);
	memset(&state->pending_times, 0, sizeof(state->pending_times));
}

static bool
cpu_timed_run_step(void *arg, const GjTile *tile, int64_t *outer_next,
				   GjMatches *matches, GjStats *stats, GjError *err)
{
	CpuJoinState *state = arg;
	double		start = gj_clock_ms();
	double		sort_before = state->pending_times.sort_ms;
	bool		ok = gj_cpu_run_step(arg, tile, outer_next, matches, stats, err);

	cpu_step_times(state, start, sort_before, stats);
	return ok;
}

static bool
cpu_timed_agg_step(void *arg, const GjTile *tile, int64_t *outer_next,
				   const GjAggSpec *spec, GjAggPartial *partial,
				   GjMatches *matches, GjStats *stats, GjError *err)
{
	CpuJoinState *state = arg;
	double		start = gj_clock_ms();
	double		sort_before = state->pending_times.sort_ms;
	bool		ok = gj_cpu_agg_step(arg, tile, outer_next, spec, partial, matches,
									 stats, err);

	cpu_step_times(state, start, sort_before, stats);
	return ok;
}

static bool
cpu_tile_can_match(void *arg, const GjTile *tile)
{
	CpuJoinState *state = arg;

	if (state->input.algorithm == GJ_ALGO_NESTLOOP)
		return true;
	return gj_cpu_sorted_tile_can_match(state, tile);
}

const GjBackend gj_cpu_backend = {
	.name = "cpu",
	.begin_join = cpu_begin_join,
	.prepare_inner = cpu_prepare_inner,
	.release_inner = cpu_release_inner,
	.run_step = cpu_timed_run_step,
	.end_join = cpu_end_join,
	.algorithms = (1 << GJ_ALGO_NESTLOOP) | (1 << GJ_ALGO_SORTMERGE) | (1 << GJ_ALGO_HASH),
	.tile_can_match = cpu_tile_can_match,
	.agg_step = cpu_timed_agg_step,
	.double_buffer = cpu_double_buffer,
};

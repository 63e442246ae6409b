/*-------------------------------------------------------------------------
 *
 * gpujoin_steps.c
 *	  The steps of a join and the pairs they return, for both GpuJoin nodes.
 *
 * Once gpujoin_prepare (gpujoin_open.c) has opened the backend, a join is a
 * sequence of steps: the tile schedule gives the tiles of the join matrix,
 * those the backend says cannot match are pruned, and each remaining tile
 * runs in one or more bounded steps, each filling the match buffer with
 * (outer row, inner row) pairs, some flagged for a recheck on the host.
 * The GpuJoin node (gpujoin_emit.c) turns each step's pairs into rows; the
 * aggregate node (gpujoin_agg_exec.c) reduces them, or lets the backend
 * reduce them (agg_step).  Both then take the pairs of rows whose keys have
 * no exact device value from gpujoin_next_host_pairs, after the last step.
 *
 * The GpuJoin node overlaps its steps with the emission of rows: while a
 * step's rows are emitted, the next step runs on a helper thread
 * (gpujoin_overlap.c).  The aggregate node reduces a step as soon as it
 * returns, so it runs its steps one at a time.
 *
 * Scan tuples are formed here too, for both nodes: from the stored columns
 * of a pair, or from one row of one side with NULLs for the other.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"

#include "gpujoin.h"
#include "custom_scan/exec/gpujoin_exec.h"
#include "host_chunking/staging.h"
#include "kernels/agg_reduce.h"

/* Pairs of rows with inexact keys formed per batch (GJ_PHASE_HOST_PAIRS). */
#define HOST_PAIRS_BATCH		4096

/*
 * Does the backend say gjs->tile may match?  Backend time: in the GPU
 * service a round trip.
 */
static bool
gpujoin_tile_can_match(GpuJoinState *gjs)
{
	GjWallPart	part = gpujoin_wall_switch(gjs, GJ_WALL_BACKEND);
	double		start = gj_clock_ms();
	bool		can_match;

	can_match = gjs->backend->tile_can_match(gjs->backend_state, &gjs->tile);
	gjs->counters.backend_ms += gj_clock_ms() - start;
	(void) gpujoin_wall_switch(gjs, part);
	return can_match;
}

/*
 * Unless a tile is open, open the next one that can match (tile pruning).
 * Returns false when every tile is done.
 */
bool
gpujoin_open_tile(GpuJoinState *gjs)
{
	while (!gjs->tile_open)
	{
		if (!gj_tile_schedule_next(&gjs->sched, &gjs->tile))
			return false;
		if (gjs->backend->tile_can_match != NULL &&
			!gpujoin_tile_can_match(gjs))
		{
			gjs->counters.tiles_pruned++;
			continue;
		}
		gjs->tile_open = true;
		gjs->outer_next = gjs->tile.outer_begin;
		gjs->counters.tiles_run++;
	}
	return true;
}

/*
 * Run one step of the open tile on the backend, into the match buffer; with
 * an aggregate spec, a step that reduces its pairs in the backend into
 * *partial.
 */
static void
gpujoin_backend_run(GpuJoinState *gjs, const GjAggSpec *spec, GjAggPartial *partial)
{
	instr_time	start,
				end;
	GjError		err;
	bool		ok;
	GjWallPart	part = gpujoin_wall_switch(gjs, GJ_WALL_BACKEND);

	memset(&err, 0, sizeof(err));
	INSTR_TIME_SET_CURRENT(start);
	if (spec != NULL)
		ok = gpujoin_backend_agg_step(gjs->backend, gjs->backend_state, &gjs->tile,
									  &gjs->outer_next, spec, partial,
									  &gjs->matches, &gjs->counters.stats, &err);
	else
		ok = gpujoin_backend_step(gjs->backend, gjs->backend_state, &gjs->tile,
								  &gjs->outer_next, &gjs->matches, &gjs->counters.stats,
								  &err);
	if (!ok)
		gpujoin_backend_error(gjs, &err);
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	gjs->counters.backend_ms += INSTR_TIME_GET_MILLISEC(end);
	gjs->counters.steps++;
	(void) gpujoin_wall_switch(gjs, part);

	/* a program the backend could not compile runs interpreted: noted once */
	if (!gjs->program_noted && gjs->counters.stats.interpreted_why >= GJ_INTERPRETED_NO_NVRTC &&
		gjs->counters.stats.interpreted_why != GJ_INTERPRETED_KERNEL &&
		gjs->counters.stats.interpreted_why != GJ_INTERPRETED_COMPILING)
	{
		gjs->program_noted = true;
		elog(DEBUG1, "gpujoin: the join's program runs interpreted: %s",
			 gpujoin_interpreted_why(gjs->counters.stats.interpreted_why));
	}

	if (gjs->outer_next >= gjs->tile.outer_end)
		gjs->tile_open = false;
}

/*
 * Once a step's matches are in gjs->matches: start the next step on the
 * overlap thread, if the join may overlap steps, the current one returned
 * rows to emit meanwhile, and a step is left.  The next tile is chosen (and
 * pruned) here, on the executor's thread, before the thread starts.
 */
static void
gpujoin_start_next_step(GpuJoinState *gjs)
{
	if (gpujoin_step_ahead_possible(gjs) && gjs->matches.count > 0 &&
		gpujoin_open_tile(gjs))
		gpujoin_step_ahead_start(gjs);
}

/*
 * The GpuJoin node's next step: run it, or take the one that ran while the
 * previous step's rows were emitted, and start the one after it.  False
 * when every tile is done.
 */
bool
gpujoin_run_step(GpuJoinState *gjs)
{
	CHECK_FOR_INTERRUPTS();
	if (gjs->ahead.pending)
	{
		GjWallPart	part = gpujoin_wall_switch(gjs, GJ_WALL_BACKEND);

		if (!gpujoin_step_ahead_collect(gjs))
			gpujoin_backend_error(gjs, &gjs->ahead.err);
		(void) gpujoin_wall_switch(gjs, part);
		if (gjs->partitions != NULL)
			gpujoin_partitions_translate(gjs);
		gjs->match_pos = 0;
		gpujoin_start_next_step(gjs);
		return true;
	}

	/*
	 * A partitioned join opens its next piece here, once the last piece's
	 * rows are emitted (its pairs live in the backend's match buffer), never
	 * while choosing the tile of a step ahead.
	 */
	while (!gpujoin_open_tile(gjs))
	{
		if (gjs->partitions == NULL || !gpujoin_partitions_open_next(gjs))
			return false;
	}
	gpujoin_backend_run(gjs, NULL, NULL);
	if (gjs->partitions != NULL)
		gpujoin_partitions_translate(gjs);
	gjs->match_pos = 0;
	gpujoin_start_next_step(gjs);
	return true;
}

/*
 * The aggregate node's next step, never overlapped: with spec, reduced in
 * the backend into *partial (the match buffer then holds only the pairs the
 * host must decide), else a plain step whose pairs the caller reduces.
 * False when every tile is done.
 */
bool
gpujoin_run_agg_step(GpuJoinState *gjs, const GjAggSpec *spec, GjAggPartial *partial)
{
	CHECK_FOR_INTERRUPTS();
	gjs->matches.count = 0;

	/*
	 * A join cut into device partitions: when a piece's tiles are done, what
	 * its backend still holds goes into *partial and the next piece opens;
	 * the last piece is finished by the caller (gpujoin_finish_agg_steps).
	 */
	while (!gpujoin_open_tile(gjs))
	{
		if (!gpujoin_partitions_more(gjs))
			return false;
		gpujoin_finish_agg_steps(gjs, spec, partial);
		(void) gpujoin_partitions_open_next(gjs);
	}
	gpujoin_backend_run(gjs, gpujoin_partitions_spec(gjs, spec), partial);
	if (gjs->partitions != NULL)
		gpujoin_partitions_translate(gjs);
	return true;
}

/*
 * After the aggregate node's last step with a spec: what the backend still
 * holds of the join's partials, into *partial.
 */
void
gpujoin_finish_agg_steps(GpuJoinState *gjs, const GjAggSpec *spec, GjAggPartial *partial)
{
	instr_time	start,
				end;
	GjError		err;
	GjWallPart	part;

	/* no spec, or no piece of a partitioned join opened yet (or at all) */
	if (spec == NULL || gjs->backend_state == NULL)
		return;
	part = gpujoin_wall_switch(gjs, GJ_WALL_BACKEND);
	memset(&err, 0, sizeof(err));
	INSTR_TIME_SET_CURRENT(start);
	spec = gpujoin_partitions_spec(gjs, spec);
	if (!gpujoin_backend_agg_finish(gjs->backend, gjs->backend_state, spec, partial,
									&gjs->counters.stats, &err))
		gpujoin_backend_error(gjs, &err);
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	gjs->counters.backend_ms += INSTR_TIME_GET_MILLISEC(end);
	(void) gpujoin_wall_switch(gjs, part);
}

/*
 * After the last step: every pair with a row whose key has no exact device
 * value, as pairs flagged for a recheck, so that the node evaluates all the
 * join's quals on them in PostgreSQL's order (and sets match flags, skips
 * matched rows of semi and anti joins, applies the filter) as for any other
 * pair.  Each such pair once: all inner rows for a flagged outer row, the
 * flagged inner rows (inexact_rows) for the others.  Fills the match buffer
 * with the next batch; false when there are none left.
 */
bool
gpujoin_next_host_pairs(GpuJoinState *gjs)
{
	const HostSideBuffer *inner = &gjs->inner_buf;
	int64		n = 0;
	int64		o = gjs->host_pair_outer;
	int64		i = gjs->host_pair_inner;	/* an inner row, or a position in
											 * inexact_rows */

	if (gjs->host_pairs_outer == NULL)
	{
		gjs->host_pairs_outer = MemoryContextAlloc(gjs->join_cxt, sizeof(uint32) * HOST_PAIRS_BATCH);
		gjs->host_pairs_inner = MemoryContextAlloc(gjs->join_cxt, sizeof(uint32) * HOST_PAIRS_BATCH);
	}
	CHECK_FOR_INTERRUPTS();
	while (o < gjs->outer_buf.nrows && n < HOST_PAIRS_BATCH)
	{
		bool		outer_flagged = gjs->outer_inexact != NULL && gjs->outer_inexact[o];
		int64		end = outer_flagged ? inner->nrows :
			gjs->inner_inexact != NULL ? inner->ninexact : 0;

		for (; i < end && n < HOST_PAIRS_BATCH; i++)
		{
			gjs->host_pairs_outer[n] = (uint32) o | GJ_PAIR_RECHECK;
			gjs->host_pairs_inner[n] = outer_flagged ? (uint32) i : inner->inexact_rows[i];
			n++;
		}
		if (i >= end)
		{
			o++;
			i = 0;
		}
	}
	gjs->host_pair_outer = o;
	gjs->host_pair_inner = i;
	gjs->matches.outer_rows = gjs->host_pairs_outer;
	gjs->matches.inner_rows = gjs->host_pairs_inner;
	gjs->matches.count = n;
	gjs->match_pos = 0;
	gjs->counters.host_pairs += n;
	gjs->in_host_pairs = (n > 0);
	return n > 0;
}

/* Fill the whole scan tuple from the stored columns of one pair. */
void
gpujoin_form_scan_tuple(GpuJoinState *gjs, int64 outer_row, int64 inner_row)
{
	TupleTableSlot *scan = gjs->css.ss.ss_ScanTupleSlot;

	ExecClearTuple(scan);
	gpujoin_fill_columns(gjs, 0, gjs->nscan, outer_row, inner_row);
	ExecStoreVirtualTuple(scan);
}

/*
 * Fill the join's columns of the (cleared) scan tuple from one row of the
 * given side, with NULL in every column of the other side: an unmatched row
 * of an outer join, or the outer columns of an aggregate's group.
 */
void
gpujoin_fill_null_extended(GpuJoinState *gjs, int side, int64 row)
{
	TupleTableSlot *scan = gjs->css.ss.ss_ScanTupleSlot;
	HostSideBuffer *buf = side == GJ_SIDE_OUTER ? &gjs->outer_buf : &gjs->inner_buf;
	int			k;

	for (k = 0; k < gjs->nscan; k++)
	{
		if (gjs->scan_sides[k] != side)
		{
			scan->tts_values[k] = (Datum) 0;
			scan->tts_isnull[k] = true;
		}
		else if (gjs->scan_keys[k] >= 0)
		{
			/* the key's values are the Datums (gpujoin_plan_scan_keys) */
			HostKeyColumn *key = &buf->keys[gjs->scan_keys[k]];

			scan->tts_values[k] = (Datum) key->values[row];
			scan->tts_isnull[k] = key->isnull != NULL && key->isnull[row];
		}
		else
		{
			HostDatumColumn *col = buf->cols + gjs->scan_cols[k];

			scan->tts_values[k] = col->values[row];
			scan->tts_isnull[k] = col->isnull[row];
		}
	}
}

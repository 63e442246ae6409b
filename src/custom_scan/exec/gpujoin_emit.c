/*-------------------------------------------------------------------------
 *
 * gpujoin_emit.c
 *	  The GpuJoin node: its methods, its state machine, and the rows it
 *	  returns.
 *
 * The node is a state machine in the style of nodeHashjoin.c, returning one
 * tuple per call:
 *
 *	DRAIN	  drain the inner input, then the outer one, into host buffers;
 *			  plan the tiles of the join matrix; open the backend
 *			  (gpujoin_prepare, gpujoin_open.c)
 *	RUN_STEP  run the next step of the current tile (or open the next tile)
 *			  on the backend, which fills the match buffer (gpujoin_steps.c)
 *	EMIT	  for each (outer row, inner row) in the match buffer: build the
 *			  scan tuple from the stored columns, evaluate the host quals
 *			  (and, for pairs the device flagged, the device quals); a pair
 *			  that passes is a match: set the match flags of its rows, then
 *			  apply the join's filter and project.  With nothing to evaluate
 *			  on the host, the output row is filled straight from the
 *			  stored columns instead (see gpujoin_plan_direct_output)
 *	HOST_PAIRS  after the last step: the pairs of rows whose keys have no
 *			  exact device value, emitted as pairs to recheck
 *	EMIT_UNMATCHED  after the last tile, for outer joins: each row of a
 *			  preserved side whose match flag is clear, with NULLs in the
 *			  other side's columns, through the filter, projected
 *	NEXT_CHUNK  a join whose inputs spilled to temporary files: after each
 *			  chunk pair's last tile, the next chunk pair (back to
 *			  RUN_STEP), or a finished chunk's unmatched rows (back to
 *			  EMIT_UNMATCHED); see spill.c
 *	DONE	  nothing left
 *
 * Join types are handled here, not on the backends, which only return
 * matching pairs.  A match means a pair passed every join qual (device,
 * host, recheck), exactly as nodeNestloop.c sets nl_MatchedOuter before it
 * tests the other quals: LEFT/FULL/ANTI keep a flag per outer row and emit
 * the unflagged ones at the end (ANTI emits only those), RIGHT/FULL the same
 * for inner rows, and SEMI emits an outer row at its first match and skips
 * the later pairs of a flagged row (so does ANTI, which emits no pairs).
 * Every pair comes from exactly one tile and one step, so a flag set in one
 * tile holds for all the later ones.
 *
 * Interrupts are checked between steps and between emitted pairs, and a
 * backend step is bounded in work, so cancel and statement_timeout act
 * promptly.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "executor/nodeCustom.h"
#include "miscadmin.h"

#include "gpujoin.h"
#include "custom_scan/agg/gpujoin_agg.h"
#include "custom_scan/exec/gpujoin_exec.h"
#include "host_chunking/staging.h"

/*
 * EMIT reads the stored columns of the pair this many pairs ahead into the
 * cache.  The pairs of a hash or sort-merge step come in key order, so their
 * rows are scattered over the drained arrays and, without the prefetch,
 * forming the scan tuple waits on a cache miss per column (see
 * test/bench/bench_emit.sh).
 */
#define EMIT_PREFETCH_DISTANCE	16

#if defined(__GNUC__) || defined(__clang__)
#define gj_prefetch(addr)		__builtin_prefetch(addr)
#else
#define gj_prefetch(addr)		((void) 0)
#endif

static void gpujoin_exec_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *gpujoin_exec(CustomScanState *node);

static const CustomExecMethods gpujoin_exec_methods = {
	.CustomName = GPUJOIN_NAME,
	.BeginCustomScan = gpujoin_exec_begin,
	.ExecCustomScan = gpujoin_exec,
	.EndCustomScan = gpujoin_end,
	.ReScanCustomScan = gpujoin_rescan,
	.EstimateDSMCustomScan = gpujoin_estimate_dsm,
	.InitializeDSMCustomScan = gpujoin_initialize_dsm,
	.ReInitializeDSMCustomScan = gpujoin_reinitialize_dsm,
	.InitializeWorkerCustomScan = gpujoin_initialize_worker,
	.ShutdownCustomScan = gpujoin_shutdown,
	.ExplainCustomScan = gpujoin_explain,
};

/*
 * The join node's state, for CreateCustomScanState of gpujoin_scan_methods
 * (gpujoin_agg_exec.c).  That table is the one registered under the name
 * GpuJoin, which the aggregate node shares, so its CreateCustomScanState,
 * above this room, sends a worker's copy of a partial aggregate node to
 * gpujoin_agg_create_scan_state and only a join here.
 */
Node *
gpujoin_create_scan_state(CustomScan *cscan)
{
	GpuJoinState *gjs;

	gjs = palloc0(sizeof(GpuJoinState));
	Assert(list_length(cscan->custom_private) == GJ_PRIVATE_JOIN_LENGTH);
	NodeSetTag(gjs, T_CustomScanState);
	gjs->css.flags = cscan->flags;
	gjs->css.methods = &gpujoin_exec_methods;
	return (Node *) gjs;
}

/*
 * Set direct_src when a pair's output row can be filled without a scan tuple:
 * the node projects (its target list is not the scan tuple itself), every
 * target entry is a plain scan column, the output slot is virtual, and no
 * host qual or filter has to see the scan tuple first.
 */
static void
gpujoin_plan_direct_output(GpuJoinState *gjs, CustomScan *cscan)
{
	PlanState  *ps = &gjs->css.ss.ps;
	List	   *tlist = cscan->scan.plan.targetlist;
	int		   *direct_src;
	ListCell   *lc;
	int			j = 0;

	gjs->direct_src = NULL;
	gjs->ndirect = 0;
	if (ps->ps_ProjInfo == NULL || ps->ps_ResultTupleSlot == NULL ||
		ps->ps_ResultTupleSlot->tts_ops != &TTSOpsVirtual ||
		gjs->host_qual != NULL || gjs->filter_qual != NULL ||
		list_length(tlist) != ps->ps_ResultTupleSlot->tts_tupleDescriptor->natts)
		return;

	direct_src = palloc(sizeof(int) * Max(list_length(tlist), 1));
	foreach(lc, tlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Var		   *var = (Var *) tle->expr;
		int			k;

		if (!IsA(var, Var) || var->varno != INDEX_VAR || var->varlevelsup != 0 ||
			var->varattno < 1 || var->varattno > gjs->nscan)
		{
			pfree(direct_src);
			return;
		}
		/* target list columns are among the first npair_cols */
		for (k = 0; k < gjs->npair_cols; k++)
		{
			if (gjs->scan_src[k].scanpos == var->varattno - 1)
				break;
		}
		Assert(k < gjs->npair_cols);
		direct_src[j++] = k;
	}
	gjs->direct_src = direct_src;
	gjs->ndirect = j;
}

/* BeginCustomScan: the join's state, then how its rows are formed. */
static void
gpujoin_exec_begin(CustomScanState *node, EState *estate, int eflags)
{
	gpujoin_begin(node, estate, eflags);
	gpujoin_plan_direct_output((GpuJoinState *) node, (CustomScan *) node->ss.ps.plan);
}

static inline bool
match_flag_test(const uint8 *flags, int64 row)
{
	return (flags[row >> 3] >> (row & 7)) & 1;
}

static inline void
match_flag_set(uint8 *flags, int64 row)
{
	flags[row >> 3] |= (uint8) (1 << (row & 7));
}

/*
 * Fill the columns of the scan tuple that every pair needs; the others keep
 * whatever they held (valid values of earlier pairs, or NULLs), and nothing
 * reads them unless gpujoin_fill_columns fills them for a recheck.
 */
static inline void
gpujoin_form_pair_tuple(GpuJoinState *gjs, int64 outer_row, int64 inner_row)
{
	TupleTableSlot *scan = gjs->css.ss.ss_ScanTupleSlot;

	ExecClearTuple(scan);
	gpujoin_fill_columns(gjs, 0, gjs->npair_cols, outer_row, inner_row);
	ExecStoreVirtualTuple(scan);
}

/* A pair's output row, filled from the stored arrays (see direct_src). */
static inline TupleTableSlot *
gpujoin_form_direct_output(GpuJoinState *gjs, int64 outer_row, int64 inner_row)
{
	TupleTableSlot *result = gjs->css.ss.ps.ps_ResultTupleSlot;
	int			j;

	ExecClearTuple(result);
	for (j = 0; j < gjs->ndirect; j++)
	{
		const GjScanColumn *src = &gjs->scan_src[gjs->direct_src[j]];
		int64		row = src->outer ? outer_row : inner_row;

		result->tts_values[j] = src->values[row];
		result->tts_isnull[j] = src->isnull != NULL && src->isnull[row];
	}
	return ExecStoreVirtualTuple(result);
}

/* Ask the cache for the stored columns of a pair that will be formed soon. */
static inline void
gpujoin_prefetch_pair(GpuJoinState *gjs, int64 outer_row, int64 inner_row)
{
	int			k;

	for (k = 0; k < gjs->npair_cols; k++)
	{
		const GjScanColumn *src = &gjs->scan_src[k];
		int64		row = src->outer ? outer_row : inner_row;

		gj_prefetch(&src->values[row]);
		if (src->isnull != NULL)
			gj_prefetch(&src->isnull[row]);
	}
}

/*
 * The next row of the match buffer's pairs that the join returns, or NULL
 * when the buffer is used up.
 */
static TupleTableSlot *
gpujoin_emit_matches(GpuJoinState *gjs)
{
	CustomScanState *node = &gjs->css;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	ProjectionInfo *proj = node->ss.ps.ps_ProjInfo;

	while (gjs->match_pos < gjs->matches.count)
	{
		uint32		outer_row = gjs->matches.outer_rows[gjs->match_pos];
		uint32		inner_row = gjs->matches.inner_rows[gjs->match_pos];
		int64		outer_pos = outer_row & GJ_PAIR_ROW_MASK;

		/* GJ_PHASE_HOST_PAIRS evaluates these rows' pairs on the host */
		if (gpujoin_skip_inexact_pair(gjs, outer_pos, inner_row))
		{
			gjs->match_pos++;
			continue;
		}
		if (gjs->match_pos + EMIT_PREFETCH_DISTANCE < gjs->matches.count)
		{
			int64		ahead = gjs->match_pos + EMIT_PREFETCH_DISTANCE;

			gpujoin_prefetch_pair(gjs,
								  gjs->matches.outer_rows[ahead] & GJ_PAIR_ROW_MASK,
								  gjs->matches.inner_rows[ahead]);
		}
		gjs->match_pos++;
		CHECK_FOR_INTERRUPTS();

		/*
		 * Semi and anti joins are decided by an outer row's first match: its
		 * later pairs need no evaluation.
		 */
		if (gjs->once_per_outer &&
			match_flag_test(gjs->outer_matched, outer_pos))
		{
			gjs->counters.pairs_skipped++;
			continue;
		}

		/* the common case: nothing to evaluate on the host */
		if (gjs->direct_src != NULL && !(outer_row & GJ_PAIR_RECHECK))
		{
			if (gjs->outer_matched != NULL)
				match_flag_set(gjs->outer_matched, outer_pos);
			if (gjs->inner_matched != NULL)
				match_flag_set(gjs->inner_matched, inner_row);
			if (!gjs->emit_pairs)
				continue;
			gjs->counters.rows_returned++;
			return gpujoin_form_direct_output(gjs, outer_pos, inner_row);
		}
		ResetExprContext(econtext);
		gpujoin_form_pair_tuple(gjs, outer_pos, inner_row);
		econtext->ecxt_scantuple = node->ss.ss_ScanTupleSlot;

		/*
		 * A pair the device could not decide goes through every qual, in
		 * PostgreSQL's order; the others through the host quals only.
		 */
		if (outer_row & GJ_PAIR_RECHECK)
		{
			gjs->counters.host_rechecks++;
			gpujoin_fill_columns(gjs, gjs->npair_cols, gjs->nscan,
								 outer_pos, inner_row);
			if (!ExecQual(gjs->recheck_qual, econtext))
				continue;
		}
		else if (gjs->host_qual != NULL && !ExecQual(gjs->host_qual, econtext))
		{
			gjs->counters.host_rejected++;
			continue;
		}

		/* a match, whether or not the filter keeps the row */
		if (gjs->outer_matched != NULL)
			match_flag_set(gjs->outer_matched, outer_pos);
		if (gjs->inner_matched != NULL)
			match_flag_set(gjs->inner_matched, inner_row);
		if (!gjs->emit_pairs)
			continue;
		if (!ExecQual(gjs->filter_qual, econtext))
		{
			gjs->counters.filter_rejected++;
			continue;
		}
		gjs->counters.rows_returned++;
		if (proj == NULL)
			return node->ss.ss_ScanTupleSlot;
		return ExecProject(proj);
	}
	return NULL;
}

/*
 * The next unmatched row of the preserved side(s), outer rows first, null-
 * extended and passed through the join's filter, projected; NULL when none
 * is left.
 */
static TupleTableSlot *
gpujoin_emit_unmatched(GpuJoinState *gjs)
{
	PlanState  *ps = &gjs->css.ss.ps;
	ExprContext *econtext = ps->ps_ExprContext;
	TupleTableSlot *scan = gjs->css.ss.ss_ScanTupleSlot;
	int64		nouter = gjs->outer_buf.nrows;
	int64		ninner = gjs->inner_buf.nrows;

	for (;;)
	{
		int64		pos = gjs->unmatched_pos;
		int			side;
		int64		row;
		const uint8 *flags;

		if (pos >= gjs->unmatched_end)
			return NULL;
		if (pos < nouter)
		{
			if (!gjs->fill_outer)
			{
				gjs->unmatched_pos = nouter;
				continue;
			}
			side = GJ_SIDE_OUTER;
			row = pos;
			flags = gjs->outer_matched;
		}
		else if (pos < nouter + ninner)
		{
			if (!gjs->fill_inner)
			{
				gjs->unmatched_pos = nouter + ninner;
				continue;
			}
			side = GJ_SIDE_INNER;
			row = pos - nouter;
			flags = gjs->inner_matched;
		}
		else
			return NULL;

		/* eight matched rows at a time (bits past the last row stay clear) */
		if ((row & 7) == 0 && flags[row >> 3] == 0xff)
		{
			gjs->unmatched_pos += 8;
			continue;
		}
		gjs->unmatched_pos++;
		if (match_flag_test(flags, row))
			continue;

		CHECK_FOR_INTERRUPTS();
		ResetExprContext(econtext);
		ExecClearTuple(scan);
		gpujoin_fill_null_extended(gjs, side, row);
		ExecStoreVirtualTuple(scan);
		econtext->ecxt_scantuple = scan;
		if (side == GJ_SIDE_OUTER)
			gjs->counters.null_extended_outer++;
		else
			gjs->counters.null_extended_inner++;
		if (!ExecQual(gjs->filter_qual, econtext))
		{
			gjs->counters.filter_rejected++;
			continue;
		}
		gjs->counters.rows_returned++;
		if (ps->ps_ProjInfo == NULL)
			return scan;
		return ExecProject(ps->ps_ProjInfo);
	}
}

/* After the last step: the pairs of rows with inexact keys, if any. */
static inline GpuJoinPhase
gpujoin_phase_after_steps(GpuJoinState *gjs)
{
	if (gjs->outer_inexact != NULL || gjs->inner_inexact != NULL)
	{
		gjs->in_host_pairs = true;
		return GJ_PHASE_HOST_PAIRS;
	}
	return gpujoin_phase_after_tiles(gjs);
}

/*
 * The part of the wall clock (GjWallPart) each phase is on, where the
 * functions it calls do not say otherwise.  The emitting phases stay on
 * theirs while the parent works on a row: the clock is read when the part
 * changes, not per row.
 */
static const GjWallPart phase_wall_part[] = {
	[GJ_PHASE_DRAIN] = GJ_WALL_OTHER,
	[GJ_PHASE_RUN_STEP] = GJ_WALL_OTHER,
	[GJ_PHASE_EMIT] = GJ_WALL_EMIT,
	[GJ_PHASE_HOST_PAIRS] = GJ_WALL_EMIT,
	[GJ_PHASE_EMIT_UNMATCHED] = GJ_WALL_EMIT,
	[GJ_PHASE_NEXT_CHUNK] = GJ_WALL_OTHER,
	[GJ_PHASE_DONE] = GJ_WALL_AFTER,
};

/* ExecCustomScan: the state machine of the file's header comment. */
static TupleTableSlot *
gpujoin_exec(CustomScanState *node)
{
	GpuJoinState *gjs = (GpuJoinState *) node;
	TupleTableSlot *slot;

	gpujoin_wall_run(gjs);
	for (;;)
	{
		if (gjs->wall_part != phase_wall_part[gjs->phase])
			(void) gpujoin_wall_switch(gjs, phase_wall_part[gjs->phase]);
		switch (gjs->phase)
		{
			case GJ_PHASE_DRAIN:
				gjs->phase = gpujoin_prepare(gjs);
				break;

			case GJ_PHASE_RUN_STEP:
				if (gpujoin_run_step(gjs))
					gjs->phase = GJ_PHASE_EMIT;
				else
				{
					/* its resources go now, not at the end of the query */
					gpujoin_release_backend(gjs);
					gjs->phase = gpujoin_phase_after_steps(gjs);
				}
				break;

			case GJ_PHASE_HOST_PAIRS:
				gjs->phase = gpujoin_next_host_pairs(gjs) ? GJ_PHASE_EMIT :
					gpujoin_phase_after_tiles(gjs);
				break;

			case GJ_PHASE_EMIT:
				slot = gpujoin_emit_matches(gjs);
				if (slot != NULL)
					return slot;
				gjs->phase = gjs->in_host_pairs ? GJ_PHASE_HOST_PAIRS : GJ_PHASE_RUN_STEP;
				break;

			case GJ_PHASE_EMIT_UNMATCHED:
				slot = gpujoin_emit_unmatched(gjs);
				if (slot != NULL)
					return slot;
				gjs->phase = gjs->spilled ? GJ_PHASE_NEXT_CHUNK : GJ_PHASE_DONE;
				break;

			case GJ_PHASE_NEXT_CHUNK:
				gjs->phase = gpujoin_spill_next(gjs);
				break;

			case GJ_PHASE_DONE:
				return NULL;
		}
	}
}

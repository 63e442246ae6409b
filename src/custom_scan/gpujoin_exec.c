/*-------------------------------------------------------------------------
 *
 * gpujoin_exec.c
 *	  Executor side of GpuJoin.
 *
 * The node is a state machine in the style of nodeHashjoin.c, returning one
 * tuple per call:
 *
 *	DRAIN	  drain the inner input, then the outer one, into host buffers;
 *			  plan the tiles of the join matrix; open the backend
 *	RUN_STEP  run the next step of the current tile (or open the next tile)
 *			  on the backend, which fills the match buffer
 *	EMIT	  for each (outer row, inner row) in the match buffer: build the
 *			  scan tuple from the stored columns, evaluate the host quals
 *			  (and, for pairs the device flagged, the device quals); a pair
 *			  that passes is a match: set the match flags of its rows, then
 *			  apply the join's filter and project.  With nothing to evaluate
 *			  on the host, the output row is filled straight from the
 *			  stored columns instead (see gpujoin_plan_direct_output)
 *	EMIT_UNMATCHED  after the last tile, for outer joins: each row of a
 *			  preserved side whose match flag is clear, with NULLs in the
 *			  other side's columns, through the filter, projected
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
 * promptly.  The backend's memory is released by a callback on the node's
 * memory context, so it goes away on ERROR too.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "executor/executor.h"
#include "executor/nodeCustom.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"

#include "gpujoin.h"
#include "custom_scan/gpujoin_exec.h"

/* Budget of one join on the cpu backend when gpujoin.device_memory is 0. */
#define CPU_DEFAULT_BUDGET		((int64) 256 * 1024 * 1024)
/* Smallest budget a join that ran out of device memory is retried with. */
#define MIN_RETRY_BUDGET		((int64) 1024 * 1024)

/*
 * EMIT reads the stored columns of the pair this many pairs ahead into the
 * cache.  The pairs of a hash or sort-merge step come in key order, so their
 * rows are scattered over the drained arrays and, without the prefetch,
 * forming the scan tuple waits on a cache miss per column (see
 * test/bench/bench_emit.sh).
 */
#define EMIT_PREFETCH_DISTANCE	16

/* Pairs of rows with inexact keys formed per batch (GJ_PHASE_HOST_PAIRS). */
#define HOST_PAIRS_BATCH		4096

#if defined(__GNUC__) || defined(__clang__)
#define gj_prefetch(addr)		__builtin_prefetch(addr)
#else
#define gj_prefetch(addr)		((void) 0)
#endif

static TupleTableSlot *gpujoin_exec(CustomScanState *node);
static void gpujoin_order_scan_columns(GpuJoinState *gjs, CustomScan *cscan);
static void gpujoin_plan_direct_output(GpuJoinState *gjs, CustomScan *cscan);

static const CustomExecMethods gpujoin_exec_methods = {
	.CustomName = GPUJOIN_NAME,
	.BeginCustomScan = gpujoin_begin,
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

Node *
gpujoin_create_scan_state(CustomScan *cscan)
{
	GpuJoinState *gjs;

	/* aggregates computed in the join: see gpujoin_agg_exec.c */
	if (gpujoin_plan_is_agg(cscan))
		return gpujoin_agg_create_scan_state(cscan);
	gjs = palloc0(sizeof(GpuJoinState));

	NodeSetTag(gjs, T_CustomScanState);
	gjs->css.flags = cscan->flags;
	gjs->css.methods = &gpujoin_exec_methods;
	return (Node *) gjs;
}

/* Release the backend's memory; safe to call more than once. */
static void
gpujoin_release_backend(void *arg)
{
	GpuJoinState *gjs = arg;

	/* a step still running on the overlap thread uses the backend's state */
	gpujoin_step_ahead_cancel(gjs);
	gjs->double_buffered = false;
	gjs->no_overlap = false;
	if (gjs->backend_state != NULL)
	{
		void	   *state = gjs->backend_state;

		gjs->backend_state = NULL;
		gjs->backend->end_join(state);
	}
}

void
gpujoin_begin(CustomScanState *node, EState *estate, int eflags)
{
	GpuJoinState *gjs = (GpuJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	int			child_eflags = eflags & ~(EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK);
	ListCell   *ls,
			   *la;
	List	   *outer_cols = NIL;
	List	   *inner_cols = NIL;
	int			k = 0;

	gpujoin_plan_info_deserialize(cscan->custom_private, &gjs->info);

	gjs->outer_ps = ExecInitNode(linitial(cscan->custom_plans), estate, child_eflags);
	gjs->inner_ps = ExecInitNode(lsecond(cscan->custom_plans), estate, child_eflags);
	node->custom_ps = list_make2(gjs->outer_ps, gjs->inner_ps);

	gjs->host_qual = ExecInitQual(linitial(cscan->custom_exprs), &node->ss.ps);
	gjs->recheck_qual = ExecInitQual(lthird(cscan->custom_exprs), &node->ss.ps);
	gjs->filter_qual = ExecInitQual(lfourth(cscan->custom_exprs), &node->ss.ps);

	gjs->jointype = (JoinType) gjs->info.jointype;
	gjs->fill_outer = (gjs->jointype == JOIN_LEFT || gjs->jointype == JOIN_FULL ||
					   gjs->jointype == JOIN_ANTI);
	gjs->fill_inner = (gjs->jointype == JOIN_RIGHT || gjs->jointype == JOIN_FULL);
	gjs->emit_pairs = gjs->jointype != JOIN_ANTI;
	gjs->once_per_outer = (gjs->jointype == JOIN_SEMI || gjs->jointype == JOIN_ANTI);

	/* each side stores the distinct attributes the scan tuple needs */
	gjs->nscan = list_length(gjs->info.scan_sides);
	gjs->scan_sides = palloc(sizeof(int) * Max(gjs->nscan, 1));
	gjs->scan_cols = palloc(sizeof(int) * Max(gjs->nscan, 1));
	gjs->scan_src = palloc0(sizeof(GjScanColumn) * Max(gjs->nscan, 1));
	forboth(ls, gjs->info.scan_sides, la, gjs->info.scan_attnos)
	{
		List	  **cols = lfirst_int(ls) == GJ_SIDE_OUTER ? &outer_cols : &inner_cols;
		ListCell   *lc;
		int			pos = -1;

		foreach(lc, *cols)
		{
			if (lfirst_int(lc) == lfirst_int(la))
				pos = foreach_current_index(lc);
		}
		if (pos < 0)
		{
			pos = list_length(*cols);
			*cols = lappend_int(*cols, lfirst_int(la));
		}
		gjs->scan_sides[k] = lfirst_int(ls);
		gjs->scan_cols[k] = pos;
		k++;
	}
	gpujoin_order_scan_columns(gjs, cscan);

	gjs->join_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuJoin",
										  ALLOCSET_DEFAULT_SIZES);
	host_buffer_init(&gjs->outer_buf, gjs->join_cxt, "GpuJoin outer rows",
					 gjs->info.outer_key_attnos, gjs->info.outer_key_types,
					 outer_cols, ExecGetResultType(gjs->outer_ps));
	host_buffer_init(&gjs->inner_buf, gjs->join_cxt, "GpuJoin inner rows",
					 gjs->info.inner_key_attnos, gjs->info.inner_key_types,
					 inner_cols, ExecGetResultType(gjs->inner_ps));
	host_buffer_set_key_hashes(&gjs->outer_buf, gjs->info.outer_key_hashfuncs,
							   gjs->info.outer_key_collations);
	host_buffer_set_key_hashes(&gjs->inner_buf, gjs->info.inner_key_hashfuncs,
							   gjs->info.inner_key_collations);
	gpujoin_plan_direct_output(gjs, cscan);
	gjs->cleanup.func = gpujoin_release_backend;
	gjs->cleanup.arg = gjs;
	MemoryContextRegisterResetCallback(gjs->join_cxt, &gjs->cleanup);

	gjs->phase = GJ_PHASE_DRAIN;
}

/*
 * Order scan_src: first the scan columns that every emitted pair needs (read
 * by the target list, the host quals or the filter), then those that only
 * the recheck quals read.  The plan's expressions refer to the scan tuple as
 * INDEX_VAR.
 */
static void
gpujoin_order_scan_columns(GpuJoinState *gjs, CustomScan *cscan)
{
	Bitmapset  *pair_attrs = NULL;
	int			n = 0;
	int			pass;
	int			k;

	pull_varattnos((Node *) cscan->scan.plan.targetlist, INDEX_VAR, &pair_attrs);
	pull_varattnos(linitial(cscan->custom_exprs), INDEX_VAR, &pair_attrs);
	pull_varattnos(lfourth(cscan->custom_exprs), INDEX_VAR, &pair_attrs);
	for (pass = 0; pass < 2; pass++)
	{
		for (k = 0; k < gjs->nscan; k++)
		{
			bool		every_pair = bms_is_member(k + 1 - FirstLowInvalidHeapAttributeNumber,
												   pair_attrs);

			if (every_pair != (pass == 0))
				continue;
			gjs->scan_src[n].scanpos = k;
			gjs->scan_src[n].outer = gjs->scan_sides[k] == GJ_SIDE_OUTER;
			n++;
		}
		if (pass == 0)
			gjs->npair_cols = n;
	}
	bms_free(pair_attrs);
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

static void
gpujoin_drain(PlanState *child, HostSideBuffer *buf, int64 other_side_bytes)
{
	int64		host_limit = (int64) gpujoin_max_host_memory_kb * 1024;

	for (;;)
	{
		TupleTableSlot *slot;

		CHECK_FOR_INTERRUPTS();
		slot = ExecProcNode(child);
		if (TupIsNull(slot))
			break;
		host_buffer_append(buf, slot);
		if (unlikely(buf->bytes_stored + other_side_bytes > host_limit))
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("GpuJoin inputs need more than gpujoin.max_host_memory (%d kB) of host memory",
							gpujoin_max_host_memory_kb),
					 errdetail("GpuJoin holds both inputs in memory; %lld rows of one input took %lld kB.",
							   (long long) buf->nrows, (long long) (buf->bytes_stored / 1024)),
					 errhint("Raise gpujoin.max_host_memory, or set gpujoin.enabled to off for this query.")));
	}
	buf->complete = true;
}

/*
 * Point each scan column at the arrays it is read from; called once both
 * inputs are drained, when the arrays no longer move.
 */
static void
gpujoin_resolve_scan_columns(GpuJoinState *gjs)
{
	int			k;

	for (k = 0; k < gjs->nscan; k++)
	{
		GjScanColumn *src = &gjs->scan_src[k];
		HostSideBuffer *buf = src->outer ? &gjs->outer_buf : &gjs->inner_buf;
		HostDatumColumn *col = buf->cols + gjs->scan_cols[src->scanpos];

		src->values = col->values;
		/* a column without NULLs is not read there: one cache miss less */
		src->isnull = col->has_nulls ? col->isnull : NULL;
		/* NULL until a recheck fills it, never a stale pointer */
		if (k >= gjs->npair_cols)
			gjs->css.ss.ss_ScanTupleSlot->tts_isnull[src->scanpos] = true;
	}
}

/* Turn a backend failure into an ERROR a DBA can act on. */
void
gpujoin_backend_error(GpuJoinState *gjs, const GjError *err)
{
	gpujoin_release_backend(gjs);
	if (err->code == GJ_ERR_OUT_OF_MEMORY)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("GpuJoin ran out of memory on the %s backend", gjs->backend->name),
				 errdetail("%s", err->message),
				 errhint("Lower gpujoin.device_memory, or set gpujoin.enabled to off for this query.")));
	ereport(ERROR,
			(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
			 errmsg("GpuJoin failed on the %s backend", gjs->backend->name),
			 errdetail("%s", err->message),
			 errhint("Set gpujoin.device to \"cpu\" to run GpuJoin without the GPU.")));
}

/*
 * A cleared bitmap of one match flag per row, reusing the previous one
 * (kept in join_cxt across rescans) when it is big enough.
 */
static uint8 *
match_flags_reset(MemoryContext cxt, uint8 *flags, int64 *allocated, int64 nrows)
{
	int64		bytes = Max((nrows + 7) / 8, 1);

	if (flags == NULL || bytes > *allocated)
	{
		if (flags != NULL)
			pfree(flags);
		flags = MemoryContextAlloc(cxt, bytes);
		*allocated = bytes;
	}
	memset(flags, 0, bytes);
	return flags;
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
 * A device program that hands every pair to the host: int8 division by
 * zero, which every backend's interpreter answers with GJ_RESULT_RECHECK
 * (PostgreSQL would raise an error), so the host evaluates all the join's
 * quals on each pair, in PostgreSQL's order.  Built from instructions the
 * backends have always had, so no backend needs to know about it.
 */
static const GjInstr host_decides_program[] = {
	{GJOP_CONST, GJT_INT8, 0, 1},
	{GJOP_CONST, GJT_INT8, 0, 0},
	{GJOP_DIV, GJT_INT8, 0, 0},
};

/* The largest scale of the numeric constants among the instructions. */
static int
numeric_const_scale(const GjInstr *instrs, int ninstrs, int scale)
{
	int			i;

	for (i = 0; i < ninstrs; i++)
	{
		if (instrs[i].op == GJOP_CONST && instrs[i].type == GJT_NUMERIC)
			scale = Max(scale, instrs[i].arg);
	}
	return scale;
}

/*
 * Rescale the numeric constants (planned at their own scales) to the join's
 * scale, in place.  False if one does not fit.
 */
static bool
rescale_numeric_consts(GjInstr *instrs, int ninstrs, int scale)
{
	int			i;

	for (i = 0; i < ninstrs; i++)
	{
		if (instrs[i].op == GJOP_CONST && instrs[i].type == GJT_NUMERIC &&
			!host_numeric_rescale(instrs[i].imm, instrs[i].arg, scale, &instrs[i].imm))
			return false;
	}
	return true;
}

/*
 * Encode what depends on the whole input: numeric keys as fixed point at
 * the largest scale their values (those that can fit at all) or the
 * program's numeric constants need, on both sides alike, so that the
 * integers compare as the numerics do; the constants (in input's program, a
 * copy of the plan's, and bounds) at the same scale.  A key value with no
 * exact int64 flags its row (host_buffer_encode): the device's answer for
 * such a row's pairs is never used, the host evaluates them all (see
 * GJ_PHASE_HOST_PAIRS).  Returns NULL, or why every pair of this execution
 * must go to the host: a numeric constant that does not fit the scale.
 * Nothing is ever rounded or wrapped.
 */
static const char *
gpujoin_encode_keys(GpuJoinState *gjs, GjJoinInput *input)
{
	int			scale = Max(host_buffer_numeric_scale(&gjs->outer_buf),
							host_buffer_numeric_scale(&gjs->inner_buf));

	gjs->exec_program = gjs->info.program;
	input->instrs = gjs->exec_program.instrs;
	input->ninstrs = gjs->exec_program.ninstrs;
	scale = numeric_const_scale(gjs->exec_program.instrs, gjs->exec_program.ninstrs, scale);
	scale = numeric_const_scale(input->range.lo_instrs, input->range.lo_ninstrs, scale);
	scale = numeric_const_scale(input->range.hi_instrs, input->range.hi_ninstrs, scale);
	host_buffer_encode(&gjs->outer_buf, scale);
	host_buffer_encode(&gjs->inner_buf, scale);
	if (scale >= 0 &&
		(!rescale_numeric_consts(gjs->exec_program.instrs, gjs->exec_program.ninstrs, scale) ||
		 !rescale_numeric_consts(input->range.lo_instrs, input->range.lo_ninstrs, scale) ||
		 !rescale_numeric_consts(input->range.hi_instrs, input->range.hi_ninstrs, scale)))
		return "a numeric constant does not fit the join's 64-bit fixed point: all quals on the host";
	return NULL;
}

/* After the tiles: the unmatched rows of the preserved sides, or nothing. */
static inline GpuJoinPhase
gpujoin_phase_after_tiles(GpuJoinState *gjs)
{
	return gjs->fill_outer || gjs->fill_inner ? GJ_PHASE_EMIT_UNMATCHED : GJ_PHASE_DONE;
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
 * Drain what has to be drained, clear the match flags, plan the tiles and
 * open the backend.  Returns the next phase: RUN_STEP, or, when a side is
 * empty and no pair can match, EMIT_UNMATCHED or DONE.
 */
GpuJoinPhase
gpujoin_prepare(GpuJoinState *gjs)
{
	instr_time	start,
				end;
	GjJoinInput input;
	GjError		err;
	int64		budget;

	gjs->inexact_keys = NULL;
	gjs->outer_inexact = NULL;
	gjs->inner_inexact = NULL;
	gjs->in_host_pairs = false;
	INSTR_TIME_SET_CURRENT(start);
	if (!gjs->inner_buf.complete)
	{
		gpujoin_drain(gjs->inner_ps, &gjs->inner_buf, gjs->outer_buf.bytes_stored);
		gjs->inner_drained += gjs->inner_buf.nrows;
	}

	/*
	 * With no inner rows nothing matches: an inner, semi or right join is
	 * empty, and the outer side is never read (as in nodeHashjoin.c).  Left,
	 * full and anti joins return every outer row.
	 */
	if (gjs->inner_buf.nrows == 0 && !gjs->fill_outer)
		return GJ_PHASE_DONE;
	if (!gjs->outer_buf.complete)
	{
		gpujoin_drain(gjs->outer_ps, &gjs->outer_buf, gjs->inner_buf.bytes_stored);
		gjs->outer_drained += gjs->outer_buf.nrows;
	}
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	gjs->drain_ms += INSTR_TIME_GET_MILLISEC(end);
	gpujoin_resolve_scan_columns(gjs);

	/* every rescan starts with no row matched */
	if (gjs->fill_outer || gjs->once_per_outer)
		gjs->outer_matched = match_flags_reset(gjs->join_cxt, gjs->outer_matched,
											   &gjs->outer_matched_bytes,
											   gjs->outer_buf.nrows);
	if (gjs->fill_inner)
		gjs->inner_matched = match_flags_reset(gjs->join_cxt, gjs->inner_matched,
											   &gjs->inner_matched_bytes,
											   gjs->inner_buf.nrows);
	gjs->unmatched_pos = 0;
	if (gjs->outer_buf.nrows == 0 || gjs->inner_buf.nrows == 0)
		return gpujoin_phase_after_tiles(gjs);

	/*
	 * A partial plan (each process of a parallel query joins its share of
	 * the outer rows) runs on the cpu backend in every process: each would
	 * open its own CUDA context on the same device otherwise.  The planner
	 * offers one only where it plans for the cpu backend.
	 */
	if (gjs->backend == NULL && gjs->css.ss.ps.plan->parallel_safe)
		gjs->backend = &gj_cpu_backend;
	if (gjs->backend == NULL)
	{
		gjs->backend = gpujoin_choose_backend(&gjs->cuda_info, &gjs->cuda_first_use);
		if (!(gjs->backend->algorithms & (1u << gjs->info.algorithm)))
		{
			/* same algorithm, same answer: on the backend that has it */
			elog(DEBUG1, "GpuJoin: the %s backend has no %s algorithm; using the cpu backend",
				 gjs->backend->name, gpujoin_algorithm_name(gjs->info.algorithm));
			gjs->fallback_from = gjs->backend;
			gjs->fallback_reason = psprintf("%s has no %s kernel", gjs->backend->name,
											gpujoin_algorithm_name(gjs->info.algorithm));
			gjs->backend = &gj_cpu_backend;
		}
		else if (gjs->wants_agg_step && gjs->backend->agg_step == NULL)
		{
			/*
			 * Counting and summing from range widths beats returning every
			 * pair, however fast the device produces them.
			 */
			gjs->fallback_from = gjs->backend;
			gjs->fallback_reason = psprintf("%s has no aggregate kernel", gjs->backend->name);
			gjs->backend = &gj_cpu_backend;
		}
	}

	if (gpujoin_device_memory_kb > 0)
		budget = (int64) gpujoin_device_memory_kb * 1024;
	else if (gjs->backend == &gj_cuda_backend)
		budget = gjs->cuda_info.free_memory / 2;
	else
		budget = CPU_DEFAULT_BUDGET;

	memset(&input, 0, sizeof(input));
	input.outer_nrows = gjs->outer_buf.nrows;
	input.inner_nrows = gjs->inner_buf.nrows;
	input.algorithm = gjs->info.algorithm;
	input.range = gjs->info.range;
	input.equi = gjs->info.equi;
	input.filter_needed = gjs->info.filter_needed;
	gjs->inexact_keys = gpujoin_encode_keys(gjs, &input);
	/* after the encoding: it decides which values the backends see as NULL */
	host_buffer_key_columns(&gjs->outer_buf, &input.outer);
	host_buffer_key_columns(&gjs->inner_buf, &input.inner);
	if (gjs->inexact_keys == NULL)
	{
		gjs->outer_inexact = gjs->outer_buf.ninexact > 0 ? gjs->outer_buf.inexact : NULL;
		gjs->inner_inexact = gjs->inner_buf.ninexact > 0 ? gjs->inner_buf.inexact : NULL;
		gjs->host_pair_outer = 0;
		gjs->host_pair_inner = 0;
	}
	gjs->band_guard_failed = false;
	if (gjs->inexact_keys != NULL)
	{
		/* some key has no exact device value: the host decides each pair */
		input.instrs = host_decides_program;
		input.ninstrs = lengthof(host_decides_program);
		input.algorithm = GJ_ALGO_NESTLOOP;
		input.filter_needed = true;
	}
	else if (input.algorithm == GJ_ALGO_SORTMERGE &&
		!gpujoin_band_guard_holds(&gjs->info.band_guard,
								  &input.outer, input.outer_nrows,
								  &input.inner, input.inner_nrows))
	{
		/* the native plan would raise the overflow: let the pairs do so */
		input.algorithm = GJ_ALGO_NESTLOOP;
		input.filter_needed = true;
		gjs->band_guard_failed = true;
	}

	/*
	 * Open the join.  When the device has less free memory than the budget
	 * promised (another process took it, or fragmentation), halve the budget
	 * and so the tiles, and try again; below MIN_RETRY_BUDGET give up on the
	 * device and run the join on the cpu backend, which gives the same rows.
	 */
	gpujoin_fault_join_start();
	INSTR_TIME_SET_CURRENT(start);
	for (;;)
	{
		tile_schedule_plan(&gjs->sched,
						   gjs->outer_buf.nrows, host_buffer_key_row_bytes(&gjs->outer_buf),
						   gjs->inner_buf.nrows, host_buffer_key_row_bytes(&gjs->inner_buf),
						   budget);
		input.match_capacity = gjs->sched.match_capacity;
		input.budget_bytes = budget;

		memset(&err, 0, sizeof(err));
		gjs->backend_state = gpujoin_backend_begin(gjs->backend, &input, &err);
		if (gjs->backend_state != NULL)
			break;
		if (err.code != GJ_ERR_OUT_OF_MEMORY && err.code != GJ_ERR_OVER_BUDGET)
			gpujoin_backend_error(gjs, &err);
		/* over the budget at any tile size: no smaller tiles will do */
		if (err.code == GJ_ERR_OUT_OF_MEMORY && budget / 2 >= MIN_RETRY_BUDGET)
		{
			budget /= 2;
			gjs->oom_retries++;
			elog(DEBUG1, "GpuJoin: %s; retrying with a budget of %lld kB",
				 err.message, (long long) (budget / 1024));
			continue;
		}
		if (gjs->backend == &gj_cpu_backend)
			gpujoin_backend_error(gjs, &err);
		ereport(NOTICE,
				(errmsg("GpuJoin is running on the cpu backend: not enough memory on the %s backend",
						gjs->backend->name),
				 errdetail("%s", err.message)));
		gjs->fallback_from = gjs->backend;
		gjs->fallback_reason = "out of memory";
		gjs->backend = &gj_cpu_backend;
		/* a set budget bounds the cpu backend's tiles too, as on cpu */
		budget = gpujoin_device_memory_kb > 0 ?
			(int64) gpujoin_device_memory_kb * 1024 : CPU_DEFAULT_BUDGET;
	}
	gjs->budget_bytes = budget;
	/* opening the join (copying and sorting keys) is backend work too */
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	gjs->backend_ms += INSTR_TIME_GET_MILLISEC(end);
	gjs->tile_open = false;
	return GJ_PHASE_RUN_STEP;
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
		if (!tile_schedule_next(&gjs->sched, &gjs->tile))
			return false;
		if (gjs->backend->tile_can_match != NULL &&
			!gjs->backend->tile_can_match(gjs->backend_state, &gjs->tile))
		{
			gjs->tiles_pruned++;
			continue;
		}
		gjs->tile_open = true;
		gjs->outer_next = gjs->tile.outer_begin;
		gjs->tiles_run++;
	}
	return true;
}

/*
 * Run the next backend step, or take the one that ran while the previous
 * step's rows were emitted (gpujoin_overlap.c), and start the one after it.
 * False when every tile is done.
 */
static bool
gpujoin_run_step(GpuJoinState *gjs)
{
	instr_time	start,
				end;
	GjError		err;

	CHECK_FOR_INTERRUPTS();
	if (gjs->ahead.pending)
	{
		gpujoin_step_ahead_collect(gjs);
		gjs->match_pos = 0;
		gpujoin_step_ahead_start(gjs);
		return true;
	}
	if (!gpujoin_open_tile(gjs))
		return false;

	memset(&err, 0, sizeof(err));
	INSTR_TIME_SET_CURRENT(start);
	if (!gpujoin_backend_step(gjs->backend, gjs->backend_state, &gjs->tile,
							  &gjs->outer_next, &gjs->matches, &gjs->stats, &err))
		gpujoin_backend_error(gjs, &err);
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	gjs->backend_ms += INSTR_TIME_GET_MILLISEC(end);
	gjs->steps++;

	if (gjs->outer_next >= gjs->tile.outer_end)
		gjs->tile_open = false;
	gjs->match_pos = 0;
	gpujoin_step_ahead_start(gjs);
	return true;
}

/* Copy scan_src[from .. to - 1] of one pair into the scan tuple. */
static inline void
gpujoin_fill_columns(GpuJoinState *gjs, int from, int to,
					 int64 outer_row, int64 inner_row)
{
	TupleTableSlot *scan = gjs->css.ss.ss_ScanTupleSlot;
	int			k;

	for (k = from; k < to; k++)
	{
		const GjScanColumn *src = &gjs->scan_src[k];
		int64		row = src->outer ? outer_row : inner_row;

		scan->tts_values[src->scanpos] = src->values[row];
		scan->tts_isnull[src->scanpos] = src->isnull != NULL && src->isnull[row];
	}
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
 * Fill the scan tuple from one unmatched row of the given side, with NULL in
 * every column of the other side.
 */
static void
gpujoin_form_null_extended(GpuJoinState *gjs, int side, int64 row)
{
	TupleTableSlot *scan = gjs->css.ss.ss_ScanTupleSlot;
	HostSideBuffer *buf = side == GJ_SIDE_OUTER ? &gjs->outer_buf : &gjs->inner_buf;
	int			k;

	ExecClearTuple(scan);
	for (k = 0; k < gjs->nscan; k++)
	{
		if (gjs->scan_sides[k] == side)
		{
			HostDatumColumn *col = buf->cols + gjs->scan_cols[k];

			scan->tts_values[k] = col->values[row];
			scan->tts_isnull[k] = col->isnull[row];
		}
		else
		{
			scan->tts_values[k] = (Datum) 0;
			scan->tts_isnull[k] = true;
		}
	}
	ExecStoreVirtualTuple(scan);
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
	int64		nouter = gjs->outer_buf.nrows;
	int64		ninner = gjs->inner_buf.nrows;

	for (;;)
	{
		int64		pos = gjs->unmatched_pos;
		int			side;
		int64		row;
		const uint8 *flags;

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
		gpujoin_form_null_extended(gjs, side, row);
		econtext->ecxt_scantuple = gjs->css.ss.ss_ScanTupleSlot;
		if (side == GJ_SIDE_OUTER)
			gjs->null_extended_outer++;
		else
			gjs->null_extended_inner++;
		if (!ExecQual(gjs->filter_qual, econtext))
		{
			gjs->filter_rejected++;
			continue;
		}
		gjs->rows_returned++;
		if (ps->ps_ProjInfo == NULL)
			return gjs->css.ss.ss_ScanTupleSlot;
		return ExecProject(ps->ps_ProjInfo);
	}
}

/*
 * GJ_PHASE_HOST_PAIRS: every pair with a row whose key has no exact device
 * value, as pairs flagged for a recheck, so that EMIT evaluates all the
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
	gjs->host_pairs += n;
	gjs->in_host_pairs = (n > 0);
	return n > 0;
}

static TupleTableSlot *
gpujoin_exec(CustomScanState *node)
{
	GpuJoinState *gjs = (GpuJoinState *) node;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	ProjectionInfo *proj = node->ss.ps.ps_ProjInfo;

	for (;;)
	{
		switch (gjs->phase)
		{
			case GJ_PHASE_DRAIN:
				gjs->phase = gpujoin_prepare(gjs);
				break;

			case GJ_PHASE_RUN_STEP:
				gjs->phase = gpujoin_run_step(gjs) ? GJ_PHASE_EMIT :
					gpujoin_phase_after_steps(gjs);
				break;

			case GJ_PHASE_HOST_PAIRS:
				gjs->phase = gpujoin_next_host_pairs(gjs) ? GJ_PHASE_EMIT :
					gpujoin_phase_after_tiles(gjs);
				break;

			case GJ_PHASE_EMIT:
				while (gjs->match_pos < gjs->matches.count)
				{
					uint32		outer_row = gjs->matches.outer_rows[gjs->match_pos];
					uint32		inner_row = gjs->matches.inner_rows[gjs->match_pos];
					int64		outer_pos = outer_row & GJ_PAIR_ROW_MASK;

					/*
					 * A row whose key has no exact device value: the device's
					 * answer for its pairs is not used, the host evaluates
					 * them all in GJ_PHASE_HOST_PAIRS.
					 */
					if (unlikely(gjs->outer_inexact != NULL || gjs->inner_inexact != NULL) &&
						!gjs->in_host_pairs &&
						((gjs->outer_inexact != NULL && gjs->outer_inexact[outer_pos]) ||
						 (gjs->inner_inexact != NULL && gjs->inner_inexact[inner_row])))
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
					 * Semi and anti joins are decided by an outer row's
					 * first match: its later pairs need no evaluation.
					 */
					if (gjs->once_per_outer &&
						match_flag_test(gjs->outer_matched, outer_pos))
					{
						gjs->pairs_skipped++;
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
						gjs->rows_returned++;
						return gpujoin_form_direct_output(gjs, outer_pos, inner_row);
					}
					ResetExprContext(econtext);
					gpujoin_form_pair_tuple(gjs, outer_pos, inner_row);
					econtext->ecxt_scantuple = node->ss.ss_ScanTupleSlot;

					/*
					 * A pair the device could not decide goes through every
					 * qual, in PostgreSQL's order; the others through the
					 * host quals only.
					 */
					if (outer_row & GJ_PAIR_RECHECK)
					{
						gjs->host_rechecks++;
						gpujoin_fill_columns(gjs, gjs->npair_cols, gjs->nscan,
											 outer_pos, inner_row);
						if (!ExecQual(gjs->recheck_qual, econtext))
							continue;
					}
					else if (gjs->host_qual != NULL && !ExecQual(gjs->host_qual, econtext))
					{
						gjs->host_rejected++;
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
						gjs->filter_rejected++;
						continue;
					}
					gjs->rows_returned++;
					if (proj == NULL)
						return node->ss.ss_ScanTupleSlot;
					return ExecProject(proj);
				}
				gjs->phase = gjs->in_host_pairs ? GJ_PHASE_HOST_PAIRS : GJ_PHASE_RUN_STEP;
				break;

			case GJ_PHASE_EMIT_UNMATCHED:
				{
					TupleTableSlot *slot = gpujoin_emit_unmatched(gjs);

					if (slot != NULL)
						return slot;
					gjs->phase = GJ_PHASE_DONE;
				}
				break;

			case GJ_PHASE_DONE:
				return NULL;
		}
	}
}

void
gpujoin_end(CustomScanState *node)
{
	GpuJoinState *gjs = (GpuJoinState *) node;

	gpujoin_release_backend(gjs);
	ExecEndNode(gjs->outer_ps);
	ExecEndNode(gjs->inner_ps);
}

/*
 * A side whose parameters did not change keeps its drained rows: only the
 * tile schedule starts over.  A side whose parameters changed is drained
 * again (its child rescans itself on the next ExecProcNode).
 */
static void
gpujoin_reset_side(PlanState *child, HostSideBuffer *buf)
{
	if (child->chgParam == NULL && buf->complete)
		return;
	if (child->chgParam == NULL)
		ExecReScan(child);
	host_buffer_reset(buf);
}

void
gpujoin_rescan(CustomScanState *node)
{
	GpuJoinState *gjs = (GpuJoinState *) node;

	if (node->ss.ps.chgParam != NULL)
	{
		UpdateChangedParamSet(gjs->outer_ps, node->ss.ps.chgParam);
		UpdateChangedParamSet(gjs->inner_ps, node->ss.ps.chgParam);
	}
	gpujoin_release_backend(gjs);
	gpujoin_reset_side(gjs->inner_ps, &gjs->inner_buf);
	gpujoin_reset_side(gjs->outer_ps, &gjs->outer_buf);
	gjs->tile_open = false;
	gjs->matches.count = 0;
	gjs->match_pos = 0;
	gjs->in_host_pairs = false;
	gjs->outer_inexact = NULL;
	gjs->inner_inexact = NULL;
	gjs->phase = GJ_PHASE_DRAIN;
}

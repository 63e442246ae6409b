/*-------------------------------------------------------------------------
 *
 * gpujoin_agg_exec.c
 *	  Executor side of aggregates computed inside GpuJoin.
 *
 * The node runs the GpuJoin machinery unchanged (gpujoin_open.c: drain both
 * inputs, plan tiles, open the backend; gpujoin_steps.c: run the steps) and
 * then, instead of emitting the pairs of each step, reduces them:
 *
 *	- each aggregate argument is a device program over one side's columns,
 *	  run once per input row (not per pair) into a value column with a flag
 *	  per row: value, NULL, or "error" (the program met an overflow or the
 *	  like; only a pair that uses the row makes PostgreSQL evaluate it, so
 *	  the host evaluates the original expression then, raising PostgreSQL's
 *	  own error);
 *	- with a backend that has an agg_step (every backend, the GPU
 *	  service's proxy included), the backend reduces what it can of each
 *	  step and returns only the pairs the host must reduce: a sort-merge
 *	  join whose bounds are its whole condition without a pair being
 *	  written (kernels/cpu/cpu_agg.c).  The argument columns, the groups
 *	  and the spec are built before the backend opens (before_open), and
 *	  the backend is opened with the spec;
 *	- every other step's match buffer is reduced here, in a C loop over the
 *	  pairs and the value columns; only pairs the device flagged RECHECK, or
 *	  that have host quals, get a scan tuple for ExecQual.
 *
 * Partial aggregates of all steps and tiles are combined into one, and the
 * node returns one row: the scan tuple's Aggref columns are filled with the
 * results, HAVING (the plan's qual) is applied, and the target list is
 * projected.
 *
 * GROUP BY (columns or expressions of the outer input, or of both): once
 * the inputs are drained, every row of a side with grouping keys gets a
 * group number from a TupleHashTable over its key values (the types' own
 * hash functions and equality operators, as PostgreSQL's hashed Agg: NULLs
 * form one group, -0.0 and 0.0 one, NaNs one), or from a table of its one
 * key's device values where they are equal exactly when the key is;
 * gpujoin_agg_groups.c.  Each
 * pair, or each sort-merge run of an outer row in the cpu backend's fast
 * path, is added to the partials of its rows' groups.  The node then
 * returns one row per group that has a pair, its columns from the group's
 * first outer (and inner) row, each through HAVING.
 *
 * A partial node (under a Gather, gpujoin_agg_partial.c) runs the same way
 * over its process's share of the outer rows, returns each aggregate's
 * transition state instead of its result, and has no HAVING: the Finalize
 * Agg above the Gather combines the processes' states.
 *
 * Results are PostgreSQL's: count is int8; sum(int2/int4) is int8 and wraps
 * on overflow exactly as int4_sum() does (it does not check); sum(int8) and
 * avg(int2/int4/int8) go through numeric exactly as numeric_poly_sum() and
 * int8_avg() / numeric_poly_avg() do, from an int128 sum; min/max compare
 * floats in PostgreSQL's order (NaN largest).  Float sums are summed in
 * double: they may differ from PostgreSQL's in the last bits (summation
 * order, and float4 sums are not rounded to float4 at each step), and an
 * overflow is raised when the whole sum overflows with no infinite input.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tupdesc.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "nodes/nodeFuncs.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/float.h"
#include "utils/fmgrprotos.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/ruleutils.h"
#include "utils/timestamp.h"

#include "gpujoin.h"
#include "custom_scan/agg/gpujoin_agg.h"
#include "custom_scan/agg/gpujoin_agg_groups.h"
#include "custom_scan/exec/gpujoin_exec.h"
#include "host_chunking/staging.h"

/*
 * The aggregate node's own EXPLAIN ANALYZE counters, of one process.  A
 * partial node's workers hand theirs to the leader as the join's counters
 * are handed (gpujoin_parallel.c), in a block of the query's dynamic shared
 * memory ahead of the join's.
 */
typedef struct GpuJoinAggCounters
{
	int64		groups_returned;	/* summed over rescans */
	int64		pairs_aggregated;	/* summed over rescans */
	int64		pairs_in_backend;
	int64		inner_groups_together;	/* executions whose inner groups the
										 * processes numbered together */
} GpuJoinAggCounters;

typedef struct GpuJoinAggShared
{
	int			nworkers;
	GpuJoinAggCounters workers[FLEXIBLE_ARRAY_MEMBER];
} GpuJoinAggShared;

typedef struct GpuJoinAggState
{
	GpuJoinState gj;			/* the join; must be first */
	GpuJoinAggInfo agg;
	GjAggSpec	spec;			/* argument value columns of this scan */
	GjAggPartial total;			/* everything reduced so far */
	ExprState  *arg_exprs[GJ_AGG_MAX_ARGS];
	GjKeyColumns var_cols[2];	/* the columns the programs load, per side */
	MemoryContext agg_cxt;		/* value columns and results; reset on rescan */
	bool		has_error_rows; /* some argument needs the host */
	bool		spec_offered;	/* the backend was opened with spec */
	bool		done;

	/* GROUP BY: group numbers and partials, in agg_cxt */
	GpuJoinAggGroups groups;
	int64		next_group;		/* the next group to return */
	GpuJoinAggCounters counters;	/* EXPLAIN ANALYZE */
	GpuJoinAggShared *shared;	/* a partial node's workers' counters */
	GpuJoinAggCounters workers_total;	/* the leader's copy of their sums */
} GpuJoinAggState;

static void gpujoin_agg_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *gpujoin_agg_exec(CustomScanState *node);
static void gpujoin_agg_rescan(CustomScanState *node);
static void gpujoin_agg_explain(CustomScanState *node, List *ancestors, ExplainState *es);
static void gpujoin_agg_before_open(GpuJoinState *gjs, GjJoinInput *input);
static Size gpujoin_agg_inner_extra_size(GpuJoinState *gjs, int64 nrows);
static void gpujoin_agg_inner_extra_write(GpuJoinState *gjs, int64 nrows, char *dst, Size len);
static Size gpujoin_agg_estimate_dsm(CustomScanState *node, ParallelContext *pcxt);
static void gpujoin_agg_initialize_dsm(CustomScanState *node, ParallelContext *pcxt,
									   void *coordinate);
static void gpujoin_agg_reinitialize_dsm(CustomScanState *node, ParallelContext *pcxt,
										 void *coordinate);
static void gpujoin_agg_initialize_worker(CustomScanState *node, shm_toc *toc,
										  void *coordinate);
static void gpujoin_agg_shutdown(CustomScanState *node);

/*
 * The plan's methods (gpujoin_agg_path.c sets them), named GpuJoin as the
 * join's are: EXPLAIN prints a CustomScan's CustomName ("Custom Scan
 * (GpuJoin)"), and the aggregate node has always been shown so.  They are
 * not registered with RegisterCustomScanMethods, which takes one methods
 * table per name and has the join's (gpujoin_register_methods): the name
 * is only looked up to read a plan back from text, which PostgreSQL does
 * for the parallel-safe part of a plan that it sends to workers, and the
 * join's CreateCustomScanState hands a partial aggregate node (the only
 * parallel-safe one) back here (gpujoin_any_create_scan_state).
 */
static Node *gpujoin_agg_create_scan_state(CustomScan *cscan);

const CustomScanMethods gpujoin_agg_scan_methods = {
	.CustomName = GPUJOIN_NAME,
	.CreateCustomScanState = gpujoin_agg_create_scan_state,
};

/*
 * CreateCustomScanState of the join's methods.  A plan read back from text
 * finds these, the ones registered under the name both nodes share, so a
 * parallel worker's copy of a partial aggregate node
 * (gpujoin_agg_partial.c) comes here too: its private data goes on past
 * the join's.  This is why the join's methods are defined in this room
 * and not in the executor's: only a room above both nodes may choose
 * between them, calls going only down.
 */
static Node *
gpujoin_any_create_scan_state(CustomScan *cscan)
{
	if (list_length(cscan->custom_private) > GJ_PRIVATE_JOIN_LENGTH)
		return gpujoin_agg_create_scan_state(cscan);
	return gpujoin_create_scan_state(cscan);
}

/* The join's methods (gpujoin_plan.c sets them). */
const CustomScanMethods gpujoin_scan_methods = {
	.CustomName = GPUJOIN_NAME,
	.CreateCustomScanState = gpujoin_any_create_scan_state,
};

/* At load time, so that a plan read back (parallel workers) finds its node. */
void
gpujoin_register_methods(void)
{
	RegisterCustomScanMethods(&gpujoin_scan_methods);
}

static const CustomExecMethods gpujoin_agg_exec_methods = {
	.CustomName = GPUJOIN_NAME,
	.BeginCustomScan = gpujoin_agg_begin,
	.ExecCustomScan = gpujoin_agg_exec,
	.EndCustomScan = gpujoin_end,
	.ReScanCustomScan = gpujoin_agg_rescan,
	/* a partial node hands its workers' counters to the leader */
	.EstimateDSMCustomScan = gpujoin_agg_estimate_dsm,
	.InitializeDSMCustomScan = gpujoin_agg_initialize_dsm,
	.ReInitializeDSMCustomScan = gpujoin_agg_reinitialize_dsm,
	.InitializeWorkerCustomScan = gpujoin_agg_initialize_worker,
	.ShutdownCustomScan = gpujoin_agg_shutdown,
	.ExplainCustomScan = gpujoin_agg_explain,
};

static Node *
gpujoin_agg_create_scan_state(CustomScan *cscan)
{
	GpuJoinAggState *gas = palloc0(sizeof(GpuJoinAggState));

	NodeSetTag(gas, T_CustomScanState);
	gas->gj.css.flags = cscan->flags;
	gas->gj.css.methods = &gpujoin_agg_exec_methods;
	return (Node *) gas;
}

static void
gpujoin_agg_begin(CustomScanState *node, EState *estate, int eflags)
{
	GpuJoinAggState *gas = (GpuJoinAggState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	ListCell   *lc;
	int			i;

	gpujoin_begin(node, estate, eflags);
	gpujoin_agg_info_deserialize(list_nth(cscan->custom_private, GJ_PRIVATE_AGG_INFO),
								&gas->agg);
	foreach(lc, (List *) list_nth(cscan->custom_exprs, GJ_EXPRS_AGG_ARGS))
		gas->arg_exprs[foreach_current_index(lc)] = ExecInitExpr(lfirst(lc), &node->ss.ps);

	/* arguments and grouping keys are read from stored columns */
	for (i = 0; i < 2; i++)
	{
		int			j;

		for (j = 0; j < gas->agg.nvars[i]; j++)
			if (gas->gj.scan_cols[gas->agg.var_scan[i][j]] < 0)
				elog(ERROR, "GpuJoin aggregate argument column is not stored");
	}
	for (i = 0; i < gas->agg.ngroup; i++)
		if (gas->agg.group_scan[i] >= 0 && gas->gj.scan_cols[gas->agg.group_scan[i]] < 0)
			elog(ERROR, "GpuJoin grouping column is not stored");

	gas->gj.agg_dominance = gas->agg.dominance;
	gas->gj.before_open = gpujoin_agg_before_open;
	gas->spec.nargs = gas->agg.nargs;
	for (i = 0; i < gas->agg.nargs; i++)
	{
		gas->spec.args[i].side = gas->agg.arg_side[i];
		gas->spec.args[i].cls = gj_type_class(gas->agg.arg_type[i]);
	}
	for (i = 0; i < gas->agg.naggs; i++)
	{
		int			a = gas->agg.agg_arg[i];

		if (a < 0)
			continue;
		if (gas->agg.agg_kind[i] == GJ_AGGK_SUM || gas->agg.agg_kind[i] == GJ_AGGK_AVG)
			gas->spec.args[a].need_sum = true;
		/* avg of floats is only partial: its state has Sxx */
		if (gas->agg.agg_kind[i] == GJ_AGGK_AVG && gas->spec.args[a].cls == GJ_CLASS_FLOAT)
			gas->spec.args[a].need_sxx = true;
		if (gas->agg.agg_kind[i] == GJ_AGGK_MIN || gas->agg.agg_kind[i] == GJ_AGGK_MAX)
			gas->spec.args[a].need_minmax = true;
	}
	gas->agg_cxt = AllocSetContextCreate(gas->gj.join_cxt, "GpuJoin aggregates",
										 ALLOCSET_DEFAULT_SIZES);

	/*
	 * Grouped aggregates number each side's rows into groups and return a
	 * group's columns from its first rows, which must stay in memory: such
	 * a join does not spill (gpujoin_agg_path.c does not offer it over
	 * gpujoin.max_host_memory).
	 */
	if (gas->agg.ngroup > 0)
		gas->gj.spill_allowed = false;
	if (gas->agg.ngroup > 0)
		gpujoin_agg_groups_init(&gas->groups, &gas->agg,
								list_nth(cscan->custom_exprs, GJ_EXPRS_AGG_GROUPS),
								&node->ss.ps, estate);
	/* inner groups: numbered together where the inner side is shared */
	if (gas->agg.ngroup > 0 && gpujoin_agg_groups_inner(&gas->groups))
	{
		gas->gj.inner_extra_size = gpujoin_agg_inner_extra_size;
		gas->gj.inner_extra_write = gpujoin_agg_inner_extra_write;
	}
}

/*
 * Whether a stored column of nrows rows of this device type can be handed
 * to the programs as it is: its Datums are the 8-byte device values
 * (gj_datum_to_value is the identity on them), the host buffer stores 0
 * for a NULL as the conversion below does, and a bool isnull is the 0/1
 * byte of a uint8 one.  An int2, int4 or date Datum is its value where it
 * is sign-extended, as Int32GetDatum and the heap reader make it; a
 * column is checked for that, a read of it, not assumed.  A parallel
 * worker drains a fresh buffer every query, and the copy cost it a
 * 9-byte-a-row array's page faults and a pass over the rows: 8-19 ms per
 * process of sum(f.v * d.w) over 10M rows in 9 processes on the H200
 * machine (Setup Time in EXPLAIN (ANALYZE, VERBOSE)).
 */
static bool
column_holds_values(const HostDatumColumn *col, int64 nrows, int type)
{
	int64		row;

	StaticAssertStmt(sizeof(Datum) == sizeof(int64) && sizeof(bool) == sizeof(uint8),
					 "Datum and int64, bool and uint8 differ in size");
	switch (type)
	{
		case GJT_FLOAT8:
			return FLOAT8PASSBYVAL;
		case GJT_INT8:
		case GJT_TIMESTAMP:
		case GJT_TIMESTAMPTZ:
			return true;
		case GJT_INT4:
		case GJT_DATE:
			for (row = 0; row < nrows; row++)
			{
				if ((int64) col->values[row] != (int64) DatumGetInt32(col->values[row]))
					return false;
			}
			return true;
		case GJT_INT2:
			for (row = 0; row < nrows; row++)
			{
				if ((int64) col->values[row] != (int64) DatumGetInt16(col->values[row]))
					return false;
			}
			return true;
		default:
			return false;
	}
}

/*
 * The columns the argument and grouping programs load, converted from the
 * stored Datums (or the stored columns themselves, where column_holds_values),
 * and the value column of each one-side argument: its
 * program once per row of its side.  A pair argument's program runs per
 * pair, in the backend, over the same columns (spec.pair_cols).
 */
static void
gpujoin_agg_arg_columns(GpuJoinAggState *gas)
{
	GpuJoinState *gjs = &gas->gj;
	MemoryContext old = MemoryContextSwitchTo(gas->agg_cxt);
	int			side;
	int			a;

	for (side = 0; side < 2; side++)
	{
		HostSideBuffer *buf = side == GJ_SIDE_OUTER ? &gjs->outer_buf : &gjs->inner_buf;
		int64		nrows = buf->nrows;
		GjKeyColumns *cols = &gas->var_cols[side];
		int			j;

		memset(cols, 0, sizeof(GjKeyColumns));
		cols->ncols = gas->agg.nvars[side];
		for (j = 0; j < gas->agg.nvars[side]; j++)
		{
			HostDatumColumn *col = buf->cols + gjs->scan_cols[gas->agg.var_scan[side][j]];
			int			type = gas->agg.var_type[side][j];
			int64	   *values;
			uint8	   *isnull;
			int64		row;

			/* an empty side's column may be unallocated: a row's room is made below */
			if (nrows > 0 && column_holds_values(col, nrows, type))
			{
				/* the stored column already is the device column: shared, not copied */
				cols->values[j] = (int64 *) col->values;
				cols->isnull[j] = (uint8 *) col->isnull;
				continue;
			}
			values = MemoryContextAllocHuge(gas->agg_cxt, sizeof(int64) * Max(nrows, 1));
			isnull = MemoryContextAllocHuge(gas->agg_cxt, Max(nrows, 1));
			for (row = 0; row < nrows; row++)
			{
				isnull[row] = col->isnull[row];
				values[row] = col->isnull[row] ? 0 : gj_datum_to_value(col->values[row], type);
			}
			cols->values[j] = values;
			cols->isnull[j] = isnull;
		}
		gas->spec.pair_cols[side] = *cols;
	}

	for (a = 0; a < gas->agg.nargs; a++)
	{
		const GjProgram *program = &gas->agg.arg_program[a];
		int			aside = gas->agg.arg_side[a];
		int64		nrows;
		int64	   *values;
		uint8	   *flags;
		int64		row;

		if (aside == GJ_AGG_SIDE_PAIR)
		{
			gas->spec.args[a].instrs = program->instrs;
			gas->spec.args[a].ninstrs = program->ninstrs;
			continue;
		}
		nrows = aside == GJ_AGG_SIDE_OUTER ? gjs->outer_buf.nrows : gjs->inner_buf.nrows;
		values = MemoryContextAllocHuge(gas->agg_cxt, sizeof(int64) * Max(nrows, 1));
		flags = MemoryContextAllocHuge(gas->agg_cxt, Max(nrows, 1));
		for (row = 0; row < nrows; row++)
		{
			GjSlot		value;
			bool		isnull;

			/* the program loads only its own side: row is that side's */
			if (gj_program_run(program->instrs, program->ninstrs, &gas->var_cols[0], row,
							   &gas->var_cols[1], row, &value, &isnull) == GJ_RESULT_RECHECK)
			{
				flags[row] = GJ_AGG_ROW_ERROR;
				values[row] = 0;
				gas->has_error_rows = true;
			}
			else
			{
				flags[row] = isnull ? GJ_AGG_ROW_NULL : GJ_AGG_ROW_VALUE;
				values[row] = isnull ? 0 : value.i;
			}
		}
		gas->spec.args[a].values = values;
		gas->spec.args[a].flags = flags;
	}
	MemoryContextSwitchTo(old);
}

/*
 * Reduce the pairs of the match buffer.  Pairs the device flagged go
 * through every qual and pairs of a join with host quals through those, as
 * the GpuJoin node's EMIT does (gpujoin_emit.c); an argument the device
 * could not compute is evaluated by the host on the pair's scan tuple.
 */
static void
gpujoin_agg_reduce_matches(GpuJoinAggState *gas)
{
	GpuJoinState *gjs = &gas->gj;
	ExprContext *econtext = gjs->css.ss.ps.ps_ExprContext;
	const GjMatches *m = &gjs->matches;
	const GjAggSpec *spec = &gas->spec;
	GjAggPartial *total = &gas->total;
	int64		i;
	GjWallPart	part;

	if (m->count == 0)
		return;
	part = gpujoin_wall_switch(gjs, GJ_WALL_EMIT);
	for (i = 0; i < m->count; i++)
	{
		uint32		orow = m->outer_rows[i] & GJ_PAIR_ROW_MASK;
		uint32		irow = m->inner_rows[i];
		bool		formed = false;
		GjAggAcc   *accs = total->acc;
		int			a;

		if ((i & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
		/* the host reduces these rows' pairs after the last step */
		if (gpujoin_skip_inexact_pair(gjs, orow, irow))
			continue;
		if ((m->outer_rows[i] & GJ_PAIR_RECHECK) || gjs->host_qual != NULL)
		{
			ResetExprContext(econtext);
			gpujoin_form_scan_tuple(gjs, orow, irow);
			econtext->ecxt_scantuple = gjs->css.ss.ss_ScanTupleSlot;
			formed = true;
			if (m->outer_rows[i] & GJ_PAIR_RECHECK)
			{
				gjs->counters.host_rechecks++;
				if (!ExecQual(gjs->recheck_qual, econtext))
					continue;
			}
			else if (!ExecQual(gjs->host_qual, econtext))
			{
				gjs->counters.host_rejected++;
				continue;
			}
		}
		if (gas->agg.ngroup > 0)
		{
			int64		g = gpujoin_agg_groups_of_pair(&gas->groups, gjs, orow, irow, &formed);

			gas->groups.pairs[g]++;
			accs = gas->groups.acc + g * spec->nargs;
		}
		total->pairs++;
		for (a = 0; a < spec->nargs; a++)
		{
			const GjAggArg *ga = &spec->args[a];
			int64		v;
			int			status = gj_agg_arg_value(spec, ga, orow, irow, &v);

			if (status == GJ_AGG_ROW_VALUE)
				gj_agg_add(&accs[a], ga, v, 1);
			else if (status == GJ_AGG_ROW_ERROR)
			{
				Datum		d;
				bool		isnull;

				if (!formed)
				{
					ResetExprContext(econtext);
					gpujoin_form_scan_tuple(gjs, orow, irow);
					econtext->ecxt_scantuple = gjs->css.ss.ss_ScanTupleSlot;
					formed = true;
				}
				/* raises PostgreSQL's error, as the native Agg would */
				d = ExecEvalExpr(gas->arg_exprs[a], econtext, &isnull);
				if (!isnull)
					gj_agg_add(&accs[a], ga, gj_datum_to_value(d, gas->agg.arg_type[a]), 1);
			}
		}
	}
	(void) gpujoin_wall_switch(gjs, part);
}

/* Add a step's partials without groups into the total (groups add in place). */
static void
gpujoin_agg_merge_partial(GpuJoinAggState *gas, const GjAggPartial *step)
{
	int			a;

	for (a = 0; a < gas->spec.nargs; a++)
		gj_agg_merge(&gas->total.acc[a], &step->acc[a], gas->spec.args[a].cls);
}

/*
 * The aggregate node's part of opening the join (gpujoin_open_pair), once
 * the inputs (the whole inputs, or one chunk pair of a spilled join) are
 * drained and the keys encoded, before the backend opens: the argument
 * columns, the groups, and the spec the backend will reduce with, which the
 * backend gets with the join (input->agg_spec: the GPU service's proxy
 * stages it then, so that a spec with no room falls back as any join does).
 */
static void
gpujoin_agg_before_open(GpuJoinState *gjs, GjJoinInput *input)
{
	GpuJoinAggState *gas = (GpuJoinAggState *) gjs;

	gpujoin_agg_arg_columns(gas);
	if (gas->agg.ngroup > 0)
	{
		gpujoin_agg_groups_number(&gas->groups, gjs, gas->var_cols, gas->agg_cxt,
								  gas->spec.nargs);
		if (gas->groups.side[GJ_SIDE_INNER].shared)
			gas->counters.inner_groups_together++;
	}

	/*
	 * The inputs, the argument columns and the groups count together.
	 * Without GROUP BY the inputs spill past their share instead
	 * (spill.c), and the argument columns of the rows held, a few
	 * bytes a row, come on top: no ERROR then.
	 */
	if ((gas->agg.ngroup > 0 || !gpujoin_enable_spill) &&
		gjs->outer_buf.bytes_stored + gjs->inner_buf.bytes_stored +
		(int64) MemoryContextMemAllocated(gas->agg_cxt, true) >
		(int64) gpujoin_max_host_memory_kb * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("GpuJoin aggregates need more than gpujoin.max_host_memory (%d kB) of host memory",
						gpujoin_max_host_memory_kb),
				 errdetail("%lld groups over %lld outer rows, %lld over %lld inner rows.",
						   (long long) gas->groups.side[GJ_SIDE_OUTER].ngroups,
						   (long long) gjs->outer_buf.nrows,
						   (long long) gas->groups.side[GJ_SIDE_INNER].ngroups,
						   (long long) gjs->inner_buf.nrows),
				 errhint("Raise gpujoin.max_host_memory, or set gpujoin.enable_aggregate to off for this query.")));

	/*
	 * The backend reduces what it can and returns the pairs the host must
	 * see (backend.h, agg_step).  The rows whose keys have no exact int64
	 * have NULL keys there (host_buffers.h, device_isnull), and all their
	 * pairs are reduced on the host after the last step; the device may
	 * still decide one of their pairs (NULL OR true), so the spec tells the
	 * backend to drop those.  With host quals every pair needs the host
	 * anyway, and so do groups of both sides too many for a dense array.
	 */
	gas->spec_offered = gjs->host_qual == NULL &&
		(gas->agg.ngroup == 0 || gas->groups.dense);
	gas->spec.rows_need_host = gas->has_error_rows;
	gas->spec.host_later[0] = gjs->outer_inexact;
	gas->spec.host_later[1] = gjs->inner_inexact;
	gas->spec.ngroups = 1;
	if (gas->agg.ngroup > 0)
		gpujoin_agg_groups_spec(&gas->groups, &gas->spec);
	input->agg_spec = gas->spec_offered ? &gas->spec : NULL;
}

/*
 * shared_inner.c's inner_extra_size and inner_extra_write: room after a
 * parallel plan's shared inner side for its groups, which the processes
 * number together (gpujoin_agg_shared_groups.c).
 */
static Size
gpujoin_agg_inner_extra_size(GpuJoinState *gjs, int64 nrows)
{
	if (gpujoin_agg_groups_inner_value_type(&((GpuJoinAggState *) gjs)->groups) < 0)
		return 0;
	return gpujoin_agg_groups_shared_size(nrows);
}

static void
gpujoin_agg_inner_extra_write(GpuJoinState *gjs, int64 nrows, char *dst, Size len)
{
	gpujoin_agg_groups_shared_init(nrows, dst, len);
}

/*
 * Join the two buffers as they are now (the whole inputs, or one chunk pair
 * of a spilled join), reducing every step into the partials.
 */
static void
gpujoin_agg_run_pair(GpuJoinAggState *gas)
{
	GpuJoinState *gjs = &gas->gj;

	/* the backend that opened the join: it may have fallen back */
	bool		backend_reduces = gjs->backend->agg_step != NULL && gas->spec_offered;

	for (;;)
	{
		GjAggPartial step;
		bool		more;

		memset(&step, 0, sizeof(step));
		step.group_pairs = gas->groups.pairs;
		step.group_acc = gas->groups.acc;
		more = gpujoin_run_agg_step(gjs, backend_reduces ? &gas->spec : NULL, &step);
		if (!more && backend_reduces)
			gpujoin_finish_agg_steps(gjs, &gas->spec, &step);
		gas->total.pairs += step.pairs;
		gas->counters.pairs_in_backend += step.pairs;
		gpujoin_agg_merge_partial(gas, &step);
		if (more)
		{
			gpujoin_agg_reduce_matches(gas);
			continue;
		}
		/* the pairs of rows whose keys have no exact device value */
		if (gjs->outer_inexact != NULL || gjs->inner_inexact != NULL)
		{
			while (gpujoin_next_host_pairs(gjs))
				gpujoin_agg_reduce_matches(gas);
		}
		return;
	}
}

/*
 * Run the whole join, reducing every step: one join of the two inputs, or,
 * when they spilled, one per chunk pair (spill.c), all into the
 * same partials.  The aggregate node's join is an inner join, so a spilled
 * join has no unmatched rows to emit between its chunk pairs.
 */
static void
gpujoin_agg_run(GpuJoinAggState *gas)
{
	GpuJoinState *gjs = &gas->gj;
	GpuJoinPhase phase;

	/* the backend's aggregate fast path: range widths, no pair formed */
	gjs->wants_agg_step = gjs->info.algorithm == GJ_ALGO_SORTMERGE &&
		!gjs->info.filter_needed && gjs->host_qual == NULL;
	gas->spec_offered = false;
	phase = gpujoin_prepare(gjs);
	for (;;)
	{
		if (phase == GJ_PHASE_RUN_STEP)
			gpujoin_agg_run_pair(gas);
		if (!gjs->spilled)
			return;
		/*
		 * The argument columns are those of this chunk pair: the next pair's
		 * are built when it opens (gpujoin_agg_before_open).
		 */
		MemoryContextReset(gas->agg_cxt);
		gas->spec_offered = false;
		phase = gpujoin_spill_next(gjs);
		Assert(phase == GJ_PHASE_RUN_STEP || phase == GJ_PHASE_DONE);
		if (phase == GJ_PHASE_DONE)
			return;
	}
}

/*
 * Run the join (gpujoin_agg_run), then release the backend: the partials
 * are the node's now, and the backend's memory (the service's device
 * memory) goes at once rather than at the end of the query.
 */
static void
gpujoin_agg_run_all(GpuJoinAggState *gas)
{
	gpujoin_agg_run(gas);
	gpujoin_release_backend(&gas->gj);
	gas->counters.pairs_aggregated += gas->total.pairs;
}

/* An int128 as numeric, built from int8 pieces with numeric's own arithmetic. */
static Numeric
int128_to_numeric(__int128 v)
{
	const int64 base = INT64CONST(1000000000000000000);
	Datum		high;

	if (v >= PG_INT64_MIN && v <= PG_INT64_MAX)
		return int64_to_numeric((int64) v);
	high = NumericGetDatum(int128_to_numeric(v / base));
	high = DirectFunctionCall2(numeric_mul, high, NumericGetDatum(int64_to_numeric(base)));
	return DatumGetNumeric(DirectFunctionCall2(numeric_add, high,
											   NumericGetDatum(int64_to_numeric((int64) (v % base)))));
}

/* int4_sum() and int4_avg_accum() add in int64 without an overflow check. */
static int64
wrapped_int64(__int128 v)
{
	return (int64) (uint64) (unsigned __int128) v;
}

/*
 * The result of aggregate i over pairs with the partials accs (one per
 * argument), as PostgreSQL's final function returns it.
 */
static Datum
gpujoin_agg_result(GpuJoinAggState *gas, int i, int64 pairs, const GjAggAcc *accs,
				   bool *isnull)
{
	int			kind = gas->agg.agg_kind[i];
	int			a = gas->agg.agg_arg[i];
	const GjAggAcc *acc;
	int			type;

	*isnull = false;
	if (kind == GJ_AGGK_COUNT_STAR)
		return Int64GetDatum(pairs);
	acc = &accs[a];
	type = gas->agg.arg_type[a];
	if (kind == GJ_AGGK_COUNT)
		return Int64GetDatum(acc->count);

	/*
	 * A partial node returns transition states (gpujoin_agg_partial.c):
	 * count, sum(int2/int4), min and max are their own results; avg's is
	 * {count, sum}, also without input; sum/avg(int8)'s is serialised, NULL
	 * without a pair (its transition function never ran) and a zero count
	 * when every argument was NULL; avg(float4/float8)'s is {N, Sx, Sxx}
	 * and sum(float8)'s the sum, below.
	 */
	if (gas->agg.partial && (kind == GJ_AGGK_SUM || kind == GJ_AGGK_AVG) && type == GJT_INT8)
	{
		if (pairs == 0)
		{
			*isnull = true;
			return (Datum) 0;
		}
		return gpujoin_agg_int8_state(acc->count, acc->isum);
	}
	if (gas->agg.partial && kind == GJ_AGGK_AVG && (type == GJT_FLOAT4 || type == GJT_FLOAT8))
		return gpujoin_agg_float_avg_state(acc);
	if (gas->agg.partial && kind == GJ_AGGK_AVG)
		return gpujoin_agg_avg_state(acc->count, wrapped_int64(acc->isum));
	if (acc->count == 0)
	{
		*isnull = true;
		return (Datum) 0;
	}
	switch (kind)
	{
		case GJ_AGGK_SUM:
			if (type == GJT_INT8)
				return NumericGetDatum(int128_to_numeric(acc->isum));
			if (type == GJT_FLOAT4)
			{
				float4		f = (float4) acc->fsum;

				if (isinf(f) && !acc->saw_nonfinite)
					float_overflow_error();
				return Float4GetDatum(f);
			}
			if (type == GJT_FLOAT8)
			{
				/*
				 * Finite inputs give a NaN only from partials that overflowed
				 * to +Infinity and -Infinity, merged: an overflow too.
				 */
				if (!isfinite(acc->fsum) && !acc->saw_nonfinite)
					float_overflow_error();
				return Float8GetDatum(acc->fsum);
			}
			return Int64GetDatum(wrapped_int64(acc->isum));
		case GJ_AGGK_AVG:
			{
				Numeric		sum = type == GJT_INT8 ? int128_to_numeric(acc->isum) :
				int64_to_numeric(wrapped_int64(acc->isum));

				return DirectFunctionCall2(numeric_div, NumericGetDatum(sum),
										   NumericGetDatum(int64_to_numeric(acc->count)));
			}
		case GJ_AGGK_MIN:
			return gpujoin_agg_value_to_datum(acc->min_bits, type);
		default:
			return gpujoin_agg_value_to_datum(acc->max_bits, type);
	}
}

/*
 * GROUP BY: the next group that has a pair and passes HAVING.  Its scan
 * tuple has the outer columns of the group's first outer row, the inner
 * columns of its first inner row (NULL without inner grouping keys), and
 * the aggregates, in per-tuple memory.
 */
static TupleTableSlot *
gpujoin_agg_next_group(GpuJoinAggState *gas)
{
	GpuJoinState *gjs = &gas->gj;
	CustomScanState *node = &gjs->css;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	TupleTableSlot *scan = node->ss.ss_ScanTupleSlot;

	if (!gas->done)
	{
		gas->done = true;
		gpujoin_agg_run_all(gas);
		gas->next_group = 0;
	}
	/* the clock is read when the part changes, not per group */
	if (gjs->wall_part != GJ_WALL_EMIT)
		(void) gpujoin_wall_switch(gjs, GJ_WALL_EMIT);
	while (gas->next_group < gas->groups.ngroups)
	{
		int64		g = gas->next_group++;
		const GjAggAcc *accs = gas->groups.acc + g * gas->spec.nargs;
		int64		orow,
					irow;
		MemoryContext old;
		int			k;

		/* no pair: an inner join has no such group */
		if (!gpujoin_agg_groups_rows(&gas->groups, g, &orow, &irow))
			continue;
		CHECK_FOR_INTERRUPTS();
		ResetExprContext(econtext);
		ExecClearTuple(scan);
		if (irow < 0)
			gpujoin_fill_null_extended(gjs, GJ_SIDE_OUTER, orow);
		else
			gpujoin_fill_columns(gjs, 0, gjs->nscan, orow, irow);
		old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
		for (k = 0; k < gas->agg.naggs; k++)
			scan->tts_values[gjs->nscan + k] =
				gpujoin_agg_result(gas, k, gas->groups.pairs[g], accs,
								   &scan->tts_isnull[gjs->nscan + k]);
		MemoryContextSwitchTo(old);
		ExecStoreVirtualTuple(scan);
		econtext->ecxt_scantuple = scan;

		if (node->ss.ps.qual != NULL && !ExecQual(node->ss.ps.qual, econtext))
			continue;			/* HAVING */
		gjs->counters.rows_returned++;
		gas->counters.groups_returned++;
		if (node->ss.ps.ps_ProjInfo == NULL)
			return scan;
		return ExecProject(node->ss.ps.ps_ProjInfo);
	}
	(void) gpujoin_wall_switch(gjs, GJ_WALL_AFTER);
	return NULL;
}

static TupleTableSlot *
gpujoin_agg_exec(CustomScanState *node)
{
	GpuJoinAggState *gas = (GpuJoinAggState *) node;
	GpuJoinState *gjs = &gas->gj;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	TupleTableSlot *scan = node->ss.ss_ScanTupleSlot;
	MemoryContext old;
	int			k;

	gpujoin_wall_run(gjs);
	if (gas->agg.ngroup > 0)
		return gpujoin_agg_next_group(gas);
	if (gas->done)
	{
		(void) gpujoin_wall_switch(gjs, GJ_WALL_AFTER);
		return NULL;
	}
	gas->done = true;
	gpujoin_agg_run_all(gas);
	(void) gpujoin_wall_switch(gjs, GJ_WALL_EMIT);

	/* one row: the join's Vars NULL, then the aggregates */
	ResetExprContext(econtext);
	ExecClearTuple(scan);
	for (k = 0; k < gjs->nscan; k++)
	{
		scan->tts_values[k] = (Datum) 0;
		scan->tts_isnull[k] = true;
	}
	old = MemoryContextSwitchTo(gas->agg_cxt);
	for (k = 0; k < gas->agg.naggs; k++)
		scan->tts_values[gjs->nscan + k] =
			gpujoin_agg_result(gas, k, gas->total.pairs, gas->total.acc,
							   &scan->tts_isnull[gjs->nscan + k]);
	MemoryContextSwitchTo(old);
	ExecStoreVirtualTuple(scan);
	econtext->ecxt_scantuple = scan;

	if (node->ss.ps.qual != NULL && !ExecQual(node->ss.ps.qual, econtext))
	{
		(void) gpujoin_wall_switch(gjs, GJ_WALL_AFTER);
		return NULL;			/* HAVING */
	}
	gjs->counters.rows_returned++;
	if (node->ss.ps.ps_ProjInfo == NULL)
		return scan;
	return ExecProject(node->ss.ps.ps_ProjInfo);
}

static void
gpujoin_agg_rescan(CustomScanState *node)
{
	GpuJoinAggState *gas = (GpuJoinAggState *) node;
	int			a;

	gpujoin_rescan(node);
	MemoryContextReset(gas->agg_cxt);
	memset(&gas->total, 0, sizeof(gas->total));
	for (a = 0; a < gas->spec.nargs; a++)
	{
		gas->spec.args[a].values = NULL;
		gas->spec.args[a].flags = NULL;
	}
	gas->has_error_rows = false;
	gas->done = false;
	/* the group numbers and partials were in agg_cxt */
	gas->spec.outer_group = NULL;
	gas->spec.inner_group = NULL;
	gas->spec.host_later[0] = gas->spec.host_later[1] = NULL;
	gpujoin_agg_groups_reset(&gas->groups);
	memset(gas->var_cols, 0, sizeof(gas->var_cols));
	memset(gas->spec.pair_cols, 0, sizeof(gas->spec.pair_cols));
	gas->next_group = 0;
}

/* The size of the node's own block of counters, ahead of the join's. */
static Size
agg_shared_size(int nworkers)
{
	return MAXALIGN(add_size(offsetof(GpuJoinAggShared, workers),
							 mul_size(nworkers, sizeof(GpuJoinAggCounters))));
}

static Size
gpujoin_agg_estimate_dsm(CustomScanState *node, ParallelContext *pcxt)
{
	return add_size(agg_shared_size(pcxt->nworkers), gpujoin_estimate_dsm(node, pcxt));
}

static void
gpujoin_agg_initialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GpuJoinAggState *gas = (GpuJoinAggState *) node;
	Size		size = agg_shared_size(pcxt->nworkers);

	memset(coordinate, 0, size);
	gas->shared = coordinate;
	gas->shared->nworkers = pcxt->nworkers;
	gpujoin_initialize_dsm(node, pcxt, (char *) coordinate + size);
}

/* A rescan of the Gather: the new workers' counters add to the same slots. */
static void
gpujoin_agg_reinitialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GpuJoinAggState *gas = (GpuJoinAggState *) node;

	gas->shared = coordinate;
	gpujoin_reinitialize_dsm(node, pcxt,
							 (char *) coordinate + agg_shared_size(gas->shared->nworkers));
}

static void
gpujoin_agg_initialize_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	GpuJoinAggState *gas = (GpuJoinAggState *) node;

	gas->shared = coordinate;
	gpujoin_initialize_worker(node, toc,
							  (char *) coordinate + agg_shared_size(gas->shared->nworkers));
}

/* See gpujoin_shutdown: the same for the aggregate node's own counters. */
static void
gpujoin_agg_shutdown(CustomScanState *node)
{
	GpuJoinAggState *gas = (GpuJoinAggState *) node;
	GpuJoinAggShared *shared = gas->shared;

	if (shared != NULL)
	{
		if (IsParallelWorker())
		{
			if (ParallelWorkerNumber >= 0 && ParallelWorkerNumber < shared->nworkers)
			{
				GpuJoinAggCounters *slot = &shared->workers[ParallelWorkerNumber];

				slot->groups_returned += gas->counters.groups_returned;
				slot->pairs_aggregated += gas->counters.pairs_aggregated;
				slot->pairs_in_backend += gas->counters.pairs_in_backend;
				slot->inner_groups_together += gas->counters.inner_groups_together;
			}
		}
		else
		{
			memset(&gas->workers_total, 0, sizeof(gas->workers_total));
			for (int i = 0; i < shared->nworkers; i++)
			{
				gas->workers_total.groups_returned += shared->workers[i].groups_returned;
				gas->workers_total.pairs_aggregated += shared->workers[i].pairs_aggregated;
				gas->workers_total.pairs_in_backend += shared->workers[i].pairs_in_backend;
				gas->workers_total.inner_groups_together +=
					shared->workers[i].inner_groups_together;
			}
		}
		gas->shared = NULL;
	}
	gpujoin_shutdown(node);
}

static void
gpujoin_agg_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuJoinAggState *gas = (GpuJoinAggState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *context;
	StringInfoData aggs;
	ListCell   *lc;

	context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	initStringInfo(&aggs);
	for_each_from(lc, cscan->custom_scan_tlist, gas->gj.nscan)
	{
		if (aggs.len > 0)
			appendStringInfoString(&aggs, ", ");
		appendStringInfoString(&aggs,
							   deparse_expression((Node *) lfirst_node(TargetEntry, lc)->expr,
												  context,
												  list_length(es->rtable) > 1 || es->verbose,
												  false));
	}
	if (gas->agg.ngroup > 0)
	{
		List	   *keys = NIL;

		foreach(lc, (List *) list_nth(cscan->custom_exprs, GJ_EXPRS_AGG_GROUPS))
			keys = lappend(keys, deparse_expression(lfirst(lc), context,
													list_length(es->rtable) > 1 || es->verbose,
													false));
		ExplainPropertyList("Group Key", keys, es);
	}
	/* GROUP BY with no aggregate (SELECT r.g ... GROUP BY r.g) has none */
	if (gas->agg.naggs > 0)
		ExplainPropertyText("GPU Aggregates", aggs.data, es);
	/* each process's transition states, finalised above the Gather */
	if (gas->agg.partial)
		ExplainPropertyText("Aggregate Mode", "partial", es);
	gpujoin_explain(node, ancestors, es);
	if (es->analyze)
	{
		/* this process's and, under a Gather, its workers' */
		ExplainPropertyInteger("Pairs Aggregated", NULL,
							   gas->counters.pairs_aggregated +
							   gas->workers_total.pairs_aggregated, es);
		ExplainPropertyInteger("Pairs Reduced in Backend", NULL,
							   gas->counters.pairs_in_backend +
							   gas->workers_total.pairs_in_backend, es);
		if (gas->agg.ngroup > 0)
		{
			int64		together = gas->counters.inner_groups_together +
				gas->workers_total.inner_groups_together;

			gpujoin_agg_groups_explain(&gas->groups, es);

			/*
			 * The executions (processes, and each again at a rescan) whose
			 * inner groups were numbered together (gpujoin_agg_shared_groups.c)
			 */
			if (together > 0)
				ExplainPropertyInteger("Inner Groups Numbered Together", NULL, together, es);
			ExplainPropertyInteger("Groups Returned", NULL,
								   gas->counters.groups_returned +
								   gas->workers_total.groups_returned, es);
		}
	}
}

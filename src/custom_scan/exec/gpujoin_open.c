/*-------------------------------------------------------------------------
 *
 * gpujoin_open.c
 *	  What both GpuJoin nodes do around the steps of a join: set up the
 *	  executor state, drain the inputs, open the backend, and release it
 *	  again at a rescan, at the end, or on ERROR.
 *
 * The GpuJoin node (gpujoin_emit.c) and the aggregate node
 * (gpujoin_agg_exec.c) both begin with gpujoin_begin and, at their first
 * call, run gpujoin_prepare:
 *
 *	- drain the inner input, then the outer one, into host buffers (the
 *	  outer side is not read when no inner row can match;
 *	  host_chunking/side_drain.c): a Seq Scan of a heap table is read by
 *	  the columnar heap reader (host_chunking/heap_reader.c), any other
 *	  child plan row by row; a side past its share of
 *	  gpujoin.max_host_memory spills to a temporary file in chunks, and the
 *	  join then runs chunk pair by chunk pair (host_chunking/spill.c), each
 *	  pair opened as below (gpujoin_open_pair);
 *	- clear the match flags of the outer join types;
 *	- choose the backend that runs the join (the cpu backend for a partial
 *	  plan, or one that has the planned algorithm);
 *	- encode the keys that depend on the whole input (numeric fixed point,
 *	  host_chunking/key_encoding.c) and decide whether the device's answer
 *	  can be used at all;
 *	- let the aggregate node build what its backend reduces with (its
 *	  before_open: argument columns, groups, the spec), which the backend
 *	  is opened with;
 *	- cut the join matrix into tiles and open the backend, halving the
 *	  budget when the device runs out of memory, and running the join on the
 *	  cpu backend when even the smallest budget does not fit.
 *
 * Then each node runs the steps (gpujoin_steps.c).  The backend's memory is
 * released by a callback on the node's memory context, so it goes away on
 * ERROR too; a step still running on the overlap thread is waited for
 * first (gpujoin_overlap.c).
 *
 * The staging of the inputs (host_chunking/staging.h) is below this room:
 * what it needs of the executor -- the join's budget, opening and releasing
 * the backend, opening a chunk pair -- it calls through the
 * GjStagingCallbacks that gpujoin_begin puts in the node's state, never by
 * name.
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
#include "custom_scan/exec/gpujoin_exec.h"
#include "host_chunking/key_encoding.h"
#include "host_chunking/staging.h"
#include "kernels/shared/gj_keys.h"
#include "service/gpujoin_service.h"
#include "service/service_shared.h"

/* Budget of one join on the cpu backend when gpujoin.device_memory is 0. */
#define CPU_DEFAULT_BUDGET		((int64) 256 * 1024 * 1024)
/* Smallest budget a join that ran out of device memory is retried with. */
#define MIN_RETRY_BUDGET		((int64) 1024 * 1024)

static void gpujoin_order_scan_columns(GpuJoinState *gjs, CustomScan *cscan);
static GpuJoinPhase gpujoin_prepare_inputs(GpuJoinState *gjs);

/*
 * What the staging of the inputs (host_chunking/) calls back here: it is
 * below this room and may not call these by name (staging.h).
 */
static const GjStagingCallbacks staging_callbacks = {
	.join_budget = gpujoin_join_budget,
	.service_reservation = gpujoin_service_reservation,
	.open_backend = gpujoin_open_backend,
	.release_backend = gpujoin_release_backend,
	.open_pair = gpujoin_open_pair,
};

/*
 * Release the backend's memory; safe to call more than once.  Also the
 * callback of the node's memory context, and called between the chunk
 * pairs of a spilled join.
 */
void
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
		GjWallPart	part = gpujoin_wall_switch(gjs, GJ_WALL_TEARDOWN);

		gjs->backend_state = NULL;
		gjs->backend->end_join(state);
		(void) gpujoin_wall_switch(gjs, part);
	}
}

/*
 * BeginCustomScan of both nodes: the children, the quals, the join type's
 * flags, the scan columns each side stores, and the host buffers.
 */
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

	gjs->begin_ms = gj_clock_ms();
	gpujoin_plan_info_deserialize(cscan->custom_private, &gjs->info);

	gjs->outer_ps = ExecInitNode(linitial(cscan->custom_plans), estate, child_eflags);
	gjs->inner_ps = ExecInitNode(lsecond(cscan->custom_plans), estate, child_eflags);
	node->custom_ps = list_make2(gjs->outer_ps, gjs->inner_ps);
	/* an inner side drained in parallel: the whole one, should sharing fail */
	if (list_length(cscan->custom_plans) > 2)
	{
		gjs->inner_whole_ps = ExecInitNode(lthird(cscan->custom_plans), estate, child_eflags);
		node->custom_ps = lappend(node->custom_ps, gjs->inner_whole_ps);
	}

	gjs->host_qual = ExecInitQual(list_nth(cscan->custom_exprs, GJ_EXPRS_HOST_QUALS), &node->ss.ps);
	gjs->recheck_qual = ExecInitQual(list_nth(cscan->custom_exprs, GJ_EXPRS_RECHECK_QUALS), &node->ss.ps);
	gjs->filter_qual = ExecInitQual(list_nth(cscan->custom_exprs, GJ_EXPRS_FILTER_QUALS), &node->ss.ps);

	gjs->jointype = (JoinType) gjs->info.jointype;
	gjs->fill_outer = (gjs->jointype == JOIN_LEFT || gjs->jointype == JOIN_FULL ||
					   gjs->jointype == JOIN_ANTI);
	gjs->fill_inner = (gjs->jointype == JOIN_RIGHT || gjs->jointype == JOIN_FULL);
	gjs->emit_pairs = gjs->jointype != JOIN_ANTI;
	gjs->once_per_outer = (gjs->jointype == JOIN_SEMI || gjs->jointype == JOIN_ANTI);

	/*
	 * Each side stores the distinct attributes the scan tuple needs, but
	 * those the plan reads from a key column (scan_keys).
	 */
	gjs->nscan = list_length(gjs->info.scan_sides);
	gjs->scan_sides = palloc(sizeof(int) * Max(gjs->nscan, 1));
	gjs->scan_cols = palloc(sizeof(int) * Max(gjs->nscan, 1));
	gjs->scan_keys = palloc(sizeof(int) * Max(gjs->nscan, 1));
	gjs->scan_src = palloc0(sizeof(GjScanColumn) * Max(gjs->nscan, 1));
	forboth(ls, gjs->info.scan_sides, la, gjs->info.scan_attnos)
	{
		List	  **cols = lfirst_int(ls) == GJ_SIDE_OUTER ? &outer_cols : &inner_cols;
		ListCell   *lc;
		int			pos = -1;

		gjs->scan_sides[k] = lfirst_int(ls);
		gjs->scan_keys[k] = gjs->info.scan_keys == NIL ? -1 :
			list_nth_int(gjs->info.scan_keys, k);
		if (gjs->scan_keys[k] >= 0)
		{
			gjs->scan_cols[k] = -1;
			k++;
			continue;
		}
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
		gjs->scan_cols[k] = pos;
		k++;
	}
	gpujoin_order_scan_columns(gjs, cscan);

	gjs->join_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuJoin",
										  ALLOCSET_DEFAULT_SIZES);
	gj_host_buffer_init(&gjs->outer_buf, gjs->join_cxt, "GpuJoin outer rows",
					 gjs->info.outer_key_attnos, gjs->info.outer_key_types,
					 outer_cols, ExecGetResultType(gjs->outer_ps));
	gj_host_buffer_init(&gjs->inner_buf, gjs->join_cxt, "GpuJoin inner rows",
					 gjs->info.inner_key_attnos, gjs->info.inner_key_types,
					 inner_cols, ExecGetResultType(gjs->inner_ps));
	gj_host_buffer_set_key_hashes(&gjs->outer_buf, gjs->info.outer_key_hashfuncs,
							   gjs->info.outer_key_collations);
	gj_host_buffer_set_key_hashes(&gjs->inner_buf, gjs->info.inner_key_hashfuncs,
							   gjs->info.inner_key_collations);
	gjs->outer_reader = gj_heap_reader_create(gjs->outer_ps, &gjs->outer_buf, gjs->join_cxt);
	gjs->inner_reader = gj_heap_reader_create(gjs->inner_ps, &gjs->inner_buf, gjs->join_cxt);
	if (gjs->inner_whole_ps != NULL)
		gjs->inner_whole_reader = gj_heap_reader_create(gjs->inner_whole_ps, &gjs->inner_buf,
														gjs->join_cxt);
	gj_spill_file_init(&gjs->outer_spill, gjs->join_cxt);
	gj_spill_file_init(&gjs->inner_spill, gjs->join_cxt);
	/* the aggregate node turns it off where it cannot join in chunks */
	gjs->spill_allowed = true;
	gjs->staging = &staging_callbacks;
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
	pull_varattnos(list_nth(cscan->custom_exprs, GJ_EXPRS_HOST_QUALS), INDEX_VAR, &pair_attrs);
	pull_varattnos(list_nth(cscan->custom_exprs, GJ_EXPRS_FILTER_QUALS), INDEX_VAR, &pair_attrs);
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
 * Drain the sides that a rescan did not keep, inner first.  False when the
 * inner side is empty and nothing can come out of the join: an inner, semi
 * or right join is empty then, and the outer side is never read (as in
 * nodeHashjoin.c).  Left, full and anti joins return every outer row.
 *
 * Under a Gather, where another process is draining the shared inner side
 * for this one, this process drains its share of the outer side first,
 * rather than wait for it: so the processes drain the outer side while one
 * drains the inner side (the outer side is read even if the inner side
 * turns out empty then; the answer is the same).  The outer side's spill
 * cannot then be cut by the inner side's partitions, so a spill of either
 * side is joined block by block (spill.c, outer_drained_first).
 */
static bool
gpujoin_drain_inputs(GpuJoinState *gjs)
{
	gjs->outer_drained_first = false;
	if (!gjs->inner_buf.complete && !gjs->outer_buf.complete &&
		gpujoin_shared_inner_busy(gjs))
	{
		gjs->outer_drained_first = true;
		gpujoin_drain_side(gjs, GJ_SIDE_OUTER);
	}
	/* under a Gather, drained once for all processes where it can be */
	if (!gjs->inner_buf.complete && !gpujoin_shared_inner_obtain(gjs))
		gpujoin_drain_side(gjs, GJ_SIDE_INNER);
	if (gjs->inner_buf.nrows + gjs->inner_spill.rows == 0 && !gjs->fill_outer)
		return false;
	if (!gjs->outer_buf.complete)
		gpujoin_drain_side(gjs, GJ_SIDE_OUTER);
	return true;
}

/*
 * Point each scan column at the arrays it is read from; called once both
 * inputs are drained, when the arrays no longer move.
 */
static void
gpujoin_resolve_scan_columns(GpuJoinState *gjs)
{
	int			k;

	StaticAssertStmt(sizeof(bool) == sizeof(uint8), "a key's null flags are read as bools");

	for (k = 0; k < gjs->nscan; k++)
	{
		GjScanColumn *src = &gjs->scan_src[k];
		HostSideBuffer *buf = src->outer ? &gjs->outer_buf : &gjs->inner_buf;
		int			key = gjs->scan_keys[src->scanpos];

		if (key >= 0)
		{
			/* the key's values are the Datums (gpujoin_plan_scan_keys) */
			Assert(key < buf->nkeys && !buf->keys[key].hashed);
			src->values = (const Datum *) buf->keys[key].values;
			/* 0 or 1, and NULL where the column has no NULLs */
			src->isnull = (const bool *) buf->keys[key].isnull;
		}
		else
		{
			HostDatumColumn *col = buf->cols + gjs->scan_cols[src->scanpos];

			src->values = col->values;
			/* a column without NULLs is not read there: one cache miss less */
			src->isnull = col->has_nulls ? col->isnull : NULL;
		}
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
	/* the hint names what is left to try: the cpu backend, or PostgreSQL's plan */
	if (gjs->backend == &gj_cpu_backend || gjs->backend == &gj_service_cpu_backend)
		ereport(ERROR,
				(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
				 errmsg("GpuJoin failed on the %s backend", gjs->backend->name),
				 errdetail("%s", err->message),
				 errhint("Set gpujoin.enabled to off for this query to run PostgreSQL's own plan.")));
	ereport(ERROR,
			(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
			 errmsg("GpuJoin failed on the %s backend", gjs->backend->name),
			 errdetail("%s", err->message),
			 errhint("Set gpujoin.device to \"cpu\" to run GpuJoin without the GPU.")));
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

/*
 * The backend of the join's first execution.  A partial plan (each process
 * of a parallel query joins its share of the outer rows) runs in the GPU
 * service when it is up and chosen (gpujoin.device = service, or auto and
 * cuda while the service runs on cuda): every process is then a client of
 * the one CUDA context.  Otherwise it runs on the cpu backend in every
 * process, which would each open its own CUDA context on the same device.
 */
static void
gpujoin_pick_backend_once(GpuJoinState *gjs)
{
	if (gjs->backend == NULL)
		gpujoin_service_await_if_chosen();
	if (gjs->backend == NULL && gjs->css.ss.ps.plan->parallel_safe &&
		!(gpujoin_device == GPUJOIN_DEVICE_SERVICE && gpujoin_service_ready()) &&
		!(gpujoin_device != GPUJOIN_DEVICE_CPU && gpujoin_service_runs_cuda()))
		gjs->backend = &gj_cpu_backend;
	if (gjs->backend != NULL)
		return;
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
		 * Counting and summing from range widths beats returning every pair,
		 * however fast the device produces them.
		 */
		gjs->fallback_from = gjs->backend;
		gjs->fallback_reason = psprintf("%s has no aggregate kernel", gjs->backend->name);
		gjs->backend = &gj_cpu_backend;
	}
}

/*
 * gpujoin_pick_backend_once, and the time it waited for the GPU service to
 * start (with the server, or again after it exited), which EXPLAIN ANALYZE
 * shows as Service Start Wait.
 */
static void
gpujoin_pick_backend(GpuJoinState *gjs)
{
	gj_service_start_wait_ms = 0;
	gpujoin_pick_backend_once(gjs);
	gjs->counters.service_start_ms += gj_service_start_wait_ms;
	gj_service_start_wait_ms = 0;
}

/*
 * What the backend is opened with: the plan's algorithm and program, with
 * the keys encoded for this execution.  A key value with no exact int64
 * flags its row (gj_host_encode_join_keys): the device's answer for such a
 * row's pairs is never used, the host evaluates them all (see
 * gpujoin_next_host_pairs).  When a numeric constant does not fit, or an
 * abs() band's subtraction could overflow, every pair goes to the host
 * through a nested loop instead.  Nothing is ever rounded or wrapped.
 */
static void
gpujoin_join_input(GpuJoinState *gjs, GjJoinInput *input)
{
	memset(input, 0, sizeof(GjJoinInput));
	input->outer_nrows = gjs->outer_buf.nrows;
	input->inner_nrows = gjs->inner_buf.nrows;
	input->algorithm = gjs->info.algorithm;
	input->range = gjs->info.range;
	input->equi = gjs->info.equi;
	input->filter_needed = gjs->info.filter_needed;
	input->agg_dominance = gjs->agg_dominance;
	input->compile_programs =
		gpujoin_compile_programs == GPUJOIN_COMPILE_ALWAYS ? GJ_COMPILE_ALWAYS :
		gpujoin_compile_programs == GPUJOIN_COMPILE_ON ? GJ_COMPILE_AUTO : GJ_COMPILE_OFF;
	/* the plan's program and bounds, with this execution's numeric scale */
	gjs->exec_program = gjs->info.program;
	input->instrs = gjs->exec_program.instrs;
	input->ninstrs = gjs->exec_program.ninstrs;
	gjs->inexact_keys = gj_host_encode_join_keys(&gjs->outer_buf, &gjs->inner_buf,
											  gjs->exec_program.instrs,
											  gjs->exec_program.ninstrs, &input->range);
	/* after the encoding: it decides which values the backends see as NULL */
	gj_host_buffer_key_columns(&gjs->outer_buf, &input->outer);
	gj_host_buffer_key_columns(&gjs->inner_buf, &input->inner);
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
		input->instrs = host_decides_program;
		input->ninstrs = lengthof(host_decides_program);
		input->algorithm = GJ_ALGO_NESTLOOP;
		input->filter_needed = true;
	}
	else if (input->algorithm == GJ_ALGO_SORTMERGE &&
			 !gpujoin_band_guard_holds(&gjs->info.band_guard,
									   &input->outer, input->outer_nrows,
									   &input->inner, input->inner_nrows))
	{
		/* the native plan would raise the overflow: let the pairs do so */
		input->algorithm = GJ_ALGO_NESTLOOP;
		input->filter_needed = true;
		gjs->band_guard_failed = true;
	}
}

/*
 * The device memory budget of one join on the chosen backend:
 * gpujoin.device_memory when set, else half of what the device has free,
 * or CPU_DEFAULT_BUDGET on the cpu backend.
 */
int64
gpujoin_join_budget(GpuJoinState *gjs)
{
	if (gpujoin_device_memory_kb > 0)
		return (int64) gpujoin_device_memory_kb * 1024;
	if (gjs->backend == &gj_cuda_backend)
		return gjs->cuda_info.free_memory / 2;
	/* in the GPU service: half of one device's share of its budget */
	if (gj_backend_in_service(gjs->backend) && gj_service_budget_total() > 0)
		return Max(gj_service_budget_total() / Max(gj_service->ndevices, 1) / 2,
				   MIN_RETRY_BUDGET);
	if (gjs->backend == &gj_service_cuda_backend)
	{
		/* half of what the service's device has free now */
		GjServiceStatus st;

		gpujoin_service_status(&st);
		return Max(st.free_memory / 2, MIN_RETRY_BUDGET);
	}
	return CPU_DEFAULT_BUDGET;
}

/*
 * What a join in the GPU service reserves of its budget: the device bytes
 * its tiles and match buffer fill when planned with that budget, a quarter
 * more for the kernels' scratch (sort and scan buffers), and for a
 * sort-merge or hash join its resident sorted keys with the cuda backend's
 * margin (four thirds).  A small join that reserved its whole budget, half
 * of a GPU's share, kept every other join waiting: the five processes of a
 * parallel equi-join of 10M x 1M rows queued for 0.8 s in all on one H100.
 * The budget stays an upper bound: a join whose tiles fill it reserves it.
 */
int64
gpujoin_service_reservation(GpuJoinState *gjs, GjJoinInput *input, int64 budget)
{
	TileSchedule sched;
	int			outer_row_bytes = gj_host_buffer_key_row_bytes(&gjs->outer_buf);
	int			inner_row_bytes = gj_host_buffer_key_row_bytes(&gjs->inner_buf);
	int64		tiles;
	int64		need;

	gj_tile_schedule_plan(&sched, input->outer_nrows, outer_row_bytes,
						  input->inner_nrows, inner_row_bytes, budget,
						  gj_service_max_matches());
	tiles = gj_tile_schedule_bytes(&sched, outer_row_bytes, inner_row_bytes);
	/*
	 * Planned again with the smaller figure, the schedule must keep its match
	 * buffer and tiles: the buffer takes a quarter of the budget, uncapped.
	 */
	need = tiles + tiles / 4 + 4 * sched.match_capacity * (int64) (2 * sizeof(uint32));
	if (input->algorithm != GJ_ALGO_NESTLOOP)
		need += gj_sorted_resident_bytes(input->outer_nrows, input->inner_nrows,
										 input->outer.ncols, input->inner.ncols) / 3 * 4 + 4;
	return Min(budget, Max(need, MIN_RETRY_BUDGET));
}

/*
 * Open the join of *input on the chosen backend: the whole pair of
 * buffers, or one device partition of them (device_partitions.c).  When
 * the device has less free memory than the budget promised (another
 * process took it, or fragmentation), halve the budget and so the tiles,
 * and try again; below MIN_RETRY_BUDGET give up on the device and run the
 * join on the cpu backend, which gives the same rows.  In the GPU service
 * the join first waits for its share of the service's device memory
 * budget (service_budget.c), and runs with smaller tiles when less is
 * free; only when none came within the bound does it run on the cpu
 * backend.
 */
void
gpujoin_open_backend(GpuJoinState *gjs, GjJoinInput *input)
{
	instr_time	start,
				end;
	GjError		err;
	int64		budget = gpujoin_join_budget(gjs);
	int64		wanted = budget;
	double		budget_wait_left = gj_service_budget_wait_bound();
	int64		least = MIN_RETRY_BUDGET;
	GjWallPart	part;

	/*
	 * In the service a join may get less than it asked for, but never less
	 * than it needs: a sort-merge or hash join keeps its sorted keys
	 * resident, and the cuda backend refuses one whose keys take more than
	 * three quarters of its budget (the partitions were cut to fit the
	 * budget asked for, so each piece fits it).
	 */
	if (input->algorithm != GJ_ALGO_NESTLOOP)
		least = Max(least, gj_sorted_resident_bytes(input->outer_nrows, input->inner_nrows,
													input->outer.ncols, input->inner.ncols) / 3 * 4 + 4);

	part = gpujoin_wall_switch(gjs, GJ_WALL_BACKEND);
	INSTR_TIME_SET_CURRENT(start);
	if (gj_backend_in_service(gjs->backend))
		wanted = gpujoin_service_reservation(gjs, input, wanted);
	for (;;)
	{
		memset(&err, 0, sizeof(err));
		if (gj_backend_in_service(gjs->backend))
		{
			double		waited = 0;
			int64		granted = gj_service_budget_wait(wanted, Min(least, wanted),
														 &budget_wait_left, &waited);

			gjs->counters.service_queue_ms += waited;
			if (granted == 0)
			{
				err.code = GJ_ERR_BUSY;
				snprintf(err.message, sizeof(err.message),
						 "the GPU service's device memory (gpujoin.service_device_memory) stayed reserved by other joins for %.0f s",
						 gj_service_budget_wait_bound() / 1000.0);
				goto on_cpu;
			}
			budget = granted;
		}
		gj_tile_schedule_plan(&gjs->sched,
						   input->outer_nrows, gj_host_buffer_key_row_bytes(&gjs->outer_buf),
						   input->inner_nrows, gj_host_buffer_key_row_bytes(&gjs->inner_buf),
						   budget,
						   gj_backend_in_service(gjs->backend) ? gj_service_max_matches() : 0);
		input->match_capacity = gjs->sched.match_capacity;
		input->budget_bytes = budget;

		gj_service_queue_ms = 0;
		gjs->backend_state = gpujoin_backend_begin(gjs->backend, input, &err);
		gjs->counters.service_queue_ms += gj_service_queue_ms;
		if (gjs->backend_state != NULL)
			break;
		/* another join took the budget since this one looked: wait again */
		if (err.code == GJ_ERR_BUSY && budget_wait_left > 0)
			continue;
		if (err.code != GJ_ERR_OUT_OF_MEMORY && err.code != GJ_ERR_OVER_BUDGET &&
			err.code != GJ_ERR_BUSY)
			gpujoin_backend_error(gjs, &err);
		/* over the budget at any tile size: no smaller tiles will do */
		if (err.code == GJ_ERR_OUT_OF_MEMORY && budget / 2 >= MIN_RETRY_BUDGET)
		{
			budget /= 2;
			wanted = budget;
			gjs->oom_retries++;
			elog(DEBUG1, "GpuJoin: %s; retrying with a budget of %lld kB",
				 err.message, (long long) (budget / 1024));
			continue;
		}
on_cpu:
		if (gjs->backend == &gj_cpu_backend)
			gpujoin_backend_error(gjs, &err);
		ereport(NOTICE,
				(errmsg("GpuJoin is running on the cpu backend: not enough memory on the %s backend",
						gjs->backend->name),
				 errdetail("%s", err.message)));
		gjs->fallback_from = gjs->backend;
		gjs->fallback_reason = err.code == GJ_ERR_BUSY ? "device memory busy" : "out of memory";
		gjs->backend = &gj_cpu_backend;
		/* a set budget bounds the cpu backend's tiles too, as on cpu */
		budget = gpujoin_device_memory_kb > 0 ?
			(int64) gpujoin_device_memory_kb * 1024 : CPU_DEFAULT_BUDGET;
	}
	gjs->budget_bytes = budget;
	/* opening the join (copying and sorting keys) is backend work too */
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	gjs->counters.backend_ms += INSTR_TIME_GET_MILLISEC(end);
	(void) gpujoin_wall_switch(gjs, part);
}

/*
 * Drain what has to be drained, clear the match flags, plan the tiles and
 * open the backend.  Returns the next phase: RUN_STEP, or, when a side is
 * empty and no pair can match, EMIT_UNMATCHED or DONE.
 */
GpuJoinPhase
gpujoin_prepare(GpuJoinState *gjs)
{
	GjWallPart	part = gpujoin_wall_switch(gjs, GJ_WALL_SETUP);
	GpuJoinPhase phase;

	phase = gpujoin_prepare_inputs(gjs);
	(void) gpujoin_wall_switch(gjs, part);
	return phase;
}

/* gpujoin_prepare, on the wall clock's setup part. */
static GpuJoinPhase
gpujoin_prepare_inputs(GpuJoinState *gjs)
{
	gjs->spilled = false;
	gjs->inexact_keys = NULL;
	gjs->outer_inexact = NULL;
	gjs->inner_inexact = NULL;
	gjs->in_host_pairs = false;
	if (!gpujoin_drain_inputs(gjs))
		return GJ_PHASE_DONE;
	if (gjs->outer_spill.nchunks > 0 || gjs->inner_spill.nchunks > 0)
		return gpujoin_spill_start(gjs);

	/* every rescan starts with no row matched */
	if (gjs->inner_matched_borrowed)
	{
		/* a spilled execution's per-chunk flags are not ours to reuse */
		gjs->inner_matched = NULL;
		gjs->inner_matched_bytes = 0;
		gjs->inner_matched_borrowed = false;
	}
	if (gjs->fill_outer || gjs->once_per_outer)
		gjs->outer_matched = gpujoin_match_flags_reset(gjs->join_cxt, gjs->outer_matched,
													   &gjs->outer_matched_bytes,
													   gjs->outer_buf.nrows);
	if (gjs->fill_inner)
		gjs->inner_matched = gpujoin_match_flags_reset(gjs->join_cxt, gjs->inner_matched,
													   &gjs->inner_matched_bytes,
													   gjs->inner_buf.nrows);
	gjs->unmatched_pos = 0;
	gjs->unmatched_end = gjs->outer_buf.nrows + gjs->inner_buf.nrows;
	return gpujoin_open_pair(gjs);
}

/*
 * Open the join of the two buffers as they are now: the whole inputs, or
 * one chunk pair of a spilled join (spill.c).  Returns RUN_STEP,
 * or, when a side is empty and no pair can match, what comes after the
 * tiles.
 */
GpuJoinPhase
gpujoin_open_pair(GpuJoinState *gjs)
{
	GjJoinInput input;

	gjs->inexact_keys = NULL;
	gjs->outer_inexact = NULL;
	gjs->inner_inexact = NULL;
	gjs->in_host_pairs = false;
	gjs->matches.count = 0;
	gjs->match_pos = 0;
	gpujoin_resolve_scan_columns(gjs);
	gpujoin_partitions_reset(gjs);
	if (gjs->outer_buf.nrows == 0 || gjs->inner_buf.nrows == 0)
		return gpujoin_phase_after_tiles(gjs);

	gpujoin_pick_backend(gjs);
	/* injected faults count the calls of the join, all its partitions */
	gpujoin_fault_join_start();
	gpujoin_join_input(gjs, &input);
	if (gjs->before_open != NULL)
		gjs->before_open(gjs, &input);
	/* over the budget: the steps open the partitions one by one */
	if (!gpujoin_partitions_plan(gjs, &input))
		gpujoin_open_backend(gjs, &input);
	gjs->tile_open = false;
	return GJ_PHASE_RUN_STEP;
}

void
gpujoin_end(CustomScanState *node)
{
	GpuJoinState *gjs = (GpuJoinState *) node;

	/* released at the last step, or at the shutdown: not on the wall clock */
	gpujoin_release_backend(gjs);
	/* the Gather's shared memory may be gone: detach in the service only */
	gjs->shared_inner = NULL;
	gpujoin_shared_inner_detach(gjs);
	gpujoin_spill_end(gjs);
	ExecEndNode(gjs->outer_ps);
	ExecEndNode(gjs->inner_ps);
	if (gjs->inner_whole_ps != NULL)
		ExecEndNode(gjs->inner_whole_ps);
}

/* Must the side be drained again at this rescan: did its parameters change? */
static bool
gpujoin_side_changed(GpuJoinState *gjs, int side)
{
	bool		outer = side == GJ_SIDE_OUTER;
	PlanState  *child = outer ? gjs->outer_ps : gjs->inner_ps;
	HostSideBuffer *buf = outer ? &gjs->outer_buf : &gjs->inner_buf;

	if (!outer && gjs->inner_whole_ps != NULL && gjs->inner_whole_ps->chgParam != NULL)
		return true;
	return !(child->chgParam == NULL && buf->complete);
}

/*
 * A side whose parameters did not change keeps its drained rows (or its
 * spilled chunks): only the tile schedule starts over, unless `force`.  A
 * side whose parameters changed is drained again (its child rescans itself
 * on the next ExecProcNode).  Returns whether the side is drained again.
 */
static bool
gpujoin_reset_side(GpuJoinState *gjs, int side, bool force)
{
	bool		outer = side == GJ_SIDE_OUTER;
	PlanState  *child = outer ? gjs->outer_ps : gjs->inner_ps;
	GjHeapReader *reader = outer ? gjs->outer_reader : gjs->inner_reader;
	HostSideBuffer *buf = outer ? &gjs->outer_buf : &gjs->inner_buf;
	bool		redrain = force || gpujoin_side_changed(gjs, side);

	gpujoin_spill_rescan_side(gjs, side, redrain);
	if (!redrain)
		return false;
	if (child->chgParam == NULL)
		ExecReScan(child);
	if (reader != NULL)
		gj_heap_reader_rescan(reader);
	/* the whole inner side beside a partial one: either may be drained */
	if (!outer && gjs->inner_whole_ps != NULL)
	{
		if (gjs->inner_whole_ps->chgParam == NULL)
			ExecReScan(gjs->inner_whole_ps);
		if (gjs->inner_whole_reader != NULL)
			gj_heap_reader_rescan(gjs->inner_whole_reader);
	}
	gj_host_buffer_reset(buf);
	return true;
}

void
gpujoin_rescan(CustomScanState *node)
{
	GpuJoinState *gjs = (GpuJoinState *) node;
	bool		outer_tied;
	bool		inner_tied;
	bool		inner_redrained;

	if (node->ss.ps.chgParam != NULL)
	{
		UpdateChangedParamSet(gjs->outer_ps, node->ss.ps.chgParam);
		UpdateChangedParamSet(gjs->inner_ps, node->ss.ps.chgParam);
		if (gjs->inner_whole_ps != NULL)
			UpdateChangedParamSet(gjs->inner_whole_ps, node->ss.ps.chgParam);
	}
	(void) gpujoin_wall_switch(gjs, GJ_WALL_OTHER);
	gpujoin_release_backend(gjs);
	/* a shared inner side is not kept: the next run shares it anew */
	if (gjs->inner_attached != 0)
		gpujoin_shared_inner_detach(gjs);
	gpujoin_partitions_reset(gjs);
	/*
	 * A spill cut by key range ties the sides' files: the outer side's is
	 * cut by the inner side's ranges, and, for LEFT, SEMI and ANTI joins, the
	 * inner side's copies by the outer side's rows; one drained again drains
	 * the other again.
	 */
	outer_tied = gpujoin_spill_outer_tied_to_inner(gjs);
	inner_tied = gpujoin_spill_inner_tied_to_outer(gjs) &&
		gpujoin_side_changed(gjs, GJ_SIDE_OUTER);
	inner_redrained = gpujoin_reset_side(gjs, GJ_SIDE_INNER, inner_tied);
	(void) gpujoin_reset_side(gjs, GJ_SIDE_OUTER, inner_redrained && outer_tied);
	gjs->spilled = false;
	gjs->tile_open = false;
	gjs->matches.count = 0;
	gjs->match_pos = 0;
	gjs->in_host_pairs = false;
	gjs->outer_inexact = NULL;
	gjs->inner_inexact = NULL;
	gjs->phase = GJ_PHASE_DRAIN;
}

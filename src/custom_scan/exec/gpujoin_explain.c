/*-------------------------------------------------------------------------
 *
 * gpujoin_explain.c
 *	  EXPLAIN output of a GpuJoin node.
 *
 * Plain EXPLAIN shows the join type (unless inner, as native join nodes
 * name theirs "Hash Left Join" etc.), the algorithm, the quals the device
 * evaluates, the quals left to the host, an outer join's filter (quals
 * pushed down from WHERE) and the configured device.  EXPLAIN
 * ANALYZE adds what the join did: the backend that ran it, rows drained from
 * each side, tiles and steps run, pairs the device evaluated, matches it
 * returned, pairs the host rechecked or rejected, unmatched rows emitted
 * null-extended, and where the time went; and how each input was read
 * (the columnar heap reader and its pages, or the child plan), and, for a
 * join whose inputs spilled, the chunks written and the bytes.  With step overlap, Backend Time
 * counts the steps that ran while rows were emitted too, and Overlap Wait
 * Time the part of it the emission had to wait for.  EXPLAIN (ANALYZE,
 * VERBOSE) adds Backend Time by part, and where each process's wall clock
 * went (Wall Clock, a line per process: GjWallPart in gpujoin_exec.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/explain.h"
#include "nodes/makefuncs.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/ruleutils.h"

#include "gpujoin.h"
#include "custom_scan/exec/gpujoin_exec.h"
#include "host_chunking/staging.h"
#include "service/service_shared.h"

static void
explain_quals(const char *label, List *quals, CustomScanState *node,
			  List *ancestors, ExplainState *es)
{
	List	   *context;
	char	   *text;

	if (quals == NIL)
		return;
	context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	text = deparse_expression((Node *) make_ands_explicit(quals), context,
							  list_length(es->rtable) > 1 || es->verbose, false);
	ExplainPropertyText(label, text, es);
}

static const char *
device_setting_name(void)
{
	switch (gpujoin_device)
	{
		case GPUJOIN_DEVICE_CUDA:
			return "cuda";
		case GPUJOIN_DEVICE_CPU:
			return "cpu";
		case GPUJOIN_DEVICE_SERVICE:
			return "service";
		default:
			return "auto";
	}
}

/*
 * Where one side's rows came from: "heap (columnar), N pages" when the
 * columnar heap reader read every drain of it ("N pages in M scans" when
 * it read an Append's subplans), else "child plan"; with timing, the time
 * its drains took.
 */
static void
explain_input(const char *label, const GjHeapReader *reader, const GpuJoinCounters *c,
			  int side, ExplainState *es)
{
	char	   *text;

	if (reader != NULL && c->child_plan_drains[side] == 0 &&
		gj_heap_reader_partitions(reader) > 0)
		text = psprintf("heap (columnar), %lld pages in %d scans",
						(long long) c->input_pages[side], gj_heap_reader_partitions(reader));
	else if (reader != NULL && c->child_plan_drains[side] == 0)
		text = psprintf("heap (columnar), %lld pages", (long long) c->input_pages[side]);
	else
		text = pstrdup("child plan");
	if (es->timing)
		text = psprintf("%s, %.3f ms", text, c->input_ms[side]);
	ExplainPropertyText(label, text, es);
}

/*
 * VERBOSE with timing and gpujoin.time_input_parts: where the columnar
 * reader's time went, pages read (heapgetpage), their tuples decoded, and
 * stored in the host buffer.
 */
static void
explain_input_parts(const char *label, const GpuJoinCounters *c, int side, ExplainState *es)
{
	if (!es->verbose || !es->timing || !gpujoin_time_input_parts || c->input_pages[side] == 0)
		return;
	ExplainPropertyText(label,
						psprintf("read %.3f ms, decode %.3f ms, store %.3f ms",
								 c->input_read_ms[side], c->input_decode_ms[side],
								 c->input_store_ms[side]),
						es);
}

/*
 * VERBOSE: the scan columns whose Datums no side stores, read from their
 * key columns instead (GpuJoinPlanInfo.scan_keys).
 */
static void
explain_scan_keys(GpuJoinState *gjs, List *ancestors, ExplainState *es)
{
	CustomScan *cscan = (CustomScan *) gjs->css.ss.ps.plan;
	List	   *context;
	StringInfoData text;
	int			k;

	if (!es->verbose || gjs->info.scan_keys == NIL)
		return;
	context = set_deparse_context_plan(es->deparse_cxt, &cscan->scan.plan, ancestors);
	initStringInfo(&text);
	for (k = 0; k < gjs->nscan; k++)
	{
		TargetEntry *tle = list_nth_node(TargetEntry, cscan->custom_scan_tlist, k);

		if (gjs->scan_keys[k] < 0)
			continue;
		if (text.len > 0)
			appendStringInfoString(&text, ", ");
		appendStringInfoString(&text, deparse_expression((Node *) tle->expr, context,
														 true, false));
	}
	ExplainPropertyText("Columns Read from Keys", text.data, es);
}

/* Why a program ran interpreted (GjInterpretedWhy), for EXPLAIN and logs. */
const char *
gpujoin_interpreted_why(int why)
{
	switch (why)
	{
		case GJ_INTERPRETED_OFF:
			return "gpujoin.compile_programs is off";
		case GJ_INTERPRETED_SMALL:
			return "too few pairs to compile";
		case GJ_INTERPRETED_TOO_LARGE:
			return "too many instructions to compile";
		case GJ_INTERPRETED_NO_NVRTC:
			return "no libnvrtc";
		case GJ_INTERPRETED_COMPILE_FAILED:
			return "compiling failed";
		case GJ_INTERPRETED_LOAD_FAILED:
			return "loading the compiled program failed";
		case GJ_INTERPRETED_CACHE_FULL:
			return "the cache of compiled programs is full";
		case GJ_INTERPRETED_COMPILING:
			return "compiling in the background";
		case GJ_INTERPRETED_NO_MEMORY:
			return "no device memory for the compiled form";
		default:
			return NULL;
	}
}

/*
 * How the backend ran the program on the device, where a kernel that can
 * run it compiled ran (the cuda backend's program count, cuda_compile.cu):
 * "compiled (12.345 ms)" with the time compiling took, "compiled (loaded
 * from the kernel store in 2.345 ms)" where an earlier process had compiled
 * and stored it, "compiled (cached)" where the process had compiled it
 * already, or "interpreted (why)"; the
 * steps that interpreted it or ran the quick kernel while the full one
 * compiled in the background; and how many steps found it in the
 * process's cache.
 */
static void
explain_program(const GjStats *stats, ExplainState *es)
{
	const char *why = gpujoin_interpreted_why(stats->interpreted_why);
	bool		quick_only;
	char	   *text;

	if (stats->program_steps_compiled == 0 && stats->program_steps_interpreted == 0)
		return;
	/* steps that ran the quick kernel while the full one compiled */
	quick_only = stats->program_steps_quick > 0 && stats->programs_compiled == 0 &&
		stats->programs_loaded == 0;
	if (stats->program_steps_compiled == 0)
		text = why != NULL ? psprintf("interpreted (%s)", why) : pstrdup("interpreted");
	else if (quick_only)
		text = pstrdup("compiled (the quick kernel; the full one compiling in the background)");
	else if (stats->programs_compiled == 0 && stats->programs_loaded > 0)
		text = es->timing ?
			psprintf("compiled (loaded from the kernel store in %.3f ms)", stats->compile_ms) :
			pstrdup("compiled (loaded from the kernel store)");
	else if (stats->programs_compiled == 0)
		text = pstrdup("compiled (cached)");
	else if (es->timing)
		text = psprintf("compiled (%.3f ms)", stats->compile_ms);
	else
		text = pstrdup("compiled");
	if (stats->program_steps_compiled > 0 && stats->program_steps_interpreted > 0)
		text = psprintf("%s, %lld of %lld steps interpreted", text,
						(long long) stats->program_steps_interpreted,
						(long long) (stats->program_steps_compiled +
									 stats->program_steps_interpreted));
	if (stats->program_steps_quick > 0 && !quick_only)
		text = psprintf("%s, %lld quick", text, (long long) stats->program_steps_quick);
	if (stats->program_steps_compiled > 0 && stats->program_steps_interpreted > 0 &&
		why != NULL && !quick_only)
		text = psprintf("%s (%s)", text, why);
	ExplainPropertyText("Program", text, es);
	if (stats->programs_cached > 0)
		ExplainPropertyInteger("Program Cache Hits", NULL, stats->programs_cached, es);
}

/*
 * A join in a GPU service of several devices: how many ran its steps and
 * the steps of each device, "Devices: 2 (steps 40, 40)" (a nested loop
 * spreads its steps, other joins run on one device).  A device's step is
 * a piece of a tile (service_client.c), so the counts add up to more
 * than Steps when pieces ran ahead.
 */
static void
explain_devices(const GpuJoinCounters *c, ExplainState *es)
{
	StringInfoData text;
	int			ndevices = 0;
	int			used = 0;
	int			d;

	if (gj_service != NULL)
	{
		SpinLockAcquire(&gj_service->mutex);
		ndevices = gj_service->ndevices;
		SpinLockRelease(&gj_service->mutex);
	}
	/* a device that ran steps counts even if the service has restarted since */
	for (d = 0; d < GJ_MAX_DEVICES; d++)
		if (c->stats.device_steps[d] > 0)
		{
			used++;
			ndevices = Max(ndevices, d + 1);
		}
	if (ndevices < 2)
		return;
	initStringInfo(&text);
	appendStringInfo(&text, "%d (steps", used);
	for (d = 0; d < ndevices; d++)
		appendStringInfo(&text, "%s %lld", d == 0 ? "" : ",",
						 (long long) c->stats.device_steps[d]);
	appendStringInfoChar(&text, ')');
	ExplainPropertyText("Devices", text.data, es);
}

/*
 * Backend Time, and under VERBOSE its parts (GjTimes, kernels/backend.h):
 * in text one line, "Backend Time: 303.100 ms (queued 0.2, staging 120.4,
 * ...)", in the other formats a property each.  Queued counts the waits for
 * room in the GPU service (Service Queue Time) with the waits for a worker
 * thread; checks are the GPU service's checks of a join's request and the
 * copies of the aggregate spec it keeps (service_validate.c); open is
 * cuda's setting up of a join beyond its sort (device memory allocated,
 * columns uploaded, the shared inner side borrowed, the aggregates' row
 * order, prefix arrays and uploads); kernels are cuda's Kernel Time, the
 * cpu backend's loops and cuda's reductions on the host; results are cuda's
 * Transfer Time and the matches copied into the client's buffers.  In the
 * GPU service, round trips are the calls' own latency (the client's wait
 * beyond the queue and the serving: waking the client), and service other
 * what the service did in serving them that no part names (reserving and
 * allocating device memory, the aggregates' uploads, device
 * synchronization); other is the rest, in the executor (tile schedules,
 * the budget), never below zero.  Sums over the processes, as Backend Time
 * is, or one process's under `label` (explain_wall_clocks).
 */
static void
explain_backend_time(const GpuJoinCounters *c, const char *label, ExplainState *es)
{
	const GjTimes *t = &c->stats.times;
	double		in_service = t->checks_ms + t->sort_ms + t->open_ms + t->shared_build_ms +
		t->share_wait_ms + t->compute_ms + c->stats.kernel_ms + t->results_ms +
		c->stats.transfer_ms;
	const struct
	{
		const char *word;		/* in the text line */
		const char *property;	/* in the other formats */
		double		ms;
	}			parts[] = {
		{"queued", "Backend Queued Time", t->queued_ms + c->service_queue_ms},
		{"staging", "Backend Staging Time", t->staging_ms},
		{"checks", "Backend Check Time", t->checks_ms},
		{"sort/hash", "Backend Sort Time", t->sort_ms},
		{"open", "Backend Open Time", t->open_ms},
		{"shared inner build", "Backend Shared Inner Build Time", t->shared_build_ms},
		{"share wait", "Backend Share Wait Time", t->share_wait_ms},
		{"kernels", "Backend Kernel Time", t->compute_ms + c->stats.kernel_ms},
		{"results", "Backend Results Time", t->results_ms + c->stats.transfer_ms},
		{"round trips", "Backend Round Trip Time",
		Max(t->call_ms - t->queued_ms - t->served_ms, 0)},
		{"service other", "Backend Service Other Time",
		t->served_ms > 0 ? Max(t->served_ms - in_service, 0) : 0},
	};
	double		other = c->backend_ms;
	StringInfoData text;
	int			i;

	if (!es->verbose)
	{
		ExplainPropertyFloat(label, "ms", c->backend_ms, 3, es);
		return;
	}
	for (i = 0; i < lengthof(parts); i++)
		other -= parts[i].ms;
	other = Max(other, 0);
	if (es->format != EXPLAIN_FORMAT_TEXT)
	{
		ExplainPropertyFloat(label, "ms", c->backend_ms, 3, es);
		for (i = 0; i < lengthof(parts); i++)
			ExplainPropertyFloat(parts[i].property, "ms", parts[i].ms, 3, es);
		ExplainPropertyFloat("Backend Other Time", "ms", other, 3, es);
		return;
	}
	initStringInfo(&text);
	appendStringInfo(&text, "%.3f ms (", c->backend_ms);
	for (i = 0; i < lengthof(parts); i++)
		appendStringInfo(&text, "%s %.1f, ", parts[i].word, parts[i].ms);
	appendStringInfo(&text, "other %.1f)", other);
	ExplainPropertyText(label, text.data, es);
}

/*
 * Where one process's wall clock went (GjWallPart, gpujoin_exec.h): in
 * text one line, "Wall Clock: 120.3 ms (start 1.2, inner wait 0.0, ...,
 * other 0.1)", labelled "Worker N Wall Clock" for a worker; in the other
 * formats a group per process.  The total is the start (before the first
 * call: from BeginCustomScan, in a worker from the leader's launch of the
 * parallel query) and the parts from the first call to the shutdown.  In a
 * parallel plan, the process's own Backend Time by part follows.
 */
static void
explain_wall_clock(const GpuJoinCounters *c, int worker, bool parallel, ExplainState *es)
{
	static const struct
	{
		const char *word;		/* in the text line */
		const char *property;	/* in the other formats */
	}			parts[GJ_WALL_NPARTS] = {
		[GJ_WALL_OTHER] = {"other", "Other Time"},
		[GJ_WALL_INNER_WAIT] = {"inner wait", "Inner Wait Time"},
		[GJ_WALL_INNER_SHARE] = {"inner share", "Inner Share Time"},
		[GJ_WALL_DRAIN] = {"drain", "Drain Time"},
		[GJ_WALL_SETUP] = {"setup", "Setup Time"},
		[GJ_WALL_BACKEND] = {"backend", "Backend Time"},
		[GJ_WALL_EMIT] = {"emit", "Emit Time"},
		[GJ_WALL_TEARDOWN] = {"teardown", "Teardown Time"},
		[GJ_WALL_AFTER] = {"after last row", "After Last Row Time"},
	};
	/* the order of the text line: by the time they come, other last */
	static const GjWallPart order[] = {
		GJ_WALL_INNER_WAIT, GJ_WALL_INNER_SHARE, GJ_WALL_DRAIN, GJ_WALL_SETUP,
		GJ_WALL_BACKEND, GJ_WALL_EMIT, GJ_WALL_TEARDOWN, GJ_WALL_AFTER, GJ_WALL_OTHER,
	};
	double		total = c->wall_start_ms;
	int			i;

	for (i = 0; i < GJ_WALL_NPARTS; i++)
		total += c->wall_ms[i];
	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		StringInfoData text;

		initStringInfo(&text);
		appendStringInfo(&text, "%.3f ms (start %.1f", total, c->wall_start_ms);
		for (i = 0; i < lengthof(order); i++)
			appendStringInfo(&text, ", %s %.1f", parts[order[i]].word, c->wall_ms[order[i]]);
		appendStringInfoChar(&text, ')');
		ExplainPropertyText(worker < 0 ? "Wall Clock" :
							psprintf("Worker %d Wall Clock", worker), text.data, es);
		if (parallel)
			explain_backend_time(c, worker < 0 ? "Leader Backend Time" :
								 psprintf("Worker %d Backend Time", worker), es);
		return;
	}
	ExplainOpenGroup("Wall Clock", NULL, true, es);
	if (worker >= 0)
		ExplainPropertyInteger("Worker Number", NULL, worker, es);
	ExplainPropertyFloat("Total Time", "ms", total, 3, es);
	ExplainPropertyFloat("Start Time", "ms", c->wall_start_ms, 3, es);
	for (i = 0; i < lengthof(order); i++)
		ExplainPropertyFloat(parts[order[i]].property, "ms", c->wall_ms[order[i]], 3, es);
	if (parallel)
		explain_backend_time(c, "Process Backend Time", es);
	ExplainCloseGroup("Wall Clock", NULL, true, es);
}

/*
 * The wall clock of this process and of each worker that ran the node
 * (EXPLAIN (ANALYZE, VERBOSE)).
 */
static void
explain_wall_clocks(GpuJoinState *gjs, ExplainState *es)
{
	int			w;

	if (es->format != EXPLAIN_FORMAT_TEXT)
		ExplainOpenGroup("Wall Clocks", "Wall Clocks", false, es);
	explain_wall_clock(&gjs->counters, -1, gjs->nworkers_each > 0, es);
	for (w = 0; w < gjs->nworkers_each; w++)
	{
		const GpuJoinCounters *c = &gjs->workers_each[w];

		/* a worker that never ran the node (not launched) has no clock */
		if (c->wall_start_ms == 0 && c->wall_ms[GJ_WALL_OTHER] == 0 &&
			c->wall_ms[GJ_WALL_AFTER] == 0 && c->wall_ms[GJ_WALL_DRAIN] == 0)
			continue;
		explain_wall_clock(c, w, true, es);
	}
	if (es->format != EXPLAIN_FORMAT_TEXT)
		ExplainCloseGroup("Wall Clocks", "Wall Clocks", false, es);
}

void
gpujoin_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuJoinState *gjs = (GpuJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	GpuJoinCounters counters;

	if (gjs->jointype != JOIN_INNER)
		ExplainPropertyText("Join Type", gpujoin_jointype_name(gjs->jointype), es);
	if (es->analyze && gjs->inexact_keys != NULL)
		ExplainPropertyText("Algorithm", psprintf("nestloop (%s)", gjs->inexact_keys), es);
	else if (es->analyze && gjs->band_guard_failed)
		ExplainPropertyText("Algorithm",
							"nestloop (the abs() band's subtraction could overflow)", es);
	else if (gjs->agg_dominance)
		ExplainPropertyText("Algorithm", "nestloop (dominance counting)", es);
	else
		ExplainPropertyText("Algorithm", gpujoin_algorithm_name(gjs->info.algorithm), es);
	explain_quals("Device Quals", list_nth(cscan->custom_exprs, GJ_EXPRS_DEVICE_QUALS), node, ancestors, es);
	explain_quals("Host Quals", list_nth(cscan->custom_exprs, GJ_EXPRS_HOST_QUALS), node, ancestors, es);
	explain_quals("Filter", list_nth(cscan->custom_exprs, GJ_EXPRS_FILTER_QUALS), node, ancestors, es);
	explain_scan_keys(gjs, ancestors, es);
	/* the third child: the whole inner side, drained where the shares are not shared */
	if (gjs->inner_whole_ps != NULL)
		ExplainPropertyText("Inner Plans", "partial, drained in parallel; whole, where unshared", es);

	if (!es->analyze || gjs->backend == NULL)
	{
		ExplainPropertyText("Device", device_setting_name(), es);
		if (!es->analyze)
			return;
	}
	else if (gjs->fallback_from != NULL)
		ExplainPropertyText("Backend",
							psprintf("%s (%s)", gjs->backend->name, gjs->fallback_reason), es);
	else
		ExplainPropertyText("Backend", gjs->backend->name, es);

	if (gjs->oom_retries > 0)
		ExplainPropertyInteger("Out-of-Memory Retries", NULL, gjs->oom_retries, es);
	gpujoin_counters_with_workers(gjs, &counters);
	explain_input("Outer Input", gjs->outer_reader, &counters, 0, es);
	explain_input_parts("Outer Input Parts", &counters, 0, es);
	explain_input("Inner Input", gjs->inner_reader, &counters, 1, es);
	explain_input_parts("Inner Input Parts", &counters, 1, es);
	ExplainPropertyInteger("Outer Rows Drained", NULL, counters.outer_drained, es);
	ExplainPropertyInteger("Inner Rows Drained", NULL, counters.inner_drained, es);
	/* a parallel join's inner side drained once for the Gather (shared_inner.c) */
	if (counters.inner_shared > 0 && counters.inner_share_drains > 0)
		ExplainPropertyText("Inner Side", "shared, drained in parallel", es);
	else if (counters.inner_shared > 0)
		ExplainPropertyText("Inner Side", "shared", es);
	else if (counters.inner_share_drains > 0)
		ExplainPropertyText("Inner Side", "drained in parallel, not shared: whole in each process", es);
	/* the processes that drained a share of an inner side drained in parallel */
	if (counters.inner_share_drains > 0)
		ExplainPropertyInteger("Inner Shares Drained", NULL, counters.inner_share_drains, es);
	gpujoin_spill_explain(gjs, &counters, es);
	gpujoin_partitions_explain(&counters, es);
	ExplainPropertyInteger("Tiles Run", NULL, counters.tiles_run, es);
	ExplainPropertyInteger("Tiles Pruned", NULL, counters.tiles_pruned, es);
	ExplainPropertyInteger("Steps", NULL, counters.steps, es);
	if (gjs->backend == &gj_service_cpu_backend || gjs->backend == &gj_service_cuda_backend)
		explain_devices(&counters, es);
	if (counters.steps_overlapped > 0)
		ExplainPropertyInteger("Steps Overlapped", NULL, counters.steps_overlapped, es);
	explain_program(&counters.stats, es);
	ExplainPropertyInteger("Pairs Evaluated", NULL, counters.stats.pairs_evaluated, es);
	ExplainPropertyInteger("Device Matches", NULL, counters.stats.device_matches, es);
	ExplainPropertyInteger("Host Rechecks", NULL, counters.host_rechecks, es);
	if (counters.host_pairs > 0)
		ExplainPropertyInteger("Pairs with Inexact Keys", NULL, counters.host_pairs, es);
	ExplainPropertyInteger("Rows Removed by Host Quals", NULL, counters.host_rejected, es);
	if (gjs->filter_qual != NULL)
		ExplainPropertyInteger("Rows Removed by Filter", NULL, counters.filter_rejected, es);
	if (gjs->once_per_outer)
		ExplainPropertyInteger("Pairs Skipped", NULL, counters.pairs_skipped, es);
	if (gjs->fill_outer)
		ExplainPropertyInteger("Null-Extended Outer Rows", NULL, counters.null_extended_outer, es);
	if (gjs->fill_inner)
		ExplainPropertyInteger("Null-Extended Inner Rows", NULL, counters.null_extended_inner, es);
	/* our own clock, not per-node instrumentation: shown unless both are off */
	if (es->timing || es->summary)
	{
		ExplainPropertyFloat("Drain Time", "ms", counters.drain_ms, 3, es);
		explain_backend_time(&counters, "Backend Time", es);
		if (counters.steps_overlapped > 0)
			ExplainPropertyFloat("Overlap Wait Time", "ms", counters.overlap_wait_ms, 3, es);
		if (counters.service_queue_ms > 0)
			ExplainPropertyFloat("Service Queue Time", "ms", counters.service_queue_ms, 3, es);
		/* a join that came while the GPU service started (or restarted) */
		if (counters.service_start_ms > 0)
			ExplainPropertyFloat("Service Start Wait", "ms", counters.service_start_ms, 3, es);
		/* this process's own, as the device's clock is per process */
		if (gjs->counters.stats.transfer_ms > 0)
			ExplainPropertyFloat("Transfer Time", "ms", gjs->counters.stats.transfer_ms, 3, es);
		if (gjs->counters.stats.kernel_ms > 0)
			ExplainPropertyFloat("Kernel Time", "ms", gjs->counters.stats.kernel_ms, 3, es);
		if (gjs->cuda_first_use)
			ExplainPropertyFloat("CUDA Init Time", "ms", gjs->cuda_info.init_ms, 3, es);
	}
	if (es->verbose && es->timing)
		explain_wall_clocks(gjs, es);
	if (es->verbose)
	{
		ExplainPropertyInteger("Device Memory Budget", "kB", gjs->budget_bytes / 1024, es);
		ExplainPropertyInteger("Outer Tile Rows", NULL, gjs->sched.outer_tile_rows, es);
		ExplainPropertyInteger("Inner Tile Rows", NULL, gjs->sched.inner_tile_rows, es);
	}
}

/*-------------------------------------------------------------------------
 *
 * gpujoin_path.c
 *	  Planner side of GpuJoin, first half: decides whether a join can run
 *	  as GpuJoin, classifies its quals, costs it and offers the CustomPath.
 *
 * The path is offered for a join of two unparameterized inputs when at least
 * one join qual that links both sides compiles into the device program.
 * Quals that do not compile stay host quals, evaluated by ExecQual on every
 * pair the device returns.  Anything whose semantics GpuJoin does not
 * reproduce exactly (unique-ified semi joins, placeholders, pseudoconstant
 * quals, lateral references) gets no path at all: the native plan stays.
 *
 * Join types: INNER, LEFT, RIGHT, FULL, SEMI and ANTI.  The backends only
 * return matching pairs; the executor keeps a match flag per input row and
 * emits the unmatched rows of the preserved side(s) after the last tile.  As
 * in createplan.c, the quals of an outer join are split: join quals (from ON)
 * decide which pairs match, and quals pushed down from WHERE become the
 * join's filter, applied to every row the join forms, null-extended or not.
 *
 * A FULL JOIN is offered whatever its condition.  PostgreSQL runs one only
 * as a hash or merge join; where no join clause is hash-joinable and not
 * every one is merge-joinable, the join rel gets no path of its own and
 * joinrels.c raises "FULL JOIN is only supported with merge-joinable or
 * hash-joinable join conditions" unless a hook added one.  GpuJoin's path
 * runs such a join (r FULL JOIN s ON r.a < s.b) with the same match flags
 * as any other FULL JOIN, and the error stays where no path is offered: no
 * qual linking both sides compiles, gpujoin.enabled is off, an input cannot
 * be held.  A pair is a match only once the host quals passed too, so the
 * unmatched rows are those of the whole ON condition, device and host
 * parts alike.
 *
 * set_join_pathlist_hook (planner_hook.c) calls gpujoin_add_join_paths for
 * every join pair, so what happens here before a path is rejected stays
 * cheap.  The path keeps its classified quals (GpuJoinPathPrivateIndex);
 * gpujoin_plan.c turns it into the plan.  The aggregate node
 * (gpujoin_agg_path.c) classifies its join's quals with
 * gpujoin_classify_quals too.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"

#include "gpujoin.h"

static List *rinfos_in_native_order(PlannerInfo *root, List *rinfos);

/* Are all Vars of the expression list produced by one of the two inputs? */
static bool
vars_available(List *exprs, PathTarget *outer_target, PathTarget *inner_target)
{
	List	   *vars = pull_var_clause((Node *) exprs, PVC_INCLUDE_PLACEHOLDERS);
	ListCell   *lc;

	foreach(lc, vars)
	{
		Node	   *var = lfirst(lc);

		if (!IsA(var, Var))
			return false;
		if (!list_member(outer_target->exprs, var) &&
			!list_member(inner_target->exprs, var))
			return false;
	}
	return true;
}

/*
 * Cost of the GpuJoin path.  The inputs are drained completely before the
 * first row comes out, so their whole cost is startup cost; the device work
 * grows with the pairs the algorithm evaluates; each candidate the device
 * returns pays the host quals, and each result row its projection.  An
 * outer join also walks the match flags of its preserved side(s) after the
 * last tile, and its filter (quals pushed down from WHERE) is evaluated on
 * every row it forms.  The device work is in the constants of the backend
 * that will run it (gpujoin_costs.c).  Inputs past gpujoin.max_host_memory
 * add their spill: the temporary files' pages and the chunk pairs' extra
 * work (gpujoin_spill_cost).
 *
 * inner_share, when not NULL, is the partial path every process drains a
 * share of (the inner side drained in parallel, shared_inner.c):
 * the drain costs its share (a partial path's cost is already one
 * process's), while the join itself still sees the whole inner side,
 * inner_path's rows.
 *
 * backend_costs are the constants of the backend that will run the join;
 * against a hash join PostgreSQL would run within the CPU's cache they count
 * more (gpujoin_costs_against_native).
 */
static void
cost_gpujoin(PlannerInfo *root, CustomPath *cpath, Path *outer_path, Path *inner_path,
			 Path *inner_share, List *device_rinfos, List *host_rinfos, List *other_rinfos,
			 JoinType jointype, JoinPathExtraData *extra, const GpuJoinPlanInfo *info,
			 const GpuJoinCostProfile *backend_costs)
{
	GpuJoinCostProfile scaled_costs;
	const GpuJoinCostProfile *costs =
		gpujoin_costs_against_native(backend_costs, extra->restrictlist, outer_path->parent,
									 inner_path->parent, jointype, &scaled_costs);
	double		outer_rows = outer_path->rows;
	double		inner_rows = inner_path->rows;
	/* what this process drains of the inner side: all of it, or its share */
	Path	   *inner_drained = inner_share != NULL ? inner_share : inner_path;
	int			device_columns;
	List	   *device_clauses;
	List	   *band_clauses;
	Selectivity band_sel;
	Selectivity device_sel;
	QualCost	host_cost;
	QualCost	other_cost;
	QualCost	device_cost;
	double		candidates;
	double		formed;
	double		unmatched_scan = 0;
	Cost		startup;
	Cost		run;
	double		chunk_pairs;
	SpecialJoinInfo pair_sjinfo;

	/*
	 * The selectivities below are per pair: those of an inner join of the
	 * two inputs.  A semi or anti join's own (eqjoinsel_semi) are the
	 * fraction of outer rows with a match, which counted per pair made a
	 * semi join of 1M rows cost a trillion candidates.
	 */
	pair_sjinfo = *extra->sjinfo;
	pair_sjinfo.jointype = JOIN_INNER;

	/* a band: from the inner key's histogram (gpujoin_costs.c), not 1/9 */
	device_clauses = extract_actual_clauses(device_rinfos, false);
	band_sel = gpujoin_band_selectivity(root, device_clauses, outer_path->parent->relids,
										inner_path->parent->relids, &band_clauses, NULL);
	if (band_sel >= 0)
		device_sel = band_sel *
			clauselist_selectivity(root, list_difference_ptr(device_clauses, band_clauses),
								   0, JOIN_INNER, &pair_sjinfo);
	else
		device_sel = clauselist_selectivity(root, device_clauses, 0, JOIN_INNER, &pair_sjinfo);
	candidates = clamp_row_est(outer_rows * inner_rows * device_sel);

	device_columns = list_length(pull_var_clause((Node *) extract_actual_clauses(device_rinfos, false),
												 PVC_RECURSE_PLACEHOLDERS));
	cost_qual_eval(&device_cost, device_rinfos, root);
	cost_qual_eval(&host_cost, host_rinfos, root);
	cost_qual_eval(&other_cost, other_rinfos, root);

	if (jointype == JOIN_LEFT || jointype == JOIN_FULL || jointype == JOIN_ANTI)
		unmatched_scan += outer_rows;
	if (jointype == JOIN_RIGHT || jointype == JOIN_FULL)
		unmatched_scan += inner_rows;

	startup = gpujoin_input_cost(root, outer_path, costs) +
		gpujoin_input_cost(root, inner_drained, costs) + costs->startup_cost;
	/*
	 * A semi or anti join decides an outer row by its first match: the
	 * device's other matches of that row are skipped on the host without
	 * forming a tuple (EXPLAIN: Pairs Skipped).
	 */
	formed = candidates;
	if (jointype == JOIN_SEMI || jointype == JOIN_ANTI)
		formed = Min(candidates, outer_rows);

	run = gpujoin_join_work_cost(root, costs, info, outer_path->parent->relids,
								 inner_path->parent->relids, outer_rows, inner_rows, candidates,
								 device_columns, device_cost.per_tuple / cpu_operator_cost,
								 &pair_sjinfo) +
		formed * (host_cost.per_tuple + cpu_tuple_cost * 0.5) +
		(candidates - formed) * cpu_operator_cost +
		unmatched_scan * cpu_operator_cost +
		(formed + unmatched_scan) * other_cost.per_tuple +
		cpath->path.rows * (costs->output_cost + cpath->path.pathtarget->cost.per_tuple);
	/* inputs past gpujoin.max_host_memory: written and read in chunks */
	startup += gpujoin_spill_cost(costs, info->algorithm, gpujoin_spills_by_range(info, jointype),
								  outer_path, inner_path, &chunk_pairs);

	/*
	 * A band rewritten from another written form is guarded: the executor
	 * reads both key columns once more before the join runs
	 * (gpujoin_band_guard.c), may have to run a nested loop instead, and is
	 * never spilled by key range.  So where the other orientation runs the
	 * same range without a guard ("s.t BETWEEN r.t - 2 AND r.t + 2" with
	 * s inner rather than r), that one should win: a tenth more work.
	 */
	if (info->band_guard.active)
	{
		startup += (outer_rows + inner_rows) * cpu_operator_cost;
		run *= 1.1;
	}

	cpath->path.startup_cost = startup + host_cost.startup + other_cost.startup;
	cpath->path.total_cost = cpath->path.startup_cost + run;
}

/* Name of a join type as EXPLAIN prints it ("Join Type: Left"). */
const char *
gpujoin_jointype_name(int jointype)
{
	switch ((JoinType) jointype)
	{
		case JOIN_INNER:
			return "Inner";
		case JOIN_LEFT:
			return "Left";
		case JOIN_RIGHT:
			return "Right";
		case JOIN_FULL:
			return "Full";
		case JOIN_SEMI:
			return "Semi";
		case JOIN_ANTI:
			return "Anti";
		default:
			return "???";
	}
}

/*
 * May GpuJoin hold these inputs, by the planner's estimate?  Those within
 * gpujoin.max_host_memory, always; bigger ones where the executor may spill
 * them to temporary files (gpujoin.enable_spill, and not in a partial
 * plan, whose processes would each spill the whole inner side): the spill
 * is costed then (gpujoin_spill_cost).  Otherwise the join is left to
 * PostgreSQL's own plans.  The executor enforces the limit too, should the
 * estimate be wrong.
 */
static bool
host_memory_fits(Path *outer_path, Path *inner_path, bool may_spill)
{
	double		bytes = gpujoin_input_host_bytes(outer_path) +
		gpujoin_input_host_bytes(inner_path);

	if (bytes <= (double) gpujoin_max_host_memory_kb * 1024.0)
		return true;
	if (may_spill && gpujoin_enable_spill)
	{
		elog(DEBUG1, "GpuJoin: its inputs need about %.0f kB of host memory, more than gpujoin.max_host_memory (%d kB): they will spill",
			 bytes / 1024.0, gpujoin_max_host_memory_kb);
		return true;
	}
	elog(DEBUG1, "GpuJoin: not offered: its inputs need about %.0f kB of host memory, more than gpujoin.max_host_memory (%d kB)",
		 bytes / 1024.0, gpujoin_max_host_memory_kb);
	return false;
}

/* Does the expression compute a numeric anywhere (a key of type numeric)? */
static bool
mentions_numeric(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (!IsA(node, List) && exprType(node) == NUMERICOID)
		return true;
	return expression_tree_walker(node, mentions_numeric, context);
}

/*
 * May a partial GpuJoin drain its inner side in parallel, every process a
 * share of the inner rel's cheapest partial path (shared_inner.c)?
 * Only where the shares will be put together in the GPU service: each
 * process sees only its share, so a process that cannot read the shared
 * side must drain the whole inner side again from inner_whole, the plan's
 * third child; the path is offered only where that is not expected (the
 * service runs the join, no numeric key, no spill, room in the staging
 * area: gpujoin_inner_drain_may_share), so the fallback is a rare cost,
 * never a wrong answer.  The partial path must return the same columns as
 * inner_whole, since one host buffer holds either.  The aggregate node's
 * partial paths ask too (gpujoin_agg_path.c).
 */
bool
gpujoin_inner_drain_in_parallel(RelOptInfo *innerrel, Path *inner_whole, List *device_rinfos)
{
	Path	   *inner_partial;
	ListCell   *lc;

	if (innerrel->partial_pathlist == NIL)
		return false;
	inner_partial = linitial(innerrel->partial_pathlist);
	if (inner_partial->param_info != NULL || inner_partial->parallel_workers <= 0 ||
		!equal(inner_partial->pathtarget->exprs, inner_whole->pathtarget->exprs))
		return false;
	/* a numeric key's device value depends on the scale of the whole side */
	foreach(lc, device_rinfos)
	{
		if (mentions_numeric((Node *) lfirst_node(RestrictInfo, lc)->clause, NULL))
			return false;
	}
	return gpujoin_inner_drain_may_share(gpujoin_input_host_bytes(inner_whole));
}

/*
 * A GpuJoin or GpuJoinAgg path's children.  An inner side drained in
 * parallel (inner_share not NULL) has two inner children: the partial path
 * the processes drain their shares of, and inner_path, drained whole by
 * each process where the shares cannot be shared (shared_inner.c).
 */
List *
gpujoin_path_children(Path *outer_path, Path *inner_share, Path *inner_path)
{
	if (inner_share != NULL)
		return list_make3(outer_path, inner_share, inner_path);
	return list_make2(outer_path, inner_path);
}

/*
 * The heap pages a parallel worker of a GpuJoin on the GPU service is worth
 * starting for: each process drains its share of the outer side on the
 * host, about 30 ns a row on the GPU machine (4,096 pages of 185 rows: 23
 * ms), while the service's part of a share takes a few ms and a worker
 * starts in about 5 ms.
 */
#define GJ_PAGES_PER_DRAIN_WORKER	4096

/*
 * The drain workers for an outer side of `pages` heap pages, up to
 * max_parallel_workers_per_gather (GJ_PAGES_PER_DRAIN_WORKER).
 */
static int
drain_workers(double pages)
{
	return (int) Min((double) max_parallel_workers_per_gather,
					 pages / GJ_PAGES_PER_DRAIN_WORKER);
}

/*
 * The partial Append of a partitioned outer side with drain_workers'
 * count of workers, where its every subpath is a Parallel Seq Scan the
 * columnar heap reader reads, none of the tables has a parallel_workers
 * setting, and that count is more than PostgreSQL's (which it takes from
 * the largest partition and the log2 of their number: 3 for 10M rows in
 * four); else the path as it is.  Each subpath is made again with that
 * count too, so that the Append's rows, this process's share, come out
 * the same way.
 */
static Path *
partial_append_with_drain_workers(PlannerInfo *root, RelOptInfo *outerrel, AppendPath *apath)
{
	List	   *subpaths = NIL;
	double		pages = 0;
	int			nworkers;
	ListCell   *lc;

	if (!gpujoin_columnar_append_path(root, &apath->path) || apath->path.pathkeys != NIL ||
		outerrel->rel_parallel_workers != -1)
		return &apath->path;
	foreach(lc, apath->subpaths)
	{
		Path	   *sub = (Path *) lfirst(lc);

		if (!sub->parallel_aware || sub->parent->rel_parallel_workers != -1)
			return &apath->path;
		pages += sub->parent->pages;
	}
	nworkers = drain_workers(pages);
	if (nworkers <= apath->path.parallel_workers)
		return &apath->path;
	foreach(lc, apath->subpaths)
		subpaths = lappend(subpaths, create_seqscan_path(root, ((Path *) lfirst(lc))->parent,
														 NULL, nworkers));
	return (Path *) create_append_path(root, outerrel, NIL, subpaths, NIL, NULL, nworkers,
									   apath->path.parallel_aware, -1);
}

/*
 * The outer partial path a partial GpuJoin drains: the outer rel's
 * cheapest, or, where that is a Parallel Seq Scan of a table (or a partial
 * Append of them: partial_append_with_drain_workers) and the service runs
 * cuda, one with more workers.  PostgreSQL gives a scan workers by the
 * log3 of its size (4 for 54,055 pages), for plans whose every process
 * works on its share of the join; a GpuJoin's processes only drain, the
 * device joins, so the drain's time is what more workers cut
 * (bench_equi.sh's count(*) over 10M rows).  A table's parallel_workers
 * setting, where given, stands.  The worker count carries to the plan
 * above, as any partial path's does; where the inner side is not shared,
 * each process drains it whole (host_memory_fits checks one process's), and
 * an inner side drained in parallel keeps its own path, costed for
 * PostgreSQL's count of workers: a share larger than each process drains.
 */
Path *
gpujoin_partial_outer_path(PlannerInfo *root, RelOptInfo *outerrel)
{
	Path	   *path;
	int			nworkers;

	if (outerrel->partial_pathlist == NIL)
		return NULL;
	path = linitial(outerrel->partial_pathlist);
	if (IsA(path, AppendPath) && outerrel->reloptkind == RELOPT_BASEREL &&
		gpujoin_parallel_costs() == &gpujoin_cuda_costs)
		return partial_append_with_drain_workers(root, outerrel, (AppendPath *) path);
	if (path->pathtype != T_SeqScan || path->param_info != NULL ||
		path->parallel_workers <= 0 || outerrel->reloptkind != RELOPT_BASEREL ||
		outerrel->rtekind != RTE_RELATION || outerrel->rel_parallel_workers != -1 ||
		gpujoin_parallel_costs() != &gpujoin_cuda_costs)
		return path;
	nworkers = drain_workers(outerrel->pages);
	if (nworkers <= path->parallel_workers)
		return path;
	return create_seqscan_path(root, outerrel, NULL, nworkers);
}

/*
 * A GpuJoin path over the given inputs; parallel_workers > 0 for a partial
 * one, inner_share a partial path of the inner side to drain in parallel;
 * info the classified join (its algorithm, its band's guard), requested the
 * algorithm it was classified for.
 */
static CustomPath *
make_gpujoin_path(PlannerInfo *root, RelOptInfo *joinrel, Path *outer_path, Path *inner_path,
				  Path *inner_share, List *device_rinfos, List *host_rinfos, List *join_rinfos,
				  List *other_rinfos, JoinType jointype, JoinPathExtraData *extra,
				  const GpuJoinPlanInfo *info, int requested, double rows,
				  int parallel_workers)
{
	CustomPath *cpath = makeNode(CustomPath);

	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = joinrel;
	cpath->path.pathtarget = joinrel->reltarget;
	cpath->path.param_info = NULL;
	/* parallel-aware only to hand its counters to the leader: gpujoin_parallel.c */
	cpath->path.parallel_aware = (parallel_workers > 0);
	cpath->path.parallel_safe = (parallel_workers > 0);
	cpath->path.parallel_workers = parallel_workers;
	cpath->path.rows = rows;
	cpath->path.pathkeys = NIL;
	cpath->flags = 0;
	cpath->custom_paths = gpujoin_path_children(outer_path, inner_share, inner_path);
	cpath->custom_private = gpujoin_path_private_make(device_rinfos, host_rinfos, join_rinfos,
													  other_rinfos, jointype, requested);
	cpath->methods = &gpujoin_path_methods;
	cost_gpujoin(root, cpath, outer_path, inner_path, inner_share, device_rinfos, host_rinfos,
				 other_rinfos, jointype, extra, info,
				 parallel_workers > 0 ? gpujoin_parallel_costs() : gpujoin_planning_costs());
	return cpath;
}

/*
 * Split a join's quals into those the device evaluates and those the host
 * does, and choose the algorithm (requested: gpujoin.algorithm, or the
 * alternative the caller costs as well).  Returns false when no device qual links
 * the two sides (GpuJoin is then pointless) or a qual is pseudoconstant.
 *
 * PostgreSQL evaluates the quals of a pair in order_qual_clauses() order and
 * stops at the first false one, so a host qual that raises an ERROR does so
 * only on pairs that pass every qual before it.  The device may therefore
 * reject a pair by the join keys of its algorithm (which PostgreSQL's own
 * hash and merge joins test first too) and by the device quals that come
 * before the first host qual; the device quals after it are evaluated on the
 * host, in order, with the host quals.
 */
bool
gpujoin_classify_quals(PlannerInfo *root, Relids outer_relids, Relids inner_relids,
					   List *join_rinfos, int requested, List **device_rinfos,
					   List **host_rinfos, GpuJoinPlanInfo *info)
{
	DeviceCompileContext cxt;
	bool		links_sides = false;
	bool		after_host = false;
	List	   *device = NIL;
	List	   *host = NIL;
	ListCell   *lc;

	gj_device_compile_init(&cxt, outer_relids, inner_relids);
	foreach(lc, join_rinfos)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (rinfo->pseudoconstant)
			return false;
		if (gj_device_compile_qual(&cxt, rinfo->clause))
			device = lappend(device, rinfo);
		else
			host = lappend(host, rinfo);
	}
	memset(info, 0, sizeof(GpuJoinPlanInfo));
	/* the program of the device quals (the aggregate paths read its shape) */
	info->program = cxt.program;
	gj_device_choose_algorithm(&cxt, extract_actual_clauses(device, false),
							requested, info);

	*device_rinfos = NIL;
	*host_rinfos = NIL;
	foreach(lc, rinfos_in_native_order(root, join_rinfos))
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (list_member_ptr(host, rinfo))
		{
			after_host = true;
			*host_rinfos = lappend(*host_rinfos, rinfo);
		}
		else if (after_host && !list_member_ptr(cxt.key_clauses, rinfo->clause))
			*host_rinfos = lappend(*host_rinfos, rinfo);
		else
		{
			*device_rinfos = lappend(*device_rinfos, rinfo);

			/*
			 * The device compares a hashed equality's hashes: the host
			 * evaluates the qual itself on every pair the device returns,
			 * so a hash collision never makes a match.  Device quals after
			 * it stay on the device: they cannot raise an error there.
			 */
			if (gj_device_qual_is_hashed(&cxt, rinfo->clause))
				*host_rinfos = lappend(*host_rinfos, rinfo);
			if (bms_overlap(rinfo->clause_relids, outer_relids) &&
				bms_overlap(rinfo->clause_relids, inner_relids))
				links_sides = true;
		}
	}
	if (!links_sides)
		return false;
	/*
	 * Compile what the device keeps, in the order the plan will compile it
	 * (gpujoin_plan.c): the chooser breaks ties by column order, so the
	 * path is costed with the range or hash keys the plan will run.
	 */
	gj_device_compile_init(&cxt, outer_relids, inner_relids);
	foreach(lc, *device_rinfos)
	{
		if (!gj_device_compile_qual(&cxt, lfirst_node(RestrictInfo, lc)->clause))
			elog(ERROR, "GpuJoin device qual no longer compiles");
	}
	memset(info, 0, sizeof(GpuJoinPlanInfo));
	info->program = cxt.program;
	gj_device_choose_algorithm(&cxt, extract_actual_clauses(*device_rinfos, false),
							requested, info);
	return true;
}

/*
 * Does PostgreSQL count many more rows for this join than its band holds by
 * the inner key's histogram (gpujoin_band_selectivity)?  Ten times or more.
 */
static bool
band_rows_overestimated(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
						RelOptInfo *innerrel, List *device_rinfos)
{
	List	   *band_clauses;
	Selectivity band_sel;

	band_sel = gpujoin_band_selectivity(root, extract_actual_clauses(device_rinfos, false),
										outerrel->relids, innerrel->relids, &band_clauses, NULL);
	return band_sel >= 0 &&
		joinrel->rows > 10.0 * clamp_row_est(outerrel->rows * innerrel->rows * band_sel);
}

/*
 * Is a nested loop over a btree index on the band column
 * (gpujoin_band_index_nestloop_cost; -1: none) cheaper than the path?
 * PostgreSQL's own estimate of that plan can be far too high, so the path
 * would win on cost what it loses on the clock: it is not offered.  Both
 * return the join's rows: the nested loop is charged for them what the
 * path is (PostgreSQL's count of them, as the path's, can be far too high
 * too).
 */
static bool
index_nestloop_cheaper(Cost index_nestloop, CustomPath *cpath, const GpuJoinCostProfile *costs)
{
	Cost		nestloop;
	Cost		gpujoin = cpath->path.total_cost;

	if (index_nestloop < 0)
		return false;
	nestloop = index_nestloop + cpath->path.rows * costs->output_cost;
	/* a partial path is one process's share: its plan starts the workers too */
	if (cpath->path.parallel_aware)
		gpujoin += parallel_setup_cost;
	if (gpujoin <= nestloop)
		return false;
	elog(DEBUG1, "GpuJoin: not offered: a nested loop over the band column's index costs %.0f, the GpuJoin %.0f",
		 nestloop, gpujoin);
	return true;
}

/*
 * The nested loop over a btree index on the inner side's band column, where
 * the GpuJoin stood aside for it (index_nestloop_cheaper withheld every
 * GpuJoin path of the join): the path PostgreSQL builds for that plan, with
 * the same outer path and parameterized index path, offered at the cost
 * gpujoin_band_index_probe_cost gives it.  PostgreSQL estimates a range on
 * a join column at a fixed fraction of the table, so it costs the probes and
 * the rows they return hundreds of times too dear, and prefers a parallel
 * plan that spreads them over workers: on the H200, 99 rows of a 200k-row
 * table probing an index took 13.6-14.8 ms that way (a Parallel Seq Scan of
 * the outer table instead of its primary key), against 6.0-6.9 ms for the
 * GpuJoin the guard had withheld and 0.53 ms for the serial nested loop.  The probe cost
 * counts the rows each probe really fetches, as the guard and the aggregate
 * node's guard compare it; the rows PostgreSQL expects the join to return
 * stay the join rel's, for the plan above.
 */
static void
offer_band_index_nestloop(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
						  RelOptInfo *innerrel, JoinPathExtraData *extra, List *device_rinfos)
{
	IndexOptInfo *index;
	Cost		probes;
	Path	   *outer_path = outerrel->cheapest_total_path;
	Path	   *inner_path = NULL;
	JoinCostWorkspace workspace;
	NestPath   *nestloop;
	Cost		corrected;
	ListCell   *lc;

	probes = gpujoin_band_index_probe_cost(root, outerrel, innerrel,
										   extract_actual_clauses(device_rinfos, false),
										   &index);
	if (probes < 0 || outer_path == NULL || outer_path->param_info != NULL)
		return;

	/* PostgreSQL's index path on that index, parameterized by the outer rel */
	foreach(lc, innerrel->pathlist)
	{
		Path	   *p = lfirst(lc);
		Relids		required = PATH_REQ_OUTER(p);

		if (!IsA(p, IndexPath) || ((IndexPath *) p)->indexinfo != index ||
			((IndexPath *) p)->indexclauses == NIL ||
			bms_is_empty(required) || !bms_is_subset(required, outerrel->relids))
			continue;
		if (inner_path == NULL || p->total_cost < inner_path->total_cost)
			inner_path = p;
	}
	if (inner_path == NULL)
		return;

	initial_cost_nestloop(root, &workspace, JOIN_INNER, outer_path, inner_path, extra);
	nestloop = create_nestloop_path(root, joinrel, JOIN_INNER, &workspace, extra,
									outer_path, inner_path, extra->restrictlist,
									build_join_pathkeys(root, joinrel, JOIN_INNER,
														outer_path->pathkeys),
									NULL);
	corrected = probes;
	if (corrected >= nestloop->jpath.path.total_cost)
		return;
	elog(DEBUG1, "GpuJoin: the nested loop over the band column's index offered at cost %.0f (PostgreSQL's %.0f)",
		 corrected, nestloop->jpath.path.total_cost);
	nestloop->jpath.path.total_cost = Max(corrected, nestloop->jpath.path.startup_cost);
	add_path(joinrel, &nestloop->jpath.path);
}

/*
 * Offer the GpuJoin paths of one classified join: the whole join, and the
 * partial ones for parallel plans.  requested is the algorithm the
 * classification was asked for (the plan compiles its keys for it again).
 * Adds to *withheld the paths not offered because a nested loop over the
 * band column's index is cheaper, and to *offered those offered.
 */
static void
offer_gpujoin_paths(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
					RelOptInfo *innerrel, List *device_rinfos, List *host_rinfos,
					List *join_rinfos, List *other_rinfos, JoinType jointype,
					JoinPathExtraData *extra, const GpuJoinPlanInfo *info, int requested,
					int *withheld, int *offered)
{
	Path	   *outer_path = outerrel->cheapest_total_path;
	Path	   *inner_path = innerrel->cheapest_total_path;
	CustomPath *cpath;
	ListCell   *lc;
	bool		partial_offered = false;
	Cost		index_nestloop = jointype == JOIN_INNER ?
		gpujoin_band_index_nestloop_cost(root, outerrel, innerrel,
										 extract_actual_clauses(device_rinfos, false)) : -1;

	/*
	 * A partial path for parallel plans: each process drains its share of
	 * the outer side (a partial path) and the whole inner side, as
	 * PostgreSQL's non-shared parallel hash join does, and joins them on its
	 * own.  Only where every inner row's fate is decided by one process:
	 * not for RIGHT and FULL joins, which emit unmatched inner rows.  Only
	 * where the cpu backend or the GPU service runs the join
	 * (gpujoin_plans_parallel): without the service each worker would open
	 * its own CUDA context and compete for the same device memory.  The
	 * executor runs a partial plan on the cpu backend when the service is
	 * not there by then.
	 */
	if (joinrel->consider_parallel && outerrel->partial_pathlist != NIL &&
		gpujoin_plans_parallel() &&
		jointype != JOIN_RIGHT && jointype != JOIN_FULL)
	{
		Path	   *outer_partial = gpujoin_partial_outer_path(root, outerrel);
		double		share = outer_partial->rows / Max(outerrel->rows, 1.0);
		Path	   *inner_safe = NULL;

		/* the cheapest inner path a worker can run (not a Gather) */
		foreach(lc, innerrel->pathlist)
		{
			Path	   *p = lfirst(lc);

			if (p->parallel_safe && p->param_info == NULL &&
				(inner_safe == NULL || p->total_cost < inner_safe->total_cost))
				inner_safe = p;
		}
		if (inner_safe != NULL && outer_partial->param_info == NULL &&
			outer_partial->parallel_workers > 0 &&
			host_memory_fits(outer_partial, inner_safe, false) &&
			vars_available(joinrel->reltarget->exprs, outer_partial->pathtarget,
						   inner_safe->pathtarget) &&
			vars_available(extract_actual_clauses(extra->restrictlist, false),
						   outer_partial->pathtarget, inner_safe->pathtarget))
		{
			cpath = make_gpujoin_path(root, joinrel, outer_partial, inner_safe, NULL,
									  device_rinfos, host_rinfos, join_rinfos,
									  other_rinfos, jointype, extra, info, requested,
									  clamp_row_est(joinrel->rows * share),
									  outer_partial->parallel_workers);
			if (!index_nestloop_cheaper(index_nestloop, cpath, gpujoin_parallel_costs()))
			{
				add_partial_path(joinrel, &cpath->path);
				partial_offered = true;
				(*offered)++;
			}
			else
				(*withheld)++;

			/* and one whose inner side is drained in parallel too */
			if (gpujoin_inner_drain_in_parallel(innerrel, inner_safe, device_rinfos))
			{
				cpath = make_gpujoin_path(root, joinrel, outer_partial, inner_safe,
										  linitial(innerrel->partial_pathlist),
										  device_rinfos, host_rinfos, join_rinfos,
										  other_rinfos, jointype, extra, info, requested,
										  clamp_row_est(joinrel->rows * share),
										  outer_partial->parallel_workers);
				if (!index_nestloop_cheaper(index_nestloop, cpath, gpujoin_parallel_costs()))
				{
					add_partial_path(joinrel, &cpath->path);
					(*offered)++;
				}
				else
					(*withheld)++;
			}
		}
	}

	/*
	 * The whole join in one process, unless the partial path above is
	 * there: PostgreSQL's costs make a parallel plan only about half as
	 * dear as the serial one where it runs several times faster, so a serial
	 * GpuJoin could beat a parallel native plan on cost and lose to it on
	 * the clock (the H100: a serial GpuJoin returning 833k of 10M rows in
	 * 0.7-1.1 s against the parallel hash join's 0.43 s).  The partial
	 * GpuJoin meets the parallel plans on the same terms.  Except a band
	 * whose rows PostgreSQL overestimates (it counts a ninth of all pairs):
	 * the Gather above the partial path is costed on the join rel's rows, so
	 * a band join returning 200k rows (200k x 200k on the H100, 97 ms) was
	 * costed as returning 4.4G and lost to a native nested loop of 865 ms.
	 */
	if ((!partial_offered || band_rows_overestimated(root, joinrel, outerrel, innerrel,
													 device_rinfos)) &&
		host_memory_fits(outer_path, inner_path, true))
	{
		cpath = make_gpujoin_path(root, joinrel, outer_path, inner_path, NULL, device_rinfos,
								  host_rinfos, join_rinfos, other_rinfos, jointype, extra,
								  info, requested, joinrel->rows, 0);
		if (!index_nestloop_cheaper(index_nestloop, cpath, gpujoin_planning_costs()))
		{
			add_path(joinrel, &cpath->path);
			(*offered)++;
		}
		else
			(*withheld)++;
	}
}

void
gpujoin_add_join_paths(PlannerInfo *root, RelOptInfo *joinrel,
					   RelOptInfo *outerrel, RelOptInfo *innerrel,
					   JoinType jointype, JoinPathExtraData *extra)
{
	Path	   *outer_path = outerrel->cheapest_total_path;
	Path	   *inner_path = innerrel->cheapest_total_path;
	GpuJoinPlanInfo info;
	List	   *device_rinfos = NIL;
	List	   *host_rinfos = NIL;
	List	   *join_rinfos = NIL;
	List	   *other_rinfos = NIL;
	List	   *band_rinfos;
	int			withheld = 0;
	int			offered = 0;
	ListCell   *lc;

	if (!gpujoin_enabled)
		return;
	switch (jointype)
	{
		case JOIN_INNER:
		case JOIN_LEFT:
		case JOIN_RIGHT:
		case JOIN_FULL:
		case JOIN_SEMI:
		case JOIN_ANTI:
			break;
		default:
			/* JOIN_UNIQUE_OUTER/INNER: the planner unique-ifies a side first */
			elog(DEBUG1, "GpuJoin: join type %d is not offered", (int) jointype);
			return;
	}
	if (outer_path == NULL || inner_path == NULL ||
		outer_path->param_info != NULL || inner_path->param_info != NULL ||
		!bms_is_empty(joinrel->lateral_relids))
		return;

	/*
	 * For an outer join only the join quals decide what matches; quals
	 * pushed down to this join from WHERE filter the joined rows, including
	 * the null-extended ones (createplan.c does the same split).  Inner and
	 * semi joins treat every qual as a join qual.
	 */
	foreach(lc, extra->restrictlist)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (rinfo->pseudoconstant)
			return;
		if (IS_OUTER_JOIN(jointype) && RINFO_IS_PUSHED_DOWN(rinfo, joinrel->relids))
			other_rinfos = lappend(other_rinfos, rinfo);
		else
			join_rinfos = lappend(join_rinfos, rinfo);
	}
	if (!gpujoin_classify_quals(root, outerrel->relids, innerrel->relids, join_rinfos,
								gpujoin_algorithm, &device_rinfos, &host_rinfos, &info))
		return;

	/* every Var we must return or test has to come out of one input */
	if (!vars_available(joinrel->reltarget->exprs, outer_path->pathtarget, inner_path->pathtarget) ||
		!vars_available(extract_actual_clauses(extra->restrictlist, false),
						outer_path->pathtarget, inner_path->pathtarget))
		return;

	offer_gpujoin_paths(root, joinrel, outerrel, innerrel, device_rinfos, host_rinfos,
						join_rinfos, other_rinfos, jointype, extra, &info, gpujoin_algorithm,
						&withheld, &offered);
	band_rinfos = device_rinfos;

	/*
	 * A sort-merge join whose candidates still go through the rest of the
	 * program may lose to the nested loop, whose compares run in the
	 * compare kernels: offer it too, the cost decides.
	 */
	if (gpujoin_nestloop_may_win(&info, outerrel->rows * innerrel->rows) &&
		gpujoin_classify_quals(root, outerrel->relids, innerrel->relids, join_rinfos,
							   GJ_ALGO_NESTLOOP, &device_rinfos, &host_rinfos, &info))
		offer_gpujoin_paths(root, joinrel, outerrel, innerrel, device_rinfos, host_rinfos,
							join_rinfos, other_rinfos, jointype, extra, &info,
							GJ_ALGO_NESTLOOP, &withheld, &offered);

	if (jointype == JOIN_INNER && withheld > 0 && offered == 0)
		offer_band_index_nestloop(root, joinrel, outerrel, innerrel, extra, band_rinfos);
}

/*
 * Is the clause an equality PostgreSQL's hash join would test as a hash
 * key, before any other qual?
 */
static int
hash_equality(RestrictInfo *rinfo)
{
	/* a hash key compares an expression of one side with one of the other */
	return OidIsValid(rinfo->hashjoinoperator) &&
		!bms_is_empty(rinfo->left_relids) && !bms_is_empty(rinfo->right_relids) &&
		!bms_overlap(rinfo->left_relids, rinfo->right_relids) ? 1 : 0;
}

/*
 * The clauses of a list of RestrictInfos in the order PostgreSQL's own join
 * nodes evaluate them, so that a pair the host evaluates fails on the same
 * qual, with the same error, as in a native plan: by security level, then
 * the hash-joinable equalities (a native hash join tests them all as its
 * keys first, as a merge join does its merge clauses), then by per-tuple
 * cost (createplan.c's order_qual_clauses), stable.
 */

static List *
rinfos_in_native_order(PlannerInfo *root, List *rinfos)
{
	int			n = list_length(rinfos);
	RestrictInfo **items;
	Cost	   *costs;
	List	   *result = NIL;
	int			i,
				j;

	if (n == 0)
		return NIL;
	items = palloc(sizeof(RestrictInfo *) * n);
	costs = palloc(sizeof(Cost) * n);
	for (i = 0; i < n; i++)
	{
		QualCost	qcost;
		RestrictInfo *rinfo = list_nth_node(RestrictInfo, rinfos, i);
		RestrictInfo *cur;
		Cost		cur_cost;

		cost_qual_eval_node(&qcost, (Node *) rinfo->clause, root);
		cur = rinfo;
		cur_cost = qcost.per_tuple;
		/* insertion sort: stable */
		for (j = i; j > 0; j--)
		{
			RestrictInfo *prev = items[j - 1];

			if (prev->security_level < cur->security_level ||
				(prev->security_level == cur->security_level &&
				 (hash_equality(prev) > hash_equality(cur) ||
				  (hash_equality(prev) == hash_equality(cur) && costs[j - 1] <= cur_cost))))
				break;
			items[j] = prev;
			costs[j] = costs[j - 1];
		}
		items[j] = cur;
		costs[j] = cur_cost;
	}
	for (i = 0; i < n; i++)
		result = lappend(result, items[i]);
	return result;
}

/* The clauses of rinfos_in_native_order(). */
List *
gj_quals_in_native_order(PlannerInfo *root, List *rinfos)
{
	return extract_actual_clauses(rinfos_in_native_order(root, rinfos), false);
}

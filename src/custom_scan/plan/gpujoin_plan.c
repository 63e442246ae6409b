/*-------------------------------------------------------------------------
 *
 * gpujoin_plan.c
 *	  Planner side of GpuJoin, second half: turns the CustomPath that
 *	  gpujoin_path.c offered (and the planner chose) into a CustomScan plan.
 *
 * The path only knows which quals the device evaluates; the device program
 * refers to key columns of the child plans, which exist only now, so it is
 * compiled again here, and the algorithm chosen again with it, from the
 * same clauses in the same order (gpujoin_expr_compile.c,
 * gpujoin_algorithm.c).
 *
 * The plan is a CustomScan with scanrelid 0 whose scan tuple
 * (custom_scan_tlist) holds every Var the target list and quals need; the
 * executor fills it from the stored outer and inner tuples of each pair.
 * What else it carries, and where, is gpujoin_plan_private.h's business.
 *
 * The aggregate node (gpujoin_agg_path.c) plans its join with the same
 * functions: gpujoin_plan_join, gpujoin_scan_tlist_add_var and
 * gpujoin_make_custom_scan.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/restrictinfo.h"
#include "optimizer/tlist.h"

#include "gpujoin.h"

/*
 * The path's methods (gpujoin_path.c sets them): here, with the function
 * they name, so that gpujoin_path.c refers to this table as data and the
 * calls between the two files go one way (plan to path).
 */
const CustomPathMethods gpujoin_path_methods = {
	.CustomName = GPUJOIN_NAME,
	.PlanCustomPath = gpujoin_plan_path,
};

/* 1-based position of a Var in a child plan's target list, or 0. */
static int
child_attno(Plan *child, Var *var)
{
	TargetEntry *tle = tlist_member((Expr *) var, child->targetlist);

	return tle ? tle->resno : 0;
}

/* The attnos and device types of a side's key columns in its child plan. */
static void
key_columns(List *vars, Plan *child, List **attnos, List **types)
{
	ListCell   *lc;

	*attnos = NIL;
	*types = NIL;
	foreach(lc, vars)
	{
		Oid			hashfunc;
		Oid			collation;
		Var		   *var = gj_key_column_var(lfirst(lc), &hashfunc, &collation);
		int			attno = child_attno(child, var);

		if (attno == 0)
			elog(ERROR, "GpuJoin key column is missing from the child plan's target list");
		*attnos = lappend_int(*attnos, attno);
		/* the device reads a hashed column's int8 hashes */
		*types = lappend_int(*types, OidIsValid(hashfunc) ? GJT_INT8 :
							 gj_device_type_of(var->vartype));
	}
}

/* The host hashing of each key column: see gj_key_column_var(). */
static void
key_column_hashes(List *vars, List **hashfuncs, List **collations)
{
	ListCell   *lc;

	*hashfuncs = NIL;
	*collations = NIL;
	foreach(lc, vars)
	{
		Oid			hashfunc;
		Oid			collation;

		(void) gj_key_column_var(lfirst(lc), &hashfunc, &collation);
		*hashfuncs = lappend_oid(*hashfuncs, hashfunc);
		*collations = lappend_oid(*collations, collation);
	}
}

/*
 * The device program of a plan, its algorithm and its key columns, compiled
 * again from the device clauses: the program refers to key columns of the
 * child plans, which exist only now.
 */
static void
plan_device_program(Path *outer_path, Path *inner_path, Plan *outer_plan,
					Plan *inner_plan, List *device_clauses, int requested,
					GpuJoinPlanInfo *info)
{
	DeviceCompileContext cxt;
	ListCell   *lc;

	gj_device_compile_init(&cxt, outer_path->parent->relids, inner_path->parent->relids);
	foreach(lc, device_clauses)
	{
		if (!gj_device_compile_qual(&cxt, lfirst(lc)))
			elog(ERROR, "GpuJoin device qual no longer compiles");
	}
	info->program = cxt.program;
	gj_device_choose_algorithm(&cxt, device_clauses, requested, info);
	key_columns(cxt.outer_vars, outer_plan, &info->outer_key_attnos, &info->outer_key_types);
	key_columns(cxt.inner_vars, inner_plan, &info->inner_key_attnos, &info->inner_key_types);
	key_column_hashes(cxt.outer_vars, &info->outer_key_hashfuncs, &info->outer_key_collations);
	key_column_hashes(cxt.inner_vars, &info->inner_key_hashfuncs, &info->inner_key_collations);
}

/*
 * What a GpuJoin or GpuJoinAgg path (GpuJoinPathPrivateIndex) becomes at
 * plan time: the child plans, the quals as the executor evaluates them (in
 * the order a native join would: gj_quals_in_native_order) and the plan info,
 * all of it but the scan columns, which the caller adds as it builds the
 * scan tuple (gpujoin_scan_tlist_add_var).
 */
void
gpujoin_plan_join(PlannerInfo *root, CustomPath *best_path, List *custom_plans,
				  GpuJoinPlanInputs *join)
{
	List	   *path_private = best_path->custom_private;

	join->outer_plan = linitial(custom_plans);
	join->inner_plan = lsecond(custom_plans);

	/*
	 * An inner side drained in parallel (gpujoin_path.c, and the aggregate
	 * node's partial paths) has a third child, the whole inner side, read
	 * into the same host buffer where the shares cannot be shared: it must
	 * return the same columns.
	 */
	if (list_length(custom_plans) == 3 &&
		!equal(join->inner_plan->targetlist, ((Plan *) lthird(custom_plans))->targetlist))
		elog(ERROR, "GpuJoin: the inner side's partial and whole plans return different columns");
	join->outer_path = linitial(best_path->custom_paths);
	join->inner_path = lsecond(best_path->custom_paths);
	join->device_clauses =
		extract_actual_clauses(list_nth(path_private, GJ_PATH_DEVICE_RINFOS), false);
	join->host_clauses =
		gj_quals_in_native_order(root, list_nth(path_private, GJ_PATH_HOST_RINFOS));
	join->recheck_clauses =
		gj_quals_in_native_order(root, list_nth(path_private, GJ_PATH_JOIN_RINFOS));
	join->filter_clauses =
		gj_quals_in_native_order(root, list_nth(path_private, GJ_PATH_FILTER_RINFOS));

	memset(&join->info, 0, sizeof(GpuJoinPlanInfo));
	join->info.jointype = gpujoin_path_private_jointype(path_private);
	plan_device_program(join->outer_path, join->inner_path, join->outer_plan,
						join->inner_plan, join->device_clauses,
						gpujoin_path_private_algorithm(path_private), &join->info);
}

/*
 * Add a Var to the scan tuple (once), recording in info which child plan's
 * column fills it; returns its 0-based position.
 */
int
gpujoin_scan_tlist_add_var(List **scan_tlist, GpuJoinPlanInfo *info, Var *var,
						   Plan *outer_plan, Plan *inner_plan)
{
	TargetEntry *tle = tlist_member((Expr *) var, *scan_tlist);
	int			attno;

	if (tle != NULL)
		return tle->resno - 1;
	*scan_tlist = lappend(*scan_tlist,
						  makeTargetEntry((Expr *) copyObject(var),
										  list_length(*scan_tlist) + 1, NULL, false));
	if ((attno = child_attno(outer_plan, var)) != 0)
		info->scan_sides = lappend_int(info->scan_sides, GJ_SIDE_OUTER);
	else if ((attno = child_attno(inner_plan, var)) != 0)
		info->scan_sides = lappend_int(info->scan_sides, GJ_SIDE_INNER);
	else
		elog(ERROR, "GpuJoin column is missing from both child plans");
	info->scan_attnos = lappend_int(info->scan_attnos, attno);
	return list_length(*scan_tlist) - 1;
}

/*
 * Whether the 8-byte device values of a key column of this GjType are, bit
 * for bit, the column's Datums: the integers, date and the timestamps, whose
 * every value gj_datum_to_value encodes exactly, as the sign-extended
 * integer that their GetDatum macros make of it (a 64-bit Datum holds int8
 * by value).  Not the floats (a double's bits; float4 widened), oid
 * (zero-extended), bool, nor the types whose values may have no exact
 * encoding and need the host (numeric, interval, timetz).
 */
static bool
key_values_are_datums(int type)
{
#if SIZEOF_DATUM == 8
	switch (type)
	{
		case GJT_INT2:
		case GJT_INT4:
		case GJT_INT8:
		case GJT_DATE:
		case GJT_TIMESTAMP:
		case GJT_TIMESTAMPTZ:
			return true;
		default:
			return false;
	}
#else
	return false;
#endif
}

/*
 * The key column of one side that holds a scan column's Datums, or -1: the
 * same column of the child plan, not hashed, of a type whose key values
 * are its Datums.
 */
static int
scan_column_key(const GpuJoinPlanInfo *info, int side, int attno, Var *var)
{
	List	   *attnos = side == GJ_SIDE_OUTER ? info->outer_key_attnos : info->inner_key_attnos;
	List	   *types = side == GJ_SIDE_OUTER ? info->outer_key_types : info->inner_key_types;
	List	   *hashfuncs = side == GJ_SIDE_OUTER ? info->outer_key_hashfuncs :
		info->inner_key_hashfuncs;
	int			j;

	for (j = 0; j < list_length(attnos); j++)
	{
		int			type = list_nth_int(types, j);

		if (list_nth_int(attnos, j) == attno &&
			!OidIsValid(list_nth_oid(hashfuncs, j)) &&
			type == gj_device_type_of(var->vartype) &&
			key_values_are_datums(type))
			return j;
	}
	return -1;
}

/*
 * Which scan columns a side need not store as Datums (info->scan_keys):
 * those that only the device quals read -- on the host, in a recheck of a
 * pair the device flagged, or in the host's evaluation of the pairs of a row
 * with an inexact key -- and whose key column's values are their Datums
 * (scan_column_key).  The executor then reads such a column from the key
 * column wherever it fills the scan tuple (gpujoin_resolve_scan_columns),
 * and the drain writes 9 bytes a row less for it.
 *
 * readers is every expression of the node, other than the device quals and
 * the recheck quals (the join quals, which the device quals and the host
 * quals are), that reads the scan tuple or a side's stored columns: the
 * target list, the host quals, the filter; for the aggregate node also
 * HAVING, the aggregates' arguments and the grouping keys, which it reads
 * from the stored columns.  A column any of them reads keeps its Datums.
 * Call after the last Var is added to the scan tuple.
 */
void
gpujoin_plan_scan_keys(GpuJoinPlanInfo *info, List *scan_tlist, List *readers)
{
	List	   *read_vars;
	List	   *scan_keys = NIL;
	bool		any = false;
	int			k;

	info->scan_keys = NIL;
	if (!gpujoin_columns_from_keys)
		return;
	read_vars = pull_var_clause((Node *) readers, PVC_RECURSE_AGGREGATES |
								PVC_RECURSE_WINDOWFUNCS | PVC_RECURSE_PLACEHOLDERS);
	for (k = 0; k < list_length(info->scan_sides); k++)
	{
		Var		   *var = castNode(Var, list_nth_node(TargetEntry, scan_tlist, k)->expr);
		int			key = -1;

		if (!list_member(read_vars, var))
			key = scan_column_key(info, list_nth_int(info->scan_sides, k),
								  list_nth_int(info->scan_attnos, k), var);
		scan_keys = lappend_int(scan_keys, key);
		any |= key >= 0;
	}
	info->scan_keys = any ? scan_keys : NIL;
}

/*
 * The CustomScan of a planned join, with a GpuJoin's custom_exprs and
 * custom_private (gpujoin_plan_private.h); the aggregate node appends its
 * own entries to both and sets its qual.
 */
CustomScan *
gpujoin_make_custom_scan(RelOptInfo *rel, CustomPath *best_path, List *tlist,
						 List *custom_plans, GpuJoinPlanInputs *join, List *scan_tlist)
{
	CustomScan *cscan = makeNode(CustomScan);

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = NIL;
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = custom_plans;
	/* in GpuJoinExprsIndex order */
	cscan->custom_exprs = list_make4(join->host_clauses, join->device_clauses,
									 join->recheck_clauses, join->filter_clauses);
	Assert(list_length(cscan->custom_exprs) == GJ_EXPRS_JOIN_LENGTH);
	cscan->custom_private = gpujoin_plan_info_serialize(&join->info);
	cscan->custom_scan_tlist = scan_tlist;
	cscan->custom_relids = rel->relids;
	cscan->methods = &gpujoin_scan_methods;
	return cscan;
}

/* PlanCustomPath of a GpuJoin path. */
Plan *
gpujoin_plan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
				  List *tlist, List *clauses, List *custom_plans)
{
	GpuJoinPlanInputs join;
	List	   *scan_tlist = NIL;
	List	   *vars;
	ListCell   *lc;

	gpujoin_plan_join(root, best_path, custom_plans, &join);

	/* the scan tuple: every Var of the target list and of all quals */
	vars = pull_var_clause((Node *) tlist, 0);
	vars = list_concat(vars, pull_var_clause((Node *) join.host_clauses, 0));
	vars = list_concat(vars, pull_var_clause((Node *) join.device_clauses, 0));
	vars = list_concat(vars, pull_var_clause((Node *) join.filter_clauses, 0));
	foreach(lc, vars)
		(void) gpujoin_scan_tlist_add_var(&scan_tlist, &join.info, lfirst(lc),
										  join.outer_plan, join.inner_plan);
	gpujoin_plan_scan_keys(&join.info, scan_tlist,
						   list_make3(tlist, join.host_clauses, join.filter_clauses));

	return &gpujoin_make_custom_scan(rel, best_path, tlist, custom_plans, &join,
									 scan_tlist)->scan.plan;
}

/*-------------------------------------------------------------------------
 *
 * gpujoin_row_identity.c
 *	  Makes the row-identity columns of an UPDATE, DELETE or MERGE that a
 *	  GpuJoin returns printable by EXPLAIN.
 *
 * When the target of a data-modifying statement is an inheritance parent or
 * a partitioned table, the planner carries the row-identity columns
 * (tableoid, ctid, a wholerow or an FDW's own) as Vars with the special
 * varno ROWID_VAR up the join tree (appendinfo.c, add_row_identity_var).
 * PostgreSQL's own join nodes never keep such a Var: set_plan_references
 * turns it into an OUTER_VAR or INNER_VAR reference to the child plan, and
 * EXPLAIN follows that reference down to a real table column.
 *
 * A GpuJoin forms its rows from a scan tuple whose columns its
 * custom_scan_tlist describes; set_customscan_references matches the
 * node's target list against that list, so at that point it must hold the
 * same ROWID_VAR Vars, and it then keeps them (fix_scan_list leaves
 * special varnos alone).  EXPLAIN deparses the scan tuple's columns through
 * custom_scan_tlist and has no RTE for ROWID_VAR: "bogus varno: -4".
 *
 * Nothing in the executor reads the Vars of custom_scan_tlist beyond their
 * types (the scan tuple is filled from the stored inputs by position), so
 * once the plan is final each such Var is replaced by the table column it
 * stands for, as EXPLAIN prints it for PostgreSQL's own join: the Var's
 * syntactic referent (varnosyn, varattnosyn, which add_row_identity_var
 * copies from the child's column), mapped up through the inheritance
 * parents as ruleutils.c does for a Var below an Append, so that a GpuJoin
 * prints "p.tableoid, p.ctid" where a Hash Join does.
 *
 * The rewrite runs from the planner hook (planner_hook.c) on the finished
 * PlannedStmt, only for statements that modify a table.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "nodes/pathnodes.h"
#include "nodes/plannodes.h"
#include "parser/parsetree.h"

#include "gpujoin.h"

static void resolve_plan(PlannedStmt *stmt, Plan *plan, AppendRelInfo **parent_of);

/*
 * The table column that a ROWID_VAR Var stands for, or NULL if the planner
 * left no syntactic referent to find it by.
 */
static Var *
row_identity_column(PlannedStmt *stmt, Var *rowid, AppendRelInfo **parent_of)
{
	Var		   *column;
	Index		relid = rowid->varnosyn;
	AttrNumber	attno = rowid->varattnosyn;

	if (relid < 1 || relid > list_length(stmt->rtable))
		return NULL;

	/*
	 * Up to the topmost inheritance parent (not through UNION ALL
	 * appendrels), as long as the column exists there: system columns and
	 * the whole row always do, a user column only where the child's column
	 * maps to one of the parent's.
	 */
	while (parent_of[relid] != NULL &&
		   rt_fetch(parent_of[relid]->parent_relid, stmt->rtable)->rtekind == RTE_RELATION)
	{
		AppendRelInfo *appinfo = parent_of[relid];

		if (attno > 0)
		{
			if (attno > appinfo->num_child_cols ||
				appinfo->parent_colnos[attno - 1] == 0)
				break;
			attno = appinfo->parent_colnos[attno - 1];
		}
		relid = appinfo->parent_relid;
	}

	column = copyObject(rowid);
	column->varno = relid;
	column->varattno = attno;
	column->varnosyn = relid;
	column->varattnosyn = attno;
	return column;
}

/* Replaces the ROWID_VAR Vars in one GpuJoin's scan tuple description. */
static void
resolve_custom_scan(PlannedStmt *stmt, CustomScan *cscan, AppendRelInfo **parent_of)
{
	ListCell   *lc;

	foreach(lc, cscan->custom_scan_tlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Var		   *column;

		if (!IsA(tle->expr, Var) || ((Var *) tle->expr)->varno != ROWID_VAR)
			continue;
		column = row_identity_column(stmt, (Var *) tle->expr, parent_of);
		if (column != NULL)
			tle->expr = (Expr *) column;
	}
}

static void
resolve_plan_list(PlannedStmt *stmt, List *plans, AppendRelInfo **parent_of)
{
	ListCell   *lc;

	foreach(lc, plans)
		resolve_plan(stmt, (Plan *) lfirst(lc), parent_of);
}

/* Walks a plan tree: every node kind that has child plans of its own. */
static void
resolve_plan(PlannedStmt *stmt, Plan *plan, AppendRelInfo **parent_of)
{
	if (plan == NULL)
		return;
	check_stack_depth();

	switch (nodeTag(plan))
	{
		case T_CustomScan:
			/* the aggregate node's outputs are aggregates, never row identities */
			if (((CustomScan *) plan)->methods == &gpujoin_scan_methods)
				resolve_custom_scan(stmt, (CustomScan *) plan, parent_of);
			resolve_plan_list(stmt, ((CustomScan *) plan)->custom_plans, parent_of);
			break;
		case T_Append:
			resolve_plan_list(stmt, ((Append *) plan)->appendplans, parent_of);
			break;
		case T_MergeAppend:
			resolve_plan_list(stmt, ((MergeAppend *) plan)->mergeplans, parent_of);
			break;
		case T_BitmapAnd:
			resolve_plan_list(stmt, ((BitmapAnd *) plan)->bitmapplans, parent_of);
			break;
		case T_BitmapOr:
			resolve_plan_list(stmt, ((BitmapOr *) plan)->bitmapplans, parent_of);
			break;
		case T_SubqueryScan:
			resolve_plan(stmt, ((SubqueryScan *) plan)->subplan, parent_of);
			break;
		default:
			break;
	}
	resolve_plan(stmt, plan->lefttree, parent_of);
	resolve_plan(stmt, plan->righttree, parent_of);
}

/*
 * Called on every finished plan.  Only a statement that modifies a table
 * (at its top or in a WITH) can carry row-identity Vars; the others cost one
 * test.
 */
void
gpujoin_resolve_row_identity(PlannedStmt *stmt)
{
	AppendRelInfo **parent_of;
	ListCell   *lc;

	if (stmt->commandType == CMD_SELECT && !stmt->hasModifyingCTE)
		return;
	if (stmt->commandType == CMD_UTILITY)
		return;

	/* child relid -> its AppendRelInfo, as ruleutils.c's appendrels */
	parent_of = palloc0(sizeof(AppendRelInfo *) * (list_length(stmt->rtable) + 1));
	foreach(lc, stmt->appendRelations)
	{
		AppendRelInfo *appinfo = lfirst_node(AppendRelInfo, lc);

		if (appinfo->child_relid <= list_length(stmt->rtable))
			parent_of[appinfo->child_relid] = appinfo;
	}

	resolve_plan(stmt, stmt->planTree, parent_of);
	resolve_plan_list(stmt, stmt->subplans, parent_of);
	pfree(parent_of);
}

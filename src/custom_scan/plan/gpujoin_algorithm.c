/*-------------------------------------------------------------------------
 *
 * gpujoin_algorithm.c
 *	  Chooses the algorithm of a GpuJoin (nested loop, sort-merge or hash)
 *	  from its compiled device quals, and builds the algorithm's keys: the
 *	  GjEquiSpec of a hash join, the GjRangeSpec (and band guard) of a
 *	  sort-merge join.
 *
 * The expression compiler (gpujoin_expr_compile.c) has already turned the
 * device quals into one program over the key columns of both sides.  The
 * nested loop evaluates that program on every pair and always applies; the
 * other two find the candidate pairs faster from some of the quals (the
 * key clauses), and the program then filters the candidates, unless the
 * keys are the whole condition:
 *	- hash: every "outer Var = inner Var" of one storage class is a hash key
 *	  (for hashed columns, the equality of their host-computed hashes);
 *	- sortmerge: comparisons "inner Var OP outer expression" (or commuted)
 *	  on one inner column become the lower and upper bounds of the range of
 *	  inner rows each outer row searches; "abs(o.x - i.y) <= c" becomes such
 *	  a band too, guarded at run time (gpujoin_band_guard.c).
 * gpujoin.algorithm forces a choice when the condition allows it; otherwise
 * the next applicable algorithm is used (hash -> sortmerge -> nestloop),
 * never one that cannot evaluate the condition.
 *
 * The bound programs are compiled over the main program's key columns, so
 * a bound never makes the device load a column it would not load anyway.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/nodeFuncs.h"

#include "gpujoin.h"
#include "custom_scan/plan/gpujoin_expr_compile.h"

/* An algorithm as gpujoin.algorithm and EXPLAIN spell it. */
const char *
gpujoin_algorithm_name(int algorithm)
{
	switch (algorithm)
	{
		case GJ_ALGO_NESTLOOP:
			return "nestloop";
		case GJ_ALGO_SORTMERGE:
			return "sortmerge";
		case GJ_ALGO_HASH:
			return "hash";
		default:
			return "auto";
	}
}

/* Does the expression read only outer Vars (and constants)? */
static bool
outer_only_walker(Node *node, DeviceCompileContext *cxt)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
		return !bms_is_member(((Var *) node)->varno, cxt->outer_relids) ||
			((Var *) node)->varlevelsup != 0;
	return expression_tree_walker(node, outer_only_walker, (void *) cxt);
}

/* Column number of a Var already among a side's key columns, or -1. */
static int
existing_column(List *vars, Node *var)
{
	ListCell   *lc;
	int			i = 0;

	foreach(lc, vars)
	{
		if (equal(lfirst(lc), var))
			return i;
		i++;
	}
	return -1;
}

/*
 * Compile an outer-only expression into a bound program, reusing the outer
 * key columns of the main program.  Returns false if it does not compile or
 * would need a column the main program does not load.
 */
static bool
compile_bound(DeviceCompileContext *cxt, Node *expr, int cls,
			  GjInstr *instrs, int32_t *ninstrs)
{
	DeviceCompileContext sub;
	int			type;

	gj_device_compile_init(&sub, cxt->outer_relids, cxt->inner_relids);
	sub.outer_vars = list_copy(cxt->outer_vars);
	sub.inner_vars = list_copy(cxt->inner_vars);
	type = gj_device_compile_expr(&sub, expr);
	if (type < 0 || gj_type_class(type) != cls ||
		list_length(sub.outer_vars) != list_length(cxt->outer_vars) ||
		list_length(sub.inner_vars) != list_length(cxt->inner_vars))
		return false;
	memcpy(instrs, sub.program.instrs, sizeof(GjInstr) * sub.program.ninstrs);
	*ninstrs = sub.program.ninstrs;
	return true;
}

/*
 * Integer subtraction "a - b" where one operand is the inner Var and the
 * other a plain outer Var: the center of an abs() band.  Sets *outer_first
 * when the outer Var is a.
 */
static bool
match_band_difference(DeviceCompileContext *cxt, Node *node, Var *inner_var,
					  Var **outer_var, bool *outer_first, int *diff_type)
{
	const DeviceFunc *df;
	Var		   *a,
			   *b;

	if (!IsA(node, OpExpr) || list_length(((OpExpr *) node)->args) != 2)
		return false;
	set_opfuncid((OpExpr *) node);
	df = gj_device_lookup_func(((OpExpr *) node)->opfuncid);
	if (df == NULL || df->kind != DF_ARITH || df->op != GJOP_SUB ||
		gj_type_class(df->result) != GJ_CLASS_INT)
		return false;
	a = gj_device_plain_var(linitial(((OpExpr *) node)->args));
	b = gj_device_plain_var(lsecond(((OpExpr *) node)->args));
	if (a == NULL || b == NULL)
		return false;
	if (equal(b, inner_var) && bms_is_member(a->varno, cxt->outer_relids))
	{
		*outer_var = a;
		*outer_first = true;
	}
	else if (equal(a, inner_var) && bms_is_member(b->varno, cxt->outer_relids))
	{
		*outer_var = b;
		*outer_first = false;
	}
	else
		return false;
	*diff_type = df->result;
	return (*outer_var)->varlevelsup == 0;
}

/*
 * "abs(o.x - i.y) <= c" (or "< c", either operand order, or commuted as
 * "c >= abs(...)") over integers, c an outer-only expression: the band
 * i.y BETWEEN o.x - c AND o.x + c.  The bounds are computed in int64 (an
 * overflow makes the row compare with every inner row, as for any bound).
 * The band equals the qual only where o.x - i.y cannot overflow for any
 * pair; the guard lets the executor check that from the columns' ranges
 * before the join runs, and run a nested loop otherwise.
 */
static bool
compile_abs_band(DeviceCompileContext *cxt, OpExpr *op, Var *inner_var,
				 GjRangeSpec *range, GpuJoinBandGuard *guard)
{
	const DeviceFunc *df = gj_device_lookup_func(op->opfuncid);
	Node	   *absexpr;
	Node	   *radius;
	Node	   *diff;
	const DeviceFunc *absf;
	Oid			absfunc;
	Var		   *outer_var;
	bool		outer_first;
	int			diff_type;
	int			cmp;
	int			oc;
	int			bound;

	if (df == NULL || df->kind != DF_COMPARE)
		return false;
	cmp = df->op;
	absexpr = linitial(op->args);
	radius = lsecond(op->args);
	if (!outer_only_walker(absexpr, cxt))
	{
		/* c >= abs(...): the abs() is on the right */
		absexpr = lsecond(op->args);
		radius = linitial(op->args);
		cmp = gj_commute_cmp(cmp);
	}
	if (cmp != GJOP_LE && cmp != GJOP_LT)
		return false;

	if (IsA(absexpr, FuncExpr) && list_length(((FuncExpr *) absexpr)->args) == 1)
	{
		absfunc = ((FuncExpr *) absexpr)->funcid;
		diff = linitial(((FuncExpr *) absexpr)->args);
	}
	else if (IsA(absexpr, OpExpr) && list_length(((OpExpr *) absexpr)->args) == 1)
	{
		set_opfuncid((OpExpr *) absexpr);
		absfunc = ((OpExpr *) absexpr)->opfuncid;
		diff = linitial(((OpExpr *) absexpr)->args);
	}
	else
		return false;
	absf = gj_device_lookup_func(absfunc);
	if (absf == NULL || absf->kind != DF_UNARY || absf->op != GJOP_ABS ||
		!match_band_difference(cxt, diff, inner_var, &outer_var, &outer_first, &diff_type) ||
		absf->arg1 != diff_type || outer_only_walker(radius, cxt) ||
		range->cls != GJ_CLASS_INT)
		return false;
	oc = existing_column(cxt->outer_vars, (Node *) outer_var);
	if (oc < 0)
		return false;

	/* lo = x - c, hi = x + c, both in int64 */
	for (bound = 0; bound < 2; bound++)
	{
		DeviceCompileContext sub;
		int			t;

		gj_device_compile_init(&sub, cxt->outer_relids, cxt->inner_relids);
		sub.outer_vars = list_copy(cxt->outer_vars);
		sub.inner_vars = list_copy(cxt->inner_vars);
		if (gj_device_compile_expr(&sub, (Node *) outer_var) < 0)
			return false;
		t = gj_device_compile_expr(&sub, radius);
		if (t < 0 || gj_type_class(t) != GJ_CLASS_INT ||
			!gj_device_emit(&sub, bound == 0 ? GJOP_SUB : GJOP_ADD, GJT_INT8, 0, 0, -1) ||
			list_length(sub.outer_vars) != list_length(cxt->outer_vars) ||
			list_length(sub.inner_vars) != list_length(cxt->inner_vars))
			return false;
		if (bound == 0)
		{
			memcpy(range->lo_instrs, sub.program.instrs, sizeof(GjInstr) * sub.program.ninstrs);
			range->lo_ninstrs = sub.program.ninstrs;
			range->lo_inclusive = (cmp == GJOP_LE);
		}
		else
		{
			memcpy(range->hi_instrs, sub.program.instrs, sizeof(GjInstr) * sub.program.ninstrs);
			range->hi_ninstrs = sub.program.ninstrs;
			range->hi_inclusive = (cmp == GJOP_LE);
		}
	}
	guard->active = true;
	guard->outer_col = oc;
	guard->inner_col = range->inner_col;
	guard->outer_minus_inner = outer_first;
	guard->diff_type = diff_type;
	return true;
}

/* A sort-merge candidate: the range of inner rows on one inner column. */
typedef struct RangeCandidate
{
	GjRangeSpec range;
	GpuJoinBandGuard guard;		/* active for an abs() band */
	int			nclauses;		/* clauses the bounds enforce whole */
	List	   *bound_clauses;	/* clauses that gave a bound: key clauses */
} RangeCandidate;

/*
 * Is the clause a hash key: "outer Var = inner Var" (either order) under an
 * equality within one storage class, or a hashed equality, whose two
 * columns the program loads?  Sets the key's columns and storage class.
 */
static bool
hash_key_of_clause(DeviceCompileContext *cxt, OpExpr *op, int *oc, int *ic, int *cls)
{
	const DeviceFunc *df;
	Var		   *a,
			   *b;
	FuncExpr   *outer_key;
	FuncExpr   *inner_key;

	if (!IsA(op, OpExpr) || list_length(op->args) != 2)
		return false;
	if (gj_device_match_hashed_equality(cxt, (Node *) op, &outer_key, &inner_key))
	{
		/* a hashed equality: the key columns hold the hashes */
		*oc = existing_column(cxt->outer_vars, (Node *) outer_key);
		*ic = existing_column(cxt->inner_vars, (Node *) inner_key);
		*cls = GJ_CLASS_INT;
		return *oc >= 0 && *ic >= 0;
	}
	df = gj_device_lookup_func(op->opfuncid);
	if (df == NULL || df->kind != DF_COMPARE || df->op != GJOP_EQ ||
		gj_type_class(df->arg1) != gj_type_class(df->arg2))
		return false;
	a = gj_device_plain_var(linitial(op->args));
	b = gj_device_plain_var(lsecond(op->args));
	if (a == NULL || b == NULL)
		return false;
	if (bms_is_member(b->varno, cxt->outer_relids))
	{
		Var		   *t = a;

		a = b;
		b = t;
	}
	*oc = existing_column(cxt->outer_vars, (Node *) a);
	*ic = existing_column(cxt->inner_vars, (Node *) b);
	*cls = gj_type_class(df->arg1);
	return *oc >= 0 && *ic >= 0 && bms_is_member(a->varno, cxt->outer_relids) &&
		bms_is_member(b->varno, cxt->inner_relids);
}

/*
 * The hash keys among the device clauses (at most GJ_MAX_KEY_COLS), and the
 * clauses they come from.  False if there is none.
 */
static bool
find_hash_keys(DeviceCompileContext *cxt, List *device_clauses, GjEquiSpec *equi,
			   List **hash_clauses)
{
	ListCell   *lc;

	memset(equi, 0, sizeof(GjEquiSpec));
	*hash_clauses = NIL;
	foreach(lc, device_clauses)
	{
		OpExpr	   *op = (OpExpr *) lfirst(lc);
		int			oc,
					ic,
					cls;

		if (equi->nkeys >= GJ_MAX_KEY_COLS ||
			!hash_key_of_clause(cxt, op, &oc, &ic, &cls))
			continue;
		equi->outer_cols[equi->nkeys] = oc;
		equi->inner_cols[equi->nkeys] = ic;
		equi->cls[equi->nkeys] = cls;
		equi->nkeys++;
		*hash_clauses = lappend(*hash_clauses, op);
	}
	return equi->nkeys > 0;
}

/*
 * The range of a hashed inner column (its key is hashfunc(Var, 0)): the
 * inner rows whose hash equals the outer row's, both bounds a load of the
 * outer hash column of a hashed equality with it.
 */
static void
hashed_column_range(DeviceCompileContext *cxt, List *device_clauses, Node *inner_key,
					RangeCandidate *cand)
{
	GjRangeSpec *range = &cand->range;
	ListCell   *lq;

	range->cls = GJ_CLASS_INT;
	foreach(lq, device_clauses)
	{
		FuncExpr   *outer_key;
		FuncExpr   *clause_inner_key;
		int			oc;

		if (!gj_device_match_hashed_equality(cxt, lfirst(lq), &outer_key, &clause_inner_key) ||
			!equal(clause_inner_key, inner_key) ||
			(oc = existing_column(cxt->outer_vars, (Node *) outer_key)) < 0)
			continue;
		range->lo_instrs[0].op = range->hi_instrs[0].op = GJOP_LOAD_OUTER;
		range->lo_instrs[0].type = range->hi_instrs[0].type = GJT_INT8;
		range->lo_instrs[0].arg = range->hi_instrs[0].arg = oc;
		range->lo_instrs[0].imm = range->hi_instrs[0].imm = 0;
		range->lo_ninstrs = range->hi_ninstrs = 1;
		range->lo_inclusive = range->hi_inclusive = true;
		cand->nclauses = 1;
		cand->bound_clauses = list_make1(lfirst(lq));
		break;
	}
}

/*
 * Narrow the range of a plain inner column by one device clause, if the
 * clause compares the column with an outer-only expression (a bound) or is
 * an abs() band around it (both bounds).  A bound already taken is kept.
 */
static void
add_range_bound(DeviceCompileContext *cxt, OpExpr *op, Var *inner_var, RangeCandidate *cand)
{
	GjRangeSpec *range = &cand->range;
	const DeviceFunc *df;
	Node	   *expr;
	int			cmp;
	bool		used_lo = false;
	bool		used_hi = false;

	if (!IsA(op, OpExpr) || list_length(op->args) != 2)
		return;
	df = gj_device_lookup_func(op->opfuncid);
	if (df == NULL || df->kind != DF_COMPARE || df->op == GJOP_NE)
		return;
	if (range->lo_ninstrs == 0 && range->hi_ninstrs == 0 && !cand->guard.active &&
		compile_abs_band(cxt, op, inner_var, range, &cand->guard))
	{
		cand->nclauses++;
		cand->bound_clauses = lappend(cand->bound_clauses, op);
		return;
	}
	if (equal(gj_device_plain_var(linitial(op->args)), inner_var))
	{
		expr = lsecond(op->args);
		cmp = df->op;
	}
	else if (equal(gj_device_plain_var(lsecond(op->args)), inner_var))
	{
		expr = linitial(op->args);
		cmp = gj_commute_cmp(df->op);
	}
	else
		return;
	if (outer_only_walker(expr, cxt))
		return;
	/* inner OP expr */
	if ((cmp == GJOP_GT || cmp == GJOP_GE || cmp == GJOP_EQ) && range->lo_ninstrs == 0 &&
		compile_bound(cxt, expr, range->cls, range->lo_instrs, &range->lo_ninstrs))
	{
		range->lo_inclusive = (cmp != GJOP_GT);
		used_lo = true;
	}
	if ((cmp == GJOP_LT || cmp == GJOP_LE || cmp == GJOP_EQ) && range->hi_ninstrs == 0 &&
		compile_bound(cxt, expr, range->cls, range->hi_instrs, &range->hi_ninstrs))
	{
		range->hi_inclusive = (cmp != GJOP_LT);
		used_hi = true;
	}

	/*
	 * The bounds enforce a clause only if they hold all of it: an equality
	 * whose lower bound was already taken by another clause gives only its
	 * upper bound, and must still filter the candidates.  Either way the
	 * range rejects only pairs for which the clause is false, so it is a key
	 * clause of the algorithm.
	 */
	if (cmp == GJOP_EQ ? (used_lo && used_hi) : (used_lo || used_hi))
		cand->nclauses++;
	if (used_lo || used_hi)
		cand->bound_clauses = lappend(cand->bound_clauses, op);
}

/*
 * The best sort-merge range: try each inner key column, keep the first one
 * with the most bounds (two beat one).  False if no column has a bound.
 */
static bool
find_best_range(DeviceCompileContext *cxt, List *device_clauses, RangeCandidate *best)
{
	int			best_score = 0;
	ListCell   *lc;

	memset(best, 0, sizeof(RangeCandidate));
	foreach(lc, cxt->inner_vars)
	{
		Node	   *inner_key = lfirst(lc);
		RangeCandidate cand;
		int			score;

		memset(&cand, 0, sizeof(cand));
		cand.range.inner_col = foreach_current_index(lc);
		if (IsA(inner_key, FuncExpr))
			hashed_column_range(cxt, device_clauses, inner_key, &cand);
		else
		{
			ListCell   *lq;

			/* comparisons are within one storage class: the inner column's */
			cand.range.cls = gj_type_class(gj_device_type_of(((Var *) inner_key)->vartype));
			foreach(lq, device_clauses)
				add_range_bound(cxt, lfirst(lq), (Var *) inner_key, &cand);
		}
		score = (cand.range.lo_ninstrs > 0) + (cand.range.hi_ninstrs > 0);
		if (score > best_score)
		{
			best_score = score;
			*best = cand;
		}
	}
	return best_score > 0;
}

/*
 * Choose the algorithm for a join whose device quals are device_clauses
 * (already compiled into cxt), and fill in what it needs: info->algorithm,
 * filter_needed and the algorithm's spec, and cxt->key_clauses, the clauses
 * the algorithm tests by its keys (gpujoin_classify_quals keeps them on the
 * device).  requested is gpujoin.algorithm.
 */
void
gj_device_choose_algorithm(DeviceCompileContext *cxt, List *device_clauses,
						int requested, GpuJoinPlanInfo *info)
{
	GjEquiSpec	equi;
	List	   *hash_clauses;
	RangeCandidate best;

	cxt->key_clauses = NIL;
	memset(&info->band_guard, 0, sizeof(info->band_guard));
	info->algorithm = GJ_ALGO_NESTLOOP;
	info->filter_needed = true;
	if (requested == GJ_ALGO_NESTLOOP)
		return;

	if (find_hash_keys(cxt, device_clauses, &equi, &hash_clauses) &&
		(requested == GJ_ALGO_HASH || requested == GJ_ALGO_AUTO))
	{
		info->algorithm = GJ_ALGO_HASH;
		info->equi = equi;
		cxt->key_clauses = hash_clauses;
		info->key_clauses = hash_clauses;
		return;
	}
	if (find_best_range(cxt, device_clauses, &best))
	{
		info->algorithm = GJ_ALGO_SORTMERGE;
		info->range = best.range;
		info->band_guard = best.guard;
		cxt->key_clauses = best.bound_clauses;
		info->key_clauses = best.bound_clauses;
		/* the bounds are the whole condition: no filtering needed */
		info->filter_needed = (best.nclauses != list_length(device_clauses));
	}
}

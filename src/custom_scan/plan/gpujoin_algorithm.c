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
 *	  inner rows each outer row searches.  Integer compares written another
 *	  way ("o.x - i.y <= c", "i.y + 12 >= o.x", "abs(o.x - i.y) <= c",
 *	  "o.x - i.y BETWEEN -w AND w") are rewritten to that form where the
 *	  rewrite is exact, guarded at run time against the overflows of the
 *	  written form (clause_bounds below, gpujoin_band_guard.c).
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

#include "catalog/pg_type.h"
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

/*
 * Does the expression read a Var that is not the outer side's?  (A walker
 * stops at true, so this asks the negation of "outer-only": is_outer_only
 * below reads the right way round.)
 */
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
 * Rewriting a compare so that the inner column stands alone.
 *
 * "o.x - i.y <= c" is "i.y >= o.x - c", "i.y + 12 >= o.x" is
 * "i.y >= o.x - 12", "abs(o.x - i.y) <= c" is both "i.y >= o.x - c" and
 * "i.y <= o.x + c": in exact integers the compare of an expression that is
 * +-i.y plus or minus outer-only expressions is a bound on i.y, so every
 * written form of a band runs as the same range.  Two things differ from
 * the written form, and both are kept exact:
 *	- the bound is computed in int64 (the outer-only expressions themselves
 *	  in their own types, as PostgreSQL computes them); where it overflows,
 *	  the row compares with every inner row through the device program, as
 *	  for any bound that would raise an error (gj_range_bound);
 *	- the written form may overflow on a pair that the range never looks at
 *	  (o.x - i.y in int4 for o.x = 2^31 - 1, i.y = -5), where PostgreSQL
 *	  raises the ERROR.  Each node of arithmetic on the way to i.y is a term
 *	  of the band guard (gpujoin.h), which the executor checks against the
 *	  key columns' ranges before the join runs, running a nested loop over
 *	  the device program where some pair could overflow.
 * Only integers: a float's a - b <= c and a <= b + c differ by rounding.
 */

/* Is the expression free of Vars other than the outer side's? */
static bool
is_outer_only(Node *node, DeviceCompileContext *cxt)
{
	return !outer_only_walker(node, cxt);
}

/* An integer as inner_sign * i.y + outer_sign * o.x + offset. */
typedef struct LinearForm
{
	int			inner_sign;		/* 0: no i.y */
	int			outer_col;		/* -1: no o.x */
	int			outer_sign;
	int128		offset;
} LinearForm;

/* An outer-only operand met on the way to i.y, and its sign there. */
typedef struct BandPart
{
	Node	   *expr;
	int			sign;
} BandPart;

#define GJ_MAX_BAND_PARTS 8

/* The walk from one side of a compare down to i.y. */
typedef struct Isolation
{
	DeviceCompileContext *cxt;
	Var		   *inner_var;
	int			inner_sign;		/* the side is inner_sign * i.y + parts */
	int			nparts;
	BandPart	parts[GJ_MAX_BAND_PARTS];
	int			nterms;
	GpuJoinGuardTerm terms[GJ_BAND_GUARD_MAX_TERMS];
} Isolation;

/* The device function of an operator or function call, and its arguments. */
static const DeviceFunc *
call_of(Node *node, List **args)
{
	if (IsA(node, OpExpr))
	{
		set_opfuncid((OpExpr *) node);
		*args = ((OpExpr *) node)->args;
		return gj_device_lookup_func(((OpExpr *) node)->opfuncid);
	}
	if (IsA(node, FuncExpr) && !((FuncExpr *) node)->funcretset)
	{
		*args = ((FuncExpr *) node)->args;
		return gj_device_lookup_func(((FuncExpr *) node)->funcid);
	}
	return NULL;
}

static bool
is_int_type(int type)
{
	return type == GJT_INT2 || type == GJT_INT4 || type == GJT_INT8;
}

/* a + sign * b; false when both read an outer column, unless it is one */
static bool
linear_add(LinearForm *a, const LinearForm *b, int sign)
{
	a->inner_sign += sign * b->inner_sign;
	a->offset += sign * b->offset;
	if (b->outer_col < 0)
		return true;
	if (a->outer_col < 0)
	{
		a->outer_col = b->outer_col;
		a->outer_sign = sign * b->outer_sign;
		return true;
	}
	if (a->outer_col != b->outer_col || a->outer_sign + sign * b->outer_sign != 0)
		return false;
	a->outer_col = -1;			/* o.x - o.x */
	a->outer_sign = 0;
	return true;
}

/*
 * An outer-only integer expression as +-o.x + offset, for the guard's
 * ranges; false for anything else (a product, a second column).  An
 * intermediate overflow of the expression itself is an error of its row,
 * which the bound program meets too, so the exact value is what counts.
 */
static bool
linear_outer(DeviceCompileContext *cxt, Node *node, LinearForm *lf)
{
	const DeviceFunc *df;
	List	   *args;

	memset(lf, 0, sizeof(LinearForm));
	lf->outer_col = -1;
	while (IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	if (IsA(node, Var))
	{
		lf->outer_col = existing_column(cxt->outer_vars, node);
		lf->outer_sign = 1;
		return lf->outer_col >= 0 && is_int_type(gj_device_type_of(((Var *) node)->vartype));
	}
	if (IsA(node, Const))
	{
		Const	   *con = (Const *) node;

		if (con->constisnull)
			return false;
		switch (con->consttype)
		{
			case INT2OID:
				lf->offset = DatumGetInt16(con->constvalue);
				return true;
			case INT4OID:
				lf->offset = DatumGetInt32(con->constvalue);
				return true;
			case INT8OID:
				lf->offset = DatumGetInt64(con->constvalue);
				return true;
			default:
				return false;
		}
	}
	df = call_of(node, &args);
	if (df == NULL || !is_int_type(df->result))
		return false;
	if (df->kind == DF_WIDEN || df->kind == DF_NARROW)
		return linear_outer(cxt, linitial(args), lf);
	if (df->kind == DF_UNARY && df->op == GJOP_NEG)
	{
		if (!linear_outer(cxt, linitial(args), lf))
			return false;
		lf->offset = -lf->offset;
		lf->outer_sign = -lf->outer_sign;
		return true;
	}
	if (df->kind == DF_ARITH && (df->op == GJOP_ADD || df->op == GJOP_SUB))
	{
		LinearForm	b;

		return linear_outer(cxt, linitial(args), lf) &&
			linear_outer(cxt, lsecond(args), &b) &&
			linear_add(lf, &b, df->op == GJOP_ADD ? 1 : -1);
	}
	return false;
}

/* One more term of the guard: the node of value lf must not overflow type. */
static bool
add_guard_term(Isolation *iso, const LinearForm *lf, int type, bool strict_min)
{
	GpuJoinGuardTerm *term;

	if (iso->nterms >= GJ_BAND_GUARD_MAX_TERMS ||
		lf->offset < PG_INT64_MIN || lf->offset > PG_INT64_MAX)
		return false;
	term = &iso->terms[iso->nterms++];
	term->type = type;
	term->inner_sign = lf->inner_sign;
	term->outer_col = lf->outer_col;
	term->outer_sign = lf->outer_sign;
	term->offset = (int64) lf->offset;
	term->strict_min = strict_min;
	return true;
}

/*
 * Walk node, whose sign in the compared side is sign, down to i.y through
 * integer additions, subtractions, negations and casts whose other operands
 * are outer-only; collect those operands with their signs and a guard term
 * for every node that can overflow.  Sets *value to the node's value.
 */
static bool
isolate_inner(Isolation *iso, Node *node, int sign, LinearForm *value)
{
	const DeviceFunc *df;
	List	   *args;
	Node	   *a;
	Node	   *b;
	LinearForm	other;

	if (equal(gj_device_plain_var(node), iso->inner_var))
	{
		memset(value, 0, sizeof(LinearForm));
		value->inner_sign = 1;
		value->outer_col = -1;
		iso->inner_sign = sign;
		return true;
	}
	df = call_of(node, &args);
	if (df == NULL || !is_int_type(df->result))
		return false;
	switch (df->kind)
	{
		case DF_WIDEN:
			return isolate_inner(iso, linitial(args), sign, value);
		case DF_NARROW:
			return isolate_inner(iso, linitial(args), sign, value) &&
				add_guard_term(iso, value, df->result, false);
		case DF_UNARY:
			if (df->op != GJOP_NEG ||
				!isolate_inner(iso, linitial(args), -sign, value) ||
				!add_guard_term(iso, value, df->result, true))
				return false;
			value->inner_sign = -value->inner_sign;
			value->outer_sign = -value->outer_sign;
			value->offset = -value->offset;
			return true;
		case DF_ARITH:
			if (df->op != GJOP_ADD && df->op != GJOP_SUB)
				return false;
			a = linitial(args);
			b = lsecond(args);
			if (iso->nparts >= GJ_MAX_BAND_PARTS)
				return false;
			if (is_outer_only(b, iso->cxt) && !is_outer_only(a, iso->cxt))
			{
				/* a + X or a - X */
				iso->parts[iso->nparts].expr = b;
				iso->parts[iso->nparts++].sign = df->op == GJOP_ADD ? sign : -sign;
				if (!isolate_inner(iso, a, sign, value) ||
					!linear_outer(iso->cxt, b, &other) ||
					!linear_add(value, &other, df->op == GJOP_ADD ? 1 : -1))
					return false;
			}
			else if (is_outer_only(a, iso->cxt) && !is_outer_only(b, iso->cxt))
			{
				/* X + b or X - b */
				int			bsign = df->op == GJOP_ADD ? 1 : -1;

				iso->parts[iso->nparts].expr = a;
				iso->parts[iso->nparts++].sign = sign;
				if (!isolate_inner(iso, b, sign * bsign, value) ||
					!linear_outer(iso->cxt, a, &other))
					return false;
				value->inner_sign *= bsign;
				value->outer_sign *= bsign;
				value->offset *= bsign;
				if (!linear_add(value, &other, 1))
					return false;
			}
			else
				return false;
			return add_guard_term(iso, value, df->result, false);
		default:
			return false;
	}
}

/*
 * The bound on i.y of "side cmp rhs_sign * rhs" once isolate_inner has
 * walked side: side = s * i.y + sum(sign_k * X_k), so i.y cmp' F with
 * F = s * (rhs_sign * rhs - sum(sign_k * X_k)), cmp' = cmp commuted when
 * s = -1.  F is computed in int8 from the operands, each in its own type;
 * positive terms first, so that F needs no negation unless all are
 * negative.  Returns cmp', or -1 when F does not compile over the main
 * program's key columns.
 */
static int
emit_isolated_bound(Isolation *iso, Node *rhs, int rhs_sign, int cmp,
					GjInstr *instrs, int32_t *ninstrs)
{
	DeviceCompileContext sub;
	bool		first = true;
	int			pass;
	int			k;

	gj_device_compile_init(&sub, iso->cxt->outer_relids, iso->cxt->inner_relids);
	sub.outer_vars = list_copy(iso->cxt->outer_vars);
	sub.inner_vars = list_copy(iso->cxt->inner_vars);
	for (pass = 0; pass < 2; pass++)
	{
		for (k = -1; k < iso->nparts; k++)
		{
			Node	   *expr = k < 0 ? rhs : iso->parts[k].expr;
			int			coef = iso->inner_sign * (k < 0 ? rhs_sign : -iso->parts[k].sign);

			if ((coef > 0) != (pass == 0))
				continue;
			if (!is_int_type(gj_device_compile_expr(&sub, expr)))
				return -1;
			if (first)
			{
				if (coef < 0 && !gj_device_emit(&sub, GJOP_NEG, GJT_INT8, 0, 0, 0))
					return -1;
				first = false;
			}
			else if (!gj_device_emit(&sub, coef > 0 ? GJOP_ADD : GJOP_SUB, GJT_INT8, 0, 0, -1))
				return -1;
		}
	}
	if (list_length(sub.outer_vars) != list_length(iso->cxt->outer_vars) ||
		list_length(sub.inner_vars) != list_length(iso->cxt->inner_vars))
		return -1;
	memcpy(instrs, sub.program.instrs, sizeof(GjInstr) * sub.program.ninstrs);
	*ninstrs = sub.program.ninstrs;
	return iso->inner_sign > 0 ? cmp : gj_commute_cmp(cmp);
}

/*
 * The bounds one compare puts on i.y: at most a lower and an upper one,
 * and the guard terms of the arithmetic its rewrite steps over.
 */
typedef struct ClauseBounds
{
	int32_t		nlo;			/* 0: no lower bound */
	int32_t		nhi;			/* 0: no upper bound */
	bool		lo_inclusive;
	bool		hi_inclusive;
	GjInstr		lo[GJ_MAX_INSTRS];
	GjInstr		hi[GJ_MAX_INSTRS];
	int			nterms;
	GpuJoinGuardTerm terms[GJ_BAND_GUARD_MAX_TERMS];
} ClauseBounds;

/* Record the bound "i.y cmp (instrs)". */
static void
set_clause_bound(ClauseBounds *cb, int cmp, const GjInstr *instrs, int32_t ninstrs)
{
	if (cmp == GJOP_GT || cmp == GJOP_GE || cmp == GJOP_EQ)
	{
		memcpy(cb->lo, instrs, sizeof(GjInstr) * ninstrs);
		cb->nlo = ninstrs;
		cb->lo_inclusive = (cmp != GJOP_GT);
	}
	if (cmp == GJOP_LT || cmp == GJOP_LE || cmp == GJOP_EQ)
	{
		memcpy(cb->hi, instrs, sizeof(GjInstr) * ninstrs);
		cb->nhi = ninstrs;
		cb->hi_inclusive = (cmp != GJOP_LT);
	}
}

/*
 * The bounds of a compare on i.y, a plain inner column of storage class
 * cls: "i.y OP e" (e outer-only, any class), and over integers
 * "abs(side) OP c" (OP < or <=) and "side OP c", side as isolate_inner
 * walks it, either way round.  False if the compare gives none.
 */
static bool
clause_bounds(DeviceCompileContext *cxt, OpExpr *op, Var *inner_var, int cls,
			  ClauseBounds *cb)
{
	const DeviceFunc *df;
	Node	   *side;
	Node	   *rhs;
	int			cmp;
	Isolation	iso;
	LinearForm	value;
	const DeviceFunc *absf;
	List	   *args;
	GjInstr		instrs[GJ_MAX_INSTRS];
	int32_t		ninstrs;

	memset(cb, 0, sizeof(ClauseBounds));
	if (!IsA(op, OpExpr) || list_length(op->args) != 2)
		return false;
	df = gj_device_lookup_func(op->opfuncid);
	if (df == NULL || df->kind != DF_COMPARE || df->op == GJOP_NE)
		return false;

	/* the side with i.y on the left, the outer-only one on the right */
	side = linitial(op->args);
	rhs = lsecond(op->args);
	cmp = df->op;
	if (is_outer_only(side, cxt))
	{
		side = lsecond(op->args);
		rhs = linitial(op->args);
		cmp = gj_commute_cmp(cmp);
	}
	if (is_outer_only(side, cxt) || !is_outer_only(rhs, cxt))
		return false;

	/* i.y OP e: the bound is e itself */
	if (equal(gj_device_plain_var(side), inner_var))
	{
		if (!compile_bound(cxt, rhs, cls, instrs, &ninstrs))
			return false;
		set_clause_bound(cb, cmp, instrs, ninstrs);
		return true;
	}
	if (cls != GJ_CLASS_INT)
		return false;

	memset(&iso, 0, sizeof(Isolation));
	iso.cxt = cxt;
	iso.inner_var = inner_var;
	absf = call_of(side, &args);
	if (absf != NULL && absf->kind == DF_UNARY && absf->op == GJOP_ABS &&
		is_int_type(absf->result))
	{
		/* abs(d) < c: -c < d < c, and d must not be the type's minimum */
		int			c1,
					c2;

		if ((cmp != GJOP_LT && cmp != GJOP_LE) ||
			!isolate_inner(&iso, linitial(args), 1, &value) ||
			!add_guard_term(&iso, &value, absf->result, true))
			return false;
		c1 = emit_isolated_bound(&iso, rhs, 1, cmp, instrs, &ninstrs);
		if (c1 < 0)
			return false;
		set_clause_bound(cb, c1, instrs, ninstrs);
		c2 = emit_isolated_bound(&iso, rhs, -1, gj_commute_cmp(cmp), instrs, &ninstrs);
		if (c2 < 0)
			return false;
		set_clause_bound(cb, c2, instrs, ninstrs);
	}
	else
	{
		int			c;

		if (!isolate_inner(&iso, side, 1, &value))
			return false;
		c = emit_isolated_bound(&iso, rhs, 1, cmp, instrs, &ninstrs);
		if (c < 0)
			return false;
		set_clause_bound(cb, c, instrs, ninstrs);
	}
	cb->nterms = iso.nterms;
	memcpy(cb->terms, iso.terms, sizeof(GpuJoinGuardTerm) * iso.nterms);
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
 * clause bounds it (clause_bounds).  A bound already taken is kept; the
 * clause's guard terms join the candidate's when it gives one.
 */
static void
add_range_bound(DeviceCompileContext *cxt, OpExpr *op, Var *inner_var, RangeCandidate *cand)
{
	GjRangeSpec *range = &cand->range;
	GpuJoinBandGuard *guard = &cand->guard;
	ClauseBounds cb;
	bool		use_lo;
	bool		use_hi;

	if (!clause_bounds(cxt, op, inner_var, range->cls, &cb))
		return;
	use_lo = cb.nlo > 0 && range->lo_ninstrs == 0;
	use_hi = cb.nhi > 0 && range->hi_ninstrs == 0;
	if (!use_lo && !use_hi)
		return;
	if (cb.nterms > 0)
	{
		/* the range skips pairs: none of them may be one that overflows */
		if (guard->nterms + cb.nterms > GJ_BAND_GUARD_MAX_TERMS)
			return;
		memcpy(&guard->terms[guard->nterms], cb.terms, sizeof(GpuJoinGuardTerm) * cb.nterms);
		guard->nterms += cb.nterms;
		guard->active = true;
		guard->inner_col = range->inner_col;
	}
	if (use_lo)
	{
		memcpy(range->lo_instrs, cb.lo, sizeof(GjInstr) * cb.nlo);
		range->lo_ninstrs = cb.nlo;
		range->lo_inclusive = cb.lo_inclusive;
	}
	if (use_hi)
	{
		memcpy(range->hi_instrs, cb.hi, sizeof(GjInstr) * cb.nhi);
		range->hi_ninstrs = cb.nhi;
		range->hi_inclusive = cb.hi_inclusive;
	}

	/*
	 * The bounds enforce a clause only if they hold all of it: an equality
	 * or abs() band whose lower bound was already taken by another clause
	 * gives only its upper bound, and must still filter the candidates.
	 * Either way the range rejects only pairs for which the clause is false
	 * (and, guarded, none whose arithmetic overflows), so it is a key clause
	 * of the algorithm.
	 */
	if ((cb.nlo == 0 || use_lo) && (cb.nhi == 0 || use_hi))
		cand->nclauses++;
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
 * device).  requested is gpujoin.algorithm, or the alternative
 * the caller costs beside it (GJ_ALGO_NESTLOOP).
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

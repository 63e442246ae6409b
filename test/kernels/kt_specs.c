/*-------------------------------------------------------------------------
 *
 * kt_specs.c
 *	  The programs and join specs that kernel_test runs: the nested-loop
 *	  programs (every comparison, int and float, overflow, three-valued
 *	  logic, every pair to the host) and the sort-merge/range and hash join
 *	  specs (build_programs, build_joins).
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_common.h"

/* ---------------------------------------------------------------------
 * Programs
 * ---------------------------------------------------------------------
 */

void
emit(Program *p, int op, int type, int arg, int64_t imm)
{
	GjInstr    *in = &p->instrs[p->ninstrs++];

	in->op = op;
	in->type = type;
	in->arg = arg;
	in->imm = imm;
}

static const char *const op_names[] = {"=", "<>", "<", "<=", ">", ">="};

int
build_programs(Program *progs)
{
	int			n = 0;
	int			op;
	Program    *p;

	/* the simple-compare kernel, int and float, every operator */
	for (op = GJOP_EQ; op <= GJOP_GE; op++)
	{
		static char names[12][64];
		int			k = op - GJOP_EQ;

		p = &progs[n++];
		memset(p, 0, sizeof(Program));
		snprintf(names[k], sizeof(names[k]), "int o.a %s i.a (simple)", op_names[k]);
		p->name = names[k];
		emit(p, GJOP_LOAD_OUTER, 0, 0, 0);
		emit(p, GJOP_LOAD_INNER, 0, 0, 0);
		emit(p, op, GJ_CLASS_INT, 0, 0);

		p = &progs[n++];
		memset(p, 0, sizeof(Program));
		snprintf(names[6 + k], sizeof(names[6 + k]), "float o.f %s i.f (simple)", op_names[k]);
		p->name = names[6 + k];
		emit(p, GJOP_LOAD_OUTER, 0, 1, 0);
		emit(p, GJOP_LOAD_INNER, 0, 1, 0);
		emit(p, op, GJ_CLASS_FLOAT, 0, 0);
	}

	/* written inner-first: the backends commute it */
	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "int i.a < o.a (simple, commuted)";
	emit(p, GJOP_LOAD_INNER, 0, 0, 0);
	emit(p, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(p, GJOP_LT, GJ_CLASS_INT, 0, 0);

	/* o.a BETWEEN i.a - 5 AND i.a + 5, int4 arithmetic */
	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "band o.a BETWEEN i.a - 5 AND i.a + 5";
	emit(p, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(p, GJOP_LOAD_INNER, 0, 0, 0);
	emit(p, GJOP_CONST, 0, 0, 5);
	emit(p, GJOP_SUB, GJT_INT4, 0, 0);
	emit(p, GJOP_GE, GJ_CLASS_INT, 0, 0);
	emit(p, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(p, GJOP_LOAD_INNER, 0, 0, 0);
	emit(p, GJOP_CONST, 0, 0, 5);
	emit(p, GJOP_ADD, GJT_INT4, 0, 0);
	emit(p, GJOP_LE, GJ_CLASS_INT, 0, 0);
	emit(p, GJOP_AND, 0, 0, 0);

	/*
	 * int4 division and remainder by the inner row's expressions (which a
	 * compiled kernel evaluates once per inner row, its divisors prepared
	 * for a multiply): divisors 0 and -1, and i.c + 3 overflowing
	 */
	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "int4 o.c / (i.c - 20) >= o.c % (i.c + 3)";
	emit(p, GJOP_LOAD_OUTER, GJT_INT4, 2, 0);
	emit(p, GJOP_LOAD_INNER, GJT_INT4, 2, 0);
	emit(p, GJOP_CONST, GJT_INT4, 0, 20);
	emit(p, GJOP_SUB, GJT_INT4, 0, 0);
	emit(p, GJOP_DIV, GJT_INT4, 0, 0);
	emit(p, GJOP_LOAD_OUTER, GJT_INT4, 2, 0);
	emit(p, GJOP_LOAD_INNER, GJT_INT4, 2, 0);
	emit(p, GJOP_CONST, GJT_INT4, 0, 3);
	emit(p, GJOP_ADD, GJT_INT4, 0, 0);
	emit(p, GJOP_MOD, GJT_INT4, 0, 0);
	emit(p, GJOP_GE, GJ_CLASS_INT, 0, 0);

	/* o.b + i.b > 0 AND o.a < i.a: the int4 sum overflows -> RECHECK */
	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "int4 overflow o.b + i.b > 0 AND o.a < i.a (recheck)";
	emit(p, GJOP_LOAD_OUTER, 0, 2, 0);
	emit(p, GJOP_LOAD_INNER, 0, 2, 0);
	emit(p, GJOP_ADD, GJT_INT4, 0, 0);
	emit(p, GJOP_CONST, 0, 0, 0);
	emit(p, GJOP_GT, GJ_CLASS_INT, 0, 0);
	emit(p, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(p, GJOP_LOAD_INNER, 0, 0, 0);
	emit(p, GJOP_LT, GJ_CLASS_INT, 0, 0);
	emit(p, GJOP_AND, 0, 0, 0);

	/* float8 overflow and underflow -> RECHECK; NaN ordering */
	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "float8 o.f * i.f < 100 (recheck)";
	emit(p, GJOP_LOAD_OUTER, 0, 1, 0);
	emit(p, GJOP_LOAD_INNER, 0, 1, 0);
	emit(p, GJOP_MUL, GJT_FLOAT8, 0, 0);
	emit(p, GJOP_CONST, 0, 0, dbits(100.0));
	emit(p, GJOP_LT, GJ_CLASS_FLOAT, 0, 0);

	/* float4 rounding */
	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "float4 o.f + i.f >= 3";
	emit(p, GJOP_LOAD_OUTER, 0, 1, 0);
	emit(p, GJOP_LOAD_INNER, 0, 1, 0);
	emit(p, GJOP_ADD, GJT_FLOAT4, 0, 0);
	emit(p, GJOP_CONST, 0, 0, dbits(3.0));
	emit(p, GJOP_GE, GJ_CLASS_FLOAT, 0, 0);

	/* mixed columns and conversion */
	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "o.a::float8 < i.f";
	emit(p, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(p, GJOP_INT_TO_FLOAT, GJT_FLOAT8, 0, 0);
	emit(p, GJOP_LOAD_INNER, 0, 1, 0);
	emit(p, GJOP_LT, GJ_CLASS_FLOAT, 0, 0);

	/* three-valued logic */
	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "o.a = i.a OR o.a IS NULL";
	emit(p, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(p, GJOP_LOAD_INNER, 0, 0, 0);
	emit(p, GJOP_EQ, GJ_CLASS_INT, 0, 0);
	emit(p, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(p, GJOP_IS_NULL, 0, 0, 0);
	emit(p, GJOP_OR, 0, 0, 0);

	/*
	 * float compares with a constant: on the left (a compiled kernel's one
	 * compare for an operand known not to be NaN) and a NaN constant (the
	 * full compare), over columns with NaN, -0.0 and infinities
	 */
	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "float 0.25 < i.f OR o.f >= 'NaN'";
	emit(p, GJOP_CONST, 0, 0, dbits(0.25));
	emit(p, GJOP_LOAD_INNER, 0, 1, 0);
	emit(p, GJOP_LT, GJ_CLASS_FLOAT, 0, 0);
	emit(p, GJOP_LOAD_OUTER, 0, 1, 0);
	emit(p, GJOP_CONST, 0, 0, dbits(NAN));
	emit(p, GJOP_GE, GJ_CLASS_FLOAT, 0, 0);
	emit(p, GJOP_OR, 0, 0, 0);

	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "NOT (o.f <> i.f) AND i.a IS NOT NULL";
	emit(p, GJOP_LOAD_OUTER, 0, 1, 0);
	emit(p, GJOP_LOAD_INNER, 0, 1, 0);
	emit(p, GJOP_NE, GJ_CLASS_FLOAT, 0, 0);
	emit(p, GJOP_NOT, 0, 0, 0);
	emit(p, GJOP_LOAD_INNER, 0, 0, 0);
	emit(p, GJOP_IS_NOT_NULL, 0, 0, 0);
	emit(p, GJOP_AND, 0, 0, 0);

	/*
	 * The executor's program for a join whose numeric or interval keys have
	 * no exact int64 in this execution: every pair goes to the host.
	 */
	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "every pair to the host: int8 1 / 0 (recheck)";
	emit(p, GJOP_CONST, GJT_INT8, 0, 1);
	emit(p, GJOP_CONST, GJT_INT8, 0, 0);
	emit(p, GJOP_DIV, GJT_INT8, 0, 0);

	/*
	 * numeric compared with an integer: the integer times 10^scale (a
	 * numeric constant the executor rescaled), an int8 overflow -> RECHECK
	 */
	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "o.b::numeric < i.a::numeric at scale 10 (int8 overflow, recheck)";
	emit(p, GJOP_LOAD_OUTER, 0, 2, 0);
	emit(p, GJOP_CONST, GJT_NUMERIC, 0, INT64_C(10000000000));
	emit(p, GJOP_MUL, GJT_INT8, 0, 0);
	emit(p, GJOP_LOAD_INNER, 0, 0, 0);
	emit(p, GJOP_CONST, GJT_NUMERIC, 0, INT64_C(10000000000));
	emit(p, GJOP_MUL, GJT_INT8, 0, 0);
	emit(p, GJOP_LT, GJ_CLASS_INT, 0, 0);

	return n;
}

/*
 * Sort-merge/range and hash joins.  A range spec bounds the inner key
 * column by programs over outer columns; the program is the whole join
 * condition, which the backends apply when filter_needed says the bounds
 * are not all of it (and to rows whose bounds would raise an error).
 */

/* Copy the instructions of p into a bound of the range spec. */
static void
set_bound(JoinSpec *j, bool upper, const Program *p, bool inclusive)
{
	if (upper)
	{
		memcpy(j->range.hi_instrs, p->instrs, sizeof(GjInstr) * p->ninstrs);
		j->range.hi_ninstrs = p->ninstrs;
		j->range.hi_inclusive = inclusive;
	}
	else
	{
		memcpy(j->range.lo_instrs, p->instrs, sizeof(GjInstr) * p->ninstrs);
		j->range.lo_ninstrs = p->ninstrs;
		j->range.lo_inclusive = inclusive;
	}
}

static JoinSpec *
new_join(JoinSpec *specs, int *n, const char *name, int algorithm, int filter_needed)
{
	JoinSpec   *j = &specs[(*n)++];

	memset(j, 0, sizeof(JoinSpec));
	j->name = name;
	j->algorithm = algorithm;
	j->filter_needed = filter_needed;
	return j;
}

/* "inner.col OP outer.col" as a range join on inner column col. */
static void
add_compare_range(JoinSpec *specs, int *n, const char *name, int col, int cls, int op,
				  int filter_needed)
{
	JoinSpec   *j = new_join(specs, n, name, GJ_ALGO_SORTMERGE, filter_needed);
	Program		bound;

	memset(&bound, 0, sizeof(bound));
	emit(&bound, GJOP_LOAD_OUTER, 0, col, 0);
	j->range.inner_col = col;
	j->range.cls = cls;
	set_bound(j, op == GJOP_LT || op == GJOP_LE, &bound, op == GJOP_LE || op == GJOP_GE);
	emit(&j->program, GJOP_LOAD_INNER, 0, col, 0);
	emit(&j->program, GJOP_LOAD_OUTER, 0, col, 0);
	emit(&j->program, op, cls, 0, 0);
}

/* Hash join on the listed key columns (the same on both sides). */
static JoinSpec *
add_hash(JoinSpec *specs, int *n, const char *name, int nkeys, const int *cols)
{
	JoinSpec   *j = new_join(specs, n, name, GJ_ALGO_HASH, 1);
	int			k;

	j->equi.nkeys = nkeys;
	for (k = 0; k < nkeys; k++)
	{
		int			cls = cols[k] == 1 ? GJ_CLASS_FLOAT : GJ_CLASS_INT;

		j->equi.outer_cols[k] = cols[k];
		j->equi.inner_cols[k] = cols[k];
		j->equi.cls[k] = cls;
		emit(&j->program, GJOP_LOAD_OUTER, 0, cols[k], 0);
		emit(&j->program, GJOP_LOAD_INNER, 0, cols[k], 0);
		emit(&j->program, GJOP_EQ, cls, 0, 0);
		if (k > 0)
			emit(&j->program, GJOP_AND, 0, 0, 0);
	}
	return j;
}

/*
 * The hash joins of build_joins, appended to specs[*n ...]: on 1-3 keys,
 * and with programs stricter than the hash keys.
 */
static void
add_hash_joins(JoinSpec *specs, int *n)
{
	static const int a[] = {0};
	static const int f[] = {1};
	static const int ac[] = {0, 2};
	static const int afc[] = {0, 1, 2};
	JoinSpec   *j;

	add_hash(specs, n, "hash o.a = i.a", 1, a);
	add_hash(specs, n, "hash o.f = i.f (NaN, -0.0)", 1, f);
	add_hash(specs, n, "hash o.a = i.a AND o.c = i.c", 2, ac);
	add_hash(specs, n, "hash o.a = i.a AND o.f = i.f AND o.c = i.c", 3, afc);
	/* the program is stricter than the hash keys, as after a collision */
	j = add_hash(specs, n, "hash o.a = i.a, program AND o.f < i.f", 1, a);
	emit(&j->program, GJOP_LOAD_OUTER, 0, 1, 0);
	emit(&j->program, GJOP_LOAD_INNER, 0, 1, 0);
	emit(&j->program, GJOP_LT, GJ_CLASS_FLOAT, 0, 0);
	emit(&j->program, GJOP_AND, 0, 0, 0);
	/* and a program that overflows: RECHECK pairs */
	j = add_hash(specs, n, "hash o.a = i.a, program AND o.c + i.c > 0 (recheck)", 1, a);
	emit(&j->program, GJOP_LOAD_OUTER, 0, 2, 0);
	emit(&j->program, GJOP_LOAD_INNER, 0, 2, 0);
	emit(&j->program, GJOP_ADD, GJT_INT4, 0, 0);
	emit(&j->program, GJOP_CONST, 0, 0, 0);
	emit(&j->program, GJOP_GT, GJ_CLASS_INT, 0, 0);
	emit(&j->program, GJOP_AND, 0, 0, 0);
}

/* The join specs under test, in the order the tests run them; returns how many. */
int
build_joins(JoinSpec *specs)
{
	static char names[16][64];
	static const int ops[] = {GJOP_LT, GJOP_LE, GJOP_GT, GJOP_GE};
	int			n = 0;
	int			k;
	JoinSpec   *j;
	Program		lo,
				hi;

	/* every operator, int and float (NaN, -0.0, infinities), unfiltered */
	for (k = 0; k < 4; k++)
	{
		snprintf(names[k], sizeof(names[k]), "range i.a %s o.a", op_names[ops[k] - GJOP_EQ]);
		add_compare_range(specs, &n, names[k], 0, GJ_CLASS_INT, ops[k], 0);
		snprintf(names[4 + k], sizeof(names[4 + k]), "range i.f %s o.f",
				 op_names[ops[k] - GJOP_EQ]);
		add_compare_range(specs, &n, names[4 + k], 1, GJ_CLASS_FLOAT, ops[k], 0);
	}
	/* the same through the filtered path */
	add_compare_range(specs, &n, "range i.a > o.a (filtered)", 0, GJ_CLASS_INT, GJOP_GT, 1);
	add_compare_range(specs, &n, "range i.f <= o.f (filtered)", 1, GJ_CLASS_FLOAT, GJOP_LE, 1);

	/* i.a BETWEEN o.a - 5 AND o.a + 5, int4: overflowing bounds -> OUTER_ALL */
	j = new_join(specs, &n, "range band i.a BETWEEN o.a - 5 AND o.a + 5 (int4, recheck)",
				 GJ_ALGO_SORTMERGE, 0);
	j->range.inner_col = 0;
	j->range.cls = GJ_CLASS_INT;
	memset(&lo, 0, sizeof(lo));
	emit(&lo, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(&lo, GJOP_CONST, 0, 0, 5);
	emit(&lo, GJOP_SUB, GJT_INT4, 0, 0);
	memset(&hi, 0, sizeof(hi));
	emit(&hi, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(&hi, GJOP_CONST, 0, 0, 5);
	emit(&hi, GJOP_ADD, GJT_INT4, 0, 0);
	set_bound(j, false, &lo, true);
	set_bound(j, true, &hi, true);
	emit(&j->program, GJOP_LOAD_INNER, 0, 0, 0);
	memcpy(&j->program.instrs[1], lo.instrs, sizeof(GjInstr) * lo.ninstrs);
	j->program.ninstrs += lo.ninstrs;
	emit(&j->program, GJOP_GE, GJ_CLASS_INT, 0, 0);
	emit(&j->program, GJOP_LOAD_INNER, 0, 0, 0);
	memcpy(&j->program.instrs[j->program.ninstrs], hi.instrs, sizeof(GjInstr) * hi.ninstrs);
	j->program.ninstrs += hi.ninstrs;
	emit(&j->program, GJOP_LE, GJ_CLASS_INT, 0, 0);
	emit(&j->program, GJOP_AND, 0, 0, 0);

	/* i.f BETWEEN o.f - 1 AND o.f * 1e150, float8: 1e200 * 1e150 overflows */
	j = new_join(specs, &n, "range band i.f BETWEEN o.f - 1 AND o.f * 1e150 (float8, recheck)",
				 GJ_ALGO_SORTMERGE, 0);
	j->range.inner_col = 1;
	j->range.cls = GJ_CLASS_FLOAT;
	memset(&lo, 0, sizeof(lo));
	emit(&lo, GJOP_LOAD_OUTER, 0, 1, 0);
	emit(&lo, GJOP_CONST, 0, 0, dbits(1.0));
	emit(&lo, GJOP_SUB, GJT_FLOAT8, 0, 0);
	memset(&hi, 0, sizeof(hi));
	emit(&hi, GJOP_LOAD_OUTER, 0, 1, 0);
	emit(&hi, GJOP_CONST, 0, 0, dbits(1e150));
	emit(&hi, GJOP_MUL, GJT_FLOAT8, 0, 0);
	set_bound(j, false, &lo, true);
	set_bound(j, true, &hi, true);
	emit(&j->program, GJOP_LOAD_INNER, 0, 1, 0);
	memcpy(&j->program.instrs[1], lo.instrs, sizeof(GjInstr) * lo.ninstrs);
	j->program.ninstrs += lo.ninstrs;
	emit(&j->program, GJOP_GE, GJ_CLASS_FLOAT, 0, 0);
	emit(&j->program, GJOP_LOAD_INNER, 0, 1, 0);
	memcpy(&j->program.instrs[j->program.ninstrs], hi.instrs, sizeof(GjInstr) * hi.ninstrs);
	j->program.ninstrs += hi.ninstrs;
	emit(&j->program, GJOP_LE, GJ_CLASS_FLOAT, 0, 0);
	emit(&j->program, GJOP_AND, 0, 0, 0);

	/* i.c > o.c + 1, int4 near INT32_MAX: most lower bounds overflow */
	j = new_join(specs, &n, "range i.c > o.c + 1 (int4 overflow)", GJ_ALGO_SORTMERGE, 0);
	j->range.inner_col = 2;
	j->range.cls = GJ_CLASS_INT;
	memset(&lo, 0, sizeof(lo));
	emit(&lo, GJOP_LOAD_OUTER, 0, 2, 0);
	emit(&lo, GJOP_CONST, 0, 0, 1);
	emit(&lo, GJOP_ADD, GJT_INT4, 0, 0);
	set_bound(j, false, &lo, false);
	emit(&j->program, GJOP_LOAD_INNER, 0, 2, 0);
	memcpy(&j->program.instrs[1], lo.instrs, sizeof(GjInstr) * lo.ninstrs);
	j->program.ninstrs += lo.ninstrs;
	emit(&j->program, GJOP_GT, GJ_CLASS_INT, 0, 0);

	/* range on one column, filter on another */
	j = new_join(specs, &n, "range i.a < o.a AND i.f > o.f (filtered)", GJ_ALGO_SORTMERGE, 1);
	j->range.inner_col = 0;
	j->range.cls = GJ_CLASS_INT;
	memset(&hi, 0, sizeof(hi));
	emit(&hi, GJOP_LOAD_OUTER, 0, 0, 0);
	set_bound(j, true, &hi, false);
	emit(&j->program, GJOP_LOAD_INNER, 0, 0, 0);
	emit(&j->program, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(&j->program, GJOP_LT, GJ_CLASS_INT, 0, 0);
	emit(&j->program, GJOP_LOAD_INNER, 0, 1, 0);
	emit(&j->program, GJOP_LOAD_OUTER, 0, 1, 0);
	emit(&j->program, GJOP_GT, GJ_CLASS_FLOAT, 0, 0);
	emit(&j->program, GJOP_AND, 0, 0, 0);

	/* float key bounded by an int expression */
	j = new_join(specs, &n, "range i.f < o.a::float8", GJ_ALGO_SORTMERGE, 0);
	j->range.inner_col = 1;
	j->range.cls = GJ_CLASS_FLOAT;
	memset(&hi, 0, sizeof(hi));
	emit(&hi, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(&hi, GJOP_INT_TO_FLOAT, GJT_FLOAT8, 0, 0);
	set_bound(j, true, &hi, false);
	emit(&j->program, GJOP_LOAD_INNER, 0, 1, 0);
	emit(&j->program, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(&j->program, GJOP_INT_TO_FLOAT, GJT_FLOAT8, 0, 0);
	emit(&j->program, GJOP_LT, GJ_CLASS_FLOAT, 0, 0);

	/* no bounds at all: every keyed inner row, the program decides */
	j = new_join(specs, &n, "range unbounded on i.a, o.a <> i.a (filtered)",
				 GJ_ALGO_SORTMERGE, 1);
	j->range.inner_col = 0;
	j->range.cls = GJ_CLASS_INT;
	emit(&j->program, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(&j->program, GJOP_LOAD_INNER, 0, 0, 0);
	emit(&j->program, GJOP_NE, GJ_CLASS_INT, 0, 0);

	/* hash joins */
	add_hash_joins(specs, &n);
	return n;
}

/* A nested-loop join of one program (the aggregate tests run these too). */
void
nestloop_join(JoinSpec *join, const Program *prog)
{
	memset(join, 0, sizeof(JoinSpec));
	join->name = prog->name;
	join->algorithm = GJ_ALGO_NESTLOOP;
	join->filter_needed = 1;
	join->program = *prog;
}

/*-------------------------------------------------------------------------
 *
 * kernel_test.c
 *	  Standalone test of the cuda backend against the cpu backend, without a
 *	  server: both run the same programs over the same tile schedules, and
 *	  their (outer row, inner row) pairs, recheck flag included, must be
 *	  identical as multisets.  Prints TAP; exits non-zero on any failure.
 *	  Without a usable CUDA device (CI, or a build without the CUDA Toolkit)
 *	  the default run is the cpu mode below, and the other modes skip.
 *
 *	  The nested-loop programs, and sort-merge/range and hash joins (range
 *	  specs with < <= > >=, two bounds, bands, unbounded sides, bounds that
 *	  overflow, NULLs, NaN, -0.0, duplicates; hash joins on 1-3 keys, skewed
 *	  keys, programs stricter than the hash keys), each over tile schedules
 *	  from one tile to hundreds of tiles with match buffers so small that
 *	  tiles are split into many steps.  Both backends prune tiles with their
 *	  own tile_can_match, and must prune the same tiles.
 *
 *	  kernel_test			the correctness tests (the cpu tests without a GPU)
 *	  kernel_test cpu		the cpu backend alone against a brute-force
 *							reference (every pair through the interpreter):
 *							the programs, sort-merge and hash joins over the
 *							tile schedules, the join types' matched rows,
 *							agg_step partials, the error path and tile
 *							pruning; ends "kernel_test: N passed, N failed"
 *	  kernel_test quick		the sorted joins on the schedules with few steps
 *							(for compute-sanitizer)
 *	  kernel_test race		every kernel on sides of a few hundred rows (for
 *							compute-sanitizer racecheck, which cannot finish
 *							the full-size tests)
 *	  kernel_test startup	time a 10 x 10 join per algorithm on cuda, whole
 *							(begin_join, steps, end_join)
 *	  kernel_test bench [N]	time the simple-compare kernel "o.a < i.a" on
 *							N x N int4-valued rows (default 1M), counting
 *							matches only, a selective equi-join through
 *							run_step end to end, and a band join and a hash
 *							join through begin_join and run_step on both
 *							backends, N x N and 4N x 4N rows
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/backend.h"
#include "kernels/agg_reduce.h"

/* A test hook of cuda/cuda_nestloop.cu, not part of the backend contract. */
extern bool gj_cuda_bench_count(void *state, const GjTile *tile, int64_t *nmatches,
								double *kernel_ms, GjError *err);

#define N_OUTER		3000
#define N_INNER		2500
#define NCOLS		3			/* 0: int, 1: float, 2: int near INT32_MAX */

typedef struct Side
{
	int64_t		nrows;
	int64_t    *values[NCOLS];
	uint8_t    *isnull[NCOLS];
	GjKeyColumns cols;
} Side;

typedef struct Program
{
	const char *name;
	int			ninstrs;
	GjInstr		instrs[GJ_MAX_INSTRS];
} Program;

/* A join: its algorithm, the spec of the sorted algorithms, the program. */
typedef struct JoinSpec
{
	const char *name;
	int			algorithm;
	int			filter_needed;
	GjRangeSpec range;
	GjEquiSpec	equi;
	Program		program;
} JoinSpec;

typedef struct Schedule
{
	const char *name;
	int64_t		outer_rows;		/* rows of each side the schedule covers */
	int64_t		inner_rows;
	int64_t		outer_tile;
	int64_t		inner_tile;
	int64_t		capacity;
} Schedule;

/* Pairs of one backend's run, and what its steps reported. */
typedef struct PairSet
{
	uint64_t   *pairs;			/* (outer row | recheck) << 32 | inner row */
	int64_t		n;
	int64_t		cap;
	GjStats		stats;
	int64_t		steps;
	int64_t		pruned;			/* tiles tile_can_match excluded */
	uint64_t	order;			/* fingerprint of the pairs in the order returned */
	char		problem[256];	/* a broken step contract, or "" */
} PairSet;

static int	test_number = 0;
static int	failures = 0;

static int	run_cpu_tests(void);

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

/* xorshift64*: deterministic, so that a failure can be reproduced */
static uint64_t
rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

static void *
xmalloc(size_t size)
{
	void	   *p = malloc(size > 0 ? size : 1);

	if (p == NULL)
	{
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	return p;
}

static int64_t
dbits(double d)
{
	return gj_double_to_bits(d);
}

/* Small ints (many duplicates) and the edges of int4 and int8. */
static int64_t
random_int_key(void)
{
	uint64_t	r = rng() % 100;

	if (r == 0)
		return INT32_MIN;
	if (r == 1)
		return INT32_MAX;
	if (r == 2)
		return INT64_MIN;
	if (r == 3)
		return INT64_MAX;
	return (int64_t) (rng() % 61) - 30;
}

/* Halves in [-20, 20], the special values, and values that overflow. */
static int64_t
random_float_key(void)
{
	static const double specials[] = {
		-0.0, 0.0, INFINITY, -INFINITY, 1e200, -1e200, 4.9e-324, 1e-310, 1.5, -2.25
	};
	uint64_t	r = rng() % 100;

	if (r < 10)
		return dbits(specials[r]);
	if (r < 13)
		return dbits(NAN);
	if (r < 15)
		return (int64_t) 0xfff8000000000001ull;	/* a negative NaN, other bits */
	return dbits(((int) (rng() % 81) - 40) * 0.5);
}

/* Mostly near INT32_MAX, so that an int4 sum of two overflows. */
static int64_t
random_big_key(void)
{
	if (rng() % 4 == 0)
		return (int64_t) (rng() % 200) - 100;
	return INT32_MAX - (int64_t) (rng() % 2000);
}

/* One side; a column listed in with_nulls gets about 5% NULLs. */
static void
make_side(Side *side, int64_t nrows, const bool with_nulls[NCOLS])
{
	int			c;
	int64_t		i;

	memset(side, 0, sizeof(Side));
	side->nrows = nrows;
	side->cols.ncols = NCOLS;
	for (c = 0; c < NCOLS; c++)
	{
		side->values[c] = xmalloc(sizeof(int64_t) * nrows);
		side->isnull[c] = with_nulls[c] ? xmalloc(nrows) : NULL;
		for (i = 0; i < nrows; i++)
		{
			side->values[c][i] = c == 0 ? random_int_key() :
				c == 1 ? random_float_key() : random_big_key();
			if (side->isnull[c] != NULL)
			{
				side->isnull[c][i] = (rng() % 20 == 0);
				/* a NULL's value is garbage; the backends must not look */
				if (side->isnull[c][i])
					side->values[c][i] = (int64_t) rng();
			}
		}
		side->cols.values[c] = side->values[c];
		side->cols.isnull[c] = side->isnull[c];
	}
}

static void
free_side(Side *side)
{
	int			c;

	for (c = 0; c < NCOLS; c++)
	{
		free(side->values[c]);
		free(side->isnull[c]);
	}
}

/* ---------------------------------------------------------------------
 * Programs
 * ---------------------------------------------------------------------
 */

static void
emit(Program *p, int op, int type, int arg, int64_t imm)
{
	GjInstr    *in = &p->instrs[p->ninstrs++];

	in->op = op;
	in->type = type;
	in->arg = arg;
	in->imm = imm;
}

static const char *const op_names[] = {"=", "<>", "<", "<=", ">", ">="};

static int
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

static int
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
	{
		static const int a[] = {0};
		static const int f[] = {1};
		static const int ac[] = {0, 2};
		static const int afc[] = {0, 1, 2};

		add_hash(specs, &n, "hash o.a = i.a", 1, a);
		add_hash(specs, &n, "hash o.f = i.f (NaN, -0.0)", 1, f);
		add_hash(specs, &n, "hash o.a = i.a AND o.c = i.c", 2, ac);
		add_hash(specs, &n, "hash o.a = i.a AND o.f = i.f AND o.c = i.c", 3, afc);
		/* the program is stricter than the hash keys, as after a collision */
		j = add_hash(specs, &n, "hash o.a = i.a, program AND o.f < i.f", 1, a);
		emit(&j->program, GJOP_LOAD_OUTER, 0, 1, 0);
		emit(&j->program, GJOP_LOAD_INNER, 0, 1, 0);
		emit(&j->program, GJOP_LT, GJ_CLASS_FLOAT, 0, 0);
		emit(&j->program, GJOP_AND, 0, 0, 0);
		/* and a program that overflows: RECHECK pairs */
		j = add_hash(specs, &n, "hash o.a = i.a, program AND o.c + i.c > 0 (recheck)", 1, a);
		emit(&j->program, GJOP_LOAD_OUTER, 0, 2, 0);
		emit(&j->program, GJOP_LOAD_INNER, 0, 2, 0);
		emit(&j->program, GJOP_ADD, GJT_INT4, 0, 0);
		emit(&j->program, GJOP_CONST, 0, 0, 0);
		emit(&j->program, GJOP_GT, GJ_CLASS_INT, 0, 0);
		emit(&j->program, GJOP_AND, 0, 0, 0);
	}
	return n;
}

/* ---------------------------------------------------------------------
 * Running a schedule
 * ---------------------------------------------------------------------
 */

static void
add_pair(PairSet *set, uint32_t outer, uint32_t inner)
{
	if (set->n == set->cap)
	{
		set->cap = set->cap > 0 ? 2 * set->cap : 4096;
		set->pairs = realloc(set->pairs, sizeof(uint64_t) * set->cap);
		if (set->pairs == NULL)
		{
			fprintf(stderr, "out of memory\n");
			exit(2);
		}
	}
	set->pairs[set->n] = ((uint64_t) outer << 32) | inner;
	/* position-dependent, so two sequences of the same pairs differ */
	set->order = (set->order ^ set->pairs[set->n]) * 0x100000001b3ull + (uint64_t) set->n;
	set->n++;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a;
	uint64_t	y = *(const uint64_t *) b;

	return (x > y) - (x < y);
}

/* A checksum of a step's matches, to see that a later step left them alone. */
static uint64_t
matches_checksum(const GjMatches *m)
{
	uint64_t	h = (uint64_t) m->count;
	int64_t		k;

	for (k = 0; k < m->count; k++)
		h = (h ^ (((uint64_t) m->outer_rows[k] << 32) | m->inner_rows[k])) * 0x100000001b3ULL;
	return h;
}

/*
 * Walk the tiles inner-major, as tile_planner.c does, and collect every
 * pair.  Checks the step contract on the way.  With spec, the steps are
 * agg_steps reducing into *partial, and the pairs collected are those they
 * return.  Without, the backend is double buffered as for step overlap
 * (backend.h), and every step's matches must be intact after the next step.
 * Returns false with err set when the backend failed.
 */
static bool
run_schedule_agg(const GjBackend *backend, const GjJoinInput *input, const Schedule *s,
				 const GjAggSpec *spec, GjAggPartial *partial, PairSet *set, GjError *err)
{
	void	   *state;
	int64_t		ib,
				ob;
	GjMatches	prev;
	uint64_t	prev_sum = 0;

	memset(set, 0, sizeof(PairSet));
	memset(&prev, 0, sizeof(prev));
	state = backend->begin_join(input, err);
	if (state == NULL)
		return false;
	if (spec == NULL && backend->double_buffer != NULL && !backend->double_buffer(state))
		snprintf(set->problem, sizeof(set->problem), "double_buffer failed");
	for (ib = 0; ib < s->inner_rows; ib += s->inner_tile)
	{
		for (ob = 0; ob < s->outer_rows; ob += s->outer_tile)
		{
			GjTile		tile;
			int64_t		next;

			tile.outer_begin = ob;
			tile.outer_end = ob + s->outer_tile < s->outer_rows ? ob + s->outer_tile : s->outer_rows;
			tile.inner_begin = ib;
			tile.inner_end = ib + s->inner_tile < s->inner_rows ? ib + s->inner_tile : s->inner_rows;
			next = tile.outer_begin;
			if (backend->tile_can_match != NULL && !backend->tile_can_match(state, &tile))
			{
				set->pruned++;
				continue;
			}
			while (next < tile.outer_end)
			{
				GjMatches	m;
				int64_t		before = next;
				int64_t		k;

				memset(&m, 0, sizeof(m));
				GjAggPartial step;

				/* as the executor: a partial per step, merged into the total */
				memset(&step, 0, sizeof(step));
				if (partial != NULL)
				{
					step.group_pairs = partial->group_pairs;
					step.group_acc = partial->group_acc;
				}
				if (spec != NULL ?
					!backend->agg_step(state, &tile, &next, spec, &step, &m, &set->stats, err) :
					!backend->run_step(state, &tile, &next, &m, &set->stats, err))
				{
					backend->end_join(state);
					return false;
				}
				if (spec != NULL)
				{
					int			a;

					partial->pairs += step.pairs;
					for (a = 0; a < spec->nargs; a++)
						gj_agg_merge(&partial->acc[a], &step.acc[a], spec->args[a].cls);
				}
				set->steps++;
				if (spec == NULL && prev.count > 0)
				{
					if (matches_checksum(&prev) != prev_sum)
						snprintf(set->problem, sizeof(set->problem),
								 "step ending at %lld overwrote the previous step's matches",
								 (long long) next);
					else if (m.count > 0 && prev.outer_rows == m.outer_rows)
						snprintf(set->problem, sizeof(set->problem),
								 "two steps in a row returned the same match buffer");
				}
				if (spec == NULL)
				{
					prev = m;
					prev_sum = matches_checksum(&m);
				}
				if (next <= before || next > tile.outer_end || m.count < 0 ||
					m.count > s->capacity)
					snprintf(set->problem, sizeof(set->problem),
							 "step [%lld, ...) advanced to %lld with %lld matches",
							 (long long) before, (long long) next, (long long) m.count);
				if (next <= before)
					break;
				for (k = 0; k < m.count; k++)
				{
					int64_t		o = m.outer_rows[k] & GJ_PAIR_ROW_MASK;
					int64_t		i = m.inner_rows[k];

					/* sorted algorithms: tiles are positions, pairs row numbers */
					if (input->algorithm == GJ_ALGO_NESTLOOP &&
						(o < before || o >= next || i < tile.inner_begin || i >= tile.inner_end))
						snprintf(set->problem, sizeof(set->problem),
								 "pair (%lld, %lld) outside step rows [%lld, %lld) x [%lld, %lld)",
								 (long long) o, (long long) i, (long long) before,
								 (long long) next, (long long) tile.inner_begin,
								 (long long) tile.inner_end);
					if (o >= input->outer_nrows || i >= input->inner_nrows)
						snprintf(set->problem, sizeof(set->problem),
								 "pair (%lld, %lld) outside the input", (long long) o,
								 (long long) i);
					add_pair(set, m.outer_rows[k], m.inner_rows[k]);
				}
			}
		}
	}
	backend->end_join(state);
	qsort(set->pairs, set->n, sizeof(uint64_t), cmp_u64);
	return true;
}

static bool
run_schedule(const GjBackend *backend, const GjJoinInput *input, const Schedule *s,
			 PairSet *set, GjError *err)
{
	return run_schedule_agg(backend, input, s, NULL, NULL, set, err);
}

static void
report(bool ok, const char *fmt, const char *a, const char *b)
{
	test_number++;
	if (!ok)
		failures++;
	printf("%s %d - ", ok ? "ok" : "not ok", test_number);
	printf(fmt, a, b);
	printf("\n");
	fflush(stdout);
}

/* The input of a join spec over two sides; budget 1 GB, capacity as given. */
static void
spec_input(GjJoinInput *input, const Side *outer, const Side *inner, const JoinSpec *spec,
		   int64_t capacity)
{
	memset(input, 0, sizeof(GjJoinInput));
	input->outer = outer->cols;
	input->outer_nrows = outer->nrows;
	input->inner = inner->cols;
	input->inner_nrows = inner->nrows;
	input->instrs = spec->program.instrs;
	input->ninstrs = spec->program.ninstrs;
	input->algorithm = spec->algorithm;
	input->match_capacity = capacity;
	input->budget_bytes = (int64_t) 1 << 30;
	input->range = spec->range;
	input->equi = spec->equi;
	input->filter_needed = spec->filter_needed;
}

static void
test_join(const Side *outer, const Side *inner, const JoinSpec *spec, const Schedule *s)
{
	GjJoinInput input;
	PairSet		cpu,
				gpu;
	GjError		err;
	bool		ok = true;
	int64_t		i,
				rechecks = 0;

	spec_input(&input, outer, inner, spec, s->capacity);

	memset(&cpu, 0, sizeof(cpu));
	memset(&gpu, 0, sizeof(gpu));
	memset(&err, 0, sizeof(err));
	if (!run_schedule(&gj_cpu_backend, &input, s, &cpu, &err))
	{
		printf("# cpu backend failed: %s\n", err.message);
		ok = false;
	}
	memset(&err, 0, sizeof(err));
	if (ok && !run_schedule(&gj_cuda_backend, &input, s, &gpu, &err))
	{
		printf("# cuda backend failed: %s\n", err.message);
		ok = false;
	}
	if (ok)
	{
		for (i = 0; i < cpu.n; i++)
			rechecks += (cpu.pairs[i] >> 32 & GJ_PAIR_RECHECK) != 0;
		printf("# %lld pairs (%lld recheck), cpu %lld steps, cuda %lld steps, %lld tiles pruned\n",
			   (long long) cpu.n, (long long) rechecks, (long long) cpu.steps,
			   (long long) gpu.steps, (long long) cpu.pruned);
		if (cpu.problem[0] || gpu.problem[0])
		{
			printf("# step contract: cpu: %s; cuda: %s\n", cpu.problem, gpu.problem);
			ok = false;
		}
		if (cpu.pruned != gpu.pruned)
		{
			printf("# cpu pruned %lld tiles, cuda %lld\n", (long long) cpu.pruned,
				   (long long) gpu.pruned);
			ok = false;
		}
		if (cpu.n != gpu.n)
		{
			printf("# cpu has %lld pairs, cuda %lld\n", (long long) cpu.n, (long long) gpu.n);
			ok = false;
		}

		/*
		 * The sort-merge join returns the pairs in the cpu backend's order
		 * too: the host rechecks them in that order, and which error a query
		 * raises, or whether a semi/anti join stops before a pair that would
		 * raise one, follows from it.  (The cpu backend's hash join probes a
		 * one-tile outer side in row order, the cuda backend in hash order.)
		 */
		if (cpu.order != gpu.order)
		{
			printf("# cuda returns the pairs in another order than cpu\n");
			if (input.algorithm == GJ_ALGO_SORTMERGE)
				ok = false;
		}
		for (i = 0; ok && i < cpu.n; i++)
		{
			if (cpu.pairs[i] != gpu.pairs[i])
			{
				printf("# first difference at %lld: cpu (%#x, %u), cuda (%#x, %u)\n",
					   (long long) i, (unsigned) (cpu.pairs[i] >> 32), (unsigned) cpu.pairs[i],
					   (unsigned) (gpu.pairs[i] >> 32), (unsigned) gpu.pairs[i]);
				ok = false;
			}
		}
		if (ok && (cpu.stats.pairs_evaluated != gpu.stats.pairs_evaluated ||
				   gpu.stats.device_matches != gpu.n))
		{
			printf("# stats: cpu evaluated %lld, cuda evaluated %lld, cuda matches %lld\n",
				   (long long) cpu.stats.pairs_evaluated,
				   (long long) gpu.stats.pairs_evaluated,
				   (long long) gpu.stats.device_matches);
			ok = false;
		}
	}
	free(gpu.pairs);
	free(cpu.pairs);
	report(ok, "%s, %s", spec->name, s->name);
}

/*
 * The cuda backend's range join against the truth: the nested loop of the
 * cpu backend over the same program, every pair.  For the range specs of
 * build_joins the bounds admit every pair the program accepts and no bound
 * program overflows where the join program would not, so the two multisets
 * are equal.  This checks the cuda backend independently of the cpu
 * backend's sort-merge code.
 */
static void
test_truth(const Side *outer, const Side *inner, const JoinSpec *spec)
{
	static const Schedule one = {"1 tile", N_OUTER, N_INNER, N_OUTER, N_INNER,
	(int64_t) N_OUTER * N_INNER};
	GjJoinInput input;
	PairSet		truth,
				gpu;
	GjError		err;
	bool		ok = true;
	int64_t		i;

	spec_input(&input, outer, inner, spec, one.capacity);

	memset(&truth, 0, sizeof(truth));
	memset(&gpu, 0, sizeof(gpu));
	memset(&err, 0, sizeof(err));
	input.algorithm = GJ_ALGO_NESTLOOP;
	if (!run_schedule(&gj_cpu_backend, &input, &one, &truth, &err))
	{
		printf("# cpu nested loop failed: %s\n", err.message);
		ok = false;
	}
	input.algorithm = spec->algorithm;
	if (ok && !run_schedule(&gj_cuda_backend, &input, &one, &gpu, &err))
	{
		printf("# cuda backend failed: %s\n", err.message);
		ok = false;
	}
	if (ok && truth.n != gpu.n)
	{
		printf("# nested loop has %lld pairs, cuda %lld\n", (long long) truth.n,
			   (long long) gpu.n);
		ok = false;
	}
	for (i = 0; ok && i < truth.n; i++)
	{
		if (truth.pairs[i] != gpu.pairs[i])
		{
			printf("# first difference at %lld: nested loop (%#x, %u), cuda (%#x, %u)\n",
				   (long long) i, (unsigned) (truth.pairs[i] >> 32), (unsigned) truth.pairs[i],
				   (unsigned) (gpu.pairs[i] >> 32), (unsigned) gpu.pairs[i]);
			ok = false;
		}
	}
	free(truth.pairs);
	free(gpu.pairs);
	report(ok, "%s equals the nested loop, %s", spec->name, one.name);
}

static void
test_program(const Side *outer, const Side *inner, const Program *p, const Schedule *s)
{
	JoinSpec	spec;

	memset(&spec, 0, sizeof(spec));
	spec.name = p->name;
	spec.algorithm = GJ_ALGO_NESTLOOP;
	spec.program = *p;
	test_join(outer, inner, &spec, s);
}

/* Error paths: they must fail cleanly and leave the backend usable. */
static void
test_errors(const Side *outer, const Side *inner, const Program *p)
{
	GjJoinInput input;
	GjError		err;
	void	   *state;
	GjTile		tile = {0, 10, 0, 100};
	int64_t		next = 0;
	GjMatches	m;
	GjStats		stats;

	memset(&input, 0, sizeof(input));
	input.outer = outer->cols;
	input.outer_nrows = outer->nrows;
	input.inner = inner->cols;
	input.inner_nrows = inner->nrows;
	input.instrs = p->instrs;
	input.ninstrs = p->ninstrs;
	input.algorithm = GJ_ALGO_NESTLOOP;
	input.budget_bytes = (int64_t) 1 << 30;

	/*
	 * A match capacity of 2^42 pairs (16 TB) is a bound, not an allocation:
	 * the device buffer grows as the steps need it.
	 */
	input.match_capacity = (int64_t) 1 << 42;
	memset(&err, 0, sizeof(err));
	memset(&stats, 0, sizeof(stats));
	state = gj_cuda_backend.begin_join(&input, &err);
	if (state == NULL)
		printf("# %s\n", err.message);
	report(state != NULL && gj_cuda_backend.run_step(state, &tile, &next, &m, &stats, &err) &&
		   next > 0,
		   "%s%s", "a join with a 16 TB match capacity opens and runs (the buffer grows as needed)", "");
	gj_cuda_backend.end_join(state);
	next = 0;

	/* an inner tile larger than the match buffer is refused */
	input.match_capacity = 50;
	memset(&err, 0, sizeof(err));
	memset(&stats, 0, sizeof(stats));
	state = gj_cuda_backend.begin_join(&input, &err);
	report(state != NULL && !gj_cuda_backend.run_step(state, &tile, &next, &m, &stats, &err) &&
		   err.code == GJ_ERR_DEVICE,
		   "%s%s", "run_step refuses an inner tile larger than the match buffer", "");
	gj_cuda_backend.end_join(state);
	gj_cuda_backend.end_join(NULL);
}

/* Every row's column 0 set to key with probability 1/den (a hot key). */
static void
make_skewed(Side *side, int64_t key, int den)
{
	int64_t		i;

	for (i = 0; i < side->nrows; i++)
	{
		if (rng() % den == 0)
		{
			side->values[0][i] = key;
			if (side->isnull[0] != NULL)
				side->isnull[0][i] = 0;
		}
	}
}

/*
 * A sorted join over more outer rows than one step takes (the cuda
 * backend's SORTED_ROWS_PER_STEP is 2^20), with a large match buffer.
 */
static void
test_big(const JoinSpec *spec)
{
	static const bool nulls[NCOLS] = {true, false, false};
	Side		outer,
				inner;
	Schedule	s = {"1.2M x 50k rows, 1 tile", 1200000, 50000, 1200000, 50000, (int64_t) 1 << 22};
	int64_t		i;

	make_side(&outer, s.outer_rows, nulls);
	make_side(&inner, s.inner_rows, nulls);
	for (i = 0; i < outer.nrows; i++)
		outer.values[0][i] = (int64_t) (rng() % 400000);
	for (i = 0; i < inner.nrows; i++)
		inner.values[0][i] = (int64_t) (rng() % 400000);
	test_join(&outer, &inner, spec, &s);
	free_side(&outer);
	free_side(&inner);
}

/* A sorted join's error paths: a 16 TB capacity, an inner tile over the buffer. */
static void
test_sorted_errors(const Side *outer, const Side *inner, const JoinSpec *spec)
{
	GjJoinInput input;
	GjError	err;
	void	   *state;
	GjTile		tile = {0, 10, 0, 100};
	int64_t		next = 0;
	GjMatches	m;
	GjStats		stats;

	spec_input(&input, outer, inner, spec, (int64_t) 1 << 42);
	memset(&err, 0, sizeof(err));
	memset(&stats, 0, sizeof(stats));
	state = gj_cuda_backend.begin_join(&input, &err);
	if (state == NULL)
		printf("# %s\n", err.message);
	report(state != NULL && gj_cuda_backend.run_step(state, &tile, &next, &m, &stats, &err) &&
		   next > 0,
		   "%s: %s", spec->name, "a join with a 16 TB match capacity opens and runs");
	gj_cuda_backend.end_join(state);
	next = 0;

	input.match_capacity = 50;
	memset(&err, 0, sizeof(err));
	memset(&stats, 0, sizeof(stats));
	state = gj_cuda_backend.begin_join(&input, &err);
	report(state != NULL && !gj_cuda_backend.run_step(state, &tile, &next, &m, &stats, &err) &&
		   err.code == GJ_ERR_DEVICE,
		   "%s: %s", spec->name, "run_step refuses an inner tile larger than the match buffer");
	gj_cuda_backend.end_join(state);

	/* whole sorted sides that do not fit the budget: out of memory at open */
	input.match_capacity = 1024;
	input.budget_bytes = 64 * 1024;
	memset(&err, 0, sizeof(err));
	state = gj_cuda_backend.begin_join(&input, &err);
	report(state == NULL && err.code == GJ_ERR_OVER_BUDGET,
		   "%s: %s", spec->name, "sorted sides larger than the budget are refused at open");
	gj_cuda_backend.end_join(state);
}

/* ---------------------------------------------------------------------
 * Aggregates: agg_step of both backends
 * ---------------------------------------------------------------------
 */

#define AGG_NARGS	4
#define AGG_GROUPS	7

/* The partials of one backend's agg_steps over a schedule. */
typedef struct AggRun
{
	GjAggPartial partial;
	int64_t		group_pairs[AGG_GROUPS];
	GjAggAcc	group_acc[AGG_GROUPS * AGG_NARGS];
	PairSet		pairs;			/* what the steps returned as pairs */
} AggRun;

/*
 * The aggregates of the agg_step tests: count(*), an outer integer argument,
 * and inner integer, float and large integer arguments, sums and min/max;
 * with grouped, 7 groups of the outer rows.  flags and groups are filled
 * (the caller frees flags[a] and groups).
 */
static const int agg_arg_side[AGG_NARGS] = {0, 1, 1, 1};
static const int agg_arg_col[AGG_NARGS] = {0, 0, 1, 2};

static void
agg_spec_init(GjAggSpec *spec, const Side *outer, const Side *inner,
			  uint8_t *flags[AGG_NARGS], uint32_t *groups, bool grouped)
{
	int			a;
	int64_t		r;

	memset(spec, 0, sizeof(GjAggSpec));
	spec->nargs = AGG_NARGS;
	for (a = 0; a < AGG_NARGS; a++)
	{
		const Side *side = agg_arg_side[a] == 0 ? outer : inner;
		int			col = agg_arg_col[a];

		flags[a] = xmalloc(side->nrows);
		for (r = 0; r < side->nrows; r++)
			flags[a][r] = side->isnull[col] != NULL && side->isnull[col][r] ?
				GJ_AGG_ROW_NULL : GJ_AGG_ROW_VALUE;
		spec->args[a].side = agg_arg_side[a];
		spec->args[a].cls = col == 1 ? GJ_CLASS_FLOAT : GJ_CLASS_INT;
		spec->args[a].need_sum = 1;
		spec->args[a].need_minmax = 1;
		spec->args[a].values = side->values[col];
		spec->args[a].flags = flags[a];
	}
	for (r = 0; r < outer->nrows; r++)
		groups[r] = (uint32_t) (r % AGG_GROUPS);
	spec->outer_group = grouped ? groups : NULL;
}

static bool
run_agg_schedule(const GjBackend *backend, const GjJoinInput *input, const Schedule *s,
				 const GjAggSpec *spec, AggRun *run, GjError *err)
{
	memset(run, 0, sizeof(AggRun));
	if (spec->outer_group != NULL)
	{
		run->partial.group_pairs = run->group_pairs;
		run->partial.group_acc = run->group_acc;
	}
	return run_schedule_agg(backend, input, s, spec, &run->partial, &run->pairs, err);
}

static bool
same_acc(const GjAggAcc *x, const GjAggAcc *y)
{
	return x->count == y->count && x->isum == y->isum &&
		x->fsum_started == y->fsum_started &&
		(!x->fsum_started || memcmp(&x->fsum, &y->fsum, sizeof(double)) == 0) &&
		x->saw_nonfinite == y->saw_nonfinite && x->has_minmax == y->has_minmax &&
		(!x->has_minmax || (x->min_key == y->min_key && x->max_key == y->max_key));
}

/*
 * A range join's aggregates on both backends: count(*), an outer integer
 * argument, and inner integer, float and large integer arguments (sums and
 * min/max), with and without groups.  Both reduce the same runs in the same
 * order and cut the same steps (no step here walks 2^24 positions), so even
 * the float sums, merged per step as the executor does, are identical; the
 * pairs of OUTER_ALL rows come back as pairs on both.
 */
static void
test_agg(const Side *outer, const Side *inner, const JoinSpec *join, const Schedule *s,
		 bool grouped)
{
	GjJoinInput input;
	GjAggSpec	spec;
	AggRun	   *cpu = xmalloc(sizeof(AggRun));
	AggRun	   *gpu = xmalloc(sizeof(AggRun));
	uint8_t    *flags[AGG_NARGS];
	uint32_t   *groups = xmalloc(sizeof(uint32_t) * outer->nrows);
	GjError		err;
	bool		ok = true;
	int			a;

	spec_input(&input, outer, inner, join, s->capacity);

	agg_spec_init(&spec, outer, inner, flags, groups, grouped);

	memset(&err, 0, sizeof(err));
	if (!run_agg_schedule(&gj_cpu_backend, &input, s, &spec, cpu, &err))
	{
		printf("# cpu backend failed: %s\n", err.message);
		ok = false;
	}
	memset(&err, 0, sizeof(err));
	if (ok && !run_agg_schedule(&gj_cuda_backend, &input, s, &spec, gpu, &err))
	{
		printf("# cuda backend failed: %s\n", err.message);
		ok = false;
	}
	if (ok)
	{
		int			nacc = grouped ? AGG_GROUPS * AGG_NARGS : AGG_NARGS;
		const GjAggAcc *cacc = grouped ? cpu->group_acc : cpu->partial.acc;
		const GjAggAcc *gacc = grouped ? gpu->group_acc : gpu->partial.acc;

		printf("# %lld pairs reduced, %lld returned, cpu %lld steps, cuda %lld steps\n",
			   (long long) cpu->partial.pairs, (long long) cpu->pairs.n,
			   (long long) cpu->pairs.steps, (long long) gpu->pairs.steps);
		if (cpu->pairs.problem[0] || gpu->pairs.problem[0])
		{
			printf("# step contract: cpu: %s; cuda: %s\n", cpu->pairs.problem, gpu->pairs.problem);
			ok = false;
		}
		if (cpu->partial.pairs != gpu->partial.pairs || cpu->pairs.n != gpu->pairs.n ||
			(cpu->pairs.n > 0 && memcmp(cpu->pairs.pairs, gpu->pairs.pairs,
										sizeof(uint64_t) * cpu->pairs.n) != 0))
		{
			printf("# cpu reduced %lld and returned %lld pairs, cuda %lld and %lld\n",
				   (long long) cpu->partial.pairs, (long long) cpu->pairs.n,
				   (long long) gpu->partial.pairs, (long long) gpu->pairs.n);
			ok = false;
		}
		if (grouped && memcmp(cpu->group_pairs, gpu->group_pairs, sizeof(cpu->group_pairs)) != 0)
		{
			printf("# the groups' pair counts differ\n");
			ok = false;
		}
		for (a = 0; ok && a < nacc; a++)
		{
			if (!same_acc(&cacc[a], &gacc[a]))
			{
				printf("# accumulator %d differs: count %lld / %lld, fsum %.17g / %.17g\n", a,
					   (long long) cacc[a].count, (long long) gacc[a].count,
					   cacc[a].fsum, gacc[a].fsum);
				ok = false;
			}
		}
		if (ok && cpu->pairs.stats.pairs_evaluated != gpu->pairs.stats.pairs_evaluated)
		{
			printf("# cpu evaluated %lld pairs, cuda %lld\n",
				   (long long) cpu->pairs.stats.pairs_evaluated,
				   (long long) gpu->pairs.stats.pairs_evaluated);
			ok = false;
		}
	}
	for (a = 0; a < AGG_NARGS; a++)
		free(flags[a]);
	free(groups);
	free(cpu->pairs.pairs);
	free(gpu->pairs.pairs);
	free(cpu);
	free(gpu);
	report(ok, grouped ? "agg_step %s, %s, 7 groups" : "agg_step %s, %s", join->name, s->name);
}

/*
 * race: every kernel of the cuda backend once or more, on sides of a few
 * hundred rows and in as few launches as can be: the nested-loop programs
 * on one tile, the sorted and hash joins on four, the aggregate step.  compute-sanitizer racecheck makes each launch take
 * seconds to minutes in proportion to its shared-memory traffic, so the
 * full-size tests cannot finish under it; these do.
 */
#define RACE_OUTER	400
#define RACE_INNER	300

static int
run_race_tests(void)
{
	static const bool outer_nulls[NCOLS] = {true, true, true};
	static const bool inner_nulls[NCOLS] = {true, false, true};
	static const Schedule few = {"4 tiles of 230x170 rows, capacity a tile", RACE_OUTER,
	RACE_INNER, 230, 170, 230 * 170};
	static const Schedule one = {"1 tile, capacity all pairs", RACE_OUTER, RACE_INNER,
	RACE_OUTER, RACE_INNER, (int64_t) RACE_OUTER * RACE_INNER};
	Program    *progs = xmalloc(sizeof(Program) * 32);
	int			nprogs = build_programs(progs);
	JoinSpec   *joins = xmalloc(sizeof(JoinSpec) * 64);
	int			njoins = build_joins(joins);
	int			nagg = 0;
	GjDeviceInfo info;
	GjError		err;
	Side		outer,
				inner;
	int			i;

	memset(&err, 0, sizeof(err));
	if (!gj_cuda_probe(&info, &err))
	{
		printf("1..0 # SKIP no CUDA device: %s\n", err.message);
		free(progs);
		free(joins);
		return 0;
	}
	for (i = 0; i < njoins; i++)
		nagg += joins[i].algorithm == GJ_ALGO_SORTMERGE && !joins[i].filter_needed;
	printf("1..%d\n", nprogs + njoins + 2 * nagg);
	make_side(&outer, RACE_OUTER, outer_nulls);
	make_side(&inner, RACE_INNER, inner_nulls);
	/* one step a tile: every launch is a kernel's whole work */
	for (i = 0; i < nprogs; i++)
		test_program(&outer, &inner, &progs[i], &one);
	for (i = 0; i < njoins; i++)
		test_join(&outer, &inner, &joins[i], &few);
	for (i = 0; i < njoins; i++)
	{
		if (joins[i].algorithm != GJ_ALGO_SORTMERGE || joins[i].filter_needed)
			continue;
		test_agg(&outer, &inner, &joins[i], &one, false);
		test_agg(&outer, &inner, &joins[i], &one, true);
	}
	free_side(&outer);
	free_side(&inner);
	free(progs);
	free(joins);
	return failures > 0 ? 1 : 0;
}

/*
 * quick: only the sorted joins over the two schedules with few steps, and
 * their error paths (for compute-sanitizer, which makes launches slow).
 */
static int
run_tests(bool quick)
{
	static const bool outer_nulls[NCOLS] = {true, true, true};
	static const bool inner_nulls[NCOLS] = {true, false, true};
	static const Schedule schedules[] = {
		{"4 tiles, capacity 3 inner tiles", N_OUTER, N_INNER, 2300, 1700, 3 * 1700},
		{"1 tile, capacity all pairs", N_OUTER, N_INNER, N_OUTER, N_INNER,
		(int64_t) N_OUTER * N_INNER},
		{"7x5 tiles of 120x100 rows, capacity 5", 120, 100, 7, 5, 5},
		/* sorted joins only: about 50 steps a tile */
		{"42 tiles of 500x400 rows, capacity 2000", N_OUTER, N_INNER, 500, 400, 2000},
	};
	static const Schedule one_key = {"300x200 rows all one key, tiles 40x50, capacity 60",
	300, 200, 40, 50, 60};
	int			nsched = sizeof(schedules) / sizeof(schedules[0]);
	Program    *progs = xmalloc(sizeof(Program) * 32);
	int			nprogs = build_programs(progs);
	JoinSpec   *joins = xmalloc(sizeof(JoinSpec) * 64);
	int			njoins = build_joins(joins);
	int			nhash = 0;
	int			nagg = 0;
	GjDeviceInfo info;
	GjError		err;
	Side		outer,
				inner;
	int			i,
				j;

	for (i = 0; i < njoins; i++)
	{
		nhash += joins[i].algorithm == GJ_ALGO_HASH;
		nagg += joins[i].algorithm == GJ_ALGO_SORTMERGE && !joins[i].filter_needed;
	}
	memset(&info, 0, sizeof(info));
	memset(&err, 0, sizeof(err));
	if (!gj_cuda_probe(&info, &err))
	{
		free(progs);
		free(joins);
		if (!quick)
		{
			/* what can run without a device: the cpu backend alone */
			printf("# no CUDA device (%s): the cpu backend alone\n", err.message);
			return run_cpu_tests();
		}
		printf("1..0 # SKIP no CUDA device: %s\n", err.message);
		return 0;
	}
	if (quick)
	{
		nsched = 2;
		nprogs = 0;
		printf("1..%d\n", 2 + (njoins - nhash) + njoins * nsched + 6 + nagg * 4);
	}
	else
		printf("1..%d\n", 2 + nprogs * (nsched - 1) + (njoins - nhash) + njoins * nsched +
			   2 + 6 + nhash * 2 + 2 + nagg * 4);
	printf("# %s, %d SMs, cc %d.%d, %lld MB free, init %.1f ms\n", info.name, info.sm_count,
		   info.cc_major, info.cc_minor, (long long) (info.free_memory >> 20), info.init_ms);
	report(info.name[0] != '\0' && info.init_ms > 0 && info.total_memory > 0,
		   "%s%s", "first probe reports the device and its init time", "");
	memset(&info, 0, sizeof(info));
	report(gj_cuda_probe(&info, &err) && info.init_ms == 0 && info.free_memory > 0,
		   "%s%s", "later probes report init_ms 0", "");

	make_side(&outer, N_OUTER, outer_nulls);
	make_side(&inner, N_INNER, inner_nulls);
	for (j = 0; j < nsched - 1; j++)
		for (i = 0; i < nprogs; i++)
			test_program(&outer, &inner, &progs[i], &schedules[j]);
	for (i = 0; i < njoins; i++)
	{
		if (joins[i].algorithm == GJ_ALGO_SORTMERGE)
			test_truth(&outer, &inner, &joins[i]);
	}
	for (j = 0; j < nsched; j++)
		for (i = 0; i < njoins; i++)
			test_join(&outer, &inner, &joins[i], &schedules[j]);
	if (!quick)
		test_errors(&outer, &inner, &progs[nprogs - 1]);
	test_sorted_errors(&outer, &inner, &joins[0]);
	test_sorted_errors(&outer, &inner, &joins[njoins - 1]);
	for (i = 0; i < njoins; i++)
	{
		if (joins[i].algorithm != GJ_ALGO_SORTMERGE || joins[i].filter_needed)
			continue;
		test_agg(&outer, &inner, &joins[i], &schedules[1], false);
		test_agg(&outer, &inner, &joins[i], &schedules[1], true);
		test_agg(&outer, &inner, &joins[i], &schedules[3], false);
		test_agg(&outer, &inner, &joins[i], &schedules[3], true);
	}
	if (quick)
	{
		free_side(&outer);
		free_side(&inner);
		free(progs);
		free(joins);
		return failures > 0 ? 1 : 0;
	}

	/* skewed: a third of the rows share key 7 */
	make_skewed(&outer, 7, 3);
	make_skewed(&inner, 7, 3);
	for (i = 0; i < njoins; i++)
	{
		if (joins[i].algorithm == GJ_ALGO_HASH)
			test_join(&outer, &inner, &joins[i], &schedules[3]);
	}
	/* every row the same key: whole tiles of one key, split into steps */
	make_skewed(&outer, 7, 1);
	make_skewed(&inner, 7, 1);
	for (i = 0; i < njoins; i++)
	{
		if (joins[i].algorithm == GJ_ALGO_HASH)
			test_join(&outer, &inner, &joins[i], &one_key);
	}
	free_side(&outer);
	free_side(&inner);

	for (i = 0; i < njoins; i++)
	{
		if (strcmp(joins[i].name, "hash o.a = i.a") == 0 ||
			strncmp(joins[i].name, "range band i.a", 14) == 0)
			test_big(&joins[i]);
	}

	free(progs);
	free(joins);
	return failures > 0 ? 1 : 0;
}

/* ---------------------------------------------------------------------
 * cpu: the cpu backend alone against a brute-force reference
 *
 * What CI can run: no GPU, no server.  Every pair of the two sides is
 * evaluated with the device program in the test itself, and the cpu
 * backend's pairs over each tile schedule, with its tile pruning and its
 * steps, must be exactly those (recheck flags included).  For the range
 * joins of build_joins the bounds admit every pair the program accepts (as
 * test_truth checks for the cuda backend), so the reference is the program
 * alone; a hash join's candidates are the pairs of equal keys, so its
 * reference is the program over those.
 * ---------------------------------------------------------------------
 */

/*
 * Sides of the cpu mode: half those of the cuda tests in each direction, so
 * that the reference (every pair through the interpreter) and the cpu
 * backend's nested loops over every program take well under a minute on
 * CI's two cores.
 */
#define CPU_OUTER	1500
#define CPU_INNER	1250

/* Do the hash join's key columns of the two rows hold equal, non-NULL keys? */
static bool
equal_hash_keys(const Side *outer, const Side *inner, const GjEquiSpec *equi,
				int64_t o, int64_t i)
{
	int			k;

	for (k = 0; k < equi->nkeys; k++)
	{
		int			oc = equi->outer_cols[k];
		int			ic = equi->inner_cols[k];
		int64_t		x,
					y;

		if ((outer->isnull[oc] && outer->isnull[oc][o]) ||
			(inner->isnull[ic] && inner->isnull[ic][i]))
			return false;
		x = equi->cls[k] == GJ_CLASS_FLOAT ?
			gj_float_order_key(gj_bits_to_double(outer->values[oc][o])) : outer->values[oc][o];
		y = equi->cls[k] == GJ_CLASS_FLOAT ?
			gj_float_order_key(gj_bits_to_double(inner->values[ic][i])) : inner->values[ic][i];
		if (x != y)
			return false;
	}
	return true;
}

/* The pairs a join spec must return, every pair evaluated; sorted. */
static void
reference_pairs(const Side *outer, const Side *inner, const JoinSpec *spec, PairSet *set)
{
	int64_t		o,
				i;

	memset(set, 0, sizeof(PairSet));
	for (o = 0; o < outer->nrows; o++)
	{
		for (i = 0; i < inner->nrows; i++)
		{
			int			r;

			if (spec->algorithm == GJ_ALGO_HASH &&
				!equal_hash_keys(outer, inner, &spec->equi, o, i))
				continue;
			r = gj_program_eval(spec->program.instrs, spec->program.ninstrs,
								&outer->cols, o, &inner->cols, i);
			if (r != GJ_RESULT_FALSE)
				add_pair(set, (uint32_t) o | (r == GJ_RESULT_RECHECK ? GJ_PAIR_RECHECK : 0),
						 (uint32_t) i);
		}
	}
	qsort(set->pairs, set->n, sizeof(uint64_t), cmp_u64);
}

/* Say where two sorted pair sets first differ; true when they are equal. */
static bool
same_pairs(const PairSet *want, const PairSet *got, const char *what)
{
	int64_t		i;

	if (want->n != got->n)
	{
		printf("# %s: %lld pairs, the reference has %lld\n", what, (long long) got->n,
			   (long long) want->n);
		return false;
	}
	for (i = 0; i < want->n; i++)
	{
		if (want->pairs[i] != got->pairs[i])
		{
			printf("# %s: first difference at %lld: reference (%#x, %u), cpu (%#x, %u)\n",
				   what, (long long) i, (unsigned) (want->pairs[i] >> 32),
				   (unsigned) want->pairs[i], (unsigned) (got->pairs[i] >> 32),
				   (unsigned) got->pairs[i]);
			return false;
		}
	}
	return true;
}

/* The cpu backend's pairs of a join over a schedule against the reference. */
static void
cpu_test_join(const Side *outer, const Side *inner, const JoinSpec *spec, const Schedule *s,
			  const PairSet *ref)
{
	GjJoinInput input;
	PairSet		cpu;
	GjError		err;
	bool		ok = true;

	spec_input(&input, outer, inner, spec, s->capacity);
	memset(&err, 0, sizeof(err));
	if (!run_schedule(&gj_cpu_backend, &input, s, &cpu, &err))
	{
		printf("# cpu backend failed: %s\n", err.message);
		ok = false;
	}
	else
	{
		printf("# %lld pairs, %lld steps, %lld tiles pruned\n", (long long) cpu.n,
			   (long long) cpu.steps, (long long) cpu.pruned);
		if (cpu.problem[0])
		{
			printf("# step contract: %s\n", cpu.problem);
			ok = false;
		}
		ok = same_pairs(ref, &cpu, "cpu") && ok;
		if (ok && cpu.stats.device_matches != cpu.n)
		{
			printf("# stats: %lld matches reported, %lld returned\n",
				   (long long) cpu.stats.device_matches, (long long) cpu.n);
			ok = false;
		}
	}
	free(cpu.pairs);
	report(ok, "cpu %s, %s", spec->name, s->name);
}

/*
 * What the executor derives from the pairs for each join type, from the cpu
 * backend's pairs (tiles split into many steps) and from the reference:
 * the outer rows with a match (semi join; without, the anti join and a left
 * join's NULL-extended rows), those whose every match needs a recheck, and
 * the inner rows without a match (a right or full join's NULL-extended
 * rows).  Equal pairs give equal answers; this checks that no step loses or
 * repeats an outer row's matches across tile and step boundaries.
 */
static void
cpu_test_join_types(const Side *outer, const Side *inner, const JoinSpec *spec,
					const Schedule *s, const PairSet *ref)
{
	GjJoinInput input;
	PairSet		cpu;
	GjError		err;
	bool		ok = true;
	int			w;
	uint8_t    *seen[2][2];		/* [reference, cpu][outer, inner] */

	spec_input(&input, outer, inner, spec, s->capacity);
	memset(&err, 0, sizeof(err));
	if (!run_schedule(&gj_cpu_backend, &input, s, &cpu, &err))
	{
		printf("# cpu backend failed: %s\n", err.message);
		report(false, "cpu join types of %s, %s", spec->name, s->name);
		return;
	}
	for (w = 0; w < 2; w++)
	{
		const PairSet *set = w == 0 ? ref : &cpu;
		int64_t		k;

		/* per row: bit 1 a sure match, bit 2 a match needing a recheck */
		seen[w][0] = calloc(outer->nrows > 0 ? outer->nrows : 1, 1);
		seen[w][1] = calloc(inner->nrows > 0 ? inner->nrows : 1, 1);
		for (k = 0; k < set->n; k++)
		{
			uint32_t	o = (uint32_t) (set->pairs[k] >> 32);
			uint32_t	i = (uint32_t) set->pairs[k];
			uint8_t		bit = (o & GJ_PAIR_RECHECK) ? 2 : 1;

			seen[w][0][o & GJ_PAIR_ROW_MASK] |= bit;
			seen[w][1][i] |= bit;
		}
	}
	if (memcmp(seen[0][0], seen[1][0], outer->nrows) != 0)
	{
		printf("# the outer rows with (rechecked) matches differ\n");
		ok = false;
	}
	if (memcmp(seen[0][1], seen[1][1], inner->nrows) != 0)
	{
		printf("# the inner rows with (rechecked) matches differ\n");
		ok = false;
	}
	for (w = 0; w < 2; w++)
	{
		free(seen[w][0]);
		free(seen[w][1]);
	}
	free(cpu.pairs);
	report(ok, "cpu join types (semi, anti, outer) of %s, %s", spec->name, s->name);
}

/* Float sums of different summation orders: equal to about 1e-9. */
static bool
close_fsum(const GjAggAcc *x, const GjAggAcc *y)
{
	if (x->fsum_started != y->fsum_started || x->saw_nonfinite != y->saw_nonfinite)
		return false;
	if (!x->fsum_started || x->saw_nonfinite)
		return true;			/* NaN or an infinity: the host decides */
	return fabs(x->fsum - y->fsum) <= 1e-9 * (fabs(x->fsum) + fabs(y->fsum)) + 1e-300;
}

/*
 * The aggregate fast path against the reference: the pairs agg_step
 * returns are reference pairs, and what it reduced is the aggregate of the
 * other reference pairs (counts, integer sums and min/max exactly, float
 * sums up to summation order), with and without groups.
 */
static void
cpu_test_agg(const Side *outer, const Side *inner, const JoinSpec *join, const Schedule *s,
			 const PairSet *ref, bool grouped)
{
	GjJoinInput input;
	GjAggSpec	spec;
	AggRun	   *cpu = xmalloc(sizeof(AggRun));
	AggRun	   *want = xmalloc(sizeof(AggRun));
	uint8_t    *flags[AGG_NARGS];
	uint32_t   *groups = xmalloc(sizeof(uint32_t) * outer->nrows);
	GjError		err;
	bool		ok = true;
	int			a;
	int64_t		k,
				q;

	spec_input(&input, outer, inner, join, s->capacity);
	agg_spec_init(&spec, outer, inner, flags, groups, grouped);

	memset(&err, 0, sizeof(err));
	if (!run_agg_schedule(&gj_cpu_backend, &input, s, &spec, cpu, &err))
	{
		printf("# cpu backend failed: %s\n", err.message);
		ok = false;
	}

	/* the reference: every reference pair agg_step did not return */
	memset(want, 0, sizeof(AggRun));
	for (k = 0, q = 0; ok && k < ref->n; k++)
	{
		uint32_t	o = (uint32_t) (ref->pairs[k] >> 32) & GJ_PAIR_ROW_MASK;
		uint32_t	i = (uint32_t) ref->pairs[k];
		uint32_t	g = grouped ? groups[o] : 0;

		while (q < cpu->pairs.n && cpu->pairs.pairs[q] < ref->pairs[k])
			q++;
		if (q < cpu->pairs.n && cpu->pairs.pairs[q] == ref->pairs[k])
			continue;
		want->partial.pairs++;
		if (grouped)
			want->group_pairs[g]++;
		for (a = 0; a < AGG_NARGS; a++)
		{
			uint32_t	row = agg_arg_side[a] == 0 ? o : i;
			GjAggAcc   *acc = grouped ? &want->group_acc[g * AGG_NARGS + a] :
				&want->partial.acc[a];

			if (flags[a][row] == GJ_AGG_ROW_VALUE)
				gj_agg_add(acc, &spec.args[a], spec.args[a].values[row], 1);
		}
	}
	if (ok)
	{
		int			nacc = grouped ? AGG_GROUPS * AGG_NARGS : AGG_NARGS;
		const GjAggAcc *gacc = grouped ? cpu->group_acc : cpu->partial.acc;
		const GjAggAcc *wacc = grouped ? want->group_acc : want->partial.acc;

		printf("# %lld pairs reduced, %lld returned, %lld steps\n",
			   (long long) cpu->partial.pairs, (long long) cpu->pairs.n,
			   (long long) cpu->pairs.steps);
		if (cpu->pairs.problem[0])
		{
			printf("# step contract: %s\n", cpu->pairs.problem);
			ok = false;
		}
		if (cpu->partial.pairs + cpu->pairs.n != ref->n ||
			want->partial.pairs != cpu->partial.pairs)
		{
			printf("# reduced %lld and returned %lld pairs of the reference's %lld\n",
				   (long long) cpu->partial.pairs, (long long) cpu->pairs.n,
				   (long long) ref->n);
			ok = false;
		}
		if (grouped && memcmp(cpu->group_pairs, want->group_pairs,
							  sizeof(cpu->group_pairs)) != 0)
		{
			printf("# the groups' pair counts differ\n");
			ok = false;
		}
		for (a = 0; ok && a < nacc; a++)
		{
			const GjAggAcc *x = &wacc[a];
			const GjAggAcc *y = &gacc[a];

			if (x->count != y->count || x->isum != y->isum || !close_fsum(x, y) ||
				x->has_minmax != y->has_minmax ||
				(x->has_minmax && (x->min_key != y->min_key || x->max_key != y->max_key)))
			{
				printf("# accumulator %d differs: count %lld / %lld, fsum %.17g / %.17g\n", a,
					   (long long) x->count, (long long) y->count, x->fsum, y->fsum);
				ok = false;
			}
		}
	}
	for (a = 0; a < AGG_NARGS; a++)
		free(flags[a]);
	free(groups);
	free(cpu->pairs.pairs);
	free(cpu);
	free(want);
	report(ok, grouped ? "cpu agg_step %s, %s, 7 groups" : "cpu agg_step %s, %s",
		   join->name, s->name);
}

/* run_step refuses an inner tile larger than the match buffer. */
static void
cpu_test_errors(const Side *outer, const Side *inner, const JoinSpec *spec)
{
	GjJoinInput input;
	GjError		err;
	void	   *state;
	GjTile		tile = {0, 10, 0, 100};
	int64_t		next = 0;
	GjMatches	m;
	GjStats		stats;

	spec_input(&input, outer, inner, spec, 50);
	memset(&err, 0, sizeof(err));
	memset(&stats, 0, sizeof(stats));
	state = gj_cpu_backend.begin_join(&input, &err);
	report(state != NULL && !gj_cpu_backend.run_step(state, &tile, &next, &m, &stats, &err) &&
		   err.code == GJ_ERR_DEVICE,
		   "cpu %s: %s", spec->name, "run_step refuses an inner tile larger than the match buffer");
	gj_cpu_backend.end_join(state);
	gj_cpu_backend.end_join(NULL);
}

/*
 * Tile pruning must prune: a hash join's tiles are hash ranges, so of a
 * schedule of many tiles most cannot meet (the pairs being right shows that
 * no tile with a match was pruned).
 */
static void
cpu_test_pruning(const Side *outer, const Side *inner, const JoinSpec *spec,
				 const Schedule *s)
{
	GjJoinInput input;
	PairSet		cpu;
	GjError		err;
	int64_t		tiles = ((s->outer_rows + s->outer_tile - 1) / s->outer_tile) *
		((s->inner_rows + s->inner_tile - 1) / s->inner_tile);
	bool		ok;

	spec_input(&input, outer, inner, spec, s->capacity);
	memset(&err, 0, sizeof(err));
	ok = run_schedule(&gj_cpu_backend, &input, s, &cpu, &err);
	printf("# %lld of %lld tiles pruned\n", (long long) cpu.pruned, (long long) tiles);
	report(ok && cpu.pruned >= tiles / 2, "cpu %s prunes most tiles, %s", spec->name, s->name);
	free(cpu.pairs);
}

/*
 * The cpu mode: the nested-loop programs over the three nested-loop
 * schedules, every sort-merge and hash join over all four, the join types
 * on the schedule of many steps, the aggregate fast path, the error path
 * and tile pruning.  The reference of each program or join is computed once.
 */
static int
run_cpu_tests(void)
{
	static const bool outer_nulls[NCOLS] = {true, true, true};
	static const bool inner_nulls[NCOLS] = {true, false, true};
	static const Schedule schedules[] = {
		{"4 tiles, capacity 3 inner tiles", CPU_OUTER, CPU_INNER, 1150, 850, 3 * 850},
		{"1 tile, capacity all pairs", CPU_OUTER, CPU_INNER, CPU_OUTER, CPU_INNER,
		(int64_t) CPU_OUTER * CPU_INNER},
		{"7x5 tiles of 120x100 rows, capacity 5", 120, 100, 7, 5, 5},
		{"42 tiles of 250x200 rows, capacity 1000", CPU_OUTER, CPU_INNER, 250, 200, 1000},
	};
	int			nsched = sizeof(schedules) / sizeof(schedules[0]);
	Program    *progs = xmalloc(sizeof(Program) * 32);
	int			nprogs = build_programs(progs);
	JoinSpec   *joins = xmalloc(sizeof(JoinSpec) * 64);
	int			njoins = build_joins(joins);
	int			nagg = 0;
	Side		outer,
				inner,
				small_outer,
				small_inner;
	int			i,
				j;

	for (i = 0; i < njoins; i++)
		nagg += joins[i].algorithm == GJ_ALGO_SORTMERGE && !joins[i].filter_needed;
	printf("1..%d\n", nprogs * (nsched - 1) + njoins * nsched + njoins + nagg * 4 + 2 + 1);
	printf("# cpu backend against a brute-force reference, %d x %d rows\n", CPU_OUTER, CPU_INNER);
	make_side(&outer, CPU_OUTER, outer_nulls);
	make_side(&inner, CPU_INNER, inner_nulls);

	/*
	 * The schedule of 120 x 100 rows covers the first rows of the sides:
	 * its reference is over sides of that size (the same rows).
	 */
	small_outer = outer;
	small_outer.nrows = schedules[2].outer_rows;
	small_inner = inner;
	small_inner.nrows = schedules[2].inner_rows;

	for (i = 0; i < nprogs; i++)
	{
		JoinSpec	spec;
		PairSet		ref,
					small_ref;

		memset(&spec, 0, sizeof(spec));
		spec.name = progs[i].name;
		spec.algorithm = GJ_ALGO_NESTLOOP;
		spec.program = progs[i];
		reference_pairs(&outer, &inner, &spec, &ref);
		reference_pairs(&small_outer, &small_inner, &spec, &small_ref);
		for (j = 0; j < nsched - 1; j++)
			cpu_test_join(j == 2 ? &small_outer : &outer, j == 2 ? &small_inner : &inner,
						  &spec, &schedules[j], j == 2 ? &small_ref : &ref);
		free(ref.pairs);
		free(small_ref.pairs);
	}
	for (i = 0; i < njoins; i++)
	{
		PairSet		ref,
					small_ref;

		reference_pairs(&outer, &inner, &joins[i], &ref);
		reference_pairs(&small_outer, &small_inner, &joins[i], &small_ref);
		for (j = 0; j < nsched; j++)
			cpu_test_join(j == 2 ? &small_outer : &outer, j == 2 ? &small_inner : &inner,
						  &joins[i], &schedules[j], j == 2 ? &small_ref : &ref);
		cpu_test_join_types(&outer, &inner, &joins[i], &schedules[3], &ref);
		if (joins[i].algorithm == GJ_ALGO_SORTMERGE && !joins[i].filter_needed)
		{
			cpu_test_agg(&outer, &inner, &joins[i], &schedules[1], &ref, false);
			cpu_test_agg(&outer, &inner, &joins[i], &schedules[1], &ref, true);
			cpu_test_agg(&outer, &inner, &joins[i], &schedules[3], &ref, false);
			cpu_test_agg(&outer, &inner, &joins[i], &schedules[3], &ref, true);
		}
		free(ref.pairs);
		free(small_ref.pairs);
	}
	cpu_test_errors(&outer, &inner, &joins[0]);
	cpu_test_errors(&outer, &inner, &joins[njoins - 1]);
	for (i = 0; i < njoins; i++)
	{
		if (strcmp(joins[i].name, "hash o.a = i.a") == 0)
			cpu_test_pruning(&outer, &inner, &joins[i], &schedules[3]);
	}
	free_side(&outer);
	free_side(&inner);
	free(progs);
	free(joins);
	printf("kernel_test: %d passed, %d failed\n", test_number - failures, failures);
	return failures > 0 ? 1 : 0;
}

/* ---------------------------------------------------------------------
 * Benchmark
 * ---------------------------------------------------------------------
 */

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

/* Number of x in sorted[0..n) with x > key: the exact count for "key < x". */
static int64_t
count_greater(const int64_t *sorted, int64_t n, int64_t key)
{
	int64_t		lo = 0,
				hi = n;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (sorted[mid] <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return n - lo;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a;
	int64_t		y = *(const int64_t *) b;

	return (x > y) - (x < y);
}

static int
run_bench(int64_t n)
{
	GjDeviceInfo info;
	GjError		err;
	GjJoinInput input;
	Program		lt,
				eq;
	GjTile		tile = {0, n, 0, n};
	int64_t    *ovals = xmalloc(sizeof(int64_t) * n);
	int64_t    *ivals = xmalloc(sizeof(int64_t) * n);
	int64_t    *sorted = xmalloc(sizeof(int64_t) * n);
	int64_t		i,
				expected = 0,
				matches,
				next;
	double		kernel_ms,
				t0,
				wall_ms;
	void	   *state;
	GjStats		stats;
	GjMatches	m;

	memset(&err, 0, sizeof(err));
	if (!gj_cuda_probe(&info, &err))
	{
		printf("no CUDA device: %s\n", err.message);
		return 1;
	}
	printf("device: %s, %d SMs, cc %d.%d, init %.1f ms\n", info.name, info.sm_count,
		   info.cc_major, info.cc_minor, info.init_ms);

	for (i = 0; i < n; i++)
	{
		ovals[i] = (int32_t) (uint32_t) rng();
		ivals[i] = (int32_t) (uint32_t) rng();
	}
	memcpy(sorted, ivals, sizeof(int64_t) * n);
	qsort(sorted, n, sizeof(int64_t), cmp_i64);
	for (i = 0; i < n; i++)
		expected += count_greater(sorted, n, ovals[i]);

	memset(&lt, 0, sizeof(lt));
	emit(&lt, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(&lt, GJOP_LOAD_INNER, 0, 0, 0);
	emit(&lt, GJOP_LT, GJ_CLASS_INT, 0, 0);

	memset(&input, 0, sizeof(input));
	input.outer.ncols = 1;
	input.outer.values[0] = ovals;
	input.outer_nrows = n;
	input.inner.ncols = 1;
	input.inner.values[0] = ivals;
	input.inner_nrows = n;
	input.instrs = lt.instrs;
	input.ninstrs = lt.ninstrs;
	input.algorithm = GJ_ALGO_NESTLOOP;
	input.match_capacity = n;
	input.budget_bytes = (int64_t) 1 << 34;

	state = gj_cuda_backend.begin_join(&input, &err);
	if (state == NULL)
	{
		printf("begin_join failed: %s\n", err.message);
		return 1;
	}
	/* the first pass uploads the columns and warms up */
	if (!gj_cuda_bench_count(state, &tile, &matches, &kernel_ms, &err))
	{
		printf("count failed: %s\n", err.message);
		return 1;
	}
	t0 = now_ms();
	if (!gj_cuda_bench_count(state, &tile, &matches, &kernel_ms, &err))
	{
		printf("count failed: %s\n", err.message);
		return 1;
	}
	wall_ms = now_ms() - t0;
	gj_cuda_backend.end_join(state);
	printf("count o.a < i.a, %lld x %lld int4 rows: %lld matches (%s), "
		   "kernel %.2f ms = %.3g pairs/s, wall %.2f ms = %.3g pairs/s\n",
		   (long long) n, (long long) n, (long long) matches,
		   matches == expected ? "correct" : "WRONG",
		   kernel_ms, (double) n * n / (kernel_ms / 1000.0),
		   wall_ms, (double) n * n / (wall_ms / 1000.0));

	/* a selective equi-join through run_step, matches copied back */
	for (i = 0; i < n; i++)
		ivals[i] = (int64_t) (rng() % (uint64_t) n);
	memset(&eq, 0, sizeof(eq));
	emit(&eq, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(&eq, GJOP_LOAD_INNER, 0, 0, 0);
	emit(&eq, GJOP_EQ, GJ_CLASS_INT, 0, 0);
	for (i = 0; i < n; i++)
		ovals[i] = (int64_t) (rng() % (uint64_t) n);
	input.instrs = eq.instrs;
	input.ninstrs = eq.ninstrs;
	state = gj_cuda_backend.begin_join(&input, &err);
	if (state == NULL)
	{
		printf("begin_join failed: %s\n", err.message);
		return 1;
	}
	memset(&stats, 0, sizeof(stats));
	matches = 0;
	t0 = now_ms();
	for (next = 0; next < n;)
	{
		if (!gj_cuda_backend.run_step(state, &tile, &next, &m, &stats, &err))
		{
			printf("run_step failed: %s\n", err.message);
			return 1;
		}
		matches += m.count;
	}
	wall_ms = now_ms() - t0;
	gj_cuda_backend.end_join(state);
	printf("run_step o.a = i.a, %lld x %lld rows: %lld matches, wall %.2f ms = %.3g pairs/s "
		   "(kernel %.2f ms, transfer %.2f ms)\n",
		   (long long) n, (long long) n, (long long) matches, wall_ms,
		   (double) n * n / (wall_ms / 1000.0), stats.kernel_ms, stats.transfer_ms);

	free(ovals);
	free(ivals);
	free(sorted);
	return matches > 0 ? 0 : 1;
}

/*
 * One sorted join through a backend, as the executor runs it on one tile:
 * begin_join (which sorts), then run_step until the tile is done.
 */
static bool
bench_sorted_once(const GjBackend *backend, const GjJoinInput *input, double *ms,
				  int64_t *matches, int64_t *steps)
{
	GjTile		tile = {0, input->outer_nrows, 0, input->inner_nrows};
	int64_t		next = 0;
	GjError		err;
	GjStats		stats;
	GjMatches	m;
	void	   *state;
	double		t0 = now_ms();

	memset(&err, 0, sizeof(err));
	memset(&stats, 0, sizeof(stats));
	*matches = 0;
	*steps = 0;
	state = backend->begin_join(input, &err);
	if (state == NULL)
	{
		printf("%s begin_join failed: %s\n", backend->name, err.message);
		return false;
	}
	while (next < tile.outer_end)
	{
		if (!backend->run_step(state, &tile, &next, &m, &stats, &err))
		{
			printf("%s run_step failed: %s\n", backend->name, err.message);
			backend->end_join(state);
			return false;
		}
		*matches += m.count;
		(*steps)++;
	}
	backend->end_join(state);
	*ms = now_ms() - t0;
	return true;
}

/*
 * A band join "i.a BETWEEN o.a - 2 AND o.a + 2" (keys uniform in [0, 4n),
 * about 1.25 n matches) and a hash join "o.a = i.a" (keys uniform in
 * [0, n), about n matches), n x n rows, on both backends.  keys/s counts
 * the rows of both sides per second of begin_join plus all steps.
 */
static int
bench_sorted(int64_t n)
{
	int64_t    *ovals = xmalloc(sizeof(int64_t) * n);
	int64_t    *ivals = xmalloc(sizeof(int64_t) * n);
	GjJoinInput input;
	Program		band,
				eq,
				lo,
				hi;
	int			which,
				b;
	int64_t		i;
	int			rc = 0;

	memset(&lo, 0, sizeof(lo));
	emit(&lo, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(&lo, GJOP_CONST, 0, 0, 2);
	emit(&lo, GJOP_SUB, GJT_INT8, 0, 0);
	memset(&hi, 0, sizeof(hi));
	emit(&hi, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(&hi, GJOP_CONST, 0, 0, 2);
	emit(&hi, GJOP_ADD, GJT_INT8, 0, 0);
	memset(&band, 0, sizeof(band));
	emit(&band, GJOP_LOAD_INNER, 0, 0, 0);
	memcpy(&band.instrs[1], lo.instrs, sizeof(GjInstr) * 3);
	band.ninstrs = 4;
	emit(&band, GJOP_GE, GJ_CLASS_INT, 0, 0);
	emit(&band, GJOP_LOAD_INNER, 0, 0, 0);
	memcpy(&band.instrs[6], hi.instrs, sizeof(GjInstr) * 3);
	band.ninstrs = 9;
	emit(&band, GJOP_LE, GJ_CLASS_INT, 0, 0);
	emit(&band, GJOP_AND, 0, 0, 0);
	memset(&eq, 0, sizeof(eq));
	emit(&eq, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(&eq, GJOP_LOAD_INNER, 0, 0, 0);
	emit(&eq, GJOP_EQ, GJ_CLASS_INT, 0, 0);

	for (which = 0; which < 2; which++)
	{
		uint64_t	range = which == 0 ? 4 * (uint64_t) n : (uint64_t) n;

		for (i = 0; i < n; i++)
		{
			ovals[i] = (int64_t) (rng() % range);
			ivals[i] = (int64_t) (rng() % range);
		}
		memset(&input, 0, sizeof(input));
		input.outer.ncols = 1;
		input.outer.values[0] = ovals;
		input.outer_nrows = n;
		input.inner.ncols = 1;
		input.inner.values[0] = ivals;
		input.inner_nrows = n;
		input.match_capacity = 4 * n;
		input.budget_bytes = (int64_t) 1 << 34;
		if (which == 0)
		{
			input.algorithm = GJ_ALGO_SORTMERGE;
			input.instrs = band.instrs;
			input.ninstrs = band.ninstrs;
			input.range.inner_col = 0;
			input.range.cls = GJ_CLASS_INT;
			memcpy(input.range.lo_instrs, lo.instrs, sizeof(GjInstr) * lo.ninstrs);
			input.range.lo_ninstrs = lo.ninstrs;
			input.range.lo_inclusive = 1;
			memcpy(input.range.hi_instrs, hi.instrs, sizeof(GjInstr) * hi.ninstrs);
			input.range.hi_ninstrs = hi.ninstrs;
			input.range.hi_inclusive = 1;
		}
		else
		{
			input.algorithm = GJ_ALGO_HASH;
			input.instrs = eq.instrs;
			input.ninstrs = eq.ninstrs;
			input.equi.nkeys = 1;
			input.equi.cls[0] = GJ_CLASS_INT;
			input.filter_needed = 1;
		}
		for (b = 0; b < 2; b++)
		{
			const GjBackend *backend = b == 0 ? &gj_cpu_backend : &gj_cuda_backend;
			double		ms = 0,
						best = 0;
			int64_t		matches = 0,
						steps = 0;
			int			run;

			/* best of 3; the first cuda run also warms up */
			for (run = 0; run < 3; run++)
			{
				if (!bench_sorted_once(backend, &input, &ms, &matches, &steps))
				{
					rc = 1;
					break;
				}
				if (run == 0 || ms < best)
					best = ms;
			}
			printf("%s %s, %lld x %lld rows: %lld matches in %lld steps, %.1f ms = %.3g keys/s\n",
				   backend->name, which == 0 ? "band i.a BETWEEN o.a - 2 AND o.a + 2" :
				   "hash o.a = i.a", (long long) n, (long long) n, (long long) matches,
				   (long long) steps, best, 2.0 * n / (best / 1000.0));
		}
	}
	free(ovals);
	free(ivals);
	return rc;
}

/*
 * startup: what one small join costs the cuda backend however few its rows
 * (begin_join, its steps, end_join), per algorithm, with the match capacity
 * the executor gives a join by default (half the free device memory, a
 * quarter of it for matches: over a billion pairs on an H100).
 */
static int
bench_startup(void)
{
	static const bool nulls[NCOLS] = {false, false, false};
	static const char *const names[] = {"nestloop", "sortmerge", "hash"};
	JoinSpec   *joins = xmalloc(sizeof(JoinSpec) * 64);
	int			njoins = build_joins(joins);
	GjDeviceInfo info;
	GjError		err;
	Side		outer,
				inner;
	Program		lt;
	int			alg;

	memset(&err, 0, sizeof(err));
	if (!gj_cuda_probe(&info, &err))
	{
		printf("no CUDA device: %s\n", err.message);
		return 0;
	}
	make_side(&outer, 10, nulls);
	make_side(&inner, 10, nulls);
	memset(&lt, 0, sizeof(lt));
	emit(&lt, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(&lt, GJOP_LOAD_INNER, 0, 0, 0);
	emit(&lt, GJOP_LT, GJ_CLASS_INT, 0, 0);
	printf("| algorithm | rows | match capacity | ms per join (min) | ms per join (median) |\n");
	printf("| --- | --: | --: | --: | --: |\n");
	for (alg = 0; alg < 3; alg++)
	{
		GjJoinInput input;
		double		ms[31];
		int			rep,
					i;
		const JoinSpec *spec = NULL;

		memset(&input, 0, sizeof(input));
		input.outer = outer.cols;
		input.outer_nrows = outer.nrows;
		input.inner = inner.cols;
		input.inner_nrows = inner.nrows;
		input.match_capacity = info.free_memory / 2 / 4 / 8;
		if (input.match_capacity > GJ_MAX_SIDE_ROWS)
			input.match_capacity = GJ_MAX_SIDE_ROWS;
		input.budget_bytes = info.free_memory / 2;
		input.algorithm = alg == 0 ? GJ_ALGO_NESTLOOP : alg == 1 ? GJ_ALGO_SORTMERGE : GJ_ALGO_HASH;
		input.instrs = lt.instrs;
		input.ninstrs = lt.ninstrs;
		for (i = 0; i < njoins && alg > 0; i++)
			if (joins[i].algorithm == input.algorithm && spec == NULL)
				spec = &joins[i];
		if (spec != NULL)
		{
			input.instrs = spec->program.instrs;
			input.ninstrs = spec->program.ninstrs;
			input.range = spec->range;
			input.equi = spec->equi;
			input.filter_needed = spec->filter_needed;
		}
		for (rep = 0; rep < 31; rep++)
		{
			double		t0 = now_ms();
			void	   *state = gj_cuda_backend.begin_join(&input, &err);
			GjTile		tile = {0, 10, 0, 10};
			int64_t		next = 0;
			GjStats		stats;
			GjMatches	m;

			memset(&stats, 0, sizeof(stats));
			if (state == NULL)
			{
				printf("begin_join failed: %s\n", err.message);
				return 1;
			}
			while (next < tile.outer_end)
			{
				if (!gj_cuda_backend.run_step(state, &tile, &next, &m, &stats, &err))
				{
					printf("run_step failed: %s\n", err.message);
					return 1;
				}
			}
			gj_cuda_backend.end_join(state);
			ms[rep] = now_ms() - t0;
		}
		qsort(ms, 31, sizeof(double), cmp_double);
		printf("| %s | 10 x 10 | %lld | %.3f | %.3f |\n", names[alg],
			   (long long) input.match_capacity, ms[0], ms[15]);
	}
	free_side(&outer);
	free_side(&inner);
	free(joins);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "bench") == 0)
	{
		int64_t		n = argc >= 3 ? atoll(argv[2]) : 1000000;
		int			rc = run_bench(n);

		rc |= bench_sorted(n);
		rc |= bench_sorted(4 * n);
		return rc;
	}
	if (argc >= 2 && strcmp(argv[1], "startup") == 0)
		return bench_startup();
	if (argc >= 2 && strcmp(argv[1], "race") == 0)
		return run_race_tests();
	if (argc >= 2 && strcmp(argv[1], "cpu") == 0)
		return run_cpu_tests();
	return run_tests(argc >= 2 && strcmp(argv[1], "quick") == 0);
}

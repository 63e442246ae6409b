/*-------------------------------------------------------------------------
 *
 * kt_program_count.c
 *	  Per-outer-row counts of any nested-loop program, the row-count path
 *	  of the aggregate step for programs that are not compare conjunctions:
 *	  gj_program_leading_compares (which compares may prefilter), the cpu
 *	  backend's gj_cpu_program_count against a brute-force reference (every
 *	  pair through the whole program), and on a GPU gj_cuda_program_count
 *	  against the cpu (run_program_count_tests); agg_step over such a
 *	  program on both backends; run_step's pairs after the same prefilter
 *	  on both; and their speed (bench_program_count).
 *
 *	  The programs put random compare conjunctions in front of quals that
 *	  the prefilter cannot read: int4 and int8 sums that overflow (pairs
 *	  for the host), float products that overflow or underflow, an OR with
 *	  IS NULL, a NOT; and the shapes where nothing may prefilter (another
 *	  qual first, an OR over the compares).  The sides are kt_rowcount.c's:
 *	  NULLs, int4 and int8 extremes, NaN, -0.0, infinities.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kt_common.h"
#include "kernels/shared/kernel_store.h"
#include "kernels/cpu/cpu_internal.h"

/* The test hook of cuda/cuda_compile.cu: where NVRTC is, or "". */
extern const char *gj_cuda_test_nvrtc_path(void);
extern void gj_cuda_test_set_quick_only(bool on);

/*
 * How the cuda checks run the program: GJ_COMPILE_OFF (the interpreter)
 * or GJ_COMPILE_ALWAYS (compiled to GPU code, whatever the size: a check
 * fails if it ran interpreted).
 */
static int	pc_compile = GJ_COMPILE_OFF;

/* The cuda joins' programs compiled and loaded from the kernel store. */
static int64_t pc_programs_compiled;
static int64_t pc_programs_loaded;

/* What the cuda checks' names say they ran. */
static const char *
pc_cuda_label(void)
{
	return pc_compile == GJ_COMPILE_ALWAYS ?
		" (cpu, cuda compiled, per row and total)" : " (cpu, cuda per row and total)";
}

/*
 * Did a cuda join run its program as pc_compile says?  false with a
 * message where a compiled run interpreted a step.
 */
static bool
pc_ran_as_asked(const GjStats *stats, const char *what)
{
	if (pc_compile != GJ_COMPILE_ALWAYS || stats->program_steps_interpreted == 0)
		return true;
	printf("# %s: %lld steps interpreted (why %d), not compiled\n", what,
		   (long long) stats->program_steps_interpreted, stats->interpreted_why);
	return false;
}

#define PC_OUTER	400
#define PC_INNER	3000
#define PC_PER_TEST 10			/* random programs per test */

/* How the leading compares and the other quals are put together. */
typedef enum PcShape
{
	PC_LEAD_FIRST,				/* compares, then quals ANDed on: left-deep */
	PC_LEAD_NESTED,				/* compares AND (qual AND qual): right-nested */
	PC_QUAL_FIRST,				/* a qual, then the compares: no prefilter */
	PC_LEAD_OR,					/* the compares ORed with a qual: no prefilter */
	PC_NSHAPES
} PcShape;

static const char *const pc_shape_names[] = {
	"compares first, quals ANDed after", "compares AND (qual AND qual)",
	"a qual before the compares (no prefilter)", "compares OR a qual (no prefilter)"
};

/* Append program b to a. */
static void
pc_append(Program *a, const Program *b)
{
	memcpy(&a->instrs[a->ninstrs], b->instrs, sizeof(GjInstr) * b->ninstrs);
	a->ninstrs += b->ninstrs;
}

/*
 * A random qual the prefilter cannot read (rowcount_col_class: columns 2
 * and 3 are floats, the others integers; 4 and 6 hold int4 extremes, 0
 * int8 ones).
 */
static void
pc_random_qual(Program *q)
{
	memset(q, 0, sizeof(Program));
	switch (rng() % 8)
	{
		case 0:					/* o.c4 + i.c6 > 3, int4: overflows */
			emit(q, GJOP_LOAD_OUTER, GJT_INT4, 4, 0);
			emit(q, GJOP_LOAD_INNER, GJT_INT4, 6, 0);
			emit(q, GJOP_ADD, GJT_INT4, 0, 0);
			emit(q, GJOP_CONST, GJT_INT4, 0, 3);
			emit(q, GJOP_GT, GJ_CLASS_INT, 0, 0);
			break;
		case 1:					/* i.c2 * o.c3 < 1.5: overflow, underflow */
			emit(q, GJOP_LOAD_INNER, GJT_FLOAT8, 2, 0);
			emit(q, GJOP_LOAD_OUTER, GJT_FLOAT8, 3, 0);
			emit(q, GJOP_MUL, GJT_FLOAT8, 0, 0);
			emit(q, GJOP_CONST, GJT_FLOAT8, 0, dbits(1.5));
			emit(q, GJOP_LT, GJ_CLASS_FLOAT, 0, 0);
			break;
		case 2:					/* o.c1 = i.c5 OR i.c0 IS NULL */
			emit(q, GJOP_LOAD_OUTER, GJT_INT8, 1, 0);
			emit(q, GJOP_LOAD_INNER, GJT_INT8, 5, 0);
			emit(q, GJOP_EQ, GJ_CLASS_INT, 0, 0);
			emit(q, GJOP_LOAD_INNER, GJT_INT8, 0, 0);
			emit(q, GJOP_IS_NULL, GJT_BOOL, 0, 0);
			emit(q, GJOP_OR, GJT_BOOL, 0, 0);
			break;
		case 3:					/* NOT (o.c0 <> i.c4): NULL stays NULL */
			emit(q, GJOP_LOAD_OUTER, GJT_INT8, 0, 0);
			emit(q, GJOP_LOAD_INNER, GJT_INT8, 4, 0);
			emit(q, GJOP_NE, GJ_CLASS_INT, 0, 0);
			emit(q, GJOP_NOT, GJT_BOOL, 0, 0);
			break;
		case 4:					/* o.c5 - i.c1 >= 0 */
			emit(q, GJOP_LOAD_OUTER, GJT_INT8, 5, 0);
			emit(q, GJOP_LOAD_INNER, GJT_INT8, 1, 0);
			emit(q, GJOP_SUB, GJT_INT8, 0, 0);
			emit(q, GJOP_CONST, GJT_INT8, 0, 0);
			emit(q, GJOP_GE, GJ_CLASS_INT, 0, 0);
			break;
		case 6:					/* o.c4 - i.c1 * 3 < o.c6 / (i.c5 - 2), int4 */
			emit(q, GJOP_LOAD_OUTER, GJT_INT4, 4, 0);
			emit(q, GJOP_LOAD_INNER, GJT_INT4, 1, 0);
			emit(q, GJOP_CONST, GJT_INT4, 0, 3);
			emit(q, GJOP_MUL, GJT_INT4, 0, 0);
			emit(q, GJOP_SUB, GJT_INT4, 0, 0);
			emit(q, GJOP_LOAD_OUTER, GJT_INT4, 6, 0);
			emit(q, GJOP_LOAD_INNER, GJT_INT4, 5, 0);
			emit(q, GJOP_CONST, GJT_INT4, 0, 2);
			emit(q, GJOP_SUB, GJT_INT4, 0, 0);
			emit(q, GJOP_DIV, GJT_INT4, 0, 0);
			emit(q, GJOP_LT, GJ_CLASS_INT, 0, 0);
			break;
		case 7:					/* abs(o.c1 + i.c5) % 5 = -i.c1, int2 */
			emit(q, GJOP_LOAD_OUTER, GJT_INT2, 1, 0);
			emit(q, GJOP_LOAD_INNER, GJT_INT2, 5, 0);
			emit(q, GJOP_ADD, GJT_INT2, 0, 0);
			emit(q, GJOP_ABS, GJT_INT2, 0, 0);
			emit(q, GJOP_CONST, GJT_INT2, 0, 5);
			emit(q, GJOP_MOD, GJT_INT2, 0, 0);
			emit(q, GJOP_LOAD_INNER, GJT_INT2, 1, 0);
			emit(q, GJOP_NEG, GJT_INT2, 0, 0);
			emit(q, GJOP_EQ, GJ_CLASS_INT, 0, 0);
			break;
		default:				/* o.c0 + i.c0 > 0, int8: overflows */
			emit(q, GJOP_LOAD_OUTER, GJT_INT8, 0, 0);
			emit(q, GJOP_LOAD_INNER, GJT_INT8, 0, 0);
			emit(q, GJOP_ADD, GJT_INT8, 0, 0);
			emit(q, GJOP_CONST, GJT_INT8, 0, 0);
			emit(q, GJOP_GT, GJ_CLASS_INT, 0, 0);
			break;
	}
}

/*
 * A random program of a shape: 1 to 3 random compares (ANDed in a random
 * tree, rowcount_random_conjunction) and one or two random quals.  *lead
 * receives the compares the shape lets prefilter (none for the last two).
 */
static void
pc_random_program(PcShape shape, Program *prog, GjCompareConjunction *lead)
{
	Program		compares,
				q1,
				q2;

	rowcount_random_conjunction(1 + (int) (rng() % 3), lead, &compares);
	pc_random_qual(&q1);
	pc_random_qual(&q2);
	memset(prog, 0, sizeof(Program));
	prog->name = pc_shape_names[shape];
	switch (shape)
	{
		case PC_LEAD_FIRST:
			pc_append(prog, &compares);
			pc_append(prog, &q1);
			emit(prog, GJOP_AND, GJT_BOOL, 0, 0);
			if (rng() % 2)
			{
				pc_append(prog, &q2);
				emit(prog, GJOP_AND, GJT_BOOL, 0, 0);
			}
			break;
		case PC_LEAD_NESTED:
			pc_append(prog, &compares);
			pc_append(prog, &q1);
			pc_append(prog, &q2);
			emit(prog, GJOP_AND, GJT_BOOL, 0, 0);
			emit(prog, GJOP_AND, GJT_BOOL, 0, 0);
			break;
		case PC_QUAL_FIRST:
			pc_append(prog, &q1);
			pc_append(prog, &compares);
			emit(prog, GJOP_AND, GJT_BOOL, 0, 0);
			lead->n = 0;
			break;
		default:
			pc_append(prog, &compares);
			pc_append(prog, &q1);
			emit(prog, GJOP_OR, GJT_BOOL, 0, 0);
			lead->n = 0;
			break;
	}
}

/* A random program of a shape (PcShape), for kt_compiled.c. */
void
program_count_random_program(int shape, Program *prog)
{
	GjCompareConjunction lead;

	pc_random_program((PcShape) shape, prog, &lead);
}

/*
 * A side of rowcount_make_side's columns (their classes and types) whose
 * values change band by band: in a band of rows that is clean the integer
 * columns hold small values (no int4 step of the int programs below can
 * overflow: a compiled kernel proves that and counts those chunks without
 * the tests for errors), in every dirty_every-th band int4 and int8
 * extremes (they overflow: the tests run, pairs go to the host).  About
 * 5% NULLs in the even columns; float columns in [-10, 10].
 */
void
program_count_banded_side(Side *side, int64_t nrows, int64_t band, int dirty_every)
{
	static const int64_t extremes[] = {
		INT32_MIN, INT32_MIN + 1, INT32_MAX - 1, INT32_MAX, -1, 0, 1, 46341, -46341, 65536
	};

	memset(side, 0, sizeof(Side));
	side->nrows = nrows;
	side->cols.ncols = 7;
	for (int c = 0; c < 7; c++)
	{
		int64_t    *values = xmalloc(sizeof(int64_t) * nrows);
		uint8_t    *isnull = (c % 2 == 0) ? xmalloc(nrows) : NULL;
		int			type = rowcount_col_type(c);

		for (int64_t i = 0; i < nrows; i++)
		{
			bool		dirty = (i / band) % dirty_every == dirty_every - 1;
			int64_t		v;

			if (type == GJT_FLOAT8)
				v = dbits((double) ((int64_t) (rng() % 2001) - 1000) / 100.0);
			else if (dirty && rng() % 4 == 0)
				v = c == 0 ? (rng() % 2 ? INT64_MAX - (int64_t) (rng() % 3) :
							  INT64_MIN + (int64_t) (rng() % 3)) :
					extremes[rng() % (sizeof(extremes) / sizeof(extremes[0]))];
			else
				v = (c == 1 || c == 5) ? (int64_t) (rng() % 17) - 8 :
					(int64_t) (rng() % 2001) - 1000;
			values[i] = v;
			if (isnull != NULL)
			{
				isnull[i] = rng() % 20 == 0;
				if (isnull[i])
					values[i] = (int64_t) rng();	/* garbage: nobody may look */
			}
		}
		side->cols.values[c] = values;
		side->cols.isnull[c] = isnull;
	}
}

/*
 * Hand-written integer programs over those columns, each in turn through
 * one kind of step a compiled kernel runs in 32 or 64 bits (issue 37's
 * three quals, int4 -, *, /, %, -x, abs, int2, int8 and its narrowing, a
 * NULL constant); returns how many.
 */
int
program_count_int_programs(Program *progs)
{
	int			n = 0;
	Program    *p;

#define PC_LOAD(side, type, col) emit(p, (side) == 'o' ? GJOP_LOAD_OUTER : GJOP_LOAD_INNER, \
									  type, col, 0)
	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "o.c4 < i.c4 AND o.c6 > i.c6 AND o.c4 + i.c6 > 0 (int4)";
	PC_LOAD('o', GJT_INT4, 4);
	PC_LOAD('i', GJT_INT4, 4);
	emit(p, GJOP_LT, GJ_CLASS_INT, 0, 0);
	PC_LOAD('o', GJT_INT4, 6);
	PC_LOAD('i', GJT_INT4, 6);
	emit(p, GJOP_GT, GJ_CLASS_INT, 0, 0);
	emit(p, GJOP_AND, GJT_BOOL, 0, 0);
	PC_LOAD('o', GJT_INT4, 4);
	PC_LOAD('i', GJT_INT4, 6);
	emit(p, GJOP_ADD, GJT_INT4, 0, 0);
	emit(p, GJOP_CONST, GJT_INT4, 0, 0);
	emit(p, GJOP_GT, GJ_CLASS_INT, 0, 0);
	emit(p, GJOP_AND, GJT_BOOL, 0, 0);

	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "o.c4 - i.c6 < 5 (int4)";
	PC_LOAD('o', GJT_INT4, 4);
	PC_LOAD('i', GJT_INT4, 6);
	emit(p, GJOP_SUB, GJT_INT4, 0, 0);
	emit(p, GJOP_CONST, GJT_INT4, 0, 5);
	emit(p, GJOP_LT, GJ_CLASS_INT, 0, 0);

	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "o.c4 * i.c6 > 100 AND o.c1 < i.c5 (int4)";
	PC_LOAD('o', GJT_INT4, 4);
	PC_LOAD('i', GJT_INT4, 6);
	emit(p, GJOP_MUL, GJT_INT4, 0, 0);
	emit(p, GJOP_CONST, GJT_INT4, 0, 100);
	emit(p, GJOP_GT, GJ_CLASS_INT, 0, 0);
	PC_LOAD('o', GJT_INT4, 1);
	PC_LOAD('i', GJT_INT4, 5);
	emit(p, GJOP_LT, GJ_CLASS_INT, 0, 0);
	emit(p, GJOP_AND, GJT_BOOL, 0, 0);

	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "o.c1 < i.c1 AND i.c6 / (o.c5 + 20) >= o.c1 (int4)";
	PC_LOAD('o', GJT_INT4, 1);
	PC_LOAD('i', GJT_INT4, 1);
	emit(p, GJOP_LT, GJ_CLASS_INT, 0, 0);
	PC_LOAD('i', GJT_INT4, 6);
	PC_LOAD('o', GJT_INT4, 5);
	emit(p, GJOP_CONST, GJT_INT4, 0, 20);
	emit(p, GJOP_ADD, GJT_INT4, 0, 0);
	emit(p, GJOP_DIV, GJT_INT4, 0, 0);
	PC_LOAD('o', GJT_INT4, 1);
	emit(p, GJOP_GE, GJ_CLASS_INT, 0, 0);
	emit(p, GJOP_AND, GJT_BOOL, 0, 0);

	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "o.c4 % i.c5 <> 0 (int4, divisor 0)";
	PC_LOAD('o', GJT_INT4, 4);
	PC_LOAD('i', GJT_INT4, 5);
	emit(p, GJOP_MOD, GJT_INT4, 0, 0);
	emit(p, GJOP_CONST, GJT_INT4, 0, 0);
	emit(p, GJOP_NE, GJ_CLASS_INT, 0, 0);

	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "-o.c4 + abs(i.c6) > o.c6 (int4)";
	PC_LOAD('o', GJT_INT4, 4);
	emit(p, GJOP_NEG, GJT_INT4, 0, 0);
	PC_LOAD('i', GJT_INT4, 6);
	emit(p, GJOP_ABS, GJT_INT4, 0, 0);
	emit(p, GJOP_ADD, GJT_INT4, 0, 0);
	PC_LOAD('o', GJT_INT4, 6);
	emit(p, GJOP_GT, GJ_CLASS_INT, 0, 0);

	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "o.c0 < i.c0 AND o.c0 * i.c0 > o.c0 - i.c0 (int8)";
	PC_LOAD('o', GJT_INT8, 0);
	PC_LOAD('i', GJT_INT8, 0);
	emit(p, GJOP_LT, GJ_CLASS_INT, 0, 0);
	PC_LOAD('o', GJT_INT8, 0);
	PC_LOAD('i', GJT_INT8, 0);
	emit(p, GJOP_MUL, GJT_INT8, 0, 0);
	PC_LOAD('o', GJT_INT8, 0);
	PC_LOAD('i', GJT_INT8, 0);
	emit(p, GJOP_SUB, GJT_INT8, 0, 0);
	emit(p, GJOP_GT, GJ_CLASS_INT, 0, 0);
	emit(p, GJOP_AND, GJT_BOOL, 0, 0);

	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "(o.c0 + i.c0)::int4 < i.c4 (int8 narrowed)";
	PC_LOAD('o', GJT_INT8, 0);
	PC_LOAD('i', GJT_INT8, 0);
	emit(p, GJOP_ADD, GJT_INT8, 0, 0);
	emit(p, GJOP_INT_NARROW, GJT_INT4, 0, 0);
	PC_LOAD('i', GJT_INT4, 4);
	emit(p, GJOP_LT, GJ_CLASS_INT, 0, 0);

	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "o.c1 * i.c5 + o.c5 < 20 (int2)";
	PC_LOAD('o', GJT_INT2, 1);
	PC_LOAD('i', GJT_INT2, 5);
	emit(p, GJOP_MUL, GJT_INT2, 0, 0);
	PC_LOAD('o', GJT_INT2, 5);
	emit(p, GJOP_ADD, GJT_INT2, 0, 0);
	emit(p, GJOP_CONST, GJT_INT2, 0, 20);
	emit(p, GJOP_LT, GJ_CLASS_INT, 0, 0);

	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "o.c6 < i.c6 AND (o.c4 + NULL::int4 > 0 OR o.c4 - i.c4 > 7) (int4)";
	PC_LOAD('o', GJT_INT4, 6);
	PC_LOAD('i', GJT_INT4, 6);
	emit(p, GJOP_LT, GJ_CLASS_INT, 0, 0);
	PC_LOAD('o', GJT_INT4, 4);
	emit(p, GJOP_CONST_NULL, GJT_INT4, 0, 0);
	emit(p, GJOP_ADD, GJT_INT4, 0, 0);
	emit(p, GJOP_CONST, GJT_INT4, 0, 0);
	emit(p, GJOP_GT, GJ_CLASS_INT, 0, 0);
	PC_LOAD('o', GJT_INT4, 4);
	PC_LOAD('i', GJT_INT4, 4);
	emit(p, GJOP_SUB, GJT_INT4, 0, 0);
	emit(p, GJOP_CONST, GJT_INT4, 0, 7);
	emit(p, GJOP_GT, GJ_CLASS_INT, 0, 0);
	emit(p, GJOP_OR, GJT_BOOL, 0, 0);
	emit(p, GJOP_AND, GJT_BOOL, 0, 0);

	/*
	 * Leading compares of an int8 column and an int4 column kept in 32 bits
	 * (their keys in 64 bits, the int4 side sign-extended), on either side.
	 */
	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "o.c0 < i.c4 AND i.c0 >= o.c6 AND o.c6 + i.c4 > 0 (int8 against int4)";
	PC_LOAD('o', GJT_INT8, 0);
	PC_LOAD('i', GJT_INT4, 4);
	emit(p, GJOP_LT, GJ_CLASS_INT, 0, 0);
	PC_LOAD('i', GJT_INT8, 0);
	PC_LOAD('o', GJT_INT4, 6);
	emit(p, GJOP_GE, GJ_CLASS_INT, 0, 0);
	emit(p, GJOP_AND, GJT_BOOL, 0, 0);
	PC_LOAD('o', GJT_INT4, 6);
	PC_LOAD('i', GJT_INT4, 4);
	emit(p, GJOP_ADD, GJT_INT4, 0, 0);
	emit(p, GJOP_CONST, GJT_INT4, 0, 0);
	emit(p, GJOP_GT, GJ_CLASS_INT, 0, 0);
	emit(p, GJOP_AND, GJT_BOOL, 0, 0);
#undef PC_LOAD
	return n;
}

#define PC_MAX_INT_PROGRAMS 16

/* Does compare k of conj hold for the pair (the interpreter decides)? */
static bool
pc_compare_holds(const GjSimpleCompare *sc, const Side *outer, int64_t o, const Side *inner,
				 int64_t i)
{
	GjInstr		one[3];

	memset(one, 0, sizeof(one));
	one[0].op = GJOP_LOAD_OUTER;
	one[0].arg = sc->outer_col;
	one[1].op = GJOP_LOAD_INNER;
	one[1].arg = sc->inner_col;
	one[2].op = sc->op;
	one[2].type = sc->cls;
	return gj_program_eval(one, 3, &outer->cols, o, &inner->cols, i) == GJ_RESULT_TRUE;
}

/*
 * The reference: every pair through the whole program.  counts[] gets each
 * row's TRUE pairs; *host the RECHECK pairs that pass the leading compares
 * (those the prefilter drops the host would drop too).
 */
static void
pc_reference(const Side *outer, const Side *inner, const Program *prog,
			 const GjCompareConjunction *lead, const GjTile *tile, int64_t o_begin,
			 int64_t o_end, uint64_t *counts, uint64_t *host)
{
	*host = 0;
	for (int64_t o = o_begin; o < o_end; o++)
	{
		uint64_t	c = 0;

		for (int64_t i = tile->inner_begin; i < tile->inner_end; i++)
		{
			int			r = gj_program_eval(prog->instrs, prog->ninstrs, &outer->cols, o,
											&inner->cols, i);
			bool		passes = true;

			for (int k = 0; k < lead->n && passes; k++)
				passes = pc_compare_holds(&lead->cmp[k], outer, o, inner, i);
			c += r == GJ_RESULT_TRUE;
			*host += r == GJ_RESULT_RECHECK && passes;
		}
		counts[o - o_begin] = c;
	}
}

/*
 * Count outer rows [o_begin, o_end) of a tile on cuda: per row (counts) or
 * the total only (counts NULL); false with a message when it failed.
 */
static bool
pc_cuda_count(const GjJoinInput *input, const GjTile *tile, int64_t o_begin, int64_t o_end,
			  uint64_t *counts, uint64_t *total, uint64_t *host)
{
	GjError		err;
	GjStats		stats;
	void	   *state;
	bool		ok;

	GjJoinInput as_asked = *input;

	memset(&err, 0, sizeof(err));
	memset(&stats, 0, sizeof(stats));
	as_asked.compile_programs = pc_compile;
	state = gj_cuda_backend.begin_join(&as_asked, &err);
	ok = state != NULL &&
		gj_cuda_test_program_count(state, tile, o_begin, o_end - o_begin, counts, total, host,
								   &stats, &err);
	if (!ok)
		printf("# cuda program count failed: %s\n", err.message);
	ok = ok && pc_ran_as_asked(&stats, "cuda program count");
	pc_programs_compiled += stats.programs_compiled;
	pc_programs_loaded += stats.programs_loaded;
	if (state != NULL)
		gj_cuda_backend.end_join(state);
	return ok;
}

/*
 * One program over one tile: the cpu against the reference, and with cuda
 * cuda (per row, and the total only) against the cpu.  false with a message
 * where they differ.
 */
static bool
pc_check(const Side *outer, const Side *inner, const Program *prog,
		 const GjCompareConjunction *lead, const GjTile *tile, bool cuda)
{
	int64_t		o_begin = tile->outer_begin;
	int64_t		rows = tile->outer_end - o_begin;
	uint64_t   *want = xmalloc(sizeof(uint64_t) * (rows + 1));
	uint64_t   *got = xmalloc(sizeof(uint64_t) * (rows + 1));
	uint64_t	want_host,
				host = 0,
				total = 0,
				sum = 0;
	GjLeadingCompares parsed;
	GjJoinInput input;
	bool		ok = true;
	const char *who = "cpu";

	rowcount_input(&input, outer, inner, prog);
	gj_program_leading_compares(prog->instrs, prog->ninstrs, &parsed);
	if (parsed.conj.n != lead->n)
	{
		printf("# %s: %d leading compares found, %d expected\n", prog->name, parsed.conj.n,
			   lead->n);
		ok = false;
	}
	pc_reference(outer, inner, prog, lead, tile, o_begin, tile->outer_end, want, &want_host);
	got[rows] = UINT64_C(0xeeeeeeeeeeeeeeee);
	if (ok && !gj_cpu_program_count(&input, tile, o_begin, tile->outer_end, got, &host))
	{
		printf("# gj_cpu_program_count ran out of memory\n");
		ok = false;
	}
	/* with cuda, once the cpu matches the reference, cuda against both */
	if (ok && cuda && memcmp(want, got, sizeof(uint64_t) * rows) == 0 && host == want_host)
	{
		uint64_t	cpu_host = host;

		who = "cuda";
		memset(got, 0xee, sizeof(uint64_t) * (rows + 1));
		ok = pc_cuda_count(&input, tile, o_begin, tile->outer_end, got, &total, &host);
		for (int64_t k = 0; ok && k < rows; k++)
			sum += got[k];
		if (ok && (sum != total || host != cpu_host))
		{
			printf("# cuda: total %llu, the counts sum to %llu; host pairs %llu, "
				   "the cpu's %llu\n", (unsigned long long) total,
				   (unsigned long long) sum, (unsigned long long) host,
				   (unsigned long long) cpu_host);
			ok = false;
		}
		if (ok && (!pc_cuda_count(&input, tile, o_begin, tile->outer_end, NULL, &total,
								  &host) || total != sum || host != cpu_host))
		{
			printf("# cuda, total only: %llu, host pairs %llu\n",
				   (unsigned long long) total, (unsigned long long) host);
			ok = false;
		}
	}
	if (ok && got[rows] != UINT64_C(0xeeeeeeeeeeeeeeee))
	{
		printf("# %s wrote past the last row's count\n", who);
		ok = false;
	}
	for (int64_t k = 0; ok && k < rows; k++)
	{
		if (want[k] != got[k])
		{
			printf("# %s, %s (%d instructions), inner [%lld, %lld): outer row %lld counts "
				   "%llu, the reference %llu\n", who, prog->name, prog->ninstrs,
				   (long long) tile->inner_begin, (long long) tile->inner_end,
				   (long long) (o_begin + k), (unsigned long long) got[k],
				   (unsigned long long) want[k]);
			ok = false;
		}
	}
	if (ok && host != want_host)
	{
		printf("# %s, %s: %llu host pairs, the reference %llu\n", who, prog->name,
			   (unsigned long long) host, (unsigned long long) want_host);
		ok = false;
	}
	free(want);
	free(got);
	return ok;
}

/* A random sub-tile: inner ranges starting anywhere, sometimes at 0. */
static void
pc_random_tile(int64_t outer_rows, int64_t inner_rows, GjTile *tile)
{
	int64_t		a = rng() % 3 == 0 ? 0 : (int64_t) (rng() % (inner_rows / 2));

	tile->inner_begin = a;
	tile->inner_end = rng() % 3 == 0 ? inner_rows : a + (int64_t) (rng() % (inner_rows - a + 1));
	tile->outer_begin = (int64_t) (rng() % (outer_rows / 4));
	tile->outer_end = outer_rows - (int64_t) (rng() % 7);
}

/* The leading compares of hand-written programs. */
static void
pc_test_parse(void)
{
	static const struct
	{
		const char *shape;		/* c: a compare; q: a qual; a: AND; o: OR; n: NOT */
		int			lead;
	}			cases[] = {
		{"ccaqa", 2}, {"cqa", 1}, {"ccqaa", 2}, {"cqqaa", 1}, {"qca", 0}, {"cqo", 0},
		{"ccao", 0}, {"cn", 0}, {"cnqa", 0}, {"cca", 2}, {"ccacqa", 0}, {"cccqaaa", 3},
		{"ccaccaaqa", 4}, {"cccccaaaaqa", 4}, {"ccqo", 0}, {"ccacna", 2}, {"qcaca", 0}, {"cqaca", 1}, {"q", 0}
	};
	bool		ok = true;

	for (size_t t = 0; t < sizeof(cases) / sizeof(cases[0]); t++)
	{
		Program		p;
		GjLeadingCompares lead;

		memset(&p, 0, sizeof(p));
		for (const char *s = cases[t].shape; *s; s++)
		{
			if (*s == 'c')
			{
				emit(&p, GJOP_LOAD_OUTER, GJT_INT8, 1, 0);
				emit(&p, GJOP_LOAD_INNER, GJT_INT8, 5, 0);
				emit(&p, GJOP_LT, GJ_CLASS_INT, 0, 0);
			}
			else if (*s == 'q')
			{
				emit(&p, GJOP_LOAD_OUTER, GJT_INT8, 1, 0);
				emit(&p, GJOP_CONST, GJT_INT8, 0, 1);
				emit(&p, GJOP_ADD, GJT_INT8, 0, 0);
				emit(&p, GJOP_LOAD_INNER, GJT_INT8, 5, 0);
				emit(&p, GJOP_LT, GJ_CLASS_INT, 0, 0);
			}
			else
				emit(&p, *s == 'a' ? GJOP_AND : *s == 'o' ? GJOP_OR : GJOP_NOT, GJT_BOOL, 0, 0);
		}
		gj_program_leading_compares(p.instrs, p.ninstrs, &lead);
		/* a pure conjunction counts too: the caller takes cpu_rowcount first */
		if (lead.conj.n != cases[t].lead ||
			(lead.conj.n == 0 && (lead.pc != 0 || lead.depth != 0)))
		{
			printf("# %s: %d leading compares (pc %d, depth %d), %d expected\n",
				   cases[t].shape, lead.conj.n, lead.pc, lead.depth, cases[t].lead);
			ok = false;
		}
	}
	report(ok, "%s%s", "program count: the leading compares of hand-written programs",
		   " (ANDs left-deep and nested, ORs, NOTs, quals first, more than four)");
}

/* PC_PER_TEST random programs of a shape over random sub-tiles. */
static void
pc_test_random(const Side *outer, const Side *inner, PcShape shape, bool cuda)
{
	bool		ok = true;

	for (int t = 0; t < PC_PER_TEST && ok; t++)
	{
		Program		prog;
		GjCompareConjunction lead;
		GjTile		tile;

		pc_random_program(shape, &prog, &lead);
		pc_random_tile(outer->nrows, inner->nrows, &tile);
		ok = pc_check(outer, inner, &prog, &lead, &tile, cuda);
	}
	report(ok, "program count%s: %s, against every pair through the program",
		   cuda ? pc_cuda_label() : " (cpu)", pc_shape_names[shape]);
}

/* Every nested-loop program of kt_specs.c, over one sub-tile. */
static void
pc_test_spec_programs(bool cuda)
{
	Program    *progs = xmalloc(sizeof(Program) * 64);
	int			nprogs = build_programs(progs);
	bool		with_nulls[NCOLS] = {true, true, false};
	Side		outer,
				inner;
	GjTile		tile = {3, 700, 5, 1900};
	bool		ok = true;

	make_side(&outer, 700, with_nulls);
	make_side(&inner, 2000, with_nulls);
	for (int i = 0; i < nprogs && ok; i++)
	{
		GjLeadingCompares lead;

		gj_program_leading_compares(progs[i].instrs, progs[i].ninstrs, &lead);
		ok = pc_check(&outer, &inner, &progs[i], &lead.conj, &tile, cuda);
	}
	free_side(&outer);
	free_side(&inner);
	free(progs);
	report(ok, "program count%s: kernel_test's nested-loop programs, against every pair%s",
		   cuda ? pc_cuda_label() : " (cpu)", "");
}

/*
 * agg_step over one program with an aggregate of outer rows only (count(*)
 * and sum/min/max of an outer int8): the cpu backend's partial against the
 * reference counts, and cuda's against the cpu's, with the pairs each sent
 * to the host; over a schedule of several tiles.  Where a step has a pair
 * for the host, it runs as pairs: the partial then lacks those.  (lead is
 * not needed here: the checks of pc_each_program share one signature.)
 */
static bool
pc_agg_check(const Side *outer, const Side *inner, const Program *prog,
			 const GjCompareConjunction *lead, bool cuda)
{
	Schedule	s = {"4 x 3 tiles", outer->nrows, inner->nrows, outer->nrows / 4 + 1,
	inner->nrows / 3 + 1, inner->nrows};
	GjAggSpec	spec;
	uint8_t    *flags = xmalloc(outer->nrows);
	GjJoinInput input;
	GjError		err;
	AggRun	   *cpu = xmalloc(sizeof(AggRun));
	AggRun	   *gpu = xmalloc(sizeof(AggRun));
	bool		ok;

	memset(&spec, 0, sizeof(spec));
	for (int64_t r = 0; r < outer->nrows; r++)
		flags[r] = GJ_AGG_ROW_VALUE;
	spec.nargs = 1;
	spec.ngroups = 1;
	spec.args[0].side = GJ_AGG_SIDE_OUTER;
	spec.args[0].cls = GJ_CLASS_INT;
	spec.args[0].need_sum = 1;
	spec.args[0].need_minmax = 1;
	spec.args[0].values = outer->cols.values[5];
	spec.args[0].flags = flags;
	rowcount_input(&input, outer, inner, prog);
	memset(&err, 0, sizeof(err));
	ok = run_agg_schedule(&gj_cpu_backend, &input, &s, &spec, cpu, &err);
	if (!ok)
		printf("# cpu agg_step failed: %s\n", err.message);
	if (ok && cuda)
	{
		input.compile_programs = pc_compile;
		memset(gpu, 0, sizeof(AggRun));
		ok = run_agg_schedule(&gj_cuda_backend, &input, &s, &spec, gpu, &err);
		if (!ok)
			printf("# cuda agg_step failed: %s\n", err.message);
		ok = ok && pc_ran_as_asked(&gpu->pairs.stats, "cuda agg_step");
		ok = ok && cpu->partial.pairs == gpu->partial.pairs &&
			cpu->partial.acc[0].count == gpu->partial.acc[0].count &&
			cpu->partial.acc[0].isum == gpu->partial.acc[0].isum &&
			cpu->partial.acc[0].min_key == gpu->partial.acc[0].min_key &&
			cpu->partial.acc[0].max_key == gpu->partial.acc[0].max_key &&
			cpu->partial.acc[0].has_minmax == gpu->partial.acc[0].has_minmax &&
			cpu->pairs.n == gpu->pairs.n &&
			(cpu->pairs.n == 0 ||
			 memcmp(cpu->pairs.pairs, gpu->pairs.pairs, sizeof(uint64_t) * cpu->pairs.n) == 0);
		if (!ok)
			printf("# %s: cpu %lld pairs folded, %lld to the host; cuda %lld, %lld\n",
				   prog->name, (long long) cpu->partial.pairs, (long long) cpu->pairs.n,
				   (long long) gpu->partial.pairs, (long long) gpu->pairs.n);
		free(gpu->pairs.pairs);
	}
	else if (ok)
	{
		GjTile		all = {0, outer->nrows, 0, inner->nrows};
		uint64_t   *want = xmalloc(sizeof(uint64_t) * outer->nrows);
		uint64_t	host = 0,
					pairs = 0;
		GjCompareConjunction none = {0};

		/* no host pair anywhere: the fold saw them all */
		pc_reference(outer, inner, prog, &none, &all, 0, outer->nrows, want, &host);
		for (int64_t r = 0; r < outer->nrows; r++)
			pairs += want[r];
		if (host == 0 && (uint64_t) cpu->partial.pairs != pairs)
		{
			printf("# %s: cpu folded %lld pairs, the reference %llu\n", prog->name,
				   (long long) cpu->partial.pairs, (unsigned long long) pairs);
			ok = false;
		}
		free(want);
	}
	free(cpu->pairs.pairs);
	free(cpu);
	free(gpu);
	free(flags);
	return ok;
}

/* PC_PER_TEST random programs, every shape in turn, through one check. */
static bool
pc_each_program(const Side *outer, const Side *inner, bool cuda,
				bool (*check) (const Side *, const Side *, const Program *,
							   const GjCompareConjunction *, bool))
{
	bool		ok = true;

	for (int t = 0; t < PC_PER_TEST && ok; t++)
	{
		Program		prog;
		GjCompareConjunction lead;

		pc_random_program((PcShape) (t % PC_NSHAPES), &prog, &lead);
		ok = check(outer, inner, &prog, &lead, cuda);
	}
	return ok;
}

static void
pc_test_agg(const Side *outer, const Side *inner, bool cuda)
{
	report(pc_each_program(outer, inner, cuda, pc_agg_check),
		   "program count: agg_step of count(*), sum, min and max of an outer column%s%s",
		   !cuda ? " against the reference" : pc_compile == GJ_COMPILE_ALWAYS ?
		   " on cpu and cuda compiled, equal partials and host pairs" :
		   " on cpu and cuda, equal partials and host pairs",
		   ", over 4 x 3 tiles");
}

/*
 * run_step over one program on 3 x 2 tiles: the cpu backend's pairs (with
 * their recheck flags) against the reference, every pair through the whole
 * program, the recheck pairs those that pass the leading compares; with
 * cuda, its pairs against the cpu's.
 */
static bool
pc_run_step_check(const Side *outer, const Side *inner, const Program *prog,
				  const GjCompareConjunction *lead, bool cuda)
{
	Schedule	s = {"3 x 2 tiles", outer->nrows, inner->nrows, outer->nrows / 3 + 1,
	inner->nrows / 2 + 1, inner->nrows};
	GjJoinInput input;
	GjError		err;
	PairSet		want,
				cpu,
				gpu;
	bool		ok;

	memset(&want, 0, sizeof(want));
	memset(&gpu, 0, sizeof(gpu));
	for (int64_t o = 0; o < outer->nrows; o++)
	{
		for (int64_t i = 0; i < inner->nrows; i++)
		{
			int			r = gj_program_eval(prog->instrs, prog->ninstrs, &outer->cols, o,
											&inner->cols, i);
			bool		passes = true;

			for (int k = 0; k < lead->n && passes; k++)
				passes = pc_compare_holds(&lead->cmp[k], outer, o, inner, i);
			if (r == GJ_RESULT_TRUE || (r == GJ_RESULT_RECHECK && passes))
				add_pair(&want, (uint32_t) o | (r == GJ_RESULT_RECHECK ? GJ_PAIR_RECHECK : 0),
						 (uint32_t) i);
		}
	}
	qsort(want.pairs, want.n, sizeof(uint64_t), cmp_u64);
	rowcount_input(&input, outer, inner, prog);
	input.compile_programs = pc_compile;
	memset(&err, 0, sizeof(err));
	ok = run_schedule(&gj_cpu_backend, &input, &s, &cpu, &err);
	if (!ok)
		printf("# cpu run_step failed: %s\n", err.message);
	ok = ok && cpu.n == want.n &&
		(want.n == 0 || memcmp(cpu.pairs, want.pairs, sizeof(uint64_t) * want.n) == 0);
	if (!ok)
		printf("# %s: cpu run_step %lld pairs, the reference %lld\n", prog->name,
			   (long long) cpu.n, (long long) want.n);
	if (ok && cuda)
	{
		ok = run_schedule(&gj_cuda_backend, &input, &s, &gpu, &err);
		if (!ok)
			printf("# cuda run_step failed: %s\n", err.message);
		ok = ok && gpu.n == cpu.n &&
			(cpu.n == 0 || memcmp(gpu.pairs, cpu.pairs, sizeof(uint64_t) * cpu.n) == 0);
		if (!ok)
			printf("# %s: cuda run_step %lld pairs, cpu %lld\n", prog->name,
				   (long long) gpu.n, (long long) cpu.n);
	}
	free(want.pairs);
	free(cpu.pairs);
	free(gpu.pairs);
	return ok;
}

static void
pc_test_run_step(const Side *outer, const Side *inner, bool cuda)
{
	report(pc_each_program(outer, inner, cuda, pc_run_step_check),
		   "program prefilter: run_step's pairs and recheck flags%s%s",
		   !cuda ? "" : pc_compile == GJ_COMPILE_ALWAYS ? " on cpu and cuda compiled, equal," :
		   " on cpu and cuda, equal,",
		   " against every pair through the program, over 3 x 2 tiles");
}

/*
 * run_step's pairs over sides large enough for several outer blocks of the
 * compiled pairs kernels (up to 4,096 rows a block), many inner slices, and
 * steps cut short by the match buffer (a tile's inner rows), row counts
 * that are no multiple of anything: one program of each shape.
 */
static void
pc_test_run_step_big(void)
{
	Side		outer,
				inner;
	bool		ok = true;

	rowcount_make_side(&outer, 9001);
	rowcount_make_side(&inner, 7003);
	for (int t = 0; t < PC_NSHAPES && ok; t++)
	{
		Program		prog;
		GjCompareConjunction lead;

		pc_random_program((PcShape) t, &prog, &lead);
		ok = pc_run_step_check(&outer, &inner, &prog, &lead, true);
	}
	rowcount_free_side(&outer);
	rowcount_free_side(&inner);
	report(ok, "%s, 9k x 7k rows: %s",
		   pc_compile == GJ_COMPILE_ALWAYS ? "compiled pairs kernels" : "interpreted pairs",
		   "run_step's pairs and recheck flags on cpu and cuda equal (many outer blocks, "
		   "inner slices and steps)");
}

/*
 * cuda over sides large enough for many outer blocks and inner slices, and
 * row counts that are no multiple of anything, against the cpu.
 */
static void
pc_test_big_cuda(void)
{
	Side		outer,
				inner;
	bool		ok = true;

	rowcount_make_side(&outer, 5011);
	rowcount_make_side(&inner, 150001);
	for (int t = 0; t < 4 && ok; t++)
	{
		GjTile		tile = {17, 2001 + 1000 * t, 1001, inner.nrows - 5};
		Program		prog;
		GjCompareConjunction lead;
		GjJoinInput input;
		int64_t		rows = tile.outer_end - tile.outer_begin;
		uint64_t   *want = xmalloc(sizeof(uint64_t) * rows);
		uint64_t   *got = xmalloc(sizeof(uint64_t) * rows);
		uint64_t	want_host = 0,
					host = 0,
					total = 0;

		pc_random_program(t == 3 ? PC_QUAL_FIRST : PC_LEAD_FIRST, &prog, &lead);
		rowcount_input(&input, &outer, &inner, &prog);
		ok = gj_cpu_program_count(&input, &tile, tile.outer_begin, tile.outer_end, want,
								  &want_host) &&
			pc_cuda_count(&input, &tile, tile.outer_begin, tile.outer_end, got, &total, &host) &&
			memcmp(want, got, sizeof(uint64_t) * rows) == 0 && host == want_host;
		if (!ok)
			printf("# cuda (big), %s: per-row counts or host pairs (%llu, cpu %llu) differ\n",
				   prog.name, (unsigned long long) host, (unsigned long long) want_host);
		free(want);
		free(got);
	}
	rowcount_free_side(&outer);
	rowcount_free_side(&inner);
	report(ok, "%s%s", pc_compile == GJ_COMPILE_ALWAYS ?
		   "cuda program count, compiled: up to 5k x 150k rows, against the cpu" :
		   "cuda program count: up to 5k x 150k rows, against the cpu",
		   " (many outer blocks and inner slices)");
}

/*
 * Prove programs over chunks of 128 inner rows (the bounds of the chunk's
 * columns and their float magnitudes, as the kernel takes them) and every
 * third outer row; where a proof succeeds, no pair of it may ask for a
 * recheck.  Counts into *tried, *proven and *bad.
 */
static void
pc_bounds_check(const Program *progs, int nprogs, const Side *outer, const Side *inner,
				int64_t *tried, int64_t *proven, int64_t *bad)
{
	for (int i = 0; i < nprogs; i++)
	{
		GjLeadingCompares lead;

		gj_program_leading_compares(progs[i].instrs, progs[i].ninstrs, &lead);
		for (int64_t ib = 0; ib < inner->nrows; ib += 128)
		{
			GjBounds	ib_bounds[GJ_MAX_KEY_COLS];

			for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
			{
				ib_bounds[c].lo = INT64_MAX;
				ib_bounds[c].hi = INT64_MIN;
				ib_bounds[c].flt = false;
				ib_bounds[c].fmag = 0;
				for (int64_t t = ib; c < inner->cols.ncols && t < ib + 128; t++)
				{
					int64_t		v = inner->cols.values[c][t];
					uint64_t	m = gj_bounds_fmag(v);

					if (inner->cols.isnull[c] != NULL && inner->cols.isnull[c][t])
						continue;
					ib_bounds[c].lo = v < ib_bounds[c].lo ? v : ib_bounds[c].lo;
					ib_bounds[c].hi = v > ib_bounds[c].hi ? v : ib_bounds[c].hi;
					ib_bounds[c].fmag = m > ib_bounds[c].fmag ? m : ib_bounds[c].fmag;
				}
				if (ib_bounds[c].lo > ib_bounds[c].hi)
					ib_bounds[c].lo = ib_bounds[c].hi = 0;
			}
			for (int64_t o = 0; o < outer->nrows; o += 3)
			{
				GjBounds	ob[GJ_MAX_KEY_COLS];

				for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
				{
					bool		null = c >= outer->cols.ncols ||
						(outer->cols.isnull[c] != NULL && outer->cols.isnull[c][o]);

					ob[c].lo = ob[c].hi = null ? 0 : outer->cols.values[c][o];
					ob[c].flt = false;
					ob[c].fmag = gj_bounds_fmag(ob[c].lo);
				}
				(*tried)++;
				if (!gj_program_bounds(progs[i].instrs, progs[i].ninstrs, lead.pc, lead.depth,
									   ob, ib_bounds))
					continue;
				(*proven)++;
				for (int64_t t = ib; t < ib + 128; t++)
				{
					if (gj_program_eval_from(progs[i].instrs, progs[i].ninstrs, &lead,
											 &outer->cols, o, &inner->cols, t) ==
						GJ_RESULT_RECHECK && (*bad)++ < 5)
						printf("# %s: proven for outer row %lld and inner rows [%lld, %lld), "
							   "but inner row %lld asks for a recheck\n", progs[i].name,
							   (long long) o, (long long) ib, (long long) (ib + 128),
							   (long long) t);
				}
			}
		}
	}
}

/*
 * A side of float8 column 0 for the float proofs: small halves, and in
 * some bands of 128 rows values whose sums overflow (1.7e308), come near
 * it (8e307), infinities and NaN.
 */
static void
pc_float_side(Side *side, int64_t nrows)
{
	static const double big[] = {1.7e308, -1.7e308, 8e307, -8e307, INFINITY, -INFINITY, NAN};
	int64_t    *values = xmalloc(sizeof(int64_t) * nrows);

	memset(side, 0, sizeof(Side));
	side->nrows = nrows;
	side->cols.ncols = 1;
	for (int64_t i = 0; i < nrows; i++)
	{
		bool		dirty = (i / 128) % 3 == 2;

		values[i] = dirty && rng() % 8 == 0 ?
			dbits(big[rng() % (sizeof(big) / sizeof(big[0]))]) :
			dbits((double) ((int64_t) (rng() % 81) - 40) * 0.5);
	}
	side->values[0] = values;
	side->cols.values[0] = values;
}

/*
 * gj_program_bounds, what a compiled kernel proves chunk by chunk, against
 * the interpreter (pc_bounds_check): the int programs and random programs
 * of every shape over banded sides, then float8 sums, differences and
 * absolute values (and a product, never proved) over sides whose sums may
 * overflow; some proofs must succeed, some fail.
 */
static void
pc_test_bounds(void)
{
	Program    *progs = xmalloc(sizeof(Program) * (PC_MAX_INT_PROGRAMS + 24));
	int			nprogs = program_count_int_programs(progs);
	Program		fprogs[3];
	Side		outer,
				inner;
	int64_t		tried = 0,
				proven = 0,
				bad = 0,
				ftried = 0,
				fproven = 0;

	for (int k = 0; k < 24; k++)
		program_count_random_program(k % PC_NSHAPES, &progs[nprogs++]);
	program_count_banded_side(&outer, 300, 60, 3);
	program_count_banded_side(&inner, 1024, 128, 3);
	pc_bounds_check(progs, nprogs, &outer, &inner, &tried, &proven, &bad);
	rowcount_free_side(&outer);
	rowcount_free_side(&inner);

	/* o.f + i.f > 1.0; abs(o.f - i.f) + (o.f + i.f) < 0.25; o.f * i.f < 1.0 */
	memset(fprogs, 0, sizeof(fprogs));
	fprogs[0].name = "o.f + i.f > 1.0";
	emit(&fprogs[0], GJOP_LOAD_OUTER, GJT_FLOAT8, 0, 0);
	emit(&fprogs[0], GJOP_LOAD_INNER, GJT_FLOAT8, 0, 0);
	emit(&fprogs[0], GJOP_ADD, GJT_FLOAT8, 0, 0);
	emit(&fprogs[0], GJOP_CONST, GJT_FLOAT8, 0, dbits(1.0));
	emit(&fprogs[0], GJOP_GT, GJ_CLASS_FLOAT, 0, 0);
	fprogs[1].name = "abs(o.f - i.f) + (o.f + i.f) < 0.25";
	emit(&fprogs[1], GJOP_LOAD_OUTER, GJT_FLOAT8, 0, 0);
	emit(&fprogs[1], GJOP_LOAD_INNER, GJT_FLOAT8, 0, 0);
	emit(&fprogs[1], GJOP_SUB, GJT_FLOAT8, 0, 0);
	emit(&fprogs[1], GJOP_ABS, GJT_FLOAT8, 0, 0);
	emit(&fprogs[1], GJOP_LOAD_OUTER, GJT_FLOAT8, 0, 0);
	emit(&fprogs[1], GJOP_LOAD_INNER, GJT_FLOAT8, 0, 0);
	emit(&fprogs[1], GJOP_ADD, GJT_FLOAT8, 0, 0);
	emit(&fprogs[1], GJOP_ADD, GJT_FLOAT8, 0, 0);
	emit(&fprogs[1], GJOP_CONST, GJT_FLOAT8, 0, dbits(0.25));
	emit(&fprogs[1], GJOP_LT, GJ_CLASS_FLOAT, 0, 0);
	fprogs[2].name = "o.f * i.f < 1.0";
	emit(&fprogs[2], GJOP_LOAD_OUTER, GJT_FLOAT8, 0, 0);
	emit(&fprogs[2], GJOP_LOAD_INNER, GJT_FLOAT8, 0, 0);
	emit(&fprogs[2], GJOP_MUL, GJT_FLOAT8, 0, 0);
	emit(&fprogs[2], GJOP_CONST, GJT_FLOAT8, 0, dbits(1.0));
	emit(&fprogs[2], GJOP_LT, GJ_CLASS_FLOAT, 0, 0);
	pc_float_side(&outer, 300);
	pc_float_side(&inner, 1024);
	pc_bounds_check(fprogs, 3, &outer, &inner, &ftried, &fproven, &bad);
	free(outer.values[0]);
	free(inner.values[0]);
	printf("# %lld of %lld (program, outer row, chunk) proven free of errors; float8: "
		   "%lld of %lld\n", (long long) proven, (long long) tried, (long long) fproven,
		   (long long) ftried);
	free(progs);
	report(bad == 0 && proven > 0 && proven < tried && fproven > 0 && fproven < ftried,
		   "%s%s",
		   "gj_program_bounds: no pair of a chunk proven free of errors asks for a recheck",
		   " (int programs and random ones over banded sides, float8 sums near overflow; "
		   "some proven, some not)");
}

/*
 * The compiled kernel on banded sides (program_count_banded_side): its
 * warps count some chunks with the tests for errors and some without (the
 * clean bands), in 32 bits where the program allows; per-row counts, totals
 * and host pairs against the cpu.  Prints each program's variant.
 */
static void
pc_test_banded(void)
{
	Program    *progs = xmalloc(sizeof(Program) * (PC_MAX_INT_PROGRAMS + 2 * PC_NSHAPES));
	GjLeadingCompares *leads = xmalloc(sizeof(GjLeadingCompares) *
									   (PC_MAX_INT_PROGRAMS + 2 * PC_NSHAPES));
	int			nprogs = program_count_int_programs(progs);
	Side		outer,
				inner;
	GjTile		tile;
	bool		ok = true;

	for (int k = 0; k < nprogs; k++)
		gj_program_leading_compares(progs[k].instrs, progs[k].ninstrs, &leads[k]);
	for (int k = 0; k < 2 * PC_NSHAPES; k++)
	{
		pc_random_program((PcShape) (k % PC_NSHAPES), &progs[nprogs], &leads[nprogs].conj);
		nprogs++;
	}
	program_count_banded_side(&outer, 1500, 500, 3);
	program_count_banded_side(&inner, 6001, 1024, 2);
	tile.outer_begin = 0;
	tile.outer_end = outer.nrows;
	tile.inner_begin = 0;
	tile.inner_end = inner.nrows;
	for (int k = 0; k < nprogs && ok; k++)
	{
		GjNarrowing nw;

		gj_program_narrow(progs[k].instrs, progs[k].ninstrs, &nw);
		printf("# %s: %s, %d steps in 32 bits\n", progs[k].name, gj_program_variant(&nw),
			   nw.nops32);
		ok = pc_check(&outer, &inner, &progs[k], &leads[k].conj, &tile, true);
	}
	rowcount_free_side(&outer);
	rowcount_free_side(&inner);
	free(progs);
	free(leads);
	report(ok, "%s%s", "cuda program count, compiled: int programs and random ones over banded ",
		   "sides (chunks with and without the tests for errors), against the cpu");
}

/*
 * The quick kernels, which a background compile loads first
 * (cuda_compile.cu), against the cpu: random programs, the spec's, and
 * run_step's pairs.  PC_QUICK_TESTS tests; NVRTC must be there.
 */
#define PC_QUICK_TESTS	(PC_NSHAPES + 2)

static void
pc_test_quick(const Side *outer, const Side *inner)
{
	int			saved = pc_compile;

	printf("# the same, the quick kernels (no proven chunks, no unrolled pair loop)\n");
	pc_compile = GJ_COMPILE_ALWAYS;
	gj_cuda_test_set_quick_only(true);
	for (int s = 0; s < PC_NSHAPES; s++)
		pc_test_random(outer, inner, (PcShape) s, true);
	pc_test_spec_programs(true);
	pc_test_run_step(outer, inner, true);
	gj_cuda_test_set_quick_only(false);
	pc_compile = saved;
}

/*
 * The cuda checks again with the program compiled to GPU code: the same
 * counts per row, totals and host pairs as the cpu's, so as the
 * interpreter's.  They skip where NVRTC is missing.
 */
static void
pc_test_compiled(const Side *outer, const Side *inner)
{
	const char *nvrtc = gj_cuda_test_nvrtc_path();

	if (nvrtc == NULL || nvrtc[0] == '\0')
	{
		for (int t = 0; t < PC_NSHAPES + 6 + PC_QUICK_TESTS; t++)
		{
			test_number++;
			printf("ok %d - program count, compiled # SKIP no NVRTC\n", test_number);
		}
		return;
	}
	printf("# the same, the program compiled to GPU code (NVRTC: %s)\n", nvrtc);
	pc_compile = GJ_COMPILE_ALWAYS;
	for (int s = 0; s < PC_NSHAPES; s++)
		pc_test_random(outer, inner, (PcShape) s, true);
	pc_test_spec_programs(true);
	pc_test_agg(outer, inner, true);
	pc_test_run_step(outer, inner, true);
	pc_test_run_step_big();
	pc_test_big_cuda();
	pc_test_banded();
	pc_test_quick(outer, inner);
	pc_compile = GJ_COMPILE_OFF;
}

/*
 * A random operand of an affine compare over the integer columns (0, 1,
 * 4, 5, 6): a column of either side, a constant (extremes among them), or
 * the sum or difference of two of those in int2, int4 or int8, the type a
 * compiled program gives it.
 */
static void
pc_affine_operand(Program *q, int depth)
{
	static const int int_cols[] = {0, 1, 4, 5, 6};
	static const int64_t consts[] = {0, 3, -7, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN,
	32767, -32768};
	static const int types[] = {GJT_INT2, GJT_INT4, GJT_INT8};
	uint64_t	r = rng() % 10;

	if (depth == 0 && r < 4)
	{
		pc_affine_operand(q, 1);
		pc_affine_operand(q, 1);
		emit(q, rng() % 2 ? GJOP_ADD : GJOP_SUB, types[rng() % 3], 0, 0);
	}
	else if (r < 6)
		emit(q, rng() % 2 ? GJOP_LOAD_OUTER : GJOP_LOAD_INNER, GJT_INT8, int_cols[rng() % 5], 0);
	else
		emit(q, GJOP_CONST, GJT_INT8, 0, consts[rng() % 9]);
}

/*
 * The cpu backend's evaluator of AND-ed integer compares over sums
 * (cpu_affine.c) against the interpreter, pair by pair: random such
 * programs of 1 to 4 compares, whole (as a sort-merge step evaluates them)
 * and after a leading compare (as the prefilter leaves them), over sides
 * with NULLs and every integer extreme (so sums overflow every type); and
 * programs it must leave to the interpreter.
 */
static void
pc_test_affine(const Side *outer, const Side *inner)
{
	int			mismatches = 0,
				invalid = 0,
				nprogs = 0;
	int64_t		pairs = 0,
				rechecks = 0,
				trues = 0;
	char		msg[192];

	for (int lead = 0; lead < 2; lead++)
	{
		for (int k = 0; k < 300; k++)
		{
			Program		q;
			GjCpuAffine aff;
			GjLeadingCompares lc;
			int			nterms = 1 + (int) (rng() % 4);

			memset(&q, 0, sizeof(q));
			memset(&lc, 0, sizeof(lc));
			if (lead)
			{
				emit(&q, GJOP_LOAD_OUTER, GJT_INT8, 1, 0);
				emit(&q, GJOP_LOAD_INNER, GJT_INT8, 5, 0);
				emit(&q, GJOP_LE, GJ_CLASS_INT, 0, 0);
			}
			for (int t = 0; t < nterms; t++)
			{
				pc_affine_operand(&q, 0);
				pc_affine_operand(&q, 0);
				emit(&q, GJOP_EQ + (int) (rng() % 6), GJ_CLASS_INT, 0, 0);
				if (t > 0 || lead)
					emit(&q, GJOP_AND, GJT_BOOL, 0, 0);
			}
			if (lead)
				gj_program_leading_compares(q.instrs, q.ninstrs, &lc);
			/* every compare a leading one: the prefilter alone decides */
			if (lc.pc == q.ninstrs)
				continue;
			nprogs++;
			if (!gj_cpu_affine_init(&aff, q.instrs, q.ninstrs, lc.pc, lc.depth))
			{
				invalid++;
				continue;
			}
			for (int p = 0; p < 400; p++)
			{
				int64_t		o = (int64_t) (rng() % outer->nrows);
				int64_t		i = (int64_t) (rng() % inner->nrows);
				int			want = gj_program_eval_from(q.instrs, q.ninstrs, &lc, &outer->cols, o,
														&inner->cols, i);
				int			got = gj_cpu_affine_eval(&aff, &outer->cols, o, &inner->cols, i);

				mismatches += got != want;
				rechecks += want == GJ_RESULT_RECHECK;
				trues += want == GJ_RESULT_TRUE;
				pairs++;
			}
		}
	}
	snprintf(msg, sizeof(msg), "%lld pairs of %d random programs, %lld TRUE, %lld rechecked; %d programs not read, %d pairs differ",
			 (long long) pairs, nprogs, (long long) trues, (long long) rechecks, invalid, mismatches);
	report(mismatches == 0 && invalid == 0 && rechecks > 0 && trues > 0,
		   "affine evaluator (cpu_affine.c) against the interpreter: %s%s", msg, "");

	/* what it leaves to the interpreter */
	{
		Program		q[4];
		GjCpuAffine aff;
		int			read = 0;

		memset(q, 0, sizeof(q));
		/* o.c0 * i.c1 > 0 */
		emit(&q[0], GJOP_LOAD_OUTER, GJT_INT8, 0, 0);
		emit(&q[0], GJOP_LOAD_INNER, GJT_INT8, 1, 0);
		emit(&q[0], GJOP_MUL, GJT_INT8, 0, 0);
		emit(&q[0], GJOP_CONST, GJT_INT8, 0, 0);
		emit(&q[0], GJOP_GT, GJ_CLASS_INT, 0, 0);
		/* o.c2 < i.c3, floats */
		emit(&q[1], GJOP_LOAD_OUTER, GJT_FLOAT8, 2, 0);
		emit(&q[1], GJOP_LOAD_INNER, GJT_FLOAT8, 3, 0);
		emit(&q[1], GJOP_LT, GJ_CLASS_FLOAT, 0, 0);
		/* o.c1 = i.c1 OR o.c5 = i.c5 */
		emit(&q[2], GJOP_LOAD_OUTER, GJT_INT8, 1, 0);
		emit(&q[2], GJOP_LOAD_INNER, GJT_INT8, 1, 0);
		emit(&q[2], GJOP_EQ, GJ_CLASS_INT, 0, 0);
		emit(&q[2], GJOP_LOAD_OUTER, GJT_INT8, 5, 0);
		emit(&q[2], GJOP_LOAD_INNER, GJT_INT8, 5, 0);
		emit(&q[2], GJOP_EQ, GJ_CLASS_INT, 0, 0);
		emit(&q[2], GJOP_OR, GJT_BOOL, 0, 0);
		/* (o.c1 + i.c1) + 1 > 0: a sum of a sum */
		emit(&q[3], GJOP_LOAD_OUTER, GJT_INT8, 1, 0);
		emit(&q[3], GJOP_LOAD_INNER, GJT_INT8, 1, 0);
		emit(&q[3], GJOP_ADD, GJT_INT4, 0, 0);
		emit(&q[3], GJOP_CONST, GJT_INT8, 0, 1);
		emit(&q[3], GJOP_ADD, GJT_INT4, 0, 0);
		emit(&q[3], GJOP_CONST, GJT_INT8, 0, 0);
		emit(&q[3], GJOP_GT, GJ_CLASS_INT, 0, 0);
		for (int k = 0; k < 4; k++)
			read += gj_cpu_affine_init(&aff, q[k].instrs, q[k].ninstrs, 0, 0);
		snprintf(msg, sizeof(msg), "%d of 4 read", read);
		report(read == 0, "affine evaluator: a product, a float compare, an OR and a sum of a sum stay interpreted (%s)%s",
			   msg, "");
	}
}

int
program_count_test_count(bool cuda)
{
	return 1 + PC_NSHAPES + 1 + 1 + 1 + 1 + 2 + (cuda ? PC_NSHAPES + 1 + 1 + 1 + 1 + 1 : 0) +
		(cuda ? PC_NSHAPES + 1 + 1 + 1 + 1 + 1 + 1 + PC_QUICK_TESTS : 0);
}

/*
 * The cpu tests, and with cuda the same programs on the device against the
 * cpu, over kt_rowcount.c's sides.
 */
void
run_program_count_tests(bool cuda)
{
	Side		outer,
				inner;

	printf("# per-row counts of any nested-loop program, %d x %d rows\n", PC_OUTER, PC_INNER);
	rowcount_make_side(&outer, PC_OUTER);
	rowcount_make_side(&inner, PC_INNER);
	pc_test_parse();
	for (int s = 0; s < PC_NSHAPES; s++)
		pc_test_random(&outer, &inner, (PcShape) s, false);
	pc_test_spec_programs(false);
	pc_test_agg(&outer, &inner, false);
	pc_test_run_step(&outer, &inner, false);
	pc_test_bounds();
	pc_test_affine(&outer, &inner);
	if (cuda)
	{
		for (int s = 0; s < PC_NSHAPES; s++)
			pc_test_random(&outer, &inner, (PcShape) s, true);
		pc_test_spec_programs(true);
		pc_test_agg(&outer, &inner, true);
		pc_test_run_step(&outer, &inner, true);
		pc_test_run_step_big();
		pc_test_big_cuda();
		pc_test_compiled(&outer, &inner);
	}
	rowcount_free_side(&outer);
	rowcount_free_side(&inner);
}

/* kernel_test program-count: these tests alone, with cuda where there is a GPU. */
int
run_program_count_only(void)
{
	GjDeviceInfo info;
	GjError		err;
	bool		cuda;

	memset(&info, 0, sizeof(info));
	memset(&err, 0, sizeof(err));
	cuda = gj_cuda_probe(&info, &err);
	printf("1..%d\n", program_count_test_count(cuda));
	if (!cuda)
		printf("# no CUDA device (%s): the cpu tests only\n", err.message);
	run_program_count_tests(cuda);
	printf("kernel_test: %d passed, %d failed\n", test_number - failures, failures);
	return failures > 0;
}

/* ---------------------------------------------------------------------
 * Benchmark
 * ---------------------------------------------------------------------
 */

static double
pc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * bench_devices.sh's "nestloop pairs" program, "o.x < i.x AND o.y > i.y
 * AND o.x + i.y > 0" (int4), on n x n rows of random int4 values in [0,
 * 1e9): the cpu (one core, a slice of the outer rows) and cuda (the total
 * only), in pairs per second.
 */
int
bench_program_count(int64_t n)
{
	Side		side;
	Program		prog;
	GjJoinInput input;
	GjTile		tile = {0, n, 0, n};
	int64_t		cpu_rows = gj_max64(gj_min64(n, 200000000 / gj_max64(n, 1)), 1);
	uint64_t   *counts = xmalloc(sizeof(uint64_t) * cpu_rows);
	uint64_t	host = 0,
				total = 0;
	double		t0,
				cpu_ms,
				cuda_ms = -1;

	memset(&side, 0, sizeof(side));
	side.nrows = n;
	side.cols.ncols = 2;
	for (int c = 0; c < 2; c++)
	{
		int64_t    *v = xmalloc(sizeof(int64_t) * n);

		for (int64_t i = 0; i < n; i++)
			v[i] = (int64_t) (rng() % 1000000000);
		side.cols.values[c] = v;
	}
	memset(&prog, 0, sizeof(prog));
	emit(&prog, GJOP_LOAD_OUTER, GJT_INT4, 0, 0);
	emit(&prog, GJOP_LOAD_INNER, GJT_INT4, 0, 0);
	emit(&prog, GJOP_LT, GJ_CLASS_INT, 0, 0);
	emit(&prog, GJOP_LOAD_OUTER, GJT_INT4, 1, 0);
	emit(&prog, GJOP_LOAD_INNER, GJT_INT4, 1, 0);
	emit(&prog, GJOP_GT, GJ_CLASS_INT, 0, 0);
	emit(&prog, GJOP_AND, GJT_BOOL, 0, 0);
	emit(&prog, GJOP_LOAD_OUTER, GJT_INT4, 0, 0);
	emit(&prog, GJOP_LOAD_INNER, GJT_INT4, 1, 0);
	emit(&prog, GJOP_ADD, GJT_INT4, 0, 0);
	emit(&prog, GJOP_CONST, GJT_INT4, 0, 0);
	emit(&prog, GJOP_GT, GJ_CLASS_INT, 0, 0);
	emit(&prog, GJOP_AND, GJT_BOOL, 0, 0);
	rowcount_input(&input, &side, &side, &prog);

	t0 = pc_now_ms();
	gj_cpu_program_count(&input, &tile, 0, cpu_rows, counts, &host);
	cpu_ms = pc_now_ms() - t0;
	printf("# program count, o.x < i.x AND o.y > i.y AND o.x + i.y > 0 (int4), %lld x %lld\n",
		   (long long) n, (long long) n);
	printf("cpu, one core (%lld outer rows): %.1f ms, %.3g pairs/s\n", (long long) cpu_rows,
		   cpu_ms, (double) cpu_rows * n / (cpu_ms / 1e3));
	{
		GjError		err;
		GjStats		stats;
		void	   *state;

		memset(&err, 0, sizeof(err));
		memset(&stats, 0, sizeof(stats));
		state = gj_cuda_backend.begin_join(&input, &err);
		if (state != NULL &&
			gj_cuda_test_program_count(state, &tile, 0, gj_min64(n, 4096), NULL, &total, &host,
									   &stats, &err))
		{
			/* the first launch warms up; then the whole tile */
			t0 = pc_now_ms();
			if (gj_cuda_test_program_count(state, &tile, 0, n, NULL, &total, &host, &stats,
										   &err))
				cuda_ms = pc_now_ms() - t0;
		}
		if (cuda_ms >= 0)
			printf("cuda: %.1f ms, %.3g pairs/s, %llu matches, %llu host pairs\n", cuda_ms,
				   (double) n * n / (cuda_ms / 1e3), (unsigned long long) total,
				   (unsigned long long) host);
		else
			printf("cuda: no figure: %s\n", err.message);
		if (state != NULL)
			gj_cuda_backend.end_join(state);
	}
	for (int c = 0; c < 2; c++)
		free((void *) side.cols.values[c]);
	free(counts);
	return 0;
}

/*
 * kernel_test program-count-quick: the quick kernels' checks alone (the
 * last of program-count's), on a GPU with NVRTC.
 */
int
run_program_count_quick_only(void)
{
	GjDeviceInfo info;
	GjError		err;
	Side		outer,
				inner;

	memset(&info, 0, sizeof(info));
	memset(&err, 0, sizeof(err));
	if (!gj_cuda_probe(&info, &err) || gj_cuda_test_nvrtc_path()[0] == '\0')
	{
		printf("1..0 # SKIP no CUDA device or no NVRTC\n");
		return 0;
	}
	printf("1..%d\n", PC_QUICK_TESTS);
	rowcount_make_side(&outer, PC_OUTER);
	rowcount_make_side(&inner, PC_INNER);
	pc_test_quick(&outer, &inner);
	rowcount_free_side(&outer);
	rowcount_free_side(&inner);
	printf("kernel_test: %d passed, %d failed\n", test_number - failures, failures);
	return failures > 0;
}

extern void gj_cuda_test_forget_compiled(void);

/*
 * kernel_test compiled-store (a GPU with NVRTC): kernel_test's nested-loop
 * programs compiled with the kernel store on, in a directory of their own,
 * then again after the process's cache is forgotten (as a restarted
 * process starts): loaded from the store, none compiled, the same counts;
 * then with every stored file damaged: compiled again, the same counts,
 * and stored anew.
 */
int
run_compiled_store_tests(void)
{
	GjDeviceInfo info;
	GjError		err;
	char		dir[] = "/tmp/gj_compiled_store_XXXXXX";
	char		cmd[256];
	int			files;

	memset(&info, 0, sizeof(info));
	memset(&err, 0, sizeof(err));
	if (!gj_cuda_probe(&info, &err) || gj_cuda_test_nvrtc_path()[0] == '\0')
	{
		printf("1..0 # SKIP no CUDA device or no NVRTC\n");
		return 0;
	}
	if (mkdtemp(dir) == NULL)
	{
		printf("1..0 # SKIP mkdtemp failed\n");
		return 1;
	}
	/* each pc_test_spec_programs is a test, and each check after it */
	printf("1..6\n");
	gj_kernel_store_set_dir(dir);
	pc_compile = GJ_COMPILE_ALWAYS;

	gj_cuda_test_forget_compiled();
	pc_programs_compiled = pc_programs_loaded = 0;
	pc_test_spec_programs(true);
	snprintf(cmd, sizeof(cmd), "ls %s | grep -c 'gjk$'", dir);
	files = 0;
	{
		FILE	   *p = popen(cmd, "r");

		if (p == NULL || fscanf(p, "%d", &files) != 1)
			files = -1;
		if (p != NULL)
			pclose(p);
	}
	printf("# first run: %lld compiled, %lld loaded, %d files stored\n",
		   (long long) pc_programs_compiled, (long long) pc_programs_loaded, files);
	report(pc_programs_compiled > 0 && pc_programs_loaded == 0 && files > 0,
		   "compiled store: %s%s", "the first run compiles and stores its kernels", "");

	gj_cuda_test_forget_compiled();
	pc_programs_compiled = pc_programs_loaded = 0;
	pc_test_spec_programs(true);
	printf("# after forgetting: %lld compiled, %lld loaded\n",
		   (long long) pc_programs_compiled, (long long) pc_programs_loaded);
	report(pc_programs_compiled == 0 && pc_programs_loaded > 0,
		   "compiled store: %s%s", "a new process loads them all, compiles none", "");

	/* flip the last byte of every stored kernel */
	snprintf(cmd, sizeof(cmd),
			 "for f in %s/*.gjk; do printf '\\x5a' | dd of=$f bs=1 seek=$(( $(stat -c %%s $f) - 1 )) conv=notrunc status=none; done",
			 dir);
	if (system(cmd) != 0)
		printf("# damaging the files failed\n");
	gj_cuda_test_forget_compiled();
	pc_programs_compiled = pc_programs_loaded = 0;
	pc_test_spec_programs(true);
	printf("# damaged files: %lld compiled, %lld loaded\n",
		   (long long) pc_programs_compiled, (long long) pc_programs_loaded);
	report(pc_programs_compiled > 0 && pc_programs_loaded == 0,
		   "compiled store: %s%s", "damaged files are compiled again", "");

	pc_compile = GJ_COMPILE_OFF;
	gj_kernel_store_set_dir(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	printf("kernel_test: %d passed, %d failed\n", test_number - failures, failures);
	return failures > 0;
}

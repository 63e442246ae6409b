/*-------------------------------------------------------------------------
 *
 * kt_rowcount.c
 *	  Per-outer-row match counts of compare conjunctions ("r.a < s.a AND
 *	  r.b > s.b"): gj_program_compare_conjunction, the cpu backend's
 *	  conjunction loop (gj_cpu_rowcount_conjunction) and dominance counter
 *	  (gj_dominance_*), and on a GPU gj_cuda_rowcount, each against a
 *	  brute-force reference, the device program evaluated for every pair
 *	  (run_rowcount_tests, in the cpu mode and, with a GPU, the default
 *	  mode); and their speed (bench_rowcount, in the bench mode).
 *
 *	  The data has what orders are made of: NULLs, duplicates and ties,
 *	  int4 and int8 extremes, floats with NaN (two bit patterns), -0.0,
 *	  infinities and denormals; blocks of int4-range keys (the int32 loops)
 *	  and blocks with wider ones.  The conjunctions have 1 to 4 compares of
 *	  every operator, operands in either order, ANDs nested every way, and
 *	  run over sub-tiles whose inner range does not start at 0.
 *
 *-------------------------------------------------------------------------
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kt_common.h"
#include "kernels/cpu/cpu_internal.h"

/* The test hook of cuda/cuda_rowcount.cu (cuda_stub.c without nvcc). */
extern bool gj_cuda_test_rowcount(void *state, const GjCompareConjunction *conj,
								  const GjTile *tile, int64_t o_begin, int64_t rows,
								  uint64_t *h_counts, uint64_t *total, GjStats *stats,
								  GjError *err);

#define RC_OUTER	500
#define RC_INNER	5000		/* more than one block of every conjunction */
#define RC_COLS		7
#define RC_PER_TEST 10			/* random conjunctions per test */

/*
 * Columns: 0 int, every extreme; 1 small ints, no NULLs; 2 floats, every
 * special; 3 floats, NaN and -0.0, no NULLs; 4 ints strictly inside int4
 * (the int32 loops); 5 small ints, no NULLs; 6 int4, INT32_MIN in the
 * third quarter of the rows, INT32_MAX in the fourth (blocks of the first
 * half are narrow, of the others wide).  Even columns have NULLs.
 */
static const int rc_col_class[RC_COLS] = {
	GJ_CLASS_INT, GJ_CLASS_INT, GJ_CLASS_FLOAT, GJ_CLASS_FLOAT, GJ_CLASS_INT, GJ_CLASS_INT,
	GJ_CLASS_INT
};

/*
 * The type a program loads a column as: float8, int4 for the columns whose
 * values fit int4 (1, 4, 5, 6: a kernel compiled for the program keeps
 * them in 32 bits), int8 for column 0.
 */
int
rowcount_col_type(int col)
{
	if (rc_col_class[col] == GJ_CLASS_FLOAT)
		return GJT_FLOAT8;
	return col == 0 ? GJT_INT8 : GJT_INT4;
}

/* The columns a flavour of test draws from. */
typedef struct RcFlavour
{
	const char *name;
	int			ncols;
	int			cols[RC_COLS];
} RcFlavour;

static const RcFlavour rc_flavours[] = {
	{"mixed keys", 7, {0, 1, 2, 3, 4, 5, 6}},
	{"int4-range keys", 4, {1, 4, 5, 6}},
	{"float keys", 2, {2, 3}},
};

#define RC_NFLAVOURS	3

static const char *const rc_op_names[] = {"=", "<>", "<", "<=", ">", ">="};

/* ---------------------------------------------------------------------
 * Data
 * ---------------------------------------------------------------------
 */

static int64_t
rc_int_value(int col, int quarter)
{
	static const int64_t extremes[] = {
		INT64_MIN, INT64_MIN + 1, INT64_MAX - 1, INT64_MAX, INT32_MIN, INT32_MIN + 1,
		INT32_MAX - 1, INT32_MAX, (int64_t) INT32_MIN - 1, (int64_t) INT32_MAX + 1, -1, 0
	};
	uint64_t	r = rng() % 100;

	if (col == 1 || col == 5)
		return (int64_t) (rng() % 17) - 8;
	if (col == 6 && quarter >= 2 && r < 4)
		return quarter == 2 ? INT32_MIN : INT32_MAX;
	if (col == 4 || col == 6)
	{
		if (r < 10)
			return r < 5 ? INT32_MIN + 1 : INT32_MAX - 1;
		if (r < 60)
			return (int64_t) (rng() % 17) - 8;
		return gj_max64(gj_min64((int32_t) (uint32_t) rng(), INT32_MAX - 1), INT32_MIN + 1);
	}
	if (r < 12)
		return extremes[r];
	if (r < 60)
		return (int64_t) (rng() % 17) - 8;
	return (int32_t) (uint32_t) rng();
}

static int64_t
rc_float_value(int col)
{
	static const double specials[] = {
		-0.0, 0.0, INFINITY, -INFINITY, DBL_MAX, -DBL_MAX, 4.9e-324, -4.9e-324, 1e300
	};
	uint64_t	r = rng() % 100;

	if (r < 4)
		return dbits(NAN);
	if (r < 6)
		return (int64_t) 0xfff8000000000001ull;	/* a negative NaN, other bits */
	if (col == 2 && r < 6 + 9)
		return dbits(specials[r - 6]);
	if (col == 3 && r < 10)
		return dbits(r < 8 ? -0.0 : 0.0);
	return dbits(((int) (rng() % 17) - 8) * 0.5);
}

/* A side of RC_COLS columns; the even ones get about 5% NULLs. */
void
rowcount_make_side(Side *side, int64_t nrows)
{
	int			c;
	int64_t		i;

	memset(side, 0, sizeof(Side));
	side->nrows = nrows;
	side->cols.ncols = RC_COLS;
	for (c = 0; c < RC_COLS; c++)
	{
		int64_t    *values = xmalloc(sizeof(int64_t) * nrows);
		uint8_t    *isnull = (c % 2 == 0) ? xmalloc(nrows) : NULL;

		for (i = 0; i < nrows; i++)
		{
			values[i] = rc_col_class[c] == GJ_CLASS_FLOAT ? rc_float_value(c) :
				rc_int_value(c, (int) (4 * i / nrows));
			if (isnull != NULL)
			{
				isnull[i] = (rng() % 20 == 0);
				if (isnull[i])
					values[i] = (int64_t) rng();	/* garbage: nobody may look */
			}
		}
		side->cols.values[c] = values;
		side->cols.isnull[c] = isnull;
	}
}

void
rowcount_free_side(Side *side)
{
	int			c;

	for (c = 0; c < RC_COLS; c++)
	{
		free((void *) side->cols.values[c]);
		free((void *) side->cols.isnull[c]);
	}
}

/* ---------------------------------------------------------------------
 * Conjunctions and their programs
 * ---------------------------------------------------------------------
 */

/*
 * A random conjunction of n compares over a flavour's columns (ordered
 * operators only, for dominance), and its program: each compare with its
 * operands in a random order, the compares ANDed in a random tree.
 */
static void
rc_random_conjunction(const RcFlavour *f, int n, bool ordered, GjCompareConjunction *conj,
					  Program *prog)
{
	Program		items[GJ_MAX_CONJUNCTS];
	int			nitems = n;
	int			k;

	memset(prog, 0, sizeof(Program));
	conj->n = n;
	for (k = 0; k < n; k++)
	{
		GjSimpleCompare *sc = &conj->cmp[k];
		int			oc = f->cols[rng() % f->ncols];
		int			ic;

		/* an inner column of the same class */
		do
			ic = f->cols[rng() % f->ncols];
		while (rc_col_class[ic] != rc_col_class[oc]);
		sc->op = ordered ? GJOP_LT + (int) (rng() % 4) : GJOP_EQ + (int) (rng() % 6);
		sc->cls = rc_col_class[oc];
		sc->outer_col = oc;
		sc->inner_col = ic;

		memset(&items[k], 0, sizeof(Program));
		if (rng() % 2 == 0)
		{
			emit(&items[k], GJOP_LOAD_OUTER, rowcount_col_type(oc), oc, 0);
			emit(&items[k], GJOP_LOAD_INNER, rowcount_col_type(ic), ic, 0);
			emit(&items[k], sc->op, sc->cls, 0, 0);
		}
		else
		{
			emit(&items[k], GJOP_LOAD_INNER, rowcount_col_type(ic), ic, 0);
			emit(&items[k], GJOP_LOAD_OUTER, rowcount_col_type(oc), oc, 0);
			emit(&items[k], gj_commute_cmp(sc->op), sc->cls, 0, 0);
		}
	}
	/* AND two neighbours until one item is left: every tree shape occurs */
	while (nitems > 1)
	{
		int			j = (int) (rng() % (nitems - 1));

		memcpy(&items[j].instrs[items[j].ninstrs], items[j + 1].instrs,
			   sizeof(GjInstr) * items[j + 1].ninstrs);
		items[j].ninstrs += items[j + 1].ninstrs;
		emit(&items[j], GJOP_AND, GJT_BOOL, 0, 0);
		memmove(&items[j + 1], &items[j + 2], sizeof(Program) * (nitems - j - 2));
		nitems--;
	}
	*prog = items[0];
	prog->name = "conjunction";
}

/* A random conjunction of n compares over a random flavour's columns. */
void
rowcount_random_conjunction(int n, GjCompareConjunction *conj, Program *prog)
{
	rc_random_conjunction(&rc_flavours[rng() % RC_NFLAVOURS], n, false, conj, prog);
}

/* "o.c0 < i.c4 AND ..." */
static void
rc_describe(const GjCompareConjunction *conj, char *buf, size_t size)
{
	size_t		len = 0;
	int			k;

	buf[0] = '\0';
	for (k = 0; k < conj->n && len < size; k++)
		len += snprintf(buf + len, size - len, "%so.c%d %s i.c%d", k > 0 ? " AND " : "",
						conj->cmp[k].outer_col, rc_op_names[conj->cmp[k].op - GJOP_EQ],
						conj->cmp[k].inner_col);
}

static bool
rc_same_conjunction(const GjCompareConjunction *a, const GjCompareConjunction *b)
{
	int			k;

	if (a->n != b->n)
		return false;
	for (k = 0; k < a->n; k++)
	{
		if (a->cmp[k].op != b->cmp[k].op || a->cmp[k].cls != b->cmp[k].cls ||
			a->cmp[k].outer_col != b->cmp[k].outer_col ||
			a->cmp[k].inner_col != b->cmp[k].inner_col)
			return false;
	}
	return true;
}

/* ---------------------------------------------------------------------
 * The reference and the checks
 * ---------------------------------------------------------------------
 */

/* Every pair of the tile through the interpreter. */
static void
rc_reference(const Side *outer, const Side *inner, const Program *prog, const GjTile *tile,
			 int64_t o_begin, int64_t o_end, uint64_t *counts)
{
	int64_t		o,
				i;

	for (o = o_begin; o < o_end; o++)
	{
		uint64_t	c = 0;

		for (i = tile->inner_begin; i < tile->inner_end; i++)
			c += gj_program_eval(prog->instrs, prog->ninstrs, &outer->cols, o,
								 &inner->cols, i) == GJ_RESULT_TRUE;
		counts[o - o_begin] = c;
	}
}

/* Say where two count arrays first differ; true when equal. */
static bool
rc_same_counts(const uint64_t *want, const uint64_t *got, int64_t n, const char *who,
			   const GjCompareConjunction *conj, const GjTile *tile, int64_t o_begin)
{
	int64_t		k;

	for (k = 0; k < n; k++)
	{
		if (want[k] != got[k])
		{
			char		desc[256];

			rc_describe(conj, desc, sizeof(desc));
			printf("# %s, %s, inner [%lld, %lld): outer row %lld counts %llu, "
				   "the reference %llu\n", who, desc, (long long) tile->inner_begin,
				   (long long) tile->inner_end, (long long) (o_begin + k),
				   (unsigned long long) got[k], (unsigned long long) want[k]);
			return false;
		}
	}
	return true;
}

/* A random sub-tile: inner ranges starting anywhere, sometimes at 0. */
static void
rc_random_tile(int64_t outer_rows, int64_t inner_rows, GjTile *tile)
{
	int64_t		a = rng() % 3 == 0 ? 0 : (int64_t) (rng() % (inner_rows / 2));
	int64_t		b = rng() % 3 == 0 ? inner_rows : a + (int64_t) (rng() % (inner_rows - a + 1));
	int64_t		c = (int64_t) (rng() % (outer_rows / 4));

	tile->inner_begin = a;
	tile->inner_end = b;
	tile->outer_begin = c;
	tile->outer_end = outer_rows;
}

/* The input of a nested-loop program over two sides. */
void
rowcount_input(GjJoinInput *input, const Side *outer, const Side *inner, const Program *prog)
{
	memset(input, 0, sizeof(GjJoinInput));
	input->outer = outer->cols;
	input->outer_nrows = outer->nrows;
	input->inner = inner->cols;
	input->inner_nrows = inner->nrows;
	input->instrs = prog->instrs;
	input->ninstrs = prog->ninstrs;
	input->algorithm = GJ_ALGO_NESTLOOP;
	input->match_capacity = inner->nrows;
	input->budget_bytes = (int64_t) 1 << 30;
}

/* ---------------------------------------------------------------------
 * The tests
 * ---------------------------------------------------------------------
 */

/* What counts a conjunction's rows: the function under test. */
typedef enum RcCounter
{
	RC_CPU_LOOP,				/* gj_cpu_rowcount_conjunction */
	RC_DOMINANCE,				/* gj_dominance_build + gj_dominance_count */
	RC_CUDA,					/* gj_cuda_rowcount, per-row counts */
	RC_CUDA_TOTAL				/* gj_cuda_rowcount, the total only */
} RcCounter;

static const char *const rc_counter_names[] = {
	"cpu conjunction loop", "cpu dominance counter", "cuda rowcount", "cuda rowcount total"
};

/*
 * Count outer rows [o_begin, o_end) of the tile with one counter; for
 * RC_CUDA_TOTAL only counts[0] is set, to the total.  false with a message
 * when the counter failed.
 */
static bool
rc_count(RcCounter who, const GjJoinInput *input, const GjCompareConjunction *conj,
		 const GjTile *tile, int64_t o_begin, int64_t o_end, uint64_t *counts)
{
	GjError		err;
	GjStats		stats;
	GjDominance *dom;
	void	   *state;
	uint64_t	total = 0;
	bool		ok;

	memset(&err, 0, sizeof(err));
	memset(&stats, 0, sizeof(stats));
	switch (who)
	{
		case RC_CPU_LOOP:
			gj_cpu_rowcount_conjunction(input, conj, tile, o_begin, o_end, counts);
			return true;
		case RC_DOMINANCE:
			dom = gj_dominance_build(input, conj, tile->inner_begin, tile->inner_end);
			ok = dom != NULL && gj_dominance_count(dom, input, o_begin, o_end, counts);
			gj_dominance_free(dom);
			if (!ok)
				printf("# the dominance counter ran out of memory\n");
			return ok;
		default:
			state = gj_cuda_backend.begin_join(input, &err);
			ok = state != NULL &&
				gj_cuda_test_rowcount(state, conj, tile, o_begin, o_end - o_begin,
									  who == RC_CUDA ? counts : NULL, &total, &stats, &err);
			if (ok && who == RC_CUDA_TOTAL)
				counts[0] = total;
			else if (ok)
			{
				int64_t		k;
				uint64_t	sum = 0;

				for (k = 0; k < o_end - o_begin; k++)
					sum += counts[k];
				if (sum != total)
				{
					printf("# cuda: total %llu, the counts sum to %llu\n",
						   (unsigned long long) total, (unsigned long long) sum);
					ok = false;
				}
			}
			else
				printf("# cuda rowcount failed: %s\n", err.message);
			if (state != NULL)
				gj_cuda_backend.end_join(state);
			return ok;
	}
}

/*
 * One conjunction over one tile against the reference.  For the total-only
 * counter the reference counts are summed.
 */
static bool
rc_check(RcCounter who, const Side *outer, const Side *inner, const GjCompareConjunction *conj,
		 const Program *prog, const GjTile *tile, int64_t o_begin, int64_t o_end)
{
	int64_t		rows = o_end - o_begin;
	uint64_t   *want = xmalloc(sizeof(uint64_t) * (rows + 1));
	uint64_t   *got = xmalloc(sizeof(uint64_t) * (rows + 1));
	GjJoinInput input;
	bool		ok;

	rowcount_input(&input, outer, inner, prog);
	rc_reference(outer, inner, prog, tile, o_begin, o_end, want);
	memset(got, 0xee, sizeof(uint64_t) * (rows + 1));
	ok = rc_count(who, &input, conj, tile, o_begin, o_end, got);
	if (ok && who != RC_CUDA_TOTAL && got[rows] != UINT64_C(0xeeeeeeeeeeeeeeee))
	{
		printf("# %s wrote past the last row's count\n", rc_counter_names[who]);
		ok = false;
	}
	if (ok && who == RC_CUDA_TOTAL)
	{
		int64_t		k;

		for (k = 1; k < rows; k++)
			want[0] += want[k];
		rows = rows > 0 ? 1 : 0;
	}
	ok = ok && rc_same_counts(want, got, rows, rc_counter_names[who], conj, tile, o_begin);
	free(want);
	free(got);
	return ok;
}

/*
 * RC_PER_TEST random conjunctions of n compares over random sub-tiles; the
 * program of each must parse back into the conjunction.
 */
static void
rc_test_random(RcCounter who, const Side *outer, const Side *inner, const RcFlavour *f,
			   int n, bool ordered)
{
	bool		ok = true;
	int			t;
	char		what[128];

	for (t = 0; t < RC_PER_TEST && ok; t++)
	{
		GjCompareConjunction conj,
					parsed;
		Program		prog;
		GjTile		tile;

		rc_random_conjunction(f, n, ordered, &conj, &prog);
		if (!gj_program_compare_conjunction(prog.instrs, prog.ninstrs, &parsed) ||
			!rc_same_conjunction(&conj, &parsed))
		{
			printf("# the program of a conjunction did not parse back into it\n");
			ok = false;
			break;
		}
		rc_random_tile(outer->nrows, inner->nrows, &tile);
		ok = rc_check(who, outer, inner, &conj, &prog, &tile, tile.outer_begin, tile.outer_end);
	}
	snprintf(what, sizeof(what), "%d random conjunctions of %d compares, %s", RC_PER_TEST, n,
			 f->name);
	report(ok, "%s: %s", rc_counter_names[who], what);
}

/* Every pair of ordered operators as a dominance conjunction. */
static void
rc_test_dominance(RcCounter who, const Side *outer, const Side *inner, const RcFlavour *f)
{
	bool		ok = true;
	int			op0,
				op1;

	for (op0 = GJOP_LT; op0 <= GJOP_GE && ok; op0++)
	{
		for (op1 = GJOP_LT; op1 <= GJOP_GE && ok; op1++)
		{
			GjCompareConjunction conj;
			Program		prog;
			GjTile		tile;

			rc_random_conjunction(f, 2, true, &conj, &prog);
			/* the operators we want, in the program as in the conjunction */
			prog.instrs[2].op = prog.instrs[0].op == GJOP_LOAD_OUTER ? op0 : gj_commute_cmp(op0);
			prog.instrs[5].op = prog.instrs[3].op == GJOP_LOAD_OUTER ? op1 : gj_commute_cmp(op1);
			if (!gj_program_compare_conjunction(prog.instrs, prog.ninstrs, &conj) ||
				!gj_conjunction_is_dominance(&conj))
			{
				printf("# a dominance program was not recognised\n");
				ok = false;
				break;
			}
			rc_random_tile(outer->nrows, inner->nrows, &tile);
			ok = rc_check(who, outer, inner, &conj, &prog, &tile, tile.outer_begin,
						  tile.outer_end);
		}
	}
	report(ok, "%s: every pair of < <= > >=, %s", rc_counter_names[who], f->name);
}

/*
 * Every pair of the six operators over the extremes, "o.c0 OP i.c4 AND
 * o.c6 OP i.c6": outer keys beyond int4 against inner blocks that are
 * narrow (the clamped thresholds) and blocks that are not, where >= of the
 * smallest key needs the cyclic test.
 */
static void
rc_test_extremes(RcCounter who, const Side *outer, const Side *inner)
{
	bool		ok = true;
	int			q,
				op0,
				op1;

	/* inner rows without int4 extremes, with INT32_MIN, with INT32_MAX */
	for (q = 0; q < 3 && ok; q++)
	{
		GjTile		tile = {0, RC_OUTER, q == 0 ? 0 : (q + 1) * RC_INNER / 4,
		q == 0 ? RC_INNER / 2 : (q + 2) * RC_INNER / 4};

		for (op0 = GJOP_EQ; op0 <= GJOP_GE && ok; op0++)
		{
			for (op1 = GJOP_EQ; op1 <= GJOP_GE && ok; op1++)
			{
				GjCompareConjunction conj;
				Program		prog;

				memset(&prog, 0, sizeof(prog));
				emit(&prog, GJOP_LOAD_OUTER, GJT_INT8, 0, 0);
				emit(&prog, GJOP_LOAD_INNER, GJT_INT8, 4, 0);
				emit(&prog, op0, GJ_CLASS_INT, 0, 0);
				emit(&prog, GJOP_LOAD_OUTER, GJT_INT8, 6, 0);
				emit(&prog, GJOP_LOAD_INNER, GJT_INT8, 6, 0);
				emit(&prog, op1, GJ_CLASS_INT, 0, 0);
				emit(&prog, GJOP_AND, GJT_BOOL, 0, 0);
				ok = gj_program_compare_conjunction(prog.instrs, prog.ninstrs, &conj) &&
					rc_check(who, outer, inner, &conj, &prog, &tile, RC_OUTER / 5, RC_OUTER);
			}
		}
	}
	report(ok, "%s: %s", rc_counter_names[who],
		   "every pair of the six operators over int8 and int4 extremes");
}

/*
 * Empty tiles and ranges, one row, and an inner side whose key column is
 * NULL throughout: nothing is counted, and nothing outside the range
 * written.
 */
static void
rc_test_edges(RcCounter who, const Side *outer, const Side *inner)
{
	static const int64_t tiles[][4] = {
		{0, RC_OUTER, 0, 0},	/* no inner rows */
		{0, RC_OUTER, 7, 7},
		{3, 4, 0, RC_INNER},	/* one outer row */
		{RC_OUTER - 1, RC_OUTER, RC_INNER - 1, RC_INNER},	/* one pair */
		{0, RC_OUTER, 4095, 4097},	/* across a block boundary */
	};
	Side		nulls = *inner;
	uint8_t    *all_null = xmalloc(inner->nrows);
	bool		ok = true;
	int			t;

	memset(all_null, 1, inner->nrows);
	nulls.cols.isnull[0] = all_null;
	for (t = 0; t < (int) (sizeof(tiles) / sizeof(tiles[0])) + 1 && ok; t++)
	{
		GjCompareConjunction conj;
		Program		prog;
		GjTile		tile;

		if (t < (int) (sizeof(tiles) / sizeof(tiles[0])))
		{
			tile.outer_begin = tiles[t][0];
			tile.outer_end = tiles[t][1];
			tile.inner_begin = tiles[t][2];
			tile.inner_end = tiles[t][3];
		}
		else
			rc_random_tile(outer->nrows, inner->nrows, &tile);
		rc_random_conjunction(&rc_flavours[0], 2, true, &conj, &prog);
		/* the last: the first compare's inner column is NULL throughout */
		if (t == (int) (sizeof(tiles) / sizeof(tiles[0])))
		{
			conj.cmp[0].inner_col = 0;
			conj.cmp[0].outer_col = 0;
			conj.cmp[0].cls = GJ_CLASS_INT;
			memset(&prog, 0, sizeof(prog));
			emit(&prog, GJOP_LOAD_OUTER, GJT_INT8, 0, 0);
			emit(&prog, GJOP_LOAD_INNER, GJT_INT8, 0, 0);
			emit(&prog, conj.cmp[0].op, GJ_CLASS_INT, 0, 0);
			emit(&prog, GJOP_LOAD_OUTER, conj.cmp[1].cls == GJ_CLASS_FLOAT ? GJT_FLOAT8 : GJT_INT8,
				 conj.cmp[1].outer_col, 0);
			emit(&prog, GJOP_LOAD_INNER, conj.cmp[1].cls == GJ_CLASS_FLOAT ? GJT_FLOAT8 : GJT_INT8,
				 conj.cmp[1].inner_col, 0);
			emit(&prog, conj.cmp[1].op, conj.cmp[1].cls, 0, 0);
			emit(&prog, GJOP_AND, GJT_BOOL, 0, 0);
		}
		ok = rc_check(who, outer, t == (int) (sizeof(tiles) / sizeof(tiles[0])) ? &nulls : inner,
					  &conj, &prog, &tile, tile.outer_begin, tile.outer_end);
	}
	free(all_null);
	report(ok, "%s: %s", rc_counter_names[who],
		   "empty tiles, one row, one pair, a block boundary, keys all NULL");
}

/*
 * gj_program_compare_conjunction on programs that are conjunctions (every
 * nesting of AND, 1 to 4 compares, float and int) and on programs that are
 * not; gj_conjunction_is_dominance.
 */
static void
rc_test_parse(void)
{
	GjCompareConjunction conj;
	Program		p;
	bool		ok = true;
	int			t,
				k;

	for (t = 0; t < 200 && ok; t++)
	{
		GjCompareConjunction want;

		rc_random_conjunction(&rc_flavours[t % RC_NFLAVOURS], 1 + t % GJ_MAX_CONJUNCTS,
							  t % 2 == 0, &want, &p);
		ok = gj_program_compare_conjunction(p.instrs, p.ninstrs, &conj) &&
			rc_same_conjunction(&want, &conj) &&
			gj_conjunction_is_dominance(&conj) ==
			(want.n == 2 && want.cmp[0].op >= GJOP_LT && want.cmp[1].op >= GJOP_LT);
	}
	report(ok, "%s%s", "gj_program_compare_conjunction reads back 200 random conjunctions ",
		   "(AND nested every way, operands either way), gj_conjunction_is_dominance");

	ok = true;
	for (t = 0; t < 9 && ok; t++)
	{
		memset(&p, 0, sizeof(p));
		for (k = 0; k < (t == 0 ? 5 : 2); k++)
		{
			emit(&p, GJOP_LOAD_OUTER, GJT_INT8, k % 3, 0);
			emit(&p, t == 1 ? GJOP_LOAD_OUTER : GJOP_LOAD_INNER, GJT_INT8, 0, 0);
			emit(&p, t == 2 ? GJOP_ADD : GJOP_LT, t == 2 ? GJT_INT8 : GJ_CLASS_INT, 0, 0);
			if (t == 3 && k == 1)
				emit(&p, GJOP_NOT, GJT_BOOL, 0, 0);
			if (t == 4 && k == 0)
			{
				emit(&p, GJOP_CONST, GJT_INT8, 0, 3);
				emit(&p, GJOP_ADD, GJT_INT8, 0, 0);
			}
			if (k > 0)
				emit(&p, t == 5 ? GJOP_OR : GJOP_AND, GJT_BOOL, 0, 0);
		}
		if (t == 6)
			emit(&p, GJOP_AND, GJT_BOOL, 0, 0);	/* one AND too many */
		if (t == 7)
			p.ninstrs--;		/* no AND: two booleans left */
		if (t == 8)
			p.ninstrs = 0;
		ok = !gj_program_compare_conjunction(p.instrs, p.ninstrs, &conj);
		if (!ok)
			printf("# non-conjunction %d was taken for one\n", t);
	}
	/* a conjunction of compares is recognised once it is one */
	memset(&p, 0, sizeof(p));
	emit(&p, GJOP_LOAD_INNER, GJT_FLOAT8, 1, 0);
	emit(&p, GJOP_LOAD_OUTER, GJT_FLOAT8, 2, 0);
	emit(&p, GJOP_GE, GJ_CLASS_FLOAT, 0, 0);
	ok = ok && gj_program_compare_conjunction(p.instrs, p.ninstrs, &conj) && conj.n == 1 &&
		conj.cmp[0].op == GJOP_LE && conj.cmp[0].outer_col == 2 &&
		conj.cmp[0].inner_col == 1 && !gj_conjunction_is_dominance(&conj);
	report(ok, "%s%s", "gj_program_compare_conjunction refuses five compares, two outer loads, ",
		   "arithmetic, NOT, OR, a missing or extra AND, an empty program");
}

/*
 * cuda over sides large enough for many outer blocks and inner slices, and
 * row counts that are no multiple of anything: dominance conjunctions
 * against the dominance counter (checked against the reference above), and
 * conjunctions with = and <> against the cpu loop, over sub-tiles.
 */
static void
rc_test_big_cuda(void)
{
	Side		outer,
				inner;
	bool		ok = true;
	int			t;

	rowcount_make_side(&outer, 100003);
	rowcount_make_side(&inner, 250007);
	for (t = 0; t < 8 && ok; t++)
	{
		bool		dominance = t < 6;
		int64_t		o_end = dominance ? outer.nrows : 3001;
		GjTile		tile = {17, o_end, 1001, inner.nrows - 5};
		GjCompareConjunction conj;
		Program		prog;
		GjJoinInput input;
		uint64_t   *want = xmalloc(sizeof(uint64_t) * o_end);
		uint64_t   *got = xmalloc(sizeof(uint64_t) * o_end);

		rc_random_conjunction(&rc_flavours[t % RC_NFLAVOURS], dominance ? 2 : 3, dominance,
							  &conj, &prog);
		if (!dominance)
		{
			/* = and <> read the same either way round */
			conj.cmp[0].op = t % 2 ? GJOP_EQ : GJOP_NE;
			prog.instrs[2].op = conj.cmp[0].op;
		}
		rowcount_input(&input, &outer, &inner, &prog);
		ok = rc_count(dominance ? RC_DOMINANCE : RC_CPU_LOOP, &input, &conj, &tile,
					  tile.outer_begin, tile.outer_end, want) &&
			rc_count(RC_CUDA, &input, &conj, &tile, tile.outer_begin, tile.outer_end, got) &&
			rc_same_counts(want, got, tile.outer_end - tile.outer_begin, "cuda (big)", &conj,
						   &tile, tile.outer_begin);
		free(want);
		free(got);
	}
	rowcount_free_side(&outer);
	rowcount_free_side(&inner);
	report(ok, "%s%s", "cuda rowcount: 100k x 250k rows, against the dominance counter ",
		   "and the cpu loop");
}

/* Tests that run_rowcount_tests reports. */
int
rowcount_test_count(bool cuda)
{
	int			cpu = 2 + RC_NFLAVOURS * GJ_MAX_CONJUNCTS + 2 + RC_NFLAVOURS + 1;

	return cpu + (cuda ? RC_NFLAVOURS * GJ_MAX_CONJUNCTS + RC_NFLAVOURS + 2 + 1 : 0) +
		program_count_test_count(cuda);
}

/*
 * The cpu tests (the conjunction loop and the dominance counter), and with
 * cuda the cuda rowcount: per flavour of keys and number of compares,
 * random conjunctions over random sub-tiles, each against the reference.
 */
void
run_rowcount_tests(bool cuda)
{
	Side		outer,
				inner;
	int			f,
				n;

	printf("# per-row match counts of compare conjunctions, %d x %d rows\n", RC_OUTER, RC_INNER);
	rowcount_make_side(&outer, RC_OUTER);
	rowcount_make_side(&inner, RC_INNER);
	rc_test_parse();
	for (f = 0; f < RC_NFLAVOURS; f++)
		for (n = 1; n <= GJ_MAX_CONJUNCTS; n++)
			rc_test_random(RC_CPU_LOOP, &outer, &inner, &rc_flavours[f], n, false);
	rc_test_extremes(RC_CPU_LOOP, &outer, &inner);
	rc_test_edges(RC_CPU_LOOP, &outer, &inner);
	for (f = 0; f < RC_NFLAVOURS; f++)
		rc_test_dominance(RC_DOMINANCE, &outer, &inner, &rc_flavours[f]);
	rc_test_edges(RC_DOMINANCE, &outer, &inner);
	if (cuda)
	{
		for (f = 0; f < RC_NFLAVOURS; f++)
			for (n = 1; n <= GJ_MAX_CONJUNCTS; n++)
				rc_test_random(RC_CUDA, &outer, &inner, &rc_flavours[f], n, n % 2 == 0);
		for (f = 0; f < RC_NFLAVOURS; f++)
			rc_test_random(RC_CUDA_TOTAL, &outer, &inner, &rc_flavours[f], 1 + f, false);
		rc_test_extremes(RC_CUDA, &outer, &inner);
		rc_test_edges(RC_CUDA, &outer, &inner);
		rc_test_big_cuda();
	}
	rowcount_free_side(&outer);
	rowcount_free_side(&inner);
	run_program_count_tests(cuda);
}

/* ---------------------------------------------------------------------
 * Benchmark
 * ---------------------------------------------------------------------
 */

static double
rc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

/*
 * The cpu conjunction loop over growing prefixes of the outer rows against
 * all n inner rows, until a run takes a second; returns pairs/s, and the
 * counts of the rows it ran in counts.
 */
static double
rc_bench_cpu_loop(const GjJoinInput *input, const GjCompareConjunction *conj, int64_t n,
				  uint64_t *counts, int64_t *rows)
{
	GjTile		tile = {0, n, 0, n};
	int64_t		k = gj_min64(16, n);

	for (;;)
	{
		double		t0 = rc_now_ms();
		double		ms;

		gj_cpu_rowcount_conjunction(input, conj, &tile, 0, k, counts);
		ms = rc_now_ms() - t0;
		if (ms > 1000 || k == n)
		{
			*rows = k;
			return (double) k * n / (ms / 1000.0);
		}
		k = gj_min64(2 * k, n);
	}
}

/* gj_cuda_rowcount over all n x n pairs; false if it failed. */
static bool
rc_bench_cuda(const GjJoinInput *input, const GjCompareConjunction *conj, int64_t n,
			  uint64_t *counts, uint64_t *total)
{
	GjTile		tile = {0, n, 0, n};
	GjError		err;
	GjStats		stats;
	void	   *state;
	int			pass;

	memset(&err, 0, sizeof(err));
	state = gj_cuda_backend.begin_join(input, &err);
	if (state == NULL)
	{
		printf("begin_join failed: %s\n", err.message);
		return false;
	}
	/* the first pass uploads the columns and warms up; then total, counts */
	for (pass = 0; pass < 3; pass++)
	{
		double		t0 = rc_now_ms(),
					wall;

		memset(&stats, 0, sizeof(stats));
		if (!gj_cuda_test_rowcount(state, conj, &tile, 0, n, pass == 2 ? counts : NULL,
								   total, &stats, &err))
		{
			printf("cuda rowcount failed: %s\n", err.message);
			gj_cuda_backend.end_join(state);
			return false;
		}
		wall = rc_now_ms() - t0;
		if (pass > 0)
			printf("cuda rowcount %s: kernel %.2f ms = %.3g pairs/s, wall %.2f ms "
				   "(%lld bytes back)\n", pass == 1 ? "total only" : "per-row counts",
				   stats.kernel_ms, (double) n * n / (stats.kernel_ms / 1000.0), wall,
				   (long long) stats.bytes_from_device);
	}
	gj_cuda_backend.end_join(state);
	return true;
}

/*
 * bench: "o.a < i.a AND o.b > i.b" on n x n rows of random int4 values,
 * then of int8 values (the 64-bit loops): the cpu conjunction loop, the
 * dominance counter, and cuda when there is a device.  The counts of the
 * three are compared.
 */
int
bench_rowcount(int64_t n)
{
	Side		outer,
				inner;
	Program		prog;
	GjCompareConjunction conj;
	GjJoinInput input;
	GjDeviceInfo info;
	GjError		err;
	GjDominance *dom;
	uint64_t   *dom_counts = xmalloc(sizeof(uint64_t) * n);
	uint64_t   *counts = xmalloc(sizeof(uint64_t) * n);
	uint64_t	dom_total = 0,
				total = 0;
	int64_t		rows,
				i;
	int			wide,
				c;
	double		t0,
				build_ms,
				count_ms,
				rate;
	bool		ok = true;

	memset(&prog, 0, sizeof(prog));
	emit(&prog, GJOP_LOAD_OUTER, GJT_INT4, 0, 0);
	emit(&prog, GJOP_LOAD_INNER, GJT_INT4, 0, 0);
	emit(&prog, GJOP_LT, GJ_CLASS_INT, 0, 0);
	emit(&prog, GJOP_LOAD_OUTER, GJT_INT4, 1, 0);
	emit(&prog, GJOP_LOAD_INNER, GJT_INT4, 1, 0);
	emit(&prog, GJOP_GT, GJ_CLASS_INT, 0, 0);
	emit(&prog, GJOP_AND, GJT_BOOL, 0, 0);
	if (!gj_program_compare_conjunction(prog.instrs, prog.ninstrs, &conj))
		return 1;
	printf("rowcount o.a < i.a AND o.b > i.b, %lld x %lld rows\n", (long long) n, (long long) n);

	for (wide = 0; wide < 2; wide++)
	{
		Side	   *sides[2] = {&outer, &inner};
		int			s;

		for (s = 0; s < 2; s++)
		{
			memset(sides[s], 0, sizeof(Side));
			sides[s]->nrows = n;
			sides[s]->cols.ncols = 2;
			for (c = 0; c < 2; c++)
			{
				int64_t    *v = xmalloc(sizeof(int64_t) * n);

				for (i = 0; i < n; i++)
					v[i] = wide ? (int64_t) rng() : (int32_t) (uint32_t) rng();
				sides[s]->cols.values[c] = v;
			}
		}
		rowcount_input(&input, &outer, &inner, &prog);
		printf("%s keys:\n", wide ? "int8" : "int4");
		rate = rc_bench_cpu_loop(&input, &conj, n, counts, &rows);
		printf("cpu conjunction loop: %lld x %lld pairs, %.3g pairs/s (one core)\n",
			   (long long) rows, (long long) n, rate);

		dom_total = 0;
		t0 = rc_now_ms();
		dom = gj_dominance_build(&input, &conj, 0, n);
		build_ms = rc_now_ms() - t0;
		t0 = rc_now_ms();
		ok = dom != NULL && gj_dominance_count(dom, &input, 0, n, dom_counts);
		count_ms = rc_now_ms() - t0;
		gj_dominance_free(dom);
		for (i = 0; i < n; i++)
			dom_total += dom_counts[i];
		ok = ok && memcmp(counts, dom_counts, sizeof(uint64_t) * rows) == 0;
		printf("cpu dominance counter: build %.1f ms, count %.1f ms, %llu matches (%s), "
			   "%.3g pairs/s equivalent\n", build_ms, count_ms, (unsigned long long) dom_total,
			   ok ? "agrees with the loop" : "WRONG", (double) n * n / ((build_ms + count_ms) / 1000.0));

		memset(&err, 0, sizeof(err));
		if (gj_cuda_probe(&info, &err))
		{
			printf("device: %s, %d SMs\n", info.name, info.sm_count);
			ok = rc_bench_cuda(&input, &conj, n, counts, &total) && ok;
			ok = ok && total == dom_total && memcmp(counts, dom_counts, sizeof(uint64_t) * n) == 0;
			printf("cuda rowcount: %llu matches (%s)\n", (unsigned long long) total,
				   ok ? "correct" : "WRONG");
		}
		else
			printf("no CUDA device: %s\n", err.message);
		for (s = 0; s < 2; s++)
			for (c = 0; c < 2; c++)
				free((void *) sides[s]->cols.values[c]);
	}
	free(dom_counts);
	free(counts);
	return ok ? 0 : 1;
}

/*-------------------------------------------------------------------------
 *
 * kt_compiled.c
 *	  Device programs compiled to GPU code (cuda/cuda_compile.cu): without
 *	  a GPU, that NVRTC compiles the count kernel of every program kernel_test
 *	  knows, and that the PTX keeps the program's stack in registers
 *	  (run_nvrtc_tests, kernel_test nvrtc; a few of them in kernel_test
 *	  cpu); with one, the speed of programs of up to 8 operators compiled
 *	  and interpreted (bench_program_count_compiled).  The compiled counts
 *	  are checked against the interpreter's in kt_program_count.c.
 *
 *	  Every check skips ("ok N # SKIP no NVRTC") where libnvrtc is missing,
 *	  as on CI's machine, whose build has no cuda backend at all.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <float.h>
#include <math.h>
#include <time.h>

#include "kt_common.h"
#include "kernels/shared/gj_keys.h"
#include "kernels/shared/flat_program.h"

/* The test hooks of cuda/cuda_compile.cu (cuda_stub.c without nvcc). */
extern char *gj_cuda_test_compile_program(int kind, const GjInstr *instrs, int ninstrs,
										  uint32_t outer_nullable, uint32_t inner_nullable,
										  int arch, double *ms, char *message,
										  size_t message_len);
extern const char *gj_cuda_test_nvrtc_path(void);
extern void gj_cuda_test_set_compiled_rows(int rows);
extern void gj_cuda_test_set_quick_only(bool on);
extern void gj_cuda_test_set_compile_options(const char *options);
extern void gj_cuda_test_set_hoisting(bool on);
extern void gj_cuda_test_set_flat(bool on);
extern void gj_cuda_test_set_pairs_whole(bool on);
extern int	gj_cuda_test_compiled_rows(const GjInstr *instrs, int ninstrs);

/* The architecture the checks compile for: the H100's. */
#define KT_ARCH		90

/*
 * cuda_internal.cuh's kinds: the program count kernel, the nested loop's
 * pairs, a filtered sort-merge or hash step's count pass
 */
#define KT_KIND_COUNT	1
#define KT_KIND_PAIRS	2
#define KT_KIND_SORTED	3
#define KT_KIND_BITS	4

/* ---------------------------------------------------------------------
 * Programs of up to 8 operators over int4, int8 and float8
 * ---------------------------------------------------------------------
 */

/*
 * The bench's columns: 0 and 1 int4 in [0, 1e9) (bench_devices.sh's x and
 * y), 2 and 3 int8 in [-1e12, 1e12), 4 and 5 float8 in [0, 1).
 */
#define KB_COLS		6

static void
kb_compare(Program *p, int op, int type, int ocol, int icol)
{
	emit(p, GJOP_LOAD_OUTER, type, ocol, 0);
	emit(p, GJOP_LOAD_INNER, type, icol, 0);
	emit(p, op, type == GJT_FLOAT8 ? GJ_CLASS_FLOAT : GJ_CLASS_INT, 0, 0);
}

/* The bench's programs; returns how many. */
int
compiled_bench_programs(Program *progs)
{
	int			n = 0;
	Program    *p;

	/* issue 37's: 6 operators, two of them leading compares */
	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "o.x < i.x AND o.y > i.y AND o.x + i.y > 0 (int4)";
	kb_compare(p, GJOP_LT, GJT_INT4, 0, 0);
	kb_compare(p, GJOP_GT, GJT_INT4, 1, 1);
	emit(p, GJOP_AND, GJT_BOOL, 0, 0);
	emit(p, GJOP_LOAD_OUTER, GJT_INT4, 0, 0);
	emit(p, GJOP_LOAD_INNER, GJT_INT4, 1, 0);
	emit(p, GJOP_ADD, GJT_INT4, 0, 0);
	emit(p, GJOP_CONST, GJT_INT4, 0, 0);
	emit(p, GJOP_GT, GJ_CLASS_INT, 0, 0);
	emit(p, GJOP_AND, GJT_BOOL, 0, 0);

	/* no leading compare: 3 operators on every pair */
	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "o.a + i.b > o.b - i.a (int8)";
	emit(p, GJOP_LOAD_OUTER, GJT_INT8, 2, 0);
	emit(p, GJOP_LOAD_INNER, GJT_INT8, 3, 0);
	emit(p, GJOP_ADD, GJT_INT8, 0, 0);
	emit(p, GJOP_LOAD_OUTER, GJT_INT8, 3, 0);
	emit(p, GJOP_LOAD_INNER, GJT_INT8, 2, 0);
	emit(p, GJOP_SUB, GJT_INT8, 0, 0);
	emit(p, GJOP_GT, GJ_CLASS_INT, 0, 0);

	/* a float product after a leading compare: 4 operators */
	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "o.x < i.x AND o.f * i.f < 0.5 (int4, float8)";
	kb_compare(p, GJOP_LT, GJT_INT4, 0, 0);
	emit(p, GJOP_LOAD_OUTER, GJT_FLOAT8, 4, 0);
	emit(p, GJOP_LOAD_INNER, GJT_FLOAT8, 4, 0);
	emit(p, GJOP_MUL, GJT_FLOAT8, 0, 0);
	emit(p, GJOP_CONST, GJT_FLOAT8, 0, dbits(0.5));
	emit(p, GJOP_LT, GJ_CLASS_FLOAT, 0, 0);
	emit(p, GJOP_AND, GJT_BOOL, 0, 0);

	/* int8 arithmetic, then <>: 5 operators */
	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "(o.a - i.a) * 2 > o.b AND o.x <> i.y (int8, int4)";
	emit(p, GJOP_LOAD_OUTER, GJT_INT8, 2, 0);
	emit(p, GJOP_LOAD_INNER, GJT_INT8, 2, 0);
	emit(p, GJOP_SUB, GJT_INT8, 0, 0);
	emit(p, GJOP_CONST, GJT_INT8, 0, 2);
	emit(p, GJOP_MUL, GJT_INT8, 0, 0);
	emit(p, GJOP_LOAD_OUTER, GJT_INT8, 3, 0);
	emit(p, GJOP_GT, GJ_CLASS_INT, 0, 0);
	kb_compare(p, GJOP_NE, GJT_INT4, 0, 1);
	emit(p, GJOP_AND, GJT_BOOL, 0, 0);

	/* float8 alone: 5 operators */
	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "o.f + i.f > 1.0 AND o.f * i.g < 0.5 (float8)";
	emit(p, GJOP_LOAD_OUTER, GJT_FLOAT8, 4, 0);
	emit(p, GJOP_LOAD_INNER, GJT_FLOAT8, 4, 0);
	emit(p, GJOP_ADD, GJT_FLOAT8, 0, 0);
	emit(p, GJOP_CONST, GJT_FLOAT8, 0, dbits(1.0));
	emit(p, GJOP_GT, GJ_CLASS_FLOAT, 0, 0);
	emit(p, GJOP_LOAD_OUTER, GJT_FLOAT8, 4, 0);
	emit(p, GJOP_LOAD_INNER, GJT_FLOAT8, 5, 0);
	emit(p, GJOP_MUL, GJT_FLOAT8, 0, 0);
	emit(p, GJOP_CONST, GJT_FLOAT8, 0, dbits(0.5));
	emit(p, GJOP_LT, GJ_CLASS_FLOAT, 0, 0);
	emit(p, GJOP_AND, GJT_BOOL, 0, 0);

	/* 8 operators over all three types */
	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "o.x < i.x AND abs(o.f - i.f) < 0.25 AND o.a + i.b > 0 (int4, float8, int8)";
	kb_compare(p, GJOP_LT, GJT_INT4, 0, 0);
	emit(p, GJOP_LOAD_OUTER, GJT_FLOAT8, 4, 0);
	emit(p, GJOP_LOAD_INNER, GJT_FLOAT8, 4, 0);
	emit(p, GJOP_SUB, GJT_FLOAT8, 0, 0);
	emit(p, GJOP_ABS, GJT_FLOAT8, 0, 0);
	emit(p, GJOP_CONST, GJT_FLOAT8, 0, dbits(0.25));
	emit(p, GJOP_LT, GJ_CLASS_FLOAT, 0, 0);
	emit(p, GJOP_AND, GJT_BOOL, 0, 0);
	emit(p, GJOP_LOAD_OUTER, GJT_INT8, 2, 0);
	emit(p, GJOP_LOAD_INNER, GJT_INT8, 3, 0);
	emit(p, GJOP_ADD, GJT_INT8, 0, 0);
	emit(p, GJOP_CONST, GJT_INT8, 0, 0);
	emit(p, GJOP_GT, GJ_CLASS_INT, 0, 0);
	emit(p, GJOP_AND, GJT_BOOL, 0, 0);

	/* a division on every pair: 3 operators */
	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "o.x / (i.y + 1) > 3 (int4)";
	emit(p, GJOP_LOAD_OUTER, GJT_INT4, 0, 0);
	emit(p, GJOP_LOAD_INNER, GJT_INT4, 1, 0);
	emit(p, GJOP_CONST, GJT_INT4, 0, 1);
	emit(p, GJOP_ADD, GJT_INT4, 0, 0);
	emit(p, GJOP_DIV, GJT_INT4, 0, 0);
	emit(p, GJOP_CONST, GJT_INT4, 0, 3);
	emit(p, GJOP_GT, GJ_CLASS_INT, 0, 0);
	return n;
}

/* Operators of a program: its instructions that are no load or constant. */
static int
kb_operators(const Program *p)
{
	int			n = 0;

	for (int pc = 0; pc < p->ninstrs; pc++)
		n += p->instrs[pc].op != GJOP_LOAD_OUTER && p->instrs[pc].op != GJOP_LOAD_INNER &&
			p->instrs[pc].op != GJOP_CONST && p->instrs[pc].op != GJOP_CONST_NULL;
	return n;
}

/* ---------------------------------------------------------------------
 * 32-bit evaluation (no GPU: the functions are device_program.h's)
 * ---------------------------------------------------------------------
 */

/* int32 values around every edge of int2, int4 and their products. */
static const int32_t n32_edges[] = {
	INT32_MIN, INT32_MIN + 1, -1073741825, -65536, -46341, -46340, -32769, -32768,
	-32767, -181, -2, -1, 0, 1, 2, 3, 7, 181, 32767, 32768, 46340, 46341, 65536,
	1073741824, INT32_MAX - 1, INT32_MAX
};

#define N32_NEDGES ((int) (sizeof(n32_edges) / sizeof(n32_edges[0])))

/*
 * gj_int_arith32 against gj_int_arith (int2 and int4, every operator) and
 * gj_apply_compare32 against gj_apply_compare, over every pair of the
 * edges and 200000 random pairs: the same success, the same result.
 */
static void
n32_test_arith(void)
{
	static const int ops[] = {GJOP_ADD, GJOP_SUB, GJOP_MUL, GJOP_DIV, GJOP_MOD, GJOP_NEG,
	GJOP_ABS, GJOP_EQ, GJOP_NE, GJOP_LT, GJOP_LE, GJOP_GT, GJOP_GE};
	int			bad = 0;
	int64_t		checked = 0;

	for (int k = 0; k < N32_NEDGES * N32_NEDGES + 200000; k++)
	{
		int32_t		a,
					b;

		if (k < N32_NEDGES * N32_NEDGES)
		{
			a = n32_edges[k / N32_NEDGES];
			b = n32_edges[k % N32_NEDGES];
		}
		else
		{
			/* small, int2-sized and any: all three mixed */
			int			shape = (int) (rng() % 3);

			a = shape == 0 ? (int32_t) (rng() % 201) - 100 :
				shape == 1 ? (int32_t) (rng() % 65536) - 32768 : (int32_t) (uint32_t) rng();
			b = (int32_t) (uint32_t) rng();
			if (rng() % 2)
				b = (int32_t) (rng() % 201) - 100;
		}
		for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
		{
			for (int type = GJT_INT2; type <= GJT_INT4; type++)
			{
				GjInstr		in = {(int16_t) ops[o], (int16_t) type, 0, 0};
				GjSlot		s64[2],
							s32[2];
				bool		n64[2] = {false, false},
							n32[2] = {false, false};
				int			sp64 = 2,
							sp32 = 2;
				bool		ok64,
							ok32;
				bool		unary = ops[o] == GJOP_NEG || ops[o] == GJOP_ABS;
				bool		compare = ops[o] >= GJOP_EQ && ops[o] <= GJOP_GE;

				if (compare && type == GJT_INT2)
					continue;
				if (compare)
					in.type = GJ_CLASS_INT;
				s64[0].i = s32[0].i = unary ? b : a;
				s64[1].i = s32[1].i = b;
				ok64 = compare ? gj_apply_compare(&in, s64, n64, &sp64) :
					unary ? gj_apply_unary(&in, s64, n64, &sp64) :
					gj_apply_arith(&in, s64, n64, &sp64);
				ok32 = compare ? gj_apply_compare32(&in, s32, n32, &sp32) :
					unary ? gj_apply_unary32(&in, s32, n32, &sp32) :
					gj_apply_arith32(&in, s32, n32, &sp32);
				checked++;
				if (ok64 != ok32 || sp64 != sp32 || n64[0] != n32[0] ||
					(ok64 && s64[sp64 - 1].i != s32[sp32 - 1].i))
				{
					if (bad++ < 5)
						printf("# op %d type %d, %d and %d: 64 bits %s %lld, 32 bits %s %lld\n",
							   ops[o], type, a, b, ok64 ? "ok" : "fails",
							   (long long) s64[sp64 - 1].i, ok32 ? "ok" : "fails",
							   (long long) s32[sp32 - 1].i);
				}
			}
		}
	}
	printf("# %lld operations compared\n", (long long) checked);
	report(bad == 0, "%s%s", "32-bit int2/int4 arithmetic and compares: the interpreter's",
		   " answers (edges of int2, int4 and products, random operands)");
}

/* One hand-written program and what gj_program_narrow must make of it. */
typedef struct N32Case
{
	const char *name;
	const char *op32;			/* per instruction: 1 runs in 32 bits */
	uint32_t	outer_cols;
	uint32_t	inner_cols;
	const char *variant;
} N32Case;

static void
n32_test_narrow(void)
{
	Program		p[8];
	N32Case		cases[8];
	int			n = 0;
	bool		ok = true;

	/* issue 37's program: every integer in 32 bits */
	memset(p, 0, sizeof(p));
	compiled_bench_programs(p);	/* [0] is it; it overwrites [0] to [6] */
	cases[n++] = (N32Case) {"three quals, int4", "0010010001010", 0x3, 0x3, "compiled32"};

	/* [1], int8 sums: nothing */
	cases[n++] = (N32Case) {"int8 sums", "0000000", 0, 0, "compiled64"};

	/* int4 column against an int8 one: a 64-bit compare; int4 sum after it */
	memset(&p[n], 0, sizeof(Program));
	emit(&p[n], GJOP_LOAD_OUTER, GJT_INT4, 0, 0);
	emit(&p[n], GJOP_LOAD_INNER, GJT_INT8, 1, 0);
	emit(&p[n], GJOP_LT, GJ_CLASS_INT, 0, 0);
	emit(&p[n], GJOP_LOAD_OUTER, GJT_INT4, 0, 0);
	emit(&p[n], GJOP_CONST, GJT_INT4, 0, 7);
	emit(&p[n], GJOP_ADD, GJT_INT4, 0, 0);
	emit(&p[n], GJOP_LOAD_INNER, GJT_INT2, 2, 0);
	emit(&p[n], GJOP_GE, GJ_CLASS_INT, 0, 0);
	emit(&p[n], GJOP_AND, GJT_BOOL, 0, 0);
	cases[n++] = (N32Case) {"int4 < int8, int4 + 7 >= int2", "000001010", 0x1, 0x4,
	"compiled32/64"};

	/* loads typed bool (kernel_test's nested-loop programs) and oids: 64 bits */
	memset(&p[n], 0, sizeof(Program));
	emit(&p[n], GJOP_LOAD_OUTER, GJT_BOOL, 0, 0);
	emit(&p[n], GJOP_LOAD_INNER, GJT_BOOL, 0, 0);
	emit(&p[n], GJOP_CONST, GJT_INT4, 0, 5);
	emit(&p[n], GJOP_ADD, GJT_INT4, 0, 0);
	emit(&p[n], GJOP_GE, GJ_CLASS_INT, 0, 0);
	emit(&p[n], GJOP_LOAD_OUTER, GJT_OID, 1, 0);
	emit(&p[n], GJOP_LOAD_INNER, GJT_OID, 1, 0);
	emit(&p[n], GJOP_LT, GJ_CLASS_INT, 0, 0);
	emit(&p[n], GJOP_AND, GJT_BOOL, 0, 0);
	cases[n++] = (N32Case) {"bool-typed loads, oids", "000000000", 0, 0, "compiled64"};

	/* a constant outside int4, then int8 narrowed: the sum after it in 32 bits */
	memset(&p[n], 0, sizeof(Program));
	emit(&p[n], GJOP_LOAD_OUTER, GJT_INT4, 0, 0);
	emit(&p[n], GJOP_CONST, GJT_INT4, 0, (int64_t) INT32_MAX + 1);
	emit(&p[n], GJOP_LT, GJ_CLASS_INT, 0, 0);
	emit(&p[n], GJOP_LOAD_INNER, GJT_INT8, 0, 0);
	emit(&p[n], GJOP_INT_NARROW, GJT_INT4, 0, 0);
	emit(&p[n], GJOP_LOAD_OUTER, GJT_INT4, 0, 0);
	emit(&p[n], GJOP_MUL, GJT_INT4, 0, 0);
	emit(&p[n], GJOP_NEG, GJT_INT4, 0, 0);
	emit(&p[n], GJOP_CONST, GJT_INT4, 0, -3);
	emit(&p[n], GJOP_GT, GJ_CLASS_INT, 0, 0);
	emit(&p[n], GJOP_AND, GJT_BOOL, 0, 0);
	cases[n++] = (N32Case) {"int4 < 2^31, -(int8::int4 * int4) > -3", "00000011010", 0x1, 0,
	"compiled32/64"};

	/* the same column loaded as int4 and as int8: kept in 64 bits */
	memset(&p[n], 0, sizeof(Program));
	emit(&p[n], GJOP_LOAD_OUTER, GJT_INT4, 3, 0);
	emit(&p[n], GJOP_LOAD_INNER, GJT_INT4, 3, 0);
	emit(&p[n], GJOP_SUB, GJT_INT4, 0, 0);
	emit(&p[n], GJOP_LOAD_INNER, GJT_INT8, 3, 0);
	emit(&p[n], GJOP_EQ, GJ_CLASS_INT, 0, 0);
	cases[n++] = (N32Case) {"a column loaded as int4 and int8", "00100", 0x8, 0,
	"compiled32/64"};

	for (int i = 0; i < n; i++)
	{
		GjNarrowing nw;
		char		got[GJ_MAX_INSTRS + 1];

		gj_program_narrow(p[i].instrs, p[i].ninstrs, &nw);
		for (int pc = 0; pc < p[i].ninstrs; pc++)
			got[pc] = nw.op32[pc] ? '1' : '0';
		got[p[i].ninstrs] = '\0';
		if (strcmp(got, cases[i].op32) != 0 || nw.outer_cols != cases[i].outer_cols ||
			nw.inner_cols != cases[i].inner_cols ||
			strcmp(gj_program_variant(&nw), cases[i].variant) != 0)
		{
			printf("# %s: op32 %s (want %s), columns 0x%x 0x%x (want 0x%x 0x%x), %s (want %s)\n",
				   cases[i].name, got, cases[i].op32, nw.outer_cols, nw.inner_cols,
				   cases[i].outer_cols, cases[i].inner_cols, gj_program_variant(&nw),
				   cases[i].variant);
			ok = false;
		}
	}
	report(ok, "%s%s", "gj_program_narrow: which steps and columns of hand-written programs",
		   " run in 32 bits (int4, int2, int8, bool-typed loads, oids, constants, narrowing)");
}

#define KT_FLOAT_EDGES 24

/*
 * The floats whose every pair the float tests try first: NaNs of either
 * sign and another payload, infinities, zeros of both signs, the smallest
 * subnormals and normals, the largest finite, values whose sums and
 * products overflow or underflow float8 or float4, and a few plain ones.
 */
static int
float_edges(double *edges)
{
	int			n = 0;

	edges[n++] = NAN;
	edges[n++] = -NAN;
	edges[n++] = gj_bits_to_double(INT64_C(0x7ff0000000000123));
	edges[n++] = INFINITY;
	edges[n++] = -INFINITY;
	edges[n++] = 0.0;
	edges[n++] = -0.0;
	edges[n++] = gj_bits_to_double(1);
	edges[n++] = -gj_bits_to_double(1);
	edges[n++] = DBL_MIN;
	edges[n++] = DBL_MAX;
	edges[n++] = -DBL_MAX;
	edges[n++] = 1e-200;
	edges[n++] = 1e200;
	edges[n++] = FLT_MAX;
	edges[n++] = FLT_MIN;
	edges[n++] = 1e-30;
	edges[n++] = 1e30;
	edges[n++] = 1.0;
	edges[n++] = -1.0;
	edges[n++] = 0.5;
	edges[n++] = -0.5;
	return n;
}

/* What a float test counts: the cases checked, and those that failed. */
typedef struct FloatCheck
{
	int			bad;
	int64_t		checked;
} FloatCheck;

/*
 * Run check on the operands of a float test: every pair of float_edges,
 * then a random bit pattern against an edge or another random one (or,
 * with same, a quarter of the time against itself).
 */
static void
float_pairs_run(bool same, void (*check) (double a, double b, FloatCheck *fc), FloatCheck *fc)
{
	double		edges[KT_FLOAT_EDGES];
	int			nedges = float_edges(edges);

	memset(fc, 0, sizeof(*fc));
	for (int k = 0; k < nedges * nedges + 200000; k++)
	{
		double		a,
					b;

		if (k < nedges * nedges)
		{
			a = edges[k / nedges];
			b = edges[k % nedges];
		}
		else
		{
			a = gj_bits_to_double((int64_t) rng());
			b = same && rng() % 4 == 0 ? a : rng() % 2 ? edges[rng() % nedges] :
				gj_bits_to_double((int64_t) rng());
		}
		check(a, b, fc);
	}
}

/*
 * gj_float_cmp_holds, and gj_float_cmp_holds_known where its operand is not
 * NaN, against gj_cmp_holds over gj_float_cmp, the order they shorten:
 * every pair of float_edges and random bit patterns, each op.
 */
static void
float_cmp_check(double a, double b, FloatCheck *fc)
{
	for (int op = GJOP_EQ; op <= GJOP_GE; op++)
	{
		bool		want = gj_cmp_holds(op, gj_float_cmp(a, b));

		fc->checked++;
		if (gj_float_cmp_holds(op, a, b) != want && fc->bad++ < 5)
			printf("# op %d, %.17g against %.17g: %d, the order says %d\n", op, a, b,
				   gj_float_cmp_holds(op, a, b), want);
		/* the forms for a constant operand, where it is not NaN */
		for (int known = 0; known < 2; known++)
		{
			if (isnan(known ? b : a))
				continue;
			fc->checked++;
			if (gj_float_cmp_holds_known(op, a, b, known) != want && fc->bad++ < 5)
				printf("# op %d, %.17g against %.17g, %s not NaN: %d, the order says %d\n",
					   op, a, b, known ? "b" : "a", gj_float_cmp_holds_known(op, a, b, known),
					   want);
		}
	}
}

static void
n32_test_float_cmp(void)
{
	FloatCheck	fc;
	char		cases[32];

	float_pairs_run(true, float_cmp_check, &fc);
	snprintf(cases, sizeof(cases), "%lld", (long long) fc.checked);
	report(fc.bad == 0, "gj_float_cmp_holds(_known): the float order's compares, NaN, infinities and "
		   "zeros included (%s cases%s", cases, ")");
}

/*
 * PostgreSQL's error tests of float8_pl, _mi, _mul and _div (float.h), and
 * of float4's, where b == 0 divides: does "a op b" raise an error?
 */
static bool
pg_float_op_fails(int op, double a, double b, double r)
{
	switch (op)
	{
		case GJOP_ADD:
		case GJOP_SUB:
			return isinf(r) && !isinf(a) && !isinf(b);
		case GJOP_MUL:
			return (isinf(r) && !isinf(a) && !isinf(b)) ||
				(r == 0.0 && a != 0.0 && b != 0.0);
		default:				/* GJOP_DIV */
			return (b == 0.0 && !isnan(a)) || (isinf(r) && !isinf(a)) ||
				(r == 0.0 && a != 0.0 && !isinf(b));
	}
}

/*
 * gj_float_arith's float8 and float4 + - * / against PostgreSQL's: where
 * PostgreSQL raises an error the step fails (the pair goes to the host),
 * and otherwise it gives PostgreSQL's result, bit for bit (any NaN for a
 * NaN), but for a division by zero of NaN, which it leaves to the host
 * too.  Every pair of float_edges and random bit patterns.
 */
static void
float_arith_check(double a, double b, FloatCheck *fc)
{
	for (int type = 0; type < 2; type++)
	{
		int			gtype = type ? GJT_FLOAT4 : GJT_FLOAT8;
		double		ta = type ? (double) (float) a : a,
					tb = type ? (double) (float) b : b;

		for (int op = GJOP_ADD; op <= GJOP_DIV; op++)
		{
			double		r = 0,
						want;
			bool		ok,
						want_ok;

			if (type)
			{
				float		fa = (float) ta,
							fb = (float) tb;

				want = op == GJOP_ADD ? fa + fb : op == GJOP_SUB ? fa - fb :
					op == GJOP_MUL ? fa * fb : fb == 0.0f ? 0 : fa / fb;
			}
			else
				want = op == GJOP_ADD ? ta + tb : op == GJOP_SUB ? ta - tb :
					op == GJOP_MUL ? ta * tb : tb == 0.0 ? 0 : ta / tb;
			want_ok = !pg_float_op_fails(op, ta, tb, want) && !(op == GJOP_DIV && tb == 0.0);
			ok = gj_float_arith(op, gtype, ta, tb, &r);
			fc->checked++;
			if ((ok != want_ok ||
				 (ok && !(isnan(r) ? isnan(want) :
						  gj_double_to_bits(r) == gj_double_to_bits(want)))) &&
				fc->bad++ < 5)
				printf("# %s op %d, %.17g and %.17g: %s %.17g, PostgreSQL %s %.17g\n",
					   type ? "float4" : "float8", op, ta, tb, ok ? "gives" : "fails", r,
					   want_ok ? "gives" : "fails", want);
		}
	}
}

static void
n32_test_float_arith(void)
{
	FloatCheck	fc;
	char		cases[32];

	float_pairs_run(false, float_arith_check, &fc);
	snprintf(cases, sizeof(cases), "%lld", (long long) fc.checked);
	report(fc.bad == 0, "gj_float_arith: float8 and float4 + - * / fail where PostgreSQL's "
		   "raise an error, else give its result (%s cases%s", cases, ")");
}

/*
 * gj_int_arith's int8 sums, differences and products against 128-bit
 * arithmetic: it fails exactly where the result leaves int64, and
 * otherwise gives it.  Edge values (the extremes, their neighbours, powers
 * of two, square roots of the limits) and random operands of every size.
 */
static void
n32_test_int8_arith(void)
{
	static const int64_t base[] = {0, 1, 2, 3, 7, 3037000499, 3037000500, 3037000501,
		INT64_C(4294967295), INT64_C(4294967296), INT64_C(1) << 62, INT64_MAX - 1, INT64_MAX};
	int64_t		edges[2 * sizeof(base) / sizeof(base[0]) + 1];
	int			nedges = 0;
	int			bad = 0;
	int64_t		checked = 0;
	char		cases[32];

	for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
	{
		edges[nedges++] = base[i];
		if (base[i] != 0)
			edges[nedges++] = -base[i];
	}
	edges[nedges++] = INT64_MIN;
	for (int k = 0; k < nedges * nedges + 300000; k++)
	{
		int64_t		a,
					b;

		if (k < nedges * nedges)
		{
			a = edges[k / nedges];
			b = edges[k % nedges];
		}
		else
		{
			/* operands of 1 to 64 significant bits, either sign */
			a = (int64_t) (rng() >> (rng() % 64));
			b = (int64_t) (rng() >> (rng() % 64));
			if (rng() % 2)
				a = (int64_t) (0 - (uint64_t) a);
			if (rng() % 2)
				b = (int64_t) (0 - (uint64_t) b);
		}
		for (int op = GJOP_ADD; op <= GJOP_MUL; op++)
		{
			__int128	want = op == GJOP_ADD ? (__int128) a + b :
				op == GJOP_SUB ? (__int128) a - b : (__int128) a * b;
			bool		fits = want >= INT64_MIN && want <= INT64_MAX;
			int64_t		got = 0;
			bool		ok = gj_int_arith(op, GJT_INT8, a, b, &got);

			checked++;
			if ((ok != fits || (ok && got != (int64_t) want)) && bad++ < 5)
				printf("# op %d, %lld and %lld: %s %lld, want %s\n", op, (long long) a,
					   (long long) b, ok ? "gave" : "failed", (long long) got,
					   fits ? "a result" : "a failure");
		}
	}
	snprintf(cases, sizeof(cases), "%lld", (long long) checked);
	report(bad == 0, "gj_int_arith: int8 +, - and * fail exactly where the result leaves int64, "
		   "against 128-bit arithmetic (%s cases%s", cases, ")");
}

#define N32_TESTS	8			/* with kt_hoist.c's 3 */

/* ---------------------------------------------------------------------
 * NVRTC alone (no GPU)
 * ---------------------------------------------------------------------
 */

#define NV_MAX_PROGRAMS	96

/*
 * The programs of the checks: the bench's, kernel_test's nested-loop
 * programs (kt_specs.c), the program count's int programs and random
 * shapes; at most
 * limit of them (all with limit 0).
 */
static int
nv_programs(Program *progs, int limit)
{
	int			n = compiled_bench_programs(progs);

	n += build_programs(&progs[n]);
	n += program_count_int_programs(&progs[n]);
	for (int s = 0; s < 8; s++)
		program_count_random_program(s % 4, &progs[n++]);
	return limit > 0 && limit < n ? limit : n;
}

/* The same, for kt_flat.c. */
int
kt_nv_programs(Program *progs, int limit)
{
	return nv_programs(progs, limit);
}

/*
 * The text of .entry name in PTX, its branch labels ($L__BB<f>_<n>, f the
 * function's number in the module) numbered as if it were the first;
 * malloc'ed, NULL where ptx has no such entry.
 */
static char *
nv_entry_text(const char *ptx, const char *name)
{
	char		head[128];
	const char *at,
			   *end;
	char	   *out;
	size_t		o = 0;

	snprintf(head, sizeof(head), ".entry %s(", name);
	at = strstr(ptx, head);
	if (at == NULL)
		return NULL;
	end = strstr(at, "\n}\n");
	end = end != NULL ? end + 3 : at + strlen(at);
	out = xmalloc(end - at + 1);
	while (at < end)
	{
		if (strncmp(at, "$L__BB", 6) == 0)
		{
			memcpy(out + o, "$L__BB_", 7);
			o += 7;
			at += 6;
			while (at < end && *at >= '0' && *at <= '9')
				at++;
			if (at < end && *at == '_')
				at++;
			continue;
		}
		out[o++] = *at++;
	}
	out[o] = '\0';
	return out;
}

/* Are the pairs kernels' entries of two PTX texts the same code? */
static bool
nv_same_entries(const char *a, const char *b)
{
	static const char *const names[] = {"gjc_pairs_count_kernel", "gjc_pairs_write_kernel"};
	bool		same = true;

	for (int k = 0; k < 2; k++)
	{
		char	   *x = nv_entry_text(a, names[k]);
		char	   *y = nv_entry_text(b, names[k]);

		same = same && x != NULL && y != NULL && strcmp(x, y) == 0;
		free(x);
		free(y);
	}
	return same;
}

/*
 * NVRTC compiles the count kernel of each program, its columns with and
 * without NULLs, its nested loop's pairs kernels with NULLs, the quick
 * count kernel, the sorted steps' count kernel and the nested loop's
 * verdict kernel, for sm_90; the PTX has no local memory (the stack and the columns are in
 * registers) and no indirect branch (the interpreter's switch is gone).
 * One test per program.  The kernels are compiled with what is off by
 * default until it has run on a GPU (hoisting, float8 sums proven), so
 * that it compiles.
 */
static void
nv_check_programs(const Program *progs, int n, const char *skip)
{
	gj_cuda_test_set_hoisting(true);
	gj_cuda_test_set_compile_options("-DGJC_PROVE_FLOAT=1");
	for (int i = 0; i < n; i++)
	{
		double		ms[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
		char		message[2048];
		bool		ok = true;

		if (skip != NULL)
		{
			test_number++;
			printf("ok %d - NVRTC compiles %s # SKIP %s\n", test_number, progs[i].name, skip);
			continue;
		}
		for (int v = 0; v < 9 && ok; v++)
		{
			int			nulls = v > 0;
			uint32_t	mask = nulls ? 0xffu : 0;
			char	   *ptx;

			/*
			 * v 3: the quick count kernel a background compile loads
			 * first; 6 to 8 the flat quick kernels (count, pairs,
			 * verdicts), where the program is written out flat
			 */
			if (v >= 6 && !gj_flat_supported(progs[i].instrs, progs[i].ninstrs))
				break;
			gj_cuda_test_set_quick_only(v == 3 || v >= 6);
			gj_cuda_test_set_flat(v >= 6);
			ptx = gj_cuda_test_compile_program(v == 2 || v == 7 ? KT_KIND_PAIRS :
											   v == 4 ? KT_KIND_SORTED :
											   v == 5 || v == 8 ? KT_KIND_BITS : KT_KIND_COUNT,
											   progs[i].instrs, progs[i].ninstrs, mask, mask,
											   KT_ARCH, &ms[v], message, sizeof(message));
			gj_cuda_test_set_quick_only(false);
			gj_cuda_test_set_flat(false);

			if (ptx == NULL)
			{
				printf("# %s: %s\n", progs[i].name, message);
				ok = false;
				break;
			}
			if (strstr(ptx, ".local") != NULL || strstr(ptx, "brx.idx") != NULL)
			{
				printf("# %s%s: the PTX has %s\n", progs[i].name, nulls ? " (NULLs)" : "",
					   strstr(ptx, ".local") != NULL ? "local memory" : "an indirect branch");
				ok = false;
			}
			if (v == 2 && ok)
			{
				/* each pairs kernel built apart is the same code as in one module */
				double		whole_ms;
				char	   *whole;

				gj_cuda_test_set_pairs_whole(true);
				whole = gj_cuda_test_compile_program(KT_KIND_PAIRS, progs[i].instrs,
													 progs[i].ninstrs, mask, mask, KT_ARCH,
													 &whole_ms, message, sizeof(message));
				gj_cuda_test_set_pairs_whole(false);
				if (whole == NULL || !nv_same_entries(ptx, whole))
				{
					printf("# %s: the pairs kernels built apart differ from one module's\n",
						   progs[i].name);
					ok = false;
				}
				free(whole);
			}
			free(ptx);
		}
		{
			GjNarrowing nw;

			gj_program_narrow(progs[i].instrs, progs[i].ninstrs, &nw);
			printf("# %d instructions, %s, %.0f ms, with NULLs %.0f ms, pairs kernels %.0f ms, "
				   "quick %.0f ms, sorted %.0f ms, verdicts %.0f ms, flat %.0f / %.0f / %.0f ms\n",
				   progs[i].ninstrs, gj_program_variant(&nw), ms[0], ms[1], ms[2], ms[3], ms[4],
				   ms[5], ms[6], ms[7], ms[8]);
		}
		report(ok, "NVRTC compiles %s to sm_90 %s", progs[i].name,
			   "(count, pairs, quick, sorted and verdict kernels, and the flat ones: no local "
			   "memory, no indirect branch; the pairs kernels built apart the same code as in "
			   "one module)");
	}
	gj_cuda_test_set_hoisting(getenv("KT_HOIST") != NULL);
	gj_cuda_test_set_flat(getenv("KT_FLAT") != NULL);
	gj_cuda_test_set_compile_options(getenv("KT_NVRTC_OPTIONS"));
}

/* Is NVRTC there?  NULL if so, else the reason to skip. */
static const char *
nv_skip_reason(void)
{
	const char *path = gj_cuda_test_nvrtc_path();

	if (path == NULL || path[0] == '\0')
		return "no NVRTC";
	printf("# NVRTC: %s\n", path);
	return NULL;
}

/* The tests kernel_test cpu runs: the bench's programs only. */
int
nvrtc_test_count(void)
{
	Program    *progs = xmalloc(sizeof(Program) * NV_MAX_PROGRAMS);
	int			n = compiled_bench_programs(progs);

	free(progs);
	return N32_TESTS + flat_test_count() + n;
}

void
run_nvrtc_cpu_tests(void)
{
	Program    *progs = xmalloc(sizeof(Program) * NV_MAX_PROGRAMS);
	int			n = compiled_bench_programs(progs);

	n32_test_arith();
	n32_test_narrow();
	n32_test_float_cmp();
	n32_test_float_arith();
	n32_test_int8_arith();
	run_hoist_tests();
	run_flat_tests();
	nv_check_programs(progs, n, nv_skip_reason());
	free(progs);
}

/* kernel_test nvrtc: every program's kernel compiled, no GPU needed. */
int
run_nvrtc_tests(void)
{
	Program    *progs = xmalloc(sizeof(Program) * NV_MAX_PROGRAMS);
	int			n = nv_programs(progs, 0);

	printf("1..%d\n", n);
	nv_check_programs(progs, n, nv_skip_reason());
	free(progs);
	printf("kernel_test: %d passed, %d failed\n", test_number - failures, failures);
	return failures > 0;
}

/* kernel_test nvrtc-source N: the NVRTC source of bench program N. */
extern bool gj_cuda_test_compiled_source(const GjInstr *instrs, int ninstrs, char *buf,
										 size_t len);

int
print_compiled_source(int which, const char *flat)
{
	Program    *progs = xmalloc(sizeof(Program) * NV_MAX_PROGRAMS);
	int			n = compiled_bench_programs(progs);
	char	   *buf = xmalloc(65536);
	int			rc = 1;

	gj_cuda_test_set_flat(strcmp(flat, "flat") == 0);
	gj_cuda_test_set_quick_only(strcmp(flat, "flat") == 0);
	if (which >= 0 && which < n &&
		gj_cuda_test_compiled_source(progs[which].instrs, progs[which].ninstrs, buf, 65536))
	{
		fputs(buf, stdout);
		rc = 0;
	}
	free(buf);
	free(progs);
	return rc;
}

/* ---------------------------------------------------------------------
 * Benchmark (GPU)
 * ---------------------------------------------------------------------
 */

static double
kb_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* n rows of the bench's columns (KB_COLS, no NULLs). */
static void
kb_make_side(Side *side, int64_t n)
{
	memset(side, 0, sizeof(Side));
	side->nrows = n;
	side->cols.ncols = KB_COLS;
	for (int c = 0; c < KB_COLS; c++)
	{
		int64_t    *v = xmalloc(sizeof(int64_t) * n);

		for (int64_t i = 0; i < n; i++)
		{
			if (c < 2)
				v[i] = (int64_t) (rng() % 1000000000);
			else if (c < 4)
				v[i] = (int64_t) (rng() % 2000000000000ULL) - 1000000000000LL;
			else
				v[i] = dbits((double) (rng() % 1000000) / 1e6);
		}
		side->cols.values[c] = v;
	}
}

/*
 * One timed count of outer rows [0, rows) against all n inner rows, in a
 * join of its own (compile: GJ_COMPILE_OFF or _ALWAYS); false with a
 * message where it failed.
 */
static bool
kb_count(const Side *side, const Program *prog, int compile, int64_t rows, double *ms,
		 uint64_t *total, uint64_t *host, GjStats *stats)
{
	GjJoinInput input;
	GjTile		tile = {0, side->nrows, 0, side->nrows};
	GjError		err;
	void	   *state;
	bool		ok;
	double		t0;

	rowcount_input(&input, side, side, prog);
	input.compile_programs = compile;
	memset(&err, 0, sizeof(err));
	memset(stats, 0, sizeof(GjStats));
	state = gj_cuda_backend.begin_join(&input, &err);
	t0 = kb_now_ms();
	ok = state != NULL &&
		gj_cuda_test_program_count(state, &tile, 0, rows, NULL, total, host, stats, &err);
	*ms = kb_now_ms() - t0;
	if (!ok)
		printf("# %s: %s\n", prog->name, err.message);
	if (state != NULL)
		gj_cuda_backend.end_join(state);
	return ok;
}

/* Outer rows a thread that kernel_test bench-program-count N rows compares. */
static const int kb_sweep_rows[] = {2, 4, 6, 8, 10, 12, 16};

#define KB_NSWEEP ((int) (sizeof(kb_sweep_rows) / sizeof(kb_sweep_rows[0])))

/*
 * kernel_test bench-program-count [N [rows]]: per program, the variant of
 * its compiled kernel (compiled32: every integer in 32 bits; compiled64:
 * none; compiled32/64: a mix; see gj_program_narrow), the program count
 * of N x N rows compiled (after a warm-up join that compiles it: cold
 * compile ms, then a join that finds it cached: warm) and interpreted (N
 * / 16 outer rows: the interpreter is slow), in pairs per second; the
 * totals of both over the same rows must agree.  With "rows", then the
 * compiled count again with each of kb_sweep_rows outer rows a thread
 * (the default's choice marked *), to tune gj_compiled_rows_per_thread.
 * KT_NVRTC_OPTIONS in the environment adds NVRTC options to every compile
 * of the process (e.g. "-DGJC_PAIR_UNROLL=1" or "-Ofc=mid"), to weigh a
 * compile's time against the kernel's speed.
 */
int
bench_program_count_compiled(int64_t n, bool sweep)
{
	Program    *progs = xmalloc(sizeof(Program) * NV_MAX_PROGRAMS);
	int			nprogs = compiled_bench_programs(progs);
	int64_t		irows = gj_max64(n / 16, 1);
	Side		side;
	int			rc = 0;

	kb_make_side(&side, n);
	if (getenv("KT_NVRTC_OPTIONS") != NULL)
		gj_cuda_test_set_compile_options(getenv("KT_NVRTC_OPTIONS"));
	printf("# program count, compiled and interpreted, %lld x %lld rows (interpreted: "
		   "%lld outer rows); pairs/s; compile ms cold / warm%s%s\n",
		   (long long) n, (long long) n, (long long) irows,
		   getenv("KT_NVRTC_OPTIONS") ? "; NVRTC options added: " : "",
		   getenv("KT_NVRTC_OPTIONS") ? getenv("KT_NVRTC_OPTIONS") : "");
	printf("%-76s %3s %-13s %12s %12s %8s %6s %s\n", "program", "ops", "variant",
		   "interpreted", "compiled", "cold ms", "warm", "check");
	for (int i = 0; i < nprogs; i++)
	{
		const Program *p = &progs[i];
		GjStats		cold,
					warm,
					istats,
					cstats;
		uint64_t	itotal = 0,
					ihost = 0,
					ctotal = 0,
					chost = 0,
					total = 0,
					host = 0;
		double		ms,
					ims = -1,
					cms = -1;
		bool		same;
		GjNarrowing nw;

		/* cold: the first join compiles; warm: the next finds it cached */
		if (!kb_count(&side, p, GJ_COMPILE_ALWAYS, gj_min64(n, 1024), &ms, &total, &host,
					  &cold) ||
			!kb_count(&side, p, GJ_COMPILE_ALWAYS, gj_min64(n, 1024), &ms, &total, &host,
					  &warm))
		{
			rc = 1;
			continue;
		}
		if (kb_count(&side, p, GJ_COMPILE_OFF, irows, &ms, &itotal, &ihost, &istats))
			ims = ms;
		if (kb_count(&side, p, GJ_COMPILE_ALWAYS, irows, &ms, &total, &host, &cstats))
			same = total == itotal && host == ihost && cstats.program_steps_compiled > 0;
		else
			same = false;
		if (kb_count(&side, p, GJ_COMPILE_ALWAYS, n, &ms, &ctotal, &chost, &cstats) &&
			cstats.program_steps_compiled > 0)
			cms = ms;
		gj_program_narrow(p->instrs, p->ninstrs, &nw);
		printf("%-76s %3d %-13s %12.3g %12.3g %8.1f %6s %s\n", p->name, kb_operators(p),
			   gj_program_variant(&nw), ims > 0 ? (double) irows * n / (ims / 1e3) : 0,
			   cms > 0 ? (double) n * n / (cms / 1e3) : 0,
			   cold.compile_ms, warm.programs_cached > 0 && warm.compile_ms == 0 ? "cached" : "-",
			   same ? "same" : "DIFFERENT");
		if (cold.program_steps_compiled == 0)
			printf("#   not compiled (why %d)\n", cold.interpreted_why);
		if (!same)
			printf("#   interpreted %llu matches, %llu host pairs; compiled %llu, %llu\n",
				   (unsigned long long) itotal, (unsigned long long) ihost,
				   (unsigned long long) total, (unsigned long long) host);
		rc |= !same;
	}
	if (sweep)
	{
		printf("# compiled, pairs/s by outer rows a thread (* the default's choice)\n");
		printf("%-76s", "program");
		for (int k = 0; k < KB_NSWEEP; k++)
			printf(" %9d", kb_sweep_rows[k]);
		printf("\n");
		for (int i = 0; i < nprogs; i++)
		{
			const Program *p = &progs[i];
			int			chosen;

			/* the default's choice, not the last program's sweep */
			gj_cuda_test_set_compiled_rows(0);
			chosen = gj_cuda_test_compiled_rows(p->instrs, p->ninstrs);
			printf("%-76s", p->name);
			for (int k = 0; k < KB_NSWEEP; k++)
			{
				GjStats		stats;
				uint64_t	total = 0,
							host = 0;
				double		ms = 0;
				bool		ok;

				gj_cuda_test_set_compiled_rows(kb_sweep_rows[k]);
				/* the first join compiles, the second is timed */
				ok = kb_count(&side, p, GJ_COMPILE_ALWAYS, gj_min64(n, 1024), &ms, &total,
							  &host, &stats) &&
					kb_count(&side, p, GJ_COMPILE_ALWAYS, n, &ms, &total, &host, &stats) &&
					stats.program_steps_compiled > 0;
				printf(" %8.3g%s", ok ? (double) n * n / (ms / 1e3) : 0,
					   kb_sweep_rows[k] == chosen ? "*" : " ");
				fflush(stdout);
			}
			printf("\n");
		}
		gj_cuda_test_set_compiled_rows(0);
	}
	for (int c = 0; c < KB_COLS; c++)
		free((void *) side.cols.values[c]);
	free(progs);
	return rc;
}

/*-------------------------------------------------------------------------
 *
 * kt_flat.c
 *	  The flat programs of kernels/shared/flat_program.c against the
 *	  interpreter, on the host: the text NVRTC compiles into the cuda
 *	  backend's flat kernels, compiled here by the host's C compiler (cc,
 *	  or $CC) into a shared library and called for every pair of small
 *	  sides whose values cover each type's edges (NaN, infinities, -0.0,
 *	  the integer extremes, NULLs).  Each pair's answer must equal what the
 *	  nested loop's kernels count: GJ_RESULT_FALSE where a leading compare
 *	  fails, else gj_program_eval_from's.
 *
 *	  The programs: those of kernel_test nvrtc (the bench's, kt_specs.c's,
 *	  the program count's) and random ones of every instruction the flat
 *	  source writes out.  FLAT_TESTS tests, among kernel_test cpu's; they
 *	  skip where no C compiler runs.
 *
 *-------------------------------------------------------------------------
 */
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kt_common.h"
#include "kernels/compiled_args.h"
#include "kernels/shared/flat_program.h"

#define FLAT_RANDOM		240		/* random programs */
#define FLAT_MAX		(96 + FLAT_RANDOM + 8)
#define FLAT_ROWS		40		/* rows of each side: 1,600 pairs a program */
#define KF_MAXROWS		2400	/* rows of a side, at most */

typedef int (*FlatFn) (const int64_t *, const uint8_t *, const int64_t *, const uint8_t *);

/* kt_compiled.c's programs of kernel_test nvrtc */
extern int	kt_nv_programs(Program *progs, int limit);

/* ---------------------------------------------------------------------
 * Random programs: col 0 int4, 1 int8, 2 float8, 3 int2 on either side
 * ---------------------------------------------------------------------
 */

static const int rp_int_cols[] = {3, 0, 1};	/* by type: int2, int4, int8 */

static int64_t
rp_int_const(int type)
{
	static const int64_t int2[] = {0, 1, -1, 2, 7, 181, 32767, -32768};
	static const int64_t int4[] = {0, 1, -1, 2, 7, 46341, -46341, INT32_MAX, INT32_MIN};
	static const int64_t int8[] = {0, 1, -1, 2, 7, 3037000500LL, -3037000500LL,
	INT64_MAX, INT64_MIN, 4294967296LL};

	if (type == GJT_INT2)
		return int2[rng() % 8];
	if (type == GJT_INT4)
		return int4[rng() % 9];
	return int8[rng() % 10];
}

static int64_t
rp_float_const(void)
{
	static const double specials[] = {
		0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e300, -1e300, DBL_MAX, DBL_MIN, 4.9e-324, 1e-300,
		3.5e38, 1e-40, INFINITY, -INFINITY
	};
	uint64_t	r = rng() % 18;

	return r < 16 ? dbits(specials[r]) : dbits(NAN);
}

static void rp_float(Program *p, int depth);

/* an integer expression of type (GJT_INT2, GJT_INT4 or GJT_INT8) */
static void
rp_int(Program *p, int depth, int type)
{
	int			choice = (int) (rng() % 10);

	if (depth == 0 || choice < 4)
	{
		int			leaf = (int) (rng() % 3);

		if (leaf == 2)
			emit(p, GJOP_CONST, type, 0, rp_int_const(type));
		else
			emit(p, leaf == 0 ? GJOP_LOAD_OUTER : GJOP_LOAD_INNER, type,
				 rp_int_cols[type - GJT_INT2], 0);
	}
	else if (choice < 8 || (choice == 9 && type == GJT_INT8))
	{
		rp_int(p, depth - 1, type);
		rp_int(p, depth - 1, type);
		emit(p, GJOP_ADD + (int) (rng() % 5), type, 0, 0);
	}
	else if (choice == 8)
	{
		rp_int(p, depth - 1, type);
		emit(p, rng() % 2 ? GJOP_NEG : GJOP_ABS, type, 0, 0);
	}
	else
	{
		/* an int8 (or int4) narrowed, as int4(x) and int2(x) compile */
		rp_int(p, depth - 1, type == GJT_INT2 && rng() % 2 ? GJT_INT4 : GJT_INT8);
		emit(p, GJOP_INT_NARROW, type, 0, 0);
	}
	(void) rp_float;
}

/* a float8 expression (a float4 where it is rounded, as the host's casts) */
static void
rp_float(Program *p, int depth)
{
	int			choice = (int) (rng() % 10);

	if (depth == 0 || choice < 4)
	{
		int			leaf = (int) (rng() % 3);

		if (leaf == 2)
			emit(p, GJOP_CONST, GJT_FLOAT8, 0, rp_float_const());
		else
			emit(p, leaf == 0 ? GJOP_LOAD_OUTER : GJOP_LOAD_INNER, GJT_FLOAT8, 2, 0);
	}
	else if (choice < 7)
	{
		rp_float(p, depth - 1);
		rp_float(p, depth - 1);
		emit(p, GJOP_ADD + (int) (rng() % 4), GJT_FLOAT8, 0, 0);
	}
	else if (choice == 7)
	{
		rp_float(p, depth - 1);
		emit(p, rng() % 2 ? GJOP_NEG : GJOP_ABS, GJT_FLOAT8, 0, 0);
	}
	else if (choice == 8)
	{
		rp_int(p, depth - 1, GJT_INT2 + (int) (rng() % 3));
		emit(p, GJOP_INT_TO_FLOAT, rng() % 4 == 0 ? GJT_FLOAT4 : GJT_FLOAT8, 0, 0);
	}
	else
	{
		rp_float(p, depth - 1);
		emit(p, GJOP_FLOAT_TO_FLOAT4, GJT_FLOAT4, 0, 0);
	}
}

/* a boolean expression */
static void
rp_bool(Program *p, int depth)
{
	int			choice = (int) (rng() % 12);

	if (depth == 0 || choice < 3)
	{
		int			type = GJT_INT2 + (int) (rng() % 3);

		rp_int(p, depth > 0 ? depth - 1 : 0, type);
		rp_int(p, depth > 0 ? depth - 1 : 0, type);
		emit(p, GJOP_EQ + (int) (rng() % 6), GJ_CLASS_INT, 0, 0);
	}
	else if (choice < 6)
	{
		rp_float(p, depth - 1);
		rp_float(p, depth - 1);
		emit(p, GJOP_EQ + (int) (rng() % 6), GJ_CLASS_FLOAT, 0, 0);
	}
	else if (choice < 8)
	{
		rp_bool(p, depth - 1);
		rp_bool(p, depth - 1);
		emit(p, rng() % 2 ? GJOP_AND : GJOP_OR, GJT_BOOL, 0, 0);
	}
	else if (choice == 8)
	{
		rp_bool(p, depth - 1);
		emit(p, GJOP_NOT, GJT_BOOL, 0, 0);
	}
	else if (choice == 9)
	{
		if (rng() % 2)
			rp_float(p, depth - 1);
		else
			rp_int(p, depth - 1, GJT_INT4);
		emit(p, rng() % 2 ? GJOP_IS_NULL : GJOP_IS_NOT_NULL, GJT_BOOL, 0, 0);
	}
	else if (choice == 10)
		emit(p, GJOP_CONST_NULL, GJT_BOOL, 0, 0);
	else
		emit(p, GJOP_CONST, GJT_BOOL, 0, (int64_t) (rng() % 2));
}

/* A random program, one in three after leading compares. */
static void
rp_program(Program *p, int k)
{
	static char names[FLAT_RANDOM][32];

	do
	{
		memset(p, 0, sizeof(Program));
		if (k % 3 == 0)
		{
			/* any compare, one in two written inner first (the lead commutes it) */
			bool		inner_first = rng() % 2;

			emit(p, inner_first ? GJOP_LOAD_INNER : GJOP_LOAD_OUTER, GJT_INT4, 0, 0);
			emit(p, inner_first ? GJOP_LOAD_OUTER : GJOP_LOAD_INNER, GJT_INT4, 0, 0);
			emit(p, GJOP_EQ + (int) (rng() % 6), GJ_CLASS_INT, 0, 0);
			if (k % 2 == 0)
			{
				emit(p, GJOP_LOAD_OUTER, GJT_FLOAT8, 2, 0);
				emit(p, GJOP_LOAD_INNER, GJT_FLOAT8, 2, 0);
				emit(p, GJOP_EQ + (int) (rng() % 6), GJ_CLASS_FLOAT, 0, 0);
				emit(p, GJOP_AND, GJT_BOOL, 0, 0);
			}
			rp_bool(p, 3);
			emit(p, GJOP_AND, GJT_BOOL, 0, 0);
		}
		else
			rp_bool(p, 3);
	} while (p->ninstrs > 48 || !gj_flat_supported(p->instrs, p->ninstrs));
	snprintf(names[k], sizeof(names[k]), "random program %d", k);
	p->name = names[k];
}

/* ---------------------------------------------------------------------
 * The sides: per (side, column) the type its loads read
 * ---------------------------------------------------------------------
 */

static int64_t
flat_value(int type)
{
	uint64_t	r = rng() % 10;

	switch (type)
	{
		case GJT_FLOAT4:
		case GJT_FLOAT8:
			{
				int64_t		v = r < 3 ? rp_float_const() :
					dbits(((int) (rng() % 33) - 16) * 0.25);

				return type == GJT_FLOAT4 ? dbits((double) (float) gj_bits_to_double(v)) : v;
			}
		case GJT_BOOL:
			return (int64_t) (rng() % 2);
		case GJT_INT2:
		case GJT_INT4:
		case GJT_INT8:
			if (r < 3)
				return rp_int_const(type);
			if (r < 5)
				return type == GJT_INT2 ? (int16_t) rng() :
					type == GJT_INT4 ? (int32_t) rng() : (int64_t) rng();
			return (int64_t) (rng() % 41) - 20;
		case GJT_DATE:
			return r < 2 ? (r == 0 ? INT32_MAX : INT32_MIN) : (int64_t) (rng() % 20001) - 10000;
		default:
			return r < 2 ? (int64_t) rng() : (int64_t) (rng() % 41) - 20;
	}
}

/*
 * Values for every column of a side, each of the type the program loads
 * it as (int8 where none does); every sixth value NULL where nullable.
 */
static void
flat_side(const Program *p, int op, bool nullable, int nrows,
		  int64_t values[GJ_MAX_KEY_COLS][KF_MAXROWS],
		  uint8_t isnull[GJ_MAX_KEY_COLS][KF_MAXROWS])
{
	for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
	{
		int			type = -1;

		/*
		 * the type of its loads; where they differ (kt_program_count.c's
		 * random programs load one column as int2 in one qual, int8 in
		 * another), the narrowest integer type, whose values every load
		 * reads correctly (gj_program_narrow trusts a load's type)
		 */
		for (int pc = 0; pc < p->ninstrs; pc++)
		{
			int			t = p->instrs[pc].type;

			if (p->instrs[pc].op != op || p->instrs[pc].arg != c)
				continue;
			if (type < 0 || (t == GJT_INT2 && (type == GJT_INT4 || type == GJT_INT8)) ||
				(t == GJT_INT4 && type == GJT_INT8))
				type = t;
		}
		if (type < 0)
			type = GJT_INT8;
		for (int r = 0; r < nrows; r++)
		{
			values[c][r] = flat_value(type);
			isnull[c][r] = nullable && rng() % 6 == 0;
		}
	}
}

/* What the nested loop's kernels count for a pair (see the file's header). */
static int
flat_reference(const Program *p, const GjLeadingCompares *lead, const GjKeyColumns *outer,
			   int64_t o, const GjKeyColumns *inner, int64_t i)
{
	for (int k = 0; k < lead->conj.n; k++)
	{
		const GjSimpleCompare *sc = &lead->conj.cmp[k];
		int64_t		a = outer->values[sc->outer_col][o];
		int64_t		b = inner->values[sc->inner_col][i];

		if ((outer->isnull[sc->outer_col] && outer->isnull[sc->outer_col][o]) ||
			(inner->isnull[sc->inner_col] && inner->isnull[sc->inner_col][i]))
			return GJ_RESULT_FALSE;
		if (sc->cls == GJ_CLASS_FLOAT ?
			!gj_float_cmp_holds(sc->op, gj_bits_to_double(a), gj_bits_to_double(b)) :
			!gj_int_cmp_holds(sc->op, a, b))
			return GJ_RESULT_FALSE;
	}
	return gj_program_eval_from(p->instrs, p->ninstrs, lead, outer, o, inner, i);
}

/* Hand-written programs of what random ones rarely reach. */
static int
flat_hand_programs(Program *progs)
{
	Program    *p;
	int			n = 0;

	/* o.c1 / i.c1 > 0 OR i.c1 % o.c1 IS NULL (int8, a division by 0 and by -1) */
	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "o.c1 / i.c1 > 0 OR i.c1 % o.c1 IS NULL (int8)";
	emit(p, GJOP_LOAD_OUTER, GJT_INT8, 1, 0);
	emit(p, GJOP_LOAD_INNER, GJT_INT8, 1, 0);
	emit(p, GJOP_DIV, GJT_INT8, 0, 0);
	emit(p, GJOP_CONST, GJT_INT8, 0, 0);
	emit(p, GJOP_GT, GJ_CLASS_INT, 0, 0);
	emit(p, GJOP_LOAD_INNER, GJT_INT8, 1, 0);
	emit(p, GJOP_LOAD_OUTER, GJT_INT8, 1, 0);
	emit(p, GJOP_MOD, GJT_INT8, 0, 0);
	emit(p, GJOP_IS_NULL, GJT_BOOL, 0, 0);
	emit(p, GJOP_OR, GJT_BOOL, 0, 0);

	/* o.f / i.f < -o.f * i.f (float8: underflow, overflow, 0/0) */
	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "o.c2 / i.c2 < -(o.c2 * i.c2) (float8)";
	emit(p, GJOP_LOAD_OUTER, GJT_FLOAT8, 2, 0);
	emit(p, GJOP_LOAD_INNER, GJT_FLOAT8, 2, 0);
	emit(p, GJOP_DIV, GJT_FLOAT8, 0, 0);
	emit(p, GJOP_LOAD_OUTER, GJT_FLOAT8, 2, 0);
	emit(p, GJOP_LOAD_INNER, GJT_FLOAT8, 2, 0);
	emit(p, GJOP_MUL, GJT_FLOAT8, 0, 0);
	emit(p, GJOP_NEG, GJT_FLOAT8, 0, 0);
	emit(p, GJOP_LT, GJ_CLASS_FLOAT, 0, 0);

	/*
	 * Six inner columns, and o.c6 < i.c6 AND ...: a flat kernel stages
	 * 512 inner rows a chunk (6 x 9 bytes a row with NULLs, 8 without)
	 */
	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "i.c6 > o.c6 AND i.c1 + i.c4 + i.c5 + i.c7 > o.c1 OR i.c2 = i.c3 (6 inner columns)";
	emit(p, GJOP_LOAD_INNER, GJT_INT8, 6, 0);
	emit(p, GJOP_LOAD_OUTER, GJT_INT8, 6, 0);
	emit(p, GJOP_GT, GJ_CLASS_INT, 0, 0);
	emit(p, GJOP_LOAD_INNER, GJT_INT8, 1, 0);
	emit(p, GJOP_LOAD_INNER, GJT_INT8, 4, 0);
	emit(p, GJOP_ADD, GJT_INT8, 0, 0);
	emit(p, GJOP_LOAD_INNER, GJT_INT8, 5, 0);
	emit(p, GJOP_ADD, GJT_INT8, 0, 0);
	emit(p, GJOP_LOAD_INNER, GJT_INT8, 7, 0);
	emit(p, GJOP_ADD, GJT_INT8, 0, 0);
	emit(p, GJOP_LOAD_OUTER, GJT_INT8, 1, 0);
	emit(p, GJOP_GT, GJ_CLASS_INT, 0, 0);
	emit(p, GJOP_LOAD_INNER, GJT_FLOAT8, 2, 0);
	emit(p, GJOP_LOAD_INNER, GJT_FLOAT8, 3, 0);
	emit(p, GJOP_EQ, GJ_CLASS_FLOAT, 0, 0);
	emit(p, GJOP_OR, GJT_BOOL, 0, 0);
	emit(p, GJOP_AND, GJT_BOOL, 0, 0);

	/* NOT (int2(o.c0 * i.c0) = 0): a narrowed int4 product */
	p = &progs[n++];
	memset(p, 0, sizeof(Program));
	p->name = "NOT (int2(o.c0 * i.c0) = 0)";
	emit(p, GJOP_LOAD_OUTER, GJT_INT4, 0, 0);
	emit(p, GJOP_LOAD_INNER, GJT_INT4, 0, 0);
	emit(p, GJOP_MUL, GJT_INT4, 0, 0);
	emit(p, GJOP_INT_NARROW, GJT_INT2, 0, 0);
	emit(p, GJOP_CONST, GJT_INT2, 0, 0);
	emit(p, GJOP_EQ, GJ_CLASS_INT, 0, 0);
	emit(p, GJOP_NOT, GJT_BOOL, 0, 0);
	return n;
}

/* Do float4 arithmetic and dates stay out, and do the others get in? */
static bool
flat_supported_check(void)
{
	Program		p;
	bool		ok = true;

	memset(&p, 0, sizeof(p));
	emit(&p, GJOP_LOAD_OUTER, GJT_FLOAT4, 0, 0);
	emit(&p, GJOP_LOAD_INNER, GJT_FLOAT4, 0, 0);
	emit(&p, GJOP_ADD, GJT_FLOAT4, 0, 0);
	emit(&p, GJOP_CONST, GJT_FLOAT4, 0, dbits(1.0));
	emit(&p, GJOP_LT, GJ_CLASS_FLOAT, 0, 0);
	ok = ok && !gj_flat_supported(p.instrs, p.ninstrs);
	memset(&p, 0, sizeof(p));
	emit(&p, GJOP_LOAD_OUTER, GJT_DATE, 0, 0);
	emit(&p, GJOP_LOAD_INNER, GJT_INT4, 0, 0);
	emit(&p, GJOP_DATE_PLI, GJT_DATE, 0, 0);
	emit(&p, GJOP_LOAD_INNER, GJT_DATE, 1, 0);
	emit(&p, GJOP_LT, GJ_CLASS_INT, 0, 0);
	ok = ok && !gj_flat_supported(p.instrs, p.ninstrs);
	/* a program that leaves two values is not one */
	p.ninstrs = 3;
	p.instrs[2].op = GJOP_LOAD_INNER;
	ok = ok && !gj_flat_supported(p.instrs, p.ninstrs);
	memset(&p, 0, sizeof(p));
	emit(&p, GJOP_LOAD_OUTER, GJT_INT4, 0, 0);
	emit(&p, GJOP_LOAD_INNER, GJT_INT4, 0, 0);
	emit(&p, GJOP_LT, GJ_CLASS_INT, 0, 0);
	return ok && gj_flat_supported(p.instrs, p.ninstrs);
}

/* ---------------------------------------------------------------------
 * The flat kernels themselves, run on the host
 *
 * compiled_flat.cuh compiled by the host's C++ compiler under a prelude
 * that stands in for CUDA: each block's GJC_BLOCK threads are threads of
 * the process, __syncthreads a barrier between them, __shared__ arrays
 * static (the blocks run one after the other), atomicAdd the compiler's
 * atomics.  Each program's kernels of the three kinds, without and with
 * NULLs, are a unit of their own (a namespace, their entry points
 * renamed), launched over a grid as the cuda backend launches them
 * (cuda_program_count.cu, cuda_nestloop.cu, cuda_agg.cu): outer rows
 * [KF_O_BEGIN, KF_O_BEGIN + KF_NROWS) of a side whose device columns start
 * at row KF_OUTER_BASE, an inner tile of KF_NINNER rows in slices of
 * KF_SLICE rows (several chunks a slice, the last slice and chunk
 * partial).  What they
 * leave (counts per row, totals, host pairs; pairs per slice, then the
 * pairs at their offsets; verdict words) must be what the interpreter
 * gives.  The device's own helpers (__mul64hi and the bit casts) are the
 * ones part of the text these tests do not reach.
 * ---------------------------------------------------------------------
 */

#define KF_PROGRAMS		24		/* programs run as kernels */
#define KF_OUTER		640		/* rows of the outer side */
#define KF_OUTER_BASE	7
#define KF_O_BEGIN		20
#define KF_NROWS		600		/* two blocks of 2 x 256 rows, the second partial */
#define KF_SLICE		(2 * GJC_CHUNK)
#define KF_NINNER		2300	/* two slices, the second of 252 rows */
#define KF_ROWS			2		/* outer rows a thread, as cuda_compile.cu's */

static const int kf_kinds[3] = {1, 2, 4};	/* count, pairs, verdicts (GJC_KIND) */

/* What stands in for CUDA in the units (see above). */
static const char kf_prelude[] =
	"#include <pthread.h>\n#include <stdint.h>\n#include <stdbool.h>\n#include <string.h>\n"
	"#include <stdlib.h>\n"
	"struct GjfDim { unsigned x, y, z; };\n"
	"static thread_local GjfDim threadIdx, blockIdx;\n"
	"static GjfDim gridDim;\n"
	"static pthread_barrier_t gjf_barrier;\n"
	"#define __syncthreads() pthread_barrier_wait(&gjf_barrier)\n"
	"#define __device__\n#define __global__\n#define __forceinline__ inline\n"
	"#define __launch_bounds__(n)\n#define __align__(n) __attribute__((aligned(n)))\n"
	"#define __shared__ static\n"
	"static inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v)\n"
	"{ return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }\n"
	"typedef void (*GjfKernel) (const void *);\n"
	"struct GjfThread { GjfKernel kernel; const void *args; unsigned t, bx, by; };\n"
	"static void *gjf_thread(void *arg)\n"
	"{\n"
	"\tGjfThread *th = (GjfThread *) arg;\n"
	"\tthreadIdx.x = th->t; threadIdx.y = threadIdx.z = 0;\n"
	"\tblockIdx.x = th->bx; blockIdx.y = th->by; blockIdx.z = 0;\n"
	"\tth->kernel(th->args);\n"
	"\treturn NULL;\n"
	"}\n"
	/* a grid of gx x gy blocks, one block at a time; false if a thread failed */
	"extern \"C\" bool gjf_launch(GjfKernel kernel, const void *args, unsigned gx, unsigned gy)\n"
	"{\n"
	"\tpthread_t threads[%d];\n"
	"\tGjfThread th[%d];\n"
	"\tbool ok = true;\n"
	"\tgridDim.x = gx; gridDim.y = gy; gridDim.z = 1;\n"
	"\tfor (unsigned by = 0; by < gy; by++)\n"
	"\t\tfor (unsigned bx = 0; bx < gx; bx++)\n"
	"\t\t{\n"
	"\t\t\tint n = 0;\n"
	"\t\t\tpthread_barrier_init(&gjf_barrier, NULL, %d);\n"
	"\t\t\tfor (int t = 0; t < %d; t++)\n"
	"\t\t\t{\n"
	"\t\t\t\tth[t].kernel = kernel; th[t].args = args; th[t].t = t; th[t].bx = bx; th[t].by = by;\n"
	"\t\t\t\tif (pthread_create(&threads[t], NULL, gjf_thread, &th[t]) != 0) { ok = false; abort(); }\n"
	"\t\t\t\tn++;\n"
	"\t\t\t}\n"
	"\t\t\tfor (int t = 0; t < n; t++) pthread_join(threads[t], NULL);\n"
	"\t\t\tpthread_barrier_destroy(&gjf_barrier);\n"
	"\t\t}\n"
	"\treturn ok;\n"
	"}\n"
	"#define GJC_PAIR_RECHECK_TEST 0x80000000u\n";

typedef bool (*KfLaunch) (void (*kernel) (const void *), const void *args, unsigned gx,
						  unsigned gy);
typedef void (*KfKernel) (const void *);

/*
 * The columns that may be NULL in variant v of a program's sides: none, or
 * every outer column and every other inner one.
 */
#define KF_OUTER_NULLABLE(v)	((v) ? 0xffu : 0)
#define KF_INNER_NULLABLE(v)	((v) ? 0xa5u : 0)

/* Write a unit: program k's kernels of a kind, nullable or not. */
static bool
kf_write_unit(FILE *f, const Program *p, int k, int kind, int v, char *buf, size_t len)
{
	const char *names[2] = {"gjc_count_kernel", NULL};
	char		prelude[16] = "";
	char	   *line;

	if (kind == 2)
	{
		names[0] = "gjc_pairs_count_kernel";
		names[1] = "gjc_pairs_write_kernel";
	}
	else if (kind == 4)
		names[0] = "gjc_bits_kernel";
	if (!gj_flat_kernel_source(kind, p->instrs, p->ninstrs, KF_OUTER_NULLABLE(v),
							   KF_INNER_NULLABLE(v), prelude, KF_ROWS, buf, len))
		return false;
	fprintf(f, "namespace kf_%d_%d_%d {\n", k, kind, v);
	for (int e = 0; e < 2 && names[e] != NULL; e++)
		fprintf(f, "#define %s kf_%d_%d_%d_%d\n", names[e], k, kind, v, e);
	/* the source, its include of the shell allowed again */
	fprintf(f, "#undef GPUJOIN_COMPILED_FLAT_CUH\n%s", buf);
	for (int e = 0; e < 2 && names[e] != NULL; e++)
		fprintf(f, "#undef %s\n", names[e]);
	/* each macro the source defined, undefined for the next unit */
	for (line = strstr(buf, "#define "); line != NULL; line = strstr(line + 1, "#define "))
	{
		int			n = (int) strcspn(line + 8, " (\n");

		fprintf(f, "#undef %.*s\n", n, line + 8);
	}
	fprintf(f, "}\n");
	for (int e = 0; e < 2 && names[e] != NULL; e++)
		fprintf(f, "extern \"C\" void kf_run_%d_%d_%d_%d(const void *args)\n"
				"{ kf_%d_%d_%d::GjfArgs a; memcpy(&a, args, sizeof(a)); "
				"kf_%d_%d_%d::kf_%d_%d_%d_%d(a); }\n",
				k, kind, v, e, k, kind, v, k, kind, v, k, kind, v, e);
	return true;
}

/* The three kinds' kernels of one program over one pair of sides. */
static void
kf_check(void *handle, KfLaunch launch, const Program *p, int k, int v, int64_t bad[3])
{
	static int64_t ov[GJ_MAX_KEY_COLS][KF_MAXROWS],
				iv[GJ_MAX_KEY_COLS][KF_MAXROWS];
	static uint8_t onull[GJ_MAX_KEY_COLS][KF_MAXROWS],
				inull[GJ_MAX_KEY_COLS][KF_MAXROWS];
	static uint8_t want[KF_NROWS][KF_NINNER];
	int64_t		nslices = (KF_NINNER + KF_SLICE - 1) / KF_SLICE;
	int64_t		nwords = (KF_NINNER + 31) / 32 * KF_NROWS;
	unsigned	gx = (KF_NROWS + GJC_BLOCK * KF_ROWS - 1) / (GJC_BLOCK * KF_ROWS);
	GjLeadingCompares lead;
	GjcArgs		a;
	char		name[64];
	KfKernel	kernel;

	gj_program_leading_compares(p->instrs, p->ninstrs, &lead);
	flat_side(p, GJOP_LOAD_OUTER, v == 1, KF_OUTER, ov, onull);
	flat_side(p, GJOP_LOAD_INNER, v == 1, KF_NINNER, iv, inull);
	memset(&a, 0, sizeof(a));
	a.outer.ncols = a.inner.ncols = GJ_MAX_KEY_COLS;
	for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
	{
		bool		onullable = (KF_OUTER_NULLABLE(v) >> c) & 1u;
		bool		inullable = (KF_INNER_NULLABLE(v) >> c) & 1u;

		/* a column with no NULLs has no flags: none of its values is NULL */
		for (int r = 0; r < KF_MAXROWS; r++)
		{
			onull[c][r] &= onullable;
			inull[c][r] &= inullable;
		}
		a.outer.values[c] = ov[c];
		a.inner.values[c] = iv[c];
		a.outer.isnull[c] = onullable ? onull[c] : NULL;
		a.inner.isnull[c] = inullable ? inull[c] : NULL;
	}
	for (int j = 0; j < KF_NROWS; j++)
		for (int i = 0; i < KF_NINNER; i++)
			want[j][i] = (uint8_t) flat_reference(p, &lead, &a.outer, KF_O_BEGIN + j,
												  &a.inner, i);

	/* the device's outer columns start at row KF_OUTER_BASE */
	for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
	{
		a.outer.values[c] = ov[c] + KF_OUTER_BASE;
		a.outer.isnull[c] = a.outer.isnull[c] != NULL ? onull[c] + KF_OUTER_BASE : NULL;
	}
	a.outer_base = KF_OUTER_BASE;
	a.o_begin = KF_O_BEGIN;
	a.nrows = KF_NROWS;
	a.ninner = KF_NINNER;
	a.slice_len = KF_SLICE;
	a.nslices = nslices;
	a.outer_first = 1000;
	a.inner_first = 5000;

	/* the count kernel: counts per row, the total, the host's pairs */
	{
		unsigned long long *counts = xmalloc(sizeof(unsigned long long) * KF_NROWS);
		unsigned long long total = 0,
					host = 0,
					want_total = 0,
					want_host = 0;
		int64_t		wrong_rows = 0;

		memset(counts, 0, sizeof(unsigned long long) * KF_NROWS);
		snprintf(name, sizeof(name), "kf_run_%d_1_%d_0", k, v);
		kernel = (KfKernel) dlsym(handle, name);
		/* with NULLs, the totals alone (a.counts NULL), as a count(*) asks */
		a.counts = v ? NULL : counts;
		a.total = &total;
		a.host = &host;
		if (kernel == NULL || !launch(kernel, &a, gx, (unsigned) nslices))
			wrong_rows = KF_NROWS;
		for (int j = 0; kernel != NULL && j < KF_NROWS; j++)
		{
			unsigned long long row = 0;

			for (int i = 0; i < KF_NINNER; i++)
			{
				row += want[j][i] == GJ_RESULT_TRUE;
				want_host += want[j][i] == GJ_RESULT_RECHECK;
			}
			want_total += row;
			wrong_rows += v == 0 && counts[j] != row;
		}
		if ((wrong_rows > 0 || total != want_total || host != want_host) && bad[0]++ < 3)
			printf("# %s%s, count kernel: %lld rows wrong, total %llu (want %llu), "
				   "host %llu (want %llu)\n", p->name, v ? " (NULLs)" : "",
				   (long long) wrong_rows, total, want_total, host, want_host);
		a.counts = NULL;
		a.total = a.host = NULL;
		free(counts);
	}

	/* the pairs kernels: matches per (row, slice), then the pairs at their offsets */
	{
		unsigned long long *scratch = xmalloc(sizeof(unsigned long long) * KF_NROWS * nslices);
		uint64_t   *got = NULL,
				   *expect = NULL;
		int64_t		npairs = 0,
					nwant = 0,
					wrong = 0;
		KfKernel	write;

		memset(scratch, 0xab, sizeof(unsigned long long) * KF_NROWS * nslices);
		snprintf(name, sizeof(name), "kf_run_%d_2_%d_0", k, v);
		kernel = (KfKernel) dlsym(handle, name);
		snprintf(name, sizeof(name), "kf_run_%d_2_%d_1", k, v);
		write = (KfKernel) dlsym(handle, name);
		a.scratch = scratch;
		if (kernel == NULL || write == NULL || !launch(kernel, &a, gx, (unsigned) nslices))
			wrong++;
		for (int j = 0; wrong == 0 && j < KF_NROWS; j++)
		{
			for (int64_t sl = 0; sl < nslices; sl++)
			{
				unsigned long long n = 0;

				for (int64_t i = sl * KF_SLICE; i < KF_NINNER && i < (sl + 1) * KF_SLICE; i++)
					n += want[j][i] != GJ_RESULT_FALSE;
				wrong += scratch[j * nslices + sl] != n;
				/* the launch turns the counts into offsets */
				scratch[j * nslices + sl] = (unsigned long long) npairs;
				npairs += (int64_t) n;
			}
		}
		if (wrong == 0)
		{
			got = xmalloc(sizeof(uint64_t) * (npairs + 1));
			expect = xmalloc(sizeof(uint64_t) * (npairs + 1));
			a.out_outer = xmalloc(sizeof(uint32_t) * (npairs + 1));
			a.out_inner = xmalloc(sizeof(uint32_t) * (npairs + 1));
			memset(a.out_outer, 0xff, sizeof(uint32_t) * (npairs + 1));
			memset(a.out_inner, 0xff, sizeof(uint32_t) * (npairs + 1));
			if (!launch(write, &a, gx, (unsigned) nslices))
				wrong++;
			for (int64_t t = 0; t < npairs + 1; t++)
				got[t] = ((uint64_t) a.out_outer[t] << 32) | a.out_inner[t];
			for (int j = 0; j < KF_NROWS; j++)
				for (int i = 0; i < KF_NINNER; i++)
					if (want[j][i] != GJ_RESULT_FALSE)
						expect[nwant++] =
							((uint64_t) ((1000u + (uint32_t) j) |
										 (want[j][i] == GJ_RESULT_RECHECK ? 0x80000000u : 0u))
							 << 32) | (5000u + (uint32_t) i);
			/* one past the last must be untouched */
			wrong += got[npairs] != UINT64_MAX;
			qsort(got, npairs, sizeof(uint64_t), cmp_u64);
			qsort(expect, nwant, sizeof(uint64_t), cmp_u64);
			wrong += nwant != npairs || memcmp(got, expect, sizeof(uint64_t) * npairs) != 0;
			free(a.out_outer);
			free(a.out_inner);
			a.out_outer = a.out_inner = NULL;
		}
		if (wrong > 0 && bad[1]++ < 3)
			printf("# %s%s, pairs kernels: %lld pairs, %lld wanted\n", p->name,
				   v ? " (NULLs)" : "", (long long) npairs, (long long) nwant);
		a.scratch = NULL;
		free(scratch);
		free(got);
		free(expect);
	}

	/* the verdict kernel: word w of row j at w * nrows + j */
	{
		uint32_t   *match = xmalloc(sizeof(uint32_t) * nwords);
		uint32_t   *recheck = xmalloc(sizeof(uint32_t) * nwords);
		int64_t		wrong = 0;

		memset(match, 0xab, sizeof(uint32_t) * nwords);
		memset(recheck, 0xab, sizeof(uint32_t) * nwords);
		snprintf(name, sizeof(name), "kf_run_%d_4_%d_0", k, v);
		kernel = (KfKernel) dlsym(handle, name);
		a.match_bits = match;
		a.recheck_bits = recheck;
		if (kernel == NULL || !launch(kernel, &a, gx, (unsigned) nslices))
			wrong++;
		for (int j = 0; wrong == 0 && j < KF_NROWS; j++)
		{
			for (int w = 0; w < (KF_NINNER + 31) / 32; w++)
			{
				uint32_t	m = 0,
							r = 0;

				for (int b = 0; b < 32 && w * 32 + b < KF_NINNER; b++)
				{
					m |= (uint32_t) (want[j][w * 32 + b] != GJ_RESULT_FALSE) << b;
					r |= (uint32_t) (want[j][w * 32 + b] == GJ_RESULT_RECHECK) << b;
				}
				wrong += match[(int64_t) w * KF_NROWS + j] != m ||
					recheck[(int64_t) w * KF_NROWS + j] != r;
			}
		}
		if (wrong > 0 && bad[2]++ < 3)
			printf("# %s%s, verdict kernel: %lld words wrong\n", p->name, v ? " (NULLs)" : "",
				   (long long) wrong);
		free(match);
		free(recheck);
	}
}

/* The flat kernels of KF_PROGRAMS of progs, run on the host (see above). */
static void
run_flat_kernel_tests(const Program *progs, int n, int hand_first, int nhand, const char *dir)
{
	const char *cxx = getenv("CXX") != NULL && getenv("CXX")[0] != '\0' ? getenv("CXX") : "c++";
	size_t		len = 1 << 17;
	char	   *buf = xmalloc(len);
	char		path[256],
				lib[256],
				command[1024],
				what[128];
	int			pick[KF_PROGRAMS];
	int64_t		bad[3] = {0, 0, 0};
	void	   *handle = NULL;
	KfLaunch	launch = NULL;
	bool		ok;
	FILE	   *f;

	/* the hand-written programs, then others spread over the list */
	for (int q = 0; q < KF_PROGRAMS; q++)
		pick[q] = q < nhand ? hand_first + q :
			(int) ((int64_t) (q - nhand) * n / (KF_PROGRAMS - nhand));
	snprintf(path, sizeof(path), "%s/kf.cpp", dir);
	snprintf(lib, sizeof(lib), "%s/kf.so", dir);
	f = fopen(path, "w");
	ok = f != NULL;
	if (ok)
	{
		fprintf(f, kf_prelude, GJC_BLOCK, GJC_BLOCK, GJC_BLOCK, GJC_BLOCK);
		for (int q = 0; ok && q < KF_PROGRAMS; q++)
			for (int kind = 0; ok && kind < 3; kind++)
				for (int v = 0; ok && v < 2; v++)
					ok = kf_write_unit(f, &progs[pick[q]], q, kf_kinds[kind], v, buf, len);
		fclose(f);
	}
	snprintf(command, sizeof(command),
			 "%s -std=c++17 -O1 -w -ffp-contract=off -shared -fPIC -pthread -I%s -o %s %s > %s/cxx.log 2>&1",
			 cxx, KT_SRC_DIR, lib, path, dir);
	if (ok && system(command) == 0 && (handle = dlopen(lib, RTLD_NOW)) != NULL)
		launch = (KfLaunch) dlsym(handle, "gjf_launch");
	if (launch == NULL && system("command -v c++ > /dev/null 2>&1") != 0 &&
		getenv("CXX") == NULL)
	{
		for (int t = 0; t < 4; t++)
			printf("ok %d - flat kernels # SKIP no C++ compiler\n", ++test_number);
		free(buf);
		return;
	}
	if (launch == NULL)
	{
		snprintf(command, sizeof(command), "head -5 %s/cxx.log | sed 's/^/# /'", dir);
		if (system(command) != 0)
			printf("# could not show %s/cxx.log\n", dir);
	}
	snprintf(what, sizeof(what), "%d", KF_PROGRAMS);
	report(launch != NULL, "the flat kernels (count, pairs, verdicts) of %s programs compile "
		   "with the host's C++ compiler, CUDA emulated%s", what, "");
	for (int q = 0; launch != NULL && q < KF_PROGRAMS; q++)
		for (int v = 0; v < 2; v++)
			kf_check(handle, launch, &progs[pick[q]], q, v, bad);
	snprintf(what, sizeof(what), "%d programs, %d x %d rows, without and with NULLs",
			 KF_PROGRAMS, KF_NROWS, KF_NINNER);
	report(launch != NULL && bad[0] == 0, "flat count kernels on the host: each row's count, "
		   "the total and the host's pairs are the interpreter's (%s)%s", what, "");
	report(launch != NULL && bad[1] == 0, "flat pairs kernels on the host: each (row, slice)'s "
		   "matches, then every pair at its offset, flagged where the host rechecks (%s)%s",
		   what, "");
	report(launch != NULL && bad[2] == 0, "flat verdict kernels on the host: every word of both "
		   "bitmaps, word-major (%s)%s", what, "");
	if (handle != NULL)
		dlclose(handle);
	free(buf);
}

int
flat_test_count(void)
{
	return 8;
}

void
run_flat_tests(void)
{
	Program    *progs = xmalloc(sizeof(Program) * FLAT_MAX);
	int			nall = kt_nv_programs(progs, 0);
	int			n = 0;
	char		dir[] = "/tmp/kt_flat.XXXXXX";
	char		path[256],
				lib[256],
				command[1024];
	const char *cc = getenv("CC") != NULL && getenv("CC")[0] != '\0' ? getenv("CC") : "cc";
	size_t		len = 1 << 17;
	char	   *buf = xmalloc(len);
	FILE	   *f = NULL;
	void	   *handle = NULL;
	FlatFn	   *table = NULL;
	bool		built = false;
	int64_t		pairs[2] = {0, 0},
				bad[2] = {0, 0};
	int			hand_first,
				nhand;
	int			skipped = 0;

	report(flat_supported_check(), "gj_flat_supported: float4 arithmetic, dates and a program "
		   "that leaves two values stay out%s%s", "", "");

	/* keep the programs it writes out; then the random ones */
	for (int k = 0; k < nall; k++)
	{
		if (gj_flat_supported(progs[k].instrs, progs[k].ninstrs))
			progs[n++] = progs[k];
		else
			skipped++;
	}
	hand_first = n;
	nhand = flat_hand_programs(&progs[n]);
	n += nhand;
	for (int k = 0; k < FLAT_RANDOM; k++)
		rp_program(&progs[n++], k);

	/* one source: the helpers, then each program twice, without and with NULLs */
	if (mkdtemp(dir) != NULL)
	{
		snprintf(path, sizeof(path), "%s/flat.c", dir);
		snprintf(lib, sizeof(lib), "%s/flat.so", dir);
		f = fopen(path, "w");
	}
	if (f != NULL)
	{
		bool		ok = true;

		fputs("#include <stdbool.h>\n#include <stdint.h>\n#include <string.h>\n", f);
		for (int k = 0; ok && k < n; k++)
		{
			for (int v = 0; ok && v < 2; v++)
			{
				char		name[32];
				size_t		at = 0;

				snprintf(name, sizeof(name), "gjf_eval_%d_%d", k, v);
				ok = gj_flat_source(progs[k].instrs, progs[k].ninstrs, KF_OUTER_NULLABLE(v),
									KF_INNER_NULLABLE(v), k == 0 && v == 0, name, buf, len,
									&at);
				if (ok)
					fputs(buf, f);
				else
					printf("# %s: gj_flat_source failed\n", progs[k].name);
			}
		}
		fprintf(f, "typedef int (*FlatFn) (const int64_t *, const uint8_t *, "
				"const int64_t *, const uint8_t *);\nFlatFn gjf_table[] = {\n");
		for (int k = 0; ok && k < n; k++)
			fprintf(f, "\tgjf_eval_%d_0, gjf_eval_%d_1,\n", k, k);
		fprintf(f, "};\n");
		fclose(f);
		snprintf(command, sizeof(command),
				 "%s -O1 -w -ffp-contract=off -shared -fPIC -o %s %s > %s/cc.log 2>&1", cc, lib, path, dir);
		if (ok && system(command) == 0 && (handle = dlopen(lib, RTLD_NOW)) != NULL)
			table = (FlatFn *) dlsym(handle, "gjf_table");
		built = table != NULL;
		if (!built)
		{
			snprintf(command, sizeof(command), "head -5 %s/cc.log | sed 's/^/# /'", dir);
			if (system(command) != 0)
				printf("# could not show %s/cc.log\n", dir);
		}
	}
	if (!built && system("command -v cc > /dev/null 2>&1") != 0 && getenv("CC") == NULL)
	{
		for (int t = 0; t < 3; t++)
			printf("ok %d - flat programs # SKIP no C compiler\n", ++test_number);
		goto done;
	}
	snprintf(command, sizeof(command), "%d", n);
	report(built, "the flat sources of %s programs compile with the host's C compiler%s",
		   command, "");

	for (int k = 0; built && k < n; k++)
	{
		GjLeadingCompares lead;

		gj_program_leading_compares(progs[k].instrs, progs[k].ninstrs, &lead);
		for (int v = 0; v < 2; v++)
		{
			static int64_t ov[GJ_MAX_KEY_COLS][KF_MAXROWS],
						iv[GJ_MAX_KEY_COLS][KF_MAXROWS];
			static uint8_t onull[GJ_MAX_KEY_COLS][KF_MAXROWS],
						inull[GJ_MAX_KEY_COLS][KF_MAXROWS];
			GjKeyColumns outer,
						inner;

			flat_side(&progs[k], GJOP_LOAD_OUTER, v == 1, FLAT_ROWS, ov, onull);
			flat_side(&progs[k], GJOP_LOAD_INNER, v == 1, FLAT_ROWS, iv, inull);
			memset(&outer, 0, sizeof(outer));
			memset(&inner, 0, sizeof(inner));
			outer.ncols = inner.ncols = GJ_MAX_KEY_COLS;
			for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
			{
				bool		onullable = (KF_OUTER_NULLABLE(v) >> c) & 1u;
				bool		inullable = (KF_INNER_NULLABLE(v) >> c) & 1u;

				for (int r = 0; r < FLAT_ROWS; r++)
				{
					onull[c][r] &= onullable;
					inull[c][r] &= inullable;
				}
				outer.values[c] = ov[c];
				inner.values[c] = iv[c];
				outer.isnull[c] = onullable ? onull[c] : NULL;
				inner.isnull[c] = inullable ? inull[c] : NULL;
			}
			for (int o = 0; o < FLAT_ROWS; o++)
			{
				for (int i = 0; i < FLAT_ROWS; i++)
				{
					int64_t		orow[GJ_MAX_KEY_COLS],
								irow[GJ_MAX_KEY_COLS];
					uint8_t		on[GJ_MAX_KEY_COLS],
								in[GJ_MAX_KEY_COLS];
					int			want = flat_reference(&progs[k], &lead, &outer, o, &inner, i);
					int			got;

					for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
					{
						orow[c] = ov[c][o];
						irow[c] = iv[c][i];
						on[c] = onull[c][o];
						in[c] = inull[c][i];
					}
					got = table[2 * k + v] (orow, on, irow, in);
					pairs[v]++;
					if (got != want && bad[v]++ < 5)
						printf("# %s%s, outer row %d, inner row %d: %d, the interpreter %d\n",
							   progs[k].name, v ? " (NULLs)" : "", o, i, got, want);
				}
			}
		}
	}
	for (int v = 0; v < 2; v++)
	{
		char		what[96];

		snprintf(what, sizeof(what), "%d programs, %lld pairs%s", n, (long long) pairs[v],
				 v ? ", NULLs in every outer column and every other inner one" : "");
		report(built && bad[v] == 0, "flat programs give the interpreter's answer for every "
			   "pair (%s)%s", what, "");
	}
	if (skipped > 0)
		printf("# %d of kernel_test nvrtc's programs are not written out flat\n", skipped);
	run_flat_kernel_tests(progs, n, hand_first, nhand, dir);
	goto cleanup;

done:
	for (int t = 0; t < 4; t++)
		printf("ok %d - flat kernels # SKIP no C compiler\n", ++test_number);
cleanup:
	if (handle != NULL)
		dlclose(handle);
	snprintf(command, sizeof(command), "rm -rf %s", dir);
	if (system(command) != 0)
		printf("# could not remove %s\n", dir);
	free(buf);
	free(progs);
}

/* kernel_test flat: these tests alone. */
int
run_flat_only(void)
{
	printf("1..%d\n", flat_test_count());
	run_flat_tests();
	printf("kernel_test: %d passed, %d failed\n", test_number - failures, failures);
	return failures > 0;
}

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
#include <time.h>

#include "kt_common.h"
#include "kernels/shared/gj_keys.h"

/* The test hooks of cuda/cuda_compile.cu (cuda_stub.c without nvcc). */
extern char *gj_cuda_test_compile_program(const GjInstr *instrs, int ninstrs,
										  uint32_t outer_nullable, uint32_t inner_nullable,
										  int arch, double *ms, char *message,
										  size_t message_len);
extern const char *gj_cuda_test_nvrtc_path(void);

/* The architecture the checks compile for: the H100's. */
#define KT_ARCH		90

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
 * NVRTC alone (no GPU)
 * ---------------------------------------------------------------------
 */

#define NV_MAX_PROGRAMS	96

/*
 * The programs of the checks: the bench's, kernel_test's nested-loop
 * programs (kt_specs.c) and the program count's random shapes; at most
 * limit of them (all with limit 0).
 */
static int
nv_programs(Program *progs, int limit)
{
	int			n = compiled_bench_programs(progs);

	n += build_programs(&progs[n]);
	for (int s = 0; s < 8; s++)
		program_count_random_program(s % 4, &progs[n++]);
	return limit > 0 && limit < n ? limit : n;
}

/*
 * NVRTC compiles the count kernel of each program, its columns with and
 * without NULLs, for sm_90; the PTX has no local memory (the stack and the
 * columns are in registers) and no indirect branch (the interpreter's
 * switch is gone).  One test per program.
 */
static void
nv_check_programs(const Program *progs, int n, const char *skip)
{
	for (int i = 0; i < n; i++)
	{
		double		ms[2] = {0, 0};
		char		message[2048];
		bool		ok = true;

		if (skip != NULL)
		{
			test_number++;
			printf("ok %d - NVRTC compiles %s # SKIP %s\n", test_number, progs[i].name, skip);
			continue;
		}
		for (int nulls = 0; nulls < 2 && ok; nulls++)
		{
			uint32_t	mask = nulls ? 0xffu : 0;
			char	   *ptx = gj_cuda_test_compile_program(progs[i].instrs, progs[i].ninstrs,
														   mask, mask, KT_ARCH, &ms[nulls],
														   message, sizeof(message));

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
			free(ptx);
		}
		printf("# %d instructions, %.0f ms, with NULLs %.0f ms\n", progs[i].ninstrs, ms[0],
			   ms[1]);
		report(ok, "NVRTC compiles %s to sm_90 %s", progs[i].name,
			   "(no local memory, no indirect branch, with and without NULLs)");
	}
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
	return n;
}

void
run_nvrtc_cpu_tests(void)
{
	Program    *progs = xmalloc(sizeof(Program) * NV_MAX_PROGRAMS);
	int			n = compiled_bench_programs(progs);

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
print_compiled_source(int which)
{
	Program    *progs = xmalloc(sizeof(Program) * NV_MAX_PROGRAMS);
	int			n = compiled_bench_programs(progs);
	char	   *buf = xmalloc(65536);
	int			rc = 1;

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

/*
 * kernel_test bench-program-count [N]: per program, the program count of
 * N x N rows compiled (after a warm-up join that compiles it: cold
 * compile ms, then a join that finds it cached: warm) and interpreted
 * (N / 16 outer rows: the interpreter is slow), in pairs per second; the
 * totals of both over the same rows must agree.
 */
int
bench_program_count_compiled(int64_t n)
{
	Program    *progs = xmalloc(sizeof(Program) * NV_MAX_PROGRAMS);
	int			nprogs = compiled_bench_programs(progs);
	int64_t		irows = gj_max64(n / 16, 1);
	Side		side;
	int			rc = 0;

	kb_make_side(&side, n);
	printf("# program count, compiled and interpreted, %lld x %lld rows (interpreted: "
		   "%lld outer rows); pairs/s; compile ms cold / warm\n",
		   (long long) n, (long long) n, (long long) irows);
	printf("%-76s %3s %12s %12s %8s %6s %s\n", "program", "ops", "interpreted", "compiled",
		   "cold ms", "warm", "check");
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
		printf("%-76s %3d %12.3g %12.3g %8.1f %6s %s\n", p->name, kb_operators(p),
			   ims > 0 ? (double) irows * n / (ims / 1e3) : 0,
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
	for (int c = 0; c < KB_COLS; c++)
		free((void *) side.cols.values[c]);
	free(progs);
	return rc;
}

/*-------------------------------------------------------------------------
 *
 * kt_hoist.c
 *	  kernel_test's checks of what a compiled nested-loop kernel evaluates
 *	  once per inner row (device_program.h's gj_program_hoist), of the
 *	  32-bit division by a divisor prepared once (gj_div32_by,
 *	  gj_apply_divmod32_by) and of the checked steps that write their
 *	  result unconditionally (gj_apply_int_arith_fixed and
 *	  gj_apply_float_arith_fixed), on the host: the functions are the ones
 *	  NVRTC compiles into the kernels.  kernel_test cpu runs them; the compiled
 *	  kernels themselves are checked against the cpu backend on the GPU
 *	  machine (kt_compiled.c).
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "kt_common.h"

/* int32 values around the edges of a 32-bit division and of int2 */
static const int32_t div_edges[] = {
	INT32_MIN, INT32_MIN + 1, -1073741825, -1073741824, -65536, -46341, -32769, -32768,
	-32767, -7, -3, -2, -1, 0, 1, 2, 3, 7, 10, 32767, 32768, 46341, 65536, 1073741823,
	1073741824, INT32_MAX - 1, INT32_MAX
};

#define DIV_NEDGES ((int) (sizeof(div_edges) / sizeof(div_edges[0])))

/* A random int32: small, a power of two and its neighbours, or any. */
static int32_t
div_random(void)
{
	switch (rng() % 4)
	{
		case 0:
			return (int32_t) (rng() % 201) - 100;
		case 1:
			{
				int32_t		p = (int32_t) (1u << (rng() % 31));

				return (rng() % 2 ? p : -p) + (int32_t) (rng() % 3) - 1;
			}
		default:
			return (int32_t) (uint32_t) rng();
	}
}

/*
 * gj_apply_divmod32_by against gj_apply_arith32 (the compiled kernels'
 * division and remainder until now), int2 and int4, over every pair of
 * the edges and 4M random pairs, NULL operands included: the same
 * success, the same NULL flag, the same result where it succeeded.
 */
static void
hoist_test_divmod(void)
{
	int			bad = 0;
	int64_t		checked = 0;

	for (int64_t k = 0; k < DIV_NEDGES * DIV_NEDGES + 4000000; k++)
	{
		int32_t		a,
					b;
		GjDivisor	d;

		if (k < DIV_NEDGES * DIV_NEDGES)
		{
			a = div_edges[k / DIV_NEDGES];
			b = div_edges[k % DIV_NEDGES];
		}
		else
		{
			a = div_random();
			b = div_random();
		}
		d.magic = gj_div32_magic(b);
		d.unit = d.magic == 0;
		for (int op = GJOP_DIV; op <= GJOP_MOD; op++)
		{
			for (int type = GJT_INT2; type <= GJT_INT4; type++)
			{
				for (int nulls = 0; nulls < 3; nulls++)
				{
					GjInstr		in = {(int16_t) op, (int16_t) type, 0, 0};
					GjSlot		want[2] = {{.i = a}, {.i = b}},
								got[2] = {{.i = a}, {.i = b}};
					bool		want_null[2] = {nulls == 1, nulls == 2},
								got_null[2] = {nulls == 1, nulls == 2};
					int			want_sp = 2,
								got_sp = 2;
					bool		want_ok = gj_apply_arith32(&in, want, want_null, &want_sp);
					bool		got_ok = gj_apply_divmod32_by(&in, got, got_null, &got_sp, d);

					checked++;
					if (want_ok != got_ok || want_sp != got_sp || want_null[0] != got_null[0] ||
						(want_ok && !want_null[0] && want[0].i != got[0].i))
					{
						if (bad++ < 5)
							printf("# %s int%d %d, %d (NULLs %d): want %s %lld, got %s %lld\n",
								   op == GJOP_DIV ? "/" : "%", type == GJT_INT2 ? 2 : 4,
								   a, b, nulls, want_ok ? "ok" : "a failure",
								   (long long) want[0].i, got_ok ? "ok" : "a failure",
								   (long long) got[0].i);
					}
				}
			}
		}
	}
	printf("# %lld divisions and remainders compared\n", (long long) checked);
	report(bad == 0, "%s%s", "gj_apply_divmod32_by: a divisor's magic multiplier gives the ",
		   "division's and remainder's answers (int2, int4, edges, random, NULLs)");
}

/* One hand-written program and the ranges gj_program_hoist must find. */
typedef struct HoistCase
{
	const char *name;
	const char *ranges;			/* "start-end[n][d]" each, n: narrow, d: divisor */
} HoistCase;

/* The ranges of a program as HoistCase writes them. */
static void
hoist_ranges(const Program *p, char *buf, size_t len)
{
	GjLeadingCompares lead;
	GjNarrowing nw;
	GjHoisting	hs;
	size_t		at = 0;

	gj_program_leading_compares(p->instrs, p->ninstrs, &lead);
	gj_program_narrow(p->instrs, p->ninstrs, &nw);
	gj_program_hoist(p->instrs, p->ninstrs, lead.pc, lead.depth, &nw, &hs);
	buf[0] = '\0';
	for (int h = 0; h < hs.n && at < len; h++)
		at += snprintf(buf + at, len - at, "%s%d-%d%s%s", h > 0 ? " " : "",
					   hs.range[h].start, hs.range[h].end, hs.range[h].narrow ? "n" : "",
					   hs.range[h].divisor ? "d" : "");
}

static void
hoist_test_ranges(void)
{
	Program		p[8];
	HoistCase	cases[8];
	int			n = 0;
	bool		ok = true;

	/* the bench's division: o.x / (i.y + 1) > 3 */
	memset(p, 0, sizeof(p));
	emit(&p[n], GJOP_LOAD_OUTER, GJT_INT4, 0, 0);
	emit(&p[n], GJOP_LOAD_INNER, GJT_INT4, 1, 0);
	emit(&p[n], GJOP_CONST, GJT_INT4, 0, 1);
	emit(&p[n], GJOP_ADD, GJT_INT4, 0, 0);
	emit(&p[n], GJOP_DIV, GJT_INT4, 0, 0);
	emit(&p[n], GJOP_CONST, GJT_INT4, 0, 3);
	emit(&p[n], GJOP_GT, GJ_CLASS_INT, 0, 0);
	cases[n++] = (HoistCase) {"o.x / (i.y + 1) > 3", "1-4nd"};

	/* a band: o.t BETWEEN i.t - 12 AND i.t + 12, int8 (not narrow) */
	emit(&p[n], GJOP_LOAD_OUTER, GJT_INT8, 0, 0);
	emit(&p[n], GJOP_LOAD_INNER, GJT_INT8, 0, 0);
	emit(&p[n], GJOP_CONST, GJT_INT8, 0, 12);
	emit(&p[n], GJOP_SUB, GJT_INT8, 0, 0);
	emit(&p[n], GJOP_GE, GJ_CLASS_INT, 0, 0);
	emit(&p[n], GJOP_LOAD_OUTER, GJT_INT8, 0, 0);
	emit(&p[n], GJOP_LOAD_INNER, GJT_INT8, 0, 0);
	emit(&p[n], GJOP_CONST, GJT_INT8, 0, 12);
	emit(&p[n], GJOP_ADD, GJT_INT8, 0, 0);
	emit(&p[n], GJOP_LE, GJ_CLASS_INT, 0, 0);
	emit(&p[n], GJOP_AND, GJT_BOOL, 0, 0);
	cases[n++] = (HoistCase) {"band, int8", "1-4 6-9"};

	/*
	 * leading compare, then an inner-only qual (a boolean range) and a
	 * remainder by an int8 (not a 32-bit step: no magic)
	 */
	emit(&p[n], GJOP_LOAD_OUTER, GJT_INT4, 0, 0);
	emit(&p[n], GJOP_LOAD_INNER, GJT_INT4, 0, 0);
	emit(&p[n], GJOP_LT, GJ_CLASS_INT, 0, 0);
	emit(&p[n], GJOP_LOAD_INNER, GJT_INT4, 1, 0);
	emit(&p[n], GJOP_CONST, GJT_INT4, 0, 2);
	emit(&p[n], GJOP_MUL, GJT_INT4, 0, 0);
	emit(&p[n], GJOP_CONST, GJT_INT4, 0, 0);
	emit(&p[n], GJOP_GT, GJ_CLASS_INT, 0, 0);
	emit(&p[n], GJOP_AND, GJT_BOOL, 0, 0);
	emit(&p[n], GJOP_LOAD_OUTER, GJT_INT8, 1, 0);
	emit(&p[n], GJOP_LOAD_INNER, GJT_INT8, 2, 0);
	emit(&p[n], GJOP_NEG, GJT_INT8, 0, 0);
	emit(&p[n], GJOP_MOD, GJT_INT8, 0, 0);
	emit(&p[n], GJOP_CONST, GJT_INT8, 0, 0);
	emit(&p[n], GJOP_EQ, GJ_CLASS_INT, 0, 0);
	emit(&p[n], GJOP_AND, GJT_BOOL, 0, 0);
	cases[n++] = (HoistCase) {"lead, i.b * 2 > 0, o.c % -i.d = 0", "3-8n 10-12"};

	/* nothing of the inner row alone with an operator: nothing */
	emit(&p[n], GJOP_LOAD_OUTER, GJT_INT4, 0, 0);
	emit(&p[n], GJOP_LOAD_INNER, GJT_INT4, 0, 0);
	emit(&p[n], GJOP_ADD, GJT_INT4, 0, 0);
	emit(&p[n], GJOP_LOAD_INNER, GJT_INT4, 1, 0);
	emit(&p[n], GJOP_GT, GJ_CLASS_INT, 0, 0);
	cases[n++] = (HoistCase) {"o.a + i.a > i.b", ""};

	/* the whole program of the inner row alone, with a float step */
	emit(&p[n], GJOP_LOAD_INNER, GJT_FLOAT8, 1, 0);
	emit(&p[n], GJOP_CONST, GJT_FLOAT8, 0, dbits(2.0));
	emit(&p[n], GJOP_MUL, GJT_FLOAT8, 0, 0);
	emit(&p[n], GJOP_CONST, GJT_FLOAT8, 0, dbits(1.0));
	emit(&p[n], GJOP_LT, GJ_CLASS_FLOAT, 0, 0);
	cases[n++] = (HoistCase) {"i.f * 2.0 < 1.0", "0-5n"};

	/* an int4 divisor of an int8 division: a range, but no magic */
	emit(&p[n], GJOP_LOAD_OUTER, GJT_INT8, 0, 0);
	emit(&p[n], GJOP_LOAD_INNER, GJT_INT4, 1, 0);
	emit(&p[n], GJOP_ABS, GJT_INT4, 0, 0);
	emit(&p[n], GJOP_DIV, GJT_INT8, 0, 0);
	emit(&p[n], GJOP_CONST, GJT_INT8, 0, 3);
	emit(&p[n], GJOP_GT, GJ_CLASS_INT, 0, 0);
	cases[n++] = (HoistCase) {"o.a::int8 / abs(i.b) > 3", "1-3n"};

	for (int i = 0; i < n; i++)
	{
		char		got[128];

		hoist_ranges(&p[i], got, sizeof(got));
		if (strcmp(got, cases[i].ranges) != 0)
		{
			printf("# %s: ranges \"%s\", want \"%s\"\n", cases[i].name, got, cases[i].ranges);
			ok = false;
		}
	}
	report(ok, "%s%s", "gj_program_hoist: the inner row's subexpressions of hand-written ",
		   "programs (divisors, band bounds, booleans, a whole program, none)");
}

/* int64 values around the edges of int2, int4, int8 and their products */
static const int64_t step_int_edges[] = {
	INT64_MIN, INT64_MIN + 1, -INT64_C(3037000500), INT32_MIN - INT64_C(1), INT32_MIN,
	-65536, -32769, -32768, -7, -1, 0, 1, 2, 7, 32767, 32768, 65536, INT32_MAX,
	INT32_MAX + INT64_C(1), INT64_C(3037000500), INT64_MAX - 1, INT64_MAX
};

/* floats around the edges of float4 and float8 arithmetic */
static const double step_float_edges[] = {
	0.0, -0.0, 1.0, -2.5, 0.1, 1e-30, 1e-45, 1e-310, 4.9e-324, 1e30, 3.4e38, 1e38, 1e300,
	1.7e308, -1.7e308, INFINITY, -INFINITY, NAN
};

#define STEP_NINT ((int) (sizeof(step_int_edges) / sizeof(step_int_edges[0])))
#define STEP_NFLOAT ((int) (sizeof(step_float_edges) / sizeof(step_float_edges[0])))

/*
 * One step of op and type on a and b (NULLs as nulls says) by
 * gj_apply_arith and by fixed (the compiled steps' version): the same
 * success, NULL flag and, where it succeeded, the same result.
 */
static bool
step_same(bool (*fixed) (const GjInstr *, GjSlot *, bool *, int *), int op, int type,
		  GjSlot a, GjSlot b, int nulls)
{
	GjInstr		in = {(int16_t) op, (int16_t) type, 0, 0};
	GjSlot		want[2] = {a, b},
				got[2] = {a, b};
	bool		want_null[2] = {nulls == 1, nulls == 2},
				got_null[2] = {nulls == 1, nulls == 2};
	int			want_sp = 2,
				got_sp = 2;
	bool		want_ok = gj_apply_arith(&in, want, want_null, &want_sp);
	bool		got_ok = fixed(&in, got, got_null, &got_sp);

	return want_ok == got_ok && want_sp == got_sp && want_null[0] == got_null[0] &&
		(!want_ok || want_null[0] || want[0].i == got[0].i);
}

static void
steps_test_fixed(void)
{
	int			bad = 0;
	int64_t		checked = 0;

	for (int k = 0; k < STEP_NINT * STEP_NINT + 200000; k++)
	{
		GjSlot		a,
					b;

		a.i = k < STEP_NINT * STEP_NINT ? step_int_edges[k / STEP_NINT] : (int64_t) rng();
		b.i = k < STEP_NINT * STEP_NINT ? step_int_edges[k % STEP_NINT] :
			rng() % 2 ? (int64_t) (rng() % 201) - 100 : (int64_t) rng();
		for (int op = GJOP_ADD; op <= GJOP_MOD; op++)
			for (int type = GJT_INT2; type <= GJT_INT8; type++)
				for (int nulls = 0; nulls < 3; nulls++, checked++)
					if (!step_same(gj_apply_int_arith_fixed, op, type, a, b, nulls) && bad++ < 5)
						printf("# int op %d type %d, %lld and %lld (NULLs %d) differ\n", op, type,
							   (long long) a.i, (long long) b.i, nulls);
	}
	for (int k = 0; k < STEP_NFLOAT * STEP_NFLOAT + 200000; k++)
	{
		GjSlot		a,
					b;

		if (k < STEP_NFLOAT * STEP_NFLOAT)
		{
			a.f = step_float_edges[k / STEP_NFLOAT];
			b.f = step_float_edges[k % STEP_NFLOAT];
		}
		else
		{
			a.i = (int64_t) rng();
			b.i = (int64_t) rng();
		}
		for (int op = GJOP_ADD; op <= GJOP_DIV; op++)
			for (int type = GJT_FLOAT4; type <= GJT_FLOAT8; type++)
			{
				GjSlot		fa = a,
							fb = b;

				/* a float4 slot holds a float's value */
				if (type == GJT_FLOAT4)
				{
					fa.f = (double) (float) a.f;
					fb.f = (double) (float) b.f;
				}
				for (int nulls = 0; nulls < 3; nulls++, checked++)
					if (!step_same(gj_apply_float_arith_fixed, op, type, fa, fb, nulls) &&
						bad++ < 5)
						printf("# float op %d type %d, %g and %g (NULLs %d) differ\n", op, type,
							   fa.f, fb.f, nulls);
			}
	}
	printf("# %lld steps compared\n", (long long) checked);
	report(bad == 0, "%s%s", "gj_apply_int_arith_fixed and gj_apply_float_arith_fixed: ",
		   "gj_apply_arith's answers (int2, int4, int8, float4, float8, edges, random, NULLs)");
}

void
run_hoist_tests(void)
{
	hoist_test_divmod();
	hoist_test_ranges();
	steps_test_fixed();
}

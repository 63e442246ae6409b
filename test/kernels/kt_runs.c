/*-------------------------------------------------------------------------
 *
 * kt_runs.c
 *	  kernel_test's checks of the range-run reduction (shared/agg_runs.c):
 *	  min and max of an inner argument over a run answered by the
 *	  range-minimum tables must equal a walk over the run's positions;
 *	  and the float sum of squared deviations that avg(float)'s partial
 *	  state needs (agg_reduce.h) must be float8_accum()'s.
 *
 * The joins of kt_cpu.c reduce runs too, but their arguments all need a
 * sum, so float arguments walk, and their runs are at most a few hundred
 * positions wide.  Here the arguments need min/max only, the runs span
 * from none to thousands of blocks, and the values hold NULLs, NaN,
 * infinities, -0.0 and ties.  Plain host code: the cuda backend calls the
 * same functions, so the cpu mode covers both.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_common.h"
#include "kernels/agg_reduce.h"
#include "kernels/shared/agg_runs.h"

#define RUNS_ROWS		200000
#define RUNS_QUERIES	20000

/* the argument columns: int, float, int with every row NULL */
#define RUNS_NARGS		3

int
runs_test_count(void)
{
	return 3;
}

static int64_t
float_value(uint64_t r)
{
	static const double specials[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 1.5, -1.5};
	double		d;

	if (r % 50 == 0)
		d = specials[(r / 50) % 7];
	else
		d = (double) (int64_t) (r % 200003) / 7.0 - 10000.0;
	return gj_double_to_bits(d);
}

static bool
same_minmax(const GjAggAcc *x, const GjAggAcc *y)
{
	return x->has_minmax == y->has_minmax &&
		(!x->has_minmax || (x->min_key == y->min_key && x->max_key == y->max_key));
}

/*
 * Reduce random runs of inner positions with gj_agg_runs_reduce and by
 * walking; the inner permutation is random, so key order differs from row
 * order as in a join.
 */
static void
check_runs(bool grouped)
{
	int64_t    *values[RUNS_NARGS];
	uint8_t    *flags[RUNS_NARGS];
	uint32_t   *perm = xmalloc(sizeof(uint32_t) * RUNS_ROWS);
	uint32_t	groups[4] = {0, 1, 2, 3};
	GjAggSpec	spec;
	GjAggRuns  *runs;
	GjAggPartial got,
				want;
	uint64_t	seed = grouped ? 99 : 7;
	int64_t		walked = 0;
	int			a,
				q,
				bad = 0;
	char		detail[160];

	memset(&spec, 0, sizeof(spec));
	spec.nargs = RUNS_NARGS;
	for (a = 0; a < RUNS_NARGS; a++)
	{
		int64_t		r;

		values[a] = xmalloc(sizeof(int64_t) * RUNS_ROWS);
		flags[a] = xmalloc(RUNS_ROWS);
		for (r = 0; r < RUNS_ROWS; r++)
		{
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			/* few distinct ints: ties; NULLs in runs of up to 200 rows */
			values[a][r] = a == 1 ? float_value(seed >> 20) : (int64_t) ((seed >> 33) % 1000) - 500;
			flags[a][r] = a == 2 || ((seed >> 12) % 1000 < 3 + (r / 200) % 5 * 100) ?
				GJ_AGG_ROW_NULL : GJ_AGG_ROW_VALUE;
		}
		spec.args[a].side = GJ_AGG_SIDE_INNER;
		spec.args[a].cls = a == 1 ? GJ_CLASS_FLOAT : GJ_CLASS_INT;
		spec.args[a].need_minmax = 1;
		spec.args[a].values = values[a];
		spec.args[a].flags = flags[a];
	}
	for (q = 0; q < RUNS_ROWS; q++)
		perm[q] = (uint32_t) q;
	for (q = RUNS_ROWS - 1; q > 0; q--)
	{
		uint32_t	t,
					j;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		j = (uint32_t) ((seed >> 33) % (uint64_t) (q + 1));
		t = perm[q];
		perm[q] = perm[j];
		perm[j] = t;
	}
	spec.outer_group = grouped ? groups : NULL;
	spec.ngroups = grouped ? 4 : 1;
	spec.ninner_groups = 1;
	runs = gj_agg_runs_create(&spec, perm, RUNS_ROWS);
	for (q = 0; q < RUNS_QUERIES && bad == 0; q++)
	{
		int64_t		first,
					last,
					width,
					p;
		GjAggAcc	gacc[4 * RUNS_NARGS];
		int64_t		gpairs[4];
		const GjAggAcc *acc = got.acc;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		/* widths of every scale: 0, within a block, a few blocks, most rows */
		width = (int64_t) ((seed >> 20) % (uint64_t) (q % 4 == 0 ? RUNS_ROWS : q % 4 == 1 ? 300 : 5000));
		first = (int64_t) ((seed >> 40) % (uint64_t) (RUNS_ROWS - width + 1));
		last = first + width;
		memset(&got, 0, sizeof(got));
		memset(&want, 0, sizeof(want));
		memset(gacc, 0, sizeof(gacc));
		memset(gpairs, 0, sizeof(gpairs));
		if (grouped)
		{
			got.group_acc = gacc;
			got.group_pairs = gpairs;
			acc = gacc + (q % 4) * RUNS_NARGS;
		}
		walked += gj_agg_runs_reduce(runs, &spec, &got, (uint32_t) (q % 4), first, last);
		for (a = 0; a < RUNS_NARGS; a++)
			for (p = first; p < last; p++)
				if (flags[a][perm[p]] == GJ_AGG_ROW_VALUE)
				{
					want.acc[a].count++;
					gj_agg_add_minmax(&want.acc[a], spec.args[a].cls, values[a][perm[p]]);
				}
		for (a = 0; a < RUNS_NARGS; a++)
			if (!same_minmax(&acc[a], &want.acc[a]) || acc[a].count != want.acc[a].count)
			{
				snprintf(detail, sizeof(detail), "query %d: [%lld, %lld), argument %d",
						 q, (long long) first, (long long) last, a);
				bad++;
				break;
			}
	}
	if (bad == 0)
		snprintf(detail, sizeof(detail), "%d runs, %.1f positions walked per run",
				 RUNS_QUERIES, (double) walked / RUNS_QUERIES);
	report(bad == 0, "agg_runs min/max by range-minimum tables = a walk (%s), %s",
		   grouped ? "GROUP BY" : "no groups", detail);
	gj_agg_runs_free(runs);
	for (a = 0; a < RUNS_NARGS; a++)
	{
		free(values[a]);
		free(flags[a]);
	}
	free(perm);
}

#define SXX_BLOCKS		20000

/* Is got within 1e-9 relative of want? */
static bool
close_to(double got, double want)
{
	return fabs(got - want) <= 1e-9 * fabs(want);
}

/*
 * The sum of squared deviations of float arguments (GjAggArg.need_sxx,
 * avg(float)'s partial state {N, Sx, Sxx}) against float8_accum()'s update
 * row by row: value by value (gj_agg_add, weight 1) it is the same
 * operations, so the same bits; blocks of equal values added at once
 * (weights, as the count paths add a row's matches) and partials of
 * random slices merged (gj_agg_merge, float8_combine()'s formula) agree to
 * 1e-9.  The values have a large mean and a small spread, where a naive
 * sum of squares would lose every digit.
 */
static void
check_sxx(void)
{
	double	   *value = xmalloc(sizeof(double) * SXX_BLOCKS);
	int64_t    *weight = xmalloc(sizeof(int64_t) * SXX_BLOCKS);
	GjAggArg	arg;
	GjAggAcc	single,
				weighted,
				merged,
				slice;
	double		n = 0.0,
				sx = 0.0,
				sxx = 0.0;
	uint64_t	seed = 35;
	int64_t		i,
				j,
				slice_left = 0;
	bool		same = true;
	char		detail[160];

	memset(&arg, 0, sizeof(arg));
	arg.side = GJ_AGG_SIDE_INNER;
	arg.cls = GJ_CLASS_FLOAT;
	arg.need_sum = 1;
	arg.need_sxx = 1;
	memset(&single, 0, sizeof(single));
	memset(&weighted, 0, sizeof(weighted));
	memset(&merged, 0, sizeof(merged));
	memset(&slice, 0, sizeof(slice));
	for (i = 0; i < SXX_BLOCKS; i++)
	{
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		value[i] = 1e6 + (double) (int64_t) ((seed >> 20) % 200003) / 7.0;
		weight[i] = 1 + (int64_t) ((seed >> 50) % 40);
	}
	for (i = 0; i < SXX_BLOCKS; i++)
	{
		int64_t		bits = gj_double_to_bits(value[i]);

		gj_agg_add(&weighted, &arg, bits, weight[i]);
		for (j = 0; j < weight[i]; j++)
		{
			double		tmp;

			/* float8_accum() */
			n += 1.0;
			sx += value[i];
			if (n > 1.0)
			{
				tmp = value[i] * n - sx;
				sxx += tmp * tmp / (n * (n - 1.0));
			}
			gj_agg_add(&single, &arg, bits, 1);
			same = same && single.fsxx == sxx && single.fsum == sx;

			/* slices of 1 to 5000 values, each merged when it ends */
			if (slice_left == 0)
			{
				seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
				slice_left = 1 + (int64_t) ((seed >> 30) % 5000);
			}
			gj_agg_add(&slice, &arg, bits, 1);
			if (--slice_left == 0)
			{
				gj_agg_merge(&merged, &slice, GJ_CLASS_FLOAT);
				memset(&slice, 0, sizeof(slice));
			}
		}
	}
	gj_agg_merge(&merged, &slice, GJ_CLASS_FLOAT);
	snprintf(detail, sizeof(detail), "%.0f values, Sxx %.17g: row by row %s, weighted %.17g, merged %.17g",
			 n, sxx, same ? "the same bits" : "DIFFERS", weighted.fsxx, merged.fsxx);
	report(same && single.fn == (int64_t) n && weighted.fn == (int64_t) n &&
		   merged.fn == (int64_t) n && merged.count == (int64_t) n &&
		   close_to(weighted.fsxx, sxx) && close_to(merged.fsxx, sxx) &&
		   close_to(weighted.fsum, sx) && close_to(merged.fsum, sx),
		   "float Sxx (avg(float) partial state) = float8_accum()'s (%s)%s", detail, "");
	free(value);
	free(weight);
}

void
run_runs_tests(void)
{
	check_runs(false);
	check_runs(true);
	check_sxx();
}

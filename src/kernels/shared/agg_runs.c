/*-------------------------------------------------------------------------
 *
 * agg_runs.c
 *	  Aggregates over the runs of a range join (see agg_runs.h).
 *
 * Plain C without PostgreSQL headers, like the backends: memory comes from
 * malloc, and the backend that created the runs frees them in end_join.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>

#include "agg_runs.h"
#include "kernels/agg_reduce.h"

/*
 * Per inner argument column, over inner positions in key order: prefix
 * counts of non-NULL values and prefix sums of integer values (a run's
 * count and sum are two subtractions), and the values themselves in key
 * order for the float sums and min/max that walk the run.
 */
struct GjAggRuns
{
	int64_t    *count_prefix[GJ_AGG_MAX_ARGS];
	gj_int128  *sum_prefix[GJ_AGG_MAX_ARGS];
	int64_t    *sorted_values[GJ_AGG_MAX_ARGS];
	uint8_t    *sorted_flags[GJ_AGG_MAX_ARGS];
};

void
gj_agg_runs_free(GjAggRuns *runs)
{
	int			a;

	if (runs == NULL)
		return;
	for (a = 0; a < GJ_AGG_MAX_ARGS; a++)
	{
		free(runs->count_prefix[a]);
		free(runs->sum_prefix[a]);
		free(runs->sorted_values[a]);
		free(runs->sorted_flags[a]);
	}
	free(runs);
}

GjAggRuns *
gj_agg_runs_create(const GjAggSpec *spec, const uint32_t *inner_perm, int64_t ninner)
{
	GjAggRuns  *runs = calloc(1, sizeof(GjAggRuns));
	int			a;

	if (runs == NULL)
		return NULL;
	for (a = 0; a < spec->nargs; a++)
	{
		const GjAggArg *arg = &spec->args[a];
		int64_t		p;

		if (arg->side != 1)
			continue;
		runs->count_prefix[a] = malloc(sizeof(int64_t) * (ninner + 1));
		if (runs->count_prefix[a] == NULL)
			goto oom;
		if (arg->need_sum && arg->cls == GJ_CLASS_INT)
		{
			runs->sum_prefix[a] = malloc(sizeof(gj_int128) * (ninner + 1));
			if (runs->sum_prefix[a] == NULL)
				goto oom;
		}
		if ((arg->need_sum && arg->cls == GJ_CLASS_FLOAT) || arg->need_minmax)
		{
			runs->sorted_values[a] = malloc(sizeof(int64_t) * (ninner > 0 ? ninner : 1));
			runs->sorted_flags[a] = malloc(ninner > 0 ? ninner : 1);
			if (runs->sorted_values[a] == NULL || runs->sorted_flags[a] == NULL)
				goto oom;
		}
		runs->count_prefix[a][0] = 0;
		if (runs->sum_prefix[a])
			runs->sum_prefix[a][0] = 0;
		for (p = 0; p < ninner; p++)
		{
			uint32_t	row = inner_perm[p];
			bool		valid = arg->flags == NULL || arg->flags[row] == GJ_AGG_ROW_VALUE;

			runs->count_prefix[a][p + 1] = runs->count_prefix[a][p] + valid;
			if (runs->sum_prefix[a])
				runs->sum_prefix[a][p + 1] = runs->sum_prefix[a][p] +
					(valid ? arg->values[row] : 0);
			if (runs->sorted_values[a])
			{
				runs->sorted_values[a][p] = arg->values[row];
				runs->sorted_flags[a][p] = valid ? GJ_AGG_ROW_VALUE : GJ_AGG_ROW_NULL;
			}
		}
	}
	return runs;

oom:
	gj_agg_runs_free(runs);
	return NULL;
}

int64_t
gj_agg_runs_reduce(const GjAggRuns *runs, const GjAggSpec *spec, GjAggPartial *partial,
				   uint32_t orow, int64_t first, int64_t last)
{
	int64_t		width = last - first;
	int64_t		work = 1;
	GjAggAcc   *accs = partial->acc;
	int			a;

	if (width <= 0)
		return work;
	partial->pairs += width;
	/*
	 * GROUP BY: the whole run belongs to the group of the outer row (no
	 * inner groups: gj_agg_spec_reads_rows)
	 */
	if (spec->outer_group != NULL)
	{
		uint32_t	g = spec->outer_group[orow];

		partial->group_pairs[g] += width;
		accs = partial->group_acc + (int64_t) g * spec->nargs;
	}
	for (a = 0; a < spec->nargs; a++)
	{
		const GjAggArg *ga = &spec->args[a];
		GjAggAcc   *acc = &accs[a];
		int64_t		q;

		if (ga->side == 0)
		{
			if (ga->flags == NULL || ga->flags[orow] == GJ_AGG_ROW_VALUE)
				gj_agg_add(acc, ga, ga->values[orow], width);
			continue;
		}
		acc->count += runs->count_prefix[a][last] - runs->count_prefix[a][first];
		if (runs->sum_prefix[a])
			acc->isum += runs->sum_prefix[a][last] - runs->sum_prefix[a][first];
		if (runs->sorted_values[a] == NULL)
			continue;
		for (q = first; q < last; q++)
		{
			if (runs->sorted_flags[a][q] != GJ_AGG_ROW_VALUE)
				continue;
			if (ga->need_sum && ga->cls == GJ_CLASS_FLOAT)
				gj_agg_add_sum(acc, ga->cls, runs->sorted_values[a][q], 1);
			if (ga->need_minmax)
				gj_agg_add_minmax(acc, ga->cls, runs->sorted_values[a][q]);
		}
		work += width;
	}
	return work;
}

/*-------------------------------------------------------------------------
 *
 * agg_fold.c
 *	  Folding a step's matches into partial aggregates (see agg_fold.h).
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "kernels/agg_reduce.h"
#include "kernels/backend.h"
#include "kernels/shared/agg_fold.h"

/*
 * The partials of group g (gj_agg_pair_group) and its pair counter (NULL
 * without GROUP BY).
 */
static inline GjAggAcc *
group_accs(const GjAggSpec *spec, GjAggPartial *partial, int64_t g, int64_t **pairs)
{
	*pairs = NULL;
	if (spec->outer_group == NULL)
		return partial->acc;
	*pairs = &partial->group_pairs[g];
	return partial->group_acc + g * spec->nargs;
}

int64_t
gj_agg_fold_pairs(const GjAggSpec *spec, GjAggPartial *partial,
				  uint32_t *outer_rows, uint32_t *inner_rows, int64_t n)
{
	int64_t		kept = 0;
	int64_t		i;

	for (i = 0; i < n; i++)
	{
		uint32_t	orow = outer_rows[i];
		uint32_t	irow = inner_rows[i];
		int64_t		values[GJ_AGG_MAX_ARGS];
		int			status[GJ_AGG_MAX_ARGS];
		GjAggAcc   *accs;
		int64_t    *group_pairs;
		int64_t		g;
		int			a;

		/* the host joins these rows' pairs itself, after the last step */
		if (gj_agg_pair_later(spec, orow & GJ_PAIR_ROW_MASK, irow))
			continue;
		if (orow & GJ_PAIR_RECHECK)
			goto keep;
		g = gj_agg_pair_group(spec, orow, irow);
		if (g == GJ_AGG_PAIR_DEFERRED)
			goto keep;
		/* every value first: a pair is folded whole or not at all */
		for (a = 0; a < spec->nargs; a++)
		{
			status[a] = gj_agg_arg_value(spec, &spec->args[a], orow, irow, &values[a]);
			if (status[a] == GJ_AGG_ROW_ERROR)
				goto keep;
		}
		accs = group_accs(spec, partial, g, &group_pairs);
		partial->pairs++;
		if (group_pairs != NULL)
			(*group_pairs)++;
		for (a = 0; a < spec->nargs; a++)
		{
			if (status[a] == GJ_AGG_ROW_VALUE)
				gj_agg_add(&accs[a], &spec->args[a], values[a], 1);
		}
		continue;
keep:
		outer_rows[kept] = orow;
		inner_rows[kept] = irow;
		kept++;
	}
	return kept;
}

bool
gj_agg_spec_reads_rows(const GjAggSpec *spec)
{
	int			a;

	if (spec->rows_need_host || spec->inner_group != NULL)
		return false;
	for (a = 0; a < spec->nargs; a++)
	{
		if (spec->args[a].side == GJ_AGG_SIDE_PAIR)
			return false;
	}
	return true;
}

bool
gj_agg_spec_outer_only(const GjAggSpec *spec)
{
	int			a;

	/* a row's count says nothing of the inner rows' groups */
	if (spec->rows_need_host || spec->inner_group != NULL)
		return false;
	for (a = 0; a < spec->nargs; a++)
	{
		if (spec->args[a].side != GJ_AGG_SIDE_OUTER)
			return false;
	}
	/* counting would not see which matches are such rows' */
	return spec->host_later[0] == NULL && spec->host_later[1] == NULL;
}

void
gj_agg_fold_row_counts(const GjAggSpec *spec, GjAggPartial *partial,
					   const uint32_t *rows, int64_t first_row,
					   const uint64_t *counts, int64_t n)
{
	int64_t		j;

	for (j = 0; j < n; j++)
	{
		uint32_t	orow = rows != NULL ? rows[j] : (uint32_t) (first_row + j);
		int64_t		weight = (int64_t) counts[j];
		GjAggAcc   *accs;
		int64_t    *group_pairs;
		int			a;

		if (weight == 0)
			continue;
		accs = group_accs(spec, partial, gj_agg_pair_group(spec, orow, 0), &group_pairs);
		partial->pairs += weight;
		if (group_pairs != NULL)
			*group_pairs += weight;
		for (a = 0; a < spec->nargs; a++)
		{
			const GjAggArg *arg = &spec->args[a];

			if (arg->flags == NULL || arg->flags[orow] == GJ_AGG_ROW_VALUE)
				gj_agg_add(&accs[a], arg, arg->values[orow], weight);
		}
	}
}

void
gj_agg_merge_device(const GjAggSpec *spec, GjAggPartial *partial,
					const unsigned long long *group_pairs, const GjAggDeviceAcc *accs)
{
	int64_t		ngroups = gj_agg_spec_groups(spec);
	int64_t		g;

	for (g = 0; g < ngroups; g++)
	{
		GjAggAcc   *into = spec->outer_group != NULL ?
			partial->group_acc + g * spec->nargs : partial->acc;
		int			a;

		if (group_pairs[g] == 0)
			continue;
		partial->pairs += (int64_t) group_pairs[g];
		if (spec->outer_group != NULL)
			partial->group_pairs[g] += (int64_t) group_pairs[g];
		for (a = 0; a < spec->nargs; a++)
		{
			const GjAggArg *arg = &spec->args[a];
			const GjAggDeviceAcc *d = &accs[g * spec->nargs + a];
			GjAggAcc	from;

			if (d->count == 0)
				continue;
			memset(&from, 0, sizeof(from));
			from.count = (int64_t) d->count;
			from.isum = (gj_int128) (((unsigned __int128) d->isum_hi << 64) | d->isum_lo);
			from.saw_nonfinite = d->saw_nonfinite != 0;
			if (arg->need_sum && arg->cls == GJ_CLASS_FLOAT)
			{
				from.fsum = d->fsum;
				from.fsum_started = 1;
			}
			if (arg->need_minmax)
			{
				int64_t		lo = d->min_key,
							hi = d->max_key;

				if (arg->cls == GJ_CLASS_FLOAT)
				{
					lo = gj_double_to_bits(gj_float_from_total_key(lo));
					hi = gj_double_to_bits(gj_float_from_total_key(hi));
				}
				/* gj_agg_merge takes min/max from the bits */
				from.has_minmax = 1;
				from.min_bits = lo;
				from.max_bits = hi;
			}
			gj_agg_merge(&into[a], &from, arg->cls);
		}
	}
}

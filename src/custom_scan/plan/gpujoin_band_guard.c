/*-------------------------------------------------------------------------
 *
 * gpujoin_band_guard.c
 *	  The executor's check that a rewritten band may stand in for its quals.
 *
 * The algorithm chooser (gpujoin_algorithm.c) may run "abs(o.x - i.y) <= c"
 * as the band i.y BETWEEN o.x - c AND o.x + c, and "o.x - i.y <= c" or
 * "i.y + c >= o.x" as the bound i.y >= o.x - c, which is exact only if the
 * arithmetic of the written form cannot raise an overflow ERROR on any
 * pair: the native plan evaluates it on every pair.  Whether it can depends
 * on the data, so the plan carries a GpuJoinBandGuard (gpujoin.h), one term
 * per node of that arithmetic, and the executor calls
 * gpujoin_band_guard_holds() once both sides are drained, with their key
 * columns; when it cannot rule an overflow out, the executor runs a nested
 * loop over the full device program instead.
 *
 * This is the only executor-time code of the planning side; it lives apart
 * from the planner files so that they hold planner code only.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "gpujoin.h"

/* min and max of the non-NULL values of a key column; false if none */
static bool
key_column_range(const GjKeyColumns *cols, int col, int64 nrows, int64 *min, int64 *max)
{
	const int64_t *values = cols->values[col];
	const uint8_t *isnull = cols->isnull[col];
	bool		found = false;
	int64		i;

	for (i = 0; i < nrows; i++)
	{
		if (isnull != NULL && isnull[i])
			continue;
		if (!found || values[i] < *min)
			*min = values[i];
		if (!found || values[i] > *max)
			*max = values[i];
		found = true;
	}
	return found;
}

/* The range of a GjType's values. */
static void
type_range(int type, int128 *type_min, int128 *type_max)
{
	switch (type)
	{
		case GJT_INT2:
			*type_min = PG_INT16_MIN;
			*type_max = PG_INT16_MAX;
			break;
		case GJT_INT4:
			*type_min = PG_INT32_MIN;
			*type_max = PG_INT32_MAX;
			break;
		default:
			*type_min = PG_INT64_MIN;
			*type_max = PG_INT64_MAX;
			break;
	}
}

/*
 * Can no node of the band's arithmetic raise an ERROR on any pair?  Each
 * term's value, over every pair of non-NULL keys, must lie within its type
 * (strictly above the minimum under abs() or negation, which overflow on
 * it).  The extremes of a sum of independent columns are the sums of their
 * extremes, computed in int128, which no sum of three int64s leaves.
 */
bool
gpujoin_band_guard_holds(const GpuJoinBandGuard *guard,
						 const GjKeyColumns *outer, int64 outer_nrows,
						 const GjKeyColumns *inner, int64 inner_nrows)
{
	int64		imin = 0,
				imax = 0;
	int			t;

	if (!guard->active)
		return true;
	if (!key_column_range(inner, guard->inner_col, inner_nrows, &imin, &imax))
		return true;			/* every node's value is NULL */
	for (t = 0; t < guard->nterms; t++)
	{
		const GpuJoinGuardTerm *term = &guard->terms[t];
		int128		lowest,
					highest,
					type_min,
					type_max;

		if (term->inner_sign > 0)
		{
			lowest = imin;
			highest = imax;
		}
		else
		{
			lowest = -(int128) imax;
			highest = -(int128) imin;
		}
		if (term->outer_col >= 0)
		{
			int64		omin = 0,
						omax = 0;

			if (!key_column_range(outer, term->outer_col, outer_nrows, &omin, &omax))
				continue;		/* this node is NULL on every pair */
			if (term->outer_sign > 0)
			{
				lowest += omin;
				highest += omax;
			}
			else
			{
				lowest -= omax;
				highest -= omin;
			}
		}
		lowest += term->offset;
		highest += term->offset;
		type_range(term->type, &type_min, &type_max);
		if (lowest < type_min || (term->strict_min && lowest == type_min) ||
			highest > type_max)
			return false;
	}
	return true;
}

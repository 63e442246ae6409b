/*-------------------------------------------------------------------------
 *
 * gpujoin_band_guard.c
 *	  The executor's check that an abs() band may stand in for its qual.
 *
 * The algorithm chooser (gpujoin_algorithm.c) may run "abs(o.x - i.y) <= c"
 * as the band i.y BETWEEN o.x - c AND o.x + c, which is exact only if the
 * subtraction cannot raise an overflow ERROR on any pair: the native plan
 * evaluates it on every pair.  Whether it can depends on the data, so the
 * plan carries a GpuJoinBandGuard (gpujoin.h) and the executor calls
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

/*
 * Can the subtraction of an abs() band raise no ERROR on any pair?  Its
 * result must lie strictly above the type's minimum (abs() of the minimum
 * overflows too) and at most its maximum for every pair of non-NULL keys.
 */
bool
gpujoin_band_guard_holds(const GpuJoinBandGuard *guard,
						 const GjKeyColumns *outer, int64 outer_nrows,
						 const GjKeyColumns *inner, int64 inner_nrows)
{
	int64		omin = 0,
				omax = 0,
				imin = 0,
				imax = 0;
	int128		lowest,
				highest,
				type_min,
				type_max;

	if (!guard->active)
		return true;
	if (!key_column_range(outer, guard->outer_col, outer_nrows, &omin, &omax) ||
		!key_column_range(inner, guard->inner_col, inner_nrows, &imin, &imax))
		return true;			/* no pair has two non-NULL keys */
	if (guard->outer_minus_inner)
	{
		lowest = (int128) omin - imax;
		highest = (int128) omax - imin;
	}
	else
	{
		lowest = (int128) imin - omax;
		highest = (int128) imax - omin;
	}
	switch (guard->diff_type)
	{
		case GJT_INT2:
			type_min = PG_INT16_MIN;
			type_max = PG_INT16_MAX;
			break;
		case GJT_INT4:
			type_min = PG_INT32_MIN;
			type_max = PG_INT32_MAX;
			break;
		default:
			type_min = PG_INT64_MIN;
			type_max = PG_INT64_MAX;
			break;
	}
	return lowest > type_min && highest <= type_max;
}

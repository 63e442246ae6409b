/*-------------------------------------------------------------------------
 *
 * agg_spec.h
 *	  What a backend's agg_step (backend.h) is asked to reduce: the
 *	  aggregate arguments and the groups of a join, and the device layout of
 *	  a partial aggregate.
 *
 * An argument is one of:
 *
 *	- a value per row of one join side (GJ_AGG_SIDE_OUTER / _INNER),
 *	  computed once per row by the host, with a flag per row saying whether
 *	  it is a value, NULL, or could not be computed exactly (GJ_AGG_ROW_ERROR:
 *	  the host evaluates the argument for each pair that uses the row, and so
 *	  raises PostgreSQL's own error);
 *	- a device program over the columns of both sides (GJ_AGG_SIDE_PAIR,
 *	  sum(f.v * d.w)), run once per matching pair; where it cannot compute
 *	  the value exactly (an overflow), the pair goes to the host.
 *
 * With GROUP BY (columns or expressions of the outer side), outer_group
 * gives each outer row's group, a dense number computed on the host with
 * the types' own hashing and equality; GJ_AGG_GROUP_DEFERRED marks a row
 * whose grouping expression the host must evaluate on the pair (the device
 * program could not compute it exactly), so its pairs go to the host.
 * Grouping by keys of both sides numbers each side's keys on its own:
 * inner_group gives each inner row's group, and a pair's group is
 * outer_group x ninner_groups + inner_group (gj_agg_pair_group), so the
 * partials are a dense ngroups x ninner_groups array.  Grouping by the
 * outer side only is the case inner_group NULL (ninner_groups 1); a
 * backend's fast paths that see only outer rows (range runs, match counts)
 * do not take a spec with inner_group.
 *
 * Whatever a backend cannot reduce exactly it returns as a pair, and the
 * host reduces it: results never depend on the backend.
 *
 * This header is plain C (no int128, no PostgreSQL headers): nvcc compiles
 * it as C++ for the cuda backend's kernels.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_AGG_SPEC_H
#define GPUJOIN_AGG_SPEC_H

#include <stdint.h>
#include <stdbool.h>

#include "device_program.h"

#define GJ_AGG_MAX_ARGS		16

/* Per-row flag of a one-side argument. */
#define GJ_AGG_ROW_VALUE	0
#define GJ_AGG_ROW_NULL		1
#define GJ_AGG_ROW_ERROR	2		/* the host must evaluate it */

/* Where an argument's value comes from. */
#define GJ_AGG_SIDE_OUTER	0
#define GJ_AGG_SIDE_INNER	1
#define GJ_AGG_SIDE_PAIR	2

/* outer_group of a row whose group the host decides pair by pair */
#define GJ_AGG_GROUP_DEFERRED	UINT32_MAX

/* gj_agg_pair_group of a pair that has such a row */
#define GJ_AGG_PAIR_DEFERRED	(-1)

typedef struct GjAggArg
{
	int32_t		side;			/* GJ_AGG_SIDE_* */
	int32_t		cls;			/* GjClass of the values */
	int32_t		need_sum;
	int32_t		need_minmax;

	/*
	 * Floats: also the sum of squared deviations from the mean (GjAggAcc's
	 * fsxx), which avg(float4/float8)'s partial state carries; only the
	 * host's folds compute it (agg_reduce.h), so a backend folds the pairs
	 * of such a spec on the host, never into device accumulators.
	 */
	int32_t		need_sxx;
	const int64_t *values;		/* one side: per row; floats as double bits */
	const uint8_t *flags;		/* one side: per row, GJ_AGG_ROW_* */
	const GjInstr *instrs;		/* pair: program over pair_cols */
	int32_t		ninstrs;
} GjAggArg;

typedef struct GjAggSpec
{
	int32_t		nargs;
	GjAggArg	args[GJ_AGG_MAX_ARGS];
	const uint32_t *outer_group;	/* per outer row, or NULL */
	int64_t		ngroups;		/* groups numbered (1 without GROUP BY) */
	const uint32_t *inner_group;	/* per inner row, or NULL (only with
									 * outer_group) */
	int64_t		ninner_groups;	/* inner groups numbered (1 without) */
	GjKeyColumns pair_cols[2];	/* outer, inner columns of the pair programs */

	/*
	 * Some one-side argument row is flagged GJ_AGG_ROW_ERROR, or some row's
	 * group (of either side) is deferred: a fast path that cannot hand a
	 * row's pairs to the host must not run.
	 */
	int32_t		rows_need_host;

	/*
	 * Per outer / inner row, or NULL: the row's key has no exact device value
	 * (host_buffers.h), so the host evaluates all its pairs after the last
	 * step.  A match of such a row (the device decided it anyway, as under
	 * OR: NULL OR true) is neither reduced nor returned.
	 */
	const uint8_t *host_later[2];
} GjAggSpec;

/* Does some argument need its float sum of squared deviations? */
GJ_HD bool
gj_agg_spec_needs_sxx(const GjAggSpec *spec)
{
	int			a;

	for (a = 0; a < spec->nargs; a++)
	{
		if (spec->args[a].need_sxx)
			return true;
	}
	return false;
}

/* Is the pair one whose rows the host joins after the last step? */
GJ_HD bool
gj_agg_pair_later(const GjAggSpec *spec, int64_t orow, int64_t irow)
{
	return (spec->host_later[0] != NULL && spec->host_later[0][orow]) ||
		(spec->host_later[1] != NULL && spec->host_later[1][irow]);
}

/*
 * How many groups the partials of a spec hold: ngroups x ninner_groups
 * with GROUP BY, 1 without.
 */
GJ_HD int64_t
gj_agg_spec_groups(const GjAggSpec *spec)
{
	if (spec->outer_group == NULL)
		return 1;
	return spec->ngroups * (spec->inner_group != NULL ? spec->ninner_groups : 1);
}

/*
 * The group of the pair (orow, irow) in the partials (0 without GROUP BY),
 * or GJ_AGG_PAIR_DEFERRED when the host must group it: one of its rows'
 * grouping expressions has no exact device value.
 */
GJ_HD int64_t
gj_agg_pair_group(const GjAggSpec *spec, int64_t orow, int64_t irow)
{
	uint32_t	og,
				ig;

	if (spec->outer_group == NULL)
		return 0;
	og = spec->outer_group[orow];
	if (og == GJ_AGG_GROUP_DEFERRED)
		return GJ_AGG_PAIR_DEFERRED;
	if (spec->inner_group == NULL)
		return og;
	ig = spec->inner_group[irow];
	if (ig == GJ_AGG_GROUP_DEFERRED)
		return GJ_AGG_PAIR_DEFERRED;
	return (int64_t) og * spec->ninner_groups + ig;
}

/*
 * The value of argument arg for the pair (orow, irow): GJ_AGG_ROW_VALUE with
 * *v set, GJ_AGG_ROW_NULL, or GJ_AGG_ROW_ERROR when the host must compute it.
 */
GJ_HD int
gj_agg_arg_value(const GjAggSpec *spec, const GjAggArg *arg, int64_t orow, int64_t irow,
				 int64_t *v)
{
	GjSlot		value;
	bool		isnull;
	int64_t		row;

	if (arg->side == GJ_AGG_SIDE_PAIR)
	{
		if (gj_program_run(arg->instrs, arg->ninstrs, &spec->pair_cols[0], orow,
						   &spec->pair_cols[1], irow, &value, &isnull) == GJ_RESULT_RECHECK)
			return GJ_AGG_ROW_ERROR;
		if (isnull)
			return GJ_AGG_ROW_NULL;
		*v = value.i;
		return GJ_AGG_ROW_VALUE;
	}
	row = arg->side == GJ_AGG_SIDE_OUTER ? orow : irow;
	if (arg->flags != NULL && arg->flags[row] != GJ_AGG_ROW_VALUE)
		return arg->flags[row];
	*v = arg->values[row];
	return GJ_AGG_ROW_VALUE;
}

/*
 * A partial aggregate of one argument as the cuda backend keeps it in device
 * memory, updated with atomics: the integer sum as two 64-bit halves (the
 * carry of the low half added into the high one), the float sum started
 * from -0.0 (the identity of IEEE addition, so that a sum of -0.0 values
 * stays -0.0 as PostgreSQL's does), min and max as total-order keys
 * (gj_float_total_key).  shared/agg_fold.c turns it into a GjAggAcc.
 */
typedef struct GjAggDeviceAcc
{
	unsigned long long count;	/* non-NULL values */
	unsigned long long isum_lo;
	unsigned long long isum_hi;
	double		fsum;
	long long	min_key;
	long long	max_key;
	unsigned int saw_nonfinite;
	unsigned int pad;
} GjAggDeviceAcc;

/*
 * A total order of doubles as int64 keys, invertible: NaN largest (one NaN),
 * -0.0 just below 0.0.  min/max of -0.0 and 0.0 may return either, as
 * PostgreSQL's float8smaller/larger do depending on the order of the rows.
 */
GJ_HD int64_t
gj_float_total_key(double d)
{
	int64_t		bits;

	if (isnan(d))
		return INT64_MAX;
	bits = gj_double_to_bits(d);
	return bits >= 0 ? bits : (int64_t) (bits ^ INT64_MAX);
}

GJ_HD double
gj_float_from_total_key(int64_t key)
{
	if (key == INT64_MAX)
		return NAN;
	return gj_bits_to_double(key >= 0 ? key : (int64_t) (key ^ INT64_MAX));
}

/* Does a program contain a step that may ask for a recheck? */
GJ_HD bool
gj_program_may_recheck(const GjInstr *instrs, int ninstrs)
{
	int			pc;

	for (pc = 0; pc < ninstrs; pc++)
	{
		int			op = instrs[pc].op;

		if ((op >= GJOP_ADD && op <= GJOP_DATE_MI) || op == GJOP_FLOAT_TO_FLOAT4 ||
			op == GJOP_INT_NARROW)
			return true;
	}
	return false;
}

#endif							/* GPUJOIN_AGG_SPEC_H */

/*-------------------------------------------------------------------------
 *
 * agg_reduce.h
 *	  Partial aggregates over the pairs of a join, shared by the executor's
 *	  host reduction (custom_scan/agg/gpujoin_agg_exec.c) and the cpu backend's
 *	  aggregate fast path.
 *
 * What a backend is asked to reduce (the arguments, the groups) is
 * agg_spec.h, which the cuda backend compiles too.  The partial state of an
 * argument serves every aggregate over it: count, sum (int128 for integers,
 * so that no sum of int8 values over any number of pairs can overflow it),
 * min and max (as order keys, floats in PostgreSQL's order: NaN largest).
 *
 * Plain C without PostgreSQL headers, like backend.h; __int128 is a gcc
 * extension the cuda backend never sees (it leaves the fast path NULL).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_AGG_REDUCE_H
#define GPUJOIN_AGG_REDUCE_H

#include <stdint.h>
#include <stdbool.h>
#include <math.h>

#include "agg_spec.h"

/*
 * A 128-bit integer aligned like an int64 (as PostgreSQL's own int128), so
 * that structs holding it may live in palloc'd memory, which is only
 * MAXALIGNed: gcc would otherwise use 16-byte aligned stores on it.
 */
typedef __int128 gj_int128 __attribute__((aligned(8)));

/* Running aggregate of one argument column. */
typedef struct GjAggAcc
{
	int64_t		count;			/* non-NULL values */
	gj_int128	isum;			/* integer columns */
	double		fsum;			/* float columns, once fsum_started */
	int32_t		fsum_started;	/* fsum holds the first term (PostgreSQL's
								 * float sums start from the first value, so
								 * that a sum of -0.0 is -0.0) */
	int32_t		saw_nonfinite;	/* an input was NaN or +-Infinity */
	int32_t		has_minmax;
	int64_t		min_key;
	int64_t		max_key;
	int64_t		min_bits;		/* the value behind min_key */
	int64_t		max_bits;
} GjAggAcc;

/*
 * What a step (or a whole join) reduced.  With GROUP BY the caller points
 * group_pairs and group_acc at the running totals of every group (group g's
 * argument a is group_acc[g * nargs + a]): a step adds each pair there, in
 * the group of its outer row, and counts it in pairs too (for statistics);
 * acc is then unused.
 */
typedef struct GjAggPartial
{
	int64_t		pairs;			/* count(*) */
	GjAggAcc	acc[GJ_AGG_MAX_ARGS];
	int64_t    *group_pairs;	/* per group, or NULL */
	GjAggAcc   *group_acc;		/* per group and argument, or NULL */
} GjAggPartial;

static inline void
gj_agg_add_sum(GjAggAcc *acc, int cls, int64_t v, int64_t weight)
{
	if (cls == GJ_CLASS_FLOAT)
	{
		double		d = gj_bits_to_double(v);

		double		term = weight == 1 ? d : d * (double) weight;

		if (!isfinite(d))
			acc->saw_nonfinite = 1;
		if (acc->fsum_started)
			acc->fsum += term;
		else
		{
			acc->fsum = term;
			acc->fsum_started = 1;
		}
	}
	else
		acc->isum += (gj_int128) v * weight;
}

static inline void
gj_agg_add_minmax(GjAggAcc *acc, int cls, int64_t v)
{
	int64_t		key = cls == GJ_CLASS_FLOAT ? gj_float_order_key(gj_bits_to_double(v)) : v;

	if (!acc->has_minmax)
	{
		acc->has_minmax = 1;
		acc->min_key = acc->max_key = key;
		acc->min_bits = acc->max_bits = v;
		return;
	}
	if (key < acc->min_key)
	{
		acc->min_key = key;
		acc->min_bits = v;
	}
	if (key > acc->max_key)
	{
		acc->max_key = key;
		acc->max_bits = v;
	}
}

/* Add one value that weight pairs share. */
static inline void
gj_agg_add(GjAggAcc *acc, const GjAggArg *arg, int64_t v, int64_t weight)
{
	acc->count += weight;
	if (arg->need_sum)
		gj_agg_add_sum(acc, arg->cls, v, weight);
	if (arg->need_minmax)
		gj_agg_add_minmax(acc, arg->cls, v);
}

/* Combine a partial aggregate into another. */
static inline void
gj_agg_merge(GjAggAcc *into, const GjAggAcc *from, int cls)
{
	into->count += from->count;
	into->isum += from->isum;
	if (from->fsum_started)
	{
		if (into->fsum_started)
			into->fsum += from->fsum;
		else
		{
			into->fsum = from->fsum;
			into->fsum_started = 1;
		}
	}
	into->saw_nonfinite |= from->saw_nonfinite;
	if (from->has_minmax)
	{
		gj_agg_add_minmax(into, cls, from->min_bits);
		gj_agg_add_minmax(into, cls, from->max_bits);
	}
}

#endif							/* GPUJOIN_AGG_REDUCE_H */

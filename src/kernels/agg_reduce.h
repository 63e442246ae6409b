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

	/*
	 * With GjAggArg.need_sxx: the number of terms of fsum and the sum of
	 * their squared deviations from their mean, as float8_accum() and
	 * float8_combine() keep it for avg/variance (Youngs-Cramer, Chan et al.
	 * to merge); meaningless once saw_nonfinite (PostgreSQL's is NaN then).
	 */
	int64_t		fn;
	double		fsxx;
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

/*
 * Add a float value that weight pairs share to fsum and, with sxx, to fn
 * and fsxx.  One value at a time this is float8_accum()'s Youngs-Cramer
 * update, its very operations (N += 1; Sx += X; tmp = X * N - Sx;
 * Sxx += tmp * tmp / (N * (N - 1))); weight equal values at once add the
 * block (weight, weight * X, 0) by the same merge as gj_agg_merge.
 */
static inline void
gj_agg_add_float(GjAggAcc *acc, double d, int64_t weight, bool sxx)
{
	double		term = weight == 1 ? d : d * (double) weight;
	double		sx_old = acc->fsum;

	if (!isfinite(d))
		acc->saw_nonfinite = 1;
	if (acc->fsum_started)
		acc->fsum += term;
	else
	{
		acc->fsum = term;
		acc->fsum_started = 1;
	}
	if (!sxx)
		return;
	if (acc->fn > 0)
	{
		double		n_old = (double) acc->fn;

		if (weight == 1)
		{
			double		tmp = d * (n_old + 1.0) - acc->fsum;

			acc->fsxx += tmp * tmp / ((n_old + 1.0) * n_old);
		}
		else
		{
			double		tmp = d * n_old - sx_old;

			acc->fsxx += (double) weight * tmp * tmp / (n_old * (n_old + (double) weight));
		}
	}
	acc->fn += weight;
}

static inline void
gj_agg_add_sum(GjAggAcc *acc, int cls, int64_t v, int64_t weight, bool sxx)
{
	if (cls == GJ_CLASS_FLOAT)
		gj_agg_add_float(acc, gj_bits_to_double(v), weight, sxx);
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
		gj_agg_add_sum(acc, arg->cls, v, weight, arg->need_sxx);
	if (arg->need_minmax)
		gj_agg_add_minmax(acc, arg->cls, v);
}

/* Combine a partial aggregate into another. */
static inline void
gj_agg_merge(GjAggAcc *into, const GjAggAcc *from, int cls)
{
	into->count += from->count;
	into->isum += from->isum;

	/*
	 * float8_combine()'s merge of {N, Sx, Sxx}: Sxx1 + Sxx2 + N1 * N2 *
	 * (Sx1/N1 - Sx2/N2)^2 / N, from the sums before they are added
	 */
	if (from->fn > 0)
	{
		if (into->fn > 0)
		{
			double		n1 = (double) into->fn;
			double		n2 = (double) from->fn;
			double		tmp = into->fsum / n1 - from->fsum / n2;

			into->fsxx = into->fsxx + from->fsxx + n1 * n2 * tmp * tmp / (n1 + n2);
		}
		else
			into->fsxx = from->fsxx;
		into->fn += from->fn;
	}
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

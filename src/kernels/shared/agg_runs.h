/*-------------------------------------------------------------------------
 *
 * agg_runs.h
 *	  Aggregates over the runs of a range join, shared by the backends'
 *	  agg_step fast paths.
 *
 * A sort-merge join whose bounds are its whole condition matches each outer
 * row with one run of inner positions [first, last) in key order.  A backend
 * finds the runs (the cpu backend by binary search in C, the cuda backend
 * with a kernel); this file reduces a run into the partial aggregates
 * without forming its pairs: count(*) is the run's width, an outer
 * argument's contribution its value times the width, an inner argument's
 * count and integer sum two subtractions of prefix arrays built once per
 * join; only float sums and min/max of inner arguments walk the run.
 *
 * The interface is opaque so that the cuda backend, which is C++ compiled
 * by nvcc, never sees the 128-bit integers of agg_reduce.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_AGG_RUNS_H
#define GPUJOIN_AGG_RUNS_H

#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C"
{
#endif

struct GjAggSpec;
struct GjAggPartial;
typedef struct GjAggRuns GjAggRuns;

/*
 * The prefix arrays of spec's inner arguments over the ninner inner
 * positions (inner_perm: position -> inner row).  NULL when out of memory.
 */
extern GjAggRuns *gj_agg_runs_create(const struct GjAggSpec *spec,
									 const uint32_t *inner_perm, int64_t ninner);

/*
 * Reduce outer row orow's run [first, last) into partial (into its group's
 * totals with GROUP BY).  Returns the work done: 1 plus the positions
 * walked, for a caller that bounds the work of a step.
 */
extern int64_t gj_agg_runs_reduce(const GjAggRuns *runs, const struct GjAggSpec *spec,
								  struct GjAggPartial *partial, uint32_t orow,
								  int64_t first, int64_t last);

extern void gj_agg_runs_free(GjAggRuns *runs);

#ifdef __cplusplus
}
#endif

#endif							/* GPUJOIN_AGG_RUNS_H */

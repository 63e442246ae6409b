/*-------------------------------------------------------------------------
 *
 * agg_fold.h
 *	  Folding a step's matches into partial aggregates, shared by the
 *	  backends' agg_step (backend.h) and the kernel tests.
 *
 * Three shapes of a step's result are folded here, on the host:
 *
 *	- pairs (a match buffer): each pair whose values the spec gives exactly
 *	  is reduced; the others stay in the buffer for the host (gj_agg_fold_pairs);
 *	- per-row match counts of outer rows, when no argument reads the inner
 *	  side: count(*) and an outer argument's terms are a row's value times
 *	  its count (gj_agg_fold_row_counts);
 *	- the cuda backend's device accumulators (gj_agg_merge_device).
 *
 * The interface is opaque to 128-bit integers, so that the cuda backend,
 * which nvcc compiles as C++, can call it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_AGG_FOLD_H
#define GPUJOIN_AGG_FOLD_H

#include <stdint.h>
#include <stdbool.h>

#include "kernels/agg_spec.h"

#ifdef __cplusplus
extern "C"
{
#endif

struct GjAggPartial;

/*
 * Reduce the pairs [0, n) into partial, except those the host must reduce
 * (flagged for a recheck, of a deferred group, or with an argument the
 * spec cannot give exactly), which are moved, in order, to the front of
 * the arrays.  Returns how many were kept there.
 */
extern int64_t gj_agg_fold_pairs(const GjAggSpec *spec, struct GjAggPartial *partial,
								 uint32_t *outer_rows, uint32_t *inner_rows, int64_t n);

/*
 * May a sort-merge step reduce each outer row's run of inner rows with the
 * prefix arrays of agg_runs.h: every argument a value per row, no row the
 * host must see, no group of the inner side (a run has rows of many)?
 */
extern bool gj_agg_spec_reads_rows(const GjAggSpec *spec);

/*
 * Does every argument read the outer side only, with no row the host must
 * see and no group of the inner side?  Then a step may count each outer
 * row's matches and fold the counts.
 */
extern bool gj_agg_spec_outer_only(const GjAggSpec *spec);

/*
 * Outer row rows[j] (or first_row + j where rows is NULL) matched counts[j]
 * inner rows, for j in [0, n): fold them (gj_agg_spec_outer_only specs).
 */
extern void gj_agg_fold_row_counts(const GjAggSpec *spec, struct GjAggPartial *partial,
								   const uint32_t *rows, int64_t first_row,
								   const uint64_t *counts, int64_t n);

/*
 * Add the device accumulators of a join (group g's argument a at
 * accs[g * nargs + a], its pairs at group_pairs[g]; gj_agg_spec_groups
 * groups) into partial.
 */
extern void gj_agg_merge_device(const GjAggSpec *spec, struct GjAggPartial *partial,
								const unsigned long long *group_pairs,
								const GjAggDeviceAcc *accs);

#ifdef __cplusplus
}
#endif

#endif							/* GPUJOIN_AGG_FOLD_H */

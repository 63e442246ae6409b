/*-------------------------------------------------------------------------
 *
 * cpu_dominance.h
 *	  Counting the matches of a dominance conjunction without evaluating
 *	  pairs (cpu_dominance.c): the cpu backend's aggregate steps call it, and
 *	  the cuda backend's where it beats the count kernel, so the header is
 *	  plain C that nvcc compiles too.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_CPU_DOMINANCE_H
#define GPUJOIN_CPU_DOMINANCE_H

#include "kernels/backend.h"

#ifdef __cplusplus
extern "C"
{
#endif

/*
 * cpu_dominance.c: the same counts for a dominance conjunction
 * (gj_conjunction_is_dominance) without evaluating pairs.
 * gj_dominance_build indexes inner rows [inner_begin, inner_end): sorted on
 * the first compare's inner key, ranks of the second's; NULL when out of
 * memory.  Rows with a NULL in either key column never match.
 * gj_dominance_count gives counts[o - o_begin] as
 * gj_cpu_rowcount_conjunction does, in O((n + m) log m): sort the outer
 * rows on their first key, sweep, insert inner rows into a Fenwick tree
 * over the second key's ranks as the first compare admits them, query with
 * the second compare; false when out of memory.
 */
typedef struct GjDominance GjDominance;

extern GjDominance *gj_dominance_build(const GjJoinInput *input,
									   const GjCompareConjunction *conj,
									   int64_t inner_begin, int64_t inner_end);
extern bool gj_dominance_count(GjDominance *dom, const GjJoinInput *input,
							   int64_t o_begin, int64_t o_end, uint64_t *counts);
extern void gj_dominance_free(GjDominance *dom);

#ifdef __cplusplus
}
#endif

#endif							/* GPUJOIN_CPU_DOMINANCE_H */

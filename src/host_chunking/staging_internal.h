/*-------------------------------------------------------------------------
 *
 * staging_internal.h
 *	  What the files of host_chunking/ call in each other and nothing above
 *	  them does (staging.h is the executor's interface).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_STAGING_INTERNAL_H
#define GPUJOIN_STAGING_INTERNAL_H

#include "host_chunking/staging.h"

/* side_drain.c: this process's share of an inner side drained in parallel */
extern void gpujoin_drain_inner_share(GpuJoinState *gjs);

/* spill.c: around the drain of one side */
extern void gpujoin_spill_before_drain(GpuJoinState *gjs, int side);
extern void gpujoin_spill_after_drain(GpuJoinState *gjs, int side);

/* spill_range.c: a sort-merge join's spill cut by key range */
extern bool gpujoin_spill_key_partitionable(const HostKeyColumn *key);
extern bool gpujoin_spill_range_eligible(GpuJoinState *gjs, bool *by_outer);
extern void gpujoin_spill_range_reset(GpuJoinState *gjs);
extern void gpujoin_spill_range_sample(GpuJoinState *gjs, HostSideBuffer *buf);
extern int	gpujoin_spill_range_cuts(GpuJoinState *gjs, GjSpillFile *spill, int nparts);
extern int64 gpujoin_spill_range_rows(GpuJoinState *gjs, HostSideBuffer *buf, bool outer,
									  const GjSpillFile *cuts, uint16 *first, uint16 *last);
extern bool gpujoin_spill_range_span_ok(int64 copies, int64 nrows);
extern void gpujoin_spill_range_outer_rows(GpuJoinState *gjs, HostSideBuffer *buf,
										   const GjSpillFile *cuts, int64 *max_hi, uint16 *part);
extern bool gpujoin_spill_range_inner_span_ok(const GjSpillFile *cuts, const int64 *max_hi);
extern void gpujoin_spill_range_inner_spans(GpuJoinState *gjs, HostSideBuffer *buf,
											const GjSpillFile *cuts, const int64 *max_hi,
											uint16 *first, uint16 *last);

/* device_partitions.c: cut points at quantiles of a sorted key sample */
extern int	gpujoin_quantile_cuts(int64 *sample, int64 n, int nparts, int64 *cuts);

#endif							/* GPUJOIN_STAGING_INTERNAL_H */

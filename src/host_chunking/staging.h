/*-------------------------------------------------------------------------
 *
 * staging.h
 *	  The staging of a join's inputs, as the executor sees it: draining a
 *	  side into its host buffer, spilling it to temporary files and joining
 *	  chunk pair by chunk pair (by hash partition or key range where it
 *	  can), cutting a join over the device memory budget into device
 *	  partitions, and the inner side of a parallel join drained once.
 *
 * This is the one header of host_chunking/ that the executor
 * (custom_scan/exec/, custom_scan/agg/) includes.  The files behind it never
 * call up into the executor: what they need of it (the join's device memory
 * budget, opening and releasing the backend, opening a chunk pair) they
 * call through GjStagingCallbacks, which gpujoin_open.c fills in and
 * gpujoin_begin hangs on the node's state.  They still take the node's
 * state, GpuJoinState (custom_scan/exec/gpujoin_exec.h), whose host
 * buffers, spill files and counters they work on.
 *
 * Calls go down only (test/check_layers.sh), within this room too:
 *
 *	shared_inner.c		the inner side of a parallel join, drained once
 *	side_drain.c		draining one side of a join into its host buffer
 *	spill.c				spilling, and the chunk pairs of a spilled join
 *	spill_range.c		a sort-merge join's spill cut by key range
 *	device_partitions.c	a join cut into partitions that fit the device
 *	spill_files.c, heap_reader.c, host_buffers.c, tile_planner.c,
 *	key_encoding.c		the temporary files, the columnar heap reader,
 *						the host buffers, the tiles and the keys
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_STAGING_H
#define GPUJOIN_STAGING_H

#include "custom_scan/exec/gpujoin_exec.h"

/*
 * The executor's functions the staging calls back, through this table
 * rather than by name: host_chunking/ is below the executor, which calls
 * it.  The executor's (gpujoin_open.c) are the only ones; a table keeps
 * them in one place.
 */
typedef struct GjStagingCallbacks
{
	/* the device memory one join (or device partition) may use */
	int64		(*join_budget) (GpuJoinState *gjs);
	/* the budget the GPU service would reserve for this input */
	int64		(*service_reservation) (GpuJoinState *gjs, GjJoinInput *input, int64 budget);
	/* open the backend on input, falling back as gpujoin_open.c does */
	void		(*open_backend) (GpuJoinState *gjs, GjJoinInput *input);
	/* release the backend's memory; safe to call more than once */
	void		(*release_backend) (void *arg);
	/* open the join of the two host buffers (a spilled join's chunk pair) */
	GpuJoinPhase (*open_pair) (GpuJoinState *gjs);
} GjStagingCallbacks;

/* side_drain.c: one side of a join into its host buffer */
extern void gpujoin_drain_side(GpuJoinState *gjs, int side);

/*
 * spill.c: inputs larger than gpujoin.max_host_memory, spilled to
 * temporary files during the drain and joined chunk pair by chunk pair.
 */
extern GpuJoinPhase gpujoin_spill_start(GpuJoinState *gjs);
extern GpuJoinPhase gpujoin_spill_next(GpuJoinState *gjs);
extern void gpujoin_spill_rescan_side(GpuJoinState *gjs, int side, bool redrain);
extern void gpujoin_spill_end(GpuJoinState *gjs);
extern bool gpujoin_spill_outer_tied_to_inner(GpuJoinState *gjs);
extern bool gpujoin_spill_inner_tied_to_outer(GpuJoinState *gjs);
extern void gpujoin_spill_explain(GpuJoinState *gjs, const GpuJoinCounters *c,
								  struct ExplainState *es);

/*
 * device_partitions.c: a sort-merge or hash join over the device memory
 * budget, cut into partition pairs that fit, opened piece by piece.
 */
extern bool gpujoin_partitions_plan(GpuJoinState *gjs, const GjJoinInput *input);
extern bool gpujoin_partitions_open_next(GpuJoinState *gjs);
extern void gpujoin_partitions_translate(GpuJoinState *gjs);
extern const struct GjAggSpec *gpujoin_partitions_spec(GpuJoinState *gjs,
													   const struct GjAggSpec *spec);
extern bool gpujoin_partitions_more(GpuJoinState *gjs);
extern void gpujoin_partitions_reset(GpuJoinState *gjs);
extern MemoryContext gpujoin_partitions_keys_context(GpuJoinState *gjs);
extern void gpujoin_partitions_explain(const GpuJoinCounters *c, struct ExplainState *es);

/* shared_inner.c: the inner side of a parallel join, drained once */
extern Size gpujoin_shared_inner_size(void);
extern Size gpujoin_shared_inner_shares_size(int nworkers);
extern void gpujoin_shared_inner_init(struct GpuJoinSharedInner *si, ParallelContext *pcxt,
									  Size shares_offset);
extern void gpujoin_shared_inner_reinit(struct GpuJoinSharedInner *si);
extern bool gpujoin_shared_inner_obtain(GpuJoinState *gjs);
extern bool gpujoin_shared_inner_busy(GpuJoinState *gjs);
extern void gpujoin_shared_inner_detach(GpuJoinState *gjs);
extern const char *gpujoin_shared_inner_extra(GpuJoinState *gjs, Size *len);

#endif							/* GPUJOIN_STAGING_H */

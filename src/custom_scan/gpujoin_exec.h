/*-------------------------------------------------------------------------
 *
 * gpujoin_exec.h
 *	  The executor state of a GpuJoin node, shared by the executor and its
 *	  EXPLAIN code.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_EXEC_H
#define GPUJOIN_EXEC_H

#include "gpujoin.h"
#include "host_chunking/host_buffers.h"
#include "host_chunking/tile_planner.h"

typedef enum GpuJoinPhase
{
	GJ_PHASE_DRAIN,
	GJ_PHASE_RUN_STEP,
	GJ_PHASE_EMIT,
	GJ_PHASE_DONE
} GpuJoinPhase;

typedef struct GpuJoinState
{
	CustomScanState css;
	GpuJoinPlanInfo info;
	PlanState  *outer_ps;
	PlanState  *inner_ps;
	ExprState  *host_qual;		/* quals the device cannot evaluate */
	ExprState  *recheck_qual;	/* all quals, for pairs flagged RECHECK */

	/*
	 * scan tuple column k = host column scan_cols[k] of the buffer of side
	 * scan_sides[k]
	 */
	int			nscan;
	int		   *scan_sides;
	int		   *scan_cols;

	MemoryContext join_cxt;
	MemoryContextCallback cleanup;
	HostSideBuffer outer_buf;
	HostSideBuffer inner_buf;
	TileSchedule sched;
	int64		budget_bytes;

	const GjBackend *backend;	/* chosen at the first execution */
	const GjBackend *fallback_from; /* chosen backend lacked the algorithm */
	void	   *backend_state;
	GjDeviceInfo cuda_info;
	bool		cuda_first_use; /* this join paid for opening CUDA */

	GpuJoinPhase phase;
	GjTile		tile;
	bool		tile_open;
	int64		outer_next;
	GjMatches	matches;
	int64		match_pos;

	/* counters for EXPLAIN ANALYZE, summed over rescans */
	GjStats		stats;
	int64		outer_drained;
	int64		inner_drained;
	int64		tiles_run;
	int64		tiles_pruned;
	int64		steps;
	int64		host_rechecks;
	int64		host_rejected;
	int64		rows_returned;
	double		drain_ms;
	double		backend_ms;
} GpuJoinState;

/*
 * The parts of the GpuJoin executor that the aggregate node
 * (gpujoin_agg_exec.c) runs too.
 */
extern void gpujoin_begin(CustomScanState *node, EState *estate, int eflags);
extern void gpujoin_end(CustomScanState *node);
extern void gpujoin_rescan(CustomScanState *node);
extern bool gpujoin_prepare(GpuJoinState *gjs);
extern void gpujoin_backend_error(GpuJoinState *gjs, const GjError *err) pg_attribute_noreturn();
extern void gpujoin_form_scan_tuple(GpuJoinState *gjs, int64 outer_row, int64 inner_row);

#endif							/* GPUJOIN_EXEC_H */

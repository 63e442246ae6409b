/*-------------------------------------------------------------------------
 *
 * gpujoin_parallel.c
 *	  The node's dynamic shared memory under a Gather: the shared inner
 *	  side's state (shared_inner.c) and the counters of a parallel
 *	  GpuJoin's workers, for the leader's EXPLAIN ANALYZE.
 *
 * In a parallel plan every process runs its own GpuJoin over its share of
 * the outer rows (gpujoin_path.c); in the GPU service they share the inner
 * side, drained once (shared_inner.c).  EXPLAIN ANALYZE prints in
 * the leader, which knows only its own counters, so the node also asks for
 * a slot of counters per worker in the query's dynamic shared memory.
 * A worker adds its counters to its slot when its plan shuts down; the
 * leader copies the slots out in its own shutdown (the Gather's shared
 * memory is gone by the time EXPLAIN prints) and EXPLAIN shows the sums.
 *
 * The leader's shutdown comes before the Gather's, which waits for the
 * workers: when the Gather read every row, the workers have finished and
 * their slots are complete; when it stopped early (a LIMIT above it), the
 * slots of workers still running are not, and EXPLAIN shows what they had
 * written.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"

#include "custom_scan/exec/gpujoin_exec.h"
#include "host_chunking/staging.h"

typedef struct GpuJoinSharedCounters
{
	int			nworkers;
	double		launch_ms;		/* the leader set up the parallel query
								 * (gj_clock_ms): the workers' wall clocks
								 * start from it */
	GpuJoinCounters workers[FLEXIBLE_ARRAY_MEMBER];
} GpuJoinSharedCounters;

/*
 * The node's shared memory: the shared inner side's state
 * (shared_inner.c), then the counters, then the array of the inner
 * side's shares where it is drained in parallel (one per process).
 */
#define SHARED_INNER_BYTES()	MAXALIGN(gpujoin_shared_inner_size())

static GpuJoinSharedCounters *
counters_of(void *coordinate)
{
	return (GpuJoinSharedCounters *) ((char *) coordinate + SHARED_INNER_BYTES());
}

static Size
shares_offset(ParallelContext *pcxt)
{
	return MAXALIGN(add_size(SHARED_INNER_BYTES(),
							 add_size(offsetof(GpuJoinSharedCounters, workers),
									  mul_size(pcxt->nworkers, sizeof(GpuJoinCounters)))));
}

Size
gpujoin_estimate_dsm(CustomScanState *node, ParallelContext *pcxt)
{
	return add_size(shares_offset(pcxt), gpujoin_shared_inner_shares_size(pcxt->nworkers));
}

void
gpujoin_initialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GpuJoinState *gjs = (GpuJoinState *) node;
	GpuJoinSharedCounters *shared = counters_of(coordinate);

	memset(coordinate, 0, gpujoin_estimate_dsm(node, pcxt));
	shared->nworkers = pcxt->nworkers;
	shared->launch_ms = gj_clock_ms();
	gjs->shared = shared;
	gjs->shared_inner = coordinate;
	gpujoin_shared_inner_init(gjs->shared_inner, pcxt, shares_offset(pcxt));
}

/*
 * A rescan of the Gather: the workers' counters add to the same slots; the
 * inner side is shared anew (the old workers are gone, and the inner side
 * may have new parameters).
 */
void
gpujoin_reinitialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GpuJoinState *gjs = (GpuJoinState *) node;

	gjs->shared = counters_of(coordinate);
	gjs->shared->launch_ms = gj_clock_ms();
	gjs->shared_inner = coordinate;
	gpujoin_shared_inner_reinit(gjs->shared_inner);
}

void
gpujoin_initialize_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	GpuJoinState *gjs = (GpuJoinState *) node;

	gjs->shared = counters_of(coordinate);
	gjs->shared_inner = coordinate;
	gjs->launch_ms = gjs->shared->launch_ms;
}

/* Add one process's counters to *total. */
void
gpujoin_counters_add(GpuJoinCounters *total, const GpuJoinCounters *c)
{
	gpujoin_stats_add(&total->stats, &c->stats);
	total->outer_drained += c->outer_drained;
	total->inner_drained += c->inner_drained;
	total->tiles_run += c->tiles_run;
	total->tiles_pruned += c->tiles_pruned;
	total->steps += c->steps;
	total->host_rechecks += c->host_rechecks;
	total->host_pairs += c->host_pairs;
	total->host_rejected += c->host_rejected;
	total->filter_rejected += c->filter_rejected;
	total->rows_returned += c->rows_returned;
	total->null_extended_outer += c->null_extended_outer;
	total->null_extended_inner += c->null_extended_inner;
	total->pairs_skipped += c->pairs_skipped;
	total->drain_ms += c->drain_ms;
	for (int side = 0; side < 2; side++)
	{
		total->input_pages[side] += c->input_pages[side];
		total->child_plan_drains[side] += c->child_plan_drains[side];
		total->input_ms[side] += c->input_ms[side];
		total->input_read_ms[side] += c->input_read_ms[side];
		total->input_decode_ms[side] += c->input_decode_ms[side];
		total->input_store_ms[side] += c->input_store_ms[side];
		total->spill_chunks[side] += c->spill_chunks[side];
		total->spill_bytes[side] += c->spill_bytes[side];
	}
	total->chunk_pairs += c->chunk_pairs;
	total->device_partitions += c->device_partitions;
	total->partition_pieces += c->partition_pieces;
	total->partitions_nestloop += c->partitions_nestloop;
	total->backend_ms += c->backend_ms;
	total->steps_overlapped += c->steps_overlapped;
	total->overlap_wait_ms += c->overlap_wait_ms;
	total->service_queue_ms += c->service_queue_ms;
	total->service_start_ms += c->service_start_ms;
	total->inner_shared += c->inner_shared;
	total->inner_shared_drains += c->inner_shared_drains;
	total->inner_share_drains += c->inner_share_drains;
	for (int part = 0; part < GJ_WALL_NPARTS; part++)
		total->wall_ms[part] += c->wall_ms[part];
	total->wall_start_ms += c->wall_start_ms;
}

/*
 * ShutdownCustomScan: a worker hands its counters over (once per run of
 * the plan: a rescan of the Gather starts new workers, whose counters add
 * to the same slots); the leader keeps a copy of the workers' sums.
 */
void
gpujoin_shutdown(CustomScanState *node)
{
	GpuJoinState *gjs = (GpuJoinState *) node;
	GpuJoinSharedCounters *shared = gjs->shared;

	/* no row is read after this: the shared inner side may go */
	gpujoin_shared_inner_detach(gjs);
	gjs->shared_inner = NULL;
	/* a worker's clock stops before it hands its counters over */
	gpujoin_wall_stop(gjs);
	if (shared == NULL)
		return;
	if (IsParallelWorker())
	{
		if (ParallelWorkerNumber >= 0 && ParallelWorkerNumber < shared->nworkers)
			gpujoin_counters_add(&shared->workers[ParallelWorkerNumber], &gjs->counters);
	}
	else
	{
		if (gjs->workers_total == NULL)
		{
			gjs->workers_total = MemoryContextAllocZero(node->ss.ps.state->es_query_cxt,
														 sizeof(GpuJoinCounters));
			gjs->workers_each = MemoryContextAllocZero(node->ss.ps.state->es_query_cxt,
													   sizeof(GpuJoinCounters) * shared->nworkers);
			gjs->nworkers_each = shared->nworkers;
		}
		memset(gjs->workers_total, 0, sizeof(GpuJoinCounters));
		for (int i = 0; i < shared->nworkers; i++)
			gpujoin_counters_add(gjs->workers_total, &shared->workers[i]);
		memcpy(gjs->workers_each, shared->workers,
			   sizeof(GpuJoinCounters) * Min(shared->nworkers, gjs->nworkers_each));
	}
	gjs->shared = NULL;
}

/* What EXPLAIN shows: this process's counters plus the workers' copy. */
void
gpujoin_counters_with_workers(GpuJoinState *gjs, GpuJoinCounters *total)
{
	*total = gjs->counters;
	if (gjs->workers_total != NULL)
		gpujoin_counters_add(total, gjs->workers_total);
}

/*-------------------------------------------------------------------------
 *
 * gpujoin_exec.h
 *	  The executor state of a GpuJoin node, shared by the executor files of
 *	  both GpuJoin nodes and their EXPLAIN code.
 *
 * The extension is in rooms, and calls go down only, between rooms and
 * between the files of a room (test/check_layers.sh; docs/architecture.md,
 * "Layout"):
 *
 *	planner_hook.c		the hooks and the GUCs
 *	custom_scan/agg/	the aggregate node: its paths, its methods and state,
 *						the reduction of the pairs; and the methods
 *						registered under the name GpuJoin, which create
 *						either node (gpujoin_agg_exec.c)
 *	custom_scan/exec/	the join node's execution, this header's room
 *	custom_scan/plan/	paths, costs, plans
 *	host_chunking/		the staging of a join's inputs (staging.h): drain,
 *						spill, device partitions, the shared inner side
 *	devices.c			the backend a join runs on
 *	service/			the GPU service and its clients
 *	kernels/			the backends (cpu, cuda)
 *
 * Within custom_scan/exec/, from the top:
 *
 *	gpujoin_emit.c		the GpuJoin node: its methods and state machine, and
 *						forming its output rows
 *	gpujoin_explain.c	EXPLAIN of both nodes' join part
 *	gpujoin_parallel.c	the workers' counters for the leader's EXPLAIN
 *	gpujoin_steps.c		the steps of a join and the pairs they return
 *	gpujoin_open.c		begin, drain, open the backend, rescan, end
 *	gpujoin_overlap.c	the next step on a helper thread
 *
 * Data may be referred to across rooms in any direction (the GUCs, the
 * service's shared memory, methods tables); only calls count.
 *
 * The aggregate node's state embeds GpuJoinState, so every function below
 * takes either node.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_EXEC_H
#define GPUJOIN_EXEC_H

#include <pthread.h>

#include "access/parallel.h"
#include "lib/ilist.h"
#include "storage/shm_toc.h"

#include "gpujoin.h"
#include "host_chunking/heap_reader.h"
#include "host_chunking/host_buffers.h"
#include "host_chunking/spill_files.h"
#include "host_chunking/tile_planner.h"

typedef enum GpuJoinPhase
{
	GJ_PHASE_DRAIN,
	GJ_PHASE_RUN_STEP,
	GJ_PHASE_EMIT,
	GJ_PHASE_HOST_PAIRS,
	GJ_PHASE_EMIT_UNMATCHED,
	GJ_PHASE_NEXT_CHUNK,		/* spilled: the next chunk pair, or unmatched
								 * rows of a finished chunk (spill.c) */
	GJ_PHASE_DONE
} GpuJoinPhase;

/* A join cut into device partitions (device_partitions.c). */
typedef struct GjDevicePartitions GjDevicePartitions;

/* What host_chunking/ calls back in the executor (host_chunking/staging.h). */
struct GjStagingCallbacks;

/* Where a spilled join is in its chunk pairs (spill.c). */
typedef enum GjSpillStage
{
	GJ_SPILL_NEXT_GROUP,		/* the next partition (or the first) */
	GJ_SPILL_PAIRS,				/* joining outer_chunk with each inner chunk */
	GJ_SPILL_OUTER_DONE,		/* outer_chunk met every inner chunk */
	GJ_SPILL_INNER_UNMATCHED	/* the partition's unmatched inner rows */
} GjSpillStage;

/* What a spilled join reads at a time, per side (spill.c). */
typedef struct GjSpillLoads GjSpillLoads;

/*
 * Where one scan tuple column comes from, resolved to the stored arrays so
 * that forming a pair's scan tuple is two loads per column.  The arrays are
 * valid from the end of the drain until the next rescan (they do not move
 * meanwhile).
 */
typedef struct GjScanColumn
{
	const Datum *values;
	const bool *isnull;			/* NULL when the column has no NULLs */
	int			scanpos;		/* column of the scan tuple */
	bool		outer;			/* indexed by the outer row, else the inner */
} GjScanColumn;

/*
 * The next step of a join, run on a helper thread while the executor emits
 * the rows of the current one (gpujoin_overlap.c).  The thread calls the
 * backend's run_step on copies of the tile and cursor and writes only the
 * fields below `thread`; the executor reads them after joining it.
 */
struct GjStepAhead;

/*
 * A reset callback on a host buffer's memory context that waits for the
 * running step before the context's memory goes: the step reads the key
 * columns there, and an aborting transaction deletes the executor's memory
 * children first, before any callback of the GpuJoin's own context runs.
 */
typedef struct GjStepGuard
{
	MemoryContextCallback callback;
	bool		armed;			/* registered and not yet called */
	struct GjStepAhead *ahead;
} GjStepGuard;

typedef struct GjStepAhead
{
	bool		pending;		/* a step was started and not yet collected */
	bool		threaded;		/* it runs on `thread` (else it already ran) */
	pthread_t	thread;
	dlist_node	node;			/* in the list joined at process exit */
	GjStepGuard guards[3];		/* on the outer and inner buffers' contexts,
								 * and a device partition's keys */
	const GjBackend *backend;
	void	   *backend_state;
	GjTile		tile;
	int64_t		outer_next;
	/* written by the thread */
	bool		ok;
	GjMatches	matches;
	GjStats		stats;
	GjError		err;
	double		run_ms;
} GjStepAhead;

/*
 * The parts of a process's wall clock in the node, for the Wall Clock lines
 * of EXPLAIN (ANALYZE, VERBOSE) (gpujoin_explain.c).  From the node's first
 * call to the end of its shutdown the clock runs, and it is cut wherever
 * the process turns to another part (gpujoin_wall_switch): the time since
 * the last cut goes to the part it leaves, so the parts add up to the
 * whole by construction, and what no part names is "other".  The time
 * before the first call is counted apart (wall_start_ms).
 */
typedef enum GjWallPart
{
	GJ_WALL_OTHER = 0,			/* none of those below */
	GJ_WALL_INNER_WAIT,			/* asleep while another process drained or
								 * put together the shared inner side */
	GJ_WALL_INNER_SHARE,		/* the shared inner side: staging it or a
								 * share, putting shares together, the
								 * service's share, attach and detach */
	GJ_WALL_DRAIN,				/* draining a side */
	GJ_WALL_SETUP,				/* between drain and backend: the backend
								 * chosen, keys encoded, an aggregate's
								 * columns and groups, match flags */
	GJ_WALL_BACKEND,			/* in a backend call: open (tiles planned,
								 * room waited for), steps, tile pruning,
								 * aggregate finish, a step ahead waited for */
	GJ_WALL_EMIT,				/* rows returned, the parent's work on each
								 * included; an aggregate's pairs reduced on
								 * the host and its rows formed */
	GJ_WALL_TEARDOWN,			/* the backend released (in the service: its
								 * CLOSE), spill files closed */
	GJ_WALL_AFTER,				/* after the last row until the shutdown: the
								 * leader of a Gather waits for its workers */
	GJ_WALL_NPARTS
} GjWallPart;

/*
 * The counters EXPLAIN ANALYZE shows, as one process adds them up over the
 * rescans of its node.  They are one struct so that a worker of a parallel
 * plan hands them to the leader whole (gpujoin_parallel.c) and a step run
 * on the overlap thread adds its own in one call.
 */
typedef struct GpuJoinCounters
{
	GjStats		stats;			/* what the backends add up */
	int64		outer_drained;
	int64		inner_drained;
	int64		tiles_run;
	int64		tiles_pruned;
	int64		steps;
	int64		host_rechecks;
	int64		host_pairs;		/* pairs formed by GJ_PHASE_HOST_PAIRS */
	int64		host_rejected;
	int64		filter_rejected;
	int64		rows_returned;
	int64		null_extended_outer;	/* unmatched outer rows formed */
	int64		null_extended_inner;
	int64		pairs_skipped;	/* SEMI/ANTI pairs of already matched rows */
	double		drain_ms;
	/* per side, outer then inner: */
	int64		input_pages[2]; /* heap pages the columnar reader read */
	int64		child_plan_drains[2];	/* drains through the child plan */
	double		input_ms[2];	/* time the drains took */
	/* of it, where the columnar reader timed it: GjHeapReaderCounters' */
	double		input_read_ms[2];
	double		input_decode_ms[2];
	double		input_store_ms[2];
	double		backend_ms;
	int64		steps_overlapped;	/* steps run while rows were emitted */
	double		overlap_wait_ms;	/* emission waited for them this long */
	double		service_queue_ms;	/* waited for room in the GPU service */
	double		service_start_ms;	/* waited for the GPU service to start */
	/* host spill, per side, outer then inner: */
	int64		spill_chunks[2];	/* chunks written to temporary files */
	int64		spill_bytes[2]; /* bytes written there */
	int64		chunk_pairs;	/* chunk pairs joined */
	int64		spill_partitions;	/* hash partitions of a partitioned spill */
	int64		spill_partitions_planned;	/* before the inner side was re-split */
	/* parallel plans (shared_inner.c): */
	int64		inner_shared;	/* processes that read a shared inner side */
	int64		inner_shared_drains;	/* ... of which drained it */
	int64		inner_share_drains; /* processes that drained a share of it */
	/* device partitions (device_partitions.c): */
	int64		device_partitions;	/* partitions cut */
	int64		partition_pieces;	/* pieces opened on the backend */
	int64		partitions_nestloop;	/* pieces run as a nested loop */
	int64		partitions_ahead;	/* pieces opened in the service ahead */
	/* the wall clock (GjWallPart), and the time before the first call */
	double		wall_ms[GJ_WALL_NPARTS];
	double		wall_start_ms;
} GpuJoinCounters;

typedef struct GpuJoinState
{
	CustomScanState css;
	GpuJoinPlanInfo info;
	PlanState  *outer_ps;
	PlanState  *inner_ps;

	/*
	 * An inner side drained in parallel (shared_inner.c): inner_ps
	 * is its partial plan, each process drains a share of it, and this is
	 * the whole one (the plan's third child), which a process drains where
	 * the shares could not be shared; NULL otherwise.
	 */
	PlanState  *inner_whole_ps;
	GjHeapReader *inner_whole_reader;
	ExprState  *host_qual;		/* quals the device cannot evaluate */
	ExprState  *recheck_qual;	/* all join quals, for pairs flagged RECHECK */
	ExprState  *filter_qual;	/* outer joins: quals pushed down from WHERE */

	/*
	 * Join type.  The backends return matching pairs only; a bitmap per side
	 * remembers which rows matched (passed every join qual) so that the
	 * preserved side's unmatched rows can be emitted, null-extended, after
	 * the last tile, and a semi join emits each outer row once.
	 */
	JoinType	jointype;
	bool		fill_outer;		/* LEFT, FULL, ANTI: emit unmatched outer rows */
	bool		fill_inner;		/* RIGHT, FULL: emit unmatched inner rows */
	bool		emit_pairs;		/* all but ANTI: matched pairs come out */
	bool		once_per_outer; /* SEMI, ANTI: an outer row's first match decides */
	uint8	   *outer_matched;	/* bitmaps in join_cxt, or NULL if not tracked */
	uint8	   *inner_matched;
	int64		outer_matched_bytes;	/* allocated sizes, kept across rescans */
	int64		inner_matched_bytes;
	int64		unmatched_pos;	/* EMIT_UNMATCHED: outer rows, then inner rows */
	int64		unmatched_end;	/* ... up to this position */

	/*
	 * scan tuple column k = host column scan_cols[k] of the buffer of side
	 * scan_sides[k]; or, where scan_keys[k] is not -1, the values of its key
	 * column scan_keys[k] (scan_cols[k] is -1 then: the side stores no
	 * Datums of it; GpuJoinPlanInfo.scan_keys)
	 */
	int			nscan;
	int		   *scan_sides;
	int		   *scan_cols;
	int		   *scan_keys;

	/*
	 * The same columns, resolved to their arrays once the inputs are
	 * drained.  The first npair_cols are those the target list, the host
	 * quals or the filter read, which every emitted pair needs; the others
	 * only the device quals read, so only a pair the device flagged for a
	 * recheck needs them.
	 */
	GjScanColumn *scan_src;
	int			npair_cols;

	/*
	 * When the target list is plain scan columns and no host qual or filter
	 * reads the scan tuple, a pair's output row is filled straight from the
	 * stored arrays: output column j from scan_src[direct_src[j]], no scan
	 * tuple and no ExecProject.  NULL otherwise.
	 */
	int		   *direct_src;
	int			ndirect;

	MemoryContext join_cxt;
	MemoryContextCallback cleanup;

	/*
	 * The executor's functions the staging of the inputs (host_chunking/)
	 * calls, which may not link to them: set by gpujoin_begin.
	 */
	const struct GjStagingCallbacks *staging;
	HostSideBuffer outer_buf;
	HostSideBuffer inner_buf;
	/* the columnar heap readers of the sides, or NULL: the child plan */
	GjHeapReader *outer_reader;
	GjHeapReader *inner_reader;
	TileSchedule sched;
	int64		budget_bytes;

	const GjBackend *backend;	/* chosen at the first execution */
	const GjBackend *fallback_from; /* the join left this backend ... */
	const char *fallback_reason;	/* ... for this reason */
	bool		wants_agg_step; /* the aggregate node can reduce in a backend */
	bool		agg_dominance;	/* the aggregate node counts by dominance */

	/*
	 * The aggregate node's part of opening the join, or NULL: called by
	 * gpujoin_prepare once the keys are encoded, before the backend opens,
	 * so that the node can give the backend its aggregate spec
	 * (input->agg_spec).
	 */
	void		(*before_open) (struct GpuJoinState *gjs, GjJoinInput *input);

	/*
	 * Room the aggregate node wants after a parallel plan's shared inner
	 * side, for what every process of the plan computes from it together
	 * (its groups' numbers), or NULL: the process that shares the inner
	 * side of nrows rows (shared_inner.c) asks inner_extra_size for the
	 * bytes, and, where there are any, has inner_extra_write set them up
	 * after the side in the shared chunk.  Every process finds them with
	 * gpujoin_shared_inner_extra.
	 */
	Size		(*inner_extra_size) (struct GpuJoinState *gjs, int64 nrows);
	void		(*inner_extra_write) (struct GpuJoinState *gjs, int64 nrows, char *dst,
									  Size len);
	int64		oom_retries;	/* opened again with a smaller budget */
	bool		band_guard_failed;	/* abs() band ran as a nested loop */
	const char *inexact_keys;	/* why the host evaluates every pair, or NULL */

	/*
	 * Rows whose keys have no exact device value (gj_host_buffer_encode), NULL
	 * if none: their pairs from the device are skipped, and EMIT (or the
	 * aggregate node's reduction) gets all their pairs from
	 * gpujoin_next_host_pairs instead, after the last step.
	 */
	const uint8 *outer_inexact;
	const uint8 *inner_inexact;
	bool		in_host_pairs;	/* EMIT is emitting those pairs */
	int64		host_pair_outer;	/* the next pair to form */
	int64		host_pair_inner;
	uint32	   *host_pairs_outer;	/* the batch, in join_cxt */
	uint32	   *host_pairs_inner;
	GjProgram	exec_program;	/* the program with this execution's numeric
								 * constants (gj_host_encode_join_keys) */
	void	   *backend_state;
	GjDeviceInfo cuda_info;
	bool		cuda_first_use; /* this join paid for opening CUDA */
	bool		program_noted;	/* logged why the program ran interpreted */

	GpuJoinPhase phase;
	GjTile		tile;
	bool		tile_open;
	int64		outer_next;
	GjMatches	matches;
	int64		match_pos;

	/* step overlap (gpujoin.overlap_steps) */
	GjStepAhead ahead;
	bool		double_buffered;	/* the backend agreed to it */
	bool		no_overlap;		/* it did not: steps run one at a time */

	/*
	 * Host spill (spill.c): a side that outgrew its share of
	 * gpujoin.max_host_memory is in chunks in a temporary file, and the join
	 * runs chunk pair by chunk pair, each an ordinary join of the two
	 * buffers.  The chunks are read in loads (one chunk, or a hash
	 * partition's chunks together) grouped by partition (one group for the
	 * block nested loop).  An outer load meets every inner load of its group
	 * before the next one is read, so its match flags (outer_matched) are
	 * those of one load; the inner rows' flags of RIGHT and FULL joins are
	 * kept per inner load (inner_chunk_matched), and the unmatched inner
	 * rows emitted after the group's last outer load.
	 */
	bool		spill_allowed;	/* the node can join in chunks */
	bool		outer_drained_first;	/* while another process drained
										 * the shared inner side: a spill
										 * of either side is joined block
										 * by block (spill.c) */
	GjSpillFile outer_spill;
	GjSpillFile inner_spill;
	bool		spilled;		/* this execution joins in chunks */
	GjSpillStage spill_stage;
	GjSpillLoads *spill_loads[2];	/* outer, inner: the loads and groups */
	int			spill_group;	/* the partition being joined (0: BNL) */
	bool		spill_range;	/* the spill is cut by key range */
	bool		spill_range_by_outer;	/* ... each outer row in one range */
	int64	   *range_max_hi;	/* by outer: each range's largest upper bound */
	int64	   *range_sample;	/* inner keys sampled as the inner side spilled */
	int64		range_nsample;
	int64		range_maxsample;	/* room in range_sample */
	int			outer_chunk;	/* the pair of loads being joined */
	int			inner_chunk;
	uint8	  **inner_chunk_matched;	/* RIGHT, FULL: per inner load */
	int			inner_chunk_flags;	/* entries allocated there */
	bool		inner_matched_borrowed; /* inner_matched is one of those */

	/*
	 * Device partitions (device_partitions.c): a sort-merge or hash join of
	 * the two buffers over the budget runs piece by piece, each piece's
	 * pairs renumbered in the buffers; NULL when not partitioned.
	 */
	GjDevicePartitions *partitions;

	GpuJoinCounters counters;	/* for EXPLAIN ANALYZE, summed over rescans */

	/*
	 * The wall clock (GjWallPart): the part the process is in, and the last
	 * cut (0 while the clock stands: before the first call, after the
	 * shutdown).  Its start is counted from begin_ms (BeginCustomScan) or,
	 * in a worker, from launch_ms, when the leader set up the parallel
	 * query (gpujoin_initialize_dsm).
	 */
	GjWallPart	wall_part;
	double		wall_cut_ms;
	bool		wall_started;
	double		begin_ms;
	double		launch_ms;

	/*
	 * Parallel plans: each worker adds its counters to its slot of the
	 * shared ones when it shuts down; the leader copies them out before the
	 * shared memory goes away, for EXPLAIN ANALYZE (gpujoin_parallel.c).
	 */
	struct GpuJoinSharedCounters *shared;
	GpuJoinCounters *workers_total; /* leader: the sum of the workers' */
	GpuJoinCounters *workers_each;	/* leader: a copy of each worker's */
	int			nworkers_each;

	/*
	 * The shared inner side of a parallel plan (shared_inner.c):
	 * its state in the Gather's shared memory (NULL outside a parallel
	 * execution, and once the node shut down), and the shared inner side
	 * in the GPU service this process reads, whose chunk inner_buf's
	 * arrays then point into (0: inner_buf is this process's own).
	 */
	struct GpuJoinSharedInner *shared_inner;
	uint64		inner_attached;
	const char *inner_shared_chunk;	/* the shared side's chunk, while attached */
	Size		inner_shared_len;
	char	   *inner_share_chunk;	/* this process's share, staged, until
									 * the side is put together */
	Size		inner_share_len;
	bool		inner_cleanup_armed;
	MemoryContextCallback inner_cleanup;
} GpuJoinState;

/*
 * gpujoin_open.c: what both nodes do around the steps.  Set up the state,
 * drain the inputs, encode the keys, open the backend (falling back to the
 * cpu backend), release it on ERROR, rescan and end.
 */
extern void gpujoin_begin(CustomScanState *node, EState *estate, int eflags);
extern void gpujoin_end(CustomScanState *node);
extern void gpujoin_rescan(CustomScanState *node);
extern GpuJoinPhase gpujoin_prepare(GpuJoinState *gjs);
extern void gpujoin_backend_error(GpuJoinState *gjs, const GjError *err) pg_attribute_noreturn();
extern void gpujoin_release_backend(void *arg);
extern GpuJoinPhase gpujoin_open_pair(GpuJoinState *gjs);
extern int64 gpujoin_join_budget(GpuJoinState *gjs);
extern int64 gpujoin_service_reservation(GpuJoinState *gjs, GjJoinInput *input, int64 budget);
extern void gpujoin_open_backend(GpuJoinState *gjs, GjJoinInput *input);

/*
 * gpujoin_steps.c: the steps of a join and the pairs they return, for both
 * nodes.  The GpuJoin node runs its steps with gpujoin_run_step (overlapped
 * with the emission when gpujoin.overlap_steps is on); the aggregate node
 * with gpujoin_run_agg_step, one step at a time.
 */
extern bool gpujoin_open_tile(GpuJoinState *gjs);
extern bool gpujoin_run_step(GpuJoinState *gjs);
extern bool gpujoin_run_agg_step(GpuJoinState *gjs, const struct GjAggSpec *spec,
								 struct GjAggPartial *partial);
extern void gpujoin_finish_agg_steps(GpuJoinState *gjs, const struct GjAggSpec *spec,
									 struct GjAggPartial *partial);
extern bool gpujoin_next_host_pairs(GpuJoinState *gjs);
extern void gpujoin_form_scan_tuple(GpuJoinState *gjs, int64 outer_row, int64 inner_row);
extern void gpujoin_fill_null_extended(GpuJoinState *gjs, int side, int64 row);

/*
 * gpujoin_overlap.c: the next step on a helper thread.  Called by the step
 * loop (gpujoin_steps.c) and, to abandon a step, by gpujoin_release_backend;
 * it calls nothing of the executor back.
 */
extern bool gpujoin_step_ahead_possible(GpuJoinState *gjs);
extern void gpujoin_step_ahead_start(GpuJoinState *gjs);
extern bool gpujoin_step_ahead_collect(GpuJoinState *gjs);
extern void gpujoin_step_ahead_cancel(GpuJoinState *gjs);

/* gpujoin_parallel.c: the workers' counters for the leader's EXPLAIN */
extern Size gpujoin_estimate_dsm(CustomScanState *node, ParallelContext *pcxt);
extern void gpujoin_initialize_dsm(CustomScanState *node, ParallelContext *pcxt,
								   void *coordinate);
extern void gpujoin_reinitialize_dsm(CustomScanState *node, ParallelContext *pcxt,
									 void *coordinate);
extern void gpujoin_initialize_worker(CustomScanState *node, shm_toc *toc,
									  void *coordinate);
extern void gpujoin_shutdown(CustomScanState *node);
extern void gpujoin_counters_add(GpuJoinCounters *total, const GpuJoinCounters *c);
extern const char *gpujoin_interpreted_why(int why);
extern void gpujoin_counters_with_workers(GpuJoinState *gjs, GpuJoinCounters *total);

/*
 * The wall clock turns to `part`: the time since the last cut goes to the
 * part left, which is returned, so that a caller can turn back to it.
 */
static inline GjWallPart
gpujoin_wall_switch(GpuJoinState *gjs, GjWallPart part)
{
	GjWallPart	left = gjs->wall_part;

	if (gjs->wall_cut_ms > 0)
	{
		double		now = gj_clock_ms();

		gjs->counters.wall_ms[left] += now - gjs->wall_cut_ms;
		gjs->wall_cut_ms = now;
	}
	gjs->wall_part = part;
	return left;
}

/*
 * A call of the node: the clock runs from the first one (and again after
 * a shutdown, when the node runs again), first in part OTHER.
 */
static inline void
gpujoin_wall_run(GpuJoinState *gjs)
{
	double		now;

	if (gjs->wall_cut_ms > 0)
		return;
	now = gj_clock_ms();
	if (!gjs->wall_started)
	{
		double		from = gjs->launch_ms > 0 ? gjs->launch_ms : gjs->begin_ms;

		if (from > 0)
			gjs->counters.wall_start_ms += Max(now - from, 0);
		gjs->wall_started = true;
	}
	gjs->wall_cut_ms = now;
	gjs->wall_part = GJ_WALL_OTHER;
}

/* The shutdown is over: the clock stands until the node runs again. */
static inline void
gpujoin_wall_stop(GpuJoinState *gjs)
{
	(void) gpujoin_wall_switch(gjs, GJ_WALL_OTHER);
	gjs->wall_cut_ms = 0;
}

/* Add one step's (or process's) backend counters to *total. */
static inline void
gpujoin_stats_add(GjStats *total, const GjStats *s)
{
	total->pairs_evaluated += s->pairs_evaluated;
	total->device_matches += s->device_matches;
	total->bytes_to_device += s->bytes_to_device;
	total->bytes_from_device += s->bytes_from_device;
	total->kernel_ms += s->kernel_ms;
	total->transfer_ms += s->transfer_ms;
	gj_times_add(&total->times, &s->times);
	for (int d = 0; d < GJ_MAX_DEVICES; d++)
		total->device_steps[d] += s->device_steps[d];
	gj_stats_add_program(total, s);
}

/*
 * After the tiles: the unmatched rows of the preserved sides, or nothing;
 * spilled, the next chunk pair.
 */
static inline GpuJoinPhase
gpujoin_phase_after_tiles(GpuJoinState *gjs)
{
	if (gjs->spilled)
		return GJ_PHASE_NEXT_CHUNK;
	return gjs->fill_outer || gjs->fill_inner ? GJ_PHASE_EMIT_UNMATCHED : GJ_PHASE_DONE;
}

/*
 * Whether a pair from a backend step is to be skipped: one of its rows has
 * a key with no exact device value, so the device's answer is not used and
 * the host evaluates all that row's pairs after the last step
 * (gpujoin_next_host_pairs), whose own pairs are never skipped.  Inline:
 * both nodes call it for every pair.
 */
static inline bool
gpujoin_skip_inexact_pair(const GpuJoinState *gjs, int64 outer_row, int64 inner_row)
{
	return unlikely(gjs->outer_inexact != NULL || gjs->inner_inexact != NULL) &&
		!gjs->in_host_pairs &&
		((gjs->outer_inexact != NULL && gjs->outer_inexact[outer_row]) ||
		 (gjs->inner_inexact != NULL && gjs->inner_inexact[inner_row]));
}

/* Copy scan_src[from .. to - 1] of one pair into the scan tuple. */
static inline void
gpujoin_fill_columns(GpuJoinState *gjs, int from, int to,
					 int64 outer_row, int64 inner_row)
{
	TupleTableSlot *scan = gjs->css.ss.ss_ScanTupleSlot;
	int			k;

	for (k = from; k < to; k++)
	{
		const GjScanColumn *src = &gjs->scan_src[k];
		int64		row = src->outer ? outer_row : inner_row;

		scan->tts_values[src->scanpos] = src->values[row];
		scan->tts_isnull[src->scanpos] = src->isnull != NULL && src->isnull[row];
	}
}

#endif							/* GPUJOIN_EXEC_H */

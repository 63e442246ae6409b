/*-------------------------------------------------------------------------
 *
 * service_client.c
 *	  The client side of the GPU service: a GjBackend whose calls run in
 *	  the service process (gpujoin.device = service).
 *
 * begin_join copies the join's key columns and program into a chunk of the
 * staging area, with room for one step's matches, and asks the service to
 * open the join on its backend; each run_step asks it for one step, whose
 * matches the service writes into the chunk; end_join closes the join and
 * frees the chunk.  The executor above sees a backend like the others, so
 * every algorithm and join type, tile schedules, rechecks and the host's
 * pairs work unchanged, and tile pruning asks the service.
 *
 * Several devices (service_devices.c): a nested loop of at least
 * gpujoin.service_spread_min_pairs pairs asks the service for every device, with a result
 * buffer pair per device in the chunk; each request then carries up to one
 * piece of the tile's outer rows per device, and the pieces the executor
 * has not asked for yet wait in their buffers (service_step), so that it
 * sees the steps of one device, in outer-row order.
 *
 * Aggregates (agg_step, agg_finish; kernels/agg_spec.h): the aggregate node
 * gives the spec with the join (GjJoinInput.agg_spec), and begin_join
 * copies it into the same chunk: the argument value columns and pair
 * programs, the columns the programs load, each row's group, the rows the
 * host joins later, and zeroed partials (per group of the spec, a pair
 * count and an accumulator per argument).  The chunk waits for room as
 * any join's does (wait_for_staging); one the staging area can never hold
 * fails begin_join with GJ_ERR_OUT_OF_MEMORY, and the executor runs the
 * join on the cpu backend in this process.  Each agg_step has the service reduce into the partials in
 * the chunk, over all the join's steps (as the cuda backend keeps its
 * accumulators on the device); the pairs the host must reduce come back as
 * a step's matches.  agg_finish has the service add what its backend
 * still holds and adds the partials into the executor's.  Not yet: step
 * overlap (double_buffer) through the service.
 *
 * A call waits on this process's latch, never processing interrupts: a
 * step is bounded in work like a step in the backend, and the executor
 * checks for interrupts between steps as before.  If the service stops or
 * restarts meanwhile (its generation changes), the call fails with an
 * error that names the service; the postmaster's death ends the wait too.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "portability/instr_time.h"
#include "port/atomics.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/wait_event.h"

#include "gpujoin.h"
#include "service/service_shared.h"

/*
 * A piece of a step that ran on a device of the service and whose matches
 * wait in their result buffers for the executor to ask for them: the outer
 * rows [begin, next) finished, of the piece [begin, end).
 */
typedef struct StepSegment
{
	int64		begin;
	int64		end;
	int64		next;
	int64		nmatches;
	int			buffer;			/* of the join's result buffers */
} StepSegment;

/* A join opened in the service, as its client holds it (malloc'd). */
typedef struct GjServiceJoinClient
{
	uint64		handle;
	uint64		generation;		/* of the service that opened it */
	char	   *chunk;
	int64		capacity;
	int32		algorithm;		/* GjAlgorithm of the join */

	/*
	 * A result buffer pair per device the join may run on (nbuffers; the
	 * service opened it on ndevices of them), and the pieces that ran ahead
	 * of the executor (segments, in outer-row order, all of seg_tile): see
	 * service_step.  piece_rows: the outer rows of one piece, learnt from
	 * where the devices' steps stop.
	 */
	int			nbuffers;
	int			ndevices;
	uint32	   *result_outer[GJ_MAX_DEVICES];
	uint32	   *result_inner[GJ_MAX_DEVICES];
	GjTile		seg_tile;
	GjRequestOp seg_op;
	int			nsegments;
	StepSegment segments[GJ_MAX_DEVICES];
	int64		piece_rows;
	bool		piece_stopped;	/* a piece stopped early: piece_rows is the
								 * devices' step, no longer doubled */

	/*
	 * Aggregates: the executor's spec as begin_join got it (agg_step must be
	 * given the same), and the partials in the chunk that the service
	 * reduces into and that agg_finish adds into the executor's.
	 */
	const GjAggSpec *agg_spec;
	GjAggPartial *staged_partial;
	int64	   *staged_group_pairs;
	GjAggAcc   *staged_group_acc;
	bool		agg_finished;

	/*
	 * The times of opening the join (the copy into the chunk, the OPEN's
	 * own) and of the tile pruning's round trips, which have no stats to
	 * add to: added to the next step's.
	 */
	GjTimes		open_times;
} GjServiceJoinClient;

/*
 * The longest a query waits for a GPU service that is still starting: the
 * postmaster starts it with the server (and again one second after it
 * exits), and opening CUDA takes it a fraction of a second to a few
 * seconds; a query sent in that window would otherwise fail
 * (gpujoin.device = service) or open CUDA in its own process.
 */
#define SERVICE_START_WAIT_MS	10000

/*
 * Wait, at most SERVICE_START_WAIT_MS and interruptibly, while the service
 * is registered but not yet ready (not started, starting, or restarting
 * after an exit).  Returns whether it is ready.  A service that found no
 * device is not waited for: it does not come back.  Nor is one this
 * process already waited for in vain (one failing at each start), until it
 * is seen ready again: a session pays the wait once, not every query.  The
 * time waited is added to gj_service_start_wait_ms, for EXPLAIN ANALYZE.
 */
double		gj_service_start_wait_ms = 0;

bool
gpujoin_service_await_start(void)
{
	static bool gave_up = false;
	instr_time	start,
				now;
	double		waited = 0;
	bool		slept = false;

	if (gj_service == NULL || gj_service->staging_granules == 0)
		return false;
	INSTR_TIME_SET_CURRENT(start);
	for (;;)
	{
		GjServiceState state;
		bool		ready = gpujoin_service_ready();

		/* the time waited so far, whatever comes of this pass: none unless it slept */
		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, start);
		waited = slept ? INSTR_TIME_GET_MILLISEC(now) : 0;
		if (ready)
		{
			gave_up = false;
			gj_service_start_wait_ms += waited;
			return true;
		}
		if (gave_up)
			return false;
		SpinLockAcquire(&gj_service->mutex);
		state = gj_service->status.state;
		SpinLockRelease(&gj_service->mutex);
		if (state == GJ_SERVICE_NO_DEVICE || waited >= SERVICE_START_WAIT_MS)
		{
			gave_up = state != GJ_SERVICE_NO_DEVICE;
			gj_service_start_wait_ms += waited;
			return false;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		slept = true;
	}
}

/*
 * Does the service run the cuda backend, ready for requests?  Then this
 * process never opens CUDA itself: gpujoin.device = auto and cuda send
 * their joins to the service.
 */
bool
gpujoin_service_runs_cuda(void)
{
	bool		cuda;

	if (!gpujoin_service_ready())
		return false;
	SpinLockAcquire(&gj_service->mutex);
	cuda = gj_service->status.backend == GJ_SERVICE_BACKEND_CUDA;
	SpinLockRelease(&gj_service->mutex);
	return cuda;
}

/*
 * The most matches one step of a join in the service returns: 2M pairs
 * (16 MB of result buffers), and at most an eighth of the staging area, so
 * that many joins fit it at once; a step's round trip costs a few
 * microseconds, so bigger steps would gain nothing.  The tile planner
 * bounds the tiles' inner widths by it (a whole outer row's matches must
 * fit one step).
 */
#define SERVICE_MAX_STEP_MATCHES	((int64) 2 * 1024 * 1024)

/*
 * The first pieces of a join spread over devices: the smallest step of
 * any backend (the cpu's, CPU_PAIRS_PER_STEP), so that the first pieces
 * finish in one step; service_step doubles them from there.
 */
#define INITIAL_PIECE_PAIRS			((int64) 1 << 24)

int64
gj_service_max_matches(void)
{
	if (gj_service == NULL || gj_service->staging_granules == 0)
		return 0;
	return Max(Min((int64) gj_service->staging_granules * GJ_STAGING_GRANULE / 8 /
				   (2 * sizeof(uint32)), SERVICE_MAX_STEP_MATCHES), 1024);
}

/* Copy n bytes to *at in the chunk, MAXALIGNed; returns where they went. */
static void *
put(char **at, const void *src, Size n)
{
	void	   *dst = *at;

	if (n > 0)
		memcpy(dst, src, n);
	*at += MAXALIGN(n);
	return dst;
}

/*
 * Is the array [ptr, ptr + len) of the inner side left where it is, in the
 * chunk of the shared inner side in_place (0: none), instead of copied into
 * the join's chunk?  The service reads such arrays in place
 * (service_validate.c).
 */
static bool
left_in_place(uint64 in_place, const void *ptr, Size len)
{
	return in_place != 0 && gj_service_in_shared_inner(in_place, ptr, len);
}

/* Bytes of the side's columns in the chunk, but those left in place. */
static Size
side_bytes(const GjKeyColumns *cols, int64 nrows, uint64 in_place)
{
	Size		size = 0;
	int			c;

	for (c = 0; c < cols->ncols; c++)
	{
		if (!left_in_place(in_place, cols->values[c], sizeof(int64) * nrows))
			size += MAXALIGN(sizeof(int64) * nrows);
		if (cols->isnull[c] != NULL && !left_in_place(in_place, cols->isnull[c], nrows))
			size += MAXALIGN(nrows);
	}
	return size;
}

/* Copy of src at *at, or src itself where it is left in place. */
static void *
put_or_leave(char **at, const void *src, Size n, uint64 in_place)
{
	if (left_in_place(in_place, src, n))
		return (void *) src;
	return put(at, src, n);
}

static void
put_side(char **at, GjKeyColumns *dst, const GjKeyColumns *src, int64 nrows, uint64 in_place)
{
	int			c;

	for (c = 0; c < src->ncols; c++)
	{
		dst->values[c] = put_or_leave(at, src->values[c], sizeof(int64) * nrows, in_place);
		dst->isnull[c] = src->isnull[c] == NULL ? NULL :
			put_or_leave(at, src->isnull[c], nrows, in_place);
	}
}

/*
 * A chunk of the staging area for a join's inputs and matches.  When other
 * joins hold the room it needs, wait for them to free it (they do when they
 * end) instead of running on the cpu backend: up to STAGING_WAIT_MS, since
 * this backend may itself hold chunks of joins that cannot end before this
 * one runs (a plan with several GpuJoins), which no wait could free.  The
 * time waited is queue time, for EXPLAIN ANALYZE.  A cancel or
 * statement_timeout ends the wait with the usual ERROR; nothing is held yet.
 */
#define STAGING_WAIT_MS		10000

double		gj_service_queue_ms = 0;

static char *
wait_for_staging(Size size)
{
	instr_time	start,
				now;
	char	   *chunk;

	if ((chunk = gj_staging_alloc(size)) != NULL)
		return chunk;
	if (size > (Size) gj_service->staging_granules * GJ_STAGING_GRANULE)
		return NULL;
	INSTR_TIME_SET_CURRENT(start);
	for (;;)
	{
		double		waited;

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 5L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		chunk = gj_staging_alloc(size);
		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, start);
		waited = INSTR_TIME_GET_MILLISEC(now);
		if (chunk != NULL || waited >= STAGING_WAIT_MS || !gpujoin_service_ready())
		{
			gj_service_queue_ms += waited;
			return chunk;
		}
	}
}

/* The rows of the side an aggregate argument's values come from. */
static int64
arg_rows(const GjAggArg *arg, const GjJoinInput *input)
{
	return arg->side == GJ_AGG_SIDE_OUTER ? input->outer_nrows : input->inner_nrows;
}

/*
 * Bytes of the aggregate spec in the chunk: the spec, the arguments' value
 * columns and pair programs, the columns the pair programs load, the
 * groups of each row, the host_later flags, and the partials the service
 * reduces into: per group of the spec (gpujoin.max_dense_groups at most,
 * gpujoin_agg_groups.c) a pair count and an accumulator per argument.  The
 * inner side's arrays that lie in the chunk of the shared inner side
 * in_place (0: none) stay there and take no bytes: on issue 36's grouped
 * query on an H200 each of 9 processes copied 13 MB of them (the inner
 * column of the sum's pair program and the inner rows' groups, which
 * the processes numbered together there).
 */
static Size
agg_spec_bytes(const GjAggSpec *spec, const GjJoinInput *input, uint64 in_place)
{
	Size		size = MAXALIGN(sizeof(GjAggSpec)) + MAXALIGN(sizeof(GjAggPartial));
	int			a;

	for (a = 0; a < spec->nargs; a++)
	{
		const GjAggArg *arg = &spec->args[a];
		uint64		arg_in_place = arg->side == GJ_AGG_SIDE_INNER ? in_place : 0;

		if (arg->side == GJ_AGG_SIDE_PAIR)
			size += MAXALIGN(sizeof(GjInstr) * arg->ninstrs);
		else
		{
			if (!left_in_place(arg_in_place, arg->values, sizeof(int64) * arg_rows(arg, input)))
				size += MAXALIGN(sizeof(int64) * arg_rows(arg, input));
			if (arg->flags != NULL &&
				!left_in_place(arg_in_place, arg->flags, arg_rows(arg, input)))
				size += MAXALIGN(arg_rows(arg, input));
		}
	}
	size += side_bytes(&spec->pair_cols[0], input->outer_nrows, 0);
	size += side_bytes(&spec->pair_cols[1], input->inner_nrows, in_place);
	if (spec->outer_group != NULL)
	{
		Size		groups = gj_agg_spec_groups(spec);

		size += MAXALIGN(sizeof(uint32) * input->outer_nrows);
		if (spec->inner_group != NULL &&
			!left_in_place(in_place, spec->inner_group, sizeof(uint32) * input->inner_nrows))
			size += MAXALIGN(sizeof(uint32) * input->inner_nrows);
		size += MAXALIGN(sizeof(int64) * groups);
		size += MAXALIGN(sizeof(GjAggAcc) * groups * spec->nargs);
	}
	if (spec->host_later[0] != NULL)
		size += MAXALIGN(input->outer_nrows);
	if (spec->host_later[1] != NULL &&
		!left_in_place(in_place, spec->host_later[1], input->inner_nrows))
		size += MAXALIGN(input->inner_nrows);
	return size;
}

/*
 * Copy the aggregate spec into the chunk at *at, its pointers pointing at
 * the copies, and lay out the zeroed partials after it.
 */
static GjAggSpec *
put_agg_spec(char **at, GjServiceJoinClient *join, const GjAggSpec *spec,
			 const GjJoinInput *input, uint64 in_place)
{
	GjAggSpec  *staged = put(at, spec, sizeof(GjAggSpec));
	GjAggPartial *partial;
	int			a;

	for (a = 0; a < spec->nargs; a++)
	{
		const GjAggArg *arg = &spec->args[a];
		GjAggArg   *to = &staged->args[a];
		int64		nrows = arg_rows(arg, input);
		uint64		arg_in_place = arg->side == GJ_AGG_SIDE_INNER ? in_place : 0;

		if (arg->side == GJ_AGG_SIDE_PAIR)
		{
			to->instrs = put(at, arg->instrs, sizeof(GjInstr) * arg->ninstrs);
			to->values = NULL;
			to->flags = NULL;
			continue;
		}
		to->instrs = NULL;
		to->ninstrs = 0;
		to->values = put_or_leave(at, arg->values, sizeof(int64) * nrows, arg_in_place);
		to->flags = arg->flags == NULL ? NULL :
			put_or_leave(at, arg->flags, nrows, arg_in_place);
	}
	put_side(at, &staged->pair_cols[0], &spec->pair_cols[0], input->outer_nrows, 0);
	put_side(at, &staged->pair_cols[1], &spec->pair_cols[1], input->inner_nrows, in_place);
	if (spec->outer_group != NULL)
		staged->outer_group = put(at, spec->outer_group, sizeof(uint32) * input->outer_nrows);
	if (spec->inner_group != NULL)
		staged->inner_group = put_or_leave(at, spec->inner_group,
										   sizeof(uint32) * input->inner_nrows, in_place);

	/*
	 * gpujoin.debug_fault = service_bad_groups: inner groups left in the
	 * shared inner side's chunk that exceed the groups the spec says, for
	 * the test that the service refuses them (test/pgtap/service_parallel.sql).
	 */
	if (gpujoin_debug_fault == GPUJOIN_FAULT_SERVICE_BAD_GROUPS &&
		spec->inner_group != NULL && staged->inner_group == spec->inner_group &&
		spec->ninner_groups > 1)
		staged->ninner_groups = 1;
	if (spec->host_later[0] != NULL)
		staged->host_later[0] = put(at, spec->host_later[0], input->outer_nrows);
	if (spec->host_later[1] != NULL)
		staged->host_later[1] = put_or_leave(at, spec->host_later[1], input->inner_nrows,
											 in_place);

	partial = (GjAggPartial *) *at;
	memset(partial, 0, sizeof(GjAggPartial));
	*at += MAXALIGN(sizeof(GjAggPartial));
	if (spec->outer_group != NULL)
	{
		int64		groups = gj_agg_spec_groups(spec);
		Size		acc_bytes = sizeof(GjAggAcc) * groups * spec->nargs;

		partial->group_pairs = (int64 *) *at;
		memset(partial->group_pairs, 0, sizeof(int64) * groups);
		*at += MAXALIGN(sizeof(int64) * groups);
		partial->group_acc = (GjAggAcc *) *at;
		memset(partial->group_acc, 0, acc_bytes);
		*at += MAXALIGN(acc_bytes);
	}
	join->agg_spec = spec;
	join->staged_partial = partial;
	join->staged_group_pairs = partial->group_pairs;
	join->staged_group_acc = partial->group_acc;
	join->agg_finished = false;
	return staged;
}

static void *
service_begin_join(const GjJoinInput *input, GjError *err)
{
	GjServiceSlot *slot;
	GjServiceJoinClient *join;
	GjJoinInput *shared_input;
	uint64		generation;
	int64		capacity = Max(input->match_capacity, 1);
	uint64		shared_inner;
	Size		size;
	Size		inputs_size;
	Size		results_size;
	char	   *at;
	char	   *chunk;
	double		copy_start;
	int			nbuffers;
	int			b;

	if (!gpujoin_service_ready())
	{
		gj_service_set_error(err, GJ_ERR_UNAVAILABLE, "the GPU service is not running");
		return NULL;
	}
	if ((slot = gj_service_my_slot(err)) == NULL)
		return NULL;
	SpinLockAcquire(&gj_service->mutex);
	generation = gj_service->generation;
	nbuffers = gj_service->ndevices;
	SpinLockRelease(&gj_service->mutex);

	/*
	 * A nested loop big enough to gain from it runs on every device of the
	 * service: a result buffer pair each.  Other joins run on one.  An
	 * inner side that lies in a shared inner chunk this process attached
	 * to (a parallel GpuJoin, shared_inner.c) stays there: the
	 * service reads it where it is, and it is staged once for every process.
	 */
	if (input->algorithm != GJ_ALGO_NESTLOOP ||
		(double) input->outer_nrows * (double) input->inner_nrows <
		(double) gpujoin_service_spread_min_pairs)
		nbuffers = 1;
	nbuffers = Max(Min(nbuffers, GJ_MAX_DEVICES), 1);
	shared_inner = gj_service_inner_shared_by(&input->inner, input->inner_nrows);

	inputs_size = MAXALIGN(sizeof(GjJoinInput)) + MAXALIGN(sizeof(GjInstr) * input->ninstrs) +
		side_bytes(&input->outer, input->outer_nrows, 0) +
		(shared_inner != 0 ? 0 : side_bytes(&input->inner, input->inner_nrows, 0));
	results_size = nbuffers * 2 * MAXALIGN(sizeof(uint32) * capacity);
	size = inputs_size + results_size;
	if (input->agg_spec != NULL)
		size += agg_spec_bytes(input->agg_spec, input, shared_inner);
	chunk = wait_for_staging(size);
	if (chunk == NULL)
	{
		snprintf(err->message, sizeof(err->message),
				 "the GPU service's staging area has no room for this join (%zu MB)",
				 size / (1024 * 1024) + 1);
		err->code = GJ_ERR_OUT_OF_MEMORY;
		return NULL;
	}
	join = calloc(1, sizeof(GjServiceJoinClient));
	if (join == NULL)
	{
		gj_staging_free(chunk);
		gj_service_set_error(err, GJ_ERR_OUT_OF_MEMORY, "out of memory");
		return NULL;
	}
	join->chunk = chunk;
	copy_start = gj_clock_ms();
	/* what this process writes: not the result buffers, which the service fills */
	gj_staging_prefault(chunk, inputs_size);
	if (size > inputs_size + results_size)
		gj_staging_prefault(chunk + inputs_size + results_size,
							size - inputs_size - results_size);
	at = join->chunk;
	shared_input = put(&at, input, sizeof(GjJoinInput));
	shared_input->instrs = put(&at, input->instrs, sizeof(GjInstr) * input->ninstrs);
	put_side(&at, &shared_input->outer, &input->outer, input->outer_nrows, 0);
	if (shared_inner == 0)
		put_side(&at, &shared_input->inner, &input->inner, input->inner_nrows, 0);
	for (b = 0; b < nbuffers; b++)
	{
		join->result_outer[b] = (uint32 *) at;
		at += MAXALIGN(sizeof(uint32) * capacity);
		join->result_inner[b] = (uint32 *) at;
		at += MAXALIGN(sizeof(uint32) * capacity);
	}
	join->nbuffers = nbuffers;
	shared_input->agg_spec = input->agg_spec == NULL ? NULL :
		put_agg_spec(&at, join, input->agg_spec, input, shared_inner);
	Assert(at <= join->chunk + size);
	join->open_times.staging_ms = gj_clock_ms() - copy_start;
	join->capacity = capacity;
	join->generation = generation;
	join->algorithm = input->algorithm;

	slot->op = GJ_OP_OPEN;
	slot->input = shared_input;
	slot->ndevices = nbuffers;
	slot->open_in_background = input->open_in_background;
	slot->open_fault = input->open_in_background &&
		gpujoin_debug_fault == GPUJOIN_FAULT_AHEAD_OPEN_FAILS;
	slot->shared_inner = shared_inner;
	slot->agg_partial = join->staged_partial;
	/*
	 * gpujoin.debug_fault = service_bad_request: a request whose input lies
	 * outside the staging area (on the service's control block), for the
	 * test that the service refuses it (test/pgtap/service_faults.sql).
	 */
	if (gpujoin_debug_fault == GPUJOIN_FAULT_SERVICE_BAD_REQUEST)
		slot->input = (const GjJoinInput *) gj_service;
	/*
	 * gpujoin.debug_fault = service_bad_inner: a join that names a shared
	 * inner side that does not exist (a bogus handle), to be refused.
	 */
	if (gpujoin_debug_fault == GPUJOIN_FAULT_SERVICE_BAD_INNER && shared_inner != 0)
		slot->shared_inner = shared_inner + ((uint64) 1 << 40);
	if (!gj_service_call(slot, generation, err))
	{
		gj_staging_free(join->chunk);
		free(join);
		return NULL;
	}
	join->handle = slot->join;
	gj_times_add(&join->open_times, &slot->stats.times);
	join->ndevices = Max(Min(slot->ndevices, nbuffers), 1);
	join->piece_rows = 0;
	join->piece_stopped = false;
	join->nsegments = 0;
	return join;
}

static void
add_stats(GjStats *into, const GjStats *from)
{
	into->pairs_evaluated += from->pairs_evaluated;
	into->device_matches += from->device_matches;
	into->bytes_to_device += from->bytes_to_device;
	into->bytes_from_device += from->bytes_from_device;
	into->kernel_ms += from->kernel_ms;
	into->transfer_ms += from->transfer_ms;
	gj_times_add(&into->times, &from->times);
	for (int d = 0; d < GJ_MAX_DEVICES; d++)
		into->device_steps[d] += from->device_steps[d];
	gj_stats_add_program(into, from);
}

/* A round trip's stats, with the open's times the first time. */
static void
add_join_stats(GjServiceJoinClient *join, GjStats *into, const GjStats *from)
{
	add_stats(into, from);
	gj_times_add(&into->times, &join->open_times);
	memset(&join->open_times, 0, sizeof(join->open_times));
}

/* Hand the executor the matches of the first waiting segment. */
static void
take_segment(GjServiceJoinClient *join, int64_t *outer_next, GjMatches *matches)
{
	StepSegment seg = join->segments[0];

	join->nsegments--;
	memmove(&join->segments[0], &join->segments[1], sizeof(StepSegment) * join->nsegments);
	*outer_next = seg.next;
	matches->outer_rows = join->result_outer[seg.buffer];
	matches->inner_rows = join->result_inner[seg.buffer];
	matches->count = seg.nmatches;
}

/*
 * A STEP or an AGG_STEP of the outer rows from *outer_next of the tile:
 * the matches come back in the chunk.
 *
 * A join open on several devices (a nested loop) runs up to one piece of
 * the tile's outer rows per device at once, each a step of its own into
 * its own result buffers.  The first piece is this step's answer; the
 * others wait as segments until the executor asks for the rows where they
 * begin, so that it sees the steps of one device, in outer-row order, as
 * the backend contract says.  A piece that stopped early (its device's
 * step bound, or a full match buffer) leaves a gap before the next
 * segment, which the next call fills with the buffers that are free.  A
 * piece is first INITIAL_PIECE_PAIRS of work (the smallest step of any
 * backend), doubled while every piece finishes, and cut to where the
 * devices stop the first time one stops early (never doubled again: the
 * step bound is a constant of the join, and overshooting it every other
 * request would leave gaps that one device fills alone), so that pieces
 * match the devices' steps and few gaps arise.  The aggregates of every
 * piece are reduced in the service when it runs, once, whenever the
 * executor takes its segment.
 */
static bool
service_step(GjServiceJoinClient *join, GjRequestOp op, const GjTile *tile,
			 int64_t *outer_next, GjMatches *matches, GjStats *stats, GjError *err)
{
	GjServiceSlot *slot;
	int64		o = *outer_next;
	int64		end;
	int64		rows;
	int64		piece;
	bool		used[GJ_MAX_DEVICES];
	int			free_buffers[GJ_MAX_DEVICES];
	int			nfree = 0;
	int			npieces;
	int			k;
	StepSegment fresh[GJ_MAX_DEVICES];

	/* segments of another tile or operation are of no use (they never are) */
	if (join->nsegments > 0 &&
		(op != join->seg_op || memcmp(tile, &join->seg_tile, sizeof(GjTile)) != 0 ||
		 o > join->segments[0].begin))
		join->nsegments = 0;
	if (join->nsegments > 0 && join->segments[0].begin == o)
	{
		take_segment(join, outer_next, matches);
		return true;
	}

	if ((slot = gj_service_my_slot(err)) == NULL)
		return false;
	end = join->nsegments > 0 ? join->segments[0].begin : tile->outer_end;
	rows = end - o;
	memset(used, 0, sizeof(used));
	for (k = 0; k < join->nsegments; k++)
		used[join->segments[k].buffer] = true;
	for (k = 0; k < join->nbuffers; k++)
		if (!used[k])
			free_buffers[nfree++] = k;
	npieces = Min(nfree, join->ndevices);
	if (npieces > 1 && rows > 1)
	{
		int64		inner = Max(tile->inner_end - tile->inner_begin, 1);

		if (join->piece_rows <= 0)
			join->piece_rows = Max(INITIAL_PIECE_PAIRS / inner, 1);
		piece = Max(Min(join->piece_rows, (rows + npieces - 1) / npieces), 1);
		npieces = (int) Min((int64) npieces, (rows + piece - 1) / piece);
	}
	else
	{
		npieces = 1;
		piece = rows;
	}

	slot->op = op;
	slot->join = join->handle;
	slot->tile = *tile;
	slot->result_capacity = join->capacity;
	slot->npieces = npieces;
	for (k = 0; k < npieces; k++)
	{
		GjStepPiece *p = &slot->pieces[k];

		p->outer_begin = o + k * piece;
		p->outer_end = Min(o + (k + 1) * piece, end);
		p->result_outer = join->result_outer[free_buffers[k]];
		p->result_inner = join->result_inner[free_buffers[k]];
	}
	if (!gj_service_call(slot, join->generation, err))
		return false;
	add_join_stats(join, stats, &slot->stats);

	for (k = 0; k < npieces; k++)
	{
		const GjStepPiece *p = &slot->pieces[k];

		fresh[k].begin = p->outer_begin;
		fresh[k].end = p->outer_end;
		fresh[k].next = Max(Min(p->outer_next, p->outer_end), p->outer_begin);
		fresh[k].nmatches = Max(Min(p->nmatches, join->capacity), 0);
		fresh[k].buffer = free_buffers[k];
	}
	if (npieces > 1)
	{
		/* learn the pieces' size from where the devices stopped */
		int64		stopped = 0;

		for (k = 0; k < npieces; k++)
			if (fresh[k].next < fresh[k].end)
				stopped = stopped == 0 ? fresh[k].next - fresh[k].begin :
					Min(stopped, fresh[k].next - fresh[k].begin);
		if (stopped > 0)
		{
			join->piece_rows = stopped;
			join->piece_stopped = true;
		}
		else if (!join->piece_stopped && piece == join->piece_rows &&
				 join->piece_rows < GJ_MAX_SIDE_ROWS / 2)
			join->piece_rows *= 2;
	}

	/* the new segments come before the waiting ones: they cover [o, end) */
	memmove(&join->segments[npieces], &join->segments[0], sizeof(StepSegment) * join->nsegments);
	memcpy(&join->segments[0], fresh, sizeof(StepSegment) * npieces);
	join->nsegments += npieces;
	join->seg_tile = *tile;
	join->seg_op = op;
	take_segment(join, outer_next, matches);
	return true;
}

static bool
service_run_step(void *state, const GjTile *tile, int64_t *outer_next,
				 GjMatches *matches, GjStats *stats, GjError *err)
{
	return service_step(state, GJ_OP_STEP, tile, outer_next, matches, stats, err);
}

/*
 * An aggregate step: the service reduces into the partials in the chunk
 * (the join's, over all its steps, as the cuda backend keeps them on the
 * device), so *partial is left alone until agg_finish; the pairs the host
 * must reduce come back as a step's matches do.
 */
static bool
service_agg_step(void *state, const GjTile *tile, int64_t *outer_next,
				 const GjAggSpec *spec, GjAggPartial *partial,
				 GjMatches *matches, GjStats *stats, GjError *err)
{
	GjServiceJoinClient *join = state;

	if (spec != join->agg_spec || join->agg_finished)
	{
		gj_service_set_error(err, GJ_ERR_DEVICE,
				  "an aggregate step in the GPU service needs the spec the join was opened with");
		return false;
	}
	return service_step(join, GJ_OP_AGG_STEP, tile, outer_next, matches, stats, err);
}

/*
 * After the last aggregate step: the service adds what its backend still
 * holds into the partials in the chunk and returns their totals there;
 * they are added into the executor's *partial (gj_agg_merge: groups and
 * arguments in the same layout, agg_spec.h).
 */
static bool
service_agg_finish(void *state, const GjAggSpec *spec, GjAggPartial *partial,
				   GjStats *stats, GjError *err)
{
	GjServiceJoinClient *join = state;
	GjServiceSlot *slot;
	const GjAggPartial *staged = join->staged_partial;
	int			nargs = spec->nargs;
	int			a;

	if (spec != join->agg_spec || join->agg_finished)
	{
		gj_service_set_error(err, GJ_ERR_DEVICE,
				  "aggregates in the GPU service are finished once, with the spec the join was opened with");
		return false;
	}
	if ((slot = gj_service_my_slot(err)) == NULL)
		return false;
	slot->op = GJ_OP_AGG_FINISH;
	slot->join = join->handle;
	if (!gj_service_call(slot, join->generation, err))
		return false;
	join->agg_finished = true;
	add_join_stats(join, stats, &slot->stats);

	partial->pairs += staged->pairs;
	for (a = 0; a < nargs; a++)
		gj_agg_merge(&partial->acc[a], &staged->acc[a], spec->args[a].cls);
	if (spec->outer_group != NULL && partial->group_pairs != NULL)
	{
		int64		groups = gj_agg_spec_groups(spec);
		int64		g;

		for (g = 0; g < groups; g++)
		{
			if (join->staged_group_pairs[g] == 0)
				continue;		/* no pair, nothing reduced */
			partial->group_pairs[g] += join->staged_group_pairs[g];
			for (a = 0; a < nargs; a++)
				gj_agg_merge(&partial->group_acc[g * nargs + a],
							 &join->staged_group_acc[g * nargs + a], spec->args[a].cls);
		}
	}
	return true;
}

/*
 * Tile pruning: one round trip per tile of a sorted or hash join, against
 * a step per tile that cannot match (a nested loop's tiles never prune, on
 * any backend: no round trip).  A failed call says "may match": the step
 * then fails the same way and reports the error.
 */
static bool
service_tile_can_match(void *state, const GjTile *tile)
{
	GjServiceJoinClient *join = state;
	GjServiceSlot *slot;
	GjError		err;

	if (join->algorithm == GJ_ALGO_NESTLOOP)
		return true;
	memset(&err, 0, sizeof(err));
	if ((slot = gj_service_my_slot(&err)) == NULL)
		return true;
	slot->op = GJ_OP_TILE_CAN_MATCH;
	slot->join = join->handle;
	slot->tile = *tile;
	if (!gj_service_call(slot, join->generation, &err))
		return true;
	gj_times_add(&join->open_times, &slot->stats.times);
	return slot->can_match;
}

/*
 * Close the join in the service (if the service that opened it still
 * runs) and free the chunk.  Runs on ERROR too, from the executor's
 * memory-context callback.
 */
/*
 * A join whose begin_join had open_in_background: wait until the service
 * has opened it.  False, with *err, when the open failed; the caller then
 * ends the join and opens it again in the ordinary way.
 */
bool
gj_service_join_wait_open(void *state, GjError *err)
{
	GjServiceJoinClient *join = state;
	GjServiceSlot *slot;

	if ((slot = gj_service_my_slot(err)) == NULL)
		return false;
	slot->op = GJ_OP_WAIT_OPEN;
	slot->join = join->handle;
	return gj_service_call(slot, join->generation, err);
}

static void
service_end_join(void *state)
{
	GjServiceJoinClient *join = state;
	GjServiceSlot *slot;
	GjError		err;

	if (join == NULL)
		return;
	memset(&err, 0, sizeof(err));
	if ((slot = gj_service_my_slot(&err)) != NULL)
	{
		slot->op = GJ_OP_CLOSE;
		slot->join = join->handle;
		(void) gj_service_call(slot, join->generation, &err);
	}
	gj_staging_free(join->chunk);
	free(join);
}

/* The same calls whichever backend the service runs; the name tells EXPLAIN which. */
#define SERVICE_BACKEND(label) \
	{ \
		.name = label, \
		.begin_join = service_begin_join, \
		.run_step = service_run_step, \
		.end_join = service_end_join, \
		.tile_can_match = service_tile_can_match, \
		.agg_step = service_agg_step, \
		.agg_finish = service_agg_finish, \
		.algorithms = (1u << GJ_ALGO_NESTLOOP) | (1u << GJ_ALGO_SORTMERGE) | (1u << GJ_ALGO_HASH), \
	}

const GjBackend gj_service_cpu_backend = SERVICE_BACKEND("cpu (service)");
const GjBackend gj_service_cuda_backend = SERVICE_BACKEND("cuda (service)");

/*-------------------------------------------------------------------------
 *
 * gpujoin_overlap.c
 *	  Step overlap: the next step of a join runs while the executor returns
 *	  the rows of the current one.
 *
 * A GpuJoin alternates between running a backend step (upload the tile,
 * run the kernels, copy the matches back) and emitting that step's matches
 * as tuples, one per ExecProcNode call.  Without overlap the device idles
 * while the executor forms tuples and the executor idles while the device
 * runs.  With gpujoin.overlap_steps, as soon as a step's matches are in
 * host memory, the next step of the same tile (or the first of the next
 * tile that can match) starts on a helper thread, into the backend's other
 * match buffer (GjBackend.double_buffer); when the executor has emitted
 * the current matches it joins the thread and emits the next ones, and
 * starts the step after them.
 *
 * The helper thread is a plain POSIX thread that calls the backend's
 * run_step and nothing else: the backends are written without PostgreSQL
 * (backend.h), so the thread never touches palloc, elog or shared memory,
 * and every signal is blocked in it, so PostgreSQL's handlers keep running
 * on the executor's thread (cancel and statement_timeout are seen there, at
 * the next CHECK_FOR_INTERRUPTS of the emission loop).  Only the executor's
 * thread calls the backend otherwise, and never while a step is running:
 * the next tile is chosen, and pruned, before the thread starts.
 *
 * A step is short by design (the backends cut them at about a second of
 * work at most), so joining the thread is how a step is abandoned: on
 * ERROR, cancel, rescan, an early end (LIMIT) and process exit the
 * executor waits for the running step and then releases the backend.  The
 * step reads the key columns in the host buffers' memory contexts, which
 * an aborting transaction deletes before the GpuJoin's own context (whose
 * callback releases the backend): a reset callback on each buffer context
 * (GjStepGuard) waits for the step first.
 *
 * This file is the bottom of the executor's layers: the step loop
 * (gpujoin_steps.c) starts and collects the steps, gpujoin_release_backend
 * (gpujoin_open.c) abandons one, and nothing here calls back into them; a
 * failed step's error is raised by the step loop.
 *
 * Injected faults (gpujoin.debug_fault) are decided on the executor's
 * thread before a step starts, so they fail the same step as without
 * overlap.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>
#include <time.h>

#include "miscadmin.h"
#include "storage/ipc.h"

#include "gpujoin.h"
#include "custom_scan/exec/gpujoin_exec.h"
#include "host_chunking/staging.h"

/* Steps running on a helper thread in this process, joined at exit. */
static dlist_head running_steps = DLIST_STATIC_INIT(running_steps);
static bool exit_callback_registered = false;

/*
 * The helper thread's body, which also runs a step in place when no thread
 * can be started.  No PostgreSQL calls here.
 */
static void *
step_ahead_run(void *arg)
{
	GjStepAhead *ahead = arg;
	struct timespec start,
				end;

	clock_gettime(CLOCK_MONOTONIC, &start);
	ahead->ok = ahead->backend->run_step(ahead->backend_state, &ahead->tile,
										 &ahead->outer_next, &ahead->matches,
										 &ahead->stats, &ahead->err);
	clock_gettime(CLOCK_MONOTONIC, &end);
	ahead->run_ms = (end.tv_sec - start.tv_sec) * 1000.0 +
		(end.tv_nsec - start.tv_nsec) / 1e6;
	return NULL;
}

/* Wait for a running step; its results are then readable. */
static void
step_ahead_join(GjStepAhead *ahead)
{
	if (!ahead->threaded)
		return;
	ahead->threaded = false;
	(void) pthread_join(ahead->thread, NULL);
	dlist_delete(&ahead->node);
}

/*
 * A backend exiting (FATAL, pg_terminate_backend) with a step still
 * running must not let the CUDA runtime be torn down under the thread.
 * The step's results stay pending; nobody collects them.
 */
static void
join_running_steps(int code, Datum arg)
{
	dlist_mutable_iter iter;

	dlist_foreach_modify(iter, &running_steps)
		step_ahead_join(dlist_container(GjStepAhead, node, iter.cur));
}

/*
 * A host buffer's memory is being reset or deleted (rescan, the end of the
 * query, an ERROR): wait for the step that reads it.  Its results stay
 * pending; whoever resets the buffers drops them.
 */
static void
step_guard_fired(void *arg)
{
	GjStepGuard *guard = arg;

	guard->armed = false;
	step_ahead_join(guard->ahead);
}

static void
step_guard_arm(GjStepGuard *guard, GjStepAhead *ahead, MemoryContext cxt)
{
	if (guard->armed)
		return;
	guard->ahead = ahead;
	guard->callback.func = step_guard_fired;
	guard->callback.arg = guard;
	MemoryContextRegisterResetCallback(cxt, &guard->callback);
	guard->armed = true;
}

/*
 * Whether the join may run its next step on a helper thread: the GUC is on,
 * the backend can double-buffer, and it has not refused to (or no thread
 * could be started) in this execution.
 */
bool
gpujoin_step_ahead_possible(GpuJoinState *gjs)
{
	return gpujoin_overlap_steps && !gjs->no_overlap &&
		gjs->backend->double_buffer != NULL;
}

/*
 * Start the step of gjs->tile at gjs->outer_next on a helper thread.  The
 * step loop (gpujoin_steps.c) calls this once a step's matches are in
 * gjs->matches and it has opened the tile of the next step, so that only
 * the executor's thread ever chooses and prunes tiles.
 */
void
gpujoin_step_ahead_start(GpuJoinState *gjs)
{
	GjStepAhead *ahead = &gjs->ahead;
	sigset_t	all_signals,
				old_signals;
	int			rc;

	Assert(!ahead->pending);
	Assert(gpujoin_step_ahead_possible(gjs) && gjs->tile_open);
	if (!gjs->double_buffered)
	{
		if (!gjs->backend->double_buffer(gjs->backend_state))
		{
			gjs->no_overlap = true;
			return;
		}
		gjs->double_buffered = true;
	}

	ahead->backend = gjs->backend;
	ahead->backend_state = gjs->backend_state;
	ahead->tile = gjs->tile;
	ahead->outer_next = gjs->outer_next;
	ahead->ok = false;
	memset(&ahead->matches, 0, sizeof(ahead->matches));
	memset(&ahead->stats, 0, sizeof(ahead->stats));
	memset(&ahead->err, 0, sizeof(ahead->err));
	ahead->run_ms = 0;
	ahead->pending = true;
	ahead->threaded = false;

	if (gpujoin_step_fault(&ahead->err))
		return;					/* collected as a failed step */

	if (!exit_callback_registered)
	{
		on_proc_exit(join_running_steps, (Datum) 0);
		exit_callback_registered = true;
	}
	step_guard_arm(&ahead->guards[0], ahead, gjs->outer_buf.cxt);
	step_guard_arm(&ahead->guards[1], ahead, gjs->inner_buf.cxt);
	/* a device partition's gathered keys (device_partitions.c) */
	if (gjs->partitions != NULL)
		step_guard_arm(&ahead->guards[2], ahead, gpujoin_partitions_keys_context(gjs));

	/* the thread inherits a mask blocking every signal */
	sigfillset(&all_signals);
	pthread_sigmask(SIG_SETMASK, &all_signals, &old_signals);
	rc = pthread_create(&ahead->thread, NULL, step_ahead_run, ahead);
	pthread_sigmask(SIG_SETMASK, &old_signals, NULL);
	if (rc != 0)
	{
		/* no thread (resource limits): the step runs now, without overlap */
		gjs->no_overlap = true;
		step_ahead_run(ahead);
		return;
	}
	ahead->threaded = true;
	dlist_push_tail(&running_steps, &ahead->node);
}

/*
 * The step started by gpujoin_step_ahead_start becomes the current one:
 * wait for it, take its matches, cursor and counters.  False if it failed:
 * the caller raises ahead.err (gpujoin_backend_error), as for a step run in
 * place.
 */
bool
gpujoin_step_ahead_collect(GpuJoinState *gjs)
{
	GjStepAhead *ahead = &gjs->ahead;
	instr_time	start,
				end;

	Assert(ahead->pending);
	/* counted here: a step abandoned by LIMIT or an ERROR is not shown */
	if (ahead->threaded)
		gjs->counters.steps_overlapped++;
	INSTR_TIME_SET_CURRENT(start);
	step_ahead_join(ahead);
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	gjs->counters.overlap_wait_ms += INSTR_TIME_GET_MILLISEC(end);
	ahead->pending = false;

	if (!ahead->ok)
		return false;
	gjs->counters.backend_ms += ahead->run_ms;
	gjs->counters.steps++;
	gpujoin_stats_add(&gjs->counters.stats, &ahead->stats);
	gjs->matches = ahead->matches;
	gjs->outer_next = ahead->outer_next;
	if (gjs->outer_next >= gjs->tile.outer_end)
		gjs->tile_open = false;
	return true;
}

/*
 * Abandon a started step (ERROR, rescan, end of the scan): wait for it and
 * drop its results, before the backend is released.
 */
void
gpujoin_step_ahead_cancel(GpuJoinState *gjs)
{
	step_ahead_join(&gjs->ahead);
	gjs->ahead.pending = false;
}

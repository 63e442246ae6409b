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
 * pairs work unchanged, and tile pruning asks the service.  Phase B of
 * docs/architecture.md, section 8: no aggregate steps (the executor then
 * reduces on the cpu backend in the backend process, as for any backend
 * without them) and no step overlap yet.
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

/* A join opened in the service, as its client holds it (malloc'd). */
typedef struct GjServiceJoinClient
{
	uint64		handle;
	uint64		generation;		/* of the service that opened it */
	char	   *chunk;
	uint32	   *result_outer;
	uint32	   *result_inner;
	int64		capacity;
	int32		algorithm;		/* GjAlgorithm of the join */
} GjServiceJoinClient;

/* Is the service running, ready for requests? */
bool
gpujoin_service_ready(void)
{
	bool		ready;

	if (gj_service == NULL || gj_service->staging_granules == 0)
		return false;
	SpinLockAcquire(&gj_service->mutex);
	ready = gj_service->service_latch != NULL &&
		gj_service->status.state == GJ_SERVICE_READY;
	SpinLockRelease(&gj_service->mutex);
	return ready;
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

int64
gj_service_max_matches(void)
{
	if (gj_service == NULL || gj_service->staging_granules == 0)
		return 0;
	return Max(Min((int64) gj_service->staging_granules * GJ_STAGING_GRANULE / 8 /
				   (2 * sizeof(uint32)), SERVICE_MAX_STEP_MATCHES), 1024);
}

static void
set_error(GjError *err, int code, const char *message)
{
	err->code = code;
	strlcpy(err->message, message, sizeof(err->message));
}

static GjServiceSlot *
my_slot(GjError *err)
{
	if (MyProc == NULL || MyProc->pgprocno >= gj_service->nslots)
	{
		set_error(err, GJ_ERR_UNAVAILABLE, "this process has no request slot of the GPU service");
		return NULL;
	}
	return &gj_service->slots[MyProc->pgprocno];
}

/*
 * Submit the request in slot and wait for the answer.  Fails when the
 * service is not running or stops (another generation answers nothing of
 * this one's).
 */
static bool
service_call(GjServiceSlot *slot, uint64 generation, GjError *err)
{
	Latch	   *service_latch;

	SpinLockAcquire(&gj_service->mutex);
	service_latch = gj_service->generation == generation ? gj_service->service_latch : NULL;
	SpinLockRelease(&gj_service->mutex);
	if (service_latch == NULL)
	{
		set_error(err, GJ_ERR_UNAVAILABLE, "the GPU service is not running");
		return false;
	}
	slot->client_pid = MyProcPid;
	slot->generation = generation;
	slot->ok = false;
	memset(&slot->stats, 0, sizeof(slot->stats));
	memset(&slot->err, 0, sizeof(slot->err));
	pg_write_barrier();
	slot->state = GJ_REQ_SUBMITTED;
	SetLatch(service_latch);

	for (;;)
	{
		bool		alive;

		if (slot->state == GJ_REQ_DONE)
			break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 100L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		if (slot->state == GJ_REQ_DONE)
			break;
		SpinLockAcquire(&gj_service->mutex);
		alive = gj_service->generation == generation && gj_service->service_latch != NULL;
		SpinLockRelease(&gj_service->mutex);
		if (!alive)
		{
			slot->state = GJ_REQ_IDLE;
			set_error(err, GJ_ERR_DEVICE, "the GPU service stopped while it ran this join");
			return false;
		}
	}
	pg_read_barrier();
	slot->state = GJ_REQ_IDLE;
	if (!slot->ok)
	{
		*err = slot->err;
		return false;
	}
	return true;
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

static Size
side_bytes(const GjKeyColumns *cols, int64 nrows)
{
	Size		size = 0;
	int			c;

	for (c = 0; c < cols->ncols; c++)
	{
		size += MAXALIGN(sizeof(int64) * nrows);
		if (cols->isnull[c] != NULL)
			size += MAXALIGN(nrows);
	}
	return size;
}

static void
put_side(char **at, GjKeyColumns *dst, const GjKeyColumns *src, int64 nrows)
{
	int			c;

	for (c = 0; c < src->ncols; c++)
	{
		dst->values[c] = put(at, src->values[c], sizeof(int64) * nrows);
		dst->isnull[c] = src->isnull[c] == NULL ? NULL : put(at, src->isnull[c], nrows);
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

static void *
service_begin_join(const GjJoinInput *input, GjError *err)
{
	GjServiceSlot *slot;
	GjServiceJoinClient *join;
	GjJoinInput *shared_input;
	uint64		generation;
	int64		capacity = Max(input->match_capacity, 1);
	Size		size;
	char	   *at;
	char	   *chunk;

	if (!gpujoin_service_ready())
	{
		set_error(err, GJ_ERR_UNAVAILABLE, "the GPU service is not running");
		return NULL;
	}
	if ((slot = my_slot(err)) == NULL)
		return NULL;
	SpinLockAcquire(&gj_service->mutex);
	generation = gj_service->generation;
	SpinLockRelease(&gj_service->mutex);

	size = MAXALIGN(sizeof(GjJoinInput)) + MAXALIGN(sizeof(GjInstr) * input->ninstrs) +
		side_bytes(&input->outer, input->outer_nrows) +
		side_bytes(&input->inner, input->inner_nrows) +
		2 * MAXALIGN(sizeof(uint32) * capacity);
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
		set_error(err, GJ_ERR_OUT_OF_MEMORY, "out of memory");
		return NULL;
	}
	join->chunk = chunk;
	at = join->chunk;
	shared_input = put(&at, input, sizeof(GjJoinInput));
	shared_input->instrs = put(&at, input->instrs, sizeof(GjInstr) * input->ninstrs);
	put_side(&at, &shared_input->outer, &input->outer, input->outer_nrows);
	put_side(&at, &shared_input->inner, &input->inner, input->inner_nrows);
	join->result_outer = (uint32 *) at;
	at += MAXALIGN(sizeof(uint32) * capacity);
	join->result_inner = (uint32 *) at;
	join->capacity = capacity;
	join->generation = generation;
	join->algorithm = input->algorithm;

	slot->op = GJ_OP_OPEN;
	slot->input = shared_input;
	/*
	 * gpujoin.debug_fault = service_bad_request: a request whose input lies
	 * outside the staging area (on the service's control block), for the
	 * test that the service refuses it (test/pgtap/service_faults.sql).
	 */
	if (gpujoin_debug_fault == GPUJOIN_FAULT_SERVICE_BAD_REQUEST)
		slot->input = (const GjJoinInput *) gj_service;
	if (!service_call(slot, generation, err))
	{
		gj_staging_free(join->chunk);
		free(join);
		return NULL;
	}
	join->handle = slot->join;
	return join;
}

static bool
service_run_step(void *state, const GjTile *tile, int64_t *outer_next,
				 GjMatches *matches, GjStats *stats, GjError *err)
{
	GjServiceJoinClient *join = state;
	GjServiceSlot *slot;

	if ((slot = my_slot(err)) == NULL)
		return false;
	slot->op = GJ_OP_STEP;
	slot->join = join->handle;
	slot->tile = *tile;
	slot->outer_next = *outer_next;	/* where the step starts */
	slot->result_outer = join->result_outer;
	slot->result_inner = join->result_inner;
	slot->result_capacity = join->capacity;
	if (!service_call(slot, join->generation, err))
		return false;
	*outer_next = slot->outer_next;
	matches->outer_rows = join->result_outer;
	matches->inner_rows = join->result_inner;
	matches->count = slot->nmatches;
	stats->pairs_evaluated += slot->stats.pairs_evaluated;
	stats->device_matches += slot->stats.device_matches;
	stats->bytes_to_device += slot->stats.bytes_to_device;
	stats->bytes_from_device += slot->stats.bytes_from_device;
	stats->kernel_ms += slot->stats.kernel_ms;
	stats->transfer_ms += slot->stats.transfer_ms;
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
	if ((slot = my_slot(&err)) == NULL)
		return true;
	slot->op = GJ_OP_TILE_CAN_MATCH;
	slot->join = join->handle;
	slot->tile = *tile;
	if (!service_call(slot, join->generation, &err))
		return true;
	return slot->can_match;
}

/*
 * Close the join in the service (if the service that opened it still
 * runs) and free the chunk.  Runs on ERROR too, from the executor's
 * memory-context callback.
 */
static void
service_end_join(void *state)
{
	GjServiceJoinClient *join = state;
	GjServiceSlot *slot;
	GjError		err;

	if (join == NULL)
		return;
	memset(&err, 0, sizeof(err));
	if ((slot = my_slot(&err)) != NULL)
	{
		slot->op = GJ_OP_CLOSE;
		slot->join = join->handle;
		(void) service_call(slot, join->generation, &err);
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
		.algorithms = (1u << GJ_ALGO_NESTLOOP) | (1u << GJ_ALGO_SORTMERGE) | (1u << GJ_ALGO_HASH), \
	}

const GjBackend gj_service_cpu_backend = SERVICE_BACKEND("cpu (service)");
const GjBackend gj_service_cuda_backend = SERVICE_BACKEND("cuda (service)");

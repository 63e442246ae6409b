/*-------------------------------------------------------------------------
 *
 * service_request.c
 *	  A client's round trip to the GPU service: whether the service is
 *	  ready, its generation, this process's request slot, and one request
 *	  submitted and waited for.
 *
 * Both kinds of client call these: the proxy backend (service_client.c)
 * and the shared inner sides' protocol (service_shared_join.c), which the
 * proxy asks in turn where an inner side already lies in shared memory.
 * The round trip is in a file of its own, below both, so that the calls
 * between the service's files go one way (test/check_layers.sh).
 *
 * A call waits on this process's latch, never processing interrupts: see
 * service_client.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/wait_event.h"

#include "gpujoin.h"
#include "service/service_shared.h"

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

/* The generation of the service running now (requests name it). */
uint64
gj_service_generation(void)
{
	uint64		generation;

	SpinLockAcquire(&gj_service->mutex);
	generation = gj_service->generation;
	SpinLockRelease(&gj_service->mutex);
	return generation;
}

/* Fill in a GjError (for the service client's calls, which never ereport). */
void
gj_service_set_error(GjError *err, int code, const char *message)
{
	err->code = code;
	strlcpy(err->message, message, sizeof(err->message));
}

/* This process's request slot: the one of its PGPROC. */
GjServiceSlot *
gj_service_my_slot(GjError *err)
{
	if (MyProc == NULL || MyProc->pgprocno >= gj_service->nslots)
	{
		gj_service_set_error(err, GJ_ERR_UNAVAILABLE, "this process has no request slot of the GPU service");
		return NULL;
	}
	return &gj_service->slots[MyProc->pgprocno];
}

/*
 * Submit the request in slot and wait for the answer.  Fails when the
 * service is not running or stops (another generation answers nothing of
 * this one's).
 */
bool
gj_service_call(GjServiceSlot *slot, uint64 generation, GjError *err)
{
	Latch	   *service_latch;

	SpinLockAcquire(&gj_service->mutex);
	service_latch = gj_service->generation == generation ? gj_service->service_latch : NULL;
	SpinLockRelease(&gj_service->mutex);
	if (service_latch == NULL)
	{
		gj_service_set_error(err, GJ_ERR_UNAVAILABLE, "the GPU service is not running");
		return false;
	}
	slot->client_pid = MyProcPid;
	slot->generation = generation;
	slot->ok = false;
	memset(&slot->stats, 0, sizeof(slot->stats));
	memset(&slot->err, 0, sizeof(slot->err));
	slot->submitted_ms = gj_clock_ms();
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
			gj_service_set_error(err, GJ_ERR_DEVICE, "the GPU service stopped while it ran this join");
			return false;
		}
	}
	pg_read_barrier();
	slot->stats.times.call_ms = Max(gj_clock_ms() - slot->submitted_ms, 0);
	slot->state = GJ_REQ_IDLE;
	if (!slot->ok)
	{
		*err = slot->err;
		return false;
	}
	return true;
}

/*-------------------------------------------------------------------------
 *
 * service_budget.c
 *	  The GPU service's device memory budget: one total for every join it
 *	  runs, which a join waits for instead of running out of memory.
 *
 * Without it, every join in the service took half of what the device had
 * free when it opened, so a few concurrent joins ran the device out of
 * memory and retried with smaller tiles, or fell back to the cpu backend.
 * Now the service owns the budget: gpujoin.service_device_memory per device
 * (or, at 0, nine tenths of what each device has free when the service
 * starts; no limit on the cpu backend), added over the service's devices,
 * is shared by every join.  Each join reserves its own budget
 * (gpujoin.device_memory, or half of the total) on each device it opens on
 * (a nested loop spread over k devices reserves k budgets, or spreads over
 * fewer) and gives it back when it closes, however it closes: by its
 * client, on ERROR, or in the sweep of a client that died.
 *
 * The reservation itself is the service's, per device
 * (gj_service_reserve_devices in service_devices.c, in the thread that
 * opens the join, under the control block's spinlock, on a device with room
 * in its share), so two clients can never both take the last of a device's
 * share, and uneven loads never ask a device for more than its share.  A
 * client first waits (gj_service_budget_wait) until one device has enough
 * free: at least a quarter of the budget it asked for.  It then takes what there is, up to its budget,
 * and plans smaller tiles if it has to: a join that does not fit waits or
 * runs smaller, it does not fail over to the cpu backend.  The wait is
 * bounded (10 s, as the staging area's) because a plan can hold budget in
 * one of its own joins while another of them waits; past the bound the
 * join runs on the cpu backend in the backend process, with a NOTICE.
 * EXPLAIN ANALYZE counts the wait in "Service Queue Time", and
 * gpujoin_devices() shows the budget, what is reserved and the joins
 * waiting for it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/latch.h"
#include "utils/wait_event.h"

#include "gpujoin.h"
#include "service/service_shared.h"

/* The longest a join waits for device memory before it runs on the cpu. */
#define BUDGET_WAIT_MS		10000.0

/*
 * The service's total, set when it has opened its devices: for each
 * device the setting, else nine tenths of what the device has free then
 * (the tenth left over is for the contexts, streams and the CUDA
 * libraries' own allocations), added over the devices; a cuda service's
 * pools keep that much of what joins free.  0 means no limit, the cpu
 * backend's default.
 */
void
gj_service_budget_init(void)
{
	int64		setting = (int64) gpujoin_service_device_memory_kb * 1024;
	int64		total = 0;
	bool		limited = true;
	int			d;

	for (d = 0; d < gj_service->ndevices; d++)
	{
		int64		free_memory = gj_service->devices[d].free_memory;
		int64		device_total;

		if (free_memory > 0)
			device_total = setting > 0 ? Min(setting, free_memory) : free_memory / 10 * 9;
		else
			device_total = setting;
		if (device_total == 0)
			limited = false;
		gj_service->devices[d].budget_share = device_total;
		if (gj_service->devices[d].total_memory > 0)
			gj_cuda_pool_retain(gj_service->devices[d].number, device_total);
		total += device_total;
	}
	SpinLockAcquire(&gj_service->mutex);
	gj_service->status.device_budget = limited ? total : 0;
	gj_service->status.device_reserved = 0;
	gj_service->status.joins_waiting = 0;
	SpinLockRelease(&gj_service->mutex);
}

/* The service's total, 0 for no limit. */
int64
gj_service_budget_total(void)
{
	int64		total;

	SpinLockAcquire(&gj_service->mutex);
	total = gj_service->status.device_budget;
	SpinLockRelease(&gj_service->mutex);
	return total;
}

/*
 * The most any one device has not reserved of its share (a join runs on
 * one; service_devices.c reserves it there), or -1 for no limit.
 */
static int64
budget_available(void)
{
	int64		left = -1;
	int			d;

	SpinLockAcquire(&gj_service->mutex);
	if (gj_service->status.device_budget > 0)
	{
		left = 0;
		for (d = 0; d < gj_service->ndevices; d++)
			left = Max(left, gj_service->devices[d].budget_share -
					   gj_service->devices[d].memory_in_use);
	}
	SpinLockRelease(&gj_service->mutex);
	return left;
}

static void
count_waiting(int delta)
{
	SpinLockAcquire(&gj_service->mutex);
	gj_service->status.joins_waiting += delta;
	SpinLockRelease(&gj_service->mutex);
}

/*
 * In the client, before it opens a join of this budget in the service:
 * the budget to open it with, once the service has at least a quarter of
 * it (and min_budget) free, and never more than the total; 0 when none
 * came within the bound (*deadline_ms, the milliseconds the join may still
 * wait, shared by its retries).  Adds the time waited to *waited_ms.
 * Cancellable: a cancel or statement_timeout ends the wait with its ERROR.
 */
int64
gj_service_budget_wait(int64 budget, int64 min_budget, double *deadline_ms, double *waited_ms)
{
	int64		total = gj_service_budget_total();
	int64		share = 0;
	int64		want;
	int			d;
	int64		left;
	instr_time	start,
				now;
	double		waited = 0;

	/* a join's budget is on one device: at most the largest share */
	for (d = 0; d < gj_service->ndevices; d++)
		share = Max(share, gj_service->devices[d].budget_share);
	if (total > 0 && share > 0)
		budget = Min(budget, share);
	want = Max(Min(budget, min_budget), budget / 4);
	left = budget_available();
	if (left < 0 || left >= want)
		return left < 0 ? budget : Min(budget, left);
	if (*deadline_ms <= 0)
		return 0;

	INSTR_TIME_SET_CURRENT(start);
	count_waiting(1);
	PG_TRY();
	{
		for (;;)
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 5L, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
			left = budget_available();
			INSTR_TIME_SET_CURRENT(now);
			INSTR_TIME_SUBTRACT(now, start);
			waited = INSTR_TIME_GET_MILLISEC(now);
			if (left < 0 || left >= want || waited >= *deadline_ms || !gpujoin_service_ready())
				break;
		}
	}
	PG_FINALLY();
	{
		count_waiting(-1);
	}
	PG_END_TRY();
	*deadline_ms -= waited;
	*waited_ms += waited;
	if (left < 0)
		return budget;
	return left >= want ? Min(budget, left) : 0;
}

/* The bound on a join's wait for device memory, in milliseconds. */
double
gj_service_budget_wait_bound(void)
{
	return BUDGET_WAIT_MS;
}

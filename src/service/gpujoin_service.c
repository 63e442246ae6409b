/*-------------------------------------------------------------------------
 *
 * gpujoin_service.c
 *	  The GPU service process (docs/architecture.md, section 8): a
 *	  background worker, registered when gpujoin is in
 *	  shared_preload_libraries and gpujoin.service is on, that opens the
 *	  backend named by gpujoin.service_backend once and keeps it.
 *
 * This is phase A of the design: the process, its control block in shared
 * memory, its life cycle (start, "no device" exit, restart by the
 * postmaster after a failure) and what gpujoin_devices() shows of it.
 * Joins do not run in it yet; the control block already carries the fields
 * the request protocol of phase B fills (memory in use, joins queued and
 * running), so that the SQL surface does not change when they do.
 *
 * Why a background worker and not a thread of the postmaster: CUDA does
 * not survive fork, and the postmaster must never open it; a worker is a
 * PostgreSQL process (signals, latch, server log, pg_stat_activity) that
 * the postmaster restarts when it fails.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/wait_event.h"

#include "gpujoin.h"
#include "service/gpujoin_service.h"

/*
 * The control block: one per cluster, in the main shared memory.  mutex
 * guards every field; the service writes them, backends read a copy.
 */
typedef struct GjServiceShared
{
	slock_t		mutex;
	GjServiceStatus status;
} GjServiceShared;

static GjServiceShared *gj_service = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* Seconds the postmaster waits before restarting a service that failed. */
#define GJ_SERVICE_RESTART_SECONDS 1

static void
service_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(GjServiceShared)));
}

static void
service_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	gj_service = ShmemInitStruct("gpujoin service", sizeof(GjServiceShared), &found);
	if (!found)
	{
		memset(gj_service, 0, sizeof(GjServiceShared));
		SpinLockInit(&gj_service->mutex);
		gj_service->status.preloaded = true;
		gj_service->status.enabled = gpujoin_service_enabled;
		gj_service->status.backend = gpujoin_service_backend;
		gj_service->status.state = GJ_SERVICE_NOT_STARTED;
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * From _PG_init, after the GUCs are defined: in the postmaster loading
 * shared_preload_libraries, reserve the control block and register the
 * worker.  Elsewhere (a LOAD in one session) there is no service.
 */
void
gpujoin_service_init(void)
{
	BackgroundWorker worker;

	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = service_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = service_shmem_startup;
	if (!gpujoin_service_enabled)
		return;

	memset(&worker, 0, sizeof(worker));
	/*
	 * A connection to no database: only such a worker has an entry in
	 * pg_stat_activity (as the logical replication launcher has).
	 */
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	/* a hot standby runs GpuJoins too */
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = GJ_SERVICE_RESTART_SECONDS;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "gpujoin");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "gpujoin_service_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "gpujoin service");
	snprintf(worker.bgw_type, BGW_MAXLEN, "gpujoin service");
	RegisterBackgroundWorker(&worker);
}

/* A copy of the service's state, for gpujoin_devices(). */
void
gpujoin_service_status(GjServiceStatus *status)
{
	memset(status, 0, sizeof(GjServiceStatus));
	if (gj_service == NULL)
	{
		status->enabled = gpujoin_service_enabled;
		return;
	}
	SpinLockAcquire(&gj_service->mutex);
	*status = gj_service->status;
	SpinLockRelease(&gj_service->mutex);
}

const char *
gpujoin_service_state_name(GjServiceState state)
{
	switch (state)
	{
		case GJ_SERVICE_NOT_STARTED:
			return "not started";
		case GJ_SERVICE_STARTING:
			return "starting";
		case GJ_SERVICE_READY:
			return "ready";
		case GJ_SERVICE_NO_DEVICE:
			return "no device";
		case GJ_SERVICE_STOPPED:
			return "stopped";
	}
	return "unknown";
}

static void
set_state(GjServiceState state, const char *message)
{
	SpinLockAcquire(&gj_service->mutex);
	gj_service->status.state = state;
	if (message != NULL)
		strlcpy(gj_service->status.message, message, sizeof(gj_service->status.message));
	SpinLockRelease(&gj_service->mutex);
}

/*
 * The process exits (FATAL after SIGTERM, or the end of a "no device"
 * start): the state says so until the next start.
 */
static void
service_exit(int code, Datum arg)
{
	SpinLockAcquire(&gj_service->mutex);
	gj_service->status.pid = 0;
	gj_service->status.joins_running = 0;
	gj_service->status.memory_in_use = 0;
	if (gj_service->status.state != GJ_SERVICE_NO_DEVICE)
		gj_service->status.state = GJ_SERVICE_STOPPED;
	SpinLockRelease(&gj_service->mutex);
}

/*
 * Open the backend the service runs.  Returns false, with the reason in
 * message, when gpujoin.service_backend is cuda and no GPU is usable.
 */
static bool
open_backend(char *message, size_t len)
{
	GjDeviceInfo info;
	GjError		err;

	if (gpujoin_service_backend == GJ_SERVICE_BACKEND_CPU)
	{
		SpinLockAcquire(&gj_service->mutex);
		strlcpy(gj_service->status.device_name, "host processor",
				sizeof(gj_service->status.device_name));
		gj_service->status.total_memory = 0;
		gj_service->status.free_memory = 0;
		SpinLockRelease(&gj_service->mutex);
		return true;
	}
	memset(&info, 0, sizeof(info));
	memset(&err, 0, sizeof(err));
	if (!gj_cuda_probe(&info, &err))
	{
		strlcpy(message, err.message, len);
		return false;
	}
	SpinLockAcquire(&gj_service->mutex);
	strlcpy(gj_service->status.device_name, info.name, sizeof(gj_service->status.device_name));
	gj_service->status.total_memory = info.total_memory;
	gj_service->status.free_memory = info.free_memory;
	SpinLockRelease(&gj_service->mutex);
	return true;
}

void
gpujoin_service_main(Datum main_arg)
{
	char		message[256];

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	if (gj_service == NULL)
		ereport(FATAL,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("gpujoin service started without its shared memory")));
	SpinLockAcquire(&gj_service->mutex);
	gj_service->status.pid = MyProcPid;
	gj_service->status.starts++;
	gj_service->status.backend = gpujoin_service_backend;
	gj_service->status.state = GJ_SERVICE_STARTING;
	gj_service->status.message[0] = '\0';
	SpinLockRelease(&gj_service->mutex);
	before_shmem_exit(service_exit, (Datum) 0);

	if (!open_backend(message, sizeof(message)))
	{
		set_state(GJ_SERVICE_NO_DEVICE, message);
		ereport(LOG,
				(errmsg("gpujoin service: no usable GPU, the service stops and backends run GpuJoin themselves"),
				 errdetail("%s", message),
				 errhint("Set gpujoin.service_backend to \"cpu\" to run the service without a GPU, or gpujoin.service to \"off\".")));
		/* status 0: the postmaster does not restart the worker */
		proc_exit(0);
	}
	set_state(GJ_SERVICE_READY, NULL);
	ereport(LOG,
			(errmsg("gpujoin service ready on the %s backend",
					gpujoin_service_backend == GJ_SERVICE_BACKEND_CPU ? "cpu" : "cuda")));

	for (;;)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 1000L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
	}
}

/*-------------------------------------------------------------------------
 *
 * gpujoin_service.c
 *	  The GPU service process (docs/architecture.md, section 8): a
 *	  background worker, registered when gpujoin is in
 *	  shared_preload_libraries and gpujoin.service is on, that opens the
 *	  backend named by gpujoin.service_backend once and keeps it.
 *
 * The process, its control block, request slots and staging area in
 * shared memory (service_shared.h), its life cycle (start, "no device"
 * exit, restart by the postmaster after a failure), what gpujoin_devices()
 * shows of it, and the service's side of the requests of clients that run
 * a join in it (the client side is service_client.c): open a join on the
 * service's backend, on one of its devices or, for a nested loop, on each
 * (service_devices.c), run its steps (pieces of them on several devices at
 * once) or its aggregate steps, finish its aggregates, close it.  The main thread hands submitted requests to the
 * worker threads (service_workers.c), which serve them with nothing of
 * PostgreSQL but spinlocks, barriers and SetLatch; a step is bounded in
 * work, so a waiting client waits at most a few steps of others.
 *
 * Every pointer of a request is checked against the staging chunks its
 * client owns before it is followed, and every program against the columns
 * it loads and the interpreter's stack; what the client could change under
 * a running join and whose values index memory (an aggregate spec's pair
 * programs and group numbers, each checked below the spec's groups) is
 * copied into the service's own memory, as the backends copy the join's
 * program (the checks and copies are service_validate.c's).  The partials
 * an aggregate step writes stay in the client's chunk and are checked
 * again at every step.  Once a second, the service
 * closes the joins and frees the chunks of clients that are gone.
 *
 * Why a background worker and not a thread of the postmaster: CUDA does
 * not survive fork, and the postmaster must never open it; a worker is a
 * PostgreSQL process (signals, latch, server log, pg_stat_activity) that
 * the postmaster restarts when it fails.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "port/atomics.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "gpujoin.h"
#include "service/gpujoin_service.h"
#include "service/service_shared.h"
#include "service/service_validate.h"

GjServiceShared *gj_service = NULL;

/* The joins open in the service, in its own memory. */
#define GJ_SERVICE_MAX_JOINS	64

typedef struct ServiceJoin
{
	bool		in_use;
	bool		busy;			/* a worker serves a request of it */
	bool		opening;		/* busy, opened in the background after its
								 * OPEN was answered (open_in_background) */
	int			owner_pid;
	uint64		handle;			/* sequence << 8 | index */
	GjJoinInput input;			/* the validated copy the backend reads */
	ServiceAgg *agg;			/* NULL: no aggregate steps */
	GjDeviceJoin *devices;		/* the backend's states, one per device */
	uint64		shared_inner;	/* 0, or the shared inner side it reads */
} ServiceJoin;

static ServiceJoin service_joins[GJ_SERVICE_MAX_JOINS];
static uint64 service_join_seq = 0;

/*
 * The joins table is shared by the worker threads (service_workers.c) and
 * the main thread's sweep: joins_lock guards in_use, busy, owner_pid and
 * handle.  A join's state is used by one thread at a time: the worker that
 * marked it busy (its client has one request at a time), or the sweep,
 * which takes only joins that are not busy.  Besides the backend, the
 * workers call only SetLatch, spinlocks and barriers of PostgreSQL: nothing
 * that could ereport.
 */
static pthread_mutex_t joins_lock = PTHREAD_MUTEX_INITIALIZER;
/* signalled when a join opened in the background is open, or failed to */
static pthread_cond_t joins_opened = PTHREAD_COND_INITIALIZER;
static __thread ServiceJoin *current_join = NULL;
static pg_atomic_uint64 served;	/* joins opened, for the status */
static const GjBackend *service_backend = NULL;
static uint64 service_generation = 0;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void pin_staging(void);
static void refresh_free_memory(void);

/* Seconds the postmaster waits before restarting a service that failed. */
#define GJ_SERVICE_RESTART_SECONDS 1

/*
 * Does this machine have an NVIDIA GPU?  Only the driver's control device is
 * looked at, once per process; nothing is opened.  Here in
 * the service's room because the service decides on it whether to start;
 * the planner (gpujoin_plans_for_cpu) asks it from above.
 */
bool
gpujoin_nvidia_driver_present(void)
{
	static int	exists = -1;

	if (exists < 0)
		exists = (access("/dev/nvidiactl", F_OK) == 0) ? 1 : 0;
	return exists == 1;
}

/*
 * Does the service run on this server?  gpujoin.service on, and for the
 * cuda backend an NVIDIA driver installed (its control device exists;
 * nothing is opened in the postmaster): on by default must cost a server
 * without a GPU neither a process nor the staging memory.
 */
static bool
service_wanted(void)
{
	return gpujoin_service_enabled &&
		(gpujoin_service_backend == GJ_SERVICE_BACKEND_CPU || gpujoin_nvidia_driver_present());
}

/* Staging granules: none unless the service runs. */
static int32
staging_granules(void)
{
	if (!service_wanted())
		return 0;
	return (int32) Max((int64) gpujoin_service_staging_memory_mb * 1024 * 1024 /
					   (int64) GJ_STAGING_GRANULE, 1);
}

static Size
service_shmem_size(void)
{
	return add_size(MAXALIGN(sizeof(GjServiceShared)),
					gj_staging_shmem_size(MaxBackends, staging_granules()));
}

static void
service_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(service_shmem_size());
}

static void
service_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	gj_service = ShmemInitStruct("gpujoin service", service_shmem_size(), &found);
	if (!found)
	{
		memset(gj_service, 0, sizeof(GjServiceShared));
		gj_staging_shmem_init(gj_service, (char *) gj_service + MAXALIGN(sizeof(GjServiceShared)),
							  MaxBackends, staging_granules());
		SpinLockInit(&gj_service->mutex);
		gj_service->status.preloaded = true;
		gj_service->status.enabled = gpujoin_service_enabled;
		gj_service->status.backend = gpujoin_service_backend;
		gj_service->status.state = GJ_SERVICE_NOT_STARTED;
		if (gpujoin_service_enabled && !service_wanted())
		{
			gj_service->status.state = GJ_SERVICE_NO_DEVICE;
			strlcpy(gj_service->status.message, "no NVIDIA driver is installed (no /dev/nvidiactl)",
					sizeof(gj_service->status.message));
		}
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
	if (!service_wanted())
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
	int			i;

	memset(status, 0, sizeof(GjServiceStatus));
	if (gj_service == NULL)
	{
		status->enabled = gpujoin_service_enabled;
		return;
	}
	SpinLockAcquire(&gj_service->mutex);
	*status = gj_service->status;
	SpinLockRelease(&gj_service->mutex);
	/* queued: requests submitted and not yet answered (those running included) */
	status->joins_queued = 0;
	for (i = 0; i < gj_service->nslots; i++)
		status->joins_queued += gj_service->slots[i].state == GJ_REQ_SUBMITTED ||
			gj_service->slots[i].state == GJ_REQ_RUNNING;
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
	int			j;

	/* the workers finish the requests they run (a step is bounded) */
	gj_service_workers_stop();
	/* then the device helpers, which the workers' requests waited for */
	gj_service_devices_stop_helpers();
	/* the clients' chunks stay theirs: they free them when their calls fail */
	for (j = 0; j < GJ_SERVICE_MAX_JOINS; j++)
		if (service_joins[j].in_use && service_backend != NULL)
			gj_device_join_end(service_joins[j].devices);
	/*
	 * The shared inner sides' chunks go to their queries' leaders, who may
	 * still read their rows and free them when their Gathers are done; one
	 * with no live leader stays this pid's, for the next service's sweep of
	 * dead owners.
	 */
	gj_service_shared_inners_orphan();
	SpinLockAcquire(&gj_service->mutex);
	gj_service->service_latch = NULL;
	gj_service->ndevices = 0;
	gj_service->status.pid = 0;
	gj_service->status.joins_running = 0;
	if (gj_service->status.state != GJ_SERVICE_NO_DEVICE)
		gj_service->status.state = GJ_SERVICE_STOPPED;
	SpinLockRelease(&gj_service->mutex);
}

/*
 * The last of a process's exit callbacks that used the cuda backend: wait
 * for its programs still compiling in the background (a query that ended,
 * or was cancelled, while its program compiled), before exit() runs the
 * libraries' destructors (gj_cuda_wait_for_compiles).
 */
static void
wait_for_compiles_at_exit(int code, Datum arg)
{
	gj_cuda_wait_for_compiles();
}

/* Register it once in this process (on_proc_exit: the callbacks' last stage). */
void
gpujoin_cuda_exit_hook(void)
{
	static pid_t registered_pid = 0;

	if (registered_pid == MyProcPid)
		return;
	registered_pid = MyProcPid;
	on_proc_exit(wait_for_compiles_at_exit, (Datum) 0);
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
		service_backend = &gj_cpu_backend;
		/* gpujoin.service_simulated_devices of them */
		if (!gj_service_devices_open(service_backend, message, len))
			return false;
		gj_service_budget_init();
		return true;
	}
	memset(&info, 0, sizeof(info));
	memset(&err, 0, sizeof(err));
	if (!gj_cuda_probe(&info, &err))
	{
		strlcpy(message, err.message, len);
		return false;
	}
	service_backend = &gj_cuda_backend;
	/* every visible GPU that gpujoin.devices allows, a context each */
	if (!gj_service_devices_open(service_backend, message, len))
		return false;
	gj_service_budget_init();
	pin_staging();
	return true;
}

/*
 * Pin the whole staging area for DMA, once: the clients' columns then
 * travel to the device straight from where they wrote them, at the bus's
 * speed, with no cudaHostRegister per query.  Pinning 512MB takes a moment
 * at start.  If it fails (a locked-memory limit), the copies still work,
 * through the driver's bounce buffer: a LOG says so, nothing else changes.
 */
static void
pin_staging(void)
{
	GjError		err;
	TimestampTz start = GetCurrentTimestamp();
	long		secs;
	int			usecs;
	bool		pinned;

	memset(&err, 0, sizeof(err));
	pinned = gj_cuda_pin_host(gj_service->staging,
							  (size_t) gj_service->staging_granules * GJ_STAGING_GRANULE, &err);
	TimestampDifference(start, GetCurrentTimestamp(), &secs, &usecs);
	if (pinned)
		ereport(LOG,
				(errmsg("gpujoin service: pinned %d MB of staging memory for DMA in %ld ms",
						gj_service->staging_granules, secs * 1000 + usecs / 1000)));
	else
		ereport(LOG,
				(errmsg("gpujoin service: the staging memory is not pinned; copies to the device go through the driver's buffers"),
				 errdetail("%s", err.message)));
	SpinLockAcquire(&gj_service->mutex);
	gj_service->status.staging_pinned = pinned;
	SpinLockRelease(&gj_service->mutex);
}

/* The devices' free memory after a join opened or closed (cuda only). */
static void
refresh_free_memory(void)
{
	gj_service_devices_refresh();
}

static void
fail(GjServiceSlot *slot, int code, const char *message)
{
	slot->ok = false;
	slot->err.code = code;
	strlcpy(slot->err.message, message, sizeof(slot->err.message));
}

/*
 * The status after a join opened or closed, before its client hears of it
 * (so that what gpujoin_devices() shows next is up to date).  Called by the
 * workers: the spinlock and the probe (which has its own lock) are safe in
 * a thread.
 */
static void
update_join_count(void)
{
	int			j,
				n = 0;

	pthread_mutex_lock(&joins_lock);
	for (j = 0; j < GJ_SERVICE_MAX_JOINS; j++)
		n += service_joins[j].in_use;
	pthread_mutex_unlock(&joins_lock);
	SpinLockAcquire(&gj_service->mutex);
	gj_service->status.joins_running = n;
	gj_service->status.joins_served = (int64) pg_atomic_read_u64(&served);
	SpinLockRelease(&gj_service->mutex);
	refresh_free_memory();
}

/* End a join its thread holds (busy): its entry becomes free. */
static void
close_join(ServiceJoin *join)
{
	gj_device_join_end(join->devices);
	gj_service_free_agg(join->agg);
	/* after end_join: the backend no longer reads the shared inner side */
	if (join->shared_inner != 0)
		gj_service_shared_inner_unref(join->shared_inner);
	pthread_mutex_lock(&joins_lock);
	join->devices = NULL;
	join->agg = NULL;
	join->shared_inner = 0;
	join->in_use = false;
	join->busy = false;
	pthread_mutex_unlock(&joins_lock);
	if (current_join == join)
		current_join = NULL;
	update_join_count();
}

/* Answer the request in the slot: its client wakes and may reuse the slot. */
static void
answer(GjServiceSlot *slot, PGPROC *proc)
{
	pg_write_barrier();
	slot->state = GJ_REQ_DONE;
	SetLatch(&proc->procLatch);
}

/*
 * An OPEN with open_in_background, checked and its device memory reserved:
 * the join gets its handle and the client its answer at once, and this
 * thread then opens it (copies its keys to the device, sorts or hashes
 * them) while the client goes on, for example with the steps of another
 * of its joins: a device partition's next piece (device_partitions.c)
 * opens, on whichever device has room, while the current one runs.  The
 * join stays busy meanwhile, so the sweep leaves it alone and the client's
 * next request on it waits in find_join.  An open that fails frees the
 * entry, as a failed OPEN does: that request then finds no such join, and
 * the client opens the piece again in the ordinary way.  Nothing here
 * touches the slot after the answer.
 */
static void
open_in_background(GjServiceSlot *slot, PGPROC *proc, ServiceJoin *join, ServiceAgg *agg,
				   int *devices, int ndevices)
{
	GjError		err;
	uint64		shared_inner = join->shared_inner;
	bool		fault = slot->open_fault;

	pthread_mutex_lock(&joins_lock);
	join->agg = agg;
	join->handle = (++service_join_seq << 8) | (uint64) (join - service_joins);
	join->opening = true;
	pthread_mutex_unlock(&joins_lock);
	slot->join = join->handle;
	slot->ndevices = 1;
	slot->ok = true;
	answer(slot, proc);

	memset(&err, 0, sizeof(err));
	if (fault)
	{
		/* as gj_device_join_begin fails: the reservations given back */
		gj_service_release_devices(join->input.budget_bytes, devices, ndevices);
		err.code = GJ_ERR_DEVICE;
		strlcpy(err.message, "injected fault (gpujoin.debug_fault = ahead_open_fails)",
				sizeof(err.message));
		join->devices = NULL;
	}
	else
		join->devices = gj_device_join_begin(&join->input, devices, ndevices, &err);
	pthread_mutex_lock(&joins_lock);
	join->opening = false;
	join->busy = false;
	if (join->devices == NULL)
	{
		join->in_use = false;
		join->handle = 0;
		join->agg = NULL;
		join->shared_inner = 0;
	}
	pthread_cond_broadcast(&joins_opened);
	pthread_mutex_unlock(&joins_lock);
	if (join->devices == NULL)
	{
		elog(DEBUG1, "gpujoin service: a join opened in the background failed: %s", err.message);
		gj_service_free_agg(agg);
		if (shared_inner != 0)
			gj_service_shared_inner_unref(shared_inner);
	}
	else
		pg_atomic_fetch_add_u64(&served, 1);
	update_join_count();
}

static bool
handle_open(GjServiceSlot *slot, int pid, PGPROC *proc)
{
	ServiceJoin *join = NULL;
	ServiceAgg *agg = NULL;
	GjJoinInput in;
	int			ndevices;
	int			devices[GJ_MAX_DEVICES];
	uint64		shared_inner = slot->shared_inner;
	double		checks_start = gj_clock_ms();
	int			j;

	if (!gj_staging_owned_by(slot->input, sizeof(GjJoinInput), pid))
	{
		fail(slot, GJ_ERR_DEVICE, "the GPU service refused a request: its join input lies outside the client's staging chunks");
		return false;
	}
	in = *slot->input;
	/* a pointer into the service's own memory is never the client's to give */
	in.prepared_inner = NULL;
	if (in.ninstrs < 0 || in.ninstrs > GJ_MAX_INSTRS ||
		!gj_staging_owned_by(in.instrs, sizeof(GjInstr) * in.ninstrs, pid) ||
		!gj_service_side_valid(&in.outer, in.outer_nrows, pid, NULL) ||
		(shared_inner == 0 && !gj_service_side_valid(&in.inner, in.inner_nrows, pid, NULL)) ||
		in.match_capacity < 0 || in.algorithm < 0 || in.algorithm > GJ_ALGO_HASH ||
		!(service_backend->algorithms & (1u << in.algorithm)) ||
		!gj_service_join_specs_valid(&in))
	{
		fail(slot, GJ_ERR_DEVICE, "the GPU service refused a request: an offset, size, program or algorithm of the join is invalid");
		return false;
	}

	/*
	 * A shared inner side: the client must be attached to it, and every
	 * inner column lie in its chunk; the join holds a reference to it until
	 * it closes (service_shared_join.c).
	 */
	if (shared_inner != 0 &&
		!gj_service_shared_inner_ref(shared_inner, pid, &in.inner, in.inner_nrows))
	{
		fail(slot, GJ_ERR_DEVICE, "the GPU service refused a request: the join's inner side is not in a shared inner side this client is attached to");
		return false;
	}
	if (in.agg_spec != NULL)
	{
		const char *why;
		GjSharedInnerChunk shared;

		if (service_backend->agg_step == NULL)
		{
			fail(slot, GJ_ERR_DEVICE, "the GPU service's backend has no aggregate steps");
			if (shared_inner != 0)
				gj_service_shared_inner_unref(shared_inner);
			return false;
		}
		agg = gj_service_agg_from_request(&in, slot->agg_partial, pid,
										  shared_inner != 0 &&
										  gj_service_shared_inner_chunk(shared_inner, &shared) ?
										  &shared : NULL, &why);
		if (agg == NULL)
		{
			char		message[256];

			snprintf(message, sizeof(message), "the GPU service refused a request: %s", why);
			fail(slot, GJ_ERR_DEVICE, message);
			if (shared_inner != 0)
				gj_service_shared_inner_unref(shared_inner);
			return false;
		}
		in.agg_spec = &agg->spec;
	}
	slot->stats.times.checks_ms = gj_clock_ms() - checks_start;
	pthread_mutex_lock(&joins_lock);
	for (j = 0; j < GJ_SERVICE_MAX_JOINS; j++)
		if (!service_joins[j].in_use)
		{
			join = &service_joins[j];
			/* taken, busy and with no handle until it is open */
			join->in_use = true;
			join->busy = true;
			join->opening = false;
			join->handle = 0;
			join->owner_pid = pid;
			break;
		}
	pthread_mutex_unlock(&joins_lock);
	if (join == NULL)
	{
		gj_service_free_agg(agg);
		if (shared_inner != 0)
			gj_service_shared_inner_unref(shared_inner);
		fail(slot, GJ_ERR_OUT_OF_MEMORY, "the GPU service runs as many joins as it can hold");
		return false;
	}
	/*
	 * The budget is reserved before the backend allocates it, on each device
	 * the join opens on, each chosen with room for it (service_devices.c): a
	 * nested loop spread over k devices takes its budget on each, and runs
	 * on fewer when fewer have room; none with room and the client waits.
	 */
	ndevices = in.algorithm == GJ_ALGO_NESTLOOP ?
		Max(Min(slot->ndevices, gj_service->ndevices), 1) : 1;
	ndevices = gj_service_reserve_devices(in.budget_bytes, ndevices, devices);
	if (ndevices == 0)
	{
		pthread_mutex_lock(&joins_lock);
		join->in_use = false;
		join->busy = false;
		pthread_mutex_unlock(&joins_lock);
		gj_service_free_agg(agg);
		if (shared_inner != 0)
			gj_service_shared_inner_unref(shared_inner);
		fail(slot, GJ_ERR_BUSY, "the GPU service's device memory is reserved by other joins");
		return false;
	}
	join->input = in;
	join->shared_inner = shared_inner;
	/*
	 * The shared inner side sorted or hashed once for all its joins, on the
	 * device this join opens on (its first): the cuda backend prepares it on
	 * input.device, and a later join that opens on another device sorts its
	 * inner side itself.
	 */
	if (shared_inner != 0)
	{
		join->input.device = gj_service->devices[devices[0]].number;
		join->input.prepared_inner =
			gj_service_shared_inner_prepared(shared_inner, &join->input, service_backend,
											 &slot->stats.times);
	}
	if (slot->open_in_background && in.algorithm != GJ_ALGO_NESTLOOP)
	{
		open_in_background(slot, proc, join, agg, devices, ndevices);
		return true;
	}
	/* on the devices reserved, which give back what they do not open */
	join->devices = gj_device_join_begin(&join->input, devices, ndevices, &slot->err);
	pthread_mutex_lock(&joins_lock);
	if (join->devices == NULL)
	{
		join->in_use = false;
		join->busy = false;
		join->shared_inner = 0;
		pthread_mutex_unlock(&joins_lock);
		gj_service_free_agg(agg);
		if (shared_inner != 0)
			gj_service_shared_inner_unref(shared_inner);
		slot->ok = false;
		return false;
	}
	join->agg = agg;
	join->handle = (++service_join_seq << 8) | (uint64) (join - service_joins);
	join->busy = false;
	pthread_mutex_unlock(&joins_lock);
	pg_atomic_fetch_add_u64(&served, 1);
	slot->join = join->handle;
	slot->ndevices = join->devices->ndevices;
	slot->ok = true;
	update_join_count();
	return false;
}

/*
 * The client's join named by the slot's handle, or NULL.  It stays busy,
 * this thread's, until the request is answered (serve_request).
 */
static ServiceJoin *
find_join(GjServiceSlot *slot, int pid)
{
	uint64		index = slot->join & 0xff;
	ServiceJoin *join = index < GJ_SERVICE_MAX_JOINS ? &service_joins[index] : NULL;
	bool		found;

	if (join != NULL)
	{
		pthread_mutex_lock(&joins_lock);
		/* a join opened in the background: its next request waits for it */
		while (join->in_use && join->opening && join->handle == slot->join &&
			   join->owner_pid == pid)
			pthread_cond_wait(&joins_opened, &joins_lock);
		found = join->in_use && !join->busy && join->handle != 0 &&
			join->handle == slot->join && join->owner_pid == pid;
		if (found)
			join->busy = true;
		pthread_mutex_unlock(&joins_lock);
		if (!found)
			join = NULL;
	}
	if (join == NULL)
	{
		fail(slot, GJ_ERR_DEVICE, "the GPU service refused a request: no such join of this client");
		return NULL;
	}
	current_join = join;
	return join;
}

/*
 * A STEP or an AGG_STEP: its pieces of the tile, checked (each inside the
 * tile's outer rows, its result buffers in the client's chunks), run at
 * once on the join's devices (with the join's aggregates for an AGG_STEP),
 * each piece's matches copied into its buffers.
 */
static void
handle_step(GjServiceSlot *slot, int pid, bool aggregate)
{
	ServiceJoin *join = find_join(slot, pid);
	GjTile		tile = slot->tile;
	int64		capacity = slot->result_capacity;
	int32		npieces = slot->npieces;
	GjStepPiece pieces[GJ_MAX_DEVICES];
	int			k;

	if (join == NULL)
		return;
	if (tile.outer_begin < 0 || tile.outer_end > join->input.outer_nrows ||
		tile.outer_begin > tile.outer_end ||
		tile.inner_begin < 0 || tile.inner_end > join->input.inner_nrows ||
		tile.inner_begin > tile.inner_end || capacity < 0 ||
		npieces < 1 || npieces > join->devices->ndevices)
	{
		fail(slot, GJ_ERR_DEVICE, "the GPU service refused a request: a tile or result buffer of the step is invalid");
		return;
	}
	/* what the checks pass is what runs: the client may write its slot meanwhile */
	memcpy(pieces, slot->pieces, sizeof(GjStepPiece) * npieces);
	for (k = 0; k < npieces; k++)
	{
		GjStepPiece *p = &pieces[k];

		if (p->outer_begin < tile.outer_begin || p->outer_end > tile.outer_end ||
			p->outer_begin > p->outer_end ||
			!gj_staging_owned_by(p->result_outer, sizeof(uint32) * capacity, pid) ||
			!gj_staging_owned_by(p->result_inner, sizeof(uint32) * capacity, pid))
		{
			fail(slot, GJ_ERR_DEVICE, "the GPU service refused a request: a tile or result buffer of the step is invalid");
			return;
		}
		p->outer_next = p->outer_begin;
		p->nmatches = 0;
	}
	if (aggregate && (join->agg == NULL || join->agg->finished || !gj_service_partials_owned(join->agg, pid)))
	{
		fail(slot, GJ_ERR_DEVICE, "the GPU service refused a request: an aggregate step of a join without aggregates, or whose partials are gone");
		return;
	}
	if (!gj_device_join_steps(join->devices, &tile, pieces, npieces, capacity,
							  aggregate ? &join->agg->spec : NULL,
							  aggregate ? &join->agg->partial : NULL,
							  &slot->stats, &slot->err))
	{
		slot->ok = false;
		return;
	}
	memcpy(slot->pieces, pieces, sizeof(GjStepPiece) * npieces);
	slot->ok = true;
}

/*
 * After the join's last aggregate step: what the backend still holds (the
 * cuda backend's device accumulators) into the partials, and their totals
 * without groups into the client's partial (the groups' are in its chunk
 * already).
 */
static void
handle_agg_finish(GjServiceSlot *slot, int pid)
{
	ServiceJoin *join = find_join(slot, pid);
	ServiceAgg *agg;

	if (join == NULL)
		return;
	agg = join->agg;
	if (agg == NULL || agg->finished || !gj_service_partials_owned(agg, pid))
	{
		fail(slot, GJ_ERR_DEVICE, "the GPU service refused a request: no aggregates of this join to finish");
		return;
	}
	if (!gj_device_join_agg_finish(join->devices, &agg->spec, &agg->partial, &slot->stats,
								   &slot->err))
	{
		slot->ok = false;
		return;
	}
	agg->finished = true;
	agg->client_partial->pairs = agg->partial.pairs;
	memcpy(agg->client_partial->acc, agg->partial.acc, sizeof(agg->partial.acc));
	slot->ok = true;
}

/*
 * Serve the request in the slot of client slotno, on a worker thread
 * (service_workers.c), and answer it.  The client's pid and latch come
 * from its PGPROC, not from what it wrote: a slot answers only the process
 * that owns it.  The workers are handed this function at start
 * (gj_service_workers_start), not linked to it: they are below this file.
 */
static void
serve_request(int slotno)
{
	GjServiceSlot *slot = &gj_service->slots[slotno];
	PGPROC	   *proc = GetPGProcByNumber(slotno);
	int			pid;
	double		start = gj_clock_ms();

	pg_read_barrier();
	pid = proc->pid;
	slot->ok = false;
	slot->stats.times.queued_ms = Max(start - slot->submitted_ms, 0);
	current_join = NULL;
	if (pid == 0 || slot->client_pid != pid)
		fail(slot, GJ_ERR_DEVICE, "the GPU service refused a request from a process that does not own its slot");
	else if (slot->generation != service_generation)
		fail(slot, GJ_ERR_UNAVAILABLE, "the GPU service restarted");
	else if (slot->op == GJ_OP_OPEN)
	{
		/* answered before the join opened: the open is done, nothing to answer */
		if (handle_open(slot, pid, proc))
			return;
	}
	else if (slot->op == GJ_OP_WAIT_OPEN)
	{
		if (find_join(slot, pid) != NULL)
			slot->ok = true;
	}
	else if (slot->op == GJ_OP_STEP)
		handle_step(slot, pid, false);
	else if (slot->op == GJ_OP_AGG_STEP)
		handle_step(slot, pid, true);
	else if (slot->op == GJ_OP_AGG_FINISH)
		handle_agg_finish(slot, pid);
	else if (slot->op == GJ_OP_SHARE_INNER)
		gj_service_handle_share(slot, pid);
	else if (slot->op == GJ_OP_ATTACH_INNER)
		gj_service_handle_attach(slot, pid);
	else if (slot->op == GJ_OP_DETACH_INNER)
		gj_service_handle_detach(slot, pid);
	else if (slot->op == GJ_OP_RELEASE_INNER)
		gj_service_handle_release(slot, pid);
	else if (slot->op == GJ_OP_TILE_CAN_MATCH)
	{
		ServiceJoin *join = find_join(slot, pid);

		if (join != NULL)
		{
			GjTile		tile = slot->tile;

			slot->can_match = gj_device_join_tile_can_match(join->devices, &tile);
			slot->ok = true;
		}
	}
	else if (slot->op == GJ_OP_CLOSE)
	{
		ServiceJoin *join = find_join(slot, pid);

		if (join != NULL)
		{
			close_join(join);
			slot->ok = true;
		}
	}
	else
		fail(slot, GJ_ERR_DEVICE, "the GPU service refused a request with an unknown operation");
	/* the join is free for its client's next request */
	if (current_join != NULL)
	{
		pthread_mutex_lock(&joins_lock);
		current_join->busy = false;
		pthread_mutex_unlock(&joins_lock);
		current_join = NULL;
	}
	slot->stats.times.served_ms = gj_clock_ms() - start;
	answer(slot, proc);
}

/*
 * Main thread: hand every newly submitted request to the workers.  A slot
 * goes from SUBMITTED to RUNNING here, so it is handed over once; its
 * client waits for DONE.
 */
void
gj_service_handle_requests(void)
{
	int			i;

	for (i = 0; i < gj_service->nslots; i++)
	{
		GjServiceSlot *slot = &gj_service->slots[i];

		if (slot->state != GJ_REQ_SUBMITTED)
			continue;
		slot->state = GJ_REQ_RUNNING;
		pg_write_barrier();
		gj_service_workers_submit(i);
	}
}

/*
 * Once a second: close the joins of clients that are gone and free their
 * staging chunks (a client closes its joins on ERROR and exit; this covers
 * an exit that could not).  A join whose request a worker still serves is
 * left for the next sweep.
 */
static void
sweep_dead_clients(void)
{
	static TimestampTz last = 0;
	TimestampTz now = GetCurrentTimestamp();
	int			j;

	if (!TimestampDifferenceExceeds(last, now, 1000))
		return;
	last = now;
	for (j = 0; j < GJ_SERVICE_MAX_JOINS; j++)
	{
		ServiceJoin *join = &service_joins[j];
		int			owner = 0;

		pthread_mutex_lock(&joins_lock);
		if (join->in_use && !join->busy && join->handle != 0 &&
			kill(join->owner_pid, 0) != 0 && errno == ESRCH)
		{
			join->busy = true;
			owner = join->owner_pid;
		}
		pthread_mutex_unlock(&joins_lock);
		if (owner != 0)
		{
			elog(LOG, "gpujoin service: closing a join of process %d, which has exited", owner);
			close_join(join);
		}
	}
	/* after the joins: a dead client's join held its shared inner side */
	gj_service_shared_inner_sweep();
	(void) gj_staging_free_dead_owners();
}

/*
 * A fatal signal in the service (a fault in its own code, the CUDA runtime's
 * or a library's, on any of its threads): the server log gets the thread's
 * stack before the postmaster sees the crash, so that the report says
 * where.  backtrace_symbols_fd writes with write(2), no malloc; the signal
 * then takes its default action.
 */
static void
service_fatal_signal(int signo)
{
	static const char head[] = "gpujoin service: fatal signal, the stack of the thread that took it:\n";
	void	   *frames[64];
	int			n;

	if (write(STDERR_FILENO, head, sizeof(head) - 1) < 0)
		(void) 0;
	n = backtrace(frames, lengthof(frames));
	backtrace_symbols_fd(frames, n, STDERR_FILENO);
	signal(signo, SIG_DFL);
	raise(signo);
}

void
gpujoin_service_main(Datum main_arg)
{
	char		message[256];
	void	   *warm[1];

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	/* backtrace loads libgcc on its first call: not in a signal handler */
	(void) backtrace(warm, 1);
	signal(SIGSEGV, service_fatal_signal);
	signal(SIGBUS, service_fatal_signal);
	signal(SIGILL, service_fatal_signal);
	signal(SIGFPE, service_fatal_signal);
	signal(SIGABRT, service_fatal_signal);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	if (gj_service == NULL)
		ereport(FATAL,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("gpujoin service started without its shared memory")));
	SpinLockAcquire(&gj_service->mutex);
	gj_service->status.pid = MyProcPid;
	gj_service->status.starts++;
	gj_service->status.joins_served = 0;
	gj_service->status.backend = gpujoin_service_backend;
	gj_service->status.state = GJ_SERVICE_STARTING;
	service_generation = ++gj_service->generation;
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
	pg_atomic_init_u64(&served, 0);
	if (service_backend == &gj_cuda_backend)
		gpujoin_cuda_exit_hook();
	gj_service_workers_start(gpujoin_service_workers, serve_request);
	gj_service_devices_start_helpers(gj_service_workers_running());
	SpinLockAcquire(&gj_service->mutex);
	gj_service->status.state = GJ_SERVICE_READY;
	gj_service->status.workers = gj_service_workers_running();
	gj_service->service_latch = MyLatch;
	SpinLockRelease(&gj_service->mutex);
	ereport(LOG,
			(errmsg("gpujoin service ready on the %s backend, with %d worker threads",
					gpujoin_service_backend == GJ_SERVICE_BACKEND_CPU ? "cpu" : "cuda",
					gj_service_workers_running())));

	for (;;)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 1000L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		gj_service_handle_requests();
		sweep_dead_clients();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
	}
}

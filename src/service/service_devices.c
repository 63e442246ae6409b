/*-------------------------------------------------------------------------
 *
 * service_devices.c
 *	  The GPU service's devices (docs/architecture.md, section 8, phase E):
 *	  which it opens, on which a join runs, and how one join's steps run on
 *	  several at once.
 *
 * At start the service opens every visible GPU (cuda: a context per
 * device), or those gpujoin.devices lists; on the cpu backend it runs
 * gpujoin.service_simulated_devices "devices", each a cpu backend state of
 * its own, so that CI exercises the same scheduling without a GPU.  The
 * shared control block has a row per device (service_shared.h:
 * GjServiceDevice) for gpujoin_devices().
 *
 * A join runs on one device, the one gj_service_choose_device picks (most
 * free memory for its budget, fewest joins and steps), except a nested
 * loop whose client asks for several: it is opened on each (its inputs
 * copied to each), and a STEP or AGG_STEP request carries up to one piece
 * of the tile's outer rows per device, run at once: the worker thread
 * serving the request runs the first piece, helper threads of this file
 * the others.  Every piece is a step of the backend contract: of the tile
 * from the piece's first row when the piece runs to the tile's end (a
 * sorted or hash join's only piece is such a step), else of the tile cut
 * to the piece's rows, so a device never sees anything but a step of a
 * (smaller) tile; the client (service_client.c) returns the pieces' matches
 * to the executor in outer-row order, as the steps of one device.  The
 * aggregates of such a join are reduced into a partial per device and
 * combined at AGG_FINISH.
 *
 * The helpers, like the workers (service_workers.c), block every signal
 * and call nothing of PostgreSQL but spinlocks: the backend contract,
 * memcpy and malloc.  A helper never waits for another task, so a worker
 * waiting for its pieces always sees them finish.  Sorted and hash joins
 * run on one device each for now (device partitions of their keys are
 * another change).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>

#include "utils/guc.h"

#include "service/service_shared.h"
#include "service/service_devices.h"

char	   *gpujoin_devices_setting = NULL;
int			gpujoin_service_simulated_devices = 1;
int			gpujoin_service_spread_min_pairs = 1 << 20;

static const GjBackend *device_backend = NULL;

/* ---------------------------------------------------------------------
 * Settings
 * ---------------------------------------------------------------------
 */

/*
 * Parse gpujoin.devices: device numbers separated by commas or spaces,
 * each below GJ_MAX_DEVICES; empty: every device.  Sets want[n] for each
 * number listed; returns false on anything else.
 */
static bool
parse_devices(const char *text, bool *want, bool *any)
{
	const char *p = text;

	memset(want, 0, sizeof(bool) * GJ_MAX_DEVICES);
	*any = false;
	if (p == NULL)
		return true;
	while (*p)
	{
		char	   *end;
		long		n;

		if (*p == ',' || *p == ' ' || *p == '\t')
		{
			p++;
			continue;
		}
		n = strtol(p, &end, 10);
		if (end == p || n < 0 || n >= GJ_MAX_DEVICES)
			return false;
		want[n] = true;
		*any = true;
		p = end;
	}
	return true;
}

static bool
check_devices(char **newval, void **extra, GucSource source)
{
	bool		want[GJ_MAX_DEVICES];
	bool		any;

	if (!parse_devices(*newval, want, &any))
	{
		GUC_check_errdetail("gpujoin.devices is a list of device numbers from 0 to %d, separated by commas.",
							GJ_MAX_DEVICES - 1);
		return false;
	}
	return true;
}

/* From _PG_init (planner_hook.c), with the other settings. */
void
gj_service_devices_define_gucs(void)
{
	DefineCustomStringVariable("gpujoin.devices",
							   "Devices the GPU service uses: a list of device numbers, empty for every visible device.",
							   "CUDA device numbers (after CUDA_VISIBLE_DEVICES), or on the cpu backend the simulated devices' numbers.",
							   &gpujoin_devices_setting, "",
							   PGC_POSTMASTER, 0, check_devices, NULL, NULL);
	DefineCustomIntVariable("gpujoin.service_simulated_devices",
							"Devices the GPU service simulates on the cpu backend (gpujoin.service_backend = cpu), for tests.",
							"Each is a cpu backend of its own: joins are spread over them as over GPUs.",
							&gpujoin_service_simulated_devices, 1, 1, GJ_MAX_DEVICES,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);

	/*
	 * 2^20 pairs take about a millisecond on the cpu backend: a smaller
	 * join gains nothing from opening on every device (copying its inputs
	 * to each).  Lower it to spread every nested loop (the fuzzer does).
	 */
	DefineCustomIntVariable("gpujoin.service_spread_min_pairs",
							"Pairs from which a nested loop in the GPU service runs on every device of the service.",
							NULL,
							&gpujoin_service_spread_min_pairs, 1 << 20, 0, INT_MAX,
							PGC_USERSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
}

/* ---------------------------------------------------------------------
 * The devices, at the service's start
 * ---------------------------------------------------------------------
 */

/*
 * Fill the shared table of devices for the backend the service opened:
 * every GPU (or simulated device) gpujoin.devices allows.  Main thread,
 * before the workers start.  Returns false, with the reason in message,
 * when none is left.
 */
bool
gj_service_devices_open(const GjBackend *backend, char *message, size_t len)
{
	bool		want[GJ_MAX_DEVICES];
	bool		any;
	int			count;
	int			n = 0;
	int			d;
	GjError		err;

	device_backend = backend;
	(void) parse_devices(gpujoin_devices_setting, want, &any);
	memset(&err, 0, sizeof(err));
	if (backend == &gj_cpu_backend)
		count = gpujoin_service_simulated_devices;
	else if ((count = gj_cuda_device_count(&err)) == 0)
	{
		strlcpy(message, err.message, len);
		return false;
	}

	SpinLockAcquire(&gj_service->mutex);
	gj_service->ndevices = 0;
	SpinLockRelease(&gj_service->mutex);
	for (d = 0; d < count; d++)
	{
		GjServiceDevice dev;
		GjDeviceInfo info;

		if (any && !want[d])
			continue;
		memset(&dev, 0, sizeof(dev));
		dev.number = d;
		if (backend == &gj_cpu_backend)
		{
			if (count == 1)
				strlcpy(dev.name, "host processor", sizeof(dev.name));
			else
				snprintf(dev.name, sizeof(dev.name), "host processor (simulated device %d)", d);
		}
		else
		{
			if (!gj_cuda_probe_device(d, &info, &err))
			{
				ereport(LOG,
						(errmsg("gpujoin service: CUDA device %d is not usable", d),
						 errdetail("%s", err.message)));
				continue;
			}
			strlcpy(dev.name, info.name, sizeof(dev.name));
			dev.total_memory = info.total_memory;
			dev.free_memory = info.free_memory;
			dev.sm_count = info.sm_count;
			dev.cc_major = info.cc_major;
			dev.cc_minor = info.cc_minor;
		}
		SpinLockAcquire(&gj_service->mutex);
		gj_service->devices[n] = dev;
		SpinLockRelease(&gj_service->mutex);
		n++;
	}
	if (n == 0)
	{
		snprintf(message, len, "gpujoin.devices (\"%s\") lists none of the %d visible devices",
				 gpujoin_devices_setting ? gpujoin_devices_setting : "", count);
		return false;
	}

	/* the service's own row shows the first device, as with one */
	SpinLockAcquire(&gj_service->mutex);
	gj_service->ndevices = n;
	strlcpy(gj_service->status.device_name, gj_service->devices[0].name,
			sizeof(gj_service->status.device_name));
	gj_service->status.total_memory = gj_service->devices[0].total_memory;
	gj_service->status.free_memory = gj_service->devices[0].free_memory;
	gj_service->status.sm_count = gj_service->devices[0].sm_count;
	gj_service->status.cc_major = gj_service->devices[0].cc_major;
	gj_service->status.cc_minor = gj_service->devices[0].cc_minor;
	SpinLockRelease(&gj_service->mutex);
	if (n > 1)
		ereport(LOG,
				(errmsg("gpujoin service: %d devices, a nested loop's steps spread over them", n)));
	return true;
}

/*
 * Each GPU's free memory, after a join opened or closed (cuda only); the
 * service's row shows the most any device has free, which is what a new
 * join's budget is cut from (gpujoin_open.c) and where it goes.
 */
void
gj_service_devices_refresh(void)
{
	int			d;
	int			n;
	int64		most = 0;

	if (device_backend != &gj_cuda_backend)
		return;
	SpinLockAcquire(&gj_service->mutex);
	n = gj_service->ndevices;
	SpinLockRelease(&gj_service->mutex);
	for (d = 0; d < n; d++)
	{
		GjDeviceInfo info;

		if (!gj_cuda_probe_device(gj_service->devices[d].number, &info, NULL))
			continue;
		SpinLockAcquire(&gj_service->mutex);
		gj_service->devices[d].free_memory = info.free_memory;
		SpinLockRelease(&gj_service->mutex);
		most = Max(most, info.free_memory);
	}
	SpinLockAcquire(&gj_service->mutex);
	gj_service->status.free_memory = most;
	SpinLockRelease(&gj_service->mutex);
}

/*
 * The device for a join that runs on one: of those not excluded, one with
 * room for the budget before one without, then the fewest joins open and
 * steps queued, then the most room (on a device without a share of the
 * budget: its free memory, or on the cpu backend's simulated devices the
 * budgets open there, least first), then the lowest number.  "Room" is the
 * device's share of the service's budget (service_budget.c) less what the
 * joins open on it reserved: its free memory would miss what the memory
 * pool keeps for the next joins.  With need_room, -1 when no device not
 * excluded has room.  The caller holds the control block's spinlock.
 */
static int
choose_device_locked(int64 budget, const bool *exclude, bool need_room)
{
	int			best = -1;
	bool		best_room = false;
	int64		best_load = 0;
	int64		best_free = 0;
	int			d;

	for (d = 0; d < gj_service->ndevices; d++)
	{
		const GjServiceDevice *dev = &gj_service->devices[d];
		int64		free_bytes;
		bool		room;
		int64		load = (int64) dev->joins_open + dev->steps_queued;

		if (dev->budget_share > 0)
			free_bytes = dev->budget_share - dev->memory_in_use;
		else
			free_bytes = dev->total_memory > 0 ? dev->free_memory : -dev->memory_in_use;
		room = (dev->total_memory == 0 && dev->budget_share == 0) || budget <= 0 ||
			free_bytes >= budget;

		if (exclude != NULL && exclude[d])
			continue;
		if (need_room && !room)
			continue;
		if (best < 0 ||
			(room && !best_room) ||
			(room == best_room &&
			 (load < best_load || (load == best_load && free_bytes > best_free))))
		{
			best = d;
			best_room = room;
			best_load = load;
			best_free = free_bytes;
		}
	}
	return best;
}

/* The device a join of this budget would open on now (see above). */
int
gj_service_choose_device(int64 budget, const bool *exclude)
{
	int			d;

	SpinLockAcquire(&gj_service->mutex);
	d = choose_device_locked(budget, exclude, false);
	SpinLockRelease(&gj_service->mutex);
	return d;
}

/*
 * Reserve a join's budget on up to wanted devices, each with room for it,
 * chosen as above, under one hold of the spinlock so that two joins never
 * both take the last of a device's share: devices[] gets their indexes.
 * Returns how many; 0 when no device has room (the client waits again).
 * A device's reservation is its memory_in_use, and their sum the
 * service's device_reserved, until gj_service_release_devices.
 */
int
gj_service_reserve_devices(int64 budget, int wanted, int *devices)
{
	bool		chosen[GJ_MAX_DEVICES];
	int			n = 0;

	budget = Max(budget, 0);
	memset(chosen, 0, sizeof(chosen));
	SpinLockAcquire(&gj_service->mutex);
	while (n < wanted)
	{
		int			d = choose_device_locked(budget, chosen, true);

		if (d < 0)
			break;
		chosen[d] = true;
		devices[n++] = d;
		gj_service->devices[d].memory_in_use += budget;
		gj_service->status.device_reserved += budget;
	}
	SpinLockRelease(&gj_service->mutex);
	return n;
}

/* Give back the reservations of gj_service_reserve_devices. */
void
gj_service_release_devices(int64 budget, const int *devices, int n)
{
	int			i;

	budget = Max(budget, 0);
	SpinLockAcquire(&gj_service->mutex);
	for (i = 0; i < n; i++)
	{
		gj_service->devices[devices[i]].memory_in_use -= budget;
		gj_service->status.device_reserved -= budget;
		Assert(gj_service->devices[devices[i]].memory_in_use >= 0);
	}
	SpinLockRelease(&gj_service->mutex);
}

/* ---------------------------------------------------------------------
 * Tasks on several devices at once
 * ---------------------------------------------------------------------
 */

#define MAX_HELPERS		64
#define TASK_QUEUE_SIZE	(MAX_HELPERS * GJ_MAX_DEVICES)

typedef struct TaskBatch
{
	pthread_mutex_t lock;
	pthread_cond_t done;
	int			remaining;
} TaskBatch;

/* One device's part of a request: open, a step, or an aggregate finish. */
typedef enum TaskKind
{
	TASK_OPEN,
	TASK_STEP,
	TASK_AGG_FINISH
} TaskKind;

typedef struct DeviceTask
{
	TaskKind	kind;
	int			device;			/* index in the service's devices */
	TaskBatch  *batch;

	/* TASK_OPEN */
	const GjJoinInput *input;

	/* TASK_STEP, TASK_AGG_FINISH */
	void	   *state;
	GjTile		tile;
	GjStepPiece *piece;
	int64		capacity;
	const GjAggSpec *spec;		/* NULL: a plain step */
	GjAggPartial *partial;

	/* answers */
	bool		ok;
	GjStats		stats;
	GjError		err;
} DeviceTask;

static pthread_t helpers[MAX_HELPERS];
static int	nhelpers = 0;
static pthread_mutex_t task_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t task_cond = PTHREAD_COND_INITIALIZER;
static DeviceTask *task_queue[TASK_QUEUE_SIZE];
static int	task_head = 0;
static int	task_tail = 0;
static bool helpers_stopping = false;

static void
device_count_queued(int device, int delta, bool ran_step)
{
	SpinLockAcquire(&gj_service->mutex);
	gj_service->devices[device].steps_queued += delta;
	if (ran_step)
		gj_service->devices[device].steps_run++;
	SpinLockRelease(&gj_service->mutex);
}

/* Run one task, on the thread that took it. */
static void
run_task(DeviceTask *t)
{
	memset(&t->err, 0, sizeof(t->err));
	memset(&t->stats, 0, sizeof(t->stats));
	t->ok = false;
	if (t->kind == TASK_OPEN)
	{
		t->state = device_backend->begin_join(t->input, &t->err);
		t->ok = t->state != NULL;
	}
	else if (t->kind == TASK_AGG_FINISH)
		t->ok = device_backend->agg_finish == NULL ||
			device_backend->agg_finish(t->state, t->spec, t->partial, &t->stats, &t->err);
	else
	{
		GjStepPiece *piece = t->piece;
		GjMatches	m;
		int64		next = piece->outer_begin;

		memset(&m, 0, sizeof(m));
		if (t->spec != NULL)
			t->ok = device_backend->agg_step(t->state, &t->tile, &next, t->spec, t->partial,
											 &m, &t->stats, &t->err);
		else
			t->ok = device_backend->run_step(t->state, &t->tile, &next, &m, &t->stats, &t->err);
		if (t->ok && (m.count < 0 || m.count > t->capacity ||
					  next < piece->outer_begin || next > piece->outer_end))
		{
			t->ok = false;
			t->err.code = GJ_ERR_DEVICE;
			strlcpy(t->err.message, "a step of the GPU service's backend returned more matches than the buffer holds",
					sizeof(t->err.message));
		}
		if (t->ok)
		{
			if (m.count > 0)
			{
				double		copy_start = gj_clock_ms();

				memcpy(piece->result_outer, m.outer_rows, sizeof(uint32) * m.count);
				memcpy(piece->result_inner, m.inner_rows, sizeof(uint32) * m.count);
				t->stats.times.results_ms += gj_clock_ms() - copy_start;
			}
			piece->outer_next = next;
			piece->nmatches = m.count;
			piece->device = t->device;
		}
	}
	device_count_queued(t->device, -1, t->kind == TASK_STEP && t->ok);
}

static void
task_done(DeviceTask *t)
{
	TaskBatch  *b = t->batch;

	pthread_mutex_lock(&b->lock);
	if (--b->remaining == 0)
		pthread_cond_signal(&b->done);
	pthread_mutex_unlock(&b->lock);
}

static void *
helper_main(void *arg)
{
	for (;;)
	{
		DeviceTask *t;

		pthread_mutex_lock(&task_lock);
		while (task_head == task_tail && !helpers_stopping)
			pthread_cond_wait(&task_cond, &task_lock);
		if (task_head == task_tail)
		{
			/* stopping, and nothing left that a worker waits for */
			pthread_mutex_unlock(&task_lock);
			return NULL;
		}
		t = task_queue[task_head];
		task_head = (task_head + 1) % TASK_QUEUE_SIZE;
		pthread_mutex_unlock(&task_lock);
		run_task(t);
		task_done(t);
	}
}

/*
 * Helpers for the pieces beyond the first of each worker's requests: as
 * many as workers times devices beyond the first.  None with one device.
 */
void
gj_service_devices_start_helpers(int nworkers)
{
	sigset_t	all_signals,
				old_signals;
	int			n;

	n = Min(nworkers * (gj_service->ndevices - 1), MAX_HELPERS);
	if (n <= 0)
		return;
	helpers_stopping = false;
	task_head = task_tail = 0;
	gj_service_thread_signals(&all_signals);
	pthread_sigmask(SIG_SETMASK, &all_signals, &old_signals);
	for (nhelpers = 0; nhelpers < n; nhelpers++)
		if (pthread_create(&helpers[nhelpers], NULL, helper_main, NULL) != 0)
			break;
	pthread_sigmask(SIG_SETMASK, &old_signals, NULL);
	if (nhelpers < n)
		ereport(LOG,
				(errmsg("gpujoin service: started %d of %d device helper threads", nhelpers, n)));
}

/* After the workers stopped: the helpers finish what is queued and exit. */
void
gj_service_devices_stop_helpers(void)
{
	int			i;

	if (nhelpers == 0)
		return;
	pthread_mutex_lock(&task_lock);
	helpers_stopping = true;
	pthread_cond_broadcast(&task_cond);
	pthread_mutex_unlock(&task_lock);
	for (i = 0; i < nhelpers; i++)
		(void) pthread_join(helpers[i], NULL);
	nhelpers = 0;
}

/*
 * Run n tasks at once: the first on this thread, the others on helpers
 * (or here, one after the other, when there are none); returns when all
 * are done.
 */
static void
run_tasks(DeviceTask *tasks, int n)
{
	TaskBatch	batch;
	int			i;

	for (i = 0; i < n; i++)
		device_count_queued(tasks[i].device, 1, false);
	if (n == 1 || nhelpers == 0)
	{
		for (i = 0; i < n; i++)
			run_task(&tasks[i]);
		return;
	}
	pthread_mutex_init(&batch.lock, NULL);
	pthread_cond_init(&batch.done, NULL);
	batch.remaining = n - 1;
	pthread_mutex_lock(&task_lock);
	for (i = 1; i < n; i++)
	{
		tasks[i].batch = &batch;
		task_queue[task_tail] = &tasks[i];
		task_tail = (task_tail + 1) % TASK_QUEUE_SIZE;
	}
	pthread_cond_broadcast(&task_cond);
	pthread_mutex_unlock(&task_lock);

	run_task(&tasks[0]);

	pthread_mutex_lock(&batch.lock);
	while (batch.remaining > 0)
		pthread_cond_wait(&batch.done, &batch.lock);
	pthread_mutex_unlock(&batch.lock);
	pthread_mutex_destroy(&batch.lock);
	pthread_cond_destroy(&batch.done);
}

/* ---------------------------------------------------------------------
 * A join on its devices
 * ---------------------------------------------------------------------
 */

static void
device_count_join(int device, int delta)
{
	SpinLockAcquire(&gj_service->mutex);
	gj_service->devices[device].joins_open += delta;
	SpinLockRelease(&gj_service->mutex);
}

/* A zeroed partial with the spec's groups (malloc'd), or NULL. */
static GjAggPartial *
alloc_partial(const GjAggSpec *spec)
{
	GjAggPartial *p = calloc(1, sizeof(GjAggPartial));

	if (p == NULL || spec->outer_group == NULL)
		return p;
	p->group_pairs = calloc(Max(gj_agg_spec_groups(spec), 1), sizeof(int64));
	p->group_acc = calloc(Max(gj_agg_spec_groups(spec) * spec->nargs, 1), sizeof(GjAggAcc));
	if (p->group_pairs == NULL || p->group_acc == NULL)
	{
		free(p->group_pairs);
		free(p->group_acc);
		free(p);
		return NULL;
	}
	return p;
}

static void
free_partial(GjAggPartial *p)
{
	if (p == NULL)
		return;
	free(p->group_pairs);
	free(p->group_acc);
	free(p);
}

/*
 * Open the join on the n devices its budget was reserved on
 * (gj_service_reserve_devices), at once.  A device that fails (out of
 * memory there) is left out, its reservation given back, as long as one
 * opened; NULL with *err (the first device's error) when none did, every
 * reservation given back.  gj_device_join_end gives back the others.
 */
GjDeviceJoin *
gj_device_join_begin(const GjJoinInput *input, const int *devices, int n, GjError *err)
{
	GjDeviceJoin *dj;
	DeviceTask	tasks[GJ_MAX_DEVICES];
	int			i;

	if ((dj = calloc(1, sizeof(GjDeviceJoin))) == NULL)
	{
		gj_service_release_devices(input->budget_bytes, devices, n);
		err->code = GJ_ERR_OUT_OF_MEMORY;
		strlcpy(err->message, "the GPU service is out of memory", sizeof(err->message));
		return NULL;
	}
	memset(tasks, 0, sizeof(tasks));
	for (i = 0; i < n; i++)
	{
		dj->input[i] = *input;
		dj->input[i].device = gj_service->devices[devices[i]].number;
		tasks[i].kind = TASK_OPEN;
		tasks[i].device = devices[i];
		tasks[i].input = &dj->input[i];
	}
	dj->budget = input->budget_bytes;
	run_tasks(tasks, n);

	for (i = 0; i < n; i++)
	{
		if (tasks[i].ok && dj->ndevices > 0 && input->agg_spec != NULL &&
			(dj->partial[dj->ndevices] = alloc_partial(input->agg_spec)) == NULL)
		{
			device_backend->end_join(tasks[i].state);
			tasks[i].ok = false;
		}
		if (!tasks[i].ok)
		{
			if (dj->ndevices == 0 && err->code == 0)
				*err = tasks[i].err;
			gj_service_release_devices(dj->budget, &devices[i], 1);
			continue;
		}
		dj->device[dj->ndevices] = tasks[i].device;
		dj->state[dj->ndevices] = tasks[i].state;
		if (dj->ndevices != i)
			dj->input[dj->ndevices] = dj->input[i];
		dj->ndevices++;
		device_count_join(tasks[i].device, 1);
	}
	if (dj->ndevices == 0)
	{
		if (err->code == 0)
		{
			err->code = GJ_ERR_OUT_OF_MEMORY;
			strlcpy(err->message, "the GPU service could not open the join on any device",
					sizeof(err->message));
		}
		free(dj);
		return NULL;
	}
	memset(err, 0, sizeof(GjError));
	return dj;
}

/*
 * Run the request's pieces of the tile at once, piece k on the join's k-th
 * device, with the spec into its partial (the first device's is the
 * client's, *partial; the others' are the join's own).  Each piece's
 * matches land in its buffers; the stats of all are added to *stats, a
 * step per device to device_steps.  False with *err (the first piece's
 * that failed) when any piece failed.
 */
bool
gj_device_join_steps(GjDeviceJoin *dj, const GjTile *tile, GjStepPiece *pieces, int npieces,
					 int64 capacity, const GjAggSpec *spec, GjAggPartial *partial,
					 GjStats *stats, GjError *err)
{
	DeviceTask	tasks[GJ_MAX_DEVICES];
	int			k;
	bool		ok = true;

	if (npieces < 1 || npieces > dj->ndevices)
	{
		err->code = GJ_ERR_DEVICE;
		strlcpy(err->message, "the GPU service refused a request: more pieces than the join has devices",
				sizeof(err->message));
		return false;
	}
	memset(tasks, 0, sizeof(DeviceTask) * npieces);
	for (k = 0; k < npieces; k++)
	{
		tasks[k].kind = TASK_STEP;
		tasks[k].device = dj->device[k];
		tasks[k].state = dj->state[k];
		/*
		 * A piece that runs to the tile's end is a step of the tile itself
		 * from its first row (a sorted or hash join's only piece: the
		 * backends order a sorted join's outer rows by its first tile); a
		 * piece that ends before is a step of a tile cut to its rows (a
		 * nested loop's, which depends on nothing else of the tile).
		 */
		tasks[k].tile = *tile;
		if (pieces[k].outer_end != tile->outer_end)
		{
			tasks[k].tile.outer_begin = pieces[k].outer_begin;
			tasks[k].tile.outer_end = pieces[k].outer_end;
		}
		tasks[k].piece = &pieces[k];
		tasks[k].capacity = capacity;
		tasks[k].spec = spec;
		tasks[k].partial = k == 0 ? partial : dj->partial[k];
	}
	run_tasks(tasks, npieces);
	for (k = 0; k < npieces; k++)
	{
		GjStats    *s = &tasks[k].stats;

		stats->pairs_evaluated += s->pairs_evaluated;
		stats->device_matches += s->device_matches;
		stats->bytes_to_device += s->bytes_to_device;
		stats->bytes_from_device += s->bytes_from_device;
		stats->kernel_ms += s->kernel_ms;
		stats->transfer_ms += s->transfer_ms;
		gj_times_add(&stats->times, &s->times);
		gj_stats_add_program(stats, s);
		if (tasks[k].ok)
			stats->device_steps[dj->device[k]]++;
		else if (ok)
		{
			*err = tasks[k].err;
			ok = false;
		}
	}
	return ok;
}

/*
 * After the last aggregate step: each device adds what it still holds
 * into its partial, and the other devices' partials are added into the
 * first's (*partial, in the client's chunk).
 */
bool
gj_device_join_agg_finish(GjDeviceJoin *dj, const GjAggSpec *spec, GjAggPartial *partial,
						  GjStats *stats, GjError *err)
{
	DeviceTask	tasks[GJ_MAX_DEVICES];
	int64		groups = spec->outer_group != NULL ? gj_agg_spec_groups(spec) : 0;
	int			nargs = spec->nargs;
	int			k;

	memset(tasks, 0, sizeof(DeviceTask) * dj->ndevices);
	for (k = 0; k < dj->ndevices; k++)
	{
		tasks[k].kind = TASK_AGG_FINISH;
		tasks[k].device = dj->device[k];
		tasks[k].state = dj->state[k];
		tasks[k].spec = spec;
		tasks[k].partial = k == 0 ? partial : dj->partial[k];
	}
	run_tasks(tasks, dj->ndevices);
	for (k = 0; k < dj->ndevices; k++)
	{
		stats->kernel_ms += tasks[k].stats.kernel_ms;
		stats->transfer_ms += tasks[k].stats.transfer_ms;
		gj_times_add(&stats->times, &tasks[k].stats.times);
		stats->bytes_from_device += tasks[k].stats.bytes_from_device;
		if (!tasks[k].ok)
		{
			*err = tasks[k].err;
			return false;
		}
	}
	for (k = 1; k < dj->ndevices; k++)
	{
		const GjAggPartial *from = dj->partial[k];
		int64		g;
		int			a;

		partial->pairs += from->pairs;
		for (a = 0; a < nargs; a++)
			gj_agg_merge(&partial->acc[a], &from->acc[a], spec->args[a].cls);
		for (g = 0; g < groups; g++)
		{
			if (from->group_pairs[g] == 0)
				continue;		/* no pair, nothing reduced */
			partial->group_pairs[g] += from->group_pairs[g];
			for (a = 0; a < nargs; a++)
				gj_agg_merge(&partial->group_acc[g * nargs + a],
							 &from->group_acc[g * nargs + a], spec->args[a].cls);
		}
	}
	return true;
}

/* Tile pruning: every device has the same inputs; the first answers. */
bool
gj_device_join_tile_can_match(GjDeviceJoin *dj, const GjTile *tile)
{
	return device_backend->tile_can_match == NULL ||
		device_backend->tile_can_match(dj->state[0], tile);
}

void
gj_device_join_end(GjDeviceJoin *dj)
{
	int			k;

	if (dj == NULL)
		return;
	for (k = 0; k < dj->ndevices; k++)
	{
		device_backend->end_join(dj->state[k]);
		free_partial(dj->partial[k]);
		device_count_join(dj->device[k], -1);
		gj_service_release_devices(dj->budget, &dj->device[k], 1);
	}
	free(dj);
}

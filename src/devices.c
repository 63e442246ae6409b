/*-------------------------------------------------------------------------
 *
 * devices.c
 *	  Which backend runs a GpuJoin, and the gpujoin_devices() SQL function
 *	  that shows what this backend process sees, the GPU service, and a
 *	  row per device of the service (every GPU it opened, or its simulated
 *	  devices on the cpu backend).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "gpujoin.h"
#include "service/gpujoin_service.h"
#include "service/service_shared.h"

/* exported: PostgreSQL 15's PG_FUNCTION_INFO_V1 marks only the info record */
extern PGDLLEXPORT Datum gpujoin_devices(PG_FUNCTION_ARGS);
PG_FUNCTION_INFO_V1(gpujoin_devices);

/*
 * Would gpujoin.device send this session's joins to the GPU service once
 * it is ready (gpujoin.device = service, or auto and cuda with the service
 * on cuda)?  Then wait a few seconds for one still starting.
 */
void
gpujoin_service_await_if_chosen(void)
{
	if (gpujoin_device == GPUJOIN_DEVICE_SERVICE ||
		(gpujoin_device != GPUJOIN_DEVICE_CPU && gpujoin_service_backend == GJ_SERVICE_BACKEND_CUDA))
		(void) gpujoin_service_await_start();
}

/*
 * Resolve gpujoin.device for one execution.  "cuda" without a usable device
 * is an ERROR here, at execution, never when the library loads.
 */
const GjBackend *
gpujoin_choose_backend(GjDeviceInfo *cuda_info, bool *cuda_first_use)
{
	GjError		err;
	bool		first;

	*cuda_first_use = false;
	if (gpujoin_device == GPUJOIN_DEVICE_CPU)
		return &gj_cpu_backend;
	if (gpujoin_device == GPUJOIN_DEVICE_SERVICE)
	{
		if (!gpujoin_service_await_start())
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("gpujoin.device is \"service\" but the GPU service is not running"),
					 errhint("Start it with gpujoin.service = on in postgresql.conf (gpujoin in shared_preload_libraries), "
							 "or set gpujoin.device to \"auto\".")));
		return gpujoin_service_backend == GJ_SERVICE_BACKEND_CPU ?
			&gj_service_cpu_backend : &gj_service_cuda_backend;
	}

	/*
	 * The GPU service owns the GPU: while it runs on cuda, this process
	 * never opens CUDA (no context of its own, no initialisation per
	 * connection) and its joins run there; one still starting (with the
	 * server, or again after it exited) is waited for a few seconds.
	 */
	gpujoin_service_await_if_chosen();
	if (gpujoin_service_runs_cuda())
		return &gj_service_cuda_backend;

	memset(&err, 0, sizeof(err));
	first = (cuda_info->name[0] == '\0');
	if (gj_cuda_probe(cuda_info, &err))
	{
		*cuda_first_use = first && cuda_info->init_ms > 0;
		gpujoin_cuda_exit_hook();
		return &gj_cuda_backend;
	}
	if (gpujoin_device == GPUJOIN_DEVICE_CUDA)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("gpujoin.device is \"cuda\" but no usable CUDA device is available"),
				 errdetail("%s", err.message),
				 errhint("Set gpujoin.device to \"auto\" or \"cpu\" to run GpuJoin on the cpu backend.")));
	return &gj_cpu_backend;
}

/*
 * The GPU service's row of gpujoin_devices(): backend "service", the
 * device it opened, and in status its state, pid, staging memory in use
 * and joins.  Selected by gpujoin.device = service.
 */
static void
service_row(ReturnSetInfo *rsinfo)
{
	GjServiceStatus st;
	Datum		values[8];
	bool		nulls[8];
	char		status[512];
	const char *backend;

	gpujoin_service_status(&st);
	backend = st.backend == GJ_SERVICE_BACKEND_CPU ? "cpu" : "cuda";
	memset(nulls, true, sizeof(nulls));
	values[0] = CStringGetTextDatum("service");
	nulls[0] = false;
	if (!st.preloaded)
		snprintf(status, sizeof(status), "not running: gpujoin is not in shared_preload_libraries");
	else if (!st.enabled)
		snprintf(status, sizeof(status), "off (gpujoin.service)");
	else if (st.state == GJ_SERVICE_NO_DEVICE)
		snprintf(status, sizeof(status), "no device (%s backend): %s", backend, st.message);
	else if (st.state == GJ_SERVICE_READY)
	{
		char		budget[64] = "no limit";

		if (st.device_budget > 0)
			snprintf(budget, sizeof(budget), "of %lld", (long long) st.device_budget);
		snprintf(status, sizeof(status),
				 "ready (%s backend), pid %d, started %lld times, %lld bytes in use, "
				 "%d joins running, %d queued, %lld served; "
				 "device memory: %lld bytes reserved (%s), %d joins waiting",
				 backend, st.pid, (long long) st.starts, (long long) st.memory_in_use,
				 st.joins_running, st.joins_queued, (long long) st.joins_served,
				 (long long) st.device_reserved, budget, st.joins_waiting);
	}
	else
		snprintf(status, sizeof(status), "%s (%s backend)",
				 gpujoin_service_state_name(st.state), backend);
	if (st.state == GJ_SERVICE_READY)
	{
		values[1] = CStringGetTextDatum(st.device_name);
		nulls[1] = false;
		if (st.total_memory > 0)
		{
			values[2] = Int64GetDatum(st.total_memory);
			nulls[2] = false;
			values[3] = Int64GetDatum(st.free_memory);
			nulls[3] = false;
		}
	}
	values[6] = BoolGetDatum(gpujoin_device == GPUJOIN_DEVICE_SERVICE);
	nulls[6] = false;
	values[7] = CStringGetTextDatum(status);
	nulls[7] = false;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * A row per device of the GPU service (backend "service device"): its
 * name, memory, and in status its number, the memory its open joins'
 * budgets take, its joins open, steps queued and steps run.  Never
 * selected: gpujoin.device picks the service, which picks the device.
 */
static void
service_device_rows(ReturnSetInfo *rsinfo)
{
	GjServiceDevice devices[GJ_MAX_DEVICES];
	int			ndevices = 0;
	int			d;

	if (gj_service == NULL)
		return;
	SpinLockAcquire(&gj_service->mutex);
	if (gj_service->status.state == GJ_SERVICE_READY)
	{
		ndevices = gj_service->ndevices;
		memcpy(devices, gj_service->devices, sizeof(GjServiceDevice) * ndevices);
	}
	SpinLockRelease(&gj_service->mutex);
	for (d = 0; d < ndevices; d++)
	{
		const GjServiceDevice *dev = &devices[d];
		Datum		values[8];
		bool		nulls[8];
		char		status[256];
		char		cc[32];

		memset(nulls, true, sizeof(nulls));
		values[0] = CStringGetTextDatum("service device");
		nulls[0] = false;
		values[1] = CStringGetTextDatum(dev->name);
		nulls[1] = false;
		if (dev->total_memory > 0)
		{
			values[2] = Int64GetDatum(dev->total_memory);
			nulls[2] = false;
			values[3] = Int64GetDatum(dev->free_memory);
			nulls[3] = false;
			values[4] = Int32GetDatum(dev->sm_count);
			nulls[4] = false;
			snprintf(cc, sizeof(cc), "%d.%d", dev->cc_major, dev->cc_minor);
			values[5] = CStringGetTextDatum(cc);
			nulls[5] = false;
		}
		values[6] = BoolGetDatum(false);
		nulls[6] = false;
		snprintf(status, sizeof(status),
				 "device %d, %lld bytes in use, %d joins open, %d steps queued, %lld steps run",
				 dev->number, (long long) dev->memory_in_use, dev->joins_open,
				 dev->steps_queued, (long long) dev->steps_run);
		values[7] = CStringGetTextDatum(status);
		nulls[7] = false;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/*
 * gpujoin_devices(): one row per backend this process can use, and which one
 * gpujoin.device selects now, then the GPU service's row.  Probing CUDA here
 * opens it in this backend process, as the first GpuJoin execution would;
 * while the GPU service runs on cuda, the cuda row is the service's device
 * and nothing is opened here.
 */
Datum
gpujoin_devices(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GjDeviceInfo info;
	GjError		err;
	bool		have_cuda;
	bool		in_service;
	Datum		values[8];
	bool		nulls[8];
	char		cc[32];

	InitMaterializedSRF(fcinfo, 0);

	memset(&info, 0, sizeof(info));
	memset(&err, 0, sizeof(err));
	in_service = gpujoin_service_runs_cuda();
	if (in_service)
	{
		/* the service's GPU, without opening CUDA in this process */
		GjServiceStatus st;

		gpujoin_service_status(&st);
		strlcpy(info.name, st.device_name, sizeof(info.name));
		info.total_memory = st.total_memory;
		info.free_memory = st.free_memory;
		info.sm_count = st.sm_count;
		info.cc_major = st.cc_major;
		info.cc_minor = st.cc_minor;
		have_cuda = true;
	}
	else
		have_cuda = gj_cuda_probe(&info, &err);

	/* the cpu backend is always there */
	memset(nulls, true, sizeof(nulls));
	values[0] = CStringGetTextDatum("cpu");
	nulls[0] = false;
	values[1] = CStringGetTextDatum("host processor");
	nulls[1] = false;
	values[6] = BoolGetDatum(gpujoin_device == GPUJOIN_DEVICE_CPU ||
							 (gpujoin_device == GPUJOIN_DEVICE_AUTO && !have_cuda));
	nulls[6] = false;
	values[7] = CStringGetTextDatum("available");
	nulls[7] = false;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);

	memset(nulls, true, sizeof(nulls));
	values[0] = CStringGetTextDatum("cuda");
	nulls[0] = false;
	if (have_cuda)
	{
		values[1] = CStringGetTextDatum(info.name);
		nulls[1] = false;
		values[2] = Int64GetDatum(info.total_memory);
		nulls[2] = false;
		values[3] = Int64GetDatum(info.free_memory);
		nulls[3] = false;
		values[4] = Int32GetDatum(info.sm_count);
		nulls[4] = false;
		snprintf(cc, sizeof(cc), "%d.%d", info.cc_major, info.cc_minor);
		values[5] = CStringGetTextDatum(cc);
		nulls[5] = false;
		values[7] = CStringGetTextDatum(in_service ? "available in the GPU service" : "available");
	}
	else
		values[7] = CStringGetTextDatum(err.message);
	values[6] = BoolGetDatum(have_cuda && (gpujoin_device == GPUJOIN_DEVICE_AUTO ||
										   gpujoin_device == GPUJOIN_DEVICE_CUDA));
	nulls[6] = false;
	nulls[7] = false;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);

	service_row(rsinfo);
	service_device_rows(rsinfo);
	return (Datum) 0;
}

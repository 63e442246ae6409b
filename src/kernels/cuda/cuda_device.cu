/*-------------------------------------------------------------------------
 *
 * cuda_device.cu
 *	  The cuda backend's devices: opening the CUDA runtime and device 0, the
 *	  probe the executor and gpujoin_devices() call, the probe of any
 *	  device for the GPU service (which opens every visible GPU), and CUDA
 *	  errors turned into GjError.
 *
 * The device is opened lazily, in the backend process that first runs a
 * join (never in the postmaster: CUDA does not survive fork).  The GPU
 * service calls the probes from its worker threads too: probe_lock guards
 * the probes' caches.  The current device is a property of the calling
 * thread: gj_cuda_probe selects device 0, gj_cuda_probe_device the one it
 * probes, and every entry point of the backend selects its join's device
 * (CudaJoinState.device) itself, because the service's threads serve the
 * joins of every device.
 *
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <time.h>

#include "cuda_internal.cuh"

/*
 * Fill *err from a failed CUDA call; returns false for "return fail(...)".
 * Also clears the runtime's last error, so that a later launch check does
 * not see this (non-sticky) one again.
 */
bool
gj_cuda_fail(GjError *err, int code, const char *what, cudaError_t rc)
{
	(void) cudaGetLastError();
	if (err != NULL)
	{
		if (code == 0)
			code = rc == cudaErrorMemoryAllocation ? GJ_ERR_OUT_OF_MEMORY : GJ_ERR_DEVICE;
		err->code = code;
		snprintf(err->message, sizeof(err->message), "%s: %s", what,
				 cudaGetErrorString(rc));
	}
	return false;
}

static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;
static bool probe_done = false;
static bool probe_ok = false;
static GjError probe_error;
static GjDeviceInfo probe_info;

static double
elapsed_ms(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000.0 + (b->tv_nsec - a->tv_nsec) / 1e6;
}

/* Open the runtime and device 0; without a driver this fails cleanly. */
static bool
cuda_open(GjDeviceInfo *info, GjError *err)
{
	struct timespec start,
				end;
	cudaDeviceProp prop;
	cudaError_t rc;
	int			count = 0;
	size_t		free_bytes,
				total_bytes;

	clock_gettime(CLOCK_MONOTONIC, &start);
	rc = cudaGetDeviceCount(&count);
	if (rc == cudaSuccess && count < 1)
		rc = cudaErrorNoDevice;
	if (rc != cudaSuccess)
		return gj_cuda_fail(err, GJ_ERR_UNAVAILABLE, "no usable CUDA device", rc);
	if ((rc = cudaSetDevice(0)) != cudaSuccess)
		return gj_cuda_fail(err, GJ_ERR_UNAVAILABLE, "could not select CUDA device 0", rc);
	if ((rc = cudaFree(0)) != cudaSuccess)
		return gj_cuda_fail(err, GJ_ERR_UNAVAILABLE, "could not open a CUDA context", rc);
	clock_gettime(CLOCK_MONOTONIC, &end);

	if ((rc = cudaGetDeviceProperties(&prop, 0)) != cudaSuccess)
		return gj_cuda_fail(err, GJ_ERR_UNAVAILABLE, "could not read CUDA device properties", rc);
	/* joins allocate from the device's memory pool (cuda_internal.cuh) */
	if (!prop.memoryPoolsSupported)
	{
		err->code = GJ_ERR_UNAVAILABLE;
		snprintf(err->message, sizeof(err->message),
				 "CUDA device 0 (%.100s) has no stream-ordered memory pools, which GpuJoin needs (CUDA 11.2 and a Pascal or newer GPU)",
				 prop.name);
		return false;
	}
	if ((rc = cudaMemGetInfo(&free_bytes, &total_bytes)) != cudaSuccess)
		return gj_cuda_fail(err, GJ_ERR_UNAVAILABLE, "could not read CUDA device memory", rc);

	memset(info, 0, sizeof(GjDeviceInfo));
	snprintf(info->name, sizeof(info->name), "%.*s", (int) sizeof(info->name) - 1, prop.name);
	info->total_memory = (int64_t) total_bytes;
	info->free_memory = (int64_t) free_bytes;
	info->sm_count = prop.multiProcessorCount;
	info->cc_major = prop.major;
	info->cc_minor = prop.minor;
	info->init_ms = elapsed_ms(&start, &end);
	/* a context that opened in under a microsecond must still read as first */
	if (info->init_ms <= 0)
		info->init_ms = 0.001;
	return true;
}

static bool cuda_probe_locked(GjDeviceInfo *info, GjError *err);

extern "C" bool
gj_cuda_probe(GjDeviceInfo *info, GjError *err)
{
	bool		ok;

	pthread_mutex_lock(&probe_lock);
	ok = cuda_probe_locked(info, err);
	pthread_mutex_unlock(&probe_lock);
	return ok;
}

static bool
cuda_probe_locked(GjDeviceInfo *info, GjError *err)
{
	bool		first = false;
	size_t		free_bytes,
				total_bytes;
	cudaError_t rc;

	if (!probe_done)
	{
		memset(&probe_error, 0, sizeof(probe_error));
		probe_ok = cuda_open(&probe_info, &probe_error);
		probe_done = true;
		first = true;
	}
	if (!probe_ok)
	{
		if (err != NULL)
			*err = probe_error;
		return false;
	}

	/* free memory changes; a broken context shows up here too */
	if ((rc = cudaSetDevice(0)) != cudaSuccess)
		return gj_cuda_fail(err, GJ_ERR_UNAVAILABLE, "could not select CUDA device 0", rc);
	rc = cudaMemGetInfo(&free_bytes, &total_bytes);
	if (rc != cudaSuccess)
		return gj_cuda_fail(err, GJ_ERR_UNAVAILABLE, "could not read CUDA device memory", rc);
	probe_info.free_memory = (int64_t) free_bytes;
	if (info != NULL)
	{
		*info = probe_info;
		if (!first)
			info->init_ms = 0;
	}
	return true;
}

/* Each device's properties, read once (probe_lock). */
static bool device_opened[GJ_MAX_DEVICES];
static GjDeviceInfo device_info[GJ_MAX_DEVICES];

/*
 * The number of visible CUDA devices (CUDA_VISIBLE_DEVICES applies), at
 * most GJ_MAX_DEVICES; 0 with *err set when none is usable.  Opens the
 * runtime and device 0 like the probe.
 */
extern "C" int
gj_cuda_device_count(GjError *err)
{
	int			count = 0;
	cudaError_t rc;

	if (!gj_cuda_probe(NULL, err))
		return 0;
	if ((rc = cudaGetDeviceCount(&count)) != cudaSuccess)
	{
		gj_cuda_fail(err, GJ_ERR_UNAVAILABLE, "could not count the CUDA devices", rc);
		return 0;
	}
	return count < GJ_MAX_DEVICES ? count : GJ_MAX_DEVICES;
}

/*
 * Open device number device (its primary context, at the first call) and
 * read its properties and free memory, as gj_cuda_probe does for device 0.
 * Leaves device selected in the calling thread.
 */
extern "C" bool
gj_cuda_probe_device(int device, GjDeviceInfo *info, GjError *err)
{
	size_t		free_bytes,
				total_bytes;
	cudaError_t rc;
	bool		ok = false;

	if (device < 0 || device >= GJ_MAX_DEVICES)
	{
		if (err != NULL)
		{
			err->code = GJ_ERR_UNAVAILABLE;
			snprintf(err->message, sizeof(err->message), "no CUDA device %d", device);
		}
		return false;
	}
	pthread_mutex_lock(&probe_lock);
	if (!cuda_probe_locked(NULL, err))
		goto done;
	if ((rc = cudaSetDevice(device)) != cudaSuccess)
	{
		gj_cuda_fail(err, GJ_ERR_UNAVAILABLE, "could not select the CUDA device", rc);
		goto done;
	}
	if (!device_opened[device])
	{
		cudaDeviceProp prop;

		if ((rc = cudaFree(0)) != cudaSuccess)
		{
			gj_cuda_fail(err, GJ_ERR_UNAVAILABLE, "could not open a CUDA context", rc);
			goto done;
		}
		if ((rc = cudaGetDeviceProperties(&prop, device)) != cudaSuccess)
		{
			gj_cuda_fail(err, GJ_ERR_UNAVAILABLE, "could not read CUDA device properties", rc);
			goto done;
		}
		memset(&device_info[device], 0, sizeof(GjDeviceInfo));
		snprintf(device_info[device].name, sizeof(device_info[device].name), "%.*s",
				 (int) sizeof(device_info[device].name) - 1, prop.name);
		device_info[device].sm_count = prop.multiProcessorCount;
		device_info[device].cc_major = prop.major;
		device_info[device].cc_minor = prop.minor;
		device_opened[device] = true;
	}
	if ((rc = cudaMemGetInfo(&free_bytes, &total_bytes)) != cudaSuccess)
	{
		gj_cuda_fail(err, GJ_ERR_UNAVAILABLE, "could not read CUDA device memory", rc);
		goto done;
	}
	device_info[device].total_memory = (int64_t) total_bytes;
	device_info[device].free_memory = (int64_t) free_bytes;
	if (info != NULL)
		*info = device_info[device];
	ok = true;
done:
	pthread_mutex_unlock(&probe_lock);
	return ok;
}

/*
 * Pin a host range for DMA once (the GPU service's staging area): copies
 * from it then run at the bus's speed without a bounce buffer, and without
 * a cudaHostRegister per query.  The range stays registered until
 * gj_cuda_unpin_host or the process exits.
 */
extern "C" bool
gj_cuda_pin_host(void *ptr, size_t len, GjError *err)
{
	cudaError_t rc;

	if (!gj_cuda_probe(NULL, err))
		return false;
	rc = cudaHostRegister(ptr, len, cudaHostRegisterPortable);
	if (rc != cudaSuccess)
		return gj_cuda_fail(err, GJ_ERR_DEVICE, "could not pin the staging memory", rc);
	return true;
}

extern "C" void
gj_cuda_unpin_host(void *ptr)
{
	(void) cudaHostUnregister(ptr);
	(void) cudaGetLastError();
}

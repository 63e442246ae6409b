/*-------------------------------------------------------------------------
 *
 * gpujoin_service.h
 *	  The GPU service: a background worker that owns the GPUs for every
 *	  backend (docs/architecture.md, section 8).  What the rest of the
 *	  extension sees of it: its settings, its registration from _PG_init,
 *	  and a snapshot of its state for gpujoin_devices().
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_SERVICE_H
#define GPUJOIN_SERVICE_H

#include "postgres.h"

/* gpujoin.service_backend */
typedef enum GjServiceBackend
{
	GJ_SERVICE_BACKEND_CUDA,
	GJ_SERVICE_BACKEND_CPU
} GjServiceBackend;

typedef enum GjServiceState
{
	GJ_SERVICE_NOT_STARTED,		/* registered, not yet running */
	GJ_SERVICE_STARTING,		/* opening its backend */
	GJ_SERVICE_READY,
	GJ_SERVICE_NO_DEVICE,		/* cuda: no usable GPU; exited, not restarted */
	GJ_SERVICE_STOPPED			/* exited; the postmaster restarts it */
} GjServiceState;

/* What gpujoin_devices() shows of the service. */
typedef struct GjServiceStatus
{
	bool		preloaded;		/* gpujoin in shared_preload_libraries */
	bool		enabled;		/* gpujoin.service */
	GjServiceState state;
	GjServiceBackend backend;
	int			pid;
	int64		starts;			/* times the process has started */
	char		device_name[128];
	int64		total_memory;	/* cuda: the device's, else 0 */
	int64		free_memory;
	int			sm_count;		/* cuda: the device's */
	int			cc_major;
	int			cc_minor;
	int64		memory_in_use;	/* by joins in the service */
	bool		staging_pinned; /* cuda: the staging area is pinned for DMA */
	int32		joins_queued;	/* requests waiting for the service */
	int32		joins_running;
	int32		workers;		/* threads serving requests */
	int64		joins_served;	/* opened since the service started */
	int64		device_budget;	/* for all joins together, 0: no limit
								 * (service_budget.c) */
	int64		device_reserved;	/* by the joins open now */
	int32		joins_waiting;	/* clients waiting for device memory */
	char		message[256];	/* why there is no device */
} GjServiceStatus;

/* GUCs, defined in planner_hook.c */
extern bool gpujoin_service_enabled;
extern int	gpujoin_service_backend;
extern int	gpujoin_service_staging_memory_mb;
extern int	gpujoin_service_workers;
extern int	gpujoin_service_device_memory_kb;

extern void gpujoin_service_init(void);
extern void gpujoin_service_status(GjServiceStatus *status);
extern const char *gpujoin_service_state_name(GjServiceState state);
/* gpujoin_service.c: an NVIDIA driver is installed (the planner asks too) */
extern bool gpujoin_nvidia_driver_present(void);
/*
 * gpujoin_service.c: a process that uses the cuda backend (the service, or
 * a backend that runs cuda itself) waits at its exit for its programs
 * compiling in the background
 */
extern void gpujoin_cuda_exit_hook(void);

/* service_client.c: the service is ready on the cuda backend */
extern bool gpujoin_service_runs_cuda(void);

extern PGDLLEXPORT void gpujoin_service_main(Datum main_arg);

#endif							/* GPUJOIN_SERVICE_H */

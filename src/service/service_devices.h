/*-------------------------------------------------------------------------
 *
 * service_devices.h
 *	  The GPU service's devices (docs/architecture.md, section 8, phase E):
 *	  every visible GPU (or, on the cpu backend, N simulated devices), a
 *	  join opened on one device or, for a nested loop, on several, and the
 *	  steps of one request run at once, one per device.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_SERVICE_DEVICES_H
#define GPUJOIN_SERVICE_DEVICES_H

#include "kernels/agg_reduce.h"
#include "kernels/agg_spec.h"
#include "kernels/backend.h"

/* GUCs: gpujoin.devices, gpujoin.service_simulated_devices (postmaster), gpujoin.service_spread_min_pairs */
extern char *gpujoin_devices_setting;
extern int	gpujoin_service_simulated_devices;
extern int	gpujoin_service_spread_min_pairs;
extern void gj_service_devices_define_gucs(void);

/*
 * One piece of a STEP or AGG_STEP request: the outer rows [outer_begin,
 * outer_end) of the request's tile, run as one step on one device into
 * the piece's result buffers (in the client's chunk, result_capacity rows
 * each).  The answer: where the step stopped (outer_next; below
 * outer_end when it stopped early), its matches, and the device.
 */
typedef struct GjStepPiece
{
	int64		outer_begin;
	int64		outer_end;
	uint32	   *result_outer;
	uint32	   *result_inner;
	int64		outer_next;		/* answer */
	int64		nmatches;		/* answer */
	int32		device;			/* answer: index in the service's devices */
} GjStepPiece;

/*
 * A join open in the service on one or more devices (malloc'd): a backend
 * state per device, each over its own copy of the input (its device
 * number set); with aggregates, a partial per device beyond the first
 * (the first reduces into the client's chunk), combined at AGG_FINISH.
 */
typedef struct GjDeviceJoin
{
	int			ndevices;
	int			device[GJ_MAX_DEVICES]; /* indexes in the service's devices */
	void	   *state[GJ_MAX_DEVICES];
	GjAggPartial *partial[GJ_MAX_DEVICES];	/* [0] unused: the client's */
	int64		budget;			/* reserved on each of its devices */
	GjJoinInput input[GJ_MAX_DEVICES];
} GjDeviceJoin;

/* The service's start and exit (main thread). */
extern bool gj_service_devices_open(const GjBackend *backend, char *message, size_t len);
extern void gj_service_devices_start_helpers(int nworkers);
extern void gj_service_devices_stop_helpers(void);
extern void gj_service_devices_refresh(void);

/* The worker threads' calls: nothing here may ereport. */
extern int	gj_service_choose_device(int64 budget, const bool *exclude);
extern int	gj_service_reserve_devices(int64 budget, int wanted, int *devices);
extern void gj_service_release_devices(int64 budget, const int *devices, int n);
extern GjDeviceJoin *gj_device_join_begin(const GjJoinInput *input, const int *devices, int n,
										  GjError *err);
extern bool gj_device_join_steps(GjDeviceJoin *dj, const GjTile *tile, GjStepPiece *pieces,
								 int npieces, int64 capacity, const GjAggSpec *spec,
								 GjAggPartial *partial, GjStats *stats, GjError *err);
extern bool gj_device_join_agg_finish(GjDeviceJoin *dj, const GjAggSpec *spec,
									  GjAggPartial *partial, GjStats *stats, GjError *err);
extern bool gj_device_join_tile_can_match(GjDeviceJoin *dj, const GjTile *tile);
extern void gj_device_join_end(GjDeviceJoin *dj);

#endif							/* GPUJOIN_SERVICE_DEVICES_H */

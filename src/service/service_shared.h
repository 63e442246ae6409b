/*-------------------------------------------------------------------------
 *
 * service_shared.h
 *	  The GPU service's shared memory, as its process (gpujoin_service.c)
 *	  and its clients (service_client.c) both see it: the control block,
 *	  one request slot per client process, and the staging area with its
 *	  chunk allocator (service_staging.c).  docs/architecture.md, section
 *	  8, has the protocol.
 *
 * Every field of the control block and of the allocator is guarded by
 * mutex.  A request slot belongs to the client whose pgprocno indexes it:
 * the client fills it and sets state to SUBMITTED; the service then owns
 * it until it sets state to DONE; a read or write barrier separates the
 * fields from the state on each side.
 *
 * The main shared memory is mapped at the same address in every process
 * of the cluster (they are forked from the postmaster), so pointers into
 * the staging area mean the same in the client and in the service; the
 * service still checks every one against the chunks the client owns.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_SERVICE_SHARED_H
#define GPUJOIN_SERVICE_SHARED_H

#include <signal.h>

#include "storage/latch.h"
#include "storage/spin.h"

#include "kernels/agg_reduce.h"
#include "kernels/backend.h"
#include "service/gpujoin_service.h"
#include "service/service_devices.h"

/* Staging is handed out in granules; a chunk is a run of them. */
#define GJ_STAGING_GRANULE		((Size) 1024 * 1024)

typedef enum GjRequestState
{
	GJ_REQ_IDLE = 0,
	GJ_REQ_SUBMITTED,			/* by the client */
	GJ_REQ_RUNNING,				/* handed to a worker thread by the service */
	GJ_REQ_DONE
} GjRequestState;

typedef enum GjRequestOp
{
	GJ_OP_OPEN = 1,				/* begin_join on the input at input */
	GJ_OP_STEP,					/* run_step of join on tile */
	GJ_OP_TILE_CAN_MATCH,		/* tile_can_match of join on tile */
	GJ_OP_CLOSE,				/* end_join of join */
	GJ_OP_AGG_STEP,				/* agg_step of join on tile */
	GJ_OP_AGG_FINISH,			/* agg_finish of join */
	GJ_OP_SHARE_INNER,			/* the chunk at share_chunk becomes a shared
								 * inner side, the client attached to it */
	GJ_OP_ATTACH_INNER,			/* attach to shared_inner, given its token */
	GJ_OP_DETACH_INNER,			/* detach from shared_inner */
	GJ_OP_RELEASE_INNER,		/* drop the query's hold on shared_inner */
	GJ_OP_WAIT_OPEN				/* wait for join, opened in the background */
} GjRequestOp;

typedef struct GjServiceSlot
{
	volatile int32 state;		/* GjRequestState */
	int32		op;				/* GjRequestOp */
	int			client_pid;		/* checked against the PGPROC of the slot */
	double		submitted_ms;	/* gj_clock_ms() at submission: the time a
								 * request waits for a worker is queue time */
	uint64		generation;		/* of the service the client asked */
	uint64		join;			/* handle of the join (OPEN returns it) */

	/* OPEN */
	const GjJoinInput *input;	/* in one of the client's chunks */
	uint64		shared_inner;	/* OPEN: 0, or the shared inner side (its
								 * handle) whose chunk holds input->inner;
								 * SHARE returns it, ATTACH and DETACH name it */

	/* SHARE_INNER, ATTACH_INNER (service_shared_join.c) */
	uint64		share_token;	/* the query's: ATTACH must give the same */
	char	   *share_chunk;	/* SHARE: the client's chunk; ATTACH: returned */
	int64		share_len;		/* bytes of it that hold the inner side */
	int			share_holder;	/* SHARE: the Gather's leader, whose query
								 * holds the side until RELEASE_INNER */
	GjAggPartial *agg_partial;	/* with input->agg_spec: where the service
								 * reduces (AGG_STEP) and returns (AGG_FINISH)
								 * the join's partial aggregates */

	/*
	 * OPEN: the most devices the client wants the join on (a nested loop's
	 * steps spread over them); the answer: the devices it opened on.
	 */
	int32		ndevices;

	/*
	 * OPEN: answer as soon as the join is checked and its device memory
	 * reserved, and open it (copy, sort or hash its keys) after the answer,
	 * while the client goes on; its next request on the join waits for the
	 * open (WAIT_OPEN says whether it succeeded).  Not for nested loops.
	 */
	bool		open_in_background;
	bool		open_fault;		/* gpujoin.debug_fault = ahead_open_fails: the
								 * open in the background fails */

	/*
	 * STEP, AGG_STEP: npieces pieces of the tile's outer rows, run at once,
	 * one per device of the join (service_devices.h), each into its own
	 * result buffers of result_capacity rows.
	 */
	GjTile		tile;
	int64		result_capacity;
	int32		npieces;
	GjStepPiece pieces[GJ_MAX_DEVICES];

	/* answers */
	bool		ok;
	bool		can_match;		/* TILE_CAN_MATCH */
	GjStats		stats;
	GjError		err;
} GjServiceSlot;

/*
 * One device of the service, as gpujoin_devices() shows it: a GPU, or on
 * the cpu backend a simulated device (gpujoin.service_simulated_devices).
 */
typedef struct GjServiceDevice
{
	char		name[128];
	int32		number;			/* CUDA device number, or the simulated one's */
	int64		total_memory;	/* cuda: the device's */
	int64		free_memory;
	int32		sm_count;
	int32		cc_major;
	int32		cc_minor;
	int64		memory_in_use;	/* budgets of the joins open on it */
	int64		budget_share;	/* its share of the device budget, 0: no
								 * limit (service_budget.c) */
	int32		joins_open;
	int32		steps_queued;	/* opens and steps handed to it, not done */
	int64		steps_run;
} GjServiceDevice;

typedef struct GjServiceShared
{
	slock_t		mutex;
	GjServiceStatus status;
	Latch	   *service_latch;	/* NULL while the service is not ready */
	uint64		generation;		/* bumped at every start of the service */
	int			nslots;
	GjServiceSlot *slots;		/* nslots, by client pgprocno */
	char	   *staging;		/* staging_granules * GJ_STAGING_GRANULE */
	int32		staging_granules;
	int32	   *granule_owner;	/* client pid of each granule's chunk, 0: free */
	int32	   *granule_run;	/* at a chunk's first granule: its length */
	int32		ndevices;		/* 0 until the service opened them */
	GjServiceDevice devices[GJ_MAX_DEVICES];
} GjServiceShared;

extern GjServiceShared *gj_service;

/* service_staging.c */
extern Size gj_staging_shmem_size(int nslots, int32 granules);
extern void gj_staging_shmem_init(GjServiceShared *shared, char *after_header,
								  int nslots, int32 granules);
extern void *gj_staging_alloc(Size size);
extern void gj_staging_free(void *chunk);
extern void gj_staging_prefault(void *chunk, Size size);
extern bool gj_staging_owned_by(const void *ptr, Size len, int pid);
extern int64 gj_staging_free_dead_owners(void);
extern Size gj_staging_transfer(void *chunk, int from_pid, int to_pid);
extern void gj_staging_free_owned(void *chunk, int owner_pid);

/* service_request.c: a client's round trip to the service */
extern bool gpujoin_service_ready(void);
extern uint64 gj_service_generation(void);
extern void gj_service_set_error(GjError *err, int code, const char *message);
extern GjServiceSlot *gj_service_my_slot(GjError *err);
extern bool gj_service_call(GjServiceSlot *slot, uint64 generation, GjError *err);

/* service_client.c */
extern const GjBackend gj_service_cpu_backend;
extern const GjBackend gj_service_cuda_backend;
extern bool gpujoin_service_await_start(void);

/* Does this backend run the join in the GPU service? */
static inline bool
gj_backend_in_service(const GjBackend *backend)
{
	return backend == &gj_service_cpu_backend || backend == &gj_service_cuda_backend;
}
extern int64 gj_service_max_matches(void);
extern double gj_service_queue_ms;
extern double gj_service_start_wait_ms;	/* gpujoin_service_await_start's */
extern bool gj_service_join_wait_open(void *state, GjError *err);

/* service_shared_join.c, the client's side: shared inner sides */
extern bool gj_service_share_inner(char *chunk, int64 len, uint64 token, int holder_pid,
								   uint64 *handle, GjError *err);
extern void gj_service_release_inner(uint64 handle, uint64 token);
extern bool gj_service_attach_inner(uint64 handle, uint64 token, char **chunk,
									int64 *len, GjError *err);
extern void gj_service_detach_inner(uint64 handle);
extern uint64 gj_service_inner_shared_by(const GjKeyColumns *cols, int64 nrows);

/* service_shared_join.c, the service's side */
extern void gj_service_handle_share(GjServiceSlot *slot, int pid);
extern void gj_service_handle_attach(GjServiceSlot *slot, int pid);
extern void gj_service_handle_detach(GjServiceSlot *slot, int pid);
extern void gj_service_handle_release(GjServiceSlot *slot, int pid);
extern bool gj_service_shared_inner_ref(uint64 handle, int pid, const GjKeyColumns *cols,
										int64 nrows);
extern void gj_service_shared_inner_unref(uint64 handle);
extern bool gj_service_in_shared_inner(uint64 handle, const void *ptr, Size len);
struct GjSharedInnerChunk;		/* service_validate.h */
extern bool gj_service_shared_inner_chunk(uint64 handle, struct GjSharedInnerChunk *out);
extern const void *gj_service_shared_inner_prepared(uint64 handle, const GjJoinInput *input,
													const GjBackend *backend, GjTimes *times);
extern void gj_service_shared_inner_sweep(void);
extern void gj_service_shared_inners_orphan(void);

/* gpujoin_service.c: the service's side of a request */
extern void gj_service_handle_requests(void);

/* service_budget.c: the device memory of all joins together */
extern void gj_service_budget_init(void);
extern int64 gj_service_budget_total(void);
extern int64 gj_service_budget_wait(int64 budget, int64 min_budget,
									double *deadline_ms, double *waited_ms);
extern double gj_service_budget_wait_bound(void);

/*
 * service_workers.c: the threads that serve requests.  They serve one with
 * the function the service passes at start (gpujoin_service.c's), so that
 * this file, below gpujoin_service.c, never calls up into it.
 */
typedef void (*GjServeRequestFn) (int slotno);
extern void gj_service_workers_start(int nworkers, GjServeRequestFn serve);
extern int	gj_service_workers_running(void);
extern void gj_service_workers_submit(int slotno);
extern void gj_service_workers_stop(void);
extern void gj_service_thread_signals(sigset_t *mask);

#endif							/* GPUJOIN_SERVICE_SHARED_H */

/*-------------------------------------------------------------------------
 *
 * service_validate.h
 *	  The GPU service's checks of what a client's request carries, before
 *	  the service follows any of it (service_validate.c), and the
 *	  aggregates of a join as the service keeps them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_SERVICE_VALIDATE_H
#define GPUJOIN_SERVICE_VALIDATE_H

#include "kernels/agg_reduce.h"
#include "kernels/agg_spec.h"
#include "kernels/backend.h"

/*
 * The aggregates of a join (its input had an agg_spec), malloc'd: what the
 * backend's agg_step reads and writes, every pointer checked against the
 * client's chunks, and copies of what the client could change under it and
 * whose values index memory (the pair programs, the group numbers).
 */
typedef struct ServiceAgg
{
	GjAggSpec	spec;			/* the validated copy the backend reads */
	GjInstr		pair_instrs[GJ_AGG_MAX_ARGS][GJ_MAX_INSTRS];
	uint32	   *outer_group;	/* copies, every number checked (a pool's) */
	uint32	   *inner_group;
	bool		inner_group_shared; /* the shared inner side's copy, not ours */
	GjAggPartial partial;		/* its group arrays in the client's chunk */
	Size		group_pairs_bytes;
	Size		group_acc_bytes;
	GjAggPartial *client_partial;	/* where AGG_FINISH returns the totals */
	bool		finished;
} ServiceAgg;

/*
 * The shared inner side a join reads (service_shared_join.c), for the
 * checks of its aggregate's inner arrays: its handle and chunk.
 */
typedef struct GjSharedInnerChunk
{
	uint64		handle;
	const char *chunk;
	int64		len;
} GjSharedInnerChunk;

extern bool gj_service_side_valid(const GjKeyColumns *cols, int64 nrows, int pid,
								  const GjSharedInnerChunk *shared);
extern bool gj_service_program_valid(const GjInstr *instrs, int ninstrs, int outer_ncols,
									 int inner_ncols);
extern bool gj_service_join_specs_valid(const GjJoinInput *in);

extern ServiceAgg *gj_service_agg_from_request(const GjJoinInput *in, GjAggPartial *client_partial,
											   int pid, const GjSharedInnerChunk *shared,
											   const char **why);
extern void gj_service_forget_shared_groups(uint64 handle);
extern void gj_service_free_agg(ServiceAgg *agg);
extern bool gj_service_partials_owned(const ServiceAgg *agg, int pid);

#endif							/* GPUJOIN_SERVICE_VALIDATE_H */

/*-------------------------------------------------------------------------
 *
 * backend_dispatch.c
 *	  The executor's calls into a backend (backend.h), with faults injected
 *	  on demand for tests.
 *
 * The executor never calls a backend's begin_join, run_step or agg_step
 * directly but through gpujoin_backend_begin, gpujoin_backend_step and
 * gpujoin_backend_agg_step here, so that gpujoin.debug_fault (superuser
 * only) can make them fail the way a device does: out of memory when a join
 * is opened (the executor shrinks the tiles and retries, then falls back to
 * the cpu backend, which the fault leaves alone), or an error or
 * out-of-memory in the middle of the join (the query ends with an ERROR,
 * everything is released, the next query works).
 * The regression tests use it to exercise those paths on the cpu backend,
 * and on the GPU machine on the cuda one.  Unset, it costs one comparison
 * per backend call.
 *
 * Unlike the backends, this file is part of the server side: it includes
 * postgres.h and reads the GUC.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "gpujoin.h"

int			gpujoin_debug_fault = GPUJOIN_FAULT_NONE;

/* calls of the current join, counted from gpujoin_fault_join_start() */
static int	begin_calls;
static int	step_calls;

/* times begin_oom fails a join's opening before letting it through */
#define BEGIN_OOM_FAILURES	3
/* the step that step_error and step_oom fail */
#define FAULTY_STEP			2

/* the backend the join was first opened on: begin_oom fails only that one */
static const GjBackend *begin_backend;

void
gpujoin_fault_join_start(void)
{
	begin_calls = 0;
	step_calls = 0;
	begin_backend = NULL;
}

static void
inject(GjError *err, int code, const char *what)
{
	err->code = code;
	snprintf(err->message, sizeof(err->message),
			 "%s injected by gpujoin.debug_fault", what);
}

/* Does a step fault fire on this step?  Then *err says which. */
static bool
step_fault(GjError *err)
{
	if (++step_calls != FAULTY_STEP)
		return false;
	if (gpujoin_debug_fault == GPUJOIN_FAULT_STEP_ERROR)
		inject(err, GJ_ERR_DEVICE, "device error");
	else if (gpujoin_debug_fault == GPUJOIN_FAULT_STEP_OOM)
		inject(err, GJ_ERR_OUT_OF_MEMORY, "out of device memory");
	else
		return false;
	return true;
}

void *
gpujoin_backend_begin(const GjBackend *backend, const GjJoinInput *input, GjError *err)
{
	if (begin_backend == NULL)
		begin_backend = backend;
	/* the device is out of memory, not the host the join falls back to */
	if (unlikely(gpujoin_debug_fault == GPUJOIN_FAULT_BEGIN_OOM) &&
		backend == begin_backend && ++begin_calls <= BEGIN_OOM_FAILURES)
	{
		inject(err, GJ_ERR_OUT_OF_MEMORY, "out of device memory");
		return NULL;
	}
	return backend->begin_join(input, err);
}

/*
 * Would the next step fail by an injected fault?  Then *err says how.  A
 * step that runs on the overlap thread (gpujoin_overlap.c) is checked here,
 * on the executor's thread, before it starts.
 */
bool
gpujoin_step_fault(GjError *err)
{
	return unlikely(gpujoin_debug_fault != GPUJOIN_FAULT_NONE) && step_fault(err);
}

bool
gpujoin_backend_step(const GjBackend *backend, void *state, const GjTile *tile,
					 int64_t *outer_next, GjMatches *matches, GjStats *stats,
					 GjError *err)
{
	if (gpujoin_step_fault(err))
		return false;
	return backend->run_step(state, tile, outer_next, matches, stats, err);
}

/* The aggregate fast path of a backend (agg_step), with the same faults. */
bool
gpujoin_backend_agg_step(const GjBackend *backend, void *state, const GjTile *tile,
						 int64_t *outer_next, const struct GjAggSpec *spec, struct GjAggPartial *partial,
						 GjMatches *matches, GjStats *stats, GjError *err)
{
	if (unlikely(gpujoin_debug_fault != GPUJOIN_FAULT_NONE) && step_fault(err))
		return false;
	return backend->agg_step(state, tile, outer_next, spec, partial, matches, stats, err);
}

/* What a backend still holds of a join's aggregates (agg_finish), if anything. */
bool
gpujoin_backend_agg_finish(const GjBackend *backend, void *state, const struct GjAggSpec *spec,
						   struct GjAggPartial *partial, GjStats *stats, GjError *err)
{
	if (backend->agg_finish == NULL)
		return true;
	return backend->agg_finish(state, spec, partial, stats, err);
}

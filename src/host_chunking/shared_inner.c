/*-------------------------------------------------------------------------
 *
 * shared_inner.c
 *	  The inner side of a parallel GpuJoin, drained once for the whole
 *	  Gather and shared through the GPU service (docs/architecture.md,
 *	  section 8, "Parallel GpuJoin").
 *
 * Every process of a parallel plan (the leader and each worker) runs its
 * own GpuJoin over its share of the outer rows, and every one of them needs
 * the whole inner side.  Without sharing, each drains it itself.  With the
 * GPU service running, the first process that needs the inner side drains
 * it into its host buffer, copies the buffer (key columns, stored columns,
 * the by-reference values they point to) into one staging chunk, and hands
 * the chunk to the service as a shared inner side
 * (service_shared_join.c); the others drain their share of the outer
 * side meanwhile (gpujoin_shared_inner_busy), then wait on a condition
 * variable in the node's shared memory and attach to it by handle.  Every
 * process then reads the inner side where it lies: its inner buffer's
 * arrays point into the chunk (the main shared memory is mapped at the
 * same address in every process, so the by-reference values do too), and
 * the proxy backend
 * (service_client.c) opens the process's join in the service with those
 * key columns as they are, so the inner side is staged once as well.
 *
 * After a side that one process drained, the chunk may hold room that the
 * node asked for (GpuJoinState's inner_extra_size: the aggregate node's
 * inner groups, which the processes number together there,
 * gpujoin_agg_shared_groups.c; where the staging area has no room for it,
 * the side is shared without it); each process finds it with
 * gpujoin_shared_inner_extra.  A side put together from shares has none:
 * the aggregate node's partial paths drain their inner side in parallel
 * only where they number no inner groups (gpujoin_agg_path.c).
 *
 * What stays per process: the outer rows, the keys' encoding for the
 * device (which reads the shared arrays and writes only its own), the
 * join in the service (which reads the inner side sorted or hashed once
 * where the backend can: service_shared_join.c), its match buffers, steps
 * and emission.
 *
 * Where sharing does not apply, every process drains the inner side itself
 * as before: the join does not run in the service (the cpu backend runs in
 * each process), gpujoin.parallel_shared_inner is off, a key is numeric (its device values depend on the outer side's
 * scale), the drained side spilled to a file, or the staging area has no
 * room for it.  A worker that comes after the leader released the side
 * (a LIMIT above the Gather stopped it) drains it itself too.
 * The answer is the same either way; only the work differs.
 *
 * Where the inner rel has a partial path, the planner may give the join
 * that partial plan as its inner child and the whole inner plan as a third
 * (gpujoin_path.c): then the inner side is drained in parallel, as
 * Parallel Hash builds its table.  Every process that comes while the
 * drain is open drains its share and stages it in a chunk of its own; the
 * last to finish puts the shares together into one chunk, which is shared
 * as above (obtain_drained_in_parallel).  Since a process then holds only
 * its share, the fallback where sharing fails is the whole inner plan,
 * drained by each process.
 *
 * Lifetime: a process detaches when its node shuts down (no row is read
 * after that), when it rescans, and on ERROR through a callback of its
 * join context.  Besides the processes, the query holds the side for the
 * leader (a worker may start after every other process has detached): the
 * leader releases that hold when its Gather's shared memory goes (the
 * segment's detach callback: at the Gather's end, on ERROR, on exit) or
 * the Gather runs again (ReInitializeDSM, which starts a new epoch: the
 * inner side is drained again, once).  The service frees the chunk once
 * neither a process, a join nor the hold uses it, and its sweep drops the
 * processes (and a holding leader) that are gone.
 *
 * A side is drained by side_drain.c, below this file; the executor
 * (gpujoin_open.c, gpujoin_parallel.c) calls in through
 * host_chunking/staging.h.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "storage/dsm.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/spin.h"
#include "utils/datum.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "gpujoin.h"
#include "host_chunking/staging_internal.h"
#include "service/service_shared.h"

typedef enum GjSharedInnerState
{
	GJ_SI_NONE = 0,				/* nobody has asked for the inner side */
	GJ_SI_DRAINING,				/* one process drains it; drained in
								 * parallel: the attached ones drain shares */
	GJ_SI_COMBINING,			/* drained in parallel: the last process to
								 * finish puts the shares together */
	GJ_SI_READY,				/* in the service: handle, token */
	GJ_SI_EMPTY,				/* drained in parallel: no share had a row */
	GJ_SI_UNSHARED				/* not shared: every process drains it */
} GjSharedInnerState;

/* In the node's dynamic shared memory, ahead of the workers' counters. */
typedef struct GpuJoinSharedInner
{
	slock_t		mutex;
	ConditionVariable cv;		/* state left GJ_SI_DRAINING */
	int			state;			/* GjSharedInnerState */
	bool		disabled;		/* no shared memory segment: no workers */
	bool		leader_done;	/* the leader released the query's hold */
	int			leader_pid;		/* holds each epoch's side in the service */
	uint64		epoch;			/* bumped by each (re)initialisation */
	uint64		token;			/* the service checks it at attach */
	uint64		handle;			/* of the shared inner side in the service */
	/* an inner side drained in parallel (obtain_drained_in_parallel): */
	int			ndraining;		/* processes draining a share, not yet done */
	bool		share_failed;	/* a share could not be staged */
	int			nshares;		/* the staged shares, in the array ... */
	int			max_shares;		/* ... of this many (a process each) ... */
	Size		shares_offset;	/* ... this far from here (gpujoin_parallel.c) */
} GpuJoinSharedInner;

/* A staged share of an inner side drained in parallel. */
typedef struct SharedInnerShare
{
	char	   *chunk;			/* in the staging area, its process's */
	Size		len;
} SharedInnerShare;

/* What the chunk begins with; every pointer points into the same chunk. */
#define SHARED_INNER_MAGIC	0x474a5349	/* "GJSI" */

typedef struct SharedInnerColumn
{
	Datum	   *values;
	bool	   *isnull;
	bool		has_nulls;
} SharedInnerColumn;

typedef struct SharedInnerHeader
{
	uint32		magic;
	int32		nkeys;
	int32		ncols;
	int64		nrows;
	int64		bytes_stored;
	int64	   *key_values[GJ_MAX_KEY_COLS];
	uint8	   *key_isnull[GJ_MAX_KEY_COLS];
	uint8	   *drain_inexact;
	char	   *extra;			/* the node's inner_extra_write, or NULL */
	int64		extra_len;
	SharedInnerColumn cols[FLEXIBLE_ARRAY_MEMBER];
} SharedInnerHeader;

static bool obtain_drained_in_parallel(GpuJoinState *gjs);
static bool obtain_drained_once(GpuJoinState *gjs);
static void wait_for_second_drainer(GpuJoinSharedInner *si, uint64 epoch);
static bool stage_share(GpuJoinState *gjs);
static void put_together(GpuJoinState *gjs, uint64 token, int holder_pid);

Size
gpujoin_shared_inner_size(void)
{
	return sizeof(GpuJoinSharedInner);
}

/* The array of staged shares, for a Gather of nworkers workers and its leader. */
Size
gpujoin_shared_inner_shares_size(int nworkers)
{
	return mul_size(nworkers + 1, sizeof(SharedInnerShare));
}

static SharedInnerShare *
shares_of(GpuJoinSharedInner *si)
{
	return (SharedInnerShare *) ((char *) si + si->shares_offset);
}

/* A fresh epoch's token: only this query's processes know it. */
static uint64
new_token(void)
{
	uint64		token = 0;

	if (!pg_strong_random(&token, sizeof(token)))
		token = ((uint64) MyProcPid << 32) ^ (uint64) random();
	return token | 1;
}

/*
 * The leader releases the query's hold on the epoch's shared inner side
 * (its Gather is done with it: the workers have finished).  If the side is
 * still being drained, the drainer sees leader_done and releases the hold
 * itself once it has shared the side.
 */
static void
release_hold(GpuJoinSharedInner *si)
{
	uint64		handle = 0;

	SpinLockAcquire(&si->mutex);
	if (!si->leader_done)
	{
		si->leader_done = true;
		if (si->state == GJ_SI_READY)
			handle = si->handle;
	}
	SpinLockRelease(&si->mutex);
	if (handle != 0)
		gj_service_release_inner(handle, si->token);
}

/*
 * The leader's segment goes (the Gather's end, an ERROR, the leader's
 * exit): the last moment its hold can be released.  The callbacks of a
 * detach run before the segment is unmapped.
 */
static void
shared_inner_on_detach(dsm_segment *seg, Datum arg)
{
	release_hold((GpuJoinSharedInner *) DatumGetPointer(arg));
}

static void
new_epoch(GpuJoinSharedInner *si)
{
	si->state = si->disabled ? GJ_SI_UNSHARED : GJ_SI_NONE;
	si->leader_done = false;
	si->epoch++;
	si->handle = 0;
	si->token = new_token();
	si->ndraining = 0;
	si->share_failed = false;
	si->nshares = 0;
}

/* InitializeDSM, in the leader. */
void
gpujoin_shared_inner_init(GpuJoinSharedInner *si, ParallelContext *pcxt, Size shares_offset)
{
	SpinLockInit(&si->mutex);
	ConditionVariableInit(&si->cv);
	si->leader_pid = MyProcPid;
	si->epoch = 0;
	si->disabled = pcxt->seg == NULL;
	si->max_shares = pcxt->nworkers + 1;
	si->shares_offset = shares_offset;
	new_epoch(si);
	if (pcxt->seg != NULL)
		on_dsm_detach(pcxt->seg, shared_inner_on_detach, PointerGetDatum(si));
}

/*
 * ReInitializeDSM, in the leader: the workers of the last run are gone and
 * the leader detached in its rescan; the last run's side is released, and
 * the next run shares the inner side anew.
 */
void
gpujoin_shared_inner_reinit(GpuJoinSharedInner *si)
{
	release_hold(si);
	SpinLockAcquire(&si->mutex);
	new_epoch(si);
	SpinLockRelease(&si->mutex);
}

/*
 * Does the GPU service run the joins (gpujoin_pick_backend's rule)?  On the
 * cpu backend in each process, the processes keep their own inner sides.
 */
static bool
service_runs_joins(void)
{
	return (gpujoin_device == GPUJOIN_DEVICE_SERVICE && gpujoin_service_ready()) ||
		(gpujoin_device != GPUJOIN_DEVICE_CPU && gpujoin_service_runs_cuda());
}

/*
 * The planner's side of the rule (gpujoin_path.c): may a parallel join
 * whose inner side takes about inner_bytes drain it in parallel?  Where
 * the shares will most likely be put together in the service: the setting
 * is on, the service runs the joins, and the staging area has room for
 * the shares and the side they make at once, twice over (the rule at
 * execution, share and put_together, is half of it for the side).
 */
bool
gpujoin_inner_drain_may_share(double inner_bytes)
{
	if (!gpujoin_parallel_inner_drain || !gpujoin_parallel_shared_inner || !service_runs_joins() ||
		gj_service == NULL)
		return false;
	return inner_bytes * 4.0 <= (double) gj_service->staging_granules * GJ_STAGING_GRANULE;
}

/* Can this execution share its inner side at all? */
static bool
sharing_applies(GpuJoinState *gjs)
{
	int			k;

	if (gjs->shared_inner == NULL || !gpujoin_parallel_shared_inner || gjs->fill_inner ||
		!service_runs_joins())
		return false;
	/* a numeric key's device value depends on both sides' scale */
	for (k = 0; k < gjs->inner_buf.nkeys; k++)
		if (gjs->inner_buf.keys[k].type == GJT_NUMERIC)
			return false;
	for (k = 0; k < gjs->outer_buf.nkeys; k++)
		if (gjs->outer_buf.keys[k].type == GJT_NUMERIC)
			return false;
	return true;
}

/* Bytes of the chunk that holds buf's rows (see flatten). */
static Size
flat_size(const HostSideBuffer *buf)
{
	int64		n = buf->nrows;
	Size		size = MAXALIGN(offsetof(SharedInnerHeader, cols) +
								sizeof(SharedInnerColumn) * buf->ncols);
	int			k,
				c;

	for (k = 0; k < buf->nkeys; k++)
	{
		size = add_size(size, MAXALIGN(sizeof(int64) * n));
		if (buf->keys[k].isnull != NULL)
			size = add_size(size, MAXALIGN(n));
	}
	if (buf->drain_inexact != NULL)
		size = add_size(size, MAXALIGN(n));
	for (c = 0; c < buf->ncols; c++)
	{
		const HostDatumColumn *col = &buf->cols[c];
		int64		r;

		size = add_size(size, MAXALIGN(sizeof(Datum) * n) + MAXALIGN(n));
		if (col->byval)
			continue;
		for (r = 0; r < n; r++)
			if (!col->isnull[r])
				size = add_size(size, MAXALIGN(datumGetSize(col->values[r], false, col->typlen)));
	}
	return size;
}

static void *
put(char **at, const void *src, Size n)
{
	void	   *dst = *at;

	if (n > 0)
		memcpy(dst, src, n);
	*at += MAXALIGN(n);
	return dst;
}

/*
 * Copy buf's rows into chunk: the header, the key columns, the stored
 * columns with their by-reference values, every pointer pointing into the
 * chunk.
 */
static void
flatten(const HostSideBuffer *buf, char *chunk, Size size)
{
	SharedInnerHeader *h = (SharedInnerHeader *) chunk;
	int64		n = buf->nrows;
	char	   *at = chunk + MAXALIGN(offsetof(SharedInnerHeader, cols) +
									  sizeof(SharedInnerColumn) * buf->ncols);
	int			k,
				c;

	memset(h, 0, offsetof(SharedInnerHeader, cols));
	h->magic = SHARED_INNER_MAGIC;
	h->nkeys = buf->nkeys;
	h->ncols = buf->ncols;
	h->nrows = n;
	h->bytes_stored = buf->bytes_stored;
	for (k = 0; k < buf->nkeys; k++)
	{
		h->key_values[k] = put(&at, buf->keys[k].values, sizeof(int64) * n);
		h->key_isnull[k] = buf->keys[k].isnull == NULL ? NULL :
			put(&at, buf->keys[k].isnull, n);
	}
	h->drain_inexact = buf->drain_inexact == NULL ? NULL : put(&at, buf->drain_inexact, n);
	for (c = 0; c < buf->ncols; c++)
	{
		const HostDatumColumn *col = &buf->cols[c];
		SharedInnerColumn *to = &h->cols[c];
		int64		r;

		to->values = put(&at, col->values, sizeof(Datum) * n);
		to->isnull = put(&at, col->isnull, n);
		to->has_nulls = col->has_nulls;
		if (col->byval)
			continue;
		for (r = 0; r < n; r++)
		{
			if (col->isnull[r])
				continue;
			to->values[r] = PointerGetDatum(put(&at, DatumGetPointer(col->values[r]),
												datumGetSize(col->values[r], false,
															 col->typlen)));
		}
	}
	Assert(at <= chunk + size);
}

/*
 * Make buf a read-only view of the rows in a shared chunk.  False (buf
 * left empty) when the chunk's shape is not this buffer's.
 */
static bool
view(HostSideBuffer *buf, const char *chunk, int64 len)
{
	const SharedInnerHeader *h = (const SharedInnerHeader *) chunk;
	int			k,
				c;

	gj_host_buffer_reset(buf);
	if (len < (int64) offsetof(SharedInnerHeader, cols) || h->magic != SHARED_INNER_MAGIC ||
		h->nkeys != buf->nkeys || h->ncols != buf->ncols ||
		len < (int64) (offsetof(SharedInnerHeader, cols) + sizeof(SharedInnerColumn) * h->ncols))
		return false;
	for (k = 0; k < buf->nkeys; k++)
	{
		buf->keys[k].values = h->key_values[k];
		buf->keys[k].isnull = h->key_isnull[k];
	}
	buf->drain_inexact = h->drain_inexact;
	for (c = 0; c < buf->ncols; c++)
	{
		buf->cols[c].values = h->cols[c].values;
		buf->cols[c].isnull = h->cols[c].isnull;
		buf->cols[c].has_nulls = h->cols[c].has_nulls;
	}
	buf->nrows = h->nrows;
	buf->capacity = h->nrows;
	buf->bytes_stored = h->bytes_stored;
	buf->complete = true;
	return true;
}

/*
 * On ERROR (the join context goes): detach in the service.  The node's
 * shared memory may be gone already, so its count is not touched; the
 * query is ending anyway.
 */
static void
inner_cleanup(void *arg)
{
	GpuJoinState *gjs = arg;
	uint64		handle = gjs->inner_attached;
	char	   *share_chunk = gjs->inner_share_chunk;

	gjs->inner_attached = 0;
	gjs->inner_shared_chunk = NULL;
	gjs->inner_share_chunk = NULL;
	if (handle != 0)
		gj_service_detach_inner(handle);
	if (share_chunk != NULL)
		gj_staging_free(share_chunk);
}

/* Make sure inner_cleanup runs when the join context goes. */
static void
arm_cleanup(GpuJoinState *gjs)
{
	if (!gjs->inner_cleanup_armed)
	{
		gjs->inner_cleanup.func = inner_cleanup;
		gjs->inner_cleanup.arg = gjs;
		MemoryContextRegisterResetCallback(gjs->join_cxt, &gjs->inner_cleanup);
		gjs->inner_cleanup_armed = true;
	}
}

/* Remember that this process reads shared inner side handle, in chunk. */
static void
attached(GpuJoinState *gjs, uint64 handle, const char *chunk, Size len)
{
	gjs->inner_attached = handle;
	gjs->inner_shared_chunk = chunk;
	gjs->inner_shared_len = len;
	arm_cleanup(gjs);
	gjs->counters.inner_shared++;
}

/* The bytes the node wants after an inner side of nrows rows (put_extra). */
static Size
extra_size(GpuJoinState *gjs, int64 nrows)
{
	if (gjs->inner_extra_size == NULL || nrows <= 0)
		return 0;
	return MAXALIGN(gjs->inner_extra_size(gjs, nrows));
}

/*
 * After the side in chunk (side_size bytes of size): the room the node
 * asked for, set up by it (GpuJoinState's inner_extra_write), for what the
 * processes compute from the side together.
 */
static void
put_extra(GpuJoinState *gjs, char *chunk, Size side_size, Size size)
{
	SharedInnerHeader *h = (SharedInnerHeader *) chunk;

	if (size > side_size)
	{
		h->extra = chunk + side_size;
		h->extra_len = (int64) (size - side_size);
		gjs->inner_extra_write(gjs, h->nrows, h->extra, size - side_size);
	}
}

/*
 * This process drained the inner side: share it.  True when the inner
 * buffer now reads the shared chunk.
 */
static bool
share(GpuJoinState *gjs, uint64 token, int holder_pid, uint64 *handle)
{
	HostSideBuffer *buf = &gjs->inner_buf;
	GjError		err;
	Size		size;
	Size		side_size;
	char	   *chunk;

	if (gjs->inner_spill.nchunks > 0 || buf->nrows == 0)
		return false;
	side_size = flat_size(buf);
	size = add_size(side_size, extra_size(gjs, buf->nrows));
	if (size > (Size) gj_service->staging_granules * GJ_STAGING_GRANULE / 2 ||
		(chunk = gj_staging_alloc(size)) == NULL)
	{
		/* no room for the node's extra: the side shared without it */
		if (size == side_size)
			return false;
		size = side_size;
		if (size > (Size) gj_service->staging_granules * GJ_STAGING_GRANULE / 2 ||
			(chunk = gj_staging_alloc(size)) == NULL)
			return false;
	}
	flatten(buf, chunk, size);
	put_extra(gjs, chunk, side_size, size);
	memset(&err, 0, sizeof(err));
	if (!gj_service_share_inner(chunk, (int64) size, token, holder_pid, handle, &err))
	{
		elog(DEBUG1, "GpuJoin: the inner side is not shared: %s", err.message);
		gj_staging_free(chunk);
		return false;
	}
	/* the chunk is the service's now; this process reads it as the others do */
	if (!view(buf, chunk, (int64) size))
		elog(ERROR, "GpuJoin: the shared inner side it wrote does not read back");
	attached(gjs, *handle, chunk, size);
	return true;
}

/*
 * Attach to the shared inner side another process shared and read it.
 * False when that is too late (the leader released it) or refused: the
 * caller drains the inner side itself then.
 */
static bool
attach(GpuJoinState *gjs, uint64 handle, uint64 token)
{
	GjError		err;
	char	   *chunk;
	int64		len;

	memset(&err, 0, sizeof(err));
	if (gj_service_attach_inner(handle, token, &chunk, &len, &err))
	{
		if (view(&gjs->inner_buf, chunk, len))
		{
			attached(gjs, handle, chunk, (Size) len);
			return true;
		}
		gj_service_detach_inner(handle);
	}
	else
		elog(DEBUG1, "GpuJoin: drains the inner side itself: %s", err.message);
	return false;
}

/*
 * The inner side drained in parallel (the plan's inner child is a partial
 * plan, gpujoin_path.c), as Parallel Hash builds its table: every process
 * that comes while the inner side is being drained attaches to the drain
 * (ndraining), drains its share of the partial plan (the parallel scan
 * hands each block to one process) and stages it in a chunk of its own;
 * the last one to finish (ndraining back to 0) puts the shares together
 * into one chunk, shares that with the service exactly as a single drainer
 * does, and wakes the others, which attach to it.  When the last one
 * finishes, every part of the partial plan has been handed out to, and
 * read by, a process that was attached, so the shares are the whole inner
 * side whatever the number of processes (workers that did not start, a
 * leader that does not take part).
 *
 * A process that comes later (the side is being put together, or is
 * there) never drains its share: its partial scan would find nothing left,
 * or a next run's state.  It waits for the side and attaches to it.
 *
 * Where the side cannot be shared (a share spilled or found no room in the
 * staging area, the side finds none, the service refuses it) or a late
 * process cannot attach to it any more, a process holds at most its own
 * share: it drops it and drains the whole inner side from the plan's third
 * child (gpujoin_drain_side), as an unshared parallel join does.  So the
 * answer never depends on the sharing, only the work does.
 *
 * Returns true when inner_buf holds the whole inner side, false when the
 * caller must drain it whole.
 */
static bool
obtain_drained_in_parallel(GpuJoinState *gjs)
{
	GpuJoinSharedInner *si = gjs->shared_inner;
	uint64		handle,
				token,
				epoch;
	int			state,
				leader_pid;
	bool		last = false;

	SpinLockAcquire(&si->mutex);
	state = si->state;
	if (state == GJ_SI_NONE || state == GJ_SI_DRAINING)
	{
		si->state = GJ_SI_DRAINING;
		si->ndraining++;
	}
	token = si->token;
	epoch = si->epoch;
	leader_pid = si->leader_pid;
	SpinLockRelease(&si->mutex);

	if (state == GJ_SI_NONE || state == GJ_SI_DRAINING)
	{
		/*
		 * On ERROR here the query ends, and with it the processes that
		 * wait for this one (as for a single drainer).
		 */
		bool		staged;

		if (gpujoin_debug_fault == GPUJOIN_FAULT_INNER_DRAIN_TOGETHER)
		{
			if (state == GJ_SI_NONE)
				wait_for_second_drainer(si, epoch);
			else
				ConditionVariableBroadcast(&si->cv);	/* wake the first */
		}
		gpujoin_drain_inner_share(gjs);
		gjs->counters.inner_share_drains++;
		staged = stage_share(gjs);
		SpinLockAcquire(&si->mutex);
		Assert(si->epoch == epoch && si->state == GJ_SI_DRAINING);
		if (!staged)
			si->share_failed = true;
		else if (gjs->inner_share_chunk != NULL && si->nshares >= si->max_shares)
			si->share_failed = true;	/* more processes than the Gather planned */
		else if (gjs->inner_share_chunk != NULL)
		{
			shares_of(si)[si->nshares].chunk = gjs->inner_share_chunk;
			shares_of(si)[si->nshares].len = gjs->inner_share_len;
			si->nshares++;
		}
		last = --si->ndraining == 0;
		if (last)
			si->state = GJ_SI_COMBINING;
		SpinLockRelease(&si->mutex);
		if (last)
			put_together(gjs, token, leader_pid);
	}

	/* wait for the side (the last drainer shares it, or finds it cannot) */
	ConditionVariablePrepareToSleep(&si->cv);
	for (;;)
	{
		SpinLockAcquire(&si->mutex);
		state = si->epoch == epoch ? si->state : GJ_SI_UNSHARED;
		handle = si->handle;
		SpinLockRelease(&si->mutex);
		if (state != GJ_SI_DRAINING && state != GJ_SI_COMBINING)
			break;
		(void) gpujoin_wall_switch(gjs, GJ_WALL_INNER_WAIT);
		ConditionVariableSleep(&si->cv, PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();
	(void) gpujoin_wall_switch(gjs, GJ_WALL_INNER_SHARE);

	/* the side is put together (or not): the shares are read no more */
	if (gjs->inner_share_chunk != NULL)
	{
		char	   *chunk = gjs->inner_share_chunk;

		gjs->inner_share_chunk = NULL;
		gj_staging_free(chunk);
	}
	if (state == GJ_SI_READY && gjs->inner_attached == handle)
		return true;			/* this process put it together */

	/* its own share, if any, is not the inner side */
	gpujoin_spill_rescan_side(gjs, GJ_SIDE_INNER, true);
	gj_host_buffer_reset(&gjs->inner_buf);
	if (state == GJ_SI_EMPTY)
	{
		gjs->inner_buf.complete = true;
		gjs->counters.inner_shared++;
		return true;
	}
	if (state == GJ_SI_READY)
		return attach(gjs, handle, token);
	return false;
}

/*
 * Stage this process's share of the inner side in a chunk of its own
 * (gjs->inner_share_chunk, none for an empty share).  False when it cannot
 * be: it spilled to a file, or the staging area has no room.
 */
static bool
stage_share(GpuJoinState *gjs)
{
	HostSideBuffer *buf = &gjs->inner_buf;
	Size		size;
	char	   *chunk;

	if (gjs->inner_spill.nchunks > 0 ||
		gpujoin_debug_fault == GPUJOIN_FAULT_INNER_SHARE_NO_ROOM)
		return false;
	if (buf->nrows == 0)
		return true;
	size = flat_size(buf);
	if (size > (Size) gj_service->staging_granules * GJ_STAGING_GRANULE / 2 ||
		(chunk = gj_staging_alloc(size)) == NULL)
		return false;
	arm_cleanup(gjs);
	gjs->inner_share_chunk = chunk;
	gjs->inner_share_len = size;
	flatten(buf, chunk, size);
	return true;
}

/*
 * A share as the process putting the shares together reads it: its
 * header's fields copied out and checked to lie inside its chunk.  A share
 * is another process's chunk, which that process frees if it raises an
 * ERROR (the query is ending then, but this process may still be copying):
 * every pointer followed, and every byte written, is checked against the
 * bounds, so such a share can make the side wrong for the query that is
 * ending, never make a read or a write outside the staging area's chunks
 * concerned.
 */
typedef struct ShareRef
{
	const char *start;
	const char *end;
	SharedInnerHeader *h;		/* a copy of the header, in this process */
} ShareRef;

static bool
in_share(const ShareRef *ref, const void *p, Size n)
{
	const char *c = p;

	return c >= ref->start && c <= ref->end && n <= (Size) (ref->end - c);
}

/* Read and check the share's header; false when it is not a share of this shape. */
static bool
read_share(const SharedInnerShare *share, const HostSideBuffer *shape, ShareRef *ref)
{
	Size		hsize = offsetof(SharedInnerHeader, cols) + sizeof(SharedInnerColumn) * shape->ncols;
	SharedInnerHeader *h;
	int64		n;
	int			k,
				c;

	ref->start = share->chunk;
	ref->end = share->chunk + share->len;
	if (share->len < hsize)
		return false;
	h = palloc(hsize);
	memcpy(h, share->chunk, hsize);
	ref->h = h;
	n = h->nrows;
	if (h->magic != SHARED_INNER_MAGIC || h->nkeys != shape->nkeys || h->ncols != shape->ncols ||
		n < 0 || n > (int64) share->len)
		return false;
	for (k = 0; k < h->nkeys; k++)
		if (!in_share(ref, h->key_values[k], sizeof(int64) * n) ||
			(h->key_isnull[k] != NULL && !in_share(ref, h->key_isnull[k], n)))
			return false;
	if (h->drain_inexact != NULL && !in_share(ref, h->drain_inexact, n))
		return false;
	for (c = 0; c < h->ncols; c++)
		if (!in_share(ref, h->cols[c].values, sizeof(Datum) * n) ||
			!in_share(ref, h->cols[c].isnull, n))
			return false;
	return true;
}

/* The bytes of a by-reference value of the share; false when they leave it. */
static bool
share_value_size(const ShareRef *ref, Datum value, int16 typlen, Size *size)
{
	const char *p = DatumGetPointer(value);

	if (typlen > 0)
		*size = typlen;
	else if (typlen == -1)
	{
		if (!in_share(ref, p, 1) ||
			!in_share(ref, p, VARATT_IS_1B_E(p) ? VARHDRSZ_EXTERNAL :
					  VARATT_IS_1B(p) ? 1 : VARHDRSZ))
			return false;
		*size = VARSIZE_ANY(p);
	}
	else if (typlen == -2)
	{
		Size		left;

		if (!in_share(ref, p, 1))
			return false;
		left = ref->end - p;
		*size = strnlen(p, left) + 1;
	}
	else
		return false;
	return *size > 0 && in_share(ref, p, *size);
}

/*
 * Bytes of the chunk that holds the shares put together (as flat_size
 * would for one buffer of all their rows); *nrows gets their rows.  False
 * when a share is not what its process staged.
 */
static bool
shares_flat_size(const HostSideBuffer *shape, ShareRef *refs, int nshares, int64 *nrows,
				 Size *size)
{
	int64		n = 0;
	bool		inexact = false;
	int			i,
				k,
				c;

	*size = MAXALIGN(offsetof(SharedInnerHeader, cols) + sizeof(SharedInnerColumn) * shape->ncols);
	for (i = 0; i < nshares; i++)
	{
		n += refs[i].h->nrows;
		inexact |= refs[i].h->drain_inexact != NULL;
	}
	*nrows = n;
	for (k = 0; k < shape->nkeys; k++)
	{
		bool		nulls = false;

		for (i = 0; i < nshares; i++)
			nulls |= refs[i].h->key_isnull[k] != NULL;
		*size = add_size(*size, MAXALIGN(sizeof(int64) * n));
		if (nulls)
			*size = add_size(*size, MAXALIGN(n));
	}
	if (inexact)
		*size = add_size(*size, MAXALIGN(n));
	for (c = 0; c < shape->ncols; c++)
	{
		const HostDatumColumn *col = &shape->cols[c];

		*size = add_size(*size, MAXALIGN(sizeof(Datum) * n) + MAXALIGN(n));
		for (i = 0; !col->byval && i < nshares; i++)
		{
			const ShareRef *ref = &refs[i];
			const SharedInnerColumn *from = &ref->h->cols[c];
			int64		r;
			Size		vsize;

			for (r = 0; r < ref->h->nrows; r++)
			{
				if (from->isnull[r])
					continue;
				if (!share_value_size(ref, from->values[r], col->typlen, &vsize))
					return false;
				*size = add_size(*size, MAXALIGN(vsize));
			}
		}
	}
	return true;
}

/* Room for n bytes at *at, below end; NULL when there is none. */
static void *
reserve(char **at, const char *end, Size n)
{
	void	   *dst = *at;

	if (MAXALIGN(n) > (Size) (end - *at))
		return NULL;
	*at += MAXALIGN(n);
	return dst;
}

/*
 * Copy the shares' rows, one share after the other, into chunk, as flatten
 * does for one buffer: every pointer points into chunk, so the shares may
 * go once it is written.  False when the shares no longer fit the size
 * shares_flat_size found (a share changed under it).
 */
static bool
flatten_shares(const HostSideBuffer *shape, ShareRef *refs, int nshares, int64 n,
			   char *chunk, Size size)
{
	SharedInnerHeader *to = (SharedInnerHeader *) chunk;
	const char *end = chunk + size;
	char	   *at = chunk + MAXALIGN(offsetof(SharedInnerHeader, cols) +
									  sizeof(SharedInnerColumn) * shape->ncols);
	bool		inexact = false;
	int64		row;
	int			i,
				k,
				c;

	memset(to, 0, offsetof(SharedInnerHeader, cols));
	to->magic = SHARED_INNER_MAGIC;
	to->nkeys = shape->nkeys;
	to->ncols = shape->ncols;
	to->nrows = n;
	for (i = 0; i < nshares; i++)
	{
		to->bytes_stored += refs[i].h->bytes_stored;
		inexact |= refs[i].h->drain_inexact != NULL;
	}
	for (k = 0; k < shape->nkeys; k++)
	{
		bool		nulls = false;

		for (i = 0; i < nshares; i++)
			nulls |= refs[i].h->key_isnull[k] != NULL;
		if ((to->key_values[k] = reserve(&at, end, sizeof(int64) * n)) == NULL ||
			(nulls && (to->key_isnull[k] = reserve(&at, end, n)) == NULL))
			return false;
		for (i = 0, row = 0; i < nshares; row += refs[i].h->nrows, i++)
		{
			const SharedInnerHeader *h = refs[i].h;

			memcpy(to->key_values[k] + row, h->key_values[k], sizeof(int64) * h->nrows);
			if (nulls && h->key_isnull[k] != NULL)
				memcpy(to->key_isnull[k] + row, h->key_isnull[k], h->nrows);
			else if (nulls)
				memset(to->key_isnull[k] + row, 0, h->nrows);
		}
	}
	if (inexact && (to->drain_inexact = reserve(&at, end, n)) == NULL)
		return false;
	for (i = 0, row = 0; inexact && i < nshares; row += refs[i].h->nrows, i++)
	{
		if (refs[i].h->drain_inexact != NULL)
			memcpy(to->drain_inexact + row, refs[i].h->drain_inexact, refs[i].h->nrows);
		else
			memset(to->drain_inexact + row, 0, refs[i].h->nrows);
	}
	for (c = 0; c < shape->ncols; c++)
	{
		const HostDatumColumn *col = &shape->cols[c];
		SharedInnerColumn *into = &to->cols[c];

		if ((into->values = reserve(&at, end, sizeof(Datum) * n)) == NULL ||
			(into->isnull = reserve(&at, end, n)) == NULL)
			return false;
		into->has_nulls = false;
		for (i = 0, row = 0; i < nshares; row += refs[i].h->nrows, i++)
		{
			const ShareRef *ref = &refs[i];
			const SharedInnerColumn *from = &ref->h->cols[c];
			int64		r;

			memcpy(into->values + row, from->values, sizeof(Datum) * ref->h->nrows);
			memcpy(into->isnull + row, from->isnull, ref->h->nrows);
			into->has_nulls |= from->has_nulls;
			for (r = 0; !col->byval && r < ref->h->nrows; r++)
			{
				Datum		value = into->values[row + r];
				Size		vsize;
				void	   *dst;

				if (into->isnull[row + r])
					continue;
				if (!share_value_size(ref, value, col->typlen, &vsize) ||
					(dst = reserve(&at, end, vsize)) == NULL)
					return false;
				memcpy(dst, DatumGetPointer(value), vsize);
				into->values[row + r] = PointerGetDatum(dst);
			}
		}
	}
	return true;
}

/*
 * gpujoin.debug_fault = inner_drain_together: the process that opened the
 * drain waits (up to 5 s, cancellably) until another one has joined it,
 * which wakes it (obtain_drained_in_parallel broadcasts), so that both scan
 * at once and get shares of the parallel scan; without it a small inner
 * side is often drained by the first process alone before a worker starts.
 * A joiner that was done before this one looked counts too (its share is
 * staged).  For the tests of several shares.
 */
static void
wait_for_second_drainer(GpuJoinSharedInner *si, uint64 epoch)
{
	ConditionVariablePrepareToSleep(&si->cv);
	for (int i = 0; i < 500; i++)
	{
		bool		joined;

		SpinLockAcquire(&si->mutex);
		joined = si->epoch != epoch || si->ndraining >= 2 || si->nshares > 0;
		SpinLockRelease(&si->mutex);
		if (joined)
			break;
		(void) ConditionVariableTimedSleep(&si->cv, 10L, PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();
}

/*
 * The last process to finish draining its share: put the staged shares
 * together into one chunk and share it with the service, as share() does
 * a single drainer's side, or find it cannot; then tell the others.  The
 * shares stay while this runs: their processes wait for the state to
 * leave GJ_SI_COMBINING before they free them (but see ShareRef).
 */
static void
put_together(GpuJoinState *gjs, uint64 token, int holder_pid)
{
	GpuJoinSharedInner *si = gjs->shared_inner;
	HostSideBuffer *buf = &gjs->inner_buf;
	int			state = GJ_SI_UNSHARED;
	uint64		handle = 0;
	bool		ok,
				leader_done;
	SharedInnerShare *shares;
	ShareRef   *refs;
	int			nshares,
				i;
	char	   *chunk;
	int64		n;
	Size		size;
	GjError		err;

	SpinLockAcquire(&si->mutex);
	ok = !si->share_failed;
	nshares = si->nshares;
	SpinLockRelease(&si->mutex);
	shares = palloc(sizeof(SharedInnerShare) * Max(nshares, 1));
	memcpy(shares, shares_of(si), sizeof(SharedInnerShare) * nshares);
	refs = palloc0(sizeof(ShareRef) * Max(nshares, 1));
	for (i = 0; ok && i < nshares; i++)
		ok = read_share(&shares[i], buf, &refs[i]);

	if (ok && shares_flat_size(buf, refs, nshares, &n, &size))
	{
		if (n == 0)
			state = GJ_SI_EMPTY;
		else if (size <= (Size) gj_service->staging_granules * GJ_STAGING_GRANULE / 2 &&
				 (chunk = gj_staging_alloc(size)) != NULL)
		{
			memset(&err, 0, sizeof(err));
			if (!flatten_shares(buf, refs, nshares, n, chunk, size))
			{
				elog(DEBUG1, "GpuJoin: the inner side's shares changed while put together");
				gj_staging_free(chunk);
			}
			else if (gj_service_share_inner(chunk, (int64) size, token, holder_pid, &handle, &err))
			{
				/* the chunk is the service's now; read it as the others do */
				if (!view(buf, chunk, (int64) size))
					elog(ERROR, "GpuJoin: the shared inner side it wrote does not read back");
				attached(gjs, handle, chunk, size);
				gjs->counters.inner_shared_drains++;
				state = GJ_SI_READY;
			}
			else
			{
				elog(DEBUG1, "GpuJoin: the inner side is not shared: %s", err.message);
				gj_staging_free(chunk);
			}
		}
	}

	SpinLockAcquire(&si->mutex);
	leader_done = si->leader_done;
	si->state = state;
	si->handle = handle;
	si->nshares = 0;
	SpinLockRelease(&si->mutex);
	ConditionVariableBroadcast(&si->cv);
	/* the leader is done already (a LIMIT above the Gather) */
	if (state == GJ_SI_READY && leader_done)
		gj_service_release_inner(handle, token);
	for (i = 0; i < nshares; i++)
		if (refs[i].h != NULL)
			pfree(refs[i].h);
	pfree(refs);
	pfree(shares);
}

/*
 * Is another process of the Gather draining the shared inner side for this
 * one now?  Then this process had better drain its outer side meanwhile
 * than wait (gpujoin_drain_inputs).  Only where one process drains it for
 * all: where it is drained in parallel, every process that comes while it
 * is drained drains a share.
 */
bool
gpujoin_shared_inner_busy(GpuJoinState *gjs)
{
	GpuJoinSharedInner *si = gjs->shared_inner;
	int			state;

	if (gjs->inner_whole_ps != NULL || !sharing_applies(gjs))
		return false;
	SpinLockAcquire(&si->mutex);
	state = si->state;
	SpinLockRelease(&si->mutex);
	return state == GJ_SI_DRAINING;
}

/*
 * The inner side for this process: obtained from (or drained once for) the
 * other processes of the Gather.  Returns false when this process must
 * drain it itself, unshared; true when inner_buf holds it.  On the wall
 * clock, the sharing is its own part, the sleeps while another process
 * drains another, and the drains are drains.
 */
bool
gpujoin_shared_inner_obtain(GpuJoinState *gjs)
{
	GjWallPart	part;
	bool		ok;

	if (!sharing_applies(gjs))
		return false;
	part = gpujoin_wall_switch(gjs, GJ_WALL_INNER_SHARE);
	if (gjs->inner_whole_ps != NULL)
		ok = obtain_drained_in_parallel(gjs);
	else
		ok = obtain_drained_once(gjs);
	(void) gpujoin_wall_switch(gjs, part);
	return ok;
}

/*
 * The inner side drained by one process for all: the first that needs it
 * drains and shares it, the others wait and attach to it.
 */
static bool
obtain_drained_once(GpuJoinState *gjs)
{
	GpuJoinSharedInner *si = gjs->shared_inner;
	uint64		handle = 0,
				token,
				epoch;
	int			state,
				leader_pid;
	bool		ok,
				leader_done;

	/* wait while another process drains it; take the draining if nobody does */
	ConditionVariablePrepareToSleep(&si->cv);
	for (;;)
	{
		SpinLockAcquire(&si->mutex);
		state = si->state;
		if (state == GJ_SI_NONE)
			si->state = GJ_SI_DRAINING;
		handle = si->handle;
		token = si->token;
		epoch = si->epoch;
		leader_pid = si->leader_pid;
		SpinLockRelease(&si->mutex);
		if (state != GJ_SI_DRAINING)
			break;
		(void) gpujoin_wall_switch(gjs, GJ_WALL_INNER_WAIT);
		ConditionVariableSleep(&si->cv, PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();
	(void) gpujoin_wall_switch(gjs, GJ_WALL_INNER_SHARE);

	if (state == GJ_SI_NONE)
	{
		/*
		 * This process drains it.  On ERROR the query ends, and with it the
		 * processes that wait here (the leader raises the worker's ERROR,
		 * the workers are terminated with the leader's).
		 */
		gpujoin_drain_side(gjs, GJ_SIDE_INNER);
		ok = share(gjs, token, leader_pid, &handle);
		SpinLockAcquire(&si->mutex);
		leader_done = si->leader_done;
		if (si->epoch == epoch)
		{
			si->state = ok ? GJ_SI_READY : GJ_SI_UNSHARED;
			si->handle = ok ? handle : 0;
		}
		SpinLockRelease(&si->mutex);
		ConditionVariableBroadcast(&si->cv);
		if (ok)
		{
			gjs->counters.inner_shared_drains++;
			/* the leader is done already (a LIMIT above the Gather) */
			if (leader_done)
				gj_service_release_inner(handle, token);
		}
		/* unshared, it is drained all the same */
		return true;
	}
	if (state != GJ_SI_READY)
		return false;
	return attach(gjs, handle, token);
}

/*
 * This process reads no more of the shared inner side (its node shuts
 * down or rescans): detach from it in the service.  The inner buffer is
 * left empty.  The side itself stays while the leader's query holds it.
 */
void
gpujoin_shared_inner_detach(GpuJoinState *gjs)
{
	uint64		handle = gjs->inner_attached;
	GjWallPart	part;

	if (handle == 0)
		return;
	part = gpujoin_wall_switch(gjs, GJ_WALL_INNER_SHARE);
	gjs->inner_attached = 0;
	gjs->inner_shared_chunk = NULL;
	/* its arrays point into the chunk: never read them again */
	gj_host_buffer_reset(&gjs->inner_buf);
	gj_service_detach_inner(handle);
	(void) gpujoin_wall_switch(gjs, part);
}

/*
 * The room after the shared inner side that the node asked for (put_extra),
 * or NULL with *len 0: there is none, this process reads no shared side,
 * or its inner buffer no longer reads that chunk's rows (one chunk of a
 * spilled side, the partitions of a side drained whole).
 */
const char *
gpujoin_shared_inner_extra(GpuJoinState *gjs, Size *len)
{
	const SharedInnerHeader *h = (const SharedInnerHeader *) gjs->inner_shared_chunk;
	const HostSideBuffer *buf = &gjs->inner_buf;

	*len = 0;
	if (gjs->inner_attached == 0 || h == NULL || h->extra == NULL || h->extra_len <= 0)
		return NULL;
	if (buf->nrows != h->nrows ||
		(buf->nkeys > 0 && buf->keys[0].values != h->key_values[0]) ||
		(buf->ncols > 0 && buf->cols[0].values != h->cols[0].values))
		return NULL;
	/* it lies in the chunk, after the side */
	if (h->extra < gjs->inner_shared_chunk ||
		(Size) h->extra_len > gjs->inner_shared_len - (Size) (h->extra - gjs->inner_shared_chunk))
		return NULL;
	*len = (Size) h->extra_len;
	return h->extra;
}

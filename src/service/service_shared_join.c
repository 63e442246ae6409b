/*-------------------------------------------------------------------------
 *
 * service_shared_join.c
 *	  Shared inner sides in the GPU service: the inner side of a parallel
 *	  GpuJoin, drained once by one process of the Gather into a staging
 *	  chunk, that every process of the query joins its own outer rows
 *	  against (docs/architecture.md, section 8, "Parallel GpuJoin").
 *
 * The process that drained the inner side (the leader or any worker) hands
 * its chunk to the service (SHARE_INNER): the chunk's granules then belong
 * to the service, not to that process, so the chunk outlives it.  The
 * other processes attach to it by its handle and the query's token
 * (ATTACH_INNER), read its columns where they are (the main shared memory
 * is mapped at the same address in every process), and open their own
 * joins in the service with the inner side's key columns in the chunk: the
 * proxy (service_client.c) copies only the outer side then, so the inner
 * side is drained once and staged once for the whole Gather.  Where the
 * backend can (prepare_inner, backend.h: the cpu and cuda backends), the
 * first join that reads it has it sorted or hashed once for all the joins
 * that read it with the same algorithm and keys
 * (gj_service_shared_inner_prepared).  With several GPUs it is prepared
 * once, on the device of that first join: the cuda backend gives it to the
 * joins on that device only, and a join on another device sorts its inner
 * side itself, as without prepare_inner.
 *
 * The service reference-counts a shared inner side by the processes
 * attached to it and the joins that read it; it frees the chunk when the
 * last one detaches or closes.  The sweep of dead clients detaches every
 * process that is gone, the drainer included, so a chunk others still use
 * stays and one nobody uses goes.  A bogus handle, a handle of another
 * query (another token), or an inner side whose columns are not in the
 * chunk is refused without following any pointer.
 *
 * Both sides of the protocol are here: the client's calls (run in a
 * backend or parallel worker) and the service's handlers (run on the
 * service's worker threads, so they call nothing that could ereport:
 * pthread mutex, spinlocks, kill()).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <pthread.h>
#include <signal.h>

#include "access/parallel.h"
#include "miscadmin.h"

#include "gpujoin.h"
#include "service/service_shared.h"
#include "service/service_validate.h"

/* ---------------------------------------------------------------------
 * The client's side
 * ---------------------------------------------------------------------
 */

/*
 * The shared inner sides this process is attached to (a query has one per
 * parallel GpuJoin node), for the proxy's begin_join to find the chunk
 * that holds an inner side.
 */
#define CLIENT_MAX_ATTACHED		16

typedef struct ClientAttached
{
	uint64		handle;			/* 0: free */
	uint64		generation;
	char	   *chunk;
	int64		len;
} ClientAttached;

static ClientAttached client_attached[CLIENT_MAX_ATTACHED];

/*
 * The shared inner side this process holds for its query (the Gather's
 * leader), kept past its detach: a service that exits hands the chunk to
 * the holder, which frees it when it releases the side.
 */
static uint64 orphan_handle = 0;
static uint64 orphan_generation = 0;
static char *orphan_chunk = NULL;

static void
remember_held(uint64 handle, uint64 generation, char *chunk)
{
	orphan_handle = handle;
	orphan_generation = generation;
	orphan_chunk = chunk;
}

static void
client_remember(uint64 handle, uint64 generation, char *chunk, int64 len)
{
	int			i;

	for (i = 0; i < CLIENT_MAX_ATTACHED; i++)
		if (client_attached[i].handle == 0)
		{
			client_attached[i].handle = handle;
			client_attached[i].generation = generation;
			client_attached[i].chunk = chunk;
			client_attached[i].len = len;
			return;
		}
	/* no room: the proxy then copies this inner side as it would any */
}

static void
client_forget(uint64 handle)
{
	int			i;

	for (i = 0; i < CLIENT_MAX_ATTACHED; i++)
		if (client_attached[i].handle == handle)
			memset(&client_attached[i], 0, sizeof(ClientAttached));
}

static bool
in_range(const void *ptr, Size len, const char *lo, int64 chunk_len)
{
	const char *p = ptr;

	return p >= lo && p <= lo + chunk_len && len <= (Size) (lo + chunk_len - p);
}

/* Do all of the side's columns lie in [chunk, chunk + len)? */
static bool
side_in_chunk(const GjKeyColumns *cols, int64 nrows, const char *chunk, int64 len)
{
	int			c;

	if (cols->ncols <= 0 || cols->ncols > GJ_MAX_KEY_COLS || nrows < 0 || nrows > GJ_MAX_SIDE_ROWS)
		return false;
	for (c = 0; c < cols->ncols; c++)
	{
		if (!in_range(cols->values[c], sizeof(int64) * nrows, chunk, len))
			return false;
		if (cols->isnull[c] != NULL && !in_range(cols->isnull[c], nrows, chunk, len))
			return false;
	}
	return true;
}

/*
 * The handle of the shared inner side, attached to by this process, whose
 * chunk holds the key columns cols; 0 when none does (the proxy then
 * copies them into the join's own chunk).
 */
uint64
gj_service_inner_shared_by(const GjKeyColumns *cols, int64 nrows)
{
	uint64		generation = gj_service_generation();
	int			i;

	for (i = 0; i < CLIENT_MAX_ATTACHED; i++)
	{
		ClientAttached *a = &client_attached[i];

		if (a->handle != 0 && a->generation == generation &&
			side_in_chunk(cols, nrows, a->chunk, a->len))
			return a->handle;
	}
	return 0;
}

/*
 * Does [ptr, ptr + len) lie in the chunk of shared inner side handle, which
 * this process is attached to?  The proxy then leaves an aggregate's inner
 * arrays there (the inner columns its pair programs load, the inner rows'
 * groups numbered together in the chunk) instead of copying them into the
 * join's own chunk: the service reads them where they are, as it reads the
 * inner key columns.
 */
bool
gj_service_in_shared_inner(uint64 handle, const void *ptr, Size len)
{
	uint64		generation = gj_service_generation();
	int			i;

	if (handle == 0 || ptr == NULL)
		return false;
	for (i = 0; i < CLIENT_MAX_ATTACHED; i++)
	{
		ClientAttached *a = &client_attached[i];

		if (a->handle == handle && a->generation == generation)
			return in_range(ptr, len, a->chunk, a->len);
	}
	return false;
}

/*
 * Hand the chunk (len bytes of it hold a drained inner side) to the
 * service as a shared inner side of the query that token names; this
 * process is attached to it.  On failure the chunk is still this
 * process's, to free.
 */
bool
gj_service_share_inner(char *chunk, int64 len, uint64 token, int holder_pid, uint64 *handle,
					   GjError *err)
{
	GjServiceSlot *slot;
	uint64		generation;

	if (!gpujoin_service_ready() || (slot = gj_service_my_slot(err)) == NULL)
		return false;
	generation = gj_service_generation();
	slot->op = GJ_OP_SHARE_INNER;
	slot->share_chunk = chunk;
	slot->share_len = len;
	slot->share_token = token;
	slot->share_holder = holder_pid;
	if (!gj_service_call(slot, generation, err))
		return false;
	*handle = slot->shared_inner;
	client_remember(*handle, generation, chunk, len);
	if (holder_pid == MyProcPid)
		remember_held(*handle, generation, chunk);
	return true;
}

/*
 * Attach to the shared inner side handle of the query that token names;
 * *chunk and *len say where it is.  Fails (and this process drains the
 * inner side itself) when the service no longer holds it.
 */
bool
gj_service_attach_inner(uint64 handle, uint64 token, char **chunk, int64 *len, GjError *err)
{
	GjServiceSlot *slot;
	uint64		generation;
	char	   *at;

	if (!gpujoin_service_ready() || (slot = gj_service_my_slot(err)) == NULL)
		return false;
	generation = gj_service_generation();
	slot->op = GJ_OP_ATTACH_INNER;
	slot->shared_inner = handle;
	slot->share_token = token;
	/*
	 * gpujoin.debug_fault = service_foreign_inner: the handle of a shared
	 * inner side with the token of another query, for the test that the
	 * service refuses it (test/pgtap/service_parallel.sql).
	 */
	if (gpujoin_debug_fault == GPUJOIN_FAULT_SERVICE_FOREIGN_INNER)
		slot->share_token = token ^ 2;
	if (!gj_service_call(slot, generation, err))
		return false;
	at = slot->share_chunk;
	if (at < gj_service->staging || slot->share_len <= 0 ||
		!in_range(at, slot->share_len, gj_service->staging,
				  (int64) gj_service->staging_granules * GJ_STAGING_GRANULE))
	{
		strlcpy(err->message, "the GPU service answered an attach with a chunk outside its staging area",
				sizeof(err->message));
		err->code = GJ_ERR_DEVICE;
		gj_service_detach_inner(handle);
		return false;
	}
	*chunk = at;
	*len = slot->share_len;
	client_remember(handle, generation, at, *len);
	/* the leader is its query's holder */
	if (!IsParallelWorker())
		remember_held(handle, generation, at);
	return true;
}

/* Detach from a shared inner side (safe to call after the service went). */
void
gj_service_detach_inner(uint64 handle)
{
	GjServiceSlot *slot;
	GjError		err;

	client_forget(handle);
	memset(&err, 0, sizeof(err));
	if (!gpujoin_service_ready() || (slot = gj_service_my_slot(&err)) == NULL)
		return;
	slot->op = GJ_OP_DETACH_INNER;
	slot->shared_inner = handle;
	(void) gj_service_call(slot, gj_service_generation(), &err);
}

/*
 * Drop the query's hold on a shared inner side (the Gather is done with
 * it, or runs again): the service frees it once no process and no join
 * uses it.
 */
void
gj_service_release_inner(uint64 handle, uint64 token)
{
	GjServiceSlot *slot;
	GjError		err;

	memset(&err, 0, sizeof(err));
	if (handle == 0)
		return;

	/*
	 * A service that exited handed the side's chunk to this process, the
	 * holder (gj_service_shared_inners_orphan): its Gather is done with it
	 * now, so free it (a no-op where the chunk is not this process's).
	 */
	if (orphan_chunk != NULL && orphan_handle == handle &&
		orphan_generation != gj_service_generation())
		gj_staging_free_owned(orphan_chunk, MyProcPid);
	if (orphan_handle == handle)
		remember_held(0, 0, NULL);
	if (!gpujoin_service_ready() || (slot = gj_service_my_slot(&err)) == NULL)
		return;
	slot->op = GJ_OP_RELEASE_INNER;
	slot->shared_inner = handle;
	slot->share_token = token;
	(void) gj_service_call(slot, gj_service_generation(), &err);
}

/* ---------------------------------------------------------------------
 * The service's side
 * ---------------------------------------------------------------------
 */

/* Shared inner sides the service holds at once, and processes per side. */
#define SERVICE_SHARED_INNERS	32
#define SHARED_INNER_CLIENTS	64

typedef struct SharedInner
{
	bool		in_use;
	uint64		handle;			/* sequence << 8 | index */
	uint64		token;
	char	   *chunk;			/* owned by the service's pid */
	int64		len;			/* bytes of it that the inner side fills */
	int			nclients;
	int			clients[SHARED_INNER_CLIENTS];	/* attached pids */
	int			njoins;			/* open joins that read it */

	/*
	 * The query's hold: a process of the Gather may attach after every
	 * other one has detached (a worker that starts late), so the side stays
	 * until the leader releases it (its Gather is done) or exits.
	 */
	bool		held;
	int			holder_pid;

	/*
	 * The inner side as the backend prepared it (sorted, hashed) for the
	 * first join that read it, with the input it fits: the later joins
	 * with the same algorithm and inner keys reuse it (backend.h,
	 * prepare_inner).  Released with the side, after its last join.
	 */
	const void *prepared;
	const GjBackend *prepared_by;
	GjJoinInput prepared_for;
	bool		prepare_failed;
} SharedInner;

static SharedInner shared_inners[SERVICE_SHARED_INNERS];
static uint64 shared_inner_seq = 0;
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;

static void
refuse(GjServiceSlot *slot, const char *message)
{
	slot->ok = false;
	slot->err.code = GJ_ERR_DEVICE;
	strlcpy(slot->err.message, message, sizeof(slot->err.message));
}

/* The shared inner side of handle, or NULL; under shared_lock. */
static SharedInner *
lookup(uint64 handle)
{
	uint64		index = handle & 0xff;
	SharedInner *si;

	if (handle == 0 || index >= SERVICE_SHARED_INNERS)
		return NULL;
	si = &shared_inners[index];
	return si->in_use && si->handle == handle ? si : NULL;
}

static int
client_index(const SharedInner *si, int pid)
{
	int			i;

	for (i = 0; i < si->nclients; i++)
		if (si->clients[i] == pid)
			return i;
	return -1;
}

static void
remove_client(SharedInner *si, int i)
{
	si->clients[i] = si->clients[--si->nclients];
}

/* What a shared inner side leaves to free once the lock is released. */
typedef struct SharedInnerRemains
{
	char	   *chunk;
	const void *prepared;
	const GjBackend *prepared_by;
	uint64		handle;			/* its aggregate groups' copy goes too */
} SharedInnerRemains;

/*
 * When the service exits: a shared inner side's chunk is the service's,
 * and the next service's sweep would free it as a dead process's while
 * the processes of its Gather may still read its rows.  It goes to the
 * query's holder (the Gather's leader), which frees it when it releases
 * the side (gj_service_release_inner), after its workers are gone; one
 * with no live holder stays the dead service's, as before.
 */
void
gj_service_shared_inners_orphan(void)
{
	int			s;

	pthread_mutex_lock(&shared_lock);
	for (s = 0; s < SERVICE_SHARED_INNERS; s++)
	{
		SharedInner *si = &shared_inners[s];

		if (si->in_use && si->chunk != NULL && si->held && si->holder_pid > 0 &&
			kill(si->holder_pid, 0) == 0)
			(void) gj_staging_transfer(si->chunk, MyProcPid, si->holder_pid);
	}
	pthread_mutex_unlock(&shared_lock);
}

/*
 * Under shared_lock: if nobody uses si any more, take it off the table and
 * return what it held, for free_remains once the lock is released.
 */
static SharedInnerRemains
release_if_unused(SharedInner *si)
{
	SharedInnerRemains r = {NULL, NULL, NULL, 0};

	if (si->nclients > 0 || si->njoins > 0 || si->held)
		return r;
	r.chunk = si->chunk;
	r.prepared = si->prepared;
	r.prepared_by = si->prepared_by;
	r.handle = si->handle;
	memset(si, 0, sizeof(SharedInner));
	return r;
}

static void
free_remains(SharedInnerRemains r)
{
	if (r.prepared != NULL)
		r.prepared_by->release_inner(r.prepared);
	if (r.handle != 0)
		gj_service_forget_shared_groups(r.handle);
	if (r.chunk != NULL)
		gj_staging_free_owned(r.chunk, MyProcPid);
}

void
gj_service_handle_share(GjServiceSlot *slot, int pid)
{
	char	   *chunk = slot->share_chunk;
	int64		len = slot->share_len;
	SharedInner *si = NULL;
	Size		bytes;
	int			i;

	if (len <= 0 || !gj_staging_owned_by(chunk, len, pid))
	{
		refuse(slot, "the GPU service refused a request: the shared inner side lies outside the client's staging chunks");
		return;
	}
	pthread_mutex_lock(&shared_lock);
	for (i = 0; i < SERVICE_SHARED_INNERS; i++)
		if (!shared_inners[i].in_use)
		{
			si = &shared_inners[i];
			si->in_use = true;
			si->handle = 0;		/* nobody attaches until it is set */
			break;
		}
	pthread_mutex_unlock(&shared_lock);
	if (si == NULL)
	{
		refuse(slot, "the GPU service holds as many shared inner sides as it can");
		return;
	}
	/* the chunk becomes the service's: it outlives the process that drained it */
	bytes = gj_staging_transfer(chunk, pid, MyProcPid);
	if (bytes < (Size) len)
	{
		if (bytes > 0)
			(void) gj_staging_transfer(chunk, MyProcPid, pid);
		pthread_mutex_lock(&shared_lock);
		memset(si, 0, sizeof(SharedInner));
		pthread_mutex_unlock(&shared_lock);
		refuse(slot, "the GPU service refused a request: a shared inner side must be a whole chunk of the client");
		return;
	}
	pthread_mutex_lock(&shared_lock);
	si->token = slot->share_token;
	si->chunk = chunk;
	si->len = len;
	si->nclients = 1;
	si->clients[0] = pid;
	si->njoins = 0;
	si->held = slot->share_holder > 0;
	si->holder_pid = slot->share_holder;
	si->handle = (++shared_inner_seq << 8) | (uint64) (si - shared_inners);
	slot->shared_inner = si->handle;
	pthread_mutex_unlock(&shared_lock);
	slot->ok = true;
}

void
gj_service_handle_attach(GjServiceSlot *slot, int pid)
{
	SharedInner *si;

	pthread_mutex_lock(&shared_lock);
	si = lookup(slot->shared_inner);
	if (si == NULL || si->token != slot->share_token)
	{
		pthread_mutex_unlock(&shared_lock);
		refuse(slot, "the GPU service refused a request: no such shared inner side of this query");
		return;
	}
	if (client_index(si, pid) < 0)
	{
		if (si->nclients >= SHARED_INNER_CLIENTS)
		{
			pthread_mutex_unlock(&shared_lock);
			refuse(slot, "the GPU service's shared inner side has as many processes attached as it can hold");
			return;
		}
		si->clients[si->nclients++] = pid;
	}
	slot->share_chunk = si->chunk;
	slot->share_len = si->len;
	pthread_mutex_unlock(&shared_lock);
	slot->ok = true;
}

void
gj_service_handle_detach(GjServiceSlot *slot, int pid)
{
	SharedInner *si;
	SharedInnerRemains remains = {NULL, NULL, NULL, 0};
	int			i;

	pthread_mutex_lock(&shared_lock);
	si = lookup(slot->shared_inner);
	if (si == NULL || (i = client_index(si, pid)) < 0)
	{
		pthread_mutex_unlock(&shared_lock);
		refuse(slot, "the GPU service refused a request: this client is not attached to that shared inner side");
		return;
	}
	remove_client(si, i);
	remains = release_if_unused(si);
	pthread_mutex_unlock(&shared_lock);
	free_remains(remains);
	slot->ok = true;
}

/* The query's hold on the side is released (by any of its processes). */
void
gj_service_handle_release(GjServiceSlot *slot, int pid)
{
	SharedInner *si;
	SharedInnerRemains remains = {NULL, NULL, NULL, 0};

	pthread_mutex_lock(&shared_lock);
	si = lookup(slot->shared_inner);
	if (si == NULL || si->token != slot->share_token)
	{
		pthread_mutex_unlock(&shared_lock);
		refuse(slot, "the GPU service refused a request: no such shared inner side of this query");
		return;
	}
	si->held = false;
	remains = release_if_unused(si);
	pthread_mutex_unlock(&shared_lock);
	free_remains(remains);
	slot->ok = true;
}

/*
 * OPEN of a join whose inner side is in shared inner side handle: is the
 * client attached to it, and does every inner column lie in its chunk?
 * Then the join holds a reference until it closes.
 */
bool
gj_service_shared_inner_ref(uint64 handle, int pid, const GjKeyColumns *cols, int64 nrows)
{
	SharedInner *si;
	bool		ok;

	pthread_mutex_lock(&shared_lock);
	si = lookup(handle);
	ok = si != NULL && client_index(si, pid) >= 0 &&
		side_in_chunk(cols, nrows, si->chunk, si->len);
	if (ok)
		si->njoins++;
	pthread_mutex_unlock(&shared_lock);
	return ok;
}

/*
 * Where shared inner side handle lies, for the checks of a join that holds
 * a reference to it (the chunk stays while the join is open): its
 * aggregate's inner arrays may lie there too (service_validate.c).  False
 * when the join holds no reference to such a side.
 */
bool
gj_service_shared_inner_chunk(uint64 handle, GjSharedInnerChunk *out)
{
	SharedInner *si;
	bool		ok;

	pthread_mutex_lock(&shared_lock);
	si = lookup(handle);
	ok = si != NULL && si->njoins > 0;
	if (ok)
	{
		out->handle = handle;
		out->chunk = si->chunk;
		out->len = si->len;
	}
	pthread_mutex_unlock(&shared_lock);
	return ok;
}

/* A join that read shared inner side handle closed. */
void
gj_service_shared_inner_unref(uint64 handle)
{
	SharedInner *si;
	SharedInnerRemains remains = {NULL, NULL, NULL, 0};

	pthread_mutex_lock(&shared_lock);
	si = lookup(handle);
	if (si != NULL && si->njoins > 0)
	{
		si->njoins--;
		remains = release_if_unused(si);
	}
	pthread_mutex_unlock(&shared_lock);
	free_remains(remains);
}

/*
 * The inner side of shared inner side handle as backend prepared it for
 * input (the join's validated input, whose inner side lies in the side's
 * chunk), or NULL: the join then prepares it itself.  Prepared at the
 * first join that asks, under the lock, so that the others wait for it
 * instead of sorting it too.  The time it took goes to *times: the
 * preparing join's as shared_build_ms, the others' wait for the lock
 * (while it was prepared) as share_wait_ms.
 */
const void *
gj_service_shared_inner_prepared(uint64 handle, const GjJoinInput *input,
								 const GjBackend *backend, GjTimes *times)
{
	SharedInner *si;
	const void *prepared = NULL;
	GjError		err;
	double		start;

	if (backend->prepare_inner == NULL || backend->release_inner == NULL ||
		(input->algorithm != GJ_ALGO_SORTMERGE && input->algorithm != GJ_ALGO_HASH))
		return NULL;
	start = gj_clock_ms();
	pthread_mutex_lock(&shared_lock);
	times->share_wait_ms += gj_clock_ms() - start;
	si = lookup(handle);
	if (si != NULL && si->prepared == NULL && !si->prepare_failed)
	{
		memset(&err, 0, sizeof(err));
		start = gj_clock_ms();
		si->prepared = backend->prepare_inner(input, &err);
		times->shared_build_ms += gj_clock_ms() - start;
		si->prepared_by = backend;
		si->prepared_for = *input;
		si->prepare_failed = si->prepared == NULL;
	}
	if (si != NULL && si->prepared != NULL && si->prepared_by == backend &&
		gj_inner_prepared_alike(&si->prepared_for, input))
		prepared = si->prepared;
	pthread_mutex_unlock(&shared_lock);
	return prepared;
}

/*
 * The main thread's sweep, after the dead clients' joins are closed:
 * detach every process that is gone (a worker that exited without
 * detaching, a terminated leader, the drainer itself); a shared inner side
 * that nobody uses then is freed, one others still read stays.
 */
void
gj_service_shared_inner_sweep(void)
{
	int			s;

	for (s = 0; s < SERVICE_SHARED_INNERS; s++)
	{
		SharedInner *si = &shared_inners[s];
		SharedInnerRemains remains = {NULL, NULL, NULL, 0};
		int			i;

		pthread_mutex_lock(&shared_lock);
		if (si->in_use && si->handle != 0)
		{
			for (i = si->nclients - 1; i >= 0; i--)
				if (kill(si->clients[i], 0) != 0 && errno == ESRCH)
					remove_client(si, i);
			if (si->held && kill(si->holder_pid, 0) != 0 && errno == ESRCH)
				si->held = false;
			remains = release_if_unused(si);
		}
		pthread_mutex_unlock(&shared_lock);
		if (remains.chunk != NULL)
		{
			elog(LOG, "gpujoin service: freeing a shared inner side whose processes have exited");
			free_remains(remains);
		}
	}
}

/*-------------------------------------------------------------------------
 *
 * service_staging.c
 *	  The GPU service's staging area: one region of the main shared memory
 *	  (gpujoin.service_staging_memory) where clients put a join's input
 *	  columns and the service puts its matches, handed out as chunks of
 *	  1 MB granules (first fit, under the control block's mutex).
 *
 * Each granule records the pid of the client whose chunk holds it, so that
 * the service can check that every pointer a request carries lies in that
 * client's own chunks, and can free the chunks of a client that died
 * without freeing them (gj_staging_free_dead_owners).  The staging area is
 * small in granules (a few hundred to a few thousand), so a linear scan
 * under a spinlock is short.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include "miscadmin.h"

#include "service/service_shared.h"

/* The slots, the granule tables, then the staging area, cache-line aligned. */
Size
gj_staging_shmem_size(int nslots, int32 granules)
{
	Size		size = 0;

	size = add_size(size, mul_size(nslots, sizeof(GjServiceSlot)));
	size = add_size(size, mul_size(granules, 2 * sizeof(int32)));
	size = add_size(size, PG_CACHE_LINE_SIZE);
	size = add_size(size, mul_size(granules, GJ_STAGING_GRANULE));
	return size;
}

void
gj_staging_shmem_init(GjServiceShared *shared, char *after_header, int nslots, int32 granules)
{
	char	   *p = after_header;

	shared->nslots = nslots;
	shared->slots = (GjServiceSlot *) p;
	memset(p, 0, nslots * sizeof(GjServiceSlot));
	p += nslots * sizeof(GjServiceSlot);
	shared->granule_owner = (int32 *) p;
	p += granules * sizeof(int32);
	shared->granule_run = (int32 *) p;
	p += granules * sizeof(int32);
	memset(shared->granule_owner, 0, granules * 2 * sizeof(int32));
	shared->staging = (char *) TYPEALIGN(PG_CACHE_LINE_SIZE, p);
	shared->staging_granules = granules;
}

/*
 * A chunk of at least size bytes owned by this process, or NULL when the
 * staging area has no run of free granules that long.
 */
void *
gj_staging_alloc(Size size)
{
	int32		need = (int32) ((size + GJ_STAGING_GRANULE - 1) / GJ_STAGING_GRANULE);
	int32		g,
				run = 0;
	void	   *chunk = NULL;

	if (need <= 0)
		need = 1;
	if (gj_service == NULL || need > gj_service->staging_granules)
		return NULL;
	SpinLockAcquire(&gj_service->mutex);
	for (g = 0; g < gj_service->staging_granules; g++)
	{
		run = gj_service->granule_owner[g] == 0 ? run + 1 : 0;
		if (run == need)
		{
			int32		first = g - need + 1,
						k;

			for (k = first; k <= g; k++)
				gj_service->granule_owner[k] = MyProcPid;
			gj_service->granule_run[first] = need;
			gj_service->status.memory_in_use += (int64) need * GJ_STAGING_GRANULE;
			chunk = gj_service->staging + (Size) first * GJ_STAGING_GRANULE;
			break;
		}
	}
	SpinLockRelease(&gj_service->mutex);
	return chunk;
}

/*
 * Map the chunk's pages into this process before it writes them.  A
 * process forked after the postmaster mapped the main shared memory has
 * none of its page table entries (fork does not copy those of shared
 * mappings), so a parallel worker writing its share of a join's columns
 * took a page fault every 4 kB: on the H200, staging 9M rows of keys in 9
 * processes took 130 ms summed, about 1 GB/s.  MADV_POPULATE_WRITE (Linux
 * 5.14) maps the whole range in one call; where the kernel lacks it the
 * copy faults as before.
 */
void
gj_staging_prefault(void *chunk, Size size)
{
#ifdef MADV_POPULATE_WRITE
	long		page = sysconf(_SC_PAGESIZE);
	uintptr_t	begin;
	uintptr_t	end;

	if (page <= 0 || size == 0)
		return;
	begin = (uintptr_t) chunk & ~((uintptr_t) page - 1);
	end = ((uintptr_t) chunk + size + page - 1) & ~((uintptr_t) page - 1);
	(void) madvise((void *) begin, end - begin, MADV_POPULATE_WRITE);
#endif
}

static void
free_run(int32 first)
{
	int32		k,
				n = gj_service->granule_run[first];

	for (k = first; k < first + n; k++)
		gj_service->granule_owner[k] = 0;
	gj_service->granule_run[first] = 0;
	gj_service->status.memory_in_use -= (int64) n * GJ_STAGING_GRANULE;
}

/* Free a chunk gj_staging_alloc returned to this process. */
void
gj_staging_free(void *chunk)
{
	Size		off;
	int32		first;

	if (chunk == NULL || gj_service == NULL)
		return;
	off = (char *) chunk - gj_service->staging;
	first = (int32) (off / GJ_STAGING_GRANULE);
	SpinLockAcquire(&gj_service->mutex);
	if (off % GJ_STAGING_GRANULE == 0 && first < gj_service->staging_granules &&
		gj_service->granule_owner[first] == MyProcPid && gj_service->granule_run[first] > 0)
		free_run(first);
	SpinLockRelease(&gj_service->mutex);
}

/*
 * Do the len bytes at ptr lie inside staging granules that client pid
 * owns?  The service's check of every pointer a request carries.
 */
bool
gj_staging_owned_by(const void *ptr, Size len, int pid)
{
	const char *p = ptr;
	Size		off;
	int32		g,
				last;
	bool		ok = true;

	if (p < gj_service->staging ||
		p > gj_service->staging + (Size) gj_service->staging_granules * GJ_STAGING_GRANULE)
		return false;
	off = p - gj_service->staging;
	if (len > (Size) gj_service->staging_granules * GJ_STAGING_GRANULE - off)
		return false;
	if (len == 0)
		return true;
	last = (int32) ((off + len - 1) / GJ_STAGING_GRANULE);
	SpinLockAcquire(&gj_service->mutex);
	for (g = (int32) (off / GJ_STAGING_GRANULE); g <= last && ok; g++)
		ok = gj_service->granule_owner[g] == pid;
	SpinLockRelease(&gj_service->mutex);
	return ok;
}

/*
 * The service's sweep: free the chunks of clients that are gone (a
 * backend ends its joins and frees its chunks on ERROR and exit; this
 * covers what an exit could not).  Returns the bytes freed.
 */
int64
gj_staging_free_dead_owners(void)
{
	int32		g;
	int64		freed = 0;

	for (g = 0; g < gj_service->staging_granules; g++)
	{
		int			pid;
		int32		run;

		/* kill() is a system call: not under the spinlock */
		SpinLockAcquire(&gj_service->mutex);
		pid = gj_service->granule_owner[g];
		run = gj_service->granule_run[g];
		SpinLockRelease(&gj_service->mutex);
		if (run == 0 || pid == 0 || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		SpinLockAcquire(&gj_service->mutex);
		if (gj_service->granule_owner[g] == pid && gj_service->granule_run[g] == run)
		{
			freed += (int64) run * GJ_STAGING_GRANULE;
			free_run(g);
		}
		SpinLockRelease(&gj_service->mutex);
		g += run - 1;
	}
	return freed;
}

/*
 * Hand the chunk that starts at chunk from process from_pid to to_pid (the
 * service, for a shared inner side that outlives the client that drained
 * it).  Returns the chunk's bytes, or 0 when chunk is not the start of a
 * chunk that from_pid owns whole.
 */
Size
gj_staging_transfer(void *chunk, int from_pid, int to_pid)
{
	char	   *p = chunk;
	Size		off;
	int32		first,
				k,
				run = 0;

	if (p < gj_service->staging ||
		p >= gj_service->staging + (Size) gj_service->staging_granules * GJ_STAGING_GRANULE)
		return 0;
	off = p - gj_service->staging;
	if (off % GJ_STAGING_GRANULE != 0)
		return 0;
	first = (int32) (off / GJ_STAGING_GRANULE);
	SpinLockAcquire(&gj_service->mutex);
	if (gj_service->granule_owner[first] == from_pid && gj_service->granule_run[first] > 0)
	{
		run = gj_service->granule_run[first];
		for (k = first; k < first + run; k++)
		{
			Assert(gj_service->granule_owner[k] == from_pid);
			gj_service->granule_owner[k] = to_pid;
		}
	}
	SpinLockRelease(&gj_service->mutex);
	return (Size) run * GJ_STAGING_GRANULE;
}

/* Free a chunk that owner_pid owns (the service frees a shared inner's). */
void
gj_staging_free_owned(void *chunk, int owner_pid)
{
	Size		off;
	int32		first;

	if (chunk == NULL || gj_service == NULL || (char *) chunk < gj_service->staging)
		return;
	off = (char *) chunk - gj_service->staging;
	first = (int32) (off / GJ_STAGING_GRANULE);
	SpinLockAcquire(&gj_service->mutex);
	if (off % GJ_STAGING_GRANULE == 0 && first < gj_service->staging_granules &&
		gj_service->granule_owner[first] == owner_pid && gj_service->granule_run[first] > 0)
		free_run(first);
	SpinLockRelease(&gj_service->mutex);
}

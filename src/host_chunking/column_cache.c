/*-------------------------------------------------------------------------
 *
 * column_cache.c
 *	  The large column arrays of the host buffers (host_buffers.c): mapped
 *	  blocks that belong to the buffer's memory context while a query uses
 *	  them and go back to a per-process cache of idle blocks, rather than to
 *	  the kernel, when that context is reset or deleted (at the end of the
 *	  query, on a rescan, on ERROR).  The next query of the session takes
 *	  them again.
 *
 * Why: a drain writes every byte of its columns once, and writing a page
 * that was never mapped costs a page fault and the page's zeroing.  On the
 * 2-core machine a serial drain of 3M rows (f 3M x d 300k,
 * test/bench/bench_wall_clock.sh) wrote 53 MB of fresh pages, 12.5k minor
 * faults, about 20 ms of its 70: glibc's malloc hands such blocks out of a
 * fresh mapping, or out of the top of its heap, which it trims when they
 * are freed.  (It kept half of them between queries when the cpu backend
 * ran in the process, whose own allocations kept the heap's top from being
 * trimmed, and none through the GPU service: the drain of the same outer
 * side took 10-20 ms longer through the service.)  Populating a fresh
 * mapping in bulk (MAP_POPULATE) measured only 15% cheaper than faulting
 * it in, since the zeroing is most of it; keeping the pages is what saves
 * it.
 *
 * The cache keeps at most gpujoin.host_buffer_cache bytes of idle blocks
 * (the blocks released longest ago are unmapped first); 0 unmaps every
 * block when its context goes.  Blocks in use are not idle: they are
 * counted by the buffers as before (gpujoin.max_host_memory).  A parallel
 * worker exits with its query, and its cache with it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/mman.h>

#include "utils/memutils.h"

#include "gpujoin.h"
#include "host_chunking/column_cache.h"

/* Smaller arrays are palloc'd in the owner context as before. */
#define CACHED_MIN_BYTES	((Size) 1024 * 1024)
/* Blocks are mapped in whole units of this, so that sizes that differ a little share them. */
#define BLOCK_UNIT			((Size) 1024 * 1024)
/* With gpujoin.host_huge_pages: units and alignment of a transparent huge page. */
#define HUGE_UNIT			((Size) 2 * 1024 * 1024)

/*
 * One mapped block: in use (owner's callback set) or idle.  The records
 * live in TopMemoryContext, on one list or the other.
 */
typedef struct ColumnBlock
{
	struct ColumnBlock *next;
	char	   *data;
	Size		size;
	struct ColumnBlockOwner *owner; /* NULL when idle */
} ColumnBlock;

/* A block's tie to the memory context that uses it (allocated there). */
typedef struct ColumnBlockOwner
{
	MemoryContextCallback cb;
	ColumnBlock *block;			/* NULL once the block went back early */
} ColumnBlockOwner;

static ColumnBlock *blocks_in_use = NULL;
static ColumnBlock *idle_blocks = NULL;	/* most recently released first */
static Size idle_bytes = 0;

int			gpujoin_host_buffer_cache_kb = 64 * 1024;
bool		gpujoin_host_huge_pages = false;

static void
unmap_block(ColumnBlock *block)
{
	if (munmap(block->data, block->size) != 0)
		elog(WARNING, "could not unmap a GpuJoin column block: %m");
	pfree(block);
}

/* Unmap the idle blocks released longest ago while the cache is over its size. */
static void
trim_idle(void)
{
	Size		limit = (Size) Max(gpujoin_host_buffer_cache_kb, 0) * 1024;
	ColumnBlock **link = &idle_blocks;
	Size		kept = 0;

	while (*link != NULL)
	{
		ColumnBlock *block = *link;

		if (kept + block->size <= limit)
		{
			kept += block->size;
			link = &block->next;
			continue;
		}
		*link = block->next;
		idle_bytes -= block->size;
		unmap_block(block);
	}
}

/* Move a block in use to the idle list (or unmap it, past the cache's size). */
static void
release_block(ColumnBlock *block)
{
	ColumnBlock **link;

	for (link = &blocks_in_use; *link != block; link = &(*link)->next)
		Assert(*link != NULL);
	*link = block->next;
	block->owner = NULL;
	block->next = idle_blocks;
	idle_blocks = block;
	idle_bytes += block->size;
	trim_idle();
}

/* The owner context is being reset or deleted: its block goes back. */
static void
owner_gone(void *arg)
{
	ColumnBlockOwner *owner = arg;

	if (owner->block != NULL)
		release_block(owner->block);
	owner->block = NULL;
}

/*
 * A fresh mapping of *size bytes (a multiple of BLOCK_UNIT); NULL when none
 * can be mapped.
 *
 * With gpujoin.host_huge_pages, *size is rounded up to HUGE_UNIT, the
 * block mapped at a multiple of it, and asked to be backed by transparent
 * huge pages: each 2 MB of the block then faults in as one huge page
 * where the kernel's THP setting is "madvise" (Debian's and Ubuntu's
 * default) or "always", instead of 512 faults of 4 kB pages.  A parallel
 * worker's cache leaves with it, so its drain writes only fresh pages.  On
 * the 2-core machine a serial drain of 10M int4 keys with the cache off
 * took 86 ms against 118 (f.k and f.v: 108 against 164), but the first
 * query after a while stalled 250 ms in the kernel's compaction of memory
 * for free huge pages (defrag "madvise"), which is why it is off by
 * default.  Where THP is off madvise fails, and the block is faulted in
 * page by page as without it.  Without the setting blocks are mapped as
 * before: the aligned mapping's larger units measured 1-4% slower in
 * bench_columnar_input.sh's serial reader on the 2-core machine (fewer
 * blocks fit the idle cache).
 */
static void *
map_block(Size *size)
{
	char	   *base;
	char	   *data;
	Size		head;

	if (!gpujoin_host_huge_pages)
	{
		base = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		return base == MAP_FAILED ? NULL : base;
	}
	*size = TYPEALIGN(HUGE_UNIT, *size);
	base = mmap(NULL, *size + HUGE_UNIT, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	data = (char *) TYPEALIGN(HUGE_UNIT, base);
	head = data - base;
	/* the unaligned ends go back; the kernel splits the mapping */
	if (head > 0)
		(void) munmap(base, head);
	(void) munmap(data + *size, HUGE_UNIT - head);
#ifdef MADV_HUGEPAGE
	(void) madvise(data, *size, MADV_HUGEPAGE);
#endif
	return data;
}

/*
 * A block of at least len bytes for owner: the smallest idle one that is
 * big enough, else a new mapping.  ERROR when none can be mapped.
 */
static ColumnBlock *
take_block(MemoryContext owner_cxt, Size len)
{
	ColumnBlock **best = NULL;
	ColumnBlock **link;
	ColumnBlock *block;
	ColumnBlockOwner *owner;

	/* allocated first, so that an ERROR below leaves no block without an owner */
	owner = MemoryContextAllocZero(owner_cxt, sizeof(ColumnBlockOwner));
	for (link = &idle_blocks; *link != NULL; link = &(*link)->next)
	{
		if ((*link)->size >= len && (best == NULL || (*link)->size < (*best)->size))
			best = link;
	}
	if (best != NULL)
	{
		block = *best;
		*best = block->next;
		idle_bytes -= block->size;
	}
	else
	{
		Size		size = TYPEALIGN(BLOCK_UNIT, len);
		void	   *data;

		block = MemoryContextAllocZero(TopMemoryContext, sizeof(ColumnBlock));
		data = map_block(&size);
		if (data == NULL)
		{
			pfree(block);
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory"),
					 errdetail("GpuJoin could not map %zu bytes for a column of its input.", size)));
		}
		block->data = data;
		block->size = size;
	}
	block->owner = owner;
	block->next = blocks_in_use;
	blocks_in_use = block;
	owner->block = block;
	owner->cb.func = owner_gone;
	owner->cb.arg = owner;
	MemoryContextRegisterResetCallback(owner_cxt, &owner->cb);
	return block;
}

/* The block in use whose data starts at p, or NULL when p was palloc'd. */
static ColumnBlock *
block_of(void *p)
{
	ColumnBlock *block;

	for (block = blocks_in_use; block != NULL; block = block->next)
	{
		if (block->data == p)
			return block;
	}
	return NULL;
}

/*
 * len bytes for a column, freed with owner (on reset or deletion): from
 * the cache when large enough to matter.
 */
void *
gj_column_alloc(MemoryContext owner, Size len)
{
	if (len < CACHED_MIN_BYTES)
		return MemoryContextAllocHuge(owner, len);
	return take_block(owner, len)->data;
}

/*
 * A column p of oldlen bytes (from gj_column_alloc with the same owner)
 * grown to len bytes, its contents kept.
 */
void *
gj_column_realloc(MemoryContext owner, void *p, Size oldlen, Size len)
{
	ColumnBlock *block = block_of(p);
	void	   *grown;

	if (block != NULL && block->size >= len)
		return p;
	if (block == NULL && len < CACHED_MIN_BYTES)
		return repalloc_huge(p, len);
	grown = gj_column_alloc(owner, len);
	memcpy(grown, p, Min(oldlen, len));
	if (block != NULL)
	{
		block->owner->block = NULL;
		release_block(block);
	}
	else
		pfree(p);
	return grown;
}

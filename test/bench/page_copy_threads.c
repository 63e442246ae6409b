/*
 * test/bench/page_copy_threads.c: what it costs a host to copy 8 kB heap
 * pages, against reading them, by 1 and by 9 threads at once (a Gather's
 * leader and 8 workers): the price a columnar reader would pay to stage
 * raw pages for the device to decode, instead of decoding them itself
 * (docs/architecture.md, section 10).
 *
 * A "buffer pool" of 54,055 pages (the outer table of bench_equi.sh's
 * equi-joins) in shared anonymous memory, written first, and a staging area
 * of the same size.  Each line is one round of the pages split evenly
 * among the threads, after 512 MB of other memory was written so that the
 * pages come from memory, not the cache:
 *
 *	- memcpy 8kB: each page copied into the staging area;
 *	- read 1 line/64B: one 8-byte load from each 64-byte line of each page,
 *	  the memory traffic of a decoder that touches every line, with none of
 *	  its work.
 *
 * Printed: microseconds a page (the threads' average) and the slowest
 * thread's milliseconds; three rounds each.
 *
 * Build and run: cc -O2 -Wall -pthread -o /tmp/page_copy_threads
 * test/bench/page_copy_threads.c && /tmp/page_copy_threads
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define PAGE_BYTES	8192
#define NPAGES		54055L
#define MAX_THREADS 16
#define EVICT_BYTES ((size_t) 512 * 1024 * 1024)

static char *pool;
static char *staging;
static int nthreads;
static int copy_pages;			/* 1: memcpy, 0: read a word a line */

typedef struct Share
{
	int			id;
	double		ms;
	uint64_t	sum;
} Share;

static double
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void *
run_share(void *arg)
{
	Share	   *share = arg;
	long		per = NPAGES / nthreads;
	long		first = share->id * per;
	double		start = now_ms();
	uint64_t	sum = 0;

	for (long i = first; i < first + per; i++)
	{
		if (copy_pages)
			memcpy(staging + i * PAGE_BYTES, pool + i * PAGE_BYTES, PAGE_BYTES);
		else
		{
			const uint64_t *words = (const uint64_t *) (pool + i * PAGE_BYTES);

			for (int w = 0; w < PAGE_BYTES / 8; w += 8)
				sum += words[w];
		}
	}
	share->ms = now_ms() - start;
	share->sum = sum;
	return NULL;
}

int
main(void)
{
	size_t		bytes = NPAGES * PAGE_BYTES;
	static const int thread_counts[] = {1, 9};
	char	   *evict = malloc(EVICT_BYTES);

	pool = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	staging = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (pool == MAP_FAILED || staging == MAP_FAILED || evict == NULL)
	{
		perror("memory");
		return 1;
	}
	(void) madvise(pool, bytes, MADV_HUGEPAGE);
	(void) madvise(staging, bytes, MADV_HUGEPAGE);
	memset(pool, 1, bytes);
	memset(staging, 2, bytes);

	for (copy_pages = 1; copy_pages >= 0; copy_pages--)
		for (int k = 0; k < 2; k++)
			for (int round = 0; round < 3; round++)
			{
				pthread_t	threads[MAX_THREADS];
				Share		shares[MAX_THREADS];
				double		slowest = 0;
				double		total = 0;

				nthreads = thread_counts[k];
				memset(evict, round + 1, EVICT_BYTES);
				for (int t = 0; t < nthreads; t++)
				{
					shares[t].id = t;
					pthread_create(&threads[t], NULL, run_share, &shares[t]);
				}
				for (int t = 0; t < nthreads; t++)
				{
					pthread_join(threads[t], NULL);
					total += shares[t].ms;
					if (shares[t].ms > slowest)
						slowest = shares[t].ms;
				}
				printf("%s threads %d: per page %.3f us (thread avg), slowest thread %.1f ms\n",
					   copy_pages ? "memcpy 8kB" : "read 1 line/64B", nthreads,
					   total / nthreads / (NPAGES / nthreads) * 1e3, slowest);
			}
	return 0;
}

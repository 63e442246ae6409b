/*
 * test/bench/memory_costs.c: what a fresh process pays to touch memory, the
 * costs behind a parallel worker's drain (docs/results/
 * 2026-11-28-h200-ca58913-agg-columns.md).  Each line is measured in a child
 * forked for it, as PostgreSQL forks a parallel worker:
 *
 *	- anon: writing 64 MB of fresh private memory a 4 kB page at a time, as
 *	  plain page faults, after MADV_POPULATE_WRITE, and after MADV_HUGEPAGE;
 *	- shm: the first read of 512 MB of shared memory the parent wrote (the
 *	  buffer pool, to a worker), as faults and after MADV_POPULATE_READ;
 *	- memcpy: 8 kB pages copied out of that shared memory (the heap pages a
 *	  drain reads), GB/s.
 *
 * Build and run: cc -O2 -Wall -o /tmp/memory_costs test/bench/memory_costs.c
 * && /tmp/memory_costs.  Each anon and shm line is printed twice: the second
 * round finds the kernel's free pages warm.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Linux 5.14's; older kernels answer EINVAL (the line says so) */
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

#define MB			(1024L * 1024)
#define PAGE		4096L
#define ANON_BYTES	(64 * MB)
#define SHM_BYTES	(512 * MB)

typedef enum Mode
{
	ANON_TOUCH,
	ANON_POPULATE,
	ANON_HUGEPAGE,
	SHM_READ,
	SHM_POPULATE,
	NMODES
} Mode;

static const char *const mode_names[NMODES] = {
	"anon touch", "anon populate_write+touch", "anon madv_hugepage+touch",
	"shm first read", "shm populate_read+read"
};

static char *shm;

static double
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* One measurement, in the child forked for it. */
static void
measure(Mode mode)
{
	long		len = mode <= ANON_HUGEPAGE ? ANON_BYTES : SHM_BYTES;
	volatile long sink = 0;
	double		start = now_ms();
	double		ms;

	if (mode <= ANON_HUGEPAGE)
	{
		char	   *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
							 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
		{
			perror("mmap");
			return;
		}
		if (mode == ANON_POPULATE && madvise(p, len, MADV_POPULATE_WRITE) != 0)
			perror("MADV_POPULATE_WRITE");
		if (mode == ANON_HUGEPAGE && madvise(p, len, MADV_HUGEPAGE) != 0)
			perror("MADV_HUGEPAGE");
		for (long i = 0; i < len; i += PAGE)
			p[i] = 1;
	}
	else
	{
		if (mode == SHM_POPULATE && madvise(shm, len, MADV_POPULATE_READ) != 0)
			perror("MADV_POPULATE_READ");
		for (long i = 0; i < len; i += PAGE)
			sink += shm[i];
	}
	ms = now_ms() - start;
	printf("%-28s %4ld MB: %7.2f ms  (%.2f us per 4 kB)\n",
		   mode_names[mode], len / MB, ms, ms * 1e3 / (len / PAGE));
}

int
main(void)
{
	char	   *dst;
	double		start;

	shm = mmap(NULL, SHM_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED)
	{
		perror("mmap");
		return 1;
	}
	memset(shm, 1, SHM_BYTES);
	for (int round = 0; round < 2; round++)
	{
		for (Mode mode = 0; mode < NMODES; mode++)
		{
			pid_t		child = fork();

			if (child == 0)
			{
				measure(mode);
				fflush(stdout);
				_exit(0);
			}
			waitpid(child, NULL, 0);
		}
	}

	/* 8 kB pages copied out of the shared memory into a buffer already written */
	dst = malloc(ANON_BYTES);
	if (dst == NULL)
		return 1;
	memset(dst, 0, ANON_BYTES);
	start = now_ms();
	for (int r = 0; r < 4; r++)
		for (long i = 0; i + 8192 <= ANON_BYTES; i += 8192)
			memcpy(dst + i, shm + i + r * ANON_BYTES, 8192);
	printf("memcpy 8 kB pages: %.2f GB/s\n", 4.0 * ANON_BYTES / (1 << 30) / ((now_ms() - start) / 1e3));
	free(dst);
	return 0;
}

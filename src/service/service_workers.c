/*-------------------------------------------------------------------------
 *
 * service_workers.c
 *	  The GPU service's worker threads: they serve the requests the main
 *	  thread hands them (gpujoin.service_workers of them), so that the
 *	  joins of different sessions run at once, each on its own device
 *	  stream (the cuda backend creates one per join), instead of in turn.
 *
 * The main thread stays the PostgreSQL process: it waits on its latch,
 * handles signals and interrupts, finds the slots whose clients submitted a
 * request, marks them RUNNING and queues their numbers here.  A worker
 * takes a slot number off the queue and calls the function the service
 * passed to gj_service_workers_start (gpujoin_service.c's serve_request,
 * handed down so that this file never calls up into it), which calls the backend contract (plain C: kernels/backend.h), takes
 * spinlocks of the staging area and ends with SetLatch on the client's
 * latch; no worker calls anything that could ereport.  A client has one
 * request at a time, so a join is never served by two workers at once.
 *
 * The workers block every signal: signals are the main thread's.  On exit
 * the main thread stops them (gj_service_workers_stop): each finishes the
 * request it is running, a step bounded in work, and the queued ones stay
 * unanswered; their clients see the service stop and raise an ERROR.
 * Where no thread can be started, the main thread serves each request
 * itself when it is submitted.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <pthread.h>
#include <signal.h>

#include "service/service_shared.h"
#include "utils/memutils.h"

#define MAX_WORKERS		64

static pthread_t workers[MAX_WORKERS];
static int	nworkers = 0;

/* The queue: slot numbers, each at most once (a slot is RUNNING until done). */
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_cond = PTHREAD_COND_INITIALIZER;
static int *queue = NULL;		/* ring of nslots + 1 */
static int	queue_size = 0;
static int	queue_head = 0;
static int	queue_tail = 0;
static bool stopping = false;

/* gpujoin_service.c's serve_request, set before any thread starts */
static GjServeRequestFn serve_request = NULL;

static void *
worker_main(void *arg)
{
	for (;;)
	{
		int			slotno;

		pthread_mutex_lock(&queue_lock);
		while (queue_head == queue_tail && !stopping)
			pthread_cond_wait(&queue_cond, &queue_lock);
		if (stopping)
		{
			pthread_mutex_unlock(&queue_lock);
			return NULL;
		}
		slotno = queue[queue_head];
		queue_head = (queue_head + 1) % queue_size;
		pthread_mutex_unlock(&queue_lock);
		serve_request(slotno);
	}
}

void
gj_service_workers_start(int n, GjServeRequestFn serve)
{
	sigset_t	all_signals,
				old_signals;

	serve_request = serve;
	queue_size = gj_service->nslots + 1;
	queue = MemoryContextAlloc(TopMemoryContext, sizeof(int) * queue_size);
	queue_head = queue_tail = 0;
	stopping = false;
	n = Min(Max(n, 1), MAX_WORKERS);

	/* the threads inherit this mask: every signal stays the main thread's */
	gj_service_thread_signals(&all_signals);
	pthread_sigmask(SIG_SETMASK, &all_signals, &old_signals);
	for (nworkers = 0; nworkers < n; nworkers++)
		if (pthread_create(&workers[nworkers], NULL, worker_main, NULL) != 0)
			break;
	pthread_sigmask(SIG_SETMASK, &old_signals, NULL);
	if (nworkers < n)
		ereport(LOG,
				(errmsg("gpujoin service: started %d of %d worker threads", nworkers, n)));
}

int
gj_service_workers_running(void)
{
	return nworkers;
}

void
gj_service_workers_submit(int slotno)
{
	if (nworkers == 0)
	{
		serve_request(slotno);
		return;
	}
	pthread_mutex_lock(&queue_lock);
	queue[queue_tail] = slotno;
	queue_tail = (queue_tail + 1) % queue_size;
	pthread_cond_signal(&queue_cond);
	pthread_mutex_unlock(&queue_lock);
}

/*
 * The signal mask of the service's threads: every signal blocked, so that
 * PostgreSQL's handlers run on the main thread only, but those a fault
 * raises on the thread itself (a SIGSEGV blocked there kills the process
 * without running gpujoin_service.c's handler, which logs the stack).
 */
void
gj_service_thread_signals(sigset_t *mask)
{
	sigfillset(mask);
	sigdelset(mask, SIGSEGV);
	sigdelset(mask, SIGBUS);
	sigdelset(mask, SIGILL);
	sigdelset(mask, SIGFPE);
	sigdelset(mask, SIGABRT);
}

void
gj_service_workers_stop(void)
{
	int			i;

	if (nworkers == 0)
		return;
	pthread_mutex_lock(&queue_lock);
	stopping = true;
	pthread_cond_broadcast(&queue_cond);
	pthread_mutex_unlock(&queue_lock);
	for (i = 0; i < nworkers; i++)
		(void) pthread_join(workers[i], NULL);
	nworkers = 0;
}

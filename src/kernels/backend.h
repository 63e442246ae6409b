/*-------------------------------------------------------------------------
 *
 * backend.h
 *	  The contract between the GpuJoin executor and a compute backend.
 *
 * The executor (src/custom_scan/exec/gpujoin_steps.c) owns the host buffers and the
 * tile schedule; a backend runs one step of one tile at a time and hands back
 * the matching (outer row, inner row) pairs.  Both backends implement the
 * same algorithms over the same tiles, so the cpu backend is the reference
 * the cuda backend is tested against.
 *
 * A step covers the outer rows [*outer_next, tile->outer_end) of a tile, or a
 * prefix of them: the backend stops early (at an outer-row boundary) when the
 * next outer row's matches might not fit the match buffer, or when it has
 * done about pairs_per_step pairs of work, so that the executor can check for
 * interrupts between steps.  It advances *outer_next past the rows it
 * finished.  Every outer row is finished exactly once per tile, so pairs are
 * never lost or duplicated when a tile is split.
 *
 * This header is plain C without PostgreSQL headers: nvcc compiles the cuda
 * backend against it, and the kernel test programs link it without a server.
 * Backends report errors through GjError instead of ereport(); the caller
 * turns them into ERRORs.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_BACKEND_H
#define GPUJOIN_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "device_program.h"

#ifdef __cplusplus
extern "C"
{
#endif

/* Algorithms, in the order of the gpujoin.algorithm GUC. */
typedef enum GjAlgorithm
{
	GJ_ALGO_AUTO = 0,
	GJ_ALGO_NESTLOOP,
	GJ_ALGO_SORTMERGE,
	GJ_ALGO_HASH
} GjAlgorithm;

/*
 * The recheck flag rides in the top bit of a pair's outer row number: the
 * device program asked the host to evaluate the quals itself (see
 * device_program.h).  Row numbers are therefore limited to 31 bits.
 */
#define GJ_PAIR_RECHECK		0x80000000u
#define GJ_PAIR_ROW_MASK	0x7fffffffu
#define GJ_MAX_SIDE_ROWS	((int64_t) GJ_PAIR_ROW_MASK)

/*
 * Sort-merge / range join: the inner rows are sorted on one key column, and
 * each outer row's candidates are the inner rows whose key lies between the
 * bounds its bound programs compute (programs over outer columns only; a
 * missing bound is open).  Every candidate is then tested with the full
 * device program unless the bounds are the whole join condition.
 */
typedef struct GjRangeSpec
{
	int32_t		inner_col;
	int32_t		cls;			/* GjClass of the key and the bounds */
	int32_t		lo_ninstrs;		/* 0: no lower bound */
	int32_t		lo_inclusive;
	int32_t		hi_ninstrs;		/* 0: no upper bound */
	int32_t		hi_inclusive;
	GjInstr		lo_instrs[GJ_MAX_INSTRS];
	GjInstr		hi_instrs[GJ_MAX_INSTRS];
} GjRangeSpec;

/*
 * Hash join: equality of outer_cols[k] and inner_cols[k] for every k.  Both
 * sides are ordered by a hash of their keys, so that only tiles whose hash
 * ranges overlap are run (the join matrix becomes block-diagonal); within a
 * tile the candidates of an outer row are the inner rows of equal hash, and
 * the full device program removes hash collisions.
 */
typedef struct GjEquiSpec
{
	int32_t		nkeys;
	int32_t		outer_cols[GJ_MAX_KEY_COLS];
	int32_t		inner_cols[GJ_MAX_KEY_COLS];
	int32_t		cls[GJ_MAX_KEY_COLS];
} GjEquiSpec;

struct GjAggSpec;				/* kernels/agg_spec.h */
struct GjAggPartial;			/* kernels/agg_reduce.h */

/* Everything a backend needs to know about one join, in host memory. */
typedef struct GjJoinInput
{
	GjKeyColumns outer;
	int64_t		outer_nrows;
	GjKeyColumns inner;
	int64_t		inner_nrows;
	const GjInstr *instrs;		/* device program: AND of all device quals */
	int32_t		ninstrs;
	int32_t		algorithm;		/* GjAlgorithm, never AUTO here */
	int64_t		match_capacity; /* pairs the match buffer must hold */
	int64_t		budget_bytes;	/* device memory budget of this join */
	GjRangeSpec range;			/* GJ_ALGO_SORTMERGE */
	GjEquiSpec	equi;			/* GJ_ALGO_HASH */
	int32_t		filter_needed;	/* candidates must pass the device program */

	/*
	 * Aggregate steps of a nested loop whose program is a dominance
	 * conjunction (gj_conjunction_is_dominance) may count each outer row's
	 * matches by dominance instead of evaluating pairs: the planner chose it.
	 */
	int32_t		agg_dominance;

	/*
	 * The spec every agg_step of the join will be given, its contents fixed
	 * until end_join, or NULL when the executor calls no agg_step.  A
	 * backend that must copy the spec before its steps (the GPU service's
	 * proxy, which stages it in shared memory) does so here; the others
	 * ignore it.
	 */
	const struct GjAggSpec *agg_spec;

	/*
	 * The device the join runs on: a CUDA device number for the cuda
	 * backend (0 outside the GPU service, which opens every visible GPU and
	 * runs each join on the device it chose), ignored by the cpu backend.
	 */
	int32_t		device;

	/*
	 * NULL, or what the backend's prepare_inner returned for an input with
	 * this inner side (the same columns and rows), algorithm and inner key
	 * spec: begin_join then uses the inner side as prepared there (sorted,
	 * hashed) instead of preparing it again, and never changes it.  The
	 * caller keeps it until every join that uses it has ended.
	 */
	const void *prepared_inner;

	/*
	 * The GPU service's proxy only (service_client.c): begin_join returns
	 * once the service has checked the join and reserved its memory, and
	 * the service opens it meanwhile; gj_service_join_wait_open then says
	 * whether that succeeded.  The other backends ignore it.
	 */
	bool		open_in_background;

	/*
	 * Compile the program to GPU code where a kernel can run it compiled
	 * (the cuda backend, cuda_compile.cu): GJ_COMPILE_OFF (interpret, as
	 * gpujoin.compile_programs = off), GJ_COMPILE_AUTO (where the join has
	 * GJ_COMPILE_MIN_PAIRS pairs or more), GJ_COMPILE_ALWAYS (at any size:
	 * kernel_test, gpujoin.compile_programs = always).
	 */
	int32_t		compile_programs;
} GjJoinInput;

#define GJ_COMPILE_OFF		0
#define GJ_COMPILE_AUTO		1
#define GJ_COMPILE_ALWAYS	2

/*
 * A join of fewer pairs compiles no program (it runs one compiled already,
 * from the process's cache): compiling cost 0.2 to 0.4 s once on an H200
 * machine, in which time the interpreter evaluates 10^10 pairs or more (3
 * to 9 10^10 pairs/s, kernel_test bench-program-count).
 */
#define GJ_COMPILE_MIN_PAIRS	1e10

/*
 * The same for the candidate pairs of a sort-merge or hash join's filtered
 * steps, whose kernel compiles in about a tenth of the time (nothing in it
 * unrolls) and whose interpreter reads each candidate's rows from global
 * memory (kernel_test bench-sorted-filter).
 */
#define GJ_COMPILE_MIN_CANDIDATES	1e9

/* Programs of more instructions than this run interpreted. */
#define GJ_COMPILE_MAX_INSTRS	48

/*
 * One tile of the join matrix: rows [begin, end) of each side.  For the
 * sort-merge and hash algorithms the rows are positions in the order the
 * backend sorted each side into; the pairs it returns are always row numbers
 * of the input.
 */
typedef struct GjTile
{
	int64_t		outer_begin;
	int64_t		outer_end;
	int64_t		inner_begin;
	int64_t		inner_end;
} GjTile;

/* Matches of one step, in host memory owned by the backend. */
typedef struct GjMatches
{
	const uint32_t *outer_rows; /* GJ_PAIR_RECHECK | row */
	const uint32_t *inner_rows;
	int64_t		count;
} GjMatches;

/* The most devices the GPU service opens (gpujoin.devices picks which). */
#define GJ_MAX_DEVICES		16

/*
 * Where a join's Backend Time went, by part, in milliseconds (EXPLAIN
 * (ANALYZE, VERBOSE) shows them, README "Reading EXPLAIN").  Whole steps are
 * timed, never rows, on the host's monotonic clock (gj_clock_ms), so the
 * clocks of the client and of the GPU service's threads agree.  The work
 * begin_join does (sorting, staging) has no GjStats to go to: a backend
 * keeps it and adds it to the stats of the join's next step, agg_step or
 * agg_finish.  What no part names is the rest of Backend Time ("other":
 * round trips, schedules, allocations).
 */
typedef struct GjTimes
{
	double		queued_ms;		/* GPU service: the request waited for a
								 * worker thread */
	double		staging_ms;		/* inputs copied into the staging area */
	double		sort_ms;		/* keys sorted or hashed (cuda: with their
								 * upload) */
	double		shared_build_ms;	/* a parallel join's shared inner side
									 * sorted or hashed, once for all */
	double		share_wait_ms;	/* waited while another process's join
								 * built it */
	double		compute_ms;		/* the cpu backend's join and aggregate
								 * loops (cuda's are kernel_ms), and the
								 * cuda backend's reductions on the host */
	double		results_ms;		/* matches copied into the client's buffers */
	double		checks_ms;		/* GPU service: a join's request checked, and
								 * the aggregate spec's copies it keeps made */
	double		open_ms;		/* cuda: the join set up on the device beyond
								 * its sort (allocations, uploads, the shared
								 * inner side borrowed, the aggregates' row
								 * order and arrays) */

	/*
	 * A join in the GPU service: the client's calls from submitted to
	 * running again, and the service's serving of them (from a worker thread
	 * taking the request to the answer).  The calls less the serving and
	 * queued_ms are the round trips' own latency; the serving less the parts
	 * above that the service measures is its work that no part names.
	 */
	double		call_ms;
	double		served_ms;
} GjTimes;

static inline void
gj_times_add(GjTimes *into, const GjTimes *from)
{
	into->queued_ms += from->queued_ms;
	into->staging_ms += from->staging_ms;
	into->sort_ms += from->sort_ms;
	into->shared_build_ms += from->shared_build_ms;
	into->share_wait_ms += from->share_wait_ms;
	into->compute_ms += from->compute_ms;
	into->results_ms += from->results_ms;
	into->checks_ms += from->checks_ms;
	into->open_ms += from->open_ms;
	into->call_ms += from->call_ms;
	into->served_ms += from->served_ms;
}

/* Milliseconds on the monotonic clock, for GjTimes (any thread). */
static inline double
gj_clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec * 1000.0 + (double) ts.tv_nsec / 1e6;
}

/* Counters the backend adds to; the executor shows them in EXPLAIN ANALYZE. */
typedef struct GjStats
{
	int64_t		pairs_evaluated;
	int64_t		device_matches;
	int64_t		bytes_to_device;
	int64_t		bytes_from_device;
	double		kernel_ms;
	double		transfer_ms;
	GjTimes		times;			/* Backend Time by part */

	/*
	 * Steps each device of the GPU service ran for the join (the service
	 * fills it; a backend in this process leaves it zero): a nested loop's
	 * steps spread over the devices, other joins run on one.
	 */
	int64_t		device_steps[GJ_MAX_DEVICES];

	/*
	 * The program compiled to GPU code (the cuda backend's cuda_compile.cu):
	 * steps that ran it compiled (of them, those that ran the quick kernel
	 * while the full one compiled) and interpreted, the kernels the join
	 * compiled and the milliseconds that took, those it loaded from the
	 * kernel store (gpujoin.compiled_kernel_dir; their load time is in
	 * compile_ms), those it found compiled in the process's cache, and why
	 * a step last ran it interpreted (GjInterpretedWhy).
	 */
	int64_t		program_steps_compiled;
	int64_t		program_steps_quick;
	int64_t		program_steps_interpreted;
	int64_t		programs_compiled;
	int64_t		programs_loaded;
	int64_t		programs_cached;
	double		compile_ms;
	int32_t		interpreted_why;
} GjStats;

/* Why a step ran the program interpreted (GjStats.interpreted_why). */
typedef enum GjInterpretedWhy
{
	GJ_INTERPRETED_NONE = 0,
	GJ_INTERPRETED_OFF,			/* gpujoin.compile_programs is off */
	GJ_INTERPRETED_SMALL,		/* too few pairs to be worth compiling */
	GJ_INTERPRETED_TOO_LARGE,	/* more than GJ_COMPILE_MAX_INSTRS */
	GJ_INTERPRETED_NO_NVRTC,	/* libnvrtc could not be loaded */
	GJ_INTERPRETED_COMPILE_FAILED,
	GJ_INTERPRETED_LOAD_FAILED,
	GJ_INTERPRETED_CACHE_FULL,
	GJ_INTERPRETED_KERNEL,		/* the step's kernel has no compiled form */
	GJ_INTERPRETED_COMPILING,	/* compiling on another thread, not ready yet */
	GJ_INTERPRETED_NO_MEMORY	/* no device memory for what the compiled form needs */
} GjInterpretedWhy;

/* Add one step's program counters (GjStats) to a total's. */
static inline void
gj_stats_add_program(GjStats *total, const GjStats *s)
{
	total->program_steps_compiled += s->program_steps_compiled;
	total->program_steps_quick += s->program_steps_quick;
	total->program_steps_interpreted += s->program_steps_interpreted;
	total->programs_compiled += s->programs_compiled;
	total->programs_loaded += s->programs_loaded;
	total->programs_cached += s->programs_cached;
	total->compile_ms += s->compile_ms;
	if (s->interpreted_why != GJ_INTERPRETED_NONE)
		total->interpreted_why = s->interpreted_why;
}

typedef struct GjError
{
	int			code;			/* 0: no error */
	char		message[256];
} GjError;

#define GJ_ERR_NONE			0
#define GJ_ERR_OUT_OF_MEMORY	1
#define GJ_ERR_DEVICE		2
#define GJ_ERR_UNAVAILABLE	3
#define GJ_ERR_OVER_BUDGET	4	/* begin_join: the join does not fit the budget
								 * at any tile size */
#define GJ_ERR_BUSY			5	/* the GPU service: its device memory budget is
								 * reserved by other joins (service_budget.c) */

typedef struct GjBackend
{
	const char *name;

	/*
	 * Prepare one join: allocate the match buffer and whatever device memory
	 * the budget allows.  Returns the backend's state, or NULL with *err set.
	 */
	void	   *(*begin_join) (const GjJoinInput *input, GjError *err);

	/* Run one step of a tile (see above).  Returns false with *err set. */
	bool		(*run_step) (void *state, const GjTile *tile, int64_t *outer_next,
							 GjMatches *matches, GjStats *stats, GjError *err);

	/* Release everything begin_join took.  Safe to call on any state once. */
	void		(*end_join) (void *state);

	/* Bit (1 << GjAlgorithm) for each algorithm the backend implements. */
	uint32_t	algorithms;

	/*
	 * Can any pair of the tile match?  Tiles that cannot are never run (tile
	 * pruning).  NULL: every tile may match.
	 */
	bool		(*tile_can_match) (void *state, const GjTile *tile);

	/*
	 * Aggregates over the join (kernels/agg_spec.h, agg_reduce.h): like
	 * run_step, but the backend reduces the matches it can into *partial (or
	 * into its own accumulators, see agg_finish) instead of returning them.
	 * It returns in *matches the pairs the host must reduce: flagged for a
	 * recheck, of an outer row whose group is deferred, or with an argument
	 * the spec cannot give exactly (a row flagged GJ_AGG_ROW_ERROR, a pair
	 * program asking for a recheck).  Each match is either reduced or
	 * returned, never both.  NULL: the executor reduces every pair that
	 * run_step returns.
	 */
	bool		(*agg_step) (void *state, const GjTile *tile, int64_t *outer_next,
							 const struct GjAggSpec *spec, struct GjAggPartial *partial,
							 GjMatches *matches, GjStats *stats, GjError *err);

	/*
	 * After the last agg_step of a join: add what the backend reduced but
	 * still holds (the cuda backend's accumulators in device memory) into
	 * *partial.  NULL: every agg_step left its partials in *partial.
	 */
	bool		(*agg_finish) (void *state, const struct GjAggSpec *spec,
							   struct GjAggPartial *partial, GjStats *stats, GjError *err);

	/*
	 * Step overlap (gpujoin.overlap_steps): from this call on, run_step
	 * alternates between two match buffers, so that the matches it returns
	 * stay valid until the second run_step after it.  The executor then runs
	 * step k + 1 on a helper thread while it emits the rows of step k; that
	 * thread calls run_step and nothing else, and the executor calls no
	 * other function of the backend meanwhile.  Returns false (and leaves
	 * the backend as it was) when the second buffer cannot be allocated.
	 * NULL: the backend cannot overlap steps.
	 */
	bool		(*double_buffer) (void *state);

	/*
	 * The inner side of a join prepared once for several joins that differ
	 * only in their outer sides (the processes of a parallel join in the
	 * GPU service): sorted or hashed as begin_join would for input's
	 * algorithm and inner key spec.  Returns NULL with *err set; the joins
	 * then prepare it themselves.  release_inner frees it.  NULL: the
	 * backend prepares the inner side in every begin_join.  The cuda
	 * backend prepares it on input->device, and only joins on that device
	 * use it; the others prepare their own.
	 */
	const void *(*prepare_inner) (const GjJoinInput *input, GjError *err);
	void		(*release_inner) (const void *prepared);
} GjBackend;

extern const GjBackend gj_cpu_backend;

/*
 * Do inputs a and b have the same inner side (columns, rows), algorithm
 * and inner key spec, so that one prepare_inner serves both?  (cpu_sorted.c)
 */
extern bool gj_inner_prepared_alike(const GjJoinInput *a, const GjJoinInput *b);

/*
 * The cuda backend.  gj_cuda_probe() opens the CUDA runtime in the calling
 * process (never call it in the postmaster) and says whether a usable device
 * exists; it is cheap after the first call.
 */
typedef struct GjDeviceInfo
{
	char		name[128];
	int64_t		total_memory;
	int64_t		free_memory;
	int			sm_count;
	int			cc_major;
	int			cc_minor;
	double		init_ms;		/* time the first probe took */
} GjDeviceInfo;

extern bool gj_cuda_compiled;
extern bool gj_cuda_probe(GjDeviceInfo *info, GjError *err);

/*
 * For the GPU service, which opens every visible GPU: how many there are
 * (at most GJ_MAX_DEVICES; 0 with *err set when none is usable), and the
 * probe of one of them, which opens its context at the first call.
 */
extern int	gj_cuda_device_count(GjError *err);
extern bool gj_cuda_probe_device(int device, GjDeviceInfo *info, GjError *err);

/*
 * Pin (page-lock and map for DMA) a host range once, for the life of the
 * process: the GPU service's staging area.  Opens CUDA like the probe.
 */
extern bool gj_cuda_pin_host(void *ptr, size_t len, GjError *err);
extern void gj_cuda_unpin_host(void *ptr);

/*
 * Keep up to bytes of freed device memory in the device's memory pool
 * instead of returning it to the driver (the GPU service: its budget).
 */
extern void gj_cuda_pool_retain(int device, int64_t bytes);

/*
 * Wait until no program compiles on a thread of its own (cuda_compile.cu):
 * a process that used the cuda backend calls it on its way out, before
 * exit() runs any library's destructors (NVRTC's LLVM torn down under a
 * compiling thread crashes the process).  Returns at once where none does.
 */
extern void gj_cuda_wait_for_compiles(void);
extern const GjBackend gj_cuda_backend;

#ifdef __cplusplus
}
#endif

#endif							/* GPUJOIN_BACKEND_H */

/*-------------------------------------------------------------------------
 *
 * cuda_internal.cuh
 *	  Private to the cuda backend (the .cu files of src/kernels/cuda): the join state,
 *	  the tuning constants, error reporting and the functions one file of
 *	  the backend calls in another.
 *
 * The backend is split by concern: cuda_device.cu (opening and probing the
 * device, errors), cuda_memory.cu (match buffers, scratch, uploads, the
 * pools' retention), cuda_backend.cu (the GjBackend table: begin and end a
 * join), cuda_step.cu (run_step: dispatch a step), cuda_nestloop.cu (the
 * nested-loop kernels and step), cuda_sorted.cu (sort-merge/range and hash:
 * sorting the sides and the sorted step), cuda_agg.cu (the aggregate
 * fast path) and cuda_page_decode.cu (heap pages decoded on the device,
 * not yet part of a join).  nvcc compiles each file on its
 * own, without relocatable device code: every kernel is launched from host
 * code in its own file, and device code used by several files is inline in
 * a header (the keys, hashes and bounds in ../shared/gj_keys.h, which the
 * cpu backend compiles too, and the interpreter in ../device_program.h).
 *
 * Functions shared between the files are C++ with a gj_cuda_ prefix; only
 * what backend.h declares is extern "C".  No PostgreSQL headers (see
 * backend.h), and nothing may throw across the extern "C" boundary.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_CUDA_INTERNAL_CUH
#define GPUJOIN_CUDA_INTERNAL_CUH

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "kernels/backend.h"
#include "kernels/agg_spec.h"
#include "kernels/shared/agg_fold.h"
#include "kernels/shared/agg_runs.h"
#include "kernels/cpu/cpu_dominance.h"
#include "kernels/shared/gj_keys.h"

/*
 * Tuning constants.
 *
 * Simple-compare kernel: CMP_BLOCK threads each hold CMP_ROWS outer keys in
 * registers, so every inner key read from shared memory (a broadcast, all
 * threads of a warp read the same word) is compared CMP_ROWS times.  An
 * inner chunk of CMP_CHUNK rows takes 8 KB of keys plus 1 KB of null flags,
 * small enough for several blocks per SM.
 */
#define CMP_BLOCK			256
#define CMP_ROWS			8
#define CMP_CHUNK			1024

/*
 * Interpreter kernel: one outer row per thread (the interpreter, not memory,
 * is the bottleneck); a chunk of GEN_CHUNK inner rows of up to
 * GJ_MAX_KEY_COLS columns takes 9 KB of shared memory.
 */
#define GEN_BLOCK			128
#define GEN_CHUNK			128

/*
 * Work per step, in pairs, so that the executor checks for interrupts often
 * enough: the compare kernel does well over 10^11 pairs/s on a current
 * device, the interpreter a few 10^10.  Both bounds keep a step far below a
 * second.  MAX_STEP_ROWS bounds the per-row scratch when the inner tile is
 * tiny.
 */
#define CMP_PAIRS_PER_STEP	((int64_t) 1 << 34)
#define GEN_PAIRS_PER_STEP	((int64_t) 1 << 30)

/*
 * The program count kernel (cuda_program_count.cu) runs the interpreter
 * only for the pairs that pass a program's leading compares, and writes
 * no pair: its steps are four times the interpreter's.
 */
#define PROGRAM_COUNT_PAIRS_PER_STEP	((int64_t) 1 << 32)
#define MAX_STEP_ROWS		((int64_t) 1 << 24)

/* Blocks per SM a step aims for before it splits the inner tile. */
#define TARGET_BLOCKS_PER_SM	8

/*
 * Scratch entries (one uint64 per outer row and inner slice).  The tile
 * planner reserves 8 bytes per outer row of a tile; splitting the inner tile
 * may use up to SCRATCH_MIN_ENTRIES (8 MB) even for small tiles, never more
 * than SCRATCH_MAX_ENTRIES.
 */
#define SCRATCH_MIN_ENTRIES ((int64_t) 1 << 20)
#define SCRATCH_MAX_ENTRIES ((int64_t) 1 << 26)

/*
 * The match buffers grow on demand up to the match capacity: the default
 * budget (half the free memory of an H100) gives a capacity of over a
 * billion pairs, and allocating 10 GB of device memory, or pinning 8 GB of
 * host memory, for a join that returns a few rows would be a waste of
 * milliseconds and memory.  The device buffer starts at DEVICE_MATCH_MIN_PAIRS
 * (32 MB) or the inner tile, whichever is more; a step cut short by it
 * doubles it for the next step.
 */
#define HOST_MATCH_MIN_PAIRS	((int64_t) 1 << 16)
#define DEVICE_MATCH_MIN_PAIRS	((int64_t) 1 << 22)

/*
 * Sort-merge and hash steps.  SORTED_ROWS_PER_STEP outer rows at most (their
 * bounds, counts and offsets are the per-row scratch), as the cpu backend's
 * CPU_OUTER_ROWS_PER_STEP; a filtered step evaluates about
 * SORTED_PAIRS_PER_STEP candidate pairs through the interpreter (the same
 * bound as the nested loop's interpreter, well under a second).  The pair
 * kernels run SORTED_BLOCK threads a block; the count pass is a grid-stride
 * loop over SORTED_BLOCKS_PER_SM blocks per SM.
 */
#define SORTED_ROWS_PER_STEP	((int64_t) 1 << 20)
#define SORTED_PAIRS_PER_STEP	GEN_PAIRS_PER_STEP
/*
 * A filtered step that keeps its candidates' verdicts for the write pass
 * (cuda_sorted.cu, count_filtered) evaluates about SORTED_VERDICT_PAIRS
 * candidates: two bitmaps of 32 MB.
 */
#define SORTED_VERDICT_PAIRS	((int64_t) 1 << 28)
#define SORTED_BLOCK			256
#define SORTED_BLOCKS_PER_SM	8

/*
 * Aggregate steps (gj_cuda_agg_step): the host reduces the runs the device
 * found, and walks a run only for float sums and min/max of inner
 * arguments; a step stops after about this many positions walked, as the
 * cpu backend's CPU_PAIRS_PER_STEP, so cancel is honoured between steps.
 */
#define AGG_HOST_WORK_PER_STEP	((int64_t) 1 << 24)

/*
 * Aggregate steps that fold pairs (cuda_agg.cu): a warp per outer row, its
 * lanes over the row's candidates; the spec's arrays on the device take at
 * most AGG_MAX_ALLOCATIONS allocations (two per argument, two per pair
 * column of each side, the groups of each side and host_later of each).
 */
#define FOLD_BLOCK			256
#define FOLD_BLOCKS_PER_SM	16
#define AGG_MAX_ALLOCATIONS	(2 * GJ_AGG_MAX_ARGS + 4 * GJ_MAX_KEY_COLS + 4)

/* Entries of a sorted step's cut (see sorted_cut_kernel). */
#define CUT_ENTRIES			6

/* Sorted inner keys that tile pruning keeps (CudaJoinState.inner_key_pos). */
#define INNER_KEYS_KEPT		16

/* Events of one step, recorded in this order on the stream. */
enum
{
	EV_START,					/* before the uploads */
	EV_UPLOADED,				/* before the count pass */
	EV_COUNTED,					/* after the prefix is known */
	EV_WRITE,					/* before the write pass */
	EV_WRITTEN,					/* before the download */
	EV_DONE,					/* after the download */
	NUM_EVENTS
};

/* The key columns of one side's resident tile on the device. */
typedef struct DeviceSide
{
	int64_t		begin;			/* resident rows [begin, end); -1: none */
	int64_t		end;
	int64_t		capacity;		/* rows allocated per column */
	bool		used[GJ_MAX_KEY_COLS];	/* columns the program loads */
	int64_t    *values[GJ_MAX_KEY_COLS];
	uint8_t    *isnull[GJ_MAX_KEY_COLS];
} DeviceSide;

/*
 * A join's compiled kernels of one kind: kernel NULL, and why, where its
 * steps interpret the program.  known: the answer is final (not while the
 * kernel compiles in the background).
 */
typedef struct GjCompiledKernels
{
	bool		known;
	bool		waited;			/* a step ran interpreted while it compiled */
	const void *kernel;
	const void *second;			/* GJ_COMPILED_PAIRS: the write pass */
	int			rows;			/* outer rows a thread of kernel and second */
	bool		quick;			/* the quick kernel, while the full one compiles */
	int			why;
} GjCompiledKernels;

typedef struct CudaJoinState
{
	GjJoinInput input;			/* host key columns */
	int			device;			/* the CUDA device of the join: every entry
								 * point selects it (gj_cuda_use_device) */
	GjProgram	program;
	bool		simple;
	GjSimpleCompare compare;
	int64_t		capacity;		/* pairs a step may return (the contract) */
	int64_t		d_capacity;		/* pairs the device match buffer holds now */
	int			sm_count;
	int			arch;			/* compute capability, major * 10 + minor */
	double		density;		/* matches per pair last counted; 0: unknown */

	cudaStream_t stream;
	bool		have_stream;
	cudaEvent_t events[NUM_EVENTS];
	int			nevents;

	DeviceSide	outer;
	DeviceSide	inner;
	uint32_t   *d_out_outer;
	uint32_t   *d_out_inner;
	uint64_t   *d_scratch;		/* counts, then offsets */
	int64_t		scratch_entries;
	void	   *d_cub_temp;
	size_t		cub_temp_bytes;
	int64_t    *d_prefix;		/* find_prefix_kernel's answer */
	int64_t    *h_prefix;		/* pinned */
	uint32_t   *h_out_outer;	/* pinned */
	uint32_t   *h_out_inner;
	int64_t		h_capacity;

	/*
	 * Step overlap (cuda_double_buffer): the other pinned match buffer, which
	 * holds the previous step's matches while the executor emits them and
	 * this step's download fills the first; run_step swaps the two.
	 */
	bool		double_buffered;
	uint32_t   *h_spare_outer;
	uint32_t   *h_spare_inner;
	int64_t		h_spare_capacity;

	/* sort-merge and hash: both sides in key order, by position */
	int64_t    *d_inner_keys;	/* sorted; rows without a key at the end */
	uint32_t   *d_inner_perm;	/* position -> inner row */
	uint32_t   *d_outer_perm;	/* position -> outer row */
	int64_t    *d_outer_lo;
	int64_t    *d_outer_hi;
	uint8_t    *d_outer_status;
	int64_t		inner_valid;	/* positions [0, inner_valid) have keys */
	int64_t		outer_all;		/* positions [0, outer_all) are GJ_OUTER_ALL */
	int64_t		outer_bounded;	/* the next outer_bounded GJ_OUTER_BOUNDED, the
								 * rest GJ_OUTER_EMPTY (gj_cuda_outer_status) */
	/*
	 * Sorted inner keys that tile pruning read (copied from d_inner_keys
	 * one at a time: a tile reads the keys at its two ends), the last
	 * INNER_KEYS_KEPT of them: the tiles of one inner range come again for
	 * every outer range.
	 */
	int64_t		inner_key_pos[INNER_KEYS_KEPT];
	int64_t		inner_key_val[INNER_KEYS_KEPT];
	int			inner_keys_next;
	int64_t    *h_prune_lo;		/* host copy of d_outer_lo and d_outer_hi at */
	int64_t    *h_prune_hi;		/* positions [prune_begin, prune_end), the */
	int64_t		prune_begin;	/* block tile pruning read last */
	int64_t		prune_end;
	int64_t		prune_cap;		/* rows h_prune_lo and h_prune_hi hold */
	int64_t		step_cap;		/* rows of the per-row scratch */
	uint32_t   *d_first;		/* per step row: first candidate position */
	uint64_t   *d_cand;			/* per step row: candidates, then offsets */
	uint64_t   *d_count;		/* per step row: matches, then offsets */
	uint64_t   *d_cut;			/* sorted_cut_kernel's answer */
	uint64_t   *h_cut;			/* pinned */
	struct PairArgs *d_pair_args;	/* a filtered step's arguments, for CUB */
	uint32_t   *d_match_bits;	/* a filtered step's verdicts, a bit a candidate */
	uint32_t   *d_recheck_bits;
	int64_t		verdict_words;	/* words each of them holds */
	double		sorted_candidates;	/* candidates of the filtered steps so far */
	double		sorted_cross;	/* their step rows times their tiles' inner rows */
	GjAggRuns  *agg_runs;		/* aggregate fast path, at the first agg_step */
	uint32_t   *h_outer_perm;	/* its host copy of d_outer_perm */
	uint32_t   *h_run_first;	/* pinned, per step row: the run's first position */
	uint64_t   *h_run_width;	/* pinned, per step row: the run's width */
	int64_t		agg_rows_hint;	/* rows the last agg step reduced, when the
								 * host's work bound stopped it; else 0 */
	uint64_t   *d_packed;		/* a filtered step's matches, packed (d_capacity) */
	bool		packed_needed;	/* sorted join with filtered steps */

	/*
	 * Aggregate steps that fold pairs on the device (cuda_agg.cu): the spec
	 * with its arrays copied to device memory (agg_mem lists them, to free),
	 * the accumulators of every group, and a counter of the pairs a step
	 * must leave to the host.
	 */
	bool		agg_ready;
	GjAggSpec	agg_dspec;
	void	   *agg_mem[AGG_MAX_ALLOCATIONS];
	int			agg_nmem;
	unsigned long long *d_group_pairs;
	GjAggDeviceAcc *d_group_accs;
	unsigned long long *d_host_pairs;
	unsigned long long *h_host_pairs;	/* pinned */
	uint64_t   *h_row_counts;	/* pinned, per step row: matches (row counts) */
	int64_t		h_row_counts_cap;
	struct GjDominance *dominance;	/* the host's dominance index of an inner tile */
	int64_t		dominance_inner_begin;
	int64_t		dominance_inner_end;

	/*
	 * The inner side prepared once for several joins (CudaPreparedInner):
	 * inner_borrowed says that inner's device columns, d_inner_keys and
	 * d_inner_perm are the prepared side's, which this join reads and never
	 * frees.  plain_alloc: this state's device memory comes
	 * from cudaMalloc / cudaFree, not the pool (the state that prepares
	 * such a side, whose buffers joins on other streams read).
	 */
	bool		inner_borrowed;
	bool		plain_alloc;

	/*
	 * Times of begin_join's work (sorting, with the keys' upload), for the
	 * next step's stats (backend.h): gj_cuda_take_pending_times.
	 */
	GjTimes		pending_times;

	/*
	 * The program compiled to GPU code (cuda_compile.cu): the program count
	 * kernel, and the nested loop's pairs kernels, looked up at the first
	 * step that runs them (gj_cuda_program_kernels).
	 */
	GjCompiledKernels count_kernels;
	GjCompiledKernels pairs_kernels;
	GjCompiledKernels sorted_kernels;	/* a filtered sorted step's count pass */
	GjCompiledKernels bits_kernels;	/* a nested-loop aggregate step's verdicts */
} CudaJoinState;

/*
 * An outer position's kind in a sorted join: the sort puts the GJ_OUTER_ALL
 * rows first, then the bounded rows by lower bound, then the empty ones
 * (outer_finish_kernel), so the counts tell it without a host copy of
 * d_outer_status.
 */
static inline uint8_t
gj_cuda_outer_status(const CudaJoinState *state, int64_t p)
{
	if (p < state->outer_all)
		return GJ_OUTER_ALL;
	if (p < state->outer_all + state->outer_bounded)
		return GJ_OUTER_BOUNDED;
	return GJ_OUTER_EMPTY;
}

/* Add the times of the work done outside steps to a step's stats. */
static inline void
gj_cuda_take_pending_times(CudaJoinState *state, GjStats *stats)
{
	gj_times_add(&stats->times, &state->pending_times);
	memset(&state->pending_times, 0, sizeof(state->pending_times));
}

/*
 * The inner side of a sort-merge or hash join prepared once (prepare_inner,
 * backend.h) on one device: what gj_cuda_sort_inner leaves for the inner
 * side, in memory from cudaMalloc, so that every join on that device, on
 * whatever stream, can read it once prepare_inner has returned.  A join on
 * another device prepares its inner side itself (cuda_begin_join).
 */
typedef struct CudaPreparedInner
{
	GjJoinInput input;			/* the inner side and key spec it fits */
	int			device;			/* the CUDA device it is on */
	DeviceSide	inner;			/* the whole side's columns it uploaded */
	int64_t    *d_inner_keys;
	uint32_t   *d_inner_perm;
	int64_t		inner_valid;
} CudaPreparedInner;

/* ---------------------------------------------------------------------
 * Errors (cuda_device.cu)
 * ---------------------------------------------------------------------
 */

extern bool gj_cuda_fail(GjError *err, int code, const char *what, cudaError_t rc);

/* Return false with *err set (as gj_cuda_fail) when a CUDA call fails. */
#define CUDA_TRY(call, what) \
	do { \
		cudaError_t rc_ = (call); \
		if (rc_ != cudaSuccess) \
			return gj_cuda_fail(err, 0, (what), rc_); \
	} while (0)

#define CUDA_LAUNCHED(what) CUDA_TRY(cudaGetLastError(), "could not launch " what)

/*
 * Select the join's device in the calling thread: the first thing every
 * entry point of the backend does, since the GPU service's threads serve
 * the joins of every device and the current device is per thread.
 */
static inline bool
gj_cuda_use_device(const CudaJoinState *state, GjError *err)
{
	CUDA_TRY(cudaSetDevice(state->device), "could not select the join's CUDA device");
	return true;
}

/* ---------------------------------------------------------------------
 * Memory (cuda_memory.cu)
 * ---------------------------------------------------------------------
 */

/*
 * A join's device memory comes from the device's memory pool, in the order
 * of the join's stream (cudaMallocAsync / cudaFreeAsync), not from
 * cudaMalloc / cudaFree: cudaFree waits for the whole device, so in the GPU
 * service every join that freed a buffer stalled the joins of every other
 * session, and memory a join frees goes back to the pool for the next one
 * instead of to the driver.  Every kernel and copy of a join runs on its
 * stream, so a free ordered there comes after the last use.  An allocation
 * waits for its stream: the pool may hand over memory whose free is still
 * pending on another join's stream, and the memory may be used off the
 * stream (the host reading what a synchronous step left).  The one exception
 * is a state with plain_alloc (an inner side prepared for several joins):
 * cudaMalloc / cudaFree, since joins on other streams read what it leaves.
 */
static inline cudaError_t
gj_device_alloc(CudaJoinState *state, void **ptr, size_t bytes)
{
	cudaError_t rc = state->plain_alloc ? cudaMalloc(ptr, bytes) :
		cudaMallocAsync(ptr, bytes, state->stream);

	if (rc != cudaSuccess)
		*ptr = NULL;
	else
		rc = cudaStreamSynchronize(state->stream);
	return rc;
}

static inline void
gj_device_free(CudaJoinState *state, void *ptr)
{
	if (ptr != NULL && state->plain_alloc)
		(void) cudaFree(ptr);
	else if (ptr != NULL)
		(void) cudaFreeAsync(ptr, state->stream);
}

extern void gj_cuda_free_side(CudaJoinState *state, DeviceSide *side);
extern void gj_cuda_free_device_matches(CudaJoinState *state);
extern cudaError_t gj_pinned_alloc(void **ptr, size_t bytes);
extern void gj_pinned_free(void *ptr);
extern bool gj_cuda_ensure_host_matches(CudaJoinState *state, int64_t npairs, GjError *err);
extern void gj_cuda_swap_host_matches(CudaJoinState *state);
extern bool gj_cuda_ensure_device_matches(CudaJoinState *state, int64_t need, int64_t want,
										  GjError *err);
extern cudaError_t gj_cuda_exclusive_sum(void *temp, size_t &temp_bytes, uint64_t *data,
										 int64_t n, cudaStream_t stream);
extern bool gj_cuda_ensure_scratch(CudaJoinState *state, int64_t n, GjError *err);
extern bool gj_cuda_ensure_cub_temp(CudaJoinState *state, size_t bytes, GjError *err);
extern bool gj_cuda_upload_side(CudaJoinState *state, DeviceSide *side,
								const GjKeyColumns *host, int64_t begin, int64_t end,
								GjStats *stats, GjError *err);
extern double gj_cuda_event_ms(CudaJoinState *state, int from, int to);
extern bool gj_cuda_download_matches(CudaJoinState *state, int64_t total, GjStats *stats,
									 GjError *err);
extern void gj_cuda_device_columns(const DeviceSide *side, int ncols, GjKeyColumns *cols);

/*
 * Run a CUB device-wide algorithm: size its temporary storage, grow ours,
 * run it.  call(temp, bytes) is the CUB call; CCCL may throw, and nothing
 * may leave the backend as an exception, so that becomes an error too.
 */
template <typename Call>
static bool
gj_cuda_cub_run(CudaJoinState *state, Call call, const char *what, GjError *err)
{
	size_t		bytes = 0;
	cudaError_t rc;

	try
	{
		rc = call(NULL, bytes);
		if (rc == cudaSuccess)
		{
			if (!gj_cuda_ensure_cub_temp(state, bytes, err))
				return false;
			rc = call(state->d_cub_temp, bytes);
		}
	}
	catch (...)
	{
		rc = cudaErrorUnknown;
	}
	if (rc != cudaSuccess)
		return gj_cuda_fail(err, 0, what, rc);
	return true;
}

/* Blocks of a 1-D grid of n threads, at least one. */
static inline unsigned
gj_cuda_grid_for(int64_t n, int block)
{
	return (unsigned) gj_max64(gj_ceil_div(n, block), 1);
}

/* ---------------------------------------------------------------------
 * Steps (cuda_step.cu, cuda_nestloop.cu, cuda_sorted.cu, cuda_agg.cu)
 * ---------------------------------------------------------------------
 */

extern bool gj_cuda_run_step(void *arg, const GjTile *tile, int64_t *outer_next,
							 GjMatches *matches, GjStats *stats, GjError *err);
extern bool gj_cuda_nestloop_step(CudaJoinState *state, const GjTile *tile,
								  int64_t *outer_next, GjMatches *matches, GjStats *stats,
								  GjError *err);
extern bool gj_cuda_prepare_sorted(CudaJoinState *state, GjError *err);
extern bool gj_cuda_sort_inner(CudaJoinState *state, GjError *err);
extern bool gj_cuda_sorted_step(CudaJoinState *state, const GjTile *tile, int64_t *outer_next,
								GjMatches *matches, GjStats *stats, GjError *err);
extern bool gj_cuda_launch_bounds(CudaJoinState *state, const GjTile *tile, int64_t o_begin,
								  int64_t rows, GjError *err);
extern bool gj_cuda_sorted_candidates(CudaJoinState *state, const GjTile *tile, int64_t o_begin,
									  int64_t rows, int64_t limit, int64_t *k, int64_t *pairs,
									  GjError *err);
extern const void *gj_cuda_sorted_verdict_kernel(CudaJoinState *state, const GjTile *tile,
												 int64_t rows, GjStats *stats, int *why);
extern int64_t gj_cuda_verdict_pairs(void);
extern bool gj_cuda_ensure_verdict_words(CudaJoinState *state, int64_t words);
struct GjcArgs;
extern void gj_cuda_compiled_tile_args(const CudaJoinState *state, const GjTile *tile,
									   int64_t o_begin, int64_t nrows, struct GjcArgs *g);
extern bool gj_cuda_sorted_verdicts(CudaJoinState *state, const void *kernel, int64_t o_begin,
									int64_t rows, GjError *err);
extern bool gj_cuda_agg_step(void *arg, const GjTile *tile, int64_t *outer_next,
							 const GjAggSpec *spec, GjAggPartial *partial,
							 GjMatches *matches, GjStats *stats, GjError *err);
extern void gj_cuda_agg_free(CudaJoinState *state);
extern bool gj_cuda_agg_finish(void *arg, const GjAggSpec *spec, GjAggPartial *partial,
							   GjStats *stats, GjError *err);

/*
 * Row counts of a compare conjunction (cuda_rowcount.cu): per outer row,
 * rows outer rows from o_begin against the whole inner tile of a
 * nested-loop tile.  h_counts (host memory, rows entries) receives each
 * row's count, or is NULL; *total receives the sum.  Uploads the needed
 * columns as the nested-loop step does.
 */
extern bool gj_cuda_rowcount(CudaJoinState *state, const GjCompareConjunction *conj,
							 const GjTile *tile, int64_t o_begin, int64_t rows,
							 uint64_t *h_counts, uint64_t *total, GjStats *stats,
							 GjError *err);

/*
 * Device programs compiled to GPU code (cuda_compile.cu).  Kinds of
 * kernel (compiled_count.cuh's GJC_KIND): GJ_COMPILED_COUNT, the program
 * count path's gjc_count_kernel; GJ_COMPILED_PAIRS, the nested loop's
 * gjc_pairs_count_kernel and gjc_pairs_write_kernel; GJ_COMPILED_SORTED,
 * the count pass of a filtered sort-merge or hash step,
 * gjc_sorted_count_kernel; GJ_COMPILED_BITS, the verdicts of a nested-loop
 * aggregate step, gjc_bits_kernel.  gj_cuda_program_kernels decides on pairs, the
 * pairs the join evaluates (< 0: every pair of its two sides).
 */
#define GJ_COMPILED_COUNT	1
#define GJ_COMPILED_PAIRS	2
#define GJ_COMPILED_SORTED	3
#define GJ_COMPILED_BITS	4

extern const void *gj_cuda_compiled_kernel(int kind, int device, int arch,
										   const GjInstr *instrs, int ninstrs,
										   uint32_t outer_nullable, uint32_t inner_nullable,
										   bool may_compile, bool wait, const void **second,
										   int *rows, bool *final, bool *stored,
										   double *compile_ms, double *built_ms, int *why);
extern const GjCompiledKernels *gj_cuda_program_kernels(CudaJoinState *state, int kind,
														GjStats *stats, double pairs);
extern int	gj_compiled_rows_per_thread(const GjInstr *instrs, int ninstrs);
extern bool gj_cuda_compiled_source(int kind, const GjInstr *instrs, int ninstrs,
									uint32_t outer_nullable, uint32_t inner_nullable,
									bool quick, bool hoist, char *buf, size_t len);

/* cuda_program_count.cu */
extern int64_t gj_cuda_program_count_step_pairs(CudaJoinState *state, GjStats *stats);
extern bool gj_cuda_program_count(CudaJoinState *state, const GjTile *tile, int64_t o_begin,
								  int64_t rows, uint64_t *h_counts, uint64_t *total,
								  uint64_t *host_pairs, GjStats *stats, GjError *err);

/*
 * Heap pages decoded on the device (cuda_page_decode.cu, whose header
 * comment says how the heap reader is to use it): a decoder by one spec
 * (kernels/shared/gj_page_decode.h) on one device, whose columns grow
 * batch by batch of raw pages, two batches in flight.
 */
typedef struct CudaPageColumns CudaPageColumns;
struct GjPageSpec;
struct GjPageBatch;

extern CudaPageColumns *gj_cuda_page_columns_begin(int device, const struct GjPageSpec *spec,
												   int64_t rows_hint, GjError *err);
extern bool gj_cuda_page_columns_append(CudaPageColumns *pc, const uint8_t *pages,
										int64_t npages, int64_t rows_bound, GjError *err);
extern bool gj_cuda_page_columns_wait(CudaPageColumns *pc, struct GjPageBatch *batch,
									  GjStats *stats, GjError *err);
extern int64_t gj_cuda_page_columns_rows(const CudaPageColumns *pc);
extern void gj_cuda_page_columns_column(const CudaPageColumns *pc, int k, const int64_t **values,
										const uint8_t **isnull);
extern void gj_cuda_page_columns_end(CudaPageColumns *pc);

#endif							/* GPUJOIN_CUDA_INTERNAL_CUH */

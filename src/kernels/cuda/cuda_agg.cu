/*-------------------------------------------------------------------------
 *
 * cuda_agg.cu
 *	  The cuda backend's aggregate step (agg_step and agg_finish of
 *	  backend.h): every join and every device program reduced on the device.
 *
 * Three ways, as on the cpu backend (cpu_agg.c):
 *
 *	- range runs: a sort-merge join whose bounds are its whole condition
 *	  matches each outer row with one run of inner positions; the device
 *	  finds the runs with the sorted step's bounds kernel (cuda_sorted.cu)
 *	  and only the runs come back, 12 bytes an outer row, reduced on the
 *	  host with the prefix arrays of ../shared/agg_runs.h;
 *	- row counts: a nested loop with every argument on the outer side: the
 *	  count kernel of cuda_rowcount.cu (a conjunction of simple compares)
 *	  or of cuda_program_count.cu (any other program, unless a pair of the
 *	  step needs the host) gives each outer row's matches, folded on the
 *	  host with the row's values as weights;
 *	- folding: any other step (a nested loop, a sort-merge or hash join with
 *	  further quals, arguments over both sides) runs fold_kernel, a warp per
 *	  outer row whose lanes evaluate the row's candidates with the device
 *	  program and the argument programs and reduce the matches in registers;
 *	  lane 0 adds the warp's partials to the row's group in device memory
 *	  with atomics (128-bit integer sums as two halves with a carry); a
 *	  sorted step of few candidates a row (an equi-join) runs
 *	  fold_rows_kernel instead, a thread per row.  Where the program is
 *	  compiled to GPU code, the lanes read each candidate's verdict from
 *	  bitmaps that a compiled kernel filled first (a sorted step's count
 *	  pass, cuda_sorted.cu; a nested-loop step's verdict kernel,
 *	  nestloop_verdicts) instead of interpreting the program.  Only
 *	  those accumulators come back, once, at agg_finish.  Where a step has a
 *	  pair the host must see (a recheck, a deferred group, an argument the
 *	  device cannot compute exactly), a counting pass of the same kernel
 *	  finds it first, and the step runs as run_step instead, its pairs folded
 *	  on the host (../shared/agg_fold.c), so nothing is reduced twice.
 *	  A spec that needs a float argument's sum of squared deviations
 *	  (need_sxx: avg(float4/float8) as a partial aggregate) folds no step
 *	  on the device either: atomics cannot merge it.
 *
 * Float sums are added in whatever order the atomics land, so they may
 * differ from the cpu backend's (and PostgreSQL's) in their last bits, as
 * PostgreSQL's own parallel aggregates do.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "cuda_internal.cuh"
#include "kernels/cuda/compiled_count.cuh"

/*
 * The host side of the aggregate fast path: the sorted sides' row order and
 * the prefix arrays of the inner arguments (agg_runs.h), once per join.
 */
static bool
cuda_agg_prepare(CudaJoinState *state, const GjAggSpec *spec, GjError *err)
{
	int64_t		ni = state->input.inner_nrows;
	int64_t		no = state->input.outer_nrows;
	uint32_t   *inner_perm = NULL;
	bool		inner_args = false,
				outer_rows = spec->outer_group != NULL;
	cudaError_t rc = cudaSuccess;

	/*
	 * The row orders that gj_agg_runs_create and gj_agg_runs_reduce read:
	 * the inner side's for inner arguments' prefix arrays, the outer side's
	 * for outer groups and arguments.  count(*) alone reads neither.
	 */
	for (int a = 0; a < spec->nargs; a++)
	{
		inner_args |= spec->args[a].side == 1;
		outer_rows |= spec->args[a].side == 0;
	}

	if (state->h_run_first == NULL)
		CUDA_TRY(gj_pinned_alloc((void **) &state->h_run_first, sizeof(uint32_t) * state->step_cap),
				 "could not allocate pinned host memory");
	if (state->h_run_width == NULL)
		CUDA_TRY(gj_pinned_alloc((void **) &state->h_run_width, sizeof(uint64_t) * state->step_cap),
				 "could not allocate pinned host memory");
	if (state->h_outer_perm == NULL && outer_rows)
		state->h_outer_perm = (uint32_t *) malloc(sizeof(uint32_t) * gj_max64(no, 1));
	if (inner_args)
		inner_perm = (uint32_t *) malloc(sizeof(uint32_t) * gj_max64(ni, 1));
	if ((inner_args && inner_perm == NULL) || (outer_rows && state->h_outer_perm == NULL))
	{
		free(inner_perm);
		err->code = GJ_ERR_OUT_OF_MEMORY;
		snprintf(err->message, sizeof(err->message),
				 "could not allocate host memory for the row order of %lld x %lld rows",
				 (long long) no, (long long) ni);
		return false;
	}
	/* on the join's stream: the legacy one is every service thread's */
	if (inner_args)
		rc = cudaMemcpyAsync(inner_perm, state->d_inner_perm, sizeof(uint32_t) * ni,
							 cudaMemcpyDeviceToHost, state->stream);
	if (rc == cudaSuccess && outer_rows)
		rc = cudaMemcpyAsync(state->h_outer_perm, state->d_outer_perm, sizeof(uint32_t) * no,
							 cudaMemcpyDeviceToHost, state->stream);
	if (rc == cudaSuccess && (inner_args || outer_rows))
		rc = cudaStreamSynchronize(state->stream);
	if (rc != cudaSuccess)
	{
		free(inner_perm);
		return gj_cuda_fail(err, 0, "could not copy the sorted row order from the device", rc);
	}
	/* last: a join whose agg_runs exist is prepared */
	state->agg_runs = gj_agg_runs_create(spec, inner_perm, ni);
	free(inner_perm);
	if (state->agg_runs == NULL)
	{
		err->code = GJ_ERR_OUT_OF_MEMORY;
		snprintf(err->message, sizeof(err->message),
				 "could not allocate host memory for the prefix sums of %lld inner rows",
				 (long long) ni);
		return false;
	}
	return true;
}

/*
 * The sum of n run widths into *total, which the caller zeroed: a sum a
 * thread over a grid-stride loop, the warp's by shuffles, one atomic a
 * warp.
 */
__global__ void
sum_widths_kernel(const uint64_t *widths, int64_t n, unsigned long long *total)
{
	unsigned long long sum = 0;

	for (int64_t j = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; j < n;
		 j += (int64_t) gridDim.x * blockDim.x)
		sum += widths[j];
	for (int d = 16; d > 0; d /= 2)
		sum += __shfl_down_sync(0xffffffffu, sum, d);
	if ((threadIdx.x & 31) == 0 && sum != 0)
		atomicAdd(total, sum);
}

/*
 * The range-run path of a count(*) alone, without groups: the pairs are the
 * sum of the runs' widths, summed on the device, so that no run comes back
 * (the host loop below would only add the widths up).  A row whose run is
 * empty has width 0, the GJ_OUTER_EMPTY rows among them, so the sum over
 * the step's rows is the loop's; the step takes up to step_cap rows, the
 * rest of the tile once they reach its empty rows, as the loop does.
 */
static bool
cuda_agg_runs_count(CudaJoinState *state, const GjTile *tile, int64_t *outer_next,
					const GjAggSpec *spec, GjAggPartial *partial, GjStats *stats,
					GjError *err)
{
	int64_t		o_begin = *outer_next;
	int64_t		rows = gj_min64(state->step_cap, tile->outer_end - o_begin);
	int64_t		empty_from = state->outer_all + state->outer_bounded;
	unsigned long long *d_total = (unsigned long long *) state->d_cut;
	int64_t		total;

	CUDA_TRY(cudaEventRecord(state->events[EV_UPLOADED], state->stream),
			 "could not record a CUDA event");
	if (!gj_cuda_launch_bounds(state, tile, o_begin, rows, err))
		return false;
	CUDA_TRY(cudaMemsetAsync(d_total, 0, sizeof(*d_total), state->stream),
			 "could not clear the step's count");
	sum_widths_kernel<<<(unsigned) gj_min64(gj_cuda_grid_for(rows, 256), 4 * state->sm_count), 256, 0,
		state->stream>>>(state->d_cand, rows, d_total);
	CUDA_LAUNCHED("the width sum kernel");
	CUDA_TRY(cudaEventRecord(state->events[EV_COUNTED], state->stream),
			 "could not record a CUDA event");
	CUDA_TRY(cudaMemcpyAsync(state->h_cut, d_total, sizeof(*d_total), cudaMemcpyDeviceToHost,
							 state->stream),
			 "could not copy the step's count from the device");
	CUDA_TRY(cudaEventRecord(state->events[EV_DONE], state->stream),
			 "could not record a CUDA event");
	CUDA_TRY(cudaStreamSynchronize(state->stream), "the bounds kernel failed");
	stats->kernel_ms += gj_cuda_event_ms(state, EV_UPLOADED, EV_COUNTED);
	stats->transfer_ms += gj_cuda_event_ms(state, EV_COUNTED, EV_DONE);
	stats->bytes_from_device += sizeof(*d_total);
	total = (int64_t) state->h_cut[0];
	/* one run of all the pairs (no argument reads the runs or a row) */
	(void) gj_agg_runs_reduce(NULL, spec, partial, 0, 0, total);
	stats->pairs_evaluated += total;
	stats->device_matches += total;
	*outer_next = o_begin + rows > empty_from ? tile->outer_end : o_begin + rows;
	return true;
}

/*
 * The range-run path of a sort-merge join whose bounds are its whole
 * condition (agg_runs.h): the bounds kernel finds each outer row's run of
 * inner positions on the device, and only the runs come back, 12 bytes an
 * outer row and never a pair, to be reduced with the prefix arrays.  The
 * caller sends GJ_OUTER_ALL rows elsewhere.  Over the same tiles these are
 * the cpu backend's steps (2^20 rows, AGG_HOST_WORK_PER_STEP positions
 * walked), so both give the same partials, unless the work bound cuts steps
 * (then float sums may differ in their last bits: another summation order).
 */
static bool
cuda_agg_runs_step(CudaJoinState *state, const GjTile *tile, int64_t *outer_next,
				   const GjAggSpec *spec, GjAggPartial *partial, GjMatches *matches,
				   GjStats *stats, GjError *err)
{
	int64_t		o_begin = *outer_next;
	int64_t		rows,
				j,
				work = 0;
	double		reduce_start;

	matches->count = 0;
	if (gj_cuda_outer_status(state, o_begin) == GJ_OUTER_EMPTY)
	{
		/* empty rows are last: the rest of the tile has nothing */
		*outer_next = tile->outer_end;
		return true;
	}
	if (spec->nargs == 0 && spec->outer_group == NULL && spec->inner_group == NULL)
		return cuda_agg_runs_count(state, tile, outer_next, spec, partial, stats, err);
	if (state->agg_runs == NULL)
	{
		double		start = gj_clock_ms();

		if (!cuda_agg_prepare(state, spec, err))
			return false;
		stats->times.open_ms += gj_clock_ms() - start;
	}

	/*
	 * Wide runs that the host walks (float sums, min/max) stop a step after
	 * AGG_HOST_WORK_PER_STEP positions: then search only about as many rows
	 * as the last step reduced, not the step's whole 2^20 again.
	 */
	rows = gj_min64(state->step_cap, tile->outer_end - o_begin);
	if (state->agg_rows_hint > 0)
		rows = gj_min64(rows, gj_max64(2 * state->agg_rows_hint, 1024));
	CUDA_TRY(cudaEventRecord(state->events[EV_UPLOADED], state->stream),
			 "could not record a CUDA event");
	if (!gj_cuda_launch_bounds(state, tile, o_begin, rows, err))
		return false;
	CUDA_TRY(cudaEventRecord(state->events[EV_COUNTED], state->stream),
			 "could not record a CUDA event");
	CUDA_TRY(cudaMemcpyAsync(state->h_run_first, state->d_first, sizeof(uint32_t) * rows,
							 cudaMemcpyDeviceToHost, state->stream),
			 "could not copy the runs from the device");
	CUDA_TRY(cudaMemcpyAsync(state->h_run_width, state->d_cand, sizeof(uint64_t) * rows,
							 cudaMemcpyDeviceToHost, state->stream),
			 "could not copy the runs from the device");
	CUDA_TRY(cudaEventRecord(state->events[EV_DONE], state->stream),
			 "could not record a CUDA event");
	CUDA_TRY(cudaStreamSynchronize(state->stream), "the bounds kernel failed");
	stats->kernel_ms += gj_cuda_event_ms(state, EV_UPLOADED, EV_COUNTED);
	stats->transfer_ms += gj_cuda_event_ms(state, EV_COUNTED, EV_DONE);
	stats->bytes_from_device += (sizeof(uint32_t) + sizeof(uint64_t)) * rows;

	reduce_start = gj_clock_ms();
	for (j = 0; j < rows; j++)
	{
		int64_t		p = o_begin + j;
		int64_t		first = state->h_run_first[j];
		int64_t		width = (int64_t) state->h_run_width[j];

		if (gj_cuda_outer_status(state, p) == GJ_OUTER_EMPTY)
		{
			j = tile->outer_end - o_begin;
			break;
		}
		if (j > 0 && work >= AGG_HOST_WORK_PER_STEP)
		{
			state->agg_rows_hint = j;
			break;
		}
		/* no outer groups or arguments: the row is never read (and not copied) */
		work += gj_agg_runs_reduce(state->agg_runs, spec, partial,
								   state->h_outer_perm != NULL ? state->h_outer_perm[p] : 0,
								   first, first + width);
		stats->pairs_evaluated += width;
		stats->device_matches += width;
	}
	if (j >= rows)
		state->agg_rows_hint = 0;
	*outer_next = o_begin + j;
	stats->times.compute_ms += gj_clock_ms() - reduce_start;
	return true;
}

/* ---------------------------------------------------------------------
 * Folding pairs on the device
 * ---------------------------------------------------------------------
 */

/* Arguments of fold_kernel (well under the 4 KB parameter limit). */
typedef struct FoldArgs
{
	GjAggSpec	spec;			/* device pointers; arrays by input row */
	GjProgram	program;
	GjKeyColumns outer;			/* join columns; row r at [r - outer_base] */
	GjKeyColumns inner;
	int64_t		outer_base;
	int64_t		inner_base;
	int32_t		filter;			/* evaluate the program (else every candidate matches) */
	int64_t		nrows;			/* step rows */
	int64_t		o_begin;		/* nested loop: first outer row; sorted: first position */
	int64_t		i_begin;		/* nested loop: the tile's inner rows */
	int64_t		i_end;
	const uint32_t *outer_perm; /* sorted: position -> row */
	const uint32_t *inner_perm;
	const uint32_t *first;		/* sorted, per step row: first candidate position */
	const uint64_t *cand_off;	/* sorted, per step row: scanned candidates */
	const uint32_t *match_bits; /* the compiled program's verdicts, or NULL */
	const uint32_t *recheck_bits;	/* nested loop: candidate c of row j in word
									 * (c / 32) * nrows + j (GjcArgs) */
	unsigned long long *group_pairs;
	GjAggDeviceAcc *accs;
	unsigned long long *host_pairs; /* pairs the host must see */
	int64_t		block_groups;	/* > 0: groups of pairs gathered in shared memory */
} FoldArgs;

/* A lane's partial aggregate of one argument. */
typedef struct LaneAcc
{
	unsigned long long count;
	unsigned long long lo;
	unsigned long long hi;
	double		fsum;
	long long	min_key;
	long long	max_key;
	unsigned int nonfinite;
} LaneAcc;

__device__ __forceinline__ void
lane_acc_init(LaneAcc *acc)
{
	acc->count = 0;
	acc->lo = 0;
	acc->hi = 0;
	acc->fsum = -0.0;			/* the identity of IEEE addition */
	acc->min_key = INT64_MAX;
	acc->max_key = INT64_MIN;
	acc->nonfinite = 0;
}

/* 128-bit two's complement addition of (lo, hi) into acc. */
__device__ __forceinline__ void
add128(unsigned long long *lo, unsigned long long *hi, unsigned long long vlo,
	   unsigned long long vhi)
{
	unsigned long long sum = *lo + vlo;

	*hi += vhi + (sum < *lo ? 1 : 0);
	*lo = sum;
}

__device__ __forceinline__ void
lane_acc_add(LaneAcc *acc, const GjAggArg *arg, int64_t v)
{
	long long	key;

	acc->count++;
	if (arg->cls == GJ_CLASS_FLOAT)
	{
		double		d = gj_bits_to_double(v);

		if (arg->need_sum)
		{
			acc->fsum += d;
			if (!isfinite(d))
				acc->nonfinite = 1;
		}
		key = gj_float_total_key(d);
	}
	else
	{
		if (arg->need_sum)
			add128(&acc->lo, &acc->hi, (unsigned long long) v,
				   v < 0 ? ~0ULL : 0ULL);
		key = v;
	}
	if (arg->need_minmax)
	{
		acc->min_key = key < acc->min_key ? key : acc->min_key;
		acc->max_key = key > acc->max_key ? key : acc->max_key;
	}
}

/* Sum a lane partial over the warp into lane 0. */
__device__ __forceinline__ void
lane_acc_reduce(LaneAcc *acc)
{
	for (int off = 16; off > 0; off /= 2)
	{
		unsigned long long lo = __shfl_down_sync(0xffffffffu, acc->lo, off);
		unsigned long long hi = __shfl_down_sync(0xffffffffu, acc->hi, off);
		long long	mn = __shfl_down_sync(0xffffffffu, acc->min_key, off);
		long long	mx = __shfl_down_sync(0xffffffffu, acc->max_key, off);

		acc->count += __shfl_down_sync(0xffffffffu, acc->count, off);
		add128(&acc->lo, &acc->hi, lo, hi);
		acc->fsum += __shfl_down_sync(0xffffffffu, acc->fsum, off);
		acc->min_key = mn < acc->min_key ? mn : acc->min_key;
		acc->max_key = mx > acc->max_key ? mx : acc->max_key;
		acc->nonfinite |= __shfl_down_sync(0xffffffffu, acc->nonfinite, off);
	}
}

/* An empty accumulator: counts 0, float sums -0.0, min/max keys open. */
__device__ __forceinline__ void
acc_init(GjAggDeviceAcc *acc)
{
	acc->count = 0;
	acc->isum_lo = 0;
	acc->isum_hi = 0;
	acc->fsum = -0.0;
	acc->min_key = INT64_MAX;
	acc->max_key = INT64_MIN;
	acc->saw_nonfinite = 0;
	acc->pad = 0;
}

/* An accumulator added into another in device or shared memory. */
__device__ __forceinline__ void
acc_merge(const GjAggDeviceAcc *from, const GjAggArg *arg, GjAggDeviceAcc *into)
{
	if (from->count == 0)
		return;
	atomicAdd(&into->count, from->count);
	if (arg->need_sum)
	{
		if (arg->cls == GJ_CLASS_FLOAT)
		{
			atomicAdd(&into->fsum, from->fsum);
			if (from->saw_nonfinite)
				atomicOr(&into->saw_nonfinite, 1u);
		}
		else
		{
			unsigned long long old = atomicAdd(&into->isum_lo, from->isum_lo);

			atomicAdd(&into->isum_hi,
					  from->isum_hi + (old + from->isum_lo < old ? 1 : 0));
		}
	}
	if (arg->need_minmax)
	{
		atomicMin(&into->min_key, from->min_key);
		atomicMax(&into->max_key, from->max_key);
	}
}

/* Add lane 0's partial of one argument into its group's accumulator. */
__device__ __forceinline__ void
lane_acc_flush(const LaneAcc *acc, const GjAggArg *arg, GjAggDeviceAcc *into)
{
	GjAggDeviceAcc from;

	from.count = acc->count;
	from.isum_lo = acc->lo;
	from.isum_hi = acc->hi;
	from.fsum = acc->fsum;
	from.min_key = acc->min_key;
	from.max_key = acc->max_key;
	from.saw_nonfinite = acc->nonfinite;
	from.pad = 0;
	acc_merge(&from, arg, into);
}

/* The warp's partials of one row into its group: lane 0 adds them. */
__device__ __forceinline__ void
fold_row_flush(const FoldArgs *a, unsigned long long *group_pairs, GjAggDeviceAcc *accs,
			   LaneAcc *acc, uint32_t g, unsigned long long pairs, int lane)
{
	const GjAggSpec *spec = &a->spec;

	for (int off = 16; off > 0; off /= 2)
		pairs += __shfl_down_sync(0xffffffffu, pairs, off);
	/* every lane knows whether the row matched anything */
	pairs = __shfl_sync(0xffffffffu, pairs, 0);
	if (pairs == 0)
		return;
	for (int k = 0; k < spec->nargs; k++)
		lane_acc_reduce(&acc[k]);
	if (lane == 0)
	{
		atomicAdd(&group_pairs[g], pairs);
		for (int k = 0; k < spec->nargs; k++)
			lane_acc_flush(&acc[k], &spec->args[k], &accs[(int64_t) g * spec->nargs + k]);
	}
}

/*
 * Grouping by keys of both sides: the pairs of one outer row fall into as
 * many groups as its matches' inner rows have, so a lane adds each pair
 * straight into its group's accumulators (slower than the warp's register
 * reduction, which needs one group per outer row).
 */
__device__ __forceinline__ void
fold_pair_flush(const FoldArgs *a, unsigned long long *group_pairs, GjAggDeviceAcc *accs,
				int64_t g, const int64_t *values, const int *status)
{
	const GjAggSpec *spec = &a->spec;

	atomicAdd(&group_pairs[g], 1ULL);
	for (int k = 0; k < spec->nargs; k++)
	{
		LaneAcc		one;

		if (status[k] != GJ_AGG_ROW_VALUE)
			continue;
		lane_acc_init(&one);
		lane_acc_add(&one, &spec->args[k], values[k]);
		lane_acc_flush(&one, &spec->args[k], &accs[g * spec->nargs + k]);
	}
}

/*
 * Shared-memory accumulators of a block (FoldArgs.block_groups): where each
 * pair goes to its own group (groups of both sides, or of the inner side
 * only) and the groups are few, a global atomic per pair lands on a handful
 * of addresses from every SM, and those serialize in L2 (three_qual_group
 * of bench_plan_quality.sh, 10 inner groups, ran out of its 5 s where the
 * same count grouped by outer rows took 3 s).  The block adds its pairs into
 * its own copy of the groups in shared memory instead, and merges that into
 * the device's accumulators once, at its end: one global atomic per group
 * and block.  fold_block_bytes says how much shared memory that takes.
 */
#define FOLD_BLOCK_SMEM_MAX		(16 * 1024)

static int64_t
fold_block_bytes(int64_t ngroups, int nargs)
{
	return ngroups * (int64_t) (sizeof(unsigned long long) + sizeof(GjAggDeviceAcc) * nargs);
}

/*
 * One candidate pair of a fold: the device program (where the step filters)
 * and the argument values; a match whose values the spec gives exactly is
 * added into the lane's partials acc and *pairs (one group per outer row),
 * or straight into its group (groups of the inner side: fold_pair_flush);
 * one the host must see is only counted in *host.  COUNT_HOST: only that
 * count.
 */
template <bool COUNT_HOST>
__device__ __forceinline__ void
fold_candidate(const FoldArgs *a, uint64_t t, uint32_t orow, uint32_t irow, uint32_t g,
			   unsigned long long *group_pairs, GjAggDeviceAcc *accs, LaneAcc *acc,
			   unsigned long long *pairs, unsigned long long *host)
{
	const GjAggSpec *spec = &a->spec;
	bool		pair_groups = spec->inner_group != NULL;
	int			r = GJ_RESULT_TRUE;
	int64_t		values[GJ_AGG_MAX_ARGS];
	int			status[GJ_AGG_MAX_ARGS];
	bool		exact = true;
	int64_t		pg = g;

	if (a->filter && a->match_bits != NULL)
	{
		/* candidate t's verdict, from the compiled count pass */
		uint32_t	bit = 1u << (t % 32);

		r = (a->match_bits[t / 32] & bit) == 0 ? GJ_RESULT_FALSE :
			(a->recheck_bits[t / 32] & bit) != 0 ? GJ_RESULT_RECHECK : GJ_RESULT_TRUE;
	}
	else if (a->filter)
		r = gj_program_eval(a->program.instrs, a->program.ninstrs,
							&a->outer, orow - a->outer_base,
							&a->inner, irow - a->inner_base);
	if (r == GJ_RESULT_FALSE || gj_agg_pair_later(spec, orow, irow))
		return;
	if (pair_groups)
		pg = gj_agg_pair_group(spec, orow, irow);
	if (r == GJ_RESULT_RECHECK || g == GJ_AGG_GROUP_DEFERRED ||
		pg == GJ_AGG_PAIR_DEFERRED)
		exact = false;
	for (int k = 0; exact && k < spec->nargs; k++)
	{
		status[k] = gj_agg_arg_value(spec, &spec->args[k], orow, irow, &values[k]);
		exact = status[k] != GJ_AGG_ROW_ERROR;
	}
	if (!exact)
	{
		(*host)++;
		return;
	}
	if (!COUNT_HOST && pair_groups)
		fold_pair_flush(a, group_pairs, accs, pg, values, status);
	else if (!COUNT_HOST)
	{
		(*pairs)++;
		for (int k = 0; k < spec->nargs; k++)
		{
			if (status[k] == GJ_AGG_ROW_VALUE)
				lane_acc_add(&acc[k], &spec->args[k], values[k]);
		}
	}
}

/*
 * The block's accumulators in shared memory, emptied (FoldArgs.block_groups
 * > 0 and not COUNT_HOST), or the device's; fold_block_end merges them.
 */
__device__ __forceinline__ bool
fold_block_begin(const FoldArgs *a, bool count_host, unsigned long long **group_pairs,
				 GjAggDeviceAcc **accs)
{
	extern __shared__ unsigned long long fold_block_smem[];
	bool		block_accs = !count_host && a->block_groups > 0;

	*group_pairs = a->group_pairs;
	*accs = a->accs;
	if (block_accs)
	{
		*group_pairs = fold_block_smem;
		*accs = (GjAggDeviceAcc *) (fold_block_smem + a->block_groups);
		for (int64_t i = threadIdx.x; i < a->block_groups; i += blockDim.x)
			(*group_pairs)[i] = 0;
		for (int64_t i = threadIdx.x; i < a->block_groups * a->spec.nargs; i += blockDim.x)
			acc_init(&(*accs)[i]);
		__syncthreads();
	}
	return block_accs;
}

__device__ __forceinline__ void
fold_block_end(const FoldArgs *a, const unsigned long long *group_pairs,
			   const GjAggDeviceAcc *accs)
{
	const GjAggSpec *spec = &a->spec;

	__syncthreads();
	for (int64_t i = threadIdx.x; i < a->block_groups; i += blockDim.x)
	{
		if (group_pairs[i] > 0)
			atomicAdd(&a->group_pairs[i], group_pairs[i]);
	}
	for (int64_t i = threadIdx.x; i < a->block_groups * spec->nargs; i += blockDim.x)
		acc_merge(&accs[i], &spec->args[i % spec->nargs], &a->accs[i]);
}

/*
 * A warp per step row (grid-stride), its lanes over the row's candidates:
 * each match whose values the spec gives exactly is reduced in the lane's
 * registers (COUNT_HOST: only counted when it needs the host), then the warp
 * reduces and lane 0 adds into the row's group (with inner groups, each
 * pair into its own: fold_pair_flush).  The caller guarantees that a
 * folding pass meets no pair that needs the host (its counting pass found
 * none); such a pair would be skipped, never folded.
 */
template <bool SORTED, bool COUNT_HOST>
__global__ void __launch_bounds__(FOLD_BLOCK)
fold_kernel(const __grid_constant__ FoldArgs a)
{
	int			lane = threadIdx.x & 31;
	int64_t		warp = ((int64_t) blockIdx.x * blockDim.x + threadIdx.x) >> 5;
	int64_t		nwarps = ((int64_t) gridDim.x * blockDim.x) >> 5;
	const GjAggSpec *spec = &a.spec;
	unsigned long long *group_pairs;
	GjAggDeviceAcc *accs;
	bool		block_accs = fold_block_begin(&a, COUNT_HOST, &group_pairs, &accs);

	for (int64_t j = warp; j < a.nrows; j += nwarps)
	{
		uint32_t	orow;
		int64_t		first,
					ncand;
		uint32_t	g = 0;
		unsigned long long pairs = 0,
					host = 0;
		LaneAcc		acc[GJ_AGG_MAX_ARGS];

		if (SORTED)
		{
			orow = a.outer_perm[a.o_begin + j];
			first = a.first[j];
			ncand = (int64_t) (a.cand_off[j + 1] - a.cand_off[j]);
		}
		else
		{
			orow = (uint32_t) (a.o_begin + j);
			first = a.i_begin;
			ncand = a.i_end - a.i_begin;
		}
		if (spec->outer_group != NULL)
			g = spec->outer_group[orow];
		for (int k = 0; k < spec->nargs; k++)
			lane_acc_init(&acc[k]);

		for (int64_t c = lane; c < ncand; c += 32)
			fold_candidate<COUNT_HOST>(&a, SORTED ? a.cand_off[j] + (uint64_t) c :
									   ((uint64_t) (c / 32) * a.nrows + j) * 32 + c % 32, orow,
									   SORTED ? a.inner_perm[first + c] : (uint32_t) (first + c),
									   g, group_pairs, accs, acc, &pairs, &host);

		if (COUNT_HOST)
		{
			for (int off = 16; off > 0; off /= 2)
				host += __shfl_down_sync(0xffffffffu, host, off);
			if (lane == 0 && host > 0)
				atomicAdd(a.host_pairs, host);
		}
		else
			fold_row_flush(&a, group_pairs, accs, acc, g, pairs, lane);
	}

	if (block_accs)
		fold_block_end(&a, group_pairs, accs);
}

/*
 * A thread per step row of a sorted step whose rows have few candidates
 * each (an equi-join or a narrow band: FOLD_ROWS_MAX_CANDIDATES on
 * average), the thread over the row's candidates.  fold_kernel's warp per
 * row left 31 of 32 lanes idle on such steps and reduced and flushed every
 * row with shuffles and atomics.  Here a thread keeps its partials in
 * registers: over all its rows where there are no groups (the warp reduces
 * them once, at the end), over one row where its group is the outer row's
 * (the thread adds them into the group itself), and inner groups take each
 * pair as before.  On the H200, 10M x 1M rows, `sum(f.v * d.w)`: see
 * docs/results/2026-11-28-h200-d496e4b-drain-parts.md.
 */
template <bool COUNT_HOST>
__global__ void __launch_bounds__(FOLD_BLOCK)
fold_rows_kernel(const __grid_constant__ FoldArgs a)
{
	int			lane = threadIdx.x & 31;
	const GjAggSpec *spec = &a.spec;
	bool		outer_groups = spec->outer_group != NULL && spec->inner_group == NULL;
	unsigned long long *group_pairs;
	GjAggDeviceAcc *accs;
	bool		block_accs = fold_block_begin(&a, COUNT_HOST, &group_pairs, &accs);
	unsigned long long pairs = 0,
				host = 0;
	LaneAcc		acc[GJ_AGG_MAX_ARGS];

	for (int k = 0; k < spec->nargs; k++)
		lane_acc_init(&acc[k]);
	for (int64_t j = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; j < a.nrows;
		 j += (int64_t) gridDim.x * blockDim.x)
	{
		uint32_t	orow = a.outer_perm[a.o_begin + j];
		int64_t		first = a.first[j];
		int64_t		ncand = (int64_t) (a.cand_off[j + 1] - a.cand_off[j]);
		uint32_t	g = spec->outer_group != NULL ? spec->outer_group[orow] : 0;

		for (int64_t c = 0; c < ncand; c++)
			fold_candidate<COUNT_HOST>(&a, a.cand_off[j] + (uint64_t) c, orow,
									   a.inner_perm[first + c], g, group_pairs, accs, acc,
									   &pairs, &host);
		if (!COUNT_HOST && outer_groups && pairs > 0)
		{
			atomicAdd(&group_pairs[g], pairs);
			for (int k = 0; k < spec->nargs; k++)
			{
				lane_acc_flush(&acc[k], &spec->args[k], &accs[(int64_t) g * spec->nargs + k]);
				lane_acc_init(&acc[k]);
			}
			pairs = 0;
		}
	}

	if (COUNT_HOST)
	{
		for (int off = 16; off > 0; off /= 2)
			host += __shfl_down_sync(0xffffffffu, host, off);
		if (lane == 0 && host > 0)
			atomicAdd(a.host_pairs, host);
	}
	else if (spec->outer_group == NULL && spec->inner_group == NULL)
		fold_row_flush(&a, group_pairs, accs, acc, 0, pairs, lane);

	if (block_accs)
		fold_block_end(&a, group_pairs, accs);
}

/* Accumulators start empty: counts 0, float sums -0.0, min/max keys open. */
__global__ void
acc_init_kernel(GjAggDeviceAcc *accs, int64_t n)
{
	int64_t		i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		acc_init(&accs[i]);
}

/*
 * A device copy of n bytes of host memory, listed in agg_mem; NULL for none.
 * The copy is queued on the join's stream, before the kernels that read it;
 * host stays valid until the join ends (the spec's arrays in the staging
 * area, or the service's copies of them).  Synchronous copies ran on the
 * legacy default stream, which the GPU service's threads share: one join's
 * megabytes of group numbers held up every other join's copies.
 */
static bool
agg_upload(CudaJoinState *state, const void *host, size_t n, void **dev, GjError *err)
{
	*dev = NULL;
	if (host == NULL)
		return true;
	if (state->agg_nmem >= AGG_MAX_ALLOCATIONS)
	{
		err->code = GJ_ERR_DEVICE;
		snprintf(err->message, sizeof(err->message), "too many aggregate arrays");
		return false;
	}
	CUDA_TRY(gj_device_alloc(state, dev, n > 0 ? n : 1), "could not allocate device memory for aggregates");
	state->agg_mem[state->agg_nmem++] = *dev;
	if (n > 0)
		CUDA_TRY(cudaMemcpyAsync(*dev, host, n, cudaMemcpyHostToDevice, state->stream),
				 "could not copy aggregate arrays to the device");
	return true;
}

/*
 * Once per join: the spec's arrays (argument values and flags, the pair
 * programs and their columns, the rows' groups) in device memory, and the
 * accumulators of every group (ngroups x ninner_groups of them with
 * groups of both sides).
 */
static bool
cuda_agg_fold_prepare(CudaJoinState *state, const GjAggSpec *spec, GjError *err)
{
	GjAggSpec  *d = &state->agg_dspec;
	int64_t		nrows[2] = {state->input.outer_nrows, state->input.inner_nrows};
	int64_t		ngroups = gj_agg_spec_groups(spec);
	int64_t		naccs = ngroups * gj_max64(spec->nargs, 1);
	void	   *p;

	*d = *spec;
	for (int a = 0; a < spec->nargs; a++)
	{
		const GjAggArg *arg = &spec->args[a];

		if (arg->side == GJ_AGG_SIDE_PAIR)
		{
			if (!agg_upload(state, arg->instrs, sizeof(GjInstr) * arg->ninstrs, &p, err))
				return false;
			d->args[a].instrs = (const GjInstr *) p;
			continue;
		}
		if (!agg_upload(state, arg->values, sizeof(int64_t) * nrows[arg->side], &p, err))
			return false;
		d->args[a].values = (const int64_t *) p;
		if (!agg_upload(state, arg->flags, nrows[arg->side], &p, err))
			return false;
		d->args[a].flags = (const uint8_t *) p;
	}
	for (int side = 0; side < 2; side++)
	{
		for (int c = 0; c < spec->pair_cols[side].ncols; c++)
		{
			if (!agg_upload(state, spec->pair_cols[side].values[c],
							sizeof(int64_t) * nrows[side], &p, err))
				return false;
			d->pair_cols[side].values[c] = (const int64_t *) p;
			if (!agg_upload(state, spec->pair_cols[side].isnull[c], nrows[side], &p, err))
				return false;
			d->pair_cols[side].isnull[c] = (const uint8_t *) p;
		}
	}
	if (!agg_upload(state, spec->outer_group, sizeof(uint32_t) * nrows[0], &p, err))
		return false;
	d->outer_group = (const uint32_t *) p;
	if (!agg_upload(state, spec->inner_group, sizeof(uint32_t) * nrows[1], &p, err))
		return false;
	d->inner_group = (const uint32_t *) p;
	for (int side = 0; side < 2; side++)
	{
		if (!agg_upload(state, spec->host_later[side], nrows[side], &p, err))
			return false;
		d->host_later[side] = (const uint8_t *) p;
	}

	CUDA_TRY(gj_device_alloc(state, (void **) &state->d_group_pairs, sizeof(unsigned long long) * ngroups),
			 "could not allocate device memory for aggregates");
	CUDA_TRY(gj_device_alloc(state, (void **) &state->d_group_accs, sizeof(GjAggDeviceAcc) * naccs),
			 "could not allocate device memory for aggregates");
	CUDA_TRY(gj_device_alloc(state, (void **) &state->d_host_pairs, sizeof(unsigned long long)),
			 "could not allocate device memory for aggregates");
	CUDA_TRY(gj_pinned_alloc((void **) &state->h_host_pairs, sizeof(unsigned long long)),
			 "could not allocate pinned host memory");
	CUDA_TRY(cudaMemsetAsync(state->d_group_pairs, 0, sizeof(unsigned long long) * ngroups,
							 state->stream),
			 "could not clear device memory");
	acc_init_kernel<<<gj_cuda_grid_for(naccs, 256), 256, 0, state->stream>>>(state->d_group_accs,
																			   naccs);
	CUDA_LAUNCHED("the accumulator init kernel");
	state->agg_ready = true;
	return true;
}

/* Is a counting pass needed: may a pair of the step need the host? */
static bool
fold_may_need_host(const CudaJoinState *state, const GjAggSpec *spec, bool filter)
{
	if (spec->rows_need_host)
		return true;
	if (filter && gj_program_may_recheck(state->program.instrs, state->program.ninstrs))
		return true;
	for (int a = 0; a < spec->nargs; a++)
	{
		if (spec->args[a].side == GJ_AGG_SIDE_PAIR &&
			gj_program_may_recheck(spec->args[a].instrs, spec->args[a].ninstrs))
			return true;
	}
	return false;
}

/*
 * A sorted step whose rows have at most this many candidates on average
 * folds with a thread per row (fold_rows_kernel), else with a warp per row.
 */
#define FOLD_ROWS_MAX_CANDIDATES	4

/* kernel_test's choice of the fold kernel: 0 as above, 1 a warp, 2 a thread per row. */
static int	fold_by_row_mode = 0;

extern "C" void
gj_cuda_test_fold_by_row(int mode)
{
	fold_by_row_mode = mode;
}

/* Whether a sorted step of rows rows and pairs candidates folds a thread per row. */
static bool
fold_by_row(int64_t rows, int64_t pairs)
{
	if (fold_by_row_mode != 0)
		return fold_by_row_mode == 2;
	return pairs <= FOLD_ROWS_MAX_CANDIDATES * rows;
}

/* Launch fold_kernel (or, by_row, fold_rows_kernel) over the step described by a. */
static bool
launch_fold(CudaJoinState *state, const FoldArgs *a, bool sorted, bool by_row, bool count_host,
			GjError *err)
{
	unsigned	blocks = (unsigned) gj_min64(gj_ceil_div(a->nrows * (by_row ? 1 : 32), FOLD_BLOCK),
											 (int64_t) state->sm_count * FOLD_BLOCKS_PER_SM);
	size_t		smem = count_host ? 0 :
		(size_t) fold_block_bytes(a->block_groups, a->spec.nargs);

	blocks = blocks > 0 ? blocks : 1;
	if (by_row)
	{
		if (count_host)
			fold_rows_kernel<true><<<blocks, FOLD_BLOCK, 0, state->stream>>>(*a);
		else
			fold_rows_kernel<false><<<blocks, FOLD_BLOCK, smem, state->stream>>>(*a);
	}
	else if (sorted)
	{
		if (count_host)
			fold_kernel<true, true><<<blocks, FOLD_BLOCK, 0, state->stream>>>(*a);
		else
			fold_kernel<true, false><<<blocks, FOLD_BLOCK, smem, state->stream>>>(*a);
	}
	else
	{
		if (count_host)
			fold_kernel<false, true><<<blocks, FOLD_BLOCK, 0, state->stream>>>(*a);
		else
			fold_kernel<false, false><<<blocks, FOLD_BLOCK, smem, state->stream>>>(*a);
	}
	CUDA_LAUNCHED("the aggregate fold kernel");
	return true;
}

/* Pinned host memory for the match counts of rows outer rows. */
static bool
cuda_agg_host_counts(CudaJoinState *state, int64_t rows, GjError *err)
{
	if (rows <= state->h_row_counts_cap)
		return true;
	gj_pinned_free(state->h_row_counts);
	state->h_row_counts = NULL;
	state->h_row_counts_cap = 0;
	CUDA_TRY(gj_pinned_alloc((void **) &state->h_row_counts, sizeof(uint64_t) * rows),
			 "could not allocate pinned host memory for match counts");
	state->h_row_counts_cap = rows;
	return true;
}

/* A step as run_step runs it, its pairs folded on the host. */
static bool
cuda_agg_pairs_step(CudaJoinState *state, const GjTile *tile, int64_t *outer_next,
					const GjAggSpec *spec, GjAggPartial *partial, GjMatches *matches,
					GjStats *stats, GjError *err)
{
	if (!gj_cuda_run_step(state, tile, outer_next, matches, stats, err))
		return false;
	/* the agg node never double-buffers: the matches are in our buffer */
	matches->count = gj_agg_fold_pairs(spec, partial, (uint32_t *) matches->outer_rows,
									   (uint32_t *) matches->inner_rows, matches->count);
	return true;
}

/*
 * The verdicts of a nested-loop fold step from the program compiled (k, the
 * join's GJ_COMPILED_BITS kernels), where there is one and the device has
 * room for the bits of a step cut at gj_cuda_verdict_pairs() pairs: *rows
 * is cut to that, the verdict kernel queued, and a's bits set; the fold
 * then reads a pair's verdict where it would evaluate the program.
 * Otherwise the fold interprets.  Counts the step compiled or interpreted.
 */
static bool
nestloop_verdicts(CudaJoinState *state, const GjCompiledKernels *k, const GjTile *tile,
				  int64_t o_begin, int64_t *rows, FoldArgs *a, GjStats *stats, GjError *err)
{
	int64_t		ninner = tile->inner_end - tile->inner_begin;
	int64_t		wpr = gj_ceil_div(gj_max64(ninner, 1), 32);
	int64_t		step_rows = gj_min64(*rows, gj_max64(gj_cuda_verdict_pairs() / (wpr * 32), 1));
	int64_t		row_blocks,
				slices;
	GjcArgs		g;
	void	   *params[1] = {&g};

	if (k->kernel == NULL || ninner == 0 ||
		!gj_cuda_ensure_verdict_words(state, step_rows * wpr))
	{
		stats->program_steps_interpreted++;
		stats->interpreted_why = k->kernel != NULL && ninner > 0 ?
			GJ_INTERPRETED_NO_MEMORY : k->why;
		return true;
	}
	gj_cuda_compiled_tile_args(state, tile, o_begin, step_rows, &g);
	/* slices of the inner tile (whole chunks) until the grid has enough blocks */
	row_blocks = gj_ceil_div(step_rows, (int64_t) GJC_BLOCK * k->rows);
	slices = gj_ceil_div((int64_t) state->sm_count * TARGET_BLOCKS_PER_SM, row_blocks);
	slices = gj_max64(gj_min64(gj_min64(slices, gj_ceil_div(ninner, GJC_CHUNK)), 65535), 1);
	g.slice_len = gj_ceil_div(gj_ceil_div(ninner, slices), GJC_CHUNK) * GJC_CHUNK;
	slices = gj_ceil_div(ninner, g.slice_len);
	g.match_bits = state->d_match_bits;
	g.recheck_bits = state->d_recheck_bits;
	CUDA_TRY(cudaLaunchKernel(k->kernel, dim3((unsigned) row_blocks, (unsigned) slices),
							  dim3(GJC_BLOCK), params, 0, state->stream),
			 "could not launch the compiled verdict kernel");
	a->match_bits = state->d_match_bits;
	a->recheck_bits = state->d_recheck_bits;
	*rows = step_rows;
	stats->program_steps_compiled++;
	stats->program_steps_quick += k->quick;
	return true;
}

/*
 * The folding path (see the file's header): a nested-loop step of about
 * GEN_PAIRS_PER_STEP pairs, or a sorted step cut at the same work, folded
 * into the device accumulators.
 */
static bool
cuda_agg_fold_step(CudaJoinState *state, const GjTile *tile, int64_t *outer_next,
				   const GjAggSpec *spec, GjAggPartial *partial, GjMatches *matches,
				   GjStats *stats, GjError *err)
{
	bool		sorted = state->input.algorithm != GJ_ALGO_NESTLOOP;
	bool		by_row = false;
	int64_t		o_begin = *outer_next;
	int64_t		rows,
				pairs;
	const void *verdicts = NULL;
	const GjCompiledKernels *bits = NULL;
	int			why = GJ_INTERPRETED_NONE;
	int64_t		steps_counted;
	int			why_before = stats->interpreted_why;
	FoldArgs	a;

	matches->count = 0;
	if (!state->agg_ready)
	{
		double		start = gj_clock_ms();

		if (!cuda_agg_fold_prepare(state, spec, err))
			return false;
		stats->times.open_ms += gj_clock_ms() - start;
	}

	/* a compile the step waits for is no kernel's time: before the events */
	if (!sorted)
		bits = gj_cuda_program_kernels(state, GJ_COMPILED_BITS, stats, -1);
	steps_counted = stats->program_steps_compiled + stats->program_steps_interpreted;

	memset(&a, 0, sizeof(a));
	a.spec = state->agg_dspec;
	a.program = state->program;
	a.group_pairs = state->d_group_pairs;
	a.accs = state->d_group_accs;
	a.host_pairs = state->d_host_pairs;
	if ((spec->inner_group != NULL || spec->outer_group != NULL) &&
		fold_block_bytes(gj_agg_spec_groups(spec), spec->nargs) <= FOLD_BLOCK_SMEM_MAX)
		a.block_groups = gj_agg_spec_groups(spec);
	CUDA_TRY(cudaEventRecord(state->events[EV_START], state->stream),
			 "could not record a CUDA event");
	if (sorted)
	{
		if (gj_cuda_outer_status(state, o_begin) == GJ_OUTER_EMPTY)
		{
			/* empty rows come last and have no candidates: the tile is done */
			*outer_next = tile->outer_end;
			return true;
		}
		rows = gj_min64(state->step_cap, tile->outer_end - o_begin);
		if (o_begin < state->outer_all)
			rows = gj_min64(rows, state->outer_all - o_begin);
		CUDA_TRY(cudaEventRecord(state->events[EV_UPLOADED], state->stream),
				 "could not record a CUDA event");
		a.filter = state->input.filter_needed || o_begin < state->outer_all;
		if (a.filter)
			verdicts = gj_cuda_sorted_verdict_kernel(state, tile, rows, stats, &why);
		if (!gj_cuda_sorted_candidates(state, tile, o_begin, rows,
									   verdicts != NULL ? gj_cuda_verdict_pairs() :
									   SORTED_PAIRS_PER_STEP, &rows, &pairs, err))
			return false;
		if (a.filter)
		{
			/* what the steps so far say the join's candidates are */
			state->sorted_candidates += (double) pairs;
			state->sorted_cross += (double) rows * (double) (tile->inner_end - tile->inner_begin);
		}
		if (verdicts != NULL)
		{
			/* the program compiled, once for every candidate; the folds read its verdicts */
			if (!gj_cuda_sorted_verdicts(state, verdicts, o_begin, rows, err))
				return false;
			a.match_bits = state->d_match_bits;
			a.recheck_bits = state->d_recheck_bits;
			stats->program_steps_compiled++;
			stats->program_steps_quick += state->sorted_kernels.quick;
		}
		else if (a.filter)
		{
			stats->program_steps_interpreted++;
			stats->interpreted_why = why;
		}
		gj_cuda_device_columns(&state->outer, state->input.outer.ncols, &a.outer);
		gj_cuda_device_columns(&state->inner, state->input.inner.ncols, &a.inner);
		a.outer_perm = state->d_outer_perm;
		a.inner_perm = state->d_inner_perm;
		a.first = state->d_first;
		a.cand_off = state->d_cand;
		by_row = fold_by_row(rows, pairs);
	}
	else
	{
		int64_t		ninner = tile->inner_end - tile->inner_begin;

		if (!gj_cuda_upload_side(state, &state->outer, &state->input.outer,
								 tile->outer_begin, tile->outer_end, stats, err) ||
			!gj_cuda_upload_side(state, &state->inner, &state->input.inner,
								 tile->inner_begin, tile->inner_end, stats, err))
			return false;
		CUDA_TRY(cudaEventRecord(state->events[EV_UPLOADED], state->stream),
				 "could not record a CUDA event");
		rows = gj_min64(gj_max64(GEN_PAIRS_PER_STEP / gj_max64(ninner, 1), 1),
						tile->outer_end - o_begin);
		if (!nestloop_verdicts(state, bits, tile, o_begin, &rows, &a, stats, err))
			return false;
		pairs = rows * ninner;
		a.filter = 1;
		gj_cuda_device_columns(&state->outer, state->input.outer.ncols, &a.outer);
		gj_cuda_device_columns(&state->inner, state->input.inner.ncols, &a.inner);
		a.outer_base = state->outer.begin;
		a.inner_base = state->inner.begin;
		a.i_begin = tile->inner_begin;
		a.i_end = tile->inner_end;
	}
	a.o_begin = o_begin;
	a.nrows = rows;

	if (fold_may_need_host(state, spec, a.filter != 0))
	{
		CUDA_TRY(cudaMemsetAsync(state->d_host_pairs, 0, sizeof(unsigned long long),
								 state->stream),
				 "could not clear device memory");
		if (!launch_fold(state, &a, sorted, by_row, true, err))
			return false;
		CUDA_TRY(cudaMemcpyAsync(state->h_host_pairs, state->d_host_pairs,
								 sizeof(unsigned long long), cudaMemcpyDeviceToHost,
								 state->stream),
				 "could not copy a count from the device");
		CUDA_TRY(cudaStreamSynchronize(state->stream), "the aggregate fold kernel failed");
		if (*state->h_host_pairs > 0)
		{
			/* the pairs step counts its own program step: this one is not run */
			if (stats->program_steps_compiled + stats->program_steps_interpreted > steps_counted)
			{
				if (a.match_bits != NULL)
				{
					stats->program_steps_compiled--;
					stats->program_steps_quick -= sorted ? state->sorted_kernels.quick :
						bits->quick;
				}
				else
					stats->program_steps_interpreted--;
				stats->interpreted_why = why_before;
			}
			return cuda_agg_pairs_step(state, tile, outer_next, spec, partial, matches,
									   stats, err);
		}
	}
	if (!launch_fold(state, &a, sorted, by_row, false, err))
		return false;
	CUDA_TRY(cudaEventRecord(state->events[EV_COUNTED], state->stream),
			 "could not record a CUDA event");
	CUDA_TRY(cudaStreamSynchronize(state->stream), "the aggregate fold kernel failed");
	stats->transfer_ms += gj_cuda_event_ms(state, EV_START, EV_UPLOADED);
	stats->kernel_ms += gj_cuda_event_ms(state, EV_UPLOADED, EV_COUNTED);
	stats->pairs_evaluated += pairs;
	*outer_next = o_begin + rows;
	return true;
}

/*
 * Fold the match counts of rows outer rows from o_begin (total, or each
 * row's in h_row_counts) into the partial.
 */
static void
cuda_agg_fold_counts(CudaJoinState *state, const GjAggSpec *spec, GjAggPartial *partial,
					 GjStats *stats, int64_t o_begin, int64_t rows, bool totals_only,
					 uint64_t total)
{
	if (totals_only)
	{
		/* no argument, no group: the total is count(*)'s */
		gj_agg_fold_row_counts(spec, partial, NULL, o_begin, &total, 1);
		stats->device_matches += (int64_t) total;
		return;
	}
	for (int64_t j = 0; j < rows; j++)
		stats->device_matches += (int64_t) state->h_row_counts[j];
	gj_agg_fold_row_counts(spec, partial, NULL, o_begin, state->h_row_counts, rows);
}

/*
 * The row-count path: each outer row's matches against the inner tile from
 * the count kernel (cuda_rowcount.cu), folded with the rows' values as
 * weights; without arguments or groups only the total comes back.  Where
 * the planner chose dominance counting and the tile is large enough that
 * the host's O((n + m) log m) count beats the kernel's n x m pairs (at the
 * rates DOMINANCE_NS_PER_ROW_LOG and KERNEL_PAIRS_PER_NS), the host counts.
 */
#define KERNEL_PAIRS_PER_NS		5000.0
#define DOMINANCE_NS_PER_ROW_LOG	10.0

static bool
cuda_agg_count_step(CudaJoinState *state, const GjCompareConjunction *conj, const GjTile *tile,
					int64_t *outer_next, const GjAggSpec *spec, GjAggPartial *partial,
					GjMatches *matches, GjStats *stats, GjError *err)
{
	int64_t		ninner = tile->inner_end - tile->inner_begin;
	int64_t		nouter = tile->outer_end - tile->outer_begin;
	int64_t		o_begin = *outer_next;
	bool		totals_only = spec->nargs == 0 && spec->outer_group == NULL;
	int64_t		rows;
	uint64_t	total = 0;

	matches->count = 0;
	if (state->input.agg_dominance && gj_conjunction_is_dominance(conj) &&
		(double) nouter * ninner / KERNEL_PAIRS_PER_NS >
		(double) (nouter + ninner) * log2((double) ninner + 2) * DOMINANCE_NS_PER_ROW_LOG)
	{
		rows = tile->outer_end - o_begin;
		if (!cuda_agg_host_counts(state, rows, err))
			return false;
		if (state->dominance == NULL || state->dominance_inner_begin != tile->inner_begin ||
			state->dominance_inner_end != tile->inner_end)
		{
			gj_dominance_free(state->dominance);
			state->dominance = gj_dominance_build(&state->input, conj, tile->inner_begin,
												  tile->inner_end);
			state->dominance_inner_begin = tile->inner_begin;
			state->dominance_inner_end = tile->inner_end;
		}
		if (state->dominance == NULL ||
			!gj_dominance_count(state->dominance, &state->input, o_begin, o_begin + rows,
								state->h_row_counts))
		{
			err->code = GJ_ERR_OUT_OF_MEMORY;
			snprintf(err->message, sizeof(err->message),
					 "could not allocate host memory for the dominance count of %lld rows",
					 (long long) (nouter + ninner));
			return false;
		}
		for (int64_t j = 0; j < rows; j++)
			total += state->h_row_counts[j];
	}
	else
	{
		rows = gj_min64(gj_max64(CMP_PAIRS_PER_STEP / gj_max64(ninner, 1), 1),
						gj_min64(tile->outer_end - o_begin, MAX_STEP_ROWS));
		if (!totals_only && !cuda_agg_host_counts(state, rows, err))
			return false;
		if (!gj_cuda_rowcount(state, conj, tile, o_begin, rows,
							  totals_only ? NULL : state->h_row_counts, &total, stats, err))
			return false;
	}
	cuda_agg_fold_counts(state, spec, partial, stats, o_begin, rows, totals_only, total);
	*outer_next = o_begin + rows;
	return true;
}

/*
 * The row-count path of any other program (cuda_program_count.cu): the
 * same folding of each outer row's matches.  A step with a pair the host
 * must recheck runs again as run_step, its pairs folded on the host.
 */
static bool
cuda_agg_program_count_step(CudaJoinState *state, const GjTile *tile, int64_t *outer_next,
							const GjAggSpec *spec, GjAggPartial *partial,
							GjMatches *matches, GjStats *stats, GjError *err)
{
	int64_t		ninner = tile->inner_end - tile->inner_begin;
	int64_t		o_begin = *outer_next;
	bool		totals_only = spec->nargs == 0 && spec->outer_group == NULL;
	int64_t		rows = gj_min64(gj_max64(gj_cuda_program_count_step_pairs(state, stats) /
										 gj_max64(ninner, 1), 1),
								gj_min64(tile->outer_end - o_begin, MAX_STEP_ROWS));
	uint64_t	total = 0,
				host_pairs = 0;

	matches->count = 0;
	if (!totals_only && !cuda_agg_host_counts(state, rows, err))
		return false;
	if (!gj_cuda_program_count(state, tile, o_begin, rows,
							   totals_only ? NULL : state->h_row_counts, &total, &host_pairs,
							   stats, err))
		return false;
	if (host_pairs > 0)
		return cuda_agg_pairs_step(state, tile, outer_next, spec, partial, matches, stats, err);
	cuda_agg_fold_counts(state, spec, partial, stats, o_begin, rows, totals_only, total);
	*outer_next = o_begin + rows;
	return true;
}

bool
gj_cuda_agg_step(void *arg, const GjTile *tile, int64_t *outer_next, const GjAggSpec *spec,
				 GjAggPartial *partial, GjMatches *matches, GjStats *stats, GjError *err)
{
	CudaJoinState *state = (CudaJoinState *) arg;
	GjCompareConjunction conj;

	gj_cuda_take_pending_times(state, stats);
	matches->count = 0;
	if (!gj_cuda_use_device(state, err))
		return false;
	if (tile->inner_end <= tile->inner_begin || *outer_next >= tile->outer_end)
	{
		*outer_next = tile->outer_end;
		return true;
	}
	if (state->input.algorithm == GJ_ALGO_SORTMERGE && !state->input.filter_needed &&
		*outer_next >= state->outer_all && gj_agg_spec_reads_rows(spec))
		return cuda_agg_runs_step(state, tile, outer_next, spec, partial, matches, stats, err);
	if (state->input.algorithm == GJ_ALGO_NESTLOOP && gj_agg_spec_outer_only(spec) &&
		gj_program_compare_conjunction(state->program.instrs, state->program.ninstrs, &conj))
		return cuda_agg_count_step(state, &conj, tile, outer_next, spec, partial, matches,
								   stats, err);
	if (state->input.algorithm == GJ_ALGO_NESTLOOP && gj_agg_spec_outer_only(spec))
		return cuda_agg_program_count_step(state, tile, outer_next, spec, partial, matches,
										   stats, err);

	/*
	 * The device accumulators add float sums with atomics and keep no sum
	 * of squared deviations (avg(float8)'s partial state): the host folds
	 * such a step's pairs.
	 */
	if (gj_agg_spec_needs_sxx(spec))
		return cuda_agg_pairs_step(state, tile, outer_next, spec, partial, matches, stats, err);
	return cuda_agg_fold_step(state, tile, outer_next, spec, partial, matches, stats, err);
}

bool
gj_cuda_agg_finish(void *arg, const GjAggSpec *spec, GjAggPartial *partial, GjStats *stats,
				   GjError *err)
{
	CudaJoinState *state = (CudaJoinState *) arg;
	int64_t		ngroups = gj_agg_spec_groups(spec);
	int64_t		naccs = ngroups * gj_max64(spec->nargs, 1);
	unsigned long long *pairs;
	GjAggDeviceAcc *accs;
	cudaError_t rc;

	gj_cuda_take_pending_times(state, stats);
	if (!state->agg_ready)
		return true;
	if (!gj_cuda_use_device(state, err))
		return false;
	pairs = (unsigned long long *) malloc(sizeof(unsigned long long) * ngroups);
	accs = (GjAggDeviceAcc *) malloc(sizeof(GjAggDeviceAcc) * naccs);
	if (pairs == NULL || accs == NULL)
	{
		free(pairs);
		free(accs);
		err->code = GJ_ERR_OUT_OF_MEMORY;
		snprintf(err->message, sizeof(err->message),
				 "could not allocate host memory for the partials of %lld groups",
				 (long long) ngroups);
		return false;
	}
	rc = cudaStreamSynchronize(state->stream);
	if (rc == cudaSuccess)
		rc = cudaMemcpyAsync(pairs, state->d_group_pairs, sizeof(unsigned long long) * ngroups,
							 cudaMemcpyDeviceToHost, state->stream);
	if (rc == cudaSuccess)
		rc = cudaMemcpyAsync(accs, state->d_group_accs, sizeof(GjAggDeviceAcc) * naccs,
							 cudaMemcpyDeviceToHost, state->stream);
	if (rc == cudaSuccess)
		rc = cudaStreamSynchronize(state->stream);
	if (rc == cudaSuccess)
	{
		gj_agg_merge_device(spec, partial, pairs, accs);
		stats->bytes_from_device += (sizeof(unsigned long long) + sizeof(GjAggDeviceAcc) *
									 gj_max64(spec->nargs, 1)) * ngroups;
	}
	free(pairs);
	free(accs);
	if (rc != cudaSuccess)
		return gj_cuda_fail(err, 0, "could not copy the partial aggregates from the device", rc);
	return true;
}

void
gj_cuda_agg_free(CudaJoinState *state)
{
	for (int i = 0; i < state->agg_nmem; i++)
		gj_device_free(state, state->agg_mem[i]);
	state->agg_nmem = 0;
	gj_device_free(state, state->d_group_pairs);
	gj_device_free(state, state->d_group_accs);
	gj_device_free(state, state->d_host_pairs);
	gj_pinned_free(state->h_host_pairs);
	gj_pinned_free(state->h_row_counts);
	gj_dominance_free(state->dominance);
}

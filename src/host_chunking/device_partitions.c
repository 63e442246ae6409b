/*-------------------------------------------------------------------------
 *
 * device_partitions.c
 *	  Device partitions: a sort-merge or hash join whose sides do not fit
 *	  the device memory budget, cut into partition pairs that do.
 *
 * A sorted or hash join keeps both whole sides' sorted keys on the device
 * for all its tiles (gj_sorted_resident_bytes); the cuda backend refuses
 * one over three quarters of its budget.  Before the backend is opened for
 * a pair of buffers (the whole inputs, or one chunk pair of a spilled join,
 * gpujoin_open_pair), gpujoin_partitions_plan checks that formula against
 * the budget and, over it, cuts both sides into partitions:
 *
 *	- hash: by the top bits of the key hash (gj_equi_hash, the hash the
 *	  backends sort by), so a pair can only match within one partition;
 *	- sort-merge: by ranges of the inner key cut at quantiles of a sample of
 *	  the inner keys; an outer row goes to every partition its bound range
 *	  [lo(o), hi(o)] touches (all of them when its bounds need the host), and
 *	  since the inner partitions are disjoint, each pair is still found once.
 *
 * Rows with a NULL key (or a key with no exact device value) go to no
 * partition: they cannot match on the device, and the node's usual
 * machinery (unmatched rows, GJ_PHASE_HOST_PAIRS) sees them as before.
 *
 * Each partition becomes one or more pieces, each an ordinary join opened
 * on the backend with the piece's key columns gathered into arrays of its
 * own: the whole partition when it fits; slices of its outer rows against
 * all its inner rows when only the outer side is too big; and, when the
 * inner side alone is too big (a hot key), the whole partition as a nested
 * loop, whose tiles the planner sizes to any budget.  Skew costs time,
 * never an error or another answer.
 *
 * The pieces' pairs come back numbered within the piece; gpujoin_steps.c
 * translates them (gpujoin_partitions_translate) into the buffers' row
 * numbers before anything else sees them, so the match flags of the join
 * types are those of the whole buffers: an outer row in two partitions
 * (a band near a cut) is matched, skipped by a semi join, or emitted
 * unmatched exactly once, after the last piece, as without partitions.
 *
 * The aggregate node's joins are partitioned too: its spec's per-row
 * arrays (argument values and flags, the pair programs' columns, groups,
 * host_later) are numbered in the whole buffers, so each piece gets a copy
 * gathered for its rows (gather_spec), which the piece's aggregate steps
 * and its agg_finish are given (gpujoin_partitions_spec); every piece
 * reduces into the same partials.  A pair is reduced once, as it is found
 * once: hash partitions hold each row once, range partitions each inner
 * row once.
 *
 * The executor is above this file (host_chunking/staging.h): the budget,
 * the service's reservation, and opening and releasing a piece's backend
 * are its functions, called through gjs->staging.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/explain.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "gpujoin.h"
#include "host_chunking/staging_internal.h"
#include "kernels/shared/gj_keys.h"
#include "service/service_shared.h"

/*
 * Partitions are cut for this fraction of the budget's share (1 / 2), so
 * that partitions of uneven size still fit it as one piece.
 */
#define PARTITION_FILL_DIVISOR	2
/* At most this many partitions (2^16: hash bits, the sample's cuts). */
#define MAX_PARTITIONS			65536
/* Inner keys sampled to cut the range partitions. */
#define RANGE_SAMPLE_ROWS		65536

/*
 * An outer slice smaller than this runs the partition as a nested loop
 * instead: each slice sorts the partition's inner rows again, which beats
 * evaluating every pair only while a slice has more than about log2 of the
 * inner rows.
 */
#define MIN_OUTER_SLICE_ROWS	64

/*
 * A range join whose outer rows touch more partitions than this on
 * average (one-sided bounds: r.a < s.a) is not partitioned: each outer
 * row would be copied into most partitions.  It runs on the cpu backend
 * as before.
 */
#define MAX_OUTER_SPAN			4

/* One piece: a partition's outer rows [outer_from, outer_to) x its inner rows. */
typedef struct GjPartPiece
{
	int			part;
	int64		outer_from;
	int64		outer_to;
	bool		nestloop;		/* the inner side alone is over the budget */
} GjPartPiece;

struct GjDevicePartitions
{
	MemoryContext cxt;			/* everything below */
	MemoryContext piece_cxt;	/* the open piece's gathered keys, reset per
								 * piece */
	GjJoinInput whole;			/* the join of the whole buffers */
	int			nparts;

	/*
	 * The rows of partition p are outer_rows[outer_start[p] ..
	 * outer_start[p + 1]) and likewise inner, in buffer row numbers.
	 */
	int64	   *outer_start;
	uint32	   *outer_rows;
	int64	   *inner_start;
	uint32	   *inner_rows;
	GjPartPiece *pieces;
	int			npieces;
	int			next_piece;
	/* the open piece's rows in the buffers, by their number in the piece */
	const uint32 *outer_map;
	const uint32 *inner_map;
	/* the aggregate node's spec, gathered for the open piece's rows */
	GjAggSpec  *piece_spec;		/* in piece_cxt; the service's proxy knows
								 * a join's spec by its address */

	/*
	 * The next piece, opened in the GPU service ahead of its turn
	 * (open_ahead): its backend state (NULL: none), gathered keys and spec
	 * in ahead_cxt, tile schedule and budget.  ahead_cleanup, on cxt, ends
	 * it when the partitions go without adopting it (ERROR, rescan, LIMIT).
	 */
	void	   *ahead_state;
	const GjBackend *ahead_backend;
	int			ahead_piece;
	MemoryContext ahead_cxt;
	GjAggSpec  *ahead_spec;		/* in ahead_cxt */
	TileSchedule ahead_sched;
	int64		ahead_budget;
	MemoryContextCallback ahead_cleanup;
	/* the translated pairs of the last step */
	uint32	   *pairs_outer;
	uint32	   *pairs_inner;
	int64		pairs_allocated;
};

static void ahead_cleanup(void *arg);

/* Resident bytes of a piece of no x ni rows of the join *input. */
static inline int64
piece_bytes(const GjJoinInput *input, int64 no, int64 ni)
{
	/* every key column counts: a backend loads some of them, never more */
	return gj_sorted_resident_bytes(no, ni, input->outer.ncols, input->inner.ncols);
}

static int
cmp_int64(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

/* Number of cuts <= key: the range partition of an inner key. */
static inline int
range_partition(const int64 *cuts, int ncuts, int64 key)
{
	return (int) gj_upper_bound(cuts, 0, ncuts, key);
}

/*
 * A row's partitions, [*first, *last], or false when it is in none: the
 * hash partition of its keys, or the range partitions its bounds touch.
 */
static bool
row_partitions(GpuJoinState *gjs, const GjJoinInput *input, bool outer, int64 row,
			   int hash_bits, const int64 *cuts, int ncuts, int *first, int *last)
{
	const GjKeyColumns *cols = outer ? &input->outer : &input->inner;
	const uint8 *inexact = outer ? gjs->outer_inexact : gjs->inner_inexact;

	if (inexact != NULL && inexact[row])
		return false;			/* GJ_PHASE_HOST_PAIRS evaluates its pairs */
	if (input->algorithm == GJ_ALGO_HASH)
	{
		int64		hash;

		if (!gj_equi_hash(&input->equi, cols,
						  outer ? input->equi.outer_cols : input->equi.inner_cols,
						  row, &hash))
			return false;
		*first = *last = hash_bits == 0 ? 0 : (int) ((uint64) hash >> (64 - hash_bits));
		return true;
	}
	if (!outer)
	{
		int64		key;

		if (!gj_column_key(cols, input->range.inner_col, input->range.cls, row, &key))
			return false;
		*first = *last = range_partition(cuts, ncuts, key);
		return true;
	}
	else
	{
		int64		lo = 0,
					hi = 0;
		int			s_lo = gj_range_bound(&input->range, cols, row, false, &lo);
		int			s_hi = gj_range_bound(&input->range, cols, row, true, &hi);
		int			status = gj_range_status(s_lo, s_hi, lo, hi);

		if (status == GJ_OUTER_EMPTY)
			return false;
		if (status == GJ_OUTER_ALL)
		{
			/* the host sees every pair of it: every inner row, every partition */
			*first = 0;
			*last = ncuts;
			return true;
		}
		*first = range_partition(cuts, ncuts, lo);
		/* the last partition whose first key is <= hi */
		*last = range_partition(cuts, ncuts, hi);
		return true;
	}
}

/*
 * Cut points at quantiles of a sample of keys (sorted here, in place) for
 * about nparts ranges, each cut distinct and above the smallest key, so
 * that a hot key stays in one range: at most nparts - 1 of them in cuts.
 * Returns their number.  Also the host spill's key ranges
 * (spill_range.c).
 */
int
gpujoin_quantile_cuts(int64 *sample, int64 n, int nparts, int64 *cuts)
{
	int			ncuts = 0;

	qsort(sample, n, sizeof(int64), cmp_int64);
	for (int p = 1; p < nparts && n > 0; p++)
	{
		int64		cut = sample[(int64) p * n / nparts];

		if (ncuts == 0 ? cut > sample[0] : cut > cuts[ncuts - 1])
			cuts[ncuts++] = cut;
	}
	return ncuts;
}

/*
 * Range partitions: cut points at quantiles of a sample of the inner keys,
 * each distinct (a hot key stays in one partition).  Returns the number of
 * cuts; partition p holds the keys in [cuts[p - 1], cuts[p]).
 */
static int
range_cuts(const GjJoinInput *input, int nparts, int64 **cuts_out)
{
	int64		ni = input->inner_nrows;
	int64		stride = Max(ni / RANGE_SAMPLE_ROWS, 1);
	int64	   *sample = palloc(sizeof(int64) * Min(ni, RANGE_SAMPLE_ROWS + 1));
	int64	   *cuts = palloc(sizeof(int64) * nparts);
	int64		n = 0;
	int			ncuts;

	for (int64 row = 0; row < ni && n <= RANGE_SAMPLE_ROWS; row += stride)
	{
		int64		key;

		if (gj_column_key(&input->inner, input->range.inner_col, input->range.cls, row, &key))
			sample[n++] = key;
	}
	ncuts = gpujoin_quantile_cuts(sample, n, nparts, cuts);
	pfree(sample);
	*cuts_out = cuts;
	return ncuts;
}

/*
 * Sort the rows of one side into their partitions (a counting sort):
 * start[p] .. start[p + 1] index the rows of partition p.  False when the
 * rows would be copied into too many partitions (see MAX_OUTER_SPAN).
 */
static bool
distribute_side(GpuJoinState *gjs, GjDevicePartitions *parts, bool outer,
				int hash_bits, const int64 *cuts, int ncuts)
{
	const GjJoinInput *input = &parts->whole;
	int64		nrows = outer ? input->outer_nrows : input->inner_nrows;
	int			nparts = parts->nparts;
	int64	   *start = MemoryContextAllocZero(parts->cxt, sizeof(int64) * (nparts + 1));
	int64	   *fill;
	uint32	   *rows;
	int64		total = 0;

	/* count: start[p + 1] is the number of rows of partition p */
	for (int64 row = 0; row < nrows; row++)
	{
		int			first,
					last;

		if ((row & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
		if (!row_partitions(gjs, input, outer, row, hash_bits, cuts, ncuts, &first, &last))
			continue;
		for (int p = first; p <= last; p++)
			start[p + 1]++;
		total += last - first + 1;
	}
	if (outer && total > MAX_OUTER_SPAN * Max(nrows, 1))
		return false;
	for (int p = 0; p < nparts; p++)
		start[p + 1] += start[p];
	rows = MemoryContextAllocHuge(parts->cxt, sizeof(uint32) * Max(total, 1));
	fill = palloc(sizeof(int64) * nparts);
	memcpy(fill, start, sizeof(int64) * nparts);
	for (int64 row = 0; row < nrows; row++)
	{
		int			first,
					last;

		if ((row & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
		if (!row_partitions(gjs, input, outer, row, hash_bits, cuts, ncuts, &first, &last))
			continue;
		for (int p = first; p <= last; p++)
			rows[fill[p]++] = (uint32) row;
	}
	pfree(fill);
	if (outer)
	{
		parts->outer_start = start;
		parts->outer_rows = rows;
	}
	else
	{
		parts->inner_start = start;
		parts->inner_rows = rows;
	}
	return true;
}

/*
 * The pieces of each partition: the whole partition when it fits the
 * share, slices of its outer rows when its inner rows fit with at least
 * MIN_OUTER_SLICE_ROWS outer rows, else the partition as a nested loop.
 */
static void
plan_pieces(GjDevicePartitions *parts, int64 share)
{
	int			maxpieces = parts->nparts;

	parts->pieces = MemoryContextAlloc(parts->cxt, sizeof(GjPartPiece) * maxpieces);
	parts->npieces = 0;
	for (int p = 0; p < parts->nparts; p++)
	{
		int64		no = parts->outer_start[p + 1] - parts->outer_start[p];
		int64		ni = parts->inner_start[p + 1] - parts->inner_start[p];
		int64		slice = no;
		bool		nestloop = false;

		if (no == 0 || ni == 0)
			continue;			/* nothing can match here */
		if (piece_bytes(&parts->whole, no, ni) > share)
		{
			/* the largest slice that fits: bytes grow with the outer rows */
			int64		lo = 0,
						hi = no;

			while (lo < hi)
			{
				int64		mid = lo + (hi - lo + 1) / 2;

				if (piece_bytes(&parts->whole, mid, ni) <= share)
					lo = mid;
				else
					hi = mid - 1;
			}
			slice = lo;
			if (slice < Min(no, MIN_OUTER_SLICE_ROWS))
			{
				slice = no;
				nestloop = true;
			}
		}
		for (int64 from = 0; from < no; from += slice)
		{
			if (parts->npieces == maxpieces)
			{
				maxpieces *= 2;
				parts->pieces = repalloc_huge(parts->pieces, sizeof(GjPartPiece) * maxpieces);
			}
			parts->pieces[parts->npieces].part = p;
			parts->pieces[parts->npieces].outer_from = from;
			parts->pieces[parts->npieces].outer_to = Min(from + slice, no);
			parts->pieces[parts->npieces].nestloop = nestloop;
			parts->npieces++;
		}
	}
}

/* Drop the partitions of the previous pair of buffers, if any. */
void
gpujoin_partitions_reset(GpuJoinState *gjs)
{
	if (gjs->partitions != NULL)
	{
		MemoryContextDelete(gjs->partitions->cxt);
		gjs->partitions = NULL;
	}
}

/*
 * The memory of the open piece's gathered keys, which a step running on
 * the overlap thread reads: gpujoin_overlap.c waits for the step before it
 * goes (a reset, or an ERROR deleting the executor's memory).
 */
MemoryContext
gpujoin_partitions_keys_context(GpuJoinState *gjs)
{
	return gjs->partitions->piece_cxt;
}

/*
 * Called by gpujoin_open_pair with the join of the two buffers, keys
 * encoded: when it is a sort-merge or hash join over the share of the
 * budget, cut it into partitions and return true; the steps then open the
 * pieces one by one (gpujoin_partitions_open_next), starting from an empty
 * tile schedule.  Partitions are cut for a set gpujoin.device_memory on any
 * backend (so that the cpu backend runs them too), and for the cuda
 * backends' own budget.
 */
bool
gpujoin_partitions_plan(GpuJoinState *gjs, const GjJoinInput *input)
{
	GjDevicePartitions *parts;
	MemoryContext cxt;
	int64		budget;
	int64		share;
	int64		bytes;
	int64		nparts;
	int			hash_bits = 0;
	int64	   *cuts = NULL;
	int			ncuts = 0;

	gpujoin_partitions_reset(gjs);
	if (!gpujoin_device_partitions ||
		(input->algorithm != GJ_ALGO_HASH && input->algorithm != GJ_ALGO_SORTMERGE))
		return false;
	if (gpujoin_device_memory_kb == 0 && gjs->backend != &gj_cuda_backend &&
		gjs->backend != &gj_service_cuda_backend)
		return false;
	budget = gjs->staging->join_budget(gjs);
	share = GJ_RESIDENT_SHARE(budget);
	bytes = piece_bytes(input, input->outer_nrows, input->inner_nrows);
	if (bytes <= share)
		return false;

	nparts = (bytes + share / PARTITION_FILL_DIVISOR - 1) /
		Max(share / PARTITION_FILL_DIVISOR, 1);
	nparts = Min(Max(nparts, 2), MAX_PARTITIONS);

	cxt = AllocSetContextCreate(gjs->join_cxt, "GpuJoin device partitions",
								ALLOCSET_DEFAULT_SIZES);
	parts = MemoryContextAllocZero(cxt, sizeof(GjDevicePartitions));
	parts->cxt = cxt;
	parts->piece_cxt = AllocSetContextCreate(cxt, "GpuJoin device partition",
											 ALLOCSET_DEFAULT_SIZES);
	parts->ahead_cxt = AllocSetContextCreate(cxt, "GpuJoin device partition ahead",
											 ALLOCSET_DEFAULT_SIZES);
	parts->ahead_cleanup.func = ahead_cleanup;
	parts->ahead_cleanup.arg = parts;
	MemoryContextRegisterResetCallback(cxt, &parts->ahead_cleanup);
	parts->whole = *input;
	if (input->algorithm == GJ_ALGO_HASH)
	{
		while ((INT64CONST(1) << hash_bits) < nparts)
			hash_bits++;
		parts->nparts = 1 << hash_bits;
	}
	else
	{
		MemoryContext old = MemoryContextSwitchTo(cxt);

		ncuts = range_cuts(input, (int) nparts, &cuts);
		MemoryContextSwitchTo(old);
		parts->nparts = ncuts + 1;
	}

	if (!distribute_side(gjs, parts, false, hash_bits, cuts, ncuts) ||
		!distribute_side(gjs, parts, true, hash_bits, cuts, ncuts))
	{
		elog(DEBUG1, "GpuJoin: the outer rows' bounds span too many device partitions; not partitioned");
		MemoryContextDelete(cxt);
		return false;
	}
	plan_pieces(parts, share);
	parts->next_piece = 0;
	gjs->partitions = parts;
	gjs->counters.device_partitions += parts->nparts;
	memset(&gjs->sched, 0, sizeof(TileSchedule));
	gjs->tile_open = false;
	return true;
}

/*
 * Gather rows[0 .. n) of one side's key columns into the piece's arrays,
 * so that the backend sees the piece as a side of n rows.
 */
static void
gather_keys(const GjKeyColumns *from, const uint32 *rows, int64 n, GjKeyColumns *to)
{
	to->ncols = from->ncols;
	for (int c = 0; c < from->ncols; c++)
	{
		int64	   *values = palloc_extended(sizeof(int64) * Max(n, 1), MCXT_ALLOC_HUGE);
		uint8	   *isnull = NULL;

		for (int64 i = 0; i < n; i++)
			values[i] = from->values[c][rows[i]];
		if (from->isnull[c] != NULL)
		{
			isnull = palloc_extended(Max(n, 1), MCXT_ALLOC_HUGE);
			for (int64 i = 0; i < n; i++)
				isnull[i] = from->isnull[c][rows[i]];
		}
		to->values[c] = values;
		to->isnull[c] = isnull;
	}
}

/* Gather rows[0 .. n) of a per-row array of elem bytes a row. */
static void *
gather_rows(const void *from, Size elem, const uint32 *rows, int64 n)
{
	char	   *to;

	if (from == NULL)
		return NULL;
	to = palloc_extended(elem * Max(n, 1), MCXT_ALLOC_HUGE);
	for (int64 i = 0; i < n; i++)
		memcpy(to + i * elem, (const char *) from + (Size) rows[i] * elem, elem);
	return to;
}

/*
 * The aggregate node's spec for the open piece: every per-row array of the
 * whole buffers' spec gathered for the piece's no outer and ni inner rows;
 * the groups keep their numbers, so every piece reduces into the same
 * partials.  In the piece's memory context.
 */
static void
gather_spec(GjAggSpec *spec, const GjAggSpec *whole, const uint32 *outer_map,
			const uint32 *inner_map, int64 no, int64 ni)
{
	*spec = *whole;
	for (int a = 0; a < whole->nargs; a++)
	{
		const GjAggArg *from = &whole->args[a];
		GjAggArg   *to = &spec->args[a];

		if (from->side == GJ_AGG_SIDE_PAIR)
			continue;
		to->values = gather_rows(from->values, sizeof(int64),
								 from->side == GJ_AGG_SIDE_OUTER ? outer_map : inner_map,
								 from->side == GJ_AGG_SIDE_OUTER ? no : ni);
		to->flags = gather_rows(from->flags, sizeof(uint8),
								from->side == GJ_AGG_SIDE_OUTER ? outer_map : inner_map,
								from->side == GJ_AGG_SIDE_OUTER ? no : ni);
	}
	gather_keys(&whole->pair_cols[0], outer_map, no, &spec->pair_cols[0]);
	gather_keys(&whole->pair_cols[1], inner_map, ni, &spec->pair_cols[1]);
	spec->outer_group = gather_rows(whole->outer_group, sizeof(uint32), outer_map, no);
	spec->inner_group = gather_rows(whole->inner_group, sizeof(uint32), inner_map, ni);
	spec->host_later[0] = gather_rows(whole->host_later[0], sizeof(uint8), outer_map, no);
	spec->host_later[1] = gather_rows(whole->host_later[1], sizeof(uint8), inner_map, ni);
}

/*
 * The spec the open piece's aggregate steps and agg_finish must be given:
 * the piece's own (gather_spec), or spec itself when not partitioned.
 */
const GjAggSpec *
gpujoin_partitions_spec(GpuJoinState *gjs, const GjAggSpec *spec)
{
	if (gjs->partitions == NULL || spec == NULL)
		return spec;
	Assert(gjs->partitions->whole.agg_spec == spec);
	return gjs->partitions->piece_spec;
}

/* Is a piece left after the open one? */
bool
gpujoin_partitions_more(GpuJoinState *gjs)
{
	return gjs->partitions != NULL &&
		gjs->partitions->next_piece < gjs->partitions->npieces;
}

/* Piece number n's rows in the buffers, by their number in the piece. */
static void
piece_maps(GjDevicePartitions *parts, const GjPartPiece *piece, const uint32 **outer_map,
		   const uint32 **inner_map, int64 *no, int64 *ni)
{
	*outer_map = parts->outer_rows + parts->outer_start[piece->part] + piece->outer_from;
	*inner_map = parts->inner_rows + parts->inner_start[piece->part];
	*no = piece->outer_to - piece->outer_from;
	*ni = parts->inner_start[piece->part + 1] - parts->inner_start[piece->part];
}

/*
 * The join input of a piece: the whole join's, with the piece's key
 * columns gathered in cxt, and the aggregate spec's per-row arrays, in a
 * spec of the piece's own there, which it returns (NULL without one).
 */
static GjAggSpec *
piece_input(GjDevicePartitions *parts, const GjPartPiece *piece, MemoryContext cxt,
			GjJoinInput *input)
{
	const uint32 *outer_map;
	const uint32 *inner_map;
	GjAggSpec  *spec = NULL;
	int64		no,
				ni;
	MemoryContext old;

	piece_maps(parts, piece, &outer_map, &inner_map, &no, &ni);
	*input = parts->whole;
	input->open_in_background = false;
	old = MemoryContextSwitchTo(cxt);
	gather_keys(&parts->whole.outer, outer_map, no, &input->outer);
	gather_keys(&parts->whole.inner, inner_map, ni, &input->inner);
	if (parts->whole.agg_spec != NULL)
	{
		spec = palloc(sizeof(GjAggSpec));
		gather_spec(spec, parts->whole.agg_spec, outer_map, inner_map, no, ni);
		input->agg_spec = spec;
	}
	MemoryContextSwitchTo(old);
	input->outer_nrows = no;
	input->inner_nrows = ni;
	if (piece->nestloop)
	{
		/* a hot key: every pair of the partition, tiled to the budget */
		input->algorithm = GJ_ALGO_NESTLOOP;
		input->filter_needed = true;
	}
	return spec;
}

/* parts->cxt goes with the next piece still open ahead: end it. */
static void
ahead_cleanup(void *arg)
{
	GjDevicePartitions *parts = arg;
	void	   *state = parts->ahead_state;

	parts->ahead_state = NULL;
	if (state != NULL)
		parts->ahead_backend->end_join(state);
}

/*
 * In the GPU service, with a piece left after the open one: open it now,
 * in the background (open_in_background), so that the service copies its
 * keys to a device and sorts or hashes them while the open piece's steps
 * run, on another GPU where the open piece's holds the device memory.  It
 * gets the budget the service would reserve for it, as gpujoin_open_backend
 * gives it, but never waits for one: where the service has no room now,
 * or the piece is a nested loop, it opens in its turn as before.  Injected
 * faults (gpujoin.debug_fault) count the ordinary opens only; with
 * ahead_open_fails the service fails every open ahead after answering it.
 */
static void
open_ahead(GpuJoinState *gjs)
{
	GjDevicePartitions *parts = gjs->partitions;
	const GjPartPiece *piece;
	GjJoinInput input;
	GjError		err;
	int64		budget;
	int64		least;
	void	   *state;

	if (!gpujoin_partitions_open_ahead || parts->ahead_state != NULL ||
		parts->next_piece >= parts->npieces || !gj_backend_in_service(gjs->backend) ||
		(gpujoin_debug_fault != GPUJOIN_FAULT_NONE &&
		 gpujoin_debug_fault != GPUJOIN_FAULT_AHEAD_OPEN_FAILS))
		return;
	piece = &parts->pieces[parts->next_piece];
	if (piece->nestloop)
		return;
	MemoryContextReset(parts->ahead_cxt);
	parts->ahead_spec = piece_input(parts, piece, parts->ahead_cxt, &input);
	budget = gjs->staging->service_reservation(gjs, &input, gjs->staging->join_budget(gjs));
	least = gj_sorted_resident_bytes(input.outer_nrows, input.inner_nrows,
									 input.outer.ncols, input.inner.ncols) / 3 * 4 + 4;
	budget = Max(budget, least);
	if (budget > gjs->staging->join_budget(gjs))
		return;
	gj_tile_schedule_plan(&parts->ahead_sched,
						  input.outer_nrows, gj_host_buffer_key_row_bytes(&gjs->outer_buf),
						  input.inner_nrows, gj_host_buffer_key_row_bytes(&gjs->inner_buf),
						  budget, gj_service_max_matches());
	input.match_capacity = parts->ahead_sched.match_capacity;
	input.budget_bytes = budget;
	input.open_in_background = true;
	memset(&err, 0, sizeof(err));
	state = gjs->backend->begin_join(&input, &err);
	if (state == NULL)
	{
		elog(DEBUG1, "GpuJoin: the next device partition opens in its turn: %s", err.message);
		MemoryContextReset(parts->ahead_cxt);
		parts->ahead_spec = NULL;
		return;
	}
	parts->ahead_state = state;
	parts->ahead_backend = gjs->backend;
	parts->ahead_piece = parts->next_piece;
	parts->ahead_budget = budget;
}

/*
 * The piece opened ahead is the next one: wait until the service has
 * opened it and make it the open piece.  False when its open failed (the
 * piece then opens in the ordinary way).
 */
static bool
adopt_ahead(GpuJoinState *gjs)
{
	GjDevicePartitions *parts = gjs->partitions;
	void	   *state = parts->ahead_state;
	const GjPartPiece *piece;
	MemoryContext keys;
	GjError		err;
	instr_time	start,
				end;
	bool		opened;
	int64		no,
				ni;

	Assert(parts->ahead_piece == parts->next_piece);
	parts->ahead_state = NULL;
	memset(&err, 0, sizeof(err));
	INSTR_TIME_SET_CURRENT(start);
	opened = gj_service_join_wait_open(state, &err);
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	gjs->counters.backend_ms += INSTR_TIME_GET_MILLISEC(end);
	if (!opened)
	{
		elog(DEBUG1, "GpuJoin: a device partition opened ahead failed, it opens again: %s",
			 err.message);
		parts->ahead_backend->end_join(state);
		MemoryContextReset(parts->ahead_cxt);
		parts->ahead_spec = NULL;
		return false;
	}
	piece = &parts->pieces[parts->next_piece++];
	piece_maps(parts, piece, &parts->outer_map, &parts->inner_map, &no, &ni);
	/* its keys and spec become the open piece's (piece_cxt is empty now) */
	keys = parts->piece_cxt;
	parts->piece_cxt = parts->ahead_cxt;
	parts->ahead_cxt = keys;
	parts->piece_spec = parts->ahead_spec;
	parts->ahead_spec = NULL;
	gjs->backend_state = state;
	gjs->sched = parts->ahead_sched;
	gjs->budget_bytes = parts->ahead_budget;
	gjs->counters.partition_pieces++;
	gjs->counters.partitions_ahead++;
	return true;
}

/*
 * The tiles of the open piece are done: open the next piece on the
 * backend, with its own tile schedule (or adopt it, opened ahead), and
 * open the one after it ahead.  False after the last.
 */
bool
gpujoin_partitions_open_next(GpuJoinState *gjs)
{
	GjDevicePartitions *parts = gjs->partitions;
	GjPartPiece *piece;
	GjJoinInput input;

	/* the previous piece's backend state and keys go first */
	gjs->staging->release_backend(gjs);
	MemoryContextReset(parts->piece_cxt);
	parts->piece_spec = NULL;
	parts->outer_map = parts->inner_map = NULL;
	if (parts->next_piece >= parts->npieces)
		return false;
	CHECK_FOR_INTERRUPTS();
	if (parts->ahead_state == NULL || !adopt_ahead(gjs))
	{
		int64		no,
					ni;

		piece = &parts->pieces[parts->next_piece++];
		piece_maps(parts, piece, &parts->outer_map, &parts->inner_map, &no, &ni);
		parts->piece_spec = piece_input(parts, piece, parts->piece_cxt, &input);
		if (piece->nestloop)
			gjs->counters.partitions_nestloop++;
		gjs->counters.partition_pieces++;
		gjs->staging->open_backend(gjs, &input);
	}
	gjs->tile_open = false;
	open_ahead(gjs);
	return true;
}

/*
 * The pairs of the step just run, numbered in the open piece, renumbered
 * in the buffers (keeping each pair's recheck flag), into arrays of our
 * own that stay valid until the next step's translation.
 */
void
gpujoin_partitions_translate(GpuJoinState *gjs)
{
	GjDevicePartitions *parts = gjs->partitions;
	int64		n = gjs->matches.count;

	if (n == 0)
		return;
	if (n > parts->pairs_allocated)
	{
		if (parts->pairs_outer != NULL)
		{
			pfree(parts->pairs_outer);
			pfree(parts->pairs_inner);
		}
		parts->pairs_outer = MemoryContextAllocHuge(parts->cxt, sizeof(uint32) * n);
		parts->pairs_inner = MemoryContextAllocHuge(parts->cxt, sizeof(uint32) * n);
		parts->pairs_allocated = n;
	}
	for (int64 i = 0; i < n; i++)
	{
		uint32		o = gjs->matches.outer_rows[i];

		parts->pairs_outer[i] = (o & GJ_PAIR_RECHECK) | parts->outer_map[o & GJ_PAIR_ROW_MASK];
		parts->pairs_inner[i] = parts->inner_map[gjs->matches.inner_rows[i]];
	}
	gjs->matches.outer_rows = parts->pairs_outer;
	gjs->matches.inner_rows = parts->pairs_inner;
}

/* EXPLAIN ANALYZE of a join cut into device partitions. */
void
gpujoin_partitions_explain(const GpuJoinCounters *c, ExplainState *es)
{
	if (c->device_partitions == 0)
		return;
	ExplainPropertyInteger("Device Partitions", NULL, c->device_partitions, es);
	ExplainPropertyInteger("Partition Pieces", NULL, c->partition_pieces, es);
	ExplainPropertyInteger("Partitions As Nested Loop", NULL, c->partitions_nestloop, es);
	if (c->partitions_ahead > 0)
		ExplainPropertyInteger("Partition Pieces Opened Ahead", NULL, c->partitions_ahead, es);
}

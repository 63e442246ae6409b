/*-------------------------------------------------------------------------
 *
 * spill_range.c
 *	  The key ranges a sort-merge join's spill is cut into, as a hash
 *	  join's is cut by hash (spill.c): which joins qualify, the cut
 *	  points, and each row's partitions.
 *
 * The inner side is drained first, into chunks as any spill, and a sample
 * of its keys is kept as each chunk is written.  Once it is drained, cut
 * points at quantiles of the sample (each a distinct key, so a hot key
 * stays in one partition) split its key space into ranges of about half
 * its share of gpujoin.max_host_memory each, and the inner chunks are
 * rewritten a chunk per range (spill.c's rewrite_inner), the rows
 * with a NULL key in a partition of their own.  The outer side is then
 * drained into the same ranges: an outer row goes to every range its bounds
 * [lo(o), hi(o)] touch (a band row near a cut to two), to all of them when
 * its bounds need the host (an overflow), and to none when they are empty
 * (a NULL key or bound: it cannot match).  Partition i of the outer side is
 * joined with partition i of the inner side only, so each side is read
 * once; the inner ranges are disjoint, so every matching pair is found in
 * exactly one partition.
 *
 * An outer row in several partitions has a match flag in each, so that is
 * for INNER and RIGHT joins (the inner rows, whose flags RIGHT keeps, are in
 * one partition each) and the aggregates over them.  LEFT, SEMI and ANTI
 * joins are cut the other way round: once the inner side is drained only
 * its cut points are taken; each outer row goes to the one range of its
 * lower bound (the NULL partition when its bounds are empty: it only comes
 * out unmatched), each range keeping the largest upper bound of its rows;
 * after the outer drain the inner side is written again, each row into the
 * ranges whose outer rows reach its key (from its own range down to the
 * first whose rows' upper bounds, or an earlier range's, reach it).  The
 * outer rows' flags are then their own.  FULL joins keep the block nested
 * loop.  Only keys and bounds whose device values are those of the drain
 * qualify (integers, dates, timestamps, floats; not numeric, whose fixed
 * point is chosen per chunk pair), and only bands bounded on both sides (a
 * one-sided bound would copy each row into half the partitions).  Where
 * the copies would put a row into more than MAX_OUTER_SPAN ranges on
 * average (a wide band: the outer side's first chunk tells, or the outer
 * ranges' upper bounds), the copied side is written unpartitioned, and the
 * join goes back to the block nested loop over the chunks, each pair still
 * found once.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "gpujoin.h"
#include "host_chunking/staging_internal.h"
#include "kernels/shared/gj_keys.h"

/* Inner keys sampled from each spilled chunk, and at most in all. */
#define SAMPLE_PER_CHUNK	4096
#define MAX_SAMPLE			(1024 * 1024)

/*
 * The most ranges a copied row (an outer one, or for LEFT, SEMI and ANTI an
 * inner one) is written to on average before its side is left
 * unpartitioned: each copy is written and read once more.
 */
#define MAX_OUTER_SPAN		4

/*
 * A key type whose device value is one per PostgreSQL value, at drain time:
 * the keys a spill may partition by hash (spill.c) or by range (here).
 */
bool
gpujoin_spill_key_partitionable(const HostKeyColumn *key)
{
	if (key->hashed)
		return false;
	switch (key->type)
	{
		case GJT_INT2:
		case GJT_INT4:
		case GJT_INT8:
		case GJT_OID:
		case GJT_DATE:
		case GJT_TIMESTAMP:
		case GJT_TIMESTAMPTZ:
		case GJT_FLOAT4:
		case GJT_FLOAT8:
			return true;
		default:
			return false;	/* numeric, interval, timetz, bool, ... */
	}
}

/* Does the device value of this column equal, as order key, its drained value? */
static bool
exact_column(const HostKeyColumn *key, int cls)
{
	return gpujoin_spill_key_partitionable(key) && gj_type_class(key->type) == cls;
}

/* A bound program over exact outer columns and constants only. */
static bool
exact_bound(GpuJoinState *gjs, const GjInstr *instrs, int ninstrs)
{
	for (int i = 0; i < ninstrs; i++)
	{
		const GjInstr *in = &instrs[i];

		if (in->op == GJOP_LOAD_INNER)
			return false;
		if (in->op == GJOP_LOAD_OUTER &&
			(in->arg < 0 || in->arg >= gjs->outer_buf.nkeys ||
			 !gpujoin_spill_key_partitionable(&gjs->outer_buf.keys[in->arg])))
			return false;
		if (in->op == GJOP_CONST && gj_type_host_encoded(in->type))
			return false;
	}
	return true;
}

/*
 * Can this join's spill be cut by key range?  A sort-merge join bounded on
 * both sides, over keys exact at drain time, and not a FULL join.  *by_outer
 * says which side's rows stay whole: the inner side's (INNER, RIGHT: the
 * outer rows are copied), or the outer side's (LEFT, SEMI, ANTI: the inner
 * rows are copied), so that the flags of the join type's preserved side are
 * each row's own.
 */
bool
gpujoin_spill_range_eligible(GpuJoinState *gjs, bool *by_outer)
{
	const GjRangeSpec *range = &gjs->info.range;

	if (!gpujoin_spill_by_range || gjs->info.algorithm != GJ_ALGO_SORTMERGE)
		return false;
	if (gjs->fill_inner && (gjs->fill_outer || gjs->once_per_outer))
		return false;
	*by_outer = gjs->fill_outer || gjs->once_per_outer;
	if (range->lo_ninstrs == 0 || range->hi_ninstrs == 0)
		return false;

	/*
	 * A guarded band (abs(), or rewritten from another written form) must
	 * see every pair's columns: a chunk pair of ranges that cannot meet is
	 * never opened, so the band guard would miss an overflow between them.
	 */
	if (gjs->info.band_guard.active)
		return false;
	if (range->inner_col < 0 || range->inner_col >= gjs->inner_buf.nkeys ||
		!exact_column(&gjs->inner_buf.keys[range->inner_col], range->cls))
		return false;
	return exact_bound(gjs, range->lo_instrs, range->lo_ninstrs) &&
		exact_bound(gjs, range->hi_instrs, range->hi_ninstrs);
}

/* Forget the sample of an earlier drain of the inner side. */
void
gpujoin_spill_range_reset(GpuJoinState *gjs)
{
	if (gjs->range_sample != NULL)
		pfree(gjs->range_sample);
	gjs->range_sample = NULL;
	gjs->range_nsample = 0;
	gjs->range_maxsample = 0;
}

/*
 * The inner buffer is about to be written as a chunk: keep up to
 * SAMPLE_PER_CHUNK of its keys, evenly spaced (MAX_SAMPLE in all).
 */
void
gpujoin_spill_range_sample(GpuJoinState *gjs, HostSideBuffer *buf)
{
	const GjRangeSpec *range = &gjs->info.range;
	GjKeyColumns cols;
	int64		stride = Max(buf->nrows / SAMPLE_PER_CHUNK, 1);

	/* room for this chunk's keys: the array grows with the chunks spilled */
	if (gjs->range_nsample + SAMPLE_PER_CHUNK > gjs->range_maxsample &&
		gjs->range_maxsample < MAX_SAMPLE)
	{
		int64		want = Min(Max(gjs->range_maxsample * 2, SAMPLE_PER_CHUNK), MAX_SAMPLE);

		gjs->range_sample = gjs->range_sample == NULL ?
			MemoryContextAllocHuge(gjs->join_cxt, sizeof(int64) * want) :
			repalloc_huge(gjs->range_sample, sizeof(int64) * want);
		gjs->range_maxsample = want;
	}
	gj_host_buffer_key_columns(buf, &cols);
	for (int64 row = 0; row < buf->nrows && gjs->range_nsample < gjs->range_maxsample; row += stride)
	{
		int64		key;

		if (gj_column_key(&cols, range->inner_col, range->cls, row, &key))
			gjs->range_sample[gjs->range_nsample++] = key;
	}
}

/*
 * Cut the sampled key space into about nparts ranges: spill->cuts, each
 * cut distinct and above the smallest key sampled.  Returns the number of
 * cuts (0: one range, no partitioning worth it).
 */
int
gpujoin_spill_range_cuts(GpuJoinState *gjs, GjSpillFile *spill, int nparts)
{
	if (gjs->range_nsample == 0 || nparts < 2)
		return 0;
	spill->cuts = MemoryContextAlloc(spill->cxt, sizeof(int64) * nparts);
	spill->ncuts = gpujoin_quantile_cuts(gjs->range_sample, gjs->range_nsample, nparts,
										 spill->cuts);
	gpujoin_spill_range_reset(gjs);
	return spill->ncuts;
}

/* Number of cuts <= key: the range of a key. */
static inline int
key_range(const GjSpillFile *spill, int64 key)
{
	return (int) gj_upper_bound(spill->cuts, 0, spill->ncuts, key);
}

/*
 * Each row's partitions of the buffer about to be written to *spill (cut
 * by *cuts, the inner side's): first[row] .. last[row], none when
 * first[row] > last[row].  An inner row with a NULL key goes to the NULL
 * partition, the last.  Returns the number of copies written.
 */
int64
gpujoin_spill_range_rows(GpuJoinState *gjs, HostSideBuffer *buf, bool outer,
						 const GjSpillFile *cuts, uint16 *first, uint16 *last)
{
	const GjRangeSpec *range = &gjs->info.range;
	int			null_part = cuts->ncuts + 1;
	GjKeyColumns cols;
	int64		copies = 0;

	gj_host_buffer_key_columns(buf, &cols);
	for (int64 row = 0; row < buf->nrows; row++)
	{
		if ((row & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
		if (!outer)
		{
			int64		key;

			first[row] = last[row] =
				gj_column_key(&cols, range->inner_col, range->cls, row, &key) ?
				key_range(cuts, key) : null_part;
			copies++;
		}
		else
		{
			int64		lo = 0,
						hi = 0;
			int			s_lo = gj_range_bound(range, &cols, row, false, &lo);
			int			s_hi = gj_range_bound(range, &cols, row, true, &hi);

			switch (gj_range_status(s_lo, s_hi, lo, hi))
			{
				case GJ_OUTER_EMPTY:
					first[row] = PG_UINT16_MAX;		/* matches nothing */
					last[row] = 0;
					continue;
				case GJ_OUTER_ALL:
					/* the host sees its pairs with every inner row */
					first[row] = 0;
					last[row] = cuts->ncuts;
					break;
				default:
					first[row] = key_range(cuts, lo);
					last[row] = key_range(cuts, hi);
					break;
			}
			copies += last[row] - first[row] + 1;
		}
	}
	return copies;
}

/* Would an outer chunk with this many copies of its rows be cut by range? */
bool
gpujoin_spill_range_span_ok(int64 copies, int64 nrows)
{
	return copies <= MAX_OUTER_SPAN * Max(nrows, 1);
}

/*
 * Cut by the outer side (LEFT, SEMI, ANTI): each outer row's one range, that
 * of its lower bound, and the largest upper bound of each range's rows kept
 * in max_hi (ncuts + 1 of them), from which the inner rows are copied later
 * (gpujoin_spill_range_inner_spans).  A row whose bounds are empty matches
 * nothing: the NULL partition, where it only comes out unmatched.  A row
 * whose bounds need the host goes to range 0, which then takes every inner
 * row.
 */
void
gpujoin_spill_range_outer_rows(GpuJoinState *gjs, HostSideBuffer *buf,
							   const GjSpillFile *cuts, int64 *max_hi, uint16 *part)
{
	const GjRangeSpec *range = &gjs->info.range;
	GjKeyColumns cols;

	gj_host_buffer_key_columns(buf, &cols);
	for (int64 row = 0; row < buf->nrows; row++)
	{
		int64		lo = 0,
					hi = 0;
		int			s_lo,
					s_hi;
		int			p;

		if ((row & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
		s_lo = gj_range_bound(range, &cols, row, false, &lo);
		s_hi = gj_range_bound(range, &cols, row, true, &hi);
		switch (gj_range_status(s_lo, s_hi, lo, hi))
		{
			case GJ_OUTER_EMPTY:
				part[row] = cuts->ncuts + 1;
				break;
			case GJ_OUTER_ALL:
				part[row] = 0;
				max_hi[0] = PG_INT64_MAX;
				break;
			default:
				p = key_range(cuts, lo);
				part[row] = p;
				max_hi[p] = Max(max_hi[p], hi);
				break;
		}
	}
}

/*
 * The ranges [first, last] an inner key is copied into when the outer side
 * was cut (LEFT, SEMI, ANTI): every range up to its own whose outer rows
 * reach it, from reach[p] = the largest max_hi of ranges 0..p (rising, so a
 * binary search finds the first).  False when no outer row reaches it.
 */
static bool
inner_span(const GjSpillFile *cuts, const int64 *reach, int64 key, int *first, int *last)
{
	int			own = key_range(cuts, key);

	*first = (int) gj_lower_bound(reach, 0, own + 1, key);
	*last = own;
	return *first <= own;
}

/* reach[p]: the largest upper bound of the outer rows of ranges 0..p. */
static int64 *
range_reach(const GjSpillFile *cuts, const int64 *max_hi)
{
	int64	   *reach = palloc(sizeof(int64) * (cuts->ncuts + 1));

	for (int p = 0; p <= cuts->ncuts; p++)
		reach[p] = p == 0 ? max_hi[0] : Max(reach[p - 1], max_hi[p]);
	return reach;
}

/*
 * Would copying the inner rows into the ranges their outer rows reach copy
 * each into at most MAX_OUTER_SPAN ranges on average?  The ranges hold
 * about as many inner rows each (they are quantiles), so the average over
 * the ranges' lower ends is the estimate.
 */
bool
gpujoin_spill_range_inner_span_ok(const GjSpillFile *cuts, const int64 *max_hi)
{
	int64	   *reach = range_reach(cuts, max_hi);
	int64		copies = 0;

	for (int p = 0; p <= cuts->ncuts; p++)
	{
		int			first,
					last;
		int64		key = p == 0 ? cuts->cuts[0] - 1 : cuts->cuts[p - 1];

		if (inner_span(cuts, reach, key, &first, &last))
			copies += last - first + 1;
	}
	pfree(reach);
	return copies <= (int64) MAX_OUTER_SPAN * (cuts->ncuts + 1);
}

/*
 * Each inner row's ranges when the outer side was cut: first[row] ..
 * last[row] (none when first > last: no outer row can match it, and a LEFT,
 * SEMI or ANTI join never emits an unmatched inner row); a NULL key goes to
 * the NULL partition, which joins nothing.
 */
void
gpujoin_spill_range_inner_spans(GpuJoinState *gjs, HostSideBuffer *buf,
								const GjSpillFile *cuts, const int64 *max_hi,
								uint16 *first, uint16 *last)
{
	const GjRangeSpec *range = &gjs->info.range;
	int64	   *reach = range_reach(cuts, max_hi);
	GjKeyColumns cols;

	gj_host_buffer_key_columns(buf, &cols);
	for (int64 row = 0; row < buf->nrows; row++)
	{
		int64		key;
		int			f,
					l;

		if ((row & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
		if (!gj_column_key(&cols, range->inner_col, range->cls, row, &key))
			f = l = cuts->ncuts + 1;
		else if (!inner_span(cuts, reach, key, &f, &l))
		{
			f = PG_UINT16_MAX;
			l = 0;
		}
		first[row] = (uint16) f;
		last[row] = (uint16) l;
	}
	pfree(reach);
}

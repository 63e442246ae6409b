/*-------------------------------------------------------------------------
 *
 * gpujoin_spill_range.c
 *	  The key ranges a sort-merge join's spill is cut into, as a hash
 *	  join's is cut by hash (gpujoin_spill.c): which joins qualify, the cut
 *	  points, and each row's partitions.
 *
 * The inner side is drained first, into chunks as any spill, and a sample
 * of its keys is kept as each chunk is written.  Once it is drained, cut
 * points at quantiles of the sample (each a distinct key, so a hot key
 * stays in one partition) split its key space into ranges of about half
 * its share of gpujoin.max_host_memory each, and the inner chunks are
 * rewritten a chunk per range (gpujoin_spill.c's rewrite_inner), the rows
 * with a NULL key in a partition of their own.  The outer side is then
 * drained into the same ranges: an outer row goes to every range its bounds
 * [lo(o), hi(o)] touch (a band row near a cut to two), to all of them when
 * its bounds need the host (an overflow), and to none when they are empty
 * (a NULL key or bound: it cannot match).  Partition i of the outer side is
 * joined with partition i of the inner side only, so each side is read
 * once; the inner ranges are disjoint, so every matching pair is found in
 * exactly one partition.
 *
 * An outer row in several partitions has a match flag in each, so the join
 * types whose outer rows' flags decide what comes out (LEFT, FULL, SEMI,
 * ANTI) keep the block nested loop; INNER and RIGHT (the inner rows are in
 * one partition each) and the aggregates over them are cut by range.  So
 * are only keys and bounds whose device values are those of the drain
 * (integers, dates, timestamps, floats; not numeric, whose fixed point is
 * chosen per chunk pair), and bands bounded on both sides (a one-sided
 * bound would copy each outer row into half the partitions).  An outer side
 * whose first chunk's rows touch more than MAX_OUTER_SPAN ranges each on
 * average (a wide band) is written unpartitioned, and the join goes back to
 * the block nested loop over the chunks.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "gpujoin.h"
#include "custom_scan/gpujoin_exec.h"
#include "kernels/shared/gj_keys.h"

/* Inner keys sampled from each spilled chunk, and at most in all. */
#define SAMPLE_PER_CHUNK	4096
#define MAX_SAMPLE			(1024 * 1024)

/*
 * The most ranges an outer row is written to on average before the outer
 * side is left unpartitioned: each copy is written and read once more.
 */
#define MAX_OUTER_SPAN		4

static int
cmp_int64(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return x < y ? -1 : x > y ? 1 : 0;
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
 * both sides, over keys exact at drain time, whose outer rows' flags do not
 * decide what comes out (see the file's header).
 */
bool
gpujoin_spill_range_eligible(GpuJoinState *gjs)
{
	const GjRangeSpec *range = &gjs->info.range;

	if (!gpujoin_spill_by_range || gjs->info.algorithm != GJ_ALGO_SORTMERGE)
		return false;
	if (gjs->fill_outer || gjs->once_per_outer)
		return false;
	if (range->lo_ninstrs == 0 || range->hi_ninstrs == 0)
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

	if (gjs->range_sample == NULL)
		gjs->range_sample = MemoryContextAllocHuge(gjs->join_cxt, sizeof(int64) * MAX_SAMPLE);
	gj_host_buffer_key_columns(buf, &cols);
	for (int64 row = 0; row < buf->nrows && gjs->range_nsample < MAX_SAMPLE; row += stride)
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
	int64		n = gjs->range_nsample;
	int64	   *sample = gjs->range_sample;
	int			ncuts = 0;

	if (n == 0 || nparts < 2)
		return 0;
	qsort(sample, n, sizeof(int64), cmp_int64);
	spill->cuts = MemoryContextAlloc(spill->cxt, sizeof(int64) * nparts);
	for (int p = 1; p < nparts; p++)
	{
		int64		cut = sample[(int64) p * n / nparts];

		if (ncuts == 0 ? cut > sample[0] : cut > spill->cuts[ncuts - 1])
			spill->cuts[ncuts++] = cut;
	}
	spill->ncuts = ncuts;
	gpujoin_spill_range_reset(gjs);
	return ncuts;
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

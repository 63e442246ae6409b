/*-------------------------------------------------------------------------
 *
 * spill.c
 *	  Joins whose inputs outgrow gpujoin.max_host_memory: the drain spills
 *	  them to temporary files in chunks, and the join runs as a block nested
 *	  loop over the chunks, chunk pair by chunk pair.
 *
 * While a side is drained (side_drain.c), its host buffer may hold its
 * share of gpujoin.max_host_memory: half of it for the inner side, drained
 * first, and what the inner side leaves (at least a quarter) for the outer
 * one.  Past its share, the rows drained so far are written to the side's
 * temporary file as one chunk (host_chunking/spill_files.c) and the
 * buffer starts empty again; at the end of the drain the last rows are
 * written too, so a spilled side is wholly in its file.  A side within its
 * share stays in memory, as one chunk; a join where neither side spilled is
 * the ordinary join, untouched by this file.
 *
 * A spilled join then reads each outer chunk into the outer buffer and,
 * for it, each inner chunk into the inner buffer, and joins the pair as an
 * ordinary join of two buffers: keys encoded for the pair, tiles planned,
 * the backend opened (gpujoin_open_pair), steps run and rows emitted by
 * the node's own state machine, which comes back here
 * (GJ_PHASE_NEXT_CHUNK) after the pair's last tile.  Every (outer, inner)
 * pair of rows is in exactly one chunk pair, so every match is found once.
 *
 * Join types: an outer chunk meets every inner chunk before the next outer
 * chunk is read, so the outer rows' match flags (LEFT, FULL, ANTI, SEMI)
 * are those of the chunk, cleared when it is read, and its unmatched rows
 * are emitted once it has met the last inner chunk.  The inner rows' flags
 * (RIGHT, FULL) are kept per inner chunk for the whole join, a bit per row,
 * and the unmatched inner rows emitted chunk by chunk after the last outer
 * chunk.  The aggregate node (without GROUP BY) adds every pair's partials
 * into one total, which is the same over any split of the pairs.
 *
 * Hash joins (GJ_ALGO_HASH) whose equality keys have a device value per
 * PostgreSQL value -- integers, oids, dates, timestamps, and floats, whose
 * order key (gj_float_order_key) makes -0.0 equal 0.0 and every NaN equal,
 * as float8eq does -- spill partitioned instead, as Hash Join's batches:
 * each drained chunk is written as one chunk per hash partition of its rows
 * (a hash of the equality keys taken from gj_equi_hash, its low bits where
 * device partitions use the top ones), and rows with a NULL key go to a
 * partition of their own.  When both sides spilled so, partition i of the
 * outer side is joined with partition i of the inner side only: a row can
 * only match within its partition, so the match flags of every join type
 * are per partition, and each side is read once.  A side's partition that
 * fits its share is read as one load; one that does not is read chunk by
 * chunk, a block nested loop within the partition.  The NULL partition
 * opens no pair: its rows only come out unmatched (LEFT, RIGHT, FULL,
 * ANTI).  Sort-merge joins spill by key range the same way
 * (spill_range.c: the inner side cut after its drain, from a
 * sample of its keys, and written again by range).  Every other case keeps
 * the block nested loop over the chunks:
 * other algorithms, numeric keys (their fixed point is chosen per chunk
 * pair, so equal values need not have equal device values at drain time),
 * hashed keys (text, uuid, ...), intervals, time with time zone, and a
 * join where only one side spilled (the other in memory is read once
 * anyway).
 *
 * A rescan keeps a side's file when the side's parameters did not change
 * (its chunks are read again), and removes it when the side is drained
 * again.  The files belong to the query's resource owner: an ERROR or a
 * cancel removes them; the node's End closes them.
 *
 * Opening a chunk pair and releasing the last pair's backend are the
 * executor's, which is above this file (host_chunking/staging.h): they are
 * called through gjs->staging.
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

/* The smallest share of the limit the outer side is given. */
#define MIN_OUTER_SHARE_DIVISOR		4

/* Hash partitions of a partitioned spill, chosen from the planner's estimate. */
#define MIN_SPILL_PARTITIONS		8
#define MAX_SPILL_PARTITIONS		256

/*
 * What the join reads at a time from one side: loads (sets of chunks read
 * into the buffer together), grouped by partition.  Group g's loads are
 * group_start[g] .. group_start[g + 1] - 1; load i is chunks
 * chunk_ids[load_start[i] .. load_start[i + 1] - 1] (none: a side in
 * memory).
 */
struct GjSpillLoads
{
	int			nloads;
	int		   *load_start;
	int		   *chunk_ids;
	int		   *group_start;
};

static inline GjSpillFile *
side_spill(GpuJoinState *gjs, int side)
{
	return side == GJ_SIDE_OUTER ? &gjs->outer_spill : &gjs->inner_spill;
}

static inline HostSideBuffer *
side_buffer(GpuJoinState *gjs, int side)
{
	return side == GJ_SIDE_OUTER ? &gjs->outer_buf : &gjs->inner_buf;
}

/*
 * The hash partitions (not counting the NULL one) a spill of this join is
 * cut into, or 0 when it keeps the block nested loop: about four times the
 * inner side's estimated size over its share, a power of two.
 */
static int
spill_hash_partitions(GpuJoinState *gjs)
{
	const GjEquiSpec *equi = &gjs->info.equi;
	/* an inner side drained in parallel: the whole one's estimate */
	Plan	   *inner_plan = gjs->inner_whole_ps != NULL ? gjs->inner_whole_ps->plan :
		gjs->inner_ps->plan;
	double		share = Max((double) gpujoin_max_host_memory_kb * 1024 / 2, 1);
	double		bytes;
	int			nparts = MIN_SPILL_PARTITIONS;
	int			k;

	if (gjs->info.algorithm != GJ_ALGO_HASH || equi->nkeys <= 0)
		return 0;
	for (k = 0; k < equi->nkeys; k++)
	{
		const HostKeyColumn *o = &gjs->outer_buf.keys[equi->outer_cols[k]];
		const HostKeyColumn *i = &gjs->inner_buf.keys[equi->inner_cols[k]];

		if (!gpujoin_spill_key_partitionable(o) || !gpujoin_spill_key_partitionable(i) ||
			gj_type_class(o->type) != equi->cls[k] || gj_type_class(i->type) != equi->cls[k])
			return 0;
	}
	bytes = inner_plan->plan_rows * (inner_plan->plan_width + sizeof(int64) * 2);
	while (nparts < MAX_SPILL_PARTITIONS && nparts * share < 4 * bytes)
		nparts *= 2;
	return nparts;
}

/*
 * HostSideBuffer.spill of a side spilled by partition: each row's
 * partition, from the hash of its equality keys (the last one for a NULL
 * key), or the key ranges of the inner side's cuts its key or bounds fall
 * in (spill_range.c); then a chunk per partition.
 */
static void
spill_partitioned(GpuJoinState *gjs, HostSideBuffer *buf, GjSpillFile *spill, bool outer)
{
	const GjEquiSpec *equi = &gjs->info.equi;
	int			nhash = spill->npartitions - 1;
	uint16	   *part = palloc_extended(sizeof(uint16) * Max(buf->nrows, 1), MCXT_ALLOC_HUGE);
	GjKeyColumns cols;
	int64		row;

	if (gjs->spill_range && gjs->spill_range_by_outer && outer)
	{
		/* each outer row in one range; the inner rows are copied later */
		gpujoin_spill_range_outer_rows(gjs, buf, &gjs->inner_spill, gjs->range_max_hi, part);
		gj_spill_file_write_partitions(spill, buf, part);
		pfree(part);
		return;
	}
	if (gjs->spill_range)
	{
		uint16	   *last = palloc_extended(sizeof(uint16) * Max(buf->nrows, 1), MCXT_ALLOC_HUGE);

		int64		copies = 0;

		if (gjs->spill_range_by_outer)
			gpujoin_spill_range_inner_spans(gjs, buf, &gjs->inner_spill, gjs->range_max_hi,
											part, last);
		else
			copies = gpujoin_spill_range_rows(gjs, buf, outer, &gjs->inner_spill, part, last);

		/*
		 * The outer side's first chunk: are its rows' bounds narrow enough
		 * to be copied into the ranges they touch?  If not (a wide band), the
		 * outer side is written unpartitioned, and the join is the block
		 * nested loop over the chunks.
		 */
		if (outer && spill->nchunks == 0 && !gpujoin_spill_range_span_ok(copies, buf->nrows))
		{
			elog(DEBUG1, "GpuJoin: the outer rows' bounds span %.1f spill ranges each; the outer side is spilled unpartitioned",
				 (double) copies / Max(buf->nrows, 1));
			spill->npartitions = 0;
			gj_spill_file_write_chunk(spill, buf);
		}
		else
			gj_spill_file_write_partition_spans(spill, buf, part, last);
		pfree(last);
		pfree(part);
		return;
	}
	gj_host_buffer_key_columns(buf, &cols);
	for (row = 0; row < buf->nrows; row++)
	{
		int64		hash;

		if (gj_equi_hash(equi, &cols, outer ? equi->outer_cols : equi->inner_cols, row, &hash))
			part[row] = (uint16) (gj_hash64((uint64) hash) % (uint64) nhash);
		else
			part[row] = (uint16) nhash;
	}
	gj_spill_file_write_partitions(spill, buf, part);
	pfree(part);
}

/*
 * HostSideBuffer.spill of a side being drained: its rows so far become a
 * chunk of its file (a chunk per partition when partitioned).
 */
static void
gpujoin_spill_chunk(HostSideBuffer *buf, void *arg)
{
	GpuJoinState *gjs = arg;
	int			side = buf == &gjs->outer_buf ? GJ_SIDE_OUTER : GJ_SIDE_INNER;
	GjSpillFile *spill = side_spill(gjs, side);
	int64		written = spill->bytes_written;

	CHECK_FOR_INTERRUPTS();
	if (gjs->spill_range && side == GJ_SIDE_INNER)
		gpujoin_spill_range_sample(gjs, buf);	/* cut once it is drained */
	if (spill->npartitions > 0)
		spill_partitioned(gjs, buf, spill, side == GJ_SIDE_OUTER);
	else
		gj_spill_file_write_chunk(spill, buf);
	gjs->counters.spill_chunks[side == GJ_SIDE_OUTER ? 0 : 1]++;
	gjs->counters.spill_bytes[side == GJ_SIDE_OUTER ? 0 : 1] += spill->bytes_written - written;
}

/*
 * Before a side is drained: let its buffer spill past the side's share of
 * gpujoin.max_host_memory, where the node can join in chunks.  Otherwise
 * the buffer raises the limit's ERROR as it always has.
 */
void
gpujoin_spill_before_drain(GpuJoinState *gjs, int side)
{
	HostSideBuffer *buf = side_buffer(gjs, side);
	int64		limit = (int64) gpujoin_max_host_memory_kb * 1024;

	if (!gjs->spill_allowed || !gpujoin_enable_spill)
	{
		buf->spill = NULL;
		if (side == GJ_SIDE_INNER)
			gjs->spill_range = false;
		return;
	}
	Assert(side_spill(gjs, side)->nchunks == 0);
	if (gjs->outer_drained_first)
	{
		/*
		 * The outer side was drained before the inner side (a shared inner
		 * side another process drained, gpujoin_drain_inputs): neither is
		 * cut by the other's partitions, and the outer side leaves the
		 * inner side its share.
		 */
		side_spill(gjs, side)->npartitions = 0;
		gjs->spill_range = false;
		buf->spill = gpujoin_spill_chunk;
		buf->spill_arg = gjs;
		buf->spill_limit = limit / 2;
		return;
	}
	/* the inner side's partitioning decides the outer side's */
	if (side == GJ_SIDE_INNER)
	{
		int			nhash = spill_hash_partitions(gjs);

		gjs->inner_spill.npartitions = nhash > 0 ? nhash + 1 : 0;
		/* key ranges: cut after the drain, from a sample of its keys */
		gpujoin_spill_range_reset(gjs);
		gjs->spill_range = nhash == 0 &&
			gpujoin_spill_range_eligible(gjs, &gjs->spill_range_by_outer);
	}
	else if (gjs->spill_range && gjs->spill_range_by_outer && gjs->inner_spill.nchunks > 0)
	{
		/* cut by the inner side's ranges, plus the NULL partition */
		int			nranges = gjs->inner_spill.ncuts + 1;

		gjs->outer_spill.npartitions = nranges + 1;
		if (gjs->range_max_hi != NULL)
			pfree(gjs->range_max_hi);
		gjs->range_max_hi = MemoryContextAlloc(gjs->join_cxt, sizeof(int64) * nranges);
		for (int p = 0; p < nranges; p++)
			gjs->range_max_hi[p] = PG_INT64_MIN;
	}
	else
		gjs->outer_spill.npartitions = gjs->inner_spill.nchunks > 0 ?
			gjs->inner_spill.npartitions : 0;
	buf->spill = gpujoin_spill_chunk;
	buf->spill_arg = gjs;
	if (side == GJ_SIDE_INNER)
		buf->spill_limit = limit / 2;
	else
	{
		/* what one inner chunk, or the whole inner side, takes meanwhile */
		int64		inner_bytes = gjs->inner_spill.nchunks > 0 ?
			gjs->inner_spill.max_chunk_bytes : gjs->inner_buf.bytes_stored;

		buf->spill_limit = Max(limit - inner_bytes, limit / MIN_OUTER_SHARE_DIVISOR);
	}
}

/* The share of gpujoin.max_host_memory one load of the side may take. */
static int64
load_share(GpuJoinState *gjs, int side)
{
	int64		limit = (int64) gpujoin_max_host_memory_kb * 1024;

	/* the inner side's drain share, and what the outer side has beside it */
	return side == GJ_SIDE_INNER ? limit / 2 :
		Max(limit - limit / 2, limit / MIN_OUTER_SHARE_DIVISOR);
}

/*
 * How many times more hash partitions the drained inner side needs: its
 * largest partition over half its share (room for uneven halves), a power
 * of two, within MAX_SPILL_PARTITIONS in all; 1 when it fits already.
 */
static int
resplit_factor(GpuJoinState *gjs)
{
	GjSpillFile *spill = &gjs->inner_spill;
	int			nhash = spill->npartitions - 1;
	int64	   *bytes = palloc0(sizeof(int64) * nhash);
	int64		largest = 0;
	int64		target = Max(load_share(gjs, GJ_SIDE_INNER) / 2, 1);
	int			factor = 1;
	int			c;

	for (c = 0; c < spill->nchunks; c++)
	{
		int			p = spill->chunks[c].partition;

		/* the NULL partition joins nothing: its size does not matter */
		if (p >= 0 && p < nhash)
		{
			bytes[p] += spill->chunks[c].bytes;
			largest = Max(largest, bytes[p]);
		}
	}
	pfree(bytes);
	if (largest <= load_share(gjs, GJ_SIDE_INNER))
		return 1;
	while (nhash * factor * 2 <= MAX_SPILL_PARTITIONS && largest / factor > target)
		factor *= 2;
	return factor;
}

/*
 * Write the drained inner side again, cut into npartitions partitions
 * (spill_partitioned: by hash, or by the key ranges of its cuts): every
 * chunk is read back, a share at a time so that the new chunks are large,
 * and written to a new file.  Costs one more pass over the inner side,
 * before the outer side is drained into as many partitions.  Returns the
 * bytes written.
 */
static int64
rewrite_inner(GpuJoinState *gjs, int npartitions)
{
	GjSpillFile *old = &gjs->inner_spill;
	GjSpillFile fresh;
	int64		share = load_share(gjs, GJ_SIDE_INNER);
	int		   *batch = palloc(sizeof(int) * Max(old->nchunks, 1));
	int			nbatch = 0;
	int64		batch_bytes = 0;
	int			load_id = 0;
	int			c;

	gj_spill_file_init(&fresh, old->cxt);
	fresh.npartitions = npartitions;
	for (c = 0; c <= old->nchunks; c++)
	{
		if (c == old->nchunks ||
			(nbatch > 0 && batch_bytes + old->chunks[c].bytes > share))
		{
			CHECK_FOR_INTERRUPTS();
			gj_spill_file_read_chunks(old, batch, nbatch, load_id++, &gjs->inner_buf);
			spill_partitioned(gjs, &gjs->inner_buf, &fresh, false);
			nbatch = 0;
			batch_bytes = 0;
		}
		if (c < old->nchunks)
		{
			batch[nbatch++] = c;
			batch_bytes += old->chunks[c].bytes;
		}
	}
	pfree(batch);
	/* the key ranges, if cut so, are the new file's */
	fresh.cuts = old->cuts;
	fresh.ncuts = old->ncuts;
	old->cuts = NULL;
	gj_spill_file_close(old);
	*old = fresh;
	gjs->counters.spill_chunks[1] += fresh.nchunks;
	gjs->counters.spill_bytes[1] += fresh.bytes_written;
	return fresh.bytes_written;
}

/*
 * The inner side, drained and spilled by hash partition, has a partition
 * larger than its share: the planner's estimate of its size, from which
 * the partitions were counted (spill_hash_partitions), was too low.  Before
 * the outer side is drained, cut it again into factor times as many
 * partitions, as Hash Join raises its number of batches, by the same hash
 * with more of its bits.  A row of old partition p goes to one of
 * p, p + nhash, p + 2 nhash, ... (nhash and the factor are powers of two).
 * A hot key's rows stay in one partition however it is cut, and are read
 * chunk by chunk as before.
 */
static void
resplit_inner(GpuJoinState *gjs, int factor)
{
	int			nhash = gjs->inner_spill.npartitions - 1;

	(void) rewrite_inner(gjs, nhash * factor + 1);
	gjs->counters.spill_partitions_planned = nhash;
}

/*
 * The inner side of a sort-merge join spilled whole, with a sample of its
 * keys: cut it into key ranges of about half its share each
 * (spill_range.c), at most MAX_SPILL_PARTITIONS, and write it
 * again by range.  With a single range (one key, or a tiny side) the spill
 * stays the block nested loop's.
 */
static void
range_split_inner(GpuJoinState *gjs)
{
	GjSpillFile *spill = &gjs->inner_spill;
	int64		target = Max(load_share(gjs, GJ_SIDE_INNER) / 2, 1);
	int64		bytes = 0;
	int64		nparts;
	int			c;

	for (c = 0; c < spill->nchunks; c++)
		bytes += spill->chunks[c].bytes;
	nparts = Min((bytes + target - 1) / target, MAX_SPILL_PARTITIONS);
	if (gpujoin_spill_range_cuts(gjs, spill, (int) nparts) == 0)
	{
		gjs->spill_range = false;
		return;
	}
	/* cut by the outer side: the inner rows are copied once it is drained */
	if (!gjs->spill_range_by_outer)
		(void) rewrite_inner(gjs, spill->ncuts + 2);
}

/*
 * After the outer side's drain, cut by the inner side's ranges (LEFT, SEMI,
 * ANTI): write the inner side again, each row into the ranges whose outer
 * rows reach its key.  Where that would copy the inner rows into too many
 * ranges (a wide band), the inner side stays in its chunks, and the join is
 * the block nested loop over the chunks: the outer rows are in one range
 * each, so that is still every pair once.
 */
static void
range_copy_inner(GpuJoinState *gjs)
{
	if (gjs->inner_spill.npartitions != 0)
		return;					/* already cut: kept from an earlier execution */
	if (!gpujoin_spill_range_inner_span_ok(&gjs->inner_spill, gjs->range_max_hi))
	{
		elog(DEBUG1, "GpuJoin: the outer rows' bounds reach too many spill ranges; the inner side stays unpartitioned");
		return;
	}
	(void) rewrite_inner(gjs, gjs->outer_spill.npartitions);
}

/*
 * After a side's drain: a side that spilled writes its last rows too, so
 * that all of it is in its file; one that did not stays in memory.  An
 * inner side spilled by partition whose partitions came out larger than
 * its share is cut into more (resplit_inner).
 */
void
gpujoin_spill_after_drain(GpuJoinState *gjs, int side)
{
	HostSideBuffer *buf = side_buffer(gjs, side);
	GjSpillFile *spill = side_spill(gjs, side);

	if (buf->spill != NULL && spill->nchunks > 0 && buf->nrows > 0)
		gpujoin_spill_chunk(buf, gjs);
	buf->spill = NULL;
	if (side != GJ_SIDE_INNER)
	{
		if (gjs->spill_range && gjs->spill_range_by_outer && spill->nchunks > 0 &&
			spill->npartitions > 0)
			range_copy_inner(gjs);
		return;
	}
	gjs->counters.spill_partitions_planned = 0;
	if (gjs->spill_range)
	{
		if (spill->nchunks > 0)
			range_split_inner(gjs);
		else
			gjs->spill_range = false;	/* in memory: nothing to cut */
		gpujoin_spill_range_reset(gjs);
	}
	if (spill->nchunks > 0 && spill->npartitions > 1 && !gjs->spill_range &&
		gpujoin_spill_resplit)
	{
		int			factor = resplit_factor(gjs);

		if (factor > 1)
			resplit_inner(gjs, factor);
	}
}

/*
 * The side's loads, grouped into ngroups groups (1: the block nested loop
 * over every load; else one per partition).  A side in memory is one load
 * of no chunk; an unpartitioned file, a load per chunk; a partitioned file,
 * per partition one load of all its chunks if they fit the side's share,
 * else a load per chunk.
 */
static GjSpillLoads *
build_loads(GpuJoinState *gjs, int side, int ngroups)
{
	GjSpillFile *spill = side_spill(gjs, side);
	GjSpillLoads *loads = MemoryContextAllocZero(gjs->join_cxt, sizeof(GjSpillLoads));
	int			nparts = spill->npartitions > 0 ? spill->npartitions : 1;
	int			maxloads = Max(spill->nchunks, 1);
	int			nchunk_ids = 0;
	int			p;

	Assert(ngroups == 1 || ngroups == nparts);
	loads->load_start = MemoryContextAlloc(gjs->join_cxt, sizeof(int) * (maxloads + 1));
	loads->chunk_ids = MemoryContextAlloc(gjs->join_cxt, sizeof(int) * maxloads);
	loads->group_start = MemoryContextAllocZero(gjs->join_cxt, sizeof(int) * (ngroups + 1));
	if (spill->nchunks == 0)
	{
		Assert(ngroups == 1);
		loads->load_start[0] = loads->load_start[1] = 0;
		loads->nloads = 1;
		loads->group_start[1] = 1;
		return loads;
	}
	for (p = 0; p < nparts; p++)
	{
		int64		bytes = 0;
		int			first = nchunk_ids;
		int			c;

		for (c = 0; c < spill->nchunks; c++)
		{
			if (spill->npartitions > 0 && spill->chunks[c].partition != p)
				continue;
			loads->chunk_ids[nchunk_ids++] = c;
			bytes += spill->chunks[c].bytes;
		}
		if (spill->npartitions > 0 && nchunk_ids > first &&
			bytes <= load_share(gjs, side))
			loads->load_start[loads->nloads++] = first;		/* the whole partition */
		else
		{
			for (c = first; c < nchunk_ids; c++)
				loads->load_start[loads->nloads++] = c;
		}
		if (ngroups > 1)
			loads->group_start[p + 1] = loads->nloads;
	}
	loads->load_start[loads->nloads] = nchunk_ids;
	if (ngroups == 1)
		loads->group_start[1] = loads->nloads;
	return loads;
}

/* Make the side's buffer hold the given load (a side in memory has one). */
static void
load_chunk(GpuJoinState *gjs, int side, int load)
{
	GjSpillFile *spill = side_spill(gjs, side);
	GjSpillLoads *loads = gjs->spill_loads[side == GJ_SIDE_OUTER ? 0 : 1];
	int			first = loads->load_start[load];

	if (spill->nchunks == 0)
		return;
	CHECK_FOR_INTERRUPTS();
	gj_spill_file_read_chunks(spill, loads->chunk_ids + first,
							  loads->load_start[load + 1] - first, load,
							  side_buffer(gjs, side));
}

/* The loads of the current group of a side: [*first, *end). */
static inline void
group_loads(GpuJoinState *gjs, int side, int *first, int *end)
{
	GjSpillLoads *loads = gjs->spill_loads[side == GJ_SIDE_OUTER ? 0 : 1];

	*first = loads->group_start[gjs->spill_group];
	*end = loads->group_start[gjs->spill_group + 1];
}

/*
 * Read outer load number `load`, with no outer row matched yet, and go
 * back to the group's first inner load.
 */
static void
start_outer_chunk(GpuJoinState *gjs, int load)
{
	int			first,
				end;

	group_loads(gjs, GJ_SIDE_INNER, &first, &end);
	gjs->outer_chunk = load;
	gjs->inner_chunk = first - 1;
	gjs->spill_stage = GJ_SPILL_PAIRS;
	load_chunk(gjs, GJ_SIDE_OUTER, load);
	if (gjs->fill_outer || gjs->once_per_outer)
		gjs->outer_matched = gpujoin_match_flags_reset(gjs->join_cxt, gjs->outer_matched,
													   &gjs->outer_matched_bytes,
													   gjs->outer_buf.nrows);
}

/*
 * The match flags of inner load `load` (RIGHT, FULL), allocated cleared
 * at its first use of this execution.
 */
static uint8 *
inner_chunk_flags(GpuJoinState *gjs, int load)
{
	gjs->inner_matched_borrowed = true;
	if (gjs->inner_chunk_matched[load] == NULL)
		gjs->inner_chunk_matched[load] =
			MemoryContextAllocZero(gjs->join_cxt, Max((gjs->inner_buf.nrows + 7) / 8, 1));
	return gjs->inner_chunk_matched[load];
}

static void
free_loads(GjSpillLoads *loads)
{
	if (loads == NULL)
		return;
	pfree(loads->load_start);
	pfree(loads->chunk_ids);
	pfree(loads->group_start);
	pfree(loads);
}

/* The join reads by partition: both sides spilled by the same partitions. */
static inline bool
spill_partitioned_join(GpuJoinState *gjs)
{
	return gjs->outer_spill.nchunks > 0 && gjs->inner_spill.nchunks > 0 &&
		gjs->outer_spill.npartitions > 0 &&
		gjs->outer_spill.npartitions == gjs->inner_spill.npartitions;
}

/* The current group is the partition of the rows with a NULL key. */
static inline bool
null_group(GpuJoinState *gjs)
{
	return spill_partitioned_join(gjs) &&
		gjs->spill_group == gjs->outer_spill.npartitions - 1;
}

/*
 * Once both sides are drained and one of them spilled: start the join at
 * the first pair of loads.  Returns the node's next phase.
 */
GpuJoinPhase
gpujoin_spill_start(GpuJoinState *gjs)
{
	int			ngroups = spill_partitioned_join(gjs) ? gjs->outer_spill.npartitions : 1;
	int			i;

	gjs->spilled = true;
	free_loads(gjs->spill_loads[0]);
	free_loads(gjs->spill_loads[1]);
	gjs->spill_loads[0] = build_loads(gjs, GJ_SIDE_OUTER, ngroups);
	gjs->spill_loads[1] = build_loads(gjs, GJ_SIDE_INNER, ngroups);
	/* load numbers are this execution's: what the buffers hold is not */
	gjs->outer_spill.loaded = -1;
	gjs->inner_spill.loaded = -1;
	if (ngroups > 1)
		gjs->counters.spill_partitions = ngroups - 1;
	if (gjs->fill_inner)
	{
		int			n = gjs->spill_loads[1]->nloads;

		/* this execution's flags; a rescan's loads may differ */
		if (gjs->inner_chunk_matched != NULL)
		{
			for (i = 0; i < gjs->inner_chunk_flags; i++)
			{
				if (gjs->inner_chunk_matched[i] != NULL)
					pfree(gjs->inner_chunk_matched[i]);
			}
			pfree(gjs->inner_chunk_matched);
		}
		gjs->inner_chunk_matched = MemoryContextAllocZero(gjs->join_cxt, sizeof(uint8 *) * n);
		gjs->inner_chunk_flags = n;
	}
	gjs->spill_group = -1;
	gjs->spill_stage = GJ_SPILL_NEXT_GROUP;
	return gpujoin_spill_next(gjs);
}

/*
 * GJ_PHASE_NEXT_CHUNK: the current pair of loads is done (or none started
 * yet).  Open the next pair, or emit the unmatched rows of a load that is
 * finished; DONE after the last group.  Within a group (a partition, or
 * everything for the block nested loop) each outer load meets every inner
 * load, and the inner loads' unmatched rows come out after the group's last
 * outer load.  The phase returned is RUN_STEP (a pair was opened),
 * EMIT_UNMATCHED (with unmatched_pos and unmatched_end set to the load's
 * rows) or DONE.
 */
GpuJoinPhase
gpujoin_spill_next(GpuJoinState *gjs)
{
	int			first,
				end;

	/* the previous pair's backend state goes before the next is opened */
	gjs->staging->release_backend(gjs);
	for (;;)
	{
		switch (gjs->spill_stage)
		{
			case GJ_SPILL_NEXT_GROUP:
				if (++gjs->spill_group >= (spill_partitioned_join(gjs) ?
											gjs->outer_spill.npartitions : 1))
					return GJ_PHASE_DONE;
				group_loads(gjs, GJ_SIDE_OUTER, &first, &end);
				gjs->outer_chunk = first - 1;
				gjs->spill_stage = GJ_SPILL_OUTER_DONE;
				break;

			case GJ_SPILL_PAIRS:
				group_loads(gjs, GJ_SIDE_INNER, &first, &end);
				/* the NULL partition's rows match nothing */
				if (!null_group(gjs) && ++gjs->inner_chunk < end &&
					gjs->outer_buf.nrows > 0)
				{
					GpuJoinPhase phase;

					load_chunk(gjs, GJ_SIDE_INNER, gjs->inner_chunk);
					if (gjs->fill_inner)
						gjs->inner_matched = inner_chunk_flags(gjs, gjs->inner_chunk);
					gjs->counters.chunk_pairs++;
					phase = gjs->staging->open_pair(gjs);
					if (phase == GJ_PHASE_RUN_STEP)
						return phase;
					/* a side is empty: the next pair */
					Assert(phase == GJ_PHASE_NEXT_CHUNK);
					continue;
				}
				/* the outer load met every inner load of its group */
				gjs->spill_stage = GJ_SPILL_OUTER_DONE;
				if (gjs->fill_outer && gjs->outer_buf.nrows > 0)
				{
					gjs->unmatched_pos = 0;
					gjs->unmatched_end = gjs->outer_buf.nrows;
					return GJ_PHASE_EMIT_UNMATCHED;
				}
				break;

			case GJ_SPILL_OUTER_DONE:
				group_loads(gjs, GJ_SIDE_OUTER, &first, &end);
				if (gjs->outer_chunk + 1 < end)
				{
					start_outer_chunk(gjs, gjs->outer_chunk + 1);
					break;
				}
				group_loads(gjs, GJ_SIDE_INNER, &first, &end);
				gjs->spill_stage = GJ_SPILL_INNER_UNMATCHED;
				gjs->inner_chunk = first - 1;
				break;

			case GJ_SPILL_INNER_UNMATCHED:
				group_loads(gjs, GJ_SIDE_INNER, &first, &end);
				if (!gjs->fill_inner || ++gjs->inner_chunk >= end)
				{
					gjs->spill_stage = GJ_SPILL_NEXT_GROUP;
					break;
				}
				load_chunk(gjs, GJ_SIDE_INNER, gjs->inner_chunk);
				if (gjs->inner_buf.nrows == 0)
					break;
				gjs->inner_matched = inner_chunk_flags(gjs, gjs->inner_chunk);
				/* EMIT_UNMATCHED's inner rows start after the outer ones */
				gjs->unmatched_pos = gjs->outer_buf.nrows;
				gjs->unmatched_end = gjs->outer_buf.nrows + gjs->inner_buf.nrows;
				return GJ_PHASE_EMIT_UNMATCHED;
		}
	}
}

/*
 * At a rescan: a side drained again loses its file; a side that keeps its
 * rows keeps its chunks, read again from the first.
 */
void
gpujoin_spill_rescan_side(GpuJoinState *gjs, int side, bool redrain)
{
	if (redrain)
		gj_spill_file_close(side_spill(gjs, side));
}

/*
 * Is the outer side's file cut by the inner side's key ranges, its rows
 * copied into each range they touch?  Then it is joined by those ranges
 * only, and a rescan that drains the inner side again drains it again too
 * (joined with other ranges, or with an inner side in memory, the copies
 * would match twice).
 */
bool
gpujoin_spill_outer_tied_to_inner(GpuJoinState *gjs)
{
	return gjs->spill_range && gjs->outer_spill.nchunks > 0 &&
		gjs->outer_spill.npartitions > 0;
}

/*
 * Is the inner side's file cut by the outer side's rows (LEFT, SEMI, ANTI
 * by key range: each inner row copied into the ranges whose outer rows
 * reach it)?  Then a rescan that drains the outer side again drains the
 * inner side again too.
 */
bool
gpujoin_spill_inner_tied_to_outer(GpuJoinState *gjs)
{
	return gjs->spill_range && gjs->spill_range_by_outer &&
		gjs->inner_spill.nchunks > 0 && gjs->inner_spill.npartitions > 0;
}

/* EndCustomScan: close and remove the files. */
void
gpujoin_spill_end(GpuJoinState *gjs)
{
	gj_spill_file_close(&gjs->outer_spill);
	gj_spill_file_close(&gjs->inner_spill);
}

/* EXPLAIN ANALYZE of a join that spilled: its chunks and bytes written. */
void
gpujoin_spill_explain(GpuJoinState *gjs, const GpuJoinCounters *c, ExplainState *es)
{
	if (c->spill_chunks[0] + c->spill_chunks[1] == 0)
		return;
	ExplainPropertyInteger("Outer Chunks Spilled", NULL, c->spill_chunks[0], es);
	ExplainPropertyInteger("Inner Chunks Spilled", NULL, c->spill_chunks[1], es);
	if (c->spill_partitions > 0)
	{
		ExplainPropertyInteger("Spill Partitions", NULL, c->spill_partitions, es);
		/* a hash join's spill is cut by hash, a sort-merge join's by key range */
		ExplainPropertyText("Spill Partitioned By",
							gjs->info.algorithm == GJ_ALGO_SORTMERGE ? "key range" : "hash", es);
	}
	if (c->spill_partitions_planned > 0)
		ExplainPropertyInteger("Spill Partitions Planned", NULL, c->spill_partitions_planned, es);
	ExplainPropertyInteger("Chunk Pairs", NULL, c->chunk_pairs, es);
	ExplainPropertyInteger("Bytes Spilled", "kB",
						   (c->spill_bytes[0] + c->spill_bytes[1] + 1023) / 1024, es);
}

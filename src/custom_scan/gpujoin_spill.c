/*-------------------------------------------------------------------------
 *
 * gpujoin_spill.c
 *	  Joins whose inputs outgrow gpujoin.max_host_memory: the drain spills
 *	  them to temporary files in chunks, and the join runs as a block nested
 *	  loop over the chunks, chunk pair by chunk pair.
 *
 * While a side is drained (gpujoin_open.c), its host buffer may hold its
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
 * A rescan keeps a side's file when the side's parameters did not change
 * (its chunks are read again), and removes it when the side is drained
 * again.  The files belong to the query's resource owner: an ERROR or a
 * cancel removes them; the node's End closes them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/explain.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "gpujoin.h"
#include "custom_scan/gpujoin_exec.h"

/* The smallest share of the limit the outer side is given. */
#define MIN_OUTER_SHARE_DIVISOR		4

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
 * HostSideBuffer.spill of a side being drained: its rows so far become a
 * chunk of its file.
 */
static void
gpujoin_spill_chunk(HostSideBuffer *buf, void *arg)
{
	GpuJoinState *gjs = arg;
	int			side = buf == &gjs->outer_buf ? GJ_SIDE_OUTER : GJ_SIDE_INNER;
	GjSpillFile *spill = side_spill(gjs, side);
	int64		written = spill->bytes_written;

	CHECK_FOR_INTERRUPTS();
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
		return;
	}
	Assert(side_spill(gjs, side)->nchunks == 0);
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

/*
 * After a side's drain: a side that spilled writes its last rows too, so
 * that all of it is in its file; one that did not stays in memory.
 */
void
gpujoin_spill_after_drain(GpuJoinState *gjs, int side)
{
	HostSideBuffer *buf = side_buffer(gjs, side);

	if (buf->spill != NULL && side_spill(gjs, side)->nchunks > 0 && buf->nrows > 0)
		gpujoin_spill_chunk(buf, gjs);
	buf->spill = NULL;
}

/* Chunks of a side: those in its file, or the one in memory. */
static inline int
side_chunks(GpuJoinState *gjs, int side)
{
	GjSpillFile *spill = side_spill(gjs, side);

	return spill->nchunks > 0 ? spill->nchunks : 1;
}

/* Make the side's buffer hold the given chunk (a side in memory has one). */
static void
load_chunk(GpuJoinState *gjs, int side, int chunk)
{
	GjSpillFile *spill = side_spill(gjs, side);

	if (spill->nchunks == 0)
		return;
	CHECK_FOR_INTERRUPTS();
	gj_spill_file_read_chunk(spill, chunk, side_buffer(gjs, side));
}

/*
 * Read outer chunk number `chunk`, with no outer row matched yet, and go
 * back to the first inner chunk.
 */
static void
start_outer_chunk(GpuJoinState *gjs, int chunk)
{
	gjs->outer_chunk = chunk;
	gjs->inner_chunk = -1;
	gjs->spill_stage = GJ_SPILL_PAIRS;
	load_chunk(gjs, GJ_SIDE_OUTER, chunk);
	if (gjs->fill_outer || gjs->once_per_outer)
		gjs->outer_matched = gpujoin_match_flags_reset(gjs->join_cxt, gjs->outer_matched,
													   &gjs->outer_matched_bytes,
													   gjs->outer_buf.nrows);
}

/*
 * The match flags of inner chunk `chunk` (RIGHT, FULL), allocated cleared
 * at its first use of this execution.
 */
static uint8 *
inner_chunk_flags(GpuJoinState *gjs, int chunk)
{
	gjs->inner_matched_borrowed = true;
	if (gjs->inner_chunk_matched[chunk] == NULL)
		gjs->inner_chunk_matched[chunk] =
			MemoryContextAllocZero(gjs->join_cxt, Max((gjs->inner_buf.nrows + 7) / 8, 1));
	return gjs->inner_chunk_matched[chunk];
}

/*
 * Once both sides are drained and one of them spilled: start the join at
 * the first chunk pair.  Returns the node's next phase.
 */
GpuJoinPhase
gpujoin_spill_start(GpuJoinState *gjs)
{
	int			i;

	gjs->spilled = true;
	if (gjs->fill_inner)
	{
		int			n = side_chunks(gjs, GJ_SIDE_INNER);

		/* this execution's flags; a rescan's chunks may differ */
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
	start_outer_chunk(gjs, 0);
	return gpujoin_spill_next(gjs);
}

/*
 * GJ_PHASE_NEXT_CHUNK: the current chunk pair is done (or none started
 * yet).  Open the next chunk pair, or emit the unmatched rows of a chunk
 * that is finished; DONE after the last.  The phase returned is RUN_STEP
 * (a pair was opened), EMIT_UNMATCHED (with unmatched_pos and
 * unmatched_end set to the chunk's rows) or DONE.
 */
GpuJoinPhase
gpujoin_spill_next(GpuJoinState *gjs)
{
	int			ninner = side_chunks(gjs, GJ_SIDE_INNER);

	/* the previous pair's backend state goes before the next is opened */
	gpujoin_release_backend(gjs);
	for (;;)
	{
		switch (gjs->spill_stage)
		{
			case GJ_SPILL_PAIRS:
				if (++gjs->inner_chunk < ninner && gjs->outer_buf.nrows > 0)
				{
					GpuJoinPhase phase;

					load_chunk(gjs, GJ_SIDE_INNER, gjs->inner_chunk);
					if (gjs->fill_inner)
						gjs->inner_matched = inner_chunk_flags(gjs, gjs->inner_chunk);
					gjs->counters.chunk_pairs++;
					phase = gpujoin_open_pair(gjs);
					if (phase == GJ_PHASE_RUN_STEP)
						return phase;
					/* a side is empty: the next pair */
					Assert(phase == GJ_PHASE_NEXT_CHUNK);
					continue;
				}
				/* the outer chunk met every inner chunk */
				gjs->spill_stage = GJ_SPILL_OUTER_DONE;
				if (gjs->fill_outer && gjs->outer_buf.nrows > 0)
				{
					gjs->unmatched_pos = 0;
					gjs->unmatched_end = gjs->outer_buf.nrows;
					return GJ_PHASE_EMIT_UNMATCHED;
				}
				break;

			case GJ_SPILL_OUTER_DONE:
				if (gjs->outer_chunk + 1 < side_chunks(gjs, GJ_SIDE_OUTER))
				{
					start_outer_chunk(gjs, gjs->outer_chunk + 1);
					break;
				}
				gjs->spill_stage = GJ_SPILL_INNER_UNMATCHED;
				gjs->inner_chunk = -1;
				break;

			case GJ_SPILL_INNER_UNMATCHED:
				if (!gjs->fill_inner || ++gjs->inner_chunk >= ninner)
					return GJ_PHASE_DONE;
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
	ExplainPropertyInteger("Chunk Pairs", NULL, c->chunk_pairs, es);
	ExplainPropertyInteger("Bytes Spilled", "kB",
						   (c->spill_bytes[0] + c->spill_bytes[1] + 1023) / 1024, es);
}

/*-------------------------------------------------------------------------
 *
 * spill_files.c
 *	  Chunks of one join input spilled to a temporary file.
 *
 * When a drain outgrows its side's share of gpujoin.max_host_memory, the
 * rows drained so far are written here as one chunk and the host buffer is
 * emptied for the next rows (host_buffers.c, HostSideBuffer.spill); the
 * executor later reads the chunks back one at a time and joins them chunk
 * pair by chunk pair (host_chunking/spill.c).
 *
 * A chunk is written in the buffer's own columnar layout, column by column,
 * so reading it back is one read per array, with no tuple to deform and no
 * key to encode again: for each stored column its null flags and either
 * its values (by value) or the lengths of its values followed by the
 * values themselves, each padded to MAXALIGN as the buffer's arena keeps
 * them (by reference); for each key column its 8-byte device values, its
 * null flags if it has any, and a numeric key's values as drained (their
 * fixed point is chosen per chunk pair, gj_host_encode_join_keys); then
 * the flags of the rows whose keys no int64 holds.
 *
 * The file is a BufFile: it counts in temp_file_limit (an ERROR past it),
 * lives in the tablespaces of temp_tablespaces, and belongs to the current
 * resource owner, which closes and removes it when the query ends with an
 * ERROR or is cancelled.  A query that ends normally closes it in the
 * node's End (gj_spill_file_close); it is never closed from a memory
 * context callback, which may run after the resource owner has already
 * closed the file.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/datum.h"
#include "utils/memutils.h"

#include "host_chunking/spill_files.h"
#include "host_chunking/key_encoding.h"

#define INITIAL_CHUNKS		16

static const char zero_padding[MAXIMUM_ALIGNOF] = {0};

void
gj_spill_file_init(GjSpillFile *spill, MemoryContext cxt)
{
	memset(spill, 0, sizeof(GjSpillFile));
	spill->cxt = cxt;
	spill->loaded = -1;
}

static inline void
spill_write(GjSpillFile *spill, const void *ptr, Size len)
{
	if (len == 0)
		return;
	BufFileWrite(spill->file, (void *) ptr, len);
	spill->bytes_written += len;
}

static inline void
spill_read(GjSpillFile *spill, void *ptr, Size len)
{
	size_t		got;

	if (len == 0)
		return;
	got = BufFileRead(spill->file, ptr, len);
	if (got != len)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read from GpuJoin temporary file: read only %zu of %zu bytes",
						got, (size_t) len)));
}

/*
 * Values by reference: their lengths (0 for NULL: no value of any type is
 * empty), then the values, each padded to MAXALIGN.
 */
static void
write_by_reference(GjSpillFile *spill, const Datum *values, const bool *col_null,
				   const uint8 *key_null, int64 nrows, int16 typlen)
{
	uint32	   *lens = palloc_extended(sizeof(uint32) * nrows, MCXT_ALLOC_HUGE);
	int64		row;

	for (row = 0; row < nrows; row++)
	{
		bool		isnull = col_null != NULL ? col_null[row] :
			(key_null != NULL && key_null[row]);

		lens[row] = isnull ? 0 : (uint32) datumGetSize(values[row], false, typlen);
	}
	spill_write(spill, lens, sizeof(uint32) * nrows);
	for (row = 0; row < nrows; row++)
	{
		if (lens[row] == 0)
			continue;
		spill_write(spill, DatumGetPointer(values[row]), lens[row]);
		spill_write(spill, zero_padding, MAXALIGN(lens[row]) - lens[row]);
	}
	pfree(lens);
}

/*
 * Read back what write_by_reference wrote: one block in the buffer's
 * context for all the values, values[] pointing into it (NULL rows get 0).
 */
static void
read_by_reference(GjSpillFile *spill, HostSideBuffer *buf, Datum *values, int64 nrows)
{
	uint32	   *lens = palloc_extended(sizeof(uint32) * nrows, MCXT_ALLOC_HUGE);
	Size		total = 0;
	char	   *block;
	int64		row;

	spill_read(spill, lens, sizeof(uint32) * nrows);
	for (row = 0; row < nrows; row++)
		total += MAXALIGN(lens[row]);
	block = MemoryContextAllocHuge(buf->cxt, Max(total, 1));
	spill_read(spill, block, total);
	for (row = 0; row < nrows; row++)
	{
		values[row] = lens[row] == 0 ? (Datum) 0 : PointerGetDatum(block);
		block += MAXALIGN(lens[row]);
	}
	pfree(lens);
}

/*
 * The elements of src at positions rows[0..n-1], packed into a new array
 * (or src itself when rows is NULL: every row, in order).
 */
static const void *
gather(const void *src, Size elsize, const int64 *rows, int64 n)
{
	char	   *dst;
	int64		i;

	if (rows == NULL || src == NULL)
		return src;
	dst = palloc_extended(Max(elsize * n, 1), MCXT_ALLOC_HUGE);
	for (i = 0; i < n; i++)
		memcpy(dst + i * elsize, (const char *) src + rows[i] * elsize, elsize);
	return dst;
}

static inline void
free_gathered(const void *copy, const void *src)
{
	if (copy != src && copy != NULL)
		pfree((void *) copy);
}

/* Room in the chunk list for one more chunk; returns it. */
static GjSpillChunk *
new_chunk(GjSpillFile *spill)
{
	if (spill->file == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(spill->cxt);

		spill->file = BufFileCreateTemp(false);
		MemoryContextSwitchTo(old);
	}
	if (spill->nchunks == spill->maxchunks)
	{
		spill->maxchunks = Max(INITIAL_CHUNKS, spill->maxchunks * 2);
		if (spill->chunks == NULL)
			spill->chunks = MemoryContextAlloc(spill->cxt, sizeof(GjSpillChunk) * spill->maxchunks);
		else
			spill->chunks = repalloc(spill->chunks, sizeof(GjSpillChunk) * spill->maxchunks);
	}
	return &spill->chunks[spill->nchunks++];
}

/*
 * Write rows[0..nrows-1] of the buffer (every row when rows is NULL) as the
 * file's next chunk, of the given partition (-1: none).  `bytes` is the host
 * memory they take.  The buffer has been drained only (gj_host_buffer_encode
 * has not run): its numeric keys' values[] are not meaningful yet.
 */
static void
write_rows(GjSpillFile *spill, HostSideBuffer *buf, const int64 *rows, int64 nrows,
		   int partition, int64 bytes)
{
	GjSpillChunk *chunk;
	int			i;

	Assert(!buf->encoded);
	if (nrows == 0)
		return;
	chunk = new_chunk(spill);

	/*
	 * A side's chunks are all written during its drain, before any is read
	 * back, so each goes where the previous one ended.  (BufFileSeek's
	 * SEEK_END would not do: it measures the file without the BufFile's
	 * buffer, whose bytes a chunk written there would overwrite.)
	 */
	Assert(spill->loaded == -1);
	BufFileTell(spill->file, &chunk->fileno, &chunk->offset);
	chunk->nrows = nrows;
	chunk->bytes = bytes;
	chunk->partition = partition;

	for (i = 0; i < buf->ncols; i++)
	{
		HostDatumColumn *col = &buf->cols[i];
		const bool *isnull = gather(col->isnull, sizeof(bool), rows, nrows);
		const Datum *values = gather(col->values, sizeof(Datum), rows, nrows);

		spill_write(spill, isnull, sizeof(bool) * nrows);
		if (col->byval)
			spill_write(spill, values, sizeof(Datum) * nrows);
		else
			write_by_reference(spill, values, isnull, NULL, nrows, col->typlen);
		free_gathered(isnull, col->isnull);
		free_gathered(values, col->values);
	}
	for (i = 0; i < buf->nkeys; i++)
	{
		HostKeyColumn *key = &buf->keys[i];
		uint8		has_nulls = key->isnull != NULL;
		const int64 *values = gather(key->values, sizeof(int64), rows, nrows);
		const uint8 *isnull = gather(key->isnull, 1, rows, nrows);

		spill_write(spill, values, sizeof(int64) * nrows);
		spill_write(spill, &has_nulls, 1);
		if (has_nulls)
			spill_write(spill, isnull, nrows);
		if (key->type == GJT_NUMERIC)
		{
			const Datum *numerics = gather(key->numerics, sizeof(Datum), rows, nrows);

			write_by_reference(spill, numerics, NULL, isnull, nrows, -1);
			free_gathered(numerics, key->numerics);
		}
		free_gathered(values, key->values);
		free_gathered(isnull, key->isnull);
	}
	{
		uint8		has_inexact = buf->drain_inexact != NULL;

		spill_write(spill, &has_inexact, 1);
		if (has_inexact)
		{
			const uint8 *inexact = gather(buf->drain_inexact, 1, rows, nrows);

			spill_write(spill, inexact, nrows);
			free_gathered(inexact, buf->drain_inexact);
		}
	}

	spill->rows += nrows;
	spill->max_chunk_bytes = Max(spill->max_chunk_bytes, chunk->bytes);
}

/* Write the buffer's rows as the file's next chunk, and empty the buffer. */
void
gj_spill_file_write_chunk(GjSpillFile *spill, HostSideBuffer *buf)
{
	write_rows(spill, buf, NULL, buf->nrows, -1, buf->bytes_stored);
	gj_host_buffer_reset(buf);
}

/*
 * Write the buffer's rows as one chunk per partition, each row to the
 * partitions first[row] .. last[row] (below spill->npartitions; none when
 * first[row] > last[row]), and empty the buffer.  A row in several
 * partitions is written to each: an outer row of a range-partitioned spill
 * whose bounds touch several key ranges.  A chunk's bytes are the
 * buffer's, shared out by rows.
 */
void
gj_spill_file_write_partition_spans(GjSpillFile *spill, HostSideBuffer *buf,
									const uint16 *first, const uint16 *last)
{
	int64		nrows = buf->nrows;
	int64	   *counts = palloc0(sizeof(int64) * (spill->npartitions + 1));
	int64	   *rows;
	int64		copies = 0;
	int64		row;
	int			p;

	Assert(spill->npartitions > 0);
	/* the rows grouped by partition, in order within each (a counting sort) */
	for (row = 0; row < nrows; row++)
	{
		for (p = first[row]; p <= last[row]; p++)
			counts[p + 1]++;
		if (first[row] <= last[row])
			copies += last[row] - first[row] + 1;
	}
	rows = palloc_extended(sizeof(int64) * Max(copies, 1), MCXT_ALLOC_HUGE);
	for (p = 0; p < spill->npartitions; p++)
		counts[p + 1] += counts[p];
	for (row = 0; row < nrows; row++)
		for (p = first[row]; p <= last[row]; p++)
			rows[counts[p]++] = row;
	/* counts[p] is now where partition p + 1 starts */
	for (p = 0; p < spill->npartitions; p++)
	{
		int64		start = p == 0 ? 0 : counts[p - 1];
		int64		n = counts[p] - start;

		CHECK_FOR_INTERRUPTS();
		write_rows(spill, buf, rows + start, n, p,
				   (int64) ((double) buf->bytes_stored * n / Max(nrows, 1)) + 1);
	}
	/* the drain's chunk: what the buffer took meanwhile (the outer share) */
	spill->max_chunk_bytes = Max(spill->max_chunk_bytes, buf->bytes_stored);
	pfree(rows);
	pfree(counts);
	gj_host_buffer_reset(buf);
}

/*
 * Write the buffer's rows as one chunk per partition (row_partition[row]
 * below spill->npartitions), and empty the buffer.
 */
void
gj_spill_file_write_partitions(GjSpillFile *spill, HostSideBuffer *buf,
							   const uint16 *row_partition)
{
	gj_spill_file_write_partition_spans(spill, buf, row_partition, row_partition);
}

/*
 * Make the buffer hold chunks[0..nchunks-1] of the file, one after the
 * other, and nothing else.  load_id names this set of chunks: asked again
 * for the same id, the buffer already holds them.  The buffer is as the
 * drain left it (complete, not encoded).
 */
void
gj_spill_file_read_chunks(GjSpillFile *spill, const int *chunks, int nchunks,
						  int load_id, HostSideBuffer *buf)
{
	int64		total = 0;
	int64		bytes = 0;
	bool		complete = buf->complete;
	int64		base = 0;
	int			c;
	int			i;
	int64		row;

	if (spill->loaded == load_id)
		return;
	spill->loaded = -1;
	gj_host_buffer_reset(buf);
	for (c = 0; c < nchunks; c++)
	{
		Assert(chunks[c] >= 0 && chunks[c] < spill->nchunks);
		total += spill->chunks[chunks[c]].nrows;
		bytes += spill->chunks[chunks[c]].bytes;
	}
	gj_host_buffer_make_room(buf, total);
	for (i = 0; i < buf->ncols; i++)
		buf->cols[i].has_nulls = false;
	for (i = 0; i < buf->nkeys; i++)
		buf->keys[i].max_scale = 0;

	for (c = 0; c < nchunks; c++)
	{
		const GjSpillChunk *chunk = &spill->chunks[chunks[c]];
		int64		nrows = chunk->nrows;

		if (BufFileSeek(spill->file, chunk->fileno, chunk->offset, SEEK_SET) != 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not seek in GpuJoin temporary file")));
		for (i = 0; i < buf->ncols; i++)
		{
			HostDatumColumn *col = &buf->cols[i];

			spill_read(spill, col->isnull + base, sizeof(bool) * nrows);
			if (col->byval)
				spill_read(spill, col->values + base, sizeof(Datum) * nrows);
			else
				read_by_reference(spill, buf, col->values + base, nrows);
			for (row = base; row < base + nrows && !col->has_nulls; row++)
				col->has_nulls = col->isnull[row];
		}
		for (i = 0; i < buf->nkeys; i++)
		{
			HostKeyColumn *key = &buf->keys[i];
			uint8		has_nulls;

			spill_read(spill, key->values + base, sizeof(int64) * nrows);
			spill_read(spill, &has_nulls, 1);
			if (has_nulls)
			{
				if (key->isnull == NULL)
					key->isnull = MemoryContextAllocZero(buf->cxt, buf->capacity);
				spill_read(spill, key->isnull + base, nrows);
			}
			if (key->type == GJT_NUMERIC)
			{
				read_by_reference(spill, buf, key->numerics + base, nrows);
				/* as append_numeric does while draining */
				for (row = base; row < base + nrows; row++)
				{
					int			scale;

					if (key->isnull != NULL && key->isnull[row])
						continue;
					scale = gj_host_numeric_min_scale(key->numerics[row]);
					if (scale >= 0 && scale <= GJ_NUMERIC_MAX_SCALE)
						key->max_scale = Max(key->max_scale, scale);
				}
			}
		}
		{
			uint8		has_inexact;

			spill_read(spill, &has_inexact, 1);
			if (has_inexact)
			{
				if (buf->drain_inexact == NULL)
					buf->drain_inexact = MemoryContextAllocZero(buf->cxt, buf->capacity);
				spill_read(spill, buf->drain_inexact + base, nrows);
			}
		}
		base += nrows;
	}
	buf->nrows = total;
	buf->bytes_stored = bytes;
	buf->complete = complete;
	spill->loaded = load_id;
}

/* Close and remove the file; the chunks are forgotten. */
void
gj_spill_file_close(GjSpillFile *spill)
{
	if (spill->file != NULL)
		BufFileClose(spill->file);
	if (spill->chunks != NULL)
		pfree(spill->chunks);
	if (spill->cuts != NULL)
		pfree(spill->cuts);
	spill->cuts = NULL;
	spill->ncuts = 0;
	spill->file = NULL;
	spill->chunks = NULL;
	spill->nchunks = 0;
	spill->maxchunks = 0;
	spill->rows = 0;
	spill->max_chunk_bytes = 0;
	spill->loaded = -1;
}

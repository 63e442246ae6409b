/*-------------------------------------------------------------------------
 *
 * spill_files.c
 *	  Chunks of one join input spilled to a temporary file.
 *
 * When a drain outgrows its side's share of gpujoin.max_host_memory, the
 * rows drained so far are written here as one chunk and the host buffer is
 * emptied for the next rows (host_buffers.c, HostSideBuffer.spill); the
 * executor later reads the chunks back one at a time and joins them chunk
 * pair by chunk pair (custom_scan/gpujoin_spill.c).
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
 * Write the buffer's rows as the file's next chunk, and empty the buffer.
 * The buffer has been drained only (gj_host_buffer_encode has not run):
 * its numeric keys' values[] are not meaningful yet.
 */
void
gj_spill_file_write_chunk(GjSpillFile *spill, HostSideBuffer *buf)
{
	int64		nrows = buf->nrows;
	GjSpillChunk *chunk;
	int			i;

	Assert(!buf->encoded);
	if (nrows == 0)
		return;
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
	chunk = &spill->chunks[spill->nchunks++];

	/*
	 * A side's chunks are all written during its drain, before any is read
	 * back, so each goes where the previous one ended.  (BufFileSeek's
	 * SEEK_END would not do: it measures the file without the BufFile's
	 * buffer, whose bytes a chunk written there would overwrite.)
	 */
	Assert(spill->loaded == -1);
	BufFileTell(spill->file, &chunk->fileno, &chunk->offset);
	chunk->nrows = nrows;
	chunk->bytes = buf->bytes_stored;

	for (i = 0; i < buf->ncols; i++)
	{
		HostDatumColumn *col = &buf->cols[i];

		spill_write(spill, col->isnull, sizeof(bool) * nrows);
		if (col->byval)
			spill_write(spill, col->values, sizeof(Datum) * nrows);
		else
			write_by_reference(spill, col->values, col->isnull, NULL, nrows, col->typlen);
	}
	for (i = 0; i < buf->nkeys; i++)
	{
		HostKeyColumn *key = &buf->keys[i];
		uint8		has_nulls = key->isnull != NULL;

		spill_write(spill, key->values, sizeof(int64) * nrows);
		spill_write(spill, &has_nulls, 1);
		if (has_nulls)
			spill_write(spill, key->isnull, nrows);
		if (key->type == GJT_NUMERIC)
			write_by_reference(spill, key->numerics, NULL, key->isnull, nrows, -1);
	}
	{
		uint8		has_inexact = buf->drain_inexact != NULL;

		spill_write(spill, &has_inexact, 1);
		if (has_inexact)
			spill_write(spill, buf->drain_inexact, nrows);
	}

	spill->rows += nrows;
	spill->max_chunk_bytes = Max(spill->max_chunk_bytes, chunk->bytes);
	gj_host_buffer_reset(buf);
}

/*
 * Make the buffer hold chunk number `chunk` of the file, and nothing else.
 * The buffer is as the drain left it (complete, not encoded).
 */
void
gj_spill_file_read_chunk(GjSpillFile *spill, int chunk, HostSideBuffer *buf)
{
	const GjSpillChunk *c = &spill->chunks[chunk];
	int64		nrows = c->nrows;
	bool		complete = buf->complete;
	int			i;
	int64		row;

	Assert(chunk >= 0 && chunk < spill->nchunks);
	if (spill->loaded == chunk)
		return;
	spill->loaded = -1;
	gj_host_buffer_reset(buf);
	if (BufFileSeek(spill->file, c->fileno, c->offset, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not seek in GpuJoin temporary file")));
	gj_host_buffer_make_room(buf, nrows);

	for (i = 0; i < buf->ncols; i++)
	{
		HostDatumColumn *col = &buf->cols[i];

		spill_read(spill, col->isnull, sizeof(bool) * nrows);
		if (col->byval)
			spill_read(spill, col->values, sizeof(Datum) * nrows);
		else
			read_by_reference(spill, buf, col->values, nrows);
		col->has_nulls = false;
		for (row = 0; row < nrows && !col->has_nulls; row++)
			col->has_nulls = col->isnull[row];
	}
	for (i = 0; i < buf->nkeys; i++)
	{
		HostKeyColumn *key = &buf->keys[i];
		uint8		has_nulls;

		spill_read(spill, key->values, sizeof(int64) * nrows);
		spill_read(spill, &has_nulls, 1);
		if (has_nulls)
		{
			key->isnull = MemoryContextAllocZero(buf->cxt, buf->capacity);
			spill_read(spill, key->isnull, nrows);
		}
		if (key->type == GJT_NUMERIC)
		{
			read_by_reference(spill, buf, key->numerics, nrows);
			/* as append_numeric does while draining */
			key->max_scale = 0;
			for (row = 0; row < nrows; row++)
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
			buf->drain_inexact = MemoryContextAllocZero(buf->cxt, buf->capacity);
			spill_read(spill, buf->drain_inexact, nrows);
		}
	}
	buf->nrows = nrows;
	buf->bytes_stored = c->bytes;
	buf->complete = complete;
	spill->loaded = chunk;
}

/* Close and remove the file; the chunks are forgotten. */
void
gj_spill_file_close(GjSpillFile *spill)
{
	if (spill->file != NULL)
		BufFileClose(spill->file);
	if (spill->chunks != NULL)
		pfree(spill->chunks);
	spill->file = NULL;
	spill->chunks = NULL;
	spill->nchunks = 0;
	spill->maxchunks = 0;
	spill->rows = 0;
	spill->max_chunk_bytes = 0;
	spill->loaded = -1;
}

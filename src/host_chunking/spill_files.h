/*-------------------------------------------------------------------------
 *
 * spill_files.h
 *	  Chunks of one join input spilled to a temporary file: a host buffer's
 *	  rows written in its own columnar layout, and read back into it one
 *	  chunk at a time.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_SPILL_FILES_H
#define GPUJOIN_SPILL_FILES_H

#include "postgres.h"

#include "storage/buffile.h"

#include "host_chunking/host_buffers.h"

/* Where one chunk starts in the file, and what it holds. */
typedef struct GjSpillChunk
{
	int			fileno;
	off_t		offset;
	int64		nrows;
	int64		bytes;			/* the buffer's bytes_stored when written */
} GjSpillChunk;

typedef struct GjSpillFile
{
	BufFile    *file;			/* NULL until the first chunk is written */
	MemoryContext cxt;			/* the BufFile and the chunk list live here */
	GjSpillChunk *chunks;
	int			nchunks;
	int			maxchunks;
	int64		rows;			/* in all chunks */
	int64		bytes_written;	/* to the file, for EXPLAIN ANALYZE */
	int64		max_chunk_bytes;	/* host memory the largest chunk takes */
	int			loaded;			/* the chunk now in the buffer, or -1 */
} GjSpillFile;

extern void gj_spill_file_init(GjSpillFile *spill, MemoryContext cxt);
extern void gj_spill_file_write_chunk(GjSpillFile *spill, HostSideBuffer *buf);
extern void gj_spill_file_read_chunk(GjSpillFile *spill, int chunk, HostSideBuffer *buf);
extern void gj_spill_file_close(GjSpillFile *spill);

#endif							/* GPUJOIN_SPILL_FILES_H */

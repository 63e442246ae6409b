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
	int64		bytes;			/* host memory its rows take */
	int			partition;		/* hash partition of its rows, or -1 */
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
	int64		max_chunk_bytes;	/* host memory the largest drained chunk took */
	int			loaded;			/* the load (chunk or unit) in the buffer, or -1 */

	/*
	 * Hash-partitioned spill (spill.c): 0 when the chunks are the
	 * drain's, else each drained chunk is written as one chunk per
	 * partition its rows fall in, npartitions of them (the last one the
	 * rows with a NULL key).
	 */
	int			npartitions;

	/*
	 * Range-partitioned spill (a sort-merge join's inner side): partition
	 * p < ncuts + 1 holds the keys in [cuts[p - 1], cuts[p]) as order keys,
	 * and npartitions is ncuts + 2 (the NULL partition last).  NULL for a
	 * hash-partitioned or unpartitioned file.
	 */
	int64	   *cuts;
	int			ncuts;
} GjSpillFile;

extern void gj_spill_file_init(GjSpillFile *spill, MemoryContext cxt);
extern void gj_spill_file_write_chunk(GjSpillFile *spill, HostSideBuffer *buf);
extern void gj_spill_file_write_partition_spans(GjSpillFile *spill, HostSideBuffer *buf,
												const uint16 *first, const uint16 *last);
extern void gj_spill_file_write_partitions(GjSpillFile *spill, HostSideBuffer *buf,
										   const uint16 *row_partition);
extern void gj_spill_file_read_chunks(GjSpillFile *spill, const int *chunks, int nchunks,
									  int load_id, HostSideBuffer *buf);
extern void gj_spill_file_close(GjSpillFile *spill);

#endif							/* GPUJOIN_SPILL_FILES_H */

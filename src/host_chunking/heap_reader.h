/*-------------------------------------------------------------------------
 *
 * heap_reader.h
 *	  The columnar heap reader: a GpuJoin input that is a Seq Scan (or a
 *	  Parallel Seq Scan) of a heap table, or an Append of such scans, is read
 *	  by the node itself, a page at a time, deforming only the columns the
 *	  join stores straight into its host buffers (heap_reader.c says how, and
 *	  what it leaves to the child plan).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_HEAP_READER_H
#define GPUJOIN_HEAP_READER_H

#include "postgres.h"

#include "nodes/execnodes.h"

#include "host_chunking/host_buffers.h"

typedef struct GjHeapReader GjHeapReader;

/* What one process read through a reader, for EXPLAIN ANALYZE. */
typedef struct GjHeapReaderCounters
{
	int64		pages;			/* heap pages read */
	int64		tuples;			/* visible tuples on them */
	int64		filtered;		/* of those, removed by the scan's quals */

	/*
	 * Where the time went, with gpujoin.time_input_parts where the scan's
	 * instrumentation times (EXPLAIN ANALYZE): taking blocks and reading
	 * pages (heapgetpage: buffer lookup, pin, visibility), decoding their
	 * tuples into the page's rows, and storing those in the host buffer
	 * (with its page faults).
	 */
	double		read_ms;
	double		decode_ms;
	double		store_ms;
} GjHeapReaderCounters;

extern GjHeapReader *gj_heap_reader_create(PlanState *child, const HostSideBuffer *buf,
										   MemoryContext cxt);
extern bool gj_heap_reader_drain(GjHeapReader *reader, HostSideBuffer *buf,
								 int64 other_side_bytes);
extern void gj_heap_reader_rescan(GjHeapReader *reader);
extern void gj_heap_reader_counters(const GjHeapReader *reader, GjHeapReaderCounters *out);
extern int	gj_heap_reader_partitions(const GjHeapReader *reader);

#endif							/* GPUJOIN_HEAP_READER_H */

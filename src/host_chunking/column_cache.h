/*-------------------------------------------------------------------------
 *
 * column_cache.h
 *	  Large column arrays of the host buffers, kept by the process across
 *	  queries (gpujoin.host_buffer_cache) so that the next drain writes into
 *	  memory whose pages are already mapped.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_COLUMN_CACHE_H
#define GPUJOIN_COLUMN_CACHE_H

#include "postgres.h"

extern void *gj_column_alloc(MemoryContext owner, Size len);
extern void *gj_column_realloc(MemoryContext owner, void *p, Size oldlen, Size len);

#endif							/* GPUJOIN_COLUMN_CACHE_H */

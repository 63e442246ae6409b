/*-------------------------------------------------------------------------
 *
 * host_buffers.h
 *	  Columnar host buffers of one join input: the stored tuples, and the key
 *	  columns the device reads, as typed arrays with null flags.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_HOST_BUFFERS_H
#define GPUJOIN_HOST_BUFFERS_H

#include "postgres.h"

#include "access/htup_details.h"
#include "executor/tuptable.h"
#include "nodes/pg_list.h"

#include "kernels/device_program.h"

typedef struct HostKeyColumn
{
	int			attno;			/* attribute of the child's tuple */
	int			type;			/* GjType */
	int64	   *values;			/* float columns hold double bits */
	uint8	   *isnull;			/* allocated at the first NULL */
} HostKeyColumn;

typedef struct HostSideBuffer
{
	MemoryContext cxt;			/* everything below lives here */
	int64		nrows;
	int64		capacity;
	MinimalTuple *tuples;
	int			nkeys;
	HostKeyColumn keys[GJ_MAX_KEY_COLS];
	int			max_key_attno;
	bool		complete;		/* the child has been drained to its end */
	/* tuples are copied into large blocks rather than one palloc each */
	char	   *arena_next;
	Size		arena_left;
	Size		tuple_bytes;
} HostSideBuffer;

extern void host_buffer_init(HostSideBuffer *buf, MemoryContext parent,
							 const char *name, List *key_attnos, List *key_types);
extern void host_buffer_append(HostSideBuffer *buf, TupleTableSlot *slot);
extern void host_buffer_reset(HostSideBuffer *buf);
extern void host_buffer_key_columns(const HostSideBuffer *buf, GjKeyColumns *out);
extern int	host_buffer_key_row_bytes(const HostSideBuffer *buf);

#endif							/* GPUJOIN_HOST_BUFFERS_H */

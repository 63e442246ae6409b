/*-------------------------------------------------------------------------
 *
 * host_buffers.h
 *	  Columnar host buffers of one join input: the columns the join returns
 *	  or tests on the host (as Datums), and the key columns the device reads
 *	  (as typed 8-byte arrays with null flags).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_HOST_BUFFERS_H
#define GPUJOIN_HOST_BUFFERS_H

#include "postgres.h"

#include "access/tupdesc.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "nodes/pg_list.h"

#include "kernels/device_program.h"

typedef struct HostKeyColumn
{
	int			attno;			/* attribute of the child's tuple */
	int			type;			/* GjType */
	int64	   *values;			/* float columns hold double bits */
	uint8	   *isnull;			/* allocated at the first NULL */
	/* a hashed column (text, uuid, ...) holds hash_fn(value, 0) as int8 */
	bool		hashed;
	Oid			hash_collation;
	FmgrInfo	hash_fn;
} HostKeyColumn;

/* A column the executor puts into the scan tuple of each joined pair. */
typedef struct HostDatumColumn
{
	int			attno;			/* attribute of the child's tuple */
	bool		byval;
	int16		typlen;
	Datum	   *values;			/* by-reference values point into the arena */
	bool	   *isnull;
	bool		has_nulls;		/* some isnull[] is true */
} HostDatumColumn;

typedef struct HostSideBuffer
{
	MemoryContext cxt;			/* everything below lives here */
	int64		nrows;
	int64		capacity;
	int			nkeys;
	HostKeyColumn keys[GJ_MAX_KEY_COLS];
	int			ncols;
	HostDatumColumn *cols;
	int			max_attno;		/* attributes to deform in each input tuple */
	bool		complete;		/* the child has been drained to its end */
	/* by-reference values are copied into large blocks, not one palloc each */
	char	   *arena_next;
	Size		arena_left;
	Size		bytes_stored;
} HostSideBuffer;

/*
 * The 8-byte device representation of a non-NULL datum of a device type:
 * integers, dates and timestamps as int64, floats as the bits of a double.
 * The planner (constants), the host buffers (key columns) and the aggregate
 * node (argument columns) all use it.
 */
static inline int64
gj_datum_to_value(Datum d, int type)
{
	switch (type)
	{
		case GJT_BOOL:
			return DatumGetBool(d) ? 1 : 0;
		case GJT_INT2:
			return DatumGetInt16(d);
		case GJT_INT4:
			return DatumGetInt32(d);
		case GJT_DATE:
			return DatumGetInt32(d);	/* DateADT */
		case GJT_FLOAT4:
			return gj_double_to_bits((double) DatumGetFloat4(d));
		case GJT_FLOAT8:
			return gj_double_to_bits(DatumGetFloat8(d));
		default:				/* int8, time, timestamp, timestamptz */
			return DatumGetInt64(d);
	}
}

extern void host_buffer_init(HostSideBuffer *buf, MemoryContext parent,
							 const char *name, List *key_attnos, List *key_types,
							 List *col_attnos, TupleDesc child_desc);
extern void host_buffer_set_key_hashes(HostSideBuffer *buf, List *hashfuncs,
									   List *collations);
extern void host_buffer_append(HostSideBuffer *buf, TupleTableSlot *slot);
extern void host_buffer_reset(HostSideBuffer *buf);
extern void host_buffer_key_columns(const HostSideBuffer *buf, GjKeyColumns *out);
extern int	host_buffer_key_row_bytes(const HostSideBuffer *buf);

#endif							/* GPUJOIN_HOST_BUFFERS_H */

/*-------------------------------------------------------------------------
 *
 * host_buffers.h
 *	  Columnar host buffers of one join input: the columns the join returns
 *	  or tests on the host (as Datums), and the key columns the device reads
 *	  (as typed 8-byte arrays with null flags).
 *
 * How a key value becomes its 8-byte device value, and which rows have no
 * exact one, is key_encoding.h's; it is included here for the files that
 * include this header for those encodings.
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

#include "host_chunking/key_encoding.h"
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

	/*
	 * A numeric column keeps its values (in the arena) until the join knows
	 * the scale of its fixed point; values[] is filled by
	 * gj_host_buffer_encode.  max_scale is the largest number of fractional
	 * digits a finite value needs, among those that need at most
	 * GJ_NUMERIC_MAX_SCALE (the others fit no int64 at the largest scale).
	 */
	Datum	   *numerics;
	int			max_scale;

	/*
	 * What the backends see as NULL: isnull plus the numerics that have no
	 * int64 at this execution's scale (gj_host_buffer_encode), or NULL to use
	 * isnull.  A value with no exact int64 is NULL to the backends, so that
	 * no pair of its row comes from the device: the host evaluates all of
	 * them (the other values with no int64, intervals, are in isnull).
	 */
	uint8	   *device_isnull;
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
	int			numeric_scale;	/* scale of the numeric keys' values[], or -1 */

	/*
	 * Rows with a key value no int64 holds exactly (values[] is 0 there):
	 * found while draining (an interval too large), and by
	 * gj_host_buffer_encode (drain_inexact plus the numerics that do not fit
	 * the join's scale).  NULL when there are none.  The executor leaves
	 * every pair of such a row to the host.
	 */
	uint8	   *drain_inexact;
	uint8	   *inexact;
	uint32	   *inexact_rows;	/* the flagged rows' numbers, ascending */
	int64		ninexact;
	bool		encoded;		/* gj_host_buffer_encode ran since the drain */

	/*
	 * Spilling (spill_files.c).  When spill is set, a drain whose rows
	 * outgrow spill_limit bytes hands them to spill(buf, spill_arg), which
	 * writes them to a temporary file as one chunk and empties the buffer,
	 * instead of raising gpujoin.max_host_memory's ERROR.
	 */
	void		(*spill) (struct HostSideBuffer *buf, void *arg);
	void	   *spill_arg;
	int64		spill_limit;
} HostSideBuffer;

extern void gj_host_buffer_init(HostSideBuffer *buf, MemoryContext parent,
							 const char *name, List *key_attnos, List *key_types,
							 List *col_attnos, TupleDesc child_desc);
extern void gj_host_buffer_set_key_hashes(HostSideBuffer *buf, List *hashfuncs,
									   List *collations);
extern void gj_host_buffer_append(HostSideBuffer *buf, TupleTableSlot *slot);
extern void gj_host_buffer_append_columns(HostSideBuffer *buf, int n, Datum *const *values,
										  bool *const *isnull);
extern void gj_host_buffer_reserve(HostSideBuffer *buf, int64 nrows);
extern void gj_host_buffer_make_room(HostSideBuffer *buf, int64 nrows);
extern void gj_host_buffer_reset(HostSideBuffer *buf);
extern void gj_host_buffer_check_limit(HostSideBuffer *buf, int64 other_side_bytes);
extern void gj_host_buffer_key_columns(const HostSideBuffer *buf, GjKeyColumns *out);
extern int	gj_host_buffer_key_row_bytes(const HostSideBuffer *buf);
extern uint8 *gpujoin_match_flags_reset(MemoryContext cxt, uint8 *flags, int64 *allocated,
										int64 nrows);

#endif							/* GPUJOIN_HOST_BUFFERS_H */

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
#include "utils/date.h"
#include "utils/timestamp.h"

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
	 * host_buffer_encode.  max_scale is the largest number of fractional
	 * digits a finite value needs, among those that need at most
	 * GJ_NUMERIC_MAX_SCALE (the others fit no int64 at the largest scale).
	 */
	Datum	   *numerics;
	int			max_scale;

	/*
	 * What the backends see as NULL: isnull plus the numerics that have no
	 * int64 at this execution's scale (host_buffer_encode), or NULL to use
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
	 * host_buffer_encode (drain_inexact plus the numerics that do not fit
	 * the join's scale).  NULL when there are none.  The executor leaves
	 * every pair of such a row to the host.
	 */
	uint8	   *drain_inexact;
	uint8	   *inexact;
	uint32	   *inexact_rows;	/* the flagged rows' numbers, ascending */
	int64		ninexact;
	bool		encoded;		/* host_buffer_encode ran since the drain */
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

/*
 * timetz.  PostgreSQL orders timetz values by their GMT time t = time +
 * zone * USECS_PER_SEC and breaks ties by zone (timetz_cmp_internal); two
 * values are equal only if time and zone both are.  timetz_in and
 * timetz_recv keep time within [0, USECS_PER_DAY] and |zone| below
 * TZDISP_LIMIT (57600 s), so |t| < 2^38 and zone + 2^17 lies in [0, 2^18):
 * t * 2^18 + (zone + 2^17) orders (t, zone) lexicographically, is injective,
 * and stays below 2^56 in magnitude.  A value outside those limits (which
 * PostgreSQL never produces) is reported as not encodable.
 */
#define GJ_TIMETZ_ZONE_BITS		18

static inline bool
gj_timetz_to_value(const TimeTzADT *tz, int64 *value)
{
	int64		gmt;

	if (tz->time < 0 || tz->time > USECS_PER_DAY ||
		tz->zone <= -TZDISP_LIMIT || tz->zone >= TZDISP_LIMIT)
		return false;
	gmt = tz->time + (int64) tz->zone * USECS_PER_SEC;
	*value = gmt * ((int64) 1 << GJ_TIMETZ_ZONE_BITS) +
		(tz->zone + ((int64) 1 << (GJ_TIMETZ_ZONE_BITS - 1)));
	return true;
}

/*
 * interval.  PostgreSQL compares intervals by interval_cmp_value(), the
 * 128-bit span time + (month * 30 + day) * USECS_PER_DAY (so '1 mon' equals
 * '30 days' and '-1 day +24:00' equals '0'); interval_hash hashes the same
 * span.  Where the span fits an int64 it is the device value; where it does
 * not, the value is not encodable and the join leaves its quals to the
 * host for that execution (gpujoin_prepare).
 */
static inline bool
gj_interval_to_value(const Interval *iv, int64 *value)
{
	int128		span = (int128) iv->time +
		((int128) iv->month * 30 + iv->day) * USECS_PER_DAY;

	if (span < PG_INT64_MIN || span > PG_INT64_MAX)
		return false;
	*value = (int64) span;
	return true;
}

/*
 * The device value of a non-NULL datum of any device type but numeric
 * (whose encoding depends on a scale, see host_buffer_encode).
 * Returns false where no int64 holds the value exactly.
 */
static inline bool
gj_datum_to_exact_value(Datum d, int type, int64 *value)
{
	switch (type)
	{
		case GJT_TIMETZ:
			return gj_timetz_to_value(DatumGetTimeTzADTP(d), value);
		case GJT_INTERVAL:
			return gj_interval_to_value(DatumGetIntervalP(d), value);
		case GJT_NUMERIC:
			return false;
		default:
			*value = gj_datum_to_value(d, type);
			return true;
	}
}

/*
 * numeric as fixed point: value * 10^scale as an int64, one scale for every
 * numeric key column of a join execution (the largest number of fractional
 * digits among their values), so that the integers of two columns compare
 * and are equal exactly as the numerics (1.0 = 1.00 = 1).  The extremes are
 * reserved for the special values, in PostgreSQL's order: -Infinity below
 * every number, +Infinity above, NaN above everything and equal to itself.
 */
#define GJ_NUMERIC_NINF			PG_INT64_MIN
#define GJ_NUMERIC_PINF			(PG_INT64_MAX - 1)
#define GJ_NUMERIC_NAN			PG_INT64_MAX
#define GJ_NUMERIC_MAX_FINITE	(PG_INT64_MAX - 2)	/* and its negation */
#define GJ_NUMERIC_MAX_SCALE	18	/* 10^18 fits an int64, 10^19 does not */

extern void host_buffer_init(HostSideBuffer *buf, MemoryContext parent,
							 const char *name, List *key_attnos, List *key_types,
							 List *col_attnos, TupleDesc child_desc);
extern void host_buffer_set_key_hashes(HostSideBuffer *buf, List *hashfuncs,
									   List *collations);
extern void host_buffer_append(HostSideBuffer *buf, TupleTableSlot *slot);
extern void host_buffer_reset(HostSideBuffer *buf);
extern bool host_numeric_const(Datum d, int64 *value, int *scale);
extern bool host_numeric_rescale(int64 value, int from_scale, int to_scale, int64 *result);
extern int64 host_buffer_encode(HostSideBuffer *buf, int scale);
extern int	host_buffer_numeric_scale(const HostSideBuffer *buf);
extern void host_buffer_key_columns(const HostSideBuffer *buf, GjKeyColumns *out);
extern int	host_buffer_key_row_bytes(const HostSideBuffer *buf);

#endif							/* GPUJOIN_HOST_BUFFERS_H */

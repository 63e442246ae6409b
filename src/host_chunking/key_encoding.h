/*-------------------------------------------------------------------------
 *
 * key_encoding.h
 *	  The device value of a join key or constant: every device type as an
 *	  order-preserving int64, exact or not at all.
 *
 * The planner encodes the constants of device programs with these
 * (device_compile.c), the host buffers the key columns as they are drained
 * (host_buffers.c), and the executor, once both inputs are drained, the
 * numeric keys and constants at the one scale of the join's fixed point
 * (gj_host_encode_join_keys).  The aggregate node reads its argument columns
 * with gj_datum_to_value.  A value no int64 holds exactly is never rounded:
 * it is reported as not encodable, and its row's pairs are left to the host.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_KEY_ENCODING_H
#define GPUJOIN_KEY_ENCODING_H

#include "postgres.h"

#include "fmgr.h"
#include "utils/date.h"
#include "utils/timestamp.h"

#include "kernels/backend.h"

struct HostSideBuffer;			/* host_buffers.h */

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
		case GJT_OID:
			return (int64) DatumGetObjectId(d); /* zero-extended: unsigned order */
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
 * (whose encoding depends on a scale, see gj_host_buffer_encode).
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

/*
 * A key the device cannot hold (text, uuid, bytea) is replaced by its
 * 64-bit hash, computed with PostgreSQL's own extended hash function for
 * the type (hash_fn(value, 0)) and the column's collation: equal values
 * hash alike, and the host rechecks every pair the hashes match.
 */
static inline int64
gj_hashed_key_value(FmgrInfo *hash_fn, Oid collation, Datum d)
{
	return DatumGetInt64(FunctionCall2Coll(hash_fn, collation, d, Int64GetDatum(0)));
}

extern int	gj_host_numeric_min_scale(Datum d);
extern bool gj_host_numeric_const(Datum d, int64 *value, int *scale);
extern bool gj_host_numeric_rescale(int64 value, int from_scale, int to_scale, int64 *result);
extern int	gj_host_buffer_numeric_scale(const struct HostSideBuffer *buf);
extern int64 gj_host_buffer_encode(struct HostSideBuffer *buf, int scale);
extern const char *gj_host_encode_join_keys(struct HostSideBuffer *outer,
										 struct HostSideBuffer *inner,
										 GjInstr *instrs, int ninstrs,
										 GjRangeSpec *range);

#endif							/* GPUJOIN_KEY_ENCODING_H */

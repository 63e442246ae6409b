/*-------------------------------------------------------------------------
 *
 * gpujoin_agg_partial.c
 *	  The aggregate node as a partial aggregate (issue 20): which
 *	  aggregates' transition states it returns exactly, and those states.
 *
 * Under a Gather every process runs its own aggregate node over its share
 * of the outer rows (a partial GpuJoin's inputs, gpujoin_agg_path.c) and
 * returns, per group, the transition state PostgreSQL's Partial Agg would
 * return (Aggrefs with AGGSPLIT_INITIAL_SERIAL); the Finalize Agg above the
 * Gather combines them with the aggregate's combine function and applies
 * its final function and HAVING.  A partial node is offered only when every
 * aggregate's state is one the node reproduces (bit for bit; floats up to
 * the order of their additions, below), which this file decides from the
 * aggregate's pg_aggregate row (its transition type and combine function,
 * for floats its transition function too), not from a list of OIDs:
 *
 *	- count(*), count(x): the state is the int8 count (initial value 0);
 *	- sum(int2/int4): the int8 sum, NULL without a non-NULL input, wrapped
 *	  as int4_sum() adds (int8pl combines);
 *	- min/max: the smallest or largest value, of the argument's type;
 *	- avg(int2/int4): an int8[2] of {count, sum} (int4_avg_combine), {0,0}
 *	  without input;
 *	- sum/avg(int8): an "internal" state (count and int128 sum), which a
 *	  partial Agg returns serialised by int8_avg_serialize(): the count, then
 *	  the sum as numeric.c's NumericVar (gpujoin_agg_int8_state).  Only that
 *	  serialisation function is accepted, by OID: its format is what the
 *	  Finalize Agg's int8_avg_deserialize() reads;
 *	- sum(float8): the float8 sum, NULL without a non-NULL input (float8pl
 *	  transition and combine);
 *	- avg(float4/float8): float8_accum()'s float8[3] {N, Sx, Sxx}, '{0,0,0}'
 *	  without input (float8_combine), gpujoin_agg_float_avg_state.  Sxx, the
 *	  sum of squared deviations from the mean, is kept only for this
 *	  (GjAggArg.need_sxx): by float8_accum()'s own update where the host
 *	  folds a value (kernels/agg_reduce.h) and float8_combine()'s merge
 *	  where it adds partials, so the cuda backend folds such a spec's pairs
 *	  on the host rather than in device accumulators.  The whole node does
 *	  not compute avg of floats (gpujoin_agg_path.c).
 *
 * Float states are exact in format, not in their last bits: the node adds
 * a process's values in an order of its own (on the device, by range, by
 * weight) where PostgreSQL's Partial Agg adds them row by row in scan
 * order; which rows a process gets is arbitrary in PostgreSQL's parallel
 * plans too, so their results differ in the same way.  Overflow raises
 * float8pl's and float8_accum()'s error, "value out of range: overflow",
 * when a state is not finite with every input finite.  sum(float4) gets
 * no partial node (float4pl rounds to float4 at every row), nor does any
 * other aggregate; their queries keep PostgreSQL's Partial Agg (over a
 * partial GpuJoin) or the non-partial aggregate node.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_type.h"
#include "libpq/pqformat.h"
#include "nodes/nodeFuncs.h"
#include "utils/array.h"
#include "utils/float.h"
#include "utils/fmgroids.h"
#include "utils/syscache.h"

#include "gpujoin.h"
#include "custom_scan/agg/gpujoin_agg.h"

/* The transition type of the partial state the node returns, or InvalidOid. */
static Oid
partial_state_type(int kind, Oid arg_type)
{
	switch (kind)
	{
		case GJ_AGGK_COUNT_STAR:
		case GJ_AGGK_COUNT:
			return INT8OID;
		case GJ_AGGK_SUM:
			if (arg_type == INT8OID)
				return INTERNALOID;
			if (arg_type == FLOAT8OID)
				return FLOAT8OID;
			return arg_type == INT2OID || arg_type == INT4OID ? INT8OID : InvalidOid;
		case GJ_AGGK_AVG:
			if (arg_type == INT8OID)
				return INTERNALOID;
			if (arg_type == FLOAT4OID || arg_type == FLOAT8OID)
				return FLOAT8ARRAYOID;
			return arg_type == INT2OID || arg_type == INT4OID ? INT8ARRAYOID : InvalidOid;
		case GJ_AGGK_MIN:
		case GJ_AGGK_MAX:
			return arg_type;
		default:
			return InvalidOid;
	}
}

/*
 * Can the node return aggref's partial state, for an aggregate it computes
 * as kind?  The catalog must agree on the state's type, with a combine
 * function, and no serialisation (a non-internal state travels as itself)
 * or, for an internal one, int8_avg_serialize's.
 */
bool
gpujoin_agg_partial_supported(Aggref *aggref, int kind)
{
	Oid			arg_type = InvalidOid;
	Oid			expected;
	HeapTuple	tuple;
	Form_pg_aggregate agg;
	bool		ok;

	if (aggref->aggsplit != AGGSPLIT_INITIAL_SERIAL)
		return false;
	if (aggref->args != NIL)
		arg_type = exprType((Node *) linitial_node(TargetEntry, aggref->args)->expr);
	expected = partial_state_type(kind, arg_type);
	if (!OidIsValid(expected))
		return false;
	tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggref->aggfnoid));
	if (!HeapTupleIsValid(tuple))
		return false;
	agg = (Form_pg_aggregate) GETSTRUCT(tuple);
	ok = agg->aggtranstype == expected && OidIsValid(agg->aggcombinefn);

	/*
	 * Float sums and averages only where the node reproduces the arithmetic:
	 * float8pl's sum, float8_accum()'s {N, Sx, Sxx} (float4_accum() widens
	 * its argument and keeps the same) that float8_combine() merges.
	 */
	if (kind == GJ_AGGK_SUM && expected == FLOAT8OID)
		ok = ok && agg->aggtransfn == F_FLOAT8PL && agg->aggcombinefn == F_FLOAT8PL;
	if (kind == GJ_AGGK_AVG && expected == FLOAT8ARRAYOID)
		ok = ok && (agg->aggtransfn == F_FLOAT8_ACCUM || agg->aggtransfn == F_FLOAT4_ACCUM) &&
			agg->aggcombinefn == F_FLOAT8_COMBINE;
	if (expected == INTERNALOID)
		ok = ok && agg->aggserialfn == F_INT8_AVG_SERIALIZE && aggref->aggtype == BYTEAOID;
	else
		ok = ok && !OidIsValid(agg->aggserialfn) && aggref->aggtype == expected;
	ReleaseSysCache(tuple);
	return ok;
}

/*
 * avg(int2/int4)'s state: the int8[2] {count, sum} that int4_avg_accum()
 * updates in place (Int8TransTypeData), a one-dimensional array without
 * NULLs as its initial value '{0,0}' is.  The sum wraps as
 * int4_avg_accum() adds, without a check.
 */
Datum
gpujoin_agg_avg_state(int64 count, int64 sum)
{
	Datum		elems[2];

	elems[0] = Int64GetDatum(count);
	elems[1] = Int64GetDatum(sum);
	return PointerGetDatum(construct_array(elems, 2, INT8OID, sizeof(int64),
										   FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* numeric.c's NumericVar: base 10000 digits, and the sign of a negative */
#define PG_NUMERIC_NBASE	10000
#define PG_NUMERIC_NEG		0x4000
/* an int128 has at most 39 decimal digits */
#define INT128_NBASE_DIGITS 10

/*
 * sum/avg(int8)'s serialised state, as int8_avg_serialize() writes a
 * PolyNumAggState: the count of non-NULL inputs (int8), then the int128
 * sum as int128_to_numericvar() makes it and numericvar_serialize() writes
 * it: ndigits, weight, sign, dscale (int4 each; the digits base 10000, most
 * significant first, not stripped of trailing zeros; zero has no digits,
 * weight 0, a positive sign), then the digits (int2 each).  Checked against
 * PostgreSQL's own through the Finalize Agg by test/pgtap/agg_parallel.sql.
 */
Datum
gpujoin_agg_int8_state(int64 count, gj_int128 sum)
{
	StringInfoData buf;
	int16		digits[INT128_NBASE_DIGITS];
	unsigned __int128 magnitude = sum < 0 ? -(unsigned __int128) sum : (unsigned __int128) sum;
	int			ndigits = 0;
	int			i;

	while (magnitude != 0)
	{
		Assert(ndigits < INT128_NBASE_DIGITS);
		digits[ndigits++] = (int16) (magnitude % PG_NUMERIC_NBASE);
		magnitude /= PG_NUMERIC_NBASE;
	}
	pq_begintypsend(&buf);
	pq_sendint64(&buf, count);
	pq_sendint32(&buf, ndigits);
	pq_sendint32(&buf, ndigits > 0 ? ndigits - 1 : 0);
	pq_sendint32(&buf, sum < 0 ? PG_NUMERIC_NEG : 0);
	pq_sendint32(&buf, 0);
	for (i = ndigits - 1; i >= 0; i--)
		pq_sendint16(&buf, digits[i]);
	return PointerGetDatum(pq_endtypsend(&buf));
}

/*
 * avg(float4/float8)'s state: the float8[3] {N, Sx, Sxx} of float8_accum()
 * (float4_accum()), '{0,0,0}' without input.  Sx is fsum added to 0.0, as
 * float8_accum() starts from 0 (a sum of -0.0 values is 0 there); Sxx is
 * fsxx (agg_reduce.h: float8_accum()'s update row by row, float8_combine()'s
 * merge across rows the backend reduced together), NaN once an input was
 * NaN or infinite, as float8_accum() makes it.  float8_accum() raises
 * "value out of range: overflow" when Sx or Sxx becomes infinite from finite
 * inputs: so does this, when either is not finite and every input is
 * (where the order of the additions decides, PostgreSQL's own parallel
 * plans may differ as much).
 */
Datum
gpujoin_agg_float_avg_state(const GjAggAcc *acc)
{
	Datum		elems[3];
	double		sx = 0.0;
	double		sxx = 0.0;

	if (acc->count > 0)
	{
		sx = 0.0 + acc->fsum;
		sxx = acc->fsxx;
		if (acc->saw_nonfinite)
			sxx = get_float8_nan();
		else if (!isfinite(sx) || !isfinite(sxx))
			float_overflow_error();	/* a NaN too: +-Infinity partials merged */
	}
	elems[0] = Float8GetDatum((double) acc->count);
	elems[1] = Float8GetDatum(sx);
	elems[2] = Float8GetDatum(sxx);
	return PointerGetDatum(construct_array(elems, 3, FLOAT8OID, sizeof(float8),
										   FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

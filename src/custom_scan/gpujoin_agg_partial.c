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
 * aggregate's state is one the node reproduces bit for bit, which this file
 * decides from the aggregate's pg_aggregate row (its transition type and
 * combine function), not from a list of OIDs:
 *
 *	- count(*), count(x): the state is the int8 count (initial value 0);
 *	- sum(int2/int4): the int8 sum, NULL without a non-NULL input, wrapped
 *	  as int4_sum() adds (int8pl combines);
 *	- min/max: the smallest or largest value, of the argument's type;
 *	- avg(int2/int4): an int8[2] of {count, sum} (int4_avg_combine), {0,0}
 *	  without input.
 *
 * Everything else gets no partial node: aggregates whose state is
 * "internal" (sum/avg(int8), serialised by numeric.c's own format), and
 * float sums, which the node sums in double in an order of its own while
 * PostgreSQL's float8pl adds row by row.  Their queries keep PostgreSQL's
 * Partial Agg (over a partial GpuJoin) or the non-partial aggregate node.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "utils/array.h"
#include "utils/syscache.h"

#include "gpujoin.h"
#include "custom_scan/gpujoin_agg.h"

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
			return arg_type == INT2OID || arg_type == INT4OID ? INT8OID : InvalidOid;
		case GJ_AGGK_AVG:
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
 * function and no serialisation (a non-internal state travels as itself).
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
	ok = agg->aggtranstype == expected && OidIsValid(agg->aggcombinefn) &&
		!OidIsValid(agg->aggserialfn) && aggref->aggtype == expected;
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

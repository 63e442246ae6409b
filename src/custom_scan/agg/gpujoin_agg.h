/*-------------------------------------------------------------------------
 *
 * gpujoin_agg.h
 *	  Aggregates computed inside GpuJoin: what the plan carries from
 *	  gpujoin_agg_path.c to gpujoin_agg_exec.c.
 *
 * The plan is a GpuJoin CustomScan (same custom_private and custom_exprs
 * layout as a plain GpuJoin, so the join machinery runs unchanged) with two
 * additions (gpujoin_plan_private.h): custom_private has the serialized
 * GpuJoinAggInfo at GJ_PRIVATE_AGG_INFO, and custom_exprs the argument
 * expressions at GJ_EXPRS_AGG_ARGS (evaluated on the host only for rows
 * whose argument the device program could not compute exactly).  The
 * aggregate path's custom_private is a GpuJoin path's, for an inner join
 * without a filter (GpuJoinPathPrivateIndex).  custom_scan_tlist holds the
 * join's Vars first and then one Aggref per aggregate: the executor fills
 * the Vars for each pair that needs a host qual, and the Aggrefs once, with
 * the results, for the node's single output row.
 *
 * With GROUP BY, every grouping column or expression reads one input:
 * the outer one (the planner puts the grouped side outer), or with keys of
 * both sides either one.  Each side's keys are numbered on their own, and
 * a group is a pair of an outer and an inner group (gpujoin_agg_groups.c).
 * The node returns one row per group that has at least one joined pair,
 * with the columns of the scan tuple taken from the group's first outer
 * row and, grouping by both sides, its first inner row (the grouping
 * columns, and columns functionally dependent on them); without inner
 * keys the inner columns are NULL.
 *
 * A partial node (GpuJoinAggInfo.partial, under a Gather) has the same
 * layout; its Aggrefs are AGGSPLIT_INITIAL_SERIAL and their columns hold
 * transition states (gpujoin_agg_partial.c), and it has no HAVING.  Its
 * custom_private makes a worker's copy of the plan, which finds the join's
 * registered methods, come back to the aggregate node
 * (gpujoin_any_create_scan_state in gpujoin_agg_exec.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_AGG_H
#define GPUJOIN_AGG_H

#include "gpujoin.h"
#include "kernels/agg_reduce.h"

#define GJ_AGG_MAX_AGGS		32
#define GJ_AGG_MAX_GROUP_COLS	16

typedef enum GpuJoinAggKind
{
	GJ_AGGK_COUNT_STAR,
	GJ_AGGK_COUNT,
	GJ_AGGK_SUM,
	GJ_AGGK_AVG,
	GJ_AGGK_MIN,
	GJ_AGGK_MAX
} GpuJoinAggKind;

typedef struct GpuJoinAggInfo
{
	int			naggs;
	int			agg_kind[GJ_AGG_MAX_AGGS];	/* GpuJoinAggKind */
	int			agg_arg[GJ_AGG_MAX_AGGS];	/* argument column, -1 for count(*) */

	/*
	 * arguments: a program over the columns of one side (computed once per
	 * row) or of both (GJ_AGG_SIDE_PAIR: once per pair)
	 */
	int			nargs;
	int			arg_side[GJ_AGG_MAX_ARGS];	/* GJ_AGG_SIDE_* */
	int			arg_type[GJ_AGG_MAX_ARGS];	/* GjType of its value */
	GjProgram	arg_program[GJ_AGG_MAX_ARGS];

	/*
	 * Column j of a side in the argument and grouping programs is scan tuple
	 * column var_scan[side][j] (LOAD_OUTER reads side 0, LOAD_INNER side 1).
	 */
	int			nvars[2];
	int			var_scan[2][GJ_MAX_KEY_COLS];
	int			var_type[2][GJ_MAX_KEY_COLS];

	/*
	 * GROUP BY, each key over one side (group_side, GJ_SIDE_*; at least one
	 * of the outer side): a plain column (group_scan, its stored Datums
	 * hashed) or an expression (group_scan -1: group_program computes a
	 * value of GjType group_type per row of its side); equality operators
	 * and collations of each.
	 */
	int			ngroup;
	int			group_side[GJ_AGG_MAX_GROUP_COLS];
	int			group_scan[GJ_AGG_MAX_GROUP_COLS];
	int			group_type[GJ_AGG_MAX_GROUP_COLS];
	GjProgram	group_program[GJ_AGG_MAX_GROUP_COLS];
	Oid			group_eqop[GJ_AGG_MAX_GROUP_COLS];
	Oid			group_collation[GJ_AGG_MAX_GROUP_COLS];

	/*
	 * Count by dominance (the join is planned as a nested loop whose program
	 * is two inequalities, every argument of the outer side): see
	 * gpujoin.enable_dominance.
	 */
	bool		dominance;

	/*
	 * A partial aggregate under a Gather (gpujoin_agg_partial.c): each
	 * aggregate returns its transition state, no HAVING.
	 */
	bool		partial;
} GpuJoinAggInfo;

/*
 * custom_scan/plan/gpujoin_plan_private.c.  private is the entry at
 * GJ_PRIVATE_AGG_INFO, not the whole custom_private.
 */
extern List *gpujoin_agg_info_serialize(const GpuJoinAggInfo *info);
extern void gpujoin_agg_info_deserialize(List *private, GpuJoinAggInfo *info);

/* custom_scan/agg/gpujoin_agg_groups.c: a device value of GjType type as a Datum */
extern Datum gpujoin_agg_value_to_datum(int64 v, int type);

/* custom_scan/agg/gpujoin_agg_partial.c */
extern bool gpujoin_agg_partial_supported(Aggref *aggref, int kind);
extern Datum gpujoin_agg_avg_state(int64 count, int64 sum);
extern Datum gpujoin_agg_int8_state(int64 count, gj_int128 sum);
extern Datum gpujoin_agg_float_avg_state(const GjAggAcc *acc);

#endif							/* GPUJOIN_AGG_H */

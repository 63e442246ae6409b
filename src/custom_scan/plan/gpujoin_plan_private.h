/*-------------------------------------------------------------------------
 *
 * gpujoin_plan_private.h
 *	  The layout of the lists in which the planner hands a GpuJoin (or
 *	  GpuJoinAgg) plan to the executor, and a GpuJoin path to PlanCustomPath.
 *
 * A CustomScan carries the plan's own data in two lists: custom_private
 * (plain integer and OID lists, so that the plan survives copyObject(),
 * outfuncs and readfuncs) and custom_exprs (expressions, which setrefs.c
 * rewrites to refer to custom_scan_tlist).  A CustomPath carries the quals
 * it classified in custom_private.  Every position in those lists is named
 * here, as postgres_fdw's FdwScanPrivateIndex does, so that the code that
 * writes a list and the code that reads it cannot disagree; nothing reads
 * them by number.
 *
 * What each custom_private entry holds inside is the business of the
 * (de)serialisers in gpujoin_plan_private.c: gpujoin_plan_info_serialize /
 * gpujoin_plan_info_deserialize (GpuJoinPlanInfo, gpujoin.h) and
 * gpujoin_agg_info_serialize / gpujoin_agg_info_deserialize
 * (GpuJoinAggInfo, gpujoin_agg.h).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_PLAN_PRIVATE_H
#define GPUJOIN_PLAN_PRIVATE_H

#include "nodes/nodes.h"
#include "nodes/pg_list.h"

/*
 * CustomScan.custom_private.  A GpuJoin plan holds the first
 * GJ_PRIVATE_JOIN_LENGTH entries, its GpuJoinPlanInfo; a GpuJoinAgg plan
 * holds the same entries, so that the join machinery reads it unchanged,
 * and its GpuJoinAggInfo after them.
 */
typedef enum GpuJoinPrivateIndex
{
	/* (algorithm, filter_needed, jointype) */
	GJ_PRIVATE_HEAD,
	/* (outer key attnos, outer key types, inner key attnos, inner key types) */
	GJ_PRIVATE_KEY_COLUMNS,
	/* (scan_sides, scan_attnos, scan_keys): the sources of custom_scan_tlist */
	GJ_PRIVATE_SCAN_COLUMNS,
	/* the device program, one instruction list per instruction */
	GJ_PRIVATE_PROGRAM,
	/* (range spec, equi spec): GJ_ALGO_SORTMERGE's and GJ_ALGO_HASH's keys */
	GJ_PRIVATE_SPECS,
	/* GpuJoinBandGuard */
	GJ_PRIVATE_BAND_GUARD,
	/* (outer hash functions, outer collations, inner ..., inner ...) */
	GJ_PRIVATE_KEY_HASHES,
	/* GpuJoinAgg only: its GpuJoinAggInfo (GpuJoinAggPrivateIndex) */
	GJ_PRIVATE_AGG_INFO
} GpuJoinPrivateIndex;

/* the length of a plain GpuJoin's custom_private */
#define GJ_PRIVATE_JOIN_LENGTH	GJ_PRIVATE_AGG_INFO

/* The entry at GJ_PRIVATE_AGG_INFO: a list of these lists. */
typedef enum GpuJoinAggPrivateIndex
{
	/* one (kind, argument column) per aggregate */
	GJ_AGG_PRIVATE_AGGS,
	/* one ((side, type), program) per argument column */
	GJ_AGG_PRIVATE_ARGS,
	/* per side, one (scan column, type) per column its programs load */
	GJ_AGG_PRIVATE_VARS,
	/*
	 * one ((scan column or -1, type, equality operator, collation), program)
	 * per grouping column or expression
	 */
	GJ_AGG_PRIVATE_GROUPS,
	/* (dominance, partial) */
	GJ_AGG_PRIVATE_METHOD,
	GJ_AGG_PRIVATE_LENGTH
} GpuJoinAggPrivateIndex;

/*
 * CustomScan.custom_exprs: lists of quals (implicit AND) and expressions
 * over the scan tuple.
 */
typedef enum GpuJoinExprsIndex
{
	/* evaluated by the host on each pair the device returns */
	GJ_EXPRS_HOST_QUALS,
	/* compiled into the device program: only EXPLAIN reads them */
	GJ_EXPRS_DEVICE_QUALS,
	/* every join qual, for the pairs the device flags for a recheck */
	GJ_EXPRS_RECHECK_QUALS,
	/*
	 * an outer join's filter (quals pushed down from WHERE), applied to
	 * every row the join forms; NIL for GpuJoinAgg.  Not plan.qual, which
	 * EXPLAIN prints as a scan's filter, without the table names a join's
	 * columns need.
	 */
	GJ_EXPRS_FILTER_QUALS,
	/* GpuJoinAgg only: its argument expressions, by argument column */
	GJ_EXPRS_AGG_ARGS,
	/* GpuJoinAgg only: its grouping expressions (plain columns too), in order */
	GJ_EXPRS_AGG_GROUPS
} GpuJoinExprsIndex;

/* the length of a plain GpuJoin's custom_exprs */
#define GJ_EXPRS_JOIN_LENGTH	GJ_EXPRS_AGG_ARGS

/*
 * CustomPath.custom_private of a GpuJoin path and of a GpuJoinAgg path:
 * lists of RestrictInfos, as the path's quals were classified, and the
 * join type.  A GpuJoinAgg path joins INNER, with no filter.
 */
typedef enum GpuJoinPathPrivateIndex
{
	/* quals the device evaluates (compiled again at plan time) */
	GJ_PATH_DEVICE_RINFOS,
	/* quals the host evaluates on each pair the device returns */
	GJ_PATH_HOST_RINFOS,
	/* every join qual */
	GJ_PATH_JOIN_RINFOS,
	/* an outer join's quals pushed down from WHERE: its filter */
	GJ_PATH_FILTER_RINFOS,
	/* list_make2_int(JoinType, the GjAlgorithm it was costed for) */
	GJ_PATH_JOINTYPE,
	GJ_PATH_PRIVATE_LENGTH
} GpuJoinPathPrivateIndex;

extern List *gpujoin_path_private_make(List *device_rinfos, List *host_rinfos,
									   List *join_rinfos, List *filter_rinfos,
									   JoinType jointype, int algorithm);
extern JoinType gpujoin_path_private_jointype(List *path_private);
extern int	gpujoin_path_private_algorithm(List *path_private);

#endif							/* GPUJOIN_PLAN_PRIVATE_H */

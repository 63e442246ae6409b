/*-------------------------------------------------------------------------
 *
 * gpujoin_agg_groups.h
 *	  GROUP BY of the aggregate node (gpujoin_agg_exec.c): the groups of
 *	  each side's rows and the partial aggregates of the groups of pairs
 *	  (gpujoin_agg_groups.c).
 *
 * Each side's grouping keys are numbered on their own, once the inputs are
 * drained: a row's group is a dense number from a TupleHashTable over its
 * key values (the types' own hashing and equality, as PostgreSQL's hashed
 * GROUP BY), or, for one key of a type whose equality is its device
 * value's, from a table of those values (side_number_by_value).  A group of the join is a pair (outer group, inner group); by
 * the outer side only, the inner group is always 0.  Its partials are at
 *
 *	- outer group x inner groups + inner group, in the dense area of the
 *	  partial arrays, when both side numbers are below the counts numbered
 *	  from the drained rows: the layout the backends fold into
 *	  (kernels/agg_spec.h, gj_agg_pair_group);
 *	- past the dense area, found through a hash table of the (outer,
 *	  inner) pairs actually seen, otherwise: groups of rows whose grouping
 *	  expressions the host evaluated pair by pair (deferred rows), and every
 *	  group when the dense area would be too large (gpujoin.max_dense_groups,
 *	  or half of gpujoin.max_host_memory); the backend then reduces nothing
 *	  and the host folds every pair.
 *
 * By the outer side only, the area is the outer groups themselves and grows
 * with them: the node works as it did before inner keys existed.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_AGG_GROUPS_H
#define GPUJOIN_AGG_GROUPS_H

#include "commands/explain.h"
#include "executor/tuptable.h"
#include "nodes/execnodes.h"
#include "utils/hsearch.h"

#include "custom_scan/agg/gpujoin_agg.h"
#include "custom_scan/exec/gpujoin_exec.h"

/* The groups of one side's rows. */
typedef struct GjAggSideGroups
{
	int			nkeys;			/* grouping keys of this side */
	int			keys[GJ_AGG_MAX_GROUP_COLS];	/* their positions in the info */
	ExprState  *key_exprs[GJ_AGG_MAX_GROUP_COLS];
	TupleTableSlot *slot;		/* one row's key values */
	Oid		   *eqfuncs;
	FmgrInfo   *hashfuncs;
	AttrNumber *slot_cols;
	Oid			collations[GJ_AGG_MAX_GROUP_COLS];
	TupleHashTable table;		/* key values -> group, kept for deferred rows;
								 * NULL where numbered by value (no row is
								 * deferred then) */
	uint32	   *row_group;		/* per row, or GJ_AGG_GROUP_DEFERRED */
	int64	   *first_row;		/* per group: its first row */
	int64		first_row_cap;
	int64		ngroups;
	int64		deferred_rows;	/* rows whose group the host decides per pair */
	bool		shared;			/* numbered with the other processes of a
								 * parallel plan: row_group lies in the
								 * shared inner side's chunk */
} GjAggSideGroups;

typedef struct GpuJoinAggGroups
{
	const GpuJoinAggInfo *info;
	int			nargs;			/* accumulators per group (at least 1) */
	MemoryContext cxt;			/* everything below; reset on rescan */
	MemoryContext hash_temp_cxt;	/* hashing one row */
	GjAggSideGroups side[2];	/* side[GJ_SIDE_INNER].nkeys 0: outer only */

	/* the groups of pairs and their partials */
	bool		dense;			/* the backend may fold into the dense area */
	int64		dense_outer;	/* the dense area: dense_outer x dense_inner */
	int64		dense_inner;
	int64		ngroups;		/* groups with partials (dense area included) */
	int64		capacity;
	int64	   *pairs;			/* per group */
	GjAggAcc   *acc;			/* per group and argument */
	HTAB	   *extra;			/* (outer, inner) -> group past the dense area */
	uint64	   *extra_key;		/* per group past the dense area */
	int64		extra_cap;

	/* EXPLAIN ANALYZE: the last execution's side groups, kept over rescans */
	int64		shown_outer;
	int64		shown_inner;
	bool		shown_dense;
} GpuJoinAggGroups;

extern void gpujoin_agg_groups_init(GpuJoinAggGroups *groups, const GpuJoinAggInfo *info,
									List *group_exprs, PlanState *ps, EState *estate);
extern void gpujoin_agg_groups_number(GpuJoinAggGroups *groups, GpuJoinState *gjs,
									  const GjKeyColumns var_cols[2], MemoryContext cxt,
									  int nargs);
extern int	gpujoin_agg_groups_inner_value_type(const GpuJoinAggGroups *groups);

/* gpujoin_agg_shared_groups.c: the shared inner side's groups, numbered together */
extern bool gpujoin_agg_group_value_of_row(const GjProgram *program, const HostDatumColumn *col,
										   int type, const GjKeyColumns var_cols[2], int64 row,
										   int64 *value, bool *isnull);
extern Size gpujoin_agg_groups_shared_size(int64 nrows);
extern void gpujoin_agg_groups_shared_init(int64 nrows, char *dst, Size len);
extern bool gpujoin_agg_groups_number_shared(GpuJoinAggGroups *groups, GpuJoinState *gjs,
											 const GjKeyColumns var_cols[2], int type);
extern void gpujoin_agg_groups_spec(const GpuJoinAggGroups *groups, GjAggSpec *spec);
extern int64 gpujoin_agg_groups_of_pair(GpuJoinAggGroups *groups, GpuJoinState *gjs,
										uint32 orow, uint32 irow, bool *formed);
extern bool gpujoin_agg_groups_rows(const GpuJoinAggGroups *groups, int64 group,
									int64 *orow, int64 *irow);
extern void gpujoin_agg_groups_reset(GpuJoinAggGroups *groups);
extern void gpujoin_agg_groups_explain(const GpuJoinAggGroups *groups, ExplainState *es);

/* Is any grouping key of the inner side? */
static inline bool
gpujoin_agg_groups_inner(const GpuJoinAggGroups *groups)
{
	return groups->side[GJ_SIDE_INNER].nkeys > 0;
}

#endif							/* GPUJOIN_AGG_GROUPS_H */

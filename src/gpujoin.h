/*-------------------------------------------------------------------------
 *
 * gpujoin.h
 *	  Declarations shared by the planner and executor sides of GpuJoin:
 *	  GUC variables, the plan's private data, and entry points of each file.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_H
#define GPUJOIN_H

#include "postgres.h"

#include "nodes/execnodes.h"
#include "nodes/extensible.h"
#include "nodes/pathnodes.h"
#include "optimizer/paths.h"

#include "kernels/backend.h"

#define GPUJOIN_NAME "GpuJoin"

/* gpujoin.device */
typedef enum GpuJoinDevice
{
	GPUJOIN_DEVICE_AUTO,
	GPUJOIN_DEVICE_CUDA,
	GPUJOIN_DEVICE_CPU,
	GPUJOIN_DEVICE_SERVICE		/* the GPU service's backend */
} GpuJoinDevice;

/*
 * gpujoin.compile_programs: off interprets every device program; on
 * compiles one where the join is large enough to pay for it
 * (GJ_COMPILE_MIN_PAIRS) and uses one compiled already at any size;
 * always compiles every program a compiled kernel can run, whatever the
 * join's size (for testing the compiled kernels through SQL).
 */
typedef enum GpujoinCompilePrograms
{
	GPUJOIN_COMPILE_OFF,
	GPUJOIN_COMPILE_ON,
	GPUJOIN_COMPILE_ALWAYS
} GpujoinCompilePrograms;

/* GUCs, defined in planner_hook.c */
extern bool gpujoin_enabled;
extern int	gpujoin_device;
extern int	gpujoin_device_memory_kb;
extern int	gpujoin_max_host_memory_kb;
extern int	gpujoin_host_buffer_cache_kb;
extern bool gpujoin_host_huge_pages;
extern bool gpujoin_enable_spill;
extern bool gpujoin_spill_resplit;
extern bool gpujoin_spill_by_range;
extern bool gpujoin_device_partitions;
extern bool gpujoin_partitions_open_ahead;
extern int	gpujoin_algorithm;
extern bool gpujoin_enable_aggregate;
extern bool gpujoin_enable_dominance;
extern int	gpujoin_compile_programs;
extern char *gpujoin_compiled_kernel_dir;
extern int	gpujoin_max_dense_groups;
extern bool gpujoin_overlap_steps;
extern bool gpujoin_parallel_shared_inner;
extern bool gpujoin_parallel_inner_drain;
extern bool gpujoin_columnar_input;
extern bool gpujoin_page_decoder;
extern bool gpujoin_time_input_parts;
extern bool gpujoin_columns_from_keys;

/*
 * The planner's cost constants of one backend (gpujoin_costs.c), in the
 * planner's units: gpujoin.cpu_* and gpujoin.cuda_*.
 */
typedef struct GpuJoinCostProfile
{
	const char *backend;		/* "cpu" or "cuda": the GUC prefix */
	double		startup_cost;	/* per join */
	double		row_cost;		/* per row drained through a child plan */
	double		transfer_cost;	/* per kB copied to or from the device */
	double		pair_cost;		/* per pair and compare of the device quals */
	double		sort_cost;		/* per step of sort-merge / hash work */
	double		output_cost;	/* per row the join returns */
	double		columnar_row_cost;	/* per row the columnar heap reader reads */
	double		program_pair_cost;	/* per pair and instruction interpreted */
	double		hash_cache_kb;	/* PostgreSQL probes a hash table this small
								 * at its scan's rate */
	double		cached_join_factor; /* the constants above, startup_cost
									 * aside, times this against such a
									 * hash join */
} GpuJoinCostProfile;

extern GpuJoinCostProfile gpujoin_cpu_costs;
extern GpuJoinCostProfile gpujoin_cuda_costs;
extern void gpujoin_define_cost_gucs(void);
extern bool gpujoin_plans_for_cpu(void);
extern bool gpujoin_plans_parallel(void);
extern Path *gpujoin_partial_outer_path(PlannerInfo *root, RelOptInfo *outerrel);
extern bool gpujoin_inner_drain_in_parallel(RelOptInfo *innerrel, Path *inner_whole,
											List *device_rinfos);
extern List *gpujoin_path_children(Path *outer_path, Path *inner_share, Path *inner_path);
extern bool gpujoin_inner_drain_may_share(double inner_bytes);
extern Selectivity gpujoin_band_selectivity(PlannerInfo *root, List *clauses,
											Relids outer_relids, Relids inner_relids,
											List **band_clauses, Var **band_var);
extern Cost gpujoin_band_index_nestloop_cost(PlannerInfo *root, RelOptInfo *rel_a,
											 RelOptInfo *rel_b, List *clauses);
extern Cost gpujoin_band_index_probe_cost(PlannerInfo *root, RelOptInfo *probe,
										  RelOptInfo *indexed, List *clauses,
										  IndexOptInfo **index_used);
extern const GpuJoinCostProfile *gpujoin_planning_costs(void);
extern const GpuJoinCostProfile *gpujoin_parallel_costs(void);
extern const GpuJoinCostProfile *gpujoin_costs_against_native(const GpuJoinCostProfile *costs,
															  List *restrictlist,
															  RelOptInfo *outerrel,
															  RelOptInfo *innerrel,
															  JoinType jointype,
															  GpuJoinCostProfile *scaled);
extern double gpujoin_input_host_bytes(Path *path);
extern Cost gpujoin_input_cost(PlannerInfo *root, Path *path,
							   const GpuJoinCostProfile *costs);
extern bool gpujoin_columnar_scan_path(PlannerInfo *root, Path *path);
extern bool gpujoin_columnar_append_path(PlannerInfo *root, Path *path);
extern bool gpujoin_program_compares_only(const GjProgram *program);
extern bool gpujoin_program_runs_compiled(const GpuJoinCostProfile *costs,
										  const GjProgram *program, double pairs);
extern Cost gpujoin_program_pairs_cost(const GpuJoinCostProfile *costs,
									   const GjProgram *program, double pairs,
									   double device_qual_ops);
extern Cost gpujoin_spill_cost(const GpuJoinCostProfile *costs, int algorithm, bool by_range,
							   Path *outer_path, Path *inner_path, double *chunk_pairs);
extern Cost gpujoin_device_work_cost(const GpuJoinCostProfile *costs, int algorithm,
									 double outer_rows, double inner_rows,
									 double candidates, int device_columns,
									 double device_qual_ops);

/* gpujoin.debug_fault */
typedef enum GpuJoinFault
{
	GPUJOIN_FAULT_NONE,
	GPUJOIN_FAULT_BEGIN_OOM,
	GPUJOIN_FAULT_STEP_ERROR,
	GPUJOIN_FAULT_STEP_OOM,
	GPUJOIN_FAULT_SERVICE_BAD_REQUEST,
	GPUJOIN_FAULT_SERVICE_FOREIGN_INNER,	/* attach with another query's token */
	GPUJOIN_FAULT_SERVICE_BAD_INNER,	/* open naming a bogus shared inner side */
	GPUJOIN_FAULT_INNER_SHARE_NO_ROOM,	/* a share of an inner side drained in
										 * parallel finds no staging room */
	GPUJOIN_FAULT_INNER_DRAIN_TOGETHER,	/* the first drainer of an inner side
										 * drained in parallel waits for a
										 * second (tests of several shares) */
	GPUJOIN_FAULT_AHEAD_OPEN_FAILS,	/* a device partition's piece opened
									 * ahead fails in the service */
	GPUJOIN_FAULT_SERVICE_BAD_GROUPS	/* inner groups left in the shared
										 * inner side's chunk exceed the
										 * groups the join's spec says */
} GpuJoinFault;

extern int	gpujoin_debug_fault;

/* kernels/backend_dispatch.c: every call of a backend goes through these */
extern void gpujoin_fault_join_start(void);
extern void *gpujoin_backend_begin(const GjBackend *backend, const GjJoinInput *input,
								   GjError *err);
extern bool gpujoin_step_fault(GjError *err);
extern bool gpujoin_backend_step(const GjBackend *backend, void *state, const GjTile *tile,
								 int64_t *outer_next, GjMatches *matches, GjStats *stats,
								 GjError *err);
extern bool gpujoin_backend_agg_step(const GjBackend *backend, void *state,
									 const GjTile *tile, int64_t *outer_next,
									 const struct GjAggSpec *spec, struct GjAggPartial *partial,
									 GjMatches *matches, GjStats *stats, GjError *err);
extern bool gpujoin_backend_agg_finish(const GjBackend *backend, void *state,
									   const struct GjAggSpec *spec,
									   struct GjAggPartial *partial, GjStats *stats,
									   GjError *err);

/* Which side of the join a key column or scan column comes from. */
#define GJ_SIDE_OUTER	0
#define GJ_SIDE_INNER	1

/*
 * A band run as a range of the inner column, i.y BETWEEN lo(o) AND hi(o), is
 * exact only if the arithmetic of its written form cannot raise an overflow
 * ERROR on any pair: the native plan evaluates it on every pair, the range
 * never looks at the pairs outside.  "abs(o.x - i.y) <= c" subtracts;
 * "o.x - i.y BETWEEN -w AND w" and "i.y + 12 >= o.x", rewritten so that
 * i.y stands alone (gpujoin_algorithm.c), add and subtract too.  Each such
 * node of arithmetic on the way to i.y is a term: its value is
 * inner_sign * i.y + outer_sign * o.x + offset (in exact integers, o.x one
 * outer key column or none), and it must stay within its type's range.  The
 * executor checks every term from the key columns' ranges once both sides
 * are drained, and runs a nested loop over the full device program when it
 * cannot rule an overflow out.
 */
#define GJ_BAND_GUARD_MAX_TERMS 6

typedef struct GpuJoinGuardTerm
{
	int			type;			/* GjType of the node: its overflow range */
	int			inner_sign;		/* +1 or -1 */
	int			outer_col;		/* key column of o.x, or -1 */
	int			outer_sign;		/* +1 or -1 */
	int64		offset;
	bool		strict_min;		/* must exceed the type's minimum (abs, -) */
} GpuJoinGuardTerm;

typedef struct GpuJoinBandGuard
{
	bool		active;			/* nterms > 0 */
	int			inner_col;		/* key column of i.y */
	int			nterms;
	GpuJoinGuardTerm terms[GJ_BAND_GUARD_MAX_TERMS];
} GpuJoinBandGuard;

/* custom_scan/plan/gpujoin_band_guard.c */
extern bool gpujoin_band_guard_holds(const GpuJoinBandGuard *guard,
									 const GjKeyColumns *outer, int64 outer_nrows,
									 const GjKeyColumns *inner, int64 inner_nrows);

/*
 * What the plan carries into the executor, stored in CustomScan.custom_private
 * as plain integer lists so that the plan survives copyObject() and prints
 * (gpujoin_plan_private.h).
 *
 * Key columns are positions in the child plans' target lists: the device
 * only sees those columns.  Scan columns describe custom_scan_tlist: entry k
 * of the scan tuple is attribute scan_attnos[k] of side scan_sides[k].  Where
 * scan_keys[k] is not -1, the side stores no Datums of that column: the
 * values of its key column scan_keys[k] are them (gpujoin_plan_scan_keys);
 * scan_keys is NIL where no column is so.
 */
typedef struct GpuJoinPlanInfo
{
	int			algorithm;		/* GjAlgorithm chosen at plan time */
	int			jointype;		/* JoinType: INNER, LEFT, RIGHT, FULL, SEMI, ANTI */
	List	   *outer_key_attnos;
	List	   *outer_key_types;	/* GjType of each */
	List	   *inner_key_attnos;
	List	   *inner_key_types;
	/* hashed key columns: hash function and collation, else InvalidOid */
	List	   *outer_key_hashfuncs;	/* OID lists */
	List	   *outer_key_collations;
	List	   *inner_key_hashfuncs;
	List	   *inner_key_collations;
	List	   *scan_sides;
	List	   *scan_attnos;
	List	   *scan_keys;
	GjProgram	program;
	GjRangeSpec range;			/* GJ_ALGO_SORTMERGE */
	GjEquiSpec	equi;			/* GJ_ALGO_HASH */
	bool		filter_needed;	/* candidates must pass the whole program */
	GpuJoinBandGuard band_guard;	/* GJ_ALGO_SORTMERGE from a rewritten band */
	List	   *key_clauses;	/* planning only: the clauses the algorithm's
								 * keys test (hash keys, range bounds) */
} GpuJoinPlanInfo;

/* custom_scan/plan/gpujoin_costs.c: the device work of a classified join */
extern bool gpujoin_nestloop_may_win(const GpuJoinPlanInfo *info, double pairs);
extern bool gpujoin_spills_by_range(const GpuJoinPlanInfo *info, int jointype);
extern Cost gpujoin_join_work_cost(PlannerInfo *root, const GpuJoinCostProfile *costs,
								   const GpuJoinPlanInfo *info, Relids outer_relids,
								   Relids inner_relids, double outer_rows,
								   double inner_rows, double candidates,
								   int device_columns, double device_qual_ops,
								   SpecialJoinInfo *sjinfo);

/*
 * custom_scan/plan/gpujoin_expr_compile.c: quals and scalar expressions into a
 * device program over the key columns of both sides.
 */
typedef struct DeviceCompileContext
{
	Relids		outer_relids;
	Relids		inner_relids;
	List	   *outer_vars;		/* Vars loaded from the outer side, in column order,
								 * or hashfunc(Var, 0) for a hashed column */
	List	   *inner_vars;
	GjProgram	program;
	int			depth;			/* current stack depth */
	int			max_depth;
	List	   *key_clauses;	/* hash keys or range bounds the algorithm uses */
} DeviceCompileContext;

extern void gj_device_compile_init(DeviceCompileContext *cxt,
								Relids outer_relids, Relids inner_relids);
extern bool gj_device_compile_qual(DeviceCompileContext *cxt, Expr *qual);
extern int	gj_device_compile_scalar(DeviceCompileContext *cxt, Expr *expr, GjProgram *program);
extern int	gj_device_type_of(Oid typid);
extern bool gj_device_qual_is_hashed(DeviceCompileContext *cxt, Expr *qual);
extern Var *gj_key_column_var(Node *key, Oid *hashfunc, Oid *collation);

/* custom_scan/plan/gpujoin_algorithm.c: nested loop, sort-merge or hash */
extern void gj_device_choose_algorithm(DeviceCompileContext *cxt, List *device_clauses,
									int requested, GpuJoinPlanInfo *info);
extern const char *gpujoin_algorithm_name(int algorithm);

/* custom_scan/plan/gpujoin_path.c: classify a join's quals, cost and offer paths */
extern void gpujoin_add_join_paths(PlannerInfo *root, RelOptInfo *joinrel,
								   RelOptInfo *outerrel, RelOptInfo *innerrel,
								   JoinType jointype, JoinPathExtraData *extra);
extern const char *gpujoin_jointype_name(int jointype);
extern List *gj_quals_in_native_order(PlannerInfo *root, List *rinfos);
extern bool gpujoin_classify_quals(PlannerInfo *root, Relids outer_relids,
								   Relids inner_relids, List *join_rinfos,
								   int requested, List **device_rinfos,
								   List **host_rinfos, GpuJoinPlanInfo *info);

/*
 * custom_scan/plan/gpujoin_plan.c: a GpuJoin path into a CustomScan.  A join as
 * gpujoin_plan_join() plans it, for gpujoin_plan_path() and the aggregate
 * node alike.
 */
typedef struct GpuJoinPlanInputs
{
	Plan	   *outer_plan;
	Plan	   *inner_plan;
	Path	   *outer_path;
	Path	   *inner_path;
	List	   *device_clauses;	/* compiled into info.program */
	List	   *host_clauses;	/* this and the rest in native order */
	List	   *recheck_clauses;	/* every join qual */
	List	   *filter_clauses; /* an outer join's quals from WHERE */
	GpuJoinPlanInfo info;		/* all but the scan columns */
} GpuJoinPlanInputs;

extern const CustomPathMethods gpujoin_path_methods;
extern Plan *gpujoin_plan_path(PlannerInfo *root, RelOptInfo *rel,
							   CustomPath *best_path, List *tlist,
							   List *clauses, List *custom_plans);
extern void gpujoin_plan_join(PlannerInfo *root, CustomPath *best_path,
							  List *custom_plans, GpuJoinPlanInputs *join);
extern int	gpujoin_scan_tlist_add_var(List **scan_tlist, GpuJoinPlanInfo *info,
									   Var *var, Plan *outer_plan, Plan *inner_plan);
extern void gpujoin_plan_scan_keys(GpuJoinPlanInfo *info, List *scan_tlist,
								   List *readers);
extern CustomScan *gpujoin_make_custom_scan(RelOptInfo *rel, CustomPath *best_path,
											List *tlist, List *custom_plans,
											GpuJoinPlanInputs *join, List *scan_tlist);

/* custom_scan/agg/gpujoin_agg_path.c */
extern void gpujoin_add_agg_paths(PlannerInfo *root, RelOptInfo *input_rel,
								  RelOptInfo *grouped_rel, GroupPathExtraData *extra);

/*
 * custom_scan/agg/gpujoin_agg_exec.c: the aggregate node's methods, and the
 * join's, the ones registered under the name GpuJoin: a plan read back in a
 * parallel worker may be either node, and only the aggregate's room, above
 * the join's executor, may create both.
 */
extern const CustomScanMethods gpujoin_agg_scan_methods;
extern const CustomScanMethods gpujoin_scan_methods;
extern void gpujoin_register_methods(void);

/*
 * custom_scan/plan/gpujoin_plan_private.c: GpuJoinPlanInfo in and out of
 * CustomScan.custom_private.  gpujoin_plan_private.h names every position
 * of the plan's custom_private and custom_exprs, which all readers of a
 * GpuJoin plan need, so it comes with this header.
 */
#include "custom_scan/plan/gpujoin_plan_private.h"
extern List *gpujoin_plan_info_serialize(const GpuJoinPlanInfo *info);
extern void gpujoin_plan_info_deserialize(List *private, GpuJoinPlanInfo *info);

/* custom_scan/plan/gpujoin_row_identity.c */
extern void gpujoin_resolve_row_identity(PlannedStmt *stmt);

/* custom_scan/exec/gpujoin_emit.c */
extern Node *gpujoin_create_scan_state(CustomScan *cscan);

/* custom_scan/exec/gpujoin_explain.c */
extern void gpujoin_explain(CustomScanState *node, List *ancestors,
							struct ExplainState *es);

/* devices.c */
extern void gpujoin_service_await_if_chosen(void);
extern const GjBackend *gpujoin_choose_backend(GjDeviceInfo *cuda_info,
											   bool *cuda_first_use);

#endif							/* GPUJOIN_H */

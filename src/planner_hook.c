/*-------------------------------------------------------------------------
 *
 * planner_hook.c
 *	  Entry point of the gpujoin library: its GUCs and the planner hook that
 *	  offers GpuJoin paths.
 *
 * The hook runs for every pair of relations the planner considers joining,
 * so it must stay cheap and must never touch the GPU: opening CUDA happens
 * lazily in a backend, at the first execution of a GpuJoin node.  The library
 * can therefore be preloaded (shared_preload_libraries) on a machine without
 * a GPU or an NVIDIA driver.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>

#include "fmgr.h"
#include "optimizer/paths.h"
#include "optimizer/planner.h"
#include "utils/guc.h"

#include "gpujoin.h"
#include "kernels/shared/kernel_store.h"
#include "service/gpujoin_service.h"
#include "service/service_devices.h"

PG_MODULE_MAGIC;

/* exported: the library is built with -fvisibility=hidden (Makefile) */
PGDLLEXPORT void _PG_init(void);

bool		gpujoin_enabled = true;
int			gpujoin_device = GPUJOIN_DEVICE_AUTO;
int			gpujoin_device_memory_kb = 0;
int			gpujoin_max_host_memory_kb = 4 * 1024 * 1024;
bool		gpujoin_enable_spill = true;
bool		gpujoin_spill_resplit = true;
bool		gpujoin_spill_by_range = true;
bool		gpujoin_device_partitions = true;
bool		gpujoin_partitions_open_ahead = false;
int			gpujoin_algorithm = GJ_ALGO_AUTO;
bool		gpujoin_enable_aggregate = true;
bool		gpujoin_enable_dominance = true;
int			gpujoin_compile_programs = GPUJOIN_COMPILE_ON;
char	   *gpujoin_compiled_kernel_dir = NULL;
int			gpujoin_max_dense_groups = 4 * 1024 * 1024;
bool		gpujoin_overlap_steps = true;
bool		gpujoin_parallel_shared_inner = true;
bool		gpujoin_parallel_inner_drain = true;
bool		gpujoin_columnar_input = true;
bool		gpujoin_page_decoder = true;
bool		gpujoin_time_input_parts = false;
bool		gpujoin_columns_from_keys = true;
bool		gpujoin_service_enabled = false;
int			gpujoin_service_backend = GJ_SERVICE_BACKEND_CUDA;
int			gpujoin_service_workers = 4;
int			gpujoin_service_staging_memory_mb = 512;
int			gpujoin_service_device_memory_kb = 0;

static set_join_pathlist_hook_type prev_join_pathlist_hook = NULL;
static create_upper_paths_hook_type prev_upper_paths_hook = NULL;
static planner_hook_type prev_planner_hook = NULL;

static const struct config_enum_entry device_options[] = {
	{"auto", GPUJOIN_DEVICE_AUTO, false},
	{"cuda", GPUJOIN_DEVICE_CUDA, false},
	{"cpu", GPUJOIN_DEVICE_CPU, false},
	{"service", GPUJOIN_DEVICE_SERVICE, false},
	{NULL, 0, false}
};

static const struct config_enum_entry service_backend_options[] = {
	{"cuda", GJ_SERVICE_BACKEND_CUDA, false},
	{"cpu", GJ_SERVICE_BACKEND_CPU, false},
	{NULL, 0, false}
};

static const struct config_enum_entry fault_options[] = {
	{"none", GPUJOIN_FAULT_NONE, false},
	{"begin_oom", GPUJOIN_FAULT_BEGIN_OOM, false},
	{"step_error", GPUJOIN_FAULT_STEP_ERROR, false},
	{"step_oom", GPUJOIN_FAULT_STEP_OOM, false},
	{"service_bad_request", GPUJOIN_FAULT_SERVICE_BAD_REQUEST, false},
	{"service_foreign_inner", GPUJOIN_FAULT_SERVICE_FOREIGN_INNER, false},
	{"service_bad_inner", GPUJOIN_FAULT_SERVICE_BAD_INNER, false},
	{"inner_share_no_room", GPUJOIN_FAULT_INNER_SHARE_NO_ROOM, false},
	{"inner_drain_together", GPUJOIN_FAULT_INNER_DRAIN_TOGETHER, false},
	{"ahead_open_fails", GPUJOIN_FAULT_AHEAD_OPEN_FAILS, false},
	{"service_bad_groups", GPUJOIN_FAULT_SERVICE_BAD_GROUPS, false},
	{NULL, 0, false}
};

/* on and off take the spellings a boolean setting takes, as it was one */
static const struct config_enum_entry compile_programs_options[] = {
	{"off", GPUJOIN_COMPILE_OFF, false},
	{"on", GPUJOIN_COMPILE_ON, false},
	{"always", GPUJOIN_COMPILE_ALWAYS, false},
	{"false", GPUJOIN_COMPILE_OFF, true},
	{"true", GPUJOIN_COMPILE_ON, true},
	{"no", GPUJOIN_COMPILE_OFF, true},
	{"yes", GPUJOIN_COMPILE_ON, true},
	{"0", GPUJOIN_COMPILE_OFF, true},
	{"1", GPUJOIN_COMPILE_ON, true},
	{NULL, 0, false}
};

static const struct config_enum_entry algorithm_options[] = {
	{"auto", GJ_ALGO_AUTO, false},
	{"nestloop", GJ_ALGO_NESTLOOP, false},
	{"sortmerge", GJ_ALGO_SORTMERGE, false},
	{"hash", GJ_ALGO_HASH, false},
	{NULL, 0, false}
};

static void
gpujoin_join_pathlist_hook(PlannerInfo *root, RelOptInfo *joinrel,
						   RelOptInfo *outerrel, RelOptInfo *innerrel,
						   JoinType jointype, JoinPathExtraData *extra)
{
	if (prev_join_pathlist_hook)
		prev_join_pathlist_hook(root, joinrel, outerrel, innerrel, jointype, extra);
	gpujoin_add_join_paths(root, joinrel, outerrel, innerrel, jointype, extra);
}

/* Aggregates directly over a join may be computed inside GpuJoin. */
static void
gpujoin_upper_paths_hook(PlannerInfo *root, UpperRelationKind stage,
						 RelOptInfo *input_rel, RelOptInfo *output_rel, void *extra)
{
	if (prev_upper_paths_hook)
		prev_upper_paths_hook(root, stage, input_rel, output_rel, extra);
	if (stage == UPPERREL_GROUP_AGG)
		gpujoin_add_agg_paths(root, input_rel, output_rel, (GroupPathExtraData *) extra);
}

/*
 * The finished plan: a GpuJoin below an UPDATE, DELETE or MERGE of several
 * tables gets printable row-identity columns (gpujoin_row_identity.c).
 */
static PlannedStmt *
gpujoin_planner_hook(Query *parse, const char *query_string, int cursorOptions,
					 ParamListInfo boundParams)
{
	PlannedStmt *stmt;

	if (prev_planner_hook)
		stmt = prev_planner_hook(parse, query_string, cursorOptions, boundParams);
	else
		stmt = standard_planner(parse, query_string, cursorOptions, boundParams);
	gpujoin_resolve_row_identity(stmt);
	return stmt;
}

/*
 * gpujoin.compiled_kernel_dir, for this process's cuda backend (every
 * process with the library loaded: the GPU service and each backend that
 * runs cuda itself; a reload reaches them all).  A relative path stays
 * relative: every PostgreSQL process runs in the data directory.
 */
static void
assign_compiled_kernel_dir(const char *newval, void *extra)
{
	gj_kernel_store_set_dir(newval);
}

static void
define_gucs(void)
{
	DefineCustomBoolVariable("gpujoin.enabled",
							 "Lets the planner consider GpuJoin for joins.",
							 NULL,
							 &gpujoin_enabled, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);

	/*
	 * Device choice and the device memory budget decide how much of a shared
	 * GPU one query may take, so only superusers (or roles the DBA grants
	 * SET on them to) may change them.
	 */
	DefineCustomEnumVariable("gpujoin.device",
							 "Backend that runs GpuJoin: auto (cuda when a usable GPU is present, else cpu), cuda, cpu or service.",
							 "service runs the join in the GPU service process (gpujoin.service), on its backend.",
							 &gpujoin_device, GPUJOIN_DEVICE_AUTO, device_options,
							 PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpujoin.device_memory",
							"Device memory one GpuJoin may use for its tiles; 0 picks it from the device.",
							"On the cpu backend this bounds the working set of one tile the same way.",
							&gpujoin_device_memory_kb, 0, 0, INT_MAX,
							PGC_SUSET, GUC_UNIT_KB, NULL, NULL, NULL);
	DefineCustomIntVariable("gpujoin.max_host_memory",
							"Host memory one GpuJoin may use to hold its two inputs.",
							"Past it the inputs spill to temporary files and are joined chunk pair by chunk "
							"pair (gpujoin.enable_spill); without spilling, a join whose inputs are estimated "
							"to need more is left to PostgreSQL's plans, and one that needs more at execution "
							"ends with an ERROR.",
							&gpujoin_max_host_memory_kb, 4 * 1024 * 1024, 64, INT_MAX,
							PGC_SUSET, GUC_UNIT_KB, NULL, NULL, NULL);
	DefineCustomIntVariable("gpujoin.host_buffer_cache",
							"Memory of finished GpuJoins' input columns a process keeps for its next ones.",
							"A drain that writes into pages the process already has mapped takes no page "
							"faults; 0 gives every column's memory back when its query ends.",
							&gpujoin_host_buffer_cache_kb, 64 * 1024, 0, INT_MAX,
							PGC_SUSET, GUC_UNIT_KB, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpujoin.host_huge_pages",
							 "Asks for transparent huge pages for GpuJoin's input columns.",
							 "Fewer page faults where a process writes columns into fresh memory (a parallel "
							 "worker always does); where free huge pages are short, the kernel may compact "
							 "memory during the fault (transparent_hugepage/defrag), which can take longer "
							 "than the faults it saves.",
							 &gpujoin_host_huge_pages, false,
							 PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpujoin.enable_spill",
							 "Lets GpuJoin spill inputs larger than gpujoin.max_host_memory to temporary files.",
							 "The spilled inputs are joined chunk pair by chunk pair; the files count in "
							 "temp_file_limit.  Off, such a join is left to PostgreSQL or ends with an ERROR.",
							 &gpujoin_enable_spill, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpujoin.spill_resplit",
							 "Cuts a hash join's spilled inner side into more partitions when they came out larger than its share of gpujoin.max_host_memory.",
							 "The number of partitions is counted from the planner's estimate of the inner side; "
							 "off, a partition larger than the share is joined chunk by chunk instead.",
							 &gpujoin_spill_resplit, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpujoin.spill_by_range",
							 "Cuts a spilled sort-merge join's inputs into key ranges, so that each side is read once.",
							 "Inner and right joins and aggregates over them, bounded on both sides; "
							 "off, or for other joins, the spilled chunks are joined as a block nested loop.",
							 &gpujoin_spill_by_range, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpujoin.device_partitions",
							 "Cuts a sort-merge or hash join whose sides exceed three quarters of the device memory budget into partition pairs that fit.",
							 "Off, such a join runs on the cpu backend (cuda), or in budget-sized tiles of the "
							 "whole sorted sides (cpu).",
							 &gpujoin_device_partitions, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpujoin.partitions_open_ahead",
							 "In the GPU service, opens a device partition's next piece while the current one runs.",
							 "The service copies the next piece's keys to a device with room (another GPU where "
							 "there is one) and sorts or hashes them there, in the background; off (the default: "
							 "measured slower on one H100 and no faster on two), each piece opens after the "
							 "previous one has ended.",
							 &gpujoin_partitions_open_ahead, false,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("gpujoin.algorithm",
							 "Join algorithm GpuJoin uses: auto, nestloop, sortmerge or hash.",
							 NULL,
							 &gpujoin_algorithm, GJ_ALGO_AUTO, algorithm_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpujoin.enable_aggregate",
							 "Lets GpuJoin compute aggregates over a join itself, without returning the joined rows.",
							 NULL,
							 &gpujoin_enable_aggregate, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpujoin.enable_dominance",
							 "Lets GpuJoin count an aggregate over two inequalities by dominance, without evaluating pairs.",
							 "For count(*) and aggregates of the outer side over a join such as r.a < s.a AND r.b > s.b: "
							 "a sweep over one key with a Fenwick tree over the other, in O((n + m) log m).",
							 &gpujoin_enable_dominance, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("gpujoin.compile_programs",
							 "Lets the cuda backend compile a join's device program to GPU code (NVRTC) instead of interpreting it: off, on or always.",
							 "on: for joins of 10^10 pairs or more whose program a compiled kernel can run "
							 "(and smaller ones whose program the process compiled already); always: at any size. "
							 "Without libnvrtc, or where compiling fails, the program is interpreted.",
							 &gpujoin_compile_programs, GPUJOIN_COMPILE_ON, compile_programs_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("gpujoin.compiled_kernel_dir",
							   "Directory where the cuda backend keeps the kernels it compiled, for the next start of the server.",
							   "A relative path is the data directory's.  A program compiled once (0.2 to 2 s of NVRTC) "
							   "is loaded from there in a few milliseconds after a restart; an empty string keeps "
							   "compiled kernels in memory only.  At most 1024 kernels, 20-200 kB each.",
							   &gpujoin_compiled_kernel_dir, "pg_gpujoin/kernels",
							   PGC_SIGHUP, 0, NULL, assign_compiled_kernel_dir, NULL);
	DefineCustomIntVariable("gpujoin.max_dense_groups",
							"Most groups of an aggregate grouped by both join sides that GpuJoin keeps in a dense array.",
							"The array has a slot for every pair of an outer and an inner group, used or not, and may "
							"also take at most half of gpujoin.max_host_memory; beyond, the groups actually seen are "
							"kept in a hash table on the host, which the backend does not reduce into.",
							&gpujoin_max_dense_groups, 4 * 1024 * 1024, 0, INT_MAX,
							PGC_USERSET, 0, NULL, NULL, NULL);

	DefineCustomBoolVariable("gpujoin.overlap_steps",
							 "Runs a join's next step on the device while the rows of the current one are returned.",
							 "The next step runs on a helper thread of the backend into a second match buffer; "
							 "off runs every step only when its rows are needed.",
							 &gpujoin_overlap_steps, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);

	DefineCustomBoolVariable("gpujoin.parallel_shared_inner",
							 "Drains the inner side of a parallel GpuJoin once, for every process of the Gather.",
							 "With the GPU service running, the first process that needs the inner side drains it "
							 "into the service's staging area and the others read it there; off makes every "
							 "process drain the inner side itself.",
							 &gpujoin_parallel_shared_inner, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);

	DefineCustomBoolVariable("gpujoin.parallel_inner_drain",
							 "Lets every process of a parallel GpuJoin drain a share of the inner side, where the inner side has a partial path and is shared through the GPU service.",
							 "The shares are put together into one shared inner side, as Parallel Hash builds its "
							 "table; off has one process drain the inner side for all of them.",
							 &gpujoin_parallel_inner_drain, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);

	DefineCustomBoolVariable("gpujoin.columnar_input",
							 "Lets GpuJoin read a Seq Scan input of a heap table itself, a page at a time, into its column buffers.",
							 "Off pulls every input row through the child plan.",
							 &gpujoin_columnar_input, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);

	DefineCustomBoolVariable("gpujoin.page_decoder",
							 "Lets the columnar heap reader decode a page's visible tuples with the shared page decoder.",
							 "Off deforms them one at a time as before (for comparisons); scans with quals always do.",
							 &gpujoin_page_decoder, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpujoin.time_input_parts",
							 "Times the columnar heap reader's parts (pages read, tuples decoded, rows stored) for EXPLAIN (ANALYZE, VERBOSE).",
							 "Three to four clock readings a page, 1-7% of the reader's time on the 2-core machine, "
							 "as track_io_timing adds I/O times at a cost; off, EXPLAIN shows no Input Parts.",
							 &gpujoin_time_input_parts, false,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpujoin.columns_from_keys",
							 "Lets a join read a column that only the device quals read from its key column.",
							 "Off stores such a column as a Datum column too, as before (for comparisons; "
							 "the spill tests' limits were sized so).",
							 &gpujoin_columns_from_keys, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);

	/*
	 * The GPU service (docs/architecture.md, section 8).  On by default: on
	 * a machine with an NVIDIA driver it owns the GPU for every backend; on
	 * one without, a cuda service is not even registered and reserves no
	 * staging memory (gpujoin_service_init).
	 */
	DefineCustomBoolVariable("gpujoin.service",
							 "Starts the GPU service process, which opens the device once for every backend.",
							 "Needs gpujoin in shared_preload_libraries; with gpujoin.service_backend = cuda the "
							 "service starts only where an NVIDIA driver is installed, and stops at start where no GPU is usable.",
							 &gpujoin_service_enabled, true,
							 PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("gpujoin.service_backend",
							 "Backend the GPU service runs: cuda, or cpu to run the service without a GPU (for tests).",
							 NULL,
							 &gpujoin_service_backend, GJ_SERVICE_BACKEND_CUDA, service_backend_options,
							 PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpujoin.service_staging_memory",
							"Shared memory where backends hand the GPU service the inputs of their joins and it returns matches.",
							"Reserved at server start when the service runs; a join that finds it full waits up to 10 s for room, one that can never fit runs in the backend.",
							&gpujoin_service_staging_memory_mb, 512, 1, INT_MAX / 2,
							PGC_POSTMASTER, GUC_UNIT_MB, NULL, NULL, NULL);

	DefineCustomIntVariable("gpujoin.service_device_memory",
							"Device memory the GPU service's joins may reserve together on each GPU; 0 is nine tenths of what the GPU has free when the service starts.",
							"Each join reserves its budget (gpujoin.device_memory, or half of this) on each GPU it runs on when it opens; one that finds less than a quarter of it free waits for "
							"other joins to close (up to 10 s), then runs with what is free, in smaller tiles.  With gpujoin.service_backend = cpu, 0 is no limit.",
							&gpujoin_service_device_memory_kb, 0, 0, INT_MAX,
							PGC_POSTMASTER, GUC_UNIT_KB, NULL, NULL, NULL);

	DefineCustomIntVariable("gpujoin.service_workers",
							"Threads of the GPU service that serve the joins of different sessions at once.",
							"Each runs one request at a time, on its own device stream; 1 serves them in turn.",
							&gpujoin_service_workers, 4, 1, 64,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	/* gpujoin.devices, gpujoin.service_simulated_devices */
	gj_service_devices_define_gucs();

	gpujoin_define_cost_gucs();

	DefineCustomEnumVariable("gpujoin.debug_fault",
							 "Injects a device fault into GpuJoin, for testing: none, begin_oom, step_error, step_oom, service_bad_request, service_foreign_inner, service_bad_inner, inner_share_no_room, inner_drain_together, ahead_open_fails or service_bad_groups.",
							 "begin_oom fails the first three attempts to open a join for lack of device memory; "
							 "step_error and step_oom fail the second step of a join.",
							 &gpujoin_debug_fault, GPUJOIN_FAULT_NONE, fault_options,
							 PGC_SUSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);

	MarkGUCPrefixReserved("gpujoin");
}

void
_PG_init(void)
{
	define_gucs();
	gpujoin_register_methods();
	gpujoin_service_init();

	prev_join_pathlist_hook = set_join_pathlist_hook;
	set_join_pathlist_hook = gpujoin_join_pathlist_hook;
	prev_upper_paths_hook = create_upper_paths_hook;
	create_upper_paths_hook = gpujoin_upper_paths_hook;
	prev_planner_hook = planner_hook;
	planner_hook = gpujoin_planner_hook;
}

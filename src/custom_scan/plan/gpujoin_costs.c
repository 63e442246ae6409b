/*-------------------------------------------------------------------------
 *
 * gpujoin_costs.c
 *	  The planner's cost constants for GpuJoin, one set per backend, the
 *	  device work of one join in those units, and the selectivity of a band
 *	  (which GpuJoin pays per candidate, and PostgreSQL estimates far off).
 *
 * The cpu backend and the cuda backend differ by orders of magnitude in what
 * a pair, a sort step or a drained row costs, and only cuda copies columns
 * over a bus, so each has its own GUCs (gpujoin.cpu_* and gpujoin.cuda_*).
 * scripts/calibrate_costs.sh measures all of them on the machine it runs on
 * and prints the settings; the defaults come from its runs on the 2-core
 * development machine and on an H100 (docs/benchmarks.md).
 *
 * The planner must not open CUDA (that costs a quarter of a second and
 * belongs to the first execution), so with gpujoin.device = auto it plans
 * with the cuda constants when the NVIDIA driver's device node exists and
 * with the cpu constants otherwise.  If the executor then finds no usable
 * device it runs the cpu backend: the plan is still right, only its costs
 * were those of the other backend.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "executor/hashjoin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"

#include "gpujoin.h"
#include "service/gpujoin_service.h"

/*
 * Defaults, in the planner's units (seq_page_cost = 1).  The cpu startup_cost
 * is a threshold more than a measurement: a GpuJoin must save about that
 * much before the planner gives up PostgreSQL's own plan for it, which keeps
 * small joins native (the cpu backend measures 0.03 ms for a 10 x 10 join).
 * The cuda constants come from scripts/calibrate_costs.sh on the H100
 * (docs/results/2026-11-24-h100.md): about 3 ms per join however
 * small (it was 20 ms while every join allocated its whole match capacity),
 * 47 ns per drained row and 10 ns per returned row beyond the native parts,
 * the hash fit's sort_cost (the sort-merge fit lost it in the noise: a 1M x
 * 1M sort takes under 10 ms there), the reported transfer time per kB.
 * pair_cost is not the fit's: at these sizes the nested loop's kernel time
 * (200M pairs in 0.04 ms) is lost in the noise, so it comes from the kernel
 * test's figures instead, 2e12 pairs/s through the step path.  CUDA's
 * initialisation, about 300 ms once per backend, is not in startup_cost.
 */
/*
 * The unit of the cuda constants (issue 35).  A GpuJoin competes with
 * PostgreSQL's join plans, not with its seq scans, and PostgreSQL's units
 * buy different times in each: scripts/calibrate_costs.sh on the H100
 * (docs/results/2026-11-27-h100-plan-quality.md) measured its count(*) seq
 * scan at 0.0046 ms a unit and its hash join of 4M x 400k random keys at
 * 0.0157 ms a unit; the H200's parallel hash join of the 10M x 1M
 * equi-join ran at 0.008 (1,023 ms for cost 128k).  Costed at the seq
 * scan's rate, a GpuJoin that takes 164 ms came out dearer than that
 * 1,023 ms hash join, so the cuda constants are GpuJoin's times at the join
 * rate (the fit there puts GpuJoin's own per-row work below its noise at
 * 300k rows: the figures below are the large joins', with a margin):
 *
 *	- columnar_row_cost replaces, for an input the columnar heap reader reads
 *	  (heap_reader.c), the Seq Scan's cpu_tuple_cost and the drain: 32 ns a
 *	  row for the reader (31.3M rows/s on the H100 host,
 *	  docs/results/2026-11-25-columnar-input.md) and 27 ns of the backend's
 *	  own work (303 ms of Backend Time over 11M rows of the 10M x 1M
 *	  equi-join, issue 36): 0.004;
 *	- row_cost 0.005, a row drained through its child plan beyond the
 *	  child's own execution, which the child's cost carries already: on the
 *	  H100 the forced GpuJoin of a fact table partitioned in four drained
 *	  its Parallel Append at 96 ns a row, the scans' own work included:
 *	  0.0061 at the join rate, about 0.003 beyond the scans; 0.005 keeps a
 *	  margin and is the cpu backend's figure as well.  It
 *	  was 0.011 from the earlier fit, which counted the child scan's work
 *	  again: there bench_plan_quality.sh's equi_part_count and equi_part_sum
 *	  stayed with PostgreSQL's parallel hash join (1,589 and 1,538 ms) while
 *	  GpuJoin forced took 298 and 331 ms.  At 0.005 both are GpuJoins (0.20
 *	  and 0.23 of native) and none of the other 40 shapes changed plan:
 *	  slower 0, missed 0 (docs/results/2026-11-28-h100-d770eb5-cuda-row-cost.md);
 *	- output_cost, 10 ns a returned row beyond the native parts: 0.0006;
 *	- transfer_cost, the reported transfer time per kB: 0.0011;
 *	- sort_cost, the large joins' rate: the hash kernels of the 10M x 1M
 *	  join take 1-4 ms for its 18M steps (issue 36), 1.5e-5 a step; 5e-5;
 *	- startup_cost stays a threshold (the fit: about 70), pair_cost comes
 *	  from the compare kernels as before;
 *	- program_pair_cost, a pair and instruction of a program the device
 *	  interprets (anything but a conjunction of plain column compares, which
 *	  the compare kernels run at pair_cost a compare): kernel_test
 *	  bench-program-count measured 3.4e10 pairs/s for an 11-instruction band
 *	  program and 8.8e10 pairs/s for two compares and a 6-instruction qual on
 *	  the H200 (issue 37), 0.15e-6 to 0.45e-6 an instruction: 0.4e-6.  A
 *	  program the backend runs compiled (gpujoin.compile_programs, a nested
 *	  loop of 10^10 pairs or more) is charged instead 0.3 pair_cost for
 *	  each instruction beyond the leading compares, on every pair (never
 *	  more than interpreting): the same bench's 4.74e12 pairs/s compiled
 *	  against 8.0e12 for the compares alone (COMPILED_REST_FACTOR).
 *
 * The cpu backend's constants, the same way on the 2-core machine
 * (docs/results/2026-11-27-2core-plan-quality.md): its hash join of 4M x 400k
 * random keys ran at 0.0084 ms a unit, its seq scan at 0.0017, and the fit
 * at the join rate gave row 0.0011-0.0016, pair 5.5e-5, sort 1.1e-4 to
 * 1.7e-4, output 0-0.0003 (startup stays the threshold of 100):
 *
 *	- row_cost 0.005, a row pulled through a child plan beyond the child's
 *	  own execution, which the child's cost already carries: 13M rows/s
 *	  through a Seq Scan, 77 ns a row, of which the scan's own 29.5 ns (the
 *	  seq scan reference) leave 47.5 ns, 0.0057 at the join rate (it was
 *	  0.01, the whole 77 ns counted again); 86 ns through a Parallel Append
 *	  of four Seq Scans on 2026-11-27, when that machine's join reference
 *	  ran at 0.0129 ms a unit: 0.0045.  At 0.01 a fact table partitioned in
 *	  four (bench_plan_quality.sh's equi_part_count and equi_part_sum, an
 *	  Append under the join) stayed with PostgreSQL's parallel hash join
 *	  while GpuJoin took 0.46-0.54 of its time; at 0.005 both are
 *	  GpuJoins and none of the other 40 shapes changed plan
 *	  (docs/results/2026-11-27-2core-5a22652-row-cost.md);
 *	- columnar_row_cost 0.004: the reader's 71M rows/s and the fit's row cost;
 *	- pair_cost 1e-4, sort_cost 2e-4, output_cost 0.001: the fit's with about
 *	  a factor 2 to spare;
 *	- program_pair_cost 1e-4: the interpreter takes about a compare's time
 *	  for an instruction's.
 */
/*
 * Against a hash join whose table stays in the CPU's cache (issue 35,
 * equi_filter_dc): the join reference above is a hash join whose table is
 * bigger than the caches, where every probe waits for memory and
 * PostgreSQL's units buy 0.0084 ms each on the 2-core machine.  Where the
 * table fits in the cache, PostgreSQL's hash join runs at about its scan's
 * rate instead: 1M rows of f joined to the 100 rows of d that WHERE d.c = 7
 * leaves ran at 0.0019 ms a unit, the seq scan at 0.0017.  GpuJoin's own
 * work is no faster there (its GpuJoin took 1.2-1.5 times as long), so
 * against such a join its constants count the same time at the scan's
 * rate: times the two rates' ratio, cached_join_factor, 0.0084 / 0.0017 =
 * 4.8 on the 2-core machine (gpujoin_costs_against_native).  hash_cache_kb
 * is the cache the table must fit in: a core's L2 there, 1 MB (the same
 * join with 10k rows of d, a table of 0.5 MB, ran at 0.0024 ms a unit, with
 * 100k rows, 5 MB, at 0.0045).  The cuda set keeps a factor of 1, not
 * measured there: on the H100 the same shape, 10M rows of f against 1000 of
 * d, is a GpuJoin that takes 0.57 times PostgreSQL's time
 * (docs/results/2026-11-27-h100-ac6f62e-plan-quality.md), and the cuda
 * constants, which carry margins of their own, already rank it so.
 */
/*		backend	startup	row		transfer	pair		sort		output	columnar	program		cache kB	cached factor */
GpuJoinCostProfile gpujoin_cpu_costs = {"cpu", 100.0, 0.005, 0.0, 0.0001, 0.0002, 0.001, 0.004, 0.0001, 1024.0, 4.8};
GpuJoinCostProfile gpujoin_cuda_costs = {"cuda", 700.0, 0.005, 0.0011, 0.0000001, 0.00005, 0.0006, 0.004, 0.0000004, 1024.0, 1.0};

/* One GUC per constant and backend: gpujoin.<backend>_<name>. */
typedef struct CostGucSpec
{
	const char *name;
	size_t		offset;			/* of the constant in GpuJoinCostProfile */
	const char *description;	/* %s: the backend */
	bool		cuda_only;
} CostGucSpec;

static const CostGucSpec cost_gucs[] = {
	{"startup_cost", offsetof(GpuJoinCostProfile, startup_cost),
	"Planner's estimate of the fixed cost of a GpuJoin on the %s backend.", false},
	{"row_cost", offsetof(GpuJoinCostProfile, row_cost),
	"Planner's estimate of the cost of draining one input row for the %s backend.", false},
	{"transfer_cost", offsetof(GpuJoinCostProfile, transfer_cost),
	"Planner's estimate of the cost of copying one kilobyte of columns or matches between host and %s device.", true},
	{"pair_cost", offsetof(GpuJoinCostProfile, pair_cost),
	"Planner's estimate of the cost of one operator of the device quals on one pair in a nested-loop GpuJoin on the %s backend.", false},
	{"sort_cost", offsetof(GpuJoinCostProfile, sort_cost),
	"Planner's estimate of the cost of one step of sorting or searching keys in a sort-merge or hash GpuJoin on the %s backend.", false},
	{"output_cost", offsetof(GpuJoinCostProfile, output_cost),
	"Planner's estimate of the cost of returning one joined row from the %s backend.", false},
	{"columnar_row_cost", offsetof(GpuJoinCostProfile, columnar_row_cost),
	"Planner's estimate of the cost of reading one row with the columnar heap reader and draining it for the %s backend.", false},
	{"program_pair_cost", offsetof(GpuJoinCostProfile, program_pair_cost),
	"Planner's estimate of the cost of one interpreted instruction of the device program on one pair on the %s backend.", false},
	{"hash_cache_kb", offsetof(GpuJoinCostProfile, hash_cache_kb),
	"Size of the CPU cache within which PostgreSQL's hash table of a join's input is probed at its scan's rate, for costing the %s backend.", false},
	{"cached_join_factor", offsetof(GpuJoinCostProfile, cached_join_factor),
	"Factor on the cost constants of the %s backend where the hash join PostgreSQL would run instead keeps its table within gpujoin.*_hash_cache_kb.", false},
};

static void
define_profile_gucs(GpuJoinCostProfile *profile, const char *what)
{
	/* the GUC machinery keeps the descriptions, it does not copy them */
	MemoryContext old_context = MemoryContextSwitchTo(TopMemoryContext);

	for (int i = 0; i < lengthof(cost_gucs); i++)
	{
		double	   *value = (double *) ((char *) profile + cost_gucs[i].offset);

		if (cost_gucs[i].cuda_only && strcmp(profile->backend, "cuda") != 0)
			continue;
		DefineCustomRealVariable(psprintf("gpujoin.%s_%s", profile->backend, cost_gucs[i].name),
								 psprintf(cost_gucs[i].description, what),
								 NULL, value, *value, 0.0, DBL_MAX,
								 PGC_USERSET, 0, NULL, NULL, NULL);
	}
	MemoryContextSwitchTo(old_context);
}

void
gpujoin_define_cost_gucs(void)
{
	define_profile_gucs(&gpujoin_cpu_costs, "cpu");
	define_profile_gucs(&gpujoin_cuda_costs, "CUDA");
}

/* Is the relation a table of the heap access method? */
static bool
relation_is_heap(Oid relid)
{
	HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	bool		heap = false;

	if (HeapTupleIsValid(tuple))
	{
		Form_pg_class form = (Form_pg_class) GETSTRUCT(tuple);

		heap = (form->relkind == RELKIND_RELATION || form->relkind == RELKIND_MATVIEW) &&
			form->relam == HEAP_TABLE_AM_OID;
		ReleaseSysCache(tuple);
	}
	return heap;
}

/*
 * Will the cpu backend run the joins planned now?  gpujoin.device = cpu, or
 * auto on a machine without an NVIDIA driver.
 */
bool
gpujoin_plans_for_cpu(void)
{
	return gpujoin_device == GPUJOIN_DEVICE_CPU ||
		(gpujoin_device == GPUJOIN_DEVICE_SERVICE &&
		 gpujoin_service_backend == GJ_SERVICE_BACKEND_CPU) ||
		(gpujoin_device == GPUJOIN_DEVICE_AUTO && !gpujoin_nvidia_driver_present());
}

/*
 * Is a parallel GpuJoin offered?  Where every process runs its share on the
 * cpu backend, or as a client of the GPU service (gpujoin.device = service,
 * or auto and cuda while the service runs on cuda): never where each
 * process would open its own CUDA context.
 */
bool
gpujoin_plans_parallel(void)
{
	return gpujoin_plans_for_cpu() ||
		(gpujoin_device != GPUJOIN_DEVICE_CPU && gpujoin_service_runs_cuda());
}

/* The constants of a parallel GpuJoin's plan. */
const GpuJoinCostProfile *
gpujoin_parallel_costs(void)
{
	return gpujoin_device != GPUJOIN_DEVICE_CPU && gpujoin_service_runs_cuda() ?
		&gpujoin_cuda_costs : &gpujoin_cpu_costs;
}

/*
 * The constants to plan with (a parallel GpuJoin's: gpujoin_parallel_costs).
 */
const GpuJoinCostProfile *
gpujoin_planning_costs(void)
{
	return gpujoin_plans_for_cpu() ? &gpujoin_cpu_costs : &gpujoin_cuda_costs;
}

/*
 * PostgreSQL's hash table of a rel's rows, in bytes, as
 * ExecChooseHashTableSize sizes it: per row a HashJoinTuple header, a
 * MinimalTuple header and the row's columns, each MAXALIGNed, and a bucket
 * pointer per row, rounded up to a power of 2.
 */
static double
native_hash_table_bytes(RelOptInfo *rel)
{
	double		rows = Max(rel->rows, 1.0);
	double		tuple_bytes = HJTUPLE_OVERHEAD + MAXALIGN(SizeofMinimalTupleHeader) +
		MAXALIGN(rel->reltarget->width);

	return rows * tuple_bytes + pow(2.0, ceil(log2(rows))) * sizeof(HashJoinTuple);
}

/*
 * Could PostgreSQL run the join as a hash join?  A clause of the join's
 * restrictlist that is hash-joinable and has one side on each input (as
 * hash_inner_and_outer in joinpath.c looks for).
 */
static bool
native_hash_joinable(List *restrictlist, RelOptInfo *outerrel, RelOptInfo *innerrel)
{
	ListCell   *lc;

	foreach(lc, restrictlist)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (!rinfo->can_join || !OidIsValid(rinfo->hashjoinoperator))
			continue;
		if ((bms_is_subset(rinfo->left_relids, outerrel->relids) &&
			 bms_is_subset(rinfo->right_relids, innerrel->relids)) ||
			(bms_is_subset(rinfo->left_relids, innerrel->relids) &&
			 bms_is_subset(rinfo->right_relids, outerrel->relids)))
			return true;
	}
	return false;
}

/*
 * The constants to cost a GpuJoin of outerrel and innerrel with.  costs are
 * GpuJoin's times at the rate of PostgreSQL's hash join beyond the caches
 * (the join reference, see above).  Where PostgreSQL could run the join as
 * a hash join whose table fits in hash_cache_kb, that join runs at about its
 * scan's rate, and GpuJoin's work counts in those cheaper units: the
 * constants times cached_join_factor (the ratio of the two rates), except
 * startup_cost, which is a threshold, not a time.  A table bigger than the
 * cache is probed partly within it, about cache / table of the probes where
 * they land at random, and the rate is the mean of the two rates weighted
 * by that share, so the factor falls towards 1 as the table grows (5 MB on
 * the 2-core machine: 1.2).
 *
 * The table PostgreSQL would build is of the inner side for a semi or anti
 * join (PostgreSQL 15 hashes no other), else of the smaller side; of the
 * whole rel also for a partial path, as each process of a parallel hash
 * join probes all of it.  Only where the settings allow PostgreSQL a hash
 * join (enable_hashjoin): with it off there is no such join to rank
 * against, and a shard planning a pushed-down join with PostgreSQL's join
 * methods off (test/scaleout) reports GpuJoin's own estimate.  Returns costs
 * where nothing changes, else scaled, filled in.
 */
const GpuJoinCostProfile *
gpujoin_costs_against_native(const GpuJoinCostProfile *costs, List *restrictlist,
							 RelOptInfo *outerrel, RelOptInfo *innerrel, JoinType jointype,
							 GpuJoinCostProfile *scaled)
{
	double		table_bytes;
	double		in_cache;
	double		factor;

	if (costs->cached_join_factor <= 1.0 || !enable_hashjoin ||
		!native_hash_joinable(restrictlist, outerrel, innerrel))
		return costs;
	table_bytes = native_hash_table_bytes(innerrel);
	if (jointype != JOIN_SEMI && jointype != JOIN_ANTI)
		table_bytes = Min(table_bytes, native_hash_table_bytes(outerrel));
	in_cache = Min(costs->hash_cache_kb * 1024.0 / table_bytes, 1.0);
	factor = 1.0 / (in_cache / costs->cached_join_factor + (1.0 - in_cache));

	*scaled = *costs;
	scaled->row_cost *= factor;
	scaled->transfer_cost *= factor;
	scaled->pair_cost *= factor;
	scaled->sort_cost *= factor;
	scaled->output_cost *= factor;
	scaled->columnar_row_cost *= factor;
	scaled->program_pair_cost *= factor;
	return scaled;
}

/*
 * The device work of one join.  The nested loop evaluates the device quals
 * on every pair: pair_cost is per operator of them (device_qual_ops, their
 * cost_qual_eval() in cpu_operator_cost units), since a band's two
 * comparisons and two additions take about four times one comparison.
 * Sort-merge sorts both sides (about 8 steps a row) and searches once per
 * outer row (log2(inner) steps).  Hash sorts the inner side's key hashes by
 * bucket and finds an outer key's candidates in its bucket (2 steps an outer
 * row), so, like PostgreSQL's hash join, it wants the smaller side inner.  Writing a match costs the same in every algorithm and is
 * in output_cost.  On cuda the key columns travel to the device (8 bytes a
 * value) and the matches back (two row numbers each).
 */
Cost
gpujoin_device_work_cost(const GpuJoinCostProfile *costs, int algorithm,
						 double outer_rows, double inner_rows, double candidates,
						 int device_columns, double device_qual_ops)
{
	Cost		work;
	double		kbytes;

	if (algorithm == GJ_ALGO_NESTLOOP)
		work = outer_rows * inner_rows * Max(device_qual_ops, 1.0) * costs->pair_cost;
	else if (algorithm == GJ_ALGO_HASH)
		work = (outer_rows * 2 + inner_rows * 8) * costs->sort_cost;
	else
		work = ((outer_rows + inner_rows) * 8 +
				outer_rows * log2(Max(inner_rows, 2))) * costs->sort_cost;

	kbytes = ((outer_rows + inner_rows) * Max(device_columns, 1) * 8.0 + candidates * 8.0) / 1024.0;
	return work + kbytes * costs->transfer_cost;
}

/*
 * Will a join of this plan info that spills cut its inputs into key ranges
 * (spill_range.c, gpujoin_spill_range_eligible)?  A sort-merge range bounded
 * on both sides, without a guard (a guarded band keeps the block nested
 * loop), not a FULL join, with gpujoin.spill_by_range on.  The executor
 * also wants exact keys; the planner prices the range spill where it can
 * see the rest.
 */
bool
gpujoin_spills_by_range(const GpuJoinPlanInfo *info, int jointype)
{
	return gpujoin_spill_by_range && info->algorithm == GJ_ALGO_SORTMERGE &&
		info->range.lo_ninstrs > 0 && info->range.hi_ninstrs > 0 &&
		!info->band_guard.active && jointype != JOIN_FULL;
}

/*
 * The leading compares of a program keep about half of the pairs each: a
 * compare of two columns drawn from one distribution, the case the band and
 * inequality joins measured (issue 37) were.
 */
#define LEADING_COMPARE_PASS	0.5

/*
 * A compiled program's instructions beyond its leading compares cost this
 * many compares each, on every pair: the compiled kernel runs them as
 * straight-line code, not only on the pairs the compares pass.  kernel_test
 * bench-program-count on the H200 (issue 37) counted o.a < i.a AND
 * o.b > i.b at 8.0e12 pairs/s with the compare kernel and the same AND
 * o.a + i.b > 0 compiled at 4.74e12 pairs/s (interpreted: 8.8e10), so the
 * 5 instructions of the rest took (8.0 / 4.74 - 1) times the 2 compares'
 * time: 0.28 of a compare each, rounded up.
 */
#define COMPILED_REST_FACTOR	0.3

/*
 * The cost of evaluating a device program on pairs.  A conjunction of plain
 * column compares runs in the compare kernels at pair_cost a compare
 * (device_qual_ops of them, from cost_qual_eval); any other program runs
 * its leading compares so (gj_program_leading_compares) and interprets the
 * rest, program_pair_cost an instruction, on the pairs they pass, or where
 * the program runs compiled (gpujoin_program_runs_compiled) runs the rest
 * on every pair at COMPILED_REST_FACTOR compares an instruction.
 */
static int
program_rest(const GjProgram *program, int *ncompares)
{
	GjLeadingCompares lead;
	int			rest = 0;

	*ncompares = gj_program_leading_compares(program->instrs, program->ninstrs, &lead);
	for (int pc = lead.pc; pc < program->ninstrs; pc++)
	{
		if (program->instrs[pc].op != GJOP_AND)
			rest++;
	}
	return rest;
}

/* Is the program a conjunction of plain column compares? */
bool
gpujoin_program_compares_only(const GjProgram *program)
{
	int			ncompares;

	return program_rest(program, &ncompares) == 0 && ncompares > 0;
}

/*
 * Will the cuda backend run this program compiled in a join of this many
 * pairs?  The test of cuda_program_count.cu's pc_compiled_kernel and
 * cuda_compile.cu's gj_cuda_compiled_kernel, as far as the planner can see
 * it: gpujoin.compile_programs, the program's size and the join's pairs
 * (with compile_programs = on, a smaller join also runs a program that its
 * process compiled before, which the planner cannot know).  always, which
 * compiles at any size, plans as on: it is for testing the compiled
 * kernels, whose plans should be those the default gives, and a compile
 * (0.3 to 2 s) costs a small join more than interpreting it.  The constants
 * are the cuda backend's by their name, which a copy that
 * gpujoin_costs_against_native scaled keeps.  Only the kernels that count
 * or return a nested loop's pairs run compiled: the caller knows which
 * kernel it costs.
 */
bool
gpujoin_program_runs_compiled(const GpuJoinCostProfile *costs, const GjProgram *program,
							  double pairs)
{
	return strcmp(costs->backend, gpujoin_cuda_costs.backend) == 0 &&
		gpujoin_compile_programs != GPUJOIN_COMPILE_OFF &&
		program->ninstrs >= 1 && program->ninstrs <= GJ_COMPILE_MAX_INSTRS &&
		pairs >= GJ_COMPILE_MIN_PAIRS;
}

Cost
gpujoin_program_pairs_cost(const GpuJoinCostProfile *costs, const GjProgram *program,
						   double pairs, double device_qual_ops)
{
	int			ncompares;
	int			rest = program_rest(program, &ncompares);
	double		interpreted;

	if (ncompares > 0 && rest == 0)
		return pairs * Max(device_qual_ops, 1.0) * costs->pair_cost;
	interpreted = ncompares * costs->pair_cost +
		pow(LEADING_COMPARE_PASS, ncompares) * rest * costs->program_pair_cost;

	/*
	 * A compiled kernel is never slower than the interpreter (5.4e11 to
	 * 4.7e12 pairs/s against 3 to 9e10 there), but its rest runs on every
	 * pair while the interpreter's runs on the pairs the compares pass: past
	 * a few compares the model would make it the dearer, so it takes the
	 * cheaper of the two.
	 */
	if (gpujoin_program_runs_compiled(costs, program, pairs))
		return pairs * Min(interpreted,
						   (ncompares + COMPILED_REST_FACTOR * rest) * costs->pair_cost);
	return pairs * interpreted;
}

static Selectivity key_clauses_selectivity(PlannerInfo *root, List *clauses,
											SpecialJoinInfo *sjinfo);

/*
 * Would the nested loop be worth costing beside the chooser's pick?  Where
 * a sort-merge join filters its candidates through the rest of the
 * program: a bound that keeps half of the pairs leaves the filter as much
 * work as the nested loop, without the compare kernels (issue 35: a
 * sort-merge join of r.a < s.a AND r.b > s.b AND r.a + s.b > 0 took 4 times
 * the nested loop's time).  Below NESTLOOP_ALTERNATIVE_MIN_PAIRS pairs either
 * takes well under a millisecond of device work, and the chooser's pick
 * stays (the regression tests' small joins keep their algorithms).
 */
#define NESTLOOP_ALTERNATIVE_MIN_PAIRS	1e6

bool
gpujoin_nestloop_may_win(const GpuJoinPlanInfo *info, double pairs)
{
	return gpujoin_algorithm == GJ_ALGO_AUTO &&
		info->algorithm == GJ_ALGO_SORTMERGE && info->filter_needed &&
		pairs >= NESTLOOP_ALTERNATIVE_MIN_PAIRS;
}

/*
 * The device work of a classified join: the algorithm's own
 * (gpujoin_device_work_cost) and, for a sort-merge or hash join whose keys
 * are not the whole condition, the program evaluated on every candidate the
 * keys find, interpreted without the compare kernels' prefilter (the
 * candidates of a sort-merge range come one outer row at a time).  The
 * candidates the keys find: a band's from the inner key's histogram, else
 * the key clauses' selectivity; never fewer than those that match.
 */
Cost
gpujoin_join_work_cost(PlannerInfo *root, const GpuJoinCostProfile *costs,
					   const GpuJoinPlanInfo *info, Relids outer_relids, Relids inner_relids,
					   double outer_rows, double inner_rows, double candidates,
					   int device_columns, double device_qual_ops, SpecialJoinInfo *sjinfo)
{
	Cost		work;

	if (info->algorithm == GJ_ALGO_NESTLOOP)
	{
		double		kbytes;

		work = gpujoin_program_pairs_cost(costs, &info->program, outer_rows * inner_rows,
										  device_qual_ops);
		kbytes = ((outer_rows + inner_rows) * Max(device_columns, 1) * 8.0 + candidates * 8.0) / 1024.0;
		return work + kbytes * costs->transfer_cost;
	}
	work = gpujoin_device_work_cost(costs, info->algorithm, outer_rows, inner_rows, candidates,
									device_columns, device_qual_ops);
	if (info->filter_needed)
	{
		double		key_candidates = candidates;
		int			ninstrs = 0;

		/* a hash join's candidates are its key matches: about the result */
		if (info->algorithm == GJ_ALGO_SORTMERGE)
		{
			List	   *band_clauses;
			Selectivity key_sel;

			key_sel = gpujoin_band_selectivity(root, info->key_clauses, outer_relids,
											   inner_relids, &band_clauses, NULL);
			if (key_sel < 0)
				key_sel = 1.0;
			key_sel *= key_clauses_selectivity(root,
											   list_difference_ptr(info->key_clauses,
																   band_clauses),
											   sjinfo);
			key_candidates = Max(outer_rows * inner_rows * key_sel, candidates);
		}
		for (int pc = 0; pc < info->program.ninstrs; pc++)
		{
			if (info->program.instrs[pc].op != GJOP_AND)
				ninstrs++;
		}
		work += key_candidates * ninstrs * costs->program_pair_cost;
	}
	return work;
}

/*
 * What an input costs GpuJoin: its plan and the drain of each row into the
 * host buffers (row_cost), or, where the columnar heap reader will read the
 * table itself (a plain Seq Scan of a heap table: heap_reader.c), the scan's
 * pages and quals as the Seq Scan costs them and columnar_row_cost for each
 * row read instead of the scan's cpu_tuple_cost and the drain.  A scan with
 * quals is evaluated tuple by tuple on the scan slot, as ExecScan does, so
 * there the reader saves only the drain of the rows that pass: the Seq
 * Scan's cost and columnar_row_cost for each of them (on the H100 a serial
 * GpuJoin reading 10M rows through a filter took 1.1 s, 2.5 times the
 * parallel hash join the cheaper per-row cost had made it beat).  The
 * executor makes the final choice (it also needs plain columns and an MVCC
 * snapshot); the planner's test is the part it can see.
 */
Cost
gpujoin_input_cost(PlannerInfo *root, Path *path, const GpuJoinCostProfile *costs)
{
	RelOptInfo *rel = path->parent;

	if (gpujoin_columnar_input && gpujoin_columnar_scan_path(root, path))
	{
		/* a partial scan reads its share of the table */
		double		read = rel->tuples * (path->rows / Max(rel->rows, 1.0));

		if (rel->baserestrictinfo != NIL)
			return path->total_cost + path->rows * costs->columnar_row_cost;
		return Max(path->total_cost + read * (costs->columnar_row_cost - cpu_tuple_cost), 0);
	}

	/*
	 * An Append of such scans (a partitioned table): the reader reads each
	 * table in turn, and the Append's rows (this process's share, for a
	 * partial one) are the rows the scans read where none has quals.  The
	 * Append node itself never runs: its own charge for each row it passes
	 * on (half a cpu_tuple_cost, costsize.c's APPEND_CPU_COST_MULTIPLIER)
	 * goes as well, where it made one (an Append of one subpath costs what
	 * the subpath does).
	 */
	if (gpujoin_columnar_input && gpujoin_columnar_append_path(root, path))
	{
		Cost		append_row =
			list_length(((AppendPath *) path)->subpaths) > 1 ? cpu_tuple_cost * 0.5 : 0;
		ListCell   *lc;

		foreach(lc, ((AppendPath *) path)->subpaths)
		{
			if (((Path *) lfirst(lc))->parent->baserestrictinfo != NIL)
				return Max(path->total_cost + path->rows * (costs->columnar_row_cost - append_row), 0);
		}
		return Max(path->total_cost +
				   path->rows * (costs->columnar_row_cost - cpu_tuple_cost - append_row), 0);
	}
	return path->total_cost + path->rows * costs->row_cost;
}

/*
 * Whether the columnar heap reader can read the path's rows itself: a plain
 * Seq Scan (or Parallel Seq Scan) of a heap table, of the query's own or a
 * partition of one.
 */
bool
gpujoin_columnar_scan_path(PlannerInfo *root, Path *path)
{
	RelOptInfo *rel = path->parent;

	return path->pathtype == T_SeqScan && IsA(path, Path) &&
		(rel->reloptkind == RELOPT_BASEREL || rel->reloptkind == RELOPT_OTHER_MEMBER_REL) &&
		rel->rtekind == RTE_RELATION && path->param_info == NULL &&
		relation_is_heap(planner_rt_fetch(rel->relid, root)->relid);
}

/*
 * Whether the path is an Append the columnar heap reader reads subplan by
 * subplan (heap_reader.c): every subpath one it can read, and under a
 * Parallel Append every one of them partial (a non-partial subplan there
 * runs in one process only).  What the planner cannot see here, the
 * executor checks (heap_reader.c), and then drains the Append through its
 * plan, costed as read: pruning while running (a partition key compared
 * with a parameter), subplans that compute columns (a UNION ALL branch's
 * expressions), an EvalPlanQual recheck.
 */
bool
gpujoin_columnar_append_path(PlannerInfo *root, Path *path)
{
	AppendPath *apath;
	ListCell   *lc;

	if (!IsA(path, AppendPath) || path->param_info != NULL)
		return false;
	apath = (AppendPath *) path;
	if (apath->subpaths == NIL)
		return false;
	foreach(lc, apath->subpaths)
	{
		Path	   *sub = (Path *) lfirst(lc);

		if (!gpujoin_columnar_scan_path(root, sub) ||
			(path->parallel_aware && !sub->parallel_aware))
			return false;
	}
	return true;
}

/*
 * Host memory of a drained input, by the planner's estimate: per row the
 * stored columns, their null flags and the key columns (host_buffers.c).
 */
double
gpujoin_input_host_bytes(Path *path)
{
	return path->rows * (path->pathtarget->width + 24.0);
}

/*
 * The cost of spilling inputs past gpujoin.max_host_memory (spill.c),
 * 0 when they fit.  The inner side may hold half the limit and the outer
 * side what the inner side leaves; a side past its share is written to a
 * temporary file once and read back in chunks: the outer side once, the
 * inner side once per outer chunk, a page at seq_page_cost each way, as
 * cost_hashjoin() counts its batches.  Each chunk pair is a join of its own:
 * its startup, and the sorted and hash joins' per-row work on every pair's
 * rows (an inner chunk is sorted or hashed again for each outer chunk, an
 * outer chunk probes each inner chunk).  The nested loop's pairs are the
 * same in chunks.  *chunk_pairs is set to the pairs expected.
 *
 * by_range: a sort-merge join the executor will cut into key ranges
 * (spill_range.c): each spilled side is written and read once, and range i
 * meets range i only, so neither the inner side's reads nor the chunk
 * pairs multiply.
 */
Cost
gpujoin_spill_cost(const GpuJoinCostProfile *costs, int algorithm, bool by_range,
				   Path *outer_path, Path *inner_path, double *chunk_pairs)
{
	double		limit = (double) gpujoin_max_host_memory_kb * 1024.0;
	double		outer_bytes = gpujoin_input_host_bytes(outer_path);
	double		inner_bytes = gpujoin_input_host_bytes(inner_path);
	double		inner_chunks = 1;
	double		outer_chunks = 1;
	double		outer_share;
	double		pages = 0;
	Cost		cost;

	if (inner_bytes > limit / 2)
		inner_chunks = ceil(inner_bytes / (limit / 2));
	outer_share = Max(limit - Min(inner_bytes, limit / 2), limit / 4);
	if (outer_bytes > outer_share)
		outer_chunks = ceil(outer_bytes / outer_share);
	*chunk_pairs = outer_chunks * inner_chunks;
	if (*chunk_pairs <= 1)
		return 0;
	if (by_range && algorithm == GJ_ALGO_SORTMERGE)
	{
		*chunk_pairs = Max(outer_chunks, inner_chunks);
		if (outer_chunks > 1)
			pages += 2 * ceil(outer_bytes / BLCKSZ);
		if (inner_chunks > 1)
			pages += 2 * ceil(inner_bytes / BLCKSZ);
		return pages * seq_page_cost + (*chunk_pairs - 1) * costs->startup_cost;
	}
	if (outer_chunks > 1)
		pages += 2 * ceil(outer_bytes / BLCKSZ);
	if (inner_chunks > 1)
		pages += ceil(inner_bytes / BLCKSZ) * (1 + outer_chunks);
	cost = pages * seq_page_cost + (*chunk_pairs - 1) * costs->startup_cost;
	if (algorithm != GJ_ALGO_NESTLOOP)
		cost += gpujoin_device_work_cost(costs, algorithm,
										 outer_path->rows * (inner_chunks - 1),
										 inner_path->rows * (outer_chunks - 1), 0, 1, 1.0);
	return cost;
}

/*
 * Band selectivity.  PostgreSQL estimates each inequality of a band
 * `s.t BETWEEN r.t - 50 AND r.t + 50` at a default 1/3 and the pair at 1/9
 * of all pairs, where the band holds width / (range of s.t) of them: at
 * 100000 x 100000 rows over a range of 10^7, 10^9 candidates for 10^5.
 * GpuJoin pays per candidate (and a semi or anti join skips all but the
 * first match of each row), so it estimates the band from the inner key's
 * histogram instead: the inner column between two bounds that are one outer
 * expression plus constants.
 */

/* A numeric-like constant as a double; false for anything else. */
static bool
const_as_double(Node *node, double *value)
{
	Const	   *c = (Const *) node;

	if (!IsA(node, Const) || c->constisnull)
		return false;
	switch (c->consttype)
	{
		case INT2OID:
			*value = DatumGetInt16(c->constvalue);
			return true;
		case INT4OID:
			*value = DatumGetInt32(c->constvalue);
			return true;
		case INT8OID:
			*value = (double) DatumGetInt64(c->constvalue);
			return true;
		case FLOAT4OID:
			*value = DatumGetFloat4(c->constvalue);
			return true;
		case FLOAT8OID:
			*value = DatumGetFloat8(c->constvalue);
			return true;
		default:
			return false;
	}
}

/* expr = base + offset, with offset a constant (0 when expr has none). */
static Node *
split_offset(Node *expr, double *offset)
{
	OpExpr	   *op = (OpExpr *) expr;
	char	   *name;
	double		c;

	*offset = 0;
	if (!IsA(expr, OpExpr) || list_length(op->args) != 2)
		return expr;
	name = get_opname(op->opno);
	if (name == NULL)
		return expr;
	if (strcmp(name, "+") == 0 && const_as_double(lsecond(op->args), &c))
	{
		*offset = c;
		return linitial(op->args);
	}
	if (strcmp(name, "+") == 0 && const_as_double(linitial(op->args), &c))
	{
		*offset = c;
		return lsecond(op->args);
	}
	if (strcmp(name, "-") == 0 && const_as_double(lsecond(op->args), &c))
	{
		*offset = -c;
		return linitial(op->args);
	}
	return expr;
}

/*
 * The histogram bounds of a column as doubles, and its null fraction;
 * false where it has no histogram of values that read as numbers.
 */
static bool
column_histogram(PlannerInfo *root, Var *var, double **bounds, int *nbounds, double *nullfrac)
{
	VariableStatData vardata;
	AttStatsSlot sslot;
	bool		found = false;

	examine_variable(root, (Node *) var, 0, &vardata);
	if (HeapTupleIsValid(vardata.statsTuple) &&
		get_attstatsslot(&sslot, vardata.statsTuple, STATISTIC_KIND_HISTOGRAM, InvalidOid,
						 ATTSTATSSLOT_VALUES))
	{
		if (sslot.nvalues >= 2)
		{
			Const		value;

			memset(&value, 0, sizeof(Const));
			NodeSetTag(&value, T_Const);
			value.consttype = var->vartype;
			*bounds = palloc(sizeof(double) * sslot.nvalues);
			*nbounds = sslot.nvalues;
			found = true;
			for (int i = 0; i < sslot.nvalues && found; i++)
			{
				value.constvalue = sslot.values[i];
				found = const_as_double((Node *) &value, &(*bounds)[i]) && isfinite((*bounds)[i]);
			}
			*nullfrac = ((Form_pg_statistic) GETSTRUCT(vardata.statsTuple))->stanullfrac;
		}
		free_attstatsslot(&sslot);
	}
	ReleaseVariableStats(vardata);
	return found;
}

/* The histogram's first and last values and the null fraction of a column. */
static bool
column_range(PlannerInfo *root, Var *var, double *lo, double *hi, double *nullfrac)
{
	double	   *bounds;
	int			nbounds;

	/* an infinite or NaN bound says nothing about the width */
	if (!column_histogram(root, var, &bounds, &nbounds, nullfrac))
		return false;
	*lo = bounds[0];
	*hi = bounds[nbounds - 1];
	return *hi > *lo;
}

/*
 * A side of a compare that holds the inner column, as
 * sign * inner_var + base_sign * base + offset, base an outer-only
 * expression (NULL for none) and offset a constant: "s.t", "s.t + 12",
 * "r.t - s.t", "12 - r.t + s.t".  The written forms of a band that the
 * algorithm chooser rewrites (gpujoin_algorithm.c) are estimated as the
 * band they run as.
 */
static bool
inner_side_linear(PlannerInfo *root, Node *node, Relids outer_relids, Relids inner_relids,
				  Var **inner_var, int *sign, Node **base, int *base_sign, double *offset)
{
	OpExpr	   *op;
	char	   *name;
	Node	   *a;
	Node	   *b;
	Node	   *other;
	bool		inner_in_a;
	int			other_sign;
	double		c;

	node = strip_implicit_coercions(node);
	if (IsA(node, Var) && bms_is_member(((Var *) node)->varno, inner_relids))
	{
		*inner_var = (Var *) node;
		*sign = 1;
		return true;
	}
	/* integer arithmetic only: the chooser rewrites no float compare */
	op = (OpExpr *) node;
	if (!IsA(node, OpExpr) || list_length(op->args) != 2 ||
		(op->opresulttype != INT2OID && op->opresulttype != INT4OID &&
		 op->opresulttype != INT8OID) ||
		(name = get_opname(op->opno)) == NULL ||
		(strcmp(name, "+") != 0 && strcmp(name, "-") != 0))
		return false;
	a = linitial(op->args);
	b = lsecond(op->args);
	inner_in_a = bms_overlap(pull_varnos(root, a), inner_relids);
	if (inner_in_a == bms_overlap(pull_varnos(root, b), inner_relids))
		return false;
	other = inner_in_a ? b : a;
	if (!bms_is_subset(pull_varnos(root, other), outer_relids) ||
		!inner_side_linear(root, inner_in_a ? a : b, outer_relids, inner_relids,
						   inner_var, sign, base, base_sign, offset))
		return false;
	/* a - b: the inner part's sign flips when it is b */
	if (strcmp(name, "-") == 0 && !inner_in_a)
	{
		*sign = -*sign;
		*base_sign = -*base_sign;
		*offset = -*offset;
	}
	other_sign = (strcmp(name, "-") == 0 && inner_in_a) ? -1 : 1;
	if (const_as_double(strip_implicit_coercions(other), &c))
		*offset += other_sign * c;
	else if (*base == NULL)
	{
		*base = other;
		*base_sign = other_sign;
	}
	else
		return false;
	return true;
}

/*
 * One bound of a band: the clause is `inner_var OP outer_expr + offset` (in
 * either order), OP one of < <= > >=, or a compare that rewrites to one
 * (inner_side_linear).  *lower says which side it bounds.
 */
static bool
band_bound(PlannerInfo *root, Expr *clause, Relids outer_relids, Relids inner_relids, Var **inner_var,
		   Node **outer_base, double *offset, bool *lower)
{
	OpExpr	   *op = (OpExpr *) clause;
	char	   *name;
	Node	   *left;
	Node	   *right;
	bool		inner_left;
	bool		greater;
	int			sign = 1;
	Node	   *base = NULL;
	int			base_sign = 1;
	double		side_offset = 0;
	double		c;

	if (!IsA(clause, OpExpr) || list_length(op->args) != 2 ||
		(name = get_opname(op->opno)) == NULL)
		return false;
	if (strcmp(name, ">") == 0 || strcmp(name, ">=") == 0)
		greater = true;
	else if (strcmp(name, "<") == 0 || strcmp(name, "<=") == 0)
		greater = false;
	else
		return false;
	left = strip_implicit_coercions(linitial(op->args));
	right = strip_implicit_coercions(lsecond(op->args));
	if (bms_overlap(pull_varnos(root, left), inner_relids) &&
		bms_is_subset(pull_varnos(root, right), outer_relids))
		inner_left = true;
	else if (bms_overlap(pull_varnos(root, right), inner_relids) &&
			 bms_is_subset(pull_varnos(root, left), outer_relids))
		inner_left = false;
	else
		return false;
	if (!inner_side_linear(root, inner_left ? left : right, outer_relids, inner_relids,
						   inner_var, &sign, &base, &base_sign, &side_offset))
		return false;

	/*
	 * sign * i + base_sign * base + side_offset OP other: the bound on i is
	 * sign * (other - base_sign * base - side_offset), which is a band on
	 * one outer expression when base and other are not both expressions
	 * and the expression's sign in it is +1.
	 */
	if (base == NULL)
	{
		*outer_base = split_offset(inner_left ? right : left, offset);
		if (sign < 0)
			return false;		/* -i OP e: a band on -e */
		*offset -= side_offset;
	}
	else
	{
		if (!const_as_double(inner_left ? right : left, &c) || -base_sign * sign != 1)
			return false;
		*outer_base = base;
		*offset = sign * (c - side_offset);
	}
	/* inner > e and e < inner both bound the inner column from below */
	*lower = (greater == inner_left) == (sign > 0);
	return true;
}

/*
 * "abs(d) <= c" (or "<", either order), d a side that inner_side_linear
 * reads with no outer expression but one, c a constant: a band of width 2c.
 */
static bool
abs_band(PlannerInfo *root, Expr *clause, Relids outer_relids, Relids inner_relids,
		 Var **inner_var, double *radius)
{
	OpExpr	   *op = (OpExpr *) clause;
	char	   *name;
	Node	   *absexpr;
	Node	   *c;
	Node	   *d;
	int			sign = 1;
	Node	   *base = NULL;
	int			base_sign = 1;
	double		offset = 0;

	if (!IsA(clause, OpExpr) || list_length(op->args) != 2 ||
		(name = get_opname(op->opno)) == NULL)
		return false;
	absexpr = strip_implicit_coercions(linitial(op->args));
	c = strip_implicit_coercions(lsecond(op->args));
	if (strcmp(name, ">") == 0 || strcmp(name, ">=") == 0)
	{
		/* c >= abs(d) */
		Node	   *t = absexpr;

		absexpr = c;
		c = t;
	}
	else if (strcmp(name, "<") != 0 && strcmp(name, "<=") != 0)
		return false;
	if (!const_as_double(c, radius))
		return false;
	if (IsA(absexpr, FuncExpr) && list_length(((FuncExpr *) absexpr)->args) == 1 &&
		strcmp(get_func_name(((FuncExpr *) absexpr)->funcid), "abs") == 0)
		d = linitial(((FuncExpr *) absexpr)->args);
	else if (IsA(absexpr, OpExpr) && list_length(((OpExpr *) absexpr)->args) == 1 &&
			 strcmp(get_opname(((OpExpr *) absexpr)->opno), "@") == 0)
		d = linitial(((OpExpr *) absexpr)->args);
	else
		return false;
	return inner_side_linear(root, d, outer_relids, inner_relids, inner_var, &sign,
							 &base, &base_sign, &offset) && base != NULL;
}

/*
 * The selectivity of a band among the clauses, or -1 when they hold none;
 * *band_clauses gets its two clauses.
 */
Selectivity
gpujoin_band_selectivity(PlannerInfo *root, List *clauses, Relids outer_relids,
						 Relids inner_relids, List **band_clauses, Var **band_var)
{
	ListCell   *la;
	ListCell   *lb;

	*band_clauses = NIL;
	foreach(la, clauses)
	{
		Var		   *var_a;
		Node	   *base_a;
		double		off_a;
		bool		lower_a;
		double		radius;

		if (abs_band(root, lfirst(la), outer_relids, inner_relids, &var_a, &radius))
		{
			double		lo;
			double		hi;
			double		nullfrac;

			if (!column_range(root, var_a, &lo, &hi, &nullfrac))
				continue;
			/* integer columns: a band of radius c holds 2c + 1 values */
			*band_clauses = list_make1(lfirst(la));
			if (band_var != NULL)
				*band_var = var_a;
			return Min(1.0, Max(2 * radius +
								(var_a->vartype == FLOAT4OID || var_a->vartype == FLOAT8OID ? 0 : 1),
								1.0) / (hi - lo)) * (1.0 - nullfrac);
		}
		if (!band_bound(root, lfirst(la), outer_relids, inner_relids, &var_a, &base_a, &off_a, &lower_a) ||
			!lower_a)
			continue;
		foreach(lb, clauses)
		{
			Var		   *var_b;
			Node	   *base_b;
			double		off_b;
			bool		lower_b;
			double		lo;
			double		hi;
			double		nullfrac;
			double		width;

			if (!band_bound(root, lfirst(lb), outer_relids, inner_relids, &var_b, &base_b, &off_b, &lower_b) ||
				lower_b || !equal(var_a, var_b) || !equal(base_a, base_b) ||
				!column_range(root, var_a, &lo, &hi, &nullfrac))
				continue;
			/* integer columns: a band of width w holds w + 1 values */
			width = Max(off_b - off_a, 0) +
				(var_a->vartype == FLOAT4OID || var_a->vartype == FLOAT8OID ? 0 : 1);
			*band_clauses = list_make2(lfirst(la), lfirst(lb));
			if (band_var != NULL)
				*band_var = var_a;
			return Min(1.0, Max(width, 1.0) / (hi - lo)) * (1.0 - nullfrac);
		}
	}
	return -1;
}

/* The fraction of a histogram's rows below x, interpolated within a bin. */
static double
histogram_fraction_below(const double *bounds, int nbounds, double x)
{
	int			lo = 0;
	int			hi = nbounds - 1;

	if (x <= bounds[0])
		return 0.0;
	if (x >= bounds[nbounds - 1])
		return 1.0;
	while (hi - lo > 1)
	{
		int			mid = (lo + hi) / 2;

		if (bounds[mid] <= x)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + (bounds[hi] > bounds[lo] ? (x - bounds[lo]) / (bounds[hi] - bounds[lo]) : 0.5)) /
		(nbounds - 1);
}

/*
 * The selectivity of "a < b" (<, <=, >, >=) between two plain columns of
 * the two sides, from their histograms: the mean over a's histogram bins of
 * the fraction of b above (below) the bin's middle; -1 where the clause is
 * not such a compare or a column has no histogram.  PostgreSQL estimates
 * every such join clause at DEFAULT_INEQ_SEL (scalarltjoinsel), a third,
 * where two columns of one distribution pass half of the pairs: the
 * candidates a sort-merge join's range filters then came out a third too
 * few, and the sort-merge plan of r.a < s.a AND r.b > s.b AND r.a + s.b > 0
 * beat a nested loop that runs in 0.6 of its time (H100, issue 35).
 */
static Selectivity
column_inequality_selectivity(PlannerInfo *root, Expr *clause)
{
	OpExpr	   *op = (OpExpr *) clause;
	char	   *name;
	Node	   *a;
	Node	   *b;
	double	   *bounds_a;
	double	   *bounds_b;
	int			n_a;
	int			n_b;
	double		null_a;
	double		null_b;
	double		below = 0;

	if (!IsA(clause, OpExpr) || list_length(op->args) != 2 ||
		(name = get_opname(op->opno)) == NULL ||
		(strcmp(name, "<") != 0 && strcmp(name, "<=") != 0 &&
		 strcmp(name, ">") != 0 && strcmp(name, ">=") != 0))
		return -1;
	a = strip_implicit_coercions(linitial(op->args));
	b = strip_implicit_coercions(lsecond(op->args));
	if (!IsA(a, Var) || !IsA(b, Var) ||
		!column_histogram(root, (Var *) a, &bounds_a, &n_a, &null_a) ||
		!column_histogram(root, (Var *) b, &bounds_b, &n_b, &null_b))
		return -1;
	/* the fraction of pairs with b below a */
	for (int i = 0; i + 1 < n_a; i++)
		below += histogram_fraction_below(bounds_b, n_b, (bounds_a[i] + bounds_a[i + 1]) / 2);
	below /= n_a - 1;
	return (name[0] == '<' ? 1.0 - below : below) * (1.0 - null_a) * (1.0 - null_b);
}

/*
 * The fraction of pairs a sort-merge join's key clauses (other than a band)
 * pass: a compare of two plain columns from their histograms
 * (column_inequality_selectivity), any other clause as PostgreSQL
 * estimates it.
 */
static Selectivity
key_clauses_selectivity(PlannerInfo *root, List *clauses, SpecialJoinInfo *sjinfo)
{
	Selectivity sel = 1.0;
	List	   *rest = NIL;
	ListCell   *lc;

	foreach(lc, clauses)
	{
		Selectivity clause_sel = column_inequality_selectivity(root, lfirst(lc));

		if (clause_sel >= 0)
			sel *= clause_sel;
		else
			rest = lappend(rest, lfirst(lc));
	}
	if (rest != NIL)
		sel *= clauselist_selectivity(root, rest, 0, JOIN_INNER, sjinfo);
	return sel;
}

/*
 * What a nested loop would cost that probes a btree index on indexed's
 * band column once for each row of probe, with the rows each probe fetches
 * from the column's histogram (gpujoin_band_selectivity), and the index it
 * would probe (*index_used); -1 where indexed has no such index, or the
 * settings rule out an index nested loop.  PostgreSQL estimates a range on a join column at a
 * fixed fraction of the table (a band of +-50 over 100k rows at 11,111 rows
 * a probe, where one matched), so it costs that plan up to thousands of
 * times too dear, and a GpuJoin that drains the whole indexed side beat it
 * on cost and lost on the clock (the 2-core machine: 99 probes in 0.2 ms
 * against a GpuJoin's 3.3 ms).
 *
 * Each probe pays btcostestimate's descent (a compare per level of a
 * binary search, 50 operators per page) and each row it fetches the index
 * and heap tuple costs and the band's two compares.  The pages: each read
 * once, however many probes touch it, at seq_page_cost, as the GpuJoin
 * reads the same table's pages; a nested loop's probes find them in the
 * buffer pool after the first (PostgreSQL's index_pages_fetched reasons
 * alike for repeated scans).  On the 2-core machine's band +-50 over 100k
 * rows this puts the break-even at about 2,000 probes (1,000: the index,
 * 1.1 ms against the GpuJoin's 3.9; 3,000: the GpuJoin, 4.5 ms against
 * 3.9), the clock at about 4,000.
 */
Cost
gpujoin_band_index_probe_cost(PlannerInfo *root, RelOptInfo *probe, RelOptInfo *indexed,
							  List *clauses, IndexOptInfo **index_used)
{
	List	   *band_clauses;
	Var		   *band_var = NULL;
	Selectivity band_sel;
	Cost		best = -1;
	ListCell   *lc;

	if (index_used != NULL)
		*index_used = NULL;
	/* a plan the settings rule out is no alternative (a GpuJoin forced) */
	if (!enable_nestloop || (!enable_indexscan && !enable_indexonlyscan))
		return -1;
	if (indexed->reloptkind != RELOPT_BASEREL || probe->cheapest_total_path == NULL)
		return -1;
	band_sel = gpujoin_band_selectivity(root, clauses, probe->relids, indexed->relids,
										&band_clauses, &band_var);
	if (band_sel < 0 || band_var == NULL || band_var->varno != indexed->relid)
		return -1;
	foreach(lc, indexed->indexlist)
	{
		IndexOptInfo *index = lfirst(lc);
		double		fetched = Max(band_sel * indexed->tuples, 1.0);
		double		descent;
		double		pages;
		Cost		cost;

		if (index->relam != BTREE_AM_OID || index->nkeycolumns < 1 ||
			index->indexkeys[0] != band_var->varattno || index->indpred != NIL)
			continue;
		descent = (ceil(log2(Max(index->tuples, 2.0))) +
				   (Max(index->tree_height, 0) + 1) * 50.0) * cpu_operator_cost;
		pages = Min(probe->rows * (1.0 + fetched),
					(double) index->pages + (double) indexed->pages);
		cost = probe->cheapest_total_path->total_cost +
			probe->rows * (descent + fetched * (cpu_index_tuple_cost + cpu_tuple_cost +
												2 * cpu_operator_cost)) +
			pages * seq_page_cost;
		if (best < 0 || cost < best)
		{
			best = cost;
			if (index_used != NULL)
				*index_used = index;
		}
	}
	return best;
}

/* The cheaper of the two orientations (gpujoin_band_index_probe_cost). */
Cost
gpujoin_band_index_nestloop_cost(PlannerInfo *root, RelOptInfo *rel_a, RelOptInfo *rel_b,
								 List *clauses)
{
	Cost		a_probes = gpujoin_band_index_probe_cost(root, rel_a, rel_b, clauses, NULL);
	Cost		b_probes = gpujoin_band_index_probe_cost(root, rel_b, rel_a, clauses, NULL);

	if (a_probes < 0)
		return b_probes;
	if (b_probes < 0)
		return a_probes;
	return Min(a_probes, b_probes);
}

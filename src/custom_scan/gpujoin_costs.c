/*-------------------------------------------------------------------------
 *
 * gpujoin_costs.c
 *	  The planner's cost constants for GpuJoin, one set per backend, and the
 *	  device work of one join in those units.
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
#include <unistd.h>

#include "utils/guc.h"
#include "utils/memutils.h"

#include "gpujoin.h"

/*
 * Defaults, in the planner's units (seq_page_cost = 1).  The cpu startup_cost
 * is a threshold more than a measurement: a GpuJoin must save about that
 * much before the planner gives up PostgreSQL's own plan for it, which keeps
 * small joins native (the cpu backend measures 0.03 ms for a 10 x 10 join).
 * The cuda constants come from the H100 figures in docs/results: about
 * 20 ms per join however small (allocations, launches, synchronisation; a
 * 10k x 1k equi-join took 22 ms against PostgreSQL's 4 ms), 5.5e12
 * single-comparison pairs/s in the nested loop, a 1M x 1M hash join's sort
 * and search in 9.8 ms; the host-side costs of draining and returning rows
 * are the cpu backend's, since the same host code does them.
 */
/*		backend	startup	row		transfer	pair		sort		output */
GpuJoinCostProfile gpujoin_cpu_costs = {"cpu", 100.0, 0.05, 0.0, 0.00035, 0.0011, 0.006};
GpuJoinCostProfile gpujoin_cuda_costs = {"cuda", 10000.0, 0.05, 0.05, 0.0000001, 0.00015, 0.006};

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

/*
 * Does this machine have an NVIDIA GPU?  Only the driver's control device is
 * looked at, once per process; nothing is opened.
 */
static bool
nvidia_device_node_exists(void)
{
	static int	exists = -1;

	if (exists < 0)
		exists = (access("/dev/nvidiactl", F_OK) == 0) ? 1 : 0;
	return exists == 1;
}

/*
 * Will the cpu backend run the joins planned now?  gpujoin.device = cpu, or
 * auto on a machine without an NVIDIA driver.
 */
bool
gpujoin_plans_for_cpu(void)
{
	return gpujoin_device == GPUJOIN_DEVICE_CPU ||
		(gpujoin_device == GPUJOIN_DEVICE_AUTO && !nvidia_device_node_exists());
}

/*
 * The constants to plan with.  Parallel GpuJoin runs only on the cpu
 * backend (gpujoin_path.c offers it only there).
 */
const GpuJoinCostProfile *
gpujoin_planning_costs(void)
{
	return gpujoin_plans_for_cpu() ? &gpujoin_cpu_costs : &gpujoin_cuda_costs;
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

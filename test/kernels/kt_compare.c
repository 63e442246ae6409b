/*-------------------------------------------------------------------------
 *
 * kt_compare.c
 *	  The cuda backend against the cpu backend: the default mode and
 *	  "quick" (run_tests) and "race" (run_race_tests).  Both backends run
 *	  the same programs and join specs over the same tile schedules; their
 *	  pairs, recheck flags, pruned tiles, statistics and aggregate partials
 *	  must agree.  Without a CUDA device run_tests falls back to the cpu
 *	  mode (kt_cpu.c).
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_common.h"

/* compiled-sorted: every filtered step of the cuda backend must run compiled */
bool		kt_expect_compiled = false;

/* cuda_backend.cu's test hook: did begin_join borrow a prepared inner side? */
extern bool gj_cuda_test_inner_borrowed(const void *state);

/*
 * A join on both backends over schedule s; the cuda backend's join is given
 * cuda_prepared (an inner side its prepare_inner prepared) as its
 * prepared_inner, the cpu backend's prepares its own.  variant, if not
 * NULL, follows the join's name in the report.
 */
/* cuda_agg.cu: which fold kernel a sorted aggregate step runs (0: by its candidates) */
extern void gj_cuda_test_fold_by_row(int mode);

/* cuda_sorted.cu: where steps that keep their verdicts are cut (0: the default) */
extern void gj_cuda_test_set_verdict_pairs(int64_t n);

static void
compare_join(const Side *outer, const Side *inner, const JoinSpec *spec, const Schedule *s,
			 const void *cuda_prepared, const char *variant)
{
	GjJoinInput input;
	GjJoinInput gpu_input;
	PairSet		cpu,
				gpu;
	GjError		err;
	bool		ok = true;
	int64_t		i,
				rechecks = 0;

	spec_input(&input, outer, inner, spec, s->capacity);
	gpu_input = input;
	gpu_input.prepared_inner = cuda_prepared;

	memset(&cpu, 0, sizeof(cpu));
	memset(&gpu, 0, sizeof(gpu));
	memset(&err, 0, sizeof(err));
	if (!run_schedule(&gj_cpu_backend, &input, s, &cpu, &err))
	{
		printf("# cpu backend failed: %s\n", err.message);
		ok = false;
	}
	memset(&err, 0, sizeof(err));
	if (ok && !run_schedule(&gj_cuda_backend, &gpu_input, s, &gpu, &err))
	{
		printf("# cuda backend failed: %s\n", err.message);
		ok = false;
	}
	if (ok)
	{
		for (i = 0; i < cpu.n; i++)
			rechecks += (cpu.pairs[i] >> 32 & GJ_PAIR_RECHECK) != 0;
		printf("# %lld pairs (%lld recheck), cpu %lld steps, cuda %lld steps, %lld tiles pruned\n",
			   (long long) cpu.n, (long long) rechecks, (long long) cpu.steps,
			   (long long) gpu.steps, (long long) cpu.pruned);
		if (cpu.problem[0] || gpu.problem[0])
		{
			printf("# step contract: cpu: %s; cuda: %s\n", cpu.problem, gpu.problem);
			ok = false;
		}
		if (cpu.pruned != gpu.pruned)
		{
			printf("# cpu pruned %lld tiles, cuda %lld\n", (long long) cpu.pruned,
				   (long long) gpu.pruned);
			ok = false;
		}
		if (cpu.n != gpu.n)
		{
			printf("# cpu has %lld pairs, cuda %lld\n", (long long) cpu.n, (long long) gpu.n);
			ok = false;
		}

		/*
		 * The sort-merge join returns the pairs in the cpu backend's order
		 * too: the host rechecks them in that order, and which error a query
		 * raises, or whether a semi/anti join stops before a pair that would
		 * raise one, follows from it.  (The cpu backend's hash join probes a
		 * one-tile outer side in row order, the cuda backend in hash order.)
		 */
		if (cpu.order != gpu.order)
		{
			printf("# cuda returns the pairs in another order than cpu\n");
			if (input.algorithm == GJ_ALGO_SORTMERGE)
				ok = false;
		}
		for (i = 0; ok && i < cpu.n; i++)
		{
			if (cpu.pairs[i] != gpu.pairs[i])
			{
				printf("# first difference at %lld: cpu (%#x, %u), cuda (%#x, %u)\n",
					   (long long) i, (unsigned) (cpu.pairs[i] >> 32), (unsigned) cpu.pairs[i],
					   (unsigned) (gpu.pairs[i] >> 32), (unsigned) gpu.pairs[i]);
				ok = false;
			}
		}
		if (ok && kt_expect_compiled && input.filter_needed &&
			(gpu.stats.program_steps_compiled == 0 || gpu.stats.program_steps_interpreted > 0))
		{
			printf("# cuda ran %lld steps compiled, %lld interpreted (why %d)\n",
				   (long long) gpu.stats.program_steps_compiled,
				   (long long) gpu.stats.program_steps_interpreted,
				   (int) gpu.stats.interpreted_why);
			ok = false;
		}
		if (ok && (cpu.stats.pairs_evaluated != gpu.stats.pairs_evaluated ||
				   gpu.stats.device_matches != gpu.n))
		{
			printf("# stats: cpu evaluated %lld, cuda evaluated %lld, cuda matches %lld\n",
				   (long long) cpu.stats.pairs_evaluated,
				   (long long) gpu.stats.pairs_evaluated,
				   (long long) gpu.stats.device_matches);
			ok = false;
		}
	}
	free(gpu.pairs);
	free(cpu.pairs);
	if (variant != NULL)
	{
		char		name[256];

		snprintf(name, sizeof(name), "%s, %s", spec->name, variant);
		report(ok, "%s, %s", name, s->name);
	}
	else
		report(ok, "%s, %s", spec->name, s->name);
}

static void
test_join(const Side *outer, const Side *inner, const JoinSpec *spec, const Schedule *s)
{
	compare_join(outer, inner, spec, s, NULL, NULL);
}

/*
 * The inner side prepared once on the cuda backend (prepare_inner) for two
 * joins that differ only in their outer sides, as the GPU service does for
 * the processes of a parallel join: each join reads the prepared side and
 * must return what the cpu backend returns with an inner side of its own;
 * the side is released after both joins ended.  Four tests.
 */
static void
test_prepared(const Side *outer, const Side *outer2, const Side *inner, const JoinSpec *spec,
			  const Schedule *s)
{
	GjJoinInput input;
	GjError		err;
	const void *prepared;

	spec_input(&input, outer, inner, spec, s->capacity);
	memset(&err, 0, sizeof(err));
	prepared = gj_cuda_backend.prepare_inner(&input, &err);
	if (prepared == NULL)
		printf("# cuda prepare_inner failed: %s\n", err.message);
	report(prepared != NULL, "%s: prepare_inner on cuda%s", spec->name, "");
	{
		GjJoinInput borrowing = input;
		void	   *state;

		/* begin_join takes the prepared side instead of sorting its own */
		borrowing.prepared_inner = prepared;
		memset(&err, 0, sizeof(err));
		state = gj_cuda_backend.begin_join(&borrowing, &err);
		if (state == NULL)
			printf("# cuda begin_join failed: %s\n", err.message);
		report(state != NULL && prepared != NULL && gj_cuda_test_inner_borrowed(state),
			   "%s: begin_join borrows the prepared inner side%s", spec->name, "");
		gj_cuda_backend.end_join(state);
	}
	compare_join(outer, inner, spec, s, prepared, "first join on a prepared inner side");
	compare_join(outer2, inner, spec, s, prepared, "second join on a prepared inner side");
	gj_cuda_backend.release_inner(prepared);
}

/*
 * The cuda backend's range join against the truth: the nested loop of the
 * cpu backend over the same program, every pair.  For the range specs of
 * build_joins the bounds admit every pair the program accepts and no bound
 * program overflows where the join program would not, so the two multisets
 * are equal.  This checks the cuda backend independently of the cpu
 * backend's sort-merge code.
 */
static void
test_truth(const Side *outer, const Side *inner, const JoinSpec *spec)
{
	static const Schedule one = {"1 tile", N_OUTER, N_INNER, N_OUTER, N_INNER,
	(int64_t) N_OUTER * N_INNER};
	GjJoinInput input;
	PairSet		truth,
				gpu;
	GjError		err;
	bool		ok = true;
	int64_t		i;

	spec_input(&input, outer, inner, spec, one.capacity);

	memset(&truth, 0, sizeof(truth));
	memset(&gpu, 0, sizeof(gpu));
	memset(&err, 0, sizeof(err));
	input.algorithm = GJ_ALGO_NESTLOOP;
	if (!run_schedule(&gj_cpu_backend, &input, &one, &truth, &err))
	{
		printf("# cpu nested loop failed: %s\n", err.message);
		ok = false;
	}
	input.algorithm = spec->algorithm;
	if (ok && !run_schedule(&gj_cuda_backend, &input, &one, &gpu, &err))
	{
		printf("# cuda backend failed: %s\n", err.message);
		ok = false;
	}
	if (ok && truth.n != gpu.n)
	{
		printf("# nested loop has %lld pairs, cuda %lld\n", (long long) truth.n,
			   (long long) gpu.n);
		ok = false;
	}
	for (i = 0; ok && i < truth.n; i++)
	{
		if (truth.pairs[i] != gpu.pairs[i])
		{
			printf("# first difference at %lld: nested loop (%#x, %u), cuda (%#x, %u)\n",
				   (long long) i, (unsigned) (truth.pairs[i] >> 32), (unsigned) truth.pairs[i],
				   (unsigned) (gpu.pairs[i] >> 32), (unsigned) gpu.pairs[i]);
			ok = false;
		}
	}
	free(truth.pairs);
	free(gpu.pairs);
	report(ok, "%s equals the nested loop, %s", spec->name, one.name);
}

static void
test_program(const Side *outer, const Side *inner, const Program *p, const Schedule *s)
{
	JoinSpec	spec;

	memset(&spec, 0, sizeof(spec));
	spec.name = p->name;
	spec.algorithm = GJ_ALGO_NESTLOOP;
	spec.program = *p;
	test_join(outer, inner, &spec, s);
}

/* Error paths: they must fail cleanly and leave the backend usable. */
static void
test_errors(const Side *outer, const Side *inner, const Program *p)
{
	GjJoinInput input;
	GjError		err;
	void	   *state;
	GjTile		tile = {0, 10, 0, 100};
	int64_t		next = 0;
	GjMatches	m;
	GjStats		stats;

	memset(&input, 0, sizeof(input));
	input.outer = outer->cols;
	input.outer_nrows = outer->nrows;
	input.inner = inner->cols;
	input.inner_nrows = inner->nrows;
	input.instrs = p->instrs;
	input.ninstrs = p->ninstrs;
	input.algorithm = GJ_ALGO_NESTLOOP;
	input.budget_bytes = (int64_t) 1 << 30;

	/*
	 * A match capacity of 2^42 pairs (16 TB) is a bound, not an allocation:
	 * the device buffer grows as the steps need it.
	 */
	input.match_capacity = (int64_t) 1 << 42;
	memset(&err, 0, sizeof(err));
	memset(&stats, 0, sizeof(stats));
	state = gj_cuda_backend.begin_join(&input, &err);
	if (state == NULL)
		printf("# %s\n", err.message);
	report(state != NULL && gj_cuda_backend.run_step(state, &tile, &next, &m, &stats, &err) &&
		   next > 0,
		   "%s%s", "a join with a 16 TB match capacity opens and runs (the buffer grows as needed)", "");
	gj_cuda_backend.end_join(state);
	next = 0;

	/* an inner tile larger than the match buffer is refused */
	input.match_capacity = 50;
	memset(&err, 0, sizeof(err));
	memset(&stats, 0, sizeof(stats));
	state = gj_cuda_backend.begin_join(&input, &err);
	report(state != NULL && !gj_cuda_backend.run_step(state, &tile, &next, &m, &stats, &err) &&
		   err.code == GJ_ERR_DEVICE,
		   "%s%s", "run_step refuses an inner tile larger than the match buffer", "");
	gj_cuda_backend.end_join(state);
	gj_cuda_backend.end_join(NULL);
}

/* Every row's column 0 set to key with probability 1/den (a hot key). */
static void
make_skewed(Side *side, int64_t key, int den)
{
	int64_t		i;

	for (i = 0; i < side->nrows; i++)
	{
		if (rng() % den == 0)
		{
			side->values[0][i] = key;
			if (side->isnull[0] != NULL)
				side->isnull[0][i] = 0;
		}
	}
}

/*
 * A sorted join over more outer rows than one step takes (the cuda
 * backend's SORTED_ROWS_PER_STEP is 2^20), with a large match buffer.
 */
static void
test_big(const JoinSpec *spec)
{
	static const bool nulls[NCOLS] = {true, false, false};
	Side		outer,
				inner;
	Schedule	s = {"1.2M x 50k rows, 1 tile", 1200000, 50000, 1200000, 50000, (int64_t) 1 << 22};
	int64_t		i;

	make_side(&outer, s.outer_rows, nulls);
	make_side(&inner, s.inner_rows, nulls);
	for (i = 0; i < outer.nrows; i++)
		outer.values[0][i] = (int64_t) (rng() % 400000);
	for (i = 0; i < inner.nrows; i++)
		inner.values[0][i] = (int64_t) (rng() % 400000);
	test_join(&outer, &inner, spec, &s);
	free_side(&outer);
	free_side(&inner);
}

/* A sorted join's error paths: a 16 TB capacity, an inner tile over the buffer. */
static void
test_sorted_errors(const Side *outer, const Side *inner, const JoinSpec *spec)
{
	GjJoinInput input;
	GjError	err;
	void	   *state;
	GjTile		tile = {0, 10, 0, 100};
	int64_t		next = 0;
	GjMatches	m;
	GjStats		stats;

	spec_input(&input, outer, inner, spec, (int64_t) 1 << 42);
	memset(&err, 0, sizeof(err));
	memset(&stats, 0, sizeof(stats));
	state = gj_cuda_backend.begin_join(&input, &err);
	if (state == NULL)
		printf("# %s\n", err.message);
	report(state != NULL && gj_cuda_backend.run_step(state, &tile, &next, &m, &stats, &err) &&
		   next > 0,
		   "%s: %s", spec->name, "a join with a 16 TB match capacity opens and runs");
	gj_cuda_backend.end_join(state);
	next = 0;

	input.match_capacity = 50;
	memset(&err, 0, sizeof(err));
	memset(&stats, 0, sizeof(stats));
	state = gj_cuda_backend.begin_join(&input, &err);
	report(state != NULL && !gj_cuda_backend.run_step(state, &tile, &next, &m, &stats, &err) &&
		   err.code == GJ_ERR_DEVICE,
		   "%s: %s", spec->name, "run_step refuses an inner tile larger than the match buffer");
	gj_cuda_backend.end_join(state);

	/* whole sorted sides that do not fit the budget: out of memory at open */
	input.match_capacity = 1024;
	input.budget_bytes = 64 * 1024;
	memset(&err, 0, sizeof(err));
	state = gj_cuda_backend.begin_join(&input, &err);
	report(state == NULL && err.code == GJ_ERR_OVER_BUDGET,
		   "%s: %s", spec->name, "sorted sides larger than the budget are refused at open");
	gj_cuda_backend.end_join(state);
}

static bool
same_acc(const GjAggAcc *x, const GjAggAcc *y)
{
	return x->count == y->count && x->isum == y->isum && agg_close_fsum(x, y) &&
		x->has_minmax == y->has_minmax &&
		(!x->has_minmax || (x->min_key == y->min_key && x->max_key == y->max_key));
}

/*
 * A join's aggregates on both backends: count(*), an outer integer
 * argument, inner integer, float and large integer arguments and one over
 * both sides (sums and min/max), with no groups, groups of the outer rows
 * and groups of both sides.  Both must reduce
 * the same pairs and return the same pairs to the host (those the pair
 * argument overflows on, with groups); counts, integer sums and min/max
 * are exact, float sums equal up to summation order (the cuda backend adds
 * them with atomics).
 */
static void
test_agg(const Side *outer, const Side *inner, const JoinSpec *join, const Schedule *s,
		 int grouping)
{
	bool		grouped = AGG_GROUPED(grouping);
	GjJoinInput input;
	GjAggSpec	spec;
	AggRun	   *cpu = xmalloc(sizeof(AggRun));
	AggRun	   *gpu = xmalloc(sizeof(AggRun));
	uint8_t    *flags[AGG_NARGS];
	uint32_t   *groups = xmalloc(sizeof(uint32_t) * outer->nrows);
	uint32_t   *inner_groups = xmalloc(sizeof(uint32_t) * inner->nrows);
	char		title[96];
	GjError		err;
	bool		ok = true;
	int			a;

	spec_input(&input, outer, inner, join, s->capacity);

	agg_spec_init(&spec, outer, inner, flags, groups, inner_groups, grouping);

	memset(&err, 0, sizeof(err));
	if (!run_agg_schedule(&gj_cpu_backend, &input, s, &spec, cpu, &err))
	{
		printf("# cpu backend failed: %s\n", err.message);
		ok = false;
	}
	memset(&err, 0, sizeof(err));
	if (ok && !run_agg_schedule(&gj_cuda_backend, &input, s, &spec, gpu, &err))
	{
		printf("# cuda backend failed: %s\n", err.message);
		ok = false;
	}
	if (ok)
	{
		int			nacc = grouped ? agg_spec_group_count(grouping) * AGG_NARGS : spec.nargs;
		const GjAggAcc *cacc = grouped ? cpu->group_acc : cpu->partial.acc;
		const GjAggAcc *gacc = grouped ? gpu->group_acc : gpu->partial.acc;

		printf("# %lld pairs reduced, %lld returned, cpu %lld steps, cuda %lld steps\n",
			   (long long) cpu->partial.pairs, (long long) cpu->pairs.n,
			   (long long) cpu->pairs.steps, (long long) gpu->pairs.steps);
		if (cpu->pairs.problem[0] || gpu->pairs.problem[0])
		{
			printf("# step contract: cpu: %s; cuda: %s\n", cpu->pairs.problem, gpu->pairs.problem);
			ok = false;
		}
		if (cpu->partial.pairs != gpu->partial.pairs || cpu->pairs.n != gpu->pairs.n ||
			(cpu->pairs.n > 0 && memcmp(cpu->pairs.pairs, gpu->pairs.pairs,
										sizeof(uint64_t) * cpu->pairs.n) != 0))
		{
			printf("# cpu reduced %lld and returned %lld pairs, cuda %lld and %lld\n",
				   (long long) cpu->partial.pairs, (long long) cpu->pairs.n,
				   (long long) gpu->partial.pairs, (long long) gpu->pairs.n);
			ok = false;
		}
		/*
		 * compiled: a sorted join's filtered steps, every one; a nested
		 * loop's none interpreted (its row counts of plain compares run no
		 * program)
		 */
		if (kt_expect_compiled &&
			(join->algorithm == GJ_ALGO_NESTLOOP ?
			 gpu->pairs.stats.program_steps_interpreted > 0 :
			 input.filter_needed && (gpu->pairs.stats.program_steps_compiled == 0 ||
									 gpu->pairs.stats.program_steps_interpreted > 0)))
		{
			printf("# cuda folded %lld steps compiled, %lld interpreted (why %d)\n",
				   (long long) gpu->pairs.stats.program_steps_compiled,
				   (long long) gpu->pairs.stats.program_steps_interpreted,
				   (int) gpu->pairs.stats.interpreted_why);
			ok = false;
		}
		if (grouped && memcmp(cpu->group_pairs, gpu->group_pairs, sizeof(cpu->group_pairs)) != 0)
		{
			printf("# the groups' pair counts differ\n");
			ok = false;
		}
		for (a = 0; ok && a < nacc; a++)
		{
			if (!same_acc(&cacc[a], &gacc[a]))
			{
				printf("# accumulator %d differs: count %lld / %lld, fsum %.17g / %.17g\n", a,
					   (long long) cacc[a].count, (long long) gacc[a].count,
					   cacc[a].fsum, gacc[a].fsum);
				ok = false;
			}
		}
	}
	for (a = 0; a < AGG_NARGS; a++)
		free(flags[a]);
	free(groups);
	free(inner_groups);
	free(cpu->pairs.pairs);
	free(gpu->pairs.pairs);
	free(cpu);
	free(gpu);
	snprintf(title, sizeof(title), "agg_step %%s, %%s%s", agg_grouping_name(grouping));
	report(ok, title, join->name, s->name);
}

/*
 * race: every kernel of the cuda backend once or more, on sides of a few
 * hundred rows and in as few launches as can be: the nested-loop programs
 * on one tile, the sorted and hash joins on four, the aggregate step.  compute-sanitizer racecheck makes each launch take
 * seconds to minutes in proportion to its shared-memory traffic, so the
 * full-size tests cannot finish under it; these do.
 */
#define RACE_OUTER	400
#define RACE_INNER	300

int
run_race_tests(void)
{
	static const bool outer_nulls[NCOLS] = {true, true, true};
	static const bool inner_nulls[NCOLS] = {true, false, true};
	static const Schedule few = {"4 tiles of 230x170 rows, capacity a tile", RACE_OUTER,
	RACE_INNER, 230, 170, 230 * 170};
	static const Schedule one = {"1 tile, capacity all pairs", RACE_OUTER, RACE_INNER,
	RACE_OUTER, RACE_INNER, (int64_t) RACE_OUTER * RACE_INNER};
	Program    *progs = xmalloc(sizeof(Program) * 32);
	int			nprogs = build_programs(progs);
	JoinSpec   *joins = xmalloc(sizeof(JoinSpec) * 64);
	int			njoins = build_joins(joins);
	GjDeviceInfo info;
	GjError		err;
	Side		outer,
				inner;
	int			i,
				g;

	memset(&err, 0, sizeof(err));
	if (!gj_cuda_probe(&info, &err))
	{
		printf("1..0 # SKIP no CUDA device: %s\n", err.message);
		free(progs);
		free(joins);
		return 0;
	}
	/* every join: its programs, its pairs, its aggregates with and without groups */
	printf("1..%d\n", nprogs + njoins + AGG_NGROUPINGS * (njoins + nprogs));
	make_side(&outer, RACE_OUTER, outer_nulls);
	make_side(&inner, RACE_INNER, inner_nulls);
	/* one step a tile: every launch is a kernel's whole work */
	for (i = 0; i < nprogs; i++)
		test_program(&outer, &inner, &progs[i], &one);
	for (i = 0; i < njoins; i++)
		test_join(&outer, &inner, &joins[i], &few);
	for (i = 0; i < njoins; i++)
	{
		for (g = 0; g < AGG_NGROUPINGS; g++)
			test_agg(&outer, &inner, &joins[i], &one, g);
	}
	for (i = 0; i < nprogs; i++)
	{
		JoinSpec	nl;

		nestloop_join(&nl, &progs[i]);
		for (g = 0; g < AGG_NGROUPINGS; g++)
			test_agg(&outer, &inner, &nl, &one, g);
	}
	free_side(&outer);
	free_side(&inner);
	free(progs);
	free(joins);
	return failures > 0 ? 1 : 0;
}

/*
 * quick: only the sorted joins over the two schedules with few steps, and
 * their error paths (for compute-sanitizer, which makes launches slow).
 */
int
run_tests(bool quick)
{
	static const bool outer_nulls[NCOLS] = {true, true, true};
	static const bool inner_nulls[NCOLS] = {true, false, true};
	static const Schedule schedules[] = {
		{"4 tiles, capacity 3 inner tiles", N_OUTER, N_INNER, 2300, 1700, 3 * 1700},
		{"1 tile, capacity all pairs", N_OUTER, N_INNER, N_OUTER, N_INNER,
		(int64_t) N_OUTER * N_INNER},
		{"7x5 tiles of 120x100 rows, capacity 5", 120, 100, 7, 5, 5},
		/* sorted joins only: about 50 steps a tile */
		{"42 tiles of 500x400 rows, capacity 2000", N_OUTER, N_INNER, 500, 400, 2000},
	};
	static const Schedule one_key = {"300x200 rows all one key, tiles 40x50, capacity 60",
	300, 200, 40, 50, 60};
	int			nsched = sizeof(schedules) / sizeof(schedules[0]);
	Program    *progs = xmalloc(sizeof(Program) * 32);
	int			nprogs = build_programs(progs);
	JoinSpec   *joins = xmalloc(sizeof(JoinSpec) * 64);
	int			njoins = build_joins(joins);
	int			nhash = 0;
	int			nsorted = 0;
	int			nagg = njoins;
	GjDeviceInfo info;
	GjError		err;
	Side		outer,
				inner;
	int			i,
				j,
				g;

	for (i = 0; i < njoins; i++)
	{
		nhash += joins[i].algorithm == GJ_ALGO_HASH;
		nsorted += joins[i].algorithm != GJ_ALGO_NESTLOOP;
	}
	memset(&info, 0, sizeof(info));
	memset(&err, 0, sizeof(err));
	if (!gj_cuda_probe(&info, &err))
	{
		free(progs);
		free(joins);
		if (!quick)
		{
			/* what can run without a device: the cpu backend alone */
			printf("# no CUDA device (%s): the cpu backend alone\n", err.message);
			return run_cpu_tests();
		}
		printf("1..0 # SKIP no CUDA device: %s\n", err.message);
		return 0;
	}
	if (quick)
	{
		nsched = 2;
		nprogs = 0;
		printf("1..%d\n", 2 + (njoins - nhash) + njoins * nsched + 6 +
			   nagg * 2 * AGG_NGROUPINGS + 2 * nsorted * AGG_NGROUPINGS);
	}
	else
		printf("1..%d\n", 2 + nprogs * (nsched - 1) + (njoins - nhash) + njoins * nsched +
			   2 + 6 + nhash * 2 + 2 + nagg * 2 * AGG_NGROUPINGS + 2 * nsorted * AGG_NGROUPINGS +
			   nprogs * AGG_NGROUPINGS +
			   4 * nsorted + rowcount_test_count(true) + page_decode_cuda_test_count());
	printf("# %s, %d SMs, cc %d.%d, %lld MB free, init %.1f ms\n", info.name, info.sm_count,
		   info.cc_major, info.cc_minor, (long long) (info.free_memory >> 20), info.init_ms);
	report(info.name[0] != '\0' && info.init_ms > 0 && info.total_memory > 0,
		   "%s%s", "first probe reports the device and its init time", "");
	memset(&info, 0, sizeof(info));
	report(gj_cuda_probe(&info, &err) && info.init_ms == 0 && info.free_memory > 0,
		   "%s%s", "later probes report init_ms 0", "");

	make_side(&outer, N_OUTER, outer_nulls);
	make_side(&inner, N_INNER, inner_nulls);
	for (j = 0; j < nsched - 1; j++)
		for (i = 0; i < nprogs; i++)
			test_program(&outer, &inner, &progs[i], &schedules[j]);
	for (i = 0; i < njoins; i++)
	{
		if (joins[i].algorithm == GJ_ALGO_SORTMERGE)
			test_truth(&outer, &inner, &joins[i]);
	}
	for (j = 0; j < nsched; j++)
		for (i = 0; i < njoins; i++)
			test_join(&outer, &inner, &joins[i], &schedules[j]);
	if (!quick)
		test_errors(&outer, &inner, &progs[nprogs - 1]);
	test_sorted_errors(&outer, &inner, &joins[0]);
	test_sorted_errors(&outer, &inner, &joins[njoins - 1]);
	for (i = 0; i < njoins; i++)
	{
		for (g = 0; g < AGG_NGROUPINGS; g++)
		{
			test_agg(&outer, &inner, &joins[i], &schedules[1], g);
			test_agg(&outer, &inner, &joins[i], &schedules[3], g);
		}
	}
	/* the sorted joins' folds by each of cuda_agg.cu's two fold kernels */
	for (j = 1; j <= 2; j++)
	{
		printf("# aggregate folds of sorted steps by %s\n",
			   j == 1 ? "a warp per row (fold_kernel)" : "a thread per row (fold_rows_kernel)");
		gj_cuda_test_fold_by_row(j);
		for (i = 0; i < njoins; i++)
		{
			if (joins[i].algorithm == GJ_ALGO_NESTLOOP)
				continue;
			for (g = 0; g < AGG_NGROUPINGS; g++)
				test_agg(&outer, &inner, &joins[i], &schedules[1], g);
		}
	}
	gj_cuda_test_fold_by_row(0);
	for (i = 0; i < nprogs; i++)
	{
		JoinSpec	nl;

		nestloop_join(&nl, &progs[i]);
		for (g = 0; g < AGG_NGROUPINGS; g++)
			test_agg(&outer, &inner, &nl, &schedules[1], g);
	}
	if (quick)
	{
		free_side(&outer);
		free_side(&inner);
		free(progs);
		free(joins);
		return failures > 0 ? 1 : 0;
	}

	/* one inner side prepared for two joins with other outer sides */
	{
		Side		outer2;

		make_side(&outer2, N_OUTER, outer_nulls);
		for (i = 0; i < njoins; i++)
		{
			if (joins[i].algorithm != GJ_ALGO_NESTLOOP)
				test_prepared(&outer, &outer2, &inner, &joins[i], &schedules[3]);
		}
		free_side(&outer2);
	}

	/* skewed: a third of the rows share key 7 */
	make_skewed(&outer, 7, 3);
	make_skewed(&inner, 7, 3);
	for (i = 0; i < njoins; i++)
	{
		if (joins[i].algorithm == GJ_ALGO_HASH)
			test_join(&outer, &inner, &joins[i], &schedules[3]);
	}
	/* every row the same key: whole tiles of one key, split into steps */
	make_skewed(&outer, 7, 1);
	make_skewed(&inner, 7, 1);
	for (i = 0; i < njoins; i++)
	{
		if (joins[i].algorithm == GJ_ALGO_HASH)
			test_join(&outer, &inner, &joins[i], &one_key);
	}
	free_side(&outer);
	free_side(&inner);

	for (i = 0; i < njoins; i++)
	{
		if (strcmp(joins[i].name, "hash o.a = i.a") == 0 ||
			strncmp(joins[i].name, "range band i.a", 14) == 0)
			test_big(&joins[i]);
	}
	run_rowcount_tests(true);
	run_page_decode_cuda_tests();

	free(progs);
	free(joins);
	return failures > 0 ? 1 : 0;
}

/*
 * kernel_test compiled-sorted: every sort-merge and hash join of the specs
 * on cuda with gpujoin.compile_programs = always against the cpu backend,
 * on each schedule and on sides where a third of the rows share a key: the
 * pairs, their order and recheck flags, and every filtered step run by the
 * compiled count kernel (cuda_sorted.cu's count_filtered), none
 * interpreted; then each join's aggregate steps in every grouping, whose
 * folds read that kernel's verdicts (cuda_agg.cu); then, with steps cut
 * at 5,000 candidates, the pairs and an aggregate again.
 *
 * kernel_test compiled-agg (nestloop_agg): the aggregate steps of each
 * program's nested loop, whose folds read the verdict kernel's bits
 * (GJ_COMPILED_BITS), none interpreted, on one tile and on 42, and with
 * steps cut at 5,000 pairs.  Two modes, so that each fits one call of the
 * GPU machine.
 */
/*
 * Is a program named name among those KT_PROGRAMS names (substrings
 * separated by '|'; all where it is unset): a GPU call short of time runs
 * the programs it must.
 */
static bool
kt_program_selected(const char *name)
{
	const char *want = getenv("KT_PROGRAMS");
	char		buf[256];
	char	   *save = NULL;

	if (want == NULL || want[0] == '\0')
		return true;
	snprintf(buf, sizeof(buf), "%s", want);
	for (char *tok = strtok_r(buf, "|", &save); tok != NULL; tok = strtok_r(NULL, "|", &save))
		if (strstr(name, tok) != NULL)
			return true;
	return false;
}

int
run_compiled_tests(bool nestloop_agg)
{
	static const bool outer_nulls[NCOLS] = {true, true, true};
	static const bool inner_nulls[NCOLS] = {true, false, true};
	static const Schedule schedules[] = {
		{"1 tile, capacity all pairs", N_OUTER, N_INNER, N_OUTER, N_INNER,
		(int64_t) N_OUTER * N_INNER},
		{"7x5 tiles of 120x100 rows, capacity 5", 120, 100, 7, 5, 5},
		{"42 tiles of 500x400 rows, capacity 2000", N_OUTER, N_INNER, 500, 400, 2000},
	};
	int			nsched = sizeof(schedules) / sizeof(schedules[0]);
	JoinSpec   *joins = xmalloc(sizeof(JoinSpec) * 64);
	int			njoins = build_joins(joins);
	Program    *progs = xmalloc(sizeof(Program) * 32);
	int			nprogs = build_programs(progs);
	int			nsorted = 0;
	GjDeviceInfo info;
	GjError		err;
	Side		outer,
				inner;

	for (int i = 0; i < njoins; i++)
		nsorted += joins[i].algorithm != GJ_ALGO_NESTLOOP;
	memset(&err, 0, sizeof(err));
	if (!gj_cuda_probe(&info, &err))
	{
		printf("1..0 # SKIP no CUDA device: %s\n", err.message);
		free(joins);
		free(progs);
		return 0;
	}
	printf("1..%d\n", nestloop_agg ? nprogs * (2 * AGG_NGROUPINGS + 1) :
		   nsorted * (nsched + 3 + 2 * AGG_NGROUPINGS));
	kt_compile_programs = GJ_COMPILE_ALWAYS;
	kt_expect_compiled = true;
	make_side(&outer, N_OUTER, outer_nulls);
	make_side(&inner, N_INNER, inner_nulls);
	if (nestloop_agg)
		nsched = njoins = 0;
	else
		nprogs = 0;
	for (int j = 0; j < nsched; j++)
		for (int i = 0; i < njoins; i++)
			if (joins[i].algorithm != GJ_ALGO_NESTLOOP)
				compare_join(&outer, &inner, &joins[i], &schedules[j], NULL, "compiled");
	/* aggregate steps: the folds read the compiled count pass's verdicts */
	for (int i = 0; i < njoins; i++)
		if (joins[i].algorithm != GJ_ALGO_NESTLOOP)
			for (int g = 0; g < AGG_NGROUPINGS; g++)
			{
				test_agg(&outer, &inner, &joins[i], &schedules[0], g);
				test_agg(&outer, &inner, &joins[i], &schedules[2], g);
			}
	/*
	 * steps cut at 5,000 candidates: the cut, and a step's last row running
	 * past it, with the bitmaps sized for the cut
	 */
	gj_cuda_test_set_verdict_pairs(5000);
	for (int i = 0; i < njoins; i++)
		if (joins[i].algorithm != GJ_ALGO_NESTLOOP)
		{
			compare_join(&outer, &inner, &joins[i], &schedules[0], NULL,
						 "compiled, steps cut at 5000 candidates");
			test_agg(&outer, &inner, &joins[i], &schedules[0], 0);
		}
	gj_cuda_test_set_verdict_pairs(0);
	/* nested loops: the folds read the verdict kernel's bits */
	for (int i = 0; i < nprogs; i++)
	{
		JoinSpec	nl;

		if (!kt_program_selected(progs[i].name))
		{
			for (int k = 0; k < 2 * AGG_NGROUPINGS + 1; k++)
				printf("ok %d - %s # SKIP not in KT_PROGRAMS\n", ++test_number, progs[i].name);
			continue;
		}
		nestloop_join(&nl, &progs[i]);
		for (int g = 0; g < AGG_NGROUPINGS; g++)
		{
			test_agg(&outer, &inner, &nl, &schedules[0], g);
			test_agg(&outer, &inner, &nl, &schedules[2], g);
		}
		gj_cuda_test_set_verdict_pairs(5000);
		test_agg(&outer, &inner, &nl, &schedules[2], AGG_NGROUPINGS - 1);
		gj_cuda_test_set_verdict_pairs(0);
	}
	if (!nestloop_agg)
	{
		make_skewed(&outer, 7, 3);
		make_skewed(&inner, 7, 3);
	}
	for (int i = 0; i < njoins; i++)
		if (joins[i].algorithm != GJ_ALGO_NESTLOOP)
			compare_join(&outer, &inner, &joins[i], &schedules[2], NULL, "compiled, skewed");
	kt_compile_programs = GJ_COMPILE_OFF;
	kt_expect_compiled = false;
	free_side(&outer);
	free_side(&inner);
	free(joins);
	free(progs);
	printf("kernel_test: %d passed, %d failed\n", test_number - failures, failures);
	return failures > 0 ? 1 : 0;
}

/*-------------------------------------------------------------------------
 *
 * kt_cpu.c
 *	  The cpu mode of kernel_test ("kernel_test cpu", and the default run
 *	  without a CUDA device): the cpu backend alone against a brute-force
 *	  reference, every pair evaluated by the interpreter (run_cpu_tests).
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_common.h"

/* ---------------------------------------------------------------------
 * cpu: the cpu backend alone against a brute-force reference
 *
 * What CI can run: no GPU, no server.  Every pair of the two sides is
 * evaluated with the device program in the test itself, and the cpu
 * backend's pairs over each tile schedule, with its tile pruning and its
 * steps, must be exactly those (recheck flags included).  For the range
 * joins of build_joins the bounds admit every pair the program accepts (as
 * test_truth checks for the cuda backend), so the reference is the program
 * alone; a hash join's candidates are the pairs of equal keys, so its
 * reference is the program over those.
 * ---------------------------------------------------------------------
 */

/*
 * Sides of the cpu mode: half those of the cuda tests in each direction, so
 * that the reference (every pair through the interpreter) and the cpu
 * backend's nested loops over every program take well under a minute on
 * CI's two cores.
 */
#define CPU_OUTER	1500
#define CPU_INNER	1250

/* Do the hash join's key columns of the two rows hold equal, non-NULL keys? */
static bool
equal_hash_keys(const Side *outer, const Side *inner, const GjEquiSpec *equi,
				int64_t o, int64_t i)
{
	int			k;

	for (k = 0; k < equi->nkeys; k++)
	{
		int			oc = equi->outer_cols[k];
		int			ic = equi->inner_cols[k];
		int64_t		x,
					y;

		if ((outer->isnull[oc] && outer->isnull[oc][o]) ||
			(inner->isnull[ic] && inner->isnull[ic][i]))
			return false;
		x = equi->cls[k] == GJ_CLASS_FLOAT ?
			gj_float_order_key(gj_bits_to_double(outer->values[oc][o])) : outer->values[oc][o];
		y = equi->cls[k] == GJ_CLASS_FLOAT ?
			gj_float_order_key(gj_bits_to_double(inner->values[ic][i])) : inner->values[ic][i];
		if (x != y)
			return false;
	}
	return true;
}

/* The pairs a join spec must return, every pair evaluated; sorted. */
static void
reference_pairs(const Side *outer, const Side *inner, const JoinSpec *spec, PairSet *set)
{
	int64_t		o,
				i;

	memset(set, 0, sizeof(PairSet));
	for (o = 0; o < outer->nrows; o++)
	{
		for (i = 0; i < inner->nrows; i++)
		{
			int			r;

			if (spec->algorithm == GJ_ALGO_HASH &&
				!equal_hash_keys(outer, inner, &spec->equi, o, i))
				continue;
			r = gj_program_eval(spec->program.instrs, spec->program.ninstrs,
								&outer->cols, o, &inner->cols, i);
			if (r != GJ_RESULT_FALSE)
				add_pair(set, (uint32_t) o | (r == GJ_RESULT_RECHECK ? GJ_PAIR_RECHECK : 0),
						 (uint32_t) i);
		}
	}
	qsort(set->pairs, set->n, sizeof(uint64_t), cmp_u64);
}

/* Say where two sorted pair sets first differ; true when they are equal. */
static bool
same_pairs(const PairSet *want, const PairSet *got, const char *what)
{
	int64_t		i;

	if (want->n != got->n)
	{
		printf("# %s: %lld pairs, the reference has %lld\n", what, (long long) got->n,
			   (long long) want->n);
		return false;
	}
	for (i = 0; i < want->n; i++)
	{
		if (want->pairs[i] != got->pairs[i])
		{
			printf("# %s: first difference at %lld: reference (%#x, %u), cpu (%#x, %u)\n",
				   what, (long long) i, (unsigned) (want->pairs[i] >> 32),
				   (unsigned) want->pairs[i], (unsigned) (got->pairs[i] >> 32),
				   (unsigned) got->pairs[i]);
			return false;
		}
	}
	return true;
}

/* The cpu backend's pairs of a join over a schedule against the reference. */
static void
cpu_test_join(const Side *outer, const Side *inner, const JoinSpec *spec, const Schedule *s,
			  const PairSet *ref)
{
	GjJoinInput input;
	PairSet		cpu;
	GjError		err;
	bool		ok = true;

	spec_input(&input, outer, inner, spec, s->capacity);
	memset(&err, 0, sizeof(err));
	if (!run_schedule(&gj_cpu_backend, &input, s, &cpu, &err))
	{
		printf("# cpu backend failed: %s\n", err.message);
		ok = false;
	}
	else
	{
		printf("# %lld pairs, %lld steps, %lld tiles pruned\n", (long long) cpu.n,
			   (long long) cpu.steps, (long long) cpu.pruned);
		if (cpu.problem[0])
		{
			printf("# step contract: %s\n", cpu.problem);
			ok = false;
		}
		ok = same_pairs(ref, &cpu, "cpu") && ok;
		if (ok && cpu.stats.device_matches != cpu.n)
		{
			printf("# stats: %lld matches reported, %lld returned\n",
				   (long long) cpu.stats.device_matches, (long long) cpu.n);
			ok = false;
		}
	}
	free(cpu.pairs);
	report(ok, "cpu %s, %s", spec->name, s->name);
}

/*
 * What the executor derives from the pairs for each join type, from the cpu
 * backend's pairs (tiles split into many steps) and from the reference:
 * the outer rows with a match (semi join; without, the anti join and a left
 * join's NULL-extended rows), those whose every match needs a recheck, and
 * the inner rows without a match (a right or full join's NULL-extended
 * rows).  Equal pairs give equal answers; this checks that no step loses or
 * repeats an outer row's matches across tile and step boundaries.
 */
static void
cpu_test_join_types(const Side *outer, const Side *inner, const JoinSpec *spec,
					const Schedule *s, const PairSet *ref)
{
	GjJoinInput input;
	PairSet		cpu;
	GjError		err;
	bool		ok = true;
	int			w;
	uint8_t    *seen[2][2];		/* [reference, cpu][outer, inner] */

	spec_input(&input, outer, inner, spec, s->capacity);
	memset(&err, 0, sizeof(err));
	if (!run_schedule(&gj_cpu_backend, &input, s, &cpu, &err))
	{
		printf("# cpu backend failed: %s\n", err.message);
		report(false, "cpu join types of %s, %s", spec->name, s->name);
		return;
	}
	for (w = 0; w < 2; w++)
	{
		const PairSet *set = w == 0 ? ref : &cpu;
		int64_t		k;

		/* per row: bit 1 a sure match, bit 2 a match needing a recheck */
		seen[w][0] = calloc(outer->nrows > 0 ? outer->nrows : 1, 1);
		seen[w][1] = calloc(inner->nrows > 0 ? inner->nrows : 1, 1);
		for (k = 0; k < set->n; k++)
		{
			uint32_t	o = (uint32_t) (set->pairs[k] >> 32);
			uint32_t	i = (uint32_t) set->pairs[k];
			uint8_t		bit = (o & GJ_PAIR_RECHECK) ? 2 : 1;

			seen[w][0][o & GJ_PAIR_ROW_MASK] |= bit;
			seen[w][1][i] |= bit;
		}
	}
	if (memcmp(seen[0][0], seen[1][0], outer->nrows) != 0)
	{
		printf("# the outer rows with (rechecked) matches differ\n");
		ok = false;
	}
	if (memcmp(seen[0][1], seen[1][1], inner->nrows) != 0)
	{
		printf("# the inner rows with (rechecked) matches differ\n");
		ok = false;
	}
	for (w = 0; w < 2; w++)
	{
		free(seen[w][0]);
		free(seen[w][1]);
	}
	free(cpu.pairs);
	report(ok, "cpu join types (semi, anti, outer) of %s, %s", spec->name, s->name);
}

/*
 * The aggregate step against the reference: the pairs agg_step
 * returns are reference pairs, and what it reduced is the aggregate of the
 * other reference pairs (counts, integer sums and min/max exactly, float
 * sums up to summation order), with no groups, groups of the outer rows,
 * and groups of both sides (a pair of a deferred inner row must come back).
 */
static void
cpu_test_agg(const Side *outer, const Side *inner, const JoinSpec *join, const Schedule *s,
			 const PairSet *ref, int grouping)
{
	bool		grouped = AGG_GROUPED(grouping);
	GjJoinInput input;
	GjAggSpec	spec;
	AggRun	   *cpu = xmalloc(sizeof(AggRun));
	AggRun	   *want = xmalloc(sizeof(AggRun));
	uint8_t    *flags[AGG_NARGS];
	uint32_t   *groups = xmalloc(sizeof(uint32_t) * outer->nrows);
	uint32_t   *inner_groups = xmalloc(sizeof(uint32_t) * inner->nrows);
	char		title[96];
	GjError		err;
	bool		ok = true;
	int			a;
	int64_t		k,
				q;

	spec_input(&input, outer, inner, join, s->capacity);
	agg_spec_init(&spec, outer, inner, flags, groups, inner_groups, grouping);

	memset(&err, 0, sizeof(err));
	if (!run_agg_schedule(&gj_cpu_backend, &input, s, &spec, cpu, &err))
	{
		printf("# cpu backend failed: %s\n", err.message);
		ok = false;
	}

	/* the reference: every reference pair agg_step did not return */
	memset(want, 0, sizeof(AggRun));
	for (k = 0, q = 0; ok && k < ref->n; k++)
	{
		uint32_t	o = (uint32_t) (ref->pairs[k] >> 32) & GJ_PAIR_ROW_MASK;
		uint32_t	i = (uint32_t) ref->pairs[k];
		int64_t		g = gj_agg_pair_group(&spec, o, i);

		while (q < cpu->pairs.n && cpu->pairs.pairs[q] < ref->pairs[k])
			q++;
		if (q < cpu->pairs.n && cpu->pairs.pairs[q] == ref->pairs[k])
			continue;
		if (g == GJ_AGG_PAIR_DEFERRED)
		{
			printf("# pair (%u, %u) was reduced, but its group is deferred\n", o, i);
			ok = false;
			continue;
		}
		want->partial.pairs++;
		if (grouped)
			want->group_pairs[g]++;
		for (a = 0; a < spec.nargs; a++)
		{
			GjAggAcc   *acc = grouped ? &want->group_acc[g * AGG_NARGS + a] :
				&want->partial.acc[a];
			int64_t		v;
			int			status = gj_agg_arg_value(&spec, &spec.args[a], o, i, &v);

			if (status == GJ_AGG_ROW_ERROR)
			{
				printf("# pair (%u, %u) was reduced, but its argument %d needs the host\n",
					   o, i, a);
				ok = false;
			}
			else if (status == GJ_AGG_ROW_VALUE)
				gj_agg_add(acc, &spec.args[a], v, 1);
		}
	}
	if (ok)
	{
		int			nacc = grouped ? agg_spec_group_count(grouping) * AGG_NARGS : spec.nargs;
		const GjAggAcc *gacc = grouped ? cpu->group_acc : cpu->partial.acc;
		const GjAggAcc *wacc = grouped ? want->group_acc : want->partial.acc;

		printf("# %lld pairs reduced, %lld returned, %lld steps\n",
			   (long long) cpu->partial.pairs, (long long) cpu->pairs.n,
			   (long long) cpu->pairs.steps);
		if (cpu->pairs.problem[0])
		{
			printf("# step contract: %s\n", cpu->pairs.problem);
			ok = false;
		}
		if (cpu->partial.pairs + cpu->pairs.n != ref->n ||
			want->partial.pairs != cpu->partial.pairs)
		{
			printf("# reduced %lld and returned %lld pairs of the reference's %lld\n",
				   (long long) cpu->partial.pairs, (long long) cpu->pairs.n,
				   (long long) ref->n);
			ok = false;
		}
		if (grouped && memcmp(cpu->group_pairs, want->group_pairs,
							  sizeof(cpu->group_pairs)) != 0)
		{
			printf("# the groups' pair counts differ\n");
			ok = false;
		}
		for (a = 0; ok && a < nacc; a++)
		{
			const GjAggAcc *x = &wacc[a];
			const GjAggAcc *y = &gacc[a];

			if (x->count != y->count || x->isum != y->isum || !agg_close_fsum(x, y) ||
				x->has_minmax != y->has_minmax ||
				(x->has_minmax && (x->min_key != y->min_key || x->max_key != y->max_key)))
			{
				printf("# accumulator %d differs: count %lld / %lld, fsum %.17g / %.17g\n", a,
					   (long long) x->count, (long long) y->count, x->fsum, y->fsum);
				ok = false;
			}
		}
	}
	for (a = 0; a < AGG_NARGS; a++)
		free(flags[a]);
	free(groups);
	free(inner_groups);
	free(cpu->pairs.pairs);
	free(cpu);
	free(want);
	snprintf(title, sizeof(title), "cpu agg_step %%s, %%s%s", agg_grouping_name(grouping));
	report(ok, title, join->name, s->name);
}

/* run_step refuses an inner tile larger than the match buffer. */
static void
cpu_test_errors(const Side *outer, const Side *inner, const JoinSpec *spec)
{
	GjJoinInput input;
	GjError		err;
	void	   *state;
	GjTile		tile = {0, 10, 0, 100};
	int64_t		next = 0;
	GjMatches	m;
	GjStats		stats;

	spec_input(&input, outer, inner, spec, 50);
	memset(&err, 0, sizeof(err));
	memset(&stats, 0, sizeof(stats));
	state = gj_cpu_backend.begin_join(&input, &err);
	report(state != NULL && !gj_cpu_backend.run_step(state, &tile, &next, &m, &stats, &err) &&
		   err.code == GJ_ERR_DEVICE,
		   "cpu %s: %s", spec->name, "run_step refuses an inner tile larger than the match buffer");
	gj_cpu_backend.end_join(state);
	gj_cpu_backend.end_join(NULL);
}

/*
 * Tile pruning must prune: a hash join's tiles are hash ranges, so of a
 * schedule of many tiles most cannot meet (the pairs being right shows that
 * no tile with a match was pruned).
 */
static void
cpu_test_pruning(const Side *outer, const Side *inner, const JoinSpec *spec,
				 const Schedule *s)
{
	GjJoinInput input;
	PairSet		cpu;
	GjError		err;
	int64_t		tiles = ((s->outer_rows + s->outer_tile - 1) / s->outer_tile) *
		((s->inner_rows + s->inner_tile - 1) / s->inner_tile);
	bool		ok;

	spec_input(&input, outer, inner, spec, s->capacity);
	memset(&err, 0, sizeof(err));
	ok = run_schedule(&gj_cpu_backend, &input, s, &cpu, &err);
	printf("# %lld of %lld tiles pruned\n", (long long) cpu.pruned, (long long) tiles);
	report(ok && cpu.pruned >= tiles / 2, "cpu %s prunes most tiles, %s", spec->name, s->name);
	free(cpu.pairs);
}

/*
 * The cpu mode: the nested-loop programs over the three nested-loop
 * schedules, every sort-merge and hash join over all four, the join types
 * on the schedule of many steps, the aggregate fast path, the error path
 * and tile pruning, and the per-row counts of compare conjunctions
 * (kt_rowcount.c).  The reference of each program or join is computed once.
 */
int
run_cpu_tests(void)
{
	static const bool outer_nulls[NCOLS] = {true, true, true};
	static const bool inner_nulls[NCOLS] = {true, false, true};
	static const Schedule schedules[] = {
		{"4 tiles, capacity 3 inner tiles", CPU_OUTER, CPU_INNER, 1150, 850, 3 * 850},
		{"1 tile, capacity all pairs", CPU_OUTER, CPU_INNER, CPU_OUTER, CPU_INNER,
		(int64_t) CPU_OUTER * CPU_INNER},
		{"7x5 tiles of 120x100 rows, capacity 5", 120, 100, 7, 5, 5},
		{"42 tiles of 250x200 rows, capacity 1000", CPU_OUTER, CPU_INNER, 250, 200, 1000},
	};
	int			nsched = sizeof(schedules) / sizeof(schedules[0]);
	Program    *progs = xmalloc(sizeof(Program) * 32);
	int			nprogs = build_programs(progs);
	JoinSpec   *joins = xmalloc(sizeof(JoinSpec) * 64);
	int			njoins = build_joins(joins);
	Side		outer,
				inner,
				small_outer,
				small_inner;
	int			i,
				j,
				g;

	/* programs, joins, join types, aggregates of every join and program, errors */
	printf("1..%d\n", nprogs * (nsched - 1) + njoins * nsched + njoins +
		   njoins * 2 * AGG_NGROUPINGS + nprogs * AGG_NGROUPINGS + 2 + 1 +
		   rowcount_test_count(false) + runs_test_count() + nvrtc_test_count() +
		   page_decode_test_count() + kernel_store_test_count());
	printf("# cpu backend against a brute-force reference, %d x %d rows\n", CPU_OUTER, CPU_INNER);
	make_side(&outer, CPU_OUTER, outer_nulls);
	make_side(&inner, CPU_INNER, inner_nulls);

	/*
	 * The schedule of 120 x 100 rows covers the first rows of the sides:
	 * its reference is over sides of that size (the same rows).
	 */
	small_outer = outer;
	small_outer.nrows = schedules[2].outer_rows;
	small_inner = inner;
	small_inner.nrows = schedules[2].inner_rows;

	for (i = 0; i < nprogs; i++)
	{
		JoinSpec	spec;
		PairSet		ref,
					small_ref;

		memset(&spec, 0, sizeof(spec));
		spec.name = progs[i].name;
		spec.algorithm = GJ_ALGO_NESTLOOP;
		spec.program = progs[i];
		reference_pairs(&outer, &inner, &spec, &ref);
		reference_pairs(&small_outer, &small_inner, &spec, &small_ref);
		for (j = 0; j < nsched - 1; j++)
			cpu_test_join(j == 2 ? &small_outer : &outer, j == 2 ? &small_inner : &inner,
						  &spec, &schedules[j], j == 2 ? &small_ref : &ref);
		free(ref.pairs);
		free(small_ref.pairs);
	}
	for (i = 0; i < njoins; i++)
	{
		PairSet		ref,
					small_ref;

		reference_pairs(&outer, &inner, &joins[i], &ref);
		reference_pairs(&small_outer, &small_inner, &joins[i], &small_ref);
		for (j = 0; j < nsched; j++)
			cpu_test_join(j == 2 ? &small_outer : &outer, j == 2 ? &small_inner : &inner,
						  &joins[i], &schedules[j], j == 2 ? &small_ref : &ref);
		cpu_test_join_types(&outer, &inner, &joins[i], &schedules[3], &ref);
		for (g = 0; g < AGG_NGROUPINGS; g++)
		{
			cpu_test_agg(&outer, &inner, &joins[i], &schedules[1], &ref, g);
			cpu_test_agg(&outer, &inner, &joins[i], &schedules[3], &ref, g);
		}
		free(ref.pairs);
		free(small_ref.pairs);
	}
	for (i = 0; i < nprogs; i++)
	{
		JoinSpec	nl;
		PairSet		ref;

		nestloop_join(&nl, &progs[i]);
		reference_pairs(&outer, &inner, &nl, &ref);
		for (g = 0; g < AGG_NGROUPINGS; g++)
			cpu_test_agg(&outer, &inner, &nl, &schedules[1], &ref, g);
		free(ref.pairs);
	}
	cpu_test_errors(&outer, &inner, &joins[0]);
	cpu_test_errors(&outer, &inner, &joins[njoins - 1]);
	for (i = 0; i < njoins; i++)
	{
		if (strcmp(joins[i].name, "hash o.a = i.a") == 0)
			cpu_test_pruning(&outer, &inner, &joins[i], &schedules[3]);
	}
	free_side(&outer);
	free_side(&inner);
	free(progs);
	free(joins);
	run_rowcount_tests(false);
	run_runs_tests();
	/* no GPU needed: NVRTC compiles the bench's programs (skips without it) */
	run_nvrtc_cpu_tests();
	run_page_decode_tests();
	run_kernel_store_tests();
	printf("kernel_test: %d passed, %d failed\n", test_number - failures, failures);
	return failures > 0 ? 1 : 0;
}

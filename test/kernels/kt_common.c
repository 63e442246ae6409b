/*-------------------------------------------------------------------------
 *
 * kt_common.c
 *	  What the tests of kernel_test share: the deterministic random number
 *	  generator and the random sides, the schedule runner (the tiles walked
 *	  as the tile planner does, the step contract checked on the way), the
 *	  TAP-style report of each test, and the aggregate spec of the agg_step
 *	  tests.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "kt_common.h"

int			test_number = 0;
int			failures = 0;

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

/* xorshift64*: deterministic, so that a failure can be reproduced */
uint64_t
rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

void *
xmalloc(size_t size)
{
	void	   *p = malloc(size > 0 ? size : 1);

	if (p == NULL)
	{
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	return p;
}

int64_t
dbits(double d)
{
	return gj_double_to_bits(d);
}

/* Small ints (many duplicates) and the edges of int4 and int8. */
static int64_t
random_int_key(void)
{
	uint64_t	r = rng() % 100;

	if (r == 0)
		return INT32_MIN;
	if (r == 1)
		return INT32_MAX;
	if (r == 2)
		return INT64_MIN;
	if (r == 3)
		return INT64_MAX;
	return (int64_t) (rng() % 61) - 30;
}

/* Halves in [-20, 20], the special values, and values that overflow. */
static int64_t
random_float_key(void)
{
	static const double specials[] = {
		-0.0, 0.0, INFINITY, -INFINITY, 1e200, -1e200, 4.9e-324, 1e-310, 1.5, -2.25
	};
	uint64_t	r = rng() % 100;

	if (r < 10)
		return dbits(specials[r]);
	if (r < 13)
		return dbits(NAN);
	if (r < 15)
		return (int64_t) 0xfff8000000000001ull;	/* a negative NaN, other bits */
	return dbits(((int) (rng() % 81) - 40) * 0.5);
}

/* Mostly near INT32_MAX, so that an int4 sum of two overflows. */
static int64_t
random_big_key(void)
{
	if (rng() % 4 == 0)
		return (int64_t) (rng() % 200) - 100;
	return INT32_MAX - (int64_t) (rng() % 2000);
}

/* One side; a column listed in with_nulls gets about 5% NULLs. */
void
make_side(Side *side, int64_t nrows, const bool with_nulls[NCOLS])
{
	int			c;
	int64_t		i;

	memset(side, 0, sizeof(Side));
	side->nrows = nrows;
	side->cols.ncols = NCOLS;
	for (c = 0; c < NCOLS; c++)
	{
		side->values[c] = xmalloc(sizeof(int64_t) * nrows);
		side->isnull[c] = with_nulls[c] ? xmalloc(nrows) : NULL;
		for (i = 0; i < nrows; i++)
		{
			side->values[c][i] = c == 0 ? random_int_key() :
				c == 1 ? random_float_key() : random_big_key();
			if (side->isnull[c] != NULL)
			{
				side->isnull[c][i] = (rng() % 20 == 0);
				/* a NULL's value is garbage; the backends must not look */
				if (side->isnull[c][i])
					side->values[c][i] = (int64_t) rng();
			}
		}
		side->cols.values[c] = side->values[c];
		side->cols.isnull[c] = side->isnull[c];
	}
}

void
free_side(Side *side)
{
	int			c;

	for (c = 0; c < NCOLS; c++)
	{
		free(side->values[c]);
		free(side->isnull[c]);
	}
}

/* ---------------------------------------------------------------------
 * Running a schedule
 * ---------------------------------------------------------------------
 */

void
add_pair(PairSet *set, uint32_t outer, uint32_t inner)
{
	if (set->n == set->cap)
	{
		set->cap = set->cap > 0 ? 2 * set->cap : 4096;
		set->pairs = realloc(set->pairs, sizeof(uint64_t) * set->cap);
		if (set->pairs == NULL)
		{
			fprintf(stderr, "out of memory\n");
			exit(2);
		}
	}
	set->pairs[set->n] = ((uint64_t) outer << 32) | inner;
	/* position-dependent, so two sequences of the same pairs differ */
	set->order = (set->order ^ set->pairs[set->n]) * 0x100000001b3ull + (uint64_t) set->n;
	set->n++;
}

int
cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a;
	uint64_t	y = *(const uint64_t *) b;

	return (x > y) - (x < y);
}

/* A checksum of a step's matches, to see that a later step left them alone. */
static uint64_t
matches_checksum(const GjMatches *m)
{
	uint64_t	h = (uint64_t) m->count;
	int64_t		k;

	for (k = 0; k < m->count; k++)
		h = (h ^ (((uint64_t) m->outer_rows[k] << 32) | m->inner_rows[k])) * 0x100000001b3ULL;
	return h;
}

/*
 * Walk the tiles inner-major, as tile_planner.c does, and collect every
 * pair.  Checks the step contract on the way.  With spec, the steps are
 * agg_steps reducing into *partial, and the pairs collected are those they
 * return.  Without, the backend is double buffered as for step overlap
 * (backend.h), and every step's matches must be intact after the next step.
 * Returns false with err set when the backend failed.
 */
static bool
run_schedule_agg(const GjBackend *backend, const GjJoinInput *input, const Schedule *s,
				 const GjAggSpec *spec, GjAggPartial *partial, PairSet *set, GjError *err)
{
	void	   *state;
	int64_t		ib,
				ob;
	GjMatches	prev;
	uint64_t	prev_sum = 0;

	memset(set, 0, sizeof(PairSet));
	memset(&prev, 0, sizeof(prev));
	state = backend->begin_join(input, err);
	if (state == NULL)
		return false;
	if (spec == NULL && backend->double_buffer != NULL && !backend->double_buffer(state))
		snprintf(set->problem, sizeof(set->problem), "double_buffer failed");
	for (ib = 0; ib < s->inner_rows; ib += s->inner_tile)
	{
		for (ob = 0; ob < s->outer_rows; ob += s->outer_tile)
		{
			GjTile		tile;
			int64_t		next;

			tile.outer_begin = ob;
			tile.outer_end = ob + s->outer_tile < s->outer_rows ? ob + s->outer_tile : s->outer_rows;
			tile.inner_begin = ib;
			tile.inner_end = ib + s->inner_tile < s->inner_rows ? ib + s->inner_tile : s->inner_rows;
			next = tile.outer_begin;
			if (backend->tile_can_match != NULL && !backend->tile_can_match(state, &tile))
			{
				set->pruned++;
				continue;
			}
			while (next < tile.outer_end)
			{
				GjMatches	m;
				int64_t		before = next;
				int64_t		k;

				memset(&m, 0, sizeof(m));
				GjAggPartial step;

				/* as the executor: a partial per step, merged into the total */
				memset(&step, 0, sizeof(step));
				if (partial != NULL)
				{
					step.group_pairs = partial->group_pairs;
					step.group_acc = partial->group_acc;
				}
				if (spec != NULL ?
					!backend->agg_step(state, &tile, &next, spec, &step, &m, &set->stats, err) :
					!backend->run_step(state, &tile, &next, &m, &set->stats, err))
				{
					backend->end_join(state);
					return false;
				}
				if (spec != NULL)
				{
					int			a;

					partial->pairs += step.pairs;
					for (a = 0; a < spec->nargs; a++)
						gj_agg_merge(&partial->acc[a], &step.acc[a], spec->args[a].cls);
				}
				set->steps++;
				if (spec == NULL && prev.count > 0)
				{
					if (matches_checksum(&prev) != prev_sum)
						snprintf(set->problem, sizeof(set->problem),
								 "step ending at %lld overwrote the previous step's matches",
								 (long long) next);
					else if (m.count > 0 && prev.outer_rows == m.outer_rows)
						snprintf(set->problem, sizeof(set->problem),
								 "two steps in a row returned the same match buffer");
				}
				if (spec == NULL)
				{
					prev = m;
					prev_sum = matches_checksum(&m);
				}
				if (next <= before || next > tile.outer_end || m.count < 0 ||
					m.count > s->capacity)
					snprintf(set->problem, sizeof(set->problem),
							 "step [%lld, ...) advanced to %lld with %lld matches",
							 (long long) before, (long long) next, (long long) m.count);
				if (next <= before)
					break;
				for (k = 0; k < m.count; k++)
				{
					int64_t		o = m.outer_rows[k] & GJ_PAIR_ROW_MASK;
					int64_t		i = m.inner_rows[k];

					/* sorted algorithms: tiles are positions, pairs row numbers */
					if (input->algorithm == GJ_ALGO_NESTLOOP &&
						(o < before || o >= next || i < tile.inner_begin || i >= tile.inner_end))
						snprintf(set->problem, sizeof(set->problem),
								 "pair (%lld, %lld) outside step rows [%lld, %lld) x [%lld, %lld)",
								 (long long) o, (long long) i, (long long) before,
								 (long long) next, (long long) tile.inner_begin,
								 (long long) tile.inner_end);
					if (o >= input->outer_nrows || i >= input->inner_nrows)
						snprintf(set->problem, sizeof(set->problem),
								 "pair (%lld, %lld) outside the input", (long long) o,
								 (long long) i);
					add_pair(set, m.outer_rows[k], m.inner_rows[k]);
				}
			}
		}
	}
	/* what the backend still holds of the partials */
	if (spec != NULL && backend->agg_finish != NULL)
	{
		GjAggPartial rest;
		int			a;

		memset(&rest, 0, sizeof(rest));
		rest.group_pairs = partial->group_pairs;
		rest.group_acc = partial->group_acc;
		if (!backend->agg_finish(state, spec, &rest, &set->stats, err))
		{
			backend->end_join(state);
			return false;
		}
		partial->pairs += rest.pairs;
		for (a = 0; a < spec->nargs; a++)
			gj_agg_merge(&partial->acc[a], &rest.acc[a], spec->args[a].cls);
	}
	backend->end_join(state);
	qsort(set->pairs, set->n, sizeof(uint64_t), cmp_u64);
	return true;
}

bool
run_schedule(const GjBackend *backend, const GjJoinInput *input, const Schedule *s,
			 PairSet *set, GjError *err)
{
	return run_schedule_agg(backend, input, s, NULL, NULL, set, err);
}

void
report(bool ok, const char *fmt, const char *a, const char *b)
{
	test_number++;
	if (!ok)
		failures++;
	printf("%s %d - ", ok ? "ok" : "not ok", test_number);
	printf(fmt, a, b);
	printf("\n");
	fflush(stdout);
}

/* The tests' gpujoin.compile_programs (compiled-sorted sets always) */
int			kt_compile_programs = GJ_COMPILE_OFF;

/* The input of a join spec over two sides; budget 1 GB, capacity as given. */
void
spec_input(GjJoinInput *input, const Side *outer, const Side *inner, const JoinSpec *spec,
		   int64_t capacity)
{
	memset(input, 0, sizeof(GjJoinInput));
	input->outer = outer->cols;
	input->outer_nrows = outer->nrows;
	input->inner = inner->cols;
	input->inner_nrows = inner->nrows;
	input->instrs = spec->program.instrs;
	input->ninstrs = spec->program.ninstrs;
	input->algorithm = spec->algorithm;
	input->match_capacity = capacity;
	input->budget_bytes = (int64_t) 1 << 30;
	input->range = spec->range;
	input->equi = spec->equi;
	input->filter_needed = spec->filter_needed;
	input->compile_programs = kt_compile_programs;
}

/* ---------------------------------------------------------------------
 * Aggregates: agg_step of both backends
 * ---------------------------------------------------------------------
 */

/*
 * The aggregates of the agg_step tests: count(*), an outer integer argument,
 * inner integer, float and large integer arguments, and an argument over
 * both sides (outer column 0 + inner column 0), sums and min/max; with
 * AGG_OUTER_GROUPS, 7 groups of the outer rows, with AGG_BOTH_GROUPS also 3
 * of the inner rows (a pair's group outer x 3 + inner), where every 101st
 * inner row's group is deferred (its pairs go to the host).  The pair
 * argument adds as int8 without groups (always exact) and as int4 with
 * them, where the keys' INT32_MIN and INT32_MAX overflow, so that those
 * pairs go to the host.  flags and the groups of each side are filled (the
 * caller frees flags[a], groups and inner_groups).
 */
const int	agg_arg_side[AGG_NARGS] = {0, 1, 1, 1, GJ_AGG_SIDE_PAIR};
const int	agg_arg_col[AGG_NARGS] = {0, 0, 1, 2, 0};

static const GjInstr pair_add8[3] = {
	{GJOP_LOAD_OUTER, GJ_CLASS_INT, 0, 0},
	{GJOP_LOAD_INNER, GJ_CLASS_INT, 0, 0},
	{GJOP_ADD, GJT_INT8, 0, 0}
};
static const GjInstr pair_add4[3] = {
	{GJOP_LOAD_OUTER, GJ_CLASS_INT, 0, 0},
	{GJOP_LOAD_INNER, GJ_CLASS_INT, 0, 0},
	{GJOP_ADD, GJT_INT4, 0, 0}
};

/* Float sums agree up to summation order (or both saw NaN/infinity). */
bool
agg_close_fsum(const GjAggAcc *x, const GjAggAcc *y)
{
	if (x->fsum_started != y->fsum_started || x->saw_nonfinite != y->saw_nonfinite)
		return false;
	if (!x->fsum_started || x->saw_nonfinite)
		return true;			/* NaN or an infinity: the host decides */
	return fabs(x->fsum - y->fsum) <= 1e-9 * (fabs(x->fsum) + fabs(y->fsum)) + 1e-300;
}

int
agg_spec_group_count(int grouping)
{
	return grouping == AGG_BOTH_GROUPS ? AGG_MAX_GROUPS :
		grouping == AGG_OUTER_GROUPS ? AGG_GROUPS : 1;
}

const char *
agg_grouping_name(int grouping)
{
	return grouping == AGG_BOTH_GROUPS ? ", 7 x 3 groups of both sides" :
		grouping == AGG_OUTER_GROUPS ? ", 7 groups" :
		grouping == AGG_COUNT_ONLY ? ", count(*) alone" : "";
}

void
agg_spec_init(GjAggSpec *spec, const Side *outer, const Side *inner,
			  uint8_t *flags[AGG_NARGS], uint32_t *groups, uint32_t *inner_groups,
			  int grouping)
{
	bool		grouped = AGG_GROUPED(grouping);
	int			a;
	int64_t		r;

	memset(spec, 0, sizeof(GjAggSpec));
	spec->nargs = AGG_NARGS;
	for (a = 0; a < AGG_NARGS; a++)
	{
		const Side *side = agg_arg_side[a] == 0 ? outer : inner;
		int			col = agg_arg_col[a];

		if (agg_arg_side[a] == GJ_AGG_SIDE_PAIR)
		{
			flags[a] = xmalloc(1);
			spec->args[a].side = GJ_AGG_SIDE_PAIR;
			spec->args[a].cls = GJ_CLASS_INT;
			spec->args[a].need_sum = 1;
			spec->args[a].need_minmax = 1;
			spec->args[a].instrs = grouped ? pair_add4 : pair_add8;
			spec->args[a].ninstrs = 3;
			continue;
		}
		flags[a] = xmalloc(side->nrows);
		for (r = 0; r < side->nrows; r++)
			flags[a][r] = side->isnull[col] != NULL && side->isnull[col][r] ?
				GJ_AGG_ROW_NULL : GJ_AGG_ROW_VALUE;
		spec->args[a].side = agg_arg_side[a];
		spec->args[a].cls = col == 1 ? GJ_CLASS_FLOAT : GJ_CLASS_INT;
		spec->args[a].need_sum = 1;
		spec->args[a].need_minmax = 1;
		spec->args[a].values = side->values[col];
		spec->args[a].flags = flags[a];
	}
	for (r = 0; r < outer->nrows; r++)
		groups[r] = (uint32_t) (r % AGG_GROUPS);
	spec->outer_group = grouped ? groups : NULL;
	spec->ngroups = grouped ? AGG_GROUPS : 1;
	for (r = 0; r < inner->nrows; r++)
		inner_groups[r] = r % 101 == 50 ? GJ_AGG_GROUP_DEFERRED : (uint32_t) (r % AGG_INNER_GROUPS);
	if (grouping == AGG_BOTH_GROUPS)
	{
		spec->inner_group = inner_groups;
		spec->ninner_groups = AGG_INNER_GROUPS;
		spec->rows_need_host = 1;
	}
	spec->pair_cols[0] = outer->cols;
	spec->pair_cols[1] = inner->cols;
	/* the arguments stay filled in (the callers free their flags), unread */
	if (grouping == AGG_COUNT_ONLY)
		spec->nargs = 0;
}

bool
run_agg_schedule(const GjBackend *backend, const GjJoinInput *input, const Schedule *s,
				 const GjAggSpec *spec, AggRun *run, GjError *err)
{
	memset(run, 0, sizeof(AggRun));
	if (spec->outer_group != NULL)
	{
		run->partial.group_pairs = run->group_pairs;
		run->partial.group_acc = run->group_acc;
	}
	return run_schedule_agg(backend, input, s, spec, &run->partial, &run->pairs, err);
}

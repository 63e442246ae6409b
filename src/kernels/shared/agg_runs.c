/*-------------------------------------------------------------------------
 *
 * agg_runs.c
 *	  Aggregates over the runs of a range join (see agg_runs.h).
 *
 * Plain C without PostgreSQL headers, like the backends: memory comes from
 * malloc, and the backend that created the runs frees them in end_join.
 *
 * min and max of an inner argument over a run are range-minimum queries:
 * the positions are cut into blocks of GJ_RUNS_BLOCK, each block's minimum
 * and maximum positions kept in a sparse table over blocks (a run's whole
 * blocks are two table lookups), and only the partial blocks at the run's
 * ends are walked.  The memory is small (2 * 8 bytes * log2(blocks) per
 * block); a run is O(GJ_RUNS_BLOCK) instead of O(width).  Float sums still
 * walk the run: prefix sums of floats would not round as PostgreSQL's
 * running sum does.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>

#include "agg_runs.h"
#include "kernels/agg_reduce.h"

/*
 * Per inner argument column, over inner positions in key order: prefix
 * counts of non-NULL values and prefix sums of integer values (a run's
 * count and sum are two subtractions), and the values themselves in key
 * order for the float sums and min/max that walk the run.
 */
#define GJ_RUNS_BLOCK 64

/*
 * Range-minimum (and maximum) tables of one argument: its order keys in key
 * order (gj_agg_add_minmax's keys), and per level k and block b the
 * position of the least (greatest) valid key of blocks [b, b + 2^k), -1 if
 * none is valid.
 */
typedef struct GjRunsRmq
{
	int64_t		nblocks;
	int			nlevels;
	int64_t    *keys;
	int64_t    *min_pos;		/* [level * nblocks + block] */
	int64_t    *max_pos;
} GjRunsRmq;

struct GjAggRuns
{
	int64_t    *count_prefix[GJ_AGG_MAX_ARGS];
	gj_int128  *sum_prefix[GJ_AGG_MAX_ARGS];
	int64_t    *sorted_values[GJ_AGG_MAX_ARGS];
	uint8_t    *sorted_flags[GJ_AGG_MAX_ARGS];
	GjRunsRmq  *rmq[GJ_AGG_MAX_ARGS];	/* min/max without a float sum */
};

static void
rmq_free(GjRunsRmq *rmq)
{
	if (rmq == NULL)
		return;
	free(rmq->keys);
	free(rmq->min_pos);
	free(rmq->max_pos);
	free(rmq);
}

/* The position of the lesser (greater, if max) valid key, -1 if neither. */
static inline int64_t
rmq_pick(const int64_t *keys, int64_t p, int64_t q, bool max)
{
	if (p < 0)
		return q;
	if (q < 0)
		return p;
	if (max)
		return keys[q] > keys[p] ? q : p;
	return keys[q] < keys[p] ? q : p;
}

static GjRunsRmq *
rmq_create(const int64_t *values, const uint8_t *flags, int64_t n, int cls)
{
	GjRunsRmq  *rmq = calloc(1, sizeof(GjRunsRmq));
	int64_t		b,
				p;
	int			k;

	if (rmq == NULL)
		return NULL;
	rmq->nblocks = (n + GJ_RUNS_BLOCK - 1) / GJ_RUNS_BLOCK;
	rmq->nlevels = 1;
	while (((int64_t) 1 << rmq->nlevels) <= rmq->nblocks)
		rmq->nlevels++;
	rmq->keys = malloc(sizeof(int64_t) * (n > 0 ? n : 1));
	rmq->min_pos = malloc(sizeof(int64_t) * rmq->nlevels * (rmq->nblocks > 0 ? rmq->nblocks : 1));
	rmq->max_pos = malloc(sizeof(int64_t) * rmq->nlevels * (rmq->nblocks > 0 ? rmq->nblocks : 1));
	if (rmq->keys == NULL || rmq->min_pos == NULL || rmq->max_pos == NULL)
	{
		rmq_free(rmq);
		return NULL;
	}
	for (p = 0; p < n; p++)
		rmq->keys[p] = cls == GJ_CLASS_FLOAT ?
			gj_float_order_key(gj_bits_to_double(values[p])) : values[p];
	for (b = 0; b < rmq->nblocks; b++)
	{
		int64_t		lo = -1,
					hi = -1;

		for (p = b * GJ_RUNS_BLOCK; p < n && p < (b + 1) * GJ_RUNS_BLOCK; p++)
		{
			if (flags[p] != GJ_AGG_ROW_VALUE)
				continue;
			lo = rmq_pick(rmq->keys, lo, p, false);
			hi = rmq_pick(rmq->keys, hi, p, true);
		}
		rmq->min_pos[b] = lo;
		rmq->max_pos[b] = hi;
	}
	for (k = 1; k < rmq->nlevels; k++)
	{
		int64_t		half = (int64_t) 1 << (k - 1);
		int64_t    *mn = rmq->min_pos + k * rmq->nblocks;
		int64_t    *mx = rmq->max_pos + k * rmq->nblocks;

		for (b = 0; b + 2 * half <= rmq->nblocks; b++)
		{
			mn[b] = rmq_pick(rmq->keys, mn[b - rmq->nblocks], mn[b - rmq->nblocks + half], false);
			mx[b] = rmq_pick(rmq->keys, mx[b - rmq->nblocks], mx[b - rmq->nblocks + half], true);
		}
	}
	return rmq;
}

/*
 * Add the least and the greatest valid value of positions [first, last)
 * into acc.  Returns the positions walked.
 */
static int64_t
rmq_reduce(const GjRunsRmq *rmq, const int64_t *values, const uint8_t *flags, int cls,
		   GjAggAcc *acc, int64_t first, int64_t last)
{
	int64_t		lo = -1,
				hi = -1,
				walked = 0,
				bfirst = (first + GJ_RUNS_BLOCK - 1) / GJ_RUNS_BLOCK,
				blast = last / GJ_RUNS_BLOCK,
				p;

	if (blast <= bfirst)
	{
		/* no whole block inside the run: walk it (at most two blocks) */
		bfirst = blast = last;
	}
	else
	{
		int64_t		nb = blast - bfirst;
		int			k = 0;
		int64_t		off;

		while (((int64_t) 2 << k) <= nb)
			k++;
		off = (int64_t) k * rmq->nblocks;
		lo = rmq_pick(rmq->keys, rmq->min_pos[off + bfirst],
					  rmq->min_pos[off + blast - ((int64_t) 1 << k)], false);
		hi = rmq_pick(rmq->keys, rmq->max_pos[off + bfirst],
					  rmq->max_pos[off + blast - ((int64_t) 1 << k)], true);
		bfirst *= GJ_RUNS_BLOCK;
		blast *= GJ_RUNS_BLOCK;
	}
	/* the partial blocks: [first, bfirst) and [blast, last) */
	for (p = first; p < last; p++)
	{
		if (p == bfirst)
			p = blast;
		if (p >= last)
			break;
		walked++;
		if (flags[p] != GJ_AGG_ROW_VALUE)
			continue;
		lo = rmq_pick(rmq->keys, lo, p, false);
		hi = rmq_pick(rmq->keys, hi, p, true);
	}
	if (lo >= 0)
	{
		gj_agg_add_minmax(acc, cls, values[lo]);
		gj_agg_add_minmax(acc, cls, values[hi]);
	}
	return walked;
}

void
gj_agg_runs_free(GjAggRuns *runs)
{
	int			a;

	if (runs == NULL)
		return;
	for (a = 0; a < GJ_AGG_MAX_ARGS; a++)
	{
		free(runs->count_prefix[a]);
		free(runs->sum_prefix[a]);
		free(runs->sorted_values[a]);
		free(runs->sorted_flags[a]);
		rmq_free(runs->rmq[a]);
	}
	free(runs);
}

GjAggRuns *
gj_agg_runs_create(const GjAggSpec *spec, const uint32_t *inner_perm, int64_t ninner)
{
	GjAggRuns  *runs = calloc(1, sizeof(GjAggRuns));
	int			a;

	if (runs == NULL)
		return NULL;
	for (a = 0; a < spec->nargs; a++)
	{
		const GjAggArg *arg = &spec->args[a];
		int64_t		p;

		if (arg->side != 1)
			continue;
		runs->count_prefix[a] = malloc(sizeof(int64_t) * (ninner + 1));
		if (runs->count_prefix[a] == NULL)
			goto oom;
		if (arg->need_sum && arg->cls == GJ_CLASS_INT)
		{
			runs->sum_prefix[a] = malloc(sizeof(gj_int128) * (ninner + 1));
			if (runs->sum_prefix[a] == NULL)
				goto oom;
		}
		if ((arg->need_sum && arg->cls == GJ_CLASS_FLOAT) || arg->need_minmax)
		{
			runs->sorted_values[a] = malloc(sizeof(int64_t) * (ninner > 0 ? ninner : 1));
			runs->sorted_flags[a] = malloc(ninner > 0 ? ninner : 1);
			if (runs->sorted_values[a] == NULL || runs->sorted_flags[a] == NULL)
				goto oom;
		}
		runs->count_prefix[a][0] = 0;
		if (runs->sum_prefix[a])
			runs->sum_prefix[a][0] = 0;
		for (p = 0; p < ninner; p++)
		{
			uint32_t	row = inner_perm[p];
			bool		valid = arg->flags == NULL || arg->flags[row] == GJ_AGG_ROW_VALUE;

			runs->count_prefix[a][p + 1] = runs->count_prefix[a][p] + valid;
			if (runs->sum_prefix[a])
				runs->sum_prefix[a][p + 1] = runs->sum_prefix[a][p] +
					(valid ? arg->values[row] : 0);
			if (runs->sorted_values[a])
			{
				runs->sorted_values[a][p] = arg->values[row];
				runs->sorted_flags[a][p] = valid ? GJ_AGG_ROW_VALUE : GJ_AGG_ROW_NULL;
			}
		}
		if (arg->need_minmax && !(arg->need_sum && arg->cls == GJ_CLASS_FLOAT))
		{
			runs->rmq[a] = rmq_create(runs->sorted_values[a], runs->sorted_flags[a],
									  ninner, arg->cls);
			if (runs->rmq[a] == NULL)
				goto oom;
		}
	}
	return runs;

oom:
	gj_agg_runs_free(runs);
	return NULL;
}

int64_t
gj_agg_runs_reduce(const GjAggRuns *runs, const GjAggSpec *spec, GjAggPartial *partial,
				   uint32_t orow, int64_t first, int64_t last)
{
	int64_t		width = last - first;
	int64_t		work = 1;
	GjAggAcc   *accs = partial->acc;
	int			a;

	if (width <= 0)
		return work;
	partial->pairs += width;
	/*
	 * GROUP BY: the whole run belongs to the group of the outer row (no
	 * inner groups: gj_agg_spec_reads_rows)
	 */
	if (spec->outer_group != NULL)
	{
		uint32_t	g = spec->outer_group[orow];

		partial->group_pairs[g] += width;
		accs = partial->group_acc + (int64_t) g * spec->nargs;
	}
	for (a = 0; a < spec->nargs; a++)
	{
		const GjAggArg *ga = &spec->args[a];
		GjAggAcc   *acc = &accs[a];
		int64_t		q;

		if (ga->side == 0)
		{
			if (ga->flags == NULL || ga->flags[orow] == GJ_AGG_ROW_VALUE)
				gj_agg_add(acc, ga, ga->values[orow], width);
			continue;
		}
		acc->count += runs->count_prefix[a][last] - runs->count_prefix[a][first];
		if (runs->sum_prefix[a])
			acc->isum += runs->sum_prefix[a][last] - runs->sum_prefix[a][first];
		if (runs->sorted_values[a] == NULL)
			continue;
		if (runs->rmq[a] != NULL)
		{
			work += rmq_reduce(runs->rmq[a], runs->sorted_values[a], runs->sorted_flags[a],
							   ga->cls, acc, first, last);
			continue;
		}
		for (q = first; q < last; q++)
		{
			if (runs->sorted_flags[a][q] != GJ_AGG_ROW_VALUE)
				continue;
			if (ga->need_sum && ga->cls == GJ_CLASS_FLOAT)
				gj_agg_add_sum(acc, ga->cls, runs->sorted_values[a][q], 1, ga->need_sxx);
			if (ga->need_minmax)
				gj_agg_add_minmax(acc, ga->cls, runs->sorted_values[a][q]);
		}
		work += width;
	}
	return work;
}

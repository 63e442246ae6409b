/*-------------------------------------------------------------------------
 *
 * cpu_dominance.c
 *	  Per outer row, the number of inner rows it matches for a conjunction
 *	  of exactly two compares of < <= > >= ("r.a < s.a AND r.b > s.b", the
 *	  2-D dominance shape of IEJoin), counted in O((n + m) log m) instead of
 *	  n * m pair tests.
 *
 * gj_dominance_build indexes the inner rows once: sorted on the first
 * compare's key, each with the rank of its second compare's key among the
 * distinct second keys.  gj_dominance_count then sorts the outer rows on
 * their first key and sweeps them in the order in which the first compare
 * admits more and more inner rows (ascending outer keys for "outer > inner"
 * and "outer >= inner", descending for "<" and "<="): each inner row enters
 * a Fenwick tree over the second key's ranks once, and each outer row asks
 * the tree how many of the rows admitted so far pass its second compare,
 * a prefix of the ranks (or the admitted rows less one).
 *
 * Keys are int64 order keys (gj_order_key: PostgreSQL's float order, NaN
 * largest, -0.0 equal to 0.0), so floats, infinities and int64 extremes
 * need nothing special; ties follow the strictness of each operator.  A
 * row with a NULL in either key column matches nothing.  Memory is plain
 * malloc (no PostgreSQL here); the index keeps 12 bytes per inner row plus
 * 8 per distinct second key, and a count takes about 40 bytes per outer row
 * and 4 per distinct key while it runs.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

struct GjDominance
{
	GjCompareConjunction conj;
	int64_t		nrows;			/* inner rows with both keys */
	int64_t    *first_keys;		/* ascending */
	uint32_t   *second_ranks;	/* of the row at the same position */
	int64_t    *distinct;		/* the distinct second keys, ascending */
	int64_t		ndistinct;
};

/* ---------------------------------------------------------------------
 * Sorting
 * ---------------------------------------------------------------------
 */

/*
 * Sort n (key, value) pairs on the key, ascending and stable: LSD radix
 * sort on bytes of the key less the smallest key, so that only the bytes
 * the keys' range spans are sorted (int4 values take four passes, not
 * eight), and passes where every key has the same byte are skipped.
 * tmp_keys and tmp_values have room for n.
 */
static void
dom_sort(int64_t *keys, uint32_t *values, int64_t n, int64_t *tmp_keys, uint32_t *tmp_values)
{
	static const int nbytes = (int) sizeof(uint64_t);
	int64_t    *src_k = keys,
			   *dst_k = tmp_keys;
	uint32_t   *src_v = values,
			   *dst_v = tmp_values;
	int64_t		hist[sizeof(uint64_t)][256];
	int64_t		min,
				max,
				i;
	int			d;

	if (n < 2)
		return;
	memset(hist, 0, sizeof(hist));
	min = max = keys[0];
	for (i = 1; i < n; i++)
	{
		min = keys[i] < min ? keys[i] : min;
		max = keys[i] > max ? keys[i] : max;
	}
	for (i = 0; i < n; i++)
	{
		uint64_t	u = (uint64_t) keys[i] - (uint64_t) min;

		for (d = 0; d < nbytes; d++)
			hist[d][(u >> (8 * d)) & 0xff]++;
	}
	for (d = 0; d < nbytes && ((uint64_t) max - (uint64_t) min) >> (8 * d) != 0; d++)
	{
		int64_t		pos = 0;
		int			b;

		if (hist[d][((uint64_t) keys[0] - (uint64_t) min) >> (8 * d) & 0xff] == n)
			continue;			/* one byte value throughout: order kept */
		for (b = 0; b < 256; b++)
		{
			int64_t		c = hist[d][b];

			hist[d][b] = pos;
			pos += c;
		}
		for (i = 0; i < n; i++)
		{
			uint64_t	u = (uint64_t) src_k[i] - (uint64_t) min;
			int64_t		p = hist[d][(u >> (8 * d)) & 0xff]++;

			dst_k[p] = src_k[i];
			dst_v[p] = src_v[i];
		}
		/* swap */
		{
			int64_t    *tk = src_k;
			uint32_t   *tv = src_v;

			src_k = dst_k;
			src_v = dst_v;
			dst_k = tk;
			dst_v = tv;
		}
	}
	if (src_k != keys)
	{
		memcpy(keys, src_k, sizeof(int64_t) * n);
		memcpy(values, src_v, sizeof(uint32_t) * n);
	}
}

/* ---------------------------------------------------------------------
 * The index of the inner rows
 * ---------------------------------------------------------------------
 */

void
gj_dominance_free(GjDominance *dom)
{
	if (dom == NULL)
		return;
	free(dom->first_keys);
	free(dom->second_ranks);
	free(dom->distinct);
	free(dom);
}

/*
 * Index the inner rows [inner_begin, inner_end) for a dominance
 * conjunction: sorted on the first compare's inner key, ranks of the
 * second's.  NULL when out of memory.  Rows with a NULL in either key
 * column never match.
 */
GjDominance *
gj_dominance_build(const GjJoinInput *input, const GjCompareConjunction *conj,
				   int64_t inner_begin, int64_t inner_end)
{
	const GjSimpleCompare *ca = &conj->cmp[0];
	const GjSimpleCompare *cb = &conj->cmp[1];
	const uint8_t *anull = input->inner.isnull[ca->inner_col];
	const uint8_t *bnull = input->inner.isnull[cb->inner_col];
	int64_t		m = gj_max64(inner_end - inner_begin, 0);
	size_t		m1 = (size_t) gj_max64(m, 1);
	GjDominance *dom = calloc(1, sizeof(GjDominance));
	int64_t    *second_keys = malloc(sizeof(int64_t) * m1);
	int64_t    *tmp_keys = malloc(sizeof(int64_t) * m1);
	uint32_t   *order = malloc(sizeof(uint32_t) * m1);
	uint32_t   *tmp_values = malloc(sizeof(uint32_t) * m1);
	uint32_t   *rank_of = malloc(sizeof(uint32_t) * m1);
	int64_t		n = 0,
				i;
	bool		ok;

	ok = dom != NULL && second_keys != NULL && tmp_keys != NULL && order != NULL &&
		tmp_values != NULL && rank_of != NULL;
	if (ok)
	{
		dom->conj = *conj;
		dom->first_keys = malloc(sizeof(int64_t) * m1);
		dom->second_ranks = malloc(sizeof(uint32_t) * m1);
		dom->distinct = malloc(sizeof(int64_t) * m1);
		ok = dom->first_keys != NULL && dom->second_ranks != NULL && dom->distinct != NULL;
	}
	if (ok)
	{
		/* the rows with both keys, numbered 0 .. n - 1 */
		for (i = inner_begin; i < inner_end; i++)
		{
			if ((anull != NULL && anull[i]) || (bnull != NULL && bnull[i]))
				continue;
			dom->first_keys[n] = gj_order_key(input->inner.values[ca->inner_col][i], ca->cls);
			second_keys[n] = gj_order_key(input->inner.values[cb->inner_col][i], cb->cls);
			order[n] = (uint32_t) n;
			n++;
		}
		dom->nrows = n;

		/* dense ranks of the second keys */
		dom_sort(second_keys, order, n, tmp_keys, tmp_values);
		for (i = 0; i < n; i++)
		{
			if (i == 0 || second_keys[i] != second_keys[i - 1])
				dom->distinct[dom->ndistinct++] = second_keys[i];
			rank_of[order[i]] = (uint32_t) (dom->ndistinct - 1);
		}

		/* the rows in order of their first keys, with their ranks */
		for (i = 0; i < n; i++)
			order[i] = (uint32_t) i;
		dom_sort(dom->first_keys, order, n, tmp_keys, tmp_values);
		for (i = 0; i < n; i++)
			dom->second_ranks[i] = rank_of[order[i]];
	}
	free(second_keys);
	free(tmp_keys);
	free(order);
	free(tmp_values);
	free(rank_of);
	if (!ok)
	{
		gj_dominance_free(dom);
		return NULL;
	}
	return dom;
}

/* ---------------------------------------------------------------------
 * Counting
 * ---------------------------------------------------------------------
 */

/* Fenwick tree over ranks 0 .. size - 1 (tree[1 .. size]). */
static inline void
dom_tree_add(uint32_t *tree, int64_t size, uint32_t rank)
{
	int64_t		i;

	for (i = (int64_t) rank + 1; i <= size; i += i & -i)
		tree[i]++;
}

/* Admitted rows of rank < k. */
static inline uint64_t
dom_tree_prefix(const uint32_t *tree, int64_t k)
{
	uint64_t	sum = 0;

	for (; k > 0; k -= k & -k)
		sum += tree[k];
	return sum;
}

/*
 * For each valid outer row (second key in keys[], by row number in
 * values[]): the rank bound its second compare asks the tree for, the
 * number of distinct inner keys below (> and <=) or up to (>= and <) its
 * key.  keys are sorted here, so one merge with the distinct keys finds
 * them all.
 */
static void
dom_second_bounds(const GjDominance *dom, int64_t *keys, uint32_t *values, int64_t n,
				  int64_t *tmp_keys, uint32_t *tmp_values, uint32_t *bound)
{
	int			op = dom->conj.cmp[1].op;
	bool		upto = (op == GJOP_LT || op == GJOP_GE);	/* count keys <= x */
	int64_t		k = 0,
				i;

	dom_sort(keys, values, n, tmp_keys, tmp_values);
	for (i = 0; i < n; i++)
	{
		while (k < dom->ndistinct &&
			   (upto ? dom->distinct[k] <= keys[i] : dom->distinct[k] < keys[i]))
			k++;
		bound[values[i]] = (uint32_t) k;
	}
}

/*
 * counts[o - o_begin] as gj_cpu_rowcount_conjunction gives them, in
 * O((n + m) log m): sort the outer rows on their first key, sweep, insert
 * inner rows into a Fenwick tree over the second key's ranks as the first
 * compare admits them, query with the second compare.  false when out of
 * memory.
 *
 * Each call costs O(m log m) beyond its outer rows (every inner row enters
 * the tree once), so give it all the outer rows of a tile at once.
 */
bool
gj_dominance_count(GjDominance *dom, const GjJoinInput *input, int64_t o_begin,
				   int64_t o_end, uint64_t *counts)
{
	const GjSimpleCompare *ca = &dom->conj.cmp[0];
	const GjSimpleCompare *cb = &dom->conj.cmp[1];
	const uint8_t *anull = input->outer.isnull[ca->outer_col];
	const uint8_t *bnull = input->outer.isnull[cb->outer_col];
	int64_t		rows = gj_max64(o_end - o_begin, 0);
	size_t		r1 = (size_t) gj_max64(rows, 1);
	int64_t    *keys = NULL;
	int64_t    *tmp_keys = NULL;
	uint32_t   *values = NULL;
	uint32_t   *tmp_values = NULL;
	uint32_t   *bound = NULL;
	uint32_t   *tree = NULL;
	bool		ascending = (ca->op == GJOP_GT || ca->op == GJOP_GE);
	bool		strict = (ca->op == GJOP_GT || ca->op == GJOP_LT);
	bool		complement = (cb->op == GJOP_LT || cb->op == GJOP_LE);
	int64_t		n = 0,
				admitted = 0,
				i;
	bool		ok;

	if (rows > 0)
		memset(counts, 0, sizeof(uint64_t) * rows);
	if (rows == 0 || dom->nrows == 0)
		return true;
	keys = malloc(sizeof(int64_t) * r1);
	tmp_keys = malloc(sizeof(int64_t) * r1);
	values = malloc(sizeof(uint32_t) * r1);
	tmp_values = malloc(sizeof(uint32_t) * r1);
	bound = malloc(sizeof(uint32_t) * r1);
	tree = calloc(dom->ndistinct + 1, sizeof(uint32_t));
	ok = keys != NULL && tmp_keys != NULL && values != NULL && tmp_values != NULL &&
		bound != NULL && tree != NULL;
	if (ok)
	{
		/* the outer rows with both keys: their second compares' bounds */
		for (i = 0; i < rows; i++)
		{
			int64_t		o = o_begin + i;

			if ((anull != NULL && anull[o]) || (bnull != NULL && bnull[o]))
				continue;
			keys[n] = gj_order_key(input->outer.values[cb->outer_col][o], cb->cls);
			values[n] = (uint32_t) i;
			n++;
		}
		dom_second_bounds(dom, keys, values, n, tmp_keys, tmp_values, bound);

		/* then in order of their first keys */
		for (i = 0; i < n; i++)
			keys[i] = gj_order_key(input->outer.values[ca->outer_col][o_begin + values[i]],
								   ca->cls);
		dom_sort(keys, values, n, tmp_keys, tmp_values);

		for (i = 0; i < n; i++)
		{
			/* ascending: inner keys below x (or up to it) enter first */
			int64_t		j = ascending ? i : n - 1 - i;
			int64_t		x = keys[j];
			uint32_t	row = values[j];
			uint64_t	below;

			if (ascending)
			{
				while (admitted < dom->nrows &&
					   (strict ? dom->first_keys[admitted] < x :
						dom->first_keys[admitted] <= x))
				{
					dom_tree_add(tree, dom->ndistinct, dom->second_ranks[admitted]);
					admitted++;
				}
			}
			else
			{
				while (admitted < dom->nrows &&
					   (strict ? dom->first_keys[dom->nrows - 1 - admitted] > x :
						dom->first_keys[dom->nrows - 1 - admitted] >= x))
				{
					dom_tree_add(tree, dom->ndistinct,
								 dom->second_ranks[dom->nrows - 1 - admitted]);
					admitted++;
				}
			}
			below = dom_tree_prefix(tree, bound[row]);
			counts[row] = complement ? (uint64_t) admitted - below : below;
		}
	}
	free(keys);
	free(tmp_keys);
	free(values);
	free(tmp_values);
	free(bound);
	free(tree);
	return ok;
}

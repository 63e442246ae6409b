/*-------------------------------------------------------------------------
 *
 * cpu_program_count.c
 *	  Per outer row, the number of inner rows of a nested-loop tile for
 *	  which the device program is TRUE, and the number of pairs the host
 *	  must recheck, without writing a pair: the row-count path of the
 *	  aggregate step for any program (cpu_rowcount.c counts the programs
 *	  that are compare conjunctions, faster).
 *
 * The program's leading simple compares (gj_program_leading_compares) are
 * tested first, on the order keys of an inner block converted once, and
 * the interpreter runs the rest of the program only for the pairs that
 * pass them: for "r.x < s.x AND r.y > s.y AND r.x + s.y > 0", the last qual
 * for a quarter of the pairs on random data.
 * cuda_program_count.cu counts the same way on the device.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

/*
 * Inner rows converted at a time: 2048 rows of up to four int64 keys
 * (64 kB at most, 32 kB for the usual two) stay in the level-2 cache while
 * every outer row of the call passes over them.
 */
#define PC_BLOCK_ROWS	2048

/* mask[i] &= (x OP keys[i]) over the block: one loop per operator, vectorised */
#define PC_AND_LOOP(OP) \
	for (i = 0; i < nrows; i++) \
		mask[i] &= (uint8_t) (x OP keys[i])

static void
pc_and_compare(int op, int64_t x, const int64_t *keys, uint8_t *mask, int nrows)
{
	int			i;

	switch (op)
	{
		case GJOP_EQ:
			PC_AND_LOOP(==);
			break;
		case GJOP_NE:
			PC_AND_LOOP(!=);
			break;
		case GJOP_LT:
			PC_AND_LOOP(<);
			break;
		case GJOP_LE:
			PC_AND_LOOP(<=);
			break;
		case GJOP_GT:
			PC_AND_LOOP(>);
			break;
		default:
			PC_AND_LOOP(>=);
			break;
	}
}

/*
 * The inner rows of a block that pass the leading compares for outer keys
 * x, as offsets into pass[]; returns how many.  keys[k] holds the block's
 * order keys of compare k, alive[] is 0 for its rows with a NULL key.
 */
static int
pc_prefilter(const GjCompareConjunction *conj, const int64_t *x, int64_t *const *keys,
			 const uint8_t *alive, int nrows, uint8_t *mask, int *pass)
{
	int			n = 0;
	int			i,
				k;

	memcpy(mask, alive, nrows);
	for (k = 0; k < conj->n; k++)
		pc_and_compare(conj->cmp[k].op, x[k], keys[k], mask, nrows);
	for (i = 0; i < nrows; i++)
	{
		pass[n] = i;
		n += mask[i];
	}
	return n;
}

/*
 * Count, for outer rows [o_begin, o_end), the inner rows of the tile for
 * which the program is TRUE into counts[o - o_begin], and add the pairs it
 * cannot decide (GJ_RESULT_RECHECK) to *host_pairs.  False when out of
 * memory.
 */
bool
gj_cpu_program_count(const GjJoinInput *input, const GjTile *tile, int64_t o_begin,
					 int64_t o_end, uint64_t *counts, uint64_t *host_pairs)
{
	GjLeadingCompares lead;
	const GjCompareConjunction *conj = &lead.conj;
	int64_t    *keys[GJ_MAX_CONJUNCTS];
	uint8_t    *alive = malloc(PC_BLOCK_ROWS);
	uint8_t    *mask = malloc(PC_BLOCK_ROWS);
	int		   *pass = malloc(sizeof(int) * PC_BLOCK_ROWS);
	bool		ok = alive != NULL && mask != NULL && pass != NULL;
	int64_t		ib,
				o;
	int			k;

	gj_program_leading_compares(input->instrs, input->ninstrs, &lead);
	for (k = 0; k < conj->n; k++)
	{
		keys[k] = malloc(sizeof(int64_t) * PC_BLOCK_ROWS);
		ok = ok && keys[k] != NULL;
	}
	memset(counts, 0, sizeof(uint64_t) * (o_end - o_begin));
	for (ib = tile->inner_begin; ok && ib < tile->inner_end; ib += PC_BLOCK_ROWS)
	{
		int			nrows = (int) (tile->inner_end - ib < PC_BLOCK_ROWS ?
								   tile->inner_end - ib : PC_BLOCK_ROWS);
		int			i;

		memset(alive, 1, nrows);
		for (k = 0; k < conj->n; k++)
		{
			const GjSimpleCompare *sc = &conj->cmp[k];

			for (i = 0; i < nrows; i++)
			{
				if (!gj_column_key(&input->inner, sc->inner_col, sc->cls, ib + i, &keys[k][i]))
					alive[i] = 0;
			}
		}
		for (o = o_begin; o < o_end; o++)
		{
			int64_t		x[GJ_MAX_CONJUNCTS];
			uint64_t	hits = 0;
			int			npass;
			int			p;

			/* a NULL outer key fails its compare for every inner row */
			for (k = 0; k < conj->n; k++)
			{
				if (!gj_column_key(&input->outer, conj->cmp[k].outer_col, conj->cmp[k].cls, o,
								   &x[k]))
					break;
			}
			if (k < conj->n)
				continue;
			npass = pc_prefilter(conj, x, keys, alive, nrows, mask, pass);
			for (p = 0; p < npass; p++)
			{
				int			r = gj_program_eval_from(input->instrs, input->ninstrs, &lead,
													 &input->outer, o, &input->inner,
													 ib + pass[p]);

				hits += r == GJ_RESULT_TRUE;
				*host_pairs += r == GJ_RESULT_RECHECK;
			}
			counts[o - o_begin] += hits;
		}
	}
	for (k = 0; k < conj->n; k++)
		free(keys[k]);
	free(alive);
	free(mask);
	free(pass);
	return ok;
}

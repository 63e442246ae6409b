/*-------------------------------------------------------------------------
 *
 * cpu_program_count.c
 *	  The prefilter of a nested-loop program's leading compares, and with
 *	  it, per outer row, the number of inner rows of a tile for which the
 *	  program is TRUE and the number of pairs the host must recheck,
 *	  without writing a pair: the row-count path of the aggregate step for
 *	  any program (cpu_rowcount.c counts the programs that are compare
 *	  conjunctions, faster).  The general nested loop (cpu_nestloop.c)
 *	  prefilters the same way.
 *
 * The program's leading simple compares (gj_program_leading_compares) are
 * tested first, on the order keys of an inner block converted once
 * (GjCpuPrefilter), and
 * the interpreter runs the rest of the program only for the pairs that
 * pass them: for "r.x < s.x AND r.y > s.y AND r.x + s.y > 0", the last qual
 * for a quarter of the pairs on random data.  Where the rest is an AND of
 * integer compares over columns and their sums, cpu_affine.c evaluates it
 * instead (gj_cpu_prefilter_eval): that program's count over 20k x 20k
 * rows, kernel_test bench-program-count on the 2-core machine, 746 ms
 * interpreted, 475 ms.
 * cuda_program_count.cu counts the same way on the device.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

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
 * Set up the prefilter of the join's program (its leading compares, none
 * where it has none) with room for a block of CPU_INNER_BLOCK_ROWS rows;
 * false, with nothing held, when out of memory.
 */
bool
gj_cpu_prefilter_init(GjCpuPrefilter *pf, const GjJoinInput *input)
{
	bool		ok;
	int			k;

	memset(pf, 0, sizeof(GjCpuPrefilter));
	gj_program_leading_compares(input->instrs, input->ninstrs, &pf->lead);
	gj_cpu_affine_init(&pf->rest, input->instrs, input->ninstrs, pf->lead.pc, pf->lead.depth);
	pf->alive = malloc(CPU_INNER_BLOCK_ROWS);
	pf->mask = malloc(CPU_INNER_BLOCK_ROWS);
	pf->pass = malloc(sizeof(int) * CPU_INNER_BLOCK_ROWS);
	ok = pf->alive != NULL && pf->mask != NULL && pf->pass != NULL;
	for (k = 0; k < pf->lead.conj.n; k++)
	{
		pf->keys[k] = malloc(sizeof(int64_t) * CPU_INNER_BLOCK_ROWS);
		ok = ok && pf->keys[k] != NULL;
	}
	if (!ok)
		gj_cpu_prefilter_free(pf);
	return ok;
}

void
gj_cpu_prefilter_free(GjCpuPrefilter *pf)
{
	int			k;

	for (k = 0; k < GJ_MAX_CONJUNCTS; k++)
		free(pf->keys[k]);
	free(pf->alive);
	free(pf->mask);
	free(pf->pass);
	memset(pf, 0, sizeof(GjCpuPrefilter));
}

/*
 * Take the inner rows [ib, ib + nrows) as the block (nrows at most
 * CPU_INNER_BLOCK_ROWS): their order keys of each compare, and which have
 * no NULL among them.
 */
void
gj_cpu_prefilter_block(GjCpuPrefilter *pf, const GjJoinInput *input, int64_t ib, int nrows)
{
	int			i,
				k;

	pf->nrows = nrows;
	memset(pf->alive, 1, nrows);
	for (k = 0; k < pf->lead.conj.n; k++)
	{
		const GjSimpleCompare *sc = &pf->lead.conj.cmp[k];

		for (i = 0; i < nrows; i++)
		{
			if (!gj_column_key(&input->inner, sc->inner_col, sc->cls, ib + i, &pf->keys[k][i]))
				pf->alive[i] = 0;
		}
	}
}

/*
 * The block's rows that pass the leading compares with outer row o, as
 * offsets into pf->pass; returns how many (none when a compared outer key
 * is NULL).
 */
int
gj_cpu_prefilter_row(GjCpuPrefilter *pf, const GjJoinInput *input, int64_t o)
{
	const GjCompareConjunction *conj = &pf->lead.conj;
	int			n = 0;
	int			i,
				k;

	memcpy(pf->mask, pf->alive, pf->nrows);
	for (k = 0; k < conj->n; k++)
	{
		int64_t		x;

		if (!gj_column_key(&input->outer, conj->cmp[k].outer_col, conj->cmp[k].cls, o, &x))
			return 0;
		pc_and_compare(conj->cmp[k].op, x, pf->keys[k], pf->mask, pf->nrows);
	}
	for (i = 0; i < pf->nrows; i++)
	{
		pf->pass[n] = i;
		n += pf->mask[i];
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
	GjCpuPrefilter pf;
	int64_t		ib,
				o;

	if (!gj_cpu_prefilter_init(&pf, input))
		return false;
	memset(counts, 0, sizeof(uint64_t) * (o_end - o_begin));
	for (ib = tile->inner_begin; ib < tile->inner_end; ib += CPU_INNER_BLOCK_ROWS)
	{
		gj_cpu_prefilter_block(&pf, input, ib,
							   (int) (tile->inner_end - ib < CPU_INNER_BLOCK_ROWS ?
									  tile->inner_end - ib : CPU_INNER_BLOCK_ROWS));
		for (o = o_begin; o < o_end; o++)
		{
			int			npass = gj_cpu_prefilter_row(&pf, input, o);
			uint64_t	hits = 0;
			int			p;

			for (p = 0; p < npass; p++)
			{
				int			r = gj_cpu_prefilter_eval(&pf, input, o, ib + pf.pass[p]);

				hits += r == GJ_RESULT_TRUE;
				*host_pairs += r == GJ_RESULT_RECHECK;
			}
			counts[o - o_begin] += hits;
		}
	}
	gj_cpu_prefilter_free(&pf);
	return true;
}

/*-------------------------------------------------------------------------
 *
 * cpu_nestloop.c
 *	  The cpu backend's nested loops over one step of a tile: a specialised
 *	  loop for "outer column OP inner column", and the device program per
 *	  pair for everything else.
 *
 * Both are cache-blocked over the inner tile (CPU_INNER_BLOCK_ROWS) and write
 * every candidate into the match buffer unconditionally, keeping it by
 * advancing the count only on a match, so the inner loop has no branch.
 * gj_cpu_run_step (cpu_backend.c) has sized the step so that its matches
 * fit the buffer.
 *
 *-------------------------------------------------------------------------
 */
#include "cpu_internal.h"

/*
 * The specialised nested loop for "outer.col OP inner.col": one loop per
 * operator so that the compare is a single instruction in the inner loop,
 * and the match is written unconditionally and kept by advancing the count
 * only on a hit.
 */
#define CPU_COMPARE_LOOP(COND) \
	for (ib = tile->inner_begin; ib < tile->inner_end; ib += CPU_INNER_BLOCK_ROWS) \
	{ \
		int64_t		ie = ib + CPU_INNER_BLOCK_ROWS < tile->inner_end ? \
			ib + CPU_INNER_BLOCK_ROWS : tile->inner_end; \
		for (o = o_begin; o < o_end; o++) \
		{ \
			int64_t		x; \
			if (onull && onull[o]) \
				continue; \
			x = gj_order_key(ovals[o], cls); \
			for (i = ib; i < ie; i++) \
			{ \
				int64_t		y = gj_order_key(ivals[i], cls); \
				bool		hit = (COND) && !(inull && inull[i]); \
				out_o[n] = (uint32_t) o; \
				out_i[n] = (uint32_t) i; \
				n += hit; \
			} \
		} \
	}

int64_t
gj_cpu_nestloop_compare(CpuJoinState *state, const GjTile *tile,
						int64_t o_begin, int64_t o_end)
{
	const GjSimpleCompare *sc = &state->compare;
	const int64_t *ovals = state->input.outer.values[sc->outer_col];
	const uint8_t *onull = state->input.outer.isnull[sc->outer_col];
	const int64_t *ivals = state->input.inner.values[sc->inner_col];
	const uint8_t *inull = state->input.inner.isnull[sc->inner_col];
	int			cls = sc->cls;
	uint32_t   *out_o = state->outer_rows;
	uint32_t   *out_i = state->inner_rows;
	int64_t		n = 0;
	int64_t		ib,
				o,
				i;

	switch (sc->op)
	{
		case GJOP_EQ:
			CPU_COMPARE_LOOP(x == y);
			break;
		case GJOP_NE:
			CPU_COMPARE_LOOP(x != y);
			break;
		case GJOP_LT:
			CPU_COMPARE_LOOP(x < y);
			break;
		case GJOP_LE:
			CPU_COMPARE_LOOP(x <= y);
			break;
		case GJOP_GT:
			CPU_COMPARE_LOOP(x > y);
			break;
		default:
			CPU_COMPARE_LOOP(x >= y);
			break;
	}
	return n;
}

/*
 * The general nested loop: the device program per pair, after the
 * prefilter of its leading compares (cpu_program_count.c), so that a pair
 * that fails one is not evaluated, nor sent to the host for a recheck, as
 * on the cuda backend.  Out of memory for the prefilter, every pair runs
 * through the whole program: slower, the same matches, and more pairs for
 * the host to drop.
 */
int64_t
gj_cpu_nestloop_program(CpuJoinState *state, const GjTile *tile,
						int64_t o_begin, int64_t o_end)
{
	const GjJoinInput *in = &state->input;
	uint32_t   *out_o = state->outer_rows;
	uint32_t   *out_i = state->inner_rows;
	GjCpuPrefilter pf;
	bool		prefilter = gj_cpu_prefilter_init(&pf, in);
	int64_t		n = 0;
	int64_t		ib,
				o,
				i;

	for (ib = tile->inner_begin; ib < tile->inner_end; ib += CPU_INNER_BLOCK_ROWS)
	{
		int64_t		ie = ib + CPU_INNER_BLOCK_ROWS < tile->inner_end ?
			ib + CPU_INNER_BLOCK_ROWS : tile->inner_end;

		if (prefilter)
			gj_cpu_prefilter_block(&pf, in, ib, (int) (ie - ib));
		for (o = o_begin; o < o_end; o++)
		{
			if (prefilter)
			{
				int			npass = gj_cpu_prefilter_row(&pf, in, o);
				int			p;

				for (p = 0; p < npass; p++)
				{
					int			r = gj_cpu_prefilter_eval(&pf, in, o, ib + pf.pass[p]);

					out_o[n] = (uint32_t) o | (r == GJ_RESULT_RECHECK ? GJ_PAIR_RECHECK : 0);
					out_i[n] = (uint32_t) (ib + pf.pass[p]);
					n += (r != GJ_RESULT_FALSE);
				}
				continue;
			}
			for (i = ib; i < ie; i++)
			{
				int			r = gj_program_eval(in->instrs, in->ninstrs,
												&in->outer, o, &in->inner, i);

				out_o[n] = (uint32_t) o | (r == GJ_RESULT_RECHECK ? GJ_PAIR_RECHECK : 0);
				out_i[n] = (uint32_t) i;
				n += (r != GJ_RESULT_FALSE);
			}
		}
	}
	if (prefilter)
		gj_cpu_prefilter_free(&pf);
	return n;
}

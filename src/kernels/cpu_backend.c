/*-------------------------------------------------------------------------
 *
 * cpu_backend.c
 *	  The cpu backend: the tile algorithms of GpuJoin in plain C.
 *
 * It runs exactly the schedule the cuda backend runs (same tiles, same steps,
 * same match-buffer contract, see backend.h), so it is the reference for the
 * cuda backend and the backend CI tests.  It is also meant to be fast on its
 * own: the nested loop is cache-blocked over the inner tile and writes
 * matches branch-free, and the common "outer column OP inner column" shape
 * runs as integer compares without the interpreter.
 *
 * Plain C without PostgreSQL headers (see backend.h): memory comes from
 * malloc and is released by end_join, which the executor calls from a memory
 * context callback, so it is also released on ERROR.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "backend.h"

/*
 * Inner rows per cache block: 2048 rows of one 8-byte key plus null flags
 * stay well inside L1/L2 while every outer row of the step passes over them.
 */
#define CPU_INNER_BLOCK_ROWS	2048

/*
 * Work per step, in pairs.  About 10-20 ms for the specialised compare loop
 * and well under a second for the interpreter, so that cancel and
 * statement_timeout are honoured promptly between steps.
 */
#define CPU_PAIRS_PER_STEP		((int64_t) 1 << 24)

typedef struct CpuJoinState
{
	GjJoinInput input;
	GjInstr		instrs[GJ_MAX_INSTRS];
	bool		simple;			/* program is one outer/inner compare */
	GjSimpleCompare compare;
	int64_t		capacity;
	uint32_t   *outer_rows;
	uint32_t   *inner_rows;
} CpuJoinState;

static void *
cpu_begin_join(const GjJoinInput *input, GjError *err)
{
	CpuJoinState *state = calloc(1, sizeof(CpuJoinState));

	if (state == NULL)
		goto oom;
	state->input = *input;
	memcpy(state->instrs, input->instrs, sizeof(GjInstr) * input->ninstrs);
	state->input.instrs = state->instrs;
	state->simple = gj_program_simple_compare(state->instrs, input->ninstrs,
											  &state->compare);
	state->capacity = input->match_capacity > 0 ? input->match_capacity : 1;
	state->outer_rows = malloc(sizeof(uint32_t) * state->capacity);
	state->inner_rows = malloc(sizeof(uint32_t) * state->capacity);
	if (state->outer_rows == NULL || state->inner_rows == NULL)
	{
		free(state->outer_rows);
		free(state->inner_rows);
		free(state);
		goto oom;
	}
	return state;

oom:
	err->code = GJ_ERR_OUT_OF_MEMORY;
	snprintf(err->message, sizeof(err->message),
			 "could not allocate a match buffer of %lld pairs",
			 (long long) input->match_capacity);
	return NULL;
}

static void
cpu_end_join(void *arg)
{
	CpuJoinState *state = arg;

	if (state == NULL)
		return;
	free(state->outer_rows);
	free(state->inner_rows);
	free(state);
}

/* Comparable int64 of one key value: ints as they are, floats ordered. */
static inline int64_t
cpu_order_key(const int64_t *values, int cls, int64_t row)
{
	return cls == GJ_CLASS_FLOAT ? gj_float_order_key(gj_bits_to_double(values[row]))
		: values[row];
}

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
			x = cpu_order_key(ovals, cls, o); \
			for (i = ib; i < ie; i++) \
			{ \
				int64_t		y = cpu_order_key(ivals, cls, i); \
				bool		hit = (COND) && !(inull && inull[i]); \
				out_o[n] = (uint32_t) o; \
				out_i[n] = (uint32_t) i; \
				n += hit; \
			} \
		} \
	}

static int64_t
cpu_nestloop_compare(CpuJoinState *state, const GjTile *tile,
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

/* The general nested loop: the device program per pair. */
static int64_t
cpu_nestloop_program(CpuJoinState *state, const GjTile *tile,
					 int64_t o_begin, int64_t o_end)
{
	const GjJoinInput *in = &state->input;
	uint32_t   *out_o = state->outer_rows;
	uint32_t   *out_i = state->inner_rows;
	int64_t		n = 0;
	int64_t		ib,
				o,
				i;

	for (ib = tile->inner_begin; ib < tile->inner_end; ib += CPU_INNER_BLOCK_ROWS)
	{
		int64_t		ie = ib + CPU_INNER_BLOCK_ROWS < tile->inner_end ?
			ib + CPU_INNER_BLOCK_ROWS : tile->inner_end;

		for (o = o_begin; o < o_end; o++)
		{
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
	return n;
}

static bool
cpu_run_step(void *arg, const GjTile *tile, int64_t *outer_next,
			 GjMatches *matches, GjStats *stats, GjError *err)
{
	CpuJoinState *state = arg;
	int64_t		inner_rows = tile->inner_end - tile->inner_begin;
	int64_t		o_begin = *outer_next;
	int64_t		rows_fit,
				rows_work,
				o_end,
				n;

	/*
	 * Take as many outer rows as surely fit the match buffer (each can match
	 * every inner row of the tile) and as the work bound allows.
	 */
	if (inner_rows <= 0)
	{
		*outer_next = tile->outer_end;
		matches->count = 0;
		return true;
	}
	if (state->capacity < inner_rows)
	{
		err->code = GJ_ERR_DEVICE;
		snprintf(err->message, sizeof(err->message),
				 "match buffer of %lld pairs is smaller than an inner tile of %lld rows",
				 (long long) state->capacity, (long long) inner_rows);
		return false;
	}
	rows_fit = state->capacity / inner_rows;
	rows_work = CPU_PAIRS_PER_STEP / inner_rows;
	if (rows_work < 1)
		rows_work = 1;
	if (rows_fit > rows_work)
		rows_fit = rows_work;
	o_end = o_begin + rows_fit < tile->outer_end ? o_begin + rows_fit : tile->outer_end;

	if (state->simple)
		n = cpu_nestloop_compare(state, tile, o_begin, o_end);
	else
		n = cpu_nestloop_program(state, tile, o_begin, o_end);

	stats->pairs_evaluated += (o_end - o_begin) * inner_rows;
	stats->device_matches += n;
	matches->outer_rows = state->outer_rows;
	matches->inner_rows = state->inner_rows;
	matches->count = n;
	*outer_next = o_end;
	return true;
}

const GjBackend gj_cpu_backend = {
	.name = "cpu",
	.begin_join = cpu_begin_join,
	.run_step = cpu_run_step,
	.end_join = cpu_end_join,
};

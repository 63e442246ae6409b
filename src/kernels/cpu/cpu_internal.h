/*-------------------------------------------------------------------------
 *
 * cpu_internal.h
 *	  Private to the cpu backend (the .c files of src/kernels/cpu): the join
 *	  state, the tuning constants, and the functions one file of the backend
 *	  calls in another.
 *
 * The backend is split by concern: cpu_backend.c (the GjBackend table,
 * beginning and ending a join, the double buffer), cpu_step.c (run_step),
 * cpu_nestloop.c (the nested loops), cpu_sorted.c (sort-merge/range and
 * hash: sorting both sides, tile pruning and the sorted step), cpu_agg.c
 * (the aggregate fast path) and cpu_page_decode.c (heap pages decoded in
 * batches, as the cuda backend does on the device).  The keys, hashes and
 * bounds that order a sorted join's rows are ../shared/gj_keys.h, which the
 * cuda backend compiles too.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_CPU_INTERNAL_H
#define GPUJOIN_CPU_INTERNAL_H

#include "kernels/backend.h"
#include "kernels/agg_reduce.h"
#include "kernels/shared/agg_runs.h"
#include "kernels/shared/gj_keys.h"
#include "cpu_dominance.h"

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

/*
 * Pairs a step of the aggregate row counts compares (cpu_rowcount.c): the
 * blocked count loop runs a few times faster than the nested loop that
 * writes matches (3.5e10 int4 pairs/s on one core of the development
 * machine), and each call first converts the whole inner tile, so a step
 * takes many outer rows (about 8 ms).
 */
#define CPU_COUNT_PAIRS_PER_STEP	((int64_t) 1 << 28)

/*
 * Matches a step of the sorted algorithms returns (unless one outer row has
 * more): 512 kB of match buffer, which stays in the cache while the
 * executor reads it back, and whose pages the next step reuses instead of
 * faulting in fresh ones.
 */
#define CPU_MATCHES_PER_STEP	((int64_t) 1 << 16)

/* Outer rows of a step for the sorted algorithms (bounds binary searches). */
#define CPU_OUTER_ROWS_PER_STEP	((int64_t) 1 << 20)

/*
 * Sorting the 64-bit key hashes of a hash join (cpu_hash_sort): one counting
 * pass on the top bits puts every row in its bucket, about one row a bucket,
 * so at most 2^22 buckets (16 MB of bucket starts); a bucket of more rows
 * than CPU_HASH_BUCKET_INSERTION (many rows of one key, or a collision of
 * hot keys) is radix sorted instead of insertion sorted.
 */
#define CPU_HASH_MAX_BUCKET_BITS	22
#define CPU_HASH_BUCKET_INSERTION	32

/*
 * A hash join fetches the inner buckets of the outer keys this many outer
 * positions ahead into the cache (measured on the 2-core development
 * machine, 333k outer x 100k inner rows in row order: the steps took 9.7 ms
 * without the prefetch, 7.4 ms with it; fetching the inner key values a
 * third level ahead gained nothing).
 */
#define CPU_PROBE_PREFETCH_DISTANCE	16

#if defined(__GNUC__) || defined(__clang__)
#define cpu_prefetch(addr)		__builtin_prefetch(addr)
#else
#define cpu_prefetch(addr)		((void) 0)
#endif

/*
 * cpu_affine.c: a program (or the rest of one after its leading compares)
 * that is an AND of integer compares, each operand a column, a constant, or
 * the sum or difference of two of them in int2, int4 or int8
 * (gj_cpu_affine_init); gj_cpu_affine_eval gives the interpreter's answer
 * for a pair with a few loads.
 */
#define GJ_CPU_AFFINE_MAX_TERMS		8

typedef enum GjCpuAffineKind
{
	GJ_AFFINE_COLUMN = 0,
	GJ_AFFINE_CONST,
	GJ_AFFINE_ARITH
} GjCpuAffineKind;

typedef struct GjCpuAffineValue
{
	bool		is_const;
	bool		outer;			/* else inner; columns only */
	int			col;
	int64_t		value;			/* constants only */
} GjCpuAffineValue;

typedef struct GjCpuAffineOperand
{
	int			kind;			/* GjCpuAffineKind */
	int			op;				/* GJ_AFFINE_ARITH: GJOP_ADD or GJOP_SUB */
	int			type;			/* GJ_AFFINE_ARITH: its GjType, an integer */
	GjCpuAffineValue a;
	GjCpuAffineValue b;			/* GJ_AFFINE_ARITH: a op b */
} GjCpuAffineOperand;

typedef struct GjCpuAffineTerm
{
	int			op;				/* GJOP_EQ .. GJOP_GE: left op right */
	GjCpuAffineOperand left;
	GjCpuAffineOperand right;
} GjCpuAffineTerm;

typedef struct GjCpuAffine
{
	bool		valid;
	int			nterms;
	GjCpuAffineTerm terms[GJ_CPU_AFFINE_MAX_TERMS];
} GjCpuAffine;

extern bool gj_cpu_affine_init(GjCpuAffine *aff, const GjInstr *instrs, int ninstrs,
							   int pc0, int depth0);

/* a column's value of the pair, or the constant; true where it is NULL */
static inline bool
gj_cpu_affine_value(const GjCpuAffineValue *v, const GjKeyColumns *outer, int64_t orow,
					const GjKeyColumns *inner, int64_t irow, int64_t *x)
{
	const GjKeyColumns *side;
	int64_t		row;

	if (v->is_const)
	{
		*x = v->value;
		return false;
	}
	side = v->outer ? outer : inner;
	row = v->outer ? orow : irow;
	*x = side->values[v->col][row];
	return side->isnull[v->col] != NULL && side->isnull[v->col][row];
}

/* an operand's value of the pair; false where the arithmetic fails */
static inline bool
gj_cpu_affine_operand(const GjCpuAffineOperand *op, const GjKeyColumns *outer, int64_t orow,
					  const GjKeyColumns *inner, int64_t irow, int64_t *x, bool *isnull)
{
	int64_t		a,
				b;
	bool		a_null = gj_cpu_affine_value(&op->a, outer, orow, inner, irow, &a);
	bool		b_null;

	if (op->kind != GJ_AFFINE_ARITH)
	{
		*x = a;
		*isnull = a_null;
		return true;
	}
	b_null = gj_cpu_affine_value(&op->b, outer, orow, inner, irow, &b);
	*isnull = a_null || b_null;
	if (*isnull)
		return true;
	return gj_int_arith(op->op, op->type, a, b, x);
}

/* the program's answer for the pair (GjResult), as gj_program_eval_from's */
static inline int
gj_cpu_affine_eval(const GjCpuAffine *aff, const GjKeyColumns *outer, int64_t orow,
				   const GjKeyColumns *inner, int64_t irow)
{
	bool		ok = true;
	bool		holds = true;
	int			k;

	for (k = 0; k < aff->nterms; k++)
	{
		const GjCpuAffineTerm *t = &aff->terms[k];
		int64_t		l = 0,
					r = 0;
		bool		l_null,
					r_null;

		ok &= gj_cpu_affine_operand(&t->left, outer, orow, inner, irow, &l, &l_null);
		ok &= gj_cpu_affine_operand(&t->right, outer, orow, inner, irow, &r, &r_null);
		holds &= !l_null && !r_null && gj_int_cmp_holds(t->op, l, r);
	}
	return !ok ? GJ_RESULT_RECHECK : holds ? GJ_RESULT_TRUE : GJ_RESULT_FALSE;
}

typedef struct CpuJoinState
{
	GjJoinInput input;
	GjInstr		instrs[GJ_MAX_INSTRS];
	bool		simple;			/* program is one outer/inner compare */
	GjSimpleCompare compare;

	/*
	 * Hash join whose program is the equality of its one integer-class key:
	 * the key hash is a bijection of the key there (see cpu_begin_join), so
	 * equal hashes are equal keys and a candidate needs no other test.
	 */
	bool		hash_is_key_equality;
	/* the program, where it is an AND of integer compares (cpu_affine.c) */
	GjCpuAffine affine;
	int64_t		capacity;
	uint32_t   *outer_rows;
	uint32_t   *inner_rows;

	/*
	 * Step overlap (cpu_double_buffer): the other match buffer, holding the
	 * previous step's matches while the executor emits them; run_step swaps
	 * the two.  NULL until the executor asks.
	 */
	uint32_t   *spare_outer_rows;
	uint32_t   *spare_inner_rows;

	/* sort-merge and hash: both sides in key order */
	uint32_t   *outer_perm;		/* position -> outer row */
	int64_t    *outer_lo;
	int64_t    *outer_hi;
	uint8_t    *outer_status;
	uint32_t   *inner_perm;		/* position -> inner row */
	int64_t    *inner_keys;		/* sorted; rows without a key at the end */
	int64_t		inner_valid;	/* positions [0, inner_valid) have keys */

	/*
	 * Hash join: inner positions [inner_bucket_start[b], inner_bucket_start[b
	 * + 1]) hold the keys whose top inner_bucket_bits bits (of the key with
	 * its sign flipped, as it sorts) are b, so an outer key's candidates are
	 * found in its bucket instead of by a binary search over every key.
	 */
	int			inner_bucket_bits;
	uint32_t   *inner_bucket_start;
	bool		inner_borrowed; /* the inner arrays are a prepare_inner's */
	int64_t		outer_nall;		/* positions [0, outer_nall) are GJ_OUTER_ALL */

	/*
	 * Hash join: the outer arrays are still indexed by row (outer_perm and
	 * outer_hi NULL), and whether they stay so for the whole join was
	 * decided at its first tile (gj_cpu_fix_outer_order).
	 */
	bool		outer_by_row;
	bool		outer_order_fixed;

	/* aggregate fast path: prefix arrays built at the first agg_step */
	GjAggRuns  *agg_runs;

	/*
	 * Aggregate steps that count each outer row's matches (cpu_agg.c): the
	 * counts of a step, and the dominance index of the current inner tile.
	 */
	uint64_t   *row_counts;
	int64_t		row_counts_cap;
	struct GjDominance *dominance;
	int64_t		dominance_inner_begin;
	int64_t		dominance_inner_end;

	/*
	 * Times of work outside a step (begin_join's sort, the outer rows
	 * sorted at tile pruning), for the next step's stats (backend.h).
	 */
	GjTimes		pending_times;
} CpuJoinState;

/* cpu_nestloop.c */
extern int64_t gj_cpu_nestloop_compare(CpuJoinState *state, const GjTile *tile,
									   int64_t o_begin, int64_t o_end);
extern int64_t gj_cpu_nestloop_program(CpuJoinState *state, const GjTile *tile,
									   int64_t o_begin, int64_t o_end);

/* cpu_sorted.c */
extern bool gj_cpu_prepare_sorted(CpuJoinState *state);

/*
 * The inner side of a sort-merge or hash join prepared once for several
 * joins (prepare_inner): the input it was prepared for and the arrays
 * begin_join would have built.
 */
typedef struct CpuPreparedInner
{
	GjJoinInput input;			/* the inner side and key spec it fits */
	uint32_t   *inner_perm;
	int64_t    *inner_keys;
	int64_t		inner_valid;
	int			inner_bucket_bits;
	uint32_t   *inner_bucket_start;
} CpuPreparedInner;

extern bool gj_cpu_prepare_inner_arrays(const GjJoinInput *in, CpuPreparedInner *out);

extern bool gj_cpu_fix_outer_order(CpuJoinState *state, const GjTile *tile);
extern bool gj_cpu_sorted_tile_can_match(CpuJoinState *state, const GjTile *tile);
extern int64_t gj_cpu_sorted_step(CpuJoinState *state, const GjTile *tile,
								  int64_t *outer_next, int64_t *pairs);

/* cpu_step.c */
extern bool gj_cpu_run_step(void *arg, const GjTile *tile, int64_t *outer_next,
							GjMatches *matches, GjStats *stats, GjError *err);

/* cpu_agg.c */
extern bool gj_cpu_agg_step(void *arg, const GjTile *tile, int64_t *outer_next,
							const GjAggSpec *spec, GjAggPartial *partial,
							GjMatches *matches, GjStats *stats, GjError *err);

/*
 * cpu_rowcount.c: per outer row, the inner rows of a nested-loop tile that
 * a conjunction of simple compares admits (for the aggregate steps).
 * counts[o - o_begin] = inner rows i in [tile->inner_begin,
 * tile->inner_end) for which every compare holds (rows are input row
 * numbers, as in a nested-loop tile).
 */
extern void gj_cpu_rowcount_conjunction(const GjJoinInput *input,
										const GjCompareConjunction *conj,
										const GjTile *tile, int64_t o_begin, int64_t o_end,
										uint64_t *counts);

/*
 * cpu_program_count.c: the prefilter of a program's leading compares
 * (gj_program_leading_compares) over blocks of CPU_INNER_BLOCK_ROWS inner
 * rows: _block converts a block's keys, _row gives the offsets in it of the
 * rows that pass with an outer row (in pass), which then need only the
 * rest of the program (gj_program_eval_from with lead).
 */
typedef struct GjCpuPrefilter
{
	GjLeadingCompares lead;
	GjCpuAffine rest;			/* the rest of the program, where it is one */
	int64_t    *keys[GJ_MAX_CONJUNCTS]; /* the block's order keys per compare */
	uint8_t    *alive;			/* the block's rows with no NULL key */
	uint8_t    *mask;
	int		   *pass;
	int			nrows;			/* the block's rows */
} GjCpuPrefilter;

extern bool gj_cpu_prefilter_init(GjCpuPrefilter *pf, const GjJoinInput *input);
extern void gj_cpu_prefilter_block(GjCpuPrefilter *pf, const GjJoinInput *input,
								   int64_t ib, int nrows);
extern int	gj_cpu_prefilter_row(GjCpuPrefilter *pf, const GjJoinInput *input, int64_t o);
extern void gj_cpu_prefilter_free(GjCpuPrefilter *pf);

/* the rest of the program for a pair that passed the leading compares */
static inline int
gj_cpu_prefilter_eval(const GjCpuPrefilter *pf, const GjJoinInput *input, int64_t o,
					  int64_t i)
{
	if (pf->rest.valid)
		return gj_cpu_affine_eval(&pf->rest, &input->outer, o, &input->inner, i);
	return gj_program_eval_from(input->instrs, input->ninstrs, &pf->lead, &input->outer, o,
								&input->inner, i);
}

/*
 * cpu_program_count.c: counts[o - o_begin] = inner rows of the tile for
 * which the device program is TRUE, for any program; the pairs it cannot
 * decide are added to *host_pairs.  False when out of host memory.
 */
extern bool gj_cpu_program_count(const GjJoinInput *input, const GjTile *tile,
								 int64_t o_begin, int64_t o_end, uint64_t *counts,
								 uint64_t *host_pairs);

/*
 * cpu_page_decode.c: batches of raw heap pages decoded on the host, the
 * counterpart of the cuda backend's CudaPageColumns (the same calls and
 * results; see cuda_page_decode.cu).
 */
typedef struct GjCpuPageColumns GjCpuPageColumns;
struct GjPageSpec;
struct GjPageBatch;

extern GjCpuPageColumns *gj_cpu_page_columns_begin(const struct GjPageSpec *spec,
												   int64_t rows_hint, GjError *err);
extern bool gj_cpu_page_columns_append(GjCpuPageColumns *pc, const uint8_t *pages,
									   int64_t npages, int64_t rows_bound, GjError *err);
extern bool gj_cpu_page_columns_wait(GjCpuPageColumns *pc, struct GjPageBatch *batch,
									 GjError *err);
extern int64_t gj_cpu_page_columns_rows(const GjCpuPageColumns *pc);
extern void gj_cpu_page_columns_column(const GjCpuPageColumns *pc, int k, const uint64_t **values,
									   const bool **isnull, const uint8_t **host);
extern void gj_cpu_page_columns_end(GjCpuPageColumns *pc);

#endif							/* GPUJOIN_CPU_INTERNAL_H */

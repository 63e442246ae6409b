/*-------------------------------------------------------------------------
 *
 * cpu_rowcount.c
 *	  Per outer row, the number of inner rows of a nested-loop tile it
 *	  matches, for a program that is an AND of simple compares
 *	  (gj_program_compare_conjunction): all an aggregate over the join needs
 *	  when it reads only outer columns (count(*), sums of outer columns,
 *	  GROUP BY outer columns).  No pair is written anywhere.
 *
 * Each compare becomes a test of one inner key against one threshold of
 * the outer row, direct or cyclic, on int64 or (where a block's keys allow)
 * int32 keys: ../shared/gj_conjunction.h says how, and the cuda backend
 * does the same.
 *
 * The inner tile is walked in blocks whose keys are converted once into a
 * small local array, rows with a NULL key left out.  Each outer row then
 * gets its thresholds for the block, and RC_ROWS outer rows at a time pass
 * over it in a branch-free loop that the compiler vectorises, thresholds
 * and counts in registers.  The block's rows are padded to a multiple of
 * RC_PAD_ROWS with the key no direct test admits; a cyclic row subtracts
 * the pad rows its intervals admit.
 *
 * The loops are compiled three times (x86-64 baseline, AVX2, AVX-512) and
 * the best the processor has is picked when the library is loaded (gcc's
 * target_clones): int64 compares do not vectorise at all on the SSE2
 * baseline, so that is where the clones pay most.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "kernels/shared/gj_conjunction.h"

/*
 * Keys of one inner block, over all its compares: 4096 int64 keys (32 kB)
 * stay in the level-1 data cache (48 kB on Zen 4/5 and Sapphire Rapids)
 * while every outer row of the call passes over them; the int32 copy takes
 * 16 kB more.
 */
#define RC_BLOCK_KEYS	4096

/*
 * Outer rows per pass over a block.  Each keeps one threshold per compare
 * and a count in registers, so every inner key loaded is compared RC_ROWS
 * times; 4 rows of 2 compares fit the 16 vector registers of AVX2.
 */
#define RC_ROWS			4

/*
 * Block rows are padded to a multiple of this: gcc -O2 vectorises a loop
 * only when no scalar remainder is needed, which it knows from a trip count
 * masked to a multiple of the widest vector (16 int32 keys) or more.
 */
#define RC_PAD_ROWS		32

/*
 * Outer rows whose keys are computed at a time when there is no memory for
 * all the call's: every piece converts the inner tile again.
 */
#define RC_OUTER_PIECE	256

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define RC_CLONES	__attribute__((target_clones("default", "avx2", "arch=x86-64-v4")))
#else
#define RC_CLONES
#endif

#if defined(__GNUC__)
#define RC_INLINE	static inline __attribute__((always_inline))
#else
#define RC_INLINE	static inline
#endif

/* How an outer row is counted against one block. */
typedef enum RcRowKind
{
	RC_DEAD,					/* matches nothing (a NULL key, an empty interval) */
	RC_DIRECT,
	RC_CYCLIC
} RcRowKind;

typedef struct RcCompare
{
	int			kind;			/* GJ_CONJ_GT .. GJ_CONJ_NE */
	bool		complement;		/* keys are ~order key */
	int			cls;
	const int64_t *ovals;
	const uint8_t *onull;
	const int64_t *ivals;
	const uint8_t *inull;
} RcCompare;

typedef struct RcSetup
{
	int			n;
	bool		ordered;		/* every compare is GJ_CONJ_GT or GJ_CONJ_GE */
	bool		inner_nulls;	/* an inner key column has NULLs */
	RcCompare	c[GJ_MAX_CONJUNCTS];
} RcSetup;

/* One inner block's keys: compare k's at [k * stride, k * stride + padded). */
typedef struct RcBlock
{
	int64_t		stride;
	int64_t		rows;			/* inner rows of the block without a NULL key */
	int64_t		padded;			/* rows rounded up to RC_PAD_ROWS */
	bool		narrow;			/* every key in (INT32_MIN, INT32_MAX): y32 */
	int64_t		y64[RC_BLOCK_KEYS];
	int32_t		y32[RC_BLOCK_KEYS];
} RcBlock;

/*
 * Outer rows waiting for a pass: direct thresholds in a, or cyclic bases in
 * a and widths in w (int32 values in a narrow block).
 */
typedef struct RcBatch
{
	int			nrows;
	int64_t		row[RC_ROWS];	/* index into counts */
	int64_t		a[RC_ROWS][GJ_MAX_CONJUNCTS];
	int64_t		w[RC_ROWS][GJ_MAX_CONJUNCTS];
} RcBatch;

/* ---------------------------------------------------------------------
 * The loops over one block
 *
 * Each body is inlined into a function of its own with a constant n (see
 * RC_VARIANT), so the compares beyond n fold away.
 * ---------------------------------------------------------------------
 */

#define RC_LOCALS(T) \
	T			a00 = (T) b->a[0][0], a01 = (T) b->a[0][1], a02 = (T) b->a[0][2], a03 = (T) b->a[0][3]; \
	T			a10 = (T) b->a[1][0], a11 = (T) b->a[1][1], a12 = (T) b->a[1][2], a13 = (T) b->a[1][3]; \
	T			a20 = (T) b->a[2][0], a21 = (T) b->a[2][1], a22 = (T) b->a[2][2], a23 = (T) b->a[2][3]; \
	T			a30 = (T) b->a[3][0], a31 = (T) b->a[3][1], a32 = (T) b->a[3][2], a33 = (T) b->a[3][3]

#define RC_WIDTHS(T) \
	T			w00 = (T) b->w[0][0], w01 = (T) b->w[0][1], w02 = (T) b->w[0][2], w03 = (T) b->w[0][3]; \
	T			w10 = (T) b->w[1][0], w11 = (T) b->w[1][1], w12 = (T) b->w[1][2], w13 = (T) b->w[1][3]; \
	T			w20 = (T) b->w[2][0], w21 = (T) b->w[2][1], w22 = (T) b->w[2][2], w23 = (T) b->w[2][3]; \
	T			w30 = (T) b->w[3][0], w31 = (T) b->w[3][1], w32 = (T) b->w[3][2], w33 = (T) b->w[3][3]

/* Does compare k of row r hold for inner key i?  (1 when k >= n.) */
#define RC_DIRECT_HOLDS(k, r) \
	((k) < n ? y##k[i] > a##r##k : 1)
#define RC_CYCLIC64(k, r) \
	((k) < n ? gj_conj_in64(y##k[i], a##r##k, w##r##k) : 1)
#define RC_CYCLIC32(k, r) \
	((k) < n ? gj_conj_in32(y##k[i], a##r##k, w##r##k) : 1)

#define RC_ALL(HOLDS, r) \
	(HOLDS(0, r) & HOLDS(1, r) & HOLDS(2, r) & HOLDS(3, r))

#define RC_COLUMNS(T, keys) \
	const T    *restrict y0 = (keys); \
	const T    *restrict y1 = (keys) + (n > 1 ? blk->stride : 0); \
	const T    *restrict y2 = (keys) + (n > 2 ? 2 * blk->stride : 0); \
	const T    *restrict y3 = (keys) + (n > 3 ? 3 * blk->stride : 0)

/* Direct compares over int64 keys. */
RC_INLINE void
rc_direct64_body(const RcBlock *blk, const int n, const RcBatch *b, uint64_t *counts)
{
	RC_COLUMNS(int64_t, blk->y64);
	RC_LOCALS(int64_t);
	int64_t		len = blk->padded & ~(int64_t) (RC_PAD_ROWS - 1);
	uint64_t	c0 = 0,
				c1 = 0,
				c2 = 0,
				c3 = 0;
	int64_t		i;

	for (i = 0; i < len; i++)
	{
		c0 += RC_ALL(RC_DIRECT_HOLDS, 0);
		c1 += RC_ALL(RC_DIRECT_HOLDS, 1);
		c2 += RC_ALL(RC_DIRECT_HOLDS, 2);
		c3 += RC_ALL(RC_DIRECT_HOLDS, 3);
	}
	counts[0] = c0;
	counts[1] = c1;
	counts[2] = c2;
	counts[3] = c3;
}

/* Direct compares over int32 keys (a block's count fits 32 bits). */
RC_INLINE void
rc_direct32_body(const RcBlock *blk, const int n, const RcBatch *b, uint64_t *counts)
{
	RC_COLUMNS(int32_t, blk->y32);
	RC_LOCALS(int32_t);
	int64_t		len = blk->padded & ~(int64_t) (RC_PAD_ROWS - 1);
	uint32_t	c0 = 0,
				c1 = 0,
				c2 = 0,
				c3 = 0;
	int64_t		i;

	for (i = 0; i < len; i++)
	{
		c0 += RC_ALL(RC_DIRECT_HOLDS, 0);
		c1 += RC_ALL(RC_DIRECT_HOLDS, 1);
		c2 += RC_ALL(RC_DIRECT_HOLDS, 2);
		c3 += RC_ALL(RC_DIRECT_HOLDS, 3);
	}
	counts[0] = c0;
	counts[1] = c1;
	counts[2] = c2;
	counts[3] = c3;
}

/* Interval tests over int64 keys. */
RC_INLINE void
rc_cyclic64_body(const RcBlock *blk, const int n, const RcBatch *b, uint64_t *counts)
{
	RC_COLUMNS(int64_t, blk->y64);
	RC_LOCALS(int64_t);
	RC_WIDTHS(int64_t);
	int64_t		len = blk->padded & ~(int64_t) (RC_PAD_ROWS - 1);
	uint64_t	c0 = 0,
				c1 = 0,
				c2 = 0,
				c3 = 0;
	int64_t		i;

	for (i = 0; i < len; i++)
	{
		c0 += RC_ALL(RC_CYCLIC64, 0);
		c1 += RC_ALL(RC_CYCLIC64, 1);
		c2 += RC_ALL(RC_CYCLIC64, 2);
		c3 += RC_ALL(RC_CYCLIC64, 3);
	}
	counts[0] = c0;
	counts[1] = c1;
	counts[2] = c2;
	counts[3] = c3;
}

/* Interval tests over int32 keys. */
RC_INLINE void
rc_cyclic32_body(const RcBlock *blk, const int n, const RcBatch *b, uint64_t *counts)
{
	RC_COLUMNS(int32_t, blk->y32);
	RC_LOCALS(int32_t);
	RC_WIDTHS(int32_t);
	int64_t		len = blk->padded & ~(int64_t) (RC_PAD_ROWS - 1);
	uint32_t	c0 = 0,
				c1 = 0,
				c2 = 0,
				c3 = 0;
	int64_t		i;

	for (i = 0; i < len; i++)
	{
		c0 += RC_ALL(RC_CYCLIC32, 0);
		c1 += RC_ALL(RC_CYCLIC32, 1);
		c2 += RC_ALL(RC_CYCLIC32, 2);
		c3 += RC_ALL(RC_CYCLIC32, 3);
	}
	counts[0] = c0;
	counts[1] = c1;
	counts[2] = c2;
	counts[3] = c3;
}

/*
 * Each body specialised on the number of compares, as a function of its
 * own: gcc 12 at -O2 vectorises these loops only one to a function (with
 * several inlined into one switch it shares their trip count and then
 * wants to peel), and target_clones clones each.
 */
#define RC_VARIANT(BODY, N) \
static void RC_CLONES \
BODY##_##N(const RcBlock *blk, const RcBatch *b, uint64_t *counts) \
{ \
	BODY(blk, N, b, counts); \
}

RC_VARIANT(rc_direct64_body, 1)
RC_VARIANT(rc_direct64_body, 2)
RC_VARIANT(rc_direct64_body, 3)
RC_VARIANT(rc_direct64_body, 4)
RC_VARIANT(rc_direct32_body, 1)
RC_VARIANT(rc_direct32_body, 2)
RC_VARIANT(rc_direct32_body, 3)
RC_VARIANT(rc_direct32_body, 4)
RC_VARIANT(rc_cyclic64_body, 1)
RC_VARIANT(rc_cyclic64_body, 2)
RC_VARIANT(rc_cyclic64_body, 3)
RC_VARIANT(rc_cyclic64_body, 4)
RC_VARIANT(rc_cyclic32_body, 1)
RC_VARIANT(rc_cyclic32_body, 2)
RC_VARIANT(rc_cyclic32_body, 3)
RC_VARIANT(rc_cyclic32_body, 4)

typedef void (*RcPass) (const RcBlock *blk, const RcBatch *b, uint64_t *counts);

/* [cyclic][narrow][n - 1] */
static const RcPass rc_passes[2][2][GJ_MAX_CONJUNCTS] = {
	{
		{rc_direct64_body_1, rc_direct64_body_2, rc_direct64_body_3, rc_direct64_body_4},
		{rc_direct32_body_1, rc_direct32_body_2, rc_direct32_body_3, rc_direct32_body_4},
	},
	{
		{rc_cyclic64_body_1, rc_cyclic64_body_2, rc_cyclic64_body_3, rc_cyclic64_body_4},
		{rc_cyclic32_body_1, rc_cyclic32_body_2, rc_cyclic32_body_3, rc_cyclic32_body_4},
	},
};

/* ---------------------------------------------------------------------
 * Keys, blocks and thresholds
 * ---------------------------------------------------------------------
 */

/* The compares of the conjunction, normalised (see the header). */
static void
rc_setup(RcSetup *s, const GjJoinInput *input, const GjCompareConjunction *conj)
{
	int			k;

	s->n = conj->n;
	s->ordered = true;
	s->inner_nulls = false;
	for (k = 0; k < conj->n; k++)
	{
		const GjSimpleCompare *sc = &conj->cmp[k];
		RcCompare  *c = &s->c[k];

		c->kind = gj_conj_kind(sc->op);
		c->complement = gj_conj_complement(sc->op);
		c->cls = sc->cls;
		c->ovals = input->outer.values[sc->outer_col];
		c->onull = input->outer.isnull[sc->outer_col];
		c->ivals = input->inner.values[sc->inner_col];
		c->inull = input->inner.isnull[sc->inner_col];
		s->ordered = s->ordered && (c->kind == GJ_CONJ_GT || c->kind == GJ_CONJ_GE);
		s->inner_nulls = s->inner_nulls || c->inull != NULL;
	}
}

/*
 * One compare's keys of rows [begin, begin + n) of a side's column; with
 * y32, their int32 copy too, and whether one is not narrow (one pass).
 */
static void
rc_convert(const int64_t *values, int cls, bool complement, int64_t begin, int64_t n,
		   int64_t *keys, int32_t *y32, bool *wide)
{
	int64_t		flip = complement ? -1 : 0;	/* ~key is key ^ -1 */
	bool		bad = false;
	int64_t		i;

	if (cls == GJ_CLASS_INT)
	{
		for (i = 0; i < n; i++)
			keys[i] = values[begin + i] ^ flip;
	}
	else
	{
		for (i = 0; i < n; i++)
			keys[i] = gj_float_order_key(gj_bits_to_double(values[begin + i])) ^ flip;
	}
	if (y32 == NULL)
		return;
	for (i = 0; i < n; i++)
	{
		bad |= !gj_conj_narrow(keys[i]);
		y32[i] = (int32_t) keys[i];
	}
	*wide |= bad;
}

/*
 * Convert inner rows [ib, ie) into a block: the keys column by column
 * (and their int32 copy, used if every key allows), then, where a column
 * has NULLs, the rows with a NULL key left out (each row stored
 * unconditionally and kept by advancing only when it has none), then the
 * padding.
 */
static void
rc_build_block(const RcSetup *s, int64_t ib, int64_t ie, RcBlock *blk)
{
	bool		wide = false;
	int64_t		j = ie - ib;
	int64_t		i;
	int			k;

	for (k = 0; k < s->n; k++)
		rc_convert(s->c[k].ivals, s->c[k].cls, s->c[k].complement, ib, ie - ib,
				   blk->y64 + k * blk->stride,
				   s->inner_nulls ? NULL : blk->y32 + k * blk->stride, &wide);
	if (s->inner_nulls)
	{
		for (i = 0, j = 0; i < ie - ib; i++)
		{
			bool		null = false,
						row_wide = false;

			for (k = 0; k < s->n; k++)
			{
				const uint8_t *inull = s->c[k].inull;
				int64_t		y = blk->y64[k * blk->stride + i];

				blk->y64[k * blk->stride + j] = y;
				blk->y32[k * blk->stride + j] = (int32_t) y;
				row_wide |= !gj_conj_narrow(y);
				null |= inull != NULL && inull[ib + i];
			}
			wide |= row_wide && !null;
			j += !null;
		}
	}
	blk->rows = j;
	blk->padded = (j + RC_PAD_ROWS - 1) & ~(int64_t) (RC_PAD_ROWS - 1);
	blk->narrow = !wide;
	for (k = 0; k < s->n; k++)
	{
		for (i = j; i < blk->padded; i++)
		{
			blk->y64[k * blk->stride + i] = INT64_MIN;
			blk->y32[k * blk->stride + i] = INT32_MIN;
		}
	}
}

/*
 * The keys of outer rows [ob, oe), x[(o - ob) * GJ_MAX_CONJUNCTS + k], once
 * for every block they meet; dead[o - ob] when a key is NULL.
 */
static void
rc_outer_keys(const RcSetup *s, int64_t ob, int64_t oe, int64_t *x, uint8_t *dead)
{
	int64_t		piece[RC_OUTER_PIECE];
	int64_t		o,
				done;
	int			k;

	memset(dead, 0, oe - ob);
	for (k = 0; k < s->n; k++)
	{
		const RcCompare *c = &s->c[k];

		for (done = ob; done < oe; done += RC_OUTER_PIECE)
		{
			int64_t		n = gj_min64(RC_OUTER_PIECE, oe - done);

			rc_convert(c->ovals, c->cls, c->complement, done, n, piece, NULL, NULL);
			for (o = 0; o < n; o++)
				x[(done - ob + o) * GJ_MAX_CONJUNCTS + k] = piece[o];
		}
		if (c->onull != NULL)
		{
			for (o = ob; o < oe; o++)
				dead[o - ob] |= c->onull[o];
		}
	}
}

/*
 * The thresholds against a block of an outer row with keys x: RC_DIRECT
 * (a), RC_CYCLIC (a, w), or RC_DEAD.
 */
static RcRowKind
rc_row(const RcSetup *s, const int64_t *x, bool narrow, int64_t *a, int64_t *w)
{
	bool		direct = s->ordered;
	int			k;

	for (k = 0; k < s->n && direct && !narrow; k++)
		direct = !gj_conj_edge(s->c[k].kind, x[k]);
	for (k = 0; k < s->n; k++)
	{
		int			kind = s->c[k].kind;

		if (direct)
			a[k] = narrow ? gj_conj_direct32(kind, x[k]) : gj_conj_direct64(kind, x[k]);
		else if (narrow)
		{
			int32_t		base,
						width;

			gj_conj_interval32(kind, x[k], &base, &width);
			a[k] = base;
			w[k] = width;
		}
		else if (!gj_conj_interval64(kind, x[k], &a[k], &w[k]))
			return RC_DEAD;
	}
	return direct ? RC_DIRECT : RC_CYCLIC;
}

/*
 * Does the padding key (the smallest) pass the cyclic tests of batch row r?
 * Then the row's pass counted the block's pad rows too.
 */
static bool
rc_pad_matches(const RcBlock *blk, int n, const RcBatch *b, int r)
{
	int			k;

	for (k = 0; k < n; k++)
	{
		bool		holds = blk->narrow ?
			gj_conj_in32(INT32_MIN, (int32_t) b->a[r][k], (int32_t) b->w[r][k]) :
			gj_conj_in64(INT64_MIN, b->a[r][k], b->w[r][k]);

		if (!holds)
			return false;
	}
	return true;
}

/* Run a batch of rows over the block and add their counts. */
static void
rc_flush(const RcBlock *blk, int n, RcRowKind kind, RcBatch *b, uint64_t *counts)
{
	uint64_t	c[RC_ROWS];
	int			r;

	if (b->nrows == 0)
		return;
	/* rows of a short batch repeat the first; their counts are dropped */
	for (r = b->nrows; r < RC_ROWS; r++)
	{
		memcpy(b->a[r], b->a[0], sizeof(b->a[0]));
		memcpy(b->w[r], b->w[0], sizeof(b->w[0]));
	}
	rc_passes[kind == RC_CYCLIC][blk->narrow][n - 1] (blk, b, c);
	for (r = 0; r < b->nrows; r++)
	{
		if (kind == RC_CYCLIC && rc_pad_matches(blk, n, b, r))
			c[r] -= (uint64_t) (blk->padded - blk->rows);
		counts[b->row[r]] += c[r];
	}
	b->nrows = 0;
}

/*
 * Add the matches in one block of the outer rows whose keys are x and dead
 * (nrows of them) to counts.
 */
static void
rc_count_block(const RcSetup *s, const RcBlock *blk, const int64_t *x, const uint8_t *dead,
			   int64_t nrows, uint64_t *counts)
{
	RcBatch		batch[3];		/* by RcRowKind; RC_DEAD's stays unused */
	int64_t		o;

	/* the thresholds of compares beyond n are read, never used */
	memset(batch, 0, sizeof(batch));
	for (o = 0; o < nrows; o++)
	{
		int64_t		a[GJ_MAX_CONJUNCTS] = {0};
		int64_t		w[GJ_MAX_CONJUNCTS] = {0};
		RcRowKind	kind;
		RcBatch    *b;

		if (dead[o])
			continue;
		kind = rc_row(s, x + o * GJ_MAX_CONJUNCTS, blk->narrow, a, w);
		if (kind == RC_DEAD)
			continue;
		b = &batch[kind];
		memcpy(b->a[b->nrows], a, sizeof(a));
		memcpy(b->w[b->nrows], w, sizeof(w));
		b->row[b->nrows++] = o;
		if (b->nrows == RC_ROWS)
			rc_flush(blk, s->n, kind, b, counts);
	}
	rc_flush(blk, s->n, RC_DIRECT, &batch[RC_DIRECT], counts);
	rc_flush(blk, s->n, RC_CYCLIC, &batch[RC_CYCLIC], counts);
}

/*
 * counts[o - o_begin] = inner rows i in [tile->inner_begin,
 * tile->inner_end) for which every compare holds (rows are input row
 * numbers, as in a nested-loop tile).
 *
 * Each call converts the inner tile's keys once, block by block, which
 * costs about as much as 100 outer rows' pairs (int4 keys, two compares):
 * give it many outer rows at a time.  The outer rows' keys take 33 bytes a
 * row of malloc'd memory for the call; without it, the rows are counted in
 * pieces of RC_OUTER_PIECE, each converting the inner tile again.
 */
void
gj_cpu_rowcount_conjunction(const GjJoinInput *input, const GjCompareConjunction *conj,
							const GjTile *tile, int64_t o_begin, int64_t o_end,
							uint64_t *counts)
{
	RcSetup		s;
	RcBlock		blk;
	int64_t		stack_x[RC_OUTER_PIECE * GJ_MAX_CONJUNCTS];
	uint8_t		stack_dead[RC_OUTER_PIECE];
	int64_t		rows = o_end - o_begin;
	int64_t    *x = stack_x;
	uint8_t    *dead = stack_dead;
	int64_t		piece = RC_OUTER_PIECE,
				ob,
				ib;

	if (rows <= 0)
		return;
	memset(counts, 0, sizeof(uint64_t) * rows);
	rc_setup(&s, input, conj);
	blk.stride = (RC_BLOCK_KEYS / s.n) & ~(int64_t) (RC_PAD_ROWS - 1);
	if (rows > RC_OUTER_PIECE)
	{
		int64_t    *heap_x = malloc(sizeof(int64_t) * GJ_MAX_CONJUNCTS * rows);
		uint8_t    *heap_dead = malloc(rows);

		if (heap_x != NULL && heap_dead != NULL)
		{
			x = heap_x;
			dead = heap_dead;
			piece = rows;
		}
		else
		{
			free(heap_x);
			free(heap_dead);
		}
	}

	for (ob = o_begin; ob < o_end; ob += piece)
	{
		int64_t		oe = gj_min64(ob + piece, o_end);

		rc_outer_keys(&s, ob, oe, x, dead);
		for (ib = tile->inner_begin; ib < tile->inner_end; ib += blk.stride)
		{
			rc_build_block(&s, ib, gj_min64(ib + blk.stride, tile->inner_end), &blk);
			if (blk.rows > 0)
				rc_count_block(&s, &blk, x, dead, oe - ob, counts + (ob - o_begin));
		}
	}
	if (x != stack_x)
	{
		free(x);
		free(dead);
	}
}

/*-------------------------------------------------------------------------
 *
 * compiled_count.cuh
 *	  The program count kernel for one device program compiled to GPU code:
 *	  per outer row, the inner rows of a nested-loop tile for which the
 *	  program is TRUE, and the pairs the host must recheck, as
 *	  cuda_program_count.cu's pc_count_kernel counts them with the
 *	  interpreter.  The same body makes the nested loop's pairs kernels
 *	  (GJC_KIND 2): the count pass, matches and pairs to recheck per (outer
 *	  row, inner slice), and the write pass, each such pair at its offset
 *	  with the recheck flag, as cuda_nestloop.cu's program_kernel does.
 *
 * GJC_KIND 3 is the count pass of a filtered sort-merge or hash step
 * (cuda_sorted.cu), a candidate pair a thread, which also keeps each
 * candidate's verdict for the write pass.  GJC_KIND 4, the same body as
 * the nested loop's, leaves each pair's verdict in two bitmaps (word w of
 * an outer row's bits after w words of every row of the step) for an
 * aggregate step's fold
 * (cuda_agg.cu), which reads them instead of interpreting the program.
 *
 * Both compilers read this file.  nvcc, in cuda_program_count.cu, sees
 * only the arguments (GjcArgs) and the tuning constants, to launch the
 * kernel; NVRTC (cuda_compile.cu, at run time) sees the kernel too, after
 * a source that defines the program as constants (GJC_PROGRAM and the
 * rest, see gj_cuda_compiled_source): the instructions, the leading
 * compares (gj_program_leading_compares), the columns the program loads
 * and which of them may hold NULLs.  The program's semantics are
 * device_program.h's, through gj_program_eval_fixed: the same
 * gj_program_apply the interpreter runs, unrolled over the constant
 * program, so that the stack lives in registers and no instruction is
 * decoded.
 *
 * gjc_count_kernel: a 2-D grid, blockIdx.x over blocks of outer rows,
 * blockIdx.y over slices of the inner tile (as cuda_rowcount.cu's
 * rc_count_kernel).  Each thread holds the loaded columns of GJC_ROWS outer
 * rows in registers; the block stages the slice's inner columns chunk by
 * chunk in shared memory (every thread reads the same row: a broadcast).
 * For each pair the leading compares are tested on order keys and the
 * rest of the program runs from the instruction after them, with their
 * TRUE slots on the stack, exactly as pc_count_kernel does: a pair failing
 * a leading compare counts nothing, not even a recheck.  The rest runs for
 * every pair, straight-line code, and its answer counts only where the
 * compares passed.
 *
 * Two specialisations keep it close to the plain compares' speed:
 *
 *	- 32 bits (gj_program_narrow, decided when the source is generated):
 *	  int2, int4 and date columns are staged in shared memory and held in
 *	  registers as int32, and integer compares and int2/int4 arithmetic
 *	  on them run in 32 bits with 32-bit overflow tests (gj_int_arith32),
 *	  the interpreter's answers.  The rest stays in 64 bits.
 *
 *	- chunks proven free of errors: where the rest of the program has
 *	  integer arithmetic or float8 sums (and no float products or
 *	  quotients, float4 arithmetic or dates), staging a chunk also finds
 *	  each inner column's bounds (and its values' largest magnitude as
 *	  float8, for the sums); each thread evaluates
 *	  the rest over the bounds of its outer rows and the chunk
 *	  (gj_bounds_step), and where no step can fail for any lane's rows
 *	  the warp counts the chunk without the tests for errors and the
 *	  host counts (there is no pair for the host).  Otherwise, or where
 *	  the data may overflow, the chunk is counted with them.
 *
 *	- the inner row's subexpressions (gj_program_hoist: "i.y + 1" of
 *	  "o.x / (i.y + 1)", the bounds of a band): the nested loop's kernels
 *	  evaluate each once per inner row when they stage a chunk, from the
 *	  device columns, and keep its value, NULL flag and failure in shared
 *	  memory (with their bounds and failures, for the proof above); the
 *	  pair loop reads them as it reads a column.  A 32-bit divisor among
 *	  them also keeps its multiplier (gj_div32_magic), and the division
 *	  becomes two multiplies.  The sorted steps' kernel stages nothing and
 *	  evaluates the whole program.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_COMPILED_COUNT_CUH
#define GPUJOIN_COMPILED_COUNT_CUH

#include "kernels/device_program.h"
#include "kernels/compiled_args.h"

/*
 * Tuning constants.  GJC_BLOCK threads a block and GJC_CHUNK inner rows
 * staged at a time (8 kB a column, 16 kB for the usual two), with the
 * kernels' arguments, in compiled_args.h.  Outer rows per thread:
 * gj_compiled_rows_per_thread (cuda_compile.cu), from the number of outer
 * columns the program loads.
 */
/*
 * Inner rows of a chunk the pair loop unrolls.  1 compiles in about 30%
 * less time on the 2-core machine's NVRTC, but on the H200 neither the
 * compile (808 against 1318 ms for one program, 505 against 376 for
 * another) nor the speed (three-qual count 4.49e12 against 4.77e12 pairs/s)
 * made it worth changing (kernel_test bench-program-count with
 * KT_NVRTC_OPTIONS=-DGJC_PAIR_UNROLL=1,
 * docs/results/2026-11-27-h200-9e0eeec-session8.md).
 */
/*
 * Chunks proven free of errors (see above) counted without the tests: 1,
 * or 0 for a kernel with the checked pair loop only.
 */
#ifndef GJC_PROVE
#define GJC_PROVE			1
#endif
/*
 * float8 sums and differences proven too: 1, or 0.  0 until the kernels
 * have passed kernel_test's compiled checks on a GPU (kernel_test's NVRTC
 * checks compile them with -DGJC_PROVE_FLOAT=1; KT_NVRTC_OPTIONS sets it
 * for its other modes).
 */
#ifndef GJC_PROVE_FLOAT
#define GJC_PROVE_FLOAT		0
#endif
#ifndef GJC_PAIR_UNROLL
#define GJC_PAIR_UNROLL		2
#endif


/* The step row of candidate pair t: the last j with cand_off[j] <= t. */
__device__ __forceinline__ int64_t
gjc_pair_row(const uint64_t *cand_off, int64_t nrows, uint64_t t)
{
	int64_t		lo = 0,
				hi = nrows - 1;

	while (lo < hi)
	{
		int64_t		mid = (lo + hi + 1) / 2;

		if (cand_off[mid] <= t)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * The end of one warp-wide round of the sorted count pass over candidates
 * [base, base + 32): lane's candidate belongs to step row j (-1: none) and
 * has verdict res.  Lanes of one row add their matches with one atomic;
 * lane 0 stores the round's verdict words.
 */
__device__ __forceinline__ void
gjc_sorted_round(const GjcSortedArgs *a, uint64_t base, int64_t j, int res)
{
	int			lane = threadIdx.x & 31;
	unsigned	same = __match_any_sync(0xffffffffu, j);
	unsigned	hits = __ballot_sync(0xffffffffu, res != GJ_RESULT_FALSE);

	if (j >= 0 && lane == __ffs(same) - 1 && (same & hits) != 0)
		atomicAdd(&a->count[j], (unsigned long long) __popc(same & hits));
	if (a->match_bits != NULL)
	{
		unsigned	rechecks = __ballot_sync(0xffffffffu, res == GJ_RESULT_RECHECK);

		if (lane == 0)
		{
			a->match_bits[base / 32] = hits;
			a->recheck_bits[base / 32] = rechecks;
		}
	}
}

/* What the kernel body does with the pairs it evaluates. */
#define GJC_MODE_COUNT		0	/* count per outer row and in total */
#define GJC_MODE_PAIR_COUNT 1	/* count per (outer row, slice) */
#define GJC_MODE_PAIR_WRITE 2	/* write each match at its offset */
#define GJC_MODE_BITS		3	/* each pair's verdict into two bitmaps */

/* backend.h's GJ_PAIR_RECHECK, which NVRTC does not see */
#define GJC_PAIR_RECHECK	0x80000000u

#ifdef GJC_NINSTRS

/* Bits set in m. */
__host__ __device__ constexpr int
gjc_popcount(unsigned m)
{
	return m == 0 ? 0 : (int) (m & 1) + gjc_popcount(m >> 1);
}

/* Staging slot of column col of a set of columns mask. */
__host__ __device__ constexpr int
gjc_slot(unsigned mask, int col)
{
	return gjc_popcount(mask & ((1u << col) - 1));
}

/*
 * The hoisted ranges (gj_program_hoist); none where the source has none,
 * or where kernel_test's -DGJC_NO_HOIST asks for none (to time them).
 */
#if !defined(GJC_HOIST_N) || defined(GJC_NO_HOIST)
#undef GJC_HOIST_N
#undef GJC_HOIST
#define GJC_HOIST_N			0
#define GJC_HOIST			{{0, 0, 0, 0}}
#endif

/* The program, as gj_program_eval_fixed reads it. */
struct GjcProgram
{
	static constexpr int ninstrs = GJC_NINSTRS;
	static constexpr GjInstr instrs[GJC_NINSTRS] = GJC_PROGRAM;
	static constexpr uint8_t op32[GJC_NINSTRS] = GJC_OP32;
	/* the nested loop's ranges of the inner row alone (gj_program_hoist) */
	static constexpr int nhoisted = GJC_HOIST_N;
	static constexpr GjHoistedRange hoisted[GJC_HOIST_N > 0 ? GJC_HOIST_N : 1] = GJC_HOIST;
};

#define GJC_HAS(mask, col) ((((unsigned) (mask)) >> (col)) & 1u)
#define GJC_MAX1(n) ((n) > 0 ? (n) : 1)
/* a shared array's row: a chunk where it has rows, else one entry */
#define GJC_ROW_LEN(n) ((n) > 0 ? GJC_CHUNK : 1)

/*
 * The inner columns the pair loop reads: those loaded outside the hoisted
 * ranges (a column read only inside them is read when the chunk is
 * staged, from the device column).
 */
__host__ __device__ constexpr unsigned
gjc_inner_pair_cols(void)
{
	unsigned	mask = 0;

	for (int pc = 0; pc < GjcProgram::ninstrs; pc++)
	{
		int			h = gj_fixed_hoisted_at<GjcProgram>(pc);

		if (h >= 0)
			pc = GjcProgram::hoisted[h].end - 1;
		else if (GjcProgram::instrs[pc].op == GJOP_LOAD_INNER)
			mask |= 1u << GjcProgram::instrs[pc].arg;
	}
	return mask;
}

/* Columns of each side kept in 64 bits and in 32 (gj_program_narrow). */
#define GJC_OUTER_COLS64 (GJC_OUTER_COLS & ~(unsigned) GJC_OUTER_NARROW)
#define GJC_INNER_PAIR (gjc_inner_pair_cols())
#define GJC_INNER_COLS64 (GJC_INNER_PAIR & ~(unsigned) GJC_INNER_NARROW)
#define GJC_INNER_COLS32 (GJC_INNER_PAIR & (unsigned) GJC_INNER_NARROW)
#define GJC_INNER_NULLS (GJC_INNER_PAIR & (unsigned) GJC_INNER_NULLABLE)

/*
 * The hoisted ranges before h kept in int64 (what 0), in int32 (1), with
 * a magic divisor (2): h's slot among them.
 */
__host__ __device__ constexpr int
gjc_hoisted_slot(int what, int h)
{
	int			n = 0;

	for (int k = 0; k < h; k++)
	{
		const GjHoistedRange &r = GjcProgram::hoisted[k];

		n += what == 0 ? !r.narrow : what == 1 ? r.narrow != 0 : r.divisor != 0;
	}
	return n;
}

/* Is hoisted range h's value a float (its bounds prove no arithmetic)? */
__host__ __device__ constexpr bool
gjc_hoisted_float(int h)
{
	GjInstr		in = GjcProgram::instrs[GjcProgram::hoisted[h].end - 1];
	bool		arith = (in.op >= GJOP_ADD && in.op <= GJOP_ABS) ||
		in.op == GJOP_INT_TO_FLOAT || in.op == GJOP_FLOAT_TO_FLOAT4;

	/* else compares and logic (booleans) and dates */
	return arith && (in.type == GJT_FLOAT4 || in.type == GJT_FLOAT8);
}

/*
 * May hoisted range h be NULL: does it load a column that may hold NULLs,
 * or a NULL constant?  Where it may not, its flag's NULL bit is never
 * read, and the steps after it fold their tests for NULL away.
 */
__host__ __device__ constexpr bool
gjc_hoisted_may_null(int h)
{
	for (int pc = GjcProgram::hoisted[h].start; pc < GjcProgram::hoisted[h].end; pc++)
	{
		GjInstr		in = GjcProgram::instrs[pc];

		if (in.op == GJOP_CONST_NULL ||
			(in.op == GJOP_LOAD_INNER && GJC_HAS(GJC_INNER_NULLABLE, in.arg)))
			return true;
	}
	return false;
}

/* Hoisted range H and its slots in the kernel's shared arrays. */
template <int H>
struct GjcHoisted
{
	static constexpr int h = H;
	static constexpr GjHoistedRange range = GjcProgram::hoisted[H];
	static constexpr int slot64 = gjc_hoisted_slot(0, H);	/* shoisted */
	static constexpr int slot32 = gjc_hoisted_slot(1, H);	/* shoisted32 */
	static constexpr int slotm = gjc_hoisted_slot(2, H);	/* smagic */
};

/* The hoisted ranges in turn: f(GjcHoisted<h>()) for each h. */
template <int H, typename F>
__device__ __forceinline__ void
gjc_each_hoisted(F &f)
{
	if constexpr (H < GjcProgram::nhoisted)
	{
		f(GjcHoisted<H>());
		gjc_each_hoisted<H + 1>(f);
	}
}

/* Order key of a value: its compares on integers are the interpreter's. */
__device__ __forceinline__ int64_t
gjc_order_key(int64_t value, int cls)
{
	return cls == GJ_CLASS_FLOAT ? gj_float_order_key(gj_bits_to_double(value)) : value;
}

/*
 * Is the rest of the program (after the leading compares) worth proving
 * free of errors chunk by chunk: has it a step that may fail (integer
 * arithmetic, float8 sums and differences, narrowing) and none that
 * gj_bounds_step never proves (float products and quotients, float4
 * arithmetic, dates)?
 */
__host__ __device__ constexpr bool
gjc_provable(void)
{
	bool		may_fail = false;

	for (int pc = GJC_LEAD_PC; pc < GjcProgram::ninstrs; pc++)
	{
		GjInstr		in = GjcProgram::instrs[pc];
		bool		arith = in.op >= GJOP_ADD && in.op <= GJOP_ABS;
		int			h = gj_fixed_hoisted_at<GjcProgram>(pc);

		/* a hoisted range's failures are known per inner row */
		if (h >= 0)
		{
			pc = GjcProgram::hoisted[h].end - 1;
			continue;
		}

		if ((arith && in.type == GJT_FLOAT4) ||
			(arith && in.type == GJT_FLOAT8 && (!GJC_PROVE_FLOAT ||
												(in.op != GJOP_ADD && in.op != GJOP_SUB &&
												 in.op != GJOP_NEG && in.op != GJOP_ABS))) ||
			in.op == GJOP_FLOAT_TO_FLOAT4 ||
			(in.op >= GJOP_DATE_PLI && in.op <= GJOP_DATE_MI))
			return false;
		may_fail = may_fail || arith || in.op == GJOP_INT_NARROW;
	}
	return may_fail;
}

/*
 * count += hit as one predicated add (cuda_rowcount.cu's rc_add_if: in C,
 * nvcc adds into a new register and selects, two instructions).
 */
__device__ __forceinline__ void
gjc_add_if(uint32_t &count, bool hit)
{
	asm("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %1, 0;\n\t@p add.u32 %0, %0, 1;\n\t}"
		: "+r"(count) : "r"((uint32_t) hit));
}

template <bool B>
struct GjcChecked
{
	static constexpr bool value = B;
};

/* Is leading compare sc between two columns held in 32 bits? */
__host__ __device__ constexpr bool
gjc_lead32(GjSimpleCompare sc)
{
	return sc.cls == GJ_CLASS_INT && GJC_HAS(GJC_OUTER_NARROW, sc.outer_col) &&
		GJC_HAS(GJC_INNER_NARROW, sc.inner_col);
}

/*
 * A loaded column's value, from wherever it is held: a column kept in 32
 * bits (GJC_*_NARROW) has only its int32 copy (sign-extended here), the
 * other only its int64.  A leading compare that is not in 32 bits (one of
 * its columns is kept in 64 bits, say o.c0 int8 < i.c4 int4) reads its
 * 32-bit side here too: reading the int64 copy of a column kept in 32 bits
 * reads 0.
 */
__device__ __forceinline__ int64_t
gjc_outer_value(const int64_t *v, const int32_t *v32, int col)
{
	return GJC_HAS(GJC_OUTER_NARROW, col) ? (int64_t) v32[col] : v[col];
}

__device__ __forceinline__ int64_t
gjc_inner_value(const int64_t *v, const int32_t *v32, int col)
{
	return GJC_HAS(GJC_INNER_NARROW, col) ? (int64_t) v32[col] : v[col];
}

template <int MODE>
__device__ __forceinline__ void
gjc_kernel_body(const GjcArgs &a)
{
	constexpr GjSimpleCompare lead[GJC_MAX1(GJC_LEAD_N)] = GJC_LEAD;
	constexpr int nstaged64 = gjc_popcount(GJC_INNER_COLS64);
	constexpr int nstaged32 = gjc_popcount(GJC_INNER_COLS32);
	constexpr int nnullable = gjc_popcount(GJC_INNER_NULLS);
	__shared__ int64_t svalues[GJC_MAX1(nstaged64)][GJC_ROW_LEN(nstaged64)];
	__shared__ int32_t svalues32[GJC_MAX1(nstaged32)][GJC_ROW_LEN(nstaged32)];
	__shared__ uint8_t snull[GJC_MAX1(nnullable)][GJC_ROW_LEN(nnullable)];
	__shared__ unsigned long long swarp[GJC_BLOCK / 32][2];
	constexpr bool prove = GJC_PROVE && gjc_provable();
	constexpr int ninner = gjc_popcount(GJC_INNER_PAIR);
	__shared__ int64_t sbounds[prove ? GJC_BLOCK / 32 : 1][GJC_MAX1(ninner)][3];

	/*
	 * The hoisted ranges' values per inner row of the chunk (int64 or
	 * int32), their flags (bit 0 NULL, bit 1 a step failed) and a
	 * divisor's magic; with prove, their bounds and failures per warp.
	 */
	constexpr int nhoisted = GjcProgram::nhoisted;
	constexpr int nhoisted64 = gjc_hoisted_slot(0, nhoisted);
	constexpr int nhoisted32 = gjc_hoisted_slot(1, nhoisted);
	constexpr int nmagic = gjc_hoisted_slot(2, nhoisted);
	__shared__ int64_t shoisted[GJC_MAX1(nhoisted64)][GJC_ROW_LEN(nhoisted64)];
	__shared__ int32_t shoisted32[GJC_MAX1(nhoisted32)][GJC_ROW_LEN(nhoisted32)];
	__shared__ uint8_t shflags[GJC_MAX1(nhoisted)][GJC_ROW_LEN(nhoisted)];
	__shared__ uint64_t smagic[GJC_MAX1(nmagic)][GJC_ROW_LEN(nmagic)];
	__shared__ int64_t shbounds[prove && nhoisted > 0 ? GJC_BLOCK / 32 : 1][GJC_MAX1(nhoisted)][2];
	__shared__ uint32_t shfailed[prove && nhoisted > 0 ? GJC_BLOCK / 32 : 1];
	int64_t		first = (int64_t) blockIdx.x * (GJC_BLOCK * GJC_ROWS) + threadIdx.x;
	int64_t		slice_begin = (int64_t) blockIdx.y * a.slice_len;
	int64_t		slice_end = slice_begin + a.slice_len < a.ninner ?
		slice_begin + a.slice_len : a.ninner;
	int64_t		ov[GJC_ROWS][GJ_MAX_KEY_COLS];
	int32_t		ov32[GJC_ROWS][GJ_MAX_KEY_COLS];
	bool		onull[GJC_ROWS][GJ_MAX_KEY_COLS];
	int64_t		okey[GJC_ROWS][GJC_MAX1(GJC_LEAD_N)];
	bool		valid[GJC_ROWS];
	uint32_t	count[GJC_ROWS];
	unsigned long long pos[MODE == GJC_MODE_PAIR_WRITE ? GJC_ROWS : 1];
	uint32_t	mword[MODE == GJC_MODE_BITS ? GJC_ROWS : 1];
	uint32_t	rword[MODE == GJC_MODE_BITS ? GJC_ROWS : 1];
	uint32_t	host[GJC_ROWS];
	unsigned long long host_sum = 0;
	unsigned long long sum = 0;

	/*
	 * The outer rows' columns, and the keys of their leading compares.  A
	 * row past the end, or with a NULL compare key (which passes nothing),
	 * is counted like the others and its counts dropped at the end: the
	 * loop over pairs then tests no flag of the row.
	 */
#pragma unroll
	for (int r = 0; r < GJC_ROWS; r++)
	{
		int64_t		j = first + r * GJC_BLOCK;
		int64_t		row = a.o_begin + j - a.outer_base;

		valid[r] = j < a.nrows;
		count[r] = 0;
		host[r] = 0;
		if constexpr (MODE == GJC_MODE_BITS)
			mword[r] = rword[r] = 0;
		if constexpr (MODE == GJC_MODE_PAIR_WRITE)
			pos[r] = valid[r] ? a.scratch[j * a.nslices + blockIdx.y] : 0;
#pragma unroll
		for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
		{
			ov[r][c] = 0;
			ov32[r][c] = 0;
			onull[r][c] = false;
			if (GJC_HAS(GJC_OUTER_COLS, c) && valid[r])
			{
				if (GJC_HAS(GJC_OUTER_NARROW, c))
					ov32[r][c] = (int32_t) a.outer.values[c][row];
				else
					ov[r][c] = a.outer.values[c][row];
				onull[r][c] = GJC_HAS(GJC_OUTER_NULLABLE, c) && a.outer.isnull[c][row];
			}
		}
#pragma unroll
		for (int k = 0; k < GJC_LEAD_N; k++)
		{
			valid[r] = valid[r] && !onull[r][lead[k].outer_col];
			okey[r][k] = gjc_lead32(lead[k]) ? 0 :
				gjc_order_key(gjc_outer_value(ov[r], ov32[r], lead[k].outer_col), lead[k].cls);
		}
	}

	for (int64_t ib = slice_begin; ib < slice_end; ib += GJC_CHUNK)
	{
		int			n = slice_end - ib < GJC_CHUNK ? (int) (slice_end - ib) : GJC_CHUNK;

		GjBounds	ibounds[GJ_MAX_KEY_COLS];
		bool		fast = false;

		__syncthreads();		/* everyone is done with the previous chunk */
#pragma unroll
		for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
		{
			int64_t		lo = INT64_MAX,
						hi = INT64_MIN;
			uint64_t	fmag = 0;

			if (!GJC_HAS(GJC_INNER_PAIR, c))
				continue;
			for (int t = threadIdx.x; t < n; t += GJC_BLOCK)
			{
				int64_t		v = a.inner.values[c][ib + t];
				bool		null = GJC_HAS(GJC_INNER_NULLABLE, c) && a.inner.isnull[c][ib + t];

				if (GJC_HAS(GJC_INNER_NARROW, c))
					svalues32[gjc_slot(GJC_INNER_COLS32, c)][t] = (int32_t) v;
				else
					svalues[gjc_slot(GJC_INNER_COLS64, c)][t] = v;
				if (GJC_HAS(GJC_INNER_NULLABLE, c))
					snull[gjc_slot(GJC_INNER_NULLS, c)][t] = null;
				if (prove && !null)
				{
					uint64_t	m = gj_bounds_fmag(v);

					lo = v < lo ? v : lo;
					hi = v > hi ? v : hi;
					fmag = m > fmag ? m : fmag;
				}
			}
			if constexpr (prove)
			{
				/* the chunk's bounds of the column: the warp's, then the block's */
				for (int off = 16; off > 0; off /= 2)
				{
					int64_t		olo = __shfl_xor_sync(0xffffffffu, lo, off);
					int64_t		ohi = __shfl_xor_sync(0xffffffffu, hi, off);
					uint64_t	ofmag = __shfl_xor_sync(0xffffffffu, fmag, off);

					lo = olo < lo ? olo : lo;
					hi = ohi > hi ? ohi : hi;
					fmag = ofmag > fmag ? ofmag : fmag;
				}
				if (threadIdx.x % 32 == 0)
				{
					sbounds[threadIdx.x / 32][gjc_slot(GJC_INNER_PAIR, c)][0] = lo;
					sbounds[threadIdx.x / 32][gjc_slot(GJC_INNER_PAIR, c)][1] = hi;
					sbounds[threadIdx.x / 32][gjc_slot(GJC_INNER_PAIR, c)][2] = (int64_t) fmag;
				}
			}
		}

		/*
		 * The hoisted ranges of each inner row of the chunk, from the
		 * device columns, once for all the block's outer rows
		 */
		if constexpr (nhoisted > 0)
		{
			uint32_t	failed = 0;
			int64_t		hlo[GJC_MAX1(nhoisted)],
						hhi[GJC_MAX1(nhoisted)];

#pragma unroll
			for (int h = 0; h < nhoisted; h++)
			{
				hlo[h] = INT64_MAX;
				hhi[h] = INT64_MIN;
			}
			for (int t = threadIdx.x; t < n; t += GJC_BLOCK)
			{
				auto		load = [&] (bool outer, int col, GjSlot *slot, bool *isnull)
				{
					slot->i = a.inner.values[col][ib + t];
					*isnull = GJC_HAS(GJC_INNER_NULLABLE, col) && a.inner.isnull[col][ib + t];
				};
				auto		stage = [&] (auto hd)
				{
					using		Hd = decltype(hd);
					constexpr int h = Hd::h;
					GjSlot		value;
					bool		null;
					bool		ok = gj_program_range_fixed<GjcProgram, h>(&value, &null, load);

					if (Hd::range.narrow)
						shoisted32[Hd::slot32][t] = (int32_t) value.i;
					else
						shoisted[Hd::slot64][t] = value.i;
					shflags[h][t] = (uint8_t) (null | (!ok << 1));
					if (Hd::range.divisor)
						smagic[Hd::slotm][t] =
							(null | !ok) ? 0 : gj_div32_magic((int32_t) value.i);
					failed |= (uint32_t) !ok << h;
					if (prove && ok && !null)
					{
						hlo[h] = value.i < hlo[h] ? value.i : hlo[h];
						hhi[h] = value.i > hhi[h] ? value.i : hhi[h];
					}
				};

				gjc_each_hoisted<0>(stage);
			}
			if constexpr (prove)
			{
				/* the warp's bounds and failures, as the columns' above */
#pragma unroll
				for (int h = 0; h < nhoisted; h++)
				{
					for (int off = 16; off > 0; off /= 2)
					{
						int64_t		olo = __shfl_xor_sync(0xffffffffu, hlo[h], off);
						int64_t		ohi = __shfl_xor_sync(0xffffffffu, hhi[h], off);

						hlo[h] = olo < hlo[h] ? olo : hlo[h];
						hhi[h] = ohi > hhi[h] ? ohi : hhi[h];
					}
				}
				for (int off = 16; off > 0; off /= 2)
					failed |= __shfl_xor_sync(0xffffffffu, failed, off);
				if (threadIdx.x % 32 == 0)
				{
#pragma unroll
					for (int h = 0; h < nhoisted; h++)
					{
						shbounds[threadIdx.x / 32][h][0] = hlo[h];
						shbounds[threadIdx.x / 32][h][1] = hhi[h];
					}
					shfailed[threadIdx.x / 32] = failed;
				}
			}
		}
		__syncthreads();

		/*
		 * Can no step after the leading compares fail for any pair of the
		 * warp's outer rows and the chunk?  Then the warp counts the chunk
		 * without the tests for errors (there is no pair for the host).
		 */
		if constexpr (prove)
		{
			bool		safe = true;

#pragma unroll
			for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
			{
				ibounds[c].lo = ibounds[c].hi = 0;
				ibounds[c].flt = false;
				ibounds[c].fmag = 0;
				if (!GJC_HAS(GJC_INNER_PAIR, c))
					continue;
				ibounds[c].lo = INT64_MAX;
				ibounds[c].hi = INT64_MIN;
				for (int w = 0; w < GJC_BLOCK / 32; w++)
				{
					int64_t		lo = sbounds[w][gjc_slot(GJC_INNER_PAIR, c)][0];
					int64_t		hi = sbounds[w][gjc_slot(GJC_INNER_PAIR, c)][1];
					uint64_t	fmag = (uint64_t) sbounds[w][gjc_slot(GJC_INNER_PAIR, c)][2];

					ibounds[c].lo = lo < ibounds[c].lo ? lo : ibounds[c].lo;
					ibounds[c].hi = hi > ibounds[c].hi ? hi : ibounds[c].hi;
					ibounds[c].fmag = fmag > ibounds[c].fmag ? fmag : ibounds[c].fmag;
				}
				if (ibounds[c].lo > ibounds[c].hi)
					ibounds[c].lo = ibounds[c].hi = 0;	/* all NULL */
			}

			/* the same of the hoisted ranges; a failure in one proves nothing */
			GjBounds	hbounds[GJC_MAX1(nhoisted)];
			uint32_t	hfailed = 0;

			for (int w = 0; nhoisted > 0 && w < GJC_BLOCK / 32; w++)
				hfailed |= shfailed[w];
			auto		hoisted_bounds = [&] (auto hd)
			{
				constexpr int h = decltype(hd)::h;
				constexpr bool flt = gjc_hoisted_float(h);

				hbounds[h].lo = INT64_MAX;
				hbounds[h].hi = INT64_MIN;
				hbounds[h].flt = flt;
				hbounds[h].fmag = 0x7fefffffffffffffULL;	/* any finite float */
				for (int w = 0; w < GJC_BLOCK / 32; w++)
				{
					int64_t		lo = shbounds[w][h][0];
					int64_t		hi = shbounds[w][h][1];

					hbounds[h].lo = lo < hbounds[h].lo ? lo : hbounds[h].lo;
					hbounds[h].hi = hi > hbounds[h].hi ? hi : hbounds[h].hi;
				}
				if (hbounds[h].lo > hbounds[h].hi || hbounds[h].flt)
					hbounds[h].lo = hbounds[h].hi = 0;	/* all NULL, or a float */
			};

			gjc_each_hoisted<0>(hoisted_bounds);
#pragma unroll
			for (int r = 0; r < GJC_ROWS; r++)
			{
				GjBounds	st[GJ_MAX_STACK];
				int			sp = GJC_LEAD_DEPTH;
				bool		ok = true;
				auto		load = [&] (bool outer, int col, GjBounds *b)
					{
						if (outer)
						{
							int64_t		v = onull[r][col] ? 0 :
								GJC_HAS(GJC_OUTER_NARROW, col) ? ov32[r][col] : ov[r][col];

							b->lo = b->hi = v;
							b->flt = false;
							b->fmag = gj_bounds_fmag(v);
						}
						else
							*b = ibounds[col];
					};

#pragma unroll
				for (int k = 0; k < GJC_LEAD_DEPTH; k++)
				{
					st[k].lo = 0;
					st[k].hi = 1;
					st[k].flt = false;
					st[k].fmag = 1;
				}
				auto		hoisted = [&] (int h, GjBounds *b)
					{
						*b = hbounds[h];
						return ((hfailed >> h) & 1u) == 0;
					};

				gj_program_bounds_fixed<GjcProgram, GJC_LEAD_PC, true>(st, &sp, &ok, load,
																	   hoisted);
				safe = safe && ok;
			}
			fast = __all_sync(0xffffffffu, safe);
		}

		/* the chunk's pairs, with or without the tests for errors */
		auto		pairs = [&] (auto checked)
		{
#pragma unroll GJC_PAIR_UNROLL
		for (int t = 0; t < n; t++)
		{
			int64_t		iv[GJ_MAX_KEY_COLS];
			int32_t		iv32[GJ_MAX_KEY_COLS];
			bool		inull[GJ_MAX_KEY_COLS];
			int64_t		ikey[GJC_MAX1(GJC_LEAD_N)];
			bool		ipass = true;
			int64_t		hv[GJC_MAX1(nhoisted)];
			uint8_t		hflags[GJC_MAX1(nhoisted)];
			uint64_t	hmagic[GJC_MAX1(nhoisted)];
			uint32_t	hunit[GJC_MAX1(nhoisted)];
			auto		read_hoisted = [&] (auto hd)
			{
				using		Hd = decltype(hd);
				constexpr int h = Hd::h;
				constexpr bool may_null = gjc_hoisted_may_null(h);

				hv[h] = Hd::range.narrow ? (int64_t) shoisted32[Hd::slot32][t] :
					shoisted[Hd::slot64][t];
				hflags[h] = shflags[h][t] & (may_null ? 3 : 2);
				hmagic[h] = Hd::range.divisor ? smagic[Hd::slotm][t] : 0;
				hunit[h] = hmagic[h] == 0;
			};
			auto		hoisted = [&] (int h, GjSlot *slot, bool *isnull, GjDivisor *divisor)
			{
				slot->i = hv[h];
				*isnull = (hflags[h] & 1) != 0;
				divisor->magic = hmagic[h];
				divisor->unit = hunit[h];
				return (hflags[h] & 2) == 0;
			};

			gjc_each_hoisted<0>(read_hoisted);

#pragma unroll
			for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
			{
				iv[c] = GJC_HAS(GJC_INNER_COLS64, c) ?
					svalues[gjc_slot(GJC_INNER_COLS64, c)][t] : 0;
				iv32[c] = GJC_HAS(GJC_INNER_COLS32, c) ?
					svalues32[gjc_slot(GJC_INNER_COLS32, c)][t] : 0;
				inull[c] = GJC_HAS(GJC_INNER_NULLS, c) &&
					snull[gjc_slot(GJC_INNER_NULLS, c)][t] != 0;
			}
#pragma unroll
			for (int k = 0; k < GJC_LEAD_N; k++)
			{
				ipass = ipass && !inull[lead[k].inner_col];
				ikey[k] = gjc_lead32(lead[k]) ? 0 :
					gjc_order_key(gjc_inner_value(iv, iv32, lead[k].inner_col), lead[k].cls);
			}
#pragma unroll
			for (int r = 0; r < GJC_ROWS; r++)
			{
				bool		pass = ipass;
				int			res;

#pragma unroll
				for (int k = 0; k < GJC_LEAD_N; k++)
				{
					if (gjc_lead32(lead[k]))
						pass = pass & gj_int_cmp_holds(lead[k].op,
													   ov32[r][lead[k].outer_col],
													   iv32[lead[k].inner_col]);
					else
						pass = pass & gj_int_cmp_holds(lead[k].op, okey[r][k], ikey[k]);
				}
				res = gj_program_eval_fixed<GjcProgram, GJC_LEAD_PC, GJC_LEAD_DEPTH,
											decltype(checked)::value, true>(
					[&] (bool outer, int col, GjSlot *slot, bool *isnull)
					{
						if (outer)
							slot->i = GJC_HAS(GJC_OUTER_NARROW, col) ? ov32[r][col] : ov[r][col];
						else
							slot->i = GJC_HAS(GJC_INNER_NARROW, col) ? iv32[col] : iv[col];
						*isnull = outer ? onull[r][col] : inull[col];
					}, hoisted);
				if constexpr (MODE == GJC_MODE_COUNT)
				{
					gjc_add_if(count[r], pass & (res == GJ_RESULT_TRUE));
					if (decltype(checked)::value)
						gjc_add_if(host[r], pass & (res == GJ_RESULT_RECHECK));
				}
				else if constexpr (MODE == GJC_MODE_PAIR_COUNT)
				{
					/* a pair the host rechecks is returned, flagged */
					gjc_add_if(count[r], pass & (res != GJ_RESULT_FALSE));
				}
				else if constexpr (MODE == GJC_MODE_BITS)
				{
					/*
					 * both bits on either path: a match is only ever folded
					 * on the device without its recheck bit
					 */
					mword[r] |= (uint32_t) (pass & (res != GJ_RESULT_FALSE)) << (t & 31);
					rword[r] |= (uint32_t) (pass & (res == GJ_RESULT_RECHECK)) << (t & 31);
				}
				else if (valid[r] & pass & (res != GJ_RESULT_FALSE))
				{
					a.out_outer[pos[r]] = (a.outer_first + (uint32_t) (first + r * GJC_BLOCK)) |
						(res == GJ_RESULT_RECHECK ? GJC_PAIR_RECHECK : 0u);
					a.out_inner[pos[r]] = a.inner_first + (uint32_t) (ib + t);
					pos[r]++;
				}
			}
			if constexpr (MODE == GJC_MODE_BITS)
			{
				/*
				 * A word of 32 inner rows is done (chunks start at multiples
				 * of 32): each row stores its words, zero for a row whose
				 * compare key is NULL
				 */
				if (((t & 31) == 31) | (t == n - 1))
				{
#pragma unroll
					for (int r = 0; r < GJC_ROWS; r++)
					{
						int64_t		j = first + r * GJC_BLOCK;
						int64_t		w = (ib + t) / 32 * a.nrows + j;

						if (j < a.nrows)
						{
							a.match_bits[w] = valid[r] ? mword[r] : 0u;
							a.recheck_bits[w] = valid[r] ? rword[r] : 0u;
						}
						mword[r] = rword[r] = 0;
					}
				}
			}
		}
		};

		if constexpr (prove)
		{
			if (fast)
				pairs(GjcChecked<false>());
			else
				pairs(GjcChecked<true>());
		}
		else
			pairs(GjcChecked<true>());
	}

	if constexpr (MODE == GJC_MODE_PAIR_WRITE || MODE == GJC_MODE_BITS)
		return;
	if constexpr (MODE == GJC_MODE_PAIR_COUNT)
	{
		/*
		 * Every row of the step stores its entry, 0 where a NULL compare key
		 * passed nothing (the scratch is not cleared)
		 */
#pragma unroll
		for (int r = 0; r < GJC_ROWS; r++)
		{
			int64_t		j = first + r * GJC_BLOCK;

			if (j < a.nrows)
				a.scratch[j * a.nslices + blockIdx.y] = valid[r] ? count[r] : 0;
		}
		return;
	}
#pragma unroll
	for (int r = 0; r < GJC_ROWS; r++)
	{
		if (!valid[r])
			continue;
		if (a.counts != NULL && count[r] != 0)
			atomicAdd(&a.counts[first + r * GJC_BLOCK], (unsigned long long) count[r]);
		sum += count[r];
		host_sum += host[r];
	}
	/* the block's total and host pairs: one atomic each */
	for (int off = 16; off > 0; off /= 2)
	{
		sum += __shfl_down_sync(0xffffffffu, sum, off);
		host_sum += __shfl_down_sync(0xffffffffu, host_sum, off);
	}
	if (threadIdx.x % 32 == 0)
	{
		swarp[threadIdx.x / 32][0] = sum;
		swarp[threadIdx.x / 32][1] = host_sum;
	}
	__syncthreads();
	if (threadIdx.x == 0)
	{
		for (int w = 1; w < GJC_BLOCK / 32; w++)
		{
			sum += swarp[w][0];
			host_sum += swarp[w][1];
		}
		if (sum != 0)
			atomicAdd(a.total, sum);
		if (host_sum != 0)
			atomicAdd(a.host, host_sum);
	}
}

/*
 * The kernels of one kind (gj_cuda_compiled_source's GJC_KIND, the
 * GJ_COMPILED_* of cuda_internal.cuh): one module holds what one step
 * launches, so that a kind costs one compile.
 */
#if GJC_KIND == 1
extern "C" __global__ void __launch_bounds__(GJC_BLOCK)
gjc_count_kernel(const GjcArgs a)
{
	gjc_kernel_body<GJC_MODE_COUNT>(a);
}
#elif GJC_KIND == 3

/*
 * The count pass of a filtered sort-merge or hash step (cuda_sorted.cu's
 * count_pairs_kernel with the program compiled): a candidate pair a thread,
 * in warp-wide rounds of a grid-stride loop, the whole program evaluated
 * from global memory (the candidates' rows are scattered: there is no tile
 * to stage).
 */
extern "C" __global__ void __launch_bounds__(GJC_BLOCK)
gjc_sorted_count_kernel(const GjcSortedArgs a)
{
	uint64_t	total = *a.npairs_at;
	uint64_t	warp = ((uint64_t) blockIdx.x * blockDim.x + threadIdx.x) >> 5;
	uint64_t	nwarps = ((uint64_t) gridDim.x * blockDim.x) >> 5;

	for (uint64_t base = warp * 32; base < total; base += nwarps * 32)
	{
		uint64_t	t = base + (threadIdx.x & 31);
		int64_t		j = -1;
		int			res = GJ_RESULT_FALSE;

		if (t < total)
		{
			uint32_t	orow,
						irow;

			j = gjc_pair_row(a.cand_off, a.nrows, t);
			orow = a.outer_perm[a.o_begin + j];
			irow = a.inner_perm[(int64_t) a.first[j] + (int64_t) (t - a.cand_off[j])];
			res = gj_program_eval_fixed<GjcProgram, 0, 0, true>(
				[&] (bool outer, int col, GjSlot *slot, bool *isnull)
				{
					const GjKeyColumns *side = outer ? &a.outer : &a.inner;
					uint32_t	row = outer ? orow : irow;
					unsigned	nullable = outer ? GJC_OUTER_NULLABLE : GJC_INNER_NULLABLE;

					slot->i = side->values[col][row];
					*isnull = GJC_HAS(nullable, col) && side->isnull[col][row];
				});
		}
		gjc_sorted_round(&a, base, j, res);
	}
}
#elif GJC_KIND == 4

/*
 * The verdicts of a nested-loop aggregate step (cuda_agg.cu): each pair's
 * into match_bits and recheck_bits, which the fold reads instead of
 * evaluating the program.
 */
extern "C" __global__ void __launch_bounds__(GJC_BLOCK)
gjc_bits_kernel(const GjcArgs a)
{
	gjc_kernel_body<GJC_MODE_BITS>(a);
}
#else

/*
 * The pairs kernels: cuda_compile.cu builds each apart (GJC_PAIRS_PART 0
 * the count pass's, 1 the write pass's), on two threads; kernel_test may
 * compile both in one module.
 */
#if !defined(GJC_PAIRS_PART) || GJC_PAIRS_PART == 0
extern "C" __global__ void __launch_bounds__(GJC_BLOCK)
gjc_pairs_count_kernel(const GjcArgs a)
{
	gjc_kernel_body<GJC_MODE_PAIR_COUNT>(a);
}
#endif
#if !defined(GJC_PAIRS_PART) || GJC_PAIRS_PART == 1
extern "C" __global__ void __launch_bounds__(GJC_BLOCK)
gjc_pairs_write_kernel(const GjcArgs a)
{
	gjc_kernel_body<GJC_MODE_PAIR_WRITE>(a);
}
#endif
#endif

#endif							/* GJC_NINSTRS */

#endif							/* GPUJOIN_COMPILED_COUNT_CUH */

/*-------------------------------------------------------------------------
 *
 * compiled_flat.cuh
 *	  The nested loop's flat kernels: compiled_count.cuh's quick kernels
 *	  (count, pairs, verdicts) around a program written out as
 *	  straight-line C (flat_program.c), for a program's first steps while
 *	  its full kernel compiles in the background.
 *
 * Only NVRTC reads this file, after a source (gj_cuda_flat_source in
 * cuda_compile.cu) that defines the program's function gjf_eval
 * (gj_flat_source), the layout of GjcArgs as byte offsets (GJF_OFF_*, from
 * the struct that nvcc compiles the launches with, so that the two cannot
 * differ) and the columns: GJF_OUTER_COLS and GJF_INNER_COLS (bit c for
 * column c loaded), GJF_OUTER_NULLABLE and GJF_INNER_NULLABLE (those that
 * may be NULL), GJF_NINNER, GJF_NINNER32 and GJF_NINNER_NULLS (how many
 * inner columns are staged in 64 bits, in 32 (gj_program_narrow's) and
 * NULL flags; at least 1) and GJF_LEN, GJF_LEN32 and GJF_LEN_NULLS (the
 * rows of each of those arrays: GJF_CHUNK, or 1 where it holds none),
 * GJF_LOAD_OUTER(r, row),
 * GJF_ZERO_OUTER(r),
 * GJF_STAGE(t) and GJF_READ_INNER(t) (the statements that load the outer
 * row's columns into ov[r] and onull[r], stage the chunk's inner row t in
 * shared memory, and read it back into iv and inull: the loaded columns
 * alone, so that no loop over every column is left for NVRTC to fold),
 * GJF_ROWS (outer rows a thread),
 * GJF_CHUNK (inner rows staged at a time, a divisor of the slices' length
 * and a multiple of 32) and GJF_KIND.
 *
 * The grid, the rows of a thread and what each mode leaves are
 * compiled_count.cuh's gjc_kernel_body's, so that the launches and the
 * readers of counts, pairs and bitmaps serve both: blockIdx.x over blocks
 * of GJF_ROWS * GJC_BLOCK outer rows (row r of a thread at first + r *
 * GJC_BLOCK), blockIdx.y over slices of the inner tile.  What the flat
 * kernel does not do is what costs NVRTC its time: no templates over the
 * program, no proven chunks, no 32-bit columns, no unrolled loops (the
 * pair loop and the staging keep "#pragma unroll 1": unrolled, they took
 * a third of a flat kernel's compile), and each thread adds its counts
 * with its own atomics (the block's shuffled sum took another 14 ms of
 * 65 on the 2-core machine's NVRTC, more than the program).  A pair's
 * leading compares are in gjf_eval, which returns GJ_RESULT_FALSE where
 * one fails, as the full kernels count it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_COMPILED_FLAT_CUH
#define GPUJOIN_COMPILED_FLAT_CUH

#define GJF_BLOCK			256
#define GJF_MODE_COUNT		0
#define GJF_MODE_PAIR_COUNT 1
#define GJF_MODE_PAIR_WRITE 2
#define GJF_MODE_BITS		3
#define GJF_PAIR_RECHECK	0x80000000u
#define GJF_FALSE			0
#define GJF_TRUE			1
#define GJF_RECHECK			2

/* GjcArgs, as its bytes: the launch copies sizeof(GjcArgs) from the struct */
struct __align__(8) GjfArgs
{
	unsigned char b[GJF_ARGS_SIZE];
};

#define GJF_AT(type, off)	(*(type const *) (a.b + (off)))
#define GJF_VALUES(side, c) GJF_AT(int64_t *, (side) + GJF_OFF_VALUES + 8 * (c))
#define GJF_ISNULL(side, c) GJF_AT(uint8_t *, (side) + GJF_OFF_ISNULL + 8 * (c))

template <int MODE>
static __device__ __forceinline__ void
gjf_body(const GjfArgs &a)
{
	__shared__ int64_t svalues[GJF_NINNER][GJF_LEN];
	__shared__ int32_t svalues32[GJF_NINNER32][GJF_LEN32];
	__shared__ uint8_t snull[GJF_NINNER_NULLS][GJF_LEN_NULLS];
	const int64_t nrows = GJF_AT(int64_t, GJF_OFF_NROWS);
	const int64_t ninner = GJF_AT(int64_t, GJF_OFF_NINNER);
	const int64_t slice_len = GJF_AT(int64_t, GJF_OFF_SLICE_LEN);
	const int64_t nslices = GJF_AT(int64_t, GJF_OFF_NSLICES);
	int64_t		first = (int64_t) blockIdx.x * (GJF_BLOCK * GJF_ROWS) + threadIdx.x;
	int64_t		slice_begin = (int64_t) blockIdx.y * slice_len;
	int64_t		slice_end = slice_begin + slice_len < ninner ? slice_begin + slice_len : ninner;
	int64_t		ov[GJF_ROWS][8];
	uint8_t		onull[GJF_ROWS][8];
	bool		valid[GJF_ROWS];
	uint32_t	count[GJF_ROWS];
	uint32_t	host[GJF_ROWS];
	unsigned long long pos[GJF_ROWS];
	uint32_t	mword[GJF_ROWS];
	uint32_t	rword[GJF_ROWS];
	unsigned long long sum = 0;
	unsigned long long host_sum = 0;

	/* the outer rows' columns; a row past the end counts nothing */
#pragma unroll
	for (int r = 0; r < GJF_ROWS; r++)
	{
		int64_t		j = first + r * GJF_BLOCK;
		int64_t		row = GJF_AT(int64_t, GJF_OFF_O_BEGIN) + j -
			GJF_AT(int64_t, GJF_OFF_OUTER_BASE);

		valid[r] = j < nrows;
		count[r] = host[r] = 0;
		mword[r] = rword[r] = 0;
		pos[r] = 0;
		if (MODE == GJF_MODE_PAIR_WRITE && valid[r])
			pos[r] = GJF_AT(unsigned long long *, GJF_OFF_SCRATCH)[j * nslices + blockIdx.y];
		if (valid[r])
			GJF_LOAD_OUTER(r, row);
		else
			GJF_ZERO_OUTER(r);
	}

	for (int64_t ib = slice_begin; ib < slice_end; ib += GJF_CHUNK)
	{
		int			n = slice_end - ib < GJF_CHUNK ? (int) (slice_end - ib) : GJF_CHUNK;

		__syncthreads();		/* everyone is done with the previous chunk */
#pragma unroll 1
		for (int t = threadIdx.x; t < n; t += GJF_BLOCK)
			GJF_STAGE(t);
		__syncthreads();

#pragma unroll 1
		for (int t = 0; t < n; t++)
		{
			int64_t		iv[8];
			uint8_t		inull[8];

			GJF_READ_INNER(t);
#pragma unroll
			for (int r = 0; r < GJF_ROWS; r++)
			{
				int			res = gjf_eval(ov[r], onull[r], iv, inull);

				if (MODE == GJF_MODE_COUNT)
				{
					count[r] += res == GJF_TRUE;
					host[r] += res == GJF_RECHECK;
				}
				else if (MODE == GJF_MODE_PAIR_COUNT)
					count[r] += res != GJF_FALSE;	/* a recheck is returned, flagged */
				else if (MODE == GJF_MODE_BITS)
				{
					mword[r] |= (uint32_t) (res != GJF_FALSE) << (t & 31);
					rword[r] |= (uint32_t) (res == GJF_RECHECK) << (t & 31);
				}
				else if (valid[r] && res != GJF_FALSE)
				{
					GJF_AT(uint32_t *, GJF_OFF_OUT_OUTER)[pos[r]] =
						(GJF_AT(uint32_t, GJF_OFF_OUTER_FIRST) + (uint32_t) (first + r * GJF_BLOCK)) |
						(res == GJF_RECHECK ? GJF_PAIR_RECHECK : 0u);
					GJF_AT(uint32_t *, GJF_OFF_OUT_INNER)[pos[r]] =
						GJF_AT(uint32_t, GJF_OFF_INNER_FIRST) + (uint32_t) (ib + t);
					pos[r]++;
				}
			}

			/*
			 * the verdicts of 32 inner rows are done (chunks start at
			 * multiples of 32): word w of row j at w * nrows + j
			 */
			if (MODE == GJF_MODE_BITS && (((t & 31) == 31) | (t == n - 1)))
			{
#pragma unroll
				for (int r = 0; r < GJF_ROWS; r++)
				{
					int64_t		j = first + r * GJF_BLOCK;
					int64_t		w = (ib + t) / 32 * nrows + j;

					if (j < nrows)
					{
						GJF_AT(uint32_t *, GJF_OFF_MATCH_BITS)[w] = mword[r];
						GJF_AT(uint32_t *, GJF_OFF_RECHECK_BITS)[w] = rword[r];
					}
					mword[r] = rword[r] = 0;
				}
			}
		}
	}

	if (MODE == GJF_MODE_PAIR_WRITE || MODE == GJF_MODE_BITS)
		return;
	if (MODE == GJF_MODE_PAIR_COUNT)
	{
		/* every row stores its entry: the scratch is not cleared */
#pragma unroll
		for (int r = 0; r < GJF_ROWS; r++)
		{
			int64_t		j = first + r * GJF_BLOCK;

			if (j < nrows)
				GJF_AT(unsigned long long *, GJF_OFF_SCRATCH)[j * nslices + blockIdx.y] =
					count[r];
		}
		return;
	}
#pragma unroll
	for (int r = 0; r < GJF_ROWS; r++)
	{
		unsigned long long *counts = GJF_AT(unsigned long long *, GJF_OFF_COUNTS);

		if (!valid[r])
			continue;
		if (counts != NULL && count[r] != 0)
			atomicAdd(&counts[first + r * GJF_BLOCK], (unsigned long long) count[r]);
		sum += count[r];
		host_sum += host[r];
	}
	if (sum != 0)
		atomicAdd(GJF_AT(unsigned long long *, GJF_OFF_TOTAL), sum);
	if (host_sum != 0)
		atomicAdd(GJF_AT(unsigned long long *, GJF_OFF_HOST), host_sum);
}

#if GJF_KIND == 1
extern "C" __global__ void __launch_bounds__(GJF_BLOCK)
gjc_count_kernel(const GjfArgs a)
{
	gjf_body<GJF_MODE_COUNT>(a);
}
#elif GJF_KIND == 4
extern "C" __global__ void __launch_bounds__(GJF_BLOCK)
gjc_bits_kernel(const GjfArgs a)
{
	gjf_body<GJF_MODE_BITS>(a);
}
#else
/* built apart, as compiled_count.cuh's (GJF_PAIRS_PART) */
#if !defined(GJF_PAIRS_PART) || GJF_PAIRS_PART == 0
extern "C" __global__ void __launch_bounds__(GJF_BLOCK)
gjc_pairs_count_kernel(const GjfArgs a)
{
	gjf_body<GJF_MODE_PAIR_COUNT>(a);
}
#endif
#if !defined(GJF_PAIRS_PART) || GJF_PAIRS_PART == 1
extern "C" __global__ void __launch_bounds__(GJF_BLOCK)
gjc_pairs_write_kernel(const GjfArgs a)
{
	gjf_body<GJF_MODE_PAIR_WRITE>(a);
}
#endif
#endif

#endif							/* GPUJOIN_COMPILED_FLAT_CUH */

/*-------------------------------------------------------------------------
 *
 * compiled_args.h
 *	  The arguments of the compiled kernels (cuda/compiled_count.cuh and
 *	  cuda/compiled_flat.cuh) and the launch constants they share with
 *	  their launches (cuda_program_count.cu, cuda_nestloop.cu, cuda_agg.cu,
 *	  cuda_sorted.cu).
 *
 * Plain C, read by nvcc, by NVRTC (cuda_compile.cu hands it the text) and
 * by the host's compiler: shared/flat_program.c writes the layout of
 * GjcArgs into a flat kernel's source as byte offsets, and kernel_test
 * runs flat kernels on the host over it (kt_flat.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_COMPILED_ARGS_H
#define GPUJOIN_COMPILED_ARGS_H

#include "kernels/device_program.h"

/*
 * Threads a block, and inner rows a kernel stages at a time: the slices of
 * an inner tile that a grid's blockIdx.y spans are multiples of GJC_CHUNK
 * rows (a flat kernel stages a divisor of it), and a chunk starts at a
 * multiple of 32 (the verdict kernels' words).
 */
#define GJC_BLOCK			256
#define GJC_CHUNK			1024

/* Arguments of gjc_count_kernel; the same layout for nvcc and NVRTC. */
typedef struct GjcArgs
{
	GjKeyColumns outer;			/* device columns; row r at [r - outer_base] */
	GjKeyColumns inner;			/* the tile's inner rows from [0] */
	int64_t		outer_base;
	int64_t		o_begin;		/* first outer row counted */
	int64_t		nrows;
	int64_t		ninner;
	int64_t		slice_len;		/* a multiple of GJC_CHUNK */
	unsigned long long *counts; /* per outer row, zeroed; NULL: total only */
	unsigned long long *total;	/* zeroed */
	unsigned long long *host;	/* zeroed */
	/* the pairs kernels (GJ_COMPILED_PAIRS) */
	unsigned long long *scratch;	/* per (outer row, slice): count out, offset in */
	int64_t		nslices;
	uint32_t   *out_outer;		/* GJC_PAIR_RECHECK | outer_first + row */
	uint32_t   *out_inner;		/* inner_first + the tile's row */
	uint32_t	outer_first;
	uint32_t	inner_first;
	/*
	 * the verdict kernel (GJ_COMPILED_BITS): the bit of row j and the
	 * tile's inner row c in word (c / 32) * nrows + j, so that the words a
	 * warp's rows store together are adjacent
	 */
	uint32_t   *match_bits;
	uint32_t   *recheck_bits;
} GjcArgs;

/*
 * Arguments of the sorted count kernel (GJC_KIND 3) and of cuda_sorted.cu's
 * interpreted one: the candidate pairs of a sort-merge or hash step, one a
 * thread.  Candidate t belongs to step row j = gjc_pair_row(cand_off, t),
 * outer row outer_perm[o_begin + j], inner row inner_perm[first[j] + t -
 * cand_off[j]].  The pass counts each row's matches (a pair the host must
 * recheck is a match, returned flagged) and, where match_bits is set,
 * leaves each candidate's verdict in two bitmaps, a 32-bit word per 32
 * candidates, so that the write pass selects the matches without
 * evaluating the program again.
 */
typedef struct GjcSortedArgs
{
	GjKeyColumns outer;			/* device columns of the whole side, by row */
	GjKeyColumns inner;
	const uint32_t *outer_perm; /* position -> row */
	const uint32_t *inner_perm;
	const uint32_t *first;		/* per step row */
	const uint64_t *cand_off;	/* per step row, scanned */
	int64_t		o_begin;
	int64_t		nrows;
	const uint64_t *npairs_at;	/* candidates to evaluate, on the device */
	unsigned long long *count;	/* per step row: matches, zeroed */
	uint32_t   *match_bits;		/* per candidate: matches (NULL: none kept) */
	uint32_t   *recheck_bits;	/* per candidate: the host must recheck */
} GjcSortedArgs;

#endif							/* GPUJOIN_COMPILED_ARGS_H */

/*-------------------------------------------------------------------------
 *
 * kt_common.h
 *	  Shared by the files of kernel_test (see kernel_test.c): the sides,
 *	  programs, join specs, tile schedules and pair sets the tests run on,
 *	  the TAP-style reporting, the input generators, the spec builders
 *	  (kt_specs.c) and the schedule runner (kt_common.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef KT_COMMON_H
#define KT_COMMON_H

#include "kernels/backend.h"
#include "kernels/agg_reduce.h"

#define N_OUTER		3000
#define N_INNER		2500
#define NCOLS		3			/* 0: int, 1: float, 2: int near INT32_MAX */

typedef struct Side
{
	int64_t		nrows;
	int64_t    *values[NCOLS];
	uint8_t    *isnull[NCOLS];
	GjKeyColumns cols;
} Side;

typedef struct Program
{
	const char *name;
	int			ninstrs;
	GjInstr		instrs[GJ_MAX_INSTRS];
} Program;

/* A join: its algorithm, the spec of the sorted algorithms, the program. */
typedef struct JoinSpec
{
	const char *name;
	int			algorithm;
	int			filter_needed;
	GjRangeSpec range;
	GjEquiSpec	equi;
	Program		program;
} JoinSpec;

typedef struct Schedule
{
	const char *name;
	int64_t		outer_rows;		/* rows of each side the schedule covers */
	int64_t		inner_rows;
	int64_t		outer_tile;
	int64_t		inner_tile;
	int64_t		capacity;
} Schedule;

/* Pairs of one backend's run, and what its steps reported. */
typedef struct PairSet
{
	uint64_t   *pairs;			/* (outer row | recheck) << 32 | inner row */
	int64_t		n;
	int64_t		cap;
	GjStats		stats;
	int64_t		steps;
	int64_t		pruned;			/* tiles tile_can_match excluded */
	uint64_t	order;			/* fingerprint of the pairs in the order returned */
	char		problem[256];	/* a broken step contract, or "" */
} PairSet;

#define AGG_NARGS	5
#define AGG_GROUPS	7			/* groups of the outer rows */
#define AGG_INNER_GROUPS	3	/* and of the inner rows, grouping by both */
#define AGG_MAX_GROUPS	(AGG_GROUPS * AGG_INNER_GROUPS)

/*
 * How the agg_step tests group: not at all, the outer rows, both sides; or
 * count(*) alone (no arguments, no groups: a range join's runs are summed
 * on the device).
 */
#define AGG_NO_GROUPS		0
#define AGG_OUTER_GROUPS	1
#define AGG_BOTH_GROUPS		2
#define AGG_COUNT_ONLY		3
#define AGG_NGROUPINGS		4
#define AGG_GROUPED(g)		((g) == AGG_OUTER_GROUPS || (g) == AGG_BOTH_GROUPS)

/* The partials of one backend's agg_steps over a schedule. */
typedef struct AggRun
{
	GjAggPartial partial;
	int64_t		group_pairs[AGG_MAX_GROUPS];
	GjAggAcc	group_acc[AGG_MAX_GROUPS * AGG_NARGS];
	PairSet		pairs;			/* what the steps returned as pairs */
} AggRun;

/* TAP-style counters: tests reported, and those that failed (kt_common.c) */
extern int	test_number;
extern int	failures;

/* Which side and column each aggregate argument reads (kt_common.c) */
extern const int agg_arg_side[AGG_NARGS];
extern const int agg_arg_col[AGG_NARGS];

/* kt_common.c: inputs */
extern uint64_t rng(void);
extern void *xmalloc(size_t size);
extern int64_t dbits(double d);
extern void make_side(Side *side, int64_t nrows, const bool with_nulls[NCOLS]);
extern void free_side(Side *side);

/* kt_common.c: running a schedule, reporting */
extern void add_pair(PairSet *set, uint32_t outer, uint32_t inner);
extern int	cmp_u64(const void *a, const void *b);
extern bool run_schedule(const GjBackend *backend, const GjJoinInput *input,
						 const Schedule *s, PairSet *set, GjError *err);
extern void report(bool ok, const char *fmt, const char *a, const char *b);
extern void spec_input(GjJoinInput *input, const Side *outer, const Side *inner,
					   const JoinSpec *spec, int64_t capacity);

/* kt_common.c: the aggregates of the agg_step tests */
extern void agg_spec_init(GjAggSpec *spec, const Side *outer, const Side *inner,
						  uint8_t *flags[AGG_NARGS], uint32_t *groups, uint32_t *inner_groups,
						  int grouping);
extern int	agg_spec_group_count(int grouping);
extern const char *agg_grouping_name(int grouping);
extern bool run_agg_schedule(const GjBackend *backend, const GjJoinInput *input,
							 const Schedule *s, const GjAggSpec *spec, AggRun *run,
							 GjError *err);
extern bool agg_close_fsum(const GjAggAcc *x, const GjAggAcc *y);

/* kt_specs.c: programs and join specs */
extern void emit(Program *p, int op, int type, int arg, int64_t imm);
extern int	build_programs(Program *progs);
extern void nestloop_join(JoinSpec *join, const Program *prog);
extern int	build_joins(JoinSpec *specs);

/* kt_compare.c: the cuda backend against the cpu backend */
extern int	run_tests(bool quick);
extern int	run_race_tests(void);

/* kt_cpu.c: the cpu backend against a brute-force reference */
extern int	run_cpu_tests(void);

/* kt_bench.c: timings of the cuda backend (and of the cpu backend's sorted joins) */
extern int	run_bench(int64_t n);
extern int	bench_sorted(int64_t n);
extern int	bench_startup(void);
extern int	bench_prepare_inner(int64_t n);
extern int	bench_sorted_filter(int64_t n);
extern int	run_compiled_tests(bool nestloop_agg);
extern int	kt_compile_programs;
extern bool kt_expect_compiled;

/* kt_rowcount.c: per-row match counts of compare conjunctions */
extern int	rowcount_test_count(bool cuda);
extern void run_rowcount_tests(bool cuda);
extern int	runs_test_count(void);
extern void run_runs_tests(void);
extern int	bench_rowcount(int64_t n);
extern void rowcount_make_side(Side *side, int64_t nrows);
extern int	rowcount_col_type(int col);
extern void program_count_banded_side(Side *side, int64_t nrows, int64_t band, int dirty_every);
extern int	program_count_int_programs(Program *progs);
extern void rowcount_free_side(Side *side);
extern void rowcount_input(GjJoinInput *input, const Side *outer, const Side *inner,
						   const Program *prog);
extern void rowcount_random_conjunction(int n, GjCompareConjunction *conj, Program *prog);

/* kt_page_decode.c: the heap page decoder on pages built by hand, host and device */
extern int	page_decode_test_count(void);
extern void run_page_decode_tests(void);
extern int	page_decode_cuda_test_count(void);
extern void run_page_decode_cuda_tests(void);
extern int	run_page_decode_only(void);
extern int	bench_page_decode(int64_t nrows);

/* kt_program_count.c: per-row counts of any nested-loop program */
extern int	program_count_test_count(bool cuda);
extern void run_program_count_tests(bool cuda);
extern int	run_program_count_only(void);
extern int	run_program_count_quick_only(void);
extern int	bench_program_count(int64_t n);
extern void program_count_random_program(int shape, Program *prog);

/* The test hook of cuda/cuda_program_count.cu (cuda_stub.c without nvcc). */
extern bool gj_cuda_test_program_count(void *state, const GjTile *tile, int64_t o_begin,
									   int64_t rows, uint64_t *h_counts, uint64_t *total,
									   uint64_t *host_pairs, GjStats *stats, GjError *err);

/* kt_kernel_store.c: compiled kernels kept on disk */
extern int	kernel_store_test_count(void);
extern void run_kernel_store_tests(void);
extern int	run_compiled_store_tests(void);

/* kt_compiled.c */
extern int	compiled_bench_programs(Program *progs);
extern int	nvrtc_test_count(void);
extern void run_nvrtc_cpu_tests(void);

/* kt_hoist.c: 3 tests, run among run_nvrtc_cpu_tests' */
extern void run_hoist_tests(void);

/* kt_flat.c: flat_test_count() tests, among run_nvrtc_cpu_tests' */
extern int	flat_test_count(void);
extern void run_flat_tests(void);
extern int	run_flat_only(void);
extern int	run_nvrtc_tests(void);
extern int	print_compiled_source(int which, const char *flat);
extern int	bench_program_count_compiled(int64_t n, bool sweep);

#endif							/* KT_COMMON_H */

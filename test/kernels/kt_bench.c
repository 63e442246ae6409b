/*-------------------------------------------------------------------------
 *
 * kt_bench.c
 *	  The timing modes of kernel_test: "bench" (the simple-compare kernel
 *	  counting matches, a selective equi-join through run_step, and a band
 *	  and a hash join on both backends: run_bench, bench_sorted) and
 *	  "startup" (one small join per algorithm on cuda: bench_startup).
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kt_common.h"

/* A test hook of cuda/cuda_nestloop.cu, not part of the backend contract. */
extern bool gj_cuda_bench_count(void *state, const GjTile *tile, int64_t *nmatches,
								double *kernel_ms, GjError *err);

/* ---------------------------------------------------------------------
 * Benchmark
 * ---------------------------------------------------------------------
 */

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

/* Number of x in sorted[0..n) with x > key: the exact count for "key < x". */
static int64_t
count_greater(const int64_t *sorted, int64_t n, int64_t key)
{
	int64_t		lo = 0,
				hi = n;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (sorted[mid] <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return n - lo;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a;
	int64_t		y = *(const int64_t *) b;

	return (x > y) - (x < y);
}

int
run_bench(int64_t n)
{
	GjDeviceInfo info;
	GjError		err;
	GjJoinInput input;
	Program		lt,
				eq;
	GjTile		tile = {0, n, 0, n};
	int64_t    *ovals = xmalloc(sizeof(int64_t) * n);
	int64_t    *ivals = xmalloc(sizeof(int64_t) * n);
	int64_t    *sorted = xmalloc(sizeof(int64_t) * n);
	int64_t		i,
				expected = 0,
				matches,
				next;
	double		kernel_ms,
				t0,
				wall_ms;
	void	   *state;
	GjStats		stats;
	GjMatches	m;

	memset(&err, 0, sizeof(err));
	if (!gj_cuda_probe(&info, &err))
	{
		printf("no CUDA device: %s\n", err.message);
		return 1;
	}
	printf("device: %s, %d SMs, cc %d.%d, init %.1f ms\n", info.name, info.sm_count,
		   info.cc_major, info.cc_minor, info.init_ms);

	for (i = 0; i < n; i++)
	{
		ovals[i] = (int32_t) (uint32_t) rng();
		ivals[i] = (int32_t) (uint32_t) rng();
	}
	memcpy(sorted, ivals, sizeof(int64_t) * n);
	qsort(sorted, n, sizeof(int64_t), cmp_i64);
	for (i = 0; i < n; i++)
		expected += count_greater(sorted, n, ovals[i]);

	memset(&lt, 0, sizeof(lt));
	emit(&lt, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(&lt, GJOP_LOAD_INNER, 0, 0, 0);
	emit(&lt, GJOP_LT, GJ_CLASS_INT, 0, 0);

	memset(&input, 0, sizeof(input));
	input.outer.ncols = 1;
	input.outer.values[0] = ovals;
	input.outer_nrows = n;
	input.inner.ncols = 1;
	input.inner.values[0] = ivals;
	input.inner_nrows = n;
	input.instrs = lt.instrs;
	input.ninstrs = lt.ninstrs;
	input.algorithm = GJ_ALGO_NESTLOOP;
	input.match_capacity = n;
	input.budget_bytes = (int64_t) 1 << 34;

	state = gj_cuda_backend.begin_join(&input, &err);
	if (state == NULL)
	{
		printf("begin_join failed: %s\n", err.message);
		return 1;
	}
	/* the first pass uploads the columns and warms up */
	if (!gj_cuda_bench_count(state, &tile, &matches, &kernel_ms, &err))
	{
		printf("count failed: %s\n", err.message);
		return 1;
	}
	t0 = now_ms();
	if (!gj_cuda_bench_count(state, &tile, &matches, &kernel_ms, &err))
	{
		printf("count failed: %s\n", err.message);
		return 1;
	}
	wall_ms = now_ms() - t0;
	gj_cuda_backend.end_join(state);
	printf("count o.a < i.a, %lld x %lld int4 rows: %lld matches (%s), "
		   "kernel %.2f ms = %.3g pairs/s, wall %.2f ms = %.3g pairs/s\n",
		   (long long) n, (long long) n, (long long) matches,
		   matches == expected ? "correct" : "WRONG",
		   kernel_ms, (double) n * n / (kernel_ms / 1000.0),
		   wall_ms, (double) n * n / (wall_ms / 1000.0));

	/* a selective equi-join through run_step, matches copied back */
	for (i = 0; i < n; i++)
		ivals[i] = (int64_t) (rng() % (uint64_t) n);
	memset(&eq, 0, sizeof(eq));
	emit(&eq, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(&eq, GJOP_LOAD_INNER, 0, 0, 0);
	emit(&eq, GJOP_EQ, GJ_CLASS_INT, 0, 0);
	for (i = 0; i < n; i++)
		ovals[i] = (int64_t) (rng() % (uint64_t) n);
	input.instrs = eq.instrs;
	input.ninstrs = eq.ninstrs;
	state = gj_cuda_backend.begin_join(&input, &err);
	if (state == NULL)
	{
		printf("begin_join failed: %s\n", err.message);
		return 1;
	}
	memset(&stats, 0, sizeof(stats));
	matches = 0;
	t0 = now_ms();
	for (next = 0; next < n;)
	{
		if (!gj_cuda_backend.run_step(state, &tile, &next, &m, &stats, &err))
		{
			printf("run_step failed: %s\n", err.message);
			return 1;
		}
		matches += m.count;
	}
	wall_ms = now_ms() - t0;
	gj_cuda_backend.end_join(state);
	printf("run_step o.a = i.a, %lld x %lld rows: %lld matches, wall %.2f ms = %.3g pairs/s "
		   "(kernel %.2f ms, transfer %.2f ms)\n",
		   (long long) n, (long long) n, (long long) matches, wall_ms,
		   (double) n * n / (wall_ms / 1000.0), stats.kernel_ms, stats.transfer_ms);

	free(ovals);
	free(ivals);
	free(sorted);
	return matches > 0 ? 0 : 1;
}

/*
 * One sorted join through a backend, as the executor runs it on one tile:
 * begin_join (which sorts), then run_step until the tile is done.
 */
static bool
bench_sorted_once_stats(const GjBackend *backend, const GjJoinInput *input, double *ms,
						int64_t *matches, int64_t *steps, GjStats *statsp)
{
	GjTile		tile = {0, input->outer_nrows, 0, input->inner_nrows};
	int64_t		next = 0;
	GjError		err;
	GjStats		stats;
	GjMatches	m;
	void	   *state;
	double		t0 = now_ms();

	memset(&err, 0, sizeof(err));
	memset(&stats, 0, sizeof(stats));
	*matches = 0;
	*steps = 0;
	state = backend->begin_join(input, &err);
	if (state == NULL)
	{
		printf("%s begin_join failed: %s\n", backend->name, err.message);
		return false;
	}
	while (next < tile.outer_end)
	{
		if (!backend->run_step(state, &tile, &next, &m, &stats, &err))
		{
			printf("%s run_step failed: %s\n", backend->name, err.message);
			backend->end_join(state);
			return false;
		}
		*matches += m.count;
		(*steps)++;
	}
	backend->end_join(state);
	*ms = now_ms() - t0;
	if (statsp != NULL)
		*statsp = stats;
	return true;
}

static bool
bench_sorted_once(const GjBackend *backend, const GjJoinInput *input, double *ms,
				  int64_t *matches, int64_t *steps)
{
	return bench_sorted_once_stats(backend, input, ms, matches, steps, NULL);
}

/*
 * A sort-merge join over inner column 0 (int), lo <= i.a <= hi, with
 * program prog: the range part of the input.
 */
static void
band_input(GjJoinInput *input, const Program *prog, const Program *lo, const Program *hi)
{
	input->algorithm = GJ_ALGO_SORTMERGE;
	input->instrs = prog->instrs;
	input->ninstrs = prog->ninstrs;
	input->range.inner_col = 0;
	input->range.cls = GJ_CLASS_INT;
	memcpy(input->range.lo_instrs, lo->instrs, sizeof(GjInstr) * lo->ninstrs);
	input->range.lo_ninstrs = lo->ninstrs;
	input->range.lo_inclusive = 1;
	memcpy(input->range.hi_instrs, hi->instrs, sizeof(GjInstr) * hi->ninstrs);
	input->range.hi_ninstrs = hi->ninstrs;
	input->range.hi_inclusive = 1;
}

/*
 * A band join "i.a BETWEEN o.a - 2 AND o.a + 2" (keys uniform in [0, 4n),
 * about 1.25 n matches) and a hash join "o.a = i.a" (keys uniform in
 * [0, n), about n matches), n x n rows, on both backends.  keys/s counts
 * the rows of both sides per second of begin_join plus all steps.
 */
int
bench_sorted(int64_t n)
{
	int64_t    *ovals = xmalloc(sizeof(int64_t) * n);
	int64_t    *ivals = xmalloc(sizeof(int64_t) * n);
	GjJoinInput input;
	Program		band,
				eq,
				lo,
				hi;
	int			which,
				b;
	int64_t		i;
	int			rc = 0;

	memset(&lo, 0, sizeof(lo));
	emit(&lo, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(&lo, GJOP_CONST, 0, 0, 2);
	emit(&lo, GJOP_SUB, GJT_INT8, 0, 0);
	memset(&hi, 0, sizeof(hi));
	emit(&hi, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(&hi, GJOP_CONST, 0, 0, 2);
	emit(&hi, GJOP_ADD, GJT_INT8, 0, 0);
	memset(&band, 0, sizeof(band));
	emit(&band, GJOP_LOAD_INNER, 0, 0, 0);
	memcpy(&band.instrs[1], lo.instrs, sizeof(GjInstr) * 3);
	band.ninstrs = 4;
	emit(&band, GJOP_GE, GJ_CLASS_INT, 0, 0);
	emit(&band, GJOP_LOAD_INNER, 0, 0, 0);
	memcpy(&band.instrs[6], hi.instrs, sizeof(GjInstr) * 3);
	band.ninstrs = 9;
	emit(&band, GJOP_LE, GJ_CLASS_INT, 0, 0);
	emit(&band, GJOP_AND, 0, 0, 0);
	memset(&eq, 0, sizeof(eq));
	emit(&eq, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(&eq, GJOP_LOAD_INNER, 0, 0, 0);
	emit(&eq, GJOP_EQ, GJ_CLASS_INT, 0, 0);

	for (which = 0; which < 2; which++)
	{
		uint64_t	range = which == 0 ? 4 * (uint64_t) n : (uint64_t) n;

		for (i = 0; i < n; i++)
		{
			ovals[i] = (int64_t) (rng() % range);
			ivals[i] = (int64_t) (rng() % range);
		}
		memset(&input, 0, sizeof(input));
		input.outer.ncols = 1;
		input.outer.values[0] = ovals;
		input.outer_nrows = n;
		input.inner.ncols = 1;
		input.inner.values[0] = ivals;
		input.inner_nrows = n;
		input.match_capacity = 4 * n;
		input.budget_bytes = (int64_t) 1 << 34;
		if (which == 0)
		{
			band_input(&input, &band, &lo, &hi);
		}
		else
		{
			input.algorithm = GJ_ALGO_HASH;
			input.instrs = eq.instrs;
			input.ninstrs = eq.ninstrs;
			input.equi.nkeys = 1;
			input.equi.cls[0] = GJ_CLASS_INT;
			input.filter_needed = 1;
		}
		for (b = 0; b < 2; b++)
		{
			const GjBackend *backend = b == 0 ? &gj_cpu_backend : &gj_cuda_backend;
			double		ms = 0,
						best = 0;
			int64_t		matches = 0,
						steps = 0;
			int			run;

			/* best of 3; the first cuda run also warms up */
			for (run = 0; run < 3; run++)
			{
				if (!bench_sorted_once(backend, &input, &ms, &matches, &steps))
				{
					rc = 1;
					break;
				}
				if (run == 0 || ms < best)
					best = ms;
			}
			printf("%s %s, %lld x %lld rows: %lld matches in %lld steps, %.1f ms = %.3g keys/s\n",
				   backend->name, which == 0 ? "band i.a BETWEEN o.a - 2 AND o.a + 2" :
				   "hash o.a = i.a", (long long) n, (long long) n, (long long) matches,
				   (long long) steps, best, 2.0 * n / (best / 1000.0));
		}
	}
	free(ovals);
	free(ivals);
	return rc;
}

/*
 * startup: what one small join costs the cuda backend however few its rows
 * (begin_join, its steps, end_join), per algorithm, with the match capacity
 * the executor gives a join by default (half the free device memory, a
 * quarter of it for matches: over a billion pairs on an H100).
 */
int
bench_startup(void)
{
	static const bool nulls[NCOLS] = {false, false, false};
	static const char *const names[] = {"nestloop", "sortmerge", "hash"};
	JoinSpec   *joins = xmalloc(sizeof(JoinSpec) * 64);
	int			njoins = build_joins(joins);
	GjDeviceInfo info;
	GjError		err;
	Side		outer,
				inner;
	Program		lt;
	int			alg;

	memset(&err, 0, sizeof(err));
	if (!gj_cuda_probe(&info, &err))
	{
		printf("no CUDA device: %s\n", err.message);
		return 0;
	}
	make_side(&outer, 10, nulls);
	make_side(&inner, 10, nulls);
	memset(&lt, 0, sizeof(lt));
	emit(&lt, GJOP_LOAD_OUTER, 0, 0, 0);
	emit(&lt, GJOP_LOAD_INNER, 0, 0, 0);
	emit(&lt, GJOP_LT, GJ_CLASS_INT, 0, 0);
	printf("| algorithm | rows | match capacity | ms per join (min) | ms per join (median) |\n");
	printf("| --- | --: | --: | --: | --: |\n");
	for (alg = 0; alg < 3; alg++)
	{
		GjJoinInput input;
		double		ms[31];
		int			rep,
					i;
		const JoinSpec *spec = NULL;

		memset(&input, 0, sizeof(input));
		input.outer = outer.cols;
		input.outer_nrows = outer.nrows;
		input.inner = inner.cols;
		input.inner_nrows = inner.nrows;
		input.match_capacity = info.free_memory / 2 / 4 / 8;
		if (input.match_capacity > GJ_MAX_SIDE_ROWS)
			input.match_capacity = GJ_MAX_SIDE_ROWS;
		input.budget_bytes = info.free_memory / 2;
		input.algorithm = alg == 0 ? GJ_ALGO_NESTLOOP : alg == 1 ? GJ_ALGO_SORTMERGE : GJ_ALGO_HASH;
		input.instrs = lt.instrs;
		input.ninstrs = lt.ninstrs;
		for (i = 0; i < njoins && alg > 0; i++)
			if (joins[i].algorithm == input.algorithm && spec == NULL)
				spec = &joins[i];
		if (spec != NULL)
		{
			input.instrs = spec->program.instrs;
			input.ninstrs = spec->program.ninstrs;
			input.range = spec->range;
			input.equi = spec->equi;
			input.filter_needed = spec->filter_needed;
		}
		for (rep = 0; rep < 31; rep++)
		{
			double		t0 = now_ms();
			void	   *state = gj_cuda_backend.begin_join(&input, &err);
			GjTile		tile = {0, 10, 0, 10};
			int64_t		next = 0;
			GjStats		stats;
			GjMatches	m;

			memset(&stats, 0, sizeof(stats));
			if (state == NULL)
			{
				printf("begin_join failed: %s\n", err.message);
				return 1;
			}
			while (next < tile.outer_end)
			{
				if (!gj_cuda_backend.run_step(state, &tile, &next, &m, &stats, &err))
				{
					printf("run_step failed: %s\n", err.message);
					return 1;
				}
			}
			gj_cuda_backend.end_join(state);
			ms[rep] = now_ms() - t0;
		}
		qsort(ms, 31, sizeof(double), cmp_double);
		printf("| %s | 10 x 10 | %lld | %.3f | %.3f |\n", names[alg],
			   (long long) input.match_capacity, ms[0], ms[15]);
	}
	free_side(&outer);
	free_side(&inner);
	free(joins);
	return 0;
}

/*
 * kernel_test bench-prepare-inner [N]: the inner side of a band join of N
 * rows prepared once for several joins, as the GPU service does for a
 * parallel plan's processes (prepare_inner, then release_inner), and a
 * join of N outer rows that borrows it opened and closed (begin_join, which
 * sorts the outer side, and end_join); milliseconds, the best and the
 * median of 11 after a warm-up.  The spec is kernel_test's first range band
 * (int4, i.a BETWEEN o.a - 5 AND o.a + 5).
 */
int
bench_prepare_inner(int64_t n)
{
	static const bool nulls[NCOLS] = {false, false, false};
	JoinSpec   *joins = xmalloc(sizeof(JoinSpec) * 64);
	int			njoins = build_joins(joins);
	const JoinSpec *band = NULL;
	GjDeviceInfo info;
	GjError		err;
	Side		outer,
				inner;
	GjJoinInput input;
	double		prep[12],
				open[12];

	memset(&err, 0, sizeof(err));
	if (!gj_cuda_probe(&info, &err))
	{
		printf("no CUDA device: %s\n", err.message);
		free(joins);
		return 0;
	}
	for (int i = 0; i < njoins && band == NULL; i++)
		if (strncmp(joins[i].name, "range band i.a", 14) == 0)
			band = &joins[i];
	if (band == NULL)
	{
		printf("no band join among kernel_test's joins\n");
		free(joins);
		return 1;
	}
	make_side(&outer, n, nulls);
	make_side(&inner, n, nulls);
	spec_input(&input, &outer, &inner, band, n);
	input.budget_bytes = info.free_memory / 2;
	for (int rep = 0; rep < 12; rep++)
	{
		double		t0 = now_ms();
		const void *prepared = gj_cuda_backend.prepare_inner(&input, &err);
		GjJoinInput borrowing = input;
		void	   *state;

		if (prepared == NULL)
		{
			printf("prepare_inner failed: %s\n", err.message);
			return 1;
		}
		prep[rep] = now_ms() - t0;
		borrowing.prepared_inner = prepared;
		t0 = now_ms();
		state = gj_cuda_backend.begin_join(&borrowing, &err);
		if (state == NULL)
		{
			printf("begin_join failed: %s\n", err.message);
			return 1;
		}
		gj_cuda_backend.end_join(state);
		open[rep] = now_ms() - t0;
		gj_cuda_backend.release_inner(prepared);
	}
	/* the first is the warm-up */
	qsort(prep + 1, 11, sizeof(double), cmp_double);
	qsort(open + 1, 11, sizeof(double), cmp_double);
	printf("| what | rows | ms (best) | ms (median) |\n| --- | --: | --: | --: |\n");
	printf("| prepare_inner + release_inner | %lld | %.3f | %.3f |\n", (long long) n,
		   prep[1], prep[6]);
	printf("| begin_join borrowing it + end_join | %lld | %.3f | %.3f |\n", (long long) n,
		   open[1], open[6]);
	free_side(&outer);
	free_side(&inner);
	free(joins);
	return 0;
}

/*
 * kernel_test bench-sorted-filter [N]: the filtered steps of a band join
 * (cuda_sorted.cu), N x N rows, "i.a BETWEEN o.a - 500 AND o.a + 500" over
 * keys uniform in [0, 4N) (about 250 candidates an outer row) and a
 * residual qual the device program decides for each candidate: an int4 sum
 * (o.b + i.b > 1900000000, about 0.1% of them) and a float8 product
 * (o.f * i.f < 0.01, about 5%).  On cuda, with the program interpreted
 * (gpujoin.compile_programs = off) and compiled (always: the first run
 * compiles, the best of the three after it is printed); candidates/s
 * counts the candidates the steps evaluated per second of begin_join and
 * every step.
 */
int
bench_sorted_filter(int64_t n)
{
	static const char *const names[] = {"o.b + i.b > 1900000000 (int4)",
	"o.f * i.f < 0.01 (float8)"};
	int64_t    *a_o = xmalloc(sizeof(int64_t) * n),
			   *a_i = xmalloc(sizeof(int64_t) * n),
			   *b_o = xmalloc(sizeof(int64_t) * n),
			   *b_i = xmalloc(sizeof(int64_t) * n),
			   *f_o = xmalloc(sizeof(int64_t) * n),
			   *f_i = xmalloc(sizeof(int64_t) * n);
	GjDeviceInfo info;
	GjError		err;
	Program		lo,
				hi,
				prog;
	int			rc = 0;

	memset(&err, 0, sizeof(err));
	if (!gj_cuda_probe(&info, &err))
	{
		printf("no CUDA device: %s\n", err.message);
		return 0;
	}
	for (int64_t i = 0; i < n; i++)
	{
		a_o[i] = (int64_t) (rng() % (4 * (uint64_t) n));
		a_i[i] = (int64_t) (rng() % (4 * (uint64_t) n));
		b_o[i] = (int64_t) (rng() % 2000000001) - 1000000000;
		b_i[i] = (int64_t) (rng() % 2000000001) - 1000000000;
		f_o[i] = dbits((double) (rng() % 1000000) / 1e6);
		f_i[i] = dbits((double) (rng() % 1000000) / 1e6);
	}
	memset(&lo, 0, sizeof(lo));
	emit(&lo, GJOP_LOAD_OUTER, GJT_INT8, 0, 0);
	emit(&lo, GJOP_CONST, GJT_INT8, 0, 500);
	emit(&lo, GJOP_SUB, GJT_INT8, 0, 0);
	memset(&hi, 0, sizeof(hi));
	emit(&hi, GJOP_LOAD_OUTER, GJT_INT8, 0, 0);
	emit(&hi, GJOP_CONST, GJT_INT8, 0, 500);
	emit(&hi, GJOP_ADD, GJT_INT8, 0, 0);

	printf("| residual | program | candidates | matches | steps | ms | candidates/s |\n");
	printf("| --- | --- | --: | --: | --: | --: | --: |\n");
	for (int which = 0; which < 2; which++)
	{
		GjJoinInput input;

		/* the band's compares, then the residual, all ANDed */
		memset(&prog, 0, sizeof(prog));
		emit(&prog, GJOP_LOAD_INNER, GJT_INT8, 0, 0);
		for (int k = 0; k < 3; k++)
			prog.instrs[prog.ninstrs++] = lo.instrs[k];
		emit(&prog, GJOP_GE, GJ_CLASS_INT, 0, 0);
		emit(&prog, GJOP_LOAD_INNER, GJT_INT8, 0, 0);
		for (int k = 0; k < 3; k++)
			prog.instrs[prog.ninstrs++] = hi.instrs[k];
		emit(&prog, GJOP_LE, GJ_CLASS_INT, 0, 0);
		emit(&prog, GJOP_AND, GJT_BOOL, 0, 0);
		if (which == 0)
		{
			emit(&prog, GJOP_LOAD_OUTER, GJT_INT4, 1, 0);
			emit(&prog, GJOP_LOAD_INNER, GJT_INT4, 1, 0);
			emit(&prog, GJOP_ADD, GJT_INT4, 0, 0);
			emit(&prog, GJOP_CONST, GJT_INT4, 0, 1900000000);
			emit(&prog, GJOP_GT, GJ_CLASS_INT, 0, 0);
		}
		else
		{
			emit(&prog, GJOP_LOAD_OUTER, GJT_FLOAT8, 2, 0);
			emit(&prog, GJOP_LOAD_INNER, GJT_FLOAT8, 2, 0);
			emit(&prog, GJOP_MUL, GJT_FLOAT8, 0, 0);
			emit(&prog, GJOP_CONST, GJT_FLOAT8, 0, dbits(0.01));
			emit(&prog, GJOP_LT, GJ_CLASS_FLOAT, 0, 0);
		}
		emit(&prog, GJOP_AND, GJT_BOOL, 0, 0);

		memset(&input, 0, sizeof(input));
		input.outer.ncols = 3;
		input.outer.values[0] = a_o;
		input.outer.values[1] = b_o;
		input.outer.values[2] = f_o;
		input.outer_nrows = n;
		input.inner.ncols = 3;
		input.inner.values[0] = a_i;
		input.inner.values[1] = b_i;
		input.inner.values[2] = f_i;
		input.inner_nrows = n;
		input.match_capacity = (int64_t) 1 << 26;
		input.budget_bytes = (int64_t) 1 << 34;
		band_input(&input, &prog, &lo, &hi);
		input.filter_needed = 1;
		for (int mode = 0; mode < 2; mode++)
		{
			double		best = 0;
			int64_t		matches = 0,
						steps = 0,
						candidates = 0;

			input.compile_programs = mode == 0 ? GJ_COMPILE_OFF : GJ_COMPILE_ALWAYS;
			for (int run = 0; run < 4; run++)
			{
				double		ms;
				GjStats		stats;

				if (!bench_sorted_once_stats(&gj_cuda_backend, &input, &ms, &matches, &steps,
											 &stats))
				{
					rc = 1;
					break;
				}
				candidates = stats.pairs_evaluated;
				if (mode == 1 && stats.program_steps_interpreted > 0)
					printf("# run %d: %lld steps interpreted\n", run,
						   (long long) stats.program_steps_interpreted);
				if (run == 1 || (run > 1 && ms < best))
					best = ms;
			}
			if (rc != 0)
				break;
			printf("| %s | %s | %lld | %lld | %lld | %.1f | %.3g |\n", names[which],
				   mode == 0 ? "interpreted" : "compiled", (long long) candidates,
				   (long long) matches, (long long) steps, best,
				   (double) candidates / (best / 1000.0));
		}
	}
	free(a_o);
	free(a_i);
	free(b_o);
	free(b_i);
	free(f_o);
	free(f_i);
	return rc;
}

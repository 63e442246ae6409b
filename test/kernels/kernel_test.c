/*-------------------------------------------------------------------------
 *
 * kernel_test.c
 *	  Standalone test of the cuda backend against the cpu backend, without a
 *	  server: both run the same programs over the same tile schedules, and
 *	  their (outer row, inner row) pairs, recheck flag included, must be
 *	  identical as multisets.  Prints TAP; exits non-zero on any failure.
 *	  Without a usable CUDA device (CI, or a build without the CUDA Toolkit)
 *	  the default run is the cpu mode below, and the other modes skip.
 *
 *	  The nested-loop programs, and sort-merge/range and hash joins (range
 *	  specs with < <= > >=, two bounds, bands, unbounded sides, bounds that
 *	  overflow, NULLs, NaN, -0.0, duplicates; hash joins on 1-3 keys, skewed
 *	  keys, programs stricter than the hash keys), each over tile schedules
 *	  from one tile to hundreds of tiles with match buffers so small that
 *	  tiles are split into many steps.  Both backends prune tiles with their
 *	  own tile_can_match, and must prune the same tiles.  The row counts of
 *	  compare conjunctions (gj_cuda_rowcount) are checked against a
 *	  brute-force reference, and the heap page decoder on the device
 *	  (cuda_page_decode.cu) against the host's, row for row.
 *
 *	  kernel_test			the correctness tests (the cpu tests without a GPU)
 *	  kernel_test cpu		the cpu backend alone against a brute-force
 *							reference (every pair through the interpreter):
 *							the programs, sort-merge and hash joins over the
 *							tile schedules, the join types' matched rows,
 *							agg_step partials, the error path, tile
 *							pruning, the row counts of compare
 *							conjunctions (the conjunction loop, the
 *							dominance counter), and NVRTC's compiles of
 *							the bench's programs (kt_compiled.c; they
 *							skip without libnvrtc), and the heap page
 *							decoder on pages built by hand (page by page,
 *							and in batches as cpu_page_decode.c decodes
 *							them), and the kernel store's files; ends
 *							"kernel_test: N passed, N failed"
 *	  kernel_test quick		the sorted joins on the schedules with few steps
 *							(for compute-sanitizer)
 *	  kernel_test race		every kernel on sides of a few hundred rows (for
 *							compute-sanitizer racecheck, which cannot finish
 *							the full-size tests)
 *	  kernel_test startup	time a 10 x 10 join per algorithm on cuda, whole
 *							(begin_join, steps, end_join)
 *	  kernel_test compiled-sorted
 *							the sorted joins on cuda with their programs
 *							compiled (gpujoin.compile_programs = always)
 *							against the cpu backend, every filtered step
 *							run compiled (a GPU and NVRTC)
 *	  kernel_test compiled-agg
 *							each program's nested-loop aggregate steps on
 *							cuda, compiled, against the cpu backend: the
 *							folds read the verdict kernel's bits
 *	  kernel_test bench-sorted-filter [N]
 *							time a band join's filtered steps on cuda, N x
 *							N rows, with residual quals interpreted and
 *							compiled
 *	  kernel_test bench-prepare-inner [N]
 *							time a band join's inner side of N rows (1M)
 *							prepared for several joins on cuda, and a join
 *							that borrows it opened and closed
 *	  kernel_test bench [N]	time the simple-compare kernel "o.a < i.a" on
 *							N x N int4-valued rows (default 1M), counting
 *							matches only, a selective equi-join through
 *							run_step end to end, a band join and a hash
 *							join through begin_join and run_step on both
 *							backends, N x N and 4N x 4N rows, and the row
 *							counts of "o.a < i.a AND o.b > i.b" (below)
 *	  kernel_test bench-rowcount [N]
 *							the row counts alone, N x N int4 rows: the cpu
 *							conjunction loop (int4 and int8 keys, one core),
 *							the dominance counter, and gj_cuda_rowcount
 *							(total only, and per-row counts) on a GPU
 *	  kernel_test program-count
 *							the program count tests alone (below), with
 *							cuda where there is a GPU
 *	  kernel_test compiled-store
 *							kernel_test's programs compiled into a kernel
 *							store, loaded back by a "new process" (the
 *							process's cache forgotten) and compiled again
 *							where the files are damaged (a GPU and NVRTC)
 *	  kernel_test program-count-quick
 *							the quick compiled kernels' checks alone (the
 *							last of program-count's; a GPU and NVRTC)
 *	  kernel_test bench-program-count [N [rows]]
 *							the row counts of "o.x < i.x AND o.y > i.y AND
 *							o.x + i.y > 0" (leading compares, then the
 *							interpreter), cpu (one core) and cuda; then a
 *							table of programs of up to 8 operators over
 *							int4, int8 and float8 on cuda: the compiled
 *							variant (compiled32, compiled64,
 *							compiled32/64), interpreted and compiled
 *							pairs/s, compile ms cold and warm; with
 *							"rows", the compiled pairs/s by outer rows a
 *							thread
 *	  kernel_test page-decode
 *							the heap page decoder alone: the host's on pages
 *							built by hand (as in cpu), then the device's
 *							(cuda_page_decode.cu) against the host's, row for
 *							row (those skip without a GPU)
 *	  kernel_test bench-page-decode [N]
 *							rows decoded a second from all-visible pages of
 *							N rows (default 10M) of int4, int8, float8 and
 *							(int4, float8) tables: the host's decoder on one
 *							core, and on the device the decode alone, the
 *							pages' copy from pinned memory, the two one after
 *							the other, and overlapped in batches
 *	  kernel_test bench-compiled [N [rows]]
 *							bench-program-count's table of compiled
 *							programs alone
 *
 *	  In the environment, KT_HOIST=1, KT_FLAT=1 (the flat quick kernels)
 *	  and KT_NVRTC_OPTIONS (NVRTC options, e.g. -DGJC_PROVE_FLOAT=1) turn
 *	  on in every mode what compiled kernels leave off by default until it
 *	  has run on a GPU; KT_QUICK=1 makes every compiled kernel the quick
 *	  one (the flat one with KT_FLAT=1), as program-count-quick does, for
 *	  compiled-agg and the benches.
 *	  kernel_test nvrtc		without a GPU: NVRTC compiles the count kernel
 *							of every program kernel_test knows for sm_90,
 *							its PTX free of local memory (skips without
 *							libnvrtc)
 *	  kernel_test nvrtc-source N [flat]
 *							print the NVRTC source of bench program N's
 *							count kernel (with flat, its flat quick kernel)
 *	  kernel_test flat		the flat programs against the interpreter
 *							(kt_flat.c; part of cpu)
 *
 *	  This file is main and the mode dispatch.  The rest:
 *	  kt_common.h/.c	types, inputs, the schedule runner, reporting
 *	  kt_specs.c		the programs and join specs under test
 *	  kt_compare.c		cuda against cpu (default, quick, race)
 *	  kt_cpu.c			cpu against a brute-force reference (cpu)
 *	  kt_bench.c		timings (bench, startup)
 *	  kt_rowcount.c		row counts of compare conjunctions: tests (cpu, and
 *						cuda in the default mode) and bench-rowcount
 *	  kt_program_count.c	row counts of any nested-loop program (the
 *						prefilter of leading compares): tests and
 *						bench-program-count; interpreted and compiled
 *	  kt_compiled.c		programs compiled to GPU code: nvrtc, and the
 *						compiled table of bench-program-count
 *	  kt_kernel_store.c	the kernel store (shared/kernel_store.c): files
 *						written, read, damaged and capped (cpu part);
 *						compiled-store runs programs compiled, stored
 *						and loaded back on a GPU (kt_program_count.c)
 *	  kt_page_decode.c	the heap page decoder (shared/gj_page_decode.h)
 *						on random and damaged pages built by hand, on
 *						the host and on the device; bench-page-decode
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "kt_common.h"

extern void gj_cuda_test_set_hoisting(bool on);
extern void gj_cuda_test_set_flat(bool on);
extern void gj_cuda_test_set_quick_only(bool on);
extern void gj_cuda_test_set_compile_options(const char *options);

int
main(int argc, char **argv)
{
	/*
	 * What compiled kernels leave off by default until it has run on a
	 * GPU: KT_HOIST=1 hoists the inner row's subexpressions, and
	 * KT_NVRTC_OPTIONS=-DGJC_PROVE_FLOAT=1 proves float8 sums, KT_FLAT=1
	 * makes the quick kernels flat (see cuda_compile.cu and
	 * compiled_count.cuh)
	 */
	gj_cuda_test_set_hoisting(getenv("KT_HOIST") != NULL);
	gj_cuda_test_set_flat(getenv("KT_FLAT") != NULL);
	gj_cuda_test_set_quick_only(getenv("KT_QUICK") != NULL);
	if (getenv("KT_NVRTC_OPTIONS") != NULL)
		gj_cuda_test_set_compile_options(getenv("KT_NVRTC_OPTIONS"));
	if (argc >= 2 && strcmp(argv[1], "bench") == 0)
	{
		int64_t		n = argc >= 3 ? atoll(argv[2]) : 1000000;
		int			rc = run_bench(n);

		rc |= bench_sorted(n);
		rc |= bench_sorted(4 * n);
		rc |= bench_rowcount(n);
		rc |= bench_program_count(n);
		return rc;
	}
	if (argc >= 2 && strcmp(argv[1], "bench-rowcount") == 0)
		return bench_rowcount(argc >= 3 ? atoll(argv[2]) : 1000000);
	if (argc >= 2 && strcmp(argv[1], "program-count-quick") == 0)
		return run_program_count_quick_only();
	if (argc >= 2 && strcmp(argv[1], "compiled-store") == 0)
		return run_compiled_store_tests();
	if (argc >= 2 && strcmp(argv[1], "program-count") == 0)
		return run_program_count_only();
	if (argc >= 2 && strcmp(argv[1], "bench-program-count") == 0)
	{
		int64_t		n = argc >= 3 ? atoll(argv[2]) : 1000000;

		return bench_program_count(n) |
			bench_program_count_compiled(n, argc >= 4 && strcmp(argv[3], "rows") == 0);
	}
	if (argc >= 2 && strcmp(argv[1], "bench-compiled") == 0)
		return bench_program_count_compiled(argc >= 3 ? atoll(argv[2]) : 1000000,
											argc >= 4 && strcmp(argv[3], "rows") == 0);
	if (argc >= 2 && strcmp(argv[1], "page-decode") == 0)
		return run_page_decode_only();
	if (argc >= 2 && strcmp(argv[1], "bench-page-decode") == 0)
		return bench_page_decode(argc >= 3 ? atoll(argv[2]) : 10000000);
	if (argc >= 2 && strcmp(argv[1], "nvrtc") == 0)
		return run_nvrtc_tests();
	if (argc >= 3 && strcmp(argv[1], "nvrtc-source") == 0)
		return print_compiled_source(atoi(argv[2]), argc >= 4 ? argv[3] : "");
	if (argc >= 2 && strcmp(argv[1], "flat") == 0)
		return run_flat_only();
	if (argc >= 2 && strcmp(argv[1], "startup") == 0)
		return bench_startup();
	if (argc >= 2 && strcmp(argv[1], "bench-sorted-filter") == 0)
		return bench_sorted_filter(argc >= 3 ? atoll(argv[2]) : 1000000);
	if (argc >= 2 && strcmp(argv[1], "compiled-sorted") == 0)
		return run_compiled_tests(false);
	if (argc >= 2 && strcmp(argv[1], "compiled-agg") == 0)
		return run_compiled_tests(true);
	if (argc >= 2 && strcmp(argv[1], "bench-prepare-inner") == 0)
		return bench_prepare_inner(argc >= 3 ? atoll(argv[2]) : 1000000);
	if (argc >= 2 && strcmp(argv[1], "race") == 0)
		return run_race_tests();
	if (argc >= 2 && strcmp(argv[1], "cpu") == 0)
		return run_cpu_tests();
	return run_tests(argc >= 2 && strcmp(argv[1], "quick") == 0);
}

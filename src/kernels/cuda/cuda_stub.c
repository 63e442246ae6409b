/*-------------------------------------------------------------------------
 *
 * cuda_stub.c
 *	  The cuda backend of a build without the CUDA Toolkit: it reports that
 *	  it is absent, so gpujoin.device = auto runs on the cpu backend and
 *	  gpujoin.device = cuda is a clear ERROR.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/shared/gj_page_decode.h"

bool		gj_cuda_compiled = false;

bool
gj_cuda_probe(GjDeviceInfo *info, GjError *err)
{
	err->code = GJ_ERR_UNAVAILABLE;
	snprintf(err->message, sizeof(err->message),
			 "gpujoin was built without the CUDA Toolkit");
	return false;
}

int
gj_cuda_device_count(GjError *err)
{
	gj_cuda_probe(NULL, err);
	return 0;
}

bool
gj_cuda_probe_device(int device, GjDeviceInfo *info, GjError *err)
{
	return gj_cuda_probe(info, err);
}

static void *
stub_begin_join(const GjJoinInput *input, GjError *err)
{
	gj_cuda_probe(NULL, err);
	return NULL;
}

static bool
stub_run_step(void *state, const GjTile *tile, int64_t *outer_next,
			  GjMatches *matches, GjStats *stats, GjError *err)
{
	gj_cuda_probe(NULL, err);
	return false;
}

static void
stub_end_join(void *state)
{
}

const GjBackend gj_cuda_backend = {
	.name = "cuda",
	.begin_join = stub_begin_join,
	.run_step = stub_run_step,
	.end_join = stub_end_join,
	.algorithms = (1 << GJ_ALGO_NESTLOOP),
};

/*
 * The test hook of cuda_nestloop.cu, for test/kernels/kernel_test.c only
 * (which declares it itself: it is not part of the backend contract).
 */
extern bool gj_cuda_bench_count(void *state, const GjTile *tile, int64_t *nmatches,
								double *kernel_ms, GjError *err);

bool
gj_cuda_bench_count(void *state, const GjTile *tile, int64_t *nmatches,
					double *kernel_ms, GjError *err)
{
	return gj_cuda_probe(NULL, err);
}

/*
 * The test hook of cuda_rowcount.cu, for test/kernels/kt_rowcount.c only
 * (which declares it itself).
 */
extern bool gj_cuda_test_rowcount(void *state, const GjCompareConjunction *conj,
								  const GjTile *tile, int64_t o_begin, int64_t rows,
								  uint64_t *h_counts, uint64_t *total, GjStats *stats,
								  GjError *err);

bool
gj_cuda_test_rowcount(void *state, const GjCompareConjunction *conj, const GjTile *tile,
					  int64_t o_begin, int64_t rows, uint64_t *h_counts, uint64_t *total,
					  GjStats *stats, GjError *err)
{
	return gj_cuda_probe(NULL, err);
}

/* The test hook of cuda_backend.cu, for test/kernels/kt_compare.c only. */
extern bool gj_cuda_test_inner_borrowed(const void *state);

bool
gj_cuda_test_inner_borrowed(const void *state)
{
	return false;
}

bool
gj_cuda_pin_host(void *ptr, size_t len, GjError *err)
{
	return gj_cuda_probe(NULL, err);
}

void
gj_cuda_unpin_host(void *ptr)
{
}

void
gj_cuda_pool_retain(int device, int64_t bytes)
{
}

/* The test hook of cuda_program_count.cu, likewise. */
extern bool gj_cuda_test_program_count(void *state, const GjTile *tile, int64_t o_begin,
									   int64_t rows, uint64_t *h_counts, uint64_t *total,
									   uint64_t *host_pairs, GjStats *stats, GjError *err);

bool
gj_cuda_test_program_count(void *state, const GjTile *tile, int64_t o_begin, int64_t rows,
						   uint64_t *h_counts, uint64_t *total, uint64_t *host_pairs,
						   GjStats *stats, GjError *err)
{
	return gj_cuda_probe(NULL, err);
}

/* The test hooks of cuda_compile.cu: without the cuda backend, no NVRTC. */
extern void gj_cuda_test_fold_by_row(int mode);

void
gj_cuda_test_fold_by_row(int mode)
{
}

extern void gj_cuda_test_set_verdict_pairs(int64_t n);

void
gj_cuda_test_set_verdict_pairs(int64_t n)
{
}

extern char *gj_cuda_test_compile_program(int kind, const GjInstr *instrs, int ninstrs,
										  uint32_t outer_nullable, uint32_t inner_nullable,
										  int arch, double *ms, char *message,
										  size_t message_len);
extern const char *gj_cuda_test_nvrtc_path(void);
extern bool gj_cuda_test_compiled_source(const GjInstr *instrs, int ninstrs, char *buf,
										 size_t len);

char *
gj_cuda_test_compile_program(int kind, const GjInstr *instrs, int ninstrs,
							 uint32_t outer_nullable, uint32_t inner_nullable, int arch,
							 double *ms, char *message, size_t message_len)
{
	snprintf(message, message_len, "no NVRTC: built without the cuda backend");
	*ms = 0;
	return NULL;
}

void
gj_cuda_wait_for_compiles(void)
{
}

const char *
gj_cuda_test_nvrtc_path(void)
{
	return "";
}

bool
gj_cuda_test_compiled_source(const GjInstr *instrs, int ninstrs, char *buf, size_t len)
{
	return false;
}

/* The test hooks of cuda_page_decode.cu, for test/kernels/kt_page_decode.c only. */
extern void *gj_cuda_test_page_begin(const GjPageSpec *spec, int64_t rows_hint, GjError *err);
extern bool gj_cuda_test_page_append(void *pc, const uint8_t *pages, int64_t npages,
									 int64_t rows_bound, GjError *err);
extern bool gj_cuda_test_page_wait(void *pc, GjPageBatch *batch, GjStats *stats, GjError *err);
extern bool gj_cuda_test_page_download(void *pc, uint64_t *const *values, bool *const *isnull,
									   uint8_t *host, GjError *err);
extern bool gj_cuda_test_page_reset(void *pc, GjError *err);
extern void gj_cuda_test_page_end(void *pc);

void *
gj_cuda_test_page_begin(const GjPageSpec *spec, int64_t rows_hint, GjError *err)
{
	gj_cuda_probe(NULL, err);
	return NULL;
}

bool
gj_cuda_test_page_append(void *pc, const uint8_t *pages, int64_t npages, int64_t rows_bound,
						 GjError *err)
{
	return gj_cuda_probe(NULL, err);
}

bool
gj_cuda_test_page_wait(void *pc, GjPageBatch *batch, GjStats *stats, GjError *err)
{
	return gj_cuda_probe(NULL, err);
}

bool
gj_cuda_test_page_download(void *pc, uint64_t *const *values, bool *const *isnull,
						   uint8_t *host, GjError *err)
{
	return gj_cuda_probe(NULL, err);
}

bool
gj_cuda_test_page_reset(void *pc, GjError *err)
{
	return gj_cuda_probe(NULL, err);
}

void
gj_cuda_test_page_end(void *pc)
{
}

extern void gj_cuda_test_set_compiled_rows(int rows);

void
gj_cuda_test_set_compiled_rows(int rows)
{
}

extern void gj_cuda_test_forget_compiled(void);

void
gj_cuda_test_forget_compiled(void)
{
}

extern void gj_cuda_test_set_quick_only(bool on);

void
gj_cuda_test_set_quick_only(bool on)
{
}

extern void gj_cuda_test_set_hoisting(bool on);

void
gj_cuda_test_set_hoisting(bool on)
{
}

extern void gj_cuda_test_set_pairs_whole(bool on);

void
gj_cuda_test_set_pairs_whole(bool on)
{
}

extern void gj_cuda_test_set_flat(bool on);

void
gj_cuda_test_set_flat(bool on)
{
}

extern void gj_cuda_test_set_compile_options(const char *options);

void
gj_cuda_test_set_compile_options(const char *options)
{
}

extern int	gj_cuda_test_compiled_rows(const GjInstr *instrs, int ninstrs);

int
gj_cuda_test_compiled_rows(const GjInstr *instrs, int ninstrs)
{
	return 0;
}

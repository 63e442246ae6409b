/*-------------------------------------------------------------------------
 *
 * flat_program.h
 *	  A device program written out as straight-line C: the source of the
 *	  cuda backend's flat kernels (cuda_compile.cu), which NVRTC compiles
 *	  in a fraction of the time the templates of compiled_count.cuh take,
 *	  for the first steps of a program new to the process while its full
 *	  kernel compiles in the background.
 *
 * The text is plain C that both NVRTC and a host C compiler accept (its
 * few device-only helpers sit under __CUDACC__), so that kernel_test's cpu
 * part compiles the same function with the host's compiler and checks it
 * against the interpreter (gj_program_run_from) pair by pair: the flat
 * kernels' semantics are tested where there is no GPU.  The generator is
 * plain C too, with no CUDA in it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_FLAT_PROGRAM_H
#define GPUJOIN_FLAT_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/device_program.h"

#ifdef __cplusplus
extern "C"
{
#endif

/*
 * Can the program be written out flat?  Every instruction but float4
 * arithmetic and date arithmetic, and at most GJ_FLAT_MAX_INSTRS of them;
 * the others keep compiled_count.cuh's quick kernel.
 */
#define GJ_FLAT_MAX_INSTRS	64

/*
 * Append printf's text to buf (len bytes, *at used); false once it is
 * full.  The generated sources' writer, here and in cuda_compile.cu.
 */
extern bool gj_text_append(char *buf, size_t len, size_t *at, const char *fmt,...)
			__attribute__((format(printf, 4, 5)));

extern bool gj_flat_supported(const GjInstr *instrs, int ninstrs);

/*
 * The columns of one side a program loads (op GJOP_LOAD_OUTER or
 * GJOP_LOAD_INNER): bit c for column c.  Here and in cuda_compile.cu.
 */
extern uint32_t gj_program_loaded_columns(const GjInstr *instrs, int ninstrs, int op);

/*
 * Append to buf (len bytes, *at used) the helpers the function needs (once
 * a source, with helpers) and the function
 *
 *	GJF_FN int name(const int64_t *o, const uint8_t *on,
 *					const int64_t *i, const uint8_t *in)
 *
 * which returns the GjResult of the pair whose outer columns' values (as
 * the device columns hold them: a double as its bits) are o[c] and NULL
 * flags on[c], and inner ones i[c] and in[c], as the nested loop's kernels
 * count it: GJ_RESULT_FALSE where a leading compare
 * (gj_program_leading_compares) fails, else gj_program_eval_from's answer.
 * A flag is read only where the column may be NULL (outer_nullable,
 * inner_nullable: bit c for column c).  false if the program is not
 * supported or buf is full.
 */
extern bool gj_flat_source(const GjInstr *instrs, int ninstrs, uint32_t outer_nullable,
						   uint32_t inner_nullable, bool helpers, const char *name,
						   char *buf, size_t len, size_t *at);

/*
 * The source of a kind's flat kernels (cuda/compiled_flat.cuh; kind 1 the
 * count kernel, 2 the pairs kernels, 4 the verdicts, as GJC_KIND) for a
 * program gj_flat_supported accepts: prelude (what NVRTC lacks of the C
 * headers), the program as gj_flat_source writes it (gjf_eval), GjcArgs'
 * layout as byte offsets (compiled_args.h, so that the kernel reads the
 * struct the launch copies), the loaded columns and rows outer rows a
 * thread.  The inner rows of a chunk fill at most GJ_FLAT_STAGED_BYTES of
 * shared memory: GJC_CHUNK of them, or half or a quarter where many
 * columns are loaded.  false if it does not fit buf.
 */
#define GJ_FLAT_STAGED_BYTES	(40 * 1024)

extern bool gj_flat_kernel_source(int kind, const GjInstr *instrs, int ninstrs,
								  uint32_t outer_nullable, uint32_t inner_nullable,
								  const char *prelude, int rows, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif							/* GPUJOIN_FLAT_PROGRAM_H */

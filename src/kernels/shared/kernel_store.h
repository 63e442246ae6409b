/*-------------------------------------------------------------------------
 *
 * kernel_store.h
 *	  Compiled kernels kept on disk, so that a restarted server (or GPU
 *	  service) loads the kernels it compiled before instead of compiling
 *	  them again: a file per kernel in one directory
 *	  (gpujoin.compiled_kernel_dir), keyed by the whole text the kernel was
 *	  compiled from.
 *
 * The cuda backend's cuda_compile.cu is the only user; the store itself is
 * plain C with no CUDA in it, so that kernel_test's cpu part (and CI, which
 * has no CUDA Toolkit) tests it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_KERNEL_STORE_H
#define GPUJOIN_KERNEL_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

/*
 * Files the directory holds at most: past it, new kernels are not stored
 * (those stored stay useful).  A kernel file is 20-200 kB.
 */
#define GJ_KERNEL_STORE_FILES		1024

/* An image larger than this is neither stored nor read. */
#define GJ_KERNEL_STORE_MAX_IMAGE	(32 * 1024 * 1024)

/*
 * The directory of this process's store (relative paths are the server's
 * data directory's, the working directory of every PostgreSQL process);
 * NULL or "" turns the store off.  Any thread may call it.  A directory
 * that another user owns, or that others may write in, is not used (see
 * kernel_store.c).
 */
extern void gj_kernel_store_set_dir(const char *dir);

/* Is the store on? */
extern bool gj_kernel_store_enabled(void);

/* FNV-1a, 64 bits, of len bytes, continuing from hash (start: 0). */
extern uint64_t gj_kernel_store_hash(uint64_t hash, const void *data, size_t len);

/*
 * The image stored under key (malloc'ed into *image, its length into
 * *image_len): true only where a whole file holds exactly this key and an
 * image whose checksum matches.  A missing, truncated, damaged or foreign
 * file reads as false.
 */
extern bool gj_kernel_store_read(const char *key, size_t key_len, char **image,
								 size_t *image_len);

/*
 * Store an image under key: written to a file of its own and renamed into
 * place, so that a reader sees the old file, the new one or none.  false
 * where the store is off or full, or a write failed (nothing is left
 * behind); the caller goes on without it.
 */
extern bool gj_kernel_store_write(const char *key, size_t key_len, const char *image,
								  size_t image_len);

#ifdef __cplusplus
}
#endif

#endif							/* GPUJOIN_KERNEL_STORE_H */

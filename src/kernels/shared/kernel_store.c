/*-------------------------------------------------------------------------
 *
 * kernel_store.c
 *	  Compiled kernels kept on disk (see kernel_store.h).
 *
 * A file per kernel, named by the 64-bit FNV-1a hash of its key
 * ("0123456789abcdef.gjk"), holding a header, the whole key and the
 * image.  A reader trusts a file only where its key equals the one it
 * asks for byte for byte and the image's checksum matches: two keys with
 * one hash share a file name, and the later writer's kernel replaces the
 * earlier's, but neither is ever loaded for the other.  A file is written
 * under a name of its own and renamed into place, so that concurrent
 * writers of one kernel (two backends, the GPU service's threads) and
 * readers see a whole file or none; a file damaged on disk reads as
 * missing, and the kernel is compiled and written again.
 *
 * Nothing here is synced to disk: a kernel lost in a crash is compiled
 * again, which is all the store saves.
 *
 * A stored kernel runs on the GPU in the server's processes, and the key and
 * checksum are no defence against a file planted on purpose (the key is the
 * program's source, the checksum is not cryptographic).  So the directory is
 * used only where this process's user owns it and nobody else may write in
 * it, as ssh treats its keys; a file is read only where it is a regular file
 * of that user, not through a symbolic link.  The default directory, in the
 * data directory, is always so.
 *
 *-------------------------------------------------------------------------
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/shared/kernel_store.h"

#define STORE_MAGIC		"GJKERN01"
#define STORE_SUFFIX	".gjk"

typedef struct StoreHeader
{
	char		magic[8];
	uint32_t	key_len;
	uint32_t	image_len;
	uint64_t	key_hash;
	uint64_t	image_hash;
} StoreHeader;

static pthread_mutex_t store_lock = PTHREAD_MUTEX_INITIALIZER;
static char store_dir[1024];

void
gj_kernel_store_set_dir(const char *dir)
{
	pthread_mutex_lock(&store_lock);
	if (dir == NULL || strlen(dir) >= sizeof(store_dir))
		store_dir[0] = '\0';
	else
		snprintf(store_dir, sizeof(store_dir), "%s", dir);
	pthread_mutex_unlock(&store_lock);
}

/* A copy of the directory (the GUC's assign hook may change it meanwhile). */
static bool
store_dir_copy(char *dir, size_t len)
{
	pthread_mutex_lock(&store_lock);
	snprintf(dir, len, "%s", store_dir);
	pthread_mutex_unlock(&store_lock);
	return dir[0] != '\0';
}

bool
gj_kernel_store_enabled(void)
{
	char		dir[sizeof(store_dir)];

	return store_dir_copy(dir, sizeof(dir));
}

uint64_t
gj_kernel_store_hash(uint64_t hash, const void *data, size_t len)
{
	const unsigned char *p = (const unsigned char *) data;

	if (hash == 0)
		hash = UINT64_C(0xcbf29ce484222325);
	for (size_t i = 0; i < len; i++)
	{
		hash ^= p[i];
		hash *= UINT64_C(0x100000001b3);
	}
	return hash;
}

/* May the store use dir (see the header comment)? */
static bool
dir_trusted(const char *dir)
{
	struct stat st;

	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
		(st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

/* The file of a key in dir; false where the path does not fit. */
static bool
store_path(const char *dir, uint64_t key_hash, char *path, size_t len)
{
	int			n = snprintf(path, len, "%s/%016llx%s", dir,
							 (unsigned long long) key_hash, STORE_SUFFIX);

	return n > 0 && (size_t) n < len;
}

/*
 * read(2) or write(2) all of len bytes at buf; false at an error or, in a
 * read, the file's end.  (A write only reads buf.)
 */
static bool
transfer_all(int fd, void *buf, size_t len, bool writing)
{
	char	   *p = (char *) buf;

	while (len > 0)
	{
		ssize_t		n = writing ? write(fd, p, len) : read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t) n;
	}
	return true;
}

bool
gj_kernel_store_read(const char *key, size_t key_len, char **image, size_t *image_len)
{
	char		dir[sizeof(store_dir)];
	char		path[sizeof(store_dir) + 32];
	uint64_t	key_hash = gj_kernel_store_hash(0, key, key_len);
	StoreHeader hdr;
	struct stat st;
	char	   *stored_key = NULL;
	char	   *img = NULL;
	bool		ok;
	int			fd;

	*image = NULL;
	*image_len = 0;
	if (!store_dir_copy(dir, sizeof(dir)) || !store_path(dir, key_hash, path, sizeof(path)))
		return false;
	if (!dir_trusted(dir))
		return false;
	fd = open(path, O_RDONLY | O_NOFOLLOW);
	if (fd < 0)
		return false;
	ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		transfer_all(fd, &hdr, sizeof(hdr), false) &&
		memcmp(hdr.magic, STORE_MAGIC, sizeof(hdr.magic)) == 0 &&
		hdr.key_len == key_len && hdr.key_hash == key_hash &&
		hdr.image_len > 0 && hdr.image_len <= GJ_KERNEL_STORE_MAX_IMAGE &&
		(uint64_t) st.st_size == sizeof(hdr) + (uint64_t) hdr.key_len + hdr.image_len;
	ok = ok && (stored_key = (char *) malloc(key_len > 0 ? key_len : 1)) != NULL &&
		transfer_all(fd, stored_key, key_len, false) && memcmp(stored_key, key, key_len) == 0;
	ok = ok && (img = (char *) malloc(hdr.image_len)) != NULL &&
		transfer_all(fd, img, hdr.image_len, false) &&
		gj_kernel_store_hash(0, img, hdr.image_len) == hdr.image_hash;
	close(fd);
	free(stored_key);
	if (!ok)
	{
		free(img);
		return false;
	}
	*image = img;
	*image_len = hdr.image_len;
	return true;
}

/* mkdir -p, mode 0700; false where the directory is not there after. */
static bool
make_dirs(char *dir)
{
	struct stat st;

	for (char *p = dir + 1; *p != '\0'; p++)
	{
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		{
			*p = '/';
			return false;
		}
		*p = '/';
	}
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return false;
	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The kernel files in dir, up to GJ_KERNEL_STORE_FILES. */
static int
count_files(const char *dir)
{
	DIR		   *d = opendir(dir);
	struct dirent *ent;
	int			n = 0;
	size_t		suffix = strlen(STORE_SUFFIX);

	if (d == NULL)
		return GJ_KERNEL_STORE_FILES;
	while (n < GJ_KERNEL_STORE_FILES && (ent = readdir(d)) != NULL)
	{
		size_t		len = strlen(ent->d_name);

		if (len > suffix && strcmp(ent->d_name + len - suffix, STORE_SUFFIX) == 0)
			n++;
	}
	closedir(d);
	return n;
}

bool
gj_kernel_store_write(const char *key, size_t key_len, const char *image, size_t image_len)
{
	char		dir[sizeof(store_dir)];
	char		path[sizeof(store_dir) + 32];
	char		temp[sizeof(store_dir) + 96];
	StoreHeader hdr;
	struct stat st;
	bool		ok;
	int			fd;
	static int	serial;
	int			mine;

	if (image_len == 0 || image_len > GJ_KERNEL_STORE_MAX_IMAGE || key_len > UINT32_MAX ||
		!store_dir_copy(dir, sizeof(dir)))
		return false;
	memset(&hdr, 0, sizeof(hdr));
	memcpy(hdr.magic, STORE_MAGIC, sizeof(hdr.magic));
	hdr.key_len = (uint32_t) key_len;
	hdr.image_len = (uint32_t) image_len;
	hdr.key_hash = gj_kernel_store_hash(0, key, key_len);
	hdr.image_hash = gj_kernel_store_hash(0, image, image_len);
	if (!store_path(dir, hdr.key_hash, path, sizeof(path)) || !make_dirs(dir) ||
		!dir_trusted(dir))
		return false;
	/* a kernel stored already (by another process, say) is not counted */
	if (stat(path, &st) != 0 && count_files(dir) >= GJ_KERNEL_STORE_FILES)
		return false;
	pthread_mutex_lock(&store_lock);
	mine = ++serial;
	pthread_mutex_unlock(&store_lock);
	snprintf(temp, sizeof(temp), "%s.%d.%d.tmp", path, (int) getpid(), mine);
	fd = open(temp, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return false;
	ok = transfer_all(fd, &hdr, sizeof(hdr), true) &&
		transfer_all(fd, (void *) key, key_len, true) &&
		transfer_all(fd, (void *) image, image_len, true);
	ok = close(fd) == 0 && ok;
	ok = ok && rename(temp, path) == 0;
	if (!ok)
		unlink(temp);
	return ok;
}

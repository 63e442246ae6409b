/*-------------------------------------------------------------------------
 *
 * kt_kernel_store.c
 *	  kernel_test's checks of the kernel store (shared/kernel_store.c), the
 *	  directory where compiled kernels outlive the process: in the cpu
 *	  part (no GPU, so CI runs them), images written and read back, keys
 *	  that must not match, damaged and foreign files, directories and files
 *	  it must not trust, the cap on files, and threads writing and reading
 *	  one kernel at once; on a GPU
 *	  (kernel_test compiled-store), programs compiled and stored by one
 *	  "process" loaded by the next, with the cpu's counts.
 *
 *-------------------------------------------------------------------------
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kt_common.h"
#include "kernels/shared/kernel_store.h"

#define KS_TESTS	11

int
kernel_store_test_count(void)
{
	return KS_TESTS;
}

static void
ks_report(bool ok, const char *what)
{
	test_number++;
	if (!ok)
		failures++;
	printf("%s %d - kernel store: %s\n", ok ? "ok" : "not ok", test_number, what);
}

/* Does key read back as exactly image? */
static bool
ks_reads(const char *key, const char *image, size_t image_len)
{
	char	   *got = NULL;
	size_t		got_len = 0;
	bool		ok = gj_kernel_store_read(key, strlen(key), &got, &got_len) &&
		got_len == image_len && memcmp(got, image, image_len) == 0;

	free(got);
	return ok;
}

static bool
ks_reads_nothing(const char *key)
{
	char	   *got = NULL;
	size_t		got_len = 0;
	bool		found = gj_kernel_store_read(key, strlen(key), &got, &got_len);

	free(got);
	return !found && got == NULL && got_len == 0;
}

/* The file a key is stored in (kernel_store.c names it by its hash). */
static void
ks_path(const char *dir, const char *key, char *path, size_t len)
{
	snprintf(path, len, "%s/%016llx.gjk", dir,
			 (unsigned long long) gj_kernel_store_hash(0, key, strlen(key)));
}

static bool
ks_copy_file(const char *from, const char *to)
{
	char		buf[65536];
	FILE	   *in = fopen(from, "rb");
	FILE	   *out = in != NULL ? fopen(to, "wb") : NULL;
	size_t		n;
	bool		ok = in != NULL && out != NULL;

	while (ok && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		ok = fwrite(buf, 1, n, out) == n;
	if (in != NULL)
		fclose(in);
	if (out != NULL)
		ok = fclose(out) == 0 && ok;
	return ok;
}

/* Flip one byte of a file at offset (from the end where offset < 0). */
static bool
ks_flip_byte(const char *path, long offset)
{
	FILE	   *f = fopen(path, "r+b");
	int			c;
	bool		ok;

	if (f == NULL)
		return false;
	ok = fseek(f, offset, offset < 0 ? SEEK_END : SEEK_SET) == 0 && (c = fgetc(f)) != EOF &&
		fseek(f, -1, SEEK_CUR) == 0 && fputc(c ^ 0x5a, f) != EOF;
	return fclose(f) == 0 && ok;
}

/* Files in dir whose names end with suffix. */
static int
ks_count(const char *dir, const char *suffix)
{
	DIR		   *d = opendir(dir);
	struct dirent *ent;
	int			n = 0;

	if (d == NULL)
		return -1;
	while ((ent = readdir(d)) != NULL)
	{
		size_t		len = strlen(ent->d_name);

		if (len >= strlen(suffix) && strcmp(ent->d_name + len - strlen(suffix), suffix) == 0)
			n++;
	}
	closedir(d);
	return n;
}

/* rm -r of a directory of files and directories of files. */
static void
ks_remove_tree(const char *dir)
{
	DIR		   *d = opendir(dir);
	struct dirent *ent;
	char		path[1024];

	if (d == NULL)
		return;
	while ((ent = readdir(d)) != NULL)
	{
		struct stat st;

		if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, ent->d_name);
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			ks_remove_tree(path);
		else
			unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* Threads storing and loading one kernel at once. */
typedef struct KsThread
{
	const char *key;
	const char *image;
	size_t		image_len;
	bool		writer;
	int			bad_reads;		/* reads that returned something else */
	int			good_reads;
} KsThread;

static void *
ks_thread(void *arg)
{
	KsThread   *t = (KsThread *) arg;

	for (int i = 0; i < 200; i++)
	{
		char	   *got = NULL;
		size_t		got_len = 0;

		if (t->writer)
			(void) gj_kernel_store_write(t->key, strlen(t->key), t->image, t->image_len);
		if (gj_kernel_store_read(t->key, strlen(t->key), &got, &got_len))
		{
			if (got_len == t->image_len && memcmp(got, t->image, got_len) == 0)
				t->good_reads++;
			else
				t->bad_reads++;
		}
		free(got);
	}
	return NULL;
}

void
run_kernel_store_tests(void)
{
	char		base[] = "/tmp/gj_kernel_store_XXXXXX";
	char		dir[512];
	char		path[600],
				other[600];
	const char *key1 = "/* program 1 */ #define GJC_PROGRAM {{1, 2, 0, 0}}";
	const char *key2 = "/* program 2 */ #define GJC_PROGRAM {{1, 2, 1, 0}}";
	const char *key3 = "/* program 3 */";
	size_t		image_len = 100000;
	char	   *image = xmalloc(image_len);
	char	   *image2 = xmalloc(image_len);
	bool		ok;

	printf("# the kernel store: compiled kernels kept on disk\n");
	for (size_t i = 0; i < image_len; i++)
	{
		image[i] = (char) rng();
		image2[i] = (char) rng();
	}
	if (mkdtemp(base) == NULL)
	{
		for (int t = 0; t < KS_TESTS; t++)
			ks_report(false, "mkdtemp failed");
		free(image);
		free(image2);
		return;
	}
	/* a directory two levels below one that exists: made on the first write */
	snprintf(dir, sizeof(dir), "%s/pg_gpujoin/kernels", base);

	gj_kernel_store_set_dir("");
	ok = !gj_kernel_store_enabled() &&
		!gj_kernel_store_write(key1, strlen(key1), image, image_len) && ks_reads_nothing(key1);
	ks_report(ok, "off: nothing is written or read");

	gj_kernel_store_set_dir(dir);
	ok = gj_kernel_store_enabled() && ks_reads_nothing(key1) &&
		gj_kernel_store_write(key1, strlen(key1), image, image_len) &&
		ks_reads(key1, image, image_len) && ks_reads_nothing(key2) &&
		ks_count(dir, ".gjk") == 1 && ks_count(dir, ".tmp") == 0;
	ks_report(ok, "an image written (its directories made) reads back; another key reads nothing");

	ok = gj_kernel_store_write(key1, strlen(key1), image2, image_len) &&
		ks_reads(key1, image2, image_len) && ks_count(dir, ".gjk") == 1;
	ks_report(ok, "a kernel written again replaces the file");

	/* key1's file under key2's name: a key stored with the same hash */
	ks_path(dir, key1, path, sizeof(path));
	ks_path(dir, key2, other, sizeof(other));
	ok = ks_copy_file(path, other) && ks_reads_nothing(key2) &&
		ks_reads(key1, image2, image_len);
	unlink(other);
	ks_report(ok, "a file holding another key is not read for this one");

	/* damage: the image's last byte, the key's first, the magic, a cut */
	ok = ks_flip_byte(path, -1) && ks_reads_nothing(key1);
	ok = ok && gj_kernel_store_write(key1, strlen(key1), image, image_len) &&
		ks_flip_byte(path, 40) && ks_reads_nothing(key1);
	ok = ok && gj_kernel_store_write(key1, strlen(key1), image, image_len) &&
		ks_flip_byte(path, 0) && ks_reads_nothing(key1);
	ok = ok && gj_kernel_store_write(key1, strlen(key1), image, image_len) &&
		truncate(path, 40 + strlen(key1) + image_len / 2) == 0 && ks_reads_nothing(key1);
	ok = ok && truncate(path, 0) == 0 && ks_reads_nothing(key1);
	ks_report(ok, "a damaged image, key or header, a cut file and an empty one read nothing");

	ok = gj_kernel_store_write(key1, strlen(key1), image, image_len) &&
		ks_reads(key1, image, image_len);
	ks_report(ok, "a damaged kernel written again reads back");

	/* a directory that others may write in: its kernels are not trusted */
	ok = chmod(dir, 0777) == 0 && ks_reads_nothing(key1) &&
		!gj_kernel_store_write(key2, strlen(key2), image, image_len) &&
		chmod(dir, 0700) == 0 && ks_reads(key1, image, image_len) && ks_reads_nothing(key2);
	ks_report(ok, "a directory others may write in: nothing read or stored");

	/* a kernel file behind a symbolic link, or (as root) another user's */
	{
		char		elsewhere[600];

		snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere.bin", base);
		ok = rename(path, elsewhere) == 0 && symlink(elsewhere, path) == 0 &&
			ks_reads_nothing(key1) && unlink(path) == 0 && rename(elsewhere, path) == 0 &&
			ks_reads(key1, image, image_len);
		if (ok && geteuid() == 0)
			ok = chown(path, 65534, 65534) == 0 && ks_reads_nothing(key1) &&
				chown(path, 0, 0) == 0 && ks_reads(key1, image, image_len);
	}
	ks_report(ok, "a kernel file behind a symbolic link, or another user's, is not read");

	/* the cap: a full directory takes no new kernel, but rewrites one */
	for (int i = ks_count(dir, ".gjk"); i < GJ_KERNEL_STORE_FILES; i++)
	{
		char		filler[600];

		snprintf(filler, sizeof(filler), "%s/filler%05d.gjk", dir, i);
		close(open(filler, O_WRONLY | O_CREAT, 0600));
	}
	ok = ks_count(dir, ".gjk") == GJ_KERNEL_STORE_FILES &&
		!gj_kernel_store_write(key3, strlen(key3), image, image_len) && ks_reads_nothing(key3) &&
		gj_kernel_store_write(key1, strlen(key1), image2, image_len) &&
		ks_reads(key1, image2, image_len) && ks_count(dir, ".tmp") == 0;
	ks_report(ok, "a full directory stores no new kernel, and still replaces one it has");
	ks_remove_tree(dir);

	/* eight threads: four store one kernel over and over, all read it */
	{
		KsThread	threads[8];
		pthread_t	ids[8];
		int			bad = 0,
					good = 0;

		ok = true;
		for (int i = 0; i < 8; i++)
		{
			threads[i] = (KsThread) {key2, image, image_len, i % 2 == 0, 0, 0};
			ok = ok && pthread_create(&ids[i], NULL, ks_thread, &threads[i]) == 0;
		}
		for (int i = 0; i < 8; i++)
		{
			pthread_join(ids[i], NULL);
			bad += threads[i].bad_reads;
			good += threads[i].good_reads;
		}
		ok = ok && bad == 0 && good > 0 && ks_reads(key2, image, image_len) &&
			ks_count(dir, ".gjk") == 1 && ks_count(dir, ".tmp") == 0;
		if (!ok)
			printf("# %d reads found the kernel, %d found something else\n", good, bad);
		ks_report(ok, "threads storing and reading one kernel at once read it whole or not at all");
	}

	/* a directory that cannot be made: off in effect, no error */
	snprintf(path, sizeof(path), "%s/a_file", base);
	close(open(path, O_WRONLY | O_CREAT, 0600));
	snprintf(other, sizeof(other), "%s/a_file/kernels", base);
	gj_kernel_store_set_dir(other);
	ok = !gj_kernel_store_write(key1, strlen(key1), image, image_len) && ks_reads_nothing(key1);
	ks_report(ok, "a directory that cannot be made: nothing stored, nothing read");

	gj_kernel_store_set_dir(NULL);
	ks_remove_tree(base);
	free(image);
	free(image2);
}

/* SPDX-License-Identifier: MIT */
/*
 * Small utilities: string buffer, allocation that cannot fail, whole-file
 * I/O with atomic replacement, rm -rf that never follows a symlink, time.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include "core/util.h"

static char sb_empty[1];

void sb_init(struct sb *sb)
{
	sb->buf = sb_empty;
	sb->len = 0;
	sb->cap = 0;
}

void sb_release(struct sb *sb)
{
	if (sb->cap)
		free(sb->buf);
	sb_init(sb);
}

void sb_reset(struct sb *sb)
{
	sb->len = 0;
	if (sb->cap)
		sb->buf[0] = '\0';
}

static void sb_grow(struct sb *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;

	if (need < sb->len)
		abort();
	if (need <= sb->cap)
		return;
	size_t cap = sb->cap ? sb->cap : 64;
	while (cap < need)
		cap *= 2;
	if (sb->cap) {
		sb->buf = xrealloc(sb->buf, cap);
	} else {
		/* buf may point at SB_INIT's string literal: never realloc it. */
		char *n = xmalloc(cap);
		memcpy(n, sb->buf, sb->len);
		n[sb->len] = '\0';
		sb->buf = n;
	}
	sb->cap = cap;
}

void sb_add(struct sb *sb, const void *data, size_t n)
{
	if (!n)
		return;
	sb_grow(sb, n);
	memmove(sb->buf + sb->len, data, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sb_adds(struct sb *sb, const char *s)
{
	sb_add(sb, s, strlen(s));
}

void sb_add_argv(struct sb *sb, const char *const *argv)
{
	for (size_t i = 0; argv[i]; i++) {
		const char *w = argv[i];

		if (i)
			sb_addc(sb, ' ');
		if (*w && strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				    "0123456789_@%+=:,./-") == strlen(w)) {
			sb_adds(sb, w);
			continue;
		}
		bool ctl = false;

		for (const char *p = w; *p; p++)
			ctl |= (unsigned char)*p < 0x20 || *p == 0x7f;
		if (ctl) {
			/* $'...' (POSIX.1-2024, bash, ksh, zsh): a newline stays on its line */
			sb_adds(sb, "$'");
			for (; *w; w++) {
				unsigned char c = (unsigned char)*w;

				if (c == '\n')
					sb_adds(sb, "\\n");
				else if (c == '\t')
					sb_adds(sb, "\\t");
				else if (c == '\\' || c == '\'')
					sb_addf(sb, "\\%c", c);
				else if (c < 0x20 || c == 0x7f)
					sb_addf(sb, "\\x%02x", c);
				else
					sb_addc(sb, (char)c);
			}
			sb_addc(sb, '\'');
			continue;
		}
		sb_addc(sb, '\'');
		for (; *w; w++) {
			if (*w == '\'')
				sb_adds(sb, "'\\''");
			else
				sb_addc(sb, *w);
		}
		sb_addc(sb, '\'');
	}
}

void sb_addc(struct sb *sb, char c)
{
	sb_add(sb, &c, 1);
}

void sb_vaddf(struct sb *sb, const char *fmt, va_list ap)
{
	va_list cp;
	char small[256];

	va_copy(cp, ap);
	int n = vsnprintf(small, sizeof(small), fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		sb_add(sb, small, n);
		return;
	}
	sb_grow(sb, n);
	vsnprintf(sb->buf + sb->len, n + 1, fmt, ap);
	sb->len += n;
}

void sb_addf(struct sb *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sb_vaddf(sb, fmt, ap);
	va_end(ap);
}

char *sb_detach(struct sb *sb)
{
	char *p;

	if (sb->cap)
		p = sb->buf;
	else
		p = xstrdup("");
	sb_init(sb);
	return p;
}

void sb_rtrim(struct sb *sb)
{
	while (sb->len && isspace((unsigned char)sb->buf[sb->len - 1]))
		sb->len--;
	if (sb->cap)
		sb->buf[sb->len] = '\0';
}

static void oom(void)
{
	static const char msg[] = "rdmaqual: out of memory\n";

	if (write(2, msg, sizeof(msg) - 1) < 0) {
		/* nothing left to do */
	}
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t nmemb, size_t n)
{
	void *p = calloc(nmemb ? nmemb : 1, n ? n : 1);

	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		oom();
	return q;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		oom();
	return p;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);

	if (!p)
		oom();
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	struct sb sb = SB_INIT;
	va_list ap;

	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	return sb_detach(&sb);
}

/* Reads under this tree resolve inside it (see read_confine()). */
static char *confine_root;
static size_t confine_len;

void read_confine(const char *root)
{
	free(confine_root);
	confine_root = NULL;
	confine_len = 0;
	if (!root || !*root || !strcmp(root, "/"))
		return;
	confine_root = xstrdup(root);
	confine_len = strlen(root);
	while (confine_len > 1 && confine_root[confine_len - 1] == '/')
		confine_root[--confine_len] = '\0';
}

int open_in_root(const char *root, const char *rel, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int dfd, fd, e;

	while (*rel == '/')
		rel++;
	dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	/*
	 * openat2 answers EAGAIN when a rename or mount anywhere on the system
	 * raced a ".." it resolved (sysfs links are all ../../devices/...):
	 * try again; on a busy machine that is common.
	 */
	for (int tries = 0; ; tries++) {
		fd = (int)syscall(SYS_openat2, dfd, *rel ? rel : ".", &how, sizeof(how));
		e = errno;
		if (fd >= 0 || e != EAGAIN || tries == 1000)
			break;
	}
	if (fd < 0 && e == ENOSYS) {
		/* Kernels before 5.6: resolve, then refuse anything outside. */
		char *full = xasprintf("%s/%s", root, rel), rroot[PATH_MAX], rfull[PATH_MAX];
		size_t rl;

		fd = -1;
		e = ENOENT;
		if (realpath(root, rroot) && realpath(full, rfull)) {
			rl = strlen(rroot);
			if (!strncmp(rfull, rroot, rl) && (rfull[rl] == '/' || !rfull[rl] || rl == 1)) {
				fd = open(rfull, flags | O_CLOEXEC | O_NOFOLLOW);
				e = errno;
			} else {
				e = EXDEV;
			}
		}
		free(full);
	}
	close(dfd);
	return fd < 0 ? -e : fd;
}

int read_file(const char *path, struct sb *sb, size_t max)
{
	int fd, ret = 0;

	if (confine_root && !strncmp(path, confine_root, confine_len) &&
	    (path[confine_len] == '/' || !path[confine_len])) {
		fd = open_in_root(confine_root, path + confine_len, O_RDONLY);
		if (fd < 0) {
			errno = -fd;
			fd = -1;
		}
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}

	if (fd < 0)
		return -errno;
	if (!max)
		max = 16u << 20;
	size_t got = 0;
	while (got < max) {
		size_t want = max - got < 65536 ? max - got : 65536;

		sb_grow(sb, want);
		ssize_t n = read(fd, sb->buf + sb->len, want);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		if (n == 0)
			break;
		sb->len += n;
		sb->buf[sb->len] = '\0';
		got += n;
	}
	/* More than max is an error, never a silent cut (a case file lost its end). */
	if (!ret && got == max) {
		char extra;
		ssize_t n;

		while ((n = read(fd, &extra, 1)) < 0 && errno == EINTR)
			;
		if (n > 0)
			ret = -EFBIG;
	}
	close(fd);
	return ret;
}

int read_file_ends(const char *path, struct sb *sb, size_t head, size_t tail, bool *cut)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;

	*cut = false;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size <= head + tail) {
		close(fd);
		return read_file(path, sb, head + tail);
	}
	for (int part = 0; part < 2 && !ret; part++) {
		size_t want = part ? tail : head, got = 0;
		off_t at = part ? st.st_size - (off_t)tail : 0;

		sb_grow(sb, want);
		while (got < want) {
			ssize_t n = pread(fd, sb->buf + sb->len, want - got, at + (off_t)got);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				ret = -errno;
			if (n <= 0)
				break;
			sb->len += (size_t)n;
			got += (size_t)n;
		}
		sb->buf[sb->len] = '\0';
		if (!part)
			sb_addf(sb, "\n[rdmaqual: %llu bytes cut here]\n",
				(unsigned long long)(st.st_size - (off_t)head - (off_t)tail));
	}
	*cut = true;
	close(fd);
	return ret;
}

int read_line(const char *path, char *buf, size_t size)
{
	struct sb sb = SB_INIT;
	int ret;

	if (!size)
		return -EINVAL;
	buf[0] = '\0';
	ret = read_file(path, &sb, 65536);
	if (ret == 0) {
		sb_rtrim(&sb);
		size_t n = sb.len < size - 1 ? sb.len : size - 1;
		memcpy(buf, sb.buf, n);
		buf[n] = '\0';
		if (sb.len >= size)
			ret = -EOVERFLOW;
	}
	sb_release(&sb);
	return ret;
}

int write_full(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

/* Make a rename durable: fsync the directory path is in. */
static void fsync_dir_of(const char *path)
{
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	int fd;

	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(dir);
}

int afile_open(struct afile *f, const char *path)
{
	return afile_open_at(f, AT_FDCWD, path);
}

int afile_open_at(struct afile *f, int dirfd, const char *path)
{
	static unsigned seq;
	char *tmp = NULL;
	int fd = -1;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->dirfd = dirfd;
	/*
	 * Unique per writer, so two threads writing one path cannot collide;
	 * O_EXCL so a name someone planted (a file, a hard link, a symlink) is
	 * skipped, never written through.
	 */
	for (int tries = 0; fd < 0 && tries < 64; tries++) {
		free(tmp);
		tmp = xasprintf("%s.tmp.%ld.%u", path, (long)getpid(),
				__atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		f->err = -errno;
		free(tmp);
		return f->err;
	}
	f->fd = fd;
	f->tmp = tmp;
	f->path = xstrdup(path);
	return 0;
}

void afile_write(struct afile *f, const void *data, size_t len)
{
	if (f->fd >= 0 && !f->err)
		f->err = write_full(f->fd, data, len);
}

void afile_drain(struct afile *f, struct sb *out, size_t min)
{
	if (out->len < min || !out->len)
		return;
	afile_write(f, out->buf, out->len);
	out->len = 0;
	out->buf[0] = '\0';
}

static int afile_finish(struct afile *f, bool durable)
{
	int ret = f->err;

	if (f->fd < 0) {
		free(f->tmp);
		free(f->path);
		return ret ? ret : -EBADF;
	}
	if (!ret && durable && fsync(f->fd) < 0)
		ret = -errno;
	if (close(f->fd) < 0 && !ret)
		ret = -errno;
	if (!ret && renameat(f->dirfd, f->tmp, f->dirfd, f->path) < 0)
		ret = -errno;
	if (ret)
		unlinkat(f->dirfd, f->tmp, 0);
	if (!ret && durable && f->dirfd != AT_FDCWD)
		fsync(f->dirfd);
	else if (!ret && durable)
		fsync_dir_of(f->path);
	free(f->tmp);
	free(f->path);
	f->fd = -1;
	f->tmp = f->path = NULL;
	return ret;
}

int afile_commit(struct afile *f)
{
	return afile_finish(f, true);
}

static int write_file_rename(const char *path, const void *data, size_t len, bool durable)
{
	struct afile f;
	int ret = afile_open(&f, path);

	if (ret)
		return ret;
	afile_write(&f, data, len);
	return afile_finish(&f, durable);
}

int write_file_replace_at(int dirfd, const char *name, const void *data, size_t len)
{
	static unsigned seq;
	char *tmp = NULL;
	int ret, fd = -1;

	/* As write_file_rename, but every name resolves in dirfd only: a link
	 * swapped in for a parent of dirfd cannot redirect the write. */
	if (strchr(name, '/'))
		return -EINVAL;
	for (int tries = 0; fd < 0 && tries < 64; tries++) {
		free(tmp);
		tmp = xasprintf(".%s.tmp.%ld.%u", name, (long)getpid(),
				__atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		ret = -errno;
		free(tmp);
		return ret;
	}
	ret = write_full(fd, data, len);
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && renameat(dirfd, tmp, dirfd, name) < 0)
		ret = -errno;
	if (ret)
		unlinkat(dirfd, tmp, 0);
	free(tmp);
	return ret;
}

int read_fd_all(int fd, struct sb *sb, size_t max)
{
	size_t got = 0;

	while (got < max) {
		size_t want = max - got < 65536 ? max - got : 65536;
		ssize_t n;

		sb_grow(sb, want);
		n = read(fd, sb->buf + sb->len, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		sb->len += (size_t)n;
		got += (size_t)n;
		sb->buf[sb->len] = '\0';
	}
	return -EFBIG;
}

int write_file_atomic(const char *path, const void *data, size_t len)
{
	return write_file_rename(path, data, len, true);
}

int write_file_replace(const char *path, const void *data, size_t len)
{
	return write_file_rename(path, data, len, false);
}

int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = write_full(fd, s, strlen(s));
	if (close(fd) < 0 && !ret)
		ret = -errno;
	return ret;
}

int mkdir_p(const char *path, unsigned mode)
{
	char *p = xstrdup(path);
	int ret = 0;
	size_t len = strlen(p);

	while (len > 1 && p[len - 1] == '/')
		p[--len] = '\0';
	for (char *s = p + 1; ; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST) {
			ret = -errno;
			break;
		}
		*s = c;
		if (!c)
			break;
	}
	if (!ret) {
		struct stat st;
		if (stat(p, &st) < 0)
			ret = -errno;
		else if (!S_ISDIR(st.st_mode))
			ret = -ENOTDIR;
	}
	free(p);
	return ret;
}

/*
 * Remove the contents of the directory open at dfd.  Entries are opened
 * with O_NOFOLLOW and unlinked relative to their parent, so a symlink is
 * removed as a link and never followed out of the tree.
 */
static int rm_contents(int dfd, int depth)
{
	DIR *d;
	struct dirent *de;
	int ret = 0;

	if (depth > 256) {
		close(dfd);
		return -ELOOP;
	}
	d = fdopendir(dfd);
	if (!d) {
		ret = -errno;
		close(dfd);
		return ret;
	}
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		struct stat st;

		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		if (fstatat(dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT && !ret)
				ret = -errno;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(d), n,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0) {
				if (!ret)
					ret = -errno;
				continue;
			}
			int r = rm_contents(sub, depth + 1);
			if (r && !ret)
				ret = r;
			if (unlinkat(dirfd(d), n, AT_REMOVEDIR) < 0 && errno != ENOENT && !ret)
				ret = -errno;
		} else if (unlinkat(dirfd(d), n, 0) < 0 && errno != ENOENT && !ret) {
			ret = -errno;
		}
	}
	closedir(d);
	return ret;
}

int rm_rf(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int ret = rm_contents(fd, 0);
	if (rmdir(path) < 0 && errno != ENOENT && !ret)
		ret = -errno;
	return ret;
}

int rm_rf_scratch(const char *path, const char *const *prefixes)
{
	const char *rest = NULL;
	struct stat st;

	for (size_t i = 0; prefixes[i] && !rest; i++)
		if (str_starts(path, prefixes[i]))
			rest = path + strlen(prefixes[i]);
	/* Exactly one component: "/tmp/rq-x/../victim" or "/tmp/rq-x/sub" are not ours. */
	if (!rest || !*rest || strchr(rest, '/'))
		return -EPERM;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return -EPERM;
	return rm_rf(path);
}

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

size_t *strmap_get(const struct strmap *m, const char *key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = fnv1a(key) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
		if (!strcmp(m->keys[i], key))
			return &m->vals[i];
	return NULL;
}

size_t *strmap_put(struct strmap *m, const char *key, size_t val, bool *added)
{
	size_t *slot = strmap_get(m, key), i;

	*added = false;
	if (slot)
		return slot;
	if (2 * (m->n + 1) > m->cap) {
		struct strmap big = { .cap = m->cap ? 2 * m->cap : 64 };

		big.keys = xcalloc(big.cap, sizeof(*big.keys));
		big.vals = xcalloc(big.cap, sizeof(*big.vals));
		for (size_t j = 0; j < m->cap; j++)
			if (m->keys[j])
				strmap_put(&big, m->keys[j], m->vals[j], added);
		strmap_release(m);
		*m = big;
	}
	for (i = fnv1a(key) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
		;
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	*added = true;
	return &m->vals[i];
}

void strmap_release(struct strmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void iso8601_now(char *buf, size_t size)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	if (!strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) && size)
		buf[0] = '\0';
}

char *strtrim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

bool str_starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

bool str_ends(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !memcmp(s + a - b, suffix, b);
}

unsigned edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned *row = xcalloc(lb + 1, sizeof(*row));

	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned cost = a[i - 1] == b[j - 1] ? 0 : 1;
			unsigned v = diag + cost;
			if (row[j] + 1 < v)
				v = row[j] + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			row[j] = v;
			diag = up;
		}
	}
	unsigned d = row[lb];
	free(row);
	return d;
}

size_t utf8_decode(const unsigned char *p, size_t n, uint32_t *cp)
{
	uint32_t c;
	size_t len;

	if (!n)
		return 0;
	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2;
		c = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		len = 3;
		c = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4;
		c = p[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3f);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
	    c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

void sb_add_utf8(struct sb *sb, const void *data, size_t n)
{
	const unsigned char *p = data;
	size_t i = 0, run = 0;

	while (i < n) {
		uint32_t cp;
		size_t l = utf8_decode(p + i, n - i, &cp);

		if (l) {
			i += l;
			run += l;
			continue;
		}
		sb_add(sb, p + i - run, run);
		run = 0;
		sb_adds(sb, "\xef\xbf\xbd");
		i++;
	}
	sb_add(sb, p + i - run, run);
}

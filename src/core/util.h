/* SPDX-License-Identifier: MIT */
/*
 * Small utilities shared by every part of rdmaqual: a growable string
 * buffer, whole-file reads and monotonic time.  Nothing here knows about
 * cases, targets or reporters.
 */
#ifndef RQ_UTIL_H
#define RQ_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * struct sb: a NUL-terminated, growable byte string.  buf is never NULL
 * after sb_init() (it points at a static "" until the first append), len
 * never counts the terminator, and buf may hold embedded NULs.
 */
struct sb {
	char *buf;
	size_t len;
	size_t cap;
};

#define SB_INIT { .buf = (char *)"", .len = 0, .cap = 0 }

void sb_init(struct sb *sb);
void sb_release(struct sb *sb);
void sb_reset(struct sb *sb);
void sb_add(struct sb *sb, const void *data, size_t n);
void sb_adds(struct sb *sb, const char *s);
void sb_addc(struct sb *sb, char c);
/*
 * An argv as a POSIX shell would read it back: words joined by blanks, a
 * word with anything but [A-Za-z0-9_@%+=:,./-] in single quotes (a quote
 * inside as '\''), an empty word as '', one with control bytes as $'...'
 * (\n, \xHH: a newline stays on its log line).  For logs: `sh -c "a && b"` is
 * shown as sh -c 'a && b', not as five words.
 */
void sb_add_argv(struct sb *sb, const char *const *argv);
void sb_addf(struct sb *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sb_vaddf(struct sb *sb, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* Hand the buffer to the caller (malloc'd, never NULL) and reset sb. */
char *sb_detach(struct sb *sb);
/* Strip trailing whitespace. */
void sb_rtrim(struct sb *sb);

/* Allocation that aborts on OOM: a harness that cannot allocate cannot report. */
void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Read a whole file (at most max bytes; 0 = 16 MiB) into sb.  Returns 0 or
 * -errno; -EFBIG when the file holds more than max (sb then has the first
 * max bytes).  Trailing newline is kept; use sb_rtrim() for sysfs values.
 */
int read_file(const char *path, struct sb *sb, size_t max);
/*
 * From now on in this process, read_file()/read_line() of a path under
 * root resolve inside root: links, absolute ones included, and ".." stay
 * in the tree (openat2 RESOLVE_IN_ROOT), so a captured node tree cannot
 * point a read at this node's files.  NULL, "" or "/" ends it.
 */
void read_confine(const char *root);
/* open(root/rel, flags) resolved inside root; the fd or -errno. */
int open_in_root(const char *root, const char *rel, int flags);
/*
 * Read a file whole when it holds at most head + tail bytes, else its first
 * head and last tail bytes with a "[rdmaqual: N bytes cut here]" line
 * between (*cut set).  0 or -errno.
 */
int read_file_ends(const char *path, struct sb *sb, size_t head, size_t tail, bool *cut);
/* Read one sysfs-style value into buf (trailing whitespace stripped). */
int read_line(const char *path, char *buf, size_t size);
/* write() all of data, through EINTR and short writes; 0 or -errno. */
int write_full(int fd, const void *data, size_t len);
/* Write data to path via temp file + fsync + rename, so readers never see a torn file. */
int write_file_atomic(const char *path, const void *data, size_t len);
/*
 * The same, written in pieces (a report too large to hold whole): open,
 * write any number of times (the first error sticks), then commit, which
 * fsyncs and renames, or removes the temp file after an error.  0 or -errno.
 */
struct afile {
	int fd;
	int err;
	int dirfd;		/* afile_open_at's dir, or AT_FDCWD */
	char *tmp, *path;
};
int afile_open(struct afile *f, const char *path);
/*
 * The same for name resolved under dirfd (AT_FDCWD: as afile_open): the
 * temp file and the rename never leave dirfd, so a link planted in place
 * of a parent of dirfd after it was opened cannot redirect the file.
 */
int afile_open_at(struct afile *f, int dirfd, const char *name);
void afile_write(struct afile *f, const void *data, size_t len);
int afile_commit(struct afile *f);
/* Writes out's text to f when it holds at least min bytes (0: always), then empties it. */
void afile_drain(struct afile *f, struct sb *out, size_t min);
/*
 * The same without the fsyncs: readers (and a process killed after the
 * rename) see the old file or the new one, never a torn one, but a power
 * loss may lose it.  For files that a crash makes moot (an agent's answer
 * in its scratch dir) or that another durable record covers (a run's logs
 * and reports, beside its journal).
 */
int write_file_replace(const char *path, const void *data, size_t len);
/*
 * write_file_replace of dirfd/name (name: one component), every step
 * resolved under dirfd with O_NOFOLLOW.  0 or -errno.
 */
int write_file_replace_at(int dirfd, const char *name, const void *data, size_t len);
/* Read fd to its end into sb (at most max bytes): 0, -EFBIG past max, or -errno. */
int read_fd_all(int fd, struct sb *sb, size_t max);
/* Write a string to an existing file (sysfs/procfs style).  0 or -errno. */
int write_str(const char *path, const char *s);
/* mkdir -p; 0 or -errno. */
int mkdir_p(const char *path, unsigned mode);
/* rm -rf without following symlinks; 0 or -errno of the first failure. */
int rm_rf(const char *path);
/*
 * rm -rf of a scratch dir named in a run-state record: only when path is
 * one of prefixes (e.g. "/tmp/rq-") plus exactly one path component, and
 * is a directory (not a link) owned by the euid.  0 (also when already
 * gone), -EPERM when refused, or -errno.
 */
int rm_rf_scratch(const char *path, const char *const *prefixes);

/*
 * A string -> size_t hash map (open addressing, FNV-1a).  Keys are not
 * copied: they must outlive the map.  For duplicate checks and lookups that
 * would otherwise scan (a 40k-case suite took 10 s).
 */
struct strmap {
	const char **keys;
	size_t *vals;
	size_t cap, n;
};
/* The value slot of key, or NULL. */
size_t *strmap_get(const struct strmap *m, const char *key);
/* Insert key with val unless present; returns its slot, *added says which. */
size_t *strmap_put(struct strmap *m, const char *key, size_t val, bool *added);
void strmap_release(struct strmap *m);

/* Monotonic milliseconds, for deadlines. */
int64_t now_ms(void);
/* Wall-clock time as ISO 8601 UTC ("2026-11-29T21:31:46Z"). */
void iso8601_now(char *buf, size_t size);

/* Trim leading and trailing whitespace in place; returns s advanced. */
char *strtrim(char *s);
bool str_starts(const char *s, const char *prefix);
bool str_ends(const char *s, const char *suffix);

/*
 * Decode one UTF-8 sequence at p (n bytes available).  Returns its length
 * (1-4) and sets *cp, or 0 when the bytes there are not valid UTF-8
 * (overlong forms, surrogates and values above U+10FFFF are invalid).
 */
size_t utf8_decode(const unsigned char *p, size_t n, uint32_t *cp);
/* Append data to sb, each invalid UTF-8 byte replaced by U+FFFD. */
void sb_add_utf8(struct sb *sb, const void *data, size_t n);

/* Damerau-free Levenshtein distance, for "did you mean" hints. */
unsigned edit_distance(const char *a, const char *b);

#endif

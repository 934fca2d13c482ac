// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/paths.h"
#include "core/util.h"

/* The prefix `make install` was told (the Makefile passes it). */
#ifndef RQ_PREFIX
#define RQ_PREFIX "/usr/local"
#endif

static bool is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* dst (PATH_MAX) = realpath(src), or src as it is; frees src. */
static void set_real(char *dst, char *src)
{
	if (!realpath(src, dst))
		snprintf(dst, PATH_MAX, "%.*s", PATH_MAX - 1, src);
	free(src);
}

static bool has(const char *dir, const char *name, bool want_dir)
{
	char *p = xasprintf("%s/%s", dir, name);
	bool ok = want_dir ? is_dir(p) : access(p, X_OK) == 0;

	free(p);
	return ok;
}

void rq_paths_find(const char *self, struct rq_paths *p)
{
	char exe[PATH_MAX];
	size_t n = self ? strlen(self) : 0;
	char *slash;

	memset(p, 0, sizeof(*p));
	if (n > 0 && n < sizeof(exe)) {
		memcpy(exe, self, n + 1);
		slash = strrchr(exe, '/');
		if (slash)
			*(slash == exe ? slash + 1 : slash) = '\0';
		/* rdmaqual sits at the checkout's root; build/san/rdmaqual two levels down. */
		for (int up = 0; up < 3; up++) {
			char *root = xasprintf("%s%s", exe, up == 0 ? "" : up == 1 ? "/.." : "/../..");

			if (has(root, "vm/kernel.sh", false) && has(root, "cases", true)) {
				p->checkout = true;
				set_real(p->datadir, root);
				set_real(p->libexecdir, xasprintf("%s/vm", p->datadir));
				return;
			}
			free(root);
		}
		/* PREFIX/bin/rdmaqual: PREFIX/share/rdmaqual beside it. */
		slash = strrchr(exe, '/');
		if (slash && !strcmp(slash, "/bin")) {
			*slash = '\0';
			if (has(exe, "share/rdmaqual", true)) {
				set_real(p->datadir, xasprintf("%s/share/rdmaqual", exe));
				set_real(p->libexecdir, xasprintf("%s/libexec/rdmaqual", exe));
				return;
			}
		}
	}
	snprintf(p->datadir, sizeof(p->datadir), "%s", RQ_PREFIX "/share/rdmaqual");
	snprintf(p->libexecdir, sizeof(p->libexecdir), "%s", RQ_PREFIX "/libexec/rdmaqual");
}

const struct rq_paths *rq_paths(void)
{
	static struct rq_paths p;
	static bool done;

	if (!done) {
		char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		exe[n > 0 ? n : 0] = '\0';
		rq_paths_find(exe, &p);
		done = true;
	}
	return &p;
}

const char *rq_default_cases(void)
{
	static char *buf;
	const struct rq_paths *p = rq_paths();

	if (p->checkout)
		return "cases";
	if (!buf)
		buf = xasprintf("%s/cases", p->datadir);
	return buf;
}

/* mkdir DIR with MODE when missing; then it must be ours and written by no one else. */
static int own_dir(const char *dir, unsigned mode, char *err, size_t errsz)
{
	struct stat st;

	if (mkdir(dir, mode) < 0 && errno != EEXIST) {
		int e = errno;

		snprintf(err, errsz, "cannot create %s: %s%s", dir, strerror(e),
			 e == EACCES && geteuid() ? " (root's cache is /var/cache/rdmaqual; "
			 "as a user set XDG_CACHE_HOME or RQ_VM_CACHE to a dir of yours)" : "");
		return -e;
	}
	if (lstat(dir, &st) < 0) {
		snprintf(err, errsz, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		snprintf(err, errsz, "%s is %s owned by uid %u with mode %04o; the image cache must be "
			 "a directory of uid %u that nobody else may write (remove it or set RQ_VM_CACHE)",
			 dir, S_ISLNK(st.st_mode) ? "a symlink" : S_ISDIR(st.st_mode) ? "a directory" :
			 "a file", (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
			 (unsigned)geteuid());
		return -EPERM;
	}
	return 0;
}

/*
 * Every directory above real (a physical path) is one whose entries only
 * root or the euid can rename or replace: owned by one of them, and
 * writable by group or others only when sticky (/tmp).  Otherwise the
 * owner of such a parent could swap the cache for a tree of theirs after
 * it was checked.
 */
static int safe_parents(const char *real, char *err, size_t errsz)
{
	char p[PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s", real);
	for (char *slash = strrchr(p, '/'); slash; slash = strrchr(p, '/')) {
		if (slash == p)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (lstat(p, &st) < 0) {
			snprintf(err, errsz, "%s: %s", p, strerror(errno));
			return -errno;
		}
		if ((st.st_uid != 0 && st.st_uid != geteuid()) ||
		    ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))) {
			snprintf(err, errsz, "the image cache %s lies under %s, owned by uid %u with mode "
				 "%04o: someone else could replace it (set RQ_VM_CACHE to a dir under "
				 "directories only root or uid %u may change)", real, p,
				 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), (unsigned)geteuid());
			return -EPERM;
		}
		if (slash == p)
			break;
	}
	return 0;
}

int rq_cache_check(const char *dir, char *real, size_t size, char *err, size_t errsz)
{
	char buf[PATH_MAX];
	int rc;

	if (!*dir) {
		snprintf(err, errsz, "the image cache is an empty path");
		return -EINVAL;
	}
	/* Missing: made private (0700), parents too, as mkdir -p would. */
	rc = mkdir_p(dir, 0700);
	if (rc) {
		snprintf(err, errsz, "cannot create the image cache %s: %s", dir, strerror(-rc));
		return rc;
	}
	/*
	 * The builders get the physical path: a link named by RQ_VM_CACHE is
	 * followed once, here, and cannot be repointed after the check.
	 */
	if (!realpath(dir, buf)) {
		snprintf(err, errsz, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	if (strlen(buf) >= size) {
		snprintf(err, errsz, "cache path too long");
		return -ENAMETOOLONG;
	}
	rc = own_dir(buf, 0700, err, errsz);
	if (rc == 0)
		rc = safe_parents(buf, err, errsz);
	if (rc == 0)
		snprintf(real, size, "%s", buf);
	return rc;
}

int rq_cache_dir(char *buf, size_t size, char *err, size_t errsz)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	char base[PATH_MAX];
	int rc;

	if (geteuid() == 0) {
		/* /var/cache is the system's: only our own directory is made. */
		snprintf(buf, size, "/var/cache/rdmaqual");
		return own_dir(buf, 0755, err, errsz);
	}
	/* The XDG spec: a relative XDG_CACHE_HOME is invalid and ignored. */
	if (xdg && xdg[0] == '/') {
		snprintf(base, sizeof(base), "%s", xdg);
	} else {
		const char *home = getenv("HOME");
		struct passwd *pw;

		if (!home || home[0] != '/') {
			pw = getpwuid(geteuid());
			home = pw ? pw->pw_dir : NULL;
		}
		if (!home || home[0] != '/') {
			snprintf(err, errsz, "no home directory for the image cache (set XDG_CACHE_HOME "
				 "or RQ_VM_CACHE)");
			return -ENOENT;
		}
		snprintf(base, sizeof(base), "%s/.cache", home);
	}
	rc = mkdir_p(base, 0700);
	if (rc) {
		snprintf(err, errsz, "cannot create %s: %s", base, strerror(-rc));
		return rc;
	}
	if ((size_t)snprintf(buf, size, "%s/rdmaqual", base) >= size) {
		snprintf(err, errsz, "cache path too long");
		return -ENAMETOOLONG;
	}
	return own_dir(buf, 0700, err, errsz);
}

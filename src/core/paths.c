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

static int safe_parents_of(const char *real, const char *what, char *err, size_t errsz);

/*
 * A tree whose scripts and cases rdmaqual runs, often as root: DIR (after
 * realpath) and each of NAMES in it must be owned by root or the euid and
 * writable by nobody else, and every directory above it one that only root
 * or the euid can change (sticky ones aside), the image cache's rule.
 * Otherwise whoever may write there could plant vm/kernel.sh or a case
 * that root then runs.  false with why set.
 */
static bool tree_trusted(const char *dir, const char *const *names, char *why, size_t whysz)
{
	char real[PATH_MAX];
	struct stat st;

	if (!realpath(dir, real)) {
		snprintf(why, whysz, "%s: %s", dir, strerror(errno));
		return false;
	}
	for (size_t i = 0; !i || names[i - 1]; i++) {
		char *p = i ? xasprintf("%s/%s", real, names[i - 1]) : xstrdup(real);
		bool ok = false;

		if (lstat(p, &st) < 0)
			snprintf(why, whysz, "%s: %s", p, strerror(errno));
		else if (S_ISLNK(st.st_mode))
			snprintf(why, whysz, "%s is a symlink: rdmaqual runs nothing from a tree "
				 "whose parts may point elsewhere", p);
		else if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 022))
			snprintf(why, whysz, "%s is owned by uid %u with mode %04o: rdmaqual runs "
				 "nothing from a tree that another user may change", p,
				 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		else
			ok = true;
		free(p);
		if (!ok)
			return false;
	}
	if (safe_parents_of(real, "a tree rdmaqual runs scripts and cases from", why, whysz)) {
		snprintf(why + strlen(why), whysz - strlen(why), " (a tree beside rdmaqual at %s)", real);
		return false;
	}
	return true;
}

/*
 * The checkout root of a binary in dir: dir itself (ROOT/rdmaqual), or ROOT
 * when dir is one of the build's own folders (the sanitizer runner, the
 * unit tests, the fuzzers).  NULL for any other dir: no walking up.
 */
static char *checkout_root(const char *dir, int i)
{
	static const char *const build[] = { "/build/san/tests", "/build/san", "/build/rel",
					     "/build/fuzz" };

	if (i == 0)
		return xstrdup(dir);
	if (i > (int)ARRAY_SIZE(build) || !str_ends(dir, build[i - 1]))
		return NULL;
	return xasprintf("%.*s", (int)(strlen(dir) - strlen(build[i - 1])), dir);
}

void rq_paths_find(const char *self, struct rq_paths *p)
{
	static const char *const co_names[] = { "vm", "vm/kernel.sh", "cases", NULL };
	static const char *const inst_names[] = { "bin", "share/rdmaqual", "libexec/rdmaqual", NULL };
	char exe[PATH_MAX], prefix[PATH_MAX];
	size_t n = self ? strlen(self) : 0;
	char *slash;

	memset(p, 0, sizeof(*p));
	if (n > 0 && n < sizeof(exe)) {
		memcpy(exe, self, n + 1);
		slash = strrchr(exe, '/');
		if (slash)
			*(slash == exe ? slash + 1 : slash) = '\0';
		/*
		 * Installed first: PREFIX/bin/rdmaqual with PREFIX/share/rdmaqual
		 * uses that prefix and looks no higher (a checkout-looking tree
		 * above an install under /tmp is anybody's).
		 */
		snprintf(prefix, sizeof(prefix), "%s", exe);
		slash = strrchr(prefix, '/');
		if (slash && !strcmp(slash, "/bin")) {
			*slash = '\0';
			if (has(prefix, "share/rdmaqual", true)) {
				set_real(p->datadir, xasprintf("%s/share/rdmaqual", prefix));
				set_real(p->libexecdir, xasprintf("%s/libexec/rdmaqual", prefix));
				if (!tree_trusted(prefix, inst_names, p->refused, sizeof(p->refused)))
					p->untrusted = true;
				return;
			}
		}
		/* A checkout: ROOT/rdmaqual, or ROOT/build/san/rdmaqual and the like. */
		for (int i = 0; i <= 4; i++) {
			char *root = checkout_root(exe, i);

			if (!root)
				continue;
			if (has(root, "vm/kernel.sh", false) && has(root, "cases", true)) {
				if (!tree_trusted(root, co_names, p->refused, sizeof(p->refused))) {
					free(root);
					break;
				}
				p->checkout = true;
				set_real(p->datadir, root);
				set_real(p->libexecdir, xasprintf("%s/vm", p->datadir));
				return;
			}
			free(root);
		}
	}
	/* A refused checkout falls back to the prefix, and says why (refused). */
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
static int safe_parents_of(const char *real, const char *what, char *err, size_t errsz)
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
			snprintf(err, errsz, "%s lies under %s, owned by uid %u with mode %04o: someone "
				 "else could replace it (%s)", real, p, (unsigned)st.st_uid,
				 (unsigned)(st.st_mode & 07777), what);
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
	if (rc == 0) {
		char what[128];

		snprintf(what, sizeof(what), "the image cache; set RQ_VM_CACHE to a dir under "
			 "directories only root or uid %u may change", (unsigned)geteuid());
		rc = safe_parents_of(buf, what, err, errsz);
	}
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

/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "exec/statedir.h"
#include "agent/agent.h"
#include "core/util.h"

int statedir_check(const char *dir)
{
	struct stat st;
	int rc;

	/* Only the last component is made here with 0700; parents are the admin's. */
	if (lstat(dir, &st) < 0 && errno == ENOENT) {
		char *parent = xstrdup(dir), *slash = strrchr(parent, '/');

		if (slash && slash != parent) {
			*slash = '\0';
			rc = mkdir_p(parent, 0755);
			if (rc) {
				fprintf(stderr, "rdmaqual: cannot create %s: %s\n", parent, strerror(-rc));
				free(parent);
				return -1;
			}
		}
		free(parent);
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			fprintf(stderr, "rdmaqual: cannot create state dir %s: %s\n", dir, strerror(errno));
			return -1;
		}
	}
	/*
	 * Whoever owns the state dir decides what cleanup kills and removes and
	 * what undo writes back as root: a dir another user made in /tmp (or a
	 * link to one) would hand them that.
	 */
	if (lstat(dir, &st) < 0) {
		fprintf(stderr, "rdmaqual: state dir %s: %s\n", dir, strerror(errno));
		return -1;
	}
	if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "rdmaqual: state dir %s is %s, not a directory; refusing to use it\n",
			dir, S_ISLNK(st.st_mode) ? "a symlink" : "something else");
		return -1;
	}
	/*
	 * Ours and writable by no one else (older versions made it 0755):
	 * nothing can have been planted, so tighten it and go on.
	 */
	if (st.st_uid == geteuid() && (st.st_mode & 077) && !(st.st_mode & 022)) {
		int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (fd >= 0 && fchmod(fd, 0700) == 0 && fstat(fd, &st) == 0)
			fprintf(stderr, "rdmaqual: state dir %s was readable by others; now 0700\n", dir);
		if (fd >= 0)
			close(fd);
	}
	if (st.st_uid != geteuid() || (st.st_mode & 077)) {
		fprintf(stderr, "rdmaqual: state dir %s is owned by uid %u with mode %04o; it must be "
			"owned by uid %u with mode 0700 (remove it or use another --state-dir)\n", dir,
			(unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), (unsigned)geteuid());
		return -1;
	}
	return 0;
}

int statedir_lock(const char *want, char *dir, size_t dirsz)
{
	char path[4200], holder[64] = "";
	int fd;

	if (want && *want)
		snprintf(dir, dirsz, "%s", want);
	else
		rq_state_dir(NULL, dir, dirsz);
	if (statedir_check(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/lock", dir);
	/* Never through a link: the pid written below would land in its target. */
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
	if (fd < 0) {
		fprintf(stderr, "rdmaqual: cannot open %s: %s%s\n", path, strerror(errno),
			errno == ELOOP ? " (a symlink; refusing to follow it)" : "");
		return -1;
	}
	struct stat st;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		fprintf(stderr, "rdmaqual: %s is not a regular file of uid %u; refusing to use it\n",
			path, (unsigned)geteuid());
		close(fd);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		ssize_t n = pread(fd, holder, sizeof(holder) - 1, 0);

		holder[n > 0 ? n : 0] = '\0';
		fprintf(stderr, "rdmaqual: another run holds this node (%s, pid %s); "
			"wait for it or use another --state-dir\n", path,
			*strtrim(holder) ? strtrim(holder) : "unknown");
		close(fd);
		return -1;
	}
	/* The kernel drops a flock when its holder dies, even by SIGKILL. */
	if (ftruncate(fd, 0) == 0)
		dprintf(fd, "%d\n", (int)getpid());
	return fd;
}

void statedir_cleanup(const struct rq_run_opts *o, bool verbose)
{
	struct sb msgs = SB_INIT;

	/* Scratch dirs of agents that were killed before they could remove them. */
	rq_agent_sweep_stale(&msgs);
	if (verbose && msgs.len)
		printf("cleanup: agents\n%s", msgs.buf);
	sb_release(&msgs);
	for (size_t i = 0; rq_target_ops_all[i]; i++) {
		if (!rq_target_ops_all[i]->cleanup_stale)
			continue;
		if (verbose)
			printf("cleanup: %s\n", rq_target_ops_all[i]->name);
		rq_target_ops_all[i]->cleanup_stale(o);
	}
}

/*
 * One component of a run dir's path: owned by root or the euid, and if
 * others may write to it, sticky (as /tmp), so no one else can rename or
 * replace what lies under it.  OpenSSH's safe_path() rule.
 */
static int safe_ancestor(const char *path, char *err, size_t errsz)
{
	struct stat st;

	if (lstat(path, &st) < 0) {
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		return -1;
	}
	if ((st.st_uid != 0 && st.st_uid != geteuid()) ||
	    ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))) {
		snprintf(err, errsz, "%s is owned by uid %u with mode %04o: another user could "
			 "replace what lies under it", path, (unsigned)st.st_uid,
			 (unsigned)(st.st_mode & 07777));
		return -1;
	}
	return 0;
}

/* name in dirfd, if it exists: a kind (S_IFREG, S_IFDIR) of the euid that only it may write. */
static int safe_entry(int dirfd, const char *dir, const char *name, mode_t kind, bool must,
		      char *err, size_t errsz)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT && !must)
			return 0;
		snprintf(err, errsz, "%s/%s: %s", dir, name, strerror(errno));
		return -1;
	}
	if ((st.st_mode & S_IFMT) != kind || st.st_uid != geteuid() || (st.st_mode & 022) ||
	    (kind == S_IFREG && st.st_nlink != 1)) {
		snprintf(err, errsz, "%s/%s is %s owned by uid %u with mode %04o%s; a resumed run "
			 "trusts only what uid %u wrote", dir, name,
			 S_ISLNK(st.st_mode) ? "a symlink" : (st.st_mode & S_IFMT) == kind ?
			 (kind == S_IFDIR ? "a directory" : "a file") : "of another type",
			 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
			 kind == S_IFREG && st.st_nlink != 1 ? " and more than one link" : "",
			 (unsigned)geteuid());
		return -1;
	}
	return 0;
}

int rundir_trust(const char *dir, char *real, size_t realsz, char *err, size_t errsz)
{
	char *rp = realpath(dir, NULL);
	struct stat st;
	int fd;

	if (!rp) {
		snprintf(err, errsz, "%s: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(real, realsz, "%s", rp);
	/* Every ancestor, from / down: none another user could swap. */
	for (char *s = rp + 1; ; s++) {
		if (*s && *s != '/')
			continue;
		char c = *s;

		*s = '\0';
		if (c && safe_ancestor(rp, err, errsz)) {
			free(rp);
			return -1;
		}
		*s = c;
		if (!c)
			break;
	}
	free(rp);
	fd = open(real, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(err, errsz, "%s: %s", real, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		snprintf(err, errsz, "%s is owned by uid %u with mode %04o; a resumed run trusts "
			 "only a run dir of uid %u that no one else may write", real,
			 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), (unsigned)geteuid());
		close(fd);
		return -1;
	}
	if (safe_entry(fd, real, "journal.jsonl", S_IFREG, true, err, errsz) ||
	    safe_entry(fd, real, "logs", S_IFDIR, false, err, errsz)) {
		close(fd);
		return -1;
	}
	return fd;
}

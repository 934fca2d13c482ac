/* SPDX-License-Identifier: MIT */
/*
 * A case's processes: its cgroup, its worker's adopted orphans, and the
 * sweep that names and kills what is left (contain.h).
 *
 * Reads go through open()/openat() on /proc and the cgroup dir, not
 * read_file(): a worker replaying a sysroot has its read_file() confined
 * to the captured tree.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "agent/contain.h"
#include "core/util.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* Bytes of one small proc or cgroup file read at fd; -1 on error. */
static ssize_t read_small_at(int dirfd, const char *name, char *buf, size_t size)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	size_t n = 0;

	if (fd < 0)
		return -1;
	while (n + 1 < size) {
		ssize_t r = read(fd, buf + n, size - 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	return (ssize_t)n;
}

/*
 * Open an absolute path one component at a time, never following a link
 * (the cgroup mount's path and our cgroup's path come from /proc, but a
 * link planted on the way must not choose the dir we kill in).
 */
static int open_dir_nofollow(int at, const char *path)
{
	char *copy = xstrdup(path), *save = NULL;
	int fd = at >= 0 ? dup(at) : open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	for (char *c = strtok_r(copy, "/", &save); c && fd >= 0; c = strtok_r(NULL, "/", &save)) {
		int next;

		if (!strcmp(c, ".") || !strcmp(c, "..")) {
			close(fd);
			fd = -1;
			errno = EINVAL;
			break;
		}
		next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = next;
	}
	free(copy);
	return fd;
}

int rq_contain_parent(char *why, size_t size)
{
	const char *off = getenv("RQ_NO_CGROUP");
	char cg[4096] = "", line[4096];
	FILE *f;
	int fd = -1;

	if (off && !strcmp(off, "1")) {
		snprintf(why, size, "RQ_NO_CGROUP=1");
		return -1;
	}
	/* "0::/path": our cgroup in the v2 hierarchy (the only line on a pure v2 host). */
	f = fopen("/proc/self/cgroup", "re");
	while (f && fgets(line, sizeof(line), f))
		if (str_starts(line, "0::")) {
			snprintf(cg, sizeof(cg), "%s", strtrim(line + 3));
			break;
		}
	if (f)
		fclose(f);
	if (cg[0] != '/') {
		snprintf(why, size, "no cgroup v2 path in /proc/self/cgroup");
		return -1;
	}
	/*
	 * Where cgroup2 is mounted: /sys/fs/cgroup on a v2 host,
	 * /sys/fs/cgroup/unified on a hybrid one.  Its root field is the part
	 * of the hierarchy the mount shows (a container's may show less).
	 */
	f = fopen("/proc/self/mountinfo", "re");
	while (f && fd < 0 && fgets(line, sizeof(line), f)) {
		char root[2048], mnt[2048], fstype[64];
		const char *dash = strstr(line, " - ");
		size_t rl;

		if (!dash || sscanf(dash + 3, "%63s", fstype) != 1 || strcmp(fstype, "cgroup2") ||
		    sscanf(line, "%*s %*s %*s %2047s %2047s", root, mnt) != 2)
			continue;
		/* octal escapes (a space in a mount path): not ours to decode */
		if (strchr(root, '\\') || strchr(mnt, '\\'))
			continue;
		rl = strcmp(root, "/") ? strlen(root) : 0;
		if (rl && (strncmp(cg, root, rl) || (cg[rl] && cg[rl] != '/')))
			continue;
		int m = open_dir_nofollow(-1, mnt);

		if (m < 0)
			continue;
		fd = open_dir_nofollow(m, cg + rl);
		close(m);
	}
	if (f)
		fclose(f);
	if (fd < 0) {
		snprintf(why, size, "cgroup %s is not under a cgroup2 mount", cg);
		return -1;
	}
	struct statfs sf;

	if (fstatfs(fd, &sf) || sf.f_type != CGROUP2_SUPER_MAGIC) {
		snprintf(why, size, "cgroup %s: not a cgroup2 dir", cg);
		close(fd);
		return -1;
	}
	return fd;
}

int rq_contain_create(int parent, const char *tag, char *name, size_t size)
{
	int fd;

	snprintf(name, size, "rdmaqual-case-%d-%s", (int)getpid(), tag);
	if (mkdirat(parent, name, 0755)) {
		/* An empty one of a dead agent whose pid we got: rmdir takes only empty ones. */
		if (errno != EEXIST || unlinkat(parent, name, AT_REMOVEDIR) || mkdirat(parent, name, 0755))
			return -errno;
	}
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		unlinkat(parent, name, AT_REMOVEDIR);
		return -e;
	}
	/*
	 * Held while the agent or the worker (which inherits this fd, its
	 * tools do not: O_CLOEXEC) lives: rq_contain_sweep_stale tells a
	 * live case's cgroup from a dead agent's by it, across PID
	 * namespaces.  Taken already: a sweep holds it, the dir is going.
	 */
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

int rq_contain_enter(int cg)
{
	int fd = openat(cg, "cgroup.procs", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	int rc = 0;

	if (fd < 0)
		return -errno;
	/* "0": the writer itself */
	if (write(fd, "0", 1) != 1)
		rc = -errno;
	close(fd);
	return rc;
}

int rq_contain_remove(int parent, const char *name, int cg)
{
	int rc = 0;

	if (cg >= 0)
		close(cg);
	if (parent >= 0 && name[0] && unlinkat(parent, name, AT_REMOVEDIR))
		rc = -errno;
	return rc;
}

struct pids {
	pid_t *v;
	size_t n, cap;
};

static void pids_add(struct pids *p, pid_t pid)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i] == pid)
			return;
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 32;
		p->v = xrealloc(p->v, p->cap * sizeof(*p->v));
	}
	p->v[p->n++] = pid;
}

static bool pids_has(const struct pids *p, pid_t pid)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i] == pid)
			return true;
	return false;
}

/* The state letter and parent of pid from /proc/PID/stat ('\0' when gone). */
static char proc_state(pid_t pid, pid_t *ppid)
{
	char path[64], buf[1024], st = '\0';
	const char *rp;
	int pp = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_small_at(AT_FDCWD, path, buf, sizeof(buf)) <= 0)
		return '\0';
	/* comm may hold ')' and blanks: the fields follow the last ')' */
	rp = strrchr(buf, ')');
	if (!rp || sscanf(rp + 1, " %c %d", &st, &pp) != 2)
		return '\0';
	if (ppid)
		*ppid = (pid_t)pp;
	return st;
}

static void cgroup_pids(int cg, struct pids *out)
{
	char *buf;
	ssize_t n;

	if (cg < 0)
		return;
	buf = xmalloc(1 << 20);
	n = read_small_at(cg, "cgroup.procs", buf, 1 << 20);
	for (char *p = buf, *end; n > 0 && *p; p = end) {
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		if (v > 0)
			pids_add(out, (pid_t)v);
		while (*end == '\n')
			end++;
	}
	free(buf);
}

/* Our children: /proc/N/stat's ppid (needs no CONFIG_PROC_CHILDREN). */
static void child_pids(pid_t self, struct pids *out)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char *end;
		long v = strtol(e->d_name, &end, 10);
		pid_t pp = 0;

		if (*end || v <= 0)
			continue;
		if (proc_state((pid_t)v, &pp) && pp == self)
			pids_add(out, (pid_t)v);
	}
	if (d)
		closedir(d);
}

/* Printable, one line, at most max bytes of s into sb. */
static void add_clean(struct sb *sb, const char *s, size_t max)
{
	for (size_t i = 0; s[i] && i < max; i++)
		sb_addc(sb, (unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f ? '?' : s[i]);
}

static void name_pid(pid_t pid, struct sb *names)
{
	char path[64], comm[64] = "?", argv0[256] = "";
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (read_small_at(AT_FDCWD, path, comm, sizeof(comm)) > 0)
		comm[strcspn(comm, "\n")] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	n = read_small_at(AT_FDCWD, path, argv0, sizeof(argv0));
	if (n <= 0)
		argv0[0] = '\0';	/* argv[0] ends at its NUL */
	sb_addf(names, "%spid %d ", names->len ? "; " : "", (int)pid);
	add_clean(names, comm, 16);
	if (argv0[0]) {
		sb_adds(names, " (");
		add_clean(names, argv0, 80);
		sb_addc(names, ')');
	}
}

#define NAMED_MAX 8

int rq_contain_sweep(int cg, bool children, const pid_t *skip, size_t n_skip,
		     int64_t deadline, struct sb *names, bool *left)
{
	struct pids seen = { 0 };
	pid_t self = getpid();
	int found = 0;
	bool have_kill = cg >= 0 && faccessat(cg, "cgroup.kill", W_OK, 0) == 0;

	if (left)
		*left = false;
	for (;;) {
		struct pids now = { 0 }, live = { 0 };
		bool self_in = false;

		cgroup_pids(cg, &now);
		if (children)
			child_pids(self, &now);
		for (size_t i = 0; i < now.n; i++) {
			pid_t p = now.v[i];
			bool skipped = false;

			for (size_t j = 0; j < n_skip; j++)
				skipped |= skip[j] == p;
			if (p == self) {
				self_in = true;
				continue;
			}
			if (skipped)
				continue;
			char st = proc_state(p, NULL);

			if (st == 'Z' || st == 'X' || !st) {
				waitpid(p, NULL, WNOHANG);	/* ours: reaped; else its parent's */
				continue;
			}
			pids_add(&live, p);
			if (pids_has(&seen, p))
				continue;
			pids_add(&seen, p);
			if (found++ < NAMED_MAX)
				name_pid(p, names);
		}
		free(now.v);
		if (!live.n) {
			free(live.v);
			break;
		}
		/*
		 * cgroup.kill takes the whole cgroup at once, forks racing the
		 * kill included; it would take us too when we are inside.
		 */
		if (have_kill && !self_in) {
			int fd = openat(cg, "cgroup.kill", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);

			if (fd >= 0) {
				if (write(fd, "1", 1) != 1)
					have_kill = false;
				close(fd);
			}
		}
		for (size_t i = 0; i < live.n; i++)
			kill(live.v[i], SIGKILL);
		for (size_t i = 0; i < live.n; i++)
			waitpid(live.v[i], NULL, WNOHANG);
		free(live.v);
		if (now_ms() >= deadline) {
			if (left)
				*left = true;
			break;
		}
		struct timespec ts = { 0, 5 * 1000000L };

		nanosleep(&ts, NULL);
	}
	if (found > NAMED_MAX)
		sb_addf(names, "; and %d more", found - NAMED_MAX);
	free(seen.v);
	return found;
}

int rq_contain_sweep_stale(struct sb *msgs)
{
	char why[256];
	int parent = rq_contain_parent(why, sizeof(why)), done = 0;
	DIR *d;
	struct dirent *e;

	if (parent < 0)
		return 0;
	d = fdopendir(dup(parent));
	while (d && (e = readdir(d))) {
		int cg;

		if (strncmp(e->d_name, "rdmaqual-case-", 14))
			continue;
		cg = openat(parent, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cg < 0)
			continue;
		/* its agent or worker holds the lock: a live case */
		if (flock(cg, LOCK_EX | LOCK_NB)) {
			close(cg);
			continue;
		}
		struct sb names = SB_INIT;
		int n = rq_contain_sweep(cg, false, NULL, 0, now_ms() + 5000, &names, NULL);
		int rc = rq_contain_remove(parent, e->d_name, cg);

		if (msgs && n > 0)
			sb_addf(msgs, "killed in cgroup %s, whose agent is gone: %s\n", e->d_name, names.buf);
		if (msgs && rc && rc != -ENOENT)
			sb_addf(msgs, "cgroup %s could not be removed: %s\n", e->d_name, strerror(-rc));
		else if (msgs && !rc)
			sb_addf(msgs, "removed cgroup %s\n", e->d_name);
		done += !rc;
		sb_release(&names);
	}
	if (d)
		closedir(d);
	close(parent);
	return done;
}

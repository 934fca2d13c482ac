/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include "statedir.h"
#include "core/util.h"

int statedir_lock(const char *want, char *dir, size_t dirsz)
{
	char path[4200], holder[64] = "";
	int fd;

	if (want && *want)
		snprintf(dir, dirsz, "%s", want);
	else
		rq_state_dir(NULL, dir, dirsz);
	if (mkdir_p(dir, 0700)) {
		fprintf(stderr, "rdmaqual: cannot create state dir %s: %s\n", dir, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/lock", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "rdmaqual: cannot open %s: %s\n", path, strerror(errno));
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
	for (size_t i = 0; rq_target_ops_all[i]; i++) {
		if (!rq_target_ops_all[i]->cleanup_stale)
			continue;
		if (verbose)
			printf("cleanup: %s\n", rq_target_ops_all[i]->name);
		rq_target_ops_all[i]->cleanup_stale(o);
	}
}

// SPDX-License-Identifier: MIT
/*
 * Run-state records of the rxe-vm target.  Before a QEMU is started, the
 * run writes "vm <dir>" into <state_dir>/rxevm-<runner pid>: the dir (its
 * sockets, console) is unique to the run and appears in QEMU's argv.  A
 * killed run leaves the file behind; cleanup kills every QEMU whose
 * /proc/PID/cmdline holds a recorded dir (never by name alone), removes
 * the dirs and the file.  Runs still alive are left alone.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "core/proc.h"
#include "core/target.h"
#include "core/util.h"
#include "vm/vm.h"

const char *rq_vm_state_dir(const struct rq_run_opts *o, char *buf, size_t size)
{
	return rq_state_dir(o, buf, size);
}

static void record_path(const char *state_dir, pid_t runner, char *buf, size_t size)
{
	snprintf(buf, size, "%s/rxevm-%d", state_dir, (int)runner);
}

int rq_vm_state_record(const char *state_dir, const char *dir, pid_t qemu_pid)
{
	char path[1024];
	struct sb f = SB_INIT;
	int rc;

	rc = mkdir_p(state_dir, 0700);
	if (rc < 0)
		return rc;
	record_path(state_dir, getpid(), path, sizeof(path));
	read_file(path, &f, 1 << 20);
	/* Atomic rewrite: a reader (cleanup) never sees half a line. */
	sb_addf(&f, "vm %d %s\n", (int)qemu_pid, dir);
	rc = write_file_atomic(path, f.buf, f.len);
	sb_release(&f);
	return rc;
}

void rq_vm_state_forget(const char *state_dir, const char *dir)
{
	char path[1024];
	struct sb f = SB_INIT, out = SB_INIT;

	record_path(state_dir, getpid(), path, sizeof(path));
	if (read_file(path, &f, 1 << 20) < 0) {
		sb_release(&f);
		return;
	}
	char *save = NULL;

	for (char *line = f.len ? strtok_r(f.buf, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *d = strlen(line) > 3 ? strchr(line + 3, ' ') : NULL;

		if (d && !strcmp(d + 1, dir))
			continue;
		sb_addf(&out, "%s\n", line);
	}
	if (out.len)
		write_file_atomic(path, out.buf, out.len);
	else
		unlink(path);
	sb_release(&f);
	sb_release(&out);
}

/* Is pid a live rdmaqual (its own record would then be in use)? */
static bool runner_alive(pid_t pid)
{
	char path[64], comm[64];

	if (pid <= 0 || (kill(pid, 0) < 0 && errno == ESRCH))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (read_line(path, comm, sizeof(comm)) < 0)
		return false;
	/* pid reuse: only an rdmaqual (or its sanitizer build) counts. */
	return strstr(comm, "rdmaqual") != NULL;
}

/* Does /proc/pid/cmdline hold needle (as part of one argument)? */
static bool cmdline_has(pid_t pid, const char *needle)
{
	char path[64];
	struct sb f = SB_INIT;
	bool hit = false;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if (read_file(path, &f, 1 << 20) == 0 && f.len)
		hit = memmem(f.buf, f.len, needle, strlen(needle)) != NULL;
	sb_release(&f);
	return hit;
}

/* Kill every process whose cmdline holds dir and whose argv[0] is a QEMU. */
static int kill_qemus_of(const char *dir, struct sb *msgs)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int killed = 0;
	char needle[256];

	if (!d)
		return 0;
	/* Match a path inside the dir, not a prefix of another run's dir. */
	snprintf(needle, sizeof(needle), "%s/", dir);
	while ((e = readdir(d))) {
		char path[64], exe[256];
		pid_t pid;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		pid = (pid_t)atoi(e->d_name);
		if (pid == getpid() || !cmdline_has(pid, needle))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		if (read_line(path, exe, sizeof(exe)) < 0 || !strstr(exe, "qemu"))
			continue;
		if (kill(pid, SIGKILL) == 0) {
			killed++;
			if (msgs)
				sb_addf(msgs, "killed QEMU pid %d of %s\n", (int)pid, dir);
			/* Reaped by its parent (init once the runner died); wait until gone. */
			for (int i = 0; i < 200 && kill(pid, 0) == 0; i++) {
				struct timespec ts = { 0, 10 * 1000000L };

				if (waitpid(pid, NULL, WNOHANG) == pid)
					break;
				nanosleep(&ts, NULL);
			}
		}
	}
	closedir(d);
	return killed;
}

static const char *const scratch_prefixes[] = { "/tmp/rq-", "/run/rq-", NULL };

/* The L2 segment of an N-guest boot (vm/l2-segment.sh), named after its dir. */
static void netns_remove(const char *dir, struct sb *msgs)
{
	char ns[160], path[256];
	struct stat st;

	rq_vm_netns_name(dir, ns, sizeof(ns));
	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	if (lstat(path, &st) < 0)
		return;
	const char *argv[] = { "ip", "netns", "del", ns, NULL };
	struct proc_opts o = { .argv = argv, .timeout_ms = 10000, .log_fd = -1 };
	struct proc_result r;

	proc_result_init(&r);
	if (proc_run(&o, &r) == 0 && !r.exit_code && msgs)
		sb_addf(msgs, "removed network namespace %s\n", ns);
	proc_result_release(&r);
}

int rq_vm_cleanup_stale(const char *state_dir, struct sb *msgs)
{
	DIR *d = opendir(state_dir);
	struct dirent *e;
	int killed = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[1024];
		struct sb f = SB_INIT;
		pid_t runner;

		if (strncmp(e->d_name, "rxevm-", 6))
			continue;
		runner = (pid_t)atoi(e->d_name + 6);
		if (runner_alive(runner))
			continue;
		snprintf(path, sizeof(path), "%s/%s", state_dir, e->d_name);
		if (read_file(path, &f, 1 << 20) == 0 && f.len) {
			char *save = NULL, last[256] = "";

			for (char *line = strtok_r(f.buf, "\n", &save); line;
			     line = strtok_r(NULL, "\n", &save)) {
				const char *dir;

				if (strncmp(line, "vm ", 3) || !(dir = strchr(line + 3, ' ')))
					continue;
				dir++;
				/* Only our own temp dirs are removed (never a path we did not make). */
				if (strncmp(dir, "/tmp/rq-", 8) && strncmp(dir, "/run/rq-", 8))
					continue;
				/* One line per QEMU, one dir per boot: handle each dir once. */
				if (!strcmp(dir, last))
					continue;
				snprintf(last, sizeof(last), "%s", dir);
				killed += kill_qemus_of(dir, msgs);
				netns_remove(dir, msgs);
				int rc = rm_rf_scratch(dir, scratch_prefixes);

				if (msgs && rc == 0)
					sb_addf(msgs, "removed %s\n", dir);
				else if (msgs && rc == -EPERM)
					sb_addf(msgs, "left %s: not one dir of ours under /tmp/rq-* or /run/rq-*\n", dir);
			}
		}
		sb_release(&f);
		unlink(path);
	}
	closedir(d);
	return killed;
}

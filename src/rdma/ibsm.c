/* SPDX-License-Identifier: MIT */
/*
 * Subnet-manager plumbing (see ibsm.h).  Two measured facts shape it:
 * opensm's "SUBNET UP" may sit in its log buffer until it exits, so
 * bring-up is judged by asking the fabric; and an opensm whose ibsim went
 * away first can hang in umad2sim, so opensm is stopped before ibsim and
 * gets SIGKILL after a grace.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "rdma/ibsm.h"
#include "core/util.h"

const char *ibsm_umad2sim_path(void)
{
	static const char *const cands[] = {
		"/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so",
		"/usr/lib/aarch64-linux-gnu/umad2sim/libumad2sim.so",
		"/usr/lib/umad2sim/libumad2sim.so",
		"/usr/lib64/umad2sim/libumad2sim.so",
	};
	const char *env = getenv("RQ_UMAD2SIM");

	if (env && *env)
		return access(env, R_OK) == 0 ? env : NULL;
	for (size_t i = 0; i < ARRAY_SIZE(cands); i++)
		if (access(cands[i], R_OK) == 0)
			return cands[i];
	return NULL;
}

pid_t ibsm_opensm_start(const struct ibsm_opensm *o, char *err, size_t errsz)
{
	const char *argv[24];
	const char *env[32];
	char prio[8], sweep[12], *simhost = NULL;
	size_t n = 0, ne = 0;
	int out;
	pid_t pid;

	argv[n++] = "opensm";
	if (o->guid && *o->guid) {
		argv[n++] = "-g";
		argv[n++] = o->guid;
	}
	snprintf(prio, sizeof(prio), "%d", o->priority);
	argv[n++] = "-p";
	argv[n++] = prio;
	if (o->once) {
		argv[n++] = "-o";
	} else {
		snprintf(sweep, sizeof(sweep), "%d", o->sweep_s);
		argv[n++] = "-s";
		argv[n++] = sweep;
	}
	if (o->config && *o->config) {
		argv[n++] = "-F";
		argv[n++] = o->config;
	}
	if (o->routing && *o->routing) {
		argv[n++] = "-R";
		argv[n++] = o->routing;
	}
	if (o->qos)
		argv[n++] = "-Q";
	if (o->qos && o->qos_policy && *o->qos_policy) {
		argv[n++] = "-Y";
		argv[n++] = o->qos_policy;
	}
	if (o->partitions && *o->partitions) {
		argv[n++] = "-P";
		argv[n++] = o->partitions;
	}
	/* -d2 asks for a flush after each message; the log is still read only at the end. */
	argv[n++] = "-d2";
	argv[n++] = "-f";
	argv[n++] = o->log_path;
	argv[n] = NULL;
	for (size_t i = 0; o->env && o->env[i] && ne < ARRAY_SIZE(env) - 2; i++)
		env[ne++] = o->env[i];
	if (o->sim_host && *o->sim_host) {
		simhost = xasprintf("SIM_HOST=%s", o->sim_host);
		env[ne++] = simhost;
	}
	env[ne] = NULL;
	out = open(o->out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		snprintf(err, errsz, "cannot create %s: %s", o->out_path, strerror(errno));
		free(simhost);
		return -errno;
	}
	struct spawn_opts so = {
		.argv = argv, .env_add = env, .cwd = o->cwd,
		.stdin_fd = -1, .stdout_fd = out, .stderr_fd = out,
	};
	pid = proc_spawn(&so);
	close(out);
	free(simhost);
	if (pid < 0)
		snprintf(err, errsz, "cannot start opensm: %s", strerror((int)-pid));
	return pid;
}

void ibsm_stop(pid_t pid, int64_t grace_ms)
{
	if (pid > 0)
		proc_kill_group(pid, grace_ms);
}

void ibsm_view_release(struct ibsm_view *v)
{
	ib_links_release(&v->links);
	v->sm_answered = v->links_read = false;
}

int ibsm_look(const struct ibsm_tools *t, struct ibsm_view *v, int64_t tool_timeout_ms)
{
	static const char *const sminfo[] = { "sminfo", NULL };
	static const char *const linkinfo[] = { "iblinkinfo", NULL };
	struct proc_result r;
	char err[256];
	int ret;

	ibsm_view_release(v);
	v->why[0] = '\0';
	proc_result_init(&r);
	ret = t->run(t->arg, sminfo, tool_timeout_ms, &r);
	if (ret == 0 && r.exec_failed)
		ret = -ENOENT;
	if (ret == 0) {
		int pr = sminfo_parse(r.out.buf, r.out.len, &v->sm, err, sizeof(err));

		if (pr == 0)
			v->sm_answered = true;
		else
			snprintf(v->why, sizeof(v->why), "no SM answers sminfo (%s)", err);
	} else {
		snprintf(v->why, sizeof(v->why), "cannot run sminfo: %s", strerror(-ret));
	}
	proc_result_release(&r);
	if (!v->sm_answered)
		return -EAGAIN;
	proc_result_init(&r);
	ret = t->run(t->arg, linkinfo, tool_timeout_ms, &r);
	if (ret == 0 && !r.exec_failed && !r.timed_out) {
		if (iblinkinfo_parse(r.out.buf, r.out.len, &v->links, err, sizeof(err)) == 0)
			v->links_read = true;
		else
			snprintf(v->why, sizeof(v->why), "iblinkinfo output not understood: %s", err);
	} else {
		snprintf(v->why, sizeof(v->why), "iblinkinfo failed (%s)",
			 r.timed_out ? "timed out" : r.exec_failed ? "not found" : "no answer");
	}
	proc_result_release(&r);
	return v->links_read ? 0 : -EAGAIN;
}

/* One end of an expected link as the fabric shows it; false with why. */
static bool end_up(const struct ibsm_view *v, const struct ibnet *net, int node, int port,
		   char *why, size_t whysz)
{
	const char *name = net->nodes[node].desc;
	const struct ib_link *k = ib_links_find(&v->links, name, port);

	if (!k) {
		snprintf(why, whysz, "%s port %d not seen on the fabric", name, port);
		return false;
	}
	if (strcmp(k->state, "Active")) {
		snprintf(why, whysz, "%s port %d is %s/%s", name, port, k->state, k->phys);
		return false;
	}
	if (!k->lid) {
		snprintf(why, whysz, "%s port %d is Active without a LID", name, port);
		return false;
	}
	return true;
}

bool ibsm_subnet_up(const struct ibsm_view *v, const struct ibnet *expect, char *why, size_t whysz)
{
	if (!v->sm_answered) {
		snprintf(why, whysz, "%s", v->why[0] ? v->why : "no SM answers sminfo");
		return false;
	}
	if (v->sm.state != SMINFO_MASTER) {
		snprintf(why, whysz, "the SM at LID %u is %s, not MASTER", v->sm.lid,
			 ib_sminfo_state_name(v->sm.state));
		return false;
	}
	if (!v->sm.lid) {
		snprintf(why, whysz, "the MASTER SM has no LID yet");
		return false;
	}
	if (!v->links_read) {
		snprintf(why, whysz, "%s", v->why[0] ? v->why : "iblinkinfo not read");
		return false;
	}
	if (expect) {
		for (size_t i = 0; i < expect->nlinks; i++) {
			const struct ibnet_link *k = &expect->links[i];

			if (!end_up(v, expect, k->a, k->aport, why, whysz) ||
			    !end_up(v, expect, k->b, k->bport, why, whysz))
				return false;
		}
		return true;
	}
	for (size_t i = 0; i < v->links.n; i++) {
		const struct ib_link *k = &v->links.v[i];

		if (!strcmp(k->phys, "LinkUp") && strcmp(k->state, "Active")) {
			snprintf(why, whysz, "%s port %d is %s/%s", k->node, k->port, k->state, k->phys);
			return false;
		}
	}
	return true;
}

static bool pid_alive(pid_t pid)
{
	int st;
	pid_t w = waitpid(pid, &st, WNOHANG);

	/* Our child: exited when waitpid reaps it (then it is gone for good). */
	if (w == pid)
		return false;
	if (w == 0)
		return true;
	return kill(pid, 0) == 0;
}

int ibsm_wait_up(const struct ibsm_tools *t, const struct ibnet *expect, int64_t deadline_ms,
		 pid_t alive, struct ibsm_view *v)
{
	int64_t backoff = 50;
	char why[512];

	for (;;) {
		int64_t left = deadline_ms - now_ms();

		ibsm_look(t, v, left > 10000 ? 10000 : (left > 100 ? left : 100));
		if (ibsm_subnet_up(v, expect, why, sizeof(why)))
			return 0;
		snprintf(v->why, sizeof(v->why), "%s", why);
		if (alive > 0 && !pid_alive(alive))
			return -ESRCH;
		left = deadline_ms - now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		if (backoff > left)
			backoff = left;
		struct timespec ts = { backoff / 1000, (backoff % 1000) * 1000000L };

		nanosleep(&ts, NULL);
		backoff = backoff * 2 > 500 ? 500 : backoff * 2;
	}
}

/* What a view shows, as a number: the SM's state and every port's. */
static uint64_t view_sig(const struct ibsm_view *v)
{
	uint64_t h = 1469598103934665603ULL;

	h = (h ^ (uint64_t)(v->sm_answered ? v->sm.state + 1 : 0)) * 1099511628211ULL;
	for (size_t i = 0; v->links_read && i < v->links.n; i++)
		for (const char *c = v->links.v[i].state; *c; c++)
			h = (h ^ (unsigned char)*c) * 1099511628211ULL;
	return h;
}

int ibsm_wait_answer(const struct ibsm_tools *t, int64_t deadline_ms, pid_t alive, struct ibsm_view *v)
{
	uint64_t last = 0;
	unsigned same = 0;
	char why[512];

	for (;;) {
		int64_t left = deadline_ms - now_ms();

		ibsm_look(t, v, left > 10000 ? 10000 : (left > 100 ? left : 100));
		if (ibsm_subnet_up(v, NULL, why, sizeof(why)))
			return 0;
		if (v->sm_answered) {
			uint64_t sig = view_sig(v);

			same = sig == last ? same + 1 : 0;
			last = sig;
			if (same >= 2)
				return 0;
		}
		snprintf(v->why, sizeof(v->why), "%s", why);
		if (alive > 0 && !pid_alive(alive))
			return -ESRCH;
		if (now_ms() + 500 > deadline_ms)
			return -ETIMEDOUT;
		struct timespec ts = { 0, 500 * 1000000L };

		nanosleep(&ts, NULL);
	}
}

/* ---- run-state records ---- */

static char *record_path(const char *state_dir, pid_t writer)
{
	return xasprintf("%s/ibsm-%d.run", state_dir, (int)writer);
}

static int record_line(const char *state_dir, const char *line)
{
	char *path;
	struct sb sb = SB_INIT;
	int ret;

	if (!state_dir || !*state_dir)
		return 0;
	mkdir_p(state_dir, 0700);
	path = record_path(state_dir, getpid());
	read_file(path, &sb, 1 << 20);
	sb_addf(&sb, "%s\n", line);
	ret = write_file_atomic(path, sb.buf, sb.len);
	sb_release(&sb);
	free(path);
	return ret;
}

int ibsm_record_dir(const char *state_dir, const char *dir)
{
	char *l = xasprintf("dir %s", dir);
	int ret = record_line(state_dir, l);

	free(l);
	return ret;
}

/* /proc/PID/cmdline as hex (NULs kept): what cleanup compares before it kills. */
static int cmdline_hex(pid_t pid, struct sb *out)
{
	char path[64];
	struct sb raw = SB_INIT;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	ret = read_file(path, &raw, 64 << 10);
	if (ret == 0 && !raw.len)
		ret = -ESRCH;
	for (size_t i = 0; ret == 0 && i < raw.len; i++)
		sb_addf(out, "%02x", (unsigned char)raw.buf[i]);
	sb_release(&raw);
	return ret;
}

int ibsm_record_pid(const char *state_dir, pid_t pid)
{
	struct sb hex = SB_INIT;
	char *l;
	int ret;

	if (!state_dir || !*state_dir)
		return 0;
	ret = cmdline_hex(pid, &hex);
	if (ret == 0) {
		l = xasprintf("pid %d %s", (int)pid, hex.buf);
		ret = record_line(state_dir, l);
		free(l);
	}
	sb_release(&hex);
	return ret;
}

void ibsm_unrecord(const char *state_dir, const char *what)
{
	char *path;
	struct sb sb = SB_INIT, keep = SB_INIT;
	size_t wl = strlen(what);

	if (!state_dir || !*state_dir)
		return;
	path = record_path(state_dir, getpid());
	if (read_file(path, &sb, 1 << 20) == 0) {
		for (char *save = NULL, *l = strtok_r(sb.buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
			if (strncmp(l, what, wl) || (l[wl] != ' ' && l[wl] != '\0'))
				sb_addf(&keep, "%s\n", l);
		if (keep.len)
			write_file_atomic(path, keep.buf, keep.len);
		else
			unlink(path);
	}
	sb_release(&sb);
	sb_release(&keep);
	free(path);
}

static bool writer_alive(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

int ibsm_cleanup_stale(const char *state_dir, struct sb *msgs)
{
	DIR *d = state_dir ? opendir(state_dir) : NULL;
	struct dirent *e;
	int done = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		struct sb f = SB_INIT;
		char *path;
		pid_t writer;

		if (strncmp(e->d_name, "ibsm-", 5) || !str_ends(e->d_name, ".run"))
			continue;
		writer = (pid_t)atoi(e->d_name + 5);
		if (writer_alive(writer))
			continue;
		path = xasprintf("%s/%s", state_dir, e->d_name);
		if (read_file(path, &f, 1 << 20) == 0) {
			/* Daemons first (they may hold files in the dirs). */
			for (int pass = 0; pass < 2; pass++) {
				char *copy = xstrdup(f.buf);

				for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l;
				     l = strtok_r(NULL, "\n", &save)) {
					int pid;
					char hex[1 << 12];

					if (pass == 0 && sscanf(l, "pid %d %4095s", &pid, hex) == 2) {
						struct sb now = SB_INIT;

						/* Only the very process recorded: same pid and cmdline. */
						if (pid > 1 && cmdline_hex(pid, &now) == 0 && !strcmp(now.buf, hex) &&
						    kill(pid, SIGKILL) == 0) {
							done++;
							if (msgs)
								sb_addf(msgs, "killed pid %d left by run %d\n", pid, (int)writer);
						}
						sb_release(&now);
					} else if (pass == 1 && str_starts(l, "dir ")) {
						static const char *const pre[] = { "/tmp/rq-", NULL };
						int rc = rm_rf_scratch(l + 4, pre);

						if (rc == 0) {
							done++;
							if (msgs)
								sb_addf(msgs, "removed %s\n", l + 4);
						} else if (rc == -EPERM && msgs) {
							sb_addf(msgs, "left %s: not one dir of ours under /tmp/rq-*\n",
								l + 4);
						}
					}
				}
				free(copy);
			}
		}
		unlink(path);
		free(path);
		sb_release(&f);
	}
	closedir(d);
	return done;
}

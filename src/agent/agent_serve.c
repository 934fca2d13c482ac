/* SPDX-License-Identifier: MIT */
/*
 * Agent side of the protocol (agent.h).  The agent never runs kind code in
 * its own process: each run or exec request is served by a forked worker in
 * its own process group, which writes its answer to a file in a private
 * scratch directory.  So a kind that crashes or hangs costs one answer
 * (ERROR with how the worker ended), never the agent, and both roles of a
 * loopback case can run at once.
 *
 * Input is untrusted: a line that is not a JSON object, is too long, or
 * lacks what its op needs gets an error answer and the agent goes on.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <dirent.h>
#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "agent/agent.h"
#include "agent/contain.h"
#include "agent/request.h"
#include "core/json_text.h"
#include "core/kind.h"
#include "core/kmod.h"
#include "core/util.h"


/*
 * How a replay request's tools run: set by the program that serves
 * (rdmaqual agent gives src/qual's rq_tool_replay).  Unset, a replay
 * request's tools fail rather than run live on a node that was to be left
 * alone.
 */
static rq_tool_fn replay_tool;

void rq_agent_set_replay(rq_tool_fn fn)
{
	replay_tool = fn;
}

static int no_replay(struct rq_ctx *ctx, const char *const *argv, int64_t timeout_ms,
		     struct proc_result *r)
{
	r->exec_failed = true;
	r->exec_errno = ENOSYS;
	r->exit_code = -1;
	sb_adds(&r->err, "this agent replays no captures (rq_agent_set_replay was not called)\n");
	return -ENOSYS;
}

#define MAX_WORKERS 16

struct worker {
	pid_t pid;		/* 0: free slot */
	uint64_t id;
	char op[16];
	char dir[512];
	int64_t kill_at;	/* now_ms() deadline after which the group is killed */
	bool cancelled, timed_out;
	double mul;		/* the request's timeout_mul: this worker's pace */
	json_t *req;		/* kept for cleanup after a kill */
	int cg;			/* its cgroup's dir fd (contain.h), -1: none */
	char cg_name[96];
};

struct agent {
	int in_fd, out_fd;
	char base[256];
	struct worker w[MAX_WORKERS];
	struct sb in;
	bool discarding;	/* inside an oversized line */
	bool stop;
	int cg_parent;		/* the agent's own cgroup, where cases get theirs; -1: none */
};

/* Send one answer; takes ownership of payload.  id NULL: the request had none. */
/*
 * Cut the largest of the payload's texts (log, out, err) to its first and
 * last quarter with a marker; false when none is left worth cutting.
 */
static bool shrink_payload(json_t *j)
{
	static const char *const keys[] = { "log", "out", "err" };
	const char *key = NULL;
	size_t len = 0;

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		json_t *v = json_object_get(j, keys[i]);

		if (json_is_string(v) && json_string_length(v) > len) {
			len = json_string_length(v);
			key = keys[i];
		}
	}
	if (!key || len < 4096)
		return false;

	const char *t = json_string_value(json_object_get(j, key));
	size_t keep = len / 4;
	struct sb sb = SB_INIT;

	/* Cut on UTF-8 boundaries: never start or end inside a character. */
	size_t h = keep, tl = len - keep;

	while (h > 0 && ((unsigned char)t[h] & 0xc0) == 0x80)
		h--;
	while (tl < len && ((unsigned char)t[tl] & 0xc0) == 0x80)
		tl++;
	sb_add(&sb, t, h);
	sb_addf(&sb, "\n[rdmaqual: %zu bytes cut here to fit the agent's line limit]\n", tl - h);
	sb_add(&sb, t + tl, len - tl);
	json_object_set_new(j, key, json_stringn(sb.buf, sb.len));
	json_object_set_new(j, "truncated", json_true());
	sb_release(&sb);
	return true;
}

static void answer(struct agent *ag, json_t *id, bool ok, const char *error, json_t *payload)
{
	json_t *j = payload ? payload : json_object();
	char *text;

	json_object_set_new(j, "v", json_integer(RQ_AGENT_PROTO));
	json_object_set_new(j, "id", json_integer(json_is_integer(id) ? json_integer_value(id) : 0));
	json_object_set_new(j, "ok", json_boolean(ok));
	if (error)
		json_object_set_new(j, "error", json_string(error));
	/*
	 * The limit is on the escaped line: 1 MiB of control bytes is 6 MiB of
	 * \u00XX.  Cut (and say so) until it fits, so one noisy case never
	 * costs the controller its agent.
	 */
	for (;;) {
		text = json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII);
		if (!text || strlen(text) < RQ_AGENT_LINE_MAX - 1 || !shrink_payload(j))
			break;
		free(text);
	}
	if (text && strlen(text) >= RQ_AGENT_LINE_MAX - 1) {
		char *msg = xasprintf("answer of %zu bytes exceeds the agent's line limit", strlen(text));

		free(text);
		json_decref(j);
		j = json_pack("{s:i, s:I, s:b, s:s}", "v", RQ_AGENT_PROTO, "id",
			      (json_int_t)(json_is_integer(id) ? json_integer_value(id) : 0), "ok", 0,
			      "error", msg);
		free(msg);
		text = json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII);
	}
	json_decref(j);
	if (!text)
		return;
	struct sb sb = SB_INIT;
	sb_adds(&sb, text);
	sb_addc(&sb, '\n');
	free(text);
	for (size_t off = 0; off < sb.len;) {
		ssize_t n = write(ag->out_fd, sb.buf + off, sb.len - off);

		if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
			struct pollfd p = { .fd = ag->out_fd, .events = POLLOUT };

			poll(&p, 1, 100);
			continue;
		}
		if (n <= 0) {
			ag->stop = true;	/* the controller is gone */
			break;
		}
		off += (size_t)n;
	}
	sb_release(&sb);
}

static void answer_err(struct agent *ag, json_t *id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void answer_err(struct agent *ag, json_t *id, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	answer(ag, id, false, msg, NULL);
}

static const char *jstr(json_t *o, const char *k, const char *def)
{
	json_t *v = json_object_get(o, k);

	return json_is_string(v) ? json_string_value(v) : def;
}

/* ---- facts ---------------------------------------------------------- */

static void add_pc_version(json_t *f, const char *key, const char *pattern)
{
	glob_t g;
	char line[256];

	if (glob(pattern, 0, NULL, &g))
		return;
	FILE *fp = fopen(g.gl_pathv[0], "r");

	while (fp && fgets(line, sizeof(line), fp))
		if (str_starts(line, "Version:")) {
			json_object_set_new(f, key, json_string(strtrim(line + 8)));
			break;
		}
	if (fp)
		fclose(fp);
	globfree(&g);
}

json_t *rq_agent_facts(void)
{
	json_t *f = json_object();
	struct utsname u;
	char host[256];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	if (!uname(&u)) {
		json_object_set_new(f, "kernel", json_string(u.release));
		json_object_set_new(f, "machine", json_string(u.machine));
	}
	if (!gethostname(host, sizeof(host)))
		json_object_set_new(f, "hostname", json_string(host));
	json_object_set_new(f, "cpus", json_integer(ncpu));
	json_object_set_new(f, "rdmaqual", json_string(RQ_VERSION));
	/* Which binary serves: an installed one, or a copy the controller sent. */
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		exe[n] = '\0';
		json_object_set_new(f, "rdmaqual_exe", json_string(exe));
	}
	add_pc_version(f, "rdma_core_libibverbs", "/usr/lib/*/pkgconfig/libibverbs.pc");
	return f;
}

/* ---- workers -------------------------------------------------------- */

static void write_answer_file(const char *dir, json_t *payload)
{
	char path[600];
	char *text = json_dumps(payload, JSON_COMPACT | JSON_ENSURE_ASCII);

	snprintf(path, sizeof(path), "%s/answer.json", dir);
	/* read by the agent once the worker exits, then removed: no fsync */
	if (text)
		write_file_replace(path, text, strlen(text));
	free(text);
}

/* An error row for a request whose case did not load. */
static void load_failed(json_t *jrows, const char *why, const struct rq_diags *diags)
{
	struct rq_result *r = rq_result_new("?", NULL, 0);

	if (diags->n && diags->v[0].line)
		rq_result_set(r, RQ_ERROR, "%s (%s:%u:%u)", why, diags->v[0].file,
			      diags->v[0].line, diags->v[0].col);
	else
		rq_result_set(r, RQ_ERROR, "%s", why);
	json_array_append_new(jrows, rq_result_to_json(r, false));
	rq_result_free(r);
}

/* The context a request describes; tools run live unless it replays a sysroot. */
static void ctx_of(struct rq_ctx *ctx, const struct rq_request *rq, int logfd,
		   const char *scratch, struct rq_results *rows)
{
	*ctx = (struct rq_ctx){
		.c = rq->c,
		.target = rq->target,
		.root = rq->root,
		.replay = rq->replay,
		.log_fd = logfd,
		.scratch = scratch,
		.state_dir = rq->state_dir,
		.tool_env = rq->env,
		.tool_cwd = rq->tool_cwd,
		.tool = rq_tool_live,
		.role = rq->role,
		.peer_addr = rq->peer_addr,
		.local_addr = rq->local_addr,
		.oob_port = rq->oob_port,
		.where = &rq->where,
		.deadline_ms = now_ms() + rq->timeout_ms,
		.out = rows,
	};
	if (ctx->replay)
		ctx->tool = replay_tool ? replay_tool : no_replay;
}

/* In a worker: its cgroup (contain.h) once it is inside, else -1. */
static int worker_cg = -1;

/* How long the processes left at a case's end get to be gone after their SIGKILL. */
#define LEFTOVER_MS 5000

/*
 * In the worker, once the kind is done (cleanup included): what the case
 * left running, a daemon, is named and killed; each row it reports gets
 * the fact leftover_processes, and a PASS or SKIP becomes a FAIL unless
 * the case says why one may outlive it (daemon_allowed).
 */
static void judge_leftovers(const struct rq_case *c, struct rq_results *rows, int logfd)
{
	struct sb names = SB_INIT;
	bool stuck;
	int n = rq_contain_sweep(worker_cg, true, NULL, 0, now_ms() + scaled_ms(LEFTOVER_MS), &names,
				 &stuck);

	if (n <= 0) {
		sb_release(&names);
		return;
	}
	if (stuck)
		sb_addf(&names, " (some still there %.1f s after the kill)", scaled_ms(LEFTOVER_MS) / 1000.0);
	if (logfd >= 0)
		dprintf(logfd, "# %d process%s of the case left running at its end, killed: %s%s%s\n", n,
			n == 1 ? "" : "es", names.buf, c->daemon_allowed ? "; allowed: " : "",
			c->daemon_allowed ? c->daemon_allowed : "");
	for (size_t i = 0; i < rows->n; i++) {
		struct rq_result *r = rows->v[i];

		rq_fact_add(r, "leftover_processes", names.buf);
		if (c->daemon_allowed) {
			rq_fact_add(r, "daemon_allowed", c->daemon_allowed);
			continue;
		}
		if (r->verdict != RQ_PASS && r->verdict != RQ_SKIP)
			continue;
		/* past a sticky PASS: the case left something running on the node */
		sb_addf(&r->log, "verdict FAIL: %s was %s, and the case left %d process%s running\n",
			r->id, rq_verdict_name(r->verdict), n, n == 1 ? "" : "es");
		r->verdict = RQ_FAIL;
		free(r->reason);
		r->reason = xasprintf("left %d process%s running at its end (killed): %s; a case whose "
				      "daemon may outlive it says why in daemon_allowed", n,
				      n == 1 ? "" : "es", names.buf);
	}
	sb_release(&names);
}

/* In the worker: run one case (one role of it) and write the answer. */
static int worker_run(json_t *req, const char *dir)
{
	struct rq_request rq;
	struct rq_diags diags = { 0 };
	struct rq_results rows = { 0 };
	struct rq_ctx ctx;
	char logpath[600], scratch[600], why[1024] = "";
	json_t *payload = json_object(), *jrows = json_array();

	snprintf(logpath, sizeof(logpath), "%s/log", dir);
	snprintf(scratch, sizeof(scratch), "%s/scratch", dir);
	mkdir(scratch, 0700);
	int logfd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

	if (rq_request_from_json(&rq, req, &diags, why, sizeof(why))) {
		load_failed(jrows, why, &diags);
		goto out;
	}
	/* This process's waits, and the tools' timeouts, at the run's pace. */
	rq_timeout_mul = rq.timeout_mul;
	const struct rq_case *c = rq.c;
	const struct rq_kind *k = c->kind;

	/* A node tree (sysroot) is read inside itself: its links cannot reach this node. */
	read_confine(rq.root);
	ctx_of(&ctx, &rq, logfd, scratch, &rows);
	ctx.state = xcalloc(1, k->state_size ? k->state_size : 1);
	ctx.main = rq_result_new(c->name, NULL, 0);
	rq_results_add(&rows, ctx.main);
	/* modules: first, so that needs: module:X sees them loaded. */
	enum rq_verdict kv = rq_kmod_load(&ctx, c->modules, c->nmodules, why, sizeof(why));

	if (kv != RQ_NONE) {
		rq_result_set(ctx.main, kv, "%s", why);
	} else if (!rq_needs_met(&ctx, why, sizeof(why))) {
		rq_result_set(ctx.main, RQ_SKIP, "%s", why);
	} else {
		enum rq_verdict v = k->check ? k->check(&ctx, c->cfg, why, sizeof(why)) : RQ_NONE;

		if (v != RQ_NONE) {
			rq_result_set(ctx.main, v, "%s", why[0] ? why : "not applicable");
		} else {
			k->run(&ctx, c->cfg);
			if (k->cleanup)
				k->cleanup(&ctx, c->cfg);
		}
	}
	if (c->nmodules)
		rq_kmod_unload(&ctx);
	/*
	 * The main row stands for the case only when the kind added no rows of
	 * its own, or when it recorded something itself.
	 */
	struct rq_results shown = { 0 };

	for (size_t i = 0; i < rows.n; i++) {
		struct rq_result *r = rows.v[i];

		if (r == ctx.main && rows.n > 1 && !r->judged && r->verdict == RQ_NONE &&
		    !r->nfigs)
			continue;
		rq_result_finish(r);
		rq_results_add(&shown, r);
	}
	judge_leftovers(c, &shown, logfd);
	for (size_t i = 0; i < shown.n; i++)
		json_array_append_new(jrows, rq_result_to_json(shown.v[i], false));
	free(shown.v);
	rq_results_release(&rows);
	free(ctx.state);
out:
	json_object_set_new(payload, "rows", jrows);
	write_answer_file(dir, payload);
	json_decref(payload);
	if (logfd >= 0)
		close(logfd);
	rq_request_release(&rq);
	rq_diags_release(&diags);
	return 0;
}

/* In the worker: after a run was killed, undo what it may have changed. */
static int worker_cleanup(json_t *req, const char *dir)
{
	struct rq_request rq;
	struct rq_diags diags = { 0 };
	struct rq_results rows = { 0 };
	char logpath[600], scratch[600], why[512];

	snprintf(logpath, sizeof(logpath), "%s/log", dir);
	snprintf(scratch, sizeof(scratch), "%s/scratch", dir);
	int logfd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

	if (!rq_request_from_json(&rq, req, &diags, why, sizeof(why)) &&
	    (rq.c->kind->cleanup || rq.c->nmodules)) {
		struct rq_ctx ctx;

		rq_timeout_mul = rq.timeout_mul;
		/* the run's time is spent: cleanup gets its own */
		rq.timeout_ms = scaled_ms(30000);
		ctx_of(&ctx, &rq, logfd, scratch, &rows);
		/* the killed worker's state died with it: the journal says what to undo */
		ctx.state = xcalloc(1, rq.c->kind->state_size ? rq.c->kind->state_size : 1);
		ctx.main = rq_result_new(rq.c->name, NULL, 0);
		rq_results_add(&rows, ctx.main);
		dprintf(logfd, "# running cleanup after the case was stopped\n");
		if (rq.c->kind->cleanup)
			rq.c->kind->cleanup(&ctx, rq.c->cfg);
		/* after the kind's cleanup: its programs held the modules */
		if (rq.c->nmodules)
			rq_kmod_unload(&ctx);
		free(ctx.state);
	}
	rq_results_release(&rows);
	if (logfd >= 0)
		close(logfd);
	rq_request_release(&rq);
	rq_diags_release(&diags);
	return 0;
}

static int worker_exec(json_t *req, const char *dir)
{
	json_t *jargv = json_object_get(req, "argv");
	json_t *payload = json_object();
	size_t n = json_array_size(jargv);
	const char **argv = xcalloc(n + 1, sizeof(*argv));
	struct proc_result r;

	for (size_t i = 0; i < n; i++)
		argv[i] = json_string_value(json_array_get(jargv, i));
	proc_result_init(&r);
	struct proc_opts o = {
		.argv = argv,
		.timeout_ms = json_integer_value(json_object_get(req, "timeout_ms")),
		.log_fd = -1,
		.tail_max = 1 << 20,
	};
	if (proc_run(&o, &r) == 0) {
		json_object_set_new(payload, "exit", json_integer(r.exit_code));
		json_object_set_new(payload, "signal", json_integer(r.signal));
		json_object_set_new(payload, "timed_out", json_boolean(r.timed_out));
		json_object_set_new(payload, "exec_failed", json_boolean(r.exec_failed));
		json_object_set_new(payload, "out", json_stringn(r.out.buf, r.out.len));
		json_object_set_new(payload, "err", json_stringn(r.err.buf, r.err.len));
		json_object_set_new(payload, "truncated", json_boolean(r.out_truncated || r.err_truncated));
	}
	write_answer_file(dir, payload);
	json_decref(payload);
	proc_result_release(&r);
	free(argv);
	return 0;
}

/* In a worker: <dir>/groups, "+PGID" and "-PGID" lines (proc_group_hook). */
static int groups_fd = -1;

static void note_group(pid_t pgid, bool started)
{
	if (groups_fd >= 0)
		dprintf(groups_fd, "%c%d\n", started ? '+' : '-', (int)pgid);
}

static pid_t fork_worker(struct agent *ag, int (*fn)(json_t *, const char *), json_t *req,
			 const char *dir, int cg)
{
	pid_t pid = fork();
	char path[600];

	if (pid)
		return pid;
	/*
	 * The tools this worker starts each lead a session of their own, out
	 * of the worker's group: a kill of the worker misses what they
	 * started.  Their groups go to a file the agent reads after the
	 * worker is gone (reap_groups).
	 */
	snprintf(path, sizeof(path), "%s/groups", dir);
	groups_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	proc_group_hook = note_group;
	/*
	 * Worker: own session (so its own group, which a kill addresses to
	 * reach its tools, and no controlling terminal); dies with the agent.
	 */
	sigset_t all;

	if (setsid() < 0)
		setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	signal(SIGPIPE, SIG_DFL);
	close(ag->in_fd);
	if (ag->out_fd != ag->in_fd)
		close(ag->out_fd);
	/*
	 * Before anything runs: the case's cgroup, and a subreaper, so that
	 * a daemon of the case (fork, setsid, fork) is re-parented to this
	 * worker, not to init, and is found at the case's end (contain.h).
	 */
	/* other cases' cgroups: their locks are their workers' to hold, not ours */
	for (int i = 0; i < MAX_WORKERS; i++)
		if (ag->w[i].pid && ag->w[i].cg >= 0 && ag->w[i].cg != cg)
			close(ag->w[i].cg);
	if (cg >= 0 && rq_contain_enter(cg) == 0)
		worker_cg = cg;
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	int rc = fn(req, dir);
	struct sb names = SB_INIT;

	/* exec and cleanup have no rows to judge: what they left is only killed */
	rq_contain_sweep(worker_cg, true, NULL, 0, now_ms() + scaled_ms(LEFTOVER_MS), &names, NULL);
	sb_release(&names);
	_exit(rc);
}

static struct worker *free_slot(struct agent *ag)
{
	for (int i = 0; i < MAX_WORKERS; i++)
		if (!ag->w[i].pid)
			return &ag->w[i];
	return NULL;
}

static void start_worker(struct agent *ag, json_t *id, const char *op, json_t *req)
{
	struct worker *w = free_slot(ag);
	json_t *jt = json_object_get(req, "timeout_ms");
	int64_t timeout = json_is_integer(jt) ? json_integer_value(jt) : 0;

	if (!w) {
		answer_err(ag, id, "agent busy: %d requests in flight", MAX_WORKERS);
		return;
	}
	/* The run's combined cap on any scaled deadline (proc.h). */
	if (timeout <= 0 || timeout > RQ_DEADLINE_MAX_MS) {
		answer_err(ag, id, "%s needs a timeout_ms between 1 and %lld", op,
			   (long long)RQ_DEADLINE_MAX_MS);
		return;
	}
	memset(w, 0, sizeof(*w));
	w->cg = -1;
	w->id = (uint64_t)json_integer_value(id);
	snprintf(w->op, sizeof(w->op), "%s", op);
	snprintf(w->dir, sizeof(w->dir), "%s/%llu", ag->base, (unsigned long long)w->id);
	rm_rf(w->dir);
	if (mkdir(w->dir, 0700)) {
		answer_err(ag, id, "cannot create %s: %s", w->dir, strerror(errno));
		return;
	}
	/* The agent serves runs of any pace: each worker is timed at its request's. */
	json_t *mul = json_object_get(req, "timeout_mul");
	w->mul = json_is_number(mul) && json_number_value(mul) >= 0.1 &&
		 json_number_value(mul) <= 100 ? json_number_value(mul) : 1;
	/* Grace beyond the kind's own deadline so it can end cleanly first. */
	w->kill_at = now_ms() + timeout + (int64_t)(2000 * w->mul);
	/* Its cgroup, where the agent has one to make it in (else its worker's children). */
	w->cg = -1;
	if (ag->cg_parent >= 0) {
		char tag[32];

		snprintf(tag, sizeof(tag), "%llu", (unsigned long long)w->id);
		w->cg = rq_contain_create(ag->cg_parent, tag, w->cg_name, sizeof(w->cg_name));
		if (w->cg < 0)
			w->cg_name[0] = '\0';
	}
	w->pid = fork_worker(ag, !strcmp(op, "run") ? worker_run : worker_exec, req, w->dir, w->cg);
	if (w->pid < 0) {
		answer_err(ag, id, "fork: %s", strerror(errno));
		w->pid = 0;
		rq_contain_remove(ag->cg_parent, w->cg_name, w->cg);
		return;
	}
	w->req = json_incref(req);
}

static void describe_status(int status, char *buf, size_t size)
{
	if (WIFEXITED(status))
		snprintf(buf, size, "exited %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, size, "killed by %s", sigabbrev_np(WTERMSIG(status)) ?
			 sigabbrev_np(WTERMSIG(status)) : "a signal");
	else
		snprintf(buf, size, "ended (status %#x)", status);
}

/* How much of a case log an answer carries: 256 KiB of head, 768 KiB of tail. */
#define LOG_HEAD (256u << 10)
#define LOG_TAIL (768u << 10)

/* How long the groups of a killed worker get to be gone after their SIGKILL. */
#define REAP_GROUPS_MS	5000

/*
 * A worker was killed (cancelled, timed out): kill every group it (or its
 * cleanup) had running and wait, until deadline, until each is empty.  An
 * orphan of a killed tool is our child (PR_SET_CHILD_SUBREAPER): reaped
 * here, else its zombie keeps the group alive.  false with why naming a
 * group still there; the answer says so and the controller gives the node
 * no more work beside it.
 */
static bool reap_groups(const char *dir, int64_t deadline, char *why, size_t size)
{
	char path[600], line[32];
	pid_t g[256];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/groups", dir);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 || !(f = fdopen(fd, "r"))) {
		if (fd >= 0)
			close(fd);
		return true;	/* it started nothing */
	}
	while (fgets(line, sizeof(line), f)) {
		long v = strtol(line + 1, NULL, 10);

		if (v <= 1 || v > INT_MAX || (line[0] != '+' && line[0] != '-'))
			continue;
		if (line[0] == '+' && n < ARRAY_SIZE(g)) {
			g[n++] = (pid_t)v;
			continue;
		}
		/* ended: reaped by the worker, its number free for reuse: never signal it */
		for (size_t i = 0; i < n; i++)
			if (g[i] == (pid_t)v)
				g[i--] = g[--n];
	}
	fclose(f);
	for (size_t i = 0; i < n; i++)
		kill(-g[i], SIGKILL);
	for (;;) {
		size_t left = 0;

		for (size_t i = 0; i < n; i++) {
			while (waitpid(-g[i], NULL, WNOHANG) > 0)
				;
			if (kill(-g[i], 0) == 0 || errno != ESRCH)
				g[left++] = g[i];
		}
		n = left;
		if (!n)
			return true;
		if (now_ms() >= deadline)
			break;
		struct timespec ts = { 0, 10 * 1000000L };

		nanosleep(&ts, NULL);
	}
	snprintf(why, size, "process group %d of the stopped case is still there %.1f s after "
		 "its kill%s", (int)g[0], REAP_GROUPS_MS / 1000.0, n > 1 ? " (and more)" : "");
	return false;
}

static void finish_worker(struct agent *ag, struct worker *w, int status)
{
	char path[600];
	struct sb log = SB_INIT;
	json_error_t jerr;
	json_t *payload, *id = json_integer((json_int_t)w->id);

	bool cut;

	/* The case log, whole up to 1 MiB, else its head and tail (marked). */
	snprintf(path, sizeof(path), "%s/log", w->dir);
	read_file_ends(path, &log, LOG_HEAD, LOG_TAIL, &cut);
	snprintf(path, sizeof(path), "%s/answer.json", w->dir);
	payload = (w->timed_out || w->cancelled) ? NULL : json_load_file(path, 0, &jerr);
	/*
	 * The worker is gone: what is left in its cgroup (a worker killed at
	 * its deadline could not sweep; a daemon racing its sweep) is killed
	 * now, before a stopped run's cleanup and before the answer lets the
	 * node run anything else.  Without a
	 * cgroup, the orphans of a killed worker are this subreaper's
	 * children: every child that is not a live worker (another killed
	 * worker's, not yet finished, may be counted here).
	 */
	struct sb killed = SB_INIT;
	bool still = false;
	int64_t kdl = now_ms() + (int64_t)(REAP_GROUPS_MS * w->mul);
	int nk;

	if (w->cg >= 0) {
		nk = rq_contain_sweep(w->cg, false, NULL, 0, kdl, &killed, &still);
	} else {
		pid_t live[MAX_WORKERS];
		size_t nl = 0;

		for (int i = 0; i < MAX_WORKERS; i++)
			if (ag->w[i].pid && &ag->w[i] != w)
				live[nl++] = ag->w[i].pid;
		nk = rq_contain_sweep(-1, true, live, nl, kdl, &killed, &still);
	}
	if (!strcmp(w->op, "run") && (w->timed_out || w->cancelled)) {
		/* The kind never got to its cleanup: run it now, bounded. */
		pid_t c = fork_worker(ag, worker_cleanup, w->req, w->dir, w->cg);
		int st;

		if (c > 0 && proc_wait_deadline(c, now_ms() + (int64_t)(30000 * w->mul), &st) != 1)
			proc_kill_group(c, 0);
		sb_reset(&log);
		snprintf(path, sizeof(path), "%s/log", w->dir);
		read_file_ends(path, &log, LOG_HEAD, LOG_TAIL, &cut);
	}
	bool stopped = !payload || w->timed_out || w->cancelled;

	if (nk > 0)
		sb_addf(&log, "# %d process%s of the case left after its worker, killed: %s\n", nk,
			nk == 1 ? "" : "es", killed.buf);
	/* the cleanup worker ran in the same cgroup: empty now, or it is named */
	int rmrc = rq_contain_remove(ag->cg_parent, w->cg_name, w->cg);

	if (rmrc && w->cg_name[0])
		sb_addf(&log, "# its cgroup %s could not be removed: %s\n", w->cg_name, strerror(-rmrc));
	w->cg = -1;

	if (stopped) {
		/*
		 * The answer to a stopped (or crashed) run says whether what it
		 * started is gone: the controller waits for it before it gives
		 * this node another pair (a leftover server or QP fails the next
		 * one).
		 */
		char why[256], how[128];
		bool gone = reap_groups(w->dir, now_ms() + (int64_t)(REAP_GROUPS_MS * w->mul), why,
					sizeof(why));

		if (gone && still) {
			snprintf(why, sizeof(why), "processes of the stopped case are still there %.1f s "
				 "after their kill: %s", REAP_GROUPS_MS / 1000.0, killed.buf);
			gone = false;
		}
		json_t *p = gone ? json_pack("{s:b}", "reaped", 1) : json_pack("{s:s}", "leftover", why);

		describe_status(status, how, sizeof(how));
		json_object_set_new(p, "log", rq_json_textn(log.buf, log.len));
		if (w->cancelled) {	/* what it printed until then still explains it */
			answer(ag, id, false, "cancelled", p);
		} else if (w->timed_out) {
			answer(ag, id, false, "timed out", p);
		} else {
			char *msg = xasprintf("worker %s without an answer", how);

			answer(ag, id, false, msg, p);
			free(msg);
		}
	} else {
		if (!strcmp(w->op, "run"))
			/* a tool's bytes need not be UTF-8: json_stringn() would drop the log */
			json_object_set_new(payload, "log", rq_json_textn(log.buf, log.len));
		answer(ag, id, true, NULL, payload);
	}
	json_decref(id);
	json_decref(w->req);
	sb_release(&log);
	sb_release(&killed);
	rm_rf(w->dir);
	memset(w, 0, sizeof(*w));
}

static void reap(struct agent *ag)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (int i = 0; i < MAX_WORKERS; i++)
			if (ag->w[i].pid == pid) {
				/* Tools the worker left in its group go with it. */
				kill(-pid, SIGKILL);
				finish_worker(ag, &ag->w[i], status);
				break;
			}
	}
}

static void kill_worker(struct worker *w)
{
	kill(-w->pid, SIGKILL);
	kill(w->pid, SIGKILL);
}

static void expire(struct agent *ag)
{
	int64_t now = now_ms();

	for (int i = 0; i < MAX_WORKERS; i++) {
		struct worker *w = &ag->w[i];

		if (w->pid && !w->timed_out && now >= w->kill_at) {
			w->timed_out = true;
			kill_worker(w);
		}
	}
}

static void handle_line(struct agent *ag, const char *line)
{
	json_error_t jerr;
	json_t *req = json_loads(line, 0, &jerr), *id, *v;
	const char *op;

	if (!req || !json_is_object(req)) {
		answer_err(ag, NULL, "not a JSON object (column %d: %s)", jerr.column, jerr.text);
		json_decref(req);
		return;
	}
	id = json_object_get(req, "id");
	v = json_object_get(req, "v");
	op = jstr(req, "op", NULL);
	if (!json_is_integer(id) || json_integer_value(id) <= 0) {
		answer_err(ag, NULL, "request without a positive integer \"id\"");
	} else if (!json_is_integer(v) || json_integer_value(v) != RQ_AGENT_PROTO) {
		answer_err(ag, id, "unsupported protocol version (this agent speaks %d)",
			   RQ_AGENT_PROTO);
	} else if (!op) {
		answer_err(ag, id, "request without an \"op\"");
	} else if (!strcmp(op, "hello")) {
		answer(ag, id, true, NULL, json_pack("{s:s, s:s, s:i}", "agent", "rdmaqual",
						     "version", RQ_VERSION, "proto", RQ_AGENT_PROTO));
	} else if (!strcmp(op, "ping")) {
		answer(ag, id, true, NULL, NULL);
	} else if (!strcmp(op, "facts")) {
		answer(ag, id, true, NULL, json_pack("{s:o}", "facts", rq_agent_facts()));
	} else if (!strcmp(op, "run")) {
		if (!json_is_object(json_object_get(req, "case")))
			answer_err(ag, id, "run needs a \"case\" object");
		else
			start_worker(ag, id, op, req);
	} else if (!strcmp(op, "exec")) {
		json_t *a = json_object_get(req, "argv");
		bool ok = json_is_array(a) && json_array_size(a) > 0;

		for (size_t i = 0; ok && i < json_array_size(a); i++)
			ok = json_is_string(json_array_get(a, i));
		if (!ok)
			answer_err(ag, id, "exec needs a non-empty \"argv\" array of strings");
		else
			start_worker(ag, id, op, req);
	} else if (!strcmp(op, "cancel")) {
		json_t *t = json_object_get(req, "target_id");
		bool found = false;

		for (int i = 0; i < MAX_WORKERS && json_is_integer(t); i++) {
			struct worker *w = &ag->w[i];

			if (w->pid && w->id == (uint64_t)json_integer_value(t)) {
				w->cancelled = true;
				kill_worker(w);
				found = true;
			}
		}
		answer(ag, id, found, found ? NULL : "no such request in flight", NULL);
	} else if (!strcmp(op, "shutdown")) {
		answer(ag, id, true, NULL, NULL);
		ag->stop = true;
	} else {
		answer_err(ag, id, "unknown op \"%.40s\"", op);
	}
	json_decref(req);
}

/* Split input into lines; oversized lines get one error answer and are skipped. */
static void feed(struct agent *ag, const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = buf[i];

		if (c == '\n') {
			if (ag->discarding) {
				ag->discarding = false;
			} else {
				char *line = xstrndup(ag->in.buf, ag->in.len);
				size_t len = strlen(line);

				/* A serial console may send \r\n. */
				if (len && line[len - 1] == '\r')
					line[len - 1] = '\0';
				/* JSON text never holds a raw NUL: a line cut there is not the request sent */
				if (len != ag->in.len)
					answer_err(ag, NULL, "request line holds a NUL byte: discarded");
				else if (*strtrim(line))
					handle_line(ag, line);
				free(line);
			}
			sb_reset(&ag->in);
			continue;
		}
		if (ag->discarding)
			continue;
		if (ag->in.len >= RQ_AGENT_LINE_MAX) {
			answer_err(ag, NULL, "request line over %u bytes: discarded",
				   RQ_AGENT_LINE_MAX);
			ag->discarding = true;
			sb_reset(&ag->in);
			continue;
		}
		sb_addc(&ag->in, c);
	}
}

/*
 * An agent holds an flock on <dir>/lock for its whole life (its workers
 * inherit it).  That, not its pid, tells a live agent's dir from a stale
 * one: pids are per PID namespace (an agent run under `unshare -p` or in a
 * container that shares /tmp names its dir rq-agent-2-..., and host pid 2
 * is kthreadd), while a flock is seen across namespaces and the kernel
 * drops it when the last holder dies, even by SIGKILL.
 * 1: held (live), 0: free (stale), -1: no lock file.
 */
static int agent_dir_locked(const char *dir)
{
	char path[640];
	int fd, held;

	snprintf(path, sizeof(path), "%s/lock", dir);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? -1 : 1;	/* unreadable: not ours to judge */
	held = flock(fd, LOCK_SH | LOCK_NB) != 0;
	close(fd);
	return held;
}

/* The stale agent dirs in one temporary dir (see rq_agent_sweep_stale). */
static int sweep_dir(const char *dir, struct sb *msgs)
{
	char prefix[300];
	const char *const pre[] = { prefix, NULL };
	DIR *d = opendir(dir);
	struct dirent *e;
	int done = 0;

	snprintf(prefix, sizeof(prefix), "%s/rq-agent-", dir);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[600], comm[64], proc[64], *end;
		const char *rest = e->d_name + 9;
		long pid;
		struct stat st;

		if (strncmp(e->d_name, "rq-agent-", 9))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		switch (agent_dir_locked(path)) {
		case 1:
			continue;	/* its agent (or a worker of it) holds the lock */
		case 0:
			goto stale;
		default:
			break;		/* no lock file: an older agent, judged by name */
		}
		pid = strtol(rest, &end, 10);
		if (end != rest && *end == '-' && strlen(end + 1) == 6 && pid > 0) {
			/* Its agent still runs (and is one of ours, not a reused pid): keep it. */
			snprintf(proc, sizeof(proc), "/proc/%ld/comm", pid);
			if ((kill((pid_t)pid, 0) == 0 || errno == EPERM) &&
			    read_line(proc, comm, sizeof(comm)) == 0 && strstr(comm, "rdmaqual"))
				continue;
		} else if (strlen(rest) != 6 || lstat(path, &st) || time(NULL) - st.st_mtime < 24 * 3600) {
			/* Named before pids were in the name: only when a day old. */
			continue;
		}
stale:
		if (rm_rf_scratch(path, pre) == 0) {
			done++;
			if (msgs)
				sb_addf(msgs, "removed %s\n", path);
		}
	}
	closedir(d);
	return done;
}

/*
 * An agent makes its dir in $TMPDIR when set (rq_agent_serve), so the
 * sweep reads that too: an absolute path of our own, not /tmp again.
 * Only dirs of ours are removed (rm_rf_scratch: owner, one component).
 */
int rq_agent_sweep_stale(struct sb *msgs)
{
	const char *tmp = getenv("TMPDIR");
	char real[PATH_MAX];
	struct stat st;
	/* and the cgroups of their cases, with what still runs in them */
	int done = rq_contain_sweep_stale(msgs) + sweep_dir("/tmp", msgs);

	if (!tmp || tmp[0] != '/' || strlen(tmp) > 250 || !realpath(tmp, real) || !strcmp(real, "/tmp") ||
	    stat(real, &st) || !S_ISDIR(st.st_mode))
		return done;
	return done + sweep_dir(real, msgs);
}

int rq_agent_serve(int in_fd, int out_fd)
{
	struct agent ag = { .in_fd = in_fd, .out_fd = out_fd, .in = SB_INIT, .cg_parent = -1 };
	char cgwhy[256];
	const char *tmp = getenv("TMPDIR");
	sigset_t mask;
	int sfd;
	char buf[65536];

	/* The pid in the name lets `rdmaqual cleanup` tell a live agent's dir from a stale one. */
	snprintf(ag.base, sizeof(ag.base), "%s/rq-agent-%d-XXXXXX", tmp && *tmp ? tmp : "/tmp",
		 (int)getpid());
	if (!mkdtemp(ag.base))
		return -errno;
	{
		char lock[300];
		int lfd;

		/* Held until this agent and its workers are gone (see agent_dir_locked). */
		snprintf(lock, sizeof(lock), "%s/lock", ag.base);
		lfd = open(lock, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (lfd < 0 || flock(lfd, LOCK_EX | LOCK_NB)) {
			int e = errno;

			if (lfd >= 0)
				close(lfd);
			rm_rf(ag.base);
			return -e;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	/*
	 * Closing an agent is EOF then SIGTERM to its group: taken here, so the
	 * workers are stopped and the scratch dir removed, not left in /tmp.
	 */
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* where each case gets a cgroup of its own; without one, its worker's children (contain.h) */
	ag.cg_parent = rq_contain_parent(cgwhy, sizeof(cgwhy));

	while (!ag.stop) {
		struct pollfd p[2] = {
			{ .fd = in_fd, .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
		};
		int64_t next = INT64_MAX, now = now_ms();

		for (int i = 0; i < MAX_WORKERS; i++)
			if (ag.w[i].pid && !ag.w[i].timed_out && ag.w[i].kill_at < next)
				next = ag.w[i].kill_at;
		int timeout = next == INT64_MAX ? 1000 : (int)(next - now < 0 ? 0 :
				next - now > 1000 ? 1000 : next - now);

		if (poll(p, 2, timeout) < 0 && errno != EINTR)
			break;
		if (p[1].revents) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == sizeof(si))
				if (si.ssi_signo != SIGCHLD)
					ag.stop = true;
		}
		if (ag.stop)
			break;
		reap(&ag);
		expire(&ag);
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t n = read(in_fd, buf, sizeof(buf));

			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0)
				break;	/* controller gone: stop everything */
			feed(&ag, buf, (size_t)n);
		}
	}
	for (int i = 0; i < MAX_WORKERS; i++)
		if (ag.w[i].pid)
			kill_worker(&ag.w[i]);
	/* the agent ends: what its cases still run goes with it, cgroups and all */
	for (int i = 0; i < MAX_WORKERS; i++) {
		struct sb n = SB_INIT;

		if (ag.w[i].pid && ag.w[i].cg >= 0)
			rq_contain_sweep(ag.w[i].cg, false, NULL, 0, now_ms() + REAP_GROUPS_MS, &n, NULL);
		sb_release(&n);
	}
	{
		/* and without cgroups: every child left, killed workers' orphans included */
		struct sb n = SB_INIT;

		rq_contain_sweep(-1, true, NULL, 0, now_ms() + REAP_GROUPS_MS, &n, NULL);
		sb_release(&n);
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	for (int i = 0; i < MAX_WORKERS; i++)
		if (ag.w[i].pid)
			rq_contain_remove(ag.cg_parent, ag.w[i].cg_name, ag.w[i].cg);
	if (ag.cg_parent >= 0)
		close(ag.cg_parent);
	for (int i = 0; i < MAX_WORKERS; i++)
		json_decref(ag.w[i].req);
	rm_rf(ag.base);
	sb_release(&ag.in);
	close(sfd);
	return 0;
}

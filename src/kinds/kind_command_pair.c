/* SPDX-License-Identifier: MIT */
/*
 * command-pair: any RDMA program as a server on one side and a client on
 * the other (two guests of rxe-vm, a node and its --peer), argv only, with
 * what only the run knows filled in ({peer_ip}, {dev}, {port}, ...).
 *
 * Ordering without sleeps: the server side starts its program and waits
 * until it is ready (its `ready:` text appears in its output, or a TCP
 * socket listens on {port}), then tells the client side over the pair's
 * out-of-band connection, and only then does the client start.  While both
 * run, each side watches that connection: a side whose program failed
 * tells the other, which stops its own program instead of waiting for a
 * peer that is gone.  When the client is done the server gets a short
 * grace to exit by itself (or is stopped, for servers that serve forever).
 *
 * Each program's output goes to a file in the case's scratch directory and
 * into the case log whatever happens (exit, kill at the deadline, the other
 * side's failure), so a stopped side still shows what it printed.
 *
 * Longer than most files (about 1,000 lines) on purpose: the two roles and
 * the messages between them (ready, failed, done, stop) are one protocol,
 * and each step of one side is read against the other's; placeholders,
 * figures and memlock, which stand alone, are in app_text.c and
 * app_memlock.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <jansson.h>
#include "core/kind.h"
#include "kinds/app_results.h"
#include "kinds/app_text.h"
#include "parsers/parse_perftest.h"
#include "parsers/parse_pingpong.h"
#include "rdma/oob.h"
#include "rdma/rdmadev.h"

static const char *const parser_names[] = { "none", "perftest", "ibv_rc_pingpong", "rping", NULL };
enum { P_NONE, P_PERFTEST, P_PINGPONG, P_RPING };

struct pair_cfg {
	struct rq_list server;
	struct rq_list client;
	char *ready;
	bool ready_listen;
	bool ready_rdma_cm;
	bool server_persists;
	int64_t server_grace_ms;
	int64_t server_stop_grace_ms;
	long long exit;
	long long server_exit;
	char *stdout_contains;
	struct rq_list env;
	struct rq_list server_env;
	struct rq_list client_env;
	int parser;
	struct rq_list figures;
	char *memlock;
	char *stdout_lacks;
	char *stderr_lacks;
	struct app_results res;
};

static const struct key_def pair_keys[] = {
	{ .name = "server", .type = KEY_LIST, .elem = KEY_STR, .required = true,
	  .offset = offsetof(struct pair_cfg, server),
	  .help = "the server's argv (no shell); placeholders {peer_ip} {peer_host} {dev} {port} {gid_index} {netdev} {ip}, {{ for a brace" },
	{ .name = "client", .type = KEY_LIST, .elem = KEY_STR, .required = true,
	  .offset = offsetof(struct pair_cfg, client),
	  .help = "the client's argv (no shell), started once the server is ready; same placeholders" },
	{ .name = "ready", .type = KEY_STR,
	  .offset = offsetof(struct pair_cfg, ready),
	  .help = "text the server prints (stdout or stderr) once it listens; the client starts after it (a program that buffers its stdout into a pipe needs stdbuf -oL)" },
	{ .name = "ready_listen", .type = KEY_BOOL, .def = "false",
	  .offset = offsetof(struct pair_cfg, ready_listen),
	  .help = "the server is ready once a TCP socket listens on {port} on its side (for servers that print nothing)" },
	{ .name = "ready_rdma_cm", .type = KEY_BOOL, .def = "false",
	  .offset = offsetof(struct pair_cfg, ready_rdma_cm),
	  .help = "the server is ready once a listening RDMA CM id exists for {port} on its side (rdma resource show cm_id; for rdma_server, ucmatose, rstream, which print before they listen)" },
	{ .name = "server_persists", .type = KEY_BOOL, .def = "false",
	  .offset = offsetof(struct pair_cfg, server_persists),
	  .help = "the server serves until stopped (qperf): it is stopped when the client ends and its exit status is not judged" },
	{ .name = "server_grace", .type = KEY_DURATION, .def = "10s", .min = 0, .max = 600000,
	  .offset = offsetof(struct pair_cfg, server_grace_ms),
	  .help = "how long the server may take to exit after the client ended (scaled)" },
	{ .name = "server_stop_grace", .type = KEY_DURATION, .def = "1s", .min = 0, .max = 600000,
	  .offset = offsetof(struct pair_cfg, server_stop_grace_ms),
	  .help = "when the server is stopped: how long after SIGTERM (to its process group) it may take to exit before SIGKILL (scaled); a daemon that tears state down (nvmet, an SM) wants more" },
	{ .name = "exit", .type = KEY_INT, .def = "0", .min = 0, .max = 255,
	  .offset = offsetof(struct pair_cfg, exit),
	  .help = "the client exit status that passes" },
	{ .name = "server_exit", .type = KEY_INT, .def = "0", .min = 0, .max = 255,
	  .offset = offsetof(struct pair_cfg, server_exit),
	  .help = "the server exit status that passes (unless server_persists)" },
	{ .name = "stdout_contains", .type = KEY_STR,
	  .offset = offsetof(struct pair_cfg, stdout_contains),
	  .help = "text the client's standard output must contain" },
	{ .name = "env", .type = KEY_LIST, .elem = KEY_STR,
	  .offset = offsetof(struct pair_cfg, env),
	  .help = "extra environment entries for both programs, each NAME=VALUE (placeholders filled)" },
	{ .name = "server_env", .type = KEY_LIST, .elem = KEY_STR,
	  .offset = offsetof(struct pair_cfg, server_env),
	  .help = "extra environment entries for the server only" },
	{ .name = "client_env", .type = KEY_LIST, .elem = KEY_STR,
	  .offset = offsetof(struct pair_cfg, client_env),
	  .help = "extra environment entries for the client only" },
	{ .name = "parser", .type = KEY_ENUM, .choices = parser_names, .def = "none",
	  .offset = offsetof(struct pair_cfg, parser),
	  .help = "figures from the client's output by rdmaqual's parser of that tool: perftest (bw_avg, bw_peak, msg_rate or t_*), ibv_rc_pingpong (usec_per_iter, mbit_per_sec), rping (pings, judged in order and intact)" },
	{ .name = "figures", .type = KEY_LIST, .elem = KEY_STR,
	  .offset = offsetof(struct pair_cfg, figures),
	  .help = "figures from the client's output (stdout then stderr), each NAME=REGEX or NAME[UNIT]=REGEX with one (group) around the number; the last match counts; no match fails the case" },
	{ .name = "memlock", .type = KEY_STR,
	  .offset = offsetof(struct pair_cfg, memlock),
	  .help = "RLIMIT_MEMLOCK of both programs: a size or unlimited (default: what the agent has; rxe-vm guests: unlimited)" },
	{ .name = "stdout_lacks", .type = KEY_STR,
	  .offset = offsetof(struct pair_cfg, stdout_lacks),
	  .help = "text the client's standard output must not contain" },
	{ .name = "stderr_lacks", .type = KEY_STR,
	  .offset = offsetof(struct pair_cfg, stderr_lacks),
	  .help = "text the client's standard error must not contain" },
	/* the client's results: the server is what the tests run against */
	APP_RESULTS_KEYS(struct pair_cfg, res),
	KEY_END
};

static int env_check(const struct rq_list *l, char *err, size_t errsz)
{
	for (size_t i = 0; i < l->n; i++) {
		unsigned used = 0;

		if (!strchr(l->str[i], '=') || l->str[i][0] == '=') {
			snprintf(err, errsz, "env entry \"%s\" is not NAME=VALUE", l->str[i]);
			return -1;
		}
		if (app_ph_scan(l->str[i], &used, err, errsz) < 0)
			return -1;
	}
	return 0;
}

static int pair_validate(const struct rq_case *c, char *err, size_t errsz)
{
	const struct pair_cfg *cfg = c->cfg;
	const struct rq_list *argvs[] = { &cfg->server, &cfg->client };

	for (int s = 0; s < 2; s++) {
		if (argvs[s]->n == 0) {
			snprintf(err, errsz, "%s must name a command", s ? "client" : "server");
			return -1;
		}
		for (size_t i = 0; i < argvs[s]->n; i++) {
			unsigned used = 0;
			char e[256];

			if (app_ph_scan(argvs[s]->str[i], &used, e, sizeof(e)) < 0) {
				snprintf(err, errsz, "%s: %s", s ? "client" : "server", e);
				return -1;
			}
		}
	}
	if (env_check(&cfg->env, err, errsz) || env_check(&cfg->server_env, err, errsz) ||
	    env_check(&cfg->client_env, err, errsz))
		return -1;
	if (cfg->ready && !*cfg->ready) {
		snprintf(err, errsz, "ready: the text must not be empty");
		return -1;
	}
	if ((cfg->ready != NULL) + cfg->ready_listen + cfg->ready_rdma_cm > 1) {
		snprintf(err, errsz, "ready and ready_listen: choose one way to tell the server is ready");
		return -1;
	}
	for (size_t i = 0; i < cfg->figures.n; i++) {
		struct app_fig_rule r;

		if (app_fig_rule_parse(cfg->figures.str[i], &r, err, errsz) < 0)
			return -1;
		app_fig_rule_release(&r);
	}
	if (cfg->memlock) {
		bool unl;
		uint64_t b;

		if (app_memlock_parse(cfg->memlock, &unl, &b, err, errsz) < 0)
			return -1;
	}
	return app_results_validate(&cfg->res, err, errsz);
}

/* Where the programs the shipped cases run come from, for a SKIP that helps. */
static const struct { const char *tool, *pkg; } tool_pkgs[] = {
	{ "qperf", "qperf" }, { "fi_pingpong", "libfabric-bin" }, { "fi_info", "libfabric-bin" },
	{ "ucx_perftest", "ucx-utils" }, { "ucx_info", "ucx-utils" }, { "rping", "rdmacm-utils" },
	{ "ib_", "perftest" }, { "ibv_", "ibverbs-utils" }, { "stdbuf", "coreutils" },
	{ "setpriv", "util-linux" },
};

/* Wrappers whose first non-option word is the program that matters. */
static bool is_wrapper(const char *t)
{
	static const char *const w[] = { "stdbuf", "env", "setpriv", "taskset", "numactl", "timeout", "nice" };

	for (size_t i = 0; i < ARRAY_SIZE(w); i++)
		if (!strcmp(t, w[i]))
			return true;
	return false;
}

static bool tool_missing(const struct rq_list *argv, char *why, size_t whysz, const char *side)
{
	for (size_t i = 0; i < argv->n; i++) {
		const char *t = argv->str[i];

		if (i > 0 && (t[0] == '-' || strchr(t, '=') || (t[0] >= '0' && t[0] <= '9')))
			continue;	/* a wrapper's option or its value */
		if (!strchr(t, '/') && !strchr(t, '{') && !cmd_exists(t)) {
			const char *pkg = NULL;

			for (size_t k = 0; k < ARRAY_SIZE(tool_pkgs); k++)
				if (str_starts(t, tool_pkgs[k].tool))
					pkg = tool_pkgs[k].pkg;
			if (pkg)
				snprintf(why, whysz, "%s is not installed on the %s side (Debian package %s)",
					 t, side, pkg);
			else
				snprintf(why, whysz, "%s is not installed on the %s side (not in PATH)",
					 t, side);
			return true;
		}
		if (!is_wrapper(t))
			break;
	}
	return false;
}

static enum rq_verdict pair_check(struct rq_ctx *ctx, const void *p, char *why, size_t whysz)
{
	const struct pair_cfg *cfg = p;
	bool server = ctx->role == ROLE_SERVER;

	if (!ctx->replay && tool_missing(server ? &cfg->server : &cfg->client, why, whysz,
					 server ? "server" : "client"))
		return RQ_SKIP;
	if (server && cfg->ready_rdma_cm && !cmd_exists("rdma")) {
		snprintf(why, whysz, "ready_rdma_cm: rdma is not installed on the server side (Debian package iproute2)");
		return RQ_SKIP;
	}
	return RQ_NONE;
}

/* ---- what the placeholders stand for on this side -------------------- */

struct place {
	const char *val[PH_COUNT];
	const char *why[PH_COUNT];
	char port[16], gid[24], dev[64], netdev[64], peer_host[128];
};

/* Fill what this side's argv and env use, and only that (a lookup may fail). */
static void place_fill(struct rq_ctx *ctx, unsigned used, struct place *pl)
{
	const struct rq_where *w = rq_ctx_where(ctx);

	memset(pl, 0, sizeof(*pl));
	pl->val[PH_PEER_IP] = ctx->peer_addr && *ctx->peer_addr ? ctx->peer_addr : NULL;
	pl->why[PH_PEER_IP] = "the target gave no address for the other side";
	pl->val[PH_IP] = ctx->local_addr && *ctx->local_addr ? ctx->local_addr : NULL;
	pl->why[PH_IP] = "the target gave no address for this side";
	snprintf(pl->port, sizeof(pl->port), "%d", ctx->oob_port + 2);
	pl->val[PH_PORT] = ctx->oob_port > 0 ? pl->port : NULL;
	pl->why[PH_PORT] = "no port was assigned to the pair";
	/* hosts: [client side, server side]; the peer is the other one. */
	const char *ph = w->host[ctx->role == ROLE_SERVER ? 0 : 1];

	if (ph && *ph)
		snprintf(pl->peer_host, sizeof(pl->peer_host), "%s", ph);
	else if (pl->val[PH_PEER_IP])
		snprintf(pl->peer_host, sizeof(pl->peer_host), "%s", pl->val[PH_PEER_IP]);
	pl->val[PH_PEER_HOST] = pl->peer_host[0] ? pl->peer_host : NULL;
	pl->why[PH_PEER_HOST] = "the target gave no name or address for the other side";

	if (used & ((1u << PH_DEV) | (1u << PH_GID_INDEX) | (1u << PH_NETDEV))) {
		/* The target's device (rxe0 on rxe-vm), else the first selected ACTIVE port. */
		struct rdma_devs d = { 0 };
		int idx[16], n, port = 0;

		snprintf(pl->dev, sizeof(pl->dev), "%s", w->rdma_dev);
		snprintf(pl->netdev, sizeof(pl->netdev), "%s", w->netdev);
		if (rdma_devs_scan(ctx, &d) == 0 && (n = rdma_devs_select(ctx, &d, idx, 16)) > 0) {
			for (int i = 0; i < n && !port; i++) {
				const struct rdma_dev *dv = &d.v[idx[i]];

				if (pl->dev[0] && strcmp(dv->name, pl->dev))
					continue;
				for (int k = 0; k < dv->nports && !port; k++) {
					const struct rdma_port *pp = &dv->ports[k];

					if (!rdma_port_selected(ctx, pp->num) || pp->state != PORT_ACTIVE)
						continue;
					port = pp->num;
					snprintf(pl->dev, sizeof(pl->dev), "%s", dv->name);
					if (!pl->netdev[0])
						snprintf(pl->netdev, sizeof(pl->netdev), "%s", pp->netdev);
				}
			}
		}
		rdma_devs_release(&d);
		pl->val[PH_DEV] = pl->dev[0] ? pl->dev : NULL;
		pl->why[PH_DEV] = "no RDMA device with an ACTIVE port is selected on this side";
		pl->val[PH_NETDEV] = pl->netdev[0] ? pl->netdev : NULL;
		pl->why[PH_NETDEV] = "the device has no network device (InfiniBand without IPoIB?)";
		if (ctx->c->gid_index >= 0) {
			snprintf(pl->gid, sizeof(pl->gid), "%lld", ctx->c->gid_index);
			pl->val[PH_GID_INDEX] = pl->gid;
		} else if (pl->dev[0] && port) {
			char gid[64];
			int g = rdma_pick_gid(ctx, pl->dev, port, pl->netdev[0] ? pl->netdev : NULL,
					      gid, sizeof(gid));

			if (g >= 0) {
				snprintf(pl->gid, sizeof(pl->gid), "%d", g);
				pl->val[PH_GID_INDEX] = pl->gid;
			}
		}
		pl->why[PH_GID_INDEX] = "no RoCE v2 IPv4 GID (nor an IB GID) on the device's port";
	}
}

/* Expand a list into a NULL-terminated array of malloc'd strings; NULL with err. */
static char **expand_list(const struct rq_list *l, const struct place *pl, char *err, size_t errsz)
{
	char **v = xcalloc(l->n + 1, sizeof(*v));

	for (size_t i = 0; i < l->n; i++) {
		v[i] = app_ph_expand(l->str[i], pl->val, pl->why, err, errsz);
		if (!v[i]) {
			for (size_t j = 0; j < i; j++)
				free(v[j]);
			free(v);
			return NULL;
		}
	}
	return v;
}

static void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static unsigned list_used(const struct rq_list *l)
{
	unsigned used = 0;
	char err[8];

	for (size_t i = 0; i < l->n; i++)
		app_ph_scan(l->str[i], &used, err, sizeof(err));
	return used;
}

/* ---- running one side's program -------------------------------------- */

struct prog {
	const char *side;	/* "server" or "client": names its scratch files */
	pid_t pid;
	int fd;			/* its stderr (scratch/SIDE.out) */
	int ofd;		/* its stdout alone, for stdout_contains and figures */
	bool done, timed_out, stopped;
	int status;
	int64_t started;
};

/*
 * The program's output files: named in the case's private scratch
 * directory (made by the agent, 0700), so that when the worker is killed
 * before it could log them (agent deadline, cancel) the kind's cleanup(),
 * which the agent runs in a fresh worker, still finds and logs them.
 */
static int scratch_file(struct rq_ctx *ctx, const char *side, const char *what)
{
	char path[700];

	if (!ctx->scratch) {
		errno = ENOENT;
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s.%s", ctx->scratch, side, what);
	return open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

static void scratch_unlink(struct rq_ctx *ctx, const char *side)
{
	static const char *const what[] = { "out", "stdout" };
	char path[700];

	for (size_t i = 0; ctx->scratch && i < ARRAY_SIZE(what); i++) {
		snprintf(path, sizeof(path), "%s/%s.%s", ctx->scratch, side, what[i]);
		unlink(path);
	}
}

/*
 * Why a program did not start, from prog_start's -errno (errno itself is
 * long overwritten by the cleanup: it said "Success").  A program under
 * /tmp that is not there: the guests of rxe-vm have a /tmp of their own.
 */
static void start_error(char *err, size_t errsz, const char *tool, int rc)
{
	snprintf(err, errsz, "cannot start %s: %s%s", tool, strerror(rc < 0 ? -rc : EIO),
		 rc == -ENOENT && str_starts(tool, "/tmp/") ?
		 " (rxe-vm guests have their own /tmp: put the program where they see the "
		 "host's files, outside /tmp)" : "");
}

static int prog_start(struct rq_ctx *ctx, const char *side, char **argv, char **env,
		      struct prog *pr)
{
	struct sb line = SB_INIT;

	memset(pr, 0, sizeof(*pr));
	pr->side = side;
	pr->pid = -1;
	sb_add_argv(&line, (const char *const *)argv);
	for (size_t i = 0; env && env[i]; i++)
		rq_log(ctx, "# env %s", env[i]);
	rq_log(ctx, "$ %s", line.buf);
	sb_release(&line);
	pr->fd = scratch_file(ctx, pr->side, "out");
	pr->ofd = scratch_file(ctx, pr->side, "stdout");
	if (pr->fd < 0 || pr->ofd < 0) {
		int e = -errno;

		if (pr->fd >= 0)
			close(pr->fd);
		if (pr->ofd >= 0)
			close(pr->ofd);
		pr->fd = pr->ofd = -1;
		scratch_unlink(ctx, side);
		return e;
	}
	/*
	 * The merged file takes stderr; stdout goes to its own file and is
	 * copied into the merged view when read: a program's stdout and
	 * stderr are two streams anyway, interleaving them by time is a guess.
	 */
	struct spawn_opts so = {
		.argv = (const char *const *)argv,
		.env_add = (const char *const *)env,
		.cwd = ctx->tool_cwd,
		.stdin_fd = -1,
		.stdout_fd = pr->ofd,
		.stderr_fd = pr->fd,
	};

	pr->started = now_ms();
	pr->pid = proc_spawn(&so);
	if (pr->pid < 0) {
		int e = (int)pr->pid;

		close(pr->fd);
		close(pr->ofd);
		pr->fd = pr->ofd = -1;
		scratch_unlink(ctx, side);
		return e;
	}
	return 0;
}

/* Has it ended?  Waits up to until (a now_ms() value). */
static bool prog_poll(struct prog *pr, int64_t until)
{
	if (pr->done || pr->pid < 0)
		return true;
	int ret = proc_wait_deadline(pr->pid, until, &pr->status);

	if (ret > 0) {
		pr->done = true;
		return true;
	}
	return false;
}

/* SIGTERM to its process group, SIGKILL grace_ms later if it is still there. */
static void prog_stop(struct prog *pr, int64_t grace_ms)
{
	if (pr->done || pr->pid < 0)
		return;
	pr->stopped = true;
	proc_kill_group(pr->pid, scaled_ms(grace_ms));
	pr->done = true;
	pr->status = -1;
}

static void read_fd(int fd, struct sb *out, size_t max)
{
	char buf[8192];
	ssize_t n;
	off_t off = 0;

	while (out->len < max && (n = pread(fd, buf, sizeof(buf), off)) > 0) {
		sb_add(out, buf, (size_t)n);
		off += n;
	}
}

/* Its output so far: stdout, then stderr. */
static void prog_output(const struct prog *pr, struct sb *out, struct sb *so)
{
	sb_reset(out);
	if (so) {
		sb_reset(so);
		read_fd(pr->ofd, so, 4u << 20);
		sb_add(out, so->buf, so->len);
	} else {
		read_fd(pr->ofd, out, 4u << 20);
	}
	read_fd(pr->fd, out, 8u << 20);
	sb_addc(out, '\0');
	out->len--;
}

static void prog_end(struct rq_ctx *ctx, struct prog *pr)
{
	struct sb all = SB_INIT;

	prog_output(pr, &all, NULL);
	rq_log(ctx, "# %s output (%zu bytes, stdout then stderr):", pr->side, all.len);
	if (all.len)
		rq_log(ctx, "%s", all.buf);
	sb_release(&all);
	if (pr->fd >= 0)
		close(pr->fd);
	if (pr->ofd >= 0)
		close(pr->ofd);
	pr->fd = pr->ofd = -1;
	scratch_unlink(ctx, pr->side);
}

static void prog_describe(const struct prog *pr, const char *tool, char *buf, size_t size)
{
	if (pr->stopped)
		snprintf(buf, size, "%s was stopped", tool);
	else if (WIFEXITED(pr->status))
		snprintf(buf, size, "%s exited %d", tool, WEXITSTATUS(pr->status));
	else if (WIFSIGNALED(pr->status))
		snprintf(buf, size, "%s was killed by %s", tool,
			 sigabbrev_np(WTERMSIG(pr->status)) ? sigabbrev_np(WTERMSIG(pr->status)) : "a signal");
	else
		snprintf(buf, size, "%s ended (status %#x)", tool, pr->status);
}

static bool prog_exited(const struct prog *pr, long long code)
{
	return pr->done && !pr->stopped && WIFEXITED(pr->status) && WEXITSTATUS(pr->status) == code;
}

/* Does a TCP socket listen on port?  (/proc/net/tcp and tcp6, state 0A) */
static bool tcp_listening(int port)
{
	static const char *const files[] = { "/proc/net/tcp", "/proc/net/tcp6" };

	for (size_t f = 0; f < ARRAY_SIZE(files); f++) {
		struct sb s = SB_INIT;
		char *save = NULL;

		if (read_file(files[f], &s, 4u << 20) < 0) {
			sb_release(&s);
			continue;
		}
		for (char *l = strtok_r(s.buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			char local[80], remote[80], st[8];
			unsigned p;
			char *colon;

			if (sscanf(l, " %*d: %79s %79s %7s", local, remote, st) != 3)
				continue;
			colon = strrchr(local, ':');
			if (colon && sscanf(colon + 1, "%x", &p) == 1 && (int)p == port &&
			    !strcmp(st, "0A")) {
				sb_release(&s);
				return true;
			}
		}
		sb_release(&s);
	}
	return false;
}

/*
 * Does a listening RDMA CM id exist for port?  The kernel's restrack lists
 * every cm_id with its state and source port (iproute2's rdma tool reads
 * it over RDMA netlink); a server is ready once rdma_listen() made one
 * LISTEN, which is after it may have printed that it is ready.
 */
static bool rdma_cm_listening(int port)
{
	char ps[16];
	const char *argv[] = { "rdma", "-j", "resource", "show", "cm_id", "src-port", ps, NULL };
	struct proc_opts o = { .argv = argv, .timeout_ms = 5000, .log_fd = -1, .tail_max = 1u << 20 };
	struct proc_result r;
	bool yes = false;

	snprintf(ps, sizeof(ps), "%d", port);
	proc_result_init(&r);
	if (proc_run(&o, &r) == 0 && r.exit_code == 0 && r.out.len) {
		json_t *j = json_loadb(r.out.buf, r.out.len, 0, NULL), *e;
		size_t i;

		json_array_foreach(j, i, e) {
			json_t *st = json_object_get(e, "state"), *sp = json_object_get(e, "src-port");

			if (json_is_string(st) && !strcmp(json_string_value(st), "LISTEN") &&
			    (!json_is_integer(sp) || json_integer_value(sp) == port))
				yes = true;
		}
		json_decref(j);
	}
	proc_result_release(&r);
	return yes;
}

/* A message from the other side, if one came (non-blocking).  false: none yet. */
static bool oob_poll(struct oob *o, char *msg, size_t size, int64_t deadline)
{
	struct pollfd pfd = { .fd = o->fd, .events = POLLIN };
	char why[200];
	size_t n = 0;

	if (o->fd < 0 || poll(&pfd, 1, 0) <= 0)
		return false;
	if (oob_recv(o, msg, size - 1, &n, deadline, why, sizeof(why)) == 0) {
		msg[n] = '\0';
	} else {
		snprintf(msg, size, "gone (%s)", why);
		oob_close(o);
	}
	return true;
}

static void tell(struct rq_ctx *ctx, struct oob *o, int64_t deadline, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void tell(struct rq_ctx *ctx, struct oob *o, int64_t deadline, const char *fmt, ...)
{
	char msg[OOB_MSG_MAX - 1], why[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (o->fd >= 0 && oob_send(o, msg, strlen(msg), deadline, why, sizeof(why)) < 0)
		rq_log(ctx, "# could not tell the other side \"%s\": %s", msg, why);
}

static int apply_memlock(struct rq_ctx *ctx, const struct pair_cfg *cfg, char *err, size_t errsz)
{
	return cfg->memlock ? app_memlock_apply(ctx, cfg->memlock, err, errsz) : 0;
}

/* argv and env of this side with the placeholders filled; -1 with err. */
static int side_argv(struct rq_ctx *ctx, const struct pair_cfg *cfg, bool server,
		     char ***argv, char ***env, char *err, size_t errsz)
{
	const struct rq_list *a = server ? &cfg->server : &cfg->client;
	const struct rq_list *e2 = server ? &cfg->server_env : &cfg->client_env;
	struct place pl;
	struct rq_list both = { 0 };

	place_fill(ctx, list_used(a) | list_used(&cfg->env) | list_used(e2), &pl);
	*argv = expand_list(a, &pl, err, errsz);
	if (!*argv)
		return -1;
	both.n = cfg->env.n + e2->n;
	both.str = xcalloc(both.n + 1, sizeof(char *));
	for (size_t i = 0; i < cfg->env.n; i++)
		both.str[i] = cfg->env.str[i];
	for (size_t i = 0; i < e2->n; i++)
		both.str[cfg->env.n + i] = e2->str[i];
	*env = expand_list(&both, &pl, err, errsz);
	free(both.str);
	if (!*env) {
		strv_free(*argv);
		*argv = NULL;
		return -1;
	}
	return 0;
}

/* ---- server ---------------------------------------------------------- */

static void run_server(struct rq_ctx *ctx, const struct pair_cfg *cfg)
{
	struct rq_result *row = ctx->main;
	int64_t deadline = ctx->deadline_ms;
	/* Leave the client time to hear why, when the server is never ready. */
	int64_t left = rq_ctx_left_ms(ctx);
	int64_t ready_by = deadline - (left / 10 > 2000 ? 2000 : left / 10);
	char **argv = NULL, **env = NULL, err[512] = "", msg[OOB_MSG_MAX], how[300];
	const char *tool = cfg->server.str[0];
	struct oob o = { .fd = -1 };
	struct prog pr = { .pid = -1, .fd = -1, .ofd = -1 };
	struct sb out = SB_INIT;
	bool ready = !cfg->ready && !cfg->ready_listen && !cfg->ready_rdma_cm;
	char port[16];

	msg[0] = '\0';
	snprintf(port, sizeof(port), "%d", ctx->oob_port + 2);
	if (side_argv(ctx, cfg, true, &argv, &env, err, sizeof(err)) < 0) {
		rq_result_set(row, RQ_ERROR, "server: %s", err);
		/* the client is told when it connects; "error:" (not "failed:")
		 * because nothing of the program under test ran */
		snprintf(msg, sizeof(msg), "error: %s", err);
		goto tell_client;
	}
	int rc = apply_memlock(ctx, cfg, err, sizeof(err));

	if (rc >= 0)
		rc = prog_start(ctx, "server", argv, env, &pr);
	if (rc < 0) {
		if (pr.pid < 0 && !err[0])
			start_error(err, sizeof(err), tool, rc);
		rq_result_set(row, RQ_ERROR, "server: %s", err);
		snprintf(msg, sizeof(msg), "error: %s", err);
		goto tell_client;
	}
	/* Wait until ready: its text, or its listening socket, or it ends. */
	while (!ready) {
		int64_t slice = now_ms() + 100;

		if (prog_poll(&pr, slice < ready_by ? slice : ready_by)) {
			prog_output(&pr, &out, NULL);
			if (cfg->ready && memmem(out.buf, out.len, cfg->ready, strlen(cfg->ready)))
				break;	/* it printed its text, then ended: judged below */
			prog_describe(&pr, tool, how, sizeof(how));
			if (cfg->ready)
				rq_judge(row, false, "server %s before it was ready (it never printed "
					 "\"%s\")", how, cfg->ready);
			else
				rq_judge(row, false, "server %s before it listened on %s port %s",
					 how, cfg->ready_rdma_cm ? "RDMA CM" : "TCP", port);
			snprintf(msg, sizeof(msg), "failed: %s", row->reason ? row->reason : how);
			goto tell_client;
		}
		if (cfg->ready) {
			prog_output(&pr, &out, NULL);
			/* output is bytes: a NUL before the text must not hide it */
			ready = memmem(out.buf, out.len, cfg->ready, strlen(cfg->ready)) != NULL;
		} else if (cfg->ready_rdma_cm) {
			ready = rdma_cm_listening(ctx->oob_port + 2);
		} else {
			ready = tcp_listening(ctx->oob_port + 2);
		}
		if (!ready && now_ms() >= ready_by) {
			if (cfg->ready)
				rq_judge(row, false, "server %s never printed its ready text \"%s\" "
					 "within %.1f s", tool, cfg->ready, (now_ms() - pr.started) / 1000.0);
			else if (cfg->ready_rdma_cm)
				rq_judge(row, false, "server %s had no listening RDMA CM id on port %s "
					 "within %.1f s", tool, port, (now_ms() - pr.started) / 1000.0);
			else
				rq_judge(row, false, "server %s never listened on TCP port %s within %.1f s",
					 tool, port, (now_ms() - pr.started) / 1000.0);
			prog_stop(&pr, cfg->server_stop_grace_ms);
			snprintf(msg, sizeof(msg), "failed: %s", row->reason ? row->reason : "not ready");
			goto tell_client;
		}
	}
	rq_log(ctx, "# server ready after %.2f s", (now_ms() - pr.started) / 1000.0);
	snprintf(msg, sizeof(msg), "ready");
tell_client:
	/* The client connects once it starts; a failure above still reaches it. */
	if (oob_open(&o, true, ctx->local_addr, NULL, ctx->oob_port, deadline, err, sizeof(err)) < 0) {
		rq_log(ctx, "# no client side: %s", err);
		if (strcmp(msg, "ready"))
			goto out;
		prog_stop(&pr, cfg->server_stop_grace_ms);
		rq_judge(row, false, "the client side never connected: %s", err);
		goto out;
	}
	tell(ctx, &o, deadline, "%s", msg);
	if (strcmp(msg, "ready"))
		goto out;
	/* Serving: until the client reports, the deadline, or our program ends. */
	msg[0] = '\0';
	bool told = false;

	for (;;) {
		int64_t slice = now_ms() + 100;

		if (!pr.done && prog_poll(&pr, slice < deadline ? slice : deadline) && !told &&
		    !prog_exited(&pr, cfg->server_exit) && !cfg->server_persists) {
			/* it failed while the client runs: the client should stop, not wait */
			prog_describe(&pr, tool, how, sizeof(how));
			tell(ctx, &o, deadline, "failed: server %s", how);
			told = true;
		}
		if (pr.done && o.fd < 0)
			break;
		if (oob_poll(&o, msg, sizeof(msg), deadline))
			break;
		if (now_ms() >= deadline)
			break;
		if (pr.done) {
			struct pollfd pfd = { .fd = o.fd, .events = POLLIN };
			int64_t w = deadline - now_ms();

			poll(&pfd, 1, w > 100 ? 100 : (int)w);
		}
	}
	if (msg[0])
		rq_log(ctx, "# the client side: %s", msg);
	if (!pr.done && str_starts(msg, "exit ") && atoi(msg + 5) != cfg->exit) {
		/* The client failed: its row says why; waiting on would only add noise. */
		prog_stop(&pr, cfg->server_stop_grace_ms);
		rq_judge(row, true, "server %s stopped: the client side failed", tool);
	} else if (!pr.done && str_starts(msg, "exit ")) {
		/* The client is done: the server has its grace to finish, or is stopped. */
		int64_t until = now_ms() + (cfg->server_persists ? 0 : scaled_ms(cfg->server_grace_ms));

		if (until > deadline)
			until = deadline;
		if (!prog_poll(&pr, until)) {
			prog_stop(&pr, cfg->server_stop_grace_ms);
			if (!cfg->server_persists)
				rq_judge(row, false, "server %s was still running %.1f s after the client "
					 "ended (server_persists: true for servers that serve until stopped)",
					 tool, scaled_ms(cfg->server_grace_ms) / 1000.0);
		}
	} else if (!pr.done) {
		prog_stop(&pr, cfg->server_stop_grace_ms);
		if (!msg[0])
			rq_judge(row, false, "server %s did not finish before the deadline", tool);
		else
			rq_judge(row, false, "server %s stopped: the client side %s", tool, msg);
	}
	if (!cfg->server_persists && !pr.stopped && !row->judged) {
		prog_describe(&pr, tool, how, sizeof(how));
		rq_judge(row, prog_exited(&pr, cfg->server_exit), "server %s (expected exit %lld)",
			 how, cfg->server_exit);
	} else if (!row->judged) {
		rq_judge(row, true, "server %s stopped after the client ended", tool);
	}
	tell(ctx, &o, deadline, "done");
out:
	if (pr.fd >= 0)
		prog_end(ctx, &pr);
	oob_close(&o);
	sb_release(&out);
	strv_free(argv);
	strv_free(env);
}

/* ---- client ---------------------------------------------------------- */

static void client_figures(struct rq_ctx *ctx, const struct pair_cfg *cfg, struct rq_result *row,
			   const struct sb *all, const struct sb *so)
{
	char err[256];

	if (cfg->stdout_contains)
		rq_judge(row, memmem(so->buf, so->len, cfg->stdout_contains,
				     strlen(cfg->stdout_contains)) != NULL,
			 "client stdout lacks \"%s\"", cfg->stdout_contains);
	if (cfg->stdout_lacks)
		rq_judge(row, !memmem(so->buf, so->len, cfg->stdout_lacks, strlen(cfg->stdout_lacks)),
			 "client stdout contains \"%s\"", cfg->stdout_lacks);
	/* all is stdout then stderr: the part after stdout is stderr */
	if (cfg->stderr_lacks && all->len >= so->len)
		rq_judge(row, !memmem(all->buf + so->len, all->len - so->len, cfg->stderr_lacks,
				      strlen(cfg->stderr_lacks)),
			 "client stderr contains \"%s\"", cfg->stderr_lacks);
	for (size_t i = 0; i < cfg->figures.n; i++) {
		struct app_fig_rule r;
		double v;
		int rc;

		if (app_fig_rule_parse(cfg->figures.str[i], &r, err, sizeof(err)) < 0) {
			rq_judge(row, false, "%s", err);
			continue;
		}
		rc = app_fig_rule_apply(&r, all->buf, &v, err, sizeof(err));
		if (rc == 0)
			rq_figure_add(row, r.name, v, r.unit);
		else if (rc > 0)
			rq_judge(row, false, "figure %s: /%s/ matches nothing in the client's output",
				 r.name, r.regex);
		else
			rq_judge(row, false, "%s", err);
		app_fig_rule_release(&r);
	}
	if (cfg->parser == P_PERFTEST) {
		struct pt_report rep;

		if (!rq_judge(row, perftest_parse(all->buf, all->len, &rep, err, sizeof(err)) == 0 &&
			      rep.nrows > 0, "perftest parser: %s", err[0] ? err : "no result rows")) {
			return;
		}
		const struct pt_row *r = &rep.rows[rep.nrows - 1];

		if (rep.kind == PT_BW) {
			rq_figure_add(row, "bw_avg", pt_gbps(&rep, r->v[PT_C_BW_AVG]), "Gb/s");
			if (!isnan(r->v[PT_C_BW_PEAK]))
				rq_figure_add(row, "bw_peak", pt_gbps(&rep, r->v[PT_C_BW_PEAK]), "Gb/s");
			if (!isnan(r->v[PT_C_MSGRATE]))
				rq_figure_add(row, "msg_rate", r->v[PT_C_MSGRATE] * 1e6, "msg/s");
		} else {
			static const struct { enum pt_col c; const char *name; } m[] = {
				{ PT_C_T_MIN, "t_min" }, { PT_C_T_TYPICAL, "t_typical" },
				{ PT_C_T_AVG, "t_avg" }, { PT_C_P99, "t_p99" }, { PT_C_T_MAX, "t_max" },
			};

			for (size_t k = 0; k < ARRAY_SIZE(m); k++)
				if (!isnan(r->v[m[k].c]))
					rq_figure_add(row, m[k].name, r->v[m[k].c], "us");
		}
		pt_report_release(&rep);
	} else if (cfg->parser == P_PINGPONG) {
		struct pp_report pp;

		if (rq_judge(row, pingpong_parse(all->buf, all->len, &pp, err, sizeof(err)) == 0 &&
			     pp.has_lat, "ibv_rc_pingpong parser: %s",
			     err[0] ? err : "no \"usec/iter\" line")) {
			rq_figure_add(row, "usec_per_iter", pp.usec_per_iter, "us");
			rq_figure_add(row, "mbit_per_sec", pp.mbit_per_sec, "Mb/s");
		}
	} else if (cfg->parser == P_RPING) {
		struct rping_report rr;

		if (rq_judge(row, rping_parse(all->buf, all->len, &rr, err, sizeof(err)) == 0,
			     "rping parser: %s", err)) {
			rq_figure_add(row, "pings", rr.pings, "");
			rq_judge(row, rr.pings > 0, "rping printed no ping lines (run it with -v)");
			rq_judge(row, rr.in_order && rr.data_ok,
				 "rping: pings out of order or corrupt (line %u)", rr.bad_line);
		}
	}
	(void)ctx;
}

static void run_client(struct rq_ctx *ctx, const struct pair_cfg *cfg)
{
	struct rq_result *row = ctx->main;
	int64_t deadline = ctx->deadline_ms;
	char **argv = NULL, **env = NULL, err[512] = "", msg[OOB_MSG_MAX], how[300];
	const char *tool = cfg->client.str[0];
	struct oob o = { .fd = -1 };
	struct prog pr = { .pid = -1, .fd = -1, .ofd = -1 };
	struct sb all = SB_INIT, so = SB_INIT;
	size_t n = 0;
	int64_t started = 0;

	if (side_argv(ctx, cfg, false, &argv, &env, err, sizeof(err)) < 0) {
		rq_result_set(row, RQ_ERROR, "client: %s", err);
		goto out;
	}
	if (oob_open(&o, false, NULL, ctx->peer_addr && *ctx->peer_addr ? ctx->peer_addr : "127.0.0.1",
		     ctx->oob_port, deadline, err, sizeof(err)) < 0) {
		rq_judge(row, false, "no server side: %s", err);
		goto out;
	}
	if (oob_recv(&o, msg, sizeof(msg) - 1, &n, deadline, err, sizeof(err)) < 0) {
		rq_judge(row, false, "the server side never said it was ready: %s", err);
		goto out;
	}
	msg[n] = '\0';
	if (strcmp(msg, "ready")) {
		/* The server's row says why; the run appends it to this one. */
		rq_log(ctx, "# the server side: %s", msg);
		/*
		 * A server that could not start says nothing about the program
		 * or the link: ERROR.  One that started and then failed its
		 * judgement (never ready, ended early) is the program's FAIL.
		 */
		if (str_starts(msg, "error: "))
			rq_result_set(row, RQ_ERROR, "client not started: the server side could not start");
		else if (str_starts(msg, "failed: "))
			rq_judge(row, false, "client not started: the server side failed");
		else
			rq_judge(row, false, "client not started: the server side %s", msg);
		goto out;
	}
	started = app_results_clock();
	int rc = apply_memlock(ctx, cfg, err, sizeof(err));

	if (rc >= 0)
		rc = prog_start(ctx, "client", argv, env, &pr);
	if (rc < 0) {
		if (!err[0])
			start_error(err, sizeof(err), tool, rc);
		rq_result_set(row, RQ_ERROR, "client: %s", err);
		tell(ctx, &o, deadline, "exit -1 not started");
		goto out;
	}
	msg[0] = '\0';
	while (!prog_poll(&pr, now_ms() + 100 < deadline ? now_ms() + 100 : deadline)) {
		if (oob_poll(&o, msg, sizeof(msg), deadline) && strcmp(msg, "done")) {
			prog_stop(&pr, 1000);
			break;
		}
		if (now_ms() >= deadline) {
			pr.timed_out = true;
			prog_stop(&pr, 1000);
			break;
		}
	}
	prog_describe(&pr, tool, how, sizeof(how));
	tell(ctx, &o, deadline, "exit %d %s", pr.stopped ? -1 : WIFEXITED(pr.status) ?
	     WEXITSTATUS(pr.status) : -1, how);
	/* The server's last word ("done", or why it failed) closes the exchange. */
	if (!msg[0] && o.fd >= 0 &&
	    oob_recv(&o, msg, sizeof(msg) - 1, &n, deadline + 1000, err, sizeof(err)) == 0)
		msg[n] = '\0';
	if (msg[0])
		rq_log(ctx, "# the server side: %s", msg);
	prog_output(&pr, &all, &so);
	if (pr.timed_out)
		rq_judge(row, false, "client %s did not finish before the deadline (%.1f s)", tool,
			 (now_ms() - pr.started) / 1000.0);
	else if (pr.stopped)
		rq_judge(row, false, "client %s stopped: the server side %s", tool, msg);
	else
		rq_judge(row, prog_exited(&pr, cfg->exit), "client %s (expected exit %lld)", how,
			 cfg->exit);
	rq_figure_add(row, "elapsed", (now_ms() - pr.started) / 1000.0, "s");
	if (!pr.stopped) {
		client_figures(ctx, cfg, row, &all, &so);
		/* prog_output() keeps 4 MiB of stdout: more, and the results were cut */
		app_results_import(ctx, row, &cfg->res, all.buf, all.len, so.len >= (4u << 20), started);
	}
out:
	if (pr.fd >= 0)
		prog_end(ctx, &pr);
	oob_close(&o);
	sb_release(&all);
	sb_release(&so);
	strv_free(argv);
	strv_free(env);
}

/*
 * After run() returned, the files are gone (prog_end logged them).  After
 * the worker was killed (the agent's deadline, a cancel) they are still
 * there: log what the stopped program printed, so the case says why.
 */
static void pair_cleanup(struct rq_ctx *ctx, const void *p)
{
	static const char *const sides[] = { "server", "client" };

	for (size_t i = 0; ctx->scratch && i < ARRAY_SIZE(sides); i++) {
		static const char *const what[] = { "stdout", "out" };

		for (size_t k = 0; k < ARRAY_SIZE(what); k++) {
			char path[700];
			struct sb s = SB_INIT;

			snprintf(path, sizeof(path), "%s/%s.%s", ctx->scratch, sides[i], what[k]);
			if (read_file(path, &s, 4u << 20) >= 0) {
				rq_log(ctx, "# %s %s of the program stopped with the case (%zu bytes):",
				       sides[i], k ? "stderr" : "stdout", s.len);
				if (s.len)
					rq_log(ctx, "%s", s.buf);
			}
			sb_release(&s);
			unlink(path);
		}
	}
	(void)p;
}

static void pair_run(struct rq_ctx *ctx, const void *p)
{
	const struct pair_cfg *cfg = p;

	if (ctx->role == ROLE_SERVER)
		run_server(ctx, cfg);
	else
		run_client(ctx, cfg);
}

const struct rq_kind rq_kind_command_pair = {
	.name = "command-pair",
	/* every other kind is spelt with a hyphen; case files of before still load */
	.old_name = "command_pair",
	.summary = "any program as a server on one side and a client on the other (argv, no shell), judged by both",
	.doc = "Runs a server argv on one side and, once it is ready (its `ready:` text appeared or "
	       "a TCP socket listens on {port}), a client argv on the other, with placeholders the "
	       "run fills: {peer_ip} (the other side's RDMA-side address), {peer_host}, {dev}, "
	       "{port} (a TCP port free for this pair), {gid_index}, {netdev}, {ip}.  Judged by both "
	       "exit statuses and stdout_contains; figures come from the client's output through a "
	       "named parser (perftest, ibv_rc_pingpong, rping) or NAME=REGEX rules.  A side whose "
	       "program fails stops the other; both outputs are in the log whatever happened.",
	.keys = pair_keys,
	.cfg_size = sizeof(struct pair_cfg),
	.default_targets = "hca,rxe-vm,rxe-host",
	.two_sided = true,
	.loads_modules = true,
	.validate = pair_validate,
	.check = pair_check,
	.run = pair_run,
	.cleanup = pair_cleanup,
};

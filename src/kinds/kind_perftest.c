/* SPDX-License-Identifier: MIT */
/*
 * perftest: ib_{write,read,send}_{bw,lat}, server on one side and client on
 * the other with the same options, output parsed (parse_perftest.c) into
 * the same figures the native kinds report.  perftest is the de-facto
 * reference: labs quote its numbers, vendors' acceptance tests use it.
 *
 * perftest has no deadlines of its own, and its handshake deadlocks when
 * one side dies at the wrong moment (the server waits forever for a client
 * that is gone).  So each side runs its tool as a process group under the
 * case's deadline, watches the out-of-band connection while it runs, and
 * kills its tool when the other side reports a failure or goes away.
 * The client retries a connect the server refused (it may not listen yet)
 * until the server reports.
 *
 * Both the package version (dpkg) and the tool's own "Version:" line go
 * into the report: they differ (4.5-0.17 prints 6.06), and perftest sides
 * of different versions refuse each other.
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
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/kind.h"
#include "parsers/parse_perftest.h"
#include "parsers/parse_pingpong.h"
#include "rdma/verbs_pair.h"

enum pt_test { T_WRITE_BW, T_READ_BW, T_SEND_BW, T_WRITE_LAT, T_READ_LAT, T_SEND_LAT, T_RC_PINGPONG };

static const char *const test_names[] = {
	"write_bw", "read_bw", "send_bw", "write_lat", "read_lat", "send_lat", "rc_pingpong", NULL
};
static const char *const test_tools[] = {
	"ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_write_lat", "ib_read_lat", "ib_send_lat",
	"ibv_rc_pingpong",
};
static const char *const conn_names[] = { "rc", "uc", "ud", NULL };

struct ptk_cfg {
	int test;
	uint64_t size;
	int64_t duration_ms;
	long long iterations;
	long long qps;
	int connection;
	struct rq_list args;
	struct rq_list server_args;
	double min_gbps;
	double min_line_rate;
	double max_latency_us;
	char *server_devices;
};

static const struct key_def ptk_keys[] = {
	{ .name = "test", .type = KEY_ENUM, .choices = test_names, .required = true,
	  .offset = offsetof(struct ptk_cfg, test),
	  .help = "which tool: write_bw, read_bw, send_bw, write_lat, read_lat, send_lat (ib_<test>), or rc_pingpong (rdma-core's ibv_rc_pingpong, as a cross-check)" },
	{ .name = "size", .type = KEY_SIZE, .def = "64KiB", .min = 1, .max = 1 << 30,
	  .offset = offsetof(struct ptk_cfg, size),
	  .help = "message size (-s)" },
	{ .name = "duration", .type = KEY_DURATION, .def = "0s", .min = 0, .max = 3600 * 1000,
	  .offset = offsetof(struct ptk_cfg, duration_ms),
	  .help = "run for this long (-D, whole seconds); 0: iterations mode" },
	{ .name = "iterations", .type = KEY_INT, .def = "0", .min = 0, .max = 100000000,
	  .offset = offsetof(struct ptk_cfg, iterations),
	  .help = "iterations (-n); 0: the tool's default" },
	{ .name = "qps", .type = KEY_INT, .def = "1", .min = 1, .max = 64,
	  .offset = offsetof(struct ptk_cfg, qps),
	  .help = "QPs (-q; bw tests)" },
	{ .name = "connection", .type = KEY_ENUM, .choices = conn_names, .def = "rc",
	  .offset = offsetof(struct ptk_cfg, connection),
	  .help = "connection type (-c): rc, uc or ud (ud: send tests only)" },
	{ .name = "args", .type = KEY_LIST, .elem = KEY_STR,
	  .offset = offsetof(struct ptk_cfg, args),
	  .help = "extra arguments for both sides (argv, no shell), e.g. [\"-t\", \"64\"]" },
	{ .name = "server_args", .type = KEY_LIST, .elem = KEY_STR,
	  .offset = offsetof(struct ptk_cfg, server_args),
	  .help = "extra arguments for the server side only (after args)" },
	{ .name = "min_gbps", .type = KEY_DOUBLE, .def = "0", .dmin = 0, .dmax = 1e6,
	  .offset = offsetof(struct ptk_cfg, min_gbps),
	  .help = "bw tests: fail below this average in Gb/s (0: not judged)" },
	{ .name = "min_line_rate", .type = KEY_DOUBLE, .def = "0", .dmin = 0, .dmax = 1,
	  .offset = offsetof(struct ptk_cfg, min_line_rate),
	  .help = "bw tests: fail below this fraction of the port's data rate (after line coding; not judged on rxe nor in loopback on one HCA)" },
	{ .name = "max_latency_us", .type = KEY_DOUBLE, .def = "0", .dmin = 0, .dmax = 1e9,
	  .offset = offsetof(struct ptk_cfg, max_latency_us),
	  .help = "lat tests: fail when t_typical (the median) is longer; rc_pingpong: usec/iter (0: not judged)" },
	{ .name = "server_devices", .type = KEY_STR,
	  .offset = offsetof(struct ptk_cfg, server_devices),
	  .help = "device selection on the server side when its names differ (default: devices)" },
	KEY_END
};

static bool is_bw(int t)
{
	return t <= T_SEND_BW;
}

static int ptk_validate(const struct rq_case *c, char *err, size_t errsz)
{
	const struct ptk_cfg *cfg = c->cfg;

	if (cfg->connection == 2 && cfg->test != T_SEND_BW && cfg->test != T_SEND_LAT) {
		snprintf(err, errsz, "connection ud works with send_bw and send_lat only");
		return -1;
	}
	if (cfg->connection == 1 && (cfg->test == T_READ_BW || cfg->test == T_READ_LAT)) {
		snprintf(err, errsz, "connection uc has no RDMA READ");
		return -1;
	}
	if (cfg->test == T_RC_PINGPONG && (cfg->duration_ms || cfg->connection || cfg->qps > 1)) {
		snprintf(err, errsz, "rc_pingpong takes size and iterations only (no duration, connection, qps)");
		return -1;
	}
	if (cfg->duration_ms && cfg->duration_ms % 1000) {
		snprintf(err, errsz, "duration: perftest takes whole seconds");
		return -1;
	}
	return 0;
}

static enum rq_verdict ptk_check(struct rq_ctx *ctx, const void *p, char *why, size_t whysz)
{
	const struct ptk_cfg *cfg = p;

	if (!ctx->replay && !cmd_exists(test_tools[cfg->test])) {
		snprintf(why, whysz, "%s is not installed (Debian package perftest)",
			 test_tools[cfg->test]);
		return RQ_SKIP;
	}
	return RQ_NONE;
}

/* Both versions as facts: the package's and the tool's own. */
static void version_facts(struct rq_ctx *ctx, struct rq_result *row, const char *tool)
{
	if (!strcmp(tool, "ibv_rc_pingpong")) {
		const char *dpkg[] = { "dpkg-query", "-W", "-f", "${Version}", "ibverbs-utils", NULL };
		struct proc_result pr;

		proc_result_init(&pr);
		if (rq_tool(ctx, dpkg, 10000, &pr) == 0 && pr.exit_code == 0 && pr.out.len) {
			sb_rtrim(&pr.out);
			rq_fact_add(row, "ibverbs_utils_package", pr.out.buf);
		}
		proc_result_release(&pr);
		return;
	}
	const char *dpkg[] = { "dpkg-query", "-W", "-f", "${Version}", "perftest", NULL };
	const char *ver[] = { tool, "--version", NULL };
	struct proc_result pr;
	struct pt_report rep;
	char err[128];

	proc_result_init(&pr);
	if (rq_tool(ctx, dpkg, 10000, &pr) == 0 && pr.exit_code == 0 && pr.out.len) {
		sb_rtrim(&pr.out);
		rq_fact_add(row, "perftest_package", pr.out.buf);
	} else {
		rq_fact_add(row, "perftest_package", "unknown (not a dpkg system?)");
	}
	proc_result_release(&pr);
	proc_result_init(&pr);
	/* 4.5 prints "Version: 6.06" and exits 1: judge the text, not the status */
	if (rq_tool(ctx, ver, 10000, &pr) == 0) {
		sb_add(&pr.out, pr.err.buf, pr.err.len);
		if (perftest_parse(pr.out.buf, pr.out.len, &rep, err, sizeof(err)) == 0) {
			rq_fact_add(row, "perftest_version", rep.version[0] ? rep.version : "unknown");
			pt_report_release(&rep);
		}
	}
	proc_result_release(&pr);
}

struct watched {
	int exit_code;		/* -1: killed or timed out */
	bool timed_out, killed_for_peer, refused;
	struct sb out;		/* stdout + stderr */
	char peer_msg[300];	/* the peer's "exit N ..." if it came meanwhile */
};

/*
 * Has the other side reported how its tool ended ("exit N ...") or gone
 * away?  Non-blocking; the first report is kept in msg.
 */
static bool peer_report(struct vp *s, char *msg, size_t size)
{
	struct pollfd pfd = { .fd = s->oob.fd, .events = POLLIN };
	char why[256];
	size_t n = 0;

	if (msg[0])
		return true;
	if (s->oob.fd < 0 || poll(&pfd, 1, 0) <= 0)
		return false;
	if (oob_recv(&s->oob, msg, size - 1, &n, s->deadline, why, sizeof(why)) == 0) {
		msg[n] = '\0';
	} else {
		snprintf(msg, size, "gone: %s", why);
		oob_close(&s->oob);
	}
	rq_log(s->ctx, "# the other side: %s", msg);
	return true;
}

/*
 * Run argv as a process group, output to a scratch file, until it exits,
 * the deadline passes, or the peer reports a failure or goes away.
 */
static int run_watched(struct vp *s, const char *const *argv, struct watched *w)
{
	struct rq_ctx *ctx = s->ctx;
	char path[600];
	struct sb line = SB_INIT;
	int fd, status = 0, ret;
	pid_t pid;

	memset(w, 0, sizeof(*w));
	sb_init(&w->out);
	w->exit_code = -1;
	sb_add_argv(&line, (const char *const *)argv);
	rq_log(ctx, "$ %s", line.buf);
	sb_release(&line);
	/*
	 * The tool's output goes to a file with no name anyone else could
	 * reach: an unlinked one in the agent's own 0700 scratch dir, else an
	 * anonymous one (a fixed /tmp/perftest-PID.out, O_TRUNC, was anyone's
	 * to plant as a link).
	 */
	if (ctx->scratch) {
		snprintf(path, sizeof(path), "%s/perftest-%d.out", ctx->scratch, (int)getpid());
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			unlink(path);
	} else {
		fd = memfd_create("perftest-out", MFD_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	{
		struct spawn_opts so = {
			.argv = argv,
			.env_add = ctx->tool_env,
			.cwd = ctx->tool_cwd,
			.stdin_fd = -1,
			.stdout_fd = fd,
			.stderr_fd = fd,
		};

		pid = proc_spawn(&so);
	}
	if (pid < 0) {
		close(fd);
		return (int)pid;
	}
	for (;;) {
		int64_t slice = now_ms() + 200;

		ret = proc_wait_deadline(pid, slice < s->deadline ? slice : s->deadline, &status);
		if (ret != 0)
			break;
		if (now_ms() >= s->deadline) {
			w->timed_out = true;
			proc_kill_group(pid, 500);
			break;
		}
		/* a peer that finished fine: ours should finish too, give it time */
		if (peer_report(s, w->peer_msg, sizeof(w->peer_msg)) && strncmp(w->peer_msg, "exit 0", 6)) {
			w->killed_for_peer = true;
			proc_kill_group(pid, 500);
			break;
		}
	}
	if (ret > 0 && WIFEXITED(status))
		w->exit_code = WEXITSTATUS(status);
	lseek(fd, 0, SEEK_SET);
	{
		char buf[4096];
		ssize_t n;

		while ((n = read(fd, buf, sizeof(buf))) > 0 && w->out.len < (4u << 20))
			sb_add(&w->out, buf, (size_t)n);
	}
	close(fd);
	if (w->out.len)
		rq_log(ctx, "%s", w->out.buf);
	w->refused = w->exit_code != 0 && strstr(w->out.buf, "Couldn't connect to");
	return 0;
}

static void build_argv(const struct ptk_cfg *cfg, const struct vp_port *p, int tcp_port,
		       const char *peer, bool server, const char **argv, char bufs[][32])
{
	int n = 0, b = 0;

	argv[n++] = test_tools[cfg->test];
	if (cfg->test == T_RC_PINGPONG) {
		argv[n++] = "-d";
		argv[n++] = p->dev;
		argv[n++] = "-i";
		snprintf(bufs[b], 32, "%d", p->port);
		argv[n++] = bufs[b++];
		argv[n++] = "-p";
		snprintf(bufs[b], 32, "%d", tcp_port);
		argv[n++] = bufs[b++];
		argv[n++] = "-s";
		snprintf(bufs[b], 32, "%" PRIu64, cfg->size);
		argv[n++] = bufs[b++];
		if (p->gid_index >= 0) {
			argv[n++] = "-g";
			snprintf(bufs[b], 32, "%d", p->gid_index);
			argv[n++] = bufs[b++];
		}
		if (cfg->iterations) {
			argv[n++] = "-n";
			snprintf(bufs[b], 32, "%lld", cfg->iterations);
			argv[n++] = bufs[b++];
		}
		goto extra;
	}
	argv[n++] = "-d";
	argv[n++] = p->dev;
	argv[n++] = "-i";
	snprintf(bufs[b], 32, "%d", p->port);
	argv[n++] = bufs[b++];
	argv[n++] = "-p";
	snprintf(bufs[b], 32, "%d", tcp_port);
	argv[n++] = bufs[b++];
	argv[n++] = "-s";
	snprintf(bufs[b], 32, "%" PRIu64, cfg->size);
	argv[n++] = bufs[b++];
	argv[n++] = "-F";	/* VMs: no CPU frequency warning to fail on */
	if (p->gid_index >= 0) {
		argv[n++] = "-x";
		snprintf(bufs[b], 32, "%d", p->gid_index);
		argv[n++] = bufs[b++];
	}
	if (p->is_virtual && !cfg->connection) {
		/* RC on rxe/siw: the QP timeout of the native kinds (VB_ACK_TIMEOUT_SOFT, verbs.h) */
		argv[n++] = "-u";
		snprintf(bufs[b], 32, "%d", VB_ACK_TIMEOUT_SOFT);
		argv[n++] = bufs[b++];
	}
	if (is_bw(cfg->test)) {
		argv[n++] = "--report_gbits";
		if (cfg->qps > 1) {
			argv[n++] = "-q";
			snprintf(bufs[b], 32, "%lld", cfg->qps);
			argv[n++] = bufs[b++];
		}
	}
	if (cfg->duration_ms) {
		argv[n++] = "-D";
		snprintf(bufs[b], 32, "%lld", (long long)(cfg->duration_ms / 1000));
		argv[n++] = bufs[b++];
	} else if (cfg->iterations) {
		argv[n++] = "-n";
		snprintf(bufs[b], 32, "%lld", cfg->iterations);
		argv[n++] = bufs[b++];
	}
	if (cfg->connection) {
		argv[n++] = "-c";
		argv[n++] = cfg->connection == 1 ? "UC" : "UD";
	}
extra:
	for (size_t i = 0; i < cfg->args.n && n < 56; i++)
		argv[n++] = cfg->args.str[i];
	if (server)
		for (size_t i = 0; i < cfg->server_args.n && n < 62; i++)
			argv[n++] = cfg->server_args.str[i];
	if (!server)
		argv[n++] = peer;
	argv[n] = NULL;
}

static void figures(struct vp *s, int i, struct rq_result *row, const struct ptk_cfg *cfg,
		    const struct pt_report *rep)
{
	const struct pt_row *r = pt_find_row(rep, cfg->size);

	if (!rq_judge(row, r != NULL, "no result row for %" PRIu64 " bytes in the output", cfg->size))
		return;
	if (rep->kind == PT_BW) {
		double avg = pt_gbps(rep, r->v[PT_C_BW_AVG]), peak = pt_gbps(rep, r->v[PT_C_BW_PEAK]);
		struct vp_thresholds t = { .min_gbps = cfg->min_gbps, .min_line_rate = cfg->min_line_rate };

		rq_figure_add(row, "bw_avg", avg, "Gb/s");
		if (!isnan(peak) && peak > 0)
			rq_figure_add(row, "bw_peak", peak, "Gb/s");
		if (!isnan(r->v[PT_C_MSGRATE]))
			rq_figure_add(row, "msg_rate", r->v[PT_C_MSGRATE] * 1e6, "msg/s");
		rq_judge(row, !isnan(avg) && avg > 0, "%s reported no bandwidth", test_tools[cfg->test]);
		vp_judge_bw(s, i, row, &t, avg, test_tools[cfg->test]);
	} else {
		static const struct { enum pt_col c; const char *name; } m[] = {
			{ PT_C_T_MIN, "t_min" }, { PT_C_T_TYPICAL, "t_typical" }, { PT_C_T_AVG, "t_avg" },
			{ PT_C_P99, "t_p99" }, { PT_C_T_MAX, "t_max" },
		};
		double typ = !isnan(r->v[PT_C_T_TYPICAL]) ? r->v[PT_C_T_TYPICAL] : r->v[PT_C_T_AVG];

		for (size_t k = 0; k < ARRAY_SIZE(m); k++)
			if (!isnan(r->v[m[k].c]))
				rq_figure_add(row, m[k].name, r->v[m[k].c], "us");
		if (cfg->max_latency_us > 0)
			vp_judge_lat(row, &(struct vp_thresholds){ .max_latency_us = cfg->max_latency_us },
				     typ, "t_typical");
	}
	rq_figure_add(row, "iterations", (double)r->iters, "");
}

static void run_pair(struct vp *s, int i, const struct ptk_cfg *cfg)
{
	struct rq_ctx *ctx = s->ctx;
	struct rq_result *row = vp_row(s, i);
	const char *tool = test_tools[cfg->test];
	const char *argv[64];
	char bufs[8][32], theirs[300], msg[300], why[256];
	const char *peer = ctx->peer_addr && *ctx->peer_addr ? ctx->peer_addr : "127.0.0.1";
	struct watched w = { .exit_code = -1 };
	struct pt_report rep;
	struct pp_report pp;
	char perr[256];
	int64_t backoff = 50;

	version_facts(ctx, row, tool);
	build_argv(cfg, &s->ports[i], ctx->oob_port + 2, peer, s->server, argv, bufs);
	if (vp_trade(s, row, RQ_NONE, "starting", theirs, sizeof(theirs)) < 0)
		return;
	for (;;) {
		if (run_watched(s, argv, &w) < 0) {
			rq_result_set(row, RQ_ERROR, "cannot start %s", tool);
			break;
		}
		/* the server may not listen yet: retry while it has not reported */
		if (s->server || !w.refused || w.peer_msg[0] || now_ms() + backoff >= s->deadline)
			break;
		if (peer_report(s, w.peer_msg, sizeof(w.peer_msg))) {
			w.killed_for_peer = strncmp(w.peer_msg, "exit 0", 6) != 0;
			break;
		}
		sb_release(&w.out);
		{
			struct timespec ts = { 0, (long)backoff * 1000000L };

			nanosleep(&ts, NULL);
		}
		if (backoff < 1000)
			backoff *= 2;
	}

	/* tell the other side how ours ended, unless it already knows we stopped for it */
	pt_report_init(&rep);
	perr[0] = '\0';
	if (cfg->test == T_RC_PINGPONG) {
		/* same fields the kind judges below: an error line and "rows" */
		if (pingpong_parse(w.out.buf, w.out.len, &pp, perr, sizeof(perr)) == 0) {
			snprintf(rep.error, sizeof(rep.error), "%s", pp.error);
			rep.nrows = pp.has_lat;
		}
	} else if (perftest_parse(w.out.buf, w.out.len, &rep, perr, sizeof(perr)) < 0) {
		pt_report_init(&rep);
	}
	snprintf(msg, sizeof(msg), "exit %d %s", w.exit_code,
		 rep.error[0] ? rep.error : w.timed_out ? "timed out" : "");
	if (s->oob.fd >= 0)
		oob_send(&s->oob, msg, strlen(msg), s->deadline, why, sizeof(why));

	if (w.killed_for_peer) {
		/* the other side's own row says what broke; ours says we stopped for it */
		if (s->server)
			rq_judge(row, true, "stopped: the client side ended (%s)", w.peer_msg);
		else
			rq_judge(row, false, "%s client stopped: the server side failed", tool);
	} else if (w.timed_out) {
		rq_judge(row, false, "%s (%s) did not finish before the deadline", tool,
			 s->server ? "server" : "client");
	} else if (w.exit_code != 0) {
		char how[160];

		snprintf(how, sizeof(how), "%s", w.exit_code < 0 ? "was killed" : "exited");
		rq_judge(row, false, "%s (%s) %s %d: %s", tool, s->server ? "server" : "client", how,
			 w.exit_code, rep.error[0] ? rep.error : "no error line in its output");
	} else if (s->server) {
		rq_judge(row, true, "%s server finished", tool);
	} else if (rq_judge(row, rep.nrows > 0, "cannot read %s's output: %s", tool,
			    perr[0] ? perr : "no result table")) {
		if (cfg->test == T_RC_PINGPONG) {
			rq_figure_add(row, "usec_per_iter", pp.usec_per_iter, "us");
			rq_figure_add(row, "mbit_per_sec", pp.mbit_per_sec, "Mb/s");
			rq_figure_add(row, "iterations", (double)pp.iters, "");
			vp_judge_lat(row, &(struct vp_thresholds){ .max_latency_us = cfg->max_latency_us },
				     pp.usec_per_iter, "usec/iter");
		} else {
			figures(s, i, row, cfg, &rep);
		}
	}
	if (cfg->test == T_RC_PINGPONG)
		rep.nrows = 0;	/* no rows were allocated */
	/* wait for the other side's report, if it has not come: it closes the exchange */
	if (!w.peer_msg[0] && s->oob.fd >= 0) {
		size_t n = 0;

		if (oob_recv(&s->oob, theirs, sizeof(theirs) - 1, &n, s->deadline, why, sizeof(why)) == 0) {
			theirs[n] = '\0';
			rq_log(ctx, "# the other side: %s", theirs);
		}
	}
	pt_report_release(&rep);
	sb_release(&w.out);
}

static void ptk_run(struct rq_ctx *ctx, const void *p)
{
	const struct ptk_cfg *cfg = p;
	struct vp s;

	/* perftest pairs run one after another: one TCP port per pair is enough */
	if (vp_begin(&s, ctx, cfg->server_devices) == 0)
		for (int i = 0; i < s.npairs && s.oob.fd >= 0; i++)
			run_pair(&s, i, cfg);
	vp_end(&s);
}

const struct rq_kind rq_kind_perftest = {
	.name = "perftest",
	.summary = "ib_{write,read,send}_{bw,lat} server and client, output parsed, same figures as native",
	.doc = "Runs one perftest tool as server on one side and client on the other with the same "
	       "options (-d/-i/-x resolved per side, -F, --report_gbits for bw, -u 19 for RC on rxe/siw, "
	       "whose round trip includes the host's scheduler), parses the text output "
	       "and reports bw_avg/bw_peak/msg_rate or t_min/t_typical/t_avg/t_p99/t_max. Each side's tool "
	       "runs under the case deadline and is killed when the other side fails or goes away, "
	       "so perftest's handshake deadlock cannot hang a run; the client retries while the server "
	       "is not listening yet. Records the perftest package version and the tool's own "
	       "Version: line as facts. perftest's TCP port is the pair's out-of-band port + 2. Not "
	       "adaptive: perftest runs its `iterations` or `duration` and has no stop on an interval "
	       "(the native kinds' `tolerance_pct`, docs/verbs.md).",
	.keys = ptk_keys,
	.cfg_size = sizeof(struct ptk_cfg),
	.default_targets = "hca,rxe-vm,rxe-host",
	/* bw_peak and msg_rate follow bw_avg; the ibv_*_pingpong tools' own figure */
	.key_figures = "bw_avg t_min t_typical usec_per_iter",
	.two_sided = true,
	.validate = ptk_validate,
	.check = ptk_check,
	.run = ptk_run,
};

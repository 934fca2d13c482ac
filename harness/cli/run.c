/* SPDX-License-Identifier: MIT */
/*
 * rdmaqual run: load, filter, plan, run, report.  Each case's rows go to
 * the run's journal as the case ends and the reports are rewritten
 * atomically at most once a second (exec/runreport.h), so a run killed at any
 * point leaves a valid junit.xml and results.json of what had finished.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/options.h"
#include "lab/lab.h"
#include "agent/agent.h"
#include "core/kind.h"
#include "qual/baseline.h"
#include "qual/sysroot.h"
#include "exec/progress.h"
#include "exec/journal.h"
#include "exec/par.h"
#include "exec/runreport.h"
#include "exec/sched.h"
#include "exec/statedir.h"
#include "report/table.h"
#include "vm/vm.h"

static void on_signal(int sig)
{
	rq_interrupted = sig;
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	/* No SA_RESTART: waits must see EINTR and end the run promptly. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void run_usage(FILE *fp)
{
	struct sb names = SB_INIT;

	rq_target_names(&names, ", ", NULL);
	fprintf(fp,
"usage: rdmaqual run [OPTIONS] [FILE|DIR...]\n"
"Runs the case files given, by default the shipped suite (cases/ in a checkout,\n"
"PREFIX/share/rdmaqual/cases when installed).\n"
CLI_HELP_NAME
CLI_HELP_TAG
"      --target T           force a target: %s\n", names.buf);
	sb_release(&names);
	fprintf(fp,
"      --require-target T   fail the run if auto would pick another target\n"
CLI_HELP_TIMEOUT_MUL
CLI_HELP_REPORT_DIR
"      --fail-on-skip       a skipped case fails the run\n"
"      --dry-run            print each case's target, why, and its requirements\n"
"      --peer HOST          second node for two-sided cases on hca (ssh)\n"
CLI_HELP_VM_TOPOLOGY
CLI_HELP_ACCEL
"      --kernel SPEC        guest kernel for rxe-vm: debian:SUITE, debian:PKG=VERSION,\n"
"                           or PATH with --modules DIR\n"
"      --kernel-cmdline S   words added to the rxe-vm guests' kernel command line\n"
"                           (MODULE.PARAM=V reaches that module, as with modprobe)\n"
"      --link-delay D       each rxe-vm guest delays what it sends by D (150us, 2ms; tc\n"
"                           netem on eth0): a longer wire, or a planted slowdown\n"
"      --allow-sm-takeover  let sm cases start an SM where a MASTER exists\n"
CLI_HELP_STATE_DIR
"      --baseline FILE      also judge figures against FILE (rdmaqual baseline save)\n"
"  -j, --jobs N             run up to N targets' cases at once (default: the host's\n"
"                           CPUs, or $RQ_JOBS): ibsim, sysroot: and local cases beside\n"
"                           the rxe-vm guests'; rows keep their order; 1: one at a time\n"
"      --repeat N           run the selected cases N times, round by round, on the same\n"
"                           targets: each row's figures then carry their noise for\n"
"                           compare and baseline save (rows say their round)\n"
"  -v, --verbose            print each case's log on failure\n"
"      --profile            where the time went, by target: opening it (a boot), each\n"
"                           case's placement, run and teardown, closing it (stdout and\n"
"                           the run's facts profile.TARGET)\n"
"lab runs (docs/cluster.md):\n"
"      --nodes LIST         qualify these nodes: node[01-16,20], @FILE, or slurm\n"
"      --launcher L         ssh (default), slurm (srun in the allocation) or local\n"
"      --fanout K           nodes started and units in flight at once (default 32)\n"
"      --pairs P            two-sided cases: ring (default), all, or A:B,C:D\n"
"      --drain-list FILE    write NODE REASON lines for the suspects\n"
"      --resume RUN         finish an interrupted lab run in its report dir\n");
}

/*
 * Made with mkdir, never just named: two runs in one second with one pid
 * (PID namespaces, containers) get -2, -3, ... instead of one report.
 */
static int make_run_dir(const char *report_dir, char *id, size_t idsz, char *dir, size_t dirsz)
{
	time_t t = time(NULL);
	struct tm tm;
	char base[64];
	int rc;

	gmtime_r(&t, &tm);
	snprintf(base, sizeof(base), "%04d%02d%02d-%02d%02d%02d-%d", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)getpid());
	rc = mkdir_p(report_dir, 0755);
	if (rc)
		return rc;
	for (int n = 1; n < 1000; n++) {
		if (n == 1)
			snprintf(id, idsz, "%s", base);
		else
			snprintf(id, idsz, "%s-%d", base, n);
		snprintf(dir, dirsz, "%s/%s", report_dir, id);
		if (mkdir(dir, 0755) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/*
 * The run dir, opened once right after it was made (or checked, for
 * --resume): every report and log then goes in by this fd.  A reports dir
 * that others can write lets them rename the dir and put a link in its
 * place; O_NOFOLLOW refuses the link, the owner check a dir of theirs.
 * The fd or -errno.
 */
static int open_run_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid()) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* reports/latest -> <run-id>, replaced atomically. */
static void point_latest(const char *report_dir, const char *run_id)
{
	char tmp[4096], dst[4096];

	snprintf(tmp, sizeof(tmp), "%s/.latest.%d", report_dir, (int)getpid());
	snprintf(dst, sizeof(dst), "%s/latest", report_dir);
	unlink(tmp);
	if (!symlink(run_id, tmp) && rename(tmp, dst))
		unlink(tmp);
}

static void sanitize(const char *in, char *out, size_t size)
{
	size_t j = 0;

	for (size_t i = 0; in[i] && j + 1 < size; i++) {
		char c = in[i];

		out[j++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_' ? c : '_';
	}
	out[j] = '\0';
}

/*
 * The row's log as logs/ID.log (as: another name than the row's id), its
 * path into the row.  A round of run --repeat has its own, logs/ID.rK.log
 * (not '#': the page links to it), or round 2 would replace round 1's.
 */
static void write_row_log(struct runrep *rep, const char *run_dir, struct rq_result *r,
			  const char *as)
{
	char name[256], *path;
	int rc;

	sanitize(as ? as : r->id, name, sizeof(name) - (r->repeat ? 20 : 4));
	if (r->repeat)
		snprintf(name + strlen(name), 14, ".r%u", r->repeat);
	strcat(name, ".log");
	path = xasprintf("%s/logs/%s", run_dir, name);
	/*
	 * The journal is the durable record; a log needs no fsync of its own.
	 * By name under the logs dir's fd: a resumed run's logs/ was checked
	 * once, and nothing can redirect a write after that.
	 */
	rc = rep->logs_fd < 0 ? -EBADF : write_file_replace_at(rep->logs_fd, name, r->log.buf,
								r->log.len);
	if (rc)
		runrep_write_failed(rep, path, rc);
	free(path);
	free(r->log_path);
	r->log_path = xasprintf("logs/%s", name);
}

/* How a need is written in a case file, without its argument. */
static const char *need_word(enum need_type t)
{
	switch (t) {
	case NEED_ROOT: return "root";
	case NEED_MODULE: return "module:";
	case NEED_CMD: return "cmd:";
	case NEED_LINK_LAYER: return "link_layer:";
	case NEED_MEMLOCK: return "memlock:";
	case NEED_DEVICE: return "device";
	case NEED_FILE: return "file:";
	}
	return "?";
}

static void print_dry(struct sched *s, const struct rq_case *c)
{
	char tname[256], why[512];
	bool ok = sched_choose(s, c, tname, sizeof(tname), why, sizeof(why));

	printf("%-40s %-12s %s\n", c->name, ok ? tname : "-", why);
	for (size_t i = 0; i < c->nneeds; i++)
		printf("%-40s   needs %s%s%s\n", "", need_word(c->needs[i].type),
		       c->needs[i].arg ? c->needs[i].arg : "",
			ok && rq_target_ops_find(tname) && rq_target_ops_find(tname)->in_guest ?
			" (checked in the guest)" : "");
}

/* The row whose log file was written last: a copy, since rows leave memory (spill). */
struct last_log {
	bool set;
	char *node, *case_name, *log_path;
	struct sb log;
};

struct run_sink {
	const char *run_dir;
	struct runrep *rep;
	struct sched *s;
	struct rq_results *results;
	struct rq_baseline *baseline;
	struct last_log last;
	int64_t flushed_ms;
	int64_t flush_cost_ms;		/* what the last rewrite of the reports took */
};

static void last_log_set(struct last_log *l, const struct rq_result *r)
{
	free(l->node);
	free(l->case_name);
	free(l->log_path);
	if (!l->set)
		sb_init(&l->log);
	l->node = r->node ? xstrdup(r->node) : NULL;
	l->case_name = xstrdup(r->case_name);
	l->log_path = r->log_path ? xstrdup(r->log_path) : NULL;
	l->log.len = 0;
	sb_add(&l->log, r->log.buf, r->log.len);
	l->set = true;
}

static void last_log_release(struct last_log *l)
{
	free(l->node);
	free(l->case_name);
	free(l->log_path);
	sb_release(&l->log);
	memset(l, 0, sizeof(*l));
}

/*
 * Lab runs: the rows of one node-case (a row per device and port) carry
 * one log, so they share one file, named by the case and node: one file
 * per node-case, not eight, on a rack of eight-rail nodes.
 */
static void sink_row(void *arg, struct rq_result *r)
{
	struct run_sink *rs = arg;
	const struct last_log *l = rs->last.set ? &rs->last : NULL;

	if (rs->baseline->doc)
		rq_baseline_judge(rs->baseline, r, rq_baseline_model(r));
	if (l && !r->peer_node && l->node && r->node && !strcmp(l->node, r->node) &&
	    !strcmp(l->case_name, r->case_name) && l->log.len == r->log.len &&
	    !memcmp(l->log.buf, r->log.buf, r->log.len) && l->log_path) {
		free(r->log_path);
		r->log_path = xstrdup(l->log_path);
		/* The first row of the node-case keeps the text for JUnit; this one points to it. */
		sb_release(&r->log);
	} else if (r->node && !r->peer_node) {
		/* the node-case's log: named by case and node, not by this row's port */
		char *as = xasprintf("%s[%s]", r->case_name, r->node);

		write_row_log(rs->rep, rs->run_dir, r, as);
		free(as);
	} else {
		write_row_log(rs->rep, rs->run_dir, r, NULL);
	}
	if (!l || !r->log_path || !l->log_path || strcmp(l->log_path, r->log_path))
		last_log_set(&rs->last, r);
	runrep_row(rs->rep, r);
}

/*
 * Lab runs rewrite the reports every 2 s at most, not after every case: a
 * rack's reports are large, and the journal, fsync'd per node-case, is
 * what --resume completes a killed run from.
 */
static void sink_spill(void *arg)
{
	struct run_sink *rs = arg;

	rq_results_spill(rs->results);
}

/*
 * ... and at most a fifth of the run's time goes to rewriting them: the
 * reports of 4,096 nodes take seconds to write, and rewriting them every
 * 2 s whatever that costs made the run quadratic in its rows.
 */
static void sink_flush(void *arg)
{
	struct run_sink *rs = arg;
	int64_t t0 = now_ms(), wait = rs->flush_cost_ms * 4 > 2000 ? rs->flush_cost_ms * 4 : 2000;

	rq_results_spill(rs->results);
	if (t0 - rs->flushed_ms < wait)
		return;
	runrep_facts(rs->rep, rs->s);
	runrep_flush(rs->rep, rs->results);
	rs->flushed_ms = now_ms();
	rs->flush_cost_ms = rs->flushed_ms - t0;
}

/* A plain run's rows of one case, in plan order: console, logs, journal, reports. */
struct plain_out {
	struct runrep *rep;
	const char *run_dir;
	struct rq_results *results;
	struct rq_baseline *baseline;
	struct rq_case **sel;
	size_t nsel;
	unsigned repeat;
	unsigned nbad;
};

static void plain_emit(void *arg, size_t k, struct rq_results *rows, bool in_tick)
{
	struct plain_out *po = arg;
	struct rq_results *results = po->results;
	struct runrep *rep = po->rep;
	size_t first = results->n, i = k % po->nsel;
	unsigned round = po->repeat > 1 ? (unsigned)(k / po->nsel) + 1 : 0;
	/* from inside a case's wait: no facts (asking a peer agent would nest in the wait) */
	struct sched *keep = rep->sched;

	for (size_t j = 0; j < rows->n; j++)
		rq_results_add(results, rows->v[j]);
	free(rows->v);
	rows->v = NULL;
	rows->n = 0;
	progress_hold();
	for (size_t j = first; j < results->n; j++) {
		struct rq_result *r = results->v[j];

		r->repeat = round;

		if (po->baseline->doc)
			rq_baseline_judge(po->baseline, r, rq_baseline_model(r));
		/*
		 * The rows of a case (one per link of a fabric) that carry nothing of
		 * their own share the case's log (rq_rows_stamp): one file, its text
		 * kept by the first row for JUnit, as lab runs do.  A 648-host
		 * fabric-links case is 1297 rows of one 300 KiB log: 390 MiB of logs,
		 * an 88 MB junit.xml and 500 MiB of runner when each had a copy.
		 */
		if (j > first && results->v[first]->log_path && r->log_of_first) {
			free(r->log_path);
			r->log_path = xstrdup(results->v[first]->log_path);
			sb_release(&r->log);
		} else {
			write_row_log(rep, po->run_dir, r, NULL);
		}
		runrep_row(rep, results->v[j]);
		po->nbad += results->v[j]->verdict == RQ_FAIL || results->v[j]->verdict == RQ_ERROR;
	}
	progress_release(po->nbad);
	char *unit = round ? xasprintf("%s#%u", po->sel[i]->name, round) : NULL;

	if (in_tick)
		rep->sched = NULL;
	runrep_case(rep, unit ? unit : po->sel[i]->name, results, first);
	rep->sched = keep;
	free(unit);
}

static int run_main(int argc, char **argv, const char *resume);

/*
 * --resume RUN alone: the command comes from RUN's journal, so the
 * continued run selects the same cases, nodes and pairs.
 */
int cmd_run(int argc, char **argv)
{
	const char *resume = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--resume") && i + 1 < argc)
			resume = argv[i + 1];
		else if (str_starts(argv[i], "--resume="))
			resume = argv[i] + 9;
	}
	if (!resume)
		return run_main(argc, argv, NULL);
	if (argc != (str_starts(argv[argc - 1], "--resume=") ? 2 : 3))
		return usage_error("run", "--resume RUN takes no other options: the run's own "
				   "command comes from RUN/journal.jsonl");

	int sargc, dfd;
	char **sargv, err[512], real[4096];

	/*
	 * The journal says what to run, perhaps as root: only one this user
	 * wrote, in a dir no one else can change, is obeyed (statedir.h).
	 */
	dfd = rundir_trust(resume, real, sizeof(real), err, sizeof(err));
	if (dfd < 0) {
		fprintf(stderr, "rdmaqual run: --resume refused: %s\n", err);
		return RQ_EXIT_FAIL;
	}
	close(dfd);
	if (rq_journal_argv(real, &sargc, &sargv, err, sizeof(err))) {
		fprintf(stderr, "rdmaqual run: %s\n", err);
		return RQ_EXIT_USAGE;
	}
	bool lab = false, bad = sargc < 1 || strcmp(sargv[0], "run");

	for (int i = 1; i < sargc; i++) {
		lab = lab || !strcmp(sargv[i], "--nodes") || str_starts(sargv[i], "--nodes=");
		bad = bad || str_starts(sargv[i], "--resume");
	}
	if (bad || !lab) {
		fprintf(stderr, "rdmaqual run: %s/journal.jsonl: its command is not a lab run "
			"(run ... --nodes ...); nothing to resume\n", real);
		for (int i = 0; i < sargc; i++)
			free(sargv[i]);
		free(sargv);
		return RQ_EXIT_USAGE;
	}
	/* Say what is about to run, before it runs. */
	fprintf(stderr, "rdmaqual: resuming %s:", real);
	for (int i = 0; i < sargc; i++) {
		char *a = term_safe(sargv[i]);
		bool plain = *a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					  "0123456789-_=.,/:+@[]") == strlen(a);

		/* quoted as a shell would take it back; a quote in it shows as '?' */
		for (char *q = a; !plain && *q; q++)
			*q = *q == '\'' ? '?' : *q;
		fprintf(stderr, plain ? " %s" : " '%s'", a);
		free(a);
	}
	fprintf(stderr, "\n");
	optind = 0;	/* glibc: parse the stored command from scratch */
	int ret = run_main(sargc, sargv, real);

	for (int i = 0; i < sargc; i++)
		free(sargv[i]);
	free(sargv);
	return ret;
}

static int run_main(int argc, char **argv, const char *resume)
{
	static const struct option lo[] = {
		{ "name", required_argument, NULL, 'k' },
		{ "tag", required_argument, NULL, 't' },
		{ "target", required_argument, NULL, 1 },
		{ "require-target", required_argument, NULL, 2 },
		{ "timeout-mul", required_argument, NULL, 3 },
		{ "report-dir", required_argument, NULL, 4 },
		{ "fail-on-skip", no_argument, NULL, 5 },
		{ "dry-run", no_argument, NULL, 6 },
		{ "peer", required_argument, NULL, 7 },
		{ "vm-topology", required_argument, NULL, 8 },
		{ "accel", required_argument, NULL, 9 },
		{ "kernel", required_argument, NULL, 10 },
		{ "modules", required_argument, NULL, 11 },
		{ "kernel-cmdline", required_argument, NULL, 21 },
		{ "link-delay", required_argument, NULL, 40 },
		{ "repeat", required_argument, NULL, 41 },
		{ "allow-sm-takeover", no_argument, NULL, 12 },
		{ "state-dir", required_argument, NULL, 13 },
		{ "baseline", required_argument, NULL, 14 },
		{ "nodes", required_argument, NULL, 15 },
		{ "launcher", required_argument, NULL, 16 },
		{ "fanout", required_argument, NULL, 17 },
		{ "pairs", required_argument, NULL, 18 },
		{ "drain-list", required_argument, NULL, 19 },
		{ "resume", required_argument, NULL, 20 },
		{ "profile", no_argument, NULL, 42 },
		{ "jobs", required_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct rq_run_opts o = { .target = "auto", .topology = "vm2", .accel = "auto" };
	struct cluster_opts co = { .resume = resume };
	struct cluster *cl = NULL;
	struct case_filter f = { 0 };
	const char *report_dir = "reports";
	bool fail_on_skip = false, dry = false, profile = false;
	const char *baseline_path = NULL;
	struct rq_baseline baseline = { 0 };
	long long repeat = 1, jobs = 0;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "k:t:j:vh", lo, NULL)) != -1) {
		switch (opt) {
		case 'k': filter_add_glob(&f, optarg); break;
		case 't': filter_add_tag(&f, optarg); break;
		case 1: o.target = optarg; break;
		case 2: o.require_target = optarg; break;
		case 3: {
			double m;

			/* the case files' converter; nan, inf and 1e-300 would make every deadline meaningless */
			if (parse_double(optarg, &m) || m < RQ_TIMEOUT_MUL_MIN || m > RQ_TIMEOUT_MUL_MAX)
				return usage_error("run", "--timeout-mul wants a number from %g to %g, not \"%s\"",
						   RQ_TIMEOUT_MUL_MIN, RQ_TIMEOUT_MUL_MAX, optarg);
			rq_timeout_mul = m;
			break;
		}
		case 4: report_dir = optarg; break;
		case 5: fail_on_skip = true; break;
		case 6: dry = true; break;
		case 7:
			/* A leading '-' would reach ssh as an option (-oProxyCommand=...). */
			if (!rq_ssh_host_ok(optarg))
				return usage_error("run", "--peer wants a host name (no leading '-', "
						   "no blanks or quotes), not \"%s\"", optarg);
			o.peer = optarg;
			break;
		case 8:
			if (rq_vm_topology_guests(optarg) < 0)
				return usage_error("run", "--vm-topology is vm1, vm2, ... vm8, not \"%s\"", optarg);
			o.topology = optarg;
			break;
		case 9:
			if (strcmp(optarg, "kvm") && strcmp(optarg, "tcg") && strcmp(optarg, "auto"))
				return usage_error("run", "--accel is kvm, tcg or auto, not \"%s\"", optarg);
			o.accel = optarg;
			break;
		case 10: o.kernel = optarg; break;
		case 11: o.modules = optarg; break;
		case 12: o.allow_sm_takeover = true; break;
		case 13: o.state_dir = optarg; break;
		case 14: baseline_path = optarg; break;
		case 15: co.nodes = optarg; break;
		case 16: co.launcher = optarg; break;
		case 17: {
			long long k;

			if (parse_ll(optarg, &k) || k < 1 || k > 4096)
				return usage_error("run", "--fanout wants a number in [1, 4096], not \"%s\"", optarg);
			co.fanout = (unsigned)k;
			break;
		}
		case 18: co.pairs = optarg; break;
		case 19: co.drain_list = optarg; break;
		case 20: break;		/* taken by cmd_run */
		case 21: {
			char why[200];

			if (rq_kernel_cmdline_check(optarg, why, sizeof(why)))
				return usage_error("run", "--kernel-cmdline: %s", why);
			o.kernel_cmdline = optarg;
			break;
		}
		case 40: {
			char why[200];

			if (rq_link_delay_check(optarg, why, sizeof(why)))
				return usage_error("run", "--link-delay: %s", why);
			o.link_delay = optarg;
			break;
		}
		case 41:
			if (parse_ll(optarg, &repeat) || repeat < 1 || repeat > RQ_MAX_REPEAT)
				return usage_error("run", "--repeat wants a number of rounds in [1, %d], not \"%s\"",
						   RQ_MAX_REPEAT, optarg);
			break;
		case 'j':
			if (parse_ll(optarg, &jobs) || jobs < 1 || jobs > 1024)
				return usage_error("run", "--jobs wants a number in [1, 1024], not \"%s\"", optarg);
			break;
		case 'v': o.verbose = true; break;
		case 42: profile = true; break;
		case 'h': run_usage(stdout); return 0;
		default: run_usage(stderr); return RQ_EXIT_USAGE;
		}
	}
	/* vm1's rxe talks to itself inside the guest: nothing crosses a link to delay. */
	if (o.link_delay && rq_vm_topology_guests(o.topology) < 2)
		return usage_error("run", "--link-delay needs two guests or more (--vm-topology vm2..vm8): "
				   "in %s rxe loops back inside the guest", o.topology);
	co.repeat = (unsigned)repeat;
	if (!co.nodes && (co.launcher || co.fanout || co.pairs || co.drain_list))
		return usage_error("run", "--launcher, --fanout, --pairs and --drain-list go with --nodes");
	if (co.nodes && o.peer)
		return usage_error("run", "--peer and --nodes do not mix: a peer is one of the nodes");
	if (strcmp(o.target, "auto")) {
		char base[64];
		const char *colon = strchr(o.target, ':');

		snprintf(base, sizeof(base), "%.*s", colon ? (int)(colon - o.target) : 63, o.target);
		const struct rq_target_ops *t = rq_target_ops_find(base);

		if (!t)
			return usage_error("run", "unknown target \"%s\"", o.target);
		if (t->arg && (!colon || !colon[1]))
			return usage_error("run", "%s needs %s: --target %s:%s", t->name, t->arg_what,
					   t->name, t->arg);
	}

	struct rq_suite suite = { 0 };

	ret = load_cases(argv + optind, argc - optind, &suite);
	if (ret)
		return ret;

	struct rq_case **sel = xcalloc(suite.ncases + 1, sizeof(*sel));
	size_t nsel = 0;

	size_t nopt = 0;
	const char *opt_tag = NULL;

	for (size_t i = 0; i < suite.ncases; i++) {
		const char *t;

		if (!filter_match(&f, suite.cases[i]))
			continue;
		if ((t = filter_opt_in(&f, suite.cases[i]))) {
			opt_tag = t;
			nopt++;
			continue;
		}
		sel[nsel++] = suite.cases[i];
	}
	filter_release(&f);
	if (nopt)
		fprintf(stderr, "rdmaqual run: %zu %s case%s left out (they run with -t %s)\n", nopt,
			opt_tag, nopt == 1 ? "" : "s", opt_tag);
	if (!nsel) {
		fprintf(stderr, "rdmaqual run: the filters select none of the %zu cases\n", suite.ncases);
		free(sel);
		rq_suite_release(&suite);
		return RQ_EXIT_USAGE;
	}

	o.self_exe = rq_self_exe;
	struct sched s = { .opts = &o };

	if (co.nodes) {
		char err[512];

		cl = cluster_new(&co, &o, err, sizeof(err));
		if (cl && cluster_check_cases(cl, sel, nsel, err, sizeof(err))) {
			cluster_free(cl);
			cl = NULL;
		}
		if (!cl) {
			free(sel);
			rq_suite_release(&suite);
			return usage_error("run", "%s", err);
		}
	}

	if (o.require_target) {
		for (size_t i = 0; i < nsel; i++) {
			char tn[256], why[512];

			if (sched_choose(&s, sel[i], tn, sizeof(tn), why, sizeof(why)) &&
			    strcmp(tn, o.require_target)) {
				fprintf(stderr, "rdmaqual run: %s would run on %s (%s), not on %s as required\n",
					sel[i]->name, tn, why, o.require_target);
				free(sel);
				rq_suite_release(&suite);
				return RQ_EXIT_FAIL;
			}
		}
	}
	if (dry && cl) {
		cluster_dry_run(cl, sel, nsel);
		cluster_free(cl);
		free(sel);
		rq_suite_release(&suite);
		return 0;
	}
	if (dry) {
		for (size_t i = 0; i < nsel; i++)
			print_dry(&s, sel[i]);
		free(sel);
		rq_suite_release(&suite);
		return 0;
	}

	if (baseline_path) {
		char err[600];

		if (rq_baseline_load(&baseline, baseline_path, err, sizeof(err))) {
			cluster_free(cl);
			free(sel);
			rq_suite_release(&suite);
			return usage_error("run", "--baseline: %s", err);
		}
	}
	/* Usage errors are found before the lock is taken and cleanup runs. */
	if (!strncmp(o.target, "sysroot:", 8) && !cl) {
		char why[512];

		if (!rq_target_ops_find("sysroot")->available(&o, o.target + 8, why, sizeof(why))) {
			rq_baseline_release(&baseline);
			free(sel);
			rq_suite_release(&suite);
			return usage_error("run", "--target %s: %s", o.target, why);
		}
	}
	/* Made here, so removed again if the run cannot start: nothing half-made. */
	bool made_report_dir = false;
	{
		struct stat st;
		int rc;

		made_report_dir = lstat(report_dir, &st) < 0 && errno == ENOENT;
		rc = mkdir_p(report_dir, 0755);

		if (rc || stat(report_dir, &st) || access(report_dir, W_OK | X_OK)) {
			cluster_free(cl);
			rq_baseline_release(&baseline);
			free(sel);
			rq_suite_release(&suite);
			return usage_error("run", "--report-dir %s: %s", report_dir,
					   strerror(rc ? -rc : errno));
		}
	}

	char state_dir[4096];
	/*
	 * A replay of captured trees reads files and changes nothing on this
	 * node: no node lock (another run may hold it), no cleanup of what a
	 * killed run left (that is the next real run's job), no state dir.
	 */
	bool replay = !strncmp(o.target, "sysroot:", 8);
	int lockfd = replay ? -1 : statedir_lock(o.state_dir, state_dir, sizeof(state_dir));

	char synth_by[256] = "";
	size_t synth_nodes = 0, nnodes = 0;

	if (replay && cl && (synth_nodes = cluster_synthesized(cl, &nnodes, synth_by, sizeof(synth_by)))) {
		char *by = term_safe(synth_by);

		printf("note: %zu of %zu nodes replay a synthesized node tree (made by %s), not captures of "
		       "machines\n", synth_nodes, nnodes, by);
		free(by);
	}
	if (replay && !cl) {
		/* say first what the verdicts below are of (qual/sysroot.h) */
		struct rq_tree_meta m;

		rq_sysroot_origin(o.target + 8, &m);
		if (m.origin == RQ_TREE_SYNTHESIZED) {
			char *t = term_safe(o.target + 8), *by = term_safe(m.synthesized);

			printf("note: %s is a synthesized node tree (made by %s), not a capture of a machine\n", t, by);
			free(t);
			free(by);
		}
	}
	if (replay) {
		o.state_dir = NULL;
	} else if (lockfd < 0) {
		if (made_report_dir)
			rmdir(report_dir);
		cluster_free(cl);
		rq_baseline_release(&baseline);
		free(sel);
		rq_suite_release(&suite);
		return RQ_EXIT_FAIL;
	}
	if (!replay) {
		o.state_dir = state_dir;
		/* Whatever a killed run left (VMs, daemons, settings) goes first. */
		statedir_cleanup(&o, false);
	}

	char run_id[80], run_dir[4096];
	int rc = 0, journal_err = 0;

	if (resume) {
		/* The interrupted run's own dir and id: the same report, completed. */
		static char rdir[2048];
		char *slash;

		snprintf(run_dir, sizeof(run_dir), "%s", resume);
		while ((slash = strrchr(run_dir, '/')) && !slash[1] && slash != run_dir)
			*slash = '\0';
		slash = strrchr(run_dir, '/');
		snprintf(run_id, sizeof(run_id), "%.70s", slash ? slash + 1 : run_dir);
		snprintf(rdir, sizeof(rdir), "%.*s", slash ? (int)(slash - run_dir) % 2000 : 1,
			 slash ? run_dir : ".");
		report_dir = rdir;
	} else {
		rc = make_run_dir(report_dir, run_id, sizeof(run_id), run_dir, sizeof(run_dir));
		/*
		 * Every run's journal starts with its command (exec/journal.h).
		 * A lab run cannot be resumed without it; a plain run goes on,
		 * and its exit status says the write failed.
		 */
		if (!rc && cl)
			rc = rq_journal_start(run_dir, argc, argv);
		else if (!rc)
			journal_err = rq_journal_start(run_dir, argc, argv);
	}

	int run_fd = rc ? -1 : open_run_dir(run_dir);

	if (!rc && run_fd < 0)
		rc = run_fd;
	{
		char logs[4200];
		bool made = !rc;

		snprintf(logs, sizeof(logs), "%s/logs", run_dir);
		if (rc || (mkdirat(run_fd, "logs", 0755) < 0 && errno != EEXIST && (rc = -errno))) {
			fprintf(stderr, "rdmaqual run: cannot %s %s: %s\n", made ? "create" : "open",
				made ? logs : run_dir, strerror(-rc));
			if (run_fd >= 0)
				close(run_fd);
			cluster_free(cl);
			if (lockfd >= 0)
				close(lockfd);
			rq_baseline_release(&baseline);
			free(sel);
			rq_suite_release(&suite);
			return RQ_EXIT_FAIL;
		}
	}
	o.run_dir = run_dir;
	point_latest(report_dir, run_id);
	install_signals();

	struct rq_results results = { 0 };
	struct runrep rep;

	runrep_init(&rep, run_dir, run_id, argc, argv);
	{
		char logs[4200];

		snprintf(logs, sizeof(logs), "%s/logs", run_dir);
		rep.run_fd = run_fd;
		rep.logs_fd = openat(run_fd, "logs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (rep.logs_fd < 0)
			runrep_write_failed(&rep, logs, -errno);
	}
	/* a lab run journals its units itself (cluster_journal_unit) */
	if (!cl && journal_err) {
		char *jp = xasprintf("%s/journal.jsonl", run_dir);

		runrep_write_failed(&rep, jp, journal_err);
		free(jp);
	} else if (!cl) {
		runrep_journal_open(&rep);
	}
	runrep_begin(&rep, &results);
	rep.sched = &s;
	s.tick = runrep_tick;
	s.tick_arg = &rep;
	size_t ran = 0;

	struct run_sink rsink = { run_dir, &rep, &s, &results, &baseline, { 0 }, 0, 0 };
	struct cluster_sink sink = { sink_row, sink_flush, sink_spill, &rsink };

	if (cl) {
		/*
		 * A lab run's rows go to a spool once journaled (core/spool.c),
		 * so the runner's memory grows with the nodes, not with the rows.
		 * Without one (no O_TMPFILE, no room) they stay in memory.
		 */
		rq_results_spool(&results, run_dir);
		cluster_run(cl, sel, nsel, &s, run_dir, &results, &sink);
		ran = nsel;
	}
	/*
	 * --jobs: targets' groups in workers beside the runner's (exec/par.h);
	 * one group (or --jobs 1): the loop below, case by case.
	 */
	struct par par = { .s = &s, .sel = sel, .nsel = nsel, .total = nsel * (size_t)repeat,
			   .jobs = jobs ? (unsigned)jobs : par_default_jobs(), .emit = plain_emit };
	struct plain_out po = { &rep, run_dir, &results, &baseline, sel, nsel, (unsigned)repeat, 0 };
	bool parallel = !cl && par_plan(&par) > 1;
	size_t facts0 = rep.info.nfacts;

	par.arg = &po;
	if (!cl)
		progress_start(nsel * (size_t)repeat);
	if (parallel) {
		par_run(&par);
		ran = par.ran;
	}
	/*
	 * --repeat: round by round (every case once, then again), so that a
	 * slow spell of the host spreads over the cases instead of landing on
	 * all the repeats of one.
	 */
	for (size_t k = 0; !cl && !parallel && k < nsel * (size_t)repeat && !rq_interrupted; k++, ran++) {
		struct rq_results rows = { 0 };
		size_t i = k % nsel;

		if (progress_active()) {
			char tn[256], why[512];

			progress_case(k, sel[i]->name, sched_choose(&s, sel[i], tn, sizeof(tn), why,
								    sizeof(why)) ? tn : NULL);
		}
		sched_run_case(&s, sel[i], &rows);
		plain_emit(&po, k, &rows, false);
	}
	if (!cl)
		progress_stop();
	/* the targets' facts, while they are open; the reports are written at the end */
	if (parallel)
		par_facts(&par, &rep.info, facts0);
	else
		runrep_facts(&rep, &s);
	if (synth_nodes) {
		/* the lab's trees are the nodes', not the run's sysroot: their origin is the run's */
		char nn[64];

		snprintf(nn, sizeof(nn), "%zu of %zu", synth_nodes, nnodes);
		if (!rq_run_info_fact_get(&rep.info, "sysroot"))
			rq_run_info_fact(&rep.info, "sysroot", o.target + 8);
		rq_run_info_fact(&rep.info, "sysroot.origin", "synthesized");
		rq_run_info_fact(&rep.info, "sysroot.synthesized_by", synth_by);
		rq_run_info_fact(&rep.info, "sysroot.synthesized_nodes", nn);
	}
	rep.sched = NULL;
	s.tick = NULL;
	if (rq_interrupted && !cl)
		fprintf(stderr, "rdmaqual run: stopped by signal %d; %zu of %zu cases ran\n",
			(int)rq_interrupted, ran, nsel * (size_t)repeat);
	if (rq_interrupted && cl)
		fprintf(stderr, "rdmaqual run: stopped by signal %d; finish it with: rdmaqual run "
			"--resume %s\n", (int)rq_interrupted, run_dir);
	if (cl) {
		char *html = NULL;

		rep.info.lab = cluster_report(cl, &results, &html);
		free(rep.info.html_extra);
		rep.info.html_extra = html;
	}
	/* Every node's work stops before the report is final. */
	cluster_free(cl);
	sched_close(&s);
	if (parallel)
		par_profile_merge(&par);
	par_release(&par);
	if (profile) {
		sched_profile_facts(&s, &rep.info);
		sched_profile_print(&s, stdout);
	}
	sched_profile_release(&s);
	runrep_end(&rep, &results);

	struct rq_counts cnt;

	rq_results_count(&results, &cnt);
	ret = (cnt.fail || cnt.error || rq_interrupted || (fail_on_skip && cnt.skip)) ?
	      RQ_EXIT_FAIL : RQ_EXIT_OK;
	/* A report that could not be written is not a green run (a full disk said tests="0"). */
	if (rep.write_errors) {
		fprintf(stderr, "rdmaqual run: %d report or log writes failed under %s; "
			"the reports there are incomplete\n", rep.write_errors, run_dir);
		ret = RQ_EXIT_FAIL;
	}
	runrep_release(&rep);
	last_log_release(&rsink.last);
	rq_results_release(&results);
	free(sel);
	rq_suite_release(&suite);
	rq_baseline_release(&baseline);
	if (lockfd >= 0)
		close(lockfd);
	return ret;
}

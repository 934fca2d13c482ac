/* SPDX-License-Identifier: MIT */
/*
 * rdmaqual run: its options, the cases loaded and filtered, the lab built
 * for --nodes; then one call to the run object (exec/run.h), which runs
 * them and writes the reports.  --resume takes its command from the run's
 * journal.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/options.h"
#include "lab/lab.h"
#include "agent/agent.h"
#include "core/kind.h"
#include "core/term.h"
#include "qual/baseline.h"
#include "exec/journal.h"
#include "exec/sched.h"
#include "exec/statedir.h"
#include "vm/vm.h"

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

/* What run's options say. */
struct run_args {
	struct rq_run_opts o;
	struct cluster_opts co;
	struct case_filter f;
	const char *report_dir, *baseline_path;
	bool fail_on_skip, dry, profile;
	long long repeat, jobs;
};

/* The options into a; -1 to go on, else the exit status (--help, a usage error). */
static int parse_args(int argc, char **argv, struct run_args *a)
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
	int opt;

	while ((opt = getopt_long(argc, argv, "k:t:j:vh", lo, NULL)) != -1) {
		switch (opt) {
		case 'k': filter_add_glob(&a->f, optarg); break;
		case 't': filter_add_tag(&a->f, optarg); break;
		case 1: a->o.target = optarg; break;
		case 2: a->o.require_target = optarg; break;
		case 3: {
			double m;

			/* the case files' converter; nan, inf and 1e-300 would make every deadline meaningless */
			if (parse_double(optarg, &m) || m < RQ_TIMEOUT_MUL_MIN || m > RQ_TIMEOUT_MUL_MAX)
				return usage_error("run", "--timeout-mul wants a number from %g to %g, not \"%s\"",
						   RQ_TIMEOUT_MUL_MIN, RQ_TIMEOUT_MUL_MAX, optarg);
			rq_timeout_mul = m;
			break;
		}
		case 4: a->report_dir = optarg; break;
		case 5: a->fail_on_skip = true; break;
		case 6: a->dry = true; break;
		case 7:
			/* A leading '-' would reach ssh as an option (-oProxyCommand=...). */
			if (!rq_ssh_host_ok(optarg))
				return usage_error("run", "--peer wants a host name (no leading '-', "
						   "no blanks or quotes), not \"%s\"", optarg);
			a->o.peer = optarg;
			break;
		case 8:
			if (rq_vm_topology_guests(optarg) < 0)
				return usage_error("run", "--vm-topology is vm1, vm2, ... vm8, not \"%s\"", optarg);
			a->o.topology = optarg;
			break;
		case 9:
			if (strcmp(optarg, "kvm") && strcmp(optarg, "tcg") && strcmp(optarg, "auto"))
				return usage_error("run", "--accel is kvm, tcg or auto, not \"%s\"", optarg);
			a->o.accel = optarg;
			break;
		case 10: a->o.kernel = optarg; break;
		case 11: a->o.modules = optarg; break;
		case 12: a->o.allow_sm_takeover = true; break;
		case 13: a->o.state_dir = optarg; break;
		case 14: a->baseline_path = optarg; break;
		case 15: a->co.nodes = optarg; break;
		case 16: a->co.launcher = optarg; break;
		case 17: {
			long long k;

			if (parse_ll(optarg, &k) || k < 1 || k > 4096)
				return usage_error("run", "--fanout wants a number in [1, 4096], not \"%s\"", optarg);
			a->co.fanout = (unsigned)k;
			break;
		}
		case 18: a->co.pairs = optarg; break;
		case 19: a->co.drain_list = optarg; break;
		case 20: break;		/* taken by cmd_run */
		case 21: {
			char why[200];

			if (rq_kernel_cmdline_check(optarg, why, sizeof(why)))
				return usage_error("run", "--kernel-cmdline: %s", why);
			a->o.kernel_cmdline = optarg;
			break;
		}
		case 40: {
			char why[200];

			if (rq_link_delay_check(optarg, why, sizeof(why)))
				return usage_error("run", "--link-delay: %s", why);
			a->o.link_delay = optarg;
			break;
		}
		case 41:
			if (parse_ll(optarg, &a->repeat) || a->repeat < 1 || a->repeat > RQ_MAX_REPEAT)
				return usage_error("run", "--repeat wants a number of rounds in [1, %d], not \"%s\"",
						   RQ_MAX_REPEAT, optarg);
			break;
		case 'j':
			if (parse_ll(optarg, &a->jobs) || a->jobs < 1 || a->jobs > 1024)
				return usage_error("run", "--jobs wants a number in [1, 1024], not \"%s\"", optarg);
			break;
		case 'v': a->o.verbose = true; break;
		case 42: a->profile = true; break;
		case 'h': run_usage(stdout); return RQ_EXIT_OK;
		default: run_usage(stderr); return RQ_EXIT_USAGE;
		}
	}
	/* vm1's rxe talks to itself inside the guest: nothing crosses a link to delay. */
	if (a->o.link_delay && rq_vm_topology_guests(a->o.topology) < 2)
		return usage_error("run", "--link-delay needs two guests or more (--vm-topology vm2..vm8): "
				   "in %s rxe loops back inside the guest", a->o.topology);
	a->co.repeat = (unsigned)a->repeat;
	if (!a->co.nodes && (a->co.launcher || a->co.fanout || a->co.pairs || a->co.drain_list))
		return usage_error("run", "--launcher, --fanout, --pairs and --drain-list go with --nodes");
	if (a->co.nodes && a->o.peer)
		return usage_error("run", "--peer and --nodes do not mix: a peer is one of the nodes");
	if (strcmp(a->o.target, "auto")) {
		char base[64];
		const char *colon = strchr(a->o.target, ':');

		snprintf(base, sizeof(base), "%.*s", colon ? (int)(colon - a->o.target) : 63, a->o.target);
		const struct rq_target_ops *t = rq_target_ops_find(base);

		if (!t)
			return usage_error("run", "unknown target \"%s\"", a->o.target);
		if (t->arg && (!colon || !colon[1]))
			return usage_error("run", "%s needs %s: --target %s:%s", t->name, t->arg_what,
					   t->name, t->arg);
	}
	return -1;
}

/*
 * The cases the filters select, in the suite's order, into *selp; 0, or
 * RQ_EXIT_USAGE when none is (and *selp is NULL).
 */
static int select_cases(struct rq_suite *suite, struct case_filter *f, struct rq_case ***selp,
			size_t *nselp)
{
	struct rq_case **sel = xcalloc(suite->ncases + 1, sizeof(*sel));
	size_t nsel = 0, nopt = 0;
	const char *opt_tag = NULL;

	for (size_t i = 0; i < suite->ncases; i++) {
		const char *t;

		if (!filter_match(f, suite->cases[i]))
			continue;
		if ((t = filter_opt_in(f, suite->cases[i]))) {
			opt_tag = t;
			nopt++;
			continue;
		}
		sel[nsel++] = suite->cases[i];
	}
	if (nopt)
		fprintf(stderr, "rdmaqual run: %zu %s case%s left out (they run with -t %s)\n", nopt,
			opt_tag, nopt == 1 ? "" : "s", opt_tag);
	if (!nsel) {
		fprintf(stderr, "rdmaqual run: the filters select none of the %zu cases\n", suite->ncases);
		free(sel);
		sel = NULL;
	}
	*selp = sel;
	*nselp = nsel;
	return nsel ? 0 : RQ_EXIT_USAGE;
}

/* --require-target: 0, or RQ_EXIT_FAIL naming the first case auto would put elsewhere. */
static int check_required_target(const struct rq_run_opts *o, struct rq_case *const *sel, size_t nsel)
{
	struct sched s = { .opts = o };

	for (size_t i = 0; o->require_target && i < nsel; i++) {
		char tn[256], why[512];

		if (sched_choose(&s, sel[i], tn, sizeof(tn), why, sizeof(why)) &&
		    strcmp(tn, o->require_target)) {
			fprintf(stderr, "rdmaqual run: %s would run on %s (%s), not on %s as required\n",
				sel[i]->name, tn, why, o->require_target);
			return RQ_EXIT_FAIL;
		}
	}
	return 0;
}

/*
 * The reports dir, made here if it is missing (*made: removed again if the
 * run cannot start, so nothing is left half-made); 0 or -errno.
 */
static int prepare_report_dir(const char *dir, bool *made)
{
	struct stat st;
	int rc;

	*made = lstat(dir, &st) < 0 && errno == ENOENT;
	rc = mkdir_p(dir, 0755);
	if (rc)
		return rc;
	if (stat(dir, &st) || access(dir, W_OK | X_OK))
		return -errno;
	return 0;
}

/*
 * Options, cases, the lab for --nodes, and every usage error before
 * anything is locked or started; then the run object (exec/run.h).
 */
static int run_main(int argc, char **argv, const char *resume)
{
	struct run_args a = { .o = { .target = "auto", .topology = "vm2", .accel = "auto" },
			      .co = { .resume = resume }, .report_dir = "reports", .repeat = 1 };
	struct rq_baseline baseline = { 0 };
	struct rq_suite suite = { 0 };
	struct rq_case **sel = NULL;
	struct cluster *cl = NULL;
	size_t nsel = 0;
	char err[600];
	int ret = parse_args(argc, argv, &a);

	if (ret >= 0)
		goto out;
	ret = load_cases(argv + optind, argc - optind, &suite);
	if (ret || (ret = select_cases(&suite, &a.f, &sel, &nsel)))
		goto out;
	a.o.self_exe = rq_self_exe;
	if (a.co.nodes) {
		cl = cluster_new(&a.co, &a.o, err, sizeof(err));
		if (cl && cluster_check_cases(cl, sel, nsel, err, sizeof(err))) {
			cluster_free(cl);
			cl = NULL;
		}
		if (!cl) {
			ret = usage_error("run", "%s", err);
			goto out;
		}
	}
	if ((ret = check_required_target(&a.o, sel, nsel)))
		goto out;
	if (a.dry) {
		struct sched s = { .opts = &a.o };

		if (cl)
			cluster_dry_run(cl, sel, nsel);
		for (size_t i = 0; !cl && i < nsel; i++)
			print_dry(&s, sel[i]);
		ret = RQ_EXIT_OK;
		goto out;
	}
	if (a.baseline_path && rq_baseline_load(&baseline, a.baseline_path, err, sizeof(err))) {
		ret = usage_error("run", "--baseline: %s", err);
		goto out;
	}
	/* Usage errors are found before the lock is taken and cleanup runs. */
	if (!strncmp(a.o.target, "sysroot:", 8) && !cl &&
	    !rq_target_ops_find("sysroot")->available(&a.o, a.o.target + 8, err, sizeof(err))) {
		ret = usage_error("run", "--target %s: %s", a.o.target, err);
		goto out;
	}

	struct rq_run run = {
		.o = &a.o, .sel = sel, .nsel = nsel, .repeat = (unsigned)a.repeat,
		.jobs = (unsigned)a.jobs, .report_dir = a.report_dir, .resume = resume,
		.baseline = &baseline, .fail_on_skip = a.fail_on_skip, .profile = a.profile,
		.argc = argc, .argv = argv,
	};
	struct rq_run_nodes lab;
	int rc = prepare_report_dir(a.report_dir, &run.made_report_dir);

	if (rc) {
		ret = usage_error("run", "--report-dir %s: %s", a.report_dir, strerror(-rc));
		goto out;
	}
	if (cl) {
		/* the run takes the lab: it stops and frees it */
		cluster_executor(cl, &lab);
		run.nodes = &lab;
		cl = NULL;
	}
	ret = rq_run_suite(&run);
out:
	cluster_free(cl);
	filter_release(&a.f);
	free(sel);
	rq_suite_release(&suite);
	rq_baseline_release(&baseline);
	return ret;
}

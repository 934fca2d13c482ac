// SPDX-License-Identifier: MIT
/*
 * rdmaqual qualify --before SPEC --after SPEC [CASES...]: the same cases on
 * two guest kernels (rxe-vm), compared (docs/upgrade.md).
 *
 * Each side is an ordinary `rdmaqual run --target rxe-vm --kernel SPEC`,
 * started as a child of this process (argv, never a shell) with its report
 * directory under the qualification's: DIR/<qid>/before/<run-id>/ and
 * DIR/<qid>/after/<run-id>/, so every run can be read, compared and
 * re-reported on its own.  With --repeat N the sides alternate (before,
 * after, before, ...), so a host that gets busier half-way slows both
 * sides alike, and each side's runs are folded into one document of
 * medians (src/qual/repeat.c) before compare.c judges them.
 *
 * Writes DIR/<qid>/qualify.json (rdmaqual-qualify/1), junit.xml (one
 * testcase per row: a regression is a failure) and report.html.
 * Exit 0: no regression, 1: regression(s), 2: usage, or a side that
 * produced no report.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "cli/cli.h"
#include "cli/options.h"
#include "report/compare.h"
#include "core/json_text.h"
#include "core/proc.h"
#include "core/run_doc.h"
#include "core/target.h"
#include "core/term.h"
#include "core/util.h"
#include "qual/compare.h"
#include "qual/repeat.h"
#include "report/html.h"
#include "report/report.h"
#include "report/table.h"
#include "vm/vm.h"
#include "qual/stats.h"

#define QUALIFY_SCHEMA "rdmaqual-qualify/1"
#define MAX_REPEAT 20
/* --repeat auto: a noise estimate needs 3 a side; 7 lets the rank test reach 95 % over ~20 figures. */
#define AUTO_START 3
#define AUTO_MAX 7
/* One side's run: boots, a suite; far beyond any sane suite on TCG. */
#define RUN_DEADLINE_MS (4 * 3600 * 1000LL)

static void qualify_usage(FILE *fp)
{
	fprintf(fp,
"usage: rdmaqual qualify --before SPEC --after SPEC [OPTIONS] [FILE|DIR...]\n"
"Runs the same cases on two rxe-vm guest kernels and compares the runs.\n"
"SPEC: debian:SUITE (debian:bookworm, debian:bookworm-backports),\n"
"      debian:PACKAGE=VERSION, or PATH:MODULES_DIR (a kernel image and its\n"
"      lib/modules/VER directory).\n"
"  -n, --repeat N|auto      run each side N times, alternating, and judge each figure's\n"
"                           change against the noise of the repeats (default auto: %d a\n"
"                           side, then more while a figure could still be decided)\n"
"      --max-repeat M       the most runs a side for --repeat auto (default %d, at most %d)\n"
"      --confidence C       of the comparison's verdicts, 0.5 < C < 0.999 (default 0.95)\n"
"      --strict             an inconclusive figure fails the qualification\n"
"      --absolute           judge each figure's median change against the tolerance alone\n"
"      --all-figures        judge every figure with a direction, not only each kind's key\n"
"                           figures (lat_min, lat_median; bw_SIZE; ...: rdmaqual help KIND)\n"
"      --before-cmdline S   words added to the before guests' kernel command line\n"
"      --after-cmdline S    ... the after guests' (qualify a cmdline or module parameter:\n"
"                           the same SPEC on both sides, rdma_rxe.PARAM=V or a sysctl)\n"
"      --before-link-delay D  each before guest delays what it sends by D (150us, 2ms)\n"
"      --after-link-delay D   ... each after guest (a longer wire; a planted slowdown)\n"
CLI_HELP_NAME
CLI_HELP_TAG
"  -T, --tolerance [GLOB=]PCT  as for compare (default %g%%)\n"
"      --allow-new-skips    PASS -> SKIP is reported but is not a regression\n"
"      --report-dir DIR     write under DIR/<qualify-id>/ (default reports)\n"
CLI_HELP_TIMEOUT_MUL
CLI_HELP_VM_TOPOLOGY
CLI_HELP_ACCEL
CLI_HELP_STATE_DIR
"Exit status: 0 no regression, 1 regression(s), 2 usage or a side without a report.\n",
		AUTO_START, AUTO_MAX, MAX_REPEAT, RQ_COMPARE_DEFAULT_TOL);
}

static void on_signal(int sig)
{
	rq_interrupted = sig;
}

struct side {
	const char *label;		/* "before" | "after" */
	const char *spec;
	const char *cmdline;		/* --before-cmdline / --after-cmdline, or NULL */
	const char *link_delay;		/* --before-link-delay / --after-link-delay, or NULL */
	char dir[PATH_MAX];		/* <qdir>/<label> */
	char **runs;			/* run dirs, one per repeat */
	size_t nruns;
	struct rq_run_doc **docs;
	size_t ndocs;			/* docs loaded so far */
	struct rq_run_doc merged;	/* of the docs, when nruns > 1 */
	const struct rq_run_doc *doc;	/* the one judged: docs[0] or merged */
	char doc_path[PATH_MAX];
};

/* "PATH:DIR" -> --kernel PATH --modules DIR; a Debian spec as it is. */
static void add_kernel_args(const char **argv, int *n, const char *spec, char *kbuf, size_t ksz)
{
	const char *colon = strchr(spec, ':');

	if (!strncmp(spec, "debian:", 7) || !colon) {
		argv[(*n)++] = "--kernel";
		argv[(*n)++] = spec;
		return;
	}
	snprintf(kbuf, ksz, "%.*s", (int)(colon - spec), spec);
	argv[(*n)++] = "--kernel";
	argv[(*n)++] = kbuf;
	argv[(*n)++] = "--modules";
	argv[(*n)++] = colon + 1;
}

/*
 * Fetch and unpack both kernels before booting anything, so a spec that
 * names no package fails in seconds, with apt's reason, and not as a run
 * of ERROR rows.  The runs find the images cached.
 */
static int prepare_side(const struct side *s)
{
	struct rq_run_opts o = { .self_exe = rq_self_exe };
	struct rq_vm_image img;
	char kbuf[PATH_MAX], err[1024];
	const char *colon = strchr(s->spec, ':');

	if (!strncmp(s->spec, "debian:", 7)) {
		o.kernel = s->spec;
	} else {
		snprintf(kbuf, sizeof(kbuf), "%.*s", (int)(colon - s->spec), s->spec);
		o.kernel = kbuf;
		o.modules = colon + 1;
	}
	if (rq_vm_image_prepare(&o, &img, err, sizeof(err)) < 0) {
		fprintf(stderr, "rdmaqual qualify: --%s %s: %s\n", s->label, s->spec, err);
		return -1;
	}
	printf("%-6s  %s: guest kernel %s", s->label, s->spec, img.kver);
	if (*img.kpkg)
		printf(", %s %s from %s (%s)", img.kpkg, img.kpkgver, img.korigin, img.kcache);
	printf("\n");
	fflush(stdout);
	return 0;
}

/* Run one side once; its run dir into s->runs.  0, or -1 after a message. */
static int run_side(struct side *s, char **base, int nbase, char **cases, int ncases)
{
	const char **argv = xcalloc((size_t)(nbase + ncases + 20), sizeof(*argv));
	char kbuf[PATH_MAX], latest[PATH_MAX + 8], link[256];
	int n = 0, status = 0;
	ssize_t ll;

	argv[n++] = rq_self_exe;
	argv[n++] = "run";
	argv[n++] = "--target";
	argv[n++] = "rxe-vm";
	argv[n++] = "--report-dir";
	argv[n++] = s->dir;
	add_kernel_args(argv, &n, s->spec, kbuf, sizeof(kbuf));
	if (s->cmdline) {
		argv[n++] = "--kernel-cmdline";
		argv[n++] = s->cmdline;
	}
	if (s->link_delay) {
		argv[n++] = "--link-delay";
		argv[n++] = s->link_delay;
	}
	for (int i = 0; i < nbase; i++)
		argv[n++] = base[i];
	for (int i = 0; i < ncases; i++)
		argv[n++] = cases[i];
	argv[n] = NULL;

	printf("== %s run %zu: %s%s%s%s%s\n", s->label, s->nruns + 1, s->spec, s->cmdline ? " + cmdline " : "",
	       s->cmdline ? s->cmdline : "", s->link_delay ? " + link delay " : "",
	       s->link_delay ? s->link_delay : "");
	fflush(stdout);
	struct spawn_opts so = { .argv = argv, .stdin_fd = -1, .stdout_fd = 1, .stderr_fd = 2 };
	pid_t pid = proc_spawn(&so);

	free(argv);
	if (pid < 0) {
		fprintf(stderr, "rdmaqual qualify: cannot start %s run: %s\n", rq_self_exe, strerror((int)-pid));
		return -1;
	}
	int64_t deadline = now_ms() + scaled_ms(RUN_DEADLINE_MS);
	int done = 0;

	while (!done) {
		int64_t until = now_ms() + 250;

		done = proc_wait_deadline(pid, until < deadline ? until : deadline, &status);
		if (done < 0)
			break;
		if (!done && (rq_interrupted || now_ms() >= deadline)) {
			/* SIGTERM first: the run stops its guests and writes its reports. */
			fprintf(stderr, "rdmaqual qualify: %s; stopping the %s run\n",
				rq_interrupted ? "interrupted" : "the run passed its deadline", s->label);
			proc_kill_group(pid, 15000);
			done = -1;
		}
	}
	if (done > 0 && WIFEXITED(status) && WEXITSTATUS(status) > 1) {
		fprintf(stderr, "rdmaqual qualify: the %s run exited %d (see above)\n", s->label,
			WEXITSTATUS(status));
		return -1;
	}
	snprintf(latest, sizeof(latest), "%s/latest", s->dir);
	ll = readlink(latest, link, sizeof(link) - 1);
	if (ll <= 0) {
		fprintf(stderr, "rdmaqual qualify: the %s run left no report under %s\n", s->label, s->dir);
		return -1;
	}
	link[ll] = '\0';
	/* latest names this run's id: a fresh dir each time (the id holds the pid). */
	for (size_t i = 0; i < s->nruns; i++)
		if (!strcmp(strrchr(s->runs[i], '/') + 1, link)) {
			fprintf(stderr, "rdmaqual qualify: the %s run left no new report\n", s->label);
			return -1;
		}
	s->runs = xrealloc(s->runs, (s->nruns + 1) * sizeof(*s->runs));
	s->runs[s->nruns++] = xasprintf("%s/%s", s->dir, link);
	return done > 0 ? 0 : -1;
}

/* Load the documents of runs not loaded yet. */
static int side_load_docs(struct side *s)
{
	char path[PATH_MAX];

	s->docs = xrealloc(s->docs, (s->nruns + 1) * sizeof(*s->docs));
	for (size_t i = s->ndocs; i < s->nruns; i++) {
		/* whole rows: the page shows their logs */
		s->docs[i] = xcalloc(1, sizeof(*s->docs[i]));
		cmp_doc_init(s->docs[i], 0);
		if (compare_load_doc(s->runs[i], path, sizeof(path), s->docs[i])) {
			free(s->docs[i]);
			return -1;
		}
		s->ndocs = i + 1;
	}
	return 0;
}

/* Load the side's documents and fold them into s->doc. */
static int side_doc(struct side *s, const char *qdir)
{
	char err[512];

	if (side_load_docs(s))
		return -1;
	rq_run_doc_release(&s->merged);
	s->doc = NULL;
	if (s->nruns == 1) {
		s->doc = s->docs[0];
		snprintf(s->doc_path, sizeof(s->doc_path), "%s/results.json", s->runs[0]);
		return 0;
	}
	if (rq_repeat_merge_docs((const struct rq_run_doc *const *)s->docs, s->nruns, &s->merged, err,
				 sizeof(err))) {
		fprintf(stderr, "rdmaqual qualify: %s: %s\n", s->label, err);
		return -1;
	}
	s->doc = &s->merged;
	snprintf(s->doc_path, sizeof(s->doc_path), "%s/%s-median.json", qdir, s->label);
	json_t *doc = rq_run_doc_to_json(s->doc);
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));

	json_decref(doc);

	if (!text || write_file_atomic(s->doc_path, text, strlen(text)))
		fprintf(stderr, "rdmaqual qualify: cannot write %s\n", s->doc_path);
	free(text);
	return 0;
}

/*
 * A side whose every row is an ERROR (its guests never came up, its kernel
 * could not be had) judges nothing: comparing ERROR with ERROR would find
 * "no regression".  That is a failed qualification, not a passed one.
 */
int qualify_side_usable(const char *label, const struct rq_run_doc *doc, FILE *err)
{
	const char *first = NULL;
	size_t nerr = 0, n = doc->n;

	for (size_t i = 0; i < n; i++) {
		if (doc->rows[i]->verdict != RQ_ERROR)
			continue;
		nerr++;
		if (!first)
			first = doc->rows[i]->reason;
	}
	if (n && nerr < n)
		return 0;
	/* a guest's reason: inert on the terminal */
	char *why = term_safe(first);

	fprintf(err, "rdmaqual qualify: every row of the %s side is an ERROR, nothing to compare%s%s\n",
		label, first ? "; the first: " : "", why);
	free(why);
	return -1;
}

static int side_usable(const struct side *s)
{
	return qualify_side_usable(s->label, s->doc, stderr);
}

static const char *fact(const struct rq_run_doc *doc, const char *key)
{
	const char *v = rq_run_doc_fact(doc, key);

	return v ? v : "?";
}

/* The side's kernel facts: the guest's words, so inert on the terminal. */
static void print_side_facts(const char *label, const struct side *s)
{
	static const char *const keys[] = { "vm.guest_kernel", "vm.kernel_package", "vm.kernel_package_version",
					    "vm.kernel_origin", "vm.kernel_cache" };
	char *v[5];

	for (size_t i = 0; i < 5; i++)
		v[i] = term_safe(fact(s->doc, keys[i]));
	printf("%s  %s: guest kernel %s, package %s %s from %s (%s)\n", label, s->spec, v[0], v[1], v[2], v[3],
	       v[4]);
	for (size_t i = 0; i < 5; i++)
		free(v[i]);
}

/*
 * The rows of both sides by id: before's order, then after's new ones
 * (*n of them; the strings are the documents').
 */
static const char **all_ids(const struct rq_run_doc *b, const struct rq_run_doc *a, size_t *n)
{
	const char **ids = xcalloc(b->n + a->n + 1, sizeof(*ids));

	*n = 0;
	for (size_t i = 0; i < b->n; i++)
		ids[(*n)++] = b->rows[i]->id;
	for (size_t i = 0; i < a->n; i++)
		if (!rq_run_doc_find(b, a->rows[i]->id))
			ids[(*n)++] = a->rows[i]->id;
	return ids;
}

/* A row's verdict for the tables, "-" where the side has no such row. */
static const char *verdict_of(const struct rq_result *r)
{
	return r ? rq_verdict_name(r->verdict) : "-";
}

/* Regression findings about one row, joined ("bw_64KiB -23.1% (tol 5%)"). */
static char *row_regressions(const struct cmp_report *rep, const char *id)
{
	struct sb sb = SB_INIT;

	for (size_t i = 0; i < rep->n; i++) {
		const struct cmp_finding *f = &rep->v[i];

		if (!f->regression || !f->row || strcmp(f->row, id))
			continue;
		if (sb.len)
			sb_adds(&sb, "; ");
		if (f->name && isfinite(f->change_pct))
			sb_addf(&sb, "%s %+.1f%% (tolerance %g%%)", f->name, f->change_pct, f->tol_pct);
		else if (f->name)
			sb_addf(&sb, "%s: %s", f->name, f->msg ? f->msg : cmp_type_name(f->type));
		else
			sb_addf(&sb, "%s: %s -> %s%s%s", cmp_type_name(f->type), f->before ? f->before : "(none)",
				f->after ? f->after : "(none)", f->msg ? ": " : "", f->msg ? f->msg : "");
	}
	if (!sb.len) {
		sb_release(&sb);
		return NULL;
	}
	return sb.buf;
}

static void print_side_by_side(FILE *fp, const struct rq_run_doc *b, const struct rq_run_doc *a,
			       const struct cmp_report *rep)
{
	struct table t = { .cols = 4 };
	size_t n;
	const char **ids = all_ids(b, a, &n);

	table_cell(&t, "ROW");
	table_cell(&t, "BEFORE");
	table_cell(&t, "AFTER");
	table_cell(&t, "REGRESSION");
	for (size_t i = 0; i < n; i++) {
		char *why = row_regressions(rep, ids[i]);

		table_cell(&t, "%s", ids[i]);
		table_cell(&t, "%s", verdict_of(rq_run_doc_find(b, ids[i])));
		table_cell(&t, "%s", verdict_of(rq_run_doc_find(a, ids[i])));
		table_cell(&t, "%s", why ? why : "");
		free(why);
	}
	fputs("\nper row, before and after\n", fp);
	table_print(&t, fp);
	free(ids);
}

/* A number as the table has always shown it: one that is not there (null) reads 0. */
static double num(double v)
{
	return isnan(v) ? 0 : v;
}

/* Medians with their spread, for figures that have one (--repeat). */
static void print_spread(FILE *fp, const struct rq_run_doc *b, const struct rq_run_doc *a)
{
	struct table t = { .cols = 5 };

	for (size_t i = 0; i < b->n; i++) {
		const struct rq_result *r = b->rows[i];
		const char *id = r->id;
		const struct rq_result *ra = rq_run_doc_find(a, id);

		for (size_t j = 0; j < r->nfigs; j++) {
			const struct rq_figure *f = &r->figs[j], *fa = NULL;
			const struct rq_spread *sp = f->spread, *spa;
			const char *name = f->name, *unit = f->unit;

			if (!sp || !*unit)
				continue;
			/* the after row's last figure of the name, as it always was */
			for (size_t k = 0; ra && k < ra->nfigs; k++)
				if (!strcmp(ra->figs[k].name, name))
					fa = &ra->figs[k];
			spa = fa ? fa->spread : NULL;
			if (!t.n) {
				table_cell(&t, "ROW");
				table_cell(&t, "FIGURE");
				table_cell(&t, "BEFORE median [min..max]");
				table_cell(&t, "AFTER median [min..max]");
				table_cell(&t, "UNIT");
			}
			table_cell(&t, "%s", id);
			table_cell(&t, "%s", name);
			table_cell(&t, "%.4g [%.4g..%.4g] n=%d", num(f->value), num(sp->min), num(sp->max),
				   (int)sp->n);
			if (spa)
				table_cell(&t, "%.4g [%.4g..%.4g] n=%d", num(fa->value), num(spa->min), num(spa->max),
					   (int)spa->n);
			else
				table_cell(&t, "-");
			table_cell(&t, "%s", unit);
		}
	}
	if (t.n) {
		fputs("\nmedians over the repeats, with their spread\n", fp);
		table_print(&t, fp);
	}
}

/*
 * junit.xml through the runs' own JUnit writer (report/junit.c), so that a
 * CI reads qualify's file as it reads a run's: a testcase per row of either
 * side, in suites by case file, a <failure> where the comparison found a
 * regression about the row (its reason names the figures or verdicts), both
 * sides' verdicts in its output, and each side's kernel as properties.
 */
static int write_junit(const char *path, const struct rq_run_doc *b, const struct rq_run_doc *a,
		       const struct cmp_report *rep, double secs)
{
	static const char *const keys[] = { "vm.guest_kernel", "vm.kernel_package_version", "vm.kernel_origin" };
	size_t n;
	const char **ids = all_ids(b, a, &n);
	struct rq_run_info ri;
	struct rq_results rs = { 0 };
	struct sb x = SB_INIT;
	char key[64];
	int rc;

	rq_run_info_init(&ri, RQ_VERSION, 0, NULL);
	rq_run_info_finish(&ri);	/* a finished run: the XML gives its time, not the time so far */
	ri.duration_s = secs;
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
		snprintf(key, sizeof(key), "before.%s", keys[k]);
		rq_run_info_fact(&ri, key, fact(b, keys[k]));
		snprintf(key, sizeof(key), "after.%s", keys[k]);
		rq_run_info_fact(&ri, key, fact(a, keys[k]));
	}
	for (size_t i = 0; i < n; i++) {
		const struct rq_result *rb = rq_run_doc_find(b, ids[i]), *ra = rq_run_doc_find(a, ids[i]);
		const struct rq_result *of = ra ? ra : rb;
		char *why = row_regressions(rep, ids[i]);
		struct rq_result *r = rq_result_new(of->case_name ? of->case_name : ids[i], NULL, 0);

		free(r->id);
		r->id = xstrdup(ids[i]);
		r->file = of->file ? xstrdup(of->file) : NULL;
		r->duration_s = ra ? ra->duration_s : 0.0;
		if (why)
			rq_result_set(r, RQ_FAIL, "regression: %s", why);
		else
			rq_result_set(r, RQ_PASS, "no regression");
		sb_addf(&r->log, "before: %s; after: %s\n", verdict_of(rb), verdict_of(ra));
		rq_results_add(&rs, r);
		free(why);
	}
	rq_junit_render(&x, &ri, &rs);
	rc = write_file_atomic(path, x.buf, x.len);
	sb_release(&x);
	rq_results_release(&rs);
	rq_run_info_release(&ri);
	free(ids);
	return rc;
}

static json_t *side_json(const struct side *s)
{
	json_t *runs = json_array(), *j;

	for (size_t i = 0; i < s->nruns; i++)
		json_array_append_new(runs, rq_json_text(s->runs[i]));
	j = json_pack("{s:o, s:o, s:o, s:s, s:s, s:s, s:s, s:s}", "spec", rq_json_text(s->spec),
			 "runs", runs, "judged", rq_json_text(s->doc_path),
			 "guest_kernel", fact(s->doc, "vm.guest_kernel"),
			 "kernel_package", fact(s->doc, "vm.kernel_package"),
			 "kernel_package_version", fact(s->doc, "vm.kernel_package_version"),
			 "kernel_origin", fact(s->doc, "vm.kernel_origin"),
			 "kernel_cache", fact(s->doc, "vm.kernel_cache"));
	json_object_set_new(j, "kernel_cmdline", rq_json_text(s->cmdline));
	json_object_set_new(j, "link_delay", rq_json_text(s->link_delay));
	return j;
}

static void side_release(struct side *s)
{
	for (size_t i = 0; i < s->nruns; i++)
		free(s->runs[i]);
	for (size_t i = 0; i < s->ndocs; i++) {
		rq_run_doc_release(s->docs[i]);
		free(s->docs[i]);
	}
	free(s->runs);
	free(s->docs);
	rq_run_doc_release(&s->merged);
}

static bool any_unsure;

/*
 * --repeat auto, after a round: judge what the runs so far say.  Another
 * round is worth it while a judged figure is inconclusive and, at the rate
 * its interval narrows (1/sqrt(n)), would be decided within the cap.
 * 1: run another pair; 0: stop; -1: a side's documents are unreadable.
 */
static int worth_another(struct side *b, struct side *a, const struct cmp_opts *co, int cap)
{
	struct cmp_report rep;
	struct rq_run_doc mb, ma;
	char err[512];
	int more = 0;

	if (side_load_docs(b) || side_load_docs(a))
		return -1;
	rq_run_doc_init(&ma);
	if (rq_repeat_merge_docs((const struct rq_run_doc *const *)b->docs, b->ndocs, &mb, err, sizeof(err)) ||
	    rq_repeat_merge_docs((const struct rq_run_doc *const *)a->docs, a->ndocs, &ma, err, sizeof(err)) ||
	    cmp_compare_docs(&mb, &ma, co, &rep, err, sizeof(err))) {
		fprintf(stderr, "rdmaqual qualify: %s\n", err);
		rq_run_doc_release(&mb);
		rq_run_doc_release(&ma);
		return -1;
	}
	any_unsure = rep.count[CMP_FIG_UNSURE] > 0;
	for (size_t i = 0; i < rep.n; i++) {
		const struct cmp_finding *f = &rep.v[i];

		if (f->type != CMP_FIG_UNSURE || !f->decide_n)
			continue;
		if (f->decide_n <= (unsigned)cap) {
			char *row = term_safe(f->row), *name = term_safe(f->name);

			printf("== --repeat auto: %s %s %+.1f%% \u00b1%.0f%% at n=%zu, likely decided by n=%u: "
			       "another round\n", row, name, f->change_pct, f->half_pct, f->na, f->decide_n);
			free(row);
			free(name);
			more = 1;
			break;
		}
	}
	fflush(stdout);
	cmp_report_release(&rep);
	rq_run_doc_release(&mb);
	rq_run_doc_release(&ma);
	return more;
}

int cmd_qualify(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "before", required_argument, NULL, 'b' },
		{ "after", required_argument, NULL, 'a' },
		{ "repeat", required_argument, NULL, 'n' },
		{ "name", required_argument, NULL, 'k' },
		{ "tag", required_argument, NULL, 't' },
		{ "tolerance", required_argument, NULL, 'T' },
		{ "allow-new-skips", no_argument, NULL, 1 },
		{ "report-dir", required_argument, NULL, 2 },
		{ "timeout-mul", required_argument, NULL, 3 },
		{ "vm-topology", required_argument, NULL, 4 },
		{ "accel", required_argument, NULL, 5 },
		{ "state-dir", required_argument, NULL, 6 },
		{ "max-repeat", required_argument, NULL, 7 },
		{ "confidence", required_argument, NULL, 8 },
		{ "strict", no_argument, NULL, 9 },
		{ "absolute", no_argument, NULL, 10 },
		{ "before-cmdline", required_argument, NULL, 11 },
		{ "after-cmdline", required_argument, NULL, 12 },
		{ "all-figures", no_argument, NULL, 13 },
		{ "before-link-delay", required_argument, NULL, 14 },
		{ "after-link-delay", required_argument, NULL, 15 },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct side sb_ = { .label = "before" }, sa = { .label = "after" };
	struct cmp_opts co;
	struct cmp_report rep;
	const char *report_dir = "reports", *topo = "vm2";
	char **base = xcalloc((size_t)argc * 2 + 1, sizeof(*base));
	int nbase = 0, opt, repeat = 0, max_repeat = 0, ret = RQ_EXIT_USAGE;
	bool autorep = true;
	const char *stopped = NULL;
	char err[600], qid[64], qdir[PATH_MAX - 16];
	bool have_rep = false;

	cmp_opts_init(&co);
	/* Two kernels' single runs measure no noise: inconclusive, never a regression by chance. */
	co.single_absolute = false;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "b:a:n:k:t:T:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'b': sb_.spec = optarg; break;
		case 'a': sa.spec = optarg; break;
		case 'n': {
			long long v;

			if (!strcmp(optarg, "auto")) {
				autorep = true;
				repeat = 0;
				break;
			}
			if (parse_ll(optarg, &v) || v < 1 || v > MAX_REPEAT) {
				usage_error("qualify", "--repeat wants auto or 1 to %d, not \"%s\"", MAX_REPEAT, optarg);
				goto out;
			}
			repeat = (int)v;
			autorep = false;
			break;
		}
		case 7: {
			long long v;

			if (parse_ll(optarg, &v) || v < 1 || v > MAX_REPEAT) {
				usage_error("qualify", "--max-repeat wants 1 to %d, not \"%s\"", MAX_REPEAT, optarg);
				goto out;
			}
			max_repeat = (int)v;
			break;
		}
		case 8:
			if (cmp_opts_confidence(&co, optarg, err, sizeof(err))) {
				usage_error("qualify", "--confidence: %s", err);
				goto out;
			}
			break;
		case 9: co.strict = true; break;
		case 10: co.absolute = true; break;
		case 13: co.all_figures = true; break;
		case 14:
		case 15:
			if (rq_link_delay_check(optarg, err, sizeof(err))) {
				usage_error("qualify", "--%s-link-delay: %s", opt == 14 ? "before" : "after", err);
				goto out;
			}
			(opt == 14 ? &sb_ : &sa)->link_delay = optarg;
			break;
		case 11:
		case 12:
			if (rq_kernel_cmdline_check(optarg, err, sizeof(err))) {
				usage_error("qualify", "--%s-cmdline: %s", opt == 11 ? "before" : "after", err);
				goto out;
			}
			(opt == 11 ? &sb_ : &sa)->cmdline = optarg;
			break;
		case 'k': base[nbase++] = "-k"; base[nbase++] = optarg; break;
		case 't': base[nbase++] = "-t"; base[nbase++] = optarg; break;
		case 'T':
			if (cmp_opts_tolerance(&co, optarg, err, sizeof(err))) {
				usage_error("qualify", "%s", err);
				goto out;
			}
			break;
		case 1: co.allow_new_skips = true; break;
		case 2: report_dir = optarg; break;
		case 3: base[nbase++] = "--timeout-mul"; base[nbase++] = optarg; break;
		case 4:
			topo = optarg;
			base[nbase++] = "--vm-topology";
			base[nbase++] = optarg;
			break;
		case 5: base[nbase++] = "--accel"; base[nbase++] = optarg; break;
		case 6: base[nbase++] = "--state-dir"; base[nbase++] = optarg; break;
		case 'h': qualify_usage(stdout); ret = RQ_EXIT_OK; goto out;
		default: qualify_usage(stderr); goto out;
		}
	}
	if (!sb_.spec || !sa.spec) {
		usage_error("qualify", "--before SPEC and --after SPEC are both required");
		goto out;
	}
	if (autorep) {
		if (!max_repeat)
			max_repeat = AUTO_MAX;
		repeat = AUTO_START < max_repeat ? AUTO_START : max_repeat;
	} else if (max_repeat && max_repeat < repeat) {
		usage_error("qualify", "--max-repeat %d is below --repeat %d", max_repeat, repeat);
		goto out;
	} else {
		max_repeat = repeat;	/* a fixed count: --max-repeat only checked */
	}
	/* vm1's rxe loops back inside its one guest: no link to delay (run refuses it too). */
	if ((sb_.link_delay || sa.link_delay) && rq_vm_topology_guests(topo) < 2) {
		usage_error("qualify", "--before-link-delay and --after-link-delay need two guests or more "
			    "(--vm-topology vm2..vm8), not %s", topo);
		goto out;
	}
	/* A spec the run would refuse is refused here, before any boot. */
	const char *specs[2] = { sb_.spec, sa.spec };

	for (int i = 0; i < 2; i++)
		if (strncmp(specs[i], "debian:", 7) && !strchr(specs[i], ':')) {
			usage_error("qualify", "kernel spec \"%s\": expected debian:SUITE, "
				    "debian:PACKAGE=VERSION or PATH:MODULES_DIR", specs[i]);
			goto out;
		}

	int64_t t0 = now_ms();

	if (prepare_side(&sb_) || prepare_side(&sa)) {
		ret = RQ_EXIT_USAGE;
		goto out;
	}
	{
		time_t now = time(NULL);
		struct tm tm;

		gmtime_r(&now, &tm);
		snprintf(qid, sizeof(qid), "qualify-%04d%02d%02d-%02d%02d%02d-%d", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)getpid());
	}
	snprintf(qdir, sizeof(qdir), "%s/%s", report_dir, qid);
	snprintf(sb_.dir, sizeof(sb_.dir), "%s/before", qdir);
	snprintf(sa.dir, sizeof(sa.dir), "%s/after", qdir);
	if (mkdir_p(sb_.dir, 0755) || mkdir_p(sa.dir, 0755)) {
		fprintf(stderr, "rdmaqual qualify: cannot create %s: %s\n", qdir, strerror(errno));
		ret = RQ_EXIT_FAIL;
		goto out;
	}

	struct sigaction sa_int = { .sa_handler = on_signal };

	sigemptyset(&sa_int.sa_mask);
	sigaction(SIGINT, &sa_int, NULL);
	sigaction(SIGTERM, &sa_int, NULL);
	sigaction(SIGHUP, &sa_int, NULL);


	for (int i = 0; i < max_repeat && !rq_interrupted; i++) {
		if (run_side(&sb_, base, nbase, argv + optind, argc - optind) ||
		    run_side(&sa, base, nbase, argv + optind, argc - optind))
			break;
		if (i + 1 < repeat)
			continue;
		if (!autorep) {
			stopped = "fixed";
			break;
		}
		if (i + 1 == max_repeat) {
			stopped = "the cap (--max-repeat)";
			break;
		}
		int more = worth_another(&sb_, &sa, &co, max_repeat);

		if (more < 0)
			break;
		if (!more) {
			stopped = any_unsure ? "the figures left inconclusive would need more than --max-repeat"
					     : "every judged figure decided";
			break;
		}
	}
	repeat = (int)sa.nruns;
	if (rq_interrupted || !stopped || sb_.nruns != sa.nruns) {
		fprintf(stderr, "rdmaqual qualify: %s; runs kept under %s\n",
			rq_interrupted ? "interrupted" : "a side did not finish", qdir);
		goto out;
	}
	if (side_doc(&sb_, qdir) || side_doc(&sa, qdir) || side_usable(&sb_) || side_usable(&sa))
		goto out;
	if (cmp_compare_docs(sb_.doc, sa.doc, &co, &rep, err, sizeof(err))) {
		fprintf(stderr, "rdmaqual qualify: %s\n", err);
		goto out;
	}
	have_rep = true;
	double secs = (double)(now_ms() - t0) / 1000.0;

	printf("\n== qualify %s\n", qdir);
	print_side_facts("before", &sb_);
	print_side_facts("after ", &sa);
	if (sb_.cmdline || sa.cmdline)
		printf("kernel command line added: before %s; after %s\n", sb_.cmdline ? sb_.cmdline : "(none)",
		       sa.cmdline ? sa.cmdline : "(none)");
	if (sb_.link_delay || sa.link_delay)
		printf("link delay added (netem, each guest's eth0): before %s; after %s\n",
		       sb_.link_delay ? sb_.link_delay : "(none)", sa.link_delay ? sa.link_delay : "(none)");
	if (repeat > 1)
		printf("each side ran %d times, alternating; figures are medians, judged against their noise "
		       "(%g%% confidence over the judged figures)%s%s\n", repeat, co.confidence * 100,
		       autorep ? "; --repeat auto stopped: " : "", autorep ? stopped : "");
	print_side_by_side(stdout, sb_.doc, sa.doc, &rep);
	if (repeat > 1)
		print_spread(stdout, sb_.doc, sa.doc);
	putchar('\n');
	compare_print(stdout, &rep, sb_.doc_path, sa.doc_path);

	json_t *doc = json_pack("{s:s, s:s, s:i, s:f, s:o, s:o, s:o, s:s}", "schema", QUALIFY_SCHEMA,
				"id", qid, "repeat", repeat, "duration_s", secs,
				"before", side_json(&sb_), "after", side_json(&sa),
				"compare", cmp_report_json(&rep, &co),
				"result", rep.regressions ? "REGRESSION" : "no regression");

	/* Added in place (the schema's meaning is unchanged): how the repeats were chosen. */
	json_object_set_new(doc, "repeat_mode", json_string(autorep ? "auto" : "fixed"));
	json_object_set_new(doc, "max_repeat", json_integer(max_repeat));
	json_object_set_new(doc, "stopped", json_string(stopped));
	json_object_set_new(doc, "inconclusive", json_integer(rep.count[CMP_FIG_UNSURE]));
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	char *path = xasprintf("%s/qualify.json", qdir);

	if (!text || write_file_atomic(path, text, strlen(text)))
		fprintf(stderr, "rdmaqual qualify: cannot write %s\n", path);
	free(text);
	free(path);
	path = xasprintf("%s/junit.xml", qdir);
	if (write_junit(path, sb_.doc, sa.doc, &rep, secs))
		fprintf(stderr, "rdmaqual qualify: cannot write %s\n", path);
	free(path);
	path = xasprintf("%s/report.html", qdir);
	{
		char *title = xasprintf("qualify %s -> %s", sb_.spec, sa.spec);
		struct rq_html_side hb = { .label = "before", .spec = sb_.spec, .doc = sb_.doc,
					   .run_dir = sb_.runs[sb_.nruns - 1], .runs = sb_.runs, .nruns = sb_.nruns };
		struct rq_html_side ha = { .label = "after", .spec = sa.spec, .doc = sa.doc,
					   .run_dir = sa.runs[sa.nruns - 1], .runs = sa.runs, .nruns = sa.nruns };

		if (rq_html_compare_write(path, title, &hb, &ha, json_object_get(doc, "compare")))
			fprintf(stderr, "rdmaqual qualify: cannot write %s\n", path);
		free(title);
	}
	free(path);
	json_decref(doc);
	printf("reports: %s/report.html %s/junit.xml %s/qualify.json\n", qdir, qdir, qdir);
	ret = rep.regressions ? RQ_EXIT_FAIL : RQ_EXIT_OK;
out:
	if (have_rep)
		cmp_report_release(&rep);
	side_release(&sb_);
	side_release(&sa);
	cmp_opts_release(&co);
	free(base);
	return ret;
}

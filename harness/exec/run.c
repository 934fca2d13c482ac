/* SPDX-License-Identifier: MIT */
/*
 * The run object (exec/run.h): what a plain run and a lab run share, from
 * the node lock to the exit status.  Each case's rows go to the run's
 * journal as the case ends and the reports are rewritten atomically at
 * most once a second (exec/runreport.h), so a run killed at any point
 * leaves a valid junit.xml and results.json of what had finished.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "core/proc.h"
#include "core/term.h"
#include "core/util.h"
#include "qual/baseline.h"
#include "qual/sysroot.h"
#include "exec/journal.h"
#include "exec/par.h"
#include "exec/progress.h"
#include "exec/run.h"
#include "exec/runreport.h"
#include "exec/sched.h"
#include "exec/statedir.h"

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
	struct rq_case *const *sel;
	size_t nsel;
	unsigned repeat;
	unsigned nbad;
	const struct par *par;		/* run --jobs: the workers' facts join the reports mid-run */
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
	else if (po->par)
		par_facts_so_far(po->par, &rep->info);
	runrep_case(rep, unit ? unit : po->sel[i]->name, results, first);
	rep->sched = keep;
	free(unit);
}
/* Before anything is started: a run dir (made, or the resumed one), its logs/, the journal. */
static int open_run(struct rq_run *run, char *run_id, size_t idsz, char *run_dir, size_t dirsz,
		    int *run_fd, int *journal_err)
{
	int rc = 0;

	*journal_err = 0;
	if (run->resume) {
		/* The interrupted run's own dir and id: the same report, completed. */
		static char rdir[2048];
		char *slash;

		snprintf(run_dir, dirsz, "%s", run->resume);
		while ((slash = strrchr(run_dir, '/')) && !slash[1] && slash != run_dir)
			*slash = '\0';
		slash = strrchr(run_dir, '/');
		snprintf(run_id, idsz, "%.70s", slash ? slash + 1 : run_dir);
		snprintf(rdir, sizeof(rdir), "%.*s", slash ? (int)(slash - run_dir) % 2000 : 1,
			 slash ? run_dir : ".");
		run->report_dir = rdir;
	} else {
		rc = make_run_dir(run->report_dir, run_id, idsz, run_dir, dirsz);
		/*
		 * Every run's journal starts with its command (exec/journal.h).
		 * A lab run cannot be resumed without it; a plain run goes on,
		 * and its exit status says the write failed.
		 */
		if (!rc && run->nodes)
			rc = rq_journal_start(run_dir, run->argc, run->argv);
		else if (!rc)
			*journal_err = rq_journal_start(run_dir, run->argc, run->argv);
	}

	*run_fd = rc ? -1 : open_run_dir(run_dir);
	if (!rc && *run_fd < 0)
		rc = *run_fd;

	char logs[4200];
	bool made = !rc;

	snprintf(logs, sizeof(logs), "%s/logs", run_dir);
	if (rc || (mkdirat(*run_fd, "logs", 0755) < 0 && errno != EEXIST && (rc = -errno))) {
		fprintf(stderr, "rdmaqual run: cannot %s %s: %s\n", made ? "create" : "open",
			made ? logs : run_dir, strerror(-rc));
		if (*run_fd >= 0)
			close(*run_fd);
		*run_fd = -1;
		return rc;
	}
	return 0;
}

/* Say first what the verdicts below are of: a replay of a synthesized tree (qual/sysroot.h). */
static void note_synthesized(struct rq_run *run, char *by, size_t bysz, size_t *synth, size_t *nnodes)
{
	const char *root = run->o->target + 8;

	*synth = 0;
	if (run->nodes && run->nodes->synthesized &&
	    (*synth = run->nodes->synthesized(run->nodes->arg, nnodes, by, bysz))) {
		char *t = term_safe(by);

		printf("note: %zu of %zu nodes replay a synthesized node tree (made by %s), not captures of "
		       "machines\n", *synth, *nnodes, t);
		free(t);
	}
	if (!run->nodes) {
		struct rq_tree_meta m;

		rq_sysroot_origin(root, &m);
		if (m.origin == RQ_TREE_SYNTHESIZED) {
			char *t = term_safe(root), *b = term_safe(m.synthesized);

			printf("note: %s is a synthesized node tree (made by %s), not a capture of a machine\n", t, b);
			free(t);
			free(b);
		}
	}
}

/*
 * The cases of a node run: --jobs puts targets' groups in workers beside
 * the runner's (exec/par.h); one group (or --jobs 1) runs here, case by
 * case.  The number of plan items whose rows were emitted; par is
 * released by the caller, after sched_close.
 */
static size_t run_here(struct rq_run *run, struct sched *s, struct runrep *rep, struct plain_out *po,
		       struct par *par, bool *parallel_out)
{
	size_t total = run->nsel * (size_t)run->repeat, ran = 0;
	bool parallel;
	size_t facts0 = rep->info.nfacts;

	*par = (struct par){ .s = s, .sel = run->sel, .nsel = run->nsel, .total = total,
			     .jobs = run->jobs ? run->jobs : par_default_jobs(), .emit = plain_emit,
			     .arg = po };
	parallel = *parallel_out = par_plan(par) > 1;
	po->par = parallel ? par : NULL;
	progress_start(total);
	if (parallel) {
		par_run(par);
		ran = par->ran;
	}
	/*
	 * --repeat: round by round (every case once, then again), so that a
	 * slow spell of the host spreads over the cases instead of landing on
	 * all the repeats of one.
	 */
	for (size_t k = 0; !parallel && k < total && !rq_interrupted; k++, ran++) {
		struct rq_results rows = { 0 };
		struct rq_case *c = run->sel[k % run->nsel];

		if (progress_active()) {
			char tn[256], why[512];

			progress_case(k, c->name, sched_choose(s, c, tn, sizeof(tn), why, sizeof(why)) ?
				      tn : NULL);
		}
		sched_run_case(s, c, &rows);
		plain_emit(po, k, &rows, false);
	}
	progress_stop();
	/* the targets' facts, while they are open; the reports are written at the end */
	if (parallel)
		par_facts(par, &rep->info, facts0);
	else
		runrep_facts(rep, s);
	return ran;
}

int rq_run_suite(struct rq_run *run)
{
	struct rq_run_opts *o = run->o;
	struct rq_run_nodes *nodes = run->nodes;
	char state_dir[4096], run_id[80], run_dir[4096], synth_by[256] = "";
	size_t synth_nodes = 0, nnodes = 0, ran = 0;
	int run_fd, journal_err, ret;

	if (!run->repeat)
		run->repeat = 1;
	/*
	 * A replay of captured trees reads files and changes nothing on this
	 * node: no node lock (another run may hold it), no cleanup of what a
	 * killed run left (that is the next real run's job), no state dir.
	 */
	bool replay = !strncmp(o->target, "sysroot:", 8);
	int lockfd = replay ? -1 : statedir_lock(o->state_dir, state_dir, sizeof(state_dir));

	if (replay)
		note_synthesized(run, synth_by, sizeof(synth_by), &synth_nodes, &nnodes);
	if (replay) {
		o->state_dir = NULL;
	} else if (lockfd < 0) {
		if (run->made_report_dir)
			rmdir(run->report_dir);
		if (nodes)
			nodes->stop(nodes->arg);
		return RQ_EXIT_FAIL;
	}
	if (!replay) {
		o->state_dir = state_dir;
		/* Whatever a killed run left (VMs, daemons, settings) goes first. */
		statedir_cleanup(o, false);
	}
	if (open_run(run, run_id, sizeof(run_id), run_dir, sizeof(run_dir), &run_fd, &journal_err)) {
		if (nodes)
			nodes->stop(nodes->arg);
		if (lockfd >= 0)
			close(lockfd);
		return RQ_EXIT_FAIL;
	}
	o->run_dir = run_dir;
	point_latest(run->report_dir, run_id);
	install_signals();

	struct rq_results results = { 0 };
	struct runrep rep = { 0 };
	struct sched s = { .opts = o };
	struct par par = { 0 };
	bool parallel = false;

	runrep_init(&rep, run_dir, run_id, run->argc, run->argv);
	rep.run_fd = run_fd;
	rep.logs_fd = openat(run_fd, "logs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rep.logs_fd < 0) {
		char *logs = xasprintf("%s/logs", run_dir);

		runrep_write_failed(&rep, logs, -errno);
		free(logs);
	}
	/* a lab run journals its units itself (cluster_journal_unit) */
	if (!nodes && journal_err) {
		char *jp = xasprintf("%s/journal.jsonl", run_dir);

		runrep_write_failed(&rep, jp, journal_err);
		free(jp);
	} else if (!nodes) {
		runrep_journal_open(&rep);
	}
	runrep_begin(&rep, &results);
	rep.sched = &s;
	s.tick = runrep_tick;
	s.tick_arg = &rep;

	struct run_sink rsink = { run_dir, &rep, &s, &results, run->baseline, { 0 }, 0, 0 };
	struct rq_run_sink sink = { sink_row, sink_flush, sink_spill, &rsink };
	struct plain_out po = { &rep, run_dir, &results, run->baseline, run->sel, run->nsel,
				run->repeat, 0, NULL };

	if (nodes) {
		/*
		 * A lab run's rows go to a spool once journaled (core/spool.c),
		 * so the runner's memory grows with the nodes, not with the rows.
		 * Without one (no O_TMPFILE, no room) they stay in memory.
		 */
		rq_results_spool(&results, run_dir);
		nodes->run(nodes->arg, run->sel, run->nsel, &s, run_dir, &results, &sink);
		ran = run->nsel;
		runrep_facts(&rep, &s);
	} else {
		ran = run_here(run, &s, &rep, &po, &par, &parallel);
	}
	if (synth_nodes) {
		/* the lab's trees are the nodes', not the run's sysroot: their origin is the run's */
		char nn[64];

		snprintf(nn, sizeof(nn), "%zu of %zu", synth_nodes, nnodes);
		if (!rq_run_info_fact_get(&rep.info, "sysroot"))
			rq_run_info_fact(&rep.info, "sysroot", o->target + 8);
		rq_run_info_fact(&rep.info, "sysroot.origin", "synthesized");
		rq_run_info_fact(&rep.info, "sysroot.synthesized_by", synth_by);
		rq_run_info_fact(&rep.info, "sysroot.synthesized_nodes", nn);
	}
	rep.sched = NULL;
	s.tick = NULL;
	if (rq_interrupted && !nodes)
		fprintf(stderr, "rdmaqual run: stopped by signal %d; %zu of %zu cases ran\n",
			(int)rq_interrupted, ran, run->nsel * (size_t)run->repeat);
	if (rq_interrupted && nodes)
		fprintf(stderr, "rdmaqual run: stopped by signal %d; finish it with: rdmaqual run "
			"--resume %s\n", (int)rq_interrupted, run_dir);
	if (nodes) {
		char *html = NULL;

		rep.info.lab = nodes->report(nodes->arg, &results, &html);
		free(rep.info.html_extra);
		rep.info.html_extra = html;
		/* Every node's work stops before the report is final. */
		nodes->stop(nodes->arg);
	}
	sched_close(&s);
	if (parallel)
		par_profile_merge(&par);
	par_release(&par);
	if (run->profile) {
		sched_profile_facts(&s, &rep.info);
		sched_profile_print(&s, stdout);
	}
	sched_profile_release(&s);
	runrep_end(&rep, &results);

	struct rq_counts cnt;

	rq_results_count(&results, &cnt);
	ret = (cnt.fail || cnt.error || rq_interrupted || (run->fail_on_skip && cnt.skip)) ?
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
	if (lockfd >= 0)
		close(lockfd);
	return ret;
}

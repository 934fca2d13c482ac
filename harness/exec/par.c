// SPDX-License-Identifier: MIT
/*
 * run --jobs (exec/par.h): target groups in forked workers, rows merged
 * into plan order.  A worker is a fork of the runner taken before any case
 * ran (no agent, VM or daemon of the runner's to inherit); it runs its
 * items with a struct sched of its own and sends, over its pipe, for each
 * item BEGIN then ROWS, then its targets' FACTS and profile TIME, then
 * DONE, and exits.  The runner reads the pipes without blocking, between
 * its own cases and from the tick of the case it waits on, and hands rows
 * on in plan order.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "core/proc.h"
#include "core/term.h"
#include "core/target.h"
#include "exec/par.h"
#include "exec/progress.h"
#include "exec/unit.h"
#include "report/report.h"

enum { MSG_BEGIN = 1, MSG_ROWS, MSG_FACTS, MSG_TIME, MSG_DONE };

struct msg_hdr {
	uint32_t type, k, len;
};

/* Past its case's own timeout: opening a target, placing, settling, tearing down. */
#define PAR_CASE_ALLOW_MS	(300 * 1000)
/* Between two cases, and from its last to its exit (facts, closing its targets). */
#define PAR_GAP_MS		(120 * 1000)
/* After SIGTERM (an interrupt, a deadline): the case it holds stops, its targets close. */
#define PAR_TERM_MS		(60 * 1000)
#define PAR_KILL_MS		(5 * 1000)
/* Rows of one message at most (a fabric's rows of one case are ~1300 with one log). */
#define PAR_MSG_MAX		(1u << 30)

struct par_slot {
	struct rq_results rows;
	bool done;
};

struct par_worker {
	unsigned lane;
	pid_t pid;
	int fd;			/* our end of its pipe; -1 at EOF */
	struct sb in;		/* what has come and is not a whole message yet */
	size_t nbegun;		/* its items begun (they run in plan order) */
	bool busy;		/* an item begun, its rows not here */
	size_t cur;
	bool done_msg, reaped, term_sent, kill_sent, lost;
	int status;
	int64_t deadline;
	char why[200];		/* why it was stopped, when we did */
};

unsigned par_default_jobs(void)
{
	const char *e = getenv("RQ_JOBS");
	long n;

	if (e && *e) {
		char *end;

		n = strtol(e, &end, 10);
		if (!*end && n >= 1 && n <= 1024)
			return (unsigned)n;
	}
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n >= 1 && n <= 1024 ? (unsigned)n : 1;
}

static int tg_find(const struct par *p, const char *name)
{
	for (size_t i = 0; i < p->ntg; i++)
		if (!strcmp(p->tg[i].name, name))
			return (int)i;
	return -1;
}

static const struct rq_target_ops *tg_ops(const char *name)
{
	const char *colon = strchr(name, ':');
	char base[64];

	snprintf(base, sizeof(base), "%.*s", colon ? (int)(colon - name) : 63, name);
	return rq_target_ops_find(base);
}

static const struct rq_case *item_case(const struct par *p, size_t k)
{
	return p->sel[k % p->nsel];
}

static bool item_in_parent(const struct par *p, size_t k)
{
	return p->item_tg[k] < 0 || p->tg[p->item_tg[k]].parent;
}

unsigned par_plan(struct par *p)
{
	bool host_changed = false, parent_busy = false;
	unsigned ngroups = 0, lanes;

	p->item_tg = xcalloc(p->total ? p->total : 1, sizeof(*p->item_tg));
	for (size_t k = 0; k < p->total; k++) {
		char tn[256], why[512];
		int t;

		p->item_tg[k] = -1;
		if (k >= p->nsel) {
			/* --repeat: a round's items go where the first round's went */
			p->item_tg[k] = p->item_tg[k % p->nsel];
			continue;
		}
		if (!sched_choose(p->s, item_case(p, k), tn, sizeof(tn), why, sizeof(why)))
			continue;
		t = tg_find(p, tn);
		if (t < 0) {
			const struct rq_target_ops *ops = tg_ops(tn);

			p->tg = xrealloc(p->tg, (p->ntg + 1) * sizeof(*p->tg));
			p->tg[p->ntg] = (struct par_target){ .name = xstrdup(tn),
							     .parent = !ops || !ops->parallel };
			host_changed = host_changed || (ops && ops->changes_host);
			t = (int)p->ntg++;
		}
		p->item_tg[k] = t;
	}
	/*
	 * `local` runs what is on this host as it is: beside a target that
	 * changes the host's devices (hca, rxe-host) it would see them change.
	 */
	for (size_t i = 0; i < p->ntg; i++) {
		if (host_changed && !strcmp(p->tg[i].name, "local"))
			p->tg[i].parent = true;
		if (p->tg[i].parent)
			parent_busy = true;
		else
			ngroups++;
	}
	if (p->jobs <= 1 || !ngroups)
		return 1;
	p->nworkers = p->jobs - (parent_busy ? 1 : 0);
	if (p->nworkers > ngroups)
		p->nworkers = ngroups;
	lanes = p->nworkers + (parent_busy ? 1 : 0);
	if (lanes < 2) {
		p->nworkers = 0;
		return 1;
	}
	/* groups to workers in the order their first case comes, round robin */
	unsigned next = 0;

	for (size_t i = 0; i < p->ntg; i++)
		if (!p->tg[i].parent)
			p->tg[i].lane = 1 + next++ % p->nworkers;
	return lanes;
}

/* ---- the worker ---- */

static int send_msg(int fd, uint32_t type, size_t k, const void *data, size_t len)
{
	struct msg_hdr h = { type, (uint32_t)k, (uint32_t)len };
	struct sb m = SB_INIT;
	int ret;

	if (len > PAR_MSG_MAX)
		return -E2BIG;
	sb_add(&m, (const char *)&h, sizeof(h));
	if (len)
		sb_add(&m, data, len);
	ret = write_full(fd, m.buf, m.len);
	sb_release(&m);
	return ret;
}

static void put_u32(struct sb *o, uint32_t v)
{
	sb_add(o, (const char *)&v, sizeof(v));
}

static int send_rows(int fd, size_t k, const struct rq_results *rows)
{
	struct sb o = SB_INIT, one = SB_INIT;
	int ret;

	put_u32(&o, (uint32_t)rows->n);
	for (size_t i = 0; i < rows->n; i++) {
		one.len = 0;
		rq_result_pack(rows->v[i], &one);
		put_u32(&o, (uint32_t)one.len);
		sb_add(&o, one.buf, one.len);
	}
	ret = send_msg(fd, MSG_ROWS, k, o.buf, o.len);
	sb_release(&one);
	sb_release(&o);
	return ret;
}

/*
 * The facts of the worker's targets from the from-th on, as sched_facts
 * would ask them: after a case for the targets it opened (so the reports
 * written while the run goes on have them), and again before closing.
 */
static int send_facts(int fd, struct sched *ws, size_t from)
{
	int ret = 0;

	for (size_t i = from; i < ws->ntargets && !ret; i++) {
		struct rq_target *t = ws->targets[i];
		struct rq_result *sink = rq_result_new("facts", NULL, 0);
		struct sb o = SB_INIT;

		if (t->opened && t->ops->facts)
			t->ops->facts(t, sink);
		sb_add(&o, t->name, strlen(t->name) + 1);
		rq_result_pack(sink, &o);
		ret = send_msg(fd, MSG_FACTS, 0, o.buf, o.len);
		sb_release(&o);
		rq_result_free(sink);
	}
	return ret;
}

static void worker_main(struct par *p, unsigned lane, int fd, pid_t runner)
{
	struct sched ws = { .opts = p->s->opts, .port_pid = (int)runner };
	size_t told = 0;	/* targets whose facts were sent */
	bool lost = false;

	for (size_t k = 0; k < p->total && !rq_interrupted && !lost; k++) {
		struct rq_results rows = { 0 };

		if (item_in_parent(p, k) || p->tg[p->item_tg[k]].lane != lane)
			continue;
		if (send_msg(fd, MSG_BEGIN, k, NULL, 0)) {
			lost = true;
			break;
		}
		ws.case_seq = (unsigned)k;
		sched_run_case(&ws, item_case(p, k), &rows);
		/* facts first: the runner has them when it hands these rows on */
		lost = send_facts(fd, &ws, told) != 0 || send_rows(fd, k, &rows) != 0;
		told = ws.ntargets;
		rq_results_release(&rows);
	}
	/* facts while the targets are open, as sched_facts would ask them (again: they may have grown) */
	lost = lost || send_facts(fd, &ws, 0);
	/* every target's teardown runs, the runner gone or not */
	sched_close(&ws);
	for (size_t i = 0; i < ws.ntime && !lost; i++)
		lost = send_msg(fd, MSG_TIME, 0, &ws.time[i], sizeof(ws.time[i])) != 0;
	if (!lost)
		send_msg(fd, MSG_DONE, 0, NULL, 0);
	sched_profile_release(&ws);
	fflush(stdout);
	fflush(stderr);
	_exit(0);
}

/* ---- the runner ---- */

static unsigned running_now(const struct par *p)
{
	unsigned n = p->busy;

	for (unsigned i = 0; i < p->nworkers; i++)
		n += p->w[i].busy;
	return n;
}

static void show_progress(struct par *p, size_t shown)
{
	if (!progress_active())
		return;
	if (p->next < p->total && p->next != shown) {
		int t = p->item_tg[p->next];

		progress_case(p->next, item_case(p, p->next)->name, t >= 0 ? p->tg[t].name : NULL);
	}
	progress_running(running_now(p));
}

/* Hand on every item that is next in plan order and done. */
static void emit_ready(struct par *p, bool in_tick)
{
	size_t shown = p->next;

	while (p->next < p->total && p->slot[p->next].done) {
		p->emit(p->arg, p->next, &p->slot[p->next].rows, in_tick);
		rq_results_release(&p->slot[p->next].rows);
		p->ran++;
		p->next++;
	}
	show_progress(p, shown);
}

/* The rows of item k that a worker could not give: one ERROR row, stamped as sched would. */
static void error_item(struct par *p, size_t k, const char *what)
{
	const struct rq_case *c = item_case(p, k);
	char tn[256] = "none", why[512] = "";
	struct rq_results *rows = &p->slot[k].rows;
	struct sb log = SB_INIT;

	sched_choose(p->s, c, tn, sizeof(tn), why, sizeof(why));
	rq_results_release(rows);
	rq_results_add(rows, rq_verdict_row(c->name, RQ_ERROR, "%s", what));
	sb_addf(&log, "# %s\n", rows->v[0]->reason);
	struct rq_stamp st = { .target = tn, .target_why = why, .log = &log };

	rq_rows_stamp(rows->v, rows->n, c, &st);
	sb_release(&log);
	p->slot[k].done = true;
}

static bool item_of(const struct par *p, const struct par_worker *w, size_t k)
{
	return k < p->total && !item_in_parent(p, k) && p->tg[p->item_tg[k]].lane == w->lane;
}

static void got_rows(struct par *p, struct par_worker *w, size_t k, const char *b, size_t len)
{
	struct rq_results *rows = &p->slot[k].rows;
	uint32_t n, l;
	size_t off = 4;

	if (len < 4) {
		error_item(p, k, "the worker's rows of this case could not be read");
		return;
	}
	memcpy(&n, b, 4);
	for (uint32_t i = 0; i < n; i++) {
		struct rq_result *r = NULL;

		if (len - off >= 4) {
			memcpy(&l, b + off, 4);
			off += 4;
			if (l <= len - off)
				r = rq_result_unpack(b + off, l);
			off += r ? l : 0;
		}
		if (!r) {
			error_item(p, k, "the worker's rows of this case could not be read");
			return;
		}
		rq_results_add(rows, r);
	}
	p->slot[k].done = true;
	w->busy = false;
}

static void got_msg(struct par *p, struct par_worker *w, const struct msg_hdr *h, const char *b)
{
	switch (h->type) {
	case MSG_BEGIN:
		if (!item_of(p, w, h->k) || p->slot[h->k].done)
			break;
		w->nbegun++;
		w->busy = true;
		w->cur = h->k;
		w->deadline = now_ms() + scaled_ms(item_case(p, h->k)->timeout_ms + PAR_CASE_ALLOW_MS);
		break;
	case MSG_ROWS:
		if (!item_of(p, w, h->k) || p->slot[h->k].done)
			break;
		got_rows(p, w, h->k, b, h->len);
		w->busy = false;
		w->deadline = now_ms() + scaled_ms(PAR_GAP_MS);
		break;
	case MSG_FACTS: {
		const char *nul = memchr(b, '\0', h->len);
		int t = nul ? tg_find(p, b) : -1;
		struct rq_result *r = t >= 0 ? rq_result_unpack(nul + 1, h->len - (nul + 1 - b)) : NULL;

		if (r) {
			if (p->tg[t].facts)
				rq_result_free(p->tg[t].facts);
			p->tg[t].facts = r;
		}
		/* in a case (its rows follow): its deadline stands */
		if (!w->busy)
			w->deadline = now_ms() + scaled_ms(PAR_GAP_MS);
		break;
	}
	case MSG_TIME: {
		struct sched_time tm;
		int t;

		if (h->len != sizeof(tm))
			break;
		memcpy(&tm, b, sizeof(tm));
		tm.target[sizeof(tm.target) - 1] = '\0';
		t = tg_find(p, tm.target);
		if (t < 0)
			break;
		p->tg[t].time = xrealloc(p->tg[t].time, (p->tg[t].ntime + 1) * sizeof(tm));
		p->tg[t].time[p->tg[t].ntime++] = tm;
		break;
	}
	case MSG_DONE:
		w->done_msg = true;
		w->deadline = now_ms() + scaled_ms(PAR_TERM_MS);
		break;
	}
}

static void read_worker(struct par *p, struct par_worker *w)
{
	char buf[65536];

	while (w->fd >= 0) {
		ssize_t n = read(w->fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			close(w->fd);
			w->fd = -1;
			break;
		}
		sb_add(&w->in, buf, (size_t)n);
	}
	size_t off = 0;

	for (;;) {
		struct msg_hdr h;

		if (w->in.len - off < sizeof(h))
			break;
		memcpy(&h, w->in.buf + off, sizeof(h));
		if (h.len > PAR_MSG_MAX) {
			/* not ours to read on: stop it, its cases say so */
			snprintf(w->why, sizeof(w->why), "sent a message we cannot read");
			if (!w->kill_sent)
				kill(w->pid, SIGKILL);
			w->kill_sent = true;
			off = w->in.len;
			break;
		}
		if (w->in.len - off - sizeof(h) < h.len)
			break;
		got_msg(p, w, &h, w->in.buf + off + sizeof(h));
		off += sizeof(h) + h.len;
	}
	if (off) {
		memmove(w->in.buf, w->in.buf + off, w->in.len - off);
		w->in.len -= off;
	}
}

/* A worker that is gone: what it did not give becomes ERROR rows naming it. */
static void worker_gone(struct par *p, struct par_worker *w)
{
	char what[600], how[240];
	size_t pos = 0;
	const char *tnames = "";

	if (w->why[0])
		snprintf(how, sizeof(how), "%s", w->why);
	else if (w->lost)
		snprintf(how, sizeof(how), "could not be waited for");
	else if (WIFSIGNALED(w->status))
		snprintf(how, sizeof(how), "was killed by signal %d", WTERMSIG(w->status));
	else
		snprintf(how, sizeof(how), "exited with status %d", WEXITSTATUS(w->status));
	for (size_t i = 0; i < p->ntg; i++)
		if (!p->tg[i].parent && p->tg[i].lane == w->lane) {
			tnames = p->tg[i].name;
			break;
		}
	for (size_t k = 0; k < p->total; k++) {
		if (!item_of(p, w, k))
			continue;
		bool begun = pos++ < w->nbegun;

		if (p->slot[k].done)
			continue;
		/* an interrupted run leaves out the cases it never began, as a serial one does */
		if (!begun && rq_interrupted)
			continue;
		snprintf(what, sizeof(what), "the worker running target %s (pid %d) %s %s", tnames,
			 (int)w->pid, how, begun ? "before this case's rows came" :
			 "before this case began");
		error_item(p, k, what);
	}
	w->busy = false;
}

static void check_worker(struct par *p, struct par_worker *w)
{
	int64_t now = now_ms();

	if (w->reaped)
		return;
	if (w->fd < 0 || w->kill_sent) {
		pid_t r = waitpid(w->pid, &w->status, WNOHANG);

		if (r == w->pid || (r < 0 && errno == ECHILD)) {
			w->reaped = true;
			if (w->fd >= 0) {
				read_worker(p, w);
				if (w->fd >= 0)
					close(w->fd);
				w->fd = -1;
			}
			worker_gone(p, w);
			return;
		}
	}
	if (now < w->deadline)
		return;
	if (!w->term_sent) {
		if (!w->why[0] && !rq_interrupted)
			snprintf(w->why, sizeof(w->why), w->busy ? "did not finish %s in time" :
				 "went silent", w->busy ? item_case(p, w->cur)->name : "");
		kill(w->pid, SIGTERM);
		w->term_sent = true;
		w->deadline = now + scaled_ms(PAR_TERM_MS);
	} else if (!w->kill_sent) {
		kill(w->pid, SIGKILL);
		w->kill_sent = true;
		w->deadline = now + scaled_ms(PAR_KILL_MS);
	} else {
		/* SIGKILLed and still not reaped (a D state): say so, do not hang */
		w->lost = w->reaped = true;
		if (w->fd >= 0)
			close(w->fd);
		w->fd = -1;
		worker_gone(p, w);
	}
}

/* Read what the workers sent (waiting up to wait_ms for something), check them, emit. */
static void pump(struct par *p, int wait_ms, bool in_tick)
{
	struct pollfd pf[64];
	unsigned n = 0;

	for (unsigned i = 0; i < p->nworkers && n < 64; i++)
		if (p->w[i].fd >= 0)
			pf[n++] = (struct pollfd){ .fd = p->w[i].fd, .events = POLLIN };
	if (wait_ms > 0 && n)
		poll(pf, n, wait_ms);
	else if (wait_ms > 0) {
		struct timespec ts = { 0, (long)wait_ms * 1000000L };

		nanosleep(&ts, NULL);
	}
	if (rq_interrupted && !p->termed) {
		/* SIGTERM and SIGHUP reach only us; SIGINT from a terminal reached them too */
		p->termed = true;
		for (unsigned i = 0; i < p->nworkers; i++) {
			struct par_worker *w = &p->w[i];

			if (w->reaped)
				continue;
			kill(w->pid, SIGTERM);
			w->term_sent = true;
			if (w->deadline > now_ms() + scaled_ms(PAR_TERM_MS))
				w->deadline = now_ms() + scaled_ms(PAR_TERM_MS);
		}
	}
	for (unsigned i = 0; i < p->nworkers; i++) {
		if (p->w[i].fd >= 0)
			read_worker(p, &p->w[i]);
		check_worker(p, &p->w[i]);
	}
	emit_ready(p, in_tick);
}

static void par_tick(void *arg)
{
	struct par *p = arg;

	pump(p, 0, true);
	if (p->run_tick)
		p->run_tick(p->run_tick_arg);
}

static void start_workers(struct par *p)
{
	pid_t runner = getpid();

	p->w = xcalloc(p->nworkers, sizeof(*p->w));
	/* nothing buffered is written twice, by us and by a child */
	fflush(NULL);
	for (unsigned i = 0; i < p->nworkers; i++) {
		struct par_worker *w = &p->w[i];
		int fds[2];

		w->lane = i + 1;
		w->fd = -1;
		sb_init(&w->in);
		w->pid = -1;
		if (pipe2(fds, O_CLOEXEC) == 0) {
			/* a case's rows fit whole: the worker rarely waits for us to read */
			fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
			w->pid = fork();
			if (w->pid < 0) {
				close(fds[0]);
				close(fds[1]);
			}
		}
		if (w->pid == 0) {
			close(fds[0]);
			for (unsigned j = 0; j < i; j++)
				if (p->w[j].fd >= 0)
					close(p->w[j].fd);
			/* the runner SIGKILLed: stop after the case, close the targets */
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			if (getppid() != runner)
				rq_interrupted = SIGTERM;
			worker_main(p, w->lane, fds[1], runner);
		}
		if (w->pid < 0) {
			/* no worker: its groups run here, one after the other */
			fprintf(stderr, "rdmaqual: warning: cannot start a worker for --jobs: %s; its "
				"targets run in the runner\n", strerror(errno));
			for (size_t t = 0; t < p->ntg; t++)
				if (!p->tg[t].parent && p->tg[t].lane == w->lane)
					p->tg[t].parent = true;
			w->reaped = true;
			continue;
		}
		close(fds[1]);
		w->fd = fds[0];
		fcntl(w->fd, F_SETFL, fcntl(w->fd, F_GETFL) | O_NONBLOCK);
		w->cur = SIZE_MAX;
		w->deadline = now_ms() + scaled_ms(PAR_GAP_MS);
	}
}

/* What runs where, said once (stderr: the reports stay those of a serial run). */
static void say_plan(const struct par *p)
{
	struct sb sb = SB_INIT;
	unsigned lanes = p->nworkers;

	for (unsigned l = 0; l <= p->nworkers; l++) {
		bool any = false;

		for (size_t i = 0; i < p->ntg; i++) {
			if ((l == 0) != p->tg[i].parent || (l && p->tg[i].lane != l))
				continue;
			if (!any && l == 0)
				lanes++;
			sb_addf(&sb, "%s%s", any ? ", " : l ? "; worker: " : "; runner: ", p->tg[i].name);
			any = true;
		}
	}
	char *t = term_safe(sb.buf + 2);

	fprintf(stderr, "rdmaqual: running %u groups of targets at once (--jobs %u): %s\n", lanes,
		p->jobs, t);
	free(t);
	sb_release(&sb);
}

void par_run(struct par *p)
{
	struct sched *s = p->s;

	p->slot = xcalloc(p->total ? p->total : 1, sizeof(*p->slot));
	say_plan(p);
	start_workers(p);
	p->run_tick = s->tick;
	p->run_tick_arg = s->tick_arg;
	s->tick = par_tick;
	s->tick_arg = p;
	s->port_pid = (int)getpid();
	show_progress(p, SIZE_MAX);
	for (size_t k = 0; k < p->total && !rq_interrupted; k++) {
		if (!item_in_parent(p, k))
			continue;
		pump(p, 0, false);
		p->busy = true;
		progress_running(running_now(p));
		s->case_seq = (unsigned)k;
		sched_run_case(s, item_case(p, k), &p->slot[k].rows);
		p->busy = false;
		p->slot[k].done = true;
		pump(p, 0, false);
	}
	for (;;) {
		bool left = false;

		for (unsigned i = 0; i < p->nworkers; i++)
			left = left || !p->w[i].reaped;
		if (!left)
			break;
		pump(p, 250, false);
		if (p->run_tick)
			p->run_tick(p->run_tick_arg);
	}
	/* interrupted: what did finish, still in plan order */
	while (p->next < p->total) {
		if (p->slot[p->next].done) {
			p->emit(p->arg, p->next, &p->slot[p->next].rows, false);
			rq_results_release(&p->slot[p->next].rows);
			p->ran++;
		}
		p->next++;
	}
	progress_running(0);
	s->tick = p->run_tick;
	s->tick_arg = p->run_tick_arg;
}

void par_facts_so_far(const struct par *p, struct rq_run_info *info)
{
	for (size_t i = 0; i < p->ntg; i++)
		for (size_t j = 0; p->tg[i].facts && j < p->tg[i].facts->nfacts; j++)
			rq_run_info_fact(info, p->tg[i].facts->facts[j].key, p->tg[i].facts->facts[j].value);
}

void par_facts(struct par *p, struct rq_run_info *info, size_t n0)
{
	for (size_t i = n0; i < info->nfacts; i++) {
		free(info->facts[i].key);
		free(info->facts[i].value);
	}
	if (info->nfacts > n0)
		info->nfacts = n0;
	for (size_t i = 0; i < p->ntg; i++) {
		struct rq_result *sink = NULL;

		if (p->tg[i].parent) {
			for (size_t j = 0; j < p->s->ntargets; j++) {
				struct rq_target *t = p->s->targets[j];

				if (strcmp(t->name, p->tg[i].name) || !t->opened || !t->ops->facts)
					continue;
				sink = rq_result_new("facts", NULL, 0);
				t->ops->facts(t, sink);
			}
		}
		const struct rq_result *f = sink ? sink : p->tg[i].facts;

		for (size_t j = 0; f && j < f->nfacts; j++)
			rq_run_info_fact(info, f->facts[j].key, f->facts[j].value);
		if (sink)
			rq_result_free(sink);
	}
}

void par_profile_merge(struct par *p)
{
	struct sched *s = p->s;
	struct sched_time *all = NULL;
	size_t n = 0;

	/* in the order the targets' first cases come, as a serial run opens them */
	for (size_t i = 0; i < p->ntg; i++) {
		const struct sched_time *v = p->tg[i].time;
		size_t nv = p->tg[i].ntime;

		for (size_t j = 0; p->tg[i].parent && j < s->ntime; j++)
			if (!strcmp(s->time[j].target, p->tg[i].name)) {
				v = &s->time[j];
				nv = 1;
			}
		all = xrealloc(all, (n + nv + 1) * sizeof(*all));
		for (size_t j = 0; j < nv; j++)
			all[n++] = v[j];
	}
	free(s->time);
	s->time = all;
	s->ntime = n;
}

void par_release(struct par *p)
{
	for (size_t i = 0; i < p->ntg; i++) {
		free(p->tg[i].name);
		free(p->tg[i].time);
		if (p->tg[i].facts)
			rq_result_free(p->tg[i].facts);
	}
	free(p->tg);
	for (unsigned i = 0; p->w && i < p->nworkers; i++) {
		if (p->w[i].fd >= 0)
			close(p->w[i].fd);
		sb_release(&p->w[i].in);
	}
	free(p->w);
	for (size_t k = 0; p->slot && k < p->total; k++)
		rq_results_release(&p->slot[k].rows);
	free(p->slot);
	free(p->item_tg);
	memset(p, 0, sizeof(*p));
}

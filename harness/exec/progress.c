// SPDX-License-Identifier: MIT
/*
 * The progress line (progress.h).  A thread, not a timer signal: the line
 * is formatted with snprintf, which a signal handler may not call, and the
 * run loop blocks inside cases for seconds at a time.  One mutex orders the
 * thread's redraws and the result lines the main thread prints.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "core/term.h"
#include "core/util.h"
#include "exec/progress.h"

static struct {
	bool on, stop, drawn;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t total, index;
	char name[128], target[64];
	int64_t run_start, case_start;
	unsigned failed;
	unsigned running;	/* run --jobs: targets with a case in flight */
} P = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

/* Terminal width, so the line never wraps (a wrapped line cannot be redrawn). */
static size_t columns(void)
{
	const char *c = getenv("COLUMNS");
	long n = c ? strtol(c, NULL, 10) : 0;

	return n > 20 && n < 1000 ? (size_t)n : 80;
}

static void draw_locked(void)
{
	char line[512], eta[32] = "", par[40] = "";
	double el = (double)(now_ms() - P.case_start) / 1000.0;
	size_t done = P.index, w = columns() - 1;

	if (done > 0 && P.total > done) {
		/* Mean time of the finished cases times what is left. */
		double per = (double)(P.case_start - P.run_start) / 1000.0 / (double)done;
		double left = per * (double)(P.total - done) - el;

		snprintf(eta, sizeof(eta), ", ETA %.0f s", left > 0 ? left : 0);
	}
	/* the overlap, so a run that waits on one slow target says the others go on */
	if (P.running > 1)
		snprintf(par, sizeof(par), " (%u targets running)", P.running);
	int n = snprintf(line, sizeof(line), "[%zu/%zu] %s%s%s %.1f s, %u failed so far%s%s",
			 P.index + 1, P.total, P.name, *P.target ? " on " : "", P.target, el, P.failed,
			 eta, par);

	if (n < 0)
		return;
	if ((size_t)n > w && w < sizeof(line))
		line[w] = '\0';
	/* Control characters in a case name would move the cursor. */
	for (char *p = line; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	fprintf(stdout, "\r\033[K%s", line);
	fflush(stdout);
	P.drawn = true;
}

static void *ticker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&P.mu);
	while (!P.stop) {
		struct timespec ts;

		if (*P.name)
			draw_locked();
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 500 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&P.cv, &P.mu, &ts);
	}
	pthread_mutex_unlock(&P.mu);
	return NULL;
}

bool progress_start(size_t total)
{
	const char *term = getenv("TERM");

	if (!isatty(STDOUT_FILENO) || !term || !strcmp(term, "dumb") || getenv("RQ_NO_PROGRESS"))
		return false;
	P.total = total;
	P.run_start = P.case_start = now_ms();
	P.stop = false;
	if (pthread_create(&P.thread, NULL, ticker, NULL))
		return false;
	P.on = true;
	return true;
}

bool progress_active(void)
{
	return P.on;
}

void progress_case(size_t i, const char *name, const char *target)
{
	if (!P.on)
		return;
	pthread_mutex_lock(&P.mu);
	P.index = i;
	/* a case's name and a target's argument reach the terminal as text only */
	char *n = term_safe(name), *t = term_safe(target);

	snprintf(P.name, sizeof(P.name), "%s", n);
	snprintf(P.target, sizeof(P.target), "%s", t);
	free(n);
	free(t);
	P.case_start = now_ms();
	draw_locked();
	pthread_mutex_unlock(&P.mu);
}

void progress_running(unsigned n)
{
	if (!P.on)
		return;
	pthread_mutex_lock(&P.mu);
	P.running = n;
	pthread_mutex_unlock(&P.mu);
}

void progress_hold(void)
{
	if (!P.on)
		return;
	pthread_mutex_lock(&P.mu);
	if (P.drawn) {
		fputs("\r\033[K", stdout);
		P.drawn = false;
	}
}

void progress_release(unsigned failed)
{
	if (!P.on)
		return;
	P.failed = failed;
	fflush(stdout);
	pthread_mutex_unlock(&P.mu);
}

void progress_stop(void)
{
	if (!P.on)
		return;
	pthread_mutex_lock(&P.mu);
	P.stop = true;
	if (P.drawn)
		fputs("\r\033[K", stdout);
	P.drawn = false;
	fflush(stdout);
	pthread_cond_signal(&P.cv);
	pthread_mutex_unlock(&P.mu);
	pthread_join(P.thread, NULL);
	P.on = false;
}

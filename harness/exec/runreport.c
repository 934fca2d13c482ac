/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "agent/agent.h"
#include "core/json_text.h"
#include "exec/runreport.h"


void runrep_init(struct runrep *r, const char *dir, const char *run_id, int argc, char **argv)
{
	json_t *f = rq_agent_facts();
	const char *k;
	json_t *v;

	/* every field, write_errors too: a caller's stack holds anything */
	*r = (struct runrep){ 0 };
	r->dir = xstrdup(dir);
	r->journal.fd = -1;
	r->journal.done = NULL;
	r->logs_fd = -1;
	r->run_fd = -1;
	rq_run_info_init(&r->info, RQ_VERSION, argc, argv);
	free(r->info.run_id);
	r->info.run_id = xstrdup(run_id);
	/* The controller's own machine; targets add theirs (guest kernel, ...). */
	json_object_foreach(f, k, v) {
		char *val = json_is_string(v) ? xstrdup(json_string_value(v)) :
			    json_dumps(v, JSON_ENCODE_ANY);
		char *key = xasprintf("host.%s", k);

		rq_run_info_fact(&r->info, key, val);
		free(key);
		free(val);
	}
	json_decref(f);
}

void runrep_begin(struct runrep *r, struct rq_results *rs)
{
	runrep_flush(r, rs);
}

void runrep_row(struct runrep *r, const struct rq_result *row)
{
	rq_console_row(stdout, row);
	fflush(stdout);
}

void runrep_facts(struct runrep *r, struct sched *s)
{
	struct rq_result *sink = rq_result_new("facts", NULL, 0);

	sched_facts(s, sink);
	for (size_t i = 0; i < sink->nfacts; i++)
		rq_run_info_fact(&r->info, sink->facts[i].key, sink->facts[i].value);
	rq_result_free(sink);
}

void runrep_flush(struct runrep *r, struct rq_results *rs)
{
	int ret = r->run_fd >= 0 ? rq_reports_write_at(r->run_fd, r->dir, &r->info, rs) :
		  rq_reports_write(r->dir, &r->info, rs);

	if (ret) {
		char *what = xasprintf("reports (junit.xml, results.json) in %s", r->dir);

		runrep_write_failed(r, what, ret);
		free(what);
	}
	r->flushed_ms = now_ms();
	r->dirty = false;
}

void runrep_write_failed(struct runrep *r, const char *what, int err)
{
	r->write_errors++;
	fprintf(stderr, "rdmaqual: cannot write %s: %s\n", what, strerror(-err));
}

int runrep_journal_open(struct runrep *r)
{
	int ret = rq_journal_open(&r->journal, r->dir, false);

	if (ret) {
		char *path = xasprintf("%s/journal.jsonl", r->dir);

		runrep_write_failed(r, path, ret);
		free(path);
	}
	return ret;
}

void runrep_case(struct runrep *r, const char *unit, struct rq_results *rs, size_t first)
{
	r->rs = rs;
	/* one write and one fsync a case: the durable record of what finished */
	if (r->journal.fd >= 0) {
		int e = rq_journal_unit(&r->journal, unit, rs->v + first, rs->n - first);

		if (e) {
			char *what = xasprintf("%s/journal.jsonl", r->dir);

			runrep_write_failed(r, what, e);
			free(what);
			rq_journal_close(&r->journal);
		}
	}
	r->dirty = true;
	if (now_ms() - r->flushed_ms >= 1000) {
		/* Facts of targets opened since join the report now. */
		if (r->sched)
			runrep_facts(r, r->sched);
		runrep_flush(r, rs);
	}
}

void runrep_tick(void *arg)
{
	struct runrep *r = arg;

	/* No facts here: asking a peer agent for them would nest in the wait. */
	if (r->dirty && r->rs && now_ms() - r->flushed_ms >= 1000)
		runrep_flush(r, r->rs);
}

void runrep_end(struct runrep *r, struct rq_results *rs)
{
	rq_run_info_finish(&r->info);
	runrep_flush(r, rs);
	rq_console_summary(stdout, &r->info, rs);
	printf("reports: %s/junit.xml %s/results.json %s/report.html\n", r->dir, r->dir, r->dir);
}

void runrep_release(struct runrep *r)
{
	rq_journal_close(&r->journal);
	if (r->logs_fd >= 0)
		close(r->logs_fd);
	if (r->run_fd >= 0)
		close(r->run_fd);
	r->logs_fd = r->run_fd = -1;
	rq_run_info_release(&r->info);
	free(r->dir);
}

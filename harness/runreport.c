/* SPDX-License-Identifier: MIT */
/*
 * Glue between the run loop and the reporters: console line per row, and
 * junit.xml + results.json rewritten atomically after every case.
 * (Interim writer until the full reporters land.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "runreport.h"
#include "xml.h"

void runrep_init(struct runrep *r, const char *dir, const char *run_id, int argc, char **argv)
{
	r->dir = xstrdup(dir);
	r->run_id = xstrdup(run_id);
}

void runrep_begin(struct runrep *r, struct rq_results *rs)
{
	runrep_flush(r, rs);
}

void runrep_row(struct runrep *r, const struct rq_result *row)
{
	printf("%-6s %-40s %6.1fs %s\n", rq_verdict_name(row->verdict), row->id, row->duration_s,
	       row->reason ? row->reason : "");
	fflush(stdout);
}

void runrep_facts(struct runrep *r, struct sched *s)
{
}

void runrep_flush(struct runrep *r, struct rq_results *rs)
{
	json_t *a = json_array();
	char p[4200];

	for (size_t i = 0; i < rs->n; i++)
		json_array_append_new(a, rq_result_to_json(rs->v[i], false));
	json_t *o = json_pack("{s:s, s:o}", "schema", "rdmaqual-results/0", "results", a);
	char *t = json_dumps(o, JSON_INDENT(1));

	snprintf(p, sizeof(p), "%s/results.json", r->dir);
	write_file_atomic(p, t, strlen(t));
	free(t);
	json_decref(o);

	struct sb sb = SB_INIT;
	struct xml x;

	xml_begin(&x, &sb);
	xml_open(&x, "testsuites");
	xml_open(&x, "testsuite");
	xml_attr(&x, "name", "rdmaqual");
	for (size_t i = 0; i < rs->n; i++) {
		xml_open(&x, "testcase");
		xml_attr(&x, "name", rs->v[i]->id);
		xml_close(&x);
	}
	xml_end(&x);
	snprintf(p, sizeof(p), "%s/junit.xml", r->dir);
	write_file_atomic(p, sb.buf, sb.len);
	sb_release(&sb);
}

void runrep_end(struct runrep *r, struct rq_results *rs)
{
	runrep_flush(r, rs);
}

void runrep_release(struct runrep *r)
{
	free(r->dir);
	free(r->run_id);
}

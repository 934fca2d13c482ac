/* SPDX-License-Identifier: MIT */
/*
 * results.json, schema "rdmaqual-results/1" (docs/reports.md).  Rows use
 * the same encoding as the agent protocol (rq_result_to_json), minus the
 * log text: the log's path is in "log_path".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "core/json_text.h"
#include "report/report.h"

char *rq_json_render(const struct rq_run_info *ri, const struct rq_results *rs)
{
	json_t *root = json_object();
	json_t *run = json_object();
	json_t *facts = json_object();
	json_t *counts = json_object();
	json_t *rows = json_array();
	struct rq_counts c;
	char *text;

	json_object_set_new(root, "schema", json_string(RQ_RESULTS_SCHEMA));
	json_object_set_new(run, "id", rq_json_text(ri->run_id));
	json_object_set_new(run, "started", rq_json_text(ri->started));
	json_object_set_new(run, "finished", rq_json_text(ri->finished));
	json_object_set_new(run, "complete", json_boolean(ri->finished != NULL));
	json_object_set_new(run, "hostname", rq_json_text(ri->hostname));
	json_object_set_new(run, "version", rq_json_text(ri->version));
	json_object_set_new(run, "argv", rq_json_text(ri->argv));
	json_object_set_new(run, "duration_s", json_real(ri->duration_s));
	json_object_set_new(root, "run", run);
	for (size_t i = 0; i < ri->nfacts; i++)
		rq_json_set_text(facts, ri->facts[i].key, rq_json_text(ri->facts[i].value));
	json_object_set_new(root, "facts", facts);
	rq_results_count(rs, &c);
	json_object_set_new(counts, "total", json_integer(c.total));
	json_object_set_new(counts, "pass", json_integer(c.pass));
	json_object_set_new(counts, "fail", json_integer(c.fail));
	json_object_set_new(counts, "skip", json_integer(c.skip));
	json_object_set_new(counts, "error", json_integer(c.error));
	json_object_set_new(root, "counts", counts);
	for (size_t i = 0; i < rs->n; i++)
		json_array_append_new(rows, rq_result_to_json(rs->v[i], false));
	json_object_set_new(root, "results", rows);
	if (ri->lab)
		json_object_set(root, "lab", ri->lab);
	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	json_decref(root);
	if (!text)
		abort();	/* only on OOM: everything above is valid UTF-8 */
	char *out = xasprintf("%s\n", text);
	free(text);
	return out;
}

int rq_json_write(const char *path, const struct rq_run_info *ri, const struct rq_results *rs)
{
	char *text = rq_json_render(ri, rs);
	int ret = write_file_atomic(path, text, strlen(text));

	free(text);
	return ret;
}

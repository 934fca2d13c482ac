/* SPDX-License-Identifier: MIT */
/*
 * results.json, schema "rdmaqual-results/1" (docs/reports.md).  Rows use
 * the same encoding as the agent protocol (rq_result_to_json), minus the
 * log text: the log's path is in "log_path".
 *
 * Written a row at a time, never as one tree: a lab run's 122,880 rows
 * made a tree of ~700 MB.  Each row is dumped on its own and indented by
 * the depth it has in the document, which is exactly what jansson writes
 * for the whole (its indentation is additive), so the file is byte for
 * byte the document's dump.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "core/json_text.h"
#include "report/report.h"

#define DUMP_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10))
/* What the writer holds before it writes to the file. */
#define FLUSH_BYTES (1u << 20)

/* v's dump, each line after the first indented by pad more spaces. */
static void add_dump(struct sb *out, json_t *v, const char *pad)
{
	char *text = json_dumps(v, DUMP_FLAGS | JSON_ENCODE_ANY);

	if (!text)
		abort();	/* only on OOM: everything is valid UTF-8 */
	for (const char *p = text, *nl; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl) {
			sb_adds(out, p);
			break;
		}
		sb_add(out, p, (size_t)(nl - p) + 1);
		sb_adds(out, pad);
	}
	free(text);
}

json_t *rq_json_head(const struct rq_run_info *ri, const struct rq_results *rs)
{
	json_t *root = json_object();
	json_t *run = json_object();
	json_t *facts = json_object();
	json_t *counts = json_object();
	struct rq_counts c;

	json_object_set_new(root, "schema", json_string(RQ_RESULTS_SCHEMA));
	json_object_set_new(run, "id", rq_json_text(ri->run_id));
	json_object_set_new(run, "started", rq_json_text(ri->started));
	json_object_set_new(run, "finished", rq_json_text(ri->finished));
	json_object_set_new(run, "complete", json_boolean(ri->finished != NULL));
	/* a replay of a synthesized tree: its verdicts are a fixture's, not a machine's */
	json_object_set_new(run, "synthesized", json_boolean(rq_run_info_synthesized(ri)));
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
	return root;
}

/* Into out, written to f (when not NULL) as it grows. */
static void render(struct sb *out, struct afile *f, const struct rq_run_info *ri,
		   const struct rq_results *rs)
{
	json_t *root = rq_json_head(ri, rs);
	size_t n = rq_results_total(rs);
	char *head;

	/* The head without its closing "\n}", then the rows, the lab, the end. */
	head = json_dumps(root, DUMP_FLAGS);
	json_decref(root);
	if (!head)
		abort();
	sb_add(out, head, strlen(head) - 2);
	free(head);
	sb_adds(out, ",\n  \"results\": [");
	for (size_t i = 0; i < n; i++) {
		json_t *row = rq_result_to_json(rq_results_get(rs, i), false);

		sb_adds(out, i ? ",\n    " : "\n    ");
		add_dump(out, row, "    ");
		json_decref(row);
		if (f)
			afile_drain(f, out, FLUSH_BYTES);
	}
	sb_adds(out, n ? "\n  ]" : "]");
	if (ri->lab) {
		sb_adds(out, ",\n  \"lab\": ");
		add_dump(out, ri->lab, "  ");
	}
	sb_adds(out, "\n}\n");
}

char *rq_json_render(const struct rq_run_info *ri, const struct rq_results *rs)
{
	struct sb out = SB_INIT;

	render(&out, NULL, ri, rs);
	return sb_detach(&out);
}

int rq_json_write(int dirfd, const char *name, const struct rq_run_info *ri, const struct rq_results *rs)
{
	struct afile f;
	struct sb out = SB_INIT;
	int ret = afile_open_at(&f, dirfd, name);

	if (ret)
		return ret;
	render(&out, &f, ri, rs);
	afile_drain(&f, &out, 0);
	sb_release(&out);
	return afile_commit(&f);
}

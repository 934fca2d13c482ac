// SPDX-License-Identifier: MIT
/*
 * Reading results.json back (run_doc.h).  Rows are decoded by
 * rq_result_from_json, the head here; nothing else spells the document's
 * keys on the reading side.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>
#include "core/json_text.h"
#include "core/run_doc.h"
#include "core/util.h"

void rq_run_doc_init(struct rq_run_doc *d)
{
	memset(d, 0, sizeof(*d));
}

static void drop_rows(struct rq_run_doc *d)
{
	for (size_t i = 0; i < d->n; i++)
		rq_result_free(d->rows[i]);
	d->n = d->seen = 0;
	free(d->row_err);
	d->row_err = NULL;
}

static void drop_head(struct rq_run_doc *d)
{
	struct rq_run_head *h = &d->run;

	free(h->id);
	free(h->started);
	free(h->finished);
	free(h->hostname);
	free(h->version);
	free(h->argv);
	memset(h, 0, sizeof(*h));
	for (size_t i = 0; i < d->nfacts; i++) {
		free(d->facts[i].key);
		free(d->facts[i].value);
	}
	free(d->facts);
	d->facts = NULL;
	d->nfacts = 0;
	free(d->schema);
	free(d->head_err);
	free(d->facts_err);
	d->schema = d->head_err = d->facts_err = NULL;
	json_decref(d->head);
	d->head = d->lab = NULL;
	d->has_run = false;
	memset(&d->counts, 0, sizeof(d->counts));
}

void rq_run_doc_release(struct rq_run_doc *d)
{
	drop_rows(d);
	drop_head(d);
	free(d->rows);
	memset(d, 0, sizeof(*d));
}

void rq_run_doc_results(struct rq_run_doc *d, bool array)
{
	drop_rows(d);
	d->results_array = array;
}

/* What compare reads of a row and no more: a 112 MB file's rows in a third of their size. */
static void compact(struct rq_result *r)
{
	/* r->kind and r->judge stay: they name the row's key figures (cmp_key_figure). */
	free(r->target_why);
	free(r->log_path);
	free(r->file);
	free(r->node);
	free(r->peer_node);
	r->target_why = r->log_path = r->file = r->node = r->peer_node = NULL;
	sb_release(&r->log);
}

void rq_run_doc_row(struct rq_run_doc *d, json_t *v)
{
	size_t i = d->seen++;
	char why[256], *named = NULL;
	struct rq_result *r;

	if (d->row_err)
		return;		/* the first bad row is the one named */
	r = rq_result_from_json_named(v, &named, why, sizeof(why));
	if (r && d->check_row && d->check_row(r, why, sizeof(why)))
		named = xstrdup(r->id);
	if (!r || named) {
		/* A bad row names its position; a bad figure of a good row, the row too. */
		d->row_err = named ? xasprintf("results[%zu] (%s): %s", i, named, why) :
				     xasprintf("results[%zu]: %s", i, why);
		free(named);
		rq_result_free(r);
		return;
	}
	if (d->flags & RQ_RUN_DOC_COMPACT)
		compact(r);
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 256;
		d->rows = xrealloc(d->rows, d->cap * sizeof(*d->rows));
	}
	d->rows[d->n++] = r;
}

static char *str_of(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? xstrdup(s) : NULL;
}

static unsigned count_of(json_t *o, const char *key)
{
	json_int_t v = json_integer_value(json_object_get(o, key));

	return v > 0 && v <= UINT32_MAX ? (unsigned)v : 0;
}

void rq_run_doc_head(struct rq_run_doc *d, json_t *head)
{
	json_t *schema, *run, *facts, *counts, *v;
	const char *k;

	drop_head(d);
	if (!json_is_object(head)) {
		json_decref(head);
		d->head_err = xstrdup("not a results.json: the document is not a JSON object");
		return;
	}
	d->head = head;
	schema = json_object_get(head, "schema");
	if (json_is_string(schema))
		d->schema = xstrdup(json_string_value(schema));
	if (!d->schema)
		d->head_err = xasprintf("not a results.json: no \"schema\" string (expected \"%s\")",
					RQ_RUN_DOC_SCHEMA);
	else if (strcmp(d->schema, RQ_RUN_DOC_SCHEMA))
		d->head_err = xasprintf("unknown schema \"%.60s\" (this rdmaqual reads \"%s\")", d->schema,
					RQ_RUN_DOC_SCHEMA);

	/* The run's header is read as leniently as it always was: a wrong type reads as absent. */
	run = json_object_get(head, "run");
	d->has_run = json_is_object(run);
	if (d->has_run) {
		d->run.id = str_of(run, "id");
		d->run.started = str_of(run, "started");
		d->run.finished = str_of(run, "finished");
		d->run.hostname = str_of(run, "hostname");
		d->run.version = str_of(run, "version");
		d->run.argv = str_of(run, "argv");
		d->run.complete = json_is_true(json_object_get(run, "complete"));
		d->run.synthesized = json_is_true(json_object_get(run, "synthesized"));
		d->run.duration_s = json_number_value(json_object_get(run, "duration_s"));
		d->run.repeats = count_of(run, "repeats");
	}

	facts = json_object_get(head, "facts");
	if (facts && !json_is_null(facts) && !json_is_object(facts))
		d->facts_err = xstrdup("\"facts\" is not an object");
	json_object_foreach(json_is_object(facts) ? facts : NULL, k, v) {
		if (!json_is_string(v)) {
			d->facts_err = xasprintf("fact \"%.40s\" is not a string", k);
			break;
		}
		d->facts = xrealloc(d->facts, (d->nfacts + 1) * sizeof(*d->facts));
		d->facts[d->nfacts++] = (struct rq_fact){ xstrdup(k), xstrdup(json_string_value(v)) };
	}

	counts = json_object_get(head, "counts");
	d->counts = (struct rq_counts){
		.total = count_of(counts, "total"), .pass = count_of(counts, "pass"),
		.fail = count_of(counts, "fail"), .skip = count_of(counts, "skip"),
		.error = count_of(counts, "error"),
	};
	v = json_object_get(head, "lab");
	d->lab = v && !json_is_null(v) ? v : NULL;
}

void rq_run_doc_from_json(struct rq_run_doc *d, json_t *doc)
{
	json_t *rows = json_object_get(doc, "results"), *v;
	size_t i;

	rq_run_doc_results(d, json_is_array(rows));
	json_array_foreach(rows, i, v)
		rq_run_doc_row(d, v);
	/* the head keeps "results" (the caller's tree, not to be cut); nothing reads it there */
	rq_run_doc_head(d, json_incref(doc));
}

int rq_run_doc_check(const struct rq_run_doc *d, char *err, size_t errsz)
{
	const char *e = d->head_err;

	if (!e && !d->results_array)
		e = "\"results\" is missing or not an array";
	if (!e)
		e = d->facts_err;
	if (!e)
		e = d->row_err;
	if (!e)
		return 0;
	snprintf(err, errsz, "%s", e);
	return -EINVAL;
}

struct rq_result *rq_run_doc_find(const struct rq_run_doc *d, const char *id)
{
	for (size_t i = 0; id && i < d->n; i++)
		if (!strcmp(d->rows[i]->id, id))
			return d->rows[i];
	return NULL;
}

const char *rq_run_doc_fact(const struct rq_run_doc *d, const char *key)
{
	/*
	 * The head's object is a hash: compare looks a fact up for every row
	 * (a lab run: 100k rows, thousands of facts).  d->facts holds the same.
	 */
	return json_string_value(json_object_get(json_object_get(d->head, "facts"), key));
}

static json_t *counts_json(const struct rq_counts *c)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I}", "total", (json_int_t)c->total, "pass",
			 (json_int_t)c->pass, "fail", (json_int_t)c->fail, "skip", (json_int_t)c->skip,
			 "error", (json_int_t)c->error);
}

json_t *rq_run_doc_to_json(const struct rq_run_doc *d)
{
	json_t *out = json_object(), *rows = json_array(), *v;
	const char *k;

	for (size_t i = 0; i < d->n; i++)
		json_array_append_new(rows, rq_result_to_json(d->rows[i], false));
	json_object_foreach(d->head, k, v) {
		if (!strcmp(k, "results")) {
			json_object_set_new(out, k, json_incref(rows));
		} else if (!strcmp(k, "counts")) {
			json_object_set_new(out, k, counts_json(&d->counts));
		} else if (!strcmp(k, "run") && json_is_object(v)) {
			json_t *run = json_deep_copy(v);

			json_object_set_new(run, "complete", json_boolean(d->run.complete));
			if (d->run.repeats)
				json_object_set_new(run, "repeats", json_integer(d->run.repeats));
			json_object_set_new(out, k, run);
		} else {
			json_object_set_new(out, k, json_deep_copy(v));
		}
	}
	/* a head without them (a merge of documents that had none) gets them last, as a writer adds them */
	if (!json_object_get(out, "results"))
		json_object_set_new(out, "results", json_incref(rows));
	if (!json_object_get(out, "counts"))
		json_object_set_new(out, "counts", counts_json(&d->counts));
	json_decref(rows);
	return out;
}

/* ---- reading a file a row at a time ------------------------------------ */

/*
 * The top level is read here, each value but the rows parsed whole, and
 * each row of "results" parsed on its own (json_loadf stops at the end of
 * an object with JSON_DISABLE_EOF_CHECK) and handed to rq_run_doc_row.
 * Anything this small reader does not expect (not JSON, a row that is not
 * an object, text after the document) makes it give up, and the whole file
 * is read for jansson's message.
 */
static int skip_ws(FILE *f)
{
	int c;

	while ((c = getc(f)) == ' ' || c == '\t' || c == '\n' || c == '\r')
		;
	return c;
}

/* A JSON string whose opening quote was read, decoded by jansson; NULL if bad. */
static json_t *read_string(FILE *f)
{
	struct sb raw = SB_INIT;
	bool esc = false;
	json_t *v = NULL;
	int c;

	sb_addc(&raw, '"');
	while ((c = getc(f)) != EOF) {
		sb_addc(&raw, (char)c);
		if (esc)
			esc = false;
		else if (c == '\\')
			esc = true;
		else if (c == '"')
			break;
	}
	if (c == '"')
		v = json_loadb(raw.buf, raw.len, JSON_DECODE_ANY, NULL);
	sb_release(&raw);
	return v;
}

/* A value whose first character c was read: object, array, string or a bare word. */
static json_t *read_value(FILE *f, int c)
{
	struct sb word = SB_INIT;
	json_t *v;

	if (c == '{' || c == '[') {
		ungetc(c, f);
		return json_loadf(f, JSON_DISABLE_EOF_CHECK, NULL);
	}
	if (c == '"')
		return read_string(f);
	/* a number, true, false or null: up to the next delimiter */
	while (c != EOF && !strchr(",}] \t\r\n", c)) {
		sb_addc(&word, (char)c);
		c = getc(f);
	}
	if (c != EOF)
		ungetc(c, f);
	v = word.len ? json_loadb(word.buf, word.len, JSON_DECODE_ANY, NULL) : NULL;
	sb_release(&word);
	return v;
}

static int read_rows(FILE *f, struct rq_run_doc *d)
{
	int c = skip_ws(f);

	if (c == ']')
		return 0;
	for (;;) {
		json_t *row;

		if (c != '{')
			return -1;
		ungetc(c, f);
		row = json_loadf(f, JSON_DISABLE_EOF_CHECK, NULL);
		if (!row)
			return -1;
		rq_run_doc_row(d, row);
		json_decref(row);
		c = skip_ws(f);
		if (c == ']')
			return 0;
		if (c != ',')
			return -1;
		c = skip_ws(f);
	}
}

/* The members of the top-level object into head, its rows into d. */
static int read_members(FILE *f, struct rq_run_doc *d, json_t *head)
{
	int c = skip_ws(f);

	if (c == '}')
		return skip_ws(f) == EOF ? 0 : -1;
	for (;;) {
		json_t *key, *v;
		int ret = 0;

		if (c != '"' || !(key = read_string(f)))
			return -1;
		if (skip_ws(f) != ':') {
			json_decref(key);
			return -1;
		}
		c = skip_ws(f);
		if (!strcmp(json_string_value(key), "results") && c == '[') {
			/*
			 * A later "results" wins, as in jansson.  The head keeps
			 * a null in its place, so that a document written again
			 * (rq_run_doc_to_json) has its keys in the file's order.
			 */
			rq_run_doc_results(d, true);
			json_object_set_new(head, "results", json_null());
			ret = read_rows(f, d);
		} else if ((v = read_value(f, c))) {
			if (!strcmp(json_string_value(key), "results"))
				rq_run_doc_results(d, false);
			json_object_set_new(head, json_string_value(key), v);
		} else {
			ret = -1;
		}
		json_decref(key);
		if (ret)
			return -1;
		c = skip_ws(f);
		if (c == '}')
			return skip_ws(f) == EOF ? 0 : -1;
		if (c != ',')
			return -1;
		c = skip_ws(f);
	}
}

static int stream(FILE *f, struct rq_run_doc *d)
{
	json_t *head;

	if (skip_ws(f) != '{')
		return -1;
	head = json_object();
	if (read_members(f, d, head)) {
		json_decref(head);
		return -1;
	}
	rq_run_doc_head(d, head);
	return 0;
}

static int load_whole(struct rq_run_doc *d, const char *path, char *err, size_t errsz)
{
	struct sb text = SB_INIT;
	json_error_t je;
	json_t *doc;
	int ret = read_file(path, &text, RQ_RUN_DOC_MAX);

	if (ret) {
		snprintf(err, errsz, "%s: %s", path, strerror(-ret));
		sb_release(&text);
		return ret;
	}
	if (text.len >= RQ_RUN_DOC_MAX) {	/* read_file stops at the limit */
		snprintf(err, errsz, "%s: larger than %u MiB, not read", path, RQ_RUN_DOC_MAX >> 20);
		sb_release(&text);
		return -EFBIG;
	}
	doc = json_loadb(text.buf, text.len, 0, &je);
	sb_release(&text);
	if (!doc) {
		snprintf(err, errsz, "%s: not a results.json: not JSON (line %d: %s)", path, je.line, je.text);
		return -EINVAL;
	}
	rq_run_doc_from_json(d, doc);
	json_decref(doc);
	return 0;
}

int rq_run_doc_load(struct rq_run_doc *d, const char *path, char *err, size_t errsz)
{
	unsigned flags = d->flags;
	int (*check_row)(const struct rq_result *, char *, size_t) = d->check_row;
	char why[512];
	struct stat st;
	FILE *f = fopen(path, "re");
	int ret = -1;

	if (f && !fstat(fileno(f), &st) && S_ISREG(st.st_mode) && (uint64_t)st.st_size < RQ_RUN_DOC_MAX)
		ret = stream(f, d);
	if (f)
		fclose(f);
	if (ret) {
		/* the whole-file reader says what is wrong */
		rq_run_doc_release(d);
		d->flags = flags;
		d->check_row = check_row;
		ret = load_whole(d, path, err, errsz);
		if (ret)
			return ret;
	}
	if (rq_run_doc_check(d, why, sizeof(why))) {
		snprintf(err, errsz, "%s: %s", path, why);
		return -EINVAL;
	}
	return 0;
}

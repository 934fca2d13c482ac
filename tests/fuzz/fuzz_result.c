/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer entry for rq_result_from_json() (make fuzz / fuzz-brief): the
 * rows an agent sends back are untrusted (a foreign build, a broken node, a
 * console that echoes garbage).  The input is JSON text, loaded with jansson
 * as the harness does; besides "no crash, no leak, no UB" it checks:
 *   - a refused row comes with a reason;
 *   - an accepted row survives the wire: rq_result_to_json(row, false),
 *     dumped and loaded back with the harness's flags, decodes again into
 *     the same row (all fields but the log, which the wire leaves out);
 *   - with the log (results kept in memory, with_log=true) it decodes into
 *     the same row, log included;
 *   - as a whole results.json (core/run_doc.c), the file read a row at a
 *     time and the text parsed whole give the same verdict on it: both
 *     refuse it with the same words, or both read the same rows.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "core/target.h"
#include "core/kind.h"
#include "core/result.h"
#include "core/run_doc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *diff;

static bool same_str(const char *a, const char *b, const char *what)
{
	if ((!a && !b) || (a && b && !strcmp(a, b)))
		return true;
	diff = what;
	return false;
}

static bool same_num(double a, double b, const char *what)
{
	if (a == b || (isnan(a) && isnan(b)))
		return true;
	diff = what;
	return false;
}

static bool same_row(const struct rq_result *a, const struct rq_result *b, bool log)
{
	if (!same_str(a->id, b->id, "id") ||
	    !same_str(a->case_name, b->case_name, "case") ||
	    !same_str(a->kind, b->kind, "kind") ||
	    !same_str(a->device, b->device, "device") ||
	    !same_str(a->reason, b->reason, "reason") ||
	    !same_str(a->target, b->target, "target") ||
	    !same_str(a->target_why, b->target_why, "target_why") ||
	    !same_str(a->log_path, b->log_path, "log_path") ||
	    !same_str(a->file, b->file, "file") ||
	    !same_num(a->duration_s, b->duration_s, "duration_s"))
		return false;
	diff = "port, verdict, judged or failed";
	if (a->port != b->port || a->verdict != b->verdict ||
	    a->judged != b->judged || a->failed != b->failed)
		return false;
	diff = "number of figures or facts";
	if (a->nfigs != b->nfigs || a->nfacts != b->nfacts)
		return false;
	for (size_t i = 0; i < a->nfigs; i++) {
		const struct rq_spread *x = a->figs[i].spread, *y = b->figs[i].spread;

		if (!same_str(a->figs[i].name, b->figs[i].name, "figure name") ||
		    !same_num(a->figs[i].value, b->figs[i].value, "figure value") ||
		    !same_str(a->figs[i].unit, b->figs[i].unit, "figure unit"))
			return false;
		diff = "figure spread";
		if (!x != !y)
			return false;
		if (!x)
			continue;
		if (x->n != y->n || x->nsamples != y->nsamples || !same_num(x->min, y->min, "spread min") ||
		    !same_num(x->max, y->max, "spread max"))
			return false;
		for (size_t k = 0; k < x->nsamples; k++)
			if (!same_num(x->samples[k], y->samples[k], "spread sample"))
				return false;
	}
	for (size_t i = 0; i < a->nfacts; i++)
		if (!same_str(a->facts[i].key, b->facts[i].key, "fact key") ||
		    !same_str(a->facts[i].value, b->facts[i].value, "fact value"))
			return false;
	diff = "log";
	if (log && (a->log.len != b->log.len ||
		    (a->log.len && memcmp(a->log.buf, b->log.buf, a->log.len))))
		return false;
	return true;
}

static void fail(const char *what, const char *in, const char *err)
{
	fprintf(stderr, "%s%s%s\n  input: %s\n", what, err ? ": " : "", err ? err : "", in);
	abort();
}

/* Encode r, decode it again (through text when wire), compare. */
static void round_trip(const struct rq_result *r, bool wire, const char *in)
{
	json_t *j = rq_result_to_json(r, !wire), *back;
	struct rq_result *r2;
	json_error_t jerr;
	char err[256] = "", *text = NULL;

	if (wire) {
		text = json_dumps(j, JSON_COMPACT);
		if (!text)
			fail("encoded row does not dump", in, NULL);
		back = json_loads(text, 0, &jerr);	/* as src/agent/agent.c reads a line */
		if (!back)
			fail("encoded row does not load back", text, jerr.text);
	} else {
		back = json_incref(j);
	}
	r2 = rq_result_from_json(back, err, sizeof(err));
	if (!r2)
		fail(wire ? "wire round trip refused" : "round trip refused", in, err);
	if (!same_row(r, r2, !wire))
		fail(wire ? "wire round trip changed the row" : "round trip changed the row",
		     in, diff);
	rq_result_free(r2);
	json_decref(back);
	json_decref(j);
	free(text);
}

/* The input as a results.json file: streamed by rq_run_doc_load, and whole. */
static void as_document(const uint8_t *data, size_t size, const char *in)
{
	char path[] = "/tmp/rq-fuzz-rundoc.XXXXXX", err[600] = "", werr[600] = "";
	struct rq_run_doc s, w;
	json_t *doc;
	int fd = mkstemp(path), rs, rw;

	if (fd < 0)
		abort();
	if (write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
	rq_run_doc_init(&s);
	rs = rq_run_doc_load(&s, path, err, sizeof(err));
	unlink(path);
	/* as load_whole reads it: a text jansson refuses is refused by both */
	doc = json_loadb((const char *)data, size, 0, NULL);
	if (!doc) {
		if (!rs)
			fail("the streamed reader took what jansson refuses", in, NULL);
		rq_run_doc_release(&s);
		return;
	}
	rq_run_doc_init(&w);
	rq_run_doc_from_json(&w, doc);
	rw = rq_run_doc_check(&w, werr, sizeof(werr));
	if (!rs != !rw || (rs && strcmp(err + strlen(path) + 2, werr)))
		fail("streamed and whole readings differ", in, rs ? err : werr);
	if (!rs && s.n != w.n)
		fail("streamed and whole readings have different rows", in, NULL);
	json_decref(doc);
	rq_run_doc_release(&s);
	rq_run_doc_release(&w);
}

/* The program hands its kinds and targets to core at start; so does the fuzzer. */
__attribute__((constructor)) static void install_registries(void)
{
	rq_kinds_install();
	rq_targets_install();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rq_result *r;
	json_error_t jerr;
	char err[256], *in;
	json_t *j;

	/* the NUL-less copy keeps the message printable; jansson gets the bytes */
	in = strndup((const char *)data, size);
	if (!in)
		abort();
	/* ALLOW_NUL reaches the log's NUL handling; DECODE_ANY the non-objects */
	if (size && data[0] == '{')
		as_document(data, size, in);
	j = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
	if (!j) {
		free(in);
		return 0;
	}
	memset(err, 0, sizeof(err));
	r = rq_result_from_json(j, err, sizeof(err));
	if (!r) {
		if (!err[0])
			fail("refused without a reason", in, NULL);
	} else {
		round_trip(r, true, in);
		round_trip(r, false, in);
		rq_result_free(r);
	}
	/* a NULL err buffer is allowed (result.c's dummy) */
	rq_result_free(rq_result_from_json(j, NULL, 0));
	json_decref(j);
	free(in);
	return 0;
}

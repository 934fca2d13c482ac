/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer entry for the run engine's untrusted inputs (make fuzz /
 * fuzz-brief).  The first byte picks what the rest is:
 *   even: agent answers, one JSON text a line, the first the client's (it
 *         reports), any more a server's or further ranks' (they explain):
 *         rq_unit_rows + rq_rows_stamp.  Checks: every reporting side gives
 *         at least one row, every row has its verdict before stamping and,
 *         unless it passed, a reason; a failing non-reporting side leaves
 *         no reported row PASS; stamping puts the node into every id.
 *   odd:  a journal (journal.jsonl as --resume reads it): rq_journal_parse,
 *         then every unit's rows decoded as a resume does.  Checks: each
 *         parsed line is an object, a torn last line is never taken, a
 *         refused row has a reason.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "core/kind.h"
#include "core/result.h"
#include "core/target.h"
#include "core/util.h"
#include "exec/journal.h"
#include "exec/unit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_SIDES 4

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_exec: %s\n", what);
	abort();
}

static void answers(const char *text)
{
	static const char *const label[MAX_SIDES] = { "client", "server", "rank 2", "rank 3" };
	struct rq_case c = { .name = (char *)"f.case", .kind = rq_kind_find("command"),
			     .file = (char *)"f.yaml", .timeout_ms = 1000 };
	struct rq_results rows = { 0 };
	struct sb log = SB_INIT;
	struct rq_unit u;
	size_t n = 0;
	bool server_bad = false;
	char *dup = xstrdup(text), *save = NULL;

	rq_unit_init(&u, &c, MAX_SIDES);
	for (char *l = strtok_r(dup, "\n", &save); l && n < MAX_SIDES; l = strtok_r(NULL, "\n", &save)) {
		u.side[n].label = n ? label[n] : "client";
		u.side[n].reports = n == 0;
		u.side[n].ans = json_loads(l, JSON_ALLOW_NUL, NULL);	/* NULL: "did not answer" */
		n++;
	}
	free(dup);
	if (!n) {
		rq_unit_release(&u);
		return;
	}
	u.nsides = n;
	/* what a side that does not report said on its own: does it fail? */
	for (size_t s = 1; s < n; s++) {
		struct rq_results one = { 0 };
		struct sb l2 = SB_INIT;

		rq_answer_rows(&c, u.side[s].ans, "did not answer", &one, &l2);
		for (size_t i = 0; i < one.n; i++)
			server_bad = server_bad || one.v[i]->verdict != RQ_PASS;
		rq_results_release(&one);
		sb_release(&l2);
	}
	rq_unit_rows(&u, &rows, &log);
	if (!rows.n)
		fail("a reporting side gave no row");
	/* decided before stamping: a side explains another by its verdict */
	for (size_t i = 0; i < rows.n; i++)
		if (rows.v[i]->verdict == RQ_NONE)
			fail("an answer's row left undecided");
	struct rq_stamp st = { .target = "local", .target_why = "fuzz", .node = "n1", .log = &log };

	rq_rows_stamp(rows.v, rows.n, &c, &st);
	for (size_t i = 0; i < rows.n; i++) {
		const struct rq_result *r = rows.v[i];

		if (r->verdict == RQ_NONE)
			fail("a row without a verdict");
		if (r->verdict != RQ_PASS && (!r->reason || !*r->reason))
			fail("a row that did not pass says no why");
		if (server_bad && r->verdict == RQ_PASS)
			fail("a failing server left its client PASS");
		if (!r->id || !strstr(r->id, "[n1"))
			fail("a stamped id without its node");
		if (!r->node || strcmp(r->node, "n1"))
			fail("a stamped row without its node");
	}
	u.nsides = MAX_SIDES;
	rq_unit_release(&u);
	rq_results_release(&rows);
	sb_release(&log);
}

static void journal(const char *text, size_t len)
{
	char *buf = xstrndup(text, len);
	size_t nl = 0;
	json_t *lines, *l;
	size_t i;

	for (const char *p = buf; (p = strchr(p, '\n')); p++)
		nl++;
	lines = rq_journal_parse(buf);

	json_array_foreach(lines, i, l) {
		json_t *rows = json_object_get(l, "rows"), *j;
		size_t k;

		if (!json_is_object(l))
			fail("a journal line that is not an object");
		json_array_foreach(rows, k, j) {
			char err[128] = "";
			struct rq_result *r = rq_result_from_json(j, err, sizeof(err));

			if (!r && !err[0])
				fail("a refused journal row without a reason");
			rq_result_free(r);
		}
	}
	/* a line ends with a newline: what follows the last was never written whole */
	if (json_array_size(lines) > nl)
		fail("a torn line was taken");
	json_decref(lines);
	free(buf);
}

/* The program hands its kinds and targets to core at start; so does the fuzzer. */
__attribute__((constructor)) static void install_registries(void)
{
	rq_kinds_install();
	rq_targets_install();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	char *text = xstrndup((const char *)data + 1, size - 1);

	if (data[0] & 1)
		journal((const char *)data + 1, size - 1);
	else
		answers(text);
	free(text);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer entry for the case loader (make fuzz / fuzz-brief).  Case files
 * are trusted like scripts, but the loader also reads cases that arrive in
 * agent requests, and a loader that crashes on a typo is a bad loader.
 * Besides "no crash, no leak" (ASan, UBSan) it checks two properties:
 *   - every diagnostic has a message and a position inside the input;
 *   - every loaded case survives the agent's round trip: rq_case_wire()
 *     loads back with rq_case_wire_load() into a case whose wire form is
 *     the same.
 * The same bytes, when they are JSON, are also loaded as a case's wire form.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "core/target.h"
#include "core/case.h"
#include "core/kind.h"
#include "core/util.h"
#include "../rich_kind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_diags(const struct rq_diags *d, const uint8_t *data, size_t size)
{
	unsigned lines = 1;

	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n' || data[i] == '\r';
	for (size_t i = 0; i < d->n; i++) {
		if (!d->v[i].msg || !d->v[i].msg[0] || !d->v[i].file)
			abort();
		if (d->v[i].line > lines + 1 || d->v[i].col > size + 2)
			abort();
	}
}

static char *wire_text(const struct rq_case *c)
{
	json_t *j = rq_case_wire(c);
	char *t = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);

	json_decref(j);
	return t;
}

static void round_trip(const struct rq_case *c)
{
	struct rq_suite s = { 0 };
	struct rq_diags d = { 0 };
	char *j1 = wire_text(c), *j2;
	json_error_t jerr;
	json_t *j;

	/* the way the case travels: a line of JSON, read by jansson in the agent */
	j = j1 ? json_loads(j1, 0, &jerr) : NULL;
	if (!j) {
		fprintf(stderr, "not JSON (%s): %s\n", jerr.text, j1 ? j1 : "(null)");
		abort();
	}
	if (rq_case_wire_load(j, &s, &d) != 0 || s.ncases != 1) {
		fprintf(stderr, "round trip failed for %s\n", j1);
		rq_diags_print(&d, stderr);
		abort();
	}
	json_decref(j);
	j2 = wire_text(s.cases[0]);
	if (strcmp(j1, j2)) {
		fprintf(stderr, "round trip changed the case:\n%s\n%s\n", j1, j2);
		abort();
	}
	free(j1);
	free(j2);
	rq_suite_release(&s);
	rq_diags_release(&d);
}

/* The program hands its kinds and targets to core at start; so does the fuzzer. */
__attribute__((constructor)) static void install_registries(void)
{
	rq_kinds_install();
	rq_targets_install();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	struct rq_suite s = { 0 };
	struct rq_diags d = { 0 };

	if (!null) {
		rich_kinds_register();
		null = fopen("/dev/null", "w");
	}
	rq_load_buffer("fuzz.yaml", (const char *)data, size, &s, &d);
	check_diags(&d, data, size);
	for (size_t i = 0; i < s.ncases; i++)
		round_trip(s.cases[i]);
	rq_suite_check_dups(&s, &d);
	rq_diags_print(&d, null);
	rq_suite_release(&s);
	rq_diags_release(&d);

	/* the same bytes as an agent's case object (positions are its own) */
	json_error_t jerr;
	json_t *j = json_loadb((const char *)data, size, JSON_ALLOW_NUL, &jerr);

	if (j) {
		rq_case_wire_load(j, &s, &d);
		json_decref(j);
		for (size_t i = 0; i < d.n; i++)
			if (!d.v[i].msg || !d.v[i].msg[0] || !d.v[i].file)
				abort();
		for (size_t i = 0; i < s.ncases; i++)
			round_trip(s.cases[i]);
		rq_suite_release(&s);
		rq_diags_release(&d);
	}
	return 0;
}

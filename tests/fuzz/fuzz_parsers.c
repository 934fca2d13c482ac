/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer entry for the tool-output parsers (make fuzz / fuzz-brief).
 * Tool output is untrusted in practice: other versions, locales, a tool that
 * died half-way, an agent that sends garbage.  The first input byte picks a
 * parser from rq_parsers[] (modulo their number), the rest is the text, in a
 * buffer of exactly that length (no NUL after it), so that ASan catches a
 * parser that reads past len.  Besides "no crash, no leak, no UB" it checks
 * the adapter contract of parsers.h:
 *   - 0 -> *out is a JSON object that jansson can dump;
 *   - otherwise -> a negative errno, err says why, and *out is untouched;
 *   - nothing is dropped on the way: jansson ignores a NULL value (what
 *     json_string() returns for text that is not UTF-8) and a key that is
 *     not UTF-8, so the answer would silently lack a field.  The link
 *     wraps json_object_set_new() and json_array_append_new() (-Wl,--wrap,
 *     see the Makefile) to catch both while a parser runs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "core/target.h"
#include "core/kind.h"
#include "parsers/parsers.h"
#include "core/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int __real_json_object_set_new(json_t *object, const char *key, json_t *value);
int __wrap_json_object_set_new(json_t *object, const char *key, json_t *value);
int __real_json_array_append_new(json_t *array, json_t *value);
int __wrap_json_array_append_new(json_t *array, json_t *value);

static const char *running;	/* the parser being run, NULL outside */

static bool utf8_ok(const char *s)
{
	size_t n = strlen(s), i = 0, l;
	uint32_t cp;

	for (; i < n; i += l)
		if (!(l = utf8_decode((const unsigned char *)s + i, n - i, &cp)))
			return false;
	return true;
}

int __wrap_json_object_set_new(json_t *object, const char *key, json_t *value)
{
	if (running && (!object || !key || !value || !utf8_ok(key))) {
		fprintf(stderr, "%s: field \"%s\" dropped (%s)\n", running, key ? key : "(null)",
			!object ? "no object" : !value ? "NULL value: text not UTF-8?" :
			"key not UTF-8");
		abort();
	}
	return __real_json_object_set_new(object, key, value);
}

int __wrap_json_array_append_new(json_t *array, json_t *value)
{
	if (running && (!array || !value)) {
		fprintf(stderr, "%s: array element dropped (%s)\n", running,
			!array ? "no array" : "NULL value: text not UTF-8?");
		abort();
	}
	return __real_json_array_append_new(array, value);
}

static size_t nparsers(void)
{
	size_t n = 0;

	while (rq_parsers[n])
		n++;
	return n;
}

/* The program hands its kinds and targets to core at start; so does the fuzzer. */
__attribute__((constructor)) static void install_registries(void)
{
	rq_kinds_install();
	rq_targets_install();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static size_t n;
	static int verbose = -1;
	static const json_t sentinel;
	const struct rq_parser *p;
	json_t *out = (json_t *)&sentinel;
	char err[256], *text, *dump;
	int ret;

	if (!n)
		n = nparsers();
	if (verbose < 0)	/* RQ_FUZZ_VERBOSE=1: say what each input did (seed checks) */
		verbose = getenv("RQ_FUZZ_VERBOSE") != NULL;
	if (size < 1 || !n)
		return 0;
	p = rq_parsers[data[0] % n];
	size--;
	/* malloc(0) may return NULL; one byte keeps the pointer valid */
	text = malloc(size ? size : 1);
	if (!text)
		abort();
	memcpy(text, data + 1, size);
	memset(err, 0, sizeof(err));

	running = p->name;
	ret = p->parse(text, size, &out, err, sizeof(err));
	running = NULL;
	if (verbose)
		fprintf(stderr, "%s: %d %s\n", p->name, ret, ret ? err : "ok");
	if (ret == 0) {
		if (out == &sentinel || !json_is_object(out)) {
			fprintf(stderr, "%s: returned 0 without a JSON object\n", p->name);
			abort();
		}
		dump = json_dumps(out, JSON_COMPACT);
		if (!dump) {
			fprintf(stderr, "%s: output does not dump\n", p->name);
			abort();
		}
		free(dump);
		json_decref(out);
	} else {
		if (ret > 0) {
			fprintf(stderr, "%s: returned %d, not 0 or -errno\n", p->name, ret);
			abort();
		}
		if (!err[0] || !memchr(err, '\0', sizeof(err))) {
			fprintf(stderr, "%s: failed (%d) without a reason\n", p->name, ret);
			abort();
		}
		if (out != &sentinel) {
			fprintf(stderr, "%s: failed (%d: %s) but set *out\n", p->name, ret, err);
			abort();
		}
	}
	free(text);
	return 0;
}

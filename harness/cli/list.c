/* SPDX-License-Identifier: MIT */
/* rdmaqual list: the cases the filters select, as a table or as JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <jansson.h>
#include "cli/cli.h"
#include "core/kind.h"

int cmd_list(int argc, char **argv)
{
	struct rq_suite suite = { 0 };
	struct case_filter f = { 0 };
	bool json = false;
	size_t n = 0;
	int ret = load_filtered("list", argc, argv, &suite, &f, &json);
	json_t *arr = json_array();

	if (ret) {
		json_decref(arr);
		filter_release(&f);
		rq_suite_release(&suite);
		return ret < 0 ? 0 : ret;
	}
	for (size_t i = 0; i < suite.ncases; i++) {
		struct rq_case *c = suite.cases[i];

		if (!filter_match(&f, c))
			continue;
		n++;
		if (!json) {
			printf("%-40s %-16s %s\n", c->name, c->kind->name, c->summary ? c->summary : "");
			continue;
		}
		json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:i, s:I}", "name", c->name,
				      "kind", c->kind->name, "summary", c->summary ? c->summary : "",
				      "file", c->file ? c->file : "", "line", (int)c->pos.line,
				      "timeout_ms", (json_int_t)c->timeout_ms);
		json_t *tags = json_array(), *targets = json_array();

		for (size_t t = 0; t < c->ntags; t++)
			json_array_append_new(tags, json_string(c->tags[t]));
		for (size_t t = 0; t < c->ntargets; t++)
			json_array_append_new(targets, json_string(c->targets[t]));
		json_object_set_new(o, "tags", tags);
		json_object_set_new(o, "targets", targets);
		json_array_append_new(arr, o);
	}
	if (json) {
		char *s = json_dumps(arr, JSON_INDENT(2));

		printf("%s\n", s);
		free(s);
	}
	json_decref(arr);
	filter_release(&f);
	rq_suite_release(&suite);
	if (!n) {
		fprintf(stderr, "rdmaqual list: the filters select no case\n");
		return RQ_EXIT_USAGE;
	}
	return 0;
}

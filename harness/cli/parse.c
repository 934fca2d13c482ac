/* SPDX-License-Identifier: MIT */
/* rdmaqual parse TOOL FILE: what a tool-output parser extracts, as JSON. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "cli/cli.h"
#include "core/util.h"
#include "parsers/parsers.h"

static void parse_usage(FILE *fp)
{
	fprintf(fp, "usage: rdmaqual parse TOOL FILE   (FILE - reads stdin)\ntools:");
	for (size_t i = 0; rq_parsers[i]; i++)
		fprintf(fp, " %s", rq_parsers[i]->name);
	fprintf(fp, "\n");
}

int cmd_parse(int argc, char **argv)
{
	const struct rq_parser *p;
	struct sb text = SB_INIT;
	char err[512] = "";
	json_t *out = NULL;
	int ret;

	if (argc != 3)
		return usage_out(argc, argv, parse_usage);
	p = rq_parser_find(argv[1]);
	if (!p)
		return usage_error("parse", "no parser for \"%s\"", argv[1]);
	ret = read_file(!strcmp(argv[2], "-") ? "/dev/stdin" : argv[2], &text, 0);
	if (ret) {
		fprintf(stderr, "rdmaqual parse: %s: %s\n", argv[2],
			ret == -EFBIG ? "larger than 16 MiB, the most parse reads" : strerror(-ret));
		return RQ_EXIT_FAIL;
	}
	if (p->parse(text.buf, text.len, &out, err, sizeof(err)) || !out) {
		fprintf(stderr, "rdmaqual parse: %s: %s\n", argv[2], err[0] ? err : "not recognised");
		sb_release(&text);
		json_decref(out);
		return RQ_EXIT_FAIL;
	}
	char *s = json_dumps(out, JSON_INDENT(2) | JSON_REAL_PRECISION(10));

	printf("%s\n", s);
	free(s);
	json_decref(out);
	sb_release(&text);
	return 0;
}

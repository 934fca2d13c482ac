/* SPDX-License-Identifier: MIT */
/* The small subcommands: list, lint, agent, cleanup, parse. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "agent/agent.h"
#include "cli/cli.h"
#include "core/kind.h"
#include "parsers/parsers.h"
#include "exec/statedir.h"

static int filtered_load(const char *cmd, int argc, char **argv, struct rq_suite *suite,
			 struct case_filter *f, bool *json)
{
	static const struct option lo[] = {
		{ "name", required_argument, NULL, 'k' },
		{ "tag", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "k:t:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'k': filter_add_glob(f, optarg); break;
		case 't': filter_add_tag(f, optarg); break;
		case 'j':
			if (!json)
				return usage_error(cmd, "--json is not an option of %s", cmd);
			*json = true;
			break;
		case 'h':
			printf("usage: rdmaqual %s [-k GLOB] [-t TAG]%s [FILE|DIR...]\n", cmd,
			       json ? " [--json]" : "");
			return -1;
		default:
			return RQ_EXIT_USAGE;
		}
	}
	return load_cases(argv + optind, argc - optind, suite);
}

int cmd_list(int argc, char **argv)
{
	struct rq_suite suite = { 0 };
	struct case_filter f = { 0 };
	bool json = false;
	size_t n = 0;
	int ret = filtered_load("list", argc, argv, &suite, &f, &json);
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

int cmd_lint(int argc, char **argv)
{
	struct rq_suite suite = { 0 };
	struct case_filter f = { 0 };
	int ret = filtered_load("lint", argc, argv, &suite, &f, NULL);

	if (!ret)
		printf("%zu case%s, no errors\n", suite.ncases, suite.ncases == 1 ? "" : "s");
	filter_release(&f);
	rq_suite_release(&suite);
	return ret < 0 ? 0 : ret;
}

static void agent_usage(FILE *fp)
{
	fprintf(fp, "usage: rdmaqual agent --stdio | --port DEVICE\n"
		"Serves the agent protocol (src/agent/agent.h); listens on no network port.\n");
}

int cmd_agent(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--stdio"))
		return rq_agent_serve(0, 1) ? RQ_EXIT_FAIL : 0;
	if (argc == 3 && !strcmp(argv[1], "--port")) {
		/* A virtio-serial port: one fd, both ways. */
		int fd = open(argv[2], O_RDWR | O_CLOEXEC | O_NOCTTY);

		if (fd < 0) {
			fprintf(stderr, "rdmaqual agent: cannot open %s: %s\n", argv[2], strerror(errno));
			return RQ_EXIT_FAIL;
		}
		return rq_agent_serve(fd, fd) ? RQ_EXIT_FAIL : 0;
	}
	return usage_out(argc, argv, agent_usage);
}

static void cleanup_usage(FILE *fp)
{
	fprintf(fp, "usage: rdmaqual cleanup [--state-dir DIR]\n"
		"Stops the VMs and daemons and undoes the settings a killed run left behind.\n");
}

static void parse_usage(FILE *fp)
{
	fprintf(fp, "usage: rdmaqual parse TOOL FILE   (FILE - reads stdin)\ntools:");
	for (size_t i = 0; rq_parsers[i]; i++)
		fprintf(fp, " %s", rq_parsers[i]->name);
	fprintf(fp, "\n");
}

int cmd_cleanup(int argc, char **argv)
{
	struct rq_run_opts o = { .target = "auto" };
	char dir[4096];
	int fd;

	if (argc == 3 && !strcmp(argv[1], "--state-dir"))
		o.state_dir = argv[2];
	else if (argc != 1)
		return usage_out(argc, argv, cleanup_usage);
	fd = statedir_lock(o.state_dir, dir, sizeof(dir));
	if (fd < 0)
		return RQ_EXIT_FAIL;
	o.state_dir = dir;
	o.self_exe = rq_self_exe;
	statedir_cleanup(&o, true);
	close(fd);
	return 0;
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

/* SPDX-License-Identifier: MIT */
/*
 * What every command shares: the program's names, --help and usage
 * mistakes, and the dispatch of a word through a table (cli/cli.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "core/util.h"

const char *rq_self_exe;
const char *rq_prog = "rdmaqual";

bool wants_help(int argc, char **argv)
{
	return argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"));
}

int usage_out(int argc, char **argv, void (*print)(FILE *fp))
{
	if (wants_help(argc, argv)) {
		print(stdout);
		return 0;
	}
	print(stderr);
	return RQ_EXIT_USAGE;
}

int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s %s: ", rq_prog, cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(see '%s %s --help')\n", rq_prog, cmd);
	return RQ_EXIT_USAGE;
}

int cli_dispatch(const char *cmd, const struct cli_word *words, size_t n, int argc, char **argv,
		 void (*print_usage)(FILE *fp))
{
	if (argc < 2) {
		print_usage(stderr);
		return RQ_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		print_usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		if (!strcmp(argv[1], words[i].name))
			return words[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "%s%s%s: unknown command \"%s\"", rq_prog, cmd ? " " : "", cmd ? cmd : "",
		argv[1]);
	for (size_t i = 0; i < n; i++)
		if (edit_distance(argv[1], words[i].name) <= 2) {
			fprintf(stderr, "; did you mean \"%s\"?", words[i].name);
			break;
		}
	fprintf(stderr, "\n");
	print_usage(stderr);
	return RQ_EXIT_USAGE;
}

/* SPDX-License-Identifier: MIT */
/*
 * rdmaqual: qualify RDMA networks from declarative case files.
 * One table of commands (commands.def), each in its own cli/NAME.c, and
 * one table (struct cli_word) for the subcommands of each that has them.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lab/lab.h"
#include "cli/cli.h"
#include "core/kind.h"
#include "core/target.h"
#include "core/util.h"


static const struct cli_word commands[] = {
#define CMD(name, sym, help) { name, cmd_##sym, help },
#include "cli/commands.def"
#undef CMD
};

static void usage(FILE *fp)
{
	fprintf(fp, "usage: %s COMMAND [OPTIONS] [ARGS]\n\ncommands:\n", rq_prog);
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(fp, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(fp, "\n'%s COMMAND --help' describes a command's options.\n", rq_prog);
}

int main(int argc, char **argv)
{
	static char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	/* Agents in VMs and forked agents run this very binary. */
	if (n > 0) {
		exe[n] = '\0';
		rq_self_exe = exe;
	} else {
		rq_self_exe = argv[0];
	}
	rq_kinds_install();
	rq_targets_install();
	rq_lab_install();
	if (argc >= 2 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version"))) {
		/* The release, and the exact tree when built from git. */
		if (strcmp(RQ_VERSION, RQ_RELEASE))
			printf("rdmaqual %s (git %s)\n", RQ_RELEASE, RQ_VERSION);
		else
			printf("rdmaqual %s\n", RQ_RELEASE);
		return 0;
	}
	return cli_dispatch(NULL, commands, ARRAY_SIZE(commands), argc, argv, usage);
}

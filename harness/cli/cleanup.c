/* SPDX-License-Identifier: MIT */
/* rdmaqual cleanup: undo what a killed run left behind (the state dir's records). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli/cli.h"
#include "exec/statedir.h"

static void cleanup_usage(FILE *fp)
{
	fprintf(fp, "usage: rdmaqual cleanup [--state-dir DIR]\n"
		"Stops the VMs and daemons and undoes the settings a killed run left behind.\n");
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

/* SPDX-License-Identifier: MIT */
/* rdmaqual agent: serve the agent protocol on stdio or a virtio-serial port. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include "agent/agent.h"
#include "cli/cli.h"
#include "qual/sysroot.h"

static void agent_usage(FILE *fp)
{
	fprintf(fp, "usage: rdmaqual agent --stdio | --port DEVICE\n"
		"Serves the agent protocol (src/agent/agent.h); listens on no network port.\n");
}

int cmd_agent(int argc, char **argv)
{
	rq_agent_set_replay(rq_tool_replay);
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

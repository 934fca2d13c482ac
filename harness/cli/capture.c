/* SPDX-License-Identifier: MIT */
/*
 * rdmaqual capture DIR [--redact] [--root SRC]: copy what the node kinds
 * read, and the RDMA tools' outputs, into DIR for `--target sysroot:DIR`.
 * A lab captures a node once; CI then runs the same cases against it.
 * --root captures a tree instead of this node (tests, re-capturing).
 */
#include <stdio.h>
#include <string.h>

#include "qual/capture.h"
#include "cli/cli.h"

static void capture_usage(FILE *fp)
{
	fprintf(fp, "usage: rdmaqual capture DIR [--redact] [--root SRC] [-v]\n"
		"Copies this node's RDMA state and tool outputs into DIR, for --target sysroot:DIR.\n");
}

int cmd_capture(int argc, char **argv)
{
	struct capture_opts o = { .src = "" };
	struct capture_stats st;
	struct sb log = SB_INIT;
	char err[512] = "";
	bool verbose = false;
	int ret;

	if (wants_help(argc, argv))
		return usage_out(argc, argv, capture_usage);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--redact"))
			o.redact = true;
		else if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose"))
			verbose = true;
		else if (!strcmp(argv[i], "--root") && i + 1 < argc)
			o.src = argv[++i];
		else if (argv[i][0] == '-' || o.dst)
			return usage_error("capture", "rdmaqual capture DIR [--redact] [--root SRC] [-v]");
		else
			o.dst = argv[i];
	}
	if (!o.dst)
		return usage_error("capture", "rdmaqual capture DIR [--redact] [--root SRC] [-v]");
	o.log = &log;
	ret = rq_capture(&o, &st, err, sizeof(err));
	if (verbose || ret)
		fputs(log.buf, stderr);
	sb_release(&log);
	if (ret) {
		fprintf(stderr, "capture: %s\n", err);
		return RQ_EXIT_FAIL;
	}
	printf("captured %s%s into %s: %u files, %u links, %u dirs, %u unreadable, %u device nodes, %u tool outputs%s\n",
	       o.src[0] ? o.src : "this node", "", o.dst, st.files, st.links, st.dirs, st.failed,
	       st.devnodes, st.tools, o.redact ? " (redacted)" : "");
	printf("replay: rdmaqual run --target sysroot:%s\n", o.dst);
	return 0;
}

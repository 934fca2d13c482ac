/* SPDX-License-Identifier: MIT */
/* rdmaqual rxe add NAME NETDEV | rxe del NAME: a soft-RoCE link over RDMA netlink. */
#include <stdio.h>
#include "cli/cli.h"
#include "core/proc.h"
#include "core/util.h"
#include "rdma/rxe_nl.h"

static void rxe_usage(FILE *fp)
{
	fprintf(fp, "usage: rdmaqual rxe add NAME NETDEV | rdmaqual rxe del NAME\n"
		"Creates or deletes a soft-RoCE link over RDMA netlink.\n");
}

static int rxe_done(int rc, const char *err)
{
	if (rc < 0) {
		fprintf(stderr, "rdmaqual rxe: %s\n", err);
		return RQ_EXIT_FAIL;
	}
	return 0;
}

static int rxe_add(int argc, char **argv)
{
	char err[256];

	if (argc != 3)
		return usage_error("rxe", "wants: rxe add NAME NETDEV");
	return rxe_done(rq_rxe_add(argv[1], argv[2], scaled_ms(10000), err, sizeof(err)), err);
}

static int rxe_del(int argc, char **argv)
{
	char err[256];

	if (argc != 2)
		return usage_error("rxe", "wants: rxe del NAME");
	return rxe_done(rq_rxe_del(argv[1], scaled_ms(10000), err, sizeof(err)), err);
}

static const struct cli_word rxe_words[] = {
	{ "add", rxe_add, "create link NAME over NETDEV" },
	{ "del", rxe_del, "delete link NAME" },
	{ "delete", rxe_del, "the same as del" },
};

int cmd_rxe(int argc, char **argv)
{
	return cli_dispatch("rxe", rxe_words, ARRAY_SIZE(rxe_words), argc, argv, rxe_usage);
}

/* SPDX-License-Identifier: MIT */
/*
 * A test-only case kind with a key of every type, for the loader's unit
 * tests and its fuzzer (registered with rq_kind_register_extra()).  It is
 * never run: it has no run() and is not in kinds.def.
 */
#ifndef RQ_TEST_RICH_KIND_H
#define RQ_TEST_RICH_KIND_H

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "core/case.h"
#include "core/kind.h"

struct rich_cfg {
	char *label;
	long long count;
	double ratio;
	bool flag;
	int mode;
	int64_t wait_ms;
	uint64_t buf;
	struct rq_list names;
	struct rq_list sizes;
	struct rq_list modes;
	long long must;
	long long netdev_mtu;
};

static const char *const rich_modes[] = { "rc", "uc", "ud", NULL };

static const struct key_def rich_keys[] = {
	{ .name = "label", .type = KEY_STR, .offset = offsetof(struct rich_cfg, label),
	  .def = "none", .help = "a string" },
	{ .name = "count", .type = KEY_INT, .offset = offsetof(struct rich_cfg, count),
	  .def = "1", .min = 1, .max = 1000, .help = "an int in 1..1000" },
	{ .name = "ratio", .type = KEY_DOUBLE, .offset = offsetof(struct rich_cfg, ratio),
	  .def = "0.5", .dmin = 0, .dmax = 1, .help = "a number in 0..1" },
	{ .name = "flag", .type = KEY_BOOL, .offset = offsetof(struct rich_cfg, flag),
	  .def = "false", .help = "a bool" },
	{ .name = "mode", .type = KEY_ENUM, .offset = offsetof(struct rich_cfg, mode),
	  .def = "rc", .choices = rich_modes, .help = "an enum" },
	{ .name = "wait", .type = KEY_DURATION, .offset = offsetof(struct rich_cfg, wait_ms),
	  .def = "2s", .min = 100, .max = 3600 * 1000, .help = "a duration in 100ms..1h" },
	{ .name = "buf", .type = KEY_SIZE, .offset = offsetof(struct rich_cfg, buf),
	  .def = "4KiB", .min = 1, .max = 1LL << 30, .help = "a size in 1..1GiB" },
	{ .name = "names", .type = KEY_LIST, .elem = KEY_STR,
	  .offset = offsetof(struct rich_cfg, names), .help = "a list of strings" },
	{ .name = "sizes", .type = KEY_LIST, .elem = KEY_SIZE,
	  .offset = offsetof(struct rich_cfg, sizes), .def = "[64, 4KiB]",
	  .min = 1, .max = 1LL << 30, .help = "a list of sizes" },
	{ .name = "modes", .type = KEY_LIST, .elem = KEY_ENUM, .choices = rich_modes,
	  .offset = offsetof(struct rich_cfg, modes), .help = "a list of enums" },
	{ .name = "must", .type = KEY_INT, .offset = offsetof(struct rich_cfg, must),
	  .required = true, .help = "a required int" },
	{ .name = "netdev_mtu", .type = KEY_INT, .offset = offsetof(struct rich_cfg, netdev_mtu),
	  .def = "1500", .min = 68, .max = 9000, .help = "for did-you-mean tests" },
	KEY_END,
};

/* Cross-key rule, to exercise the validate() hook: "must" may not exceed "count". */
static int rich_validate(const struct rq_case *c, char *err, size_t errsz)
{
	const struct rich_cfg *cfg = c->cfg;

	if (cfg->must > cfg->count) {
		snprintf(err, errsz, "must (%lld) is larger than count (%lld)", cfg->must,
			 cfg->count);
		return -EINVAL;
	}
	return 0;
}

static const struct rq_kind rq_kind_rich = {
	.name = "rich",
	.summary = "test-only kind with a key of every type",
	.keys = rich_keys,
	.cfg_size = sizeof(struct rich_cfg),
	.default_targets = "local,sysroot",
	.validate = rich_validate,
};

/* A second kind, for defaults that apply to one kind of a file but not another. */
struct plain_cfg {
	char *what;
};

static const struct key_def plain_keys[] = {
	{ .name = "what", .type = KEY_STR, .offset = offsetof(struct plain_cfg, what),
	  .help = "a string" },
	KEY_END,
};

static const struct rq_kind rq_kind_plain = {
	.name = "plain",
	.summary = "test-only kind with one key",
	.keys = plain_keys,
	.cfg_size = sizeof(struct plain_cfg),
};

static inline void rich_kinds_register(void)
{
	rq_kind_register_extra(&rq_kind_rich);
	rq_kind_register_extra(&rq_kind_plain);
}

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Requirements evaluated against a synthesized node tree (a root prefix,
 * as a sysroot target gives): every unmet need is named in the reason, in
 * the order the case lists them.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/case.h"
#include "core/kind.h"
#include "core/util.h"
#include "check_main.h"

static char root[64];

static void put(const char *rel, const char *text)
{
	char path[512], dir[512];

	snprintf(path, sizeof(path), "%s%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = 0;
	ck_assert_int_eq(mkdir_p(dir, 0755), 0);
	ck_assert_int_eq(write_file_atomic(path, text, strlen(text)), 0);
}

/* A node with one IB port and a live rdma_rxe, ib_core still coming up. */
static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/rq-needs-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(root));
	put("/sys/class/infiniband/mlx5_0/ports/1/link_layer", "InfiniBand\n");
	put("/sys/class/infiniband/mlx5_0/ports/2/link_layer", "InfiniBand\n");
	put("/sys/module/rdma_rxe/initstate", "live\n");
	put("/sys/module/ib_core/initstate", "coming\n");
	put("/sys/module/builtin_thing/parameters/x", "1\n");
	put("/etc/rdma/marker", "x\n");
}

static void teardown(void)
{
	rm_rf(root);
}

static struct rq_case *load_case(const char *needs, struct rq_suite *s)
{
	struct rq_diags d = { 0 };
	char *text = xasprintf("cases:\n  - {name: n, kind: command, argv: [\"true\"], "
			       "needs: [%s]}\n", needs);

	ck_assert_int_eq(rq_load_buffer("n.yaml", text, strlen(text), s, &d), 0);
	free(text);
	rq_diags_release(&d);
	ck_assert_uint_eq(s->ncases, 1);
	return s->cases[0];
}

static bool eval(const char *needs, bool replay, char *why, size_t whysz)
{
	struct rq_suite s = { 0 };
	struct rq_ctx ctx = { .root = root, .replay = replay };
	bool ok;

	ctx.c = load_case(needs, &s);
	ok = rq_needs_met(&ctx, why, whysz);
	rq_suite_release(&s);
	return ok;
}

START_TEST(all_unmet_are_named)
{
	char why[1024];

	ck_assert(!eval("module:rdma_cm, module:ib_core, link_layer:Ethernet, device, "
			"file:/etc/rdma/nothing, 'module:rdma-rxe', link_layer:IB, "
			"file:/etc/rdma/marker, module:builtin_thing", true, why, sizeof(why)));
	ck_assert_str_eq(why, "module rdma_cm not loaded; module ib_core is coming, not live; "
			 "no port with link layer Ethernet; file /etc/rdma/nothing not found");
}
END_TEST

START_TEST(met_needs)
{
	char why[1024] = "x";

	ck_assert(eval("device, module:rdma_rxe, link_layer:InfiniBand, file:/etc/rdma/marker",
		       false, why, sizeof(why)));
	ck_assert_str_eq(why, "");
}
END_TEST

START_TEST(no_devices)
{
	char why[1024];

	rm_rf(root);
	ck_assert_int_eq(mkdir_p(root, 0755), 0);
	ck_assert(!eval("device, link_layer:IB", true, why, sizeof(why)));
	ck_assert_str_eq(why, "no RDMA device; no port with link layer InfiniBand");
}
END_TEST

/* A replay reads a capture: root, memlock and commands are not the capture's business. */
START_TEST(replay_needs_no_privilege)
{
	char why[1024];

	ck_assert(eval("root, memlock:unlimited, cmd:rdmaqual-no-such-tool", true, why,
		       sizeof(why)));
	ck_assert_str_eq(why, "");
}
END_TEST

START_TEST(live_process_needs)
{
	char why[1024], want[256];
	struct rlimit rl;

	ck_assert(!eval("cmd:rdmaqual-no-such-tool, cmd:sh", false, why, sizeof(why)));
	ck_assert_str_eq(why, "command rdmaqual-no-such-tool not found");

	ck_assert(eval("root", false, why, sizeof(why)) == (geteuid() == 0));
	if (geteuid() != 0)
		ck_assert_str_eq(why, "needs root");

	/* memlock against a soft limit of our own choosing */
	ck_assert_int_eq(getrlimit(RLIMIT_MEMLOCK, &rl), 0);
	struct rlimit low = { .rlim_cur = 64 << 10, .rlim_max = rl.rlim_max };
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < low.rlim_cur)
		low.rlim_cur = rl.rlim_max;
	ck_assert_int_eq(setrlimit(RLIMIT_MEMLOCK, &low), 0);
	ck_assert(eval("memlock:4KiB", false, why, sizeof(why)) == (low.rlim_cur >= 4096));
	ck_assert(!eval("memlock:1GiB", false, why, sizeof(why)));
	char have[32];
	fmt_size(low.rlim_cur, have, sizeof(have));
	snprintf(want, sizeof(want), "memlock limit %s is below 1GiB (ulimit -l)", have);
	ck_assert_str_eq(why, want);
	ck_assert(!eval("memlock:unlimited", false, why, sizeof(why)));
	snprintf(want, sizeof(want), "memlock limit %s is below unlimited (ulimit -l)", have);
	ck_assert_str_eq(why, want);
	ck_assert_int_eq(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
}
END_TEST

START_TEST(short_reason_buffer)
{
	char why[16];

	ck_assert(!eval("module:a, module:b", true, why, sizeof(why)));
	ck_assert_str_eq(why, "module a not lo");
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, all_unmet_are_named);
	tcase_add_test(tc, met_needs);
	tcase_add_test(tc, no_devices);
	tcase_add_test(tc, replay_needs_no_privilege);
	tcase_add_test(tc, live_process_needs);
	tcase_add_test(tc, short_reason_buffer);
}

RQ_CHECK_MAIN("needs", add_tests)

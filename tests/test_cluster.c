/* SPDX-License-Identifier: MIT */
/* Unit tests for src/cluster: hostlists and pairing rounds. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cluster/hostlist.h"
#include "cluster/plan.h"
#include "cluster/suspects.h"
#include "core/util.h"
#include "check_main.h"

static char *joined(const struct rq_hosts *h)
{
	struct sb sb = SB_INIT;

	for (size_t i = 0; i < h->n; i++) {
		if (i)
			sb_addc(&sb, ' ');
		sb_adds(&sb, h->v[i]);
	}
	return sb_detach(&sb);
}

static void expect_hosts(const char *expr, const char *want)
{
	struct rq_hosts h = { 0 };
	char err[256] = "";

	ck_assert_msg(!rq_hostlist_expand(expr, &h, err, sizeof(err)), "%s: %s", expr, err);
	char *got = joined(&h);

	ck_assert_str_eq(got, want);
	free(got);
	rq_hosts_release(&h);
}

static void expect_bad(const char *expr, const char *msg_part)
{
	struct rq_hosts h = { 0 };
	char err[256] = "";

	ck_assert_int_eq(rq_hostlist_expand(expr, &h, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, msg_part), "%s: got \"%s\"", expr, err);
	rq_hosts_release(&h);
}

START_TEST(hostlist_forms)
{
	expect_hosts("node07", "node07");
	expect_hosts("a,b,c", "a b c");
	expect_hosts("node[01-03,20]", "node01 node02 node03 node20");
	expect_hosts("n[8-10]", "n8 n9 n10");
	expect_hosts("n[08-10]", "n08 n09 n10");
	expect_hosts("r[1-2]n[1-2]", "r1n1 r1n2 r2n1 r2n2");
	expect_hosts("x[1-2].lab,gw", "x1.lab x2.lab gw");
	expect_hosts("n[3]", "n3");
}
END_TEST

START_TEST(hostlist_errors)
{
	expect_bad("", "empty host list");
	expect_bad("n[1-3", "'[' without ']'");
	expect_bad("n[3-1]", "column 6: range 3-1 runs backwards");
	expect_bad("n[]", "empty brackets");
	expect_bad("n[1-x]", "expected a number");
	expect_bad("n[1;2]", "expected ','");
	expect_bad("a,,b", "empty host name");
	expect_bad("a b", "' ' is not allowed");
	expect_bad("n[0-99999999]", "more than 65536 hosts");
}
END_TEST

static void put(const char *path, const char *text)
{
	ck_assert_int_eq(write_file_atomic(path, text, strlen(text)), 0);
}

START_TEST(nodes_sources)
{
	char dir[] = "/tmp/rq-cluster-XXXXXX", path[64], err[256] = "";
	struct rq_hosts h = { 0 };

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/nodes", dir);
	put(path, "# rack 1\nnode01\n  node02  # spare\n\nn[5-6]\n");
	char spec[80];

	snprintf(spec, sizeof(spec), "@%s", path);
	ck_assert_msg(!rq_nodes_resolve(spec, &h, err, sizeof(err)), "%s", err);
	char *got = joined(&h);

	ck_assert_str_eq(got, "node01 node02 n5 n6");
	free(got);
	rq_hosts_release(&h);

	put(path, "a\nb[1-x]\n");
	ck_assert_int_eq(rq_nodes_resolve(spec, &h, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "/nodes:2: "), "%s", err);
	rq_hosts_release(&h);

	setenv("SLURM_JOB_NODELIST", "vm[0-3]", 1);
	ck_assert_int_eq(rq_nodes_resolve("slurm", &h, err, sizeof(err)), 0);
	ck_assert_uint_eq(h.n, 4);
	ck_assert_str_eq(h.v[3], "vm3");
	rq_hosts_release(&h);
	unsetenv("SLURM_JOB_NODELIST");
	unsetenv("SLURM_NODELIST");
	ck_assert_int_eq(rq_nodes_resolve("slurm", &h, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "SLURM_JOB_NODELIST is not set"), "%s", err);

	ck_assert_int_eq(rq_nodes_resolve("a,b,n[1-2],b", &h, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "node b is listed twice");
	rq_hosts_release(&h);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* Every round: no node twice.  Returns the number of times each unordered pair occurs. */
static unsigned *check_rounds(const struct rq_rounds *r, size_t n)
{
	unsigned *seen = xcalloc(n * n, sizeof(*seen));
	char *busy = xcalloc(n, 1);

	ck_assert_uint_eq(r->start[0], 0);
	ck_assert_uint_eq(r->start[r->nrounds], r->npairs);
	for (size_t k = 0; k < r->nrounds; k++) {
		memset(busy, 0, n);
		ck_assert_msg(r->start[k + 1] > r->start[k], "round %zu is empty", k);
		for (size_t i = r->start[k]; i < r->start[k + 1]; i++) {
			uint32_t a = r->pairs[i].client, b = r->pairs[i].server;

			ck_assert_uint_lt(a, n);
			ck_assert_uint_lt(b, n);
			ck_assert_uint_ne(a, b);
			ck_assert_msg(!busy[a] && !busy[b], "round %zu: node in two pairs", k);
			busy[a] = busy[b] = 1;
			seen[(a < b ? a : b) * n + (a < b ? b : a)]++;
		}
	}
	free(busy);
	return seen;
}

START_TEST(plan_all_pairs)
{
	for (size_t n = 2; n <= 40; n++) {
		struct rq_pairs_policy p = { .kind = RQ_PAIRS_ALL };
		struct rq_rounds r;

		rq_plan_rounds(&p, n, &r);
		ck_assert_uint_eq(r.npairs, n * (n - 1) / 2);
		ck_assert_uint_eq(r.nrounds, n % 2 ? n : n - 1);
		unsigned *seen = check_rounds(&r, n);
		unsigned *client = xcalloc(n, sizeof(*client));

		for (size_t a = 0; a < n; a++)
			for (size_t b = a + 1; b < n; b++)
				ck_assert_msg(seen[a * n + b] == 1, "n=%zu pair %zu-%zu seen %u times",
					      n, a, b, seen[a * n + b]);
		/* directions are balanced: nobody is always the client or always the server */
		for (size_t i = 0; i < r.npairs; i++)
			client[r.pairs[i].client]++;
		for (size_t i = 0; n >= 6 && i < n; i++)
			ck_assert_msg(client[i] >= (n - 1) / 4 && client[i] <= n - 1 - (n - 1) / 4,
				      "n=%zu node %zu is client in %u of %zu pairs", n, i, client[i], n - 1);
		free(client);
		free(seen);
		rq_rounds_release(&r);
	}
}
END_TEST

START_TEST(plan_ring)
{
	for (size_t n = 1; n <= 17; n++) {
		struct rq_pairs_policy p = { .kind = RQ_PAIRS_RING };
		struct rq_rounds r;

		rq_plan_rounds(&p, n, &r);
		ck_assert_uint_eq(r.npairs, n < 2 ? 0 : n == 2 ? 1 : n);
		ck_assert_uint_eq(r.nrounds, n < 2 ? 0 : n == 2 ? 1 : n % 2 ? 3 : 2);
		unsigned *seen = check_rounds(&r, n);

		/* each node with the next, in that direction */
		for (size_t i = 0; i < r.npairs; i++)
			ck_assert_uint_eq(r.pairs[i].server, (r.pairs[i].client + 1) % n);
		free(seen);
		rq_rounds_release(&r);
	}
}
END_TEST

START_TEST(plan_list)
{
	struct rq_hosts h = { 0 };
	struct rq_pairs_policy p;
	struct rq_rounds r;
	char err[256] = "";

	ck_assert_int_eq(rq_hostlist_expand("n[1-4]", &h, err, sizeof(err)), 0);
	ck_assert_int_eq(rq_pairs_parse("n1:n2,n3:n4,n1:n3,n2:n4", &h, &p, err, sizeof(err)), 0);
	ck_assert_int_eq(p.kind, RQ_PAIRS_LIST);
	rq_plan_rounds(&p, h.n, &r);
	ck_assert_uint_eq(r.nrounds, 2);
	ck_assert_uint_eq(r.start[1], 2);
	ck_assert_uint_eq(r.pairs[2].client, 0);
	ck_assert_uint_eq(r.pairs[2].server, 2);
	free(check_rounds(&r, h.n));
	rq_rounds_release(&r);
	rq_pairs_release(&p);

	ck_assert_int_eq(rq_pairs_parse("n1:n9", &h, &p, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "not in --nodes (n9)"), "%s", err);
	ck_assert_int_eq(rq_pairs_parse("n1:n1", &h, &p, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "with itself"), "%s", err);
	ck_assert_int_eq(rq_pairs_parse("rings", &h, &p, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "expected ring, all"), "%s", err);
	ck_assert_int_eq(rq_pairs_parse("n1:n2,", &h, &p, err, sizeof(err)), -1);
	ck_assert_int_eq(rq_pairs_parse("all", &h, &p, err, sizeof(err)), 0);
	ck_assert_int_eq(p.kind, RQ_PAIRS_ALL);
	rq_hosts_release(&h);
}
END_TEST

/* 64 rounds and past them (the bitmap's end): a star needs one round per spoke. */
START_TEST(plan_list_many_rounds)
{
	size_t n = 80;
	struct rq_pair *v = xcalloc(n - 1, sizeof(*v));
	struct rq_pairs_policy p = { .kind = RQ_PAIRS_LIST, .list = v, .nlist = n - 1 };
	struct rq_rounds r;

	for (size_t i = 1; i < n; i++)
		v[i - 1] = (struct rq_pair){ 0, (uint32_t)i };
	rq_plan_rounds(&p, n, &r);
	ck_assert_uint_eq(r.nrounds, n - 1);
	free(check_rounds(&r, n));
	rq_rounds_release(&r);
	free(v);
}
END_TEST

static const char *const names8[] = { "n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7" };

/* Outcomes of a plan where every pair touching one of the bad nodes fails. */
static struct rq_pair_outcome *outcomes(const struct rq_rounds *r, const bool *bad_node,
					long bad_a, long bad_b)
{
	struct rq_pair_outcome *o = xcalloc(r->npairs, sizeof(*o));

	for (size_t i = 0; i < r->npairs; i++) {
		uint32_t c = r->pairs[i].client, s = r->pairs[i].server;

		o[i] = (struct rq_pair_outcome){ c, s, bad_node[c] || bad_node[s] ||
			((long)c == bad_a && (long)s == bad_b) || ((long)c == bad_b && (long)s == bad_a),
			"bw" };
	}
	return o;
}

START_TEST(suspects_one_bad_node)
{
	for (int pol = 0; pol < 2; pol++) {
		struct rq_pairs_policy p = { .kind = pol ? RQ_PAIRS_ALL : RQ_PAIRS_RING };
		struct rq_node_outcome nodes[8] = { 0 };
		bool bad[8] = { false, false, false, true };
		struct rq_rounds r;
		struct rq_suspects s;

		rq_plan_rounds(&p, 8, &r);
		struct rq_pair_outcome *o = outcomes(&r, bad, -1, -1);

		rq_suspects_find(8, names8, nodes, o, r.npairs, &s);
		ck_assert_uint_eq(s.n, 1);
		ck_assert_uint_eq(s.v[0].node, 3);
		ck_assert_int_eq(s.v[0].link, -1);
		ck_assert_msg(strstr(s.v[0].reason, "bw, while n"), "%s", s.v[0].reason);
		rq_suspects_release(&s);
		free(o);
		rq_rounds_release(&r);
	}
}
END_TEST

START_TEST(suspects_names_hosts)
{
	ck_assert(rq_suspects_names("vm2 vm5", "vm5"));
	ck_assert(rq_suspects_names("n1,n3", "n1"));
	ck_assert(rq_suspects_names(" n1, n3 ", "n3"));
	ck_assert(!rq_suspects_names("n10 n11", "n1"));
	ck_assert(!rq_suspects_names("n1", "n10"));
	ck_assert(!rq_suspects_names("n1", ""));
	ck_assert(!rq_suspects_names(NULL, "n1"));
	ck_assert(!rq_suspects_names("n1", NULL));
	ck_assert(!rq_suspects_names("", "n1"));
}
END_TEST

START_TEST(suspects_link_and_node_checks)
{
	struct rq_pairs_policy p = { .kind = RQ_PAIRS_ALL };
	struct rq_node_outcome nodes[8] = { 0 };
	bool bad[8] = { 0 };
	struct rq_rounds r;
	struct rq_suspects s;

	/* one bad cable between n2 and n5: the link, not a node */
	rq_plan_rounds(&p, 8, &r);
	struct rq_pair_outcome *o = outcomes(&r, bad, 2, 5);

	rq_suspects_find(8, names8, nodes, o, r.npairs, &s);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_int_eq(s.v[0].link >= 0, 1);
	ck_assert_uint_eq(s.v[0].node + (uint32_t)s.v[0].link, 7);
	ck_assert_msg(strstr(s.v[0].reason, "both ends passed"), "%s", s.v[0].reason);
	rq_suspects_release(&s);

	/* a node check failed on n6, a node is down (its pairs say nothing about n1) */
	nodes[6] = (struct rq_node_outcome){ .fails = 2, .first = "driver[mlx5_1/1]: DOWN" };
	nodes[1] = (struct rq_node_outcome){ .down = true, .first = "ssh: connection refused" };
	for (size_t i = 0; i < r.npairs; i++)
		o[i].bad = o[i].client == 1 || o[i].server == 1;
	rq_suspects_find(8, names8, nodes, o, r.npairs, &s);
	ck_assert_uint_eq(s.n, 2);
	ck_assert_uint_eq(s.v[0].node, 1);
	ck_assert_str_eq(s.v[0].reason, "down: ssh: connection refused");
	ck_assert_uint_eq(s.v[1].node, 6);
	ck_assert_str_eq(s.v[1].reason, "driver[mlx5_1/1]: DOWN (and 1 more node checks)");
	rq_suspects_release(&s);
	free(o);
	rq_rounds_release(&r);

	/* two nodes, their one pair fails: both, saying it cannot tell */
	struct rq_pair_outcome one = { 0, 1, true, "bw" };

	memset(nodes, 0, sizeof(nodes));
	rq_suspects_find(2, names8, nodes, &one, 1, &s);
	ck_assert_uint_eq(s.n, 2);
	ck_assert_msg(strstr(s.v[1].reason, "neither end passed"), "%s", s.v[1].reason);
	rq_suspects_release(&s);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_test(tc, hostlist_forms);
	tcase_add_test(tc, hostlist_errors);
	tcase_add_test(tc, nodes_sources);
	tcase_add_test(tc, plan_all_pairs);
	tcase_add_test(tc, plan_ring);
	tcase_add_test(tc, plan_list);
	tcase_add_test(tc, plan_list_many_rounds);
	tcase_add_test(tc, suspects_one_bad_node);
	tcase_add_test(tc, suspects_link_and_node_checks);
	tcase_add_test(tc, suspects_names_hosts);
}

RQ_CHECK_MAIN("cluster", add_tests)

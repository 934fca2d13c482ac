/* SPDX-License-Identifier: MIT */
/*
 * The memreg kind's pure rules (src/kinds/memreg.h): the size list and
 * what caps it, what a registration pins against RLIMIT_MEMLOCK and when
 * the limit stops it, the figures, the thresholds, the memlock ERROR's
 * text, and the key table's checks through the loader.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include "core/case.h"
#include "core/util.h"
#include "kinds/memreg.h"
#include "check_main.h"

#define KiB (1ull << 10)
#define MiB (1ull << 20)
#define GiB (1ull << 30)

START_TEST(default_sizes_by_4)
{
	uint64_t s[MR_MAX_SIZES], dropped = 1;
	size_t n = memreg_sizes(NULL, 0, GiB, UINT64_MAX, UINT64_MAX, s, MR_MAX_SIZES, &dropped);

	ck_assert_uint_eq(n, 10);
	ck_assert_uint_eq(s[0], 4 * KiB);
	ck_assert_uint_eq(s[1], 16 * KiB);
	ck_assert_uint_eq(s[4], MiB);
	ck_assert_uint_eq(s[9], GiB);
	ck_assert_uint_eq(dropped, 0);
	/* max_size 64 MiB: the shipped case's 4 KiB..64 MiB */
	n = memreg_sizes(NULL, 0, 64 * MiB, UINT64_MAX, UINT64_MAX, s, MR_MAX_SIZES, &dropped);
	ck_assert_uint_eq(n, 8);
	ck_assert_uint_eq(s[7], 64 * MiB);
	ck_assert_uint_eq(dropped, 0);
	/* a max_size off the series stops below it */
	n = memreg_sizes(NULL, 0, 100 * MiB, UINT64_MAX, UINT64_MAX, s, MR_MAX_SIZES, NULL);
	ck_assert_uint_eq(s[n - 1], 64 * MiB);
	/* beyond 1 GiB where max_size asks and memory allows */
	n = memreg_sizes(NULL, 0, 16 * GiB, UINT64_MAX, UINT64_MAX, s, MR_MAX_SIZES, NULL);
	ck_assert_uint_eq(s[n - 1], 16 * GiB);
}
END_TEST

START_TEST(default_sizes_capped_by_memory_and_memlock)
{
	uint64_t s[MR_MAX_SIZES], dropped = 0;
	size_t n;

	/* half of a 512 MiB guest's MemAvailable: up to 64 MiB, 256 MiB named as left out */
	n = memreg_sizes(NULL, 0, GiB, 200 * MiB, UINT64_MAX, s, MR_MAX_SIZES, &dropped);
	ck_assert_uint_eq(s[n - 1], 64 * MiB);
	ck_assert_uint_eq(dropped, 256 * MiB);
	/* the default 8 MiB memlock of an unprivileged login: up to 4 MiB */
	n = memreg_sizes(NULL, 0, GiB, UINT64_MAX, 8 * MiB, s, MR_MAX_SIZES, &dropped);
	ck_assert_uint_eq(n, 6);
	ck_assert_uint_eq(s[5], 4 * MiB);
	ck_assert_uint_eq(dropped, 16 * MiB);
	/* a limit below 4 KiB: nothing to measure, and the first size is named */
	n = memreg_sizes(NULL, 0, GiB, UINT64_MAX, 0, s, MR_MAX_SIZES, &dropped);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(dropped, 4 * KiB);
}
END_TEST

START_TEST(given_sizes_pass_memlock)
{
	const int64_t given[] = { 4 * KiB, 1 * MiB, 512 * MiB, 4 * MiB };
	uint64_t s[MR_MAX_SIZES], dropped = 0;
	size_t n;

	/* named sizes go past the memlock cap (to its ERROR), not past memory */
	n = memreg_sizes(given, 4, GiB, 300 * MiB, 64 * KiB, s, MR_MAX_SIZES, &dropped);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(s[0], 4 * KiB);
	ck_assert_uint_eq(s[1], MiB);
	ck_assert_uint_eq(s[2], 4 * MiB);
	ck_assert_uint_eq(dropped, 512 * MiB);
	n = memreg_sizes(given, 4, 2 * MiB, UINT64_MAX, UINT64_MAX, s, MR_MAX_SIZES, &dropped);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(dropped, 512 * MiB);
}
END_TEST

START_TEST(meminfo_cap)
{
	const char *mi = "MemTotal:         524288 kB\nMemFree:          300000 kB\n"
			 "MemAvailable:     409600 kB\nBuffers:            1000 kB\n";

	ck_assert_uint_eq(memreg_mem_cap(mi), 200 * MiB);
	ck_assert_uint_eq(memreg_mem_cap("MemTotal: 1 kB\n"), 0);
	ck_assert_uint_eq(memreg_mem_cap(NULL), 0);
}
END_TEST

START_TEST(pinned_and_memlock)
{
	/* whole system pages, whatever backs them */
	ck_assert_uint_eq(memreg_pinned(MR_4K, 4 * KiB, 4096), 4 * KiB);
	ck_assert_uint_eq(memreg_pinned(MR_4K, 4 * KiB + 1, 4096), 8 * KiB);
	ck_assert_uint_eq(memreg_pinned(MR_2M, 4 * MiB, 4096), 4 * MiB);
	ck_assert_uint_eq(memreg_pinned(MR_1G, 100 * KiB, 65536), 128 * KiB);
	/* ODP and dma-buf pin nothing against the limit */
	ck_assert_uint_eq(memreg_pinned(MR_ODP, GiB, 4096), 0);
	ck_assert_uint_eq(memreg_pinned(MR_DMABUF, GiB, 4096), 0);

	ck_assert(memreg_memlock_stops(MiB, false, 64 * KiB, false));
	ck_assert(!memreg_memlock_stops(64 * KiB, false, 64 * KiB, false));	/* at the limit: fits */
	ck_assert(!memreg_memlock_stops(MiB, true, 0, false));			/* unlimited */
	ck_assert(!memreg_memlock_stops(MiB, false, 64 * KiB, true));		/* CAP_IPC_LOCK */
	ck_assert(memreg_memlock_stops(4 * KiB, false, 0, false));		/* 0: EPERM */
	ck_assert(!memreg_memlock_stops(0, false, 0, false));			/* ODP */
}
END_TEST

START_TEST(memlock_error_text)
{
	char buf[640];

	memreg_memlock_why(buf, sizeof(buf), "rxe0", MR_4K, MiB, ENOMEM, 64 * KiB, false);
	ck_assert_msg(strstr(buf, "ibv_reg_mr of 1 MiB (4 KiB pages) on rxe0 failed"), "%s", buf);
	ck_assert_msg(strstr(buf, strerror(ENOMEM)), "%s", buf);
	ck_assert_msg(strstr(buf, "RLIMIT_MEMLOCK is 64 KiB and the registration pins 1 MiB"), "%s", buf);
	ck_assert_msg(strstr(buf, "/etc/security/limits.d/"), "%s", buf);
	ck_assert_msg(strstr(buf, "memlock unlimited"), "%s", buf);
	ck_assert_msg(strstr(buf, "LimitMEMLOCK=infinity"), "%s", buf);
	ck_assert_msg(strstr(buf, "ulimit -l"), "%s", buf);
	memreg_memlock_why(buf, sizeof(buf), "mlx5_0", MR_2M, 4 * MiB, EPERM, 0, false);
	ck_assert_msg(strstr(buf, "(2 MiB huge pages) on mlx5_0"), "%s", buf);
	ck_assert_msg(strstr(buf, "RLIMIT_MEMLOCK is 0 bytes"), "%s", buf);
	/* a short buffer is cut, never overrun */
	memreg_memlock_why(buf, 16, "rxe0", MR_4K, MiB, ENOMEM, 64 * KiB, false);
	ck_assert_uint_eq(strlen(buf), 15);
}
END_TEST

START_TEST(size_text)
{
	char b[32];

	memreg_size_text(64 * KiB, false, b, sizeof(b));
	ck_assert_str_eq(b, "64 KiB");
	memreg_size_text(8 * MiB, false, b, sizeof(b));
	ck_assert_str_eq(b, "8 MiB");
	memreg_size_text(GiB, false, b, sizeof(b));
	ck_assert_str_eq(b, "1 GiB");
	memreg_size_text(1000, false, b, sizeof(b));
	ck_assert_str_eq(b, "1000 bytes");
	memreg_size_text(0, true, b, sizeof(b));
	ck_assert_str_eq(b, "unlimited");
}
END_TEST

START_TEST(figures_and_thresholds)
{
	char why[256] = "";

	/* 64 MiB in 2829.6 us (rxe under TCG): 45273.6 us per GiB */
	ck_assert(memreg_us_per_gib(2829.6, 64 * MiB) > 45273 && memreg_us_per_gib(2829.6, 64 * MiB) < 45274);
	ck_assert(memreg_us_per_gib(10, GiB) == 10);
	ck_assert(memreg_us_per_gib(10, 0) == 0);
	ck_assert(memreg_regs_per_s(50) == 20000);
	ck_assert(memreg_regs_per_s(0) == 0);

	ck_assert_int_eq(memreg_judge_gib(0, 1e9, "x", why, sizeof(why)), -1);
	ck_assert_int_eq(memreg_judge_gib(50000, 45273, "x", why, sizeof(why)), 1);
	ck_assert_int_eq(memreg_judge_gib(50000, 50000, "x", why, sizeof(why)), 1);
	ck_assert_int_eq(memreg_judge_gib(40000, 45273, "rxe0 4 KiB pages 64MiB", why, sizeof(why)), 0);
	ck_assert_msg(strstr(why, "rxe0 4 KiB pages 64MiB: 45273 us per GiB registered, above max_us_per_gib 40000"),
		      "%s", why);
	ck_assert_int_eq(memreg_judge_rate(0, 0, "x", why, sizeof(why)), -1);
	ck_assert_int_eq(memreg_judge_rate(5000, 5862, "x", why, sizeof(why)), 1);
	ck_assert_int_eq(memreg_judge_rate(10000, 5862, "rxe0 4 KiB pages 4KiB", why, sizeof(why)), 0);
	ck_assert_msg(strstr(why, "5862 registrations per second, below min_regs_per_s 10000"), "%s", why);
}
END_TEST

static int load(const char *yaml, char *first, size_t firstsz)
{
	struct rq_suite s = { 0 };
	struct rq_diags d = { 0 };
	int n = rq_load_buffer("t.yaml", yaml, strlen(yaml), &s, &d);

	if (first)
		snprintf(first, firstsz, "%s", d.n ? d.v[0].msg : "");
	rq_suite_release(&s);
	rq_diags_release(&d);
	return n;
}

START_TEST(keys_checked)
{
	char msg[512];

	ck_assert_int_eq(load("cases:\n  - name: m\n    kind: memreg\n", msg, sizeof(msg)), 0);
	ck_assert_int_eq(load("cases:\n  - name: m\n    kind: memreg\n    max_size: 64MiB\n"
			      "    pages: [4k, 2m]\n    memlock: 64KiB\n    max_us_per_gib: 1e6\n"
			      "    min_regs_per_s: 1000\n", msg, sizeof(msg)), 0);
	ck_assert_int_gt(load("cases:\n  - name: m\n    kind: memreg\n    sizes: [1KiB]\n", msg, sizeof(msg)), 0);
	ck_assert_msg(strstr(msg, "outside 4KiB to max_size"), "%s", msg);
	ck_assert_int_gt(load("cases:\n  - name: m\n    kind: memreg\n    max_size: 1MiB\n    sizes: [4MiB]\n",
			      msg, sizeof(msg)), 0);
	ck_assert_int_gt(load("cases:\n  - name: m\n    kind: memreg\n    memlock: lots\n", msg, sizeof(msg)), 0);
	ck_assert_msg(strstr(msg, "neither a size"), "%s", msg);
	ck_assert_int_gt(load("cases:\n  - name: m\n    kind: memreg\n    pages: [4m]\n", msg, sizeof(msg)), 0);
	ck_assert_int_gt(load("cases:\n  - name: m\n    kind: memreg\n    pages: []\n", msg, sizeof(msg)), 0);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_test(tc, default_sizes_by_4);
	tcase_add_test(tc, default_sizes_capped_by_memory_and_memlock);
	tcase_add_test(tc, given_sizes_pass_memlock);
	tcase_add_test(tc, meminfo_cap);
	tcase_add_test(tc, pinned_and_memlock);
	tcase_add_test(tc, memlock_error_text);
	tcase_add_test(tc, size_text);
	tcase_add_test(tc, figures_and_thresholds);
	tcase_add_test(tc, keys_checked);
}

RQ_CHECK_MAIN("memreg", add_tests)

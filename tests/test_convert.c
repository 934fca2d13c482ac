/* SPDX-License-Identifier: MIT */
/* Value conversions: durations, sizes, booleans, integers, numbers, and back. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "core/case.h"
#include "check_main.h"

START_TEST(durations)
{
	static const struct {
		const char *s;
		int64_t ms;
	} good[] = {
		{ "500ms", 500 }, { "30s", 30000 }, { "2m", 120000 }, { "1h", 3600000 },
		{ "1.5s", 1500 }, { "0.25m", 15000 }, { "1h30m", 5400000 }, { "1m 30s", 90000 },
		{ "0s", 0 }, { " 10 s ", 10000 }, { ".5s", 500 }, { "2.5h", 9000000 },
	};
	static const char *const bad[] = {
		"30", "", "s", "1.5ms", "1.0005s", "-1s", "10sec", "1d", "1S", "1..5s",
		"5s3", "1.s", "ms5", "1e3s", "0x10s", "1 h h",
	};
	int64_t ms;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ck_assert_msg(parse_duration_ms(good[i].s, &ms) == 0, "%s", good[i].s);
		ck_assert_msg(ms == good[i].ms, "%s -> %lld", good[i].s, (long long)ms);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(parse_duration_ms(bad[i], &ms) == -EINVAL, "accepted %s", bad[i]);
	ck_assert_int_eq(parse_duration_ms("9223372036854775807ms", &ms), 0);
	ck_assert_int_eq(ms, INT64_MAX);
	ck_assert_int_eq(parse_duration_ms("9223372036854775808ms", &ms), -ERANGE);
	ck_assert_int_eq(parse_duration_ms("9999999999999999h", &ms), -ERANGE);
	ck_assert_int_eq(parse_duration_ms("99999999999999999999999s", &ms), -ERANGE);
	ck_assert_int_eq(parse_duration_ms(NULL, &ms), -EINVAL);
}
END_TEST

START_TEST(sizes)
{
	static const struct {
		const char *s;
		uint64_t b;
	} good[] = {
		{ "4096", 4096 }, { "64B", 64 }, { "4KiB", 4096 }, { "1MiB", 1 << 20 },
		{ "1GiB", 1ull << 30 }, { "2TiB", 2ull << 40 }, { "10KB", 10000 },
		{ "10kB", 10000 }, { "1MB", 1000000 }, { "3GB", 3000000000ull },
		{ "1TB", 1000000000000ull }, { "1.5KiB", 1536 }, { "0", 0 }, { "4 KiB", 4096 },
		{ "18446744073709551615", UINT64_MAX }, { "16777215TiB", 16777215ull << 40 },
	};
	static const char *const bad[] = {
		"", "-1", "+1", "4k", "4kb", "4K", "4kib", "1.5B", "0.1KiB", "KiB", "4 KiB x",
		"0x10", "1e3", "4KiBs", "1..5KiB",
	};
	uint64_t b;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ck_assert_msg(parse_size(good[i].s, &b) == 0, "%s", good[i].s);
		ck_assert_msg(b == good[i].b, "%s -> %llu", good[i].s, (unsigned long long)b);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(parse_size(bad[i], &b) == -EINVAL, "accepted %s", bad[i]);
	ck_assert_int_eq(parse_size("18446744073709551616", &b), -ERANGE);
	ck_assert_int_eq(parse_size("16777216TiB", &b), -ERANGE);
	ck_assert_int_eq(parse_size("99999999999999999999TB", &b), -ERANGE);
}
END_TEST

START_TEST(bools)
{
	static const char *const t[] = { "true", "True", "TRUE", "yes", "Yes", "on", "ON" };
	static const char *const f[] = { "false", "False", "no", "NO", "off", "Off" };
	static const char *const bad[] = { "", "1", "0", "y", "n", "enabled", "truee" };
	bool b;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		b = false;
		ck_assert_int_eq(parse_bool(t[i], &b), 0);
		ck_assert(b);
	}
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		b = true;
		ck_assert_int_eq(parse_bool(f[i], &b), 0);
		ck_assert(!b);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(parse_bool(bad[i], &b) == -EINVAL, "accepted %s", bad[i]);
}
END_TEST

START_TEST(integers)
{
	long long v;

	ck_assert_int_eq(parse_ll("42", &v), 0);
	ck_assert_int_eq(v, 42);
	ck_assert_int_eq(parse_ll("-1", &v), 0);
	ck_assert_int_eq(v, -1);
	ck_assert_int_eq(parse_ll("+7", &v), 0);
	ck_assert_int_eq(v, 7);
	ck_assert_int_eq(parse_ll("0x1F", &v), 0);
	ck_assert_int_eq(v, 31);
	ck_assert_int_eq(parse_ll("010", &v), 0);	/* decimal, not octal */
	ck_assert_int_eq(v, 10);
	ck_assert_int_eq(parse_ll("9223372036854775807", &v), 0);
	ck_assert_int_eq(v, LLONG_MAX);
	ck_assert_int_eq(parse_ll("-9223372036854775808", &v), 0);
	ck_assert_int_eq(v, LLONG_MIN);
	ck_assert_int_eq(parse_ll("9223372036854775808", &v), -ERANGE);
	ck_assert_int_eq(parse_ll("-9223372036854775809", &v), -ERANGE);
	ck_assert_int_eq(parse_ll("99999999999999999999999", &v), -ERANGE);
	ck_assert_int_eq(parse_ll("", &v), -EINVAL);
	ck_assert_int_eq(parse_ll("0x", &v), -EINVAL);
	ck_assert_int_eq(parse_ll("12a", &v), -EINVAL);
	ck_assert_int_eq(parse_ll(" 1", &v), -EINVAL);
	ck_assert_int_eq(parse_ll("1.0", &v), -EINVAL);
	ck_assert_int_eq(parse_ll("--1", &v), -EINVAL);
	ck_assert_int_eq(parse_ll("0x-1", &v), -EINVAL);
}
END_TEST

START_TEST(doubles)
{
	double d;

	ck_assert_int_eq(parse_double("0.25", &d), 0);
	ck_assert(d == 0.25);
	ck_assert_int_eq(parse_double("-1e3", &d), 0);
	ck_assert(d == -1000);
	ck_assert_int_eq(parse_double("nan", &d), -EINVAL);
	ck_assert_int_eq(parse_double("inf", &d), -EINVAL);
	ck_assert_int_eq(parse_double("1e999", &d), -EINVAL);
	ck_assert_int_eq(parse_double("", &d), -EINVAL);
	ck_assert_int_eq(parse_double(" 1", &d), -EINVAL);
	ck_assert_int_eq(parse_double("1x", &d), -EINVAL);
}
END_TEST

START_TEST(formatting)
{
	char buf[32];
	int64_t ms;
	uint64_t b;

	fmt_duration(3600000, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1h");
	fmt_duration(90000, buf, sizeof(buf));
	ck_assert_str_eq(buf, "90s");
	fmt_duration(120000, buf, sizeof(buf));
	ck_assert_str_eq(buf, "2m");
	fmt_duration(1500, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1500ms");
	fmt_duration(0, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0ms");
	fmt_size(4096, buf, sizeof(buf));
	ck_assert_str_eq(buf, "4KiB");
	fmt_size(3ull << 30, buf, sizeof(buf));
	ck_assert_str_eq(buf, "3GiB");
	fmt_size(1000, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1000");
	fmt_size(0, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0");
	/* what is printed parses back to the same value */
	for (int64_t v = 0; v < 5000000; v += 12345) {
		fmt_duration(v * 7, buf, sizeof(buf));
		ck_assert_int_eq(parse_duration_ms(buf, &ms), 0);
		ck_assert_int_eq(ms, v * 7);
		fmt_size((uint64_t)v << 7, buf, sizeof(buf));
		ck_assert_int_eq(parse_size(buf, &b), 0);
		ck_assert_uint_eq(b, (uint64_t)v << 7);
	}
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_test(tc, durations);
	tcase_add_test(tc, sizes);
	tcase_add_test(tc, bools);
	tcase_add_test(tc, integers);
	tcase_add_test(tc, doubles);
	tcase_add_test(tc, formatting);
}

RQ_CHECK_MAIN("convert", add_tests)

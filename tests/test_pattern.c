/* SPDX-License-Identifier: MIT */
/* The payload pattern: intact data passes, one flipped byte is found at its
 * offset, another iteration's data is recognised as such. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "rdma/pattern.h"
#include "core/util.h"
#include "check_main.h"

START_TEST(roundtrip_and_flip)
{
	static const size_t sizes[] = { 1, 7, 8, 9, 4096, 65536 + 3 };

	for (size_t s = 0; s < ARRAY_SIZE(sizes); s++) {
		size_t len = sizes[s];
		uint8_t *buf = xmalloc(len), want, got;

		pattern_fill(buf, len, 42, 7);
		ck_assert_int_eq(pattern_check(buf, len, 42, 7, NULL, NULL), -1);
		/* flip each of a few positions, incl. the first and the last byte */
		size_t offs[] = { 0, len / 2, len - 1 };
		for (size_t k = 0; k < ARRAY_SIZE(offs); k++) {
			uint8_t orig = buf[offs[k]];

			buf[offs[k]] ^= 0x10;
			ck_assert_int_eq(pattern_check(buf, len, 42, 7, &want, &got), (ssize_t)offs[k]);
			ck_assert_uint_eq(want, orig);
			ck_assert_uint_eq(got, orig ^ 0x10);
			buf[offs[k]] = orig;
		}
		free(buf);
	}
}
END_TEST

START_TEST(other_iteration_and_seed)
{
	uint8_t a[256], b[256];
	char msg[200];

	pattern_fill(a, sizeof(a), 1, 16);
	pattern_fill(b, sizeof(b), 1, 17);
	ck_assert(memcmp(a, b, sizeof(a)) != 0);
	/* iteration 16's message checked as iteration 17 fails at its head */
	ck_assert_int_ge(pattern_check(a, sizeof(a), 1, 17, NULL, NULL), 0);
	ck_assert_int_lt(pattern_check(a, sizeof(a), 1, 17, NULL, NULL), 8);
	ck_assert_int_eq(pattern_which(a, sizeof(a), 1, 0, 100), 16);
	pattern_describe(a, sizeof(a), 1, 17, msg, sizeof(msg));
	ck_assert_msg(strstr(msg, "iteration 17: byte ") && strstr(msg, "holds iteration 16's data"),
		      "%s", msg);
	/* another seed is other data too */
	pattern_fill(b, sizeof(b), 2, 16);
	ck_assert(memcmp(a, b, sizeof(a)) != 0);
	/* all zeroes (a message that never arrived) is not any iteration */
	memset(b, 0, sizeof(b));
	ck_assert_int_eq(pattern_which(b, sizeof(b), 1, 0, 100), -1);
	pattern_describe(b, sizeof(b), 1, 3, msg, sizeof(msg));
	ck_assert_msg(strstr(msg, "iteration 3: byte 0 of 256 is 0x00"), "%s", msg);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_test(tc, roundtrip_and_flip);
	tcase_add_test(tc, other_iteration_and_seed);
}

RQ_CHECK_MAIN("pattern", add_tests)

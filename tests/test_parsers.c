/* SPDX-License-Identifier: MIT */
/*
 * What every parser shares (parsers.h): the line iterator, the error
 * formatter, the missing-field list, and the UTF-8-safe JSON text helper of
 * core/json_text.h; and the lenient JSON reader of perftest's --out_json.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <string.h>
#include <jansson.h>
#include "parsers/lenient_json.h"
#include "parsers/parsers.h"
#include "check_main.h"

START_TEST(lines_numbered_trimmed)
{
	/* CRLF, trailing blanks, blank lines and a last line without newline */
	static const char t[] = "a \r\n\n  b\t\nlast";
	struct rq_lines l;
	char *s;

	rq_lines_init(&l, t, sizeof(t) - 1);
	ck_assert_str_eq(rq_lines_next(&l), "a");
	ck_assert_uint_eq(l.no, 1);
	ck_assert_str_eq(rq_lines_next(&l), "");
	ck_assert_str_eq(rq_lines_next(&l), "  b");	/* leading blanks kept */
	ck_assert_uint_eq(l.no, 3);
	ck_assert_uint_eq(l.raw_len, 4);
	s = rq_lines_next(&l);
	ck_assert_str_eq(s, "last");
	ck_assert_uint_eq(l.no, 4);
	ck_assert_ptr_null(rq_lines_next(&l));
	rq_lines_release(&l);
}
END_TEST

START_TEST(lines_nul)
{
	static const char t[] = "ok\nx\0y\nz\n";
	struct rq_lines l;

	rq_lines_init(&l, t, sizeof(t) - 1);
	rq_lines_next(&l);
	ck_assert(!l.nul);
	ck_assert_str_eq(rq_lines_next(&l), "x");	/* a NUL ends the line */
	ck_assert(l.nul);
	ck_assert_uint_eq(l.raw_len, 3);
	ck_assert_str_eq(rq_lines_next(&l), "z");	/* and only the line */
	ck_assert(!l.nul);
	ck_assert_ptr_null(rq_lines_next(&l));
	rq_lines_release(&l);
}
END_TEST

START_TEST(error_shapes)
{
	char err[32];

	ck_assert_int_eq(rq_parse_error(err, sizeof(err), 7, "expected %s", "x"), -EINVAL);
	ck_assert_str_eq(err, "line 7: expected x");
	rq_parse_error(err, sizeof(err), 0, "no block");
	ck_assert_str_eq(err, "no block");
	rq_parse_error_at(err, sizeof(err), "a.net", 3, "bad");
	ck_assert_str_eq(err, "a.net:3: bad");
	/* cut, still terminated */
	rq_parse_error(err, 8, 12345, "long message");
	ck_assert_str_eq(err, "line 12");
	ck_assert_int_eq(rq_parse_error(NULL, 0, 1, "x"), -EINVAL);
}
END_TEST

START_TEST(missing_list)
{
	struct rq_missing m = { .n = 0 };
	json_t *o = json_object();

	rq_missing_json(o, &m);
	ck_assert_ptr_null(json_object_get(o, "missing"));	/* only when any */
	rq_missing_add(&m, "guid");
	rq_missing_add(&m, "guid");
	rq_missing_add(&m, "state");
	ck_assert_uint_eq(m.n, 2);
	ck_assert(rq_missing_has(&m, "state"));
	ck_assert(!rq_missing_has(&m, "lid"));
	rq_missing_json(o, &m);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(o, "missing"), 1)), "state");
	json_decref(o);
}
END_TEST

START_TEST(json_text_utf8)
{
	json_t *j = rq_json_text("a\xff" "b"), *o = json_object();

	ck_assert_str_eq(json_string_value(j), "a\xef\xbf\xbd" "b");
	json_decref(j);
	j = rq_json_text(NULL);
	ck_assert(json_is_null(j));
	json_decref(j);
	j = rq_json_textn("a\0b", 3);
	ck_assert_uint_eq(json_string_length(j), 3);
	json_decref(j);
	rq_json_set_text(o, "k\xfe", json_true());
	ck_assert_uint_eq(json_object_size(o), 1);	/* kept, not dropped */
	json_decref(o);
	j = rq_json_num(INFINITY);	/* JSON has no Inf: null, not a dropped field */
	ck_assert(json_is_null(j));
	json_decref(j);
}
END_TEST

START_TEST(lenient_json)
{
	static const char bare[] = "test_info: {\n test: RDMA_Write_BW,\n Mtu: 1024,\n},\n"
				   "results: { BW_peak: 1.5, },\n";
	char err[128] = "";
	json_t *o = lenient_json_parse(bare, sizeof(bare) - 1, err, sizeof(err));

	ck_assert_msg(o, "%s", err);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "test_info"), "test")),
			 "RDMA_Write_BW");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(o, "test_info"), "Mtu")), 1024);
	ck_assert(json_is_real(json_object_get(json_object_get(o, "results"), "BW_peak")));
	json_decref(o);
	ck_assert_ptr_null(lenient_json_parse("{a: 1}\n}", 9, err, sizeof(err)));
	ck_assert_str_eq(err, "line 2: text after the JSON object");
	ck_assert_ptr_null(lenient_json_parse("a: 1\n}", 6, err, sizeof(err)));
	ck_assert_str_eq(err, "line 2: unexpected '}'");
	ck_assert_ptr_null(lenient_json_parse("{a: \"x\n\"}", 9, err, sizeof(err)));
	ck_assert_str_eq(err, "line 1: unterminated string");
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_test(tc, lines_numbered_trimmed);
	tcase_add_test(tc, lines_nul);
	tcase_add_test(tc, error_shapes);
	tcase_add_test(tc, missing_list);
	tcase_add_test(tc, json_text_utf8);
	tcase_add_test(tc, lenient_json);
}

RQ_CHECK_MAIN("parsers", add_tests)

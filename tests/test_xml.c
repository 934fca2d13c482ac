/* SPDX-License-Identifier: MIT */
/* Unit tests for src/core/xml.c: escaping rules and well-formed output for any
 * input bytes (checked by xmllint when installed). */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "core/xml.h"
#include "xmllint.h"
#include "check_main.h"

static char *esc_text(const char *s, size_t n)
{
	struct sb sb = SB_INIT;
	xml_escape_text(&sb, s, n);
	return sb_detach(&sb);
}

static char *esc_attr(const char *s, size_t n)
{
	struct sb sb = SB_INIT;
	xml_escape_attr(&sb, s, n);
	return sb_detach(&sb);
}

#define CHECK_ESC(fn, in, want) do { \
	char *_g = fn(in, sizeof(in) - 1); \
	ck_assert_str_eq(_g, want); \
	free(_g); \
} while (0)

START_TEST(escaping)
{
	CHECK_ESC(esc_text, "a<b>&\"c'", "a&lt;b&gt;&amp;\"c'");
	CHECK_ESC(esc_attr, "a<b>&\"c'", "a&lt;b&gt;&amp;&quot;c'");
	CHECK_ESC(esc_text, "]]>", "]]&gt;");
	CHECK_ESC(esc_text, "t\tn\nr\r", "t\tn\nr&#13;");
	CHECK_ESC(esc_attr, "t\tn\nr\r", "t&#9;n&#10;r&#13;");
	CHECK_ESC(esc_text, "\x01\x00\x1f\x0b\x0c", "\\x01\\x00\\x1f\\x0b\\x0c");
	CHECK_ESC(esc_text, "\xef\xbf\xbe\xef\xbf\xbf", "\\uFFFE\\uFFFF");
	/* valid UTF-8 passes, including 4-byte and U+FFFD itself */
	CHECK_ESC(esc_text, "\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbd", "\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbd");
	/* invalid UTF-8 -> U+FFFD per byte */
	CHECK_ESC(esc_text, "a\xff\xc3(", "a\xef\xbf\xbd\xef\xbf\xbd(");
	CHECK_ESC(esc_text, "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	/* DEL and C1 controls are legal in XML 1.0 */
	CHECK_ESC(esc_text, "\x7f\xc2\x85", "\x7f\xc2\x85");
}
END_TEST

START_TEST(writer_shape)
{
	struct sb out = SB_INIT;
	struct xml x;

	xml_begin(&x, &out);
	xml_open(&x, "a");
	xml_attr(&x, "k", "v\"");
	xml_open(&x, "b");
	xml_attrf(&x, "n", "%d", 3);
	xml_close(&x);
	xml_open(&x, "c");
	xml_text(&x, "hi<", 3);
	xml_close(&x);
	xml_end(&x);
	ck_assert_str_eq(out.buf,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<a k=\"v&quot;\">\n"
		"  <b n=\"3\"/>\n"
		"  <c>hi&lt;</c>\n"
		"</a>\n");
	sb_release(&out);
}
END_TEST

START_TEST(every_byte_is_well_formed)
{
	char bytes[256 * 3];
	struct sb out = SB_INIT;
	struct xml x;
	size_t n = 0;

	for (int i = 0; i < 256; i++)
		bytes[n++] = (char)i;
	/* and some sequences: noncharacters, a surrogate, truncated tail */
	memcpy(bytes + n, "\xef\xbf\xbe\xed\xb0\x80\xf0\x9f", 8);
	n += 8;
	xml_begin(&x, &out);
	xml_open(&x, "r");
	xml_attr(&x, "a", "");
	xml_open(&x, "t");
	xml_text(&x, bytes, n);
	xml_close(&x);
	xml_end(&x);
	/* attribute too */
	struct sb attr = SB_INIT;
	xml_escape_attr(&attr, bytes, n);
	struct sb doc2 = SB_INIT;
	sb_adds(&doc2, "<r a=\"");
	sb_add(&doc2, attr.buf, attr.len);
	sb_adds(&doc2, "\"/>\n");
	ck_assert_ptr_null(memchr(out.buf, '\0', out.len));
	int ok = xmllint_check(out.buf, out.len, NULL);
	if (ok < 0) {
		fprintf(stderr, "xmllint not installed: well-formedness not checked\n");
	} else {
		ck_assert_int_eq(ok, 1);
		ck_assert_int_eq(xmllint_check(doc2.buf, doc2.len, NULL), 1);
		/* and the check itself can fail */
		ck_assert(xmllint_refuses("<r>\x01</r>", 8, NULL));
	}
	sb_release(&out);
	sb_release(&attr);
	sb_release(&doc2);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, escaping);
	tcase_add_test(tc, writer_shape);
	tcase_add_test(tc, every_byte_is_well_formed);
}

RQ_CHECK_MAIN("xml", add_tests)

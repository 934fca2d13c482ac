/* SPDX-License-Identifier: MIT */
/* A small XML writer: see xml.h for the escaping rules and why. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/xml.h"

static void escape(struct sb *out, const char *s, size_t n, bool attr)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		uint32_t cp;
		size_t l = utf8_decode(p + i, n - i, &cp);

		if (!l) {
			sb_adds(out, "\xef\xbf\xbd");	/* U+FFFD */
			i++;
			continue;
		}
		switch (cp) {
		case '&': sb_adds(out, "&amp;"); break;
		case '<': sb_adds(out, "&lt;"); break;
		case '>': sb_adds(out, "&gt;"); break;
		case '"':
			if (attr)
				sb_adds(out, "&quot;");
			else
				sb_addc(out, '"');
			break;
		/* Attribute-value normalisation would turn these into spaces;
		 * a CR in text would be folded by the parser. */
		case '\t':
			sb_adds(out, attr ? "&#9;" : "\t");
			break;
		case '\n':
			sb_adds(out, attr ? "&#10;" : "\n");
			break;
		case '\r':
			sb_adds(out, "&#13;");
			break;
		case 0xfffe:
		case 0xffff:
			sb_addf(out, "\\u%04X", (unsigned)cp);
			break;
		default:
			if (cp < 0x20)
				sb_addf(out, "\\x%02x", (unsigned)cp);
			else
				sb_add(out, p + i, l);
		}
		i += l;
	}
}

void xml_escape_text(struct sb *out, const char *s, size_t n)
{
	escape(out, s, n, false);
}

void xml_escape_attr(struct sb *out, const char *s, size_t n)
{
	escape(out, s, n, true);
}

void xml_begin(struct xml *x, struct sb *out)
{
	memset(x, 0, sizeof(*x));
	x->out = out;
	sb_adds(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
}

static void indent(struct xml *x, int depth)
{
	for (int i = 0; i < depth; i++)
		sb_adds(x->out, "  ");
}

static void end_tag_start(struct xml *x)
{
	if (x->in_tag) {
		sb_addc(x->out, '>');
		x->in_tag = false;
	}
}

void xml_open(struct xml *x, const char *name)
{
	if (x->depth >= XML_MAX_DEPTH)
		abort();	/* a programming error, not input */
	if (x->depth > 0) {
		end_tag_start(x);
		if (!x->has_text)
			sb_addc(x->out, '\n');
	}
	if (!x->has_text)
		indent(x, x->depth);
	sb_addf(x->out, "<%s", name);
	x->stack[x->depth++] = name;
	x->in_tag = true;
	x->has_text = false;
	x->has_child = false;
}

void xml_attr(struct xml *x, const char *name, const char *value)
{
	if (!x->in_tag)
		abort();
	sb_addf(x->out, " %s=\"", name);
	if (value)
		xml_escape_attr(x->out, value, strlen(value));
	sb_addc(x->out, '"');
}

void xml_attrf(struct xml *x, const char *name, const char *fmt, ...)
{
	struct sb v = SB_INIT;
	va_list ap;

	va_start(ap, fmt);
	sb_vaddf(&v, fmt, ap);
	va_end(ap);
	xml_attr(x, name, v.buf);
	sb_release(&v);
}

void xml_text(struct xml *x, const char *s, size_t n)
{
	end_tag_start(x);
	xml_escape_text(x->out, s, n);
	x->has_text = true;
}

void xml_close(struct xml *x)
{
	if (x->depth <= 0)
		abort();
	const char *name = x->stack[--x->depth];
	if (x->in_tag) {
		sb_adds(x->out, "/>");
		x->in_tag = false;
	} else {
		if (x->has_child && !x->has_text) {
			sb_addc(x->out, '\n');
			indent(x, x->depth);
		}
		sb_addf(x->out, "</%s>", name);
	}
	/* The parent now has a child; text siblings are not mixed with
	 * elements in our reports. */
	x->has_text = false;
	x->has_child = true;
	if (x->depth == 0)
		sb_addc(x->out, '\n');
}

void xml_end(struct xml *x)
{
	while (x->depth > 0)
		xml_close(x);
}

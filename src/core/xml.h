/* SPDX-License-Identifier: MIT */
/*
 * A small XML writer for the reports.  Text and attribute values pass
 * through one escaper: markup characters become entities, bytes XML 1.0
 * cannot carry even as character references (0x00-0x08, 0x0B, 0x0C,
 * 0x0E-0x1F, U+FFFE, U+FFFF) become visible escapes ("\x01", "\uFFFE"),
 * invalid UTF-8 becomes U+FFFD, and valid UTF-8 passes through.  So any
 * byte string, such as a tool's log, yields a well-formed document.
 */
#ifndef RQ_XML_H
#define RQ_XML_H

#include <stddef.h>
#include "core/util.h"

#define XML_MAX_DEPTH 16

struct xml {
	struct sb *out;
	const char *stack[XML_MAX_DEPTH];	/* element names (caller keeps them alive) */
	int depth;
	bool in_tag;		/* "<name attr..." written, not yet ">" */
	bool has_text;		/* current element got text: close inline, no indent */
	bool has_child;
};

/* Escape n bytes of s as element text / attribute value, appending to out. */
void xml_escape_text(struct sb *out, const char *s, size_t n);
void xml_escape_attr(struct sb *out, const char *s, size_t n);

/* Start a document (writes the XML declaration). */
void xml_begin(struct xml *x, struct sb *out);
/* Open an element; name must outlive its xml_close(). */
void xml_open(struct xml *x, const char *name);
/* Attribute on the element just opened (before any text or child). */
void xml_attr(struct xml *x, const char *name, const char *value);
void xml_attrf(struct xml *x, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Text content (any bytes). */
void xml_text(struct xml *x, const char *s, size_t n);
/* Close the innermost open element. */
void xml_close(struct xml *x);
/* Close everything still open. */
void xml_end(struct xml *x);

#endif

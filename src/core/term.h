/* SPDX-License-Identifier: MIT */
/*
 * Text that a node, a guest or a tool supplied (a reason, a row id, a
 * reported hostname, a fact), made safe to print on a terminal or into a
 * plain-text list of one line per entry (the console, the suspects block,
 * the drain list, progress lines, tables).  Every byte that a terminal
 * would act on instead of print becomes '?': C0 controls (ESC, BEL, CR,
 * LF, TAB, BS...), DEL, C1 controls (U+0080..U+009F, 8-bit CSI 0x9b
 * included), the bidirectional overrides and isolates that reorder what is
 * shown (U+202A..U+202E, U+2066..U+2069), the line and paragraph
 * separators (U+2028, U+2029), and every byte that is not part of valid
 * UTF-8.  So `ESC]0;title BEL`, `ESC[2J` and a newline followed by a
 * forged "PASS ..." line print as one inert line.  JSON, JUnit and HTML
 * have escapes of their own (core/json_text.h, core/xml.h, report/html.h).
 */
#ifndef RQ_TERM_H
#define RQ_TERM_H

#include "core/util.h"

/* Append s to sb, made safe (see above); NULL appends nothing. */
void sb_add_term(struct sb *sb, const char *s);
/* A malloc'd copy of s made safe; NULL gives "". */
char *term_safe(const char *s);

#endif

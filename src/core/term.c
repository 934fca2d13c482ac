/* SPDX-License-Identifier: MIT */
/* Terminal-safe text (see term.h). */
#include <stdint.h>
#include "core/term.h"

/* The length of the valid UTF-8 sequence at s (1..4) and its code point, or 0. */
static size_t utf8_char(const unsigned char *s, uint32_t *cp)
{
	size_t n;
	uint32_t c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		c = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		c = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		c = s[0] & 0x07;
	} else {
		return 0;	/* a continuation byte, 0xc0/0xc1 or 0xf5..0xff */
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;	/* cut short (a NUL ends the string here too) */
		c = c << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

static bool inert(uint32_t c)
{
	if (c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f))
		return false;
	if ((c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c == 0x2028 || c == 0x2029)
		return false;
	return true;
}

void sb_add_term(struct sb *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (p && *p) {
		uint32_t c = 0;
		size_t n = utf8_char(p, &c);

		if (n && inert(c)) {
			sb_add(sb, p, n);
			p += n;
		} else {
			sb_addc(sb, '?');
			p += n ? n : 1;
		}
	}
}

char *term_safe(const char *s)
{
	struct sb sb = SB_INIT;

	sb_add_term(&sb, s);
	return sb_detach(&sb);
}

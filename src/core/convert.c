/* SPDX-License-Identifier: MIT */
/*
 * Value conversions shared by the case loader and the CLI: durations and
 * sizes with explicit units, booleans, integers.  Integer arithmetic only,
 * so "1.5s" is exactly 1500 ms and overflow is detected, never wrapped.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "core/case.h"

/*
 * Parse "DIGITS[.DIGITS]" at *p, scaled by mult/div: value = num * mult / div
 * where the result must be a whole number.  Returns 0, -EINVAL (no digits,
 * or a fraction that does not come out whole) or -ERANGE.
 */
static int parse_scaled(const char **p, uint64_t mult, uint64_t div, uint64_t *out)
{
	const char *s = *p;
	uint64_t ip = 0, fnum = 0, fden = 1;
	bool any = false;

	while (isdigit((unsigned char)*s)) {
		uint64_t d = (uint64_t)(*s++ - '0');
		if (ip > UINT64_MAX / 10 || (ip == UINT64_MAX / 10 && d > UINT64_MAX % 10))
			return -ERANGE;
		ip = ip * 10 + d;
		any = true;
	}
	if (*s == '.') {
		s++;
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		while (isdigit((unsigned char)*s)) {
			/* Beyond 18 fractional digits nothing whole can come of it. */
			if (fden >= UINT64_C(1000000000000000000))
				return -EINVAL;
			fnum = fnum * 10 + (uint64_t)(*s++ - '0');
			fden *= 10;
			any = true;
		}
	}
	if (!any)
		return -EINVAL;
	/* whole part */
	if (mult && ip > UINT64_MAX / mult)
		return -ERANGE;
	uint64_t whole = ip * mult;
	if (whole % div) {
		/* e.g. a size unit smaller than one: not used, keep exact */
		return -EINVAL;
	}
	whole /= div;
	/* fractional part: fnum * mult / (fden * div) must be whole */
	if (fnum) {
		unsigned __int128 n = (unsigned __int128)fnum * mult;
		unsigned __int128 d = (unsigned __int128)fden * div;
		if (n % d)
			return -EINVAL;
		unsigned __int128 f = n / d;
		if (f > UINT64_MAX - whole)
			return -ERANGE;
		whole += (uint64_t)f;
	}
	*out = whole;
	*p = s;
	return 0;
}

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static const struct unit {
	const char *name;
	uint64_t mult;
} dur_units[] = {
	{ "ms", 1 },
	{ "s", 1000 },
	{ "m", 60 * 1000 },
	{ "h", 3600 * 1000 },
	{ NULL, 0 },
};

/*
 * "500ms", "30s", "2m", "1h", "1.5s", "1h30m".  A bare number is refused:
 * "timeout: 30" is ambiguous (seconds? milliseconds?), so a unit is always
 * written.
 */
int parse_duration_ms(const char *s, int64_t *ms)
{
	uint64_t total = 0;
	int nparts = 0;

	if (!s)
		return -EINVAL;
	s = skip_ws(s);
	if (*s == '-')
		return -EINVAL;
	while (*s) {
		uint64_t v;
		const char *u;
		const struct unit *un;
		size_t ul = 0;

		/* Find the unit first: the fraction's exactness depends on it. */
		u = s;
		while (isdigit((unsigned char)*u) || *u == '.')
			u++;
		u = skip_ws(u);
		while (isalpha((unsigned char)u[ul]))
			ul++;
		for (un = dur_units; un->name; un++)
			if (strlen(un->name) == ul && !strncmp(u, un->name, ul))
				break;
		if (!un->name)
			return -EINVAL;
		const char *p = s;
		int r = parse_scaled(&p, un->mult, 1, &v);
		if (r)
			return r;
		if (skip_ws(p) != u)
			return -EINVAL;
		if (v > (uint64_t)INT64_MAX - total)
			return -ERANGE;
		total += v;
		nparts++;
		s = skip_ws(u + ul);
	}
	if (!nparts)
		return -EINVAL;
	*ms = (int64_t)total;
	return 0;
}

static const struct unit size_units[] = {
	{ "", 1 },
	{ "B", 1 },
	{ "KiB", UINT64_C(1) << 10 },
	{ "MiB", UINT64_C(1) << 20 },
	{ "GiB", UINT64_C(1) << 30 },
	{ "TiB", UINT64_C(1) << 40 },
	{ "KB", UINT64_C(1000) },
	{ "kB", UINT64_C(1000) },
	{ "MB", UINT64_C(1000000) },
	{ "GB", UINT64_C(1000000000) },
	{ "TB", UINT64_C(1000000000000) },
	{ NULL, 0 },
};

/*
 * "4096", "64B", "4KiB", "1MiB", "1GiB", "10KB" (= 10000), "1MB", "1.5KiB".
 * Units are explicit and case-sensitive: "4k" or "4kb" is refused rather
 * than guessed (1000 or 1024?).
 */
int parse_size(const char *s, uint64_t *bytes)
{
	const char *u, *p;
	const struct unit *un;
	size_t ul = 0;
	uint64_t v;
	int r;

	if (!s)
		return -EINVAL;
	s = skip_ws(s);
	if (*s == '-' || *s == '+')
		return -EINVAL;
	u = s;
	while (isdigit((unsigned char)*u) || *u == '.')
		u++;
	u = skip_ws(u);
	while (isalpha((unsigned char)u[ul]))
		ul++;
	if (*skip_ws(u + ul))
		return -EINVAL;
	for (un = size_units; un->name; un++)
		if (strlen(un->name) == ul && !strncmp(u, un->name, ul))
			break;
	if (!un->name)
		return -EINVAL;
	p = s;
	r = parse_scaled(&p, un->mult, 1, &v);
	if (r)
		return r;
	if (skip_ws(p) != u)
		return -EINVAL;
	*bytes = v;
	return 0;
}

int parse_bool(const char *s, bool *b)
{
	static const char *const yes[] = { "true", "yes", "on", NULL };
	static const char *const no[] = { "false", "no", "off", NULL };

	if (!s)
		return -EINVAL;
	for (int i = 0; yes[i]; i++) {
		if (!strcasecmp(s, yes[i])) {
			*b = true;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*b = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* Decimal or 0x-hex, optional sign; no octal (a leading 0 means nothing). */
int parse_ll(const char *s, long long *v)
{
	const char *p;
	char *end;
	bool neg = false;
	unsigned long long u;

	if (!s)
		return -EINVAL;
	p = s;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	errno = 0;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		if (!isxdigit((unsigned char)p[2]))
			return -EINVAL;
		u = strtoull(p + 2, &end, 16);
	} else {
		u = strtoull(p, &end, 10);
	}
	if (*end)
		return -EINVAL;
	if (errno == ERANGE)
		return -ERANGE;
	if (neg) {
		if (u > (unsigned long long)LLONG_MAX + 1)
			return -ERANGE;
		*v = u == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)u;
	} else {
		if (u > (unsigned long long)LLONG_MAX)
			return -ERANGE;
		*v = (long long)u;
	}
	return 0;
}

int parse_double(const char *s, double *v)
{
	char *end;

	if (!s || !*s || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*v = strtod(s, &end);
	if (*end || end == s)
		return -EINVAL;
	if (!isfinite(*v))
		return -EINVAL;
	if (errno == ERANGE && (*v > 1 || *v < -1))
		return -ERANGE;
	return 0;
}

void fmt_duration(int64_t ms, char *buf, size_t size)
{
	if (ms != 0 && ms % (3600 * 1000) == 0)
		snprintf(buf, size, "%" PRId64 "h", ms / (3600 * 1000));
	else if (ms != 0 && ms % (60 * 1000) == 0)
		snprintf(buf, size, "%" PRId64 "m", ms / (60 * 1000));
	else if (ms != 0 && ms % 1000 == 0)
		snprintf(buf, size, "%" PRId64 "s", ms / 1000);
	else
		snprintf(buf, size, "%" PRId64 "ms", ms);
}

void fmt_size(uint64_t b, char *buf, size_t size)
{
	static const char *const u[] = { "TiB", "GiB", "MiB", "KiB" };

	for (int i = 0; i < 4; i++) {
		uint64_t m = UINT64_C(1) << (10 * (4 - i));
		if (b && b % m == 0) {
			snprintf(buf, size, "%" PRIu64 "%s", b / m, u[i]);
			return;
		}
	}
	snprintf(buf, size, "%" PRIu64, b);
}

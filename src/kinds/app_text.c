/* SPDX-License-Identifier: MIT */
/*
 * Placeholders and regex figures of the command kinds (app_text.h).
 */
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/case.h"
#include "core/util.h"
#include "kinds/app_text.h"

const char *const app_ph_names[PH_COUNT] = {
	[PH_PEER_IP] = "peer_ip",
	[PH_PEER_HOST] = "peer_host",
	[PH_DEV] = "dev",
	[PH_PORT] = "port",
	[PH_GID_INDEX] = "gid_index",
	[PH_NETDEV] = "netdev",
	[PH_IP] = "ip",
	[PH_HOSTS] = "hosts",
	[PH_HOSTFILE] = "hostfile",
	[PH_NNODES] = "nnodes",
	[PH_NP] = "np",
};

static int ph_lookup(const char *name, size_t len, unsigned allowed)
{
	for (int i = 0; i < PH_COUNT; i++)
		if ((allowed & (1u << i)) && strlen(app_ph_names[i]) == len &&
		    !strncmp(app_ph_names[i], name, len))
			return i;
	return -1;
}

/*
 * Walk s: literal text goes to out (when given), each placeholder to cb.
 * One walker for scanning and expanding, so they cannot disagree.
 */
static int ph_walk(const char *s, unsigned allowed, struct sb *out, const char *const *val,
		   const char *const *why, unsigned *used, char *err, size_t errsz)
{
	for (const char *p = s; *p; p++) {
		if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
			if (out)
				sb_addc(out, *p);
			p++;
			continue;
		}
		if (*p == '}') {
			snprintf(err, errsz, "a lone \"}\" in \"%s\" (write \"}}\" for a brace)", s);
			return -1;
		}
		if (*p != '{') {
			if (out)
				sb_addc(out, *p);
			continue;
		}
		const char *end = strchr(p + 1, '}');
		int k = end ? ph_lookup(p + 1, (size_t)(end - p - 1), allowed) : -1;

		if (!end) {
			snprintf(err, errsz, "a \"{\" without its \"}\" in \"%s\" (write \"{{\" for a brace)", s);
			return -1;
		}
		if (k < 0) {
			struct sb names = SB_INIT;

			for (int i = 0; i < PH_COUNT; i++)
				if (allowed & (1u << i))
					sb_addf(&names, "%s{%s}", names.len ? " " : "", app_ph_names[i]);
			snprintf(err, errsz, "unknown placeholder {%.*s} (expected one of %s)",
				 (int)(end - p - 1), p + 1, names.buf ? names.buf : "none");
			sb_release(&names);
			return -1;
		}
		if (used)
			*used |= 1u << k;
		if (out) {
			if (!val || !val[k]) {
				snprintf(err, errsz, "cannot fill {%s}: %s", app_ph_names[k],
					 why && why[k] ? why[k] : "not known on this target");
				return -1;
			}
			sb_adds(out, val[k]);
		}
		p = end;
	}
	return 0;
}

int app_ph_scan(const char *s, unsigned *used, char *err, size_t errsz)
{
	return ph_walk(s, PH_PAIR_SET, NULL, NULL, NULL, used, err, errsz);
}

int app_ph_scan_in(const char *s, unsigned allowed, unsigned *used, char *err, size_t errsz)
{
	return ph_walk(s, allowed, NULL, NULL, NULL, used, err, errsz);
}

char *app_ph_expand(const char *s, const char *const val[PH_COUNT],
		    const char *const why[PH_COUNT], char *err, size_t errsz)
{
	struct sb out = SB_INIT;

	if (ph_walk(s, (1u << PH_COUNT) - 1, &out, val, why, NULL, err, errsz) < 0) {
		sb_release(&out);
		return NULL;
	}
	return sb_detach(&out);	/* a fresh "" when nothing was added */
}

static bool name_ok(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.'))
			return false;
	}
	return true;
}

int app_fig_rule_parse(const char *text, struct app_fig_rule *r, char *err, size_t errsz)
{
	const char *eq = strchr(text, '=');
	const char *br = strchr(text, '[');
	size_t nlen;
	regex_t re;
	int rc;

	memset(r, 0, sizeof(*r));
	if (!eq) {
		snprintf(err, errsz, "figure \"%s\": expected NAME=REGEX or NAME[UNIT]=REGEX", text);
		return -1;
	}
	nlen = (size_t)((br && br < eq ? br : eq) - text);
	if (!name_ok(text, nlen) || nlen >= sizeof(r->name)) {
		snprintf(err, errsz, "figure \"%s\": the name must be [A-Za-z0-9_.]+, at most %zu "
			 "characters", text, sizeof(r->name) - 1);
		return -1;
	}
	memcpy(r->name, text, nlen);
	if (br && br < eq) {
		if (eq[-1] != ']' || (size_t)(eq - 1 - br - 1) >= sizeof(r->unit)) {
			snprintf(err, errsz, "figure \"%s\": expected NAME[UNIT]=REGEX (a unit of at "
				 "most %zu characters)", text, sizeof(r->unit) - 1);
			return -1;
		}
		memcpy(r->unit, br + 1, (size_t)(eq - 1 - br - 1));
	}
	rc = regcomp(&re, eq + 1, REG_EXTENDED | REG_NEWLINE);
	if (rc) {
		char msg[128];

		regerror(rc, &re, msg, sizeof(msg));
		snprintf(err, errsz, "figure %s: bad regular expression \"%s\": %s", r->name, eq + 1, msg);
		return -1;
	}
	if (re.re_nsub != 1) {
		snprintf(err, errsz, "figure %s: the regular expression needs exactly one (group) "
			 "around the number, it has %zu", r->name, re.re_nsub);
		regfree(&re);
		return -1;
	}
	regfree(&re);
	r->regex = xstrdup(eq + 1);
	return 0;
}

void app_fig_rule_release(struct app_fig_rule *r)
{
	free(r->regex);
	r->regex = NULL;
}

int app_fig_rule_apply(const struct app_fig_rule *r, const char *text, double *v,
		       char *err, size_t errsz)
{
	regex_t re;
	regmatch_t m[2];
	const char *p = text, *last = NULL;
	size_t last_len = 0;
	int flags = 0;

	if (regcomp(&re, r->regex, REG_EXTENDED | REG_NEWLINE)) {
		snprintf(err, errsz, "figure %s: bad regular expression", r->name);
		return -1;
	}
	/* The last match: tools print a table and the final line is the result. */
	while (*p && regexec(&re, p, 2, m, flags) == 0) {
		if (m[1].rm_so >= 0) {
			last = p + m[1].rm_so;
			last_len = (size_t)(m[1].rm_eo - m[1].rm_so);
		}
		p += m[0].rm_eo > 0 ? m[0].rm_eo : 1;
		flags = REG_NOTBOL;
		if (p[-1] == '\n')
			flags = 0;
	}
	regfree(&re);
	if (!last)
		return 1;
	char num[64], *end;

	if (last_len == 0 || last_len >= sizeof(num)) {
		snprintf(err, errsz, "figure %s: captured \"%.*s\", not a number", r->name,
			 (int)(last_len < 40 ? last_len : 40), last);
		return -1;
	}
	memcpy(num, last, last_len);
	num[last_len] = '\0';
	errno = 0;
	*v = strtod(num, &end);
	if (*end || end == num || errno || !isfinite(*v) || num[0] == '+' ||
	    strpbrk(num, "xXpPnNiI")) {
		snprintf(err, errsz, "figure %s: captured \"%s\", not a number", r->name, num);
		return -1;
	}
	return 0;
}

int app_memlock_parse(const char *s, bool *unlimited, uint64_t *bytes, char *err, size_t errsz)
{
	*unlimited = !strcmp(s, "unlimited");
	*bytes = 0;
	if (*unlimited)
		return 0;
	if (parse_size(s, bytes)) {
		snprintf(err, errsz, "memlock: \"%s\" is neither a size (64MiB) nor unlimited", s);
		return -1;
	}
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * opensm-conf: a lint of an opensm configuration file, before it reaches a
 * fabric.  opensm reads its file leniently: an unknown key (a typo such as
 * sm_priorty) is ignored with a log line nobody reads, so the SM runs with
 * the default; a repeated key silently takes the last value.  This checks
 * every line against the keys opensm knows (the template `opensm -c` writes,
 * committed in opensm_keys.c), the value's type (TRUE/FALSE, number) and
 * the ranges of the IBA fields the values go into (sm_priority 0-15, lmc
 * 0-7, ...), and reports each problem with file:line.
 *
 * Two `guid` lines are a common mistake worth its own words: one opensm
 * binds one port, so a second guid does not make it manage a second port
 * (the last line wins); a second port needs a second opensm with its own -g
 * (Debian's opensm@<GUID> units do this with PORTS=ALL).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kinds/ibkind.h"
#include "parsers/opensm_keys.h"
#include "core/util.h"

struct oc_cfg {
	char *file;
};

static const struct key_def oc_keys[] = {
	{ .name = "file", .type = KEY_STR, .required = true, .offset = offsetof(struct oc_cfg, file),
	  .help = "the opensm.conf to check, relative to the case file (or the rdmaqual tree)" },
	KEY_END
};

/* Ranges of numeric keys, from the template's comments and the IBA field widths. */
static const struct {
	const char *key;
	long long min, max;
} ranges[] = {
	{ "sm_priority", 0, 15 },		/* SMInfo.Priority, 4 bits */
	{ "lmc", 0, 7 },			/* PortInfo.LMC, 3 bits */
	{ "sm_sl", 0, 15 },
	{ "max_op_vls", 1, 15 },		/* 1: VL0 ... 5: VL0-14 (template), 15 max */
	{ "subnet_timeout", 0, 31 },
	{ "packet_life_time", 0, 0x13 },
	{ "vl_stall_count", 0, 7 },
	{ "leaf_vl_stall_count", 0, 7 },
	{ "head_of_queue_lifetime", 0, 0x14 },
	{ "leaf_head_of_queue_lifetime", 0, 0x14 },
	{ "force_link_speed", 0, 15 },
	{ "force_link_speed_ext", 0, 31 },
	{ "force_link_width", 0, 255 },
	{ "fdr10", 0, 2 },
	{ "sweep_interval", 0, 86400 },
	{ "m_key_protection_level", 0, 3 },
	{ "m_key_lease_period", 0, 65535 },
	{ "local_phy_errors_threshold", 0, 15 },
	{ "overrun_errors_threshold", 0, 15 },
	{ "max_wire_smps", 1, 65535 },
	{ "max_wire_smps2", 1, 65535 },
	{ "transaction_retries", 0, 255 },
	{ "log_flags", 0, 255 },
	{ "qos_max_vls", 0, 15 },
	{ "qos_ca_max_vls", 0, 15 },
	{ "qos_sw0_max_vls", 0, 15 },
	{ "qos_swe_max_vls", 0, 15 },
	{ "qos_rtr_max_vls", 0, 15 },
	{ "console_port", 1, 65535 },
	{ "lash_start_vl", 0, 15 },
	{ "nue_max_num_vls", 1, 15 },
};

static const struct {
	const char *key;
	const char *choices;	/* '|'-separated */
} enums[] = {
	{ "part_enforce", "both|in|out|off" },
	{ "console", "off|local|loopback|socket" },
};

static const char *const engines[] = {
	"minhop", "updn", "dnup", "file", "ftree", "lash", "dor", "torus-2QoS", "nue",
	"dfsssp", "sssp", "chain", "(null)", NULL
};

static const struct opensm_key *find_key(const char *k)
{
	for (const struct opensm_key *o = opensm_keys; o->name; o++)
		if (!strcmp(o->name, k))
			return o;
	return NULL;
}

static const char *closest(const char *k)
{
	const char *best = NULL;
	unsigned bd = 4;

	for (const struct opensm_key *o = opensm_keys; o->name; o++) {
		unsigned d = edit_distance(k, o->name);

		if (d < bd) {
			bd = d;
			best = o->name;
		}
	}
	return best;
}

/*
 * opensm's numbers go up to 64 bits unsigned (sm_key 0xdeadbeefcafe1234 is
 * >= 2^63, which strtoll refused): strtoull, and strtoll only for the
 * negative ones the template has (qos_*_high_limit -1).  A value past
 * LLONG_MAX is kept as LLONG_MAX: above every range below.
 */
static bool is_number(const char *s, long long *v)
{
	char *end;

	errno = 0;
	if (*s == '-') {
		*v = strtoll(s, &end, 0);
	} else {
		unsigned long long u = strtoull(s, &end, 0);

		*v = u > LLONG_MAX ? LLONG_MAX : (long long)u;
	}
	return end != s && !*end && !errno && !isspace((unsigned char)*s);
}

static bool numeric_default(const char *d)
{
	long long v;

	return is_number(d, &v);
}

/* sm_key, sa_key, m_key, ...: secrets; reports are world-readable, so never echoed. */
static const char *shown(const char *key, const char *value)
{
	return str_ends(key, "_key") ? "(value hidden)" : value;
}

static bool in_choices(const char *v, const char *choices)
{
	size_t n = strlen(v);

	for (const char *p = choices; *p;) {
		const char *bar = strchr(p, '|');
		size_t l = bar ? (size_t)(bar - p) : strlen(p);

		if (l == n && !strncmp(p, v, n))
			return true;
		p += l + (bar ? 1 : 0);
	}
	return false;
}

struct seen {
	char key[64];
	unsigned line;
	char value[64];
};

static void oc_run(struct rq_ctx *ctx, const void *vcfg)
{
	const struct oc_cfg *cfg = vcfg;
	char path[PATH_MAX], why[512], *base;
	struct sb text = SB_INIT;
	struct seen *seen = NULL;
	size_t nseen = 0, cap = 0;
	unsigned line = 0, problems = 0, keys = 0;
	struct rq_result *r = ctx->main;

	if (ibkind_find_file(ctx, ibkind_case_file(ctx), cfg->file, path, sizeof(path), why, sizeof(why))) {
		rq_result_set(r, RQ_ERROR, "%s", why);
		return;
	}
	if (read_file(path, &text, 4u << 20) < 0) {
		rq_result_set(r, RQ_ERROR, "cannot read %s: %s", path, strerror(errno));
		sb_release(&text);
		return;
	}
	base = strrchr(cfg->file, '/') ? strrchr(cfg->file, '/') + 1 : cfg->file;
	rq_log(ctx, "# linting %s against the keys of %s", path, opensm_keys_version);
#define PROBLEM(...) do { problems++; rq_judge(r, false, __VA_ARGS__); rq_log(ctx, __VA_ARGS__); } while (0)
	for (char *l = text.buf, *next; l && *l; l = next) {
		char *k, *v, *s = l;
		const struct opensm_key *ok;
		long long num;

		next = strchr(l, '\n');
		if (next)
			*next++ = '\0';
		line++;
		s = strtrim(s);
		if (!*s || *s == '#')
			continue;
		k = s;
		while (*s && !isspace((unsigned char)*s))
			s++;
		if (*s)
			*s++ = '\0';
		v = strtrim(s);
		keys++;
		ok = find_key(k);
		if (!ok) {
			const char *hint = closest(k);

			PROBLEM("%s:%u: unknown key '%s'%s%s%s: opensm ignores it and keeps the default", base,
				line, k, hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
			continue;
		}
		for (size_t i = 0; i < nseen; i++)
			if (!strcmp(seen[i].key, k)) {
				if (!strcmp(k, "guid"))
					PROBLEM("%s:%u: a second 'guid' line (first at line %u): one opensm binds one "
						"port and the last guid wins; to run an SM on a second port start a "
						"second opensm with its own -g (or config file)", base, line, seen[i].line);
				else
					PROBLEM("%s:%u: '%s' repeated (first at line %u, value %s): opensm takes the "
						"last value, %s", base, line, k, seen[i].line,
						shown(k, seen[i].value), shown(k, v));
				break;
			}
		if (nseen == cap) {
			cap = cap ? 2 * cap : 64;
			seen = xrealloc(seen, cap * sizeof(*seen));
		}
		snprintf(seen[nseen].key, sizeof(seen[nseen].key), "%s", k);
		snprintf(seen[nseen].value, sizeof(seen[nseen].value), "%s", v);
		seen[nseen++].line = line;
		if (!*v) {
			PROBLEM("%s:%u: '%s' has no value", base, line, k);
			continue;
		}
		if (!strcasecmp(ok->def, "TRUE") || !strcasecmp(ok->def, "FALSE")) {
			if (strcasecmp(v, "TRUE") && strcasecmp(v, "FALSE"))
				PROBLEM("%s:%u: '%s' takes TRUE or FALSE, not '%s'", base, line, k, shown(k, v));
			continue;
		}
		for (size_t i = 0; i < ARRAY_SIZE(enums); i++)
			if (!strcmp(enums[i].key, k) && !in_choices(v, enums[i].choices))
				PROBLEM("%s:%u: '%s' takes one of %s, not '%s'", base, line, k, enums[i].choices,
					shown(k, v));
		if (!strcmp(k, "routing_engine")) {
			char buf[256], *sv = NULL;

			snprintf(buf, sizeof(buf), "%s", v);
			for (char *e = strtok_r(buf, ",", &sv); e; e = strtok_r(NULL, ",", &sv)) {
				size_t i;

				for (i = 0; engines[i] && strcmp(engines[i], strtrim(e)); i++)
					;
				if (!engines[i])
					PROBLEM("%s:%u: unknown routing engine '%s'", base, line, e);
			}
		}
		/* Per-SL lists ("0 0") and masks are numbers of another shape: checked only as below. */
		if (numeric_default(ok->def) && !strchr(ok->def, ' ')) {
			if (!is_number(v, &num)) {
				PROBLEM("%s:%u: '%s' takes a number, not '%s'", base, line, k, shown(k, v));
				continue;
			}
			for (size_t i = 0; i < ARRAY_SIZE(ranges); i++)
				if (!strcmp(ranges[i].key, k) && (num < ranges[i].min || num > ranges[i].max))
					PROBLEM("%s:%u: '%s' %s is out of range %lld-%lld", base, line, k,
						shown(k, v), ranges[i].min, ranges[i].max);
		}
	}
#undef PROBLEM
	rq_figure_add(r, "keys", keys, "");
	rq_figure_add(r, "problems", problems, "");
	rq_judge(r, keys > 0, "%s: %u key line(s) checked against %s", base, keys, opensm_keys_version);
	free(seen);
	sb_release(&text);
}

const struct rq_kind rq_kind_opensm_conf = {
	.name = "opensm-conf",
	.summary = "lint an opensm.conf: unknown keys, bad values, out-of-range, repeated keys (file:line)",
	.doc = "opensm ignores an unknown key (a typo keeps the default) and takes the last of repeated "
	       "keys.  Every line is checked against the keys OpenSM 3.3.23 writes with `opensm -c` "
	       "(committed data), TRUE/FALSE and numeric types, IBA ranges (sm_priority 0-15, lmc 0-7, "
	       "...), enumerations and routing engines, each problem reported with file:line.  Two "
	       "`guid` lines get their own explanation: one opensm binds one port; a second port needs "
	       "a second opensm with its own -g.  Needs no fabric.",
	.keys = oc_keys,
	.cfg_size = sizeof(struct oc_cfg),
	.default_targets = "local",
	.no_target = true,
	.run = oc_run,
};

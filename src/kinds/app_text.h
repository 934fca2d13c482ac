/* SPDX-License-Identifier: MIT */
/*
 * Text rules of the command kinds that run other people's programs:
 * placeholders in an argv ("{peer_ip}", filled by the run) and figures
 * pulled out of a tool's output by a regular expression ("NAME=REGEX").
 * Pure: text in, text or numbers out, so unit tests reach every rule.
 */
#ifndef RQ_APP_TEXT_H
#define RQ_APP_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The placeholders, in the order of app_ph_names[]. */
enum app_ph { PH_PEER_IP, PH_PEER_HOST, PH_DEV, PH_PORT, PH_GID_INDEX, PH_NETDEV, PH_IP,
	      PH_HOSTS, PH_HOSTFILE, PH_NNODES, PH_NP, PH_COUNT };

extern const char *const app_ph_names[PH_COUNT];

/* What each kind fills: command-pair's two sides, command's one run for all nodes. */
#define PH_PAIR_SET ((1u << PH_PEER_IP) | (1u << PH_PEER_HOST) | (1u << PH_DEV) | \
		     (1u << PH_PORT) | (1u << PH_GID_INDEX) | (1u << PH_NETDEV) | (1u << PH_IP))
#define PH_NODES_SET ((1u << PH_DEV) | (1u << PH_NETDEV) | (1u << PH_IP) | (1u << PH_HOSTS) | \
		      (1u << PH_HOSTFILE) | (1u << PH_NNODES) | (1u << PH_NP))

/*
 * Which placeholders s uses (bit 1 << enum app_ph), or -1 with err naming
 * the first unknown one or a lone brace.  "{{" and "}}" are literal braces.
 * app_ph_scan knows command-pair's set; app_ph_scan_in the set `allowed`.
 */
int app_ph_scan(const char *s, unsigned *used, char *err, size_t errsz);
int app_ph_scan_in(const char *s, unsigned allowed, unsigned *used, char *err, size_t errsz);

/*
 * Fill s's placeholders from val[] (NULL: not available here, with why[]
 * saying why).  Returns a malloc'd string, or NULL with err naming the
 * placeholder that has no value.
 */
char *app_ph_expand(const char *s, const char *const val[PH_COUNT],
		    const char *const why[PH_COUNT], char *err, size_t errsz);

/* A figure rule: "NAME=REGEX" or "NAME[UNIT]=REGEX", one capture group. */
struct app_fig_rule {
	char name[64];
	char unit[32];
	char *regex;		/* malloc'd */
};

/* Parse and compile-check one rule; 0, or -1 with err. */
int app_fig_rule_parse(const char *text, struct app_fig_rule *r, char *err, size_t errsz);
void app_fig_rule_release(struct app_fig_rule *r);

/*
 * Apply a rule to text: the last match's first group, read as a number
 * (decimal only: a leading "+", hex, inf and nan are refused).
 * 0 with *v, 1 when nothing matches, -1 when the group is not a number
 * (err says what it captured).
 */
int app_fig_rule_apply(const struct app_fig_rule *r, const char *text, double *v,
		       char *err, size_t errsz);

/*
 * A memlock: value, "unlimited" or a size ("64MiB"): 0 with *unlimited or
 * *bytes, -1 with err.  The kinds apply it with setrlimit(RLIMIT_MEMLOCK).
 */
int app_memlock_parse(const char *s, bool *unlimited, uint64_t *bytes, char *err, size_t errsz);

struct rq_ctx;
/* Not pure (app_memlock.c): setrlimit() in this worker, logged; -1 with err. */
int app_memlock_apply(struct rq_ctx *ctx, const char *text, char *err, size_t errsz);

#endif

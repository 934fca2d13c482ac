/* SPDX-License-Identifier: MIT */
/*
 * Lab runs: the report's lab part.  Per two-sided case a node x node
 * matrix of its main figure (the client row's first figure, the weakest
 * rail's), the suspects by pairwise elimination (src/cluster/suspects.c)
 * and the drain list an operator may feed to `scontrol update
 * nodename=NODE state=drain reason=...`.  rdmaqual drains nothing itself.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cluster/suspects.h"
#include "core/term.h"
#include "qual/compare.h"
#include "qual/stats.h"
#include "lab/lab_int.h"
#include "report/html.h"

/* A pair far worse than its case's median is as suspect as one that failed. */

/*
 * Mark pairs slow beyond the noise of their case's matrix: worse than the
 * median of the passing pairs by more than compare's tolerance and by more
 * than 3.5 robust standard deviations (qual/stats.h, rq_outlier_worse), so
 * a quiet rack of ConnectX names a pair 10 % down, and a noisy TCG matrix
 * does not name one that is merely unlucky.  Three pairs at least.
 *
 * A pair on a software device (rxe, siw) moves data at its hosts' CPU
 * speed, and on shared or emulated CPUs three pairs may agree within a
 * percent while the fourth is 17 % off in a healthy ring of four TCG
 * guests (robust z 14.2: the MAD of three that agree is no measure of
 * that noise).  Such a pair must be SOFT_SLOW_TOL worse to be named.
 */
#define SOFT_SLOW_TOL 30.0
static void mark_slow(struct cluster *cl, bool *slow)
{
	double *v = xcalloc(cl->npairs + 1, sizeof(*v));

	for (size_t k = 0; k < cl->npair_cases; k++) {
		const struct rq_case *c = cl->pair_cases[k];
		size_t n = 0;

		for (size_t i = 0; i < cl->npairs; i++)
			if (cl->pairs[i].c == c && cl->pairs[i].has_fig && cl->pairs[i].verdict == RQ_PASS)
				v[n++] = cl->pairs[i].fig;
		if (n < 3)
			continue;
		double med = rq_stats_median(v, n);

		for (size_t i = 0; i < cl->npairs; i++) {
			struct cpair *p = &cl->pairs[i];
			bool hb = cluster_higher_better(p->unit);
			double z;

			if (p->c != c || !p->has_fig || p->verdict != RQ_PASS ||
			    !rq_outlier_worse(v, n, p->fig, hb ? 1 : -1, p->soft ? SOFT_SLOW_TOL : RQ_COMPARE_DEFAULT_TOL,
					      &z))
				continue;
			slow[i] = true;
			/* what is "ID PASS" for a pair that passed: the ID is what counts */
			size_t idlen = p->what ? strcspn(p->what, " ") : 0;
			char zs[32];

			if (isinf(z))
				snprintf(zs, sizeof(zs), "the other pairs agree");
			else
				snprintf(zs, sizeof(zs), "robust z %.1f", z);
			char *w = xasprintf("%.*s at %.4g %s, %.0f%% %s the median %.4g %s of %zu pairs, beyond "
					    "the matrix's noise (%s)", (int)(idlen ? idlen : strlen(c->name)),
					    idlen ? p->what : c->name, p->fig, p->unit,
					    fabs(p->fig - med) / fabs(med) * 100, hb ? "below" : "above", med, p->unit,
					    n, zs);

			free(p->what);
			p->what = w;
		}
	}
	free(v);
}

static void console_matrix(const struct cluster *cl, const struct rq_case *c)
{
	size_t n = cl->n;
	const char *fig = "", *unit = "";

	for (size_t i = 0; i < cl->npairs; i++)
		if (cl->pairs[i].c == c && cl->pairs[i].has_fig) {
			fig = cl->pairs[i].fig_name;
			unit = cl->pairs[i].unit;
			break;
		}
	if (n > 24) {
		printf("\n%s: %zu x %zu matrix in results.json (the console shows up to 24 nodes)\n",
		       c->name, n, n);
		return;
	}
	printf("\n%s: %s%s%s%s (row: client, column: server)\n%-10s", c->name, *fig ? fig : "verdict",
	       *unit ? " [" : "", unit, *unit ? "]" : "", "");
	for (size_t j = 0; j < n; j++)
		printf(" %8.8s", cl->nodes[j].name);
	printf("\n");
	for (size_t i = 0; i < n; i++) {
		printf("%-10.10s", cl->nodes[i].name);
		for (size_t j = 0; j < n; j++) {
			const struct cpair *p = NULL;

			for (size_t k = 0; k < cl->npairs && !p; k++)
				if (cl->pairs[k].c == c && cl->pairs[k].client == i && cl->pairs[k].server == j)
					p = &cl->pairs[k];
			if (!p)
				printf(" %8s", i == j ? "-" : ".");
			else if (p->verdict != RQ_PASS)
				printf(" %8s", rq_verdict_name(p->verdict));
			else if (p->has_fig)
				printf(" %8.4g", p->fig);
			else
				printf(" %8s", "PASS");
		}
		printf("\n");
	}
}

static json_t *matrix_json(const struct cluster *cl, const struct rq_case *c)
{
	json_t *m = json_object(), *vals = json_array(), *verd = json_array(), *names = json_array();
	size_t n = cl->n;
	const struct cpair **cell = xcalloc(n * n + 1, sizeof(*cell));
	const char *fig = NULL, *unit = NULL;

	for (size_t k = 0; k < cl->npairs; k++)
		if (cl->pairs[k].c == c) {
			cell[cl->pairs[k].client * n + cl->pairs[k].server] = &cl->pairs[k];
			if (!fig && cl->pairs[k].has_fig) {
				fig = cl->pairs[k].fig_name;
				unit = cl->pairs[k].unit;
			}
		}
	for (size_t i = 0; i < n; i++) {
		json_t *rv = json_array(), *rd = json_array();

		json_array_append_new(names, json_string(cl->nodes[i].name));
		for (size_t j = 0; j < n; j++) {
			const struct cpair *p = cell[i * n + j];

			json_array_append_new(rv, p && p->has_fig && isfinite(p->fig) ?
					      json_real(p->fig) : json_null());
			json_array_append_new(rd, p ? json_string(rq_verdict_name(p->verdict)) : json_null());
		}
		json_array_append_new(vals, rv);
		json_array_append_new(verd, rd);
	}
	free(cell);
	json_object_set_new(m, "case", json_string(c->name));
	json_object_set_new(m, "pairs_policy", json_string(cluster_case_policy(cl, c)));
	json_object_set_new(m, "figure", fig ? json_string(fig) : json_null());
	json_object_set_new(m, "unit", unit ? json_string(unit) : json_null());
	json_object_set_new(m, "nodes", names);
	json_object_set_new(m, "values", vals);
	json_object_set_new(m, "verdicts", verd);
	return m;
}

/* report.html: the matrix as a heat map (report/html_chart.c draws it). */
static void html_matrix(const struct cluster *cl, const struct rq_case *c, struct sb *html)
{
	size_t n = cl->n;
	double *cells = xmalloc((n * n + 1) * sizeof(*cells));
	const char **labels = xcalloc(n + 1, sizeof(*labels));
	const char *unit = NULL;
	char *title;

	for (size_t i = 0; i < n * n; i++)
		cells[i] = NAN;
	for (size_t i = 0; i < n; i++)
		labels[i] = cl->nodes[i].name;
	for (size_t k = 0; k < cl->npairs; k++) {
		const struct cpair *p = &cl->pairs[k];

		if (p->c != c || !p->has_fig)
			continue;
		cells[p->client * n + p->server] = p->fig;
		unit = p->unit;
	}
	if (!unit) {		/* no figure at all (every pair skipped or failed) */
		free(labels);
		free(cells);
		return;
	}
	title = xasprintf("%s: client (row) to server (column)", c->name);
	rq_html_heatmap(html, title, labels, n, cells, unit, cluster_higher_better(unit));
	free(title);
	free(labels);
	free(cells);
}

static void write_drain_list(const struct cluster *cl, const struct rq_suspects *s)
{
	struct sb out = SB_INIT;

	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i].link >= 0)
			continue;	/* a link is not a node: both ends passed elsewhere */
		/* one line per node, whatever the evidence held (no escape, no line break: core/term.h) */
		sb_add_term(&out, cl->nodes[s->v[i].node].name);
		sb_addc(&out, ' ');
		sb_add_term(&out, s->v[i].reason);
		sb_addc(&out, '\n');
	}
	int ret = write_file_atomic(cl->co.drain_list, out.buf, out.len);

	if (ret)
		fprintf(stderr, "rdmaqual: cannot write the drain list %s: %s\n", cl->co.drain_list,
			strerror(-ret));
	else
		printf("drain list: %s (%s)\n", cl->co.drain_list,
		       out.len ? "nodes to drain, one per line" : "empty: nothing to drain");
	sb_release(&out);
}

json_t *cluster_report(struct cluster *cl, const struct rq_results *rs, char **html_out)
{
	struct sb html = SB_INIT;
	json_t *lab = json_object(), *nodes = json_array(), *pairs = json_array();
	json_t *mats = json_array(), *sus = json_array();
	bool *slow = xcalloc(cl->npairs + 1, sizeof(*slow));
	struct rq_node_outcome *no = xcalloc(cl->n + 1, sizeof(*no));
	struct rq_pair_outcome *po = xcalloc(cl->npairs + 1, sizeof(*po));
	const char **names = xcalloc(cl->n + 1, sizeof(*names));
	struct rq_suspects s;
	size_t npo = 0;

	(void)rs;
	mark_slow(cl, slow);
	for (size_t i = 0; i < cl->n; i++) {
		struct cnode *nd = &cl->nodes[i];
		json_t *j = json_object(), *rails = json_array();

		names[i] = nd->name;
		no[i] = (struct rq_node_outcome){ nd->down, nd->fails,
						  nd->down ? nd->down_why : nd->first_fail };
		json_object_set_new(j, "name", json_string(nd->name));
		json_object_set_new(j, "hostname", json_string(nd->hostname));
		json_object_set_new(j, "same_hostname_as", nd->same_host >= 0 ?
				    json_string(cl->nodes[nd->same_host].name) : json_null());
		json_object_set_new(j, "target", json_string(nd->target));
		json_object_set_new(j, "up", json_boolean(!nd->down));
		json_object_set_new(j, "down_why", nd->down ? json_string(nd->down_why) : json_null());
		json_object_set_new(j, "node_failures", json_integer(nd->fails));
		for (size_t r = 0; r < nd->nrails; r++)
			json_array_append_new(rails, json_pack("{s:s, s:i, s:s, s:s}", "device",
				nd->rails[r].dev, "port", nd->rails[r].port, "ipv4", nd->rails[r].ipv4,
				"gid", nd->rails[r].gid));
		json_object_set_new(j, "rails", rails);
		json_array_append_new(nodes, j);
	}
	for (size_t i = 0; i < cl->npairs; i++) {
		struct cpair *p = &cl->pairs[i];
		json_t *j = json_pack("{s:s, s:i, s:s, s:s, s:s, s:b}", "case", p->c->name,
				      "round", (int)p->round + 1, "client", cl->nodes[p->client].name,
				      "server", cl->nodes[p->server].name,
				      "verdict", rq_verdict_name(p->verdict), "slow", slow[i]);

		json_object_set_new(j, "figure", p->has_fig ? json_pack("{s:s, s:f, s:s}", "name",
				    p->fig_name, "value", isfinite(p->fig) ? p->fig : 0.0, "unit",
				    p->unit) : json_null());
		json_array_append_new(pairs, j);
		/* SKIPs say nothing either way */
		if (p->verdict == RQ_SKIP)
			continue;
		po[npo++] = (struct rq_pair_outcome){ p->client, p->server,
			p->verdict != RQ_PASS || slow[i], p->what ? p->what : p->c->name };
	}
	for (size_t k = 0; k < cl->npair_cases; k++) {
		json_array_append_new(mats, matrix_json(cl, cl->pair_cases[k]));
		console_matrix(cl, cl->pair_cases[k]);
		if (cl->n <= 128)	/* a bigger map is unreadable; results.json has it */
			html_matrix(cl, cl->pair_cases[k], &html);
	}
	rq_suspects_find(cl->n, names, no, po, npo, &s);
	printf("\n%s\n", s.n ? "suspects (pairwise elimination):" : "suspects: none");
	for (size_t i = 0; i < s.n; i++) {
		const char *a = cl->nodes[s.v[i].node].name;
		/* the evidence is what nodes and tools said: printed as inert text (core/term.h) */
		char *why = term_safe(s.v[i].reason);

		if (s.v[i].link >= 0)
			printf("  link %s-%s: %s\n", a, cl->nodes[s.v[i].link].name, why);
		else
			printf("  node %s: %s\n", a, why);
		free(why);
		json_array_append_new(sus, json_pack("{s:s, s:o, s:s}", "node", a, "link",
			s.v[i].link >= 0 ? json_string(cl->nodes[s.v[i].link].name) : json_null(),
			"reason", s.v[i].reason));
	}
	if (cl->co.drain_list)
		write_drain_list(cl, &s);
	json_object_set_new(lab, "launcher", json_string(cl->launcher == LAUNCH_SSH ? "ssh" :
			    cl->launcher == LAUNCH_SLURM ? "slurm" : "local"));
	json_object_set_new(lab, "fanout", json_integer(cl->co.fanout));
	json_object_set_new(lab, "pairs_policy", json_string(cl->policy_text));
	json_object_set_new(lab, "planning_ms", json_real(cl->plan_ms));
	json_object_set_new(lab, "nodes", nodes);
	json_object_set_new(lab, "pairs", pairs);
	json_object_set_new(lab, "matrices", mats);
	json_object_set_new(lab, "suspects", sus);
	rq_suspects_release(&s);
	*html_out = html.len ? sb_detach(&html) : NULL;
	sb_release(&html);
	free(names);
	free(po);
	free(no);
	free(slow);
	return lab;
}

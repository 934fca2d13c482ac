/* SPDX-License-Identifier: MIT */
/*
 * junit.xml in the shape of Jenkins' junit-10 schema (tests/junit-10.xsd),
 * which is what CI tools read:
 *
 *   <testsuites name tests failures errors time>
 *     <testsuite name tests failures errors skipped time timestamp hostname>
 *       <properties> run facts, then per-row target/figures/facts under
 *                    case-qualified names ("mtu.roce[rxe0/1].active_mtu")
 *       <testcase classname name time>
 *         <skipped message/> | <error message type/> | <failure message type/>
 *         <system-out> last RQ_JUNIT_LOG_TAIL bytes of the row's log
 *
 * One testsuite per case file, in order of first appearance: a suite folder
 * with many files stays readable, and the file is what a user edits.  A lab
 * run (--nodes) has one testsuite per node instead, named by its --nodes
 * name, with the hostname the node reported, plus one "pairs" suite of the
 * rows between nodes.
 * junit-10 allows no <properties> inside <testcase>, hence the qualified
 * names at suite level.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/report.h"
#include "core/xml.h"

/* "cases/mtu/roce.yaml" -> "mtu.roce"; no file -> "rdmaqual". */
static char *suite_name(const char *file)
{
	if (!file || !*file)
		return xstrdup("rdmaqual");
	const char *base = strrchr(file, '/');
	const char *stem = base ? base + 1 : file;
	size_t stem_len = strlen(stem);
	const char *dot = strrchr(stem, '.');
	if (dot && dot != stem)
		stem_len = dot - stem;
	if (!base || base == file)
		return xstrndup(stem, stem_len);
	const char *dir = base;
	while (dir > file && dir[-1] != '/')
		dir--;
	return xasprintf("%.*s.%.*s", (int)(base - dir), dir, (int)stem_len, stem);
}

static bool same_file(const char *a, const char *b)
{
	if (!a || !b)
		return !a && !b;
	return !strcmp(a, b);
}

/*
 * Lab runs: a node's rows make one suite named by its --nodes name, and
 * the rows between nodes one suite "pairs"; other rows go by case file.
 */
static bool same_suite(const struct rq_result *a, const struct rq_result *b)
{
	if (a->peer_node || b->peer_node)
		return a->peer_node && b->peer_node;
	if (a->node || b->node)
		return a->node && b->node && !strcmp(a->node, b->node);
	return same_file(a->file, b->file);
}

static char *row_suite_name(const struct rq_result *r)
{
	if (r->peer_node)
		return xstrdup("pairs");
	if (r->node)
		return xstrdup(r->node);
	return suite_name(r->file);
}

/* SUREFIRE_TIME allows at most three decimals. */
static void attr_time(struct xml *x, double s)
{
	if (!(s >= 0) || s > 1e12)
		s = 0;
	xml_attrf(x, "time", "%.3f", s);
}

static void property(struct xml *x, const char *name, const char *value)
{
	xml_open(x, "property");
	xml_attr(x, "name", name);
	xml_attr(x, "value", value ? value : "");
	xml_close(x);
}

static void row_properties(struct xml *x, const struct rq_result *r)
{
	char *n, *v;

	n = xasprintf("%s.target", r->id);
	property(x, n, r->target);
	free(n);
	if (r->target_why) {
		n = xasprintf("%s.target_why", r->id);
		property(x, n, r->target_why);
		free(n);
	}
	for (size_t i = 0; i < r->nfigs; i++) {
		n = xasprintf("%s.%s", r->id, r->figs[i].name);
		v = xasprintf("%.10g%s%s", r->figs[i].value,
			      *r->figs[i].unit ? " " : "", r->figs[i].unit);
		property(x, n, v);
		free(n);
		free(v);
	}
	for (size_t i = 0; i < r->nfacts; i++) {
		n = xasprintf("%s.%s", r->id, r->facts[i].key);
		property(x, n, r->facts[i].value);
		free(n);
	}
}

static void system_out(struct xml *x, const struct rq_result *r)
{
	const char *p = r->log.buf;
	size_t n = r->log.len;
	struct sb text = SB_INIT;

	if (!n && !r->log_path)
		return;
	if (r->log_path)
		sb_addf(&text, "[whole log: %s]\n", r->log_path);
	if (n > RQ_JUNIT_LOG_TAIL) {
		size_t skip = n - RQ_JUNIT_LOG_TAIL;
		/* start on a character boundary */
		for (int i = 0; i < 3 && skip < n && ((unsigned char)p[skip] & 0xc0) == 0x80; i++)
			skip++;
		sb_addf(&text, "[... %zu bytes omitted ...]\n", skip);
		p += skip;
		n -= skip;
	}
	sb_add(&text, p, n);
	xml_open(x, "system-out");
	xml_text(x, text.buf, text.len);
	xml_close(x);
	sb_release(&text);
}

static void testcase(struct xml *x, const char *classname, const struct rq_result *r)
{
	const char *reason = r->reason && *r->reason ? r->reason : "no reason recorded";

	xml_open(x, "testcase");
	xml_attr(x, "classname", classname);
	xml_attr(x, "name", r->id);
	attr_time(x, r->duration_s);
	switch (r->verdict) {
	case RQ_PASS:
		break;
	case RQ_SKIP:
		xml_open(x, "skipped");
		xml_attr(x, "message", reason);
		xml_close(x);
		break;
	case RQ_FAIL:
		xml_open(x, "failure");
		xml_attr(x, "message", reason);
		xml_attr(x, "type", "FAIL");
		xml_close(x);
		break;
	case RQ_ERROR:
		xml_open(x, "error");
		xml_attr(x, "message", reason);
		xml_attr(x, "type", "ERROR");
		xml_close(x);
		break;
	default:
		xml_open(x, "error");
		xml_attr(x, "message", "the row has no verdict (harness bug)");
		xml_attr(x, "type", "ERROR");
		xml_close(x);
		break;
	}
	system_out(x, r);
	xml_close(x);
}

static void testsuite(struct xml *x, const struct rq_run_info *ri,
		      const struct rq_results *rs, size_t first, bool *done)
{
	const struct rq_result *head = rs->v[first];
	char *name = row_suite_name(head);
	struct rq_results sub = { 0 };
	struct rq_counts c;
	double t = 0;

	for (size_t i = first; i < rs->n; i++) {
		if (done[i] || !same_suite(rs->v[i], head))
			continue;
		done[i] = true;
		sub.v = xrealloc(sub.v, (sub.n + 1) * sizeof(*sub.v));
		sub.v[sub.n++] = rs->v[i];
		if (rs->v[i]->duration_s > 0)
			t += rs->v[i]->duration_s;
	}
	rq_results_count(&sub, &c);
	xml_open(x, "testsuite");
	xml_attr(x, "name", name);
	xml_attrf(x, "tests", "%u", c.total);
	xml_attrf(x, "failures", "%u", c.fail);
	xml_attrf(x, "errors", "%u", c.error);
	xml_attrf(x, "skipped", "%u", c.skip);
	attr_time(x, t);
	xml_attr(x, "timestamp", ri->started);
	/* a lab node's suite: what the node reported (a fact), else its --nodes name */
	const char *host = head->node && !head->peer_node ? head->node : ri->hostname;

	for (size_t i = 0; head->node && !head->peer_node && i < head->nfacts; i++)
		if (!strcmp(head->facts[i].key, "node.hostname"))
			host = head->facts[i].value;
	xml_attr(x, "hostname", host);
	if (ri->nfacts || sub.n) {
		xml_open(x, "properties");
		for (size_t i = 0; i < ri->nfacts; i++)
			property(x, ri->facts[i].key, ri->facts[i].value);
		for (size_t i = 0; i < sub.n; i++)
			row_properties(x, sub.v[i]);
		xml_close(x);
	}
	for (size_t i = 0; i < sub.n; i++)
		testcase(x, name, sub.v[i]);
	xml_close(x);
	free(sub.v);
	free(name);
}

void rq_junit_render(struct sb *out, const struct rq_run_info *ri, const struct rq_results *rs)
{
	struct xml x;
	struct rq_counts c;
	bool *done = xcalloc(rs->n ? rs->n : 1, sizeof(*done));
	double t = ri->finished ? ri->duration_s : 0;

	if (!ri->finished)
		for (size_t i = 0; i < rs->n; i++)
			if (rs->v[i]->duration_s > 0)
				t += rs->v[i]->duration_s;
	rq_results_count(rs, &c);
	xml_begin(&x, out);
	xml_open(&x, "testsuites");
	xml_attr(&x, "name", "rdmaqual");
	xml_attrf(&x, "tests", "%u", c.total);
	xml_attrf(&x, "failures", "%u", c.fail);
	xml_attrf(&x, "errors", "%u", c.error);
	attr_time(&x, t);
	for (size_t i = 0; i < rs->n; i++)
		if (!done[i])
			testsuite(&x, ri, rs, i, done);
	xml_end(&x);
	free(done);
}

int rq_junit_write(const char *path, const struct rq_run_info *ri, const struct rq_results *rs)
{
	struct sb out = SB_INIT;
	int ret;

	rq_junit_render(&out, ri, rs);
	ret = write_file_atomic(path, out.buf, out.len);
	sb_release(&out);
	return ret;
}

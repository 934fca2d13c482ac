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

/*
 * Lab runs: a node's rows make one suite named by its --nodes name, and
 * the rows between nodes one suite "pairs"; other rows go by case file.
 * The key tells those apart (a node called "pairs" is not the pairs suite).
 */
static char *suite_key(const struct rq_result *r)
{
	if (r->peer_node)
		return xstrdup("p");
	if (r->node)
		return xasprintf("n%s", r->node);
	return r->file ? xasprintf("f%s", r->file) : xstrdup("-");
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
	if (r->repeat) {
		/* CI tools key test cases by name: each round of run --repeat is one of its own */
		char *name = xasprintf("%s #%u", r->id, r->repeat);

		xml_attr(x, "name", name);
		free(name);
	} else {
		xml_attr(x, "name", r->id);
	}
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

/* Bytes of XML held before they are written to the file. */
#define FLUSH_BYTES (1u << 20)

static void count_row(struct rq_counts *c, enum rq_verdict v)
{
	struct rq_result r = { .verdict = v };
	struct rq_result *one = &r;
	struct rq_results rs = { &one, 1, NULL };
	struct rq_counts k;

	rq_results_count(&rs, &k);
	c->pass += k.pass;
	c->fail += k.fail;
	c->skip += k.skip;
	c->error += k.error;
	c->total += k.total;
}

/*
 * The suites in order of first appearance, each a list of its rows, made
 * in one pass: rows are read a time each (a spooled run has them on disk)
 * and a suite is not found by scanning the others (4,096 node suites).
 */
struct suite {
	char *name, *host;	/* host: its first row's last node.hostname fact, or NULL */
	bool node;		/* a lab node's suite */
	struct rq_counts c;
	double t;
	size_t first, last;
};

struct suites {
	struct suite *v;
	size_t n;
	size_t *next;		/* per row: the next row of its suite, or SIZE_MAX */
};

static void suites_make(struct suites *ss, const struct rq_results *rs, double *sum)
{
	size_t n = rq_results_total(rs);
	struct strmap map = { 0 };
	char **keys = xcalloc(n + 1, sizeof(*keys));

	memset(ss, 0, sizeof(*ss));
	ss->next = xcalloc(n + 1, sizeof(*ss->next));
	for (size_t i = 0; i < n; i++) {
		const struct rq_result *r = rq_results_get(rs, i);
		bool added;
		size_t *slot;
		struct suite *su;

		keys[i] = suite_key(r);
		slot = strmap_put(&map, keys[i], ss->n, &added);
		ss->next[i] = SIZE_MAX;
		if (added) {
			ss->v = xrealloc(ss->v, (ss->n + 1) * sizeof(*ss->v));
			su = &ss->v[ss->n++];
			memset(su, 0, sizeof(*su));
			su->name = row_suite_name(r);
			su->node = r->node && !r->peer_node;
			su->first = i;
			/* the last one, as a row's facts are read elsewhere */
			for (size_t k = 0; su->node && k < r->nfacts; k++)
				if (!strcmp(r->facts[k].key, "node.hostname")) {
					free(su->host);
					su->host = xstrdup(r->facts[k].value);
				}
		} else {
			su = &ss->v[*slot];
			ss->next[su->last] = i;
		}
		su->last = i;
		count_row(&su->c, r->verdict);
		if (r->duration_s > 0)
			su->t += r->duration_s;
		if (sum && r->duration_s > 0)
			*sum += r->duration_s;
	}
	strmap_release(&map);
	for (size_t i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
}

static void suites_release(struct suites *ss)
{
	for (size_t i = 0; i < ss->n; i++) {
		free(ss->v[i].name);
		free(ss->v[i].host);
	}
	free(ss->v);
	free(ss->next);
}

static void drain(struct xml *x, struct afile *f)
{
	if (f && !x->in_tag)
		afile_drain(f, x->out, FLUSH_BYTES);
}

static void testsuite(struct xml *x, const struct rq_run_info *ri, const struct rq_results *rs,
		      const struct suites *ss, const struct suite *su, struct afile *f)
{
	xml_open(x, "testsuite");
	xml_attr(x, "name", su->name);
	xml_attrf(x, "tests", "%u", su->c.total);
	xml_attrf(x, "failures", "%u", su->c.fail);
	xml_attrf(x, "errors", "%u", su->c.error);
	xml_attrf(x, "skipped", "%u", su->c.skip);
	attr_time(x, su->t);
	xml_attr(x, "timestamp", ri->started);
	/* a lab node's suite: what the node reported (a fact), else its --nodes name */
	xml_attr(x, "hostname", su->host ? su->host : su->node ? su->name : ri->hostname);
	xml_open(x, "properties");
	if (rq_run_info_synthesized(ri))
		property(x, "synthesized", "true");	/* a fixture's verdicts, not a machine's */
	for (size_t i = 0; i < ri->nfacts; i++)
		property(x, ri->facts[i].key, ri->facts[i].value);
	for (size_t i = su->first; i != SIZE_MAX; i = ss->next[i]) {
		row_properties(x, rq_results_get(rs, i));
		drain(x, f);
	}
	xml_close(x);
	for (size_t i = su->first; i != SIZE_MAX; i = ss->next[i]) {
		testcase(x, su->name, rq_results_get(rs, i));
		drain(x, f);
	}
	xml_close(x);
}

static void render(struct sb *out, struct afile *f, const struct rq_run_info *ri,
		   const struct rq_results *rs)
{
	struct xml x;
	struct rq_counts c;
	struct suites ss;
	double t = ri->finished ? ri->duration_s : 0;

	suites_make(&ss, rs, ri->finished ? NULL : &t);
	rq_results_count(rs, &c);
	xml_begin(&x, out);
	xml_open(&x, "testsuites");
	xml_attr(&x, "name", "rdmaqual");
	xml_attrf(&x, "tests", "%u", c.total);
	xml_attrf(&x, "failures", "%u", c.fail);
	xml_attrf(&x, "errors", "%u", c.error);
	attr_time(&x, t);
	for (size_t i = 0; i < ss.n; i++)
		testsuite(&x, ri, rs, &ss, &ss.v[i], f);
	xml_end(&x);
	suites_release(&ss);
}

void rq_junit_render(struct sb *out, const struct rq_run_info *ri, const struct rq_results *rs)
{
	render(out, NULL, ri, rs);
}

int rq_junit_write(int dirfd, const char *name, const struct rq_run_info *ri, const struct rq_results *rs)
{
	struct sb out = SB_INIT;
	struct afile f;
	int ret = afile_open_at(&f, dirfd, name);

	if (ret)
		return ret;
	render(&out, &f, ri, rs);
	afile_drain(&f, &out, 0);
	sb_release(&out);
	return afile_commit(&f);
}

// SPDX-License-Identifier: MIT
/*
 * report.html's shared pieces (report/html_int.h): the page's frame (CSP,
 * style, script), the rows a page is drawn from, the summary counts, the
 * failures with their log tails, the facts table and the synthesized-tree
 * banner, which the run page (html_run.c) and the comparison page
 * (html_compare.c) both show.  Every page is rendered from the JSON
 * documents only, so `rdmaqual compare`, `qualify` and the runner draw the
 * same page from the same files.  Charts are inline SVG drawn here
 * (html_chart.c, html_trend.c): no script library, no font or stylesheet
 * from anywhere else (the CSP meta forbids it), so the page looks the same
 * on a CI server without network.
 */
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include "core/util.h"
#include "report/html_int.h"

/* Bytes read from the end of a failing row's log for its last lines. */
#define MAX_LOG_READ (16u << 10)

void rq_html_escape(struct sb *out, const char *s)
{
	struct sb u = SB_INIT;

	if (!s)
		return;
	sb_add_utf8(&u, s, strlen(s));
	for (const char *p = u.buf; *p; p++) {
		switch (*p) {
		case '&': sb_adds(out, "&amp;"); break;
		case '<': sb_adds(out, "&lt;"); break;
		case '>': sb_adds(out, "&gt;"); break;
		case '"': sb_adds(out, "&quot;"); break;
		case '\'': sb_adds(out, "&#39;"); break;
		default:
			/* Control characters (bar tab/newline) shown as U+FFFD. */
			if ((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t')
				sb_adds(out, "\xef\xbf\xbd");
			else
				sb_addc(out, *p);
		}
	}
	sb_release(&u);
}

const char *const html_verdicts[4] = { "FAIL", "ERROR", "SKIP", "PASS" };

/* Between rows of a section: the page so far goes to its file (no section looks back). */
void html_rows_drain(struct rows *s, struct sb *out)
{
	if (s->f)
		afile_drain(s->f, out, 1u << 20);
}

struct rows html_doc_rows(const struct rq_run_doc *doc)
{
	return (struct rows){ .doc = doc };
}

size_t html_rows_n(const struct rows *s)
{
	return s->rs ? rq_results_total(s->rs) : s->doc ? s->doc->n : 0;
}

/* A number as results.json has it (10 significant digits), read back. */
static double as_written(double v)
{
	char buf[64];

	if (!isfinite(v))
		return v;
	snprintf(buf, sizeof(buf), "%.10g", v);
	return strtod(buf, NULL);
}

const struct rq_result *html_rows_at(struct rows *s, size_t i)
{
	const struct rq_result *r;

	if (!s->rs)
		return s->doc->rows[i];
	/* A shallow copy: only the numbers differ from the row's, and it lives until the next one. */
	r = rq_results_get(s->rs, i);
	if (r->nfigs > s->cap) {
		s->cap = r->nfigs;
		s->figs = xrealloc(s->figs, s->cap * sizeof(*s->figs));
	}
	s->cur = *r;
	s->cur.figs = s->figs;
	for (size_t k = 0; k < r->nfigs; k++) {
		s->figs[k] = r->figs[k];
		s->figs[k].value = as_written(r->figs[k].value);
	}
	s->cur.duration_s = as_written(r->duration_s);
	return &s->cur;
}

void html_rows_release(struct rows *s)
{
	free(s->figs);
	s->figs = NULL;
	s->cap = 0;
}
static const char *style =
"body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1200px}"
"h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ccc}"
"table{border-collapse:collapse;margin:.4em 0}td,th{border:1px solid #ddd;padding:2px 8px;"
"text-align:left;vertical-align:top}th{background:#f3f3f3}"
".PASS{color:#176f2c}.FAIL,.ERROR,.REGRESSION{color:#b00020;font-weight:bold}.SKIP{color:#8a6d00}"
".badge{display:inline-block;padding:2px 10px;margin-right:6px;border-radius:10px;background:#eee}"
".verdict-big{font-size:1.3em;padding:4px 14px;border-radius:6px;display:inline-block}"
".ok{background:#d9f2de}.bad{background:#fbd5da}"
"pre{background:#f7f7f7;padding:6px;overflow-x:auto;font-size:12px;max-height:30em}"
".failure{border-left:4px solid #b00020;padding-left:10px;margin:1em 0}"
"svg text{font:11px system-ui,sans-serif}.muted{color:#777}"
"button.filter{margin-right:4px}"
"table.grid td{text-align:center;min-width:4.5em}table.grid td a{text-decoration:none;color:inherit;display:block}"
"td.g-PASS{background:#d9f2de}td.g-FAIL,td.g-ERROR{background:#fbd5da}td.g-SKIP{background:#fff1c2}"
"details.figs summary{cursor:pointer;color:#555}"
".out-regression{color:#b00020;font-weight:bold}.out-inconclusive{color:#8a6d00}.out-no{color:#176f2c}"
".banner-synth{background:#fff1c2;border:1px solid #8a6d00;padding:6px 10px;border-radius:4px}";

void html_page_begin(struct sb *out, const char *kind, const char *title)
{
	sb_adds(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		"<meta http-equiv=\"Content-Security-Policy\" content=\"" RQ_HTML_CSP "\">\n"
		"<meta name=\"viewport\" content=\"width=device-width\">\n<title>");
	esc(out, title);
	sb_addf(out, "</title>\n<style>%s</style></head>\n<body data-kind=\"%s\">\n<h1>", style, kind);
	esc(out, title);
	sb_adds(out, "</h1>\n");
}

/*
 * The script only reads the page: it counts the rows by verdict into
 * #dom-counts (what the browser test compares with results.json) and lets
 * a reader show one verdict at a time.
 */
static const char *script =
"(function(){var c={},rows=document.querySelectorAll('tr.row');"
"rows.forEach(function(r){var v=r.getAttribute('data-verdict');c[v]=(c[v]||0)+1;});"
"var d=document.getElementById('dom-counts');if(d){d.textContent='rows '+rows.length+"
"['PASS','FAIL','SKIP','ERROR'].map(function(v){return ' '+v+' '+(c[v]||0);}).join('');}"
"document.querySelectorAll('button.filter').forEach(function(b){b.addEventListener('click',"
"function(){var v=b.getAttribute('data-show');rows.forEach(function(r){r.style.display="
"(v==='all'||r.getAttribute('data-verdict')===v)?'':'none';});});});})();";

void html_page_end(struct sb *out)
{
	sb_addf(out, "<p class=\"muted\" id=\"dom-counts\"></p>\n<script>%s</script>\n</body></html>\n",
		script);
}
void html_counts_of(struct rows *rows, unsigned c[4])
{
	size_t i;
	const struct rq_result *r;

	memset(c, 0, 4 * sizeof(*c));
	ROWS_EACH(rows, i, r)
		c[html_verdict_index(r)]++;
}

/*
 * The end of a file: at most max bytes before its end (a long log's tail
 * without reading the whole of it, once per failing row after every case).
 */
static int read_tail(const char *path, size_t max, struct sb *sb)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	char buf[8192];
	ssize_t n;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if ((size_t)st.st_size > max && lseek(fd, st.st_size - (off_t)max, SEEK_SET) < 0) {
		close(fd);
		return -errno;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0 && sb->len < max)
		sb_add(sb, buf, (size_t)n);
	close(fd);
	return n < 0 ? -EIO : 0;
}

/* The last lines of a row's log file, escaped, into out. */
static void log_tail(struct sb *out, const char *run_dir, const char *log_path)
{
	struct sb text = SB_INIT;
	char *path;
	size_t lines = 0, start;

	if (!run_dir || !log_path || strstr(log_path, ".."))
		return;
	path = xasprintf("%s/%s", run_dir, log_path);
	if (read_tail(path, MAX_LOG_READ, &text) || !text.len) {
		free(path);
		sb_release(&text);
		return;
	}
	sb_rtrim(&text);
	for (start = text.len; start > 0; start--)
		if (text.buf[start - 1] == '\n' && ++lines >= RQ_HTML_LOG_TAIL_LINES)
			break;
	sb_addf(out, "<details open><summary>log tail (%s)</summary><pre class=\"log-tail\">",
		start ? "last lines" : "whole log");
	esc(out, text.buf + start);
	sb_adds(out, "</pre></details>\n");
	free(path);
	sb_release(&text);
}

/* A row as people read it: its id, and its round when run --repeat made it (JUnit's "ID #K"). */
void html_row_name(struct sb *out, const struct rq_result *r)
{
	esc(out, r->id);
	if (r->repeat)
		sb_addf(out, " #%u", r->repeat);
}

int html_verdict_index(const struct rq_result *r)
{
	int k = 0;

	/* one this page does not show (undecided) is drawn as an ERROR, as a reader would judge it */
	while (k < 4 && strcmp(rq_verdict_name(r->verdict), html_verdicts[k]))
		k++;
	return k < 4 ? k : 1;
}

/* FAIL and ERROR rows of doc first, with reason and log tail. */
void html_failures(struct sb *out, struct rows *rows, const char *run_dir, const char *label)
{
	size_t i, n = 0;
	const struct rq_result *r;

	ROWS_EACH(rows, i, r) {
		const char *v = rq_verdict_name(r->verdict);

		if (r->verdict != RQ_FAIL && r->verdict != RQ_ERROR)
			continue;
		if (!n++) {
			sb_adds(out, "<section id=\"failures\"><h2>Failures");
			if (label) {
				sb_adds(out, " (");
				esc(out, label);
				sb_adds(out, ")");
			}
			sb_adds(out, "</h2>\n");
		}
		sb_addf(out, "<div class=\"failure\" data-verdict=\"%s\" data-id=\"", v);
		esc(out, r->id);
		sb_addf(out, "\"><b class=\"%s\">%s</b> <b>", v, v);
		html_row_name(out, r);
		sb_adds(out, "</b> on ");
		esc(out, r->target);
		sb_adds(out, "<br><span class=\"reason\">");
		esc(out, r->reason);
		sb_adds(out, "</span>\n");
		log_tail(out, run_dir, r->log_path);
		sb_adds(out, "</div>\n");
		html_rows_drain(rows, out);
	}
	if (n)
		sb_adds(out, "</section>\n");
}

void html_filter_buttons(struct sb *out)
{
	sb_adds(out, "<p><button class=\"filter\" data-show=\"all\">all</button>");
	for (int k = 0; k < 4; k++)
		sb_addf(out, "<button class=\"filter\" data-show=\"%s\">%s</button>", html_verdicts[k], html_verdicts[k]);
	sb_adds(out, "</p>\n");
}

void html_facts_table(struct sb *out, const struct rq_run_doc *doc, const char *id, const char *title)
{
	sb_addf(out, "<section><h2>%s</h2><table id=\"%s\">\n", title, id);
	for (size_t i = 0; i < doc->nfacts; i++) {
		sb_adds(out, "<tr><th>");
		esc(out, doc->facts[i].key);
		sb_adds(out, "</th><td>");
		esc(out, doc->facts[i].value);
		sb_adds(out, "</td></tr>\n");
	}
	sb_adds(out, "</table></section>\n");
}

/*
 * A replay of a synthesized tree says so before anything else (report.h);
 * on a comparison's page, side names the side that is one.
 */
void html_synthesized_banner(struct sb *out, const struct rq_run_doc *doc, const char *side)
{
	const char *tree = rq_run_doc_fact(doc, "sysroot"), *by = rq_run_doc_fact(doc, "sysroot.synthesized_by");

	if (!doc->run.synthesized)
		return;
	if (side) {
		sb_adds(out, "<p id=\"synthesized-");
		esc(out, side);
		sb_adds(out, "\" class=\"banner-synth\"><b>Synthesized node tree.</b> The ");
		esc(out, side);
		sb_adds(out, " side replayed ");
	} else {
		sb_adds(out, "<p id=\"synthesized\" class=\"banner-synth\"><b>Synthesized node tree.</b> "
			"This run replayed ");
	}
	esc(out, tree ? tree : "a node tree");
	sb_adds(out, ", made from documented formats by ");
	esc(out, by ? by : "synthesized");
	sb_adds(out, ", not captured from a machine: its verdicts are a fixture's, not a node's.</p>\n");
}

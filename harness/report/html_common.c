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

struct rows html_doc_rows(json_t *doc)
{
	return (struct rows){ .arr = json_object_get(doc, "results") };
}

size_t html_rows_n(const struct rows *s)
{
	return s->rs ? rq_results_total(s->rs) : json_array_size(s->arr);
}

/* A number as results.json has it (10 significant digits), read back. */
static void as_written(json_t *v)
{
	char buf[64];

	if (!json_is_real(v))
		return;
	snprintf(buf, sizeof(buf), "%.10g", json_real_value(v));
	json_real_set(v, strtod(buf, NULL));
}

json_t *html_rows_at(struct rows *s, size_t i)
{
	size_t k;
	json_t *f;

	if (!s->rs)
		return json_array_get(s->arr, i);
	json_decref(s->cur);
	s->cur = rq_result_to_json(rq_results_get(s->rs, i), false);
	as_written(json_object_get(s->cur, "duration_s"));
	json_array_foreach(json_object_get(s->cur, "figures"), k, f)
		as_written(json_object_get(f, "value"));
	return s->cur;
}

void html_rows_release(struct rows *s)
{
	json_decref(s->cur);
	s->cur = NULL;
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
	json_t *r;

	memset(c, 0, 4 * sizeof(*c));
	ROWS_EACH(rows, i, r)
		for (int k = 0; k < 4; k++)
			if (!strcmp(jstr(r, "verdict") ? jstr(r, "verdict") : "ERROR", html_verdicts[k]))
				c[k]++;
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
void html_row_name(struct sb *out, json_t *r)
{
	json_t *k = json_object_get(r, "repeat");

	esc(out, jstr(r, "id"));
	if (json_is_integer(k))
		sb_addf(out, " #%lld", (long long)json_integer_value(k));
}

/* FAIL and ERROR rows of doc first, with reason and log tail. */
void html_failures(struct sb *out, struct rows *rows, const char *run_dir, const char *label)
{
	size_t i, n = 0;
	json_t *r;

	ROWS_EACH(rows, i, r) {
		const char *v = jstr(r, "verdict");

		if (!v || (strcmp(v, "FAIL") && strcmp(v, "ERROR")))
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
		esc(out, jstr(r, "id"));
		sb_addf(out, "\"><b class=\"%s\">%s</b> <b>", v, v);
		html_row_name(out, r);
		sb_adds(out, "</b> on ");
		esc(out, jstr(r, "target"));
		sb_adds(out, "<br><span class=\"reason\">");
		esc(out, jstr(r, "reason"));
		sb_adds(out, "</span>\n");
		log_tail(out, run_dir, jstr(r, "log_path"));
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

void html_facts_table(struct sb *out, json_t *doc, const char *id, const char *title)
{
	const char *k;
	json_t *v;

	sb_addf(out, "<section><h2>%s</h2><table id=\"%s\">\n", title, id);
	json_object_foreach(json_object_get(doc, "facts"), k, v) {
		sb_adds(out, "<tr><th>");
		esc(out, k);
		sb_adds(out, "</th><td>");
		esc(out, json_string_value(v));
		sb_adds(out, "</td></tr>\n");
	}
	sb_adds(out, "</table></section>\n");
}

/*
 * A replay of a synthesized tree says so before anything else (report.h);
 * on a comparison's page, side names the side that is one.
 */
void html_synthesized_banner(struct sb *out, json_t *doc, const char *side)
{
	json_t *facts = json_object_get(doc, "facts");

	if (!json_is_true(json_object_get(json_object_get(doc, "run"), "synthesized")))
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
	esc(out, jstr(facts, "sysroot") ? jstr(facts, "sysroot") : "a node tree");
	sb_adds(out, ", made from documented formats by ");
	esc(out, jstr(facts, "sysroot.synthesized_by") ? jstr(facts, "sysroot.synthesized_by") : "synthesized");
	sb_adds(out, ", not captured from a machine: its verdicts are a fixture's, not a node's.</p>\n");
}

// SPDX-License-Identifier: MIT
/*
 * report.html (report/html.h).  Rendered from the JSON documents only, so
 * `rdmaqual compare`, `qualify` and the runner draw the same page from the
 * same files.  Charts are inline SVG drawn here: no script library, no
 * font or stylesheet from anywhere else (the CSP meta forbids it), so the
 * page looks the same on a CI server without network.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include "core/json_text.h"
#include "core/util.h"
#include "qual/compare.h"
#include "qual/repeat.h"
#include "report/html.h"
#include "report/report.h"

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

static void esc(struct sb *out, const char *s)
{
	rq_html_escape(out, s ? s : "");
}

static const char *jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static const char *const verdicts[] = { "FAIL", "ERROR", "SKIP", "PASS" };

/*
 * The rows a page is drawn from: a document's "results", or a run's rows
 * (a lab run's are mostly spooled on disk), each made into its results.json
 * object when it is read, so a page of 122,880 rows never holds them all.
 * A row from rows_at is good until the next rows_at on the same rows.
 */
struct rows {
	json_t *arr;
	const struct rq_results *rs;
	json_t *cur;
	struct afile *f;	/* the page's file, written as the row sections grow, or NULL */
};

/* Between rows of a section: the page so far goes to its file (no section looks back). */
static void rows_drain(struct rows *s, struct sb *out)
{
	if (s->f)
		afile_drain(s->f, out, 1u << 20);
}

static struct rows doc_rows(json_t *doc)
{
	return (struct rows){ .arr = json_object_get(doc, "results") };
}

static size_t rows_n(const struct rows *s)
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

static json_t *rows_at(struct rows *s, size_t i)
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

static void rows_release(struct rows *s)
{
	json_decref(s->cur);
	s->cur = NULL;
}

#define ROWS_EACH(s, i, r) for ((i) = 0; (i) < rows_n(s) && ((r) = rows_at((s), (i))); (i)++)

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

static void page_begin(struct sb *out, const char *kind, const char *title)
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

static void page_end(struct sb *out)
{
	sb_addf(out, "<p class=\"muted\" id=\"dom-counts\"></p>\n<script>%s</script>\n</body></html>\n",
		script);
}

/* ---- pieces ---- */

static void counts_of(struct rows *rows, unsigned c[4])
{
	size_t i;
	json_t *r;

	memset(c, 0, 4 * sizeof(*c));
	ROWS_EACH(rows, i, r)
		for (int k = 0; k < 4; k++)
			if (!strcmp(jstr(r, "verdict") ? jstr(r, "verdict") : "ERROR", verdicts[k]))
				c[k]++;
}

static void summary(struct sb *out, json_t *doc, struct rows *rows, const char *id)
{
	unsigned c[4];
	json_t *run = json_object_get(doc, "run");

	counts_of(rows, c);
	sb_addf(out, "<section id=\"%s\" class=\"summary\" data-total=\"%zu\">\n", id,
		rows_n(rows));
	sb_addf(out, "<span class=\"verdict-big %s\">%s</span>\n", c[0] + c[1] ? "bad" : "ok",
		c[0] + c[1] ? "FAILED" : "PASSED");
	for (int k = 0; k < 4; k++)
		sb_addf(out, "<span class=\"badge count %s\" data-verdict=\"%s\" data-n=\"%u\">%u %s</span>",
			c[k] ? verdicts[k] : "muted", verdicts[k], c[k], c[k], verdicts[k]);
	sb_adds(out, "\n<p class=\"muted\">run ");
	esc(out, jstr(run, "id"));
	sb_adds(out, " on ");
	esc(out, jstr(run, "hostname"));
	sb_adds(out, ", started ");
	esc(out, jstr(run, "started"));
	sb_addf(out, ", %.1f s", json_number_value(json_object_get(run, "duration_s")));
	if (!json_is_true(json_object_get(run, "complete")))
		sb_adds(out, ", <b>INCOMPLETE</b> (interrupted or still running)");
	if (json_integer_value(json_object_get(run, "repeats")) > 1)
		sb_addf(out, ", medians over %d runs", (int)json_integer_value(json_object_get(run, "repeats")));
	sb_adds(out, "<br>");
	esc(out, jstr(run, "argv"));
	sb_adds(out, "</p>\n</section>\n");
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
static void row_name(struct sb *out, json_t *r)
{
	json_t *k = json_object_get(r, "repeat");

	esc(out, jstr(r, "id"));
	if (json_is_integer(k))
		sb_addf(out, " #%lld", (long long)json_integer_value(k));
}

/* FAIL and ERROR rows of doc first, with reason and log tail. */
static void failures(struct sb *out, struct rows *rows, const char *run_dir, const char *label)
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
		row_name(out, r);
		sb_adds(out, "</b> on ");
		esc(out, jstr(r, "target"));
		sb_adds(out, "<br><span class=\"reason\">");
		esc(out, jstr(r, "reason"));
		sb_adds(out, "</span>\n");
		log_tail(out, run_dir, jstr(r, "log_path"));
		sb_adds(out, "</div>\n");
		rows_drain(rows, out);
	}
	if (n)
		sb_adds(out, "</section>\n");
}

static void figure_text(struct sb *out, json_t *f)
{
	json_t *v = json_object_get(f, "value");
	json_t *sp = json_object_get(f, "spread");

	esc(out, jstr(f, "name"));
	if (json_is_number(v))
		sb_addf(out, "=%.4g", json_number_value(v));
	else
		sb_adds(out, "=?");
	if (jstr(f, "unit") && *jstr(f, "unit")) {
		sb_adds(out, " ");
		esc(out, jstr(f, "unit"));
	}
	if (sp)
		sb_addf(out, " [%.4g..%.4g]", json_number_value(json_object_get(sp, "min")),
			json_number_value(json_object_get(sp, "max")));
}

/*
 * Trends: the earlier runs beside this one in its reports directory (the
 * run directories next to run_dir, newest RQ_TREND_RUNS that started
 * before it), indexed by row id, so each judged figure can show where it
 * stands against its own history (`rdmaqual history` has the change points).
 *
 * Each run writes a small index beside its results.json, trend.json (its
 * start and each row's judged figures), and the trend reads only those:
 * parsing whole sibling results.json files made five 30 MB siblings cost a
 * one-row run 54 s and 2.2 GB.  Only the caller's own run dirs and index
 * files are read (in a shared reports dir two planted dirs cost 9 s), each
 * at most RQ_TREND_MAX_INDEX bytes, all together at most RQ_TREND_BUDGET:
 * past it the trend has the runs read so far.
 */
#define RQ_TREND_RUNS 20
#define RQ_TREND_MAX_INDEX (1u << 20)
#define RQ_TREND_BUDGET (4u << 20)
#define RQ_TREND_SCHEMA "rdmaqual-trend/1"

struct trend {
	json_t *idx[RQ_TREND_RUNS];	/* row id -> {"figures": [...]}, oldest first */
	char *started[RQ_TREND_RUNS];
	size_t n;
};

int rq_trend_index_write(int dirfd, const struct rq_run_info *ri, const struct rq_results *rs)
{
	json_t *rows = json_object();
	size_t n = rq_results_total(rs);
	struct sb out = SB_INIT;
	size_t bytes = 0;
	char *text;
	int ret;

	for (size_t i = 0; i < n && bytes < RQ_TREND_MAX_INDEX / 2; i++) {
		const struct rq_result *r = rq_results_get(rs, i);
		json_t *figs;

		if (!r || !r->id || json_object_get(rows, r->id))
			continue;	/* a repeated row: its first round, as history takes it */
		figs = json_array();
		for (size_t k = 0; k < r->nfigs; k++) {
			const struct rq_figure *f = &r->figs[k];

			if (!f->name || !isfinite(f->value) ||
			    cmp_direction(f->name, f->unit) == CMP_DIR_UNKNOWN)
				continue;
			json_array_append_new(figs, json_pack("{s:o, s:o, s:f}", "name", rq_json_text(f->name),
							      "unit", rq_json_text(f->unit ? f->unit : ""),
							      "value", f->value));
			bytes += strlen(f->name) + (f->unit ? strlen(f->unit) : 0) + 48;
		}
		if (json_array_size(figs)) {
			rq_json_set_text(rows, r->id, json_pack("{s:o}", "figures", figs));
			bytes += strlen(r->id) + 24;
		} else {
			json_decref(figs);
		}
	}
	json_t *doc = json_pack("{s:s, s:o, s:o}", "schema", RQ_TREND_SCHEMA, "started",
				rq_json_text(ri->started ? ri->started : ""), "rows", rows);

	text = doc ? json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;
	json_decref(doc);
	if (!text)
		return -ENOMEM;
	sb_adds(&out, text);
	sb_addc(&out, '\n');
	free(text);
	ret = write_file_replace_at(dirfd, RQ_TREND_INDEX, out.buf, out.len);
	sb_release(&out);
	return ret;
}

static int str_pcmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A sibling's index, if it and its dir are ours; *budget pays for what is read. */
static json_t *trend_index_read(int pfd, const char *name, size_t *budget)
{
	struct stat st;
	struct sb text = SB_INIT;
	json_t *doc = NULL;
	int dfd, fd;

	dfd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return NULL;
	if (fstat(dfd, &st) || st.st_uid != geteuid()) {
		close(dfd);
		return NULL;
	}
	fd = openat(dfd, RQ_TREND_INDEX, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	    (size_t)st.st_size <= RQ_TREND_MAX_INDEX && (size_t)st.st_size <= *budget) {
		size_t max = (size_t)st.st_size + 1;	/* grown since the stat: not read */

		if (!read_fd_all(fd, &text, max) && text.len < max) {
			*budget -= text.len;
			doc = json_loadb(text.buf, text.len, 0, NULL);
		}
	}
	close(fd);
	sb_release(&text);
	return doc;
}

static void trend_load(struct trend *t, const char *run_dir, json_t *self)
{
	const char *mine = jstr(json_object_get(self, "run"), "started"), *slash;
	char *parent, **names = NULL;
	size_t nn = 0, budget = RQ_TREND_BUDGET;
	DIR *d;
	struct dirent *e;

	memset(t, 0, sizeof(*t));
	if (!run_dir || !mine || !(slash = strrchr(run_dir, '/')))
		return;
	parent = xstrndup(run_dir, (size_t)(slash - run_dir));
	d = opendir(parent);
	free(parent);
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.' || !strcmp(e->d_name, slash + 1) || !strcmp(e->d_name, "latest"))
			continue;
		names = xrealloc(names, (nn + 1) * sizeof(*names));
		names[nn++] = xstrdup(e->d_name);
	}
	/* Run ids start with the time: newest first by name, then checked by "started". */
	if (nn)
		qsort(names, nn, sizeof(*names), str_pcmp);
	for (size_t i = nn, tried = 0; d && i-- > 0 && tried < 3 * RQ_TREND_RUNS && t->n < RQ_TREND_RUNS;) {
		json_t *doc = trend_index_read(dirfd(d), names[i], &budget);
		const char *st = doc ? jstr(doc, "started") : NULL;
		json_t *rows = doc ? json_object_get(doc, "rows") : NULL;

		tried += doc != NULL;
		if (!st || !json_is_object(rows) || strcmp(jstr(doc, "schema") ?: "", RQ_TREND_SCHEMA) ||
		    strcmp(st, mine) >= 0) {
			json_decref(doc);
			continue;
		}
		t->started[t->n] = xstrdup(st);
		t->idx[t->n++] = json_incref(rows);
		json_decref(doc);
	}
	if (d)
		closedir(d);
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	/* Oldest first by start time (read newest first, and a clock may disagree with names). */
	for (size_t i = 1; i < t->n; i++)
		for (size_t j = i; j > 0 && strcmp(t->started[j - 1], t->started[j]) > 0; j--) {
			json_t *x = t->idx[j];
			char *s = t->started[j];

			t->idx[j] = t->idx[j - 1];
			t->started[j] = t->started[j - 1];
			t->idx[j - 1] = x;
			t->started[j - 1] = s;
		}
}

static void trend_release(struct trend *t)
{
	for (size_t i = 0; i < t->n; i++) {
		json_decref(t->idx[i]);
		free(t->started[i]);
	}
	t->n = 0;
}

/* A sparkline of the figure's earlier values and this one (the last dot, larger). */
static void trend_svg(struct sb *out, const struct trend *t, const char *row, json_t *f)
{
	double v[RQ_TREND_RUNS + 1], lo, hi;
	size_t n = 0;
	const char *name = jstr(f, "name"), *unit = jstr(f, "unit") ? jstr(f, "unit") : "";

	if (!t || !t->n || !row || !name || !json_is_number(json_object_get(f, "value")))
		return;
	for (size_t i = 0; i < t->n; i++) {
		json_t *r = json_object_get(t->idx[i], row), *g;
		size_t k;

		json_array_foreach(r ? json_object_get(r, "figures") : NULL, k, g)
			if (jstr(g, "name") && !strcmp(jstr(g, "name"), name) &&
			    !strcmp(jstr(g, "unit") ? jstr(g, "unit") : "", unit) &&
			    json_is_number(json_object_get(g, "value"))) {
				v[n++] = json_number_value(json_object_get(g, "value"));
				break;
			}
	}
	if (n < 2)
		return;		/* no history to speak of */
	v[n++] = json_number_value(json_object_get(f, "value"));
	lo = hi = v[0];
	for (size_t i = 1; i < n; i++) {
		lo = fmin(lo, v[i]);
		hi = fmax(hi, v[i]);
	}
	if (hi == lo)
		hi = lo + 1;
	const double W = 80, H = 16;

	sb_addf(out, " <svg class=\"trend\" data-runs=\"%zu\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" "
		"role=\"img\"><title>%zu earlier runs: %.4g .. %.4g</title><polyline fill=\"none\" "
		"stroke=\"#777\" points=\"", n - 1, W, H, W, H, n - 1, lo, hi);
	for (size_t i = 0; i < n; i++)
		sb_addf(out, "%s%.1f,%.1f", i ? " " : "", 2 + (double)i * (W - 6) / (double)(n - 1),
			H - 2 - (v[i] - lo) / (hi - lo) * (H - 4));
	sb_addf(out, "\"/><circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"#1565c0\"/></svg>", W - 4,
		H - 2 - (v[n - 1] - lo) / (hi - lo) * (H - 4));
}

/*
 * A row's figures: all of them when few; else the judged ones (their
 * direction is known) and the rest folded, so a link-health row's thirty
 * counters do not make the table unreadable.
 */
#define FIGS_UNFOLDED 8

static bool judged_fig(json_t *f)
{
	return cmp_direction(jstr(f, "name"), jstr(f, "unit")) != CMP_DIR_UNKNOWN;
}

static void row_figures(struct sb *out, json_t *figs, const struct trend *t, const char *row)
{
	size_t j, n = json_array_size(figs), shown = 0, folded = 0;
	json_t *f;

	if (n <= FIGS_UNFOLDED) {
		json_array_foreach(figs, j, f) {
			if (j)
				sb_adds(out, "<br>");
			figure_text(out, f);
			if (judged_fig(f))
				trend_svg(out, t, row, f);
		}
		return;
	}
	json_array_foreach(figs, j, f)
		if (judged_fig(f)) {
			if (shown++)
				sb_adds(out, "<br>");
			figure_text(out, f);
			trend_svg(out, t, row, f);
		}
	sb_addf(out, "<details class=\"figs\"><summary>%zu more figure%s</summary>", n - shown,
		n - shown == 1 ? "" : "s");
	json_array_foreach(figs, j, f)
		if (!judged_fig(f)) {
			if (folded++)
				sb_adds(out, "<br>");
			figure_text(out, f);
		}
	sb_adds(out, "</details>");
}

/* "suite" of a row: its case name up to the first '.'; "where": [device/port] or its node. */
static char *row_suite(json_t *r)
{
	const char *c = jstr(r, "case") ? jstr(r, "case") : jstr(r, "id") ? jstr(r, "id") : "?";
	const char *dot = strchr(c, '.');

	return dot ? xstrndup(c, (size_t)(dot - c)) : xstrdup(c);
}

static char *row_where(json_t *r)
{
	const char *id = jstr(r, "id") ? jstr(r, "id") : "", *lb = strrchr(id, '[');

	if (jstr(r, "node"))
		return xstrdup(jstr(r, "node"));
	if (lb && str_ends(id, "]"))
		return xstrndup(lb + 1, strlen(lb + 1) - 1);
	return xstrdup(jstr(r, "device") ? jstr(r, "device") : "(node)");
}

/* A list of distinct strings, found by a map: a lab page has thousands of nodes. */
struct strlist {
	char **v;
	size_t n;
	struct strmap map;
};

static size_t str_index(struct strlist *l, const char *s)
{
	size_t *at = strmap_get(&l->map, s);
	bool added;

	if (at)
		return *at;
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n] = xstrdup(s);
	strmap_put(&l->map, l->v[l->n], l->n, &added);
	return l->n++;
}

static void strlist_release(struct strlist *l)
{
	strmap_release(&l->map);
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

/*
 * The verdict grid at the top of a run's page: devices/ports (or nodes) x
 * suites, each cell the worst verdict of its rows, linking to the first
 * of them (failures come first in the rows table).
 */
static void verdict_grid(struct sb *out, struct rows *rows)
{
	struct strlist wl = { 0 }, sl = { 0 };
	size_t nw, ns, i;
	json_t *r;
	int *worst;
	size_t *first, *count;

	ROWS_EACH(rows, i, r) {
		char *w = row_where(r), *s = row_suite(r);

		str_index(&wl, w);
		str_index(&sl, s);
		free(w);
		free(s);
	}
	nw = wl.n;
	ns = sl.n;
	if (!nw || !ns)
		return;
	worst = xcalloc(nw * ns, sizeof(*worst));
	first = xcalloc(nw * ns, sizeof(*first));
	count = xcalloc(nw * ns, sizeof(*count));
	for (size_t k = 0; k < nw * ns; k++)
		worst[k] = 4;
	ROWS_EACH(rows, i, r) {
		char *w = row_where(r), *s = row_suite(r);
		size_t c = str_index(&wl, w) * ns + str_index(&sl, s);
		int v = 0;

		while (v < 4 && strcmp(jstr(r, "verdict") ? jstr(r, "verdict") : "ERROR", verdicts[v]))
			v++;
		if (v == 4)
			v = 1;		/* unknown: as bad as an ERROR */
		/* verdicts[] is worst first: FAIL, ERROR, SKIP, PASS; link to the first row of the worst kind. */
		if (v < worst[c]) {
			worst[c] = v;
			first[c] = i;
		}
		count[c]++;
		free(w);
		free(s);
	}
	sb_addf(out, "<section id=\"grid\"><h2>At a glance</h2><table class=\"grid\" data-where=\"%zu\" "
		"data-suites=\"%zu\"><tr><th></th>", nw, ns);
	for (size_t s = 0; s < ns; s++) {
		sb_adds(out, "<th>");
		esc(out, sl.v[s]);
		sb_adds(out, "</th>");
	}
	sb_adds(out, "</tr>\n");
	for (size_t w = 0; w < nw; w++) {
		sb_adds(out, "<tr><th>");
		esc(out, wl.v[w]);
		sb_adds(out, "</th>");
		for (size_t s = 0; s < ns; s++) {
			size_t c = w * ns + s;

			if (worst[c] == 4) {
				sb_adds(out, "<td class=\"muted\">-</td>");
				continue;
			}
			sb_addf(out, "<td class=\"cell g-%s\" data-verdict=\"%s\"><a href=\"#row-%zu\">%s",
				verdicts[worst[c]], verdicts[worst[c]], first[c], verdicts[worst[c]]);
			if (count[c] > 1)
				sb_addf(out, " <span class=\"muted\">(%zu)</span>", count[c]);
			sb_adds(out, "</a></td>");
		}
		sb_adds(out, "</tr>\n");
	}
	sb_adds(out, "</table></section>\n");
	strlist_release(&wl);
	strlist_release(&sl);
	free(worst);
	free(first);
	free(count);
}

static void filter_buttons(struct sb *out)
{
	sb_adds(out, "<p><button class=\"filter\" data-show=\"all\">all</button>");
	for (int k = 0; k < 4; k++)
		sb_addf(out, "<button class=\"filter\" data-show=\"%s\">%s</button>", verdicts[k], verdicts[k]);
	sb_adds(out, "</p>\n");
}

/* Every row: failures first (FAIL, ERROR, SKIP, PASS), then file order. */
static void rows_table(struct sb *out, struct rows *rows, const struct trend *t)
{
	size_t i;
	json_t *r;

	sb_adds(out, "<section><h2>Rows</h2>\n");
	filter_buttons(out);
	sb_adds(out, "<table id=\"rows\"><tr><th>verdict</th><th>row</th><th>target</th>"
		"<th>time</th><th>reason</th><th>figures</th></tr>\n");
	for (int k = 0; k < 4; k++)
		ROWS_EACH(rows, i, r) {
			if (strcmp(jstr(r, "verdict") ? jstr(r, "verdict") : "ERROR", verdicts[k]))
				continue;
			sb_addf(out, "<tr class=\"row\" data-verdict=\"%s\" data-id=\"", verdicts[k]);
			esc(out, jstr(r, "id"));
			sb_addf(out, "\" id=\"row-%zu\"><td class=\"%s\">%s</td><td>", i, verdicts[k], verdicts[k]);
			row_name(out, r);
			sb_adds(out, "</td><td>");
			esc(out, jstr(r, "target"));
			sb_addf(out, "</td><td>%.2f s</td><td>", json_number_value(json_object_get(r, "duration_s")));
			esc(out, jstr(r, "reason"));
			sb_adds(out, "</td><td>");
			row_figures(out, json_object_get(r, "figures"), t, jstr(r, "id"));
			sb_adds(out, "</td></tr>\n");
			rows_drain(rows, out);
		}
	sb_adds(out, "</table></section>\n");
}

static void facts_table(struct sb *out, json_t *doc, const char *id, const char *title)
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

/* ---- charts ---- */

/* "64KiB" -> 65536; 0 when s is not a size. */
static double parse_size(const char *s)
{
	static const struct { const char *u; double m; } units[] = {
		{ "", 1 }, { "B", 1 }, { "K", 1024 }, { "k", 1024 }, { "KB", 1024 }, { "KiB", 1024 },
		{ "M", 1 << 20 }, { "MB", 1 << 20 }, { "MiB", 1 << 20 }, { "G", 1 << 30 }, { "GiB", 1 << 30 },
	};
	char *end;
	double v;

	if (*s < '0' || *s > '9')
		return 0;
	v = strtod(s, &end);
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (!strcmp(end, units[i].u))
			return v * units[i].m;
	return 0;
}

static void size_label(char *buf, size_t n, double b)
{
	if (b >= (1 << 20) && fmod(b, 1 << 20) == 0)
		snprintf(buf, n, "%gM", b / (1 << 20));
	else if (b >= 1024 && fmod(b, 1024) == 0)
		snprintf(buf, n, "%gK", b / 1024);
	else
		snprintf(buf, n, "%g", b);
}

struct point {
	char *series;		/* "before: bw.write_64k[rxe0/1]" */
	int side;		/* 0 single/before, 1 after */
	double x, y;
};

struct chart {
	char *family, *unit;	/* "bw", "Gb/s" */
	struct point *p;
	size_t n;
};

struct charts {
	struct chart *c;
	size_t n;
};

/* Figures named FAMILY_SIZE ("bw_64KiB", "msg_rate_4KiB") become points. */
static void collect(struct charts *cs, struct rows *rows, int side, const char *label)
{
	size_t i, j;
	json_t *r, *f;

	ROWS_EACH(rows, i, r)
		json_array_foreach(json_object_get(r, "figures"), j, f) {
			const char *name = jstr(f, "name"), *unit = jstr(f, "unit");
			const char *us = name ? strrchr(name, '_') : NULL;
			json_t *v = json_object_get(f, "value");
			double x;
			struct chart *c = NULL;

			if (!us || us == name || !json_is_number(v) || !(x = parse_size(us + 1)))
				continue;
			for (size_t k = 0; k < cs->n; k++)
				if (!strncmp(cs->c[k].family, name, (size_t)(us - name)) &&
				    !cs->c[k].family[us - name] && !strcmp(cs->c[k].unit, unit ? unit : ""))
					c = &cs->c[k];
			if (!c) {
				cs->c = xrealloc(cs->c, (cs->n + 1) * sizeof(*cs->c));
				c = &cs->c[cs->n++];
				memset(c, 0, sizeof(*c));
				c->family = xstrndup(name, (size_t)(us - name));
				c->unit = xstrdup(unit ? unit : "");
			}
			c->p = xrealloc(c->p, (c->n + 1) * sizeof(*c->p));
			c->p[c->n++] = (struct point){
				.series = label ? xasprintf("%s: %s", label, jstr(r, "id")) : xstrdup(jstr(r, "id")),
				.side = side, .x = x, .y = json_number_value(v) };
		}
}

static const char *const palette[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
				       "#17becf", "#8c564b", "#e377c2" };

/* A line chart by message size (log2 x axis); after series solid, before dashed. */
static int point_cmp(const void *a, const void *b)
{
	const struct point *x = a, *y = b;

	return x->x < y->x ? -1 : x->x > y->x;
}

static void line_chart(struct sb *out, struct chart *c, bool overlay)
{
	const double W = 680, H = 300, L = 70, R = 230, T = 20, B = 40;
	double xmin = INFINITY, xmax = -INFINITY, ymax = 0;
	char **series = NULL;
	size_t ns = 0;

	qsort(c->p, c->n, sizeof(*c->p), point_cmp);	/* polylines left to right */
	for (size_t i = 0; i < c->n; i++) {
		bool seen = false;

		xmin = fmin(xmin, c->p[i].x);
		xmax = fmax(xmax, c->p[i].x);
		ymax = fmax(ymax, c->p[i].y);
		for (size_t k = 0; k < ns; k++)
			seen = seen || !strcmp(series[k], c->p[i].series);
		if (!seen) {
			series = xrealloc(series, (ns + 1) * sizeof(*series));
			series[ns++] = c->p[i].series;
		}
	}
	if (ymax <= 0)
		ymax = 1;
	ymax *= 1.1;
	double lx0 = log2(xmin), lx1 = log2(xmax);

	if (lx1 - lx0 < 1) {
		lx0 -= 1;
		lx1 += 1;
	}
#define PX(x) (L + (log2(x) - lx0) / (lx1 - lx0) * (W - L - R))
#define PY(y) (T + (1 - (y) / ymax) * (H - T - B))
	sb_adds(out, "<figure class=\"chart\" data-family=\"");
	esc(out, c->family);
	sb_addf(out, "\" data-points=\"%zu\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" "
		"height=\"%g\" role=\"img\">\n", c->n, W, H);
	sb_addf(out, "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"#fafafa\" stroke=\"#ccc\"/>\n",
		L, T, W - L - R, H - T - B);
	for (int k = 0; k <= 4; k++) {
		double y = ymax / 1.1 * k / 4;

		sb_addf(out, "<line x1=\"%g\" x2=\"%g\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e5e5e5\"/>"
			"<text x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%.3g</text>\n",
			L, W - R, PY(y), PY(y), L - 4, PY(y) + 4, y);
	}
	/* x ticks at every size present */
	for (size_t i = 0; i < c->n; i++) {
		char lab[32];
		bool dup = false;

		for (size_t k = 0; k < i; k++)
			dup = dup || c->p[k].x == c->p[i].x;
		if (dup)
			continue;
		size_label(lab, sizeof(lab), c->p[i].x);
		sb_addf(out, "<text x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">%s</text>\n", PX(c->p[i].x),
			H - B + 16, lab);
	}
	sb_addf(out, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">message size (bytes)</text>\n",
		L + (W - L - R) / 2, H - 6);
	sb_addf(out, "<text x=\"12\" y=\"%g\" transform=\"rotate(-90 12 %g)\" text-anchor=\"middle\">",
		T + (H - T - B) / 2, T + (H - T - B) / 2);
	esc(out, c->family);
	sb_adds(out, " (");
	esc(out, c->unit);
	sb_adds(out, ")</text>\n");
	for (size_t s = 0; s < ns; s++) {
		const char *col = palette[s % ARRAY_SIZE(palette)];
		struct sb pts = SB_INIT;
		int side = 0;
		size_t np = 0;

		for (size_t i = 0; i < c->n; i++) {
			if (strcmp(c->p[i].series, series[s]))
				continue;
			side = c->p[i].side;
			sb_addf(&pts, "%s%.1f,%.1f", np++ ? " " : "", PX(c->p[i].x), PY(c->p[i].y));
			sb_addf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\" class=\"point\" "
				"data-side=\"%d\"><title>", PX(c->p[i].x), PY(c->p[i].y), col, side);
			esc(out, series[s]);
			sb_addf(out, ": %.4g ", c->p[i].y);
			esc(out, c->unit);
			sb_adds(out, "</title></circle>\n");
		}
		if (np > 1)
			sb_addf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"%s\"/>\n",
				col, overlay && side == 0 ? " stroke-dasharray=\"6 4\"" : "", pts.buf);
		sb_addf(out, "<rect x=\"%g\" y=\"%.0f\" width=\"12\" height=\"%s\" fill=\"%s\"/>"
			"<text x=\"%g\" y=\"%.0f\">", W - R + 10, T + 14.0 * (double)s, "3", col,
			W - R + 26, T + 14.0 * (double)s + 5);
		esc(out, series[s]);
		sb_adds(out, "</text>\n");
		sb_release(&pts);
	}
#undef PX
#undef PY
	sb_adds(out, "</svg><figcaption>");
	esc(out, c->family);
	sb_adds(out, " by message size");
	if (overlay)
		sb_adds(out, ": before dashed, after solid");
	sb_adds(out, "</figcaption></figure>\n");
	free(series);
}

struct bar {
	char *label;
	int side;
	double v;
};

/* Latency figures (unit us) as horizontal bars, before and after side by side. */
static void latency_chart(struct sb *out, struct rows *docs, const char *const *labels, int ndocs)
{
	struct bar *b = NULL;
	size_t n = 0;
	double vmax = 0;

	for (int d = 0; d < ndocs; d++) {
		size_t i, j;
		json_t *r, *f;

		ROWS_EACH(&docs[d], i, r)
			json_array_foreach(json_object_get(r, "figures"), j, f) {
				const char *name = jstr(f, "name"), *unit = jstr(f, "unit");
				json_t *v = json_object_get(f, "value");

				if (!unit || strcmp(unit, "us") || !json_is_number(v) ||
				    !(str_starts(name, "lat") || str_starts(name, "t_")))
					continue;
				b = xrealloc(b, (n + 1) * sizeof(*b));
				b[n++] = (struct bar){ .label = xasprintf("%s%s%s %s", labels[d] ? labels[d] : "",
									  labels[d] ? ": " : "", jstr(r, "id"), name),
						       .side = d, .v = json_number_value(v) };
				vmax = fmax(vmax, json_number_value(v));
			}
	}
	if (!n)
		return;
	const double L = 330, W = 680, rowh = 16;
	double H = 30 + rowh * (double)n;

	sb_addf(out, "<figure class=\"chart\" data-family=\"latency\" data-points=\"%zu\">"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" role=\"img\">\n", n, W, H);
	if (vmax <= 0)
		vmax = 1;
	for (size_t i = 0; i < n; i++) {
		double y = 10 + rowh * (double)i, w = b[i].v / vmax * (W - L - 60);

		sb_addf(out, "<text x=\"%g\" y=\"%.0f\" text-anchor=\"end\">", L - 6, y + 11);
		esc(out, b[i].label);
		sb_addf(out, "</text><rect class=\"point\" data-side=\"%d\" x=\"%g\" y=\"%.0f\" width=\"%.1f\" "
			"height=\"12\" fill=\"%s\"/><text x=\"%.1f\" y=\"%.0f\">%.4g us</text>\n", b[i].side, L, y,
			w, b[i].side ? "#1f77b4" : "#9e9e9e", L + w + 4, y + 11, b[i].v);
		free(b[i].label);
	}
	sb_adds(out, "</svg><figcaption>latency (us)");
	if (ndocs > 1)
		sb_adds(out, ": before grey, after blue");
	sb_adds(out, "</figcaption></figure>\n");
	free(b);
}

static void charts(struct sb *out, struct rows *docs, const char *const *labels, int ndocs)
{
	struct charts cs = { 0 };
	size_t before = out->len;

	sb_adds(out, "<section id=\"charts\"><h2>Figures by message size</h2>\n");
	size_t mark = out->len;

	for (int d = 0; d < ndocs; d++)
		collect(&cs, &docs[d], d, labels[d]);
	for (size_t k = 0; k < cs.n; k++) {
		line_chart(out, &cs.c[k], ndocs > 1);
		for (size_t i = 0; i < cs.c[k].n; i++)
			free(cs.c[k].p[i].series);
		free(cs.c[k].p);
		free(cs.c[k].family);
		free(cs.c[k].unit);
	}
	free(cs.c);
	latency_chart(out, docs, labels, ndocs);
	if (out->len == mark) {		/* nothing to draw: no section */
		out->len = before;
		out->buf[before] = '\0';
		return;
	}
	sb_adds(out, "</section>\n");
}

/* ---- heat map ---- */

void rq_html_heatmap(struct sb *out, const char *title, const char *const *labels, size_t n,
		     const double *cells, const char *unit, bool higher_better)
{
	double lo = INFINITY, hi = -INFINITY;
	const double cw = 48, L = 120, T = 110;

	for (size_t i = 0; i < n * n; i++)
		if (isfinite(cells[i])) {
			lo = fmin(lo, cells[i]);
			hi = fmax(hi, cells[i]);
		}
	sb_addf(out, "<section class=\"heatmap\" data-nodes=\"%zu\"><h2>", n);
	esc(out, title);
	sb_addf(out, "</h2>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" role=\"img\">\n",
		L + cw * (double)n + 10, T + cw * (double)n + 10);
	for (size_t j = 0; j < n; j++) {
		sb_addf(out, "<text transform=\"translate(%.0f %.0f) rotate(-60)\">", L + cw * (double)j + cw / 2, T - 6);
		esc(out, labels[j]);
		sb_adds(out, "</text>\n");
	}
	for (size_t i = 0; i < n; i++) {
		sb_addf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">", L - 6, T + cw * (double)i + cw / 2 + 4);
		esc(out, labels[i]);
		sb_adds(out, "</text>\n");
		for (size_t j = 0; j < n; j++) {
			double v = cells[i * n + j];
			double t = hi > lo ? (v - lo) / (hi - lo) : 1;
			char fill[16];

			if (!higher_better)
				t = 1 - t;
			/* red (worst) to green (best) through yellow */
			if (!isfinite(v))
				snprintf(fill, sizeof(fill), "#eeeeee");
			else
				snprintf(fill, sizeof(fill), "#%02x%02x40", (int)(t < .5 ? 220 : 220 - (t - .5) * 2 * 170),
					 (int)(t < .5 ? 60 + t * 2 * 160 : 220));
			sb_addf(out, "<rect class=\"cell\" x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" "
				"fill=\"%s\" stroke=\"#fff\"><title>", L + cw * (double)j, T + cw * (double)i, cw, cw, fill);
			esc(out, labels[i]);
			sb_adds(out, " -> ");
			esc(out, labels[j]);
			if (isfinite(v)) {
				sb_addf(out, ": %.4g ", v);
				esc(out, unit);
			} else {
				sb_adds(out, ": no figure");
			}
			sb_adds(out, "</title></rect>\n");
			if (isfinite(v))
				sb_addf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">%.3g</text>\n",
					L + cw * (double)j + cw / 2, T + cw * (double)i + cw / 2 + 4, v);
		}
	}
	sb_adds(out, "</svg><p class=\"muted\">");
	esc(out, unit);
	sb_addf(out, "; %s is better; grey: no figure</p></section>\n", higher_better ? "higher" : "lower");
}

/*
 * A replay of a synthesized tree says so before anything else (report.h);
 * on a comparison's page, side names the side that is one.
 */
static void synthesized_banner(struct sb *out, json_t *doc, const char *side)
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

/* ---- pages ---- */

static void run_page(struct sb *out, json_t *doc, struct rows *rows, const char *run_dir,
		     const char *extra_html)
{
	json_t *run = json_object_get(doc, "run");
	char *title = xasprintf("rdmaqual run %s", jstr(run, "id") ? jstr(run, "id") : "?");
	const char *lab[1] = { NULL };

	page_begin(out, "run", title);
	synthesized_banner(out, doc, NULL);
	summary(out, doc, rows, "summary");
	verdict_grid(out, rows);
	failures(out, rows, run_dir, NULL);
	struct trend t;

	trend_load(&t, run_dir, doc);
	rows_table(out, rows, &t);
	trend_release(&t);
	charts(out, rows, lab, 1);
	if (extra_html)
		sb_adds(out, extra_html);
	facts_table(out, doc, "facts", "Environment");
	page_end(out);
	free(title);
}

void rq_html_run(struct sb *out, json_t *doc, const char *run_dir, const char *extra_html)
{
	struct rows rows = doc_rows(doc);

	run_page(out, doc, &rows, run_dir, extra_html);
}

void rq_html_run_rows(struct sb *out, json_t *doc, const struct rq_results *rs,
		      const char *run_dir, const char *extra_html)
{
	struct rows rows = { .rs = rs };

	run_page(out, doc, &rows, run_dir, extra_html);
	rows_release(&rows);
}

static int write_html(const char *path, struct sb *html)
{
	int rc = write_file_atomic(path, html->buf, html->len);

	sb_release(html);
	return rc;
}

int rq_html_run_rows_write(int dirfd, const char *name, json_t *doc, const struct rq_results *rs,
			   const char *run_dir, const char *extra_html)
{
	struct sb html = SB_INIT;
	struct afile f;
	struct rows rows = { .rs = rs, .f = &f };
	int ret = afile_open_at(&f, dirfd, name);

	if (ret)
		return ret;
	/* written as it is drawn: a 4,096-node page is tens of MB */
	run_page(&html, doc, &rows, run_dir, extra_html);
	rows_release(&rows);
	afile_drain(&f, &html, 0);
	sb_release(&html);
	return afile_commit(&f);
}

/* Findings of one type class as a table; returns how many. */
static size_t findings_rows(struct sb *out, json_t *cmp, const char *row, bool figures)
{
	size_t i, n = 0;
	json_t *f;

	json_array_foreach(json_object_get(cmp, "findings"), i, f) {
		const char *type = jstr(f, "type");
		bool is_fig = type && str_starts(type, "figure_");

		if (is_fig != figures || !jstr(f, "row") || strcmp(jstr(f, "row"), row))
			continue;
		if (type && !strcmp(type, "figure_unjudged") && jstr(f, "before") && jstr(f, "after") &&
		    !strcmp(jstr(f, "before"), jstr(f, "after")))
			continue;	/* unchanged figures of unknown direction: noise here */
		bool regr = json_is_true(json_object_get(f, "regression"));

		if (n++)
			sb_adds(out, "<br>");
		sb_addf(out, "<span class=\"finding%s\" data-type=\"%s\" data-regression=\"%d\">",
			regr ? " REGRESSION" : "", type ? type : "?", regr);
		if (figures) {
			json_t *bv = json_object_get(f, "before_value"), *av = json_object_get(f, "after_value");

			esc(out, jstr(f, "name"));
			sb_adds(out, ": ");
			if (json_is_number(bv))
				sb_addf(out, "%.4g", json_number_value(bv));
			else
				esc(out, jstr(f, "before") ? jstr(f, "before") : "(none)");
			sb_adds(out, " &rarr; ");
			if (json_is_number(av))
				sb_addf(out, "%.4g", json_number_value(av));
			else
				esc(out, jstr(f, "after") ? jstr(f, "after") : "(none)");
			if (jstr(f, "unit") && *jstr(f, "unit")) {
				sb_adds(out, " ");
				esc(out, jstr(f, "unit"));
			}
			json_t *ch = json_object_get(f, "change_pct");

			if (json_is_number(ch))
				sb_addf(out, " (%+.1f%%)", json_number_value(ch));
			if (regr)
				sb_adds(out, " WORSE");
		} else {
			esc(out, type);
			if (jstr(f, "name")) {
				sb_adds(out, " ");
				esc(out, jstr(f, "name"));
			}
			if (jstr(f, "message")) {
				sb_adds(out, ": ");
				esc(out, jstr(f, "message"));
			}
		}
		sb_adds(out, "</span>");
	}
	return n;
}

static const char *outcome_class(const char *type)
{
	if (!strcmp(type, "figure_worse"))
		return "regression";
	if (!strcmp(type, "figure_inconclusive"))
		return "inconclusive";
	return "no";
}

/*
 * One judged figure's evidence: both sides' samples as strips of dots on
 * one axis, each side's median as a tick, and the tolerance band around
 * the before median (shaded): an after median outside the band, with the
 * two strips apart, is what a regression looks like.
 */
static void strip_plot(struct sb *out, const struct rq_html_side *b, const struct rq_html_side *a, json_t *f)
{
	const double W = 440, H = 58, L = 80, R = 12;	/* L: room for "before n=12" */
	double *xs[2] = { NULL, NULL }, lo = INFINITY, hi = -INFINITY, med[2];
	size_t n[2];
	const struct rq_html_side *sd[2] = { b, a };
	double tol = json_number_value(json_object_get(f, "tolerance_pct"));

	for (int s = 0; s < 2; s++) {
		n[s] = cmp_figure_samples(sd[s]->doc, jstr(f, "row"), jstr(f, "name"), &xs[s]);
		for (size_t k = 0; k < n[s]; k++) {
			lo = fmin(lo, xs[s][k]);
			hi = fmax(hi, xs[s][k]);
		}
	}
	med[0] = json_number_value(json_object_get(f, "before_value"));
	med[1] = json_number_value(json_object_get(f, "after_value"));
	if (!n[0] || !n[1] || !isfinite(med[0])) {
		free(xs[0]);
		free(xs[1]);
		return;
	}
	lo = fmin(lo, med[0] * (1 - tol / 100));
	hi = fmax(hi, med[0] * (1 + tol / 100));
	if (hi <= lo)
		hi = lo + 1;
#define PX(v) (L + ((v) - lo) / (hi - lo) * (W - L - R))
	sb_addf(out, "<svg class=\"strip\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" role=\"img\">", W, H, W, H);
	sb_addf(out, "<rect class=\"band\" x=\"%.1f\" y=\"2\" width=\"%.1f\" height=\"%g\" fill=\"#e3f2fd\"/>",
		PX(med[0] * (1 - tol / 100)), PX(med[0] * (1 + tol / 100)) - PX(med[0] * (1 - tol / 100)), H - 16);
	for (int s = 0; s < 2; s++) {
		double y = s ? 32 : 14;

		sb_addf(out, "<text x=\"2\" y=\"%.0f\" font-size=\"11\">%s n=%zu</text>", y + 4, s ? "after" : "before",
			n[s]);
		for (size_t k = 0; k < n[s]; k++)
			sb_addf(out, "<circle class=\"sample s%d\" cx=\"%.1f\" cy=\"%.0f\" r=\"3\" fill=\"%s\" "
				"fill-opacity=\"0.6\"><title>%.4g</title></circle>", s, PX(xs[s][k]), y,
				s ? "#d62728" : "#1f77b4", xs[s][k]);
		if (isfinite(med[s]))
			sb_addf(out, "<line class=\"median\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" "
				"stroke=\"#222\" stroke-width=\"2\"/>", PX(med[s]), PX(med[s]), y - 7, y + 7);
	}
	sb_addf(out, "<text x=\"%g\" y=\"%g\">%.4g</text><text x=\"%g\" y=\"%g\" text-anchor=\"end\">%.4g ",
		L, H - 2, lo, W - R, H - 2, hi);
	esc(out, jstr(f, "unit"));
	sb_adds(out, "</text></svg>");
#undef PX
	free(xs[0]);
	free(xs[1]);
}

static void noise_section(struct sb *out, const struct rq_html_side *b, const struct rq_html_side *a, json_t *cmp)
{
	static const char *const order[] = { "figure_worse", "figure_inconclusive", "figure_better", "figure_within" };
	size_t i, shown = 0;
	json_t *f;

	for (size_t o = 0; o < ARRAY_SIZE(order); o++)
		json_array_foreach(json_object_get(cmp, "findings"), i, f) {
			json_int_t nb = json_integer_value(json_object_get(f, "n_before"));
			json_int_t na = json_integer_value(json_object_get(f, "n_after"));

			if (!jstr(f, "type") || strcmp(jstr(f, "type"), order[o]) || (nb < 2 && na < 2))
				continue;
			if (!shown++)
				sb_adds(out, "<section id=\"noise\"><h2>Judged figures and their noise</h2>\n"
					"<p class=\"muted\">Each side's repeats (dots), their medians (ticks) and the "
					"tolerance band around the before median (shaded).</p>\n<table id=\"judged\">"
					"<tr><th>row</th><th>figure</th><th>outcome</th><th>repeats</th><th>note</th></tr>\n");
			sb_addf(out, "<tr class=\"judged\" data-outcome=\"%s\"><td>", outcome_class(order[o]));
			esc(out, jstr(f, "row"));
			sb_adds(out, "</td><td>");
			esc(out, jstr(f, "name"));
			sb_addf(out, "</td><td class=\"out-%s\">%s</td><td>", outcome_class(order[o]),
				!strcmp(order[o], "figure_worse") ? "regression" :
				!strcmp(order[o], "figure_inconclusive") ? "inconclusive" :
				!strcmp(order[o], "figure_better") ? "better" : "no change");
			strip_plot(out, b, a, f);
			sb_adds(out, "</td><td>");
			esc(out, jstr(f, "message"));
			sb_adds(out, "</td></tr>\n");
		}
	if (shown)
		sb_adds(out, "</table></section>\n");
}

void rq_html_compare(struct sb *out, const char *title, const struct rq_html_side *b,
		     const struct rq_html_side *a, json_t *cmp)
{
	json_t *sum = json_object_get(cmp, "summary"), *ids = json_array(), *r, *f;
	json_int_t regressions = 0;
	size_t i;

	json_array_foreach(json_object_get(cmp, "findings"), i, f)
		regressions += json_is_true(json_object_get(f, "regression"));
	(void)sum;
	page_begin(out, "compare", title);
	sb_addf(out, "<section id=\"verdict\" data-regressions=\"%lld\"><span class=\"verdict-big %s\">%s</span> "
		"%lld regression finding%s</section>\n", (long long)regressions, regressions ? "bad" : "ok",
		regressions ? "REGRESSION" : "no regression", (long long)regressions,
		regressions == 1 ? "" : "s");
	synthesized_banner(out, b->doc, b->label ? b->label : "before");
	synthesized_banner(out, a->doc, a->label ? a->label : "after");
	/* The two sides */
	sb_adds(out, "<section><h2>Sides</h2><table id=\"sides\"><tr><th></th><th>spec</th><th>run</th>"
		"<th>guest kernel</th><th>package</th><th>counts</th></tr>\n");
	const struct rq_html_side *sides[2] = { b, a };

	for (int s = 0; s < 2; s++) {
		json_t *facts = json_object_get(sides[s]->doc, "facts");
		unsigned c[4];

		struct rows rows = doc_rows(sides[s]->doc);

		counts_of(&rows, c);
		sb_addf(out, "<tr class=\"side\" data-side=\"%s\"><th>", sides[s]->label);
		esc(out, sides[s]->label);
		sb_adds(out, "</th><td>");
		esc(out, sides[s]->spec ? sides[s]->spec : "");
		sb_adds(out, "</td><td>");
		if (sides[s]->nruns) {
			/* every repeat, each a link to its own page beside this one (LABEL/ID/) */
			sb_addf(out, "%zu run%s:", sides[s]->nruns, sides[s]->nruns == 1 ? "" : "s");
			for (size_t k = 0; k < sides[s]->nruns; k++) {
				const char *id = strrchr(sides[s]->runs[k], '/');

				id = id ? id + 1 : sides[s]->runs[k];
				sb_adds(out, "<br><a class=\"side-run\" href=\"");
				esc(out, sides[s]->label);
				sb_adds(out, "/");
				esc(out, id);
				sb_adds(out, "/report.html\">");
				esc(out, id);
				sb_adds(out, "</a>");
			}
		} else {
			esc(out, sides[s]->run_dir ? sides[s]->run_dir : jstr(json_object_get(sides[s]->doc, "run"), "id"));
		}
		sb_adds(out, "</td><td>");
		esc(out, jstr(facts, "vm.guest_kernel") ? jstr(facts, "vm.guest_kernel") : jstr(facts, "host.kernel"));
		sb_adds(out, "</td><td>");
		esc(out, jstr(facts, "vm.kernel_package"));
		sb_adds(out, " ");
		esc(out, jstr(facts, "vm.kernel_package_version"));
		sb_adds(out, "<br><span class=\"muted\">");
		esc(out, jstr(facts, "vm.kernel_origin"));
		sb_adds(out, "</span></td><td>");
		for (int k = 0; k < 4; k++)
			sb_addf(out, "<span class=\"count %s\" data-verdict=\"%s\" data-n=\"%u\">%u %s</span> ",
				c[k] ? verdicts[k] : "muted", verdicts[k], c[k], c[k], verdicts[k]);
		sb_adds(out, "</td></tr>\n");
	}
	sb_adds(out, "</table></section>\n");

	/* Facts that changed (kernel, rdma-core, ...) */
	sb_adds(out, "<section><h2>Environment changes</h2><table id=\"fact-changes\">"
		"<tr><th>fact</th><th>before</th><th>after</th></tr>\n");
	json_array_foreach(json_object_get(cmp, "findings"), i, f) {
		if (!jstr(f, "type") || strcmp(jstr(f, "type"), "fact_changed"))
			continue;
		sb_adds(out, "<tr class=\"fact-change\"><td>");
		if (jstr(f, "row")) {
			esc(out, jstr(f, "row"));
			sb_adds(out, " ");
		}
		esc(out, jstr(f, "name"));
		sb_adds(out, "</td><td>");
		esc(out, jstr(f, "before") ? jstr(f, "before") : "(none)");
		sb_adds(out, "</td><td>");
		esc(out, jstr(f, "after") ? jstr(f, "after") : "(none)");
		sb_adds(out, "</td></tr>\n");
	}
	sb_adds(out, "</table></section>\n");

	/* Failures of the after side first: what the upgrade broke or kept broken. */
	struct rows arows = doc_rows(a->doc);

	failures(out, &arows, a->run_dir, a->label);

	/* Per row side by side; rows with a regression first. */
	/* Each id once: a run with repeated rows is one row here (its figures are judged over all). */
	json_t *seen = json_object();
	json_t *both[2] = { b->doc, a->doc };

	for (int s = 0; s < 2; s++)
		json_array_foreach(json_object_get(both[s], "results"), i, r)
			if (jstr(r, "id") && !json_object_get(seen, jstr(r, "id"))) {
				json_object_set_new(seen, jstr(r, "id"), json_true());
				json_array_append(ids, json_object_get(r, "id"));
			}
	json_decref(seen);
	sb_adds(out, "<section><h2>Rows, before and after</h2>\n");
	filter_buttons(out);
	sb_adds(out, "<table id=\"rows\"><tr><th>row</th><th>before</th><th>after</th><th>findings</th>"
		"<th>figures</th></tr>\n");
	for (int pass = 0; pass < 2; pass++) {
		json_t *id;

		json_array_foreach(ids, i, id) {
			const char *s = json_string_value(id);
			json_t *rb = rq_doc_row(b->doc, s), *ra = rq_doc_row(a->doc, s);
			bool regr = false;
			size_t j;

			json_array_foreach(json_object_get(cmp, "findings"), j, f)
				regr = regr || (jstr(f, "row") && !strcmp(jstr(f, "row"), s) &&
						json_is_true(json_object_get(f, "regression")));
			if (regr != (pass == 0))
				continue;
			const char *vb = rb ? jstr(rb, "verdict") : "-", *va = ra ? jstr(ra, "verdict") : "-";

			/* data-verdict is the after side's: what the DOM counts match. */
			sb_addf(out, "<tr class=\"row\" data-verdict=\"%s\" data-regression=\"%d\" data-id=\"",
				ra ? va : "GONE", regr);
			esc(out, s);
			sb_adds(out, "\"><td>");
			esc(out, s);
			sb_addf(out, "</td><td class=\"%s\">%s</td><td class=\"%s\">%s</td><td>", vb, vb, va, va);
			findings_rows(out, cmp, s, false);
			sb_adds(out, "</td><td>");
			findings_rows(out, cmp, s, true);
			sb_adds(out, "</td></tr>\n");
		}
	}
	sb_adds(out, "</table></section>\n");
	json_decref(ids);
	noise_section(out, b, a, cmp);

	struct rows docs[2] = { doc_rows(b->doc), doc_rows(a->doc) };
	const char *labels[2] = { b->label, a->label };

	charts(out, docs, labels, 2);
	facts_table(out, b->doc, "facts-before", "Environment before");
	facts_table(out, a->doc, "facts-after", "Environment after");
	page_end(out);
}

int rq_html_compare_write(const char *path, const char *title, const struct rq_html_side *b,
			  const struct rq_html_side *a, json_t *cmp)
{
	struct sb html = SB_INIT;

	rq_html_compare(&html, title, b, a, cmp);
	return write_html(path, &html);
}

// SPDX-License-Identifier: MIT
/* The trends of a run's page and the index they read (report/html_int.h, html.h). */
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
#include "report/html_int.h"
#include "report/report.h"

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
#define RQ_TREND_MAX_INDEX (1u << 20)
#define RQ_TREND_BUDGET (4u << 20)
#define RQ_TREND_SCHEMA "rdmaqual-trend/1"

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

void html_trend_load(struct trend *t, const char *run_dir, const struct rq_run_doc *self)
{
	const char *mine = self->run.started, *slash;
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

void html_trend_release(struct trend *t)
{
	for (size_t i = 0; i < t->n; i++) {
		json_decref(t->idx[i]);
		free(t->started[i]);
	}
	t->n = 0;
}

/* A sparkline of the figure's earlier values and this one (the last dot, larger). */
void html_trend_svg(struct sb *out, const struct trend *t, const char *row, const struct rq_figure *f)
{
	double v[RQ_TREND_RUNS + 1], lo, hi;
	size_t n = 0;
	const char *name = f->name, *unit = f->unit;

	if (!t || !t->n || !row || !isfinite(f->value))
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
	v[n++] = f->value;
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

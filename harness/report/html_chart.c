// SPDX-License-Identifier: MIT
/*
 * The charts of report.html (report/html_int.h): figures by message size
 * as line charts, latencies as bars, and a lab run's node x node heat map.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "core/util.h"
#include "report/html_int.h"

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
	size_t i;
	const struct rq_result *r;

	ROWS_EACH(rows, i, r)
		for (size_t j = 0; j < r->nfigs; j++) {
			const char *name = r->figs[j].name, *unit = r->figs[j].unit;
			const char *us = strrchr(name, '_');
			double v = r->figs[j].value;
			double x;
			struct chart *c = NULL;

			if (!us || us == name || !isfinite(v) || !(x = parse_size(us + 1)))
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
				.series = label ? xasprintf("%s: %s", label, r->id) : xstrdup(r->id),
				.side = side, .x = x, .y = v };
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
		size_t i;
		const struct rq_result *r;

		ROWS_EACH(&docs[d], i, r)
			for (size_t j = 0; j < r->nfigs; j++) {
				const char *name = r->figs[j].name, *unit = r->figs[j].unit;
				double v = r->figs[j].value;

				if (strcmp(unit, "us") || !isfinite(v) ||
				    !(str_starts(name, "lat") || str_starts(name, "t_")))
					continue;
				b = xrealloc(b, (n + 1) * sizeof(*b));
				b[n++] = (struct bar){ .label = xasprintf("%s%s%s %s", labels[d] ? labels[d] : "",
									  labels[d] ? ": " : "", r->id, name),
						       .side = d, .v = v };
				vmax = fmax(vmax, v);
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

void html_charts(struct sb *out, struct rows *docs, const char *const *labels, int ndocs)
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

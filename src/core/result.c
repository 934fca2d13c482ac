/* SPDX-License-Identifier: MIT */
/*
 * Result rows: judgements, verdicts and their JSON form.
 *
 * rq_result_from_json() parses what an agent sent, which is untrusted: every
 * field is type-checked, and bad input yields NULL with a reason, never a
 * crash or a half-filled row.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "core/result.h"
#include "core/json_text.h"

static const char *const verdict_names[] = {
	[RQ_NONE] = "NONE",
	[RQ_PASS] = "PASS",
	[RQ_FAIL] = "FAIL",
	[RQ_SKIP] = "SKIP",
	[RQ_ERROR] = "ERROR",
};

const char *rq_verdict_name(enum rq_verdict v)
{
	if ((unsigned)v < ARRAY_SIZE(verdict_names))
		return verdict_names[v];
	return "?";
}

int rq_verdict_parse(const char *s, enum rq_verdict *v)
{
	for (size_t i = 0; i < ARRAY_SIZE(verdict_names); i++) {
		if (!strcmp(s, verdict_names[i])) {
			*v = (enum rq_verdict)i;
			return 0;
		}
	}
	return -EINVAL;
}

int rq_verdict_rank(enum rq_verdict v)
{
	return v == RQ_PASS ? 0 : v == RQ_SKIP ? 1 : v == RQ_FAIL ? 2 : 3;
}

struct rq_result *rq_result_new(const char *case_name, const char *device, int port)
{
	struct rq_result *r = xcalloc(1, sizeof(*r));

	r->case_name = xstrdup(case_name);
	if (device) {
		r->device = xstrdup(device);
		r->port = port;
		if (port > 0)
			r->id = xasprintf("%s[%s/%d]", case_name, device, port);
		else
			r->id = xasprintf("%s[%s]", case_name, device);
	} else {
		r->id = xstrdup(case_name);
	}
	sb_init(&r->log);
	return r;
}

static void spread_free(struct rq_spread *sp)
{
	if (sp)
		free(sp->samples);
	free(sp);
}

void rq_figure_set_spread(struct rq_result *r, size_t i, size_t n, double min, double max,
			  const double *samples, size_t nsamples)
{
	struct rq_spread *sp = xcalloc(1, sizeof(*sp));

	*sp = (struct rq_spread){ .n = n, .min = min, .max = max, .nsamples = nsamples };
	sp->samples = xcalloc(nsamples + 1, sizeof(*sp->samples));
	if (nsamples)
		memcpy(sp->samples, samples, nsamples * sizeof(*samples));
	spread_free(r->figs[i].spread);
	r->figs[i].spread = sp;
}

void rq_result_free(struct rq_result *r)
{
	if (!r)
		return;
	free(r->id);
	free(r->case_name);
	free(r->kind);
	free(r->judge);
	free(r->device);
	free(r->reason);
	free(r->target);
	free(r->target_why);
	free(r->node);
	free(r->peer_node);
	for (size_t i = 0; i < r->nfigs; i++) {
		free(r->figs[i].name);
		free(r->figs[i].unit);
		spread_free(r->figs[i].spread);
	}
	free(r->figs);
	for (size_t i = 0; i < r->nfacts; i++) {
		free(r->facts[i].key);
		free(r->facts[i].value);
	}
	free(r->facts);
	free(r->log_path);
	sb_release(&r->log);
	free(r->file);
	free(r);
}

void rq_results_add(struct rq_results *rs, struct rq_result *r)
{
	rs->v = xrealloc(rs->v, (rs->n + 1) * sizeof(*rs->v));
	rs->v[rs->n++] = r;
}

/* Reasons are one line: newlines and tabs become spaces. */
static char *one_line(char *s)
{
	for (char *p = s; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	return s;
}

bool rq_judge(struct rq_result *r, bool ok, const char *fmt, ...)
{
	struct sb msg = SB_INIT;
	va_list ap;

	va_start(ap, fmt);
	sb_vaddf(&msg, fmt, ap);
	va_end(ap);
	r->judged++;
	sb_addf(&r->log, "%s: %s\n", ok ? "ok" : "not ok", msg.buf);
	if (!ok) {
		r->failed++;
		if (r->failed == 1 && r->verdict == RQ_NONE) {
			free(r->reason);
			r->reason = one_line(sb_detach(&msg));
		}
	}
	sb_release(&msg);
	return ok;
}

void rq_result_explain(struct rq_result *r, const char *fmt, ...)
{
	struct sb msg = SB_INIT;
	va_list ap;

	if (!r->failed || !r->reason || r->verdict != RQ_NONE)
		return;
	va_start(ap, fmt);
	sb_vaddf(&msg, fmt, ap);
	va_end(ap);
	sb_addf(&r->log, "note: %s\n", msg.buf);
	char *why = xasprintf("%s; %s", r->reason, msg.buf);

	free(r->reason);
	r->reason = one_line(why);
	sb_release(&msg);
}

void rq_result_set(struct rq_result *r, enum rq_verdict v, const char *fmt, ...)
{
	struct sb msg = SB_INIT;
	va_list ap;

	va_start(ap, fmt);
	sb_vaddf(&msg, fmt, ap);
	va_end(ap);
	if (r->verdict != RQ_NONE) {
		/* Sticky: the first decision stands; keep the later one in the log. */
		sb_addf(&r->log, "(ignored later verdict %s: %s)\n", rq_verdict_name(v), msg.buf);
		sb_release(&msg);
		return;
	}
	r->verdict = v;
	sb_addf(&r->log, "verdict %s: %s\n", rq_verdict_name(v), msg.buf);
	free(r->reason);
	r->reason = msg.len ? one_line(sb_detach(&msg)) : NULL;
	sb_release(&msg);
}

const struct rq_figure *rq_result_figure(const struct rq_result *r, const char *name)
{
	for (size_t i = 0; r && i < r->nfigs; i++)
		if (!strcmp(r->figs[i].name, name))
			return &r->figs[i];
	return NULL;
}

void rq_figure_add(struct rq_result *r, const char *name, double value, const char *unit)
{
	r->figs = xrealloc(r->figs, (r->nfigs + 1) * sizeof(*r->figs));
	r->figs[r->nfigs++] = (struct rq_figure){
		.name = xstrdup(name),
		.value = value,
		.unit = xstrdup(unit ? unit : ""),
	};
}

void rq_fact_add(struct rq_result *r, const char *key, const char *value)
{
	/* A fact has one value: a later one for the same key replaces it. */
	for (size_t i = 0; i < r->nfacts; i++) {
		if (!strcmp(r->facts[i].key, key)) {
			free(r->facts[i].value);
			r->facts[i].value = xstrdup(value ? value : "");
			return;
		}
	}
	r->facts = xrealloc(r->facts, (r->nfacts + 1) * sizeof(*r->facts));
	r->facts[r->nfacts++] = (struct rq_fact){
		.key = xstrdup(key),
		.value = xstrdup(value ? value : ""),
	};
}

void rq_result_finish(struct rq_result *r)
{
	if (r->verdict != RQ_NONE) {
		if (r->verdict != RQ_PASS && (!r->reason || !*r->reason)) {
			free(r->reason);
			r->reason = xstrdup("no reason recorded");
		}
		return;
	}
	if (r->failed) {
		r->verdict = RQ_FAIL;
		if (!r->reason)
			r->reason = xstrdup("a check failed");
		return;
	}
	if (!r->judged) {
		struct sb sb = SB_INIT;

		sb_adds(&sb, "nothing was judged");
		for (size_t i = 0; i < r->nfigs; i++)
			sb_addf(&sb, "%s%s=%g%s%s", i ? ", " : " (figures: ",
				r->figs[i].name, r->figs[i].value,
				*r->figs[i].unit ? " " : "", r->figs[i].unit);
		if (r->nfigs)
			sb_addc(&sb, ')');
		r->verdict = RQ_SKIP;
		free(r->reason);
		r->reason = one_line(sb_detach(&sb));
		return;
	}
	r->verdict = RQ_PASS;
}

/* ---- JSON ---- */

static json_t *spread_json(const struct rq_spread *sp)
{
	json_t *o = json_object(), *samples = json_array();

	for (size_t i = 0; i < sp->nsamples; i++)
		json_array_append_new(samples, rq_json_num(sp->samples[i]));
	json_object_set_new(o, "n", json_integer((json_int_t)sp->n));
	json_object_set_new(o, "min", rq_json_num(sp->min));
	json_object_set_new(o, "max", rq_json_num(sp->max));
	json_object_set_new(o, "samples", samples);
	return o;
}

json_t *rq_result_to_json(const struct rq_result *r, bool with_log)
{
	json_t *o = json_object();
	json_t *figs = json_array();
	json_t *facts = json_object();

	json_object_set_new(o, "id", rq_json_text(r->id));
	json_object_set_new(o, "case", rq_json_text(r->case_name));
	json_object_set_new(o, "kind", rq_json_text(r->kind));
	if (r->judge)	/* only where the case chose: older readers and goldens see no new null */
		json_object_set_new(o, "judge", rq_json_text(r->judge));
	if (r->repeat)	/* likewise: only a run --repeat's rows */
		json_object_set_new(o, "repeat", json_integer(r->repeat));
	json_object_set_new(o, "device", rq_json_text(r->device));
	json_object_set_new(o, "port", json_integer(r->port));
	json_object_set_new(o, "verdict", json_string(rq_verdict_name(r->verdict)));
	json_object_set_new(o, "reason", rq_json_text(r->reason));
	json_object_set_new(o, "target", rq_json_text(r->target));
	json_object_set_new(o, "target_why", rq_json_text(r->target_why));
	json_object_set_new(o, "judged", json_integer(r->judged));
	json_object_set_new(o, "failed", json_integer(r->failed));
	for (size_t i = 0; i < r->nfigs; i++) {
		json_t *f = json_object();
		json_object_set_new(f, "name", rq_json_text(r->figs[i].name));
		json_object_set_new(f, "value", rq_json_num(r->figs[i].value));
		json_object_set_new(f, "unit", rq_json_text(r->figs[i].unit));
		if (r->figs[i].spread)	/* a merged document's (qual/repeat.c) */
			json_object_set_new(f, "spread", spread_json(r->figs[i].spread));
		json_array_append_new(figs, f);
	}
	json_object_set_new(o, "figures", figs);
	for (size_t i = 0; i < r->nfacts; i++)
		rq_json_set_text(facts, r->facts[i].key, rq_json_text(r->facts[i].value));
	json_object_set_new(o, "facts", facts);
	json_object_set_new(o, "duration_s", rq_json_num(r->duration_s));
	json_object_set_new(o, "log_path", rq_json_text(r->log_path));
	json_object_set_new(o, "file", rq_json_text(r->file));
	/* Only in lab runs, so a one-node report keeps its shape. */
	if (r->node)
		json_object_set_new(o, "node", rq_json_text(r->node));
	if (r->peer_node)
		json_object_set_new(o, "peer_node", rq_json_text(r->peer_node));
	if (with_log)
		json_object_set_new(o, "log", rq_json_textn(r->log.buf, r->log.len));
	return o;
}

/* Optional string field: absent or null -> *out stays NULL. */
static int get_str(json_t *o, const char *key, bool required, char **out,
		   char *err, size_t errsz)
{
	json_t *v = json_object_get(o, key);

	if (!v || json_is_null(v)) {
		if (required) {
			snprintf(err, errsz, "result: missing \"%s\"", key);
			return -EINVAL;
		}
		return 0;
	}
	if (!json_is_string(v)) {
		snprintf(err, errsz, "result: \"%s\" must be a string", key);
		return -EINVAL;
	}
	/* C strings: a NUL inside would silently truncate. */
	if (strlen(json_string_value(v)) != json_string_length(v)) {
		snprintf(err, errsz, "result: \"%s\" contains a NUL byte", key);
		return -EINVAL;
	}
	*out = xstrdup(json_string_value(v));
	return 0;
}

static int get_uint(json_t *o, const char *key, long long max, long long *out,
		    char *err, size_t errsz)
{
	json_t *v = json_object_get(o, key);

	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > max) {
		snprintf(err, errsz, "result: \"%s\" must be an integer 0..%lld", key, max);
		return -EINVAL;
	}
	*out = json_integer_value(v);
	return 0;
}

/* A number, or null for a value that was not finite. */
static int get_num(json_t *v, const char *what, double *out, char *err, size_t errsz)
{
	if (json_is_null(v)) {
		*out = NAN;
		return 0;
	}
	if (!json_is_number(v)) {
		snprintf(err, errsz, "result: %s must be a number", what);
		return -EINVAL;
	}
	*out = json_number_value(v);
	return 0;
}

/*
 * Figure i's "spread" (qual/repeat.h), when it has one.  Checked after
 * every other field of the row, so that the error can name a row that is
 * otherwise good; a sample must be a finite number (compare bootstraps
 * them).
 */
static int get_spread(json_t *f, struct rq_result *r, size_t i, char *err, size_t errsz)
{
	const char *name = r->figs[i].name;
	json_t *sp = json_object_get(f, "spread"), *v, *x;
	double min = NAN, max = NAN, *samples = NULL;
	long long n = 0;
	size_t k, ns = 0;

	if (!sp || json_is_null(sp))
		return 0;
	if (!json_is_object(sp)) {
		snprintf(err, errsz, "figure %.60s: spread is not an object", name);
		return -EINVAL;
	}
	if (get_uint(sp, "n", 1000000000, &n, err, errsz)) {
		snprintf(err, errsz, "figure %.60s: spread.n is not a count", name);
		return -EINVAL;
	}
	if (((v = json_object_get(sp, "min")) && get_num(v, "", &min, err, errsz)) ||
	    ((v = json_object_get(sp, "max")) && get_num(v, "", &max, err, errsz))) {
		snprintf(err, errsz, "figure %.60s: spread.min and .max must be numbers", name);
		return -EINVAL;
	}
	v = json_object_get(sp, "samples");
	if (v && !json_is_array(v)) {
		snprintf(err, errsz, "figure %.60s: spread.samples is not an array", name);
		return -EINVAL;
	}
	samples = xcalloc(json_array_size(v) + 1, sizeof(*samples));
	json_array_foreach(v, k, x) {
		if (!json_is_number(x) || !isfinite(json_number_value(x))) {
			snprintf(err, errsz, "figure %.60s: sample %zu is not a finite number", name, k + 1);
			free(samples);
			return -EINVAL;
		}
		samples[ns++] = json_number_value(x);
	}
	rq_figure_set_spread(r, i, (size_t)n, min, max, samples, ns);
	free(samples);
	return 0;
}

struct rq_result *rq_result_from_json(json_t *j, char *err, size_t errsz)
{
	return rq_result_from_json_named(j, NULL, err, errsz);
}

struct rq_result *rq_result_from_json_named(json_t *j, char **bad_row, char *err, size_t errsz)
{
	struct rq_result *r = NULL;
	char *id = NULL, *case_name = NULL, *verdict = NULL, *device = NULL;
	long long port = 0, n;
	char dummy[1];

	if (bad_row)
		*bad_row = NULL;
	if (!err || !errsz) {
		err = dummy;
		errsz = sizeof(dummy);
	}
	err[0] = '\0';
	if (!json_is_object(j)) {
		snprintf(err, errsz, "result: expected a JSON object");
		return NULL;
	}
	if (get_str(j, "id", true, &id, err, errsz) ||
	    get_str(j, "case", true, &case_name, err, errsz) ||
	    get_str(j, "verdict", true, &verdict, err, errsz) ||
	    get_str(j, "device", false, &device, err, errsz) ||
	    get_uint(j, "port", 65535, &port, err, errsz))
		goto bad;
	r = rq_result_new(case_name, device, (int)port);
	free(r->id);
	r->id = id;
	id = NULL;
	if (rq_verdict_parse(verdict, &r->verdict)) {
		snprintf(err, errsz, "result: unknown verdict \"%.40s\"", verdict);
		goto bad;
	}
	if (get_str(j, "kind", false, &r->kind, err, errsz) ||
	    get_str(j, "judge", false, &r->judge, err, errsz) ||
	    get_str(j, "reason", false, &r->reason, err, errsz) ||
	    get_str(j, "target", false, &r->target, err, errsz) ||
	    get_str(j, "target_why", false, &r->target_why, err, errsz) ||
	    get_str(j, "log_path", false, &r->log_path, err, errsz) ||
	    get_str(j, "file", false, &r->file, err, errsz) ||
	    get_str(j, "node", false, &r->node, err, errsz) ||
	    get_str(j, "peer_node", false, &r->peer_node, err, errsz))
		goto bad;
	n = 0;
	if (get_uint(j, "judged", 1000000000, &n, err, errsz))
		goto bad;
	r->judged = n;
	n = 0;
	if (get_uint(j, "failed", 1000000000, &n, err, errsz))
		goto bad;
	r->failed = n;
	n = 0;
	if (get_uint(j, "repeat", RQ_MAX_REPEAT, &n, err, errsz))
		goto bad;
	r->repeat = n;

	json_t *v = json_object_get(j, "duration_s");
	if (v) {
		if (get_num(v, "\"duration_s\"", &r->duration_s, err, errsz))
			goto bad;
		if (!(r->duration_s >= 0))
			r->duration_s = 0;
	}

	json_t *figs = json_object_get(j, "figures");
	if (figs && !json_is_null(figs)) {
		size_t i;
		json_t *f;

		if (!json_is_array(figs)) {
			snprintf(err, errsz, "result: \"figures\" must be an array");
			goto bad;
		}
		json_array_foreach(figs, i, f) {
			char *name = NULL, *unit = NULL;
			double val;
			json_t *fv;

			if (!json_is_object(f)) {
				snprintf(err, errsz, "result: figures[%zu] must be an object", i);
				goto bad;
			}
			if (get_str(f, "name", true, &name, err, errsz) ||
			    get_str(f, "unit", false, &unit, err, errsz)) {
				free(name);
				goto bad;
			}
			fv = json_object_get(f, "value");
			if (!fv || get_num(fv, "figure value", &val, err, errsz)) {
				if (!fv)
					snprintf(err, errsz, "result: figures[%zu] has no value", i);
				free(name);
				free(unit);
				goto bad;
			}
			rq_figure_add(r, name, val, unit);
			free(name);
			free(unit);
		}
	}

	json_t *facts = json_object_get(j, "facts");
	if (facts && !json_is_null(facts)) {
		const char *k;
		json_t *fv;

		if (!json_is_object(facts)) {
			snprintf(err, errsz, "result: \"facts\" must be an object");
			goto bad;
		}
		json_object_foreach(facts, k, fv) {
			if (!json_is_string(fv) ||
			    strlen(json_string_value(fv)) != json_string_length(fv)) {
				snprintf(err, errsz, "result: fact \"%.40s\" must be a string", k);
				goto bad;
			}
			rq_fact_add(r, k, json_string_value(fv));
		}
	}

	v = json_object_get(j, "log");
	if (v && !json_is_null(v)) {
		if (!json_is_string(v)) {
			snprintf(err, errsz, "result: \"log\" must be a string");
			goto bad;
		}
		/* The log may carry NULs; keep them (reporters escape them). */
		sb_add(&r->log, json_string_value(v), json_string_length(v));
	}
	/* figures was checked above: an array of objects, one a figure */
	for (size_t i = 0; figs && i < r->nfigs; i++)
		if (get_spread(json_array_get(figs, i), r, i, err, errsz)) {
			if (bad_row)
				*bad_row = xstrdup(r->id);
			goto bad;
		}
	free(case_name);
	free(verdict);
	free(device);
	return r;
bad:
	free(id);
	free(case_name);
	free(verdict);
	free(device);
	rq_result_free(r);
	return NULL;
}

/* SPDX-License-Identifier: MIT */
/* `mlxfwmanager --query` text output (parse_fwmanager.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "parsers/parse_fwmanager.h"
#include "core/json_text.h"
#include "core/util.h"

static void copy(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src);
}

/* "   FW (Running)   22.36.1010     N/A" -> its name and the last two words */
static bool version_row(const char *s, struct fwm_version *v)
{
	const char *end = s + strlen(s), *a, *b;
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	/* the last word */
	b = end;
	while (b > s && !isspace((unsigned char)b[-1]))
		b--;
	a = b;
	while (a > s && isspace((unsigned char)a[-1]))
		a--;
	/* the word before it */
	while (a > s && !isspace((unsigned char)a[-1]))
		a--;
	if (a <= s || b >= end)
		return false;
	n = (size_t)(a - s);
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (!n || n >= sizeof(v->name))
		return false;
	memcpy(v->name, s, n);
	v->name[n] = '\0';
	if (sscanf(a, "%31s", v->current) != 1)
		return false;
	copy(v->available, sizeof(v->available), b);
	return true;
}

int fwmanager_parse(const char *text, size_t len, struct fwm_query *q, char *err, size_t errsz)
{
	struct rq_lines l;
	struct fwm_device *d = NULL;
	bool in_versions = false;
	char *s;
	int ret = 0;

	memset(q, 0, sizeof(*q));
	rq_lines_init(&l, text, len);
	while ((s = rq_lines_next(&l))) {
		char *t = s, *colon;
		unsigned num;

		while (*t == ' ' || *t == '\t')
			t++;
		if (!*t) {
			in_versions = false;
			continue;
		}
		if (sscanf(t, "Device #%u:", &num) == 1) {
			q->dev = xrealloc(q->dev, (q->n + 1) * sizeof(*q->dev));
			d = &q->dev[q->n++];
			memset(d, 0, sizeof(*d));
			in_versions = false;
			continue;
		}
		/* banners, separators and the summary after the devices */
		if (strspn(t, "-") == strlen(t) || str_starts(t, "Querying ") ||
		    str_starts(t, "Found ") || str_starts(t, "Log File:"))
			continue;
		if (str_starts(t, "-E-")) {
			ret = rq_parse_error(err, errsz, l.no, "mlxfwmanager reported an error: %s", t);
			break;
		}
		colon = strchr(t, ':');
		/* under Versions: rows without a colon, until a blank line or a key */
		if (d && in_versions && !colon) {
			if (d->nv >= FWM_VERSIONS_MAX)
				continue;
			if (!version_row(t, &d->v[d->nv])) {
				ret = rq_parse_error(err, errsz, l.no, "expected a version row "
						     "(component, current, available), got '%s'", t);
				break;
			}
			d->nv++;
			continue;
		}
		if (!d || !colon || colon == t) {
			ret = rq_parse_error(err, errsz, l.no, "expected 'Device #N:' or 'Key: value', got '%s'", t);
			break;
		}
		*colon = '\0';
		char *key = strtrim(t), *val = strtrim(colon + 1);

		in_versions = !strcmp(key, "Versions");
		if (!strcmp(key, "Device Type"))
			copy(d->type, sizeof(d->type), val);
		else if (!strcmp(key, "Part Number"))
			copy(d->part, sizeof(d->part), val);
		else if (!strcmp(key, "Description"))
			copy(d->description, sizeof(d->description), val);
		else if (!strcmp(key, "PSID"))
			copy(d->psid, sizeof(d->psid), val);
		else if (!strcmp(key, "PCI Device Name"))
			copy(d->pci, sizeof(d->pci), val);
		else if (!strcmp(key, "Status"))
			copy(d->status, sizeof(d->status), val);
	}
	rq_lines_release(&l);
	if (ret)
		fwmanager_release(q);
	return ret;
}

void fwmanager_release(struct fwm_query *q)
{
	free(q->dev);
	q->dev = NULL;
	q->n = 0;
}

const char *fwm_current(const struct fwm_device *d, const char *name)
{
	for (unsigned i = 0; i < d->nv; i++)
		if (!strcmp(d->v[i].name, name))
			return d->v[i].current;
	return NULL;
}

static void set_text(json_t *o, const char *key, const char *v)
{
	json_object_set_new(o, key, v[0] ? rq_json_text(v) : json_null());
}

static int fwmanager_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	struct fwm_query q;
	int ret = fwmanager_parse(text, len, &q, err, errsz);

	if (ret)
		return ret;
	json_t *devs = json_array();

	for (size_t i = 0; i < q.n; i++) {
		const struct fwm_device *d = &q.dev[i];
		const char *fw = fwm_current(d, "FW"), *run = fwm_current(d, "FW (Running)");
		json_t *o = json_object(), *vers = json_array();

		set_text(o, "device_type", d->type);
		set_text(o, "part_number", d->part);
		set_text(o, "description", d->description);
		set_text(o, "psid", d->psid);
		set_text(o, "pci_device_name", d->pci);
		set_text(o, "status", d->status);
		/* flashed vs running, the way the driver kind reads them */
		set_text(o, "fw_flashed", fw ? fw : "");
		set_text(o, "fw_running", run ? run : fw ? fw : "");
		json_object_set_new(o, "fw_pending", json_boolean(fw && run && strcmp(fw, run)));
		for (unsigned k = 0; k < d->nv; k++)
		{
			json_t *v = json_object();

			set_text(v, "name", d->v[k].name);
			set_text(v, "current", d->v[k].current);
			set_text(v, "available", d->v[k].available);
			json_array_append_new(vers, v);
		}
		json_object_set_new(o, "versions", vers);
		json_array_append_new(devs, o);
	}
	fwmanager_release(&q);
	*out = json_pack("{s:o}", "devices", devs);
	return 0;
}

const struct rq_parser rq_parser_mlxfwmanager = {
	.name = "mlxfwmanager",
	.help = "mlxfwmanager --query output: per device its type, PSID, PCI name, status and "
		"component versions; fw_flashed vs fw_running (a burned upgrade not yet running)",
	.parse = fwmanager_adapter,
};

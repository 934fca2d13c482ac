/* SPDX-License-Identifier: MIT */
/* nvidia-smi topo -m: see parse_nvtopo.h for the format. */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "parsers/parse_nvtopo.h"
#include "core/util.h"

static const char *const level_names[] = { "X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS" };

const char *nvtopo_level_name(int level)
{
	return level >= 0 && level <= NVT_SYS ? level_names[level] : "?";
}

int nvtopo_level_of(const char *c, int *links)
{
	*links = 0;
	if (!strcmp(c, "X"))
		return NVT_SELF;
	if (c[0] == 'N' && c[1] == 'V' && c[2]) {
		char *end;
		long n = strtol(c + 2, &end, 10);

		if (*end || n <= 0 || n > 255 || !isdigit((unsigned char)c[2]))
			return -1;
		*links = (int)n;
		return NVT_NVLINK;
	}
	for (int l = NVT_PIX; l <= NVT_SYS; l++)
		if (!strcmp(c, level_names[l]))
			return l;
	/* drivers before R450 called SYS "SOC" */
	return !strcmp(c, "SOC") ? NVT_SYS : -1;
}

/* Drop ANSI escape sequences (ESC [ ... final byte) in place: the header is underlined on a tty. */
static void strip_ansi(char *s)
{
	char *w = s;

	for (char *r = s; *r;) {
		if (*r == 0x1b) {
			r++;
			if (*r == '[') {
				r++;
				while (*r && !(*r >= 0x40 && *r <= 0x7e))
					r++;
				if (*r)
					r++;
			}
			continue;
		}
		*w++ = *r++;
	}
	*w = '\0';
}

#define MAX_CELLS (NVTOPO_MAX + 8)

/*
 * Split a line into trimmed cells: at every tab when it has one (empty
 * cells kept), else at runs of two or more spaces.  Returns the count.
 */
static int split_cells(char *s, char **cell, int max)
{
	int n = 0;

	if (strchr(s, '\t')) {
		for (char *p = s;; ) {
			char *tab = strchr(p, '\t');

			if (tab)
				*tab = '\0';
			if (n < max)
				cell[n++] = strtrim(p);
			if (!tab)
				break;
			p = tab + 1;
		}
		return n;
	}
	for (char *p = s; *p;) {
		char *q;

		if (p == s && *p == ' ') {
			/* leading indentation: the header's empty first cell */
			while (*p == ' ')
				p++;
			if (n < max)
				cell[n++] = "";
			continue;
		}
		for (q = p; *q && !(q[0] == ' ' && q[1] == ' '); q++)
			;
		if (*q) {
			*q++ = '\0';
			while (*q == ' ')
				q++;
		}
		if (n < max)
			cell[n++] = strtrim(p);
		p = q;
	}
	return n;
}

/* Device names are nvidia-smi's GPU<n>/NIC<n> or an RDMA device's: printable ASCII, no spaces. */
static bool device_name(const char *c)
{
	if (!*c || strlen(c) >= sizeof(((struct nvtopo *)0)->name[0]))
		return false;
	for (; *c; c++)
		if (*c < 0x21 || *c > 0x7e)
			return false;
	return true;
}

static bool affinity_header(const char *c)
{
	return str_starts(c, "CPU ") || str_starts(c, "NUMA ") || str_starts(c, "GPU NUMA");
}

bool nvtopo_is_gpu(const struct nvtopo *t, int c)
{
	return str_starts(t->name[c], "GPU") && isdigit((unsigned char)t->name[c][3]);
}

int nvtopo_rails_of(const struct nvtopo *t, int g, int *nics, int max)
{
	int n = 0;

	for (int c = 0; c < t->n; c++)
		if (c != g && !nvtopo_is_gpu(t, c) && (t->level[g][c] == NVT_PIX || t->level[g][c] == NVT_PXB)) {
			if (n < max)
				nics[n] = c;
			n++;
		}
	return n;
}

int nvtopo_find(const struct nvtopo *t, const char *name)
{
	for (int i = 0; i < t->n; i++)
		if (!strcmp(t->name[i], name) || (t->nic[i][0] && !strcmp(t->nic[i], name)))
			return i;
	return -1;
}

int nvtopo_parse(const char *text, size_t len, struct nvtopo *t, char *err, size_t errsz)
{
	enum { HEADER, ROWS, LEGEND, NIC_LEGEND } st = HEADER;
	struct rq_lines l;
	char *line, *cell[MAX_CELLS];
	int ret = 0, rows = 0;

	memset(t, 0, sizeof(*t));
	memset(t->level, -1, sizeof(t->level));
	rq_lines_init(&l, text, len);
	while ((line = rq_lines_next(&l))) {
		char *s;
		int nc;

		strip_ansi(line);
		s = strtrim(line);
		if (!*s) {
			if (st == ROWS)
				st = LEGEND;
			continue;
		}
		if (!strcmp(s, "Legend:")) {
			st = LEGEND;
			continue;
		}
		if (!strcmp(s, "NIC Legend:")) {
			st = NIC_LEGEND;
			continue;
		}
		switch (st) {
		case HEADER:
			nc = split_cells(line, cell, MAX_CELLS);
			for (int i = cell[0][0] ? 0 : 1; i < nc && !affinity_header(cell[i]); i++) {
				if (!cell[i][0])
					continue;
				if (!device_name(cell[i])) {
					ret = rq_parse_error(err, errsz, l.no, "header column %d: '%.24s' is no device name",
							     t->n + 1, cell[i]);
					goto out;
				}
				if (t->n == NVTOPO_MAX) {
					ret = rq_parse_error(err, errsz, l.no, "more than %d devices", NVTOPO_MAX);
					goto out;
				}
				snprintf(t->name[t->n++], sizeof(t->name[0]), "%s", cell[i]);
			}
			if (!t->n) {
				ret = rq_parse_error(err, errsz, l.no, "expected the header (GPU0 ...), got '%.60s'", s);
				goto out;
			}
			st = ROWS;
			break;
		case ROWS: {
			int r, k = 0;

			nc = split_cells(s, cell, MAX_CELLS);
			r = nvtopo_find(t, cell[0]);
			if (r < 0) {
				ret = rq_parse_error(err, errsz, l.no, "row '%.24s' is not a device of the header", cell[0]);
				goto out;
			}
			if (nc - 1 < t->n) {
				ret = rq_parse_error(err, errsz, l.no, "row %s has %d cells, the header %d devices",
						     cell[0], nc - 1, t->n);
				goto out;
			}
			for (int c = 0; c < t->n; c++) {
				int links, lv = nvtopo_level_of(cell[1 + c], &links);

				if (lv < 0) {
					ret = rq_parse_error(err, errsz, l.no, "row %s, column %s: '%.16s' is no "
							     "connection type (X, NV#, PIX, PXB, PHB, NODE, SYS)",
							     cell[0], t->name[c], cell[1 + c]);
					goto out;
				}
				t->level[r][c] = (signed char)lv;
				t->nvlinks[r][c] = (unsigned char)links;
			}
			/*
			 * The affinity columns: the non-empty cells after the matrix,
			 * each split at single spaces too: no value holds one, and a
			 * CPU list as wide as its column ("112-127,240-255") is
			 * followed by one space only in a terminal copy (DGX A100).
			 */
			for (int c = 1 + t->n; c < nc; c++) {
				char *save = NULL;

				for (char *v = strtok_r(cell[c], " ", &save); v; v = strtok_r(NULL, " ", &save)) {
					if (k == 0)
						snprintf(t->cpu_affinity[r], sizeof(t->cpu_affinity[0]), "%s", v);
					else if (k == 1)
						snprintf(t->numa_affinity[r], sizeof(t->numa_affinity[0]), "%s", v);
					k++;
				}
			}
			rows++;
			break;
		}
		case LEGEND:
			break;	/* "X    = Self" ... */
		case NIC_LEGEND: {
			char *colon = strchr(s, ':');
			int c;

			if (!colon || colon == s) {
				ret = rq_parse_error(err, errsz, l.no, "expected 'NIC<n>: device', got '%.60s'", s);
				goto out;
			}
			*colon = '\0';
			c = nvtopo_find(t, strtrim(s));
			if (c < 0) {
				ret = rq_parse_error(err, errsz, l.no, "NIC Legend names %.24s, not in the header", s);
				goto out;
			}
			snprintf(t->nic[c], sizeof(t->nic[0]), "%s", strtrim(colon + 1));
			break;
		}
		}
	}
	if (!ret && st == HEADER)
		ret = rq_parse_error(err, errsz, 0, "no topology matrix (empty output)");
	else if (!ret && !rows)
		ret = rq_parse_error(err, errsz, 0, "a header but no rows");
out:
	rq_lines_release(&l);
	return ret;
}

static void set_text(json_t *o, const char *k, const char *v)
{
	json_object_set_new(o, k, rq_json_text(v));
}

static int nvtopo_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	struct nvtopo *t = xcalloc(1, sizeof(*t));
	int ret = nvtopo_parse(text, len, t, err, errsz);
	json_t *devs;

	if (ret) {
		free(t);
		return ret;
	}
	devs = json_array();
	for (int i = 0; i < t->n; i++) {
		json_t *o = json_object(), *to = json_object();

		set_text(o, "name", t->name[i]);
		if (t->nic[i][0])
			set_text(o, "nic", t->nic[i]);
		if (t->cpu_affinity[i][0])
			set_text(o, "cpu_affinity", t->cpu_affinity[i]);
		if (t->numa_affinity[i][0])
			set_text(o, "numa_affinity", t->numa_affinity[i]);
		for (int j = 0; j < t->n; j++) {
			char c[16];

			if (t->level[i][j] < 0 || i == j)
				continue;
			if (t->level[i][j] == NVT_NVLINK)
				snprintf(c, sizeof(c), "NV%d", t->nvlinks[i][j]);
			else
				snprintf(c, sizeof(c), "%s", nvtopo_level_name(t->level[i][j]));
			set_text(to, t->name[j], c);
		}
		json_object_set_new(o, "to", to);
		json_array_append_new(devs, o);
	}
	free(t);
	*out = json_pack("{s:o}", "devices", devs);
	return 0;
}

const struct rq_parser rq_parser_nvidia_smi_topo = {
	.name = "nvidia-smi-topo",
	.help = "nvidia-smi topo -m: per GPU and NIC its connection to every other (X, NV#, PIX, PXB, "
		"PHB, NODE, SYS), CPU and NUMA affinity, and the NIC legend (NIC0: mlx5_0)",
	.parse = nvtopo_adapter,
};

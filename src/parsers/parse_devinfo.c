/* SPDX-License-Identifier: MIT */
/*
 * ibv_devinfo [-v] parser.  devinfo.c prints "key:\tvalue" lines indented
 * by one tab (device) or three (port), "port:\t<n>" opening each port,
 * continuation lines for flag lists (no colon, or values after a bare
 * "key:" line) and "GID[  i]:\t\t<gid>[, <type>]".  Indentation is not
 * trusted (blogs turn tabs into spaces): a key belongs to the port once a
 * "port:" line has been seen in the device, and port keys are known.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parsers/parse_devinfo.h"
#include "parsers/parsers.h"
#include "core/util.h"

static void scopy(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* "4096 (5)" -> 4096; "PORT_ACTIVE (4)" -> name + 4. */
static int paren_num(const char *v)
{
	const char *p = strrchr(v, '(');

	return p ? atoi(p + 1) : -1;
}

static void before_paren(const char *v, char *buf, size_t size)
{
	const char *p = strrchr(v, '(');
	size_t n = p ? (size_t)(p - v) : strlen(v);

	while (n && isspace((unsigned char)v[n - 1]))
		n--;
	if (n >= size)
		n = size - 1;
	memcpy(buf, v, n);
	buf[n] = '\0';
}

int ibv_devinfo_parse(const char *text, size_t len, struct devinfo *out, char *err, size_t errsz)
{
	struct rq_lines l;
	struct devinfo_dev *dev = NULL;
	struct devinfo_port *port = NULL;
	char *line;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	rq_lines_init(&l, text, len);
	while (ret == 0 && (line = rq_lines_next(&l))) {
		char *s = strtrim(line), *colon, *key, *val;

		if (!*s)
			continue;
		if (!strcmp(s, "No IB devices found") || str_starts(s, "Failed to get IB devices list"))
			continue;
		colon = strchr(s, ':');
		if (!str_starts(s, "hca_id:") && !dev) {
			ret = rq_parse_error(err, errsz, l.no, "expected \"hca_id:\" before device lines");
			break;
		}
		if (str_starts(s, "GID[")) {
			char *end;
			struct devinfo_gid *g;
			long idx = strtol(s + 4, &end, 10);

			if (!port) {
				ret = rq_parse_error(err, errsz, l.no, "GID line outside a port");
				break;
			}
			while (*end == ' ')
				end++;
			if (end == s + 4 || *end != ']' || !colon) {
				ret = rq_parse_error(err, errsz, l.no, "malformed GID line");
				break;
			}
			val = strtrim(colon + 1);
			port->gids = xrealloc(port->gids, (size_t)(port->ngids + 1) * sizeof(*port->gids));
			g = &port->gids[port->ngids++];
			memset(g, 0, sizeof(*g));
			g->index = (int)idx;
			char *comma = strchr(val, ',');

			if (comma) {
				*comma = '\0';
				scopy(g->type, sizeof(g->type), strtrim(comma + 1));
			}
			scopy(g->gid, sizeof(g->gid), strtrim(val));
			continue;
		}
		if (!colon)
			continue;	/* flag continuation or "... not supported" */
		*colon = '\0';
		key = strtrim(s);
		val = strtrim(colon + 1);
		if (!strcmp(key, "hca_id")) {
			if (!*val) {
				ret = rq_parse_error(err, errsz, l.no, "hca_id without a name");
				break;
			}
			out->v = xrealloc(out->v, (size_t)(out->n + 1) * sizeof(*out->v));
			dev = &out->v[out->n++];
			memset(dev, 0, sizeof(*dev));
			scopy(dev->name, sizeof(dev->name), val);
			dev->phys_port_cnt = -1;
			dev->num_comp_vectors = -1;
			dev->max_qp = -1;
			port = NULL;
			continue;
		}
		if (!strcmp(key, "port")) {
			char *end;
			long n = strtol(val, &end, 10);

			if (end == val || n <= 0 || n > 255) {
				ret = rq_parse_error(err, errsz, l.no, "port number expected after \"port:\"");
				break;
			}
			dev->ports = xrealloc(dev->ports, (size_t)(dev->nports + 1) * sizeof(*dev->ports));
			port = &dev->ports[dev->nports++];
			memset(port, 0, sizeof(*port));
			port->num = (int)n;
			port->state = -1;
			port->sm_lid = port->lid = -1;
			continue;
		}
		if (port) {
			if (!strcmp(key, "state")) {
				port->state = paren_num(val);
				before_paren(val, port->state_str, sizeof(port->state_str));
			} else if (!strcmp(key, "max_mtu")) {
				port->max_mtu = atoi(val);
			} else if (!strcmp(key, "active_mtu")) {
				port->active_mtu = atoi(val);
			} else if (!strcmp(key, "sm_lid")) {
				port->sm_lid = strtol(val, NULL, 0);
			} else if (!strcmp(key, "port_lid")) {
				port->lid = strtol(val, NULL, 0);
			} else if (!strcmp(key, "link_layer")) {
				scopy(port->link_layer, sizeof(port->link_layer), val);
			} else if (!strcmp(key, "phys_state")) {
				before_paren(val, port->phys_state, sizeof(port->phys_state));
			} else if (!strcmp(key, "active_width")) {
				before_paren(val, port->active_width, sizeof(port->active_width));
			} else if (!strcmp(key, "active_speed")) {
				before_paren(val, port->active_speed, sizeof(port->active_speed));
			}
			continue;
		}
		if (!strcmp(key, "transport"))
			scopy(dev->transport, sizeof(dev->transport), val);
		else if (!strcmp(key, "fw_ver"))
			scopy(dev->fw_ver, sizeof(dev->fw_ver), val);
		else if (!strcmp(key, "node_guid"))
			scopy(dev->node_guid, sizeof(dev->node_guid), val);
		else if (!strcmp(key, "board_id"))
			scopy(dev->board_id, sizeof(dev->board_id), val);
		else if (!strcmp(key, "vendor_id"))
			dev->vendor_id = strtoul(val, NULL, 0);
		else if (!strcmp(key, "vendor_part_id"))
			dev->vendor_part_id = strtoul(val, NULL, 0);
		else if (!strcmp(key, "phys_port_cnt"))
			dev->phys_port_cnt = atoi(val);
		else if (!strcmp(key, "num_comp_vectors"))
			dev->num_comp_vectors = atoi(val);
		else if (!strcmp(key, "max_qp"))
			dev->max_qp = strtoll(val, NULL, 0);
	}
	rq_lines_release(&l);
	for (int i = 0; ret == 0 && i < out->n; i++) {
		struct devinfo_dev *d = &out->v[i];

		for (int j = 0; ret == 0 && j < d->nports; j++) {
			struct devinfo_port *p = &d->ports[j];

			/*
			 * link_layer came with libibverbs 1.1.4: an older one
			 * prints none, and the link layer is unknown, not an
			 * error.  Every version prints state, the MTUs and the
			 * LIDs before it: without those, the output was cut.
			 */
			bool old_verbs = p->max_mtu && p->active_mtu && p->sm_lid >= 0 && p->lid >= 0;

			if (p->state < 0 || (!p->link_layer[0] && !old_verbs))
				ret = rq_parse_error(err, errsz, 0,
						     "%s port %d: state or link_layer missing (truncated output?)",
						     d->name, p->num);
			else if (!p->link_layer[0])
				rq_missing_add(&p->missing, "link_layer");
		}
	}
	if (ret)
		devinfo_release(out);
	return ret;
}

void devinfo_release(struct devinfo *d)
{
	for (int i = 0; i < d->n; i++) {
		for (int j = 0; j < d->v[i].nports; j++)
			free(d->v[i].ports[j].gids);
		free(d->v[i].ports);
	}
	free(d->v);
	d->v = NULL;
	d->n = 0;
}

const struct devinfo_dev *devinfo_dev(const struct devinfo *d, const char *name)
{
	for (int i = 0; i < d->n; i++)
		if (!strcmp(d->v[i].name, name))
			return &d->v[i];
	return NULL;
}

const struct devinfo_port *devinfo_port(const struct devinfo *d, const char *dev, int port)
{
	const struct devinfo_dev *v = devinfo_dev(d, dev);

	for (int j = 0; v && j < v->nports; j++)
		if (v->ports[j].num == port)
			return &v->ports[j];
	return NULL;
}

static int devinfo_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	struct devinfo d;
	json_t *jdevs;
	int ret = ibv_devinfo_parse(text, len, &d, err, errsz);

	if (ret)
		return ret;
	jdevs = json_array();
	for (int i = 0; i < d.n; i++) {
		const struct devinfo_dev *v = &d.v[i];
		json_t *jd = json_object(), *jp = json_array();

		json_object_set_new(jd, "hca_id", rq_json_text(v->name));
		json_object_set_new(jd, "transport", rq_json_text(v->transport));
		json_object_set_new(jd, "fw_ver", rq_json_text(v->fw_ver));
		json_object_set_new(jd, "node_guid", rq_json_text(v->node_guid));
		if (v->board_id[0])
			json_object_set_new(jd, "board_id", rq_json_text(v->board_id));
		json_object_set_new(jd, "vendor_id", json_integer((json_int_t)v->vendor_id));
		json_object_set_new(jd, "vendor_part_id", json_integer((json_int_t)v->vendor_part_id));
		json_object_set_new(jd, "phys_port_cnt", json_integer(v->phys_port_cnt));
		if (v->num_comp_vectors >= 0)
			json_object_set_new(jd, "num_comp_vectors", json_integer(v->num_comp_vectors));
		if (v->max_qp >= 0)
			json_object_set_new(jd, "max_qp", json_integer(v->max_qp));
		for (int j = 0; j < v->nports; j++) {
			const struct devinfo_port *p = &v->ports[j];
			json_t *o = json_object(), *jg = json_array();

			json_object_set_new(o, "port", json_integer(p->num));
			json_object_set_new(o, "state", rq_json_text(p->state_str));
			json_object_set_new(o, "state_num", json_integer(p->state));
			json_object_set_new(o, "max_mtu", json_integer(p->max_mtu));
			json_object_set_new(o, "active_mtu", json_integer(p->active_mtu));
			json_object_set_new(o, "sm_lid", json_integer(p->sm_lid));
			json_object_set_new(o, "port_lid", json_integer(p->lid));
			json_object_set_new(o, "link_layer", rq_json_text(p->link_layer));
			rq_missing_json(o, &p->missing);
			if (p->phys_state[0])
				json_object_set_new(o, "phys_state", rq_json_text(p->phys_state));
			if (p->active_width[0])
				json_object_set_new(o, "active_width", rq_json_text(p->active_width));
			if (p->active_speed[0])
				json_object_set_new(o, "active_speed", rq_json_text(p->active_speed));
			for (int k = 0; k < p->ngids; k++) {
				json_t *g = json_object();

				json_object_set_new(g, "index", json_integer(p->gids[k].index));
				json_object_set_new(g, "gid", rq_json_text(p->gids[k].gid));
				if (p->gids[k].type[0])
					json_object_set_new(g, "type", rq_json_text(p->gids[k].type));
				json_array_append_new(jg, g);
			}
			if (p->ngids)
				json_object_set_new(o, "gids", jg);
			else
				json_decref(jg);
			json_array_append_new(jp, o);
		}
		json_object_set_new(jd, "ports", jp);
		json_array_append_new(jdevs, jd);
	}
	*out = json_object();
	json_object_set_new(*out, "devices", jdevs);
	devinfo_release(&d);
	return 0;
}

const struct rq_parser rq_parser_ibv_devinfo = {
	.name = "ibv_devinfo",
	.help = "ibv_devinfo [-v] output: devices, firmware, ports (state, max/active MTU, LIDs, link layer, GIDs)",
	.parse = devinfo_adapter,
};

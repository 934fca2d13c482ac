/* SPDX-License-Identifier: MIT */
/*
 * The `rdmaqual parse` adapters of the InfiniBand diagnostics: each turns
 * what a parser in parse_ibdiag.c read into JSON.  Apart from the parsers
 * so that the text formats and their JSON rendering can each be read whole.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "parsers/ibnet.h"
#include "parsers/parse_ibdiag.h"
#include "parsers/parsers.h"
#include "core/util.h"

static json_t *guid_json(uint64_t g)
{
	char b[24];

	snprintf(b, sizeof(b), "0x%016" PRIx64, g);
	return json_string(b);
}

static int sminfo_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	struct ib_sminfo si;
	int ret = sminfo_parse(text, len, &si, err, errsz);

	if (ret)
		return ret == -ENOENT ? -EINVAL : ret;
	*out = json_pack("{s:i, s:o, s:I, s:i, s:i, s:s}", "lid", (int)si.lid, "guid", guid_json(si.guid),
			 "activity", (json_int_t)si.activity, "priority", si.priority, "state", si.state,
			 "state_name", ib_sminfo_state_name(si.state));
	rq_missing_json(*out, &si.missing);
	return 0;
}

static int iblinkinfo_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	struct ib_links l;
	json_t *a;
	int ret = iblinkinfo_parse(text, len, &l, err, errsz);

	if (ret)
		return ret;
	a = json_array();
	for (size_t i = 0; i < l.n; i++) {
		const struct ib_link *k = &l.v[i];
		json_t *o = json_pack("{s:o, s:s, s:o, s:i, s:i, s:o, s:o, s:o}",
				      "node", rq_json_text(k->node), "type", k->is_switch ? "switch" : "ca",
				      "guid", guid_json(k->guid), "lid", (int)k->lid, "port", k->port,
				      "state", rq_json_text(k->state), "phys_state", rq_json_text(k->phys),
				      "width", rq_json_text(k->width));

		json_object_set_new(o, "speed", rq_json_text(k->speed));
		json_object_set_new(o, "gbps", rq_json_num(k->gbps));
		if (k->connected)
			json_object_set_new(o, "remote", json_pack("{s:o, s:i, s:i}", "node", rq_json_text(k->rnode),
								   "lid", (int)k->rlid, "port", k->rport));
		json_array_append_new(a, o);
	}
	*out = json_pack("{s:o}", "ports", a);
	ib_links_release(&l);
	return 0;
}

static int perfquery_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	struct ib_perf p;
	json_t *a;
	int ret = perfquery_parse(text, len, &p, err, errsz);

	if (ret)
		return ret;
	a = json_array();
	for (size_t i = 0; i < p.n; i++) {
		json_t *c = json_object();

		for (size_t j = 0; j < p.v[i].n; j++)
			rq_json_set_text(c, p.v[i].c[j].name, json_integer((json_int_t)p.v[i].c[j].value));
		json_array_append_new(a, json_pack("{s:i, s:i, s:b, s:o}", "lid", (int)p.v[i].lid,
						   "port", p.v[i].port, "extended", p.v[i].extended,
						   "counters", c));
	}
	*out = json_pack("{s:o}", "blocks", a);
	ib_perf_release(&p);
	return 0;
}

static int netdiscover_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	/* Two output forms: --ports lines ("CA  134 1 0x..."), or the topology file. */
	struct rq_lines l;
	const char *s;
	bool ports_form = false;

	rq_lines_init(&l, text, len);
	while ((s = rq_lines_next(&l)))
		if (!ib_diag_noise(s)) {
			ports_form = str_starts(s, "CA ") || str_starts(s, "SW ") || str_starts(s, "RT ");
			break;
		}
	rq_lines_release(&l);
	if (ports_form) {
		struct ib_netports p;
		json_t *a;
		int ret = ibnetdiscover_ports_parse(text, len, &p, err, errsz);

		if (ret)
			return ret;
		a = json_array();
		for (size_t i = 0; i < p.n; i++) {
			const struct ib_netport *k = &p.v[i];
			json_t *o = json_pack("{s:o, s:i, s:i, s:o, s:o, s:o, s:o}", "type", rq_json_text(k->type),
					      "lid", (int)k->lid, "port", k->port, "guid", guid_json(k->guid),
					      "width", rq_json_text(k->width), "speed", rq_json_text(k->speed),
					      "name", rq_json_text(k->name));

			if (k->connected)
				json_object_set_new(o, "remote",
						    json_pack("{s:o, s:i, s:i, s:o, s:o}", "type", rq_json_text(k->rtype),
							      "lid", (int)k->rlid, "port", k->rport,
							      "guid", guid_json(k->rguid), "name", rq_json_text(k->rname)));
			json_array_append_new(a, o);
		}
		*out = json_pack("{s:s, s:o}", "form", "ports", "ports", a);
		ib_netports_release(&p);
		return 0;
	}
	struct ibnet net;
	int ret = ibnet_parse(text, len, "ibnetdiscover", &net, err, errsz);

	if (ret)
		return ret;
	*out = ibnet_to_json(&net);
	json_object_set_new(*out, "form", json_string("topology"));
	ibnet_release(&net);
	return 0;
}

static int ibstat_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	struct ib_stat st;
	json_t *a;
	int ret = ibstat_parse(text, len, &st, err, errsz);

	if (ret)
		return ret;
	a = json_array();
	for (size_t i = 0; i < st.n; i++) {
		const struct ib_stat_ca *ca = &st.v[i];
		json_t *ports = json_array();

		for (size_t j = 0; j < ca->nport_blocks; j++) {
			const struct ib_stat_port *p = &ca->ports[j];
			char cm[16];

			json_t *o;

			snprintf(cm, sizeof(cm), "0x%08x", p->capmask);
			o = json_pack("{s:i, s:o, s:o, s:o, s:i, s:i, s:i, s:s, s:o, s:o}", "port", p->num,
				"state", rq_json_text(p->state), "phys_state", rq_json_text(p->phys), "rate", rq_json_text(p->rate),
				"base_lid", (int)p->base_lid, "lmc", (int)p->lmc, "sm_lid", (int)p->sm_lid,
				"capmask", cm, "port_guid", guid_json(p->port_guid),
				"link_layer", rq_json_text(p->link_layer));
			rq_missing_json(o, &p->missing);
			json_array_append_new(ports, o);
		}
		json_t *o = json_pack("{s:o, s:s, s:o, s:i, s:o, s:o, s:o, s:o, s:o}",
				      "name", rq_json_text(ca->name), "node", ca->is_switch ? "switch" : "ca",
				      "ca_type", rq_json_text(ca->ca_type), "nports", ca->nports,
				      "fw", rq_json_text(ca->fw), "hw", rq_json_text(ca->hw),
				      "node_guid", guid_json(ca->node_guid),
				      "sys_guid", guid_json(ca->sys_guid), "ports", ports);

		rq_missing_json(o, &ca->missing);
		json_array_append_new(a, o);
	}
	*out = json_pack("{s:o}", "cas", a);
	if (st.error[0]) {
		json_object_set_new(*out, "error", rq_json_text(st.error));
		json_object_set_new(*out, "error_line", json_integer(st.error_line));
	}
	ib_stat_release(&st);
	return 0;
}

static int smpquery_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	struct ib_kvs k;
	json_t *o;
	int ret = smpquery_parse(text, len, &k, err, errsz);

	if (ret)
		return ret;
	o = json_object();
	for (size_t i = 0; i < k.n; i++)
		rq_json_set_text(o, k.v[i].key, rq_json_text(k.v[i].value));
	*out = json_pack("{s:o, s:o}", "header", rq_json_text(k.header), "fields", o);
	ib_kvs_release(&k);
	return 0;
}

static int saquery_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	struct ib_sm_ports p;
	json_t *a;
	int ret = saquery_sm_parse(text, len, &p, err, errsz);

	if (ret)
		return ret;
	a = json_array();
	for (size_t i = 0; i < p.n; i++)
		json_array_append_new(a, json_integer(p.lid[i]));
	*out = json_pack("{s:o, s:i}", "sm_lids", a, "master_lid", (int)p.master_lid);
	return 0;
}

static int opensm_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	struct osm_summary s;
	json_t *e = json_array();
	char why[256];

	opensm_log_parse(text, len, &s);
	if (!s.version[0] && !s.discovering && !s.nerrs && !s.subnet_up) {
		json_decref(e);
		osm_summary_release(&s);
		return rq_parse_error(err, errsz, 0, "no opensm version, state or error line: not opensm output");
	}
	for (size_t i = 0; i < s.nerrs && i < OSM_MAX_ERRS; i++)
		json_array_append_new(e, rq_json_text(s.errs[i]));
	osm_summary_reason(&s, why, sizeof(why));
	*out = json_pack("{s:o, s:o, s:b, s:b, s:b, s:i, s:b, s:b, s:o, s:i, s:o, s:o}",
			 "version", rq_json_text(s.version), "guid", guid_json(s.guid), "discovering", s.discovering,
			 "master", s.master, "standby", s.standby, "subnet_up", (int)s.subnet_up,
			 "exiting", s.exiting, "bind_failed", s.bind_failed, "last_state", rq_json_text(s.last_state),
			 "nerrors", (int)s.nerrs, "errors", e, "summary", rq_json_text(why));
	if (s.routing[0])
		json_object_set_new(*out, "routing_engine", rq_json_text(s.routing));
	if (s.routing_failure[0])
		json_object_set_new(*out, "routing_failure", rq_json_text(s.routing_failure));
	osm_summary_release(&s);
	return 0;
}

const struct rq_parser rq_parser_sminfo = {
	.name = "sminfo",
	.help = "sminfo output: SM LID, GUID, activity count, priority, state (MASTER/STANDBY/...)",
	.parse = sminfo_adapter,
};

const struct rq_parser rq_parser_iblinkinfo = {
	.name = "iblinkinfo",
	.help = "iblinkinfo output: per port of every node: LID, width, speed, state, phys state, remote end",
	.parse = iblinkinfo_adapter,
};

const struct rq_parser rq_parser_perfquery = {
	.name = "perfquery",
	.help = "perfquery [-x] output: per LID/port block, every counter by name",
	.parse = perfquery_adapter,
};

const struct rq_parser rq_parser_ibnetdiscover = {
	.name = "ibnetdiscover",
	.help = "ibnetdiscover output: the topology file (nodes, links) or the --ports form",
	.parse = netdiscover_adapter,
};

const struct rq_parser rq_parser_ibstat = {
	.name = "ibstat",
	.help = "ibstat output: per CA its identity and per port state, LIDs, SM LID, capability mask, GUID, link layer",
	.parse = ibstat_adapter,
};

const struct rq_parser rq_parser_smpquery = {
	.name = "smpquery",
	.help = "smpquery dumps (portinfo, nodeinfo, ...): the header and every 'Key:....value' field",
	.parse = smpquery_adapter,
};

const struct rq_parser rq_parser_saquery_sm = {
	.name = "saquery-sm",
	.help = "saquery -s output: LIDs of the ports that have an SM (IsSM) and the master SM LID",
	.parse = saquery_adapter,
};

const struct rq_parser rq_parser_opensm_log = {
	.name = "opensm-log",
	.help = "opensm log file or stdout: version, bound GUID, states entered, SUBNET UP count, ERR lines",
	.parse = opensm_adapter,
};

/* SPDX-License-Identifier: MIT */
/*
 * fabric-health: ibdiagnet's default identity checks, on infiniband-diags.
 *
 * Two nodes with one GUID, or two with one description, break the subnet
 * manager (opensm refuses a duplicated node GUID: ERR 0D01, and the subnet
 * never comes up) or every tool that names nodes; a port without a LID, or
 * two ports whose LID ranges overlap (LMC), lose traffic; an SM that is not
 * MASTER, or MASTER at another priority than planned, is the next handover
 * waiting.  This discovers the fabric by directed-route SMPs (ibnetdiscover:
 * the SA is not asked, so a subnet the SM cannot bring up is still read)
 * and gives one row per check: guids, descriptions, lids, sm.  A duplicated
 * GUID hides one of its nodes from discovery; the ports that are LinkUp
 * (iblinkinfo) with no discovered peer are asked for their NodeInfo by
 * directed route, and a GUID found there that discovery placed elsewhere is
 * named with both places, whether discovery started at a switch or, as on
 * every real fabric, at a host's HCA.  With a partitions.conf, a pkeys row judges every
 * CA port's P_Key table.  Links (fabric-links), counters (ib-counters) and
 * routes (fabric-routing) are kinds of their own.  Read-only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "kinds/ibkind.h"
#include "parsers/parse_ibdiag.h"
#include "parsers/partitions.h"
#include "fabric/pkeys.h"
#include "core/util.h"

#define FH_MAX_PROBES 32

struct fh_cfg {
	long long sm_priority;
	long long lmc;
	char *partitions;
};

static const struct key_def fh_keys[] = {
	{ .name = "sm_priority", .type = KEY_INT, .def = "-1", .min = -1, .max = 15,
	  .offset = offsetof(struct fh_cfg, sm_priority),
	  .help = "the planned priority of the MASTER SM; -1: not judged" },
	{ .name = "lmc", .type = KEY_INT, .def = "-1", .min = -1, .max = 7,
	  .offset = offsetof(struct fh_cfg, lmc),
	  .help = "the planned LMC of every CA port; -1: any, the same on every port" },
	{ .name = "partitions", .type = KEY_STR, .offset = offsetof(struct fh_cfg, partitions),
	  .help = "the planned partitions.conf, relative to the case file: every CA port's P_Key table is judged against it (row pkeys); default: the target SM's sm_partitions, else no pkeys row" },
	KEY_END
};

static bool run_tool(struct rq_ctx *ctx, const char *const *argv, struct sb *out, struct sb *errout)
{
	struct proc_result r;
	bool ok = false;

	proc_result_init(&r);
	if (rq_tool(ctx, argv, 120000, &r) == 0 && !r.exec_failed && !r.timed_out && !r.out_truncated) {
		sb_add(out, r.out.buf, r.out.len);
		if (errout)
			sb_add(errout, r.err.buf, r.err.len);
		ok = true;
	} else {
		char how[200];

		proc_describe(&r, argv[0], how, sizeof(how));
		rq_result_set(ctx->main, RQ_ERROR, "%s", how);
	}
	proc_result_release(&r);
	return ok;
}

/* NodeInfo of a directed route (smpquery -D nodeinfo PATH); false when it does not answer. */
static bool dr_nodeinfo(struct rq_ctx *ctx, const char *dr, struct ib_kvs *kv)
{
	const char *argv[] = { "smpquery", "-D", "nodeinfo", dr, NULL };
	struct sb ni = SB_INIT;
	char err[256];
	bool ok;

	memset(kv, 0, sizeof(*kv));
	ok = run_tool(ctx, argv, &ni, NULL) && smpquery_parse(ni.buf, ni.len, kv, err, sizeof(err)) == 0 &&
	     ib_kvs_get(kv, "Guid");
	sb_release(&ni);
	return ok;
}

static int switch_by_guid(const struct ibnet *t, uint64_t g)
{
	for (size_t j = 0; j < t->nnodes; j++)
		if (t->nodes[j].is_switch && t->nodes[j].guid == g)
			return (int)j;
	return -1;
}

/* Where discovery started, as the fabric itself answers it (not as the topology printed it). */
struct dr_root {
	uint64_t guid;		/* its node GUID ("Initiated from node ...") */
	int sw, sw_port;	/* the switch behind the root's port and its port there; -1: none */
	int port;		/* the root's own port; 0: the root is a switch */
};

/*
 * Directed-route hops from the node discovery started at to every switch
 * (BFS over the topology's switch-to-switch links).  On a real fabric that
 * node is a host's HCA: its first hop is the local port, found by asking
 * the local node (NodeInfo's LocalPort is the port the SMP entered by), and
 * the switch behind it is asked by directed route rather than taken from
 * the topology, since a duplicated GUID may have cabled the root's own node
 * elsewhere in what discovery printed.
 */
static char **dr_paths(struct rq_ctx *ctx, const struct ibnet *t, uint64_t from, struct dr_root *root,
		       int *parent, int *parent_port)
{
	char **path = xcalloc(t->nnodes + 1, sizeof(char *));
	int *queue = xcalloc(t->nnodes + 1, sizeof(int));
	size_t qh = 0, qt = 0;
	int first = switch_by_guid(t, from);

	for (size_t i = 0; i < t->nnodes; i++)
		parent[i] = parent_port[i] = -1;
	*root = (struct dr_root){ .guid = from, .sw = first, .sw_port = 0, .port = 0 };
	if (first >= 0) {
		path[first] = xstrdup("0");
	} else {
		struct ib_kvs kv;
		char dr[32];
		long lp = 0;

		if (dr_nodeinfo(ctx, "0", &kv) && ib_kvs_get(&kv, "LocalPort"))
			lp = strtol(ib_kvs_get(&kv, "LocalPort"), NULL, 0);
		ib_kvs_release(&kv);
		snprintf(dr, sizeof(dr), "0,%ld", lp);
		if (lp > 0 && dr_nodeinfo(ctx, dr, &kv) &&
		    (first = switch_by_guid(t, strtoull(ib_kvs_get(&kv, "Guid"), NULL, 16))) >= 0) {
			path[first] = xstrdup(dr);
			*root = (struct dr_root){ .guid = from, .sw = first, .port = (int)lp,
				.sw_port = ib_kvs_get(&kv, "LocalPort") ? atoi(ib_kvs_get(&kv, "LocalPort")) : 0 };
		}
		ib_kvs_release(&kv);
	}
	if (first >= 0)
		queue[qt++] = first;
	while (qh < qt) {
		int n = queue[qh++];

		for (int p = 1; p <= t->nodes[n].nports; p++) {
			int peer, pp;

			if (!ibnet_link_at(t, n, p, &peer, &pp) || !t->nodes[peer].is_switch || path[peer])
				continue;
			path[peer] = xasprintf("%s,%d", path[n], p);
			parent[peer] = n;
			parent_port[peer] = p;
			queue[qt++] = peer;
		}
	}
	free(queue);
	return path;
}

/* A node's description, asked by directed route; "" when it does not answer. */
static void dr_desc(struct rq_ctx *ctx, const char *dr, char *buf, size_t size)
{
	const char *argv[] = { "smpquery", "-D", "nodedesc", dr, NULL };
	struct sb nd = SB_INIT;
	struct ib_kvs kv = { 0 };
	char err[128];
	const char *d;

	buf[0] = '\0';
	if (run_tool(ctx, argv, &nd, NULL) && smpquery_parse(nd.buf, nd.len, &kv, err, sizeof(err)) == 0 &&
	    (d = ib_kvs_get(&kv, "Node Description")))
		snprintf(buf, size, "%s", d);
	ib_kvs_release(&kv);
	sb_release(&nd);
}

/*
 * A node answered by directed route dr behind switch sw port p, whose GUID g
 * discovery placed at node `other`: the same node whose link discovery lost
 * (0), or a second node with that GUID (1, both named in msg).  A CA is the
 * same node when the port it answers on (LocalPort) is not cabled
 * elsewhere; a switch when its own port LocalPort leads back to sw port p
 * by the directed route discovery's switch has.  Both nodes are named by
 * what they answer (NodeDescription by directed route) and by where they
 * are cabled, since discovery printed one place under one description.
 */
static int probe_judge(struct rq_ctx *ctx, const struct ibnet *t, char *const *path, const int *parent,
		       const int *parent_port, const struct dr_root *root, const char *dr, int sw, int p,
		       uint64_t g, int lp, int other, struct sb *msg)
{
	struct ib_kvs kv = { 0 };
	char odr[600] = "", desc[80], odesc[80], oplace[200] = "";
	int peer, pp;

	if (t->nodes[other].is_switch) {
		bool same = false;

		if (!path[other])
			return 0;
		snprintf(odr, sizeof(odr), "%s,%d", path[other], lp);
		if (dr_nodeinfo(ctx, odr, &kv))
			same = strtoull(ib_kvs_get(&kv, "Guid"), NULL, 16) == t->nodes[sw].guid &&
			       ib_kvs_get(&kv, "LocalPort") && atoi(ib_kvs_get(&kv, "LocalPort")) == p;
		ib_kvs_release(&kv);
		if (same)
			return 0;
		snprintf(odr, sizeof(odr), "%s", path[other]);
		if (parent[other] >= 0)
			snprintf(oplace, sizeof(oplace), "behind %s port %d", t->nodes[parent[other]].desc,
				 parent_port[other]);
		else
			snprintf(oplace, sizeof(oplace), "where discovery started");
	} else if (t->nodes[other].guid == root->guid && root->port && root->sw >= 0 && lp == root->port) {
		/* the root's own port: its place is what the fabric answered, not the printed one */
		if (sw == root->sw && p == root->sw_port)
			return 0;
		snprintf(odr, sizeof(odr), "0");
		snprintf(oplace, sizeof(oplace), "port %d behind %s port %d (where discovery started)", lp,
			 t->nodes[root->sw].desc, root->sw_port);
	} else if (ibnet_link_at(t, other, lp, &peer, &pp)) {
		if (t->nodes[peer].is_switch && path[peer])
			snprintf(odr, sizeof(odr), "%s,%d", path[peer], pp);
		snprintf(oplace, sizeof(oplace), "port %d behind %s port %d", lp, t->nodes[peer].desc, pp);
	} else {
		return 0;	/* that node's port lp, which discovery did not reach */
	}
	dr_desc(ctx, dr, desc, sizeof(desc));
	if (odr[0])
		dr_desc(ctx, odr, odesc, sizeof(odesc));
	if (!odr[0] || !odesc[0])
		snprintf(odesc, sizeof(odesc), "%s", t->nodes[other].desc);
	if (t->nodes[other].is_switch)
		sb_addf(msg, "duplicated node GUID 0x%016" PRIx64 ": switch %s behind %s port %d, and switch %s %s", g,
			desc[0] ? desc : "?", t->nodes[sw].desc, p, odesc, oplace);
	else
		sb_addf(msg, "duplicated node GUID 0x%016" PRIx64 ": %s port %d behind %s port %d, and %s %s", g,
			desc[0] ? desc : "?", lp, t->nodes[sw].desc, p, odesc, oplace);
	return 1;
}

/* A CA port and what it is cabled to, for the duplicated port GUID check. */
struct pg {
	uint64_t guid;
	int node, port, peer, peer_port;
};

static int cmp_pg(const void *a, const void *b)
{
	const struct pg *x = a, *y = b;

	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return x->node != y->node ? x->node - y->node : x->port - y->port;
}

static void check_guids(struct rq_ctx *ctx, const struct ibnet *t, const struct sb *nd_err, uint64_t from)
{
	struct rq_result *row = rq_ctx_row(ctx, "guids", 0);
	static const char *const linkinfo[] = { "iblinkinfo", NULL };
	struct sb out = SB_INIT, msg = SB_INIT;
	struct ib_links links = { 0 };
	unsigned dups = 0, probes = 0;
	char err[256], **path = NULL;
	struct dr_root root;
	int *parent = NULL, *parent_port = NULL;

	/* two discovered CA ports with one port GUID (ibnetdiscover's "(guid)" of each end) */
	struct pg *pgs = xcalloc(2 * t->nlinks + 1, sizeof(*pgs));
	size_t npg = 0;

	for (size_t i = 0; i < t->nlinks; i++) {
		const struct ibnet_link *k = &t->links[i];

		if (k->apguid && !t->nodes[k->a].is_switch)
			pgs[npg++] = (struct pg){ k->apguid, k->a, k->aport, k->b, k->bport };
		if (k->bpguid && !t->nodes[k->b].is_switch)
			pgs[npg++] = (struct pg){ k->bpguid, k->b, k->bport, k->a, k->aport };
	}
	qsort(pgs, npg, sizeof(*pgs), cmp_pg);
	for (size_t i = 1; i < npg; i++) {
		if (pgs[i].guid != pgs[i - 1].guid || (i > 1 && pgs[i].guid == pgs[i - 2].guid))
			continue;
		sb_addf(&msg, "%sduplicated port GUID 0x%016" PRIx64 ":", dups++ ? "; " : "", pgs[i].guid);
		for (size_t j = i - 1; j < npg && pgs[j].guid == pgs[i].guid; j++)
			sb_addf(&msg, "%s %s port %d (behind %s port %d)", j > i - 1 ? " and" : "",
				t->nodes[pgs[j].node].desc, pgs[j].port, t->nodes[pgs[j].peer].desc, pgs[j].peer_port);
	}
	/* libibnetdisc names a second port with a known port GUID on stderr */
	for (const char *p = nd_err->buf; (p = strstr(p, "Duplicate Port: Port with guid ")); p++) {
		uint64_t g = strtoull(p + 31, NULL, 16);
		bool named = false;

		for (size_t i = 0; i < npg && !named; i++)
			named = pgs[i].guid == g;
		if (!named)
			sb_addf(&msg, "%sduplicated port GUID 0x%016" PRIx64 " (ibnetdiscover)", dups++ ? "; " : "", g);
	}
	free(pgs);
	/* LinkUp switch ports discovery found nothing behind: ask them by directed route */
	if (run_tool(ctx, linkinfo, &out, NULL) && iblinkinfo_parse(out.buf, out.len, &links, err, sizeof(err)) == 0) {
		parent = xcalloc(t->nnodes + 1, sizeof(int));
		parent_port = xcalloc(t->nnodes + 1, sizeof(int));
		path = dr_paths(ctx, t, from, &root, parent, parent_port);
		for (size_t i = 0; i < links.n && probes < FH_MAX_PROBES; i++) {
			const struct ib_link *k = &links.v[i];
			int sw, peer, pp;

			if (!k->is_switch || strcmp(k->phys, "LinkUp"))
				continue;
			sw = switch_by_guid(t, k->guid);
			if (sw < 0 || !path[sw] || ibnet_link_at(t, sw, k->port, &peer, &pp))
				continue;
			char dr[512];
			struct ib_kvs kv;

			snprintf(dr, sizeof(dr), "%s,%d", path[sw], k->port);
			probes++;
			if (dr_nodeinfo(ctx, dr, &kv)) {
				uint64_t g = strtoull(ib_kvs_get(&kv, "Guid"), NULL, 16);
				int lp = ib_kvs_get(&kv, "LocalPort") ? atoi(ib_kvs_get(&kv, "LocalPort")) : 1;
				int other = -1;

				for (size_t j = 0; j < t->nnodes && other < 0; j++)
					if (t->nodes[j].guid == g)
						other = (int)j;
				if (other < 0) {
					rq_log(ctx, "# %s port %d is LinkUp, discovery found nothing there; NodeInfo says GUID 0x%016" PRIx64,
					       t->nodes[sw].desc, k->port, g);
				} else {
					struct sb one = SB_INIT;

					if (probe_judge(ctx, t, path, parent, parent_port, &root, dr, sw, k->port, g, lp, other, &one))
						sb_addf(&msg, "%s%s", dups++ ? "; " : "", one.buf);
					else
						rq_log(ctx, "# %s port %d is LinkUp, discovery did not print its peer: %s, by its GUID 0x%016" PRIx64,
						       t->nodes[sw].desc, k->port, t->nodes[other].desc, g);
					sb_release(&one);
				}
			}
			ib_kvs_release(&kv);
		}
	}
	rq_figure_add(row, "duplicated_guids", dups, "");
	if (dups)
		rq_judge(row, false, "%s", msg.buf);
	else
		rq_judge(row, true, "%zu nodes, no GUID twice (%u LinkUp port(s) without a discovered peer asked)",
			 t->nnodes, probes);
	for (size_t i = 0; path && i < t->nnodes; i++)
		free(path[i]);
	free(path);
	free(parent);
	free(parent_port);
	ib_links_release(&links);
	sb_release(&out);
	sb_release(&msg);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void check_descriptions(struct rq_ctx *ctx, const struct ibnet *t)
{
	struct rq_result *row = rq_ctx_row(ctx, "descriptions", 0);
	const char **d = xcalloc(t->nnodes + 1, sizeof(char *));
	struct sb msg = SB_INIT;
	unsigned dups = 0;

	for (size_t i = 0; i < t->nnodes; i++)
		d[i] = t->nodes[i].desc;
	qsort(d, t->nnodes, sizeof(*d), cmp_str);
	for (size_t i = 1; i < t->nnodes; i++)
		if (!strcmp(d[i], d[i - 1]) && (i < 2 || strcmp(d[i], d[i - 2]))) {
			sb_addf(&msg, "%s\"%s\" on", dups++ ? "; " : "", d[i]);
			for (size_t j = 0; j < t->nnodes; j++)
				if (!strcmp(t->nodes[j].desc, d[i]))
					sb_addf(&msg, " 0x%016" PRIx64, t->nodes[j].guid);
		}
	rq_figure_add(row, "duplicated_descriptions", dups, "");
	if (dups)
		rq_judge(row, false, "node description(s) on more than one node: %s", msg.buf);
	else
		rq_judge(row, true, "%zu nodes, every description once", t->nnodes);
	free(d);
	sb_release(&msg);
}

static void check_lids(struct rq_ctx *ctx, const struct fh_cfg *cfg, const struct ibnet *t)
{
	struct rq_result *row = rq_ctx_row(ctx, "lids", 0);
	int *owner = xcalloc(0xc000, sizeof(int));
	struct sb msg = SB_INIT;
	unsigned bad = 0, ports = 0;
	int lmc = -1;

	for (int i = 0; i < 0xc000; i++)
		owner[i] = -1;
	/* switches: port 0's LID; CA ports: theirs, 2^LMC of them */
	for (size_t i = 0; i < t->nnodes; i++) {
		if (!t->nodes[i].is_switch)
			continue;
		ports++;
		if (!t->nodes[i].lid) {
			ibkind_problem(&msg, &bad, "%s has no LID", t->nodes[i].desc);
		} else if (t->nodes[i].lid < 0xc000) {
			if (owner[t->nodes[i].lid] >= 0)
				ibkind_problem(&msg, &bad, "LID %u on %s and %s", t->nodes[i].lid,
					t->nodes[owner[t->nodes[i].lid]].desc, t->nodes[i].desc);
			owner[t->nodes[i].lid] = (int)i;
		}
	}
	for (size_t i = 0; i < t->nlinks; i++) {
		const struct ibnet_link *k = &t->links[i];

		for (int end = 0; end < 2; end++) {
			int n = end ? k->b : k->a, p = end ? k->bport : k->aport, m = end ? k->blmc : k->almc;
			unsigned lid = end ? k->blid : k->alid;

			if (t->nodes[n].is_switch)
				continue;
			ports++;
			if (!lid) {
				ibkind_problem(&msg, &bad, "%s port %d has no LID", t->nodes[n].desc, p);
				continue;
			}
			if (lmc < 0)
				lmc = m;
			if (m != lmc || (cfg->lmc >= 0 && m != cfg->lmc))
				ibkind_problem(&msg, &bad, "%s port %d has LMC %d (%s %lld)", t->nodes[n].desc, p, m,
					cfg->lmc >= 0 ? "planned" : "others", cfg->lmc >= 0 ? cfg->lmc : (long long)lmc);
			for (unsigned j = 0; j < (1u << m) && lid + j < 0xc000; j++) {
				if (owner[lid + j] >= 0 && owner[lid + j] != n)
					ibkind_problem(&msg, &bad, "LID %u on %s and %s port %d", lid + j,
						t->nodes[owner[lid + j]].desc, t->nodes[n].desc, p);
				owner[lid + j] = n;
			}
		}
	}
	rq_figure_add(row, "lid_problems", bad, "");
	if (bad > 5)
		sb_addf(&msg, "; and %u more", bad - 5);
	if (bad)
		rq_judge(row, false, "%u LID problem(s): %s", bad, msg.buf);
	else
		rq_judge(row, true, "%u ports, every one with its own LID range (LMC %d)", ports, lmc < 0 ? 0 : lmc);
	free(owner);
	sb_release(&msg);
}

static uint64_t check_sm(struct rq_ctx *ctx, const struct fh_cfg *cfg)
{
	uint64_t guid = 0;
	static const char *const sminfo[] = { "sminfo", NULL };
	struct rq_result *row = rq_ctx_row(ctx, "sm", 0);
	struct proc_result r;
	struct ib_sminfo si;
	char err[256];

	proc_result_init(&r);
	if (rq_tool(ctx, sminfo, 30000, &r) || r.exec_failed || r.timed_out ||
	    sminfo_parse(r.out.buf, r.out.len, &si, err, sizeof(err))) {
		rq_judge(row, false, "no SM answers sminfo");
	} else if (si.state != SMINFO_MASTER) {
		rq_judge(row, false, "the SM (GUID 0x%" PRIx64 ", LID %u) is %s, not MASTER", si.guid, si.lid,
			 ib_sminfo_state_name(si.state));
	} else if (cfg->sm_priority >= 0 && si.priority != cfg->sm_priority) {
		rq_judge(row, false, "the MASTER SM (GUID 0x%" PRIx64 ", LID %u) runs at priority %d, planned %lld",
			 si.guid, si.lid, si.priority, cfg->sm_priority);
	} else {
		rq_judge(row, true, "MASTER SM at LID %u, GUID 0x%" PRIx64 ", priority %d", si.lid, si.guid, si.priority);
	}
	if (si.state == SMINFO_MASTER)
		guid = si.guid;
	proc_result_release(&r);
	return guid;
}

/*
 * pkeys: every CA port's P_Key table (smpquery pkeys) against the
 * partitions.conf planned (partitions:) or the one the target's SM was given
 * (sm_partitions:), with opensm's Default partition (osm_prtn.c): entries
 * missing, with the other membership, or in no partition are named.
 */
/*
 * The P_Key table of every CA port with a LID, in the order check_pkeys
 * walks them, each ended by a form feed ("\001" for a port that did not
 * answer), for ibkind_settled.
 */
static bool read_ca_pkeys(struct rq_ctx *ctx, void *arg, struct sb *out, char *why, size_t whysz)
{
	const struct ibnet *t = arg;

	(void)why;
	(void)whysz;
	for (size_t i = 0; i < t->nlinks; i++) {
		const struct ibnet_link *k = &t->links[i];

		for (int end = 0; end < 2; end++) {
			int n = end ? k->b : k->a, port = end ? k->bport : k->aport;
			unsigned lid = end ? k->blid : k->alid;
			char l[16], p[16];
			const char *argv[] = { "smpquery", "pkeys", l, p, NULL };
			struct proc_result r;

			if (t->nodes[n].is_switch || !lid)
				continue;
			snprintf(l, sizeof(l), "%u", lid);
			snprintf(p, sizeof(p), "%d", port);
			proc_result_init(&r);
			if (rq_tool(ctx, argv, 30000, &r) || r.exec_failed || r.timed_out || r.exit_code)
				sb_adds(out, "\001");
			else
				sb_add(out, r.out.buf, r.out.len);
			sb_adds(out, "\f");
			proc_result_release(&r);
		}
	}
	return true;
}

static void check_pkeys(struct rq_ctx *ctx, const struct fh_cfg *cfg, const struct ibnet *t, uint64_t sm_guid)
{
	const struct rq_where_fabric *fw = &rq_ctx_where(ctx)->fabric;
	const char *sm_path = fw->sm_partitions[0] ? fw->sm_partitions : NULL;
	char path[1024], err[512];
	struct sb text = SB_INIT, msg = SB_INIT, snap = SB_INIT;
	const char *sp;
	struct partitions parts = { 0 };
	struct rq_result *row;
	unsigned bad = 0, ports = 0;

	if (!cfg->partitions && !sm_path)
		return;
	row = rq_ctx_row(ctx, "pkeys", 0);
	if (cfg->partitions) {
		if (ibkind_find_file(ctx, ibkind_case_file(ctx), cfg->partitions, path, sizeof(path), err,
				     sizeof(err))) {
			rq_result_set(row, RQ_ERROR, "partitions: %s", err);
			return;
		}
	} else {
		snprintf(path, sizeof(path), "%s", sm_path);
	}
	if (read_file(path, &text, 4u << 20) < 0) {
		rq_result_set(row, RQ_ERROR, "cannot read %s", path);
		goto out;
	}
	if (partitions_parse(text.buf, text.len, &parts, err, sizeof(err))) {
		rq_result_set(row, RQ_ERROR, "%s: %s", path, err);
		goto out;
	}
	/* what opensm makes of the file before any table is asked (osm_prtn_config.c, osm_prtn.c) */
	if (parts.rejected) {
		struct sb said = SB_INIT;

		/* the target's SM: its own words; a planned file (read-only fabric): what opensm would do */
		if (!cfg->partitions && fw->sm_log[0])
			ibkind_log_lines(fw->sm_log, "retrying with default config", &said, 1);
		ibkind_problem(&msg, &bad, "opensm %s %s (%s) and %s its default partitions: every port a full "
			       "member of Default 0x7fff only%s%s%s", cfg->partitions ? "would refuse" : "refused", path,
			       parts.why, cfg->partitions ? "would run" : "runs", said.len ? " (opensm: \"" : "",
			       said.len ? said.buf : "", said.len ? "\")" : "");
		sb_release(&said);
	}
	if (parts.nnotes)
		ibkind_problem(&msg, &bad, "%s: %s%s", path, parts.notes, parts.nnotes > 5 ? " (and more)" : "");
	unsigned sm_line;

	if (sm_guid && partitions_sm_limited(&parts, sm_guid, &sm_line)) {
		char who[160];

		snprintf(who, sizeof(who), "0x%016" PRIx64, sm_guid);
		for (size_t i = 0; i < t->nlinks; i++) {
			const struct ibnet_link *k = &t->links[i];

			if (k->apguid == sm_guid || k->bpguid == sm_guid)
				snprintf(who, sizeof(who), "%s port %d", t->nodes[k->apguid == sm_guid ? k->a : k->b].desc,
					 k->apguid == sm_guid ? k->aport : k->bport);
		}
		ibkind_problem(&msg, &bad, "%s line %u makes the SM's port (%s) a limited member of the Default partition: "
			       "the SA becomes unreachable (a limited member talks to full members only, so no other "
			       "limited port's SA query, path record or multicast join reaches it)", path, sm_line, who);
	}
	/* the tables the SM writes: judged only once two reads a sweep apart agree */
	if (ibkind_settled(ctx, "pkey_tables", read_ca_pkeys, (void *)t, &snap, err, sizeof(err)) < 0) {
		rq_result_set(row, RQ_ERROR, "the CA ports' P_Key tables never settled: they changed between every two "
			      "reads a sweep apart");
		goto out;
	}
	sp = snap.buf;
	for (size_t i = 0; i < t->nlinks; i++) {
		const struct ibnet_link *k = &t->links[i];

		for (int end = 0; end < 2; end++) {
			int n = end ? k->b : k->a, port = end ? k->bport : k->aport;
			unsigned lid = end ? k->blid : k->alid;
			uint64_t pg = end ? k->bpguid : k->apguid;
			uint16_t want[128], got[128];
			const char *names[128], *tab, *e;
			size_t nw, ng = 0;

			if (t->nodes[n].is_switch)
				continue;
			ports++;
			if (!lid) {
				ibkind_problem(&msg, &bad, "%s port %d: no LID, not asked", t->nodes[n].desc, port);
				continue;
			}
			nw = partitions_port_pkeys(&parts, pg, pg && pg == sm_guid, want, names, ARRAY_SIZE(want));
			tab = sp;
			e = strchr(sp, '\f');
			if (!e)
				continue;
			sp = e + 1;
			if (*tab == '\001' || pkeys_parse(tab, (size_t)(e - tab), got, ARRAY_SIZE(got), &ng, err, sizeof(err))) {
				ibkind_problem(&msg, &bad, "%s port %d: no P_Key table", t->nodes[n].desc, port);
				continue;
			}
			for (size_t w = 0; w < nw; w++) {
				size_t g;

				for (g = 0; g < ng && (got[g] & 0x7fff) != (want[w] & 0x7fff); g++)
					;
				if (g == ng)
					ibkind_problem(&msg, &bad, "%s port %d: P_Key 0x%04x (%s, %s member) missing", t->nodes[n].desc,
						port, want[w], names[w], want[w] & 0x8000 ? "full" : "limited");
				else if (got[g] != want[w])
					ibkind_problem(&msg, &bad, "%s port %d: P_Key 0x%04x, %s asks 0x%04x (%s member)",
						t->nodes[n].desc, port, got[g], names[w], want[w],
						want[w] & 0x8000 ? "full" : "limited");
			}
			for (size_t g = 0; g < ng; g++) {
				size_t w;

				for (w = 0; w < nw && (got[g] & 0x7fff) != (want[w] & 0x7fff); w++)
					;
				if (w == nw)
					ibkind_problem(&msg, &bad, "%s port %d: P_Key 0x%04x is in no partition of %s", t->nodes[n].desc,
						port, got[g], path);
			}
		}
	}
	rq_figure_add(row, "pkey_problems", bad, "");
	rq_figure_add(row, "ca_ports", ports, "");
	if (bad > 5)
		sb_addf(&msg, "; and %u more", bad - 5);
	if (bad)
		rq_judge(row, false, "%u P_Key problem(s): %s", bad, msg.buf);
	else
		rq_judge(row, true, "%u CA ports, every P_Key table as %s asks", ports, path);
out:
	partitions_release(&parts);
	sb_release(&text);
	sb_release(&snap);
	sb_release(&msg);
}

static void fh_run(struct rq_ctx *ctx, const void *vcfg)
{
	static const char *const discover[] = { "ibnetdiscover", NULL };
	const struct fh_cfg *cfg = vcfg;
	struct sb text = SB_INIT, errs = SB_INIT;
	struct ibnet t = { 0 };
	char err[512];
	const char *init;
	uint64_t from = 0;

	if (!run_tool(ctx, discover, &text, &errs))
		goto out;
	if (ibnet_parse(text.buf, text.len, "ibnetdiscover", &t, err, sizeof(err))) {
		rq_result_set(ctx->main, RQ_ERROR, "ibnetdiscover output not understood: %s", err);
		goto out;
	}
	/* "# Initiated from node 0002c90200000001 port ...": where directed routes start */
	init = strstr(text.buf, "Initiated from node ");
	if (init)
		from = strtoull(init + 20, NULL, 16);
	rq_judge(ctx->main, t.nnodes > 0, "%zu nodes discovered", t.nnodes);
	check_guids(ctx, &t, &errs, from);
	check_descriptions(ctx, &t);
	check_lids(ctx, cfg, &t);
	check_pkeys(ctx, cfg, &t, check_sm(ctx, cfg));
out:
	ibnet_release(&t);
	sb_release(&text);
	sb_release(&errs);
}

const struct rq_kind rq_kind_fabric_health = {
	.name = "fabric-health",
	.summary = "no GUID or node description twice, every port its own LID range (LMC), one MASTER SM at the planned priority",
	.doc = "ibdiagnet's identity checks on infiniband-diags: the fabric is discovered by directed "
	       "route (ibnetdiscover), so a subnet the SM cannot bring up is still read.  Rows: guids "
	       "(two CA ports with one port GUID, named with what each is cabled to; ibnetdiscover's duplicate-port reports; LinkUp ports with no discovered peer asked "
	       "for their NodeInfo by directed route: a GUID discovery placed elsewhere is named with both "
	       "places), descriptions (each on one node), lids (every switch and CA port has one, no two "
	       "ranges of 2^LMC overlap, one LMC everywhere or the planned one), sm (sminfo MASTER at "
	       "sm_priority), pkeys (with partitions: or the target SM's sm_partitions: every CA port's P_Key "
	       "table against partitions.conf as opensm reads it, opensm's Default partition included; a file "
	       "opensm refuses, a flag it does not know, or the SM's own port made limited FAIL).  Read-only.",
	.keys = fh_keys,
	.cfg_size = sizeof(struct fh_cfg),
	.default_targets = "hca,ibsim",
	.needs_fabric = true,
	.fabric_sm = true,
	.run = fh_run,
};

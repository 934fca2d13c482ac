/* SPDX-License-Identifier: MIT */
/* ibdiagnet-style consistency checks over parsed tool output (see ibcheck.h). */
#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parsers/ibcheck.h"
#include "parsers/parsers.h"
#include "parsers/partitions.h"
#include "core/util.h"

/* ---- both ends of a link */

unsigned ib_width_set(const char *s)
{
	unsigned m = 0;

	/* infiniband-diags' dump_linkwidth(): "1X", "4X", ... joined by " or " */
	for (const char *p = s; p && *p; p++)
		if (isdigit((unsigned char)*p) && (p == s || !isdigit((unsigned char)p[-1]))) {
			char *e;
			long n = strtol(p, &e, 10);

			if (*e == 'X' && n > 0 && n < 32)
				m |= 1u << n;
			p = e - 1;
		}
	return m;
}

unsigned ib_speed_set(const char *s, double *v, unsigned max)
{
	unsigned n = 0;

	/* "2.5 Gbps or 5.0 Gbps", "25.78125 Gbps"; "0", "No Extended Speed": none */
	for (const char *p = s; p && *p && n < max;) {
		char *e;
		double d;

		if (!isdigit((unsigned char)*p)) {
			p++;
			continue;
		}
		d = strtod(p, &e);
		while (*e == ' ')
			e++;
		if (!strncmp(e, "Gbps", 4) && d > 0)
			v[n++] = d;
		p = e;
	}
	return n;
}

static const char *kv(const struct ib_kvs *k, const char *key)
{
	const char *v = ib_kvs_get(k, key);

	return v ? v : "";
}

static int widest(unsigned m)
{
	for (int n = 31; n > 0; n--)
		if (m & (1u << n))
			return n;
	return 0;
}

/* The lane rates an end both enables and supports, basic and extended together. */
static unsigned end_speeds(const struct ib_kvs *k, double *v, unsigned max)
{
	double en[16], su[16];
	unsigned ne = ib_speed_set(kv(k, "LinkSpeedEnabled"), en, 8);
	unsigned ns = ib_speed_set(kv(k, "LinkSpeedSupported"), su, 8);
	unsigned n = 0;

	ne += ib_speed_set(kv(k, "LinkSpeedExtEnabled"), en + ne, 8);
	ns += ib_speed_set(kv(k, "LinkSpeedExtSupported"), su + ns, 8);
	for (unsigned i = 0; i < ne; i++)
		for (unsigned j = 0; j < ns; j++)
			if (en[i] == su[j] && n < max)
				v[n++] = en[i];
	return n;
}

/* The lane rate the port runs: an extended speed when one is active, else the basic one. */
static double active_speed(const struct ib_kvs *k)
{
	double v[2];

	if (ib_speed_set(kv(k, "LinkSpeedExtActive"), v, 1))
		return v[0];
	return ib_speed_set(kv(k, "LinkSpeedActive"), v, 1) ? v[0] : 0;
}

static void problem(struct sb *msg, unsigned *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void problem(struct sb *msg, unsigned *n, const char *fmt, ...)
{
	va_list ap;

	if (msg->len)
		sb_adds(msg, "; ");
	va_start(ap, fmt);
	sb_vaddf(msg, fmt, ap);
	va_end(ap);
	(*n)++;
}

unsigned ib_link_ends_judge(const struct ib_kvs *a, const char *an, const struct ib_kvs *b,
			    const char *bn, struct sb *msg, struct sb *caps)
{
	unsigned n = 0;
	unsigned wa = ib_width_set(kv(a, "LinkWidthEnabled")) & ib_width_set(kv(a, "LinkWidthSupported"));
	unsigned wb = ib_width_set(kv(b, "LinkWidthEnabled")) & ib_width_set(kv(b, "LinkWidthSupported"));
	int acta = widest(ib_width_set(kv(a, "LinkWidthActive"))), actb = widest(ib_width_set(kv(b, "LinkWidthActive")));
	int both_w = widest(wa & wb);
	double sa[16], sb_[16], best = 0, spa = active_speed(a), spb = active_speed(b);
	unsigned nsa = end_speeds(a, sa, 16), nsb = end_speeds(b, sb_, 16);
	long mtua = atol(kv(a, "NeighborMTU")), mtub = atol(kv(b, "NeighborMTU"));
	long capa = atol(kv(a, "MtuCap")), capb = atol(kv(b, "MtuCap"));
	long mincap = capa < capb ? capa : capb;

	for (unsigned i = 0; i < nsa; i++)
		for (unsigned j = 0; j < nsb; j++)
			if (sa[i] == sb_[j] && sa[i] > best)
				best = sa[i];
	if (caps)
		sb_addf(caps, "%s: %dX %g Gb/s MTU %ld %s, %s: %dX %g Gb/s MTU %ld %s", an, widest(wa),
			nsa ? sa[nsa - 1] : 0.0, capa, kv(a, "VLCap"), bn, widest(wb), nsb ? sb_[nsb - 1] : 0.0, capb,
			kv(b, "VLCap"));
	if (acta != actb)
		problem(msg, &n, "active width differs: %s %s, %s %s", an, kv(a, "LinkWidthActive"), bn,
			kv(b, "LinkWidthActive"));
	else if (both_w && acta < both_w)
		problem(msg, &n, "runs %dX, both ends enable and support %dX (%s: %s of %s; %s: %s of %s)", acta,
			both_w, an, kv(a, "LinkWidthEnabled"), kv(a, "LinkWidthSupported"), bn,
			kv(b, "LinkWidthEnabled"), kv(b, "LinkWidthSupported"));
	if (spa != spb)
		problem(msg, &n, "active lane rate differs: %s %g Gb/s, %s %g Gb/s", an, spa, bn, spb);
	else if (best > 0 && spa + 0.001 < best)
		problem(msg, &n, "runs %g Gb/s a lane, both ends enable and support %g Gb/s (%s: %s; %s: %s)", spa,
			best, an, kv(a, "LinkSpeedSupported"), bn, kv(b, "LinkSpeedSupported"));
	if (mtua != mtub)
		problem(msg, &n, "NeighborMTU differs: %s %ld, %s %ld", an, mtua, bn, mtub);
	else if (mincap > 0 && mtua < mincap)
		problem(msg, &n, "NeighborMTU %ld, below both ends' MtuCap (%s %ld, %s %ld)", mtua, an, capa, bn, capb);
	if (strcmp(kv(a, "OperVLs"), kv(b, "OperVLs")))
		problem(msg, &n, "OperVLs differ: %s %s, %s %s", an, kv(a, "OperVLs"), bn, kv(b, "OperVLs"));
	return n;
}

/* ---- P_Key tables (smpquery pkeys, read by partitions.c's pkeys_parse) */

int ib_pkeys_read(const char *text, size_t len, struct ib_pkeys *out, char *err, size_t errsz)
{
	memset(out, 0, sizeof(*out));
	return pkeys_parse(text, len, out->v, sizeof(out->v) / sizeof(out->v[0]), &out->n, err, errsz);
}

int ib_pkeys_find(const struct ib_pkeys *p, uint16_t pkey)
{
	for (size_t i = 0; i < p->n; i++)
		if ((p->v[i] & 0x7fff) == (pkey & 0x7fff))
			return (int)i;
	return -1;
}

unsigned ib_pkeys_link_judge(const struct ib_pkeys *ca, const char *can, const struct ib_pkeys *sw,
			     const char *swn, struct sb *msg)
{
	unsigned n = 0;

	for (size_t i = 0; i < ca->n; i++) {
		int j = ib_pkeys_find(sw, ca->v[i]);

		if (j < 0)
			problem(msg, &n, "%s has P_Key 0x%04x, %s (enforcing) has none of its partition: "
				"the switch drops it", can, ca->v[i], swn);
		else if ((sw->v[j] & 0x8000) != (ca->v[i] & 0x8000))
			problem(msg, &n, "%s has P_Key 0x%04x (%s member), %s 0x%04x (%s member)", can, ca->v[i],
				ca->v[i] & 0x8000 ? "full" : "limited", swn, sw->v[j],
				sw->v[j] & 0x8000 ? "full" : "limited");
	}
	return n;
}

/* ---- ibroute -M */

void ib_mft_release(struct ib_mft *m)
{
	free(m->v);
	memset(m, 0, sizeof(*m));
}

const struct ib_mft_entry *ib_mft_find(const struct ib_mft *m, unsigned mlid)
{
	for (size_t i = 0; m && i < m->n; i++)
		if (m->v[i].mlid == mlid)
			return &m->v[i];
	return NULL;
}

bool ib_mft_port(const struct ib_mft_entry *e, int port)
{
	return e && port >= 0 && port < 256 && (e->ports[port / 64] >> (port % 64) & 1);
}

int mft_parse(const char *text, size_t len, struct ib_mft *out, char *err, size_t errsz)
{
	struct rq_lines l;
	char *s;
	int ret = 0;
	size_t cap = 0;
	bool head = false;

	memset(out, 0, sizeof(*out));
	rq_lines_init(&l, text, len);
	while ((s = rq_lines_next(&l))) {
		unsigned mlid;
		char *e;

		if (ib_diag_noise(s))
			continue;
		/* infiniband-diags ibroute.c dump_multicast_tables() */
		if (!strncmp(s, "Multicast mlids [", 17)) {
			const char *p = strstr(s, "of switch Lid "), *g = strstr(s, " guid 0x"), *d = strrchr(s, '(');

			if (p)
				out->lid = (unsigned)strtoul(p + 14, NULL, 10);
			if (g)
				out->guid = strtoull(g + 6, NULL, 16);
			if (d)
				snprintf(out->desc, sizeof(out->desc), "%.*s", (int)strcspn(d + 1, ")"), d + 1);
			head = true;
			continue;
		}
		if (!head) {
			ret = rq_parse_error(err, errsz, l.no, "not ibroute -M output: %.80s", s);
			goto out;
		}
		if (!strncmp(s, "     Ports:", 11) || !strcmp(s, " MLid") || !strncmp(s, "            0", 13) ||
		    strstr(s, "mlids dumped") || !strncmp(s, "Switch multicast mlid capability", 32))
			continue;
		if (strncmp(s, "0x", 2)) {
			ret = rq_parse_error(err, errsz, l.no, "not an MLID row: %.80s", s);
			goto out;
		}
		mlid = (unsigned)strtoul(s, &e, 16);
		if (e != s + 6) {
			ret = rq_parse_error(err, errsz, l.no, "not an MLID: %.20s", s);
			goto out;
		}
		if (out->n == cap) {
			cap = cap ? cap * 2 : 16;
			out->v = xrealloc(out->v, cap * sizeof(*out->v));
		}
		struct ib_mft_entry *m = &out->v[out->n++];

		memset(m, 0, sizeof(*m));
		m->mlid = mlid;
		/* "0x%04x      " then one "x " or "  " a port, from port 0 (dump_mlid) */
		for (size_t i = 12, port = 0; i < strlen(s) && port < 256; i += 2, port++)
			if (s[i] == 'x')
				m->ports[port / 64] |= 1ull << (port % 64);
			else if (s[i] != ' ') {
				ret = rq_parse_error(err, errsz, l.no, "port %zu of MLID 0x%04x is '%c', not 'x' or blank",
						     port, mlid, s[i]);
				goto out;
			}
	}
	if (!head)
		ret = rq_parse_error(err, errsz, l.no, "no 'Multicast mlids' header");
out:
	if (ret)
		ib_mft_release(out);
	rq_lines_release(&l);
	return ret;
}

/* The link at (node, port): the other end, or false. */
static bool peer_of(const struct ibnet *t, int node, int port, int *pn, int *pp)
{
	return ibnet_link_at(t, node, port, pn, pp);
}

unsigned ib_mcast_judge(const struct ibnet *t, const struct ib_mft *const *mfts, unsigned mlid,
			bool expect_all_cas, unsigned *members, struct sb *msg)
{
	size_t nn = t->nnodes;
	unsigned n = 0;
	/* CA ports: (node, port) of each cabled CA port, and whether it is a member */
	struct cap { int node, port, sw, swport; bool member; } *ca = xcalloc(t->nlinks * 2 + 1, sizeof(*ca));
	size_t nca = 0;
	char *seen = xcalloc(nn + 1, 1);
	int *queue = xcalloc(nn + 1, sizeof(int)), *inport = xcalloc(nn + 1, sizeof(int));

	for (size_t i = 0; i < t->nlinks; i++)
		for (int end = 0; end < 2; end++) {
			const struct ibnet_link *k = &t->links[i];
			int a = end ? k->b : k->a, ap = end ? k->bport : k->aport;
			int b = end ? k->a : k->b, bp = end ? k->aport : k->bport;

			if (t->nodes[a].is_switch || !t->nodes[b].is_switch)
				continue;
			ca[nca] = (struct cap){ a, ap, b, bp, ib_mft_port(ib_mft_find(mfts[b], mlid), bp) };
			nca++;
		}
	*members = 0;
	for (size_t i = 0; i < nca; i++) {
		if (ca[i].member)
			(*members)++;
		else if (expect_all_cas)
			problem(msg, &n, "%s port %d is no member of MLID 0x%04x (%s port %d does not forward it)",
				t->nodes[ca[i].node].desc, ca[i].port, mlid, t->nodes[ca[i].sw].desc, ca[i].swport);
	}
	if (!*members)
		goto out;
	for (size_t i = 0; i < nca; i++) {
		size_t qh = 0, qt = 0;
		struct sb miss = SB_INIT;
		unsigned nmiss = 0;

		if (!ca[i].member)
			continue;
		/* flood from the member's switch, entered at the member's port; each switch once */
		memset(seen, 0, nn);
		seen[ca[i].sw] = 1;
		inport[ca[i].sw] = ca[i].swport;
		queue[qt++] = ca[i].sw;
		bool *got = xcalloc(nca + 1, sizeof(bool));

		while (qh < qt) {
			int s = queue[qh++];
			const struct ib_mft_entry *e = ib_mft_find(mfts[s], mlid);

			for (int p = 1; e && p <= t->nodes[s].nports && p < 256; p++) {
				int pn, pp;

				if (p == inport[s] || !ib_mft_port(e, p) || !peer_of(t, s, p, &pn, &pp))
					continue;
				if (t->nodes[pn].is_switch) {
					if (!seen[pn]) {
						seen[pn] = 1;
						inport[pn] = pp;
						queue[qt++] = pn;
					}
				} else {
					for (size_t j = 0; j < nca; j++)
						if (ca[j].node == pn && ca[j].port == pp)
							got[j] = true;
				}
			}
		}
		for (size_t j = 0; j < nca; j++)
			if (j != i && ca[j].member && !got[j]) {
				if (nmiss++ < 3)
					sb_addf(&miss, "%s%s port %d", miss.len ? ", " : "", t->nodes[ca[j].node].desc,
						ca[j].port);
			}
		if (nmiss)
			problem(msg, &n, "MLID 0x%04x from %s port %d does not reach %s%s (%u member(s))", mlid,
				t->nodes[ca[i].node].desc, ca[i].port, miss.buf, nmiss > 3 ? " and more" : "", nmiss);
		free(got);
		sb_release(&miss);
	}
out:
	free(ca);
	free(seen);
	free(queue);
	free(inport);
	return n;
}

/* ---- vendstat -N */

int vendstat_gi_parse(const char *text, size_t len, struct ib_fw *out, char *err, size_t errsz)
{
	struct rq_lines l;
	char *s;
	bool fw = false;

	memset(out, 0, sizeof(*out));
	rq_lines_init(&l, text, len);
	/* infiniband-diags vendstat.c: "hw_dev_id:   0x%04x", "fw_version:  %02d.%02d.%02d", "fw_psid:     '%s'" */
	while ((s = rq_lines_next(&l))) {
		char *v = strchr(s, ':');

		if (!v)
			continue;
		*v++ = '\0';
		while (*v == ' ')
			v++;
		if (!strcmp(s, "hw_dev_id"))
			out->devid = (unsigned)strtoul(v, NULL, 16);
		else if (!strcmp(s, "fw_version"))
			fw = snprintf(out->fw, sizeof(out->fw), "%s", v) > 0;
		else if (!strcmp(s, "fw_psid"))
			snprintf(out->psid, sizeof(out->psid), "%.*s", (int)strcspn(v + (*v == '\''), "'"), v + (*v == '\''));
	}
	rq_lines_release(&l);
	if (!fw)
		return rq_parse_error(err, errsz, l.no, "no fw_version line (not vendstat -N output)");
	return 0;
}

int ib_fw_cmp(const char *a, const char *b)
{
	while (*a || *b) {
		char *ea, *eb;
		unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);

		if (x != y)
			return x < y ? -1 : 1;
		if (ea == a && eb == b)
			return strcmp(a, b);
		a = *ea ? ea + 1 : ea;
		b = *eb ? eb + 1 : eb;
	}
	return 0;
}

unsigned ib_fw_skew(const struct ib_fw *v, size_t n, struct sb *msg)
{
	unsigned behind = 0;

	for (size_t i = 0; i < n; i++) {
		const char *newest = v[i].fw;

		for (size_t j = 0; j < n; j++)
			if (v[j].devid == v[i].devid && !strcmp(v[j].psid, v[i].psid) && ib_fw_cmp(v[j].fw, newest) > 0)
				newest = v[j].fw;
		if (newest != v[i].fw && ib_fw_cmp(newest, v[i].fw) > 0)
			problem(msg, &behind, "%s (devid 0x%04x, PSID %s) runs %s, the newest of its kind on this fabric %s",
				v[i].name, v[i].devid, v[i].psid[0] ? v[i].psid : "?", v[i].fw, newest);
	}
	return behind;
}

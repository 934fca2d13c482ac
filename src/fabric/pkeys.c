/* SPDX-License-Identifier: MIT */
/* The P_Key tables opensm programs from a parsed partitions.conf (fabric/pkeys.h). */
#include <stdlib.h>
#include "core/util.h"
#include "fabric/pkeys.h"

bool partitions_sm_limited(const struct partitions *p, uint64_t sm_guid, unsigned *line)
{
	bool full = true;

	*line = 0;
	for (size_t i = 0; p && !p->rejected && i < p->n; i++) {
		if (p->v[i].pkey != DEFAULT_PKEY)
			continue;
		for (size_t j = 0; j < p->v[i].nm; j++) {
			enum part_who w = p->v[i].m[j].who;

			if (w == PM_ALL || w == PM_ALL_CAS || w == PM_SELF ||
			    (w == PM_GUID && p->v[i].m[j].guid == sm_guid)) {
				full = p->v[i].m[j].full;
				*line = p->v[i].m[j].line;
			}
		}
	}
	return !full;
}

static int cmp_u16(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

size_t partitions_port_pkeys(const struct partitions *p, uint64_t port_guid, bool sm_port,
			     uint16_t *pkeys, const char **names, size_t max)
{
	/* pkeys without the bit, and whether full: Default first, then each statement in order */
	uint16_t key[128];
	bool full[128];
	const char *from[128];
	size_t n = 0;

	/* prtn_make_default: every port, full without a file (or with one opensm refused), the SM's port full */
	key[0] = DEFAULT_PKEY;
	full[0] = !p || p->rejected || sm_port;
	from[0] = "Default";
	n = 1;
	for (size_t i = 0; p && !p->rejected && i < p->n; i++) {
		const struct partition *pt = &p->v[i];

		for (size_t j = 0; j < pt->nm; j++) {
			const struct part_member *m = &pt->m[j];
			bool match = m->who == PM_ALL || m->who == PM_ALL_CAS ||
				     (m->who == PM_GUID && m->guid == port_guid) || (m->who == PM_SELF && sm_port);
			size_t k;

			if (!match)
				continue;
			for (k = 0; k < n && key[k] != pt->pkey; k++)
				;
			if (k == n) {
				if (n == ARRAY_SIZE(key))
					continue;
				key[n] = pt->pkey;
				n++;
			}
			full[k] = m->full;	/* the SM's port too: a file can make it limited */
			from[k] = pt->name;
		}
	}
	/* sort by the entry, names alongside */
	uint16_t e[128];
	size_t out = 0;

	for (size_t k = 0; k < n; k++)
		e[k] = (uint16_t)(key[k] | (full[k] ? 0x8000 : 0));
	qsort(e, n, sizeof(e[0]), cmp_u16);
	for (size_t k = 0; k < n && out < max; k++, out++) {
		pkeys[out] = e[k];
		if (names)
			for (size_t q = 0; q < n; q++)
				if ((uint16_t)(key[q] | (full[q] ? 0x8000 : 0)) == e[k])
					names[out] = from[q];
	}
	return out;
}

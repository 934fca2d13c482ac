/* SPDX-License-Identifier: MIT */
/*
 * The transport an MPI job used, from Open MPI's and UCX's own selection
 * lines (see parse_mpi_used.h).  The line shapes follow Open MPI 4.1's
 * opal/mca/base/mca_base_components_select.c ("select: component %s
 * selected"), ompi/mca/bml/r2/bml_r2.c ("mca: bml: Using %s btl for send
 * to %s on node %s") and UCX 1.13's ucp_worker_print_used_tls()
 * ("ep_cfg[%d]: tag(tl/dev ...) rma(...)"); the pml_ucx line number in
 * front changes between releases and is never matched.
 */
#include <stdio.h>
#include <string.h>
#include <jansson.h>
#include "parsers/parse_mpi_used.h"
#include "parsers/parsers.h"
#include "core/json_text.h"

static bool word_is(const char *p, size_t l, const char *w)
{
	return l == strlen(w) && !strncmp(p, w, l);
}

static void set_add(struct sb *set, const char *v, size_t l)
{
	for (const char *p = set->buf; p && *p;) {
		size_t k = strcspn(p, ",");

		if (k == l && !strncmp(p, v, l))
			return;
		p += k + (p[k] == ',');
		p += *p == ' ';
	}
	sb_addf(set, "%s%.*s", set->len ? ", " : "", (int)l, v);
}

/* ep_cfg[1]: tag(rc_verbs/rxe0:1) rma(...): each tl/device of each group */
static void ucx_groups(struct mpi_used *u, const char *q, const char *end)
{
	static const char *const local_tls[] = { "self", "cma", "sysv", "posix", "xpmem", "knem",
						 "memory", NULL };

	while (q < end && (q = memchr(q, '(', (size_t)(end - q)))) {
		const char *close = memchr(q, ')', (size_t)(end - q));

		if (!close)
			return;
		for (const char *t = q + 1; t < close;) {
			size_t k = strcspn(t, " )"), tl = strcspn(t, "/ )");
			bool local = false;

			if (tl > k)
				tl = k;
			for (size_t i = 0; local_tls[i]; i++)
				local |= word_is(t, tl, local_tls[i]);
			if (k && !local) {
				set_add(&u->ucx, t, k);
				if (word_is(t, tl, "tcp"))
					u->tcp = true;
				else if (!strncmp(t, "rc", 2) || !strncmp(t, "ud", 2) ||
					 !strncmp(t, "dc", 2))
					u->rdma = true;
			}
			t += k;
			t += strspn(t, " ");
		}
		q = close + 1;
	}
}

static void used_line(struct mpi_used *u, const char *p, size_t l)
{
	const char *m, *end = p + l;

	if ((m = memmem(p, l, "] select: component ", 20))) {
		m += 20;
		size_t k = strcspn(m, " \n");

		if (!u->pml[0] && m + k + 9 <= end && !strncmp(m + k, " selected", 9))
			snprintf(u->pml, sizeof(u->pml), "%.*s", (int)(k < 31 ? k : 31), m);
	} else if ((m = memmem(p, l, "mca: bml: Using ", 16))) {
		m += 16;
		size_t k = strcspn(m, " \n");

		if (m + k > end)
			k = (size_t)(end - m);
		/* self and shared memory reach no other node */
		if (k && !word_is(m, k, "self") && !word_is(m, k, "vader") && !word_is(m, k, "sm") &&
		    !word_is(m, k, "smcuda")) {
			set_add(&u->btl, m, k);
			if (word_is(m, k, "tcp"))
				u->tcp = true;
			else
				u->rdma = true;		/* openib, ofi, uct */
		}
	} else if ((m = memmem(p, l, "ep_cfg[", 7))) {
		ucx_groups(u, m, end);
	}
}

void mpi_used_scan(struct mpi_used *u, const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);

		used_line(u, p, l);
		p = nl ? nl + 1 : NULL;
	}
}

void mpi_used_words(const struct mpi_used *u, char *buf, size_t size)
{
	snprintf(buf, size, "pml %s%s%s%s%s", u->pml[0] ? u->pml : "unknown",
		 u->btl.len ? ", btl " : "", u->btl.len ? u->btl.buf : "",
		 u->ucx.len ? ", UCX " : "", u->ucx.len ? u->ucx.buf : "");
}

void mpi_used_release(struct mpi_used *u)
{
	sb_release(&u->btl);
	sb_release(&u->ucx);
	*u = (struct mpi_used)MPI_USED_INIT;
}

bool mpi_used_refused(const char *text, size_t len, char *buf, size_t size)
{
	/*
	 * UCX with no wire-up transport, a UD wire-up that never completes,
	 * ob1/ucx unable to add a peer, the UCX pml unable to open at all
	 * (no device it was told to use)
	 */
	static const char *const marks[] = { "Destination is unreachable",
					     "no auxiliary transport", "unhandled timeout error",
					     "PML add procs failed", "PML ucx cannot be selected",
					     NULL };
	const char *p = text, *end = text + len;

	while (p && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);

		for (size_t i = 0; marks[i]; i++)
			if (memmem(p, l, marks[i], strlen(marks[i]))) {
				size_t skip = strspn(p, " \t");

				snprintf(buf, size, "%.*s", (int)(l - skip > 240 ? 240 : l - skip),
					 p + skip);
				return true;
			}
		p = nl ? nl + 1 : NULL;
	}
	return false;
}

static int used_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	struct mpi_used u = MPI_USED_INIT;

	if (memchr(text, '\0', len))
		return rq_parse_error(err, errsz, 0, "NUL byte in text");
	char why[256];
	bool refused = mpi_used_refused(text, len, why, sizeof(why));

	mpi_used_scan(&u, text, len);
	*out = json_pack("{s:o,s:o,s:o,s:b,s:b,s:o}",
			 "pml", u.pml[0] ? rq_json_text(u.pml) : json_null(),
			 "btl", rq_json_text(u.btl.len ? u.btl.buf : ""),
			 "ucx_transports", rq_json_text(u.ucx.len ? u.ucx.buf : ""),
			 "rdma", u.rdma, "tcp", u.tcp,
			 "unreachable", refused ? rq_json_text(why) : json_null());
	mpi_used_release(&u);
	return 0;
}

const struct rq_parser rq_parser_mpi_transport = {
	.name = "mpi-transport",
	.help = "what an MPI job used, from Open MPI's verbose pml/btl selection lines "
		"(OMPI_MCA_pml_base_verbose=10, OMPI_MCA_btl_base_verbose=10) and UCX's "
		"UCX_LOG_LEVEL=info endpoint lines: the pml, the btls and UCX transports that "
		"reach other processes, whether RDMA or TCP carried traffic, and the line that "
		"said a peer was unreachable over RDMA",
	.parse = used_adapter,
};

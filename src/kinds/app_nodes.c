/* SPDX-License-Identifier: MIT */
/* Nodes, hostfile and device of a case that runs once for all nodes (app_nodes.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "core/ctx.h"
#include "core/util.h"
#include "kinds/app_nodes.h"
#include "rdma/rdmadev.h"

static bool name_ok(const char *s)
{
	/* a host name: it goes into argv and a hostfile, never through a shell */
	if (!*s || *s == '-' || strlen(s) > 253)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_'))
			return false;
	return true;
}

int app_nodes_get(struct rq_ctx *ctx, struct app_nodes *nd, char *err, size_t errsz)
{
	const struct rq_where *w = rq_ctx_where(ctx);

	memset(nd, 0, sizeof(*nd));
	nd->slots = w->slots > 0 && w->slots < 4096 ? w->slots : 1;
	if (w->nnodes) {
		nd->from_target = true;
		nd->n = w->nnodes;
		nd->name = xcalloc(nd->n, sizeof(*nd->name));
		for (size_t i = 0; i < nd->n; i++) {
			const char *v = rq_where_node_reach(w, i);

			if (!name_ok(v)) {
				snprintf(err, errsz, "the target's node %zu is not a host name", i);
				app_nodes_release(nd);
				return -1;
			}
			nd->name[i] = xstrdup(v);
		}
	} else {
		char h[256] = "localhost";

		gethostname(h, sizeof(h) - 1);
		nd->n = 1;
		nd->name = xcalloc(1, sizeof(*nd->name));
		nd->name[0] = xstrdup(h);
	}
	for (size_t i = 0; i < nd->n; i++) {
		size_t l = strlen(nd->hosts);

		if (l + strlen(nd->name[i]) + 2 > sizeof(nd->hosts)) {
			snprintf(err, errsz, "%zu nodes: their names do not fit {hosts}", nd->n);
			app_nodes_release(nd);
			return -1;
		}
		snprintf(nd->hosts + l, sizeof(nd->hosts) - l, "%s%s", i ? "," : "", nd->name[i]);
	}
	return 0;
}

int app_nodes_hostfile(struct rq_ctx *ctx, struct app_nodes *nd, char *err, size_t errsz)
{
	struct sb s = SB_INIT;
	int fd, rc = 0;

	/* never a fixed /tmp/hostfile: the unlink below would remove anyone's */
	if (!ctx->scratch) {
		snprintf(err, errsz, "no scratch dir for the hostfile (cases run under an agent)");
		return -1;
	}
	snprintf(nd->hostfile, sizeof(nd->hostfile), "%s/hostfile", ctx->scratch);
	/*
	 * One line a host: Open MPI's allocator aborts on a host listed twice,
	 * which a lab of local agents (every node 127.0.0.1) or two names of
	 * one machine give; its slots add up instead.
	 */
	for (size_t i = 0; i < nd->n; i++) {
		int k = 0;
		size_t j;

		for (j = 0; j < i && strcmp(nd->name[j], nd->name[i]); j++)
			;
		if (j < i)
			continue;	/* counted with its first line */
		for (j = i; j < nd->n; j++)
			k += !strcmp(nd->name[j], nd->name[i]);
		sb_addf(&s, "%s slots=%d\n", nd->name[i], nd->slots * k);
	}
	/* the case's own scratch dir: a new file, never one someone put there */
	fd = open(nd->hostfile, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 && errno == EEXIST && !unlink(nd->hostfile))
		fd = open(nd->hostfile, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || write_full(fd, s.buf, s.len) < 0) {
		snprintf(err, errsz, "cannot write %s: %s", nd->hostfile, strerror(errno));
		rc = -1;
	}
	if (fd >= 0)
		close(fd);
	sb_release(&s);
	return rc;
}

void app_nodes_release(struct app_nodes *nd)
{
	for (size_t i = 0; i < nd->n; i++)
		free(nd->name[i]);
	free(nd->name);
	nd->name = NULL;
	nd->n = 0;
}

int app_dev_find(struct rq_ctx *ctx, struct app_dev *d)
{
	const struct rq_where *w = rq_ctx_where(ctx);
	struct rdma_devs ds = { 0 };
	int idx[16], n;

	memset(d, 0, sizeof(*d));
	snprintf(d->dev, sizeof(d->dev), "%s", w->rdma_dev);
	snprintf(d->netdev, sizeof(d->netdev), "%s", w->netdev);
	if (rdma_devs_scan(ctx, &ds) == 0 && (n = rdma_devs_select(ctx, &ds, idx, 16)) > 0) {
		for (int i = 0; i < n && !d->port; i++) {
			const struct rdma_dev *dv = &ds.v[idx[i]];

			if (d->dev[0] && strcmp(dv->name, d->dev))
				continue;
			for (int k = 0; k < dv->nports && !d->port; k++) {
				const struct rdma_port *pp = &dv->ports[k];

				if (!rdma_port_selected(ctx, pp->num) || pp->state != PORT_ACTIVE)
					continue;
				d->port = pp->num;
				d->rate_gbps = pp->data_gbps > 0 ? pp->data_gbps : pp->rate_gbps;
				snprintf(d->dev, sizeof(d->dev), "%s", dv->name);
				if (!d->netdev[0])
					snprintf(d->netdev, sizeof(d->netdev), "%s", pp->netdev);
			}
		}
	}
	rdma_devs_release(&ds);
	return d->port ? 0 : -1;
}

/* SPDX-License-Identifier: MIT */
/*
 * rxe-host: soft-RoCE on this host, opt-in only (auto never picks it).  It
 * must not touch a NIC that carries the host's own traffic, so it makes a
 * dummy netdev of its own (rqdummy0, 10.78.0.1/24), puts rxe on it through
 * RDMA netlink, and removes both at the end.  Both roles of a two-sided
 * case run here in loopback.  The undo record is written to the state dir
 * before anything is created, so `rdmaqual cleanup` finishes a killed run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/utsname.h>
#include <arpa/inet.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include "agent/agent.h"
#include "core/proc.h"
#include "rdma/rxe_nl.h"
#include "core/target.h"

#define RXEHOST_NETDEV	"rqdummy0"
#define RXEHOST_RDMA	"rqrxe0"
#define RXEHOST_ADDR	"10.78.0.1"

static bool rxehost_available(const struct rq_run_opts *o, const char *arg, char *why, size_t sz)
{
	char path[512];
	struct utsname u;

	if (geteuid() != 0) {
		snprintf(why, sz, "rxe-host needs root");
		return false;
	}
	uname(&u);
	snprintf(path, sizeof(path), "/lib/modules/%s", u.release);
	if (access("/sys/module/rdma_rxe", F_OK) && access(path, F_OK)) {
		snprintf(why, sz, "rdma_rxe is not loaded and this kernel (%s) has no %s",
			 u.release, path);
		return false;
	}
	return true;
}

/* Create or delete the dummy netdev with libnl-route (no `ip` tool). */
static int dummy_link(bool add, char *err, size_t errsz)
{
	struct nl_sock *sk = nl_socket_alloc();
	struct rtnl_link *link = rtnl_link_alloc();
	int ret;

	if (!sk || !link || nl_connect(sk, NETLINK_ROUTE)) {
		snprintf(err, errsz, "cannot open a route netlink socket");
		ret = -EIO;
		goto out;
	}
	rtnl_link_set_name(link, RXEHOST_NETDEV);
	if (!add) {
		ret = rtnl_link_delete(sk, link);
		goto out;
	}
	rtnl_link_set_type(link, "dummy");
	rtnl_link_set_mtu(link, 1500);
	rtnl_link_set_flags(link, IFF_UP);
	ret = rtnl_link_add(sk, link, NLM_F_CREATE | NLM_F_EXCL);
	if (ret) {
		snprintf(err, errsz, "cannot create %s: %s", RXEHOST_NETDEV, nl_geterror(ret));
		goto out;
	}
	/* The address makes the RoCE v2 IPv4-mapped GID that verbs cases pick. */
	struct rtnl_addr *a = rtnl_addr_alloc();
	struct nl_addr *local = NULL;
	struct rtnl_link *got = NULL;

	ret = rtnl_link_get_kernel(sk, 0, RXEHOST_NETDEV, &got);
	if (!ret && !nl_addr_parse(RXEHOST_ADDR "/24", AF_INET, &local)) {
		rtnl_addr_set_ifindex(a, rtnl_link_get_ifindex(got));
		rtnl_addr_set_local(a, local);
		ret = rtnl_addr_add(sk, a, 0);
	}
	if (ret)
		snprintf(err, errsz, "cannot address %s: %s", RXEHOST_NETDEV, nl_geterror(ret));
	nl_addr_put(local);
	rtnl_addr_put(a);
	if (got)
		rtnl_link_put(got);
out:
	if (link)
		rtnl_link_put(link);
	if (sk)
		nl_socket_free(sk);
	return ret ? -EIO : 0;
}

/*
 * The record lives in the run's state dir (checked: the euid's, 0700);
 * there is no fallback: a fixed /tmp/rxe-host was anyone's to plant.
 */
static int record_path(const struct rq_run_opts *o, char *buf, size_t size)
{
	if (!o->state_dir || !*o->state_dir)
		return -1;
	snprintf(buf, size, "%s/rxe-host", o->state_dir);
	return 0;
}

static void teardown(const struct rq_run_opts *o)
{
	char err[256], rec[4200];

	rq_rxe_del(RXEHOST_RDMA, scaled_ms(5000), err, sizeof(err));
	dummy_link(false, err, sizeof(err));
	if (!record_path(o, rec, sizeof(rec)))
		unlink(rec);
}

static int rxehost_open(struct rq_target *t, char *err, size_t errsz)
{
	char rec[4200];
	const char *modprobe[] = { "modprobe", "rdma_rxe", NULL };
	struct proc_result r;

	if (!rxehost_available(t->opts, NULL, err, errsz))
		return -1;
	proc_result_init(&r);
	struct proc_opts po = { .argv = modprobe, .timeout_ms = scaled_ms(20000), .log_fd = -1 };

	if (proc_run(&po, &r) || r.exit_code) {
		snprintf(err, errsz, "modprobe rdma_rxe failed: %s", r.err.len ? r.err.buf : "no reason");
		proc_result_release(&r);
		return -1;
	}
	proc_result_release(&r);
	/* Undo first, then change: a crash in between leaves a record, not a mystery. */
	if (record_path(t->opts, rec, sizeof(rec))) {
		snprintf(err, errsz, "rxe-host keeps its undo record in the run's state dir, "
			 "and this run has none");
		return -1;
	}
	if (write_file_atomic(rec, RXEHOST_NETDEV " " RXEHOST_RDMA "\n",
			      strlen(RXEHOST_NETDEV " " RXEHOST_RDMA "\n"))) {
		snprintf(err, errsz, "cannot write %s", rec);
		return -1;
	}
	if (dummy_link(true, err, errsz) ||
	    rq_rxe_add(RXEHOST_RDMA, RXEHOST_NETDEV, scaled_ms(10000), err, errsz)) {
		teardown(t->opts);
		return -1;
	}
	t->priv = rq_agent_local(t->opts->self_exe, err, errsz);
	return t->priv ? 0 : -1;
}

static int rxehost_place(struct rq_target *t, const struct rq_case *c, struct rq_placement *p,
			 char *err, size_t errsz)
{
	/* The shared agent, replaced if a case before this one killed it. */
	t->priv = rq_agent_local(t->opts->self_exe, err, errsz);
	p->side[0] = p->side[1] = t->priv;
	snprintf(p->addr[0], sizeof(p->addr[0]), RXEHOST_ADDR);
	snprintf(p->addr[1], sizeof(p->addr[1]), RXEHOST_ADDR);
	p->root = "";
	return 0;
}

static void rxehost_close(struct rq_target *t)
{
	teardown(t->opts);
	t->priv = NULL;
}

static void rxehost_cleanup_stale(const struct rq_run_opts *o)
{
	char rec[4200];

	if (!record_path(o, rec, sizeof(rec)) && !access(rec, F_OK))
		teardown(o);
}

const struct rq_target_ops rq_target_rxehost = {
	.name = "rxe-host",
	.changes_host = true,
	.help = "soft-RoCE on this host over a dummy netdev of its own (opt-in; never chosen by auto)",
	.available = rxehost_available,
	.open = rxehost_open,
	.place = rxehost_place,
	.close = rxehost_close,
	.cleanup_stale = rxehost_cleanup_stale,
};

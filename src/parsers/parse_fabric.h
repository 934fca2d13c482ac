/* SPDX-License-Identifier: MIT */
/*
 * What a fabric check reads beyond links: the switches' forwarding tables
 * (dump_fts / dump_lfts / ibroute), the QoS tables of a port (smpquery
 * sl2vl, smpquery vlarb), the SA's records (saquery), and the fabric-wide
 * error sweep (ibqueryerrors).  Formats of infiniband-diags (rdma-core v44,
 * the same in the MLNX builds of the public samples); umad2sim's "ibwarn:"
 * lines are skipped; any other line a parser cannot place is an error
 * naming it.  Pure: text in, structs out.
 */
#ifndef RQ_PARSE_FABRIC_H
#define RQ_PARSE_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- dump_fts / ibroute: "Unicast lids [0x0-0x6] of switch Lid 1 guid 0x... (Switch1):" blocks */
struct ib_lft_entry {
	uint16_t lid;
	uint8_t port;
};

struct ib_lft {
	uint64_t guid;
	unsigned lid;		/* the switch's LID; 0 when the header gives a DR path */
	char name[72];		/* "Switch1" */
	unsigned lo, hi;	/* the LID range dumped */
	size_t first, n;	/* its entries: e[first .. first + n) */
};

struct ib_lfts {
	struct ib_lft *sw;
	size_t nsw;
	struct ib_lft_entry *e;
	size_t ne;
};

/*
 * 0, or -EINVAL naming the line.  A block whose "N valid lids dumped" does
 * not match the entries it holds is refused (a cut output).  Multicast
 * blocks (ibroute -M) are refused: they are not unicast routes.
 */
int lfts_parse(const char *text, size_t len, struct ib_lfts *out, char *err, size_t errsz);
void ib_lfts_release(struct ib_lfts *l);

/* ---- smpquery sl2vl: "ports: in  0, out  1: | 0| 0| ..." rows */
struct ib_sl2vl_row {
	int in, out;
	uint8_t vl[16];
};

struct ib_sl2vl {
	unsigned lid;
	struct ib_sl2vl_row *rows;
	size_t n;
};

int sl2vl_parse(const char *text, size_t len, struct ib_sl2vl *out, char *err, size_t errsz);
void ib_sl2vl_release(struct ib_sl2vl *t);

/* ---- smpquery vlarb: the low and high priority tables of one port */
#define IB_VLARB_MAX 64

struct ib_vlarb_table {
	uint8_t vl[IB_VLARB_MAX], weight[IB_VLARB_MAX];
	size_t n;
};

struct ib_vlarb {
	unsigned lid;
	int port;
	unsigned low_cap, high_cap;
	struct ib_vlarb_table low, high;
};

int vlarb_parse(const char *text, size_t len, struct ib_vlarb *out, char *err, size_t errsz);

/* ---- ibqueryerrors: per node "Errors for 0x... "desc"", per port "[Counter == N]" */
struct ib_qerr_counter {
	char name[40];
	uint64_t value;
};

struct ib_qerr_port {
	uint64_t guid;
	char node[72];
	int port;		/* -1: "port ALL" (the node's summed counters) */
	struct ib_qerr_counter c[24];
	size_t nc;
};

struct ib_qerrs {
	struct ib_qerr_port *v;
	size_t n;
	unsigned nodes_checked, bad_nodes, ports_checked, bad_ports;
	bool summary;		/* the "## Summary" lines were there */
};

int ibqueryerrors_parse(const char *text, size_t len, struct ib_qerrs *out, char *err, size_t errsz);
void ib_qerrs_release(struct ib_qerrs *q);

/* ---- saquery: "NodeRecord dump:" (or any "XRecord dump:") blocks of "key.....value" lines */
struct ib_sa_field {
	char key[32];
	char value[80];
};

struct ib_sa_record {
	char type[32];		/* "NodeRecord" */
	struct ib_sa_field *f;
	size_t n;
};

struct ib_sa_records {
	struct ib_sa_record *v;
	size_t n;
};

int saquery_parse(const char *text, size_t len, struct ib_sa_records *out, char *err, size_t errsz);
void ib_sa_records_release(struct ib_sa_records *r);
const char *ib_sa_get(const struct ib_sa_record *r, const char *key);

#endif

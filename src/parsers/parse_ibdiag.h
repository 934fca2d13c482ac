/* SPDX-License-Identifier: MIT */
/*
 * InfiniBand diagnostics and opensm output: sminfo, iblinkinfo, perfquery,
 * ibnetdiscover (--ports form; the topology form is ibnet.h's), ibstat,
 * smpquery portinfo, saquery -s and opensm's log/stdout.  Formats are those
 * of infiniband-diags (rdma-core v44) and opensm 3.3.23, with the variants
 * seen in public samples (MLNX builds, tabs turned to spaces).
 *
 * Pure: text in, structs out.  Lines printed by libumad2sim ("ibwarn: ...")
 * and blank lines are skipped everywhere; any other line a parser cannot
 * place is an error naming it ("line 7: ..."), never a guess.
 */
#ifndef RQ_PARSE_IBDIAG_H
#define RQ_PARSE_IBDIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "parsers/parsers.h"

/* ---- sminfo: "sminfo: sm lid 1 sm guid 0x200000, activity count 116 priority 7 state 3 SMINFO_MASTER" */
enum { SMINFO_NOTACT = 0, SMINFO_DISCOVER = 1, SMINFO_STANDBY = 2, SMINFO_MASTER = 3 };

struct ib_sminfo {
	unsigned lid;		/* 0 when missing */
	uint64_t guid;		/* 0 when missing */
	unsigned long activity;	/* 0 when missing */
	int priority;		/* -1 when missing */
	int state;		/* SMINFO_*, from the name when the number is unreadable; -1 missing */
	char state_name[24];	/* "SMINFO_MASTER" */
	struct rq_missing missing;	/* "lid", "guid", "activity", "priority", "state" */
};

/*
 * 0; -ENOENT when the output says the query failed (no SM answered); -EINVAL
 * when it is not an sminfo line.  A line whose values were redacted
 * ("sm guid 0x2cGUID") gives the others and names the unreadable ones in
 * si->missing.
 */
int sminfo_parse(const char *text, size_t len, struct ib_sminfo *si, char *err, size_t errsz);
const char *ib_sminfo_state_name(int state);	/* "MASTER", "STANDBY", ... */

/* ---- iblinkinfo: one entry per port line. */
struct ib_link {
	char node[72];		/* node description of the block ("Switch1", "n02 HCA-1") */
	bool is_switch;
	uint64_t guid;		/* node GUID (switch) or port GUID (CA) */
	unsigned lid;		/* this port's LID (switch: the switch LID) */
	int port;
	char width[8];		/* "4X", "" when down */
	double gbps;		/* lane speed, e.g. 2.5, 25.78125; 0 when down */
	char speed[24];		/* as printed: "2.5 Gbps" */
	char state[16];		/* "Active", "Down", "Initialize", "Armed", "Init" */
	char phys[24];		/* "LinkUp", "Polling", "Disabled" */
	bool connected;		/* a remote end is printed */
	unsigned rlid;
	int rport;
	char rnode[72];		/* remote node description */
};

struct ib_links {
	struct ib_link *v;
	size_t n;
};

int iblinkinfo_parse(const char *text, size_t len, struct ib_links *out, char *err, size_t errsz);
void ib_links_release(struct ib_links *l);
const struct ib_link *ib_links_find(const struct ib_links *l, const char *node, int port);
/* "4X" -> 4, "1X" -> 1, "" -> 0 */
int ib_width_lanes(const char *w);

/* ---- perfquery / perfquery -x: one block per "# Port [extended ]counters:" header. */
struct ib_counter {
	char name[40];		/* "SymbolErrorCounter" */
	uint64_t value;
};

struct ib_perf_block {
	unsigned lid;
	int port;		/* 255 for "all ports" summaries */
	bool extended;
	struct ib_counter *c;
	size_t n;
};

struct ib_perf {
	struct ib_perf_block *v;
	size_t n;
};

int perfquery_parse(const char *text, size_t len, struct ib_perf *out, char *err, size_t errsz);
void ib_perf_release(struct ib_perf *p);
/* Value of a counter in a block; false when absent. */
bool ib_perf_get(const struct ib_perf_block *b, const char *name, uint64_t *v);

/* ---- ibnetdiscover --ports: "CA   134  1 0x7c.. 4x EDR - SW  1719 10 0x7c.. ( 'a' - 'b' )" */
struct ib_netport {
	char type[4];		/* "CA", "SW", "RT" */
	unsigned lid;
	int port;
	uint64_t guid;
	char width[8];		/* "4x" */
	char speed[12];		/* "EDR", "SDR", "???" */
	bool connected;
	char rtype[4];
	unsigned rlid;
	int rport;
	uint64_t rguid;
	char name[72], rname[72];
};

struct ib_netports {
	struct ib_netport *v;
	size_t n;
};

int ibnetdiscover_ports_parse(const char *text, size_t len, struct ib_netports *out,
			       char *err, size_t errsz);
void ib_netports_release(struct ib_netports *p);

/* ---- ibstat */
struct ib_stat_port {
	int num;
	char state[24];		/* "Active", "Initializing", "Down", "Armed" */
	char phys[32];		/* "LinkUp", "Polling" */
	char rate[32];		/* "100", "10 (FDR10)" */
	unsigned base_lid, lmc, sm_lid;
	uint32_t capmask;
	uint64_t port_guid;
	char link_layer[24];	/* "InfiniBand", "Ethernet", "IB" (ibsim) */
	/* shown but unreadable ("...", "0x..."): the adapter's key names */
	struct rq_missing missing;
};

struct ib_stat_ca {
	char name[64];
	bool is_switch;		/* "Switch 'x'" header (ibsim attached at a switch) */
	char ca_type[64];
	int nports;
	char fw[64], hw[32];
	uint64_t node_guid, sys_guid;
	struct ib_stat_port *ports;
	size_t nport_blocks;
	struct rq_missing missing;	/* as for ports */
};

struct ib_stat {
	struct ib_stat_ca *v;
	size_t n;
	char error[256];	/* the first "ibpanic:" line, or "" */
	unsigned error_line;
};

/*
 * Pasted outputs are often edited: a value replaced by "..." (or "0x..."),
 * a line "..." standing for lines left out.  What is shown is given; a value
 * that cannot be read is named in the port's or CA's missing list.  An
 * "ibpanic:" line (ibstat failed on a later CA) is kept in error, and the
 * CAs before it are still given.  0, or -EINVAL when the text is no ibstat
 * output.
 */
int ibstat_parse(const char *text, size_t len, struct ib_stat *out, char *err, size_t errsz);
void ib_stat_release(struct ib_stat *s);

/* ---- "Key:.....value" dumps (smpquery portinfo/nodeinfo ...), with the "# ..." header. */
struct ib_kv {
	char key[48];
	char value[96];
};

struct ib_kvs {
	char header[96];	/* "Port info: Lid 4 port 1" */
	struct ib_kv *v;
	size_t n;
};

int smpquery_parse(const char *text, size_t len, struct ib_kvs *out, char *err, size_t errsz);
void ib_kvs_release(struct ib_kvs *k);
const char *ib_kvs_get(const struct ib_kvs *k, const char *key);

/* ---- saquery -s: LIDs of ports with the IsSM capability. */
struct ib_sm_ports {
	unsigned lid[64];
	unsigned master_lid;	/* master_sm_base_lid of the first record, 0 unknown */
	size_t n;
};

int saquery_sm_parse(const char *text, size_t len, struct ib_sm_ports *out, char *err, size_t errsz);

/* ---- opensm log file and stdout (both: the summary of what happened). */
#define OSM_MAX_ERRS 16

struct osm_summary {
	char version[64];	/* "OpenSM 3.3.23" */
	uint64_t guid;		/* "Using default GUID" or the bound port GUID, 0 unknown */
	bool discovering, master, standby, inactive;
	unsigned subnet_up;	/* number of "SUBNET UP" lines */
	bool exiting;		/* "Exiting SM" */
	bool bind_failed;	/* "Error from osm_opensm_bind" or "bind failed" */
	bool no_ports;		/* "No local ports detected!" */
	char *errs[OSM_MAX_ERRS];	/* "ERR 2E10: SM MAD Controller bind failed (IB_ERROR)" */
	size_t nerrs;		/* counted beyond OSM_MAX_ERRS too */
	char last_state[24];	/* "MASTER" of the last "Entering X state" */
	char routing[32];	/* the engine of the last "X tables configured on all switches" */
	char routing_failure[160];	/* the last line saying an engine could not route */
};

/* Lenient by design: a log is free text; unknown lines are skipped. */
int opensm_log_parse(const char *text, size_t len, struct osm_summary *out);
void osm_summary_release(struct osm_summary *s);
/* A one-line reason from a summary: the first ERR, else what is missing. */
void osm_summary_reason(const struct osm_summary *s, char *buf, size_t size);

/* A line every ibdiag parser skips: blank, or a umad2sim/libibmad warning. */
bool ib_diag_noise(const char *s);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Fabric topology files: ibsim's net format, which is also what
 * `ibnetdiscover` prints (ibsim reads a real fabric's snapshot as is).  Used
 * as the topology ibsim simulates and as the expected topology fabric
 * checks judge a live fabric against, so a link that is missing, down or
 * trained narrower than it should be is detectable.
 *
 * Understood: "Switch N "id"", "Hca|Ca N "id"", "Rt N "id"" headers with an
 * optional  # "description"  comment; port lines  [P](guid) "remote"[RP]
 * with ibsim's w=MASK / s=MASK options or ibnetdiscover's trailing "4xEDR";
 * the width= / speed= defaults; include "file" (relative to the including
 * file); guid, vendid, devid and sysimgguid lines; do <command> lines
 * (ignored here: they change the simulation, not the wiring).
 * Pure apart from reading the files named.
 */
#ifndef RQ_IBNET_H
#define RQ_IBNET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ibnet_node {
	char id[72];		/* "Switch1", "S-0000000000200001" */
	char desc[72];		/* node description: the comment's, else the id */
	bool is_switch;
	int nports;
	uint64_t guid;		/* from an S-/H- id or a switchguid/caguid line; 0 unknown */
	unsigned lid;		/* ibnetdiscover's "base port 0 lid N" of a switch; 0 unknown */
	int lmc;
};

struct ibnet_link {
	int a, b;		/* node indexes */
	int aport, bport;
	int width;		/* lanes (1, 2, 4, 8, 12); 0: not stated */
	double gbps;		/* lane rate (2.5 SDR ... 53.125 HDR); 0: not stated */
	char where[64];		/* "file.net:12", where it was declared */
	/* ibnetdiscover's annotations of each end (0: not printed): a CA port's
	 * LID and LMC and its port GUID, "(100004)" and "lid 4 lmc 0". */
	unsigned alid, blid;
	int almc, blmc;
	uint64_t apguid, bpguid;
};

struct ibnet {
	struct ibnet_node *nodes;
	size_t nnodes;
	struct ibnet_link *links;
	size_t nlinks;
};

/* Parse a file (following includes); 0 or -EINVAL/-errno with "file:line: what" in err. */
int ibnet_load(const char *path, struct ibnet *net, char *err, size_t errsz);
/* Parse text (name is used in messages; include lines are refused). */
int ibnet_parse(const char *text, size_t len, const char *name, struct ibnet *net,
		     char *err, size_t errsz);
void ibnet_release(struct ibnet *net);
/*
 * ibdiagnet's link list (ibdiagnet2.lst): each line a link, both ends'
 * node type, port count, node and port GUIDs, description, LID and port
 * number, then its width (PHY=4x) and lane rate (SPD=100, Gb/s).  Nodes are
 * named "S-<guid>"/"H-<guid>" as ibnetdiscover names them.  0 or -EINVAL.
 */
int ibnet_parse_lst(const char *text, size_t len, const char *name, struct ibnet *net, char *err, size_t errsz);
/* Whether text looks like ibdiagnet2.lst rather than a topology file. */
bool ibnet_is_lst(const char *text, size_t len);
/*
 * Write net as an ibsim topology: explicit GUIDs, node descriptions, each
 * link once per end with its width and speed as ibsim's enable masks
 * (w=, s=, e= for FDR and beyond), LIDs left to the SM.  What ibsim 0.10
 * cannot simulate (8X/2X widths it has, speeds it has not) is named in
 * notes, one line each.
 */
struct sb;
void ibnet_write(const struct ibnet *net, const char *title, struct sb *out, struct sb *notes);

/* Whether two nodes have one (stated) node GUID. */
bool ibnet_has_dup_guid(const struct ibnet *net);
/* Node by description or id; -1 when absent. */
int ibnet_find_node(const struct ibnet *net, const char *name);
/* The link at node n port p; NULL when that port is not cabled in the topology. */
const struct ibnet_link *ibnet_link_at(const struct ibnet *net, int n, int port, int *peer, int *peer_port);
/* Lane rate of a speed name: "SDR" 2.5, "EDR" 25.78125, ...; 0 unknown. */
double ibnet_speed_gbps(const char *name);
/* Speed name of a lane rate; "?" when none matches. */
const char *ibnet_speed_name(double gbps);

struct json_t;
/* {"nodes":[{id,desc,type,ports,guid}], "links":[{a,aport,b,bport,width,gbps}]} */
struct json_t *ibnet_to_json(const struct ibnet *net);

/*
 * Find a topology file: an absolute path, or a path relative to the case
 * file's directory or the current directory, or a bare name ("2sw2path4hca",
 * ".net" optional) looked up in $RQ_FABRICS, then fixtures/fabrics next to
 * the running rdmaqual (or two levels up: build/san/rdmaqual).  0, or
 * -ENOENT with the places tried in err.
 */
int ibnet_resolve(const char *name, const char *case_file, char *out, size_t outsz,
		  char *err, size_t errsz);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * ibdiagnet's consistency checks, as pure functions over parsed tool
 * output: both ends of a link (smpquery portinfo each end), P_Key tables
 * (smpquery pkeys), multicast forwarding tables (ibroute -M) against the
 * ports that should reach a group, and switch firmware (vendstat -N).
 * Text in, verdicts out; no processes.  The fabric-consistency kind runs
 * the tools; the unit tests judge real-looking text where ibsim cannot show
 * a fault.
 */
#ifndef RQ_IBCHECK_H
#define RQ_IBCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "parsers/ibnet.h"
#include "parsers/parse_ibdiag.h"

struct sb;

/*
 * Both ends of one link, each its `smpquery portinfo` (parsed) and a name
 * ("leaf01 port 3").  Problems (one "; "-joined line into msg, their count
 * returned):
 *  - the ends' active width or speed differ;
 *  - the link runs below the widest width and fastest lane rate both ends
 *    enable and support (LinkWidthEnabled & LinkWidthSupported of each end,
 *    the same for LinkSpeed and LinkSpeedExt): "runs 1X, both support 4X";
 *  - NeighborMTU differs between the ends, or is below both MtuCaps;
 *  - OperVLs differ between the ends (one sends on a VL the other has not).
 * Capabilities that differ (one end HDR, the other EDR; VLCap) are no
 * problem: the link runs at the lesser end, which caps says ("a: 4X 25.78125
 * Gb/s MTU 4096 VL0-7, b: ...").
 */
unsigned ib_link_ends_judge(const struct ib_kvs *a, const char *aname, const struct ib_kvs *b,
			    const char *bname, struct sb *msg, struct sb *caps);
/* A PortInfo width list ("1X or 4X or 8X or 12X or 2X") as a mask of lanes (bit n: nX). */
unsigned ib_width_set(const char *s);
/* The lane rates of a speed list ("2.5 Gbps or 5.0 Gbps or 10.0 Gbps"), max 8; count. */
unsigned ib_speed_set(const char *s, double *v, unsigned max);

/* ---- a P_Key table (smpquery pkeys): its non-zero entries, in table order. */
struct ib_pkeys {
	uint16_t v[256];
	size_t n;
};

int ib_pkeys_read(const char *text, size_t len, struct ib_pkeys *out, char *err, size_t errsz);
/* Index of the P_Key of the same partition (low 15 bits), or -1. */
int ib_pkeys_find(const struct ib_pkeys *p, uint16_t pkey);
/*
 * A CA port's table against the switch port it is cabled to, when the
 * switch enforces P_Keys there (opensm copies the CA's table to the peer
 * switch port, osm_pkey_mgr.c): each CA P_Key the switch lacks is named
 * (the switch drops that partition's packets).  Membership differing is
 * named too (the switch's table is what it checks the packet's P_Key
 * against).  Count of problems.
 */
unsigned ib_pkeys_link_judge(const struct ib_pkeys *ca, const char *caname, const struct ib_pkeys *sw,
			     const char *swname, struct sb *msg);

/* ---- ibroute -M: the ports of each valid MLID of one switch. */
struct ib_mft_entry {
	unsigned mlid;
	uint64_t ports[4];	/* bit p of word p/64: port p forwards */
};

struct ib_mft {
	unsigned lid;		/* "of switch Lid N" */
	uint64_t guid;
	char desc[72];
	struct ib_mft_entry *v;
	size_t n;
};

int mft_parse(const char *text, size_t len, struct ib_mft *out, char *err, size_t errsz);
void ib_mft_release(struct ib_mft *m);
/* The entry of mlid, or NULL. */
const struct ib_mft_entry *ib_mft_find(const struct ib_mft *m, unsigned mlid);
bool ib_mft_port(const struct ib_mft_entry *e, int port);

/*
 * A multicast group's forwarding through a fabric: mfts[i] is switch node
 * i's table (NULL for CAs, or a switch not read).  The group's members are
 * the CA ports whose switch port forwards the MLID (the SM adds a joined
 * port's switch port to the tree); with expect_all_cas every CA port of the
 * topology must be one (the IPoIB broadcast group: every host running
 * IPoIB joins it).  From each member, the packet is followed as switches
 * flood it (out of every port of the entry but the one it came in on); each
 * member it does not reach is named with where it started.  members gets
 * the count of members.  Count of problems.
 */
unsigned ib_mcast_judge(const struct ibnet *t, const struct ib_mft *const *mfts, unsigned mlid,
			bool expect_all_cas, unsigned *members, struct sb *msg);

/* ---- vendstat -N (a Mellanox switch's GeneralInfo): hw_dev_id, fw_version, fw_psid. */
struct ib_fw {
	char name[72];		/* the switch, as the caller names it */
	unsigned devid;
	char psid[24];
	char fw[24];		/* "31.2012.1068" or vendstat's "27.02.10" */
};

int vendstat_gi_parse(const char *text, size_t len, struct ib_fw *out, char *err, size_t errsz);
/* Dotted version compare: <0, 0, >0 (numbers compared as numbers). */
int ib_fw_cmp(const char *a, const char *b);
/*
 * ibdiagnet's FW check: among switches of one device id and PSID, each one
 * below the newest version of the group is named with both versions ("leaf03
 * (devid 0xd2f2, PSID MT_0000000579) runs 31.2012.1024, the newest of its
 * kind on this fabric 31.2012.1068").  Count of switches behind.
 */
unsigned ib_fw_skew(const struct ib_fw *v, size_t n, struct sb *msg);

#endif

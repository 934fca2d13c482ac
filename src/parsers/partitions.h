/* SPDX-License-Identifier: MIT */
/*
 * opensm's partitions.conf (opensm -P, man opensm "Partition configuration")
 * and the P_Key tables it makes, and smpquery pkeys output.
 *
 *   Default=0x7fff, ipoib : ALL=full ;
 *   storage=0x0002, defmember=full : 0x0002c90300000011, 0x0002c90300000021=limited ;
 *
 * A statement is NAME[=PKEY][,FLAG...] : [MEMBER[=full|limited|both], ...] ;
 * members are port GUIDs, ALL, ALL_CAS, ALL_SWITCHES, ALL_ROUTERS or SELF
 * (the SM's port); mgid=... multicast entries are not ports and are passed
 * over.  Read as opensm reads it (osm_prtn_config.c: words by prefix and
 * case, '\r' not a blank, a file it refuses replaced by its defaults).  As
 * opensm does (osm_prtn.c), a Default partition 0x7fff holds every port
 * first, full members when there is no file (or one it refused), limited
 * ones when there is one, the SM's port full unless a statement makes it
 * limited; a later statement naming a port again decides its membership.
 * A partition without a PKEY gets the number opensm gives it (the lowest
 * no partition has yet).  allow_both_pkeys is taken as FALSE (opensm's
 * default): "both" is full.  Pure: text in, results out.
 */
#ifndef RQ_PARTITIONS_H
#define RQ_PARTITIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The Default partition's P_Key, without the full-membership bit 0x8000. */
#define DEFAULT_PKEY 0x7fff

enum part_who { PM_GUID, PM_ALL, PM_ALL_CAS, PM_ALL_SWITCHES, PM_ALL_ROUTERS, PM_SELF };

struct part_member {
	enum part_who who;
	uint64_t guid;
	bool full;
	unsigned line;
};

struct partition {
	char name[64];
	uint16_t pkey;		/* without the membership bit */
	struct part_member *m;
	size_t nm;
	unsigned line;
	bool numbered;		/* no PKEY in the file: opensm's number */
};

struct partitions {
	struct partition *v;
	size_t n;
	bool rejected;		/* opensm refuses the file: its defaults apply (Default 0x7fff, every port full) */
	unsigned rejected_line;
	char why[160];		/* opensm's PARSE ERROR: "line 3: bad PortGUID" */
	char *notes;		/* words opensm reads otherwise than written ("line 2: membership flag 'FULL' ..."), "; " apart */
	unsigned nnotes;
};

/* 0 (a file opensm refuses is parsed too: rejected, why); err unused, kept for the parser table. */
int partitions_parse(const char *text, size_t len, struct partitions *out, char *err, size_t errsz);
void partitions_release(struct partitions *p);

/* smpquery pkeys: "   0: 0xffff 0x8002 0x0000 ..." rows; the non-zero entries, at most max. */
int pkeys_parse(const char *text, size_t len, uint16_t *pkeys, size_t max, size_t *n, char *err, size_t errsz);

#endif

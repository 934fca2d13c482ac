/* SPDX-License-Identifier: MIT */
/*
 * Redaction of a capture (`rdmaqual capture --redact`): the identifiers of
 * a node's HCAs and the host name are replaced in every file and tool
 * output, so a capture can be shared.
 *
 * One value, one pseudonym, whatever its spelling.  A value is reduced to
 * its *station id*, 48 bits, before it is mapped:
 *
 *   MAC (48 bits)                 the station id itself
 *   GUID, GID interface id (64)   bytes 0-2 (the OUI) and 5-7 (the serial);
 *                                 bytes 3-4 (03:00 in a ConnectX GUID,
 *                                 ff:fe in an EUI-64 made from a MAC) are
 *                                 kept as they are
 *
 * so a ConnectX node GUID 1070:fd03:00b4:c2d0, the MAC of its port
 * 10:70:fd:b4:c2:d0 and the RoCE GID fe80::1270:fdff:feb4:c2d0 made from
 * that MAC map to one station and stay derived from each other after
 * redaction.  The two low bits of the first byte (multicast, locally
 * administered: EUI-64 flips the latter) are kept and not hashed, so a
 * unicast MAC stays unicast.  A station of all zeros or all ones (no
 * address, broadcast) and a value whose bits are one run of ones (a mask
 * or size: ibv_devinfo's max_mr_size, page_size_cap, timestamp_mask) are
 * no secret and are kept.
 *
 * The map is SHA-256 keyed by 32 random bytes made for each capture and
 * never written: a pseudonym cannot be reversed by trying the 2^24 serials
 * of a vendor's OUI, and the same node captured twice gets other
 * pseudonyms.
 *
 * Spellings found (in any case; the pseudonym keeps the spelling's case,
 * separators and length, so parsers read the redacted tree):
 *
 *   1070:fd03:00b4:c2d0            sysfs node_guid, ibv_devinfo
 *   0x1070fd0300b4c2d0             ibstat, ibnetdiscover, saquery
 *   1070fd0300b4c2d0, 1070fdb4c2d0 mstflint and mlxfwmanager Base GUID/MAC
 *   10:70:fd:b4:c2:d0, 10-70-fd-b4-c2-d0, 10:70:fd:03:00:b4:c2:d0
 *   1070.fdb4.c2d0, 0x1070fdb4c2d0  a MAC in dotted fours, as one number
 *   fe80:0000:0000:0000:1270:fdff:feb4:c2d0, fe80::1270:fdff:feb4:c2d0
 *   the last 8 bytes of a 20-byte IPoIB hardware address
 *
 * A bare run of 12 or 16 hex digits is taken when it holds a letter a-f,
 * or, all digits, when its line names a GUID or MAC before it (else it is
 * a decimal counter).  A compressed GID keeps each group's width: a group
 * that was written shorter than its pseudonym needs keeps its low digits
 * (so its length and form hold, and it matches the other spellings in the
 * groups that fit).  Kept as the checks need them: the fe80::/64 subnet
 * prefix, IPv4-mapped GIDs, PCI addresses, versions, CPU masks.
 *
 * The host name is matched in any case, as a whole name (node99 is not
 * node9), and with the domain after it: NODE9.lab.example.com goes whole.
 */
#ifndef RQ_REDACT_H
#define RQ_REDACT_H

#include <stdint.h>
#include "core/util.h"

struct rq_redact {
	uint8_t key[32];	/* the map's key: random, never written */
	char hostname[256];	/* replaced by "host-redacted"; "" for none */
};

/* A fresh random key (getrandom) and the host name to replace (NULL: none). */
void rq_redact_init(struct rq_redact *rd, const char *hostname);
/* Redact text in place (its length changes only by the host name's). */
void rq_redact_text(const struct rq_redact *rd, struct sb *text);
/*
 * A PCI function's config space as sysfs gives it (binary, 256 or 4096
 * bytes): the extended capabilities from 0x100 are walked and each Device
 * Serial Number (ext. cap 0x0003) is rewritten.  On ConnectX the serial is
 * the node GUID, so it maps as the GUID's text spellings do (the serial
 * read as 16 hex digits) and stays consistent with them.  Returns the
 * serials rewritten.
 */
size_t rq_redact_pci_config(const struct rq_redact *rd, uint8_t *cfg, size_t len);

#endif

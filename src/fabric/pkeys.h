/* SPDX-License-Identifier: MIT */
/*
 * What opensm's partition manager programs from a partitions.conf that
 * parsers/partitions.c read: the P_Key table of each CA port (opensm's
 * osm_prtn_config.c and osm_pkey_mgr.c), and whether the SM's own port is
 * left a limited member of the Default partition.
 */
#ifndef RQ_FABRIC_PKEYS_H
#define RQ_FABRIC_PKEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "parsers/partitions.h"

/*
 * The P_Keys a CA port gets (membership bit 0x8000 for full), from p
 * (NULL: no partitions.conf), sorted, at most max; the count.  names[i]
 * (may be NULL) is the partition each came from.
 */
size_t partitions_port_pkeys(const struct partitions *p, uint64_t port_guid, bool sm_port,
			     uint16_t *pkeys, const char **names, size_t max);

/*
 * Whether the file leaves the SM's port (GUID sm_guid, or SELF) a limited
 * member of the Default partition, and the line that made it one.  The SA
 * is reached through the SM's port: limited members cannot talk to a
 * limited member, so every other port's SA queries then fail.
 */
bool partitions_sm_limited(const struct partitions *p, uint64_t sm_guid, unsigned *line);

#endif

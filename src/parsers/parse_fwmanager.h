/* SPDX-License-Identifier: MIT */
/*
 * `mlxfwmanager --query` (MFT; `mstfwmanager` in mstflint), text format:
 *
 *   Querying Mellanox devices firmware ...
 *
 *   Device #1:
 *   ----------
 *
 *     Device Type:      ConnectX6DX
 *     PSID:             MT_0000000359
 *     PCI Device Name:  0000:3b:00.0
 *     Versions:         Current        Available
 *        FW             22.39.1002     N/A
 *        FW (Running)   22.36.1010     N/A
 *        PXE            3.6.0902       N/A
 *
 *     Status:           Up to date
 *
 * "FW" under Versions is the image in flash; the tool adds "FW (Running)"
 * only when the running firmware differs (a burned upgrade not yet
 * activated by mlxfwreset or a cold reboot).  Component names may hold
 * spaces ("UEFI Virtio net"): a version row is its name, then the current
 * and the available version as the last two words.
 *
 * Pure: text in, structs out.  Keys the parser does not know are skipped
 * (MFT releases add some); a line that is neither a key, a version row nor
 * the tool's chatter is an error naming it.
 */
#ifndef RQ_PARSE_FWMANAGER_H
#define RQ_PARSE_FWMANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include "parsers/parsers.h"

#define FWM_VERSIONS_MAX 12

struct fwm_version {
	char name[32];		/* "FW", "FW (Running)", "PXE", "UEFI Virtio net" */
	char current[32];	/* "22.39.1002" */
	char available[32];	/* "N/A" when the tool has no image for it */
};

struct fwm_device {
	char type[48];		/* "ConnectX6DX" */
	char part[64];		/* "MCX623106AN-CDA_Ax" */
	char description[256];
	char psid[32];
	char pci[64];		/* "PCI Device Name": a BDF or /dev/mst/... */
	char status[64];	/* "Up to date", "Update required", ... ("" not printed) */
	struct fwm_version v[FWM_VERSIONS_MAX];
	unsigned nv;
};

struct fwm_query {
	struct fwm_device *dev;
	size_t n;
};

/* 0 (q->n may be 0: no device found), or -EINVAL with err naming the line. */
int fwmanager_parse(const char *text, size_t len, struct fwm_query *q, char *err, size_t errsz);
void fwmanager_release(struct fwm_query *q);
/* The current version of component name ("FW", "FW (Running)"), or NULL. */
const char *fwm_current(const struct fwm_device *d, const char *name);

#endif

/* SPDX-License-Identifier: MIT */
/* The opensm.conf keys opensm knows (generated data, see opensm_keys.c). */
#ifndef RQ_OPENSM_KEYS_H
#define RQ_OPENSM_KEYS_H

struct opensm_key {
	const char *name;
	const char *def;	/* the value `opensm -c` writes: its type too (TRUE/FALSE, number, text) */
};

extern const struct opensm_key opensm_keys[];
extern const char *const opensm_keys_version;

#endif

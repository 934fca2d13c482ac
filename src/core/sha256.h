/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 (FIPS 180-4), small and dependency-free: it names the copy of
 * this build put on a peer, and the peer checks the copy against the name
 * before running it.
 */
#ifndef RQ_SHA256_H
#define RQ_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t len;		/* bytes hashed so far */
	unsigned char blk[64];
	size_t nblk;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t n);
/* Final digest as 64 lowercase hex digits plus NUL. */
void sha256_hex(struct sha256 *s, char out[65]);
/* Hash a whole file; 0 or -errno. */
int sha256_file(const char *path, char out[65]);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Message payload patterns: every message of a data test carries bytes
 * derived from (seed, iteration, offset), so the receiver can tell intact
 * data from corrupted data (the first bad byte is named) and from a
 * message of another iteration (misordered, duplicated or stale data).
 */
#ifndef RQ_PATTERN_H
#define RQ_PATTERN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Fill buf[0..len) with the pattern of (seed, iter). */
void pattern_fill(void *buf, size_t len, uint64_t seed, uint64_t iter);

/*
 * Verify buf against the pattern of (seed, iter).  Returns -1 when every
 * byte matches, else the offset of the first bad byte (want/got filled
 * when not NULL).
 */
ssize_t pattern_check(const void *buf, size_t len, uint64_t seed, uint64_t iter,
		      uint8_t *want, uint8_t *got);

/*
 * Which iteration in [lo, hi] does buf's head carry?  Used to explain a
 * mismatch ("data of iteration 16 in iteration 17").  -1 when none.
 */
int64_t pattern_which(const void *buf, size_t len, uint64_t seed, uint64_t lo, uint64_t hi);

/*
 * One line for a failed check: "iteration 17: byte 4093 of 65536 is 0x5a,
 * expected 0x3c" (+ "; it holds iteration 16's data" when recognisable).
 */
void pattern_describe(const void *buf, size_t len, uint64_t seed, uint64_t iter,
		      char *out, size_t outsz);

#endif

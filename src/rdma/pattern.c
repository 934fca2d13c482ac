/* SPDX-License-Identifier: MIT */
/*
 * splitmix64 over a counter: cheap (one multiply-xorshift round per 8
 * bytes, so a 1 MiB check costs well under a millisecond next to an rxe
 * transfer), every 8-byte word differs, and a different iteration or seed
 * gives unrelated bytes, so an off-by-one message never passes.
 */
#include <stdio.h>
#include <string.h>
#include "rdma/pattern.h"

static inline uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t base(uint64_t seed, uint64_t iter)
{
	return mix(seed ^ 0x5851f42d4c957f2dULL) + iter * 0x9e3779b97f4a7c15ULL;
}

/* Word w of the pattern, little-endian bytes regardless of host order. */
static inline void word(uint64_t b, size_t w, uint8_t out[8])
{
	uint64_t z = mix(b + (uint64_t)w * 0xd1b54a32d192ed03ULL);

	for (int i = 0; i < 8; i++)
		out[i] = (uint8_t)(z >> (8 * i));
}

void pattern_fill(void *buf, size_t len, uint64_t seed, uint64_t iter)
{
	uint8_t *p = buf, w[8];
	uint64_t b = base(seed, iter);
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		word(b, i / 8, w);
		memcpy(p + i, w, 8);
	}
	if (i < len) {
		word(b, i / 8, w);
		memcpy(p + i, w, len - i);
	}
}

ssize_t pattern_check(const void *buf, size_t len, uint64_t seed, uint64_t iter,
		      uint8_t *want, uint8_t *got)
{
	const uint8_t *p = buf;
	uint64_t b = base(seed, iter);
	uint8_t w[8];

	for (size_t i = 0; i < len; i += 8) {
		size_t n = len - i < 8 ? len - i : 8;

		word(b, i / 8, w);
		if (memcmp(p + i, w, n) == 0)
			continue;
		for (size_t k = 0; k < n; k++) {
			if (p[i + k] == w[k])
				continue;
			if (want)
				*want = w[k];
			if (got)
				*got = p[i + k];
			return (ssize_t)(i + k);
		}
	}
	return -1;
}

int64_t pattern_which(const void *buf, size_t len, uint64_t seed, uint64_t lo, uint64_t hi)
{
	size_t n = len < 16 ? len : 16;

	if (n < 4)
		return -1;	/* too short to tell iterations apart reliably */
	for (uint64_t it = lo; it <= hi && hi - lo <= 1u << 20; it++) {
		if (pattern_check(buf, n, seed, it, NULL, NULL) < 0)
			return (int64_t)it;
		if (it == UINT64_MAX)
			break;
	}
	return -1;
}

void pattern_describe(const void *buf, size_t len, uint64_t seed, uint64_t iter,
		      char *out, size_t outsz)
{
	uint8_t want = 0, got = 0;
	ssize_t off = pattern_check(buf, len, seed, iter, &want, &got);
	uint64_t lo = iter > 64 ? iter - 64 : 0;
	int64_t other;
	int n;

	if (off < 0) {
		snprintf(out, outsz, "iteration %llu: %zu bytes intact", (unsigned long long)iter, len);
		return;
	}
	n = snprintf(out, outsz, "iteration %llu: byte %zd of %zu is 0x%02x, expected 0x%02x",
		     (unsigned long long)iter, off, len, got, want);
	other = pattern_which(buf, len, seed, lo, iter + 64);
	if (other >= 0 && (uint64_t)other != iter && n > 0 && (size_t)n < outsz)
		snprintf(out + n, outsz - n, "; it holds iteration %lld's data (misordered or stale)",
			 (long long)other);
}

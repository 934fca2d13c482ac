/* SPDX-License-Identifier: MIT */
/*
 * Capture redaction: find every spelling of a GUID, GID interface id and
 * MAC, map its station id through a keyed hash and write the pseudonym
 * back in the spelling's own form (see redact.h for the rules).
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "qual/redact.h"
#include "core/sha256.h"

void rq_redact_init(struct rq_redact *rd, const char *hostname)
{
	size_t got = 0;

	memset(rd, 0, sizeof(*rd));
	while (got < sizeof(rd->key)) {
		ssize_t n = getrandom(rd->key + got, sizeof(rd->key) - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got < sizeof(rd->key)) {
		/* no entropy source at all: a key no one can guess is impossible, say so */
		fprintf(stderr, "rdmaqual: redact: getrandom failed; pseudonyms use a weak key\n");
		for (size_t i = got; i < sizeof(rd->key); i++)
			rd->key[i] = (uint8_t)(now_ms() >> (8 * (i % 8))) ^ (uint8_t)i;
	}
	if (hostname)
		snprintf(rd->hostname, sizeof(rd->hostname), "%s", hostname);
}

static bool ishex(char ch)
{
	return isxdigit((unsigned char)ch);
}

static unsigned hexval(char ch)
{
	return isdigit((unsigned char)ch) ? (unsigned)(ch - '0') : (unsigned)(tolower((unsigned char)ch) - 'a' + 10);
}

/* Map a station id (6 bytes) to its pseudonym; false when it is kept as it is. */
static bool map_station(const struct rq_redact *rd, const uint8_t in[6], uint8_t out[6])
{
	static const char tag[] = "rdmaqual-redact-station";
	uint8_t m[6];
	char hex[65];
	bool zero = true, ones = true;
	struct sha256 h;

	for (size_t i = 0; i < 6; i++) {
		zero &= in[i] == 0;
		ones &= in[i] == 0xff;
	}
	if (zero || ones)
		return false;
	memcpy(m, in, 6);
	m[0] &= (uint8_t)~3u;	/* multicast and locally-administered bits: kept, not hashed */
	sha256_init(&h);
	sha256_update(&h, rd->key, sizeof(rd->key));
	sha256_update(&h, tag, sizeof(tag));
	sha256_update(&h, m, sizeof(m));
	sha256_hex(&h, hex);
	zero = ones = true;
	for (size_t i = 0; i < 6; i++) {
		out[i] = (uint8_t)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
		if (!i)
			out[0] = (uint8_t)((out[0] & ~3u) | (in[0] & 3u));
		zero &= out[i] == 0;
		ones &= out[i] == 0xff;
	}
	if (zero || ones)
		out[5] ^= 1;	/* a pseudonym never reads as "no address" */
	return true;
}

/*
 * Pseudonymize nd (12 or 16) hex digits given as text: digits[] holds them
 * (any case); the pseudonym's digits are written back into the same array,
 * lower case, and true returned; false when the value is kept (no address,
 * broadcast, a mask).
 * 16 digits: bytes 3-4 are kept (redact.h).
 */
static bool map_digits(const struct rq_redact *rd, char *digits, size_t nd)
{
	static const size_t st16[12] = { 0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15 };
	uint8_t in[6], out[6];
	uint64_t v = 0;

	for (size_t i = 0; i < nd; i++)
		v = v << 4 | hexval(digits[i]);
	/* one run of ones is a mask or a size (max_mr_size, page_size_cap, timestamp_mask) */
	if (v && !(((v >> __builtin_ctzll(v)) + 1) & (v >> __builtin_ctzll(v))))
		return false;
	for (size_t b = 0; b < 6; b++) {
		size_t hi = nd == 16 ? st16[2 * b] : 2 * b, lo = nd == 16 ? st16[2 * b + 1] : 2 * b + 1;

		in[b] = (uint8_t)(hexval(digits[hi]) << 4 | hexval(digits[lo]));
	}
	if (!map_station(rd, in, out))
		return false;
	for (size_t b = 0; b < 6; b++) {
		size_t hi = nd == 16 ? st16[2 * b] : 2 * b, lo = nd == 16 ? st16[2 * b + 1] : 2 * b + 1;

		digits[hi] = "0123456789abcdef"[out[b] >> 4];
		digits[lo] = "0123456789abcdef"[out[b] & 0xf];
	}
	return true;
}

/* Upper case when the spelling has an upper-case hex letter and no lower-case one. */
static bool spelled_upper(const char *p, size_t len)
{
	bool up = false, low = false;

	for (size_t i = 0; i < len; i++) {
		up |= p[i] >= 'A' && p[i] <= 'F';
		low |= p[i] >= 'a' && p[i] <= 'f';
	}
	return up && !low;
}

/*
 * Rewrite the nd hex digits of [p, p+len) (separators between them kept)
 * with their pseudonym, in the spelling's case.
 */
static void rewrite(const struct rq_redact *rd, char *p, size_t len, size_t nd)
{
	char digits[16];
	size_t n = 0, k = 0;
	bool up = spelled_upper(p, len);

	for (size_t i = 0; i < len && n < nd; i++)
		if (ishex(p[i]))
			digits[n++] = p[i];
	if (n != nd || !map_digits(rd, digits, nd))
		return;
	for (size_t i = 0; i < len && k < nd; i++)
		if (ishex(p[i])) {
			char d = digits[k++];

			p[i] = up ? (char)toupper((unsigned char)d) : d;
		}
}

/*
 * "fe80::" at s + i: the interface id's groups after it, right-aligned
 * into 16 digits, mapped, and each group written back in its own width.
 * Returns the end of the address.
 */
static size_t rewrite_compressed(const struct rq_redact *rd, char *s, size_t n, size_t i)
{
	size_t start[4], width[4], ng = 0, j = i + 6;
	char digits[16];

	while (ng < 4 && j < n && ishex(s[j])) {
		size_t w = 0;

		while (j + w < n && ishex(s[j + w]))
			w++;
		if (w > 4)
			return j + w;	/* not an IPv6 group: not an address */
		start[ng] = j;
		width[ng++] = w;
		j += w;
		if (j + 1 < n && s[j] == ':' && ishex(s[j + 1]))
			j++;
		else
			break;
	}
	if (!ng)
		return i + 6;
	memset(digits, '0', sizeof(digits));
	for (size_t g = 0; g < ng; g++) {
		char *grp = digits + 4 * (4 - ng + g);

		memcpy(grp + 4 - width[g], s + start[g], width[g]);
	}
	bool up = spelled_upper(s + i, j - i);

	if (!map_digits(rd, digits, 16))
		return j;
	for (size_t g = 0; g < ng; g++) {
		const char *grp = digits + 4 * (4 - ng + g);

		/* the low digits of the group: exact when its pseudonym fits the width */
		for (size_t k = 0; k < width[g]; k++) {
			char d = grp[4 - width[g] + k];

			s[start[g] + k] = up ? (char)toupper((unsigned char)d) : d;
		}
	}
	return j;
}

/* Does the line holding s[i] name a GUID or a MAC before it? */
static bool labelled(const char *s, size_t i)
{
	size_t ls = i;

	while (ls && s[ls - 1] != '\n')
		ls--;
	for (size_t k = ls; k + 3 <= i; k++)
		if (!strncasecmp(s + k, "mac", 3) || (k + 4 <= i && !strncasecmp(s + k, "guid", 4)))
			return true;
	return false;
}

static bool host_char(char c)
{
	return isalnum((unsigned char)c) || c == '-';
}

/*
 * The host name in any case (DNS names are case-insensitive: a node
 * description "NODE9.lab.example.com" of host node9 kept it), as a whole
 * name (node99 is another host), and with the domain that follows it: the
 * FQDN goes whole.
 */
static void replace_host(const struct rq_redact *rd, struct sb *text)
{
	struct sb out = SB_INIT;
	const char *q = text->buf, *m = text->buf;
	size_t hl = strlen(rd->hostname);

	if (!hl)
		return;
	for (; (m = strcasestr(m, rd->hostname)); ) {
		const char *e = m + hl;

		if ((m > text->buf && host_char(m[-1])) || host_char(*e) || *e == '_') {
			m++;
			continue;
		}
		while (*e == '.' && isalnum((unsigned char)e[1])) {
			e++;
			while (host_char(*e))
				e++;
		}
		sb_add(&out, q, (size_t)(m - q));
		sb_adds(&out, "host-redacted");
		q = m = e;
	}
	if (q != text->buf) {
		sb_adds(&out, q);
		sb_release(text);
		*text = out;
	} else {
		sb_release(&out);
	}
}

void rq_redact_text(const struct rq_redact *rd, struct sb *text)
{
	char *s = text->buf;
	size_t n = text->len, i = 0;

	while (i < n) {
		size_t j = i, groups = 0, maxg = 0, ming = 99, ndig = 0;
		char sep = 0, prev = i ? s[i - 1] : ' ';
		bool letter = false;

		if (!ishex(s[i]) || isalnum((unsigned char)prev) || prev == '_') {
			i++;
			continue;
		}
		if (i + 6 <= n && !strncasecmp(s + i, "fe80::", 6)) {
			i = rewrite_compressed(rd, s, n, i);
			continue;
		}
		/* "0x" + 16 hex: ibstat's, ibnetdiscover's, saquery's GUIDs */
		if (s[i] == '0' && i + 18 <= n && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
			size_t k = i + 2;

			while (k < n && ishex(s[k]))
				k++;
			/* 16: a GUID; 12: a MAC as one number (0xdeadbeef1234) */
			if ((k - i - 2 == 16 || k - i - 2 == 12) &&
			    (k == n || (!isalnum((unsigned char)s[k]) && s[k] != '_'))) {
				rewrite(rd, s + i + 2, k - i - 2, k - i - 2);
				i = k;
				continue;
			}
		}
		/* a MAC in dotted groups of four (dead.beef.1234: Cisco's and some switches') */
		if (i + 14 <= n && s[i + 4] == '.' && s[i + 9] == '.' &&
		    (i + 14 == n || (!isalnum((unsigned char)s[i + 14]) && s[i + 14] != '_' &&
				     !(s[i + 14] == '.' && i + 15 < n && isalnum((unsigned char)s[i + 15]))))) {
			bool mac = prev != '.';

			for (size_t k = 0; k < 14 && mac; k++)
				mac = k == 4 || k == 9 || ishex(s[i + k]);
			if (mac) {
				rewrite(rd, s + i, 14, 12);
				i += 14;
				continue;
			}
		}
		/* a run of hex groups, one separator (':' or '-') between them */
		for (;;) {
			size_t g = 0;

			while (j < n && ishex(s[j])) {
				letter |= isalpha((unsigned char)s[j]);
				j++;
				g++;
			}
			groups++;
			ndig += g;
			maxg = g > maxg ? g : maxg;
			ming = g < ming ? g : ming;
			if (j + 1 < n && (s[j] == ':' || s[j] == '-') && (!sep || s[j] == sep) && ishex(s[j + 1])) {
				sep = s[j];
				j++;
			} else {
				break;
			}
		}
		/* part of a longer token (BDF "0000:3b:00.0", versions, a UUID); a full stop ends one */
		if (j < n && (isalnum((unsigned char)s[j]) || s[j] == '_' ||
			      (s[j] == '.' && j + 1 < n && isalnum((unsigned char)s[j + 1])))) {
			i = j;
			continue;
		}
		if (sep == ':' && groups == 8 && ming == 4 && maxg == 4) {
			/* GID: keep IPv4-mapped ones and the subnet prefix, map the interface id */
			if (strncasecmp(s + i, "0000:0000:0000:0000:0000:ffff:", 30))
				rewrite(rd, s + i + 20, 19, 16);
		} else if (sep == ':' && groups == 4 && ming == 4 && maxg == 4) {
			/* node/port GUID; the default subnet prefix is no secret */
			if (strncasecmp(s + i, "fe80:0000:0000:0000", 19))
				rewrite(rd, s + i, 19, 16);
		} else if (sep && groups == 6 && ming == 2 && maxg == 2) {
			rewrite(rd, s + i, 17, 12);			/* MAC */
		} else if (sep && groups == 8 && ming == 2 && maxg == 2) {
			rewrite(rd, s + i, 23, 16);			/* GUID byte by byte */
		} else if (sep == ':' && groups == 20 && ming == 2 && maxg == 2) {
			rewrite(rd, s + i + 36, 23, 16);		/* IPoIB hw address: the GUID part */
		} else if (!sep && (ndig == 16 || ndig == 12) && !strchr(".-:/", prev) &&
			   (j == n || !strchr("-:/", s[j])) && (letter || labelled(s, i))) {
			rewrite(rd, s + i, ndig, ndig);		/* mstflint's, mlxfwmanager's Base GUID/MAC */
		}
		i = j;
	}
	replace_host(rd, text);
}

/*
 * Extended capabilities (include/uapi/linux/pci_regs.h): a 32-bit
 * little-endian header at 0x100, then wherever its next pointer says; id
 * in bits 0-15, next in bits 20-31 (dword aligned, PCI_EXT_CAP_NEXT), 0
 * ends the list.  The DSN's 64-bit serial follows its header, lower dword
 * first (drivers/pci/pci.c, pci_get_dsn()).
 */
#define PCI_CFG_EXT 0x100
#define PCI_EXT_CAP_DSN 0x0003

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

size_t rq_redact_pci_config(const struct rq_redact *rd, uint8_t *cfg, size_t len)
{
	size_t off = PCI_CFG_EXT, n = 0;
	uint8_t seen[4096 / 4 / 8] = { 0 };

	/* each header once: a loop of next pointers ends (and no serial is mapped twice) */
	while (off >= PCI_CFG_EXT && off + 4 <= len && off < 4096 && !(seen[off / 32] & (1u << (off / 4 % 8)))) {
		uint32_t h = le32(cfg + off);

		seen[off / 32] |= (uint8_t)(1u << (off / 4 % 8));
		if (h == 0 || h == 0xffffffffu)
			break;
		if ((h & 0xffff) == PCI_EXT_CAP_DSN && off + 12 <= len) {
			uint64_t v = (uint64_t)le32(cfg + off + 4) | (uint64_t)le32(cfg + off + 8) << 32;
			char digits[17];

			snprintf(digits, sizeof(digits), "%016llx", (unsigned long long)v);
			if (map_digits(rd, digits, 16)) {
				v = 0;
				for (size_t i = 0; i < 16; i++)
					v = v << 4 | hexval(digits[i]);
				for (size_t i = 0; i < 8; i++)
					cfg[off + 4 + i] = (uint8_t)(v >> (8 * i));
				n++;
			}
		}
		off = (h >> 20) & 0xffc;
	}
	return n;
}

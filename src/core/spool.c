/* SPDX-License-Identifier: MIT */
/*
 * The row spool of a lab run (core/result.h): rows leave memory once
 * reported and journaled, into an unlinked file in the run dir, in an exact
 * binary form (every field, the log's raw bytes, doubles bit for bit), so
 * the reports drawn from it are byte for byte those drawn from memory.
 * A 4,096-node run of the node cases has 122,880 rows: its controller
 * peaked at 1,080 MiB holding them for the reports, under 200 MiB with
 * the spool, which keeps an offset (8 bytes) a row (bench/cluster.sh).
 * The file is gone when the runner ends, however it ends; the journal is
 * the durable record.  The run's rows as a whole (counted, released) are
 * here too, since some of them may be spooled.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/result.h"

struct rq_spool {
	int fd;
	uint64_t *off;		/* row i is [off[i], off[i + 1]) */
	size_t n, cap;
	struct rq_counts counts;	/* of the spilled rows */
	struct rq_result *cur;	/* the row rq_results_get read back last */
	char *buf;
	size_t bufsz;
};

static int pwrite_full(int fd, const char *p, size_t n, off_t at)
{
	while (n) {
		ssize_t w = pwrite(fd, p, n, at);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
		at += w;
	}
	return 0;
}

static int pread_full(int fd, char *p, size_t n, off_t at)
{
	while (n) {
		ssize_t r = pread(fd, p, n, at);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		p += r;
		n -= (size_t)r;
		at += r;
	}
	return 0;
}

/* ---- the binary form: little-endian lengths, raw bytes --------------- */

static void put_u32(struct sb *o, uint32_t v)
{
	unsigned char b[4] = { v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24 };

	sb_add(o, (const char *)b, 4);
}

static void put_u64(struct sb *o, uint64_t v)
{
	put_u32(o, (uint32_t)v);
	put_u32(o, (uint32_t)(v >> 32));
}

static void put_dbl(struct sb *o, double d)
{
	uint64_t v;

	memcpy(&v, &d, sizeof(v));
	put_u64(o, v);
}

/* A string: 0 for NULL, else length + 1 and the bytes. */
static void put_str(struct sb *o, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	put_u32(o, s ? (uint32_t)n + 1 : 0);
	if (s)
		sb_add(o, s, n);
}

void rq_result_pack(const struct rq_result *r, struct sb *o)
{
	put_str(o, r->id);
	put_str(o, r->case_name);
	put_str(o, r->kind);
	put_str(o, r->judge);
	put_u32(o, r->repeat);
	put_str(o, r->device);
	put_u32(o, (uint32_t)r->port);
	put_u32(o, (uint32_t)r->verdict);
	put_str(o, r->reason);
	put_str(o, r->target);
	put_str(o, r->target_why);
	put_u32(o, r->judged);
	put_u32(o, r->failed);
	put_u32(o, (uint32_t)r->nfigs);
	for (size_t i = 0; i < r->nfigs; i++) {
		put_str(o, r->figs[i].name);
		put_dbl(o, r->figs[i].value);
		put_str(o, r->figs[i].unit);
	}
	put_u32(o, (uint32_t)r->nfacts);
	for (size_t i = 0; i < r->nfacts; i++) {
		put_str(o, r->facts[i].key);
		put_str(o, r->facts[i].value);
	}
	put_dbl(o, r->duration_s);
	put_str(o, r->log_path);
	put_u32(o, r->log.buf ? (uint32_t)r->log.len + 1 : 0);
	if (r->log.buf)
		sb_add(o, r->log.buf, r->log.len);
	put_u32(o, r->log_of_first);
	put_str(o, r->file);
	put_str(o, r->node);
	put_str(o, r->peer_node);
}

struct rd {
	const unsigned char *p, *end;
	bool bad;
};

static uint32_t get_u32(struct rd *d)
{
	uint32_t v;

	if (d->end - d->p < 4) {
		d->bad = true;
		return 0;
	}
	v = d->p[0] | (uint32_t)d->p[1] << 8 | (uint32_t)d->p[2] << 16 | (uint32_t)d->p[3] << 24;
	d->p += 4;
	return v;
}

static double get_dbl(struct rd *d)
{
	uint64_t v = get_u32(d);
	double x;

	v |= (uint64_t)get_u32(d) << 32;
	memcpy(&x, &v, sizeof(x));
	return x;
}

/* Bytes of a string field into out (NULL for NULL); *len its length. */
static char *get_bytes(struct rd *d, size_t *len)
{
	uint32_t n = get_u32(d);
	char *s;

	*len = 0;
	if (!n || d->bad)
		return NULL;
	if ((size_t)(d->end - d->p) < n - 1) {
		d->bad = true;
		return NULL;
	}
	s = xmalloc(n);
	memcpy(s, d->p, n - 1);
	s[n - 1] = '\0';
	d->p += n - 1;
	*len = n - 1;
	return s;
}

static char *get_str(struct rd *d)
{
	size_t n;

	return get_bytes(d, &n);
}

struct rq_result *rq_result_unpack(const char *buf, size_t len)
{
	struct rd d = { (const unsigned char *)buf, (const unsigned char *)buf + len, false };
	struct rq_result *r = xcalloc(1, sizeof(*r));
	size_t n, ll;

	r->id = get_str(&d);
	r->case_name = get_str(&d);
	r->kind = get_str(&d);
	r->judge = get_str(&d);
	r->repeat = get_u32(&d);
	r->device = get_str(&d);
	r->port = (int)get_u32(&d);
	r->verdict = (enum rq_verdict)get_u32(&d);
	r->reason = get_str(&d);
	r->target = get_str(&d);
	r->target_why = get_str(&d);
	r->judged = get_u32(&d);
	r->failed = get_u32(&d);
	n = get_u32(&d);
	if (n > len / 8)
		d.bad = true;
	r->figs = n && !d.bad ? xcalloc(n, sizeof(*r->figs)) : NULL;
	for (size_t i = 0; i < n && !d.bad; i++, r->nfigs++) {
		r->figs[i].name = get_str(&d);
		r->figs[i].value = get_dbl(&d);
		r->figs[i].unit = get_str(&d);
	}
	n = get_u32(&d);
	if (n > len / 8)
		d.bad = true;
	r->facts = n && !d.bad ? xcalloc(n, sizeof(*r->facts)) : NULL;
	for (size_t i = 0; i < n && !d.bad; i++, r->nfacts++) {
		r->facts[i].key = get_str(&d);
		r->facts[i].value = get_str(&d);
	}
	r->duration_s = get_dbl(&d);
	r->log_path = get_str(&d);
	r->log.buf = get_bytes(&d, &ll);
	r->log.len = ll;
	r->log.cap = ll + 1;
	if (!r->log.buf)
		sb_init(&r->log);
	r->log_of_first = get_u32(&d) != 0;
	r->file = get_str(&d);
	r->node = get_str(&d);
	r->peer_node = get_str(&d);
	if (d.bad || d.p != d.end) {
		rq_result_free(r);
		return NULL;
	}
	return r;
}

/* ---- the spool ------------------------------------------------------- */

static void spool_count(const struct rq_spool *sp, struct rq_counts *c)
{
	if (sp)
		*c = sp->counts;
}

static void spool_free(struct rq_spool *sp)
{
	if (!sp)
		return;
	close(sp->fd);
	free(sp->off);
	rq_result_free(sp->cur);
	free(sp->buf);
	free(sp);
}

/* Here rather than in result.c: the rows of a run are those in v and those spilled. */
void rq_results_release(struct rq_results *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		rq_result_free(rs->v[i]);
	free(rs->v);
	rs->v = NULL;
	rs->n = 0;
	spool_free(rs->spool);
	rs->spool = NULL;
}

void rq_results_count(const struct rq_results *rs, struct rq_counts *c)
{
	memset(c, 0, sizeof(*c));
	spool_count(rs->spool, c);
	for (size_t i = 0; i < rs->n; i++) {
		switch (rs->v[i]->verdict) {
		case RQ_PASS: c->pass++; break;
		case RQ_FAIL: c->fail++; break;
		case RQ_SKIP: c->skip++; break;
		/* An undecided row in a report is a harness error. */
		default: c->error++; break;
		}
		c->total++;
	}
}


int rq_results_spool(struct rq_results *rs, const char *dir)
{
	struct rq_spool *sp;
	int fd = open(dir, O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);

	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		/* no O_TMPFILE there: a name of our own, made and unlinked at once */
		char *p = xasprintf("%s/.rows.XXXXXX", dir);

		fd = mkostemp(p, O_CLOEXEC);
		if (fd >= 0)
			unlink(p);
		free(p);
	}
	if (fd < 0)
		return -errno;
	sp = xcalloc(1, sizeof(*sp));
	sp->fd = fd;
	sp->cap = 1024;
	sp->off = xcalloc(sp->cap, sizeof(*sp->off));
	rs->spool = sp;
	return 0;
}

void rq_results_spill(struct rq_results *rs)
{
	struct rq_spool *sp = rs->spool;
	struct sb o = SB_INIT;
	size_t n0;

	if (!sp || !rs->n)
		return;
	if (sp->n + rs->n + 1 > sp->cap) {
		while (sp->n + rs->n + 1 > sp->cap)
			sp->cap *= 2;
		sp->off = xrealloc(sp->off, sp->cap * sizeof(*sp->off));
	}
	n0 = sp->n;
	for (size_t i = 0; i < rs->n; i++) {
		rq_result_pack(rs->v[i], &o);
		sp->off[n0 + i + 1] = sp->off[n0] + o.len;
	}
	if (pwrite_full(sp->fd, o.buf, o.len, (off_t)sp->off[n0])) {
		/* a full disk: the rows stay in memory, the reports have them all */
		sb_release(&o);
		return;
	}
	sb_release(&o);
	struct rq_results tmp = { rs->v, rs->n, NULL };
	struct rq_counts c;

	rq_results_count(&tmp, &c);
	sp->counts.pass += c.pass;
	sp->counts.fail += c.fail;
	sp->counts.skip += c.skip;
	sp->counts.error += c.error;
	sp->counts.total += c.total;
	sp->n += rs->n;
	for (size_t i = 0; i < rs->n; i++)
		rq_result_free(rs->v[i]);
	rs->n = 0;
}

size_t rq_results_total(const struct rq_results *rs)
{
	return (rs->spool ? rs->spool->n : 0) + rs->n;
}

const struct rq_result *rq_results_get(const struct rq_results *rs, size_t i)
{
	struct rq_spool *sp = rs->spool;
	size_t len;

	if (!sp || i >= sp->n)
		return rs->v[i - (sp ? sp->n : 0)];
	len = (size_t)(sp->off[i + 1] - sp->off[i]);
	if (len > sp->bufsz) {
		free(sp->buf);
		sp->bufsz = len * 2;
		sp->buf = xmalloc(sp->bufsz);
	}
	rq_result_free(sp->cur);
	sp->cur = NULL;
	if (!pread_full(sp->fd, sp->buf, len, (off_t)sp->off[i]))
		sp->cur = rq_result_unpack(sp->buf, len);
	if (!sp->cur) {
		/* the file was cut under us: a row that says so, not a crash */
		sp->cur = rq_result_new("rdmaqual.spool", NULL, 0);
		rq_result_set(sp->cur, RQ_ERROR, "row %zu could not be read back from the "
			      "run's spool", i);
	}
	return sp->cur;
}

// SPDX-License-Identifier: MIT
/*
 * Guest snapshots: a guest's state, saved once its init has loaded the
 * initramfs' modules and found its virtio-serial ports, and restored for
 * a later guest of the same machine instead of booting one.
 *
 * Where it stops: before the host's / is mounted.  QEMU refuses to migrate
 * a guest that has a 9p export mounted (the export's open fids are host
 * state), so the state is taken at the last point before that: the
 * kernel's boot, most of a TCG guest's start, is then behind it.  The
 * init prints RQ-SNAP there and waits for a line on the port rq-go; the
 * line carries what is this boot's own (rq.exe, the address, hostname,
 * the ssh dir, a seed for the CRNG and the host's clock), so that one
 * snapshot serves every later boot of the same machine, and the guests
 * restored from it are told apart as booted ones are.
 *
 * A snapshot is used only when its description matches the machine
 * asked for word for word: QEMU's binary, the kernel and initramfs (path,
 * size, mtime, inode), vCPUs, memory, the devices and the kernel command
 * line.  The description is stored beside the state; a snapshot whose
 * description differs is never loaded, and is replaced by the next save.
 * Both files are written under a temporary name (O_EXCL) and renamed.
 *
 * QMP is spoken over the QEMU's monitor socket: stop, getfd (the open
 * state file, passed with SCM_RIGHTS: no shell, no path in a URI), migrate
 * to it, query-migrate until completed, cont.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "core/sha256.h"
#include "core/util.h"
#include "vm/vm.h"

/* A file's identity: a rebuilt kernel, initramfs or QEMU changes it. */
static int ident(struct sb *d, const char *what, const char *path)
{
	struct stat st;

	if (!path || stat(path, &st) < 0)
		return -1;
	sb_addf(d, "%s=%s %lld %lld.%09ld %llu\n", what, path, (long long)st.st_size,
		(long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (unsigned long long)st.st_ino);
	return 0;
}

/* QEMU's binary, found as execvp would (the spec names it). */
static int qemu_ident(struct sb *d, const char *qemu)
{
	const char *path = getenv("PATH");
	char buf[1100];

	if (strchr(qemu, '/'))
		return ident(d, "qemu", qemu);
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, p, qemu);
		if (n && !access(buf, X_OK))
			return ident(d, "qemu", buf);
		p += n;
		if (*p)
			p++;
	}
	return -1;
}

char *rq_snap_describe(const struct rq_vm_spec *s)
{
	struct sb d = SB_INIT;
	char **argv;

	sb_adds(&d, "rdmaqual guest snapshot 1\n");
	if (qemu_ident(&d, s->qemu ? s->qemu : "qemu-system-x86_64") < 0 ||
	    ident(&d, "kernel", s->kimage) < 0 || ident(&d, "initrd", s->initrd) < 0 ||
	    (s->scratch && ident(&d, "scratch", s->scratch) < 0)) {
		sb_release(&d);
		return NULL;
	}
	/*
	 * The command line itself, less what names this boot's files (the
	 * backends' paths may differ between the saving and the restoring
	 * QEMU; the devices may not) and the TSC rate (measured per run; the
	 * restored kernel keeps the rate it was told).
	 */
	argv = rq_vm_argv(s);
	for (size_t i = 0; argv[i]; i++) {
		const char *a = argv[i];

		if (i && (!strcmp(argv[i - 1], "-name") || !strcmp(argv[i - 1], "-incoming")))
			continue;
		if (i && (!strcmp(argv[i - 1], "-serial") || !strcmp(argv[i - 1], "-qmp"))) {
			sb_addf(&d, "arg=%.*s\n", (int)strcspn(a, ":"), a);	/* file:PATH */
			continue;
		}
		if (i && (!strcmp(argv[i - 1], "-chardev") || !strcmp(argv[i - 1], "-netdev"))) {
			/* "stream,id=n0,server=on,addr.type=unix,addr.path=P": all but the paths */
			sb_adds(&d, "arg=");
			for (const char *p = a; *p;) {
				size_t n = strcspn(p, ","), k = strcspn(p, "=");

				if (!(k < n && k >= 4 && !memcmp(p + k - 4, "path", 4)))
					sb_addf(&d, "%.*s,", (int)n, p);
				p += n;
				p += *p == ',';
			}
			sb_addc(&d, '\n');
			continue;
		}
		if (i && !strcmp(argv[i - 1], "-append")) {
			for (const char *p = a; *p;) {
				size_t n = strcspn(p, " ");

				if (n && strncmp(p, "tsc_early_khz=", 14))
					sb_addf(&d, "append=%.*s\n", (int)n, p);
				p += n;
				p += *p == ' ';
			}
			continue;
		}
		if (!strcmp(a, "-incoming"))
			continue;
		sb_addf(&d, "arg=%s\n", a);
	}
	rq_argv_free(argv);
	return sb_detach(&d);
}

/* The snapshot dir, made private to the euid (never one somebody else may change). */
static int snap_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
		return -EPERM;
	return 0;
}

int rq_snap_path(const char *dir, const char *desc, const char *vm, char *buf, size_t size)
{
	char hex[65];
	struct sha256 h;
	int rc = snap_dir(dir);

	if (rc < 0)
		return rc;
	sha256_init(&h);
	sha256_update(&h, desc, strlen(desc));
	sha256_hex(&h, hex);
	if ((size_t)snprintf(buf, size, "%s/%.24s-%s", dir, hex, vm) >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* Open a file of ours for reading: a regular file the euid owns, no link. */
static int open_own(const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode) || st->st_uid != geteuid() ||
	    (st->st_mode & 022)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int rq_snap_open(const char *path, const char *desc)
{
	char meta[1200];
	struct stat st;
	struct sb m = SB_INIT;
	char buf[4096];
	ssize_t n;
	int fd;

	snprintf(meta, sizeof(meta), "%s.desc", path);
	fd = open_own(meta, &st);
	if (fd < 0)
		return fd;
	while (m.len < 65536 && (n = read(fd, buf, sizeof(buf))) > 0)
		sb_add(&m, buf, (size_t)n);
	close(fd);
	bool same = m.len == strlen(desc) && !memcmp(m.buf, desc, m.len);

	sb_release(&m);
	if (!same)
		return -ESTALE;
	fd = open_own(path, &st);
	if (fd >= 0 && st.st_size == 0) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* Do the files a description names (its qemu=, kernel=, ... lines) still have their identity? */
static bool desc_current(const char *desc)
{
	for (const char *l = desc; *l;) {
		size_t n = strcspn(l, "\n");
		const char *eq = memchr(l, '=', n), *sp = NULL;
		int blanks = 0;

		/* "what=PATH SIZE MTIME INODE": the path ends at the third blank from the end */
		for (const char *q = l + n; eq && q > eq && blanks < 3;)
			if (*--q == ' ' && ++blanks == 3)
				sp = q;

		if (eq && sp && strncmp(l, "arg=", 4) && strncmp(l, "append=", 7)) {
			struct sb want = SB_INIT, path = SB_INIT;

			sb_add(&path, eq + 1, (size_t)(sp - eq - 1));
			sb_add(&want, l, n);
			sb_addc(&want, '\n');
			struct sb now = SB_INIT;
			char what[16];

			snprintf(what, sizeof(what), "%.*s", (int)(eq - l), l);
			bool same = ident(&now, what, path.buf) == 0 && !strcmp(now.buf, want.buf);

			sb_release(&want);
			sb_release(&path);
			sb_release(&now);
			if (!same)
				return false;
		}
		l += n;
		l += *l == '\n';
	}
	return true;
}

void rq_snap_prune(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	time_t now = time(NULL);

	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		char *p = xasprintf("%s/%s", dir, e->d_name);
		struct stat st;

		if (n > 4 && !strcmp(e->d_name + n - 4, ".tmp")) {
			/* a save that was killed: its writer is long gone */
			if (!lstat(p, &st) && S_ISREG(st.st_mode) && now - st.st_mtime > 600)
				unlink(p);
		} else if (n > 5 && !strcmp(e->d_name + n - 5, ".desc")) {
			int fd = open_own(p, &st);
			struct sb m = SB_INIT;
			char buf[4096];
			ssize_t got;

			if (fd >= 0) {
				while (m.len < 65536 && (got = read(fd, buf, sizeof(buf))) > 0)
					sb_add(&m, buf, (size_t)got);
				close(fd);
				if (!desc_current(m.buf)) {
					p[strlen(p) - 5] = '\0';
					rq_snap_forget(p);
				}
			}
			sb_release(&m);
		}
		free(p);
	}
	closedir(d);
}

void rq_snap_forget(const char *path)
{
	char *meta = xasprintf("%s.desc", path);

	unlink(meta);
	unlink(path);
	free(meta);
}

/* ---- QMP ---- */

struct qmp {
	int fd;
	struct sb in;
};

static int qmp_line(struct qmp *q, int64_t deadline, json_t **out, char *err, size_t errsz)
{
	for (;;) {
		char *nl = q->in.len ? memchr(q->in.buf, '\n', q->in.len) : NULL;

		if (nl) {
			size_t n = (size_t)(nl - q->in.buf) + 1;
			json_error_t je;

			*out = json_loadb(q->in.buf, n, 0, &je);
			memmove(q->in.buf, q->in.buf + n, q->in.len - n);
			q->in.len -= n;
			q->in.buf[q->in.len] = '\0';
			if (!*out) {
				snprintf(err, errsz, "QMP: not JSON: %s", je.text);
				return -EPROTO;
			}
			return 0;
		}
		int64_t left = deadline - now_ms();
		struct pollfd p = { .fd = q->fd, .events = POLLIN };
		char buf[4096];

		if (left <= 0) {
			snprintf(err, errsz, "QMP: no answer in time");
			return -ETIMEDOUT;
		}
		int r = poll(&p, 1, left > 1000 ? 1000 : (int)left);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		ssize_t got = read(q->fd, buf, sizeof(buf));

		if (got <= 0) {
			snprintf(err, errsz, "QMP: the monitor closed");
			return -EPIPE;
		}
		sb_add(&q->in, buf, (size_t)got);
	}
}

/* Send a command (with an fd over SCM_RIGHTS when pass >= 0); its return. */
static json_t *qmp_cmd(struct qmp *q, const char *cmd, json_t *args, int pass, int64_t deadline,
		       char *err, size_t errsz)
{
	json_t *req = json_pack("{s:s}", "execute", cmd);
	char *text;

	if (args)
		json_object_set_new(req, "arguments", args);
	text = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	struct sb line = SB_INIT;

	sb_addf(&line, "%s\n", text);
	free(text);
	struct iovec iov = { .iov_base = line.buf, .iov_len = line.len };
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (pass >= 0) {
		memset(&cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf.b;
		mh.msg_controllen = sizeof(cbuf.b);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &pass, sizeof(int));
	}
	ssize_t w = sendmsg(q->fd, &mh, MSG_NOSIGNAL);

	sb_release(&line);
	if (w < 0) {
		snprintf(err, errsz, "QMP %s: %s", cmd, strerror(errno));
		return NULL;
	}
	for (;;) {
		json_t *m;

		if (qmp_line(q, deadline, &m, err, errsz) < 0)
			return NULL;
		json_t *r = json_object_get(m, "return");
		json_t *e = json_object_get(m, "error");

		if (r) {
			json_incref(r);
			json_decref(m);
			return r;
		}
		if (e) {
			const char *d = json_string_value(json_object_get(e, "desc"));

			snprintf(err, errsz, "QMP %s: %s", cmd, d ? d : "error");
			json_decref(m);
			return NULL;
		}
		json_decref(m);	/* an event */
	}
}

static int qmp_open(struct qmp *q, const char *path, int64_t deadline, char *err, size_t errsz)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	json_t *m, *r;

	q->fd = -1;
	sb_init(&q->in);
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errsz, "QMP socket path too long");
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	while ((q->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0 &&
	       connect(q->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(q->fd);
		q->fd = -1;
		if (now_ms() >= deadline) {
			snprintf(err, errsz, "QMP %s: %s", path, strerror(errno));
			return -ETIMEDOUT;
		}
		struct timespec ts = { 0, 10 * 1000000L };

		nanosleep(&ts, NULL);
	}
	if (q->fd < 0) {
		snprintf(err, errsz, "QMP: socket: %s", strerror(errno));
		return -errno;
	}
	if (qmp_line(q, deadline, &m, err, errsz) < 0)	/* the greeting */
		return -EPROTO;
	json_decref(m);
	r = qmp_cmd(q, "qmp_capabilities", NULL, -1, deadline, err, errsz);
	if (!r)
		return -EPROTO;
	json_decref(r);
	return 0;
}

static void qmp_close(struct qmp *q)
{
	if (q->fd >= 0)
		close(q->fd);
	q->fd = -1;
	sb_release(&q->in);
}

/* Write path and its description under temporary names, then rename both. */
int rq_snap_save(const char *qmp_sock, const char *path, const char *desc, int64_t deadline,
		 char *err, size_t errsz)
{
	struct qmp q;
	char *tmp = xasprintf("%s.%d.tmp", path, (int)getpid());
	char *meta = xasprintf("%s.desc", path);
	char *tmeta = xasprintf("%s.%d.tmp", meta, (int)getpid());
	json_t *r;
	int fd = -1, rc = -EIO;
	bool stopped = false;

	if (qmp_open(&q, qmp_sock, deadline, err, errsz) < 0)
		goto out;
	if (!(r = qmp_cmd(&q, "stop", NULL, -1, deadline, err, errsz)))
		goto out;
	json_decref(r);
	stopped = true;
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errsz, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	/* QEMU's default cap of 128 MiB/s is for a live guest's network, not a file */
	r = qmp_cmd(&q, "migrate-set-parameters", json_pack("{s:I}", "max-bandwidth",
							     (json_int_t)1 << 40),
		    -1, deadline, err, errsz);
	json_decref(r);
	if (!(r = qmp_cmd(&q, "getfd", json_pack("{s:s}", "fdname", "rqsnap"), fd, deadline, err,
			  errsz)))
		goto out;
	json_decref(r);
	if (!(r = qmp_cmd(&q, "migrate", json_pack("{s:s}", "uri", "fd:rqsnap"), -1, deadline, err,
			  errsz)))
		goto out;
	json_decref(r);
	for (;;) {
		const char *st;

		if (!(r = qmp_cmd(&q, "query-migrate", NULL, -1, deadline, err, errsz)))
			goto out;
		st = json_string_value(json_object_get(r, "status"));
		if (st && !strcmp(st, "completed")) {
			json_decref(r);
			break;
		}
		if (st && (!strcmp(st, "failed") || !strcmp(st, "cancelled"))) {
			const char *d = json_string_value(json_object_get(r, "error-desc"));

			snprintf(err, errsz, "migration %s: %s", st, d ? d : "no reason given");
			json_decref(r);
			goto out;
		}
		json_decref(r);
		if (now_ms() >= deadline) {
			snprintf(err, errsz, "migration not completed in time");
			goto out;
		}
		struct timespec ts = { 0, 10 * 1000000L };

		nanosleep(&ts, NULL);
	}
	/* the state first: a description names it only once it is whole */
	if (rename(tmp, path) < 0 || write_file_atomic(tmeta, desc, strlen(desc)) < 0 ||
	    rename(tmeta, meta) < 0) {
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0) {
		unlink(tmp);
		unlink(tmeta);
	}
	/* the guest goes on either way: a snapshot is an optimisation */
	if (stopped) {
		char e2[160];

		r = qmp_cmd(&q, "cont", NULL, -1, deadline + 5000, e2, sizeof(e2));
		if (!r && rc == 0) {
			snprintf(err, errsz, "%s", e2);
			rc = -EIO;
		}
		json_decref(r);
	}
	qmp_close(&q);
	free(tmp);
	free(meta);
	free(tmeta);
	return rc;
}

int rq_snap_resume(const char *qmp_sock, int64_t deadline, char *err, size_t errsz)
{
	struct qmp q;
	json_t *r;
	int rc = -EIO;

	if (qmp_open(&q, qmp_sock, deadline, err, errsz) < 0)
		goto out;
	for (;;) {
		const char *st;

		if (!(r = qmp_cmd(&q, "query-status", NULL, -1, deadline, err, errsz)))
			goto out;
		st = json_string_value(json_object_get(r, "status"));
		if (st && !strcmp(st, "running")) {
			json_decref(r);
			rc = 0;
			break;
		}
		/* the state was saved stopped: loaded, the guest stays paused until told */
		if (st && strcmp(st, "inmigrate")) {
			json_decref(r);
			if (!(r = qmp_cmd(&q, "cont", NULL, -1, deadline, err, errsz)))
				goto out;
			json_decref(r);
			rc = 0;
			break;
		}
		json_decref(r);
		if (now_ms() >= deadline) {
			snprintf(err, errsz, "the state was not loaded in time");
			rc = -ETIMEDOUT;
			goto out;
		}
		struct timespec ts = { 0, 5 * 1000000L };

		nanosleep(&ts, NULL);
	}
out:
	qmp_close(&q);
	return rc;
}

/* SPDX-License-Identifier: MIT */
/*
 * Controller side of the agent protocol (see agent.h): framing JSON lines
 * over a byte stream that may deliver them in pieces, with a deadline on
 * every wait.  Nothing the agent sends is trusted: a line that is not a
 * JSON object with our version, or an answer to an id that is not in
 * flight (never asked, or answered already), marks the agent dead with
 * the reason; a peer or guest cannot make the controller keep answers
 * nobody will take.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <jansson.h>
#include "agent/agent.h"
#include "core/proc.h"
#include "core/util.h"

struct rq_agent *rq_agent_attach(int rfd, int wfd, pid_t pid, const char *label)
{
	struct rq_agent *a = xcalloc(1, sizeof(*a));

	a->label = xstrdup(label);
	a->rfd = rfd;
	a->wfd = wfd;
	a->pid = pid;
	a->next_id = 1;
	a->stash = json_object();
	a->inflight = json_object();
	return a;
}

struct rq_agent *rq_agent_spawn(const char *self_exe, const char *label, char *err, size_t errsz)
{
	int to[2], from[2];
	pid_t pid;

	if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC)) {
		snprintf(err, errsz, "pipe: %s", strerror(errno));
		return NULL;
	}
	const char *argv[] = { self_exe, "agent", "--stdio", NULL };
	struct spawn_opts so = {
		.argv = argv, .stdin_fd = to[0], .stdout_fd = from[1], .stderr_fd = 2,
	};
	pid = proc_spawn(&so);
	close(to[0]);
	close(from[1]);
	if (pid < 0) {
		snprintf(err, errsz, "cannot start agent %s: %s", self_exe, strerror(-pid));
		close(to[1]);
		close(from[0]);
		return NULL;
	}
	return rq_agent_attach(from[0], to[1], pid, label);
}

void rq_agent_close(struct rq_agent *a)
{
	if (!a)
		return;
	if (a->wfd >= 0 && a->wfd != a->rfd)
		close(a->wfd);
	if (a->rfd >= 0)
		close(a->rfd);
	if (a->pid > 0) {
		int st;
		bool clean = false;

		/*
		 * EOF first, and time to act on it: the agent stops its workers and
		 * removes its scratch dir (a peer's shell removes its copy) before
		 * anything is killed.  Whatever is left in its group goes after.
		 */
		if (proc_wait_deadline(a->pid, now_ms() + 2000, &st) == 1) {
			clean = WIFEXITED(st) && WEXITSTATUS(st) == 0;
			kill(-a->pid, SIGKILL);
		} else {
			proc_kill_group(a->pid, 1000);
		}
		/* A peer whose shell died (the session killed) never removed its copy. */
		if (a->peer_dir && a->peer_remove && (a->dead || !clean))
			a->peer_remove(a->peer_host, a->peer_dir);
	}
	if (a->err_pump && a->err_pump_end)
		a->err_pump_end(a->err_pump);	/* after ssh: its last words are read */
	free(a->peer_host);
	free(a->peer_dir);
	json_decref(a->stash);
	json_decref(a->inflight);
	free(a->rbuf);
	free(a->label);
	free(a);
}

static void mark_dead(struct rq_agent *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void mark_dead(struct rq_agent *a, const char *fmt, ...)
{
	va_list ap;

	if (a->dead)
		return;
	a->dead = true;
	va_start(ap, fmt);
	vsnprintf(a->dead_why, sizeof(a->dead_why), fmt, ap);
	va_end(ap);
}

static int write_all(int fd, const char *p, size_t n, int64_t deadline)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w > 0) {
			p += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };
			int64_t left = deadline - now_ms();

			if (left <= 0)
				return -ETIMEDOUT;
			poll(&pfd, 1, (int)(left > 1000 ? 1000 : left));
			continue;
		}
		return -errno;
	}
	return 0;
}

uint64_t rq_agent_send(struct rq_agent *a, json_t *req)
{
	uint64_t id;
	char *text;
	int ret;

	if (a->dead)
		return 0;
	id = a->next_id++;
	json_object_set_new(req, "v", json_integer(RQ_AGENT_PROTO));
	json_object_set_new(req, "id", json_integer((json_int_t)id));
	text = json_dumps(req, JSON_COMPACT);
	if (!text)
		return 0;
	struct sb sb = SB_INIT;
	sb_adds(&sb, text);
	sb_addc(&sb, '\n');
	free(text);
	/* A stuck channel must not hang us: bound the write too. */
	ret = write_all(a->wfd, sb.buf, sb.len, now_ms() + scaled_ms(30000));
	sb_release(&sb);
	if (ret) {
		mark_dead(a, "write to agent %s failed: %s", a->label, strerror(-ret));
		return 0;
	}
	char key[32];

	snprintf(key, sizeof(key), "%llu", (unsigned long long)id);
	json_object_set_new(a->inflight, key, json_true());
	return id;
}

void rq_agent_cancel(struct rq_agent *a, uint64_t id)
{
	json_t *req = json_pack("{s:s, s:I}", "op", "cancel", "target_id", (json_int_t)id);

	rq_agent_send(a, req);
	json_decref(req);
}

/*
 * The next complete line at *off of the buffer, NUL-terminated in place
 * (the '\n' becomes '\0'), *off moved past it; NULL when none is whole.
 * The caller moves the rest down once per read: a memmove per line made
 * a read of many short lines quadratic.
 */
static char *next_line(struct rq_agent *a, size_t *off)
{
	char *start = a->rbuf + *off;
	char *nl = *off < a->rlen ? memchr(start, '\n', a->rlen - *off) : NULL;

	if (!nl)
		return NULL;
	*nl = '\0';
	*off = (size_t)(nl + 1 - a->rbuf);
	return start;
}

/* Parse and stash one answer line; false when the agent broke the protocol. */
static bool stash_line(struct rq_agent *a, const char *line)
{
	json_error_t jerr;
	json_t *j, *id, *v;
	char key[32];

	if (!*line)
		return true;
	/* a log may hold NUL bytes (escaped as \u0000): they are the tool's, keep them */
	j = json_loads(line, JSON_ALLOW_NUL, &jerr);
	if (!j || !json_is_object(j)) {
		/* Consoles may echo stray text before the agent starts: say what it was. */
		mark_dead(a, "agent %s sent a line that is not a JSON object: %.80s", a->label, line);
		json_decref(j);
		return false;
	}
	v = json_object_get(j, "v");
	id = json_object_get(j, "id");
	if (!json_is_integer(v) || json_integer_value(v) != RQ_AGENT_PROTO || !json_is_integer(id)) {
		mark_dead(a, "agent %s speaks another protocol (want v=%d)", a->label, RQ_AGENT_PROTO);
		json_decref(j);
		return false;
	}
	snprintf(key, sizeof(key), "%lld", (long long)json_integer_value(id));
	if (!json_object_get(a->inflight, key)) {
		mark_dead(a, "agent %s answered id %s, which is not in flight (never asked or answered "
			  "already)", a->label, key);
		json_decref(j);
		return false;
	}
	json_object_del(a->inflight, key);
	json_object_set_new(a->stash, key, j);
	return true;
}

/* Read what is available; 0 ok, -1 when the agent is dead now. */
static int pump(struct rq_agent *a)
{
	char *line;

	if (a->rcap - a->rlen < 65536) {
		a->rcap = a->rcap ? a->rcap * 2 : 131072;
		a->rbuf = xrealloc(a->rbuf, a->rcap);
	}
	ssize_t n = read(a->rfd, a->rbuf + a->rlen, a->rcap - a->rlen);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0) {
		mark_dead(a, "agent %s closed the channel%s%s", a->label,
			  n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
		return -1;
	}
	a->rlen += (size_t)n;
	size_t off = 0;

	while ((line = next_line(a, &off))) {
		if (line + 1 == a->rbuf + off) {	/* an empty line */
			a->blank++;
			if (a->blank > RQ_AGENT_LINE_MAX) {
				mark_dead(a, "agent %s sent over %u bytes of empty lines and no answer",
					  a->label, RQ_AGENT_LINE_MAX);
				return -1;
			}
			continue;
		}
		a->blank = 0;
		if (!stash_line(a, line))
			return -1;
	}
	memmove(a->rbuf, a->rbuf + off, a->rlen - off);
	a->rlen -= off;
	if (a->rlen + a->blank > RQ_AGENT_LINE_MAX) {
		mark_dead(a, "agent %s sent a line over %u bytes", a->label, RQ_AGENT_LINE_MAX);
		return -1;
	}
	if (!a->rlen) {
		/*
		 * Nothing pending: the buffer goes back (it is made again at the
		 * next read).  A lab controller holds an agent per node, and
		 * 4,096 idle buffers of the last answers' size were most of it.
		 */
		free(a->rbuf);
		a->rbuf = NULL;
		a->rcap = 0;
	}
	return 0;
}

static json_t *unstash(struct rq_agent *a, uint64_t id)
{
	char key[32];
	json_t *j;

	snprintf(key, sizeof(key), "%llu", (unsigned long long)id);
	j = json_object_get(a->stash, key);
	if (!j)
		return NULL;
	json_incref(j);
	json_object_del(a->stash, key);
	return j;
}

int rq_agent_wait_any(struct rq_agent **a, const uint64_t *ids, int n, int64_t deadline_ms,
		      json_t **resp, char *why, size_t whysz)
{
	struct pollfd pfd[8];

	if (n > 8)
		n = 8;
	for (;;) {
		int np = 0;

		for (int i = 0; i < n; i++) {
			if (!ids[i])
				continue;
			if ((resp[0] = unstash(a[i], ids[i])))
				return i;
		}
		/* A signal that landed outside poll() must not wait for the deadline. */
		if (rq_interrupted) {
			snprintf(why, whysz, "interrupted");
			return -2;
		}
		for (int i = 0; i < n; i++) {
			if (!ids[i])
				continue;
			if (a[i]->dead) {
				snprintf(why, whysz, "%s", a[i]->dead_why);
				return -1;
			}
			pfd[np++] = (struct pollfd){ .fd = a[i]->rfd, .events = POLLIN };
		}
		if (!np) {
			snprintf(why, whysz, "nothing to wait for");
			return -1;
		}
		int64_t left = deadline_ms - now_ms();

		if (left <= 0) {
			snprintf(why, whysz, "no answer from agent %s before the deadline", a[0]->label);
			return -1;
		}
		int r = poll(pfd, (nfds_t)np, (int)(left > 250 ? 250 : left));

		if (r < 0 && errno == EINTR) {
			/* Let the caller see an interrupt (SIGINT/SIGTERM) promptly. */
			snprintf(why, whysz, "interrupted");
			return -2;
		}
		np = 0;
		for (int i = 0; i < n; i++) {
			if (!ids[i])
				continue;
			if (pfd[np].revents)
				pump(a[i]);
			np++;
		}
	}
}

int rq_agent_poll(struct rq_agent **a, size_t n, int64_t deadline_ms)
{
	struct pollfd *pfd = xcalloc(n ? n : 1, sizeof(*pfd));
	size_t np = 0;
	int ret = 0;

	for (size_t i = 0; i < n; i++) {
		if (a[i] && a[i]->dead) {
			free(pfd);
			return 0;	/* the caller must see it now */
		}
		pfd[i] = (struct pollfd){ .fd = a[i] ? a[i]->rfd : -1, .events = POLLIN };
		np += a[i] != NULL;
	}
	int64_t left = deadline_ms - now_ms();

	if (rq_interrupted)
		ret = -2;
	else if (!np || left <= 0)
		ret = -1;
	else {
		int r = poll(pfd, (nfds_t)n, (int)(left > 250 ? 250 : left));

		if (r < 0 && errno == EINTR)
			ret = -2;
		for (size_t i = 0; r > 0 && i < n; i++)
			if (a[i] && pfd[i].revents)
				pump(a[i]);
		if (r == 0 && now_ms() >= deadline_ms)
			ret = -1;
	}
	free(pfd);
	return ret;
}

json_t *rq_agent_take(struct rq_agent *a, uint64_t id)
{
	return unstash(a, id);
}

json_t *rq_agent_wait(struct rq_agent *a, uint64_t id, int64_t deadline_ms, char *why, size_t whysz)
{
	json_t *resp = NULL;

	if (rq_agent_wait_any(&a, &id, 1, deadline_ms, &resp, why, whysz) < 0)
		return NULL;
	return resp;
}

json_t *rq_agent_call(struct rq_agent *a, json_t *req, int64_t timeout_ms, char *why, size_t whysz)
{
	uint64_t id = rq_agent_send(a, req);

	if (!id) {
		snprintf(why, whysz, "%s", a->dead ? a->dead_why : "cannot send to agent");
		return NULL;
	}
	return rq_agent_wait(a, id, now_ms() + timeout_ms, why, whysz);
}

static struct rq_agent *local_agent;

bool rq_agent_is_local(const struct rq_agent *a)
{
	return a && a == local_agent;
}

struct rq_agent *rq_agent_local(const char *self_exe, char *err, size_t errsz)
{
	if (local_agent && local_agent->dead) {
		rq_agent_close(local_agent);
		local_agent = NULL;
	}
	if (!local_agent)
		local_agent = rq_agent_spawn(self_exe, "local", err, errsz);
	return local_agent;
}

void rq_agent_local_close(void)
{
	if (!local_agent)
		return;
	json_t *req = json_pack("{s:s}", "op", "shutdown");
	char why[128];
	json_t *r = rq_agent_call(local_agent, req, 2000, why, sizeof(why));

	json_decref(r);
	json_decref(req);
	rq_agent_close(local_agent);
	local_agent = NULL;
}

/* SPDX-License-Identifier: MIT */
/*
 * Running commands under a deadline, argv only.
 *
 * Every child: its own process group (so a timeout kills grandchildren
 * too), PR_SET_PDEATHSIG(SIGKILL) (so it dies with the runner even when the
 * runner is SIGKILLed), all inherited fds closed, signal dispositions reset.
 * An exec failure comes back over a CLOEXEC pipe so "not found" is told
 * apart from "exited 127".
 *
 * Note: PDEATHSIG fires when the *thread* that forked exits, not the
 * process; fork from a thread that outlives the child.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "core/proc.h"

extern char **environ;

double rq_timeout_mul = 1.0;
void (*proc_group_hook)(pid_t pgid, bool started);

static void group_note(pid_t pgid, bool started)
{
	if (proc_group_hook && pgid > 0)
		proc_group_hook(pgid, started);
}
volatile sig_atomic_t rq_interrupted;

#define DEFAULT_TAIL 4096
#define DEFAULT_GRACE_MS 500
/* After the main child exits, how long we keep draining pipes that a
 * leftover (killed) grandchild may still hold. */
#define DRAIN_MS 300

void proc_result_init(struct proc_result *r)
{
	memset(r, 0, sizeof(*r));
	r->exit_code = -1;
	sb_init(&r->out);
	sb_init(&r->err);
}

void proc_result_release(struct proc_result *r)
{
	sb_release(&r->out);
	sb_release(&r->err);
}

/* environ minus the keys env_add overrides, plus env_add.  Built before
 * fork: no malloc between fork and exec. */
static char **build_env(const char *const *env_add)
{
	size_t ne = 0, na = 0, n = 0;

	while (environ && environ[ne])
		ne++;
	while (env_add && env_add[na])
		na++;
	char **envp = xcalloc(ne + na + 1, sizeof(*envp));
	for (size_t i = 0; i < ne; i++) {
		const char *e = environ[i];
		const char *eq = strchr(e, '=');
		size_t klen = eq ? (size_t)(eq - e) : strlen(e);
		bool overridden = false;

		for (size_t j = 0; j < na && !overridden; j++)
			overridden = !strncmp(env_add[j], e, klen) && env_add[j][klen] == '=';
		if (!overridden)
			envp[n++] = (char *)e;
	}
	for (size_t j = 0; j < na; j++)
		envp[n++] = (char *)env_add[j];
	envp[n] = NULL;
	return envp;
}

/*
 * In the child: a session of its own (so also its own group, which the
 * kills address, and no controlling terminal: a case program, even one
 * dropped to another user, could otherwise push keystrokes into the root
 * shell that started the run with TIOCSTI, or read from it), die with the
 * parent, reset what exec would otherwise inherit.
 */
static void child_setup(pid_t parent)
{
	sigset_t all;

	if (setsid() < 0)
		_exit(127);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* The parent may have died before prctl: then nobody kills us. */
	if (getppid() != parent)
		_exit(127);
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_DFL);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
}

/* Put src on target (0..2), src was first moved >= 3 so order doesn't matter. */
static void child_fd(int src, int target)
{
	if (dup2(src, target) < 0)
		_exit(127);
}

static void child_close_from(int lo, int keep)
{
	/* close_range() where the kernel has it, a loop otherwise. */
#ifdef SYS_close_range
	if (keep >= lo) {
		if (keep > lo)
			syscall(SYS_close_range, (unsigned)lo, (unsigned)keep - 1, 0u);
		if (syscall(SYS_close_range, (unsigned)keep + 1, ~0u, 0u) == 0)
			return;
	} else if (syscall(SYS_close_range, (unsigned)lo, ~0u, 0u) == 0) {
		return;
	}
#endif
	long max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 65536)
		max = 65536;
	for (int fd = lo; fd < max; fd++)
		if (fd != keep)
			close(fd);
}

static int dup_high(int fd)
{
	if (fd < 0)
		return -1;
	return fcntl(fd, F_DUPFD_CLOEXEC, 3);
}

/*
 * The common child path: fds 0/1/2 from in/out/err (already >= 3), report
 * exec errno on errfd (CLOEXEC, so a successful exec closes it silently).
 */
static void __attribute__((noreturn))
child_exec(pid_t parent, int in, int out, int err, int errfd,
	   const char *cwd, const char *file, const char *const *argv, char **envp)
{
	int e;

	child_setup(parent);
	child_fd(in, 0);
	child_fd(out, 1);
	child_fd(err, 2);
	child_close_from(3, errfd);
	if (cwd && chdir(cwd) < 0) {
		e = errno;
		goto fail;
	}
	execvpe(file ? file : argv[0], (char *const *)argv, envp);
	e = errno;
fail:
	if (write(errfd, &e, sizeof(e)) < 0) {
		/* parent sees EOF and an exit 127 */
	}
	_exit(127);
}

/* Read the exec-status pipe: 0 when exec succeeded, else the child's errno. */
static int read_exec_status(int fd)
{
	int e = 0;
	ssize_t n;

	do {
		n = read(fd, &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(fd);
	return n == (ssize_t)sizeof(e) ? e : 0;
}

static int pidfd_open_compat(pid_t pid)
{
#ifdef SYS_pidfd_open
	int fd = syscall(SYS_pidfd_open, pid, 0);
	if (fd >= 0) {
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		return fd;
	}
#endif
	(void)pid;
	return -1;
}

/* Has pid exited?  Looks without reaping (WNOWAIT), so its pid, and with it
 * its process group id, stays reserved until we have killed the group. */
static int exited_nowait(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
		return errno == EINTR ? 0 : -errno;
	return si.si_pid == pid;
}

static int reap(pid_t pid, int *status)
{
	int st = 0;
	pid_t w;

	do {
		w = waitpid(pid, &st, 0);
	} while (w < 0 && errno == EINTR);
	if (w < 0)
		return -errno;
	if (status)
		*status = st;
	return 0;
}

/* Keep the last max bytes: trim lazily at 2*max so appends stay O(n). */
static void tail_add(struct sb *sb, const char *p, size_t n, size_t max)
{
	if (n >= max) {
		sb_reset(sb);
		sb_add(sb, p + n - max, max);
		return;
	}
	sb_add(sb, p, n);
	if (sb->len > 2 * max) {
		memmove(sb->buf, sb->buf + sb->len - max, max);
		sb->len = max;
		sb->buf[max] = '\0';
	}
}

static void tail_finish(struct sb *sb, size_t max)
{
	if (sb->len > max) {
		memmove(sb->buf, sb->buf + sb->len - max, max);
		sb->len = max;
		sb->buf[max] = '\0';
	}
}

/*
 * One output stream as kept in memory: its first head_max bytes and its
 * last tail_max bytes.  What lies between is cut, and the cut is marked
 * where it was, so neither a tool's first lines (its banner, the error
 * that started it all) nor its last (the summary) silently go.
 */
struct stream {
	struct sb head;
	struct sb *tail;		/* r->out or r->err */
	size_t head_max, tail_max;
	uint64_t total;
};

/* The log fd's budget per tool: past it the rest is counted, not written. */
struct logcap {
	int fd;
	uint64_t written, cut;
};

static void log_write(int fd, const char *p, size_t n);

static void stream_add(struct stream *s, const char *p, size_t n)
{
	s->total += n;
	if (s->head.len < s->head_max) {
		size_t take = s->head_max - s->head.len < n ? s->head_max - s->head.len : n;

		sb_add(&s->head, p, take);
		p += take;
		n -= take;
	}
	if (n)
		tail_add(s->tail, p, n, s->tail_max);
}

static bool stream_finish(struct stream *s)
{
	uint64_t cut;
	struct sb all = SB_INIT;

	tail_finish(s->tail, s->tail_max);
	cut = s->total - s->head.len - s->tail->len;
	sb_add(&all, s->head.buf ? s->head.buf : "", s->head.len);
	if (cut)
		sb_addf(&all, "\n[rdmaqual: %llu bytes of output cut here]\n", (unsigned long long)cut);
	sb_add(&all, s->tail->buf ? s->tail->buf : "", s->tail->len);
	sb_release(s->tail);
	*s->tail = all;
	sb_release(&s->head);
	return cut > 0;
}

static void log_capped(struct logcap *lc, const char *p, size_t n)
{
	uint64_t room = lc->written < PROC_LOG_MAX ? PROC_LOG_MAX - lc->written : 0;
	size_t w = room < n ? (size_t)room : n;

	if (lc->fd < 0)
		return;
	log_write(lc->fd, p, w);
	lc->written += w;
	lc->cut += n - w;
}

static void log_write(int fd, const char *p, size_t n)
{
	while (fd >= 0 && n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return;	/* a full disk must not stop the run */
		}
		p += w;
		n -= w;
	}
}

static void close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Read what is available on *fd; closes it at EOF. */
static void drain(int *fd, struct stream *st, struct logcap *lc)
{
	char buf[65536];

	for (int i = 0; i < 16 && *fd >= 0; i++) {
		ssize_t n = read(*fd, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				close_fd(fd);
			return;
		}
		if (n == 0) {
			close_fd(fd);
			return;
		}
		log_capped(lc, buf, (size_t)n);
		stream_add(st, buf, (size_t)n);
	}
}

/*
 * write() to a pipe whose reader may be gone, without a SIGPIPE killing the
 * runner: block it in this thread, and swallow the one the write raised.
 */
static ssize_t write_nosigpipe(int fd, const void *p, size_t n)
{
	sigset_t pipe_set, old;
	ssize_t w;
	int e;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	w = write(fd, p, n);
	e = errno;
	if (w < 0 && e == EPIPE && !sigismember(&old, SIGPIPE)) {
		struct timespec zero = { 0, 0 };
		sigtimedwait(&pipe_set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return w;
}

/* argv[0] as exec will find it under env_add's PATH, when env_add sets one
 * (execvpe searches the runner's own PATH).  NULL: let execvpe search. */
static char *resolve_with_path(const char *name, const char *const *env_add)
{
	const char *path = NULL;

	for (size_t i = 0; env_add && env_add[i]; i++)
		if (str_starts(env_add[i], "PATH="))
			path = env_add[i] + 5;
	if (!path || strchr(name, '/'))
		return NULL;
	while (*path) {
		const char *colon = strchrnul(path, ':');
		size_t dl = colon - path;
		char *full = dl ? xasprintf("%.*s/%s", (int)dl, path, name)
				: xasprintf("./%s", name);
		struct stat st;

		if (!stat(full, &st) && S_ISREG(st.st_mode) && !access(full, X_OK))
			return full;
		free(full);
		path = *colon ? colon + 1 : colon;
	}
	return NULL;
}

int proc_run(const struct proc_opts *o, struct proc_result *r)
{
	int outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, inp[2] = { -1, -1 };
	int stp[2] = { -1, -1 };
	int nullfd = -1, ret = 0;
	size_t tail = o->tail_max ? o->tail_max : DEFAULT_TAIL;
	struct stream sout = { .head = SB_INIT, .tail = &r->out, .head_max = tail / 4,
			       .tail_max = tail };
	struct stream serr = { .head = SB_INIT, .tail = &r->err, .head_max = tail / 4,
			       .tail_max = tail };
	struct logcap lc = { .fd = o->log_fd };
	int64_t grace = o->term_grace_ms > 0 ? o->term_grace_ms : DEFAULT_GRACE_MS;
	int64_t start = now_ms();
	bool want_in_pipe = o->stdin_data || o->keep_stdin_open;
	pid_t parent = getpid();
	char **envp;
	pid_t pid;

	if (!o->argv || !o->argv[0] || o->timeout_ms <= 0)
		return -EINVAL;
	if (pipe2(outp, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0 ||
	    pipe2(stp, O_CLOEXEC) < 0 ||
	    (want_in_pipe && pipe2(inp, O_CLOEXEC) < 0)) {
		ret = -errno;
		goto out_close;
	}
	if (!want_in_pipe) {
		nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (nullfd < 0) {
			ret = -errno;
			goto out_close;
		}
	}
	envp = build_env(o->env_add);
	char *file = resolve_with_path(o->argv[0], o->env_add);
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		free(envp);
		free(file);
		goto out_close;
	}
	if (pid == 0) {
		int in = dup_high(want_in_pipe ? inp[0] : nullfd);
		int out = dup_high(outp[1]);
		int err = dup_high(errp[1]);
		int st = dup_high(stp[1]);

		if (in < 0 || out < 0 || err < 0 || st < 0)
			_exit(127);
		child_exec(parent, in, out, err, st, o->cwd, file, o->argv, envp);
	}
	free(envp);
	free(file);
	/*
	 * No setpgid() from here: it would make the child a group leader
	 * before its setsid(), which then fails.  Nothing signals the group
	 * before read_exec_status() below returns, by when it has its session.
	 */
	close_fd(&outp[1]);
	close_fd(&errp[1]);
	close_fd(&stp[1]);
	close_fd(&inp[0]);
	close_fd(&nullfd);

	int e = read_exec_status(stp[0]);
	stp[0] = -1;
	if (e) {
		reap(pid, &r->status);
		r->exec_failed = true;
		r->exec_errno = e;
		r->exit_code = -1;
		r->elapsed_ms = now_ms() - start;
		goto out_close;
	}

	group_note(pid, true);
	set_nonblock(outp[0]);
	set_nonblock(errp[0]);
	if (inp[1] >= 0)
		set_nonblock(inp[1]);

	int pidfd = pidfd_open_compat(pid);
	int64_t deadline = start + o->timeout_ms;
	int64_t kill_at = -1, drain_until = -1;
	size_t in_off = 0;
	bool exited = false, lost = false;

	if (inp[1] >= 0 && !o->stdin_data && !o->keep_stdin_open)
		close_fd(&inp[1]);
	for (;;) {
		int64_t now = now_ms();

		if (!exited) {
			int x = exited_nowait(pid);
			if (x != 0) {
				/* Leader gone: kill stragglers while its pid still
				 * pins the group id, then reap. */
				kill(-pid, SIGKILL);
				if (x < 0 || reap(pid, &r->status) < 0)
					lost = true;	/* someone else reaped it */
				group_note(pid, false);
				exited = true;
				close_fd(&inp[1]);
				drain_until = now + DRAIN_MS;
				if (drain_until > deadline && !r->timed_out)
					drain_until = deadline > now ? deadline : now;
			}
		}
		if (!exited && !r->timed_out && now >= deadline) {
			r->timed_out = true;
			kill(-pid, SIGTERM);
			kill_at = now + grace;
		}
		if (!exited && kill_at >= 0 && now >= kill_at) {
			kill(-pid, SIGKILL);
			kill_at = now + 1000;	/* re-send if somehow still alive */
		}
		if (exited && ((outp[0] < 0 && errp[0] < 0) || now >= drain_until))
			break;

		struct pollfd pf[4];
		int npf = 0, iout = -1, ierr = -1, iin = -1;
		if (outp[0] >= 0) {
			pf[npf] = (struct pollfd){ .fd = outp[0], .events = POLLIN };
			iout = npf++;
		}
		if (errp[0] >= 0) {
			pf[npf] = (struct pollfd){ .fd = errp[0], .events = POLLIN };
			ierr = npf++;
		}
		if (inp[1] >= 0 && o->stdin_data && in_off < o->stdin_len) {
			pf[npf] = (struct pollfd){ .fd = inp[1], .events = POLLOUT };
			iin = npf++;
		}
		if (!exited && pidfd >= 0)
			pf[npf++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };

		int64_t next = exited ? drain_until : (kill_at >= 0 ? kill_at : deadline);
		int64_t wait = next - now;
		/* Without a pidfd, exit is noticed by polling waitid: back off
		 * from 1 ms to 50 ms. */
		if (!exited && pidfd < 0) {
			int64_t cap = (now - start) / 4 + 1;
			if (cap > 50)
				cap = 50;
			if (wait > cap)
				wait = cap;
		}
		if (wait < 0)
			wait = 0;
		int n = poll(pf, npf, (int)wait);
		if (n < 0 && errno != EINTR)
			break;
		if (n <= 0)
			continue;
		if (iout >= 0 && pf[iout].revents)
			drain(&outp[0], &sout, &lc);
		if (ierr >= 0 && pf[ierr].revents)
			drain(&errp[0], &serr, &lc);
		if (iin >= 0 && pf[iin].revents) {
			ssize_t w = write_nosigpipe(inp[1], o->stdin_data + in_off,
						    o->stdin_len - in_off);
			if (w > 0)
				in_off += w;
			else if (w < 0 && errno != EAGAIN && errno != EINTR)
				close_fd(&inp[1]);
			if (in_off >= o->stdin_len && !o->keep_stdin_open)
				close_fd(&inp[1]);
		}
	}
	/* Whatever is still buffered in the pipes, without waiting. */
	if (outp[0] >= 0)
		drain(&outp[0], &sout, &lc);
	if (errp[0] >= 0)
		drain(&errp[0], &serr, &lc);
	if (pidfd >= 0)
		close(pidfd);
	r->out_bytes = sout.total;
	r->err_bytes = serr.total;
	if (lc.cut) {
		/* The log keeps its head; the tails of both streams close it. */
		tail_finish(&r->out, tail);
		tail_finish(&r->err, tail);
		dprintf(lc.fd, "\n[rdmaqual: %llu bytes of %s's output not logged (the log keeps "
			"%u MiB per tool); the last %zu bytes of stdout and %zu of stderr follow]\n",
			(unsigned long long)lc.cut, o->argv[0], (unsigned)(PROC_LOG_MAX >> 20),
			r->out.len, r->err.len);
		log_write(lc.fd, r->out.buf ? r->out.buf : "", r->out.len);
		dprintf(lc.fd, "\n[rdmaqual: stderr]\n");
		log_write(lc.fd, r->err.buf ? r->err.buf : "", r->err.len);
	}
	r->out_truncated = stream_finish(&sout);
	r->err_truncated = stream_finish(&serr);
	if (lost) {
		/* A SIGCHLD handler elsewhere reaped it: the status is gone,
		 * and a lost status must never read as success. */
		r->exit_code = -1;
	} else if (WIFEXITED(r->status) && !r->timed_out) {
		r->exit_code = WEXITSTATUS(r->status);
	} else if (WIFSIGNALED(r->status)) {
		r->signal = WTERMSIG(r->status);
		r->exit_code = -1;
	} else {
		r->exit_code = WIFEXITED(r->status) ? WEXITSTATUS(r->status) : -1;
	}
	r->elapsed_ms = now_ms() - start;

out_close:
	close_fd(&outp[0]);
	close_fd(&outp[1]);
	close_fd(&errp[0]);
	close_fd(&errp[1]);
	close_fd(&inp[0]);
	close_fd(&inp[1]);
	close_fd(&stp[0]);
	close_fd(&stp[1]);
	close_fd(&nullfd);
	return ret;
}

void proc_describe(const struct proc_result *r, const char *name, char *buf, size_t size)
{
	if (!size)
		return;
	if (r->exec_failed) {
		if (r->exec_errno == ENOENT)
			snprintf(buf, size, "not found: %s", name);
		else
			snprintf(buf, size, "cannot run %s: %s", name, strerror(r->exec_errno));
	} else if (r->timed_out) {
		snprintf(buf, size, "%s timed out after %.1f s", name, r->elapsed_ms / 1000.0);
	} else if (r->signal) {
		const char *s = sigabbrev_np(r->signal);
		if (s)
			snprintf(buf, size, "%s killed by SIG%s", name, s);
		else
			snprintf(buf, size, "%s killed by signal %d", name, r->signal);
	} else {
		snprintf(buf, size, "%s exited %d", name, r->exit_code);
	}
}

pid_t proc_spawn(const struct spawn_opts *o)
{
	int stp[2], nullin = -1, nullout = -1;
	pid_t parent = getpid();
	char **envp;
	pid_t pid;
	int ret;

	if (!o->argv || !o->argv[0])
		return -EINVAL;
	if (pipe2(stp, O_CLOEXEC) < 0)
		return -errno;
	nullin = open("/dev/null", O_RDONLY | O_CLOEXEC);
	nullout = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (nullin < 0 || nullout < 0) {
		ret = -errno;
		goto fail;
	}
	envp = build_env(o->env_add);
	char *file = resolve_with_path(o->argv[0], o->env_add);
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		free(envp);
		free(file);
		goto fail;
	}
	if (pid == 0) {
		int in = dup_high(o->stdin_fd >= 0 ? o->stdin_fd : nullin);
		int outfd = o->stdout_fd >= 0 ? o->stdout_fd : nullout;
		int out = dup_high(outfd);
		int err = dup_high(o->stderr_fd >= 0 ? o->stderr_fd : outfd);
		int st = dup_high(stp[1]);

		if (in < 0 || out < 0 || err < 0 || st < 0)
			_exit(127);
		child_exec(parent, in, out, err, st, o->cwd, file, o->argv, envp);
	}
	free(envp);
	free(file);
	close(stp[1]);
	close(nullin);
	close(nullout);
	int e = read_exec_status(stp[0]);
	if (e) {
		reap(pid, NULL);
		return -e;
	}
	group_note(pid, true);
	return pid;
fail:
	close(stp[0]);
	close(stp[1]);
	if (nullin >= 0)
		close(nullin);
	if (nullout >= 0)
		close(nullout);
	return ret;
}

/* Wait for pid to exit until deadline; with nowait, leave it a zombie. */
static int wait_deadline(pid_t pid, int64_t deadline_ms, int *status, bool nowait)
{
	int pidfd = pidfd_open_compat(pid);
	int64_t sleep_ms = 1;
	int x;

	for (;;) {
		x = exited_nowait(pid);
		if (x < 0)
			break;
		if (x > 0) {
			x = 1;
			if (!nowait && reap(pid, status) < 0)
				x = -ECHILD;
			else if (!nowait)
				group_note(pid, false);
			break;
		}
		int64_t left = deadline_ms - now_ms();
		if (left <= 0) {
			x = 0;
			break;
		}
		if (pidfd >= 0) {
			struct pollfd pf = { .fd = pidfd, .events = POLLIN };
			poll(&pf, 1, left > 1000 ? 1000 : (int)left);
		} else {
			int64_t s = sleep_ms < left ? sleep_ms : left;
			struct timespec ts = { s / 1000, (s % 1000) * 1000000L };
			nanosleep(&ts, NULL);
			if (sleep_ms < 50)
				sleep_ms *= 2;
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	return x;
}

/* Returns 1 if pid exited (reaped, *status set), 0 at the deadline, -errno
 * (e.g. -ECHILD) when pid is not our child. */
int proc_wait_deadline(pid_t pid, int64_t deadline_ms, int *status)
{
	return wait_deadline(pid, deadline_ms, status, false);
}

void proc_kill_group(pid_t pid, int64_t grace_ms)
{
	if (pid <= 0)
		return;
	if (grace_ms < 0)
		grace_ms = 0;
	kill(-pid, SIGTERM);
	/* Leader stays a zombie until the whole group got its SIGKILL. */
	int x = wait_deadline(pid, now_ms() + grace_ms, NULL, true);
	kill(-pid, SIGKILL);
	if (x >= 0 && !reap(pid, NULL))
		group_note(pid, false);
}

bool cmd_exists(const char *name)
{
	struct stat st;

	if (!name || !*name)
		return false;
	if (strchr(name, '/'))
		return !stat(name, &st) && S_ISREG(st.st_mode) && !access(name, X_OK);
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *colon = strchrnul(path, ':');
		size_t dl = colon - path;
		char *full = dl ? xasprintf("%.*s/%s", (int)dl, path, name)
				: xasprintf("./%s", name);
		bool ok = !stat(full, &st) && S_ISREG(st.st_mode) && !access(full, X_OK);

		free(full);
		if (ok)
			return true;
		path = *colon ? colon + 1 : colon;
	}
	return false;
}

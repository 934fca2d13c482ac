/* SPDX-License-Identifier: MIT */
/*
 * A second node over ssh: the same agent protocol on `ssh HOST rdmaqual
 * agent --stdio`.  Both sides must run the same code: an rdmaqual on the
 * peer's PATH whose --version is exactly ours (a package of the same
 * release on every lab node; a build of the same commit) is run as it is;
 * otherwise, and always for a build from a tree with uncommitted changes,
 * the controller first puts its own build on the peer.  The remote agent
 * ends when ssh's stdin closes.
 *
 * The peer's /tmp is shared with every local user there and the copy runs
 * as the ssh user (often root), so nothing in it is reused: each open makes
 * a fresh `mktemp -d` (0700, owned by the ssh user), writes the copy there
 * with noclobber under the name of its SHA-256, checks that hash again on
 * the peer right before running it, and removes the directory when the
 * agent exits.  A host that starts with '-' is refused and "--" goes
 * before it, so --peer cannot turn into an ssh option.
 *
 * ssh runs in batch mode (never prompts) with connect and keep-alive
 * deadlines; $RDMAQUAL_SSH_CONFIG names an ssh_config file (ssh -F) for
 * ports, keys and users.
 *
 * The agent's ssh writes its stderr into a pipe of ours, not onto our
 * terminal: a node (its login scripts, a forced command) could print
 * `ESC]0;title BEL`, `ESC[2J` and a forged "PASS ..." line there.  A thread
 * reads the pipe, appends the bytes as they came to the run's log and shows
 * each line through term_safe, named by the peer, up to a bound.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <jansson.h>
#include "agent/agent.h"
#include "core/proc.h"
#include "core/sha256.h"
#include "core/term.h"
#include "core/util.h"

#define SSH_OPTS_MAX 16
/* Lines of a peer's stderr shown on ours, bytes of a line shown, bytes logged. */
#define ERR_SHOW_LINES 50
#define ERR_LINE_MAX 512
#define ERR_LOG_MAX (1u << 20)

struct err_pump {
	pthread_t thr;
	int fd, log_fd;
	char *label;		/* our own copy: a launcher renames a->label meanwhile */
	char *log_path;
	atomic_bool stop;
};

static void pump_line(struct err_pump *p, struct sb *line, size_t *shown)
{
	if (*shown < ERR_SHOW_LINES) {
		char *safe = term_safe(line->buf ? line->buf : "");

		fprintf(stderr, "rdmaqual: %s: %s\n", p->label, safe);
		free(safe);
	} else if (*shown == ERR_SHOW_LINES) {
		fprintf(stderr, "rdmaqual: %s: more on its stderr, not shown%s%s\n", p->label,
			p->log_fd >= 0 ? "; all of it in " : "", p->log_fd >= 0 ? p->log_path : "");
	}
	(*shown)++;
	sb_reset(line);
}

static void *pump_run(void *arg)
{
	struct err_pump *p = arg;
	struct sb line = SB_INIT;
	size_t shown = 0, logged = 0;
	bool cut = false;
	char buf[4096];

	for (;;) {
		struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
		int n = poll(&pfd, 1, 200);

		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && atomic_load(&p->stop))
			break;	/* ssh has gone and nothing more came: whoever holds the pipe is not ours */
		if (n <= 0)
			continue;
		ssize_t r = read(p->fd, buf, sizeof(buf));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (p->log_fd >= 0 && logged < ERR_LOG_MAX) {
			size_t w = (size_t)r < ERR_LOG_MAX - logged ? (size_t)r : ERR_LOG_MAX - logged;

			if (write(p->log_fd, buf, w) > 0)
				logged += w;
		}
		for (ssize_t i = 0; i < r; i++) {
			if (buf[i] == '\n') {
				pump_line(p, &line, &shown);
				cut = false;
			} else if (line.len < ERR_LINE_MAX) {
				sb_addc(&line, buf[i]);
			} else if (!cut) {
				sb_adds(&line, "...");
				cut = true;
			}
		}
	}
	if (line.len)
		pump_line(p, &line, &shown);
	sb_release(&line);
	return NULL;
}

static void pump_end(void *arg)
{
	struct err_pump *p = arg;

	atomic_store(&p->stop, true);
	pthread_join(p->thr, NULL);
	close(p->fd);
	if (p->log_fd >= 0)
		close(p->log_fd);
	free(p->label);
	free(p->log_path);
	free(p);
}

/* Read ssh's stderr from fd (ours now); NULL when no thread could start (fd closed). */
static struct err_pump *pump_start(int fd, const char *host, const char *log_path)
{
	struct err_pump *p = xcalloc(1, sizeof(*p));
	char *label = xasprintf("peer %s", host);

	p->fd = fd;
	p->label = term_safe(label);
	free(label);
	p->log_path = log_path ? term_safe(log_path) : NULL;
	p->log_fd = log_path ? open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644) : -1;
	atomic_init(&p->stop, false);
	if (pthread_create(&p->thr, NULL, pump_run, p)) {
		close(fd);
		if (p->log_fd >= 0)
			close(p->log_fd);
		free(p->label);
		free(p->log_path);
		free(p);
		return NULL;
	}
	return p;
}

static int ssh_argv(const char **argv, const char *host)
{
	const char *cfg = getenv("RDMAQUAL_SSH_CONFIG");
	int n = 0;

	argv[n++] = "ssh";
	if (cfg && *cfg) {
		argv[n++] = "-F";
		argv[n++] = cfg;
	}
	argv[n++] = "-o";
	argv[n++] = "BatchMode=yes";
	argv[n++] = "-o";
	argv[n++] = "ConnectTimeout=10";
	argv[n++] = "-o";
	argv[n++] = "ServerAliveInterval=5";
	argv[n++] = "-o";
	argv[n++] = "ServerAliveCountMax=3";
	argv[n++] = "--";
	argv[n++] = host;
	return n;
}

int rq_ssh_host_ok(const char *host)
{
	return host && *host && host[0] != '-' && !strpbrk(host, " \t\n'\"\\");
}

/* Run one ssh command on the peer with a deadline; 0 when it exited 0. */
static int ssh_run(const char *host, const char *const *cmd, const char *stdin_path,
		   char *out, size_t outsz, char *err, size_t errsz)
{
	const char *argv[SSH_OPTS_MAX + 16];
	struct proc_result r;
	struct sb in = SB_INIT;
	int n = ssh_argv(argv, host), ret;

	if (out)
		*out = '\0';

	for (int i = 0; cmd[i]; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	if (stdin_path && read_file(stdin_path, &in, 256u << 20)) {
		snprintf(err, errsz, "cannot read %s", stdin_path);
		return -1;
	}
	proc_result_init(&r);
	struct proc_opts o = {
		.argv = argv, .timeout_ms = scaled_ms(60000), .log_fd = -1,
		.stdin_data = stdin_path ? in.buf : NULL, .stdin_len = in.len,
	};
	ret = proc_run(&o, &r);
	if (ret || r.exit_code != 0) {
		char how[160];

		proc_describe(&r, "ssh", how, sizeof(how));
		sb_rtrim(&r.err);
		snprintf(err, errsz, "ssh %s: %s%s%s", host, how, r.err.len ? ": " : "", r.err.buf);
		ret = -1;
	} else if (out) {
		sb_rtrim(&r.out);
		snprintf(out, outsz, "%s", r.out.len ? r.out.buf : "");
	}
	proc_result_release(&r);
	sb_release(&in);
	return ret;
}

int rq_ssh_resolve4(const char *host, char *buf, size_t size)
{
	const char *argv[SSH_OPTS_MAX + 8];
	struct proc_result r;
	char name[256] = "";
	int n;

	if (!rq_ssh_host_ok(host))
		return -1;
	n = ssh_argv(argv, host) - 2;	/* options only: -G goes before "--" HOST */
	argv[n++] = "-G";
	argv[n++] = "--";
	argv[n++] = host;
	argv[n] = NULL;
	proc_result_init(&r);
	struct proc_opts o = { .argv = argv, .timeout_ms = scaled_ms(10000), .log_fd = -1,
			       .tail_max = 65536 };

	/* ssh -G applies ssh_config (aliases, HostName) without connecting. */
	if (proc_run(&o, &r) == 0 && r.exit_code == 0) {
		for (char *line = strtok(r.out.buf, "\n"); line; line = strtok(NULL, "\n"))
			if (str_starts(line, "hostname ")) {
				snprintf(name, sizeof(name), "%s", strtrim(line + 9));
				break;
			}
	}
	proc_result_release(&r);
	if (!name[0])
		snprintf(name, sizeof(name), "%s", strrchr(host, '@') ? strrchr(host, '@') + 1 : host);

	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res;

	if (getaddrinfo(name, NULL, &hints, &res))
		return -1;
	inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr, buf, (socklen_t)size);
	freeaddrinfo(res);
	return 0;
}

/* What mktemp printed must be a fresh dir of our pattern, nothing else. */
static bool peer_dir_ok(const char *d)
{
	static const char pre[] = "/tmp/rdmaqual-peer.";

	if (strncmp(d, pre, sizeof(pre) - 1) || strlen(d) != sizeof(pre) - 1 + 10)
		return false;
	for (const char *p = d + sizeof(pre) - 1; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
			return false;
	return true;
}

/*
 * Copy self_exe into a fresh private dir on the peer; fills dir.  One sh
 * script (plain words, no quote of ours inside) whatever the login shell.
 */
static int peer_copy(const char *host, const char *self_exe, const char *hash,
		     char *dir, size_t dirsz, char *err, size_t errsz)
{
	char *script = xasprintf(
		"sh -c 'umask 077; d=$(mktemp -d /tmp/rdmaqual-peer.XXXXXXXXXX) || exit 1; "
		"set -C; f=$d/rdmaqual-%s; cat >\"$f\" && chmod 700 \"$f\" || { rm -rf \"$d\"; exit 1; }; "
		"echo \"$d\"'", hash);
	const char *cmd[] = { script, NULL };
	int ret = ssh_run(host, cmd, self_exe, dir, dirsz, err, errsz);

	free(script);
	if (ret == 0 && !peer_dir_ok(dir)) {
		snprintf(err, errsz, "peer %s: mktemp gave \"%.64s\", not a /tmp/rdmaqual-peer.* dir",
			 host, dir);
		ret = -1;
	}
	return ret;
}

/* Best effort, when the agent never ran or its shell died (else it removes the dir itself). */
void rq_ssh_peer_remove(const char *host, const char *dir)
{
	char e[256];
	const char *cmd[] = { "rm", "-rf", dir, NULL };

	ssh_run(host, cmd, NULL, NULL, 0, e, sizeof(e));
}

/*
 * The rdmaqual on the peer's PATH, if its --version line is exactly this
 * build's: fills path and returns true.  A build with uncommitted changes
 * ("-dirty") matches nothing: the same describe is not the same code.  The
 * path goes back into a remote command line, so it must be a plain
 * absolute path.
 */
static bool peer_installed(const char *host, char *path, size_t pathsz)
{
	const char *cmd[] = { "sh -c 'p=$(command -v rdmaqual) && echo \"$p\" && \"$p\" --version'",
			      NULL };
	char out[600], err[256], want[200], *nl;

	if (strstr(RQ_VERSION, "dirty"))
		return false;
	if (strcmp(RQ_VERSION, RQ_RELEASE))
		snprintf(want, sizeof(want), "rdmaqual %s (git %s)", RQ_RELEASE, RQ_VERSION);
	else
		snprintf(want, sizeof(want), "rdmaqual %s", RQ_RELEASE);
	if (ssh_run(host, cmd, NULL, out, sizeof(out), err, sizeof(err)))
		return false;
	nl = strchr(out, '\n');
	if (!nl || strcmp(nl + 1, want))
		return false;
	*nl = '\0';
	if (out[0] != '/' || strspn(out, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "0123456789/._+-") != strlen(out) || strlen(out) >= pathsz)
		return false;
	snprintf(path, pathsz, "%s", out);
	return true;
}

struct rq_agent *rq_agent_ssh(const char *host, const char *self_exe, const char *log_path,
			      char *err, size_t errsz)
{
	char hash[65], dir[128] = "", installed[256], *script;
	const char *argv[SSH_OPTS_MAX + 8];
	int n, rc;

	if (!rq_ssh_host_ok(host)) {
		snprintf(err, errsz, "peer \"%s\" is not a host name (no leading '-', no spaces or quotes)",
			 host ? host : "");
		return NULL;
	}
	if (peer_installed(host, installed, sizeof(installed))) {
		script = xasprintf("%s agent --stdio", installed);
	} else {
		rc = sha256_file(self_exe, hash);
		if (rc) {
			snprintf(err, errsz, "cannot read %s: %s", self_exe, strerror(-rc));
			return NULL;
		}
		if (peer_copy(host, self_exe, hash, dir, sizeof(dir), err, errsz))
			return NULL;
		/*
		 * The dir must still be ours and not a link, and the copy must
		 * still hash to its name, right before it runs; whatever
		 * happens, the dir goes when the agent ends (its stdin, the ssh
		 * channel, closes).
		 */
		script = xasprintf(
			"sh -c 'd=%s; f=$d/rdmaqual-%s; "
			"if [ -O \"$d\" ] && [ ! -L \"$d\" ] && [ \"$(sha256sum <\"$f\")\" = \"%s  -\" ]; "
			"then \"$f\" agent --stdio; s=$?; "
			"else echo \"rdmaqual: the copy in $d fails its hash check\" >&2; s=1; fi; "
			"rm -rf \"$d\"; exit $s'", dir, hash, hash);
	}
	n = ssh_argv(argv, host);
	argv[n++] = script;
	argv[n] = NULL;

	int to[2], from[2], efd[2];

	if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC) || pipe2(efd, O_CLOEXEC)) {
		snprintf(err, errsz, "pipe: %s", strerror(errno));
		free(script);
		if (*dir)
			rq_ssh_peer_remove(host, dir);
		return NULL;
	}
	struct spawn_opts so = { .argv = argv, .stdin_fd = to[0], .stdout_fd = from[1],
				 .stderr_fd = efd[1] };
	pid_t pid = proc_spawn(&so);

	free(script);
	close(to[0]);
	close(from[1]);
	close(efd[1]);
	if (pid < 0) {
		snprintf(err, errsz, "cannot start ssh: %s", strerror(-pid));
		close(to[1]);
		close(from[0]);
		close(efd[0]);
		if (*dir)
			rq_ssh_peer_remove(host, dir);
		return NULL;
	}
	char label[300];

	snprintf(label, sizeof(label), "peer:%s", host);
	struct rq_agent *a = rq_agent_attach(from[0], to[1], pid, label);

	a->err_pump = pump_start(efd[0], host, log_path);
	a->err_pump_end = pump_end;
	json_t *req = json_pack("{s:s}", "op", "hello");
	json_t *ans = rq_agent_call(a, req, scaled_ms(30000), err, errsz);

	json_decref(req);
	if (!ans || !json_is_true(json_object_get(ans, "ok"))) {
		if (ans)
			snprintf(err, errsz, "peer %s: agent did not greet", host);
		json_decref(ans);
		rq_agent_close(a);
		if (*dir)
			rq_ssh_peer_remove(host, dir);
		return NULL;
	}
	json_decref(ans);
	a->peer_host = xstrdup(host);
	a->peer_dir = *dir ? xstrdup(dir) : NULL;	/* an installed rdmaqual: nothing to remove */
	a->peer_remove = rq_ssh_peer_remove;
	return a;
}

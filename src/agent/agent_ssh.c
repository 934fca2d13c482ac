/* SPDX-License-Identifier: MIT */
/*
 * A second node over ssh: the same agent protocol on `ssh HOST rdmaqual
 * agent --stdio`.  The controller first puts its own build on the peer
 * (a copy named by size and mtime under /tmp/rdmaqual-peer/), so both sides
 * run the same code; the remote agent ends when ssh's stdin closes.
 *
 * ssh runs in batch mode (never prompts) with connect and keep-alive
 * deadlines; $RDMAQUAL_SSH_CONFIG names an ssh_config file (ssh -F) for
 * ports, keys and users.
 */
#include <errno.h>
#include <fcntl.h>
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
#include "core/util.h"

#define SSH_OPTS_MAX 16

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
	argv[n++] = host;
	return n;
}

/* Run one ssh command on the peer with a deadline; 0 when it exited 0. */
static int ssh_run(const char *host, const char *const *cmd, const char *stdin_path,
		   char *err, size_t errsz)
{
	const char *argv[SSH_OPTS_MAX + 16];
	struct proc_result r;
	struct sb in = SB_INIT;
	int n = ssh_argv(argv, host), ret;

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
	int n = ssh_argv(argv, host) - 1;	/* options only: -G takes the host last */

	argv[n++] = "-G";
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

struct rq_agent *rq_agent_ssh(const char *host, const char *self_exe, char *err, size_t errsz)
{
	struct stat st;
	char remote[256], tmp[300];
	const char *argv[SSH_OPTS_MAX + 8];
	int n;

	if (stat(self_exe, &st)) {
		snprintf(err, errsz, "cannot stat %s: %s", self_exe, strerror(errno));
		return NULL;
	}
	/* Same build on both sides: named by size and mtime, copied once. */
	snprintf(remote, sizeof(remote), "/tmp/rdmaqual-peer/rdmaqual-%llx-%llx",
		 (unsigned long long)st.st_size, (unsigned long long)st.st_mtime);
	snprintf(tmp, sizeof(tmp), "%s.tmp", remote);
	const char *test[] = { "test", "-x", remote, NULL };

	if (ssh_run(host, test, NULL, err, errsz)) {
		/* The remote side runs argv words through its login shell: use plain words only. */
		const char *mk[] = { "mkdir", "-p", "-m", "700", "/tmp/rdmaqual-peer", NULL };
		const char *cp[] = { "cat", ">", tmp, NULL };
		const char *fin[] = { "chmod", "755", tmp, "&&", "mv", "-f", tmp, remote, NULL };

		if (ssh_run(host, mk, NULL, err, errsz) || ssh_run(host, cp, self_exe, err, errsz) ||
		    ssh_run(host, fin, NULL, err, errsz))
			return NULL;
	}
	n = ssh_argv(argv, host);
	argv[n++] = remote;
	argv[n++] = "agent";
	argv[n++] = "--stdio";
	argv[n] = NULL;

	int to[2], from[2];

	if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC)) {
		snprintf(err, errsz, "pipe: %s", strerror(errno));
		return NULL;
	}
	struct spawn_opts so = { .argv = argv, .stdin_fd = to[0], .stdout_fd = from[1], .stderr_fd = 2 };
	pid_t pid = proc_spawn(&so);

	close(to[0]);
	close(from[1]);
	if (pid < 0) {
		snprintf(err, errsz, "cannot start ssh: %s", strerror(-pid));
		close(to[1]);
		close(from[0]);
		return NULL;
	}
	char label[300];

	snprintf(label, sizeof(label), "peer:%s", host);
	struct rq_agent *a = rq_agent_attach(from[0], to[1], pid, label);
	json_t *req = json_pack("{s:s}", "op", "hello");
	json_t *ans = rq_agent_call(a, req, scaled_ms(30000), err, errsz);

	json_decref(req);
	if (!ans || !json_is_true(json_object_get(ans, "ok"))) {
		if (ans)
			snprintf(err, errsz, "peer %s: agent did not greet", host);
		json_decref(ans);
		rq_agent_close(a);
		return NULL;
	}
	json_decref(ans);
	return a;
}

// SPDX-License-Identifier: MIT
/*
 * Subcommands for people (and the guest init) around the rxe-vm target:
 *
 *   rdmaqual vm boot [--vm-topology vmN] [--accel A] [--kernel P --modules D]
 *       boot the guests the way a run does, print where they are, then pass
 *       agent-protocol lines between this terminal and the guests until EOF
 *       or Ctrl-C, and stop them.
 *   rdmaqual vm image [--kernel P --modules D]
 *       fetch/extract the guest kernel and build the initramfs (cached); print them.
 *   rdmaqual rxe add NAME NETDEV | rxe del NAME
 *       create/delete a soft-RoCE link over RDMA netlink (what the guest
 *       init runs to make rxe0; no iproute2 `rdma` needed).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "agent/agent.h"
#include "agent/request.h"
#include "core/case.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "core/proc.h"
#include "exec/statedir.h"
#include "core/target.h"
#include "core/term.h"
#include "core/util.h"
#include "vm/vm.h"

extern const struct rq_target_ops rq_target_rxevm;

static void vm_usage(FILE *fp)
{
	fprintf(fp,
		"usage: rdmaqual vm boot [--vm-topology vmN] [--accel kvm|tcg|auto]\n"
		"                        [--kernel SPEC] [--state-dir DIR]\n"
		"       rdmaqual vm image [--kernel SPEC]\n"
		"       rdmaqual vm bench [--vm-topology vmN] [--accel A] [--n N]\n"
		CLI_HELP_VM_TOPOLOGY
		CLI_HELP_ACCEL
		CLI_HELP_STATE_DIR
		"Boots the rxe-vm guests as a run does (see docs/vm.md).  After boot, lines\n"
		"typed here go to vm0's agent (prefix a line with \"vm1 \" for the second\n"
		"guest), e.g. {\"v\":1,\"id\":1,\"op\":\"exec\",\"argv\":[\"ibv_devinfo\"],\"timeout_ms\":5000}\n"
		"EOF or Ctrl-C stops the guests.\n"
		"SPEC: debian:SUITE (debian:bookworm-backports), debian:PACKAGE=VERSION,\n"
		"or a kernel image PATH with --modules DIR (its lib/modules/VER).\n");
}

/* Pass lines between stdin and the guests' agents until EOF or a signal. */
static void pump(struct rq_target *t, const sigset_t *sigs)
{
	struct rq_agent *ag[2] = { 0 };
	int n = 0;
	struct sb in = SB_INIT, part[2] = { SB_INIT, SB_INIT };

	for (int i = 0; i < 2; i++)
		if ((ag[n] = rq_rxevm_agent(t, i)))
			n++;
	if (!n)
		return;
	if (getenv("RQ_VM_BOOT_NO_PUMP"))
		return;
	for (;;) {
		struct pollfd pf[3] = { { .fd = 0, .events = POLLIN } };
		int np = 1;

		for (int i = 0; i < n; i++) {
			pf[np].fd = ag[i]->rfd;
			pf[np].events = POLLIN;
			np++;
		}
		int rc = poll(pf, (nfds_t)np, 200);
		struct timespec zero = { 0, 0 };

		if (sigtimedwait(sigs, NULL, &zero) > 0)
			break;
		if (rc <= 0)
			continue;
		for (int i = 1; i < np; i++) {
			if (pf[i].revents & (POLLIN | POLLHUP)) {
				char buf[65536];
				ssize_t r = read(pf[i].fd, buf, sizeof(buf));
				struct sb *o = &part[i - 1];
				char *nl;

				if (r <= 0) {
					printf("[%s: channel closed]\n", ag[i - 1]->label);
					goto out;
				}
				/*
				 * Whole answers only, each on its own line and
				 * vm1's prefixed as its requests are: an answer
				 * longer than one read must not be cut by the
				 * other guest's.
				 */
				sb_add(o, buf, (size_t)r);
				while ((nl = memchr(o->buf, '\n', o->len))) {
					size_t len = (size_t)(nl - o->buf) + 1;

					if (i > 1)
						fputs("vm1 ", stdout);
					fwrite(o->buf, 1, len, stdout);
					memmove(o->buf, nl + 1, o->len - len);
					o->len -= len;
				}
				fflush(stdout);
			}
		}
		if (pf[0].revents & (POLLIN | POLLHUP)) {
			char buf[4096];
			ssize_t r = read(0, buf, sizeof(buf));
			char *nl;

			if (r <= 0)
				break;
			sb_add(&in, buf, (size_t)r);
			while ((nl = memchr(in.buf, '\n', in.len))) {
				size_t len = (size_t)(nl - in.buf) + 1;
				const char *line = in.buf;
				struct rq_agent *to = ag[0];

				if (str_starts(line, "vm1 ") && n > 1) {
					to = ag[1];
					line += 4;
					len -= 4;
				}
				if (write(to->wfd, line, len) < 0)
					perror("write");
				memmove(in.buf, nl + 1, in.len - (size_t)(nl + 1 - in.buf));
				in.len -= (size_t)(nl + 1 - in.buf);
				in.buf[in.len] = '\0';
			}
		}
	}
out:
	sb_release(&in);
	sb_release(&part[0]);
	sb_release(&part[1]);
}

enum vm_mode { VM_BOOT, VM_IMAGE, VM_BENCH };

static int vm_bench(struct rq_target *t, int n);

static int vm_boot(int argc, char **argv, enum vm_mode mode)
{
	static const struct option lo[] = {
		/* run's and qualify's spelling; --topology, the old one, still works */
		{ "vm-topology", required_argument, NULL, 't' },
		{ "topology", required_argument, NULL, 't' },
		{ "accel", required_argument, NULL, 'a' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "modules", required_argument, NULL, 'm' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "n", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct rq_run_opts o = { .target = "rxe-vm", .topology = "vm2", .accel = "auto" };
	struct rq_target t = { .ops = &rq_target_rxevm, .name = (char *)"rxe-vm", .opts = &o };
	char err[512], state_dir[4096];
	sigset_t sigs;
	int c, rc, nrep = 20;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 't':
			if (rq_vm_topology_guests(optarg) < 0)
				return usage_error("vm", "--vm-topology is vm1, vm2, ... vm8, not \"%s\"", optarg);
			o.topology = optarg;
			break;
		case 'a':
			if (strcmp(optarg, "kvm") && strcmp(optarg, "tcg") && strcmp(optarg, "auto"))
				return usage_error("vm", "--accel is kvm, tcg or auto, not \"%s\"", optarg);
			o.accel = optarg;
			break;
		case 'k': o.kernel = optarg; break;
		case 'm': o.modules = optarg; break;
		case 's': o.state_dir = optarg; break;
		case 'n': {
			long long v;

			/* the case files' converter: "20x" is a mistake, not 20 */
			if (parse_ll(optarg, &v) || v < 1 || v > 100000)
				return usage_error("vm", "--n wants a count of 1 to 100000, not \"%s\"", optarg);
			nrep = (int)v;
			break;
		}
		case 'h': vm_usage(stdout); return 0;
		default: vm_usage(stderr); return RQ_EXIT_USAGE;
		}
	}
	if (optind != argc)
		return usage_error("vm", "unexpected argument \"%s\"", argv[optind]);
	if (!rq_kernel_spec_is_debian(o.kernel) && !!o.kernel != !!o.modules)
		return usage_error("vm", "--kernel PATH and --modules go together");
	o.self_exe = rq_self_exe;

	if (mode == VM_IMAGE) {
		struct rq_vm_image img;

		rc = rq_vm_image_prepare(&o, &img, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "rdmaqual vm image: %s\n", err);
			return RQ_EXIT_FAIL;
		}
		printf("kernel:    %s (%s)\nimage:     %s%s\nmodules:   %s/lib/modules/%s\ninitramfs: %s\n",
		       img.kver, img.ksrc, img.kimage, img.pvh ? " (PVH vmlinux)" : " (bzImage)",
		       img.modroot, img.kver, img.initrd);
		if (*img.kpkg)
			printf("package:   %s %s from %s%s%s%s\n", img.kpkg, img.kpkgver, img.korigin,
			       *img.kcache ? " (" : "", img.kcache, *img.kcache ? ")" : "");
		return 0;
	}
	if (!o.state_dir) {
		rq_state_dir(NULL, state_dir, sizeof(state_dir));
		o.state_dir = state_dir;
	}
	if (statedir_check(o.state_dir))
		return RQ_EXIT_FAIL;
	/* Signals are taken synchronously so the guests are always stopped. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	rq_target_rxevm.cleanup_stale(&o);

	int64_t t0 = now_ms();

	rc = t.ops->open(&t, err, sizeof(err));
	if (rc < 0) {
		/* the reason may quote the guest's console: one inert line each */
		if (!err[0])
			snprintf(err, sizeof(err), "failed");
		for (char *l = strtok(err, "\n"); l; l = strtok(NULL, "\n")) {
			char *safe = term_safe(l);

			fprintf(stderr, "rdmaqual vm boot: %s\n", safe);
			free(safe);
		}
		t.ops->close(&t);
		return RQ_EXIT_FAIL;
	}
	if (mode == VM_BENCH) {
		rc = vm_bench(&t, nrep);
		t.ops->close(&t);
		return rc;
	}
	struct rq_result *facts = rq_result_new("vm-boot", NULL, 0);

	t.ops->facts(&t, facts);
	printf("rxe-vm up in %.2f s (image prepare included):\n", (now_ms() - t0) / 1000.0);
	for (size_t i = 0; i < facts->nfacts; i++) {
		/* what the guest said about itself, as inert text */
		char *v = term_safe(facts->facts[i].value);

		printf("  %-18s %s\n", facts->facts[i].key, v);
		free(v);
	}
	rq_result_free(facts);
	printf("Guests: vm0 10.77.0.1%s; rxe0 on eth0 in each; consoles and sockets in /tmp/rq-%d-*.*/\n"
	       "Type agent requests (JSON lines); EOF or Ctrl-C stops the guests.\n",
	       strcmp(o.topology, "vm2") ? "" : ", vm1 10.77.0.2", (int)getpid());
	fflush(stdout);
	pump(&t, &sigs);
	t.ops->close(&t);
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Time n calls of req (microseconds); prints median and mean.  0 or -1. */
static int time_calls(struct rq_agent *a, const char *what, json_t *req, int n)
{
	int64_t *us = xcalloc((size_t)n, sizeof(*us));
	double sum = 0;
	char why[256];
	struct timespec t0, t1;

	for (int i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		json_t *resp = rq_agent_call(a, req, scaled_ms(30000), why, sizeof(why));

		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (!resp || !json_is_true(json_object_get(resp, "ok"))) {
			fprintf(stderr, "rdmaqual vm bench: %s failed: %s\n", what,
				resp ? json_string_value(json_object_get(resp, "error")) : why);
			json_decref(resp);
			free(us);
			return -1;
		}
		json_decref(resp);
		us[i] = (t1.tv_sec - t0.tv_sec) * 1000000LL + (t1.tv_nsec - t0.tv_nsec) / 1000;
		sum += (double)us[i];
	}
	qsort(us, (size_t)n, sizeof(*us), cmp_i64);
	printf("  %-44s median %7.2f ms  mean %7.2f ms  min %7.2f ms  (n=%d)\n", what,
	       us[n / 2] / 1000.0, sum / n / 1000.0, us[0] / 1000.0, n);
	free(us);
	return 0;
}

static json_t *exec_req(const char *const *argv)
{
	json_t *req = json_pack("{s:s,s:i}", "op", "exec", "timeout_ms", 20000);
	json_t *a = json_array();

	for (size_t i = 0; argv[i]; i++)
		json_array_append_new(a, json_string(argv[i]));
	json_object_set_new(req, "argv", a);
	return req;
}

/*
 * Figures for bench/vm-boot.sh: where boot time goes (QEMU launch to the
 * init's RQ-READY marker, the guest's own uptime then, the agent's first
 * answer) and what a request costs once the guests are up.
 */
static int vm_bench(struct rq_target *t, int n)
{
	static const char case_text[] =
		"cases:\n"
		"  - name: bench.noexec\n"
		"    kind: command\n"
		"    summary: a run that execs nothing, its need unmet so it skips\n"
		"    targets: [rxe-vm]\n"
		"    needs: [cmd:rdmaqual-bench-absent-tool]\n"
		"    argv: [\"true\"]\n";
	struct rq_suite suite = { 0 };
	struct rq_diags diags = { 0 };
	struct rq_vm *vm;
	struct rq_agent *a = rq_rxevm_agent(t, 0);
	int rc = 0;

	for (int i = 0; (vm = rq_rxevm_vm(t, i)); i++) {
		struct sb con = SB_INIT;
		const char *m;
		double up = -1;

		rq_vm_console_since(vm, 0, 1 << 20, &con);
		m = strstr(con.buf, "RQ-READY ");
		if (m)
			up = atof(m + 9);
		const char *as = strstr(con.buf, "agent start ");
		double aup = as ? atof(as + 12) : -1;

		/* Guest uptime and host time differ by QEMU's start before the kernel runs. */
		printf("  %s: launch to RQ-READY %.2f s (guest uptime then %.2f s: kernel+init+rxe; "
		       "agent exec at uptime %.2f s), to agent ready %.2f s\n",
		       vm->name, (vm->marker_ms - vm->launched_ms) / 1000.0, up, aup,
		       (vm->ready_ms - vm->launched_ms) / 1000.0);
		/* The init's own lines (not the kernel's "[ time ]" ones) show its steps. */
		if (getenv("RQ_VM_BENCH_CONSOLE"))
			for (char *l = strtok(con.buf, "\r\n"); l; l = strtok(NULL, "\r\n"))
				if (*l != '[') {
					char *safe = term_safe(l);	/* the guest's console */

					printf("    | %s\n", safe);
					free(safe);
				}
		sb_release(&con);
	}
	if (!a)
		return RQ_EXIT_FAIL;

	json_t *req = json_pack("{s:s}", "op", "hello");

	rc |= time_calls(a, "agent round trip: hello", req, n);
	json_decref(req);

	if (rq_load_buffer("bench", case_text, sizeof(case_text) - 1, &suite, &diags) || suite.ncases != 1) {
		rq_diags_print(&diags, stderr);
		rc = -1;
	} else {
		struct rq_request r;

		rq_request_init(&r, suite.cases[0], "rxe-vm", ROLE_SINGLE);
		r.timeout_ms = 20000;
		req = rq_request_to_json(&r);
		rq_request_release(&r);
		rc |= time_calls(a, "agent round trip: run of a case, no exec", req, n);
		json_decref(req);
	}
	rq_suite_release(&suite);
	rq_diags_release(&diags);

	static const char *const t_true[] = { "/bin/true", NULL };
	static const char *const t_bb[] = { "/bin/busybox", "true", NULL };
	static const char *const t_dv[] = { "ibv_devinfo", "-d", "rxe0", NULL };

	req = exec_req(t_true);
	rc |= time_calls(a, "exec of a host binary (/bin/true) over 9p", req, n);
	json_decref(req);
	if (!access("/bin/busybox", X_OK)) {
		req = exec_req(t_bb);
		rc |= time_calls(a, "exec of static busybox (true applet)", req, n);
		json_decref(req);
	}
	const char *t_rq[] = { rq_self_exe, "help", NULL };

	req = exec_req(t_rq);
	rc |= time_calls(a, "exec of rdmaqual help (the agent's own binary)", req, n > 5 ? 5 : n);
	json_decref(req);
	req = exec_req(t_dv);
	rc |= time_calls(a, "exec of ibv_devinfo -d rxe0 (dynamic, verbs)", req, n > 5 ? 5 : n);
	json_decref(req);
	return rc ? RQ_EXIT_FAIL : 0;
}

static int vm_boot_cmd(int argc, char **argv)
{
	return vm_boot(argc, argv, VM_BOOT);
}

static int vm_image_cmd(int argc, char **argv)
{
	return vm_boot(argc, argv, VM_IMAGE);
}

static int vm_bench_cmd(int argc, char **argv)
{
	return vm_boot(argc, argv, VM_BENCH);
}

static const struct cli_word vm_words[] = {
	{ "boot", vm_boot_cmd, "boot the guests, then pass lines to their agents" },
	{ "image", vm_image_cmd, "build the guests' kernel and initramfs only" },
	{ "bench", vm_bench_cmd, "boot, then time agent calls" },
};

int cmd_vm(int argc, char **argv)
{
	return cli_dispatch("vm", vm_words, ARRAY_SIZE(vm_words), argc, argv, vm_usage);
}

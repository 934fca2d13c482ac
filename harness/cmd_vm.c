// SPDX-License-Identifier: MIT
/*
 * Subcommands for people (and the guest init) around the rxe-vm target:
 *
 *   rdmaqual vm boot [--topology vm1|vm2] [--accel A] [--kernel P --modules D]
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
#include <unistd.h>
#include "agent.h"
#include "cli.h"
#include "proc.h"
#include "rxe_nl.h"
#include "statedir.h"
#include "target.h"
#include "util.h"
#include "vm.h"

extern const struct rq_target_ops rq_target_rxevm;

static void vm_usage(FILE *fp)
{
	fprintf(fp,
		"usage: rdmaqual vm boot [--topology vm1|vm2] [--accel kvm|tcg|auto]\n"
		"                        [--kernel PATH --modules DIR] [--state-dir DIR]\n"
		"       rdmaqual vm image [--kernel PATH --modules DIR]\n"
		"Boots the rxe-vm guests as a run does (see docs/vm.md).  After boot, lines\n"
		"typed here go to vm0's agent (prefix a line with \"vm1 \" for the second\n"
		"guest), e.g. {\"v\":1,\"id\":1,\"op\":\"exec\",\"argv\":[\"ibv_devinfo\"],\"timeout_ms\":5000}\n"
		"EOF or Ctrl-C stops the guests.\n");
}

/* Pass lines between stdin and the guests' agents until EOF or a signal. */
static void pump(struct rq_target *t, const sigset_t *sigs)
{
	struct rq_agent *ag[2] = { 0 };
	int n = 0;
	struct sb in = SB_INIT;

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

				if (r <= 0) {
					printf("[%s: channel closed]\n", ag[i - 1]->label);
					sb_release(&in);
					return;
				}
				fwrite(buf, 1, (size_t)r, stdout);
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
	sb_release(&in);
}

static int vm_boot(int argc, char **argv, bool image_only)
{
	static const struct option lo[] = {
		{ "topology", required_argument, NULL, 't' },
		{ "accel", required_argument, NULL, 'a' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "modules", required_argument, NULL, 'm' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct rq_run_opts o = { .target = "rxe-vm", .topology = "vm2", .accel = "auto" };
	struct rq_target t = { .ops = &rq_target_rxevm, .name = (char *)"rxe-vm", .opts = &o };
	char err[512], state_dir[4096];
	sigset_t sigs;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 't':
			if (strcmp(optarg, "vm1") && strcmp(optarg, "vm2"))
				return usage_error("vm", "--topology is vm1 or vm2, not \"%s\"", optarg);
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
		case 'h': vm_usage(stdout); return 0;
		default: vm_usage(stderr); return RQ_EXIT_USAGE;
		}
	}
	if (optind != argc)
		return usage_error("vm", "unexpected argument \"%s\"", argv[optind]);
	if (!!o.kernel != !!o.modules)
		return usage_error("vm", "--kernel and --modules go together");
	o.self_exe = rq_self_exe;

	if (image_only) {
		struct rq_vm_image img;

		rc = rq_vm_image_prepare(&o, &img, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "rdmaqual vm image: %s\n", err);
			return RQ_EXIT_FAIL;
		}
		printf("kernel:    %s (%s)\nimage:     %s%s\nmodules:   %s/lib/modules/%s\ninitramfs: %s\n",
		       img.kver, img.ksrc, img.kimage, img.pvh ? " (PVH vmlinux)" : " (bzImage)",
		       img.modroot, img.kver, img.initrd);
		return 0;
	}
	if (!o.state_dir) {
		statedir_default(state_dir, sizeof(state_dir));
		o.state_dir = state_dir;
	}
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
		fprintf(stderr, "rdmaqual vm boot: %s\n", err);
		t.ops->close(&t);
		return RQ_EXIT_FAIL;
	}
	struct rq_result *facts = rq_result_new("vm-boot", NULL, 0);

	t.ops->facts(&t, facts);
	printf("rxe-vm up in %.2f s (image prepare included):\n", (now_ms() - t0) / 1000.0);
	for (size_t i = 0; i < facts->nfacts; i++)
		printf("  %-18s %s\n", facts->facts[i].key, facts->facts[i].value);
	rq_result_free(facts);
	printf("Guests: vm0 10.77.0.1%s; rxe0 on eth0 in each; consoles and sockets in /tmp/rq-%d-*/\n"
	       "Type agent requests (JSON lines); EOF or Ctrl-C stops the guests.\n",
	       strcmp(o.topology, "vm2") ? "" : ", vm1 10.77.0.2", (int)getpid());
	fflush(stdout);
	pump(&t, &sigs);
	t.ops->close(&t);
	return 0;
}

int cmd_vm(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "boot"))
		return vm_boot(argc - 1, argv + 1, false);
	if (argc >= 2 && !strcmp(argv[1], "image"))
		return vm_boot(argc - 1, argv + 1, true);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		vm_usage(stdout);
		return 0;
	}
	vm_usage(stderr);
	return RQ_EXIT_USAGE;
}

int cmd_rxe(int argc, char **argv)
{
	char err[256];
	int rc;

	if (argc == 4 && !strcmp(argv[1], "add"))
		rc = rq_rxe_add(argv[2], argv[3], scaled_ms(10000), err, sizeof(err));
	else if (argc == 3 && (!strcmp(argv[1], "del") || !strcmp(argv[1], "delete")))
		rc = rq_rxe_del(argv[2], scaled_ms(10000), err, sizeof(err));
	else {
		fprintf(stderr, "usage: rdmaqual rxe add NAME NETDEV | rdmaqual rxe del NAME\n"
			"Creates or deletes a soft-RoCE link over RDMA netlink.\n");
		return RQ_EXIT_USAGE;
	}
	if (rc < 0) {
		fprintf(stderr, "rdmaqual rxe: %s\n", err);
		return RQ_EXIT_FAIL;
	}
	return 0;
}

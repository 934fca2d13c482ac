// SPDX-License-Identifier: MIT
/*
 * The rxe-vm target: soft-RoCE in QEMU guests, for nodes with no RDMA
 * hardware.  Topologies:
 *   vm1  one guest; both roles of a two-sided case run in it, over rxe0's
 *        loopback (10.77.0.1 to itself)
 *   vm2  two guests joined by a stream netdev; the client runs in vm0
 *        (10.77.0.1), the server in vm1 (10.77.0.2); one-sided cases run in vm0
 *   vmN  N guests (3..8) on one L2 segment, a bridge in a network namespace
 *        of the boot's own (vm/l2-segment.sh, shared with vm/lab-rig.sh; needs
 *        root); two-sided cases between vm0 and vm1, one-sided cases in vm0,
 *        which sees every guest: a case's {hosts}, {hostfile}, {nnodes}
 * Guests of vm2 and vmN run sshd with keys made for the boot
 * (vm/guest-ssh.sh), and root in each has an ssh client that reaches every
 * other guest by name, so MPI launchers (mpirun --host, a hostfile) work there.
 * Every guest runs the host's own binaries (/ over 9p) and `rdmaqual agent`
 * on a virtio-serial port; cases reach it through the agent protocol.
 *
 * A guest that dies or stops answering makes the case it held ERROR with
 * the console tail in its log, and the next case gets fresh guests.  New
 * kernel-log lines reporting a BUG, WARNING or Oops fail the case.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "agent/agent.h"
#include "core/kind.h"
#include "core/paths.h"
#include "core/proc.h"
#include "core/target.h"
#include "core/util.h"
#include "vm/vm.h"

#define QEMU_BIN "qemu-system-x86_64"
#define RXEVM_MAX RQ_VM_GUESTS_MAX

/*
 * The case keys this target owns (core/case.h: rq_key_owner): the guests a
 * case runs in.  A case that differs from the guests up gets new ones.
 */
struct rxevm_keys {
	long long vm_cpus;
	uint64_t vm_memory;
	bool fresh_guest;
	bool vm_scratch;
	bool udev;
};

/* 0 is "the run's"; a guest smaller than 128 MiB does not boot. */
static int check_vm_memory(const char *v, char *err, size_t errsz)
{
	uint64_t b;

	if (!parse_size(v, &b) && b && b < (128u << 20)) {
		snprintf(err, errsz, "%s is below the 128MiB a guest needs (0: the run's)", v);
		return -1;
	}
	return 0;
}

#define XK(f) offsetof(struct rxevm_keys, f)
static const struct key_def rxevm_key_rows[] = {
	{ .name = "vm_cpus", .type = KEY_INT, .offset = XK(vm_cpus), .def = "0", .min = 0, .max = 64,
	  .help = "vCPUs of each guest for this case (guests reboot when it differs); 0: the run's ($RQ_VM_CPUS, else 1)" },
	{ .name = "vm_memory", .type = KEY_SIZE, .offset = XK(vm_memory), .def = "0", .min = 0, .max = 64LL << 30,
	  .check = check_vm_memory,
	  .help = "memory of each guest for this case, at least 128MiB (guests reboot when it differs); 0: the run's ($RQ_VM_MEM_MB, else 512MiB)" },
	{ .name = "fresh_guest", .type = KEY_BOOL, .offset = XK(fresh_guest), .def = "false",
	  .help = "boot fresh guests for this case (nothing left in /run, /tmp, configfs or the modules by the cases before; costs a boot)" },
	{ .name = "vm_scratch", .type = KEY_BOOL, .offset = XK(vm_scratch), .def = "false",
	  .help = "guests with a scratch disk at /scratch for this case (ext4 on virtio-blk: O_DIRECT, which tmpfs lacks; its writes are gone with the guests; they reboot when it differs)" },
	{ .name = "udev", .type = KEY_BOOL, .offset = XK(udev), .def = "false",
	  .help = "guests running the host's systemd-udevd for this case (/dev/disk/by-id links, what multipath and SRP need; on anyway with vm_scratch; costs about a quarter of a TCG boot; they reboot when it differs)" },
	KEY_END
};
#undef XK

static const struct rq_key_owner rxevm_owner = {
	.name = "rxe-vm",
	.for_whom = "every kind",
	.keys = rxevm_key_rows,
	.cfg_size = sizeof(struct rxevm_keys),
};

struct rxevm {
	struct rq_vm_image img;
	enum rq_accel accel;
	char accel_why[160];
	int nguests;			/* the topology: vm1, vm2, ... vm8 */
	bool vm2;			/* two guests or more: two-sided cases span vm0 and vm1 */
	bool ssh;			/* the guests run sshd (vm/guest-ssh.sh's files) */
	char ns[64];			/* vmN's segment namespace, "" when none is up */
	char vmdir[1024];		/* vm/ (its scripts) */
	int cpus, mem_mb;		/* the run's: $RQ_VM_CPUS, $RQ_VM_MEM_MB */
	int boot_cpus, boot_mem_mb;	/* what the guests now up were booted with */
	int want_cpus, want_mem_mb;	/* what the next boot uses (the case's, or the run's) */
	bool want_scratch, boot_scratch;	/* the scratch disk (vm_scratch), next boot's and this one's */
	bool want_udev, boot_udev;	/* udevd asked for (a case's udev), next boot's and this one's */
	bool scratch_all;		/* $RQ_VM_SCRATCH=1: every boot has the scratch disk */
	const char *udev_env;		/* $RQ_VM_UDEV: "on" or "off" for every boot, or NULL */
	const char *init_mode;
	struct rq_vm vm[RXEVM_MAX];
	int nvm;
	bool up, broken;
	bool used;			/* a case ran in the guests now up (fresh_guest) */
	int gen;
	char dir[108];
	char state_dir[512];
	int64_t boot_ms;		/* last boot, launch to all ready */
	unsigned boots;
	bool snap_on;			/* $RQ_VM_SNAPSHOT=1: guests from snapshots (vm_snap.c) */
	bool restored;			/* the guests now up came from snapshots */
	unsigned restores;		/* boots that were restores */
	char snap_how[320];		/* what the last boot did with snapshots */
	char snap_dir[1100];		/* $RQ_VM_SNAPSHOT_DIR, else the image cache's snap/ */
};

/* A boot's use of snapshots: none, restore when they match (else save), save anew. */
enum snap_mode { SNAP_OFF, SNAP_USE, SNAP_SAVE };

static enum snap_mode snap_default(const struct rxevm *x)
{
	return x->snap_on ? SNAP_USE : SNAP_OFF;
}

static int env_int(const char *name, int def, int lo, int hi)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	v = strtol(s, &end, 10);
	if (*end || v < lo || v > hi)
		return def;
	return (int)v;
}

/* Readiness deadline: $RQ_VM_READY_TIMEOUT_MS (unscaled, for failure-path tests) or 90 s scaled. */
static int64_t ready_timeout_ms(void)
{
	const char *s = getenv("RQ_VM_READY_TIMEOUT_MS");

	if (s && *s && atoll(s) > 0)
		return atoll(s);
	return scaled_ms(90000);
}

static bool rxevm_available(const struct rq_run_opts *o, const char *arg, char *why, size_t whysz)
{
	char dir[1024];

	if (!cmd_exists(QEMU_BIN)) {
		snprintf(why, whysz, "%s not installed (Debian package qemu-system-x86)", QEMU_BIN);
		return false;
	}
	if (access(getenv("RQ_BUSYBOX") ? getenv("RQ_BUSYBOX") : "/bin/busybox", X_OK)) {
		snprintf(why, whysz, "busybox not installed (Debian package busybox-static)");
		return false;
	}
	if (rq_vm_dir(dir, sizeof(dir), why, whysz) < 0)
		return false;
	return true;
}

/* Run one of vm/'s scripts (argv, bounded); 0, or -1 with err holding its words. */
static int vm_script(struct rxevm *x, const char *const *args, char *err, size_t errsz)
{
	const char *argv[16];
	char path[1100];
	size_t n = 0;
	struct proc_result r;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", x->vmdir, args[0]);
	argv[n++] = path;
	for (size_t i = 1; args[i] && n < ARRAY_SIZE(argv) - 1; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	struct proc_opts o = { .argv = argv, .timeout_ms = scaled_ms(30000), .log_fd = -1 };

	proc_result_init(&r);
	rc = proc_run(&o, &r);
	if (rc == 0 && (r.exit_code || r.signal || r.exec_failed || r.timed_out)) {
		char how[160];

		proc_describe(&r, args[0], how, sizeof(how));
		sb_rtrim(&r.err);
		snprintf(err, errsz, "%s: %s%s%.300s", args[0], how, r.err.len ? ": " : "",
			 r.err.len ? r.err.buf : "");
		rc = -1;
	} else if (rc) {
		snprintf(err, errsz, "cannot run %s: %s", path, strerror(-rc));
		rc = -1;
	}
	proc_result_release(&r);
	return rc;
}

static void stop_all(struct rxevm *x)
{
	for (int i = 0; i < x->nvm; i++)
		rq_vm_stop(&x->vm[i], scaled_ms(3000));
	if (*x->ns) {
		const char *down[] = { "l2-segment.sh", "down", x->ns, NULL };
		char err[256];

		if (vm_script(x, down, err, sizeof(err)) < 0)
			fprintf(stderr, "rxe-vm: %s\n", err);
		*x->ns = '\0';
	}
	if (*x->dir) {
		rm_rf(x->dir);
		rq_vm_state_forget(x->state_dir, x->dir);
		*x->dir = '\0';
	}
	x->up = false;
}

/* Keep a copy of each console in the run's directory (they live in /tmp). */
static void save_consoles(struct rxevm *x, const struct rq_run_opts *o)
{
	if (!o || !o->run_dir || !*x->dir)
		return;
	for (int i = 0; i < x->nvm; i++) {
		struct sb s = SB_INIT;
		char *path = xasprintf("%s/console-%s-boot%u.log", o->run_dir, x->vm[i].name, x->boots);

		rq_vm_console_since(&x->vm[i], 0, 4 << 20, &s);
		if (s.len)
			write_file_atomic(path, s.buf, s.len);
		free(path);
		sb_release(&s);
	}
}

/* Launch the topology's guests with accel a and wait until all are ready. */
/*
 * The snapshot point: the guests wait there for their go line.  Saving,
 * each is saved first (a failure only costs the next boot its restore).
 */
static int snap_point(struct rxevm *x, struct rq_vm_spec *specs, char **desc,
		      char (*path)[1200], bool restore, int64_t deadline, char *err, size_t errsz)
{
	int saved = 0, rc;
	char why[256] = "";

	for (int i = 0; !restore && i < x->nvm; i++) {
		struct rq_vm *vm = &x->vm[i];

		while (!rq_vm_console_has(vm, "RQ-SNAP")) {
			if (rq_vm_gone(vm) || rq_vm_console_has(vm, "RQ-INIT-FAILED") ||
			    now_ms() >= deadline)
				return 0;	/* rq_vm_wait_ready says why */
			if (rq_interrupted) {
				snprintf(err, errsz, "interrupted by a signal while waiting for the guests");
				return -EINTR;
			}
			struct timespec ts = { 0, 5 * 1000000L };

			nanosleep(&ts, NULL);
		}
		rc = rq_snap_save(vm->qmp_sock, path[i], desc[i], now_ms() + scaled_ms(60000), why,
				  sizeof(why));
		if (rc == 0)
			saved++;
		else
			fprintf(stderr, "rxe-vm: %s: snapshot not saved: %s\n", vm->name, why);
	}
	for (int i = 0; restore && i < x->nvm; i++) {
		rc = rq_snap_resume(x->vm[i].qmp_sock, deadline, why, sizeof(why));
		if (rc < 0) {
			char how[256];

			/* a QEMU that refused the state has said why in its log */
			rq_vm_exit_why(&x->vm[i], how, sizeof(how));
			snprintf(err, errsz, "%s: %s; %s", x->vm[i].name, why, how);
			return rc;
		}
	}
	for (int i = 0; i < x->nvm; i++) {
		char *line = rq_vm_go_line(&specs[i]);

		rc = rq_vm_release(&x->vm[i], x->vm[i].go_sock, line, deadline, err, errsz);
		free(line);
		if (rc < 0)
			return rc;
	}
	if (saved)
		rq_snap_prune(x->snap_dir);
	if (restore)
		snprintf(x->snap_how, sizeof(x->snap_how), "restored: %d guest%s from snapshots in %.200s",
			 x->nvm, x->nvm == 1 ? "" : "s", x->snap_dir);
	else if (saved == x->nvm)
		snprintf(x->snap_how, sizeof(x->snap_how), "saved: %d guest%s booted, snapshots in %.200s",
			 x->nvm, x->nvm == 1 ? "" : "s", x->snap_dir);
	else
		snprintf(x->snap_how, sizeof(x->snap_how), "not saved: %.200s", why);
	return 0;
}

static int boot_once(struct rq_target *t, enum rq_accel a, int64_t timeout_ms,
		     enum snap_mode snap_mode, char *err, size_t errsz)
{
	struct rxevm *x = t->priv;
	const struct rq_run_opts *o = t->opts;
	struct rq_vm *vms[RXEVM_MAX];
	char *desc[RXEVM_MAX] = { 0 }, snap_path[RXEVM_MAX][1200];
	bool restore = false;
	int rc;

	x->gen++;
	x->boots++;
	/*
	 * mkdtemp, never a name made and removed by hand: another user could
	 * have put a link or dir there.  The pid stays in the name so a
	 * person (and the tests) can tell whose guests these are.
	 */
	snprintf(x->dir, sizeof(x->dir), "/tmp/rq-%d-%d.XXXXXX", (int)getpid(), x->gen);
	if (!mkdtemp(x->dir)) {
		rc = -errno;
		snprintf(err, errsz, "cannot create a directory %s: %s", x->dir, strerror(-rc));
		*x->dir = '\0';
		return rc;
	}
	/* Recorded before anything starts, so a SIGKILL right after leaves a trace. */
	rc = rq_vm_state_record(x->state_dir, x->dir, 0);
	if (rc < 0) {
		snprintf(err, errsz, "cannot write run state in %s: %s", x->state_dir, strerror(-rc));
		rm_rf(x->dir);
		*x->dir = '\0';
		return rc;
	}
	x->nvm = x->nguests;
	/* Every guest's /etc/hosts names all guests: "vm0@10.77.0.1,vm1@10.77.0.2". */
	char hosts[RXEVM_MAX * 24] = "", ssh_dir[160] = "";
	const char *guests[RXEVM_MAX + 3] = { "guest-ssh.sh", ssh_dir };
	char gname[RXEVM_MAX][32];

	for (int i = 0; i < x->nvm; i++) {
		size_t l = strlen(hosts);

		snprintf(hosts + l, sizeof(hosts) - l, "%svm%d@10.77.0.%d", i ? "," : "", i, i + 1);
		snprintf(gname[i], sizeof(gname[i]), "vm%d@10.77.0.%d", i, i + 1);
		guests[2 + i] = gname[i];
	}
	for (int i = 0; i < x->nvm; i++) {
		struct rq_vm *vm = &x->vm[i];

		memset(vm, 0, sizeof(*vm));
		vm->pid = -1;
		snprintf(vm->name, sizeof(vm->name), "vm%d", i);
		snprintf(vm->ip, sizeof(vm->ip), "10.77.0.%d", i + 1);
		snprintf(vm->agent_sock, sizeof(vm->agent_sock), "%s/%s.agent", x->dir, vm->name);
		snprintf(vm->console, sizeof(vm->console), "%s/%s.console", x->dir, vm->name);
		snprintf(vm->qemu_log, sizeof(vm->qemu_log), "%s/%s.qemu", x->dir, vm->name);
		if (x->nguests == 2)
			snprintf(vm->net_sock, sizeof(vm->net_sock), "%s/%s.net", x->dir, vm->name);
		vms[i] = vm;
	}
	/* sshd in every guest, keys made here for this boot (never the host's) */
	if (x->ssh) {
		snprintf(ssh_dir, sizeof(ssh_dir), "%s/ssh", x->dir);
		if (mkdir(ssh_dir, 0700) < 0) {
			rc = -errno;
			snprintf(err, errsz, "cannot create %s: %s", ssh_dir, strerror(-rc));
			goto fail;
		}
		if (vm_script(x, guests, err, errsz) < 0) {
			rc = -EIO;
			goto fail;
		}
	}
	/* vmN: the segment, a namespace named after this boot's dir */
	if (x->nguests > 2) {
		char n[8];
		char ns[64];

		rq_vm_netns_name(x->dir, ns, sizeof(ns));
		snprintf(n, sizeof(n), "%d", x->nguests);
		const char *up[] = { "l2-segment.sh", "up", ns, n, "10.77.0.254/24", NULL };

		if (vm_script(x, up, err, errsz) < 0) {
			rc = -EIO;
			goto fail;
		}
		snprintf(x->ns, sizeof(x->ns), "%s", ns);
	}
	int64_t start = now_ms();
	/*
	 * The link between two guests: a QEMU stream netdev over a unix socket
	 * by default.  The datagram netdev over unix sockets (RQ_VM_LINK=dgram)
	 * livelocks when the receiving guest falls behind: the host caps a unix
	 * datagram queue at 10 (net.unix.max_dgram_qlen), the sender gets
	 * EAGAIN, and an unconnected unix datagram socket polls writable at once,
	 * so QEMU spins.  Measured on a busy 2-core host: ib_write_bw 64 KiB
	 * 0.12 MB/s (dgram) against 15 MB/s (stream); quiet, dgram runs often
	 * failed outright.  A unix stream has no Nagle or delayed ACK (the ~45 ms
	 * per round trip measured over a TCP stream netdev), and like dgram it uses
	 * no port: concurrent runs cannot collide.
	 */
	const char *link = getenv("RQ_VM_LINK");
	bool stream = !(link && !strcmp(link, "dgram"));
	/* Per guest: its spec, the strings it points at, its snapshot. */
	struct rq_vm_spec specs[RXEVM_MAX];
	char ipn[RXEVM_MAX][40], mac[RXEVM_MAX][24], tag[RXEVM_MAX][32], tap[RXEVM_MAX][16];
	int state_fd[RXEVM_MAX];
	bool snap = snap_mode != SNAP_OFF;

	restore = snap;

	for (int i = 0; i < x->nvm; i++) {
		struct rq_vm *vm = &x->vm[i];
		struct rq_vm_spec spec = {
			.qemu = QEMU_BIN,
			.accel = a,
			.cpus = x->want_cpus,
			.mem_mb = x->want_mem_mb,
			.kimage = x->img.kimage,
			.initrd = x->img.initrd,
			.pvh = x->img.pvh,
			.self_exe = o->self_exe,
			.init_mode = x->init_mode,
			.hostname = vm->name,
			.hosts = hosts,
			.modroot = x->img.modroot,
			.console_path = vm->console,
			.agent_sock = vm->agent_sock,
			.net_local = x->nguests == 2 && !stream ? vm->net_sock : NULL,
			.net_remote = x->nguests == 2 && !stream ? x->vm[1 - i].net_sock : NULL,
			.net_stream = x->nguests == 2 && stream ? x->vm[0].net_sock : NULL,
			.net_server = i == 0,
			.cmdline = o->kernel_cmdline,
			.link_delay = o->link_delay,
			.netns = *x->ns ? x->ns : NULL,
			.ssh_dir = x->ssh ? ssh_dir : NULL,
			.scratch = x->want_scratch && x->img.scratch[0] ? x->img.scratch : NULL,
			/* a case's udev: true wins; unset, init's default (on with the scratch disk) */
			.udev = x->want_udev ? "on" : x->udev_env,
		};

		snprintf(tap[i], sizeof(tap[i]), "rqtap%d", i);
		snprintf(ipn[i], sizeof(ipn[i]), "%s/24", vm->ip);
		snprintf(mac[i], sizeof(mac[i]), "52:54:00:77:00:%02x", i + 1);
		snprintf(tag[i], sizeof(tag[i]), "%d-%s", (int)getpid(), vm->name);
		spec.tap = tap[i];
		spec.ip = ipn[i];
		spec.mac = mac[i];
		spec.tag = tag[i];
		if (a == RQ_ACCEL_TCG)
			spec.tsc_khz = rq_host_tsc_khz();
		state_fd[i] = -1;
		snap_path[i][0] = '\0';
		if (snap) {
			snprintf(vm->go_sock, sizeof(vm->go_sock), "%s/%s.go", x->dir, vm->name);
			snprintf(vm->qmp_sock, sizeof(vm->qmp_sock), "%s/%s.qmp", x->dir, vm->name);
			spec.go_sock = vm->go_sock;
			spec.qmp_sock = vm->qmp_sock;
			desc[i] = rq_snap_describe(&spec);
			if (!desc[i] || rq_snap_path(x->snap_dir, desc[i], vm->name, snap_path[i],
						     sizeof(snap_path[i])) < 0) {
				snprintf(x->snap_how, sizeof(x->snap_how),
					 "off: %.200s is not a private dir of ours", x->snap_dir);
				snap = restore = false;
			}
		}
		specs[i] = spec;
	}
	/* Restore only when every guest has a snapshot that matches: else save them all. */
	for (int i = 0; restore && i < x->nvm; i++)
		if (snap_mode == SNAP_SAVE || (state_fd[i] = rq_snap_open(snap_path[i], desc[i])) < 0)
			restore = false;
	for (int i = 0; i < x->nvm; i++) {
		struct rq_vm *vm = &x->vm[i];

		if (!snap)
			specs[i].go_sock = specs[i].qmp_sock = NULL;
		if (restore)
			specs[i].state_fd = state_fd[i];
		else if (state_fd[i] >= 0)
			close(state_fd[i]);
		rc = rq_vm_launch(vm, &specs[i], err, errsz);
		if (restore)
			close(state_fd[i]);
		if (rc < 0)
			goto fail;
		rq_vm_state_record(x->state_dir, x->dir, vm->pid);
		if (x->nguests == 2 && stream && i == 0) {
			/* QEMU 7.2's stream client does not retry: let vm0 listen first. */
			int64_t until = now_ms() + scaled_ms(10000);
			struct stat st;

			while (stat(vm->net_sock, &st) < 0 && now_ms() < until && !rq_vm_gone(vm)) {
				struct timespec ts = { 0, 5 * 1000000L };

				nanosleep(&ts, NULL);
			}
		}
	}
	if (snap) {
		rc = snap_point(x, specs, desc, snap_path, restore, now_ms() + timeout_ms, err, errsz);
		if (rc < 0)
			goto fail;
	}
	rc = rq_vm_wait_ready(vms, x->nvm, now_ms() + timeout_ms, err, errsz);
	if (rc < 0)
		goto fail;
	x->boot_ms = now_ms() - start;
	x->restored = restore;
	x->restores += restore;
	x->boot_cpus = x->want_cpus;
	x->boot_scratch = x->want_scratch;
	x->boot_udev = x->want_udev;
	x->boot_mem_mb = x->want_mem_mb;
	x->accel = a;
	x->up = true;
	x->used = false;
	x->broken = false;
	for (int i = 0; i < x->nvm; i++)
		free(desc[i]);
	return 0;
fail:
	save_consoles(x, o);
	stop_all(x);
	for (int i = 0; i < x->nvm; i++) {
		/* a snapshot that did not come up is not tried again */
		if (restore && *snap_path[i])
			rq_snap_forget(snap_path[i]);
		free(desc[i]);
	}
	if (restore && rc != -EINTR) {
		fprintf(stderr, "rxe-vm: restore from snapshots failed (%s): booting afresh\n", err);
		snprintf(x->snap_how, sizeof(x->snap_how), "restore failed (%.120s): booted and saved anew",
			 err);
		return boot_once(t, a, timeout_ms, SNAP_SAVE, err, errsz);
	}
	return rc;
}

static int boot(struct rq_target *t, char *err, size_t errsz)
{
	struct rxevm *x = t->priv;
	const struct rq_run_opts *o = t->opts;
	const char *want = o->accel && *o->accel ? o->accel : "auto";
	char key[512], why[160];
	int rc;

	if (!strcmp(want, "tcg")) {
		snprintf(x->accel_why, sizeof(x->accel_why), "forced by --accel tcg");
		return boot_once(t, RQ_ACCEL_TCG, ready_timeout_ms(), snap_default(x), err, errsz);
	}
	if (!strcmp(want, "kvm")) {
		snprintf(x->accel_why, sizeof(x->accel_why), "forced by --accel kvm");
		return boot_once(t, RQ_ACCEL_KVM, ready_timeout_ms(), snap_default(x), err, errsz);
	}
	if (strcmp(want, "auto")) {
		snprintf(err, errsz, "--accel %s: expected kvm, tcg or auto", want);
		return -EINVAL;
	}
	if (x->boots) {
		/* A reboot after a guest died: the accelerator is known by now. */
		return boot_once(t, x->accel, ready_timeout_ms(), snap_default(x), err, errsz);
	}
	if (!rq_kvm_usable(why, sizeof(why))) {
		snprintf(x->accel_why, sizeof(x->accel_why), "%s", why);
		return boot_once(t, RQ_ACCEL_TCG, ready_timeout_ms(), snap_default(x), err, errsz);
	}
	rq_accel_key(QEMU_BIN, x->img.kver, key, sizeof(key));
	switch (rq_accel_verdict_get(x->img.cache, key)) {
	case 1:
		snprintf(x->accel_why, sizeof(x->accel_why), "KVM verdict cached");
		return boot_once(t, RQ_ACCEL_KVM, ready_timeout_ms(), snap_default(x), err, errsz);
	case 0:
		snprintf(x->accel_why, sizeof(x->accel_why),
			 "cached verdict: guest does not boot under KVM here");
		return boot_once(t, RQ_ACCEL_TCG, ready_timeout_ms(), snap_default(x), err, errsz);
	}
	/* Probe: a KVM guest is ready in about a second, or never. */
	char perr[256];

	rc = boot_once(t, RQ_ACCEL_KVM, env_int("RQ_VM_KVM_PROBE_MS", 10000, 100, 600000),
		       snap_default(x), perr, sizeof(perr));
	if (rc == 0) {
		rq_accel_verdict_put(x->img.cache, key, RQ_ACCEL_KVM);
		snprintf(x->accel_why, sizeof(x->accel_why), "KVM probe booted");
		return 0;
	}
	rc = boot_once(t, RQ_ACCEL_TCG, ready_timeout_ms(), snap_default(x), err, errsz);
	if (rc == 0) {
		/* Only a guest that boots under TCG convicts KVM. */
		rq_accel_verdict_put(x->img.cache, key, RQ_ACCEL_TCG);
		snprintf(x->accel_why, sizeof(x->accel_why), "KVM probe failed (%.100s)", perr);
	}
	return rc;
}

static int rxevm_open(struct rq_target *t, char *err, size_t errsz)
{
	const struct rq_run_opts *o = t->opts;
	struct rxevm *x;
	const char *topo = o->topology && *o->topology ? o->topology : "vm2";
	int rc, n = rq_vm_topology_guests(topo);

	if (n < 0) {
		snprintf(err, errsz, "--vm-topology %s: expected vm1, vm2, ... vm%d", topo, RXEVM_MAX);
		return -EINVAL;
	}
	if (n > 2 && geteuid() != 0) {
		snprintf(err, errsz, "--vm-topology %s: %d guests share a bridge in a network "
			 "namespace, which needs root", topo, n);
		return -EPERM;
	}
	if (n > 2 && !cmd_exists("ip")) {
		snprintf(err, errsz, "--vm-topology %s: ip not installed (Debian package iproute2)",
			 topo);
		return -ENOENT;
	}
	if (!o->self_exe || o->self_exe[0] != '/') {
		snprintf(err, errsz, "rxe-vm needs the absolute path of rdmaqual (self_exe)");
		return -EINVAL;
	}
	/* The guest has its own of these (its init re-binds a binary's dir under /tmp, /run). */
	static const char *const hidden[] = { "/dev/", "/proc/", "/sys/" };

	for (size_t i = 0; i < ARRAY_SIZE(hidden); i++) {
		if (str_starts(o->self_exe, hidden[i])) {
			snprintf(err, errsz, "rdmaqual at %s: the guests cannot see it (%s is their "
				 "own); build it elsewhere", o->self_exe, hidden[i]);
			return -EINVAL;
		}
	}
	x = xcalloc(1, sizeof(*x));
	t->priv = x;
	x->nguests = n;
	x->vm2 = n >= 2;
	if (rq_vm_dir(x->vmdir, sizeof(x->vmdir), err, errsz) < 0)
		return -ENOENT;
	/* MPI launchers need sshd in the guests: the host's, when installed */
	x->ssh = n >= 2 && cmd_exists("ssh-keygen") && !access("/usr/sbin/sshd", X_OK);
	x->cpus = env_int("RQ_VM_CPUS", 1, 1, 64);
	x->mem_mb = env_int("RQ_VM_MEM_MB", 512, 128, 65536);
	x->want_cpus = x->cpus;
	x->want_mem_mb = x->mem_mb;
	x->init_mode = getenv("RQ_VM_INIT_MODE");
	/* Knobs for bench/vm-boot.sh: what a boot costs with the disk, with udevd or without. */
	const char *e = getenv("RQ_VM_SCRATCH");

	x->scratch_all = e && !strcmp(e, "1");
	x->want_scratch = x->scratch_all;
	e = getenv("RQ_VM_UDEV");
	if (e && (!strcmp(e, "on") || !strcmp(e, "off")))
		x->udev_env = e;
	/* Snapshots: one or two guests (vmN's taps are a namespace's, made per boot). */
	e = getenv("RQ_VM_SNAPSHOT");
	x->snap_on = e && !strcmp(e, "1") && n <= 2;
	snprintf(x->snap_how, sizeof(x->snap_how), "%s", x->snap_on ? "on" :
		 e && !strcmp(e, "1") ? "off: not for vm3 and more" : "off ($RQ_VM_SNAPSHOT=1 turns it on)");
	rq_vm_state_dir(o, x->state_dir, sizeof(x->state_dir));
	rc = rq_vm_image_prepare(o, &x->img, err, errsz);
	if (rc < 0)
		return rc;
	e = getenv("RQ_VM_SNAPSHOT_DIR");
	if (e && *e) {
		/* the image cache's rule: ours, and under dirs only root or we can change */
		char why[512];

		if (x->snap_on && rq_cache_check(e, x->snap_dir, sizeof(x->snap_dir), why,
						 sizeof(why)) < 0) {
			x->snap_on = false;
			snprintf(x->snap_how, sizeof(x->snap_how), "off: $RQ_VM_SNAPSHOT_DIR %.250s",
				 why);
			fprintf(stderr, "rxe-vm: snapshots off: $RQ_VM_SNAPSHOT_DIR %s\n", why);
		}
	} else
		snprintf(x->snap_dir, sizeof(x->snap_dir), "%.1000s/snap", x->img.cache);
	return boot(t, err, errsz);
}

/* Is every guest still there and answering?  A quick hello, bounded. */
static bool guests_alive(struct rxevm *x, bool ping, char *why, size_t whysz)
{
	for (int i = 0; i < x->nvm; i++) {
		struct rq_vm *vm = &x->vm[i];

		if (rq_vm_gone(vm)) {
			snprintf(why, whysz, "guest %s is gone (QEMU exited)", vm->name);
			return false;
		}
		if (!vm->agent || vm->agent->dead) {
			snprintf(why, whysz, "guest %s: agent channel closed%s%.180s", vm->name,
				 vm->agent ? ": " : "", vm->agent ? vm->agent->dead_why : "");
			return false;
		}
		if (ping) {
			json_t *req = json_pack("{s:s}", "op", "hello");
			char w[200];
			json_t *resp = rq_agent_call(vm->agent, req, scaled_ms(5000), w, sizeof(w));

			json_decref(req);
			if (!resp) {
				snprintf(why, whysz, "guest %s stopped answering: %s", vm->name, w);
				return false;
			}
			json_decref(resp);
		}
	}
	return true;
}

static int rxevm_place(struct rq_target *t, const struct rq_case *c, struct rq_placement *p,
		       char *err, size_t errsz)
{
	struct rxevm *x = t->priv;
	char why[256];
	bool two;
	int rc;

	if (!x) {
		snprintf(err, errsz, "rxe-vm target not open");
		return -EINVAL;
	}
	/* vm_cpus / vm_memory: the case's size, else the run's. */
	const struct rxevm_keys none = { 0 }, *xk = rq_case_keys(c, &rxevm_owner) ?: &none;

	x->want_cpus = xk->vm_cpus ? (int)xk->vm_cpus : x->cpus;
	x->want_mem_mb = xk->vm_memory ? (int)(xk->vm_memory >> 20) : x->mem_mb;
	x->want_scratch = xk->vm_scratch || x->scratch_all;
	x->want_udev = xk->udev;
	if (x->up && !x->broken &&
	    (x->want_cpus != x->boot_cpus || x->want_mem_mb != x->boot_mem_mb ||
	     x->want_scratch != x->boot_scratch || x->want_udev != x->boot_udev ||
	     (xk->fresh_guest && x->used))) {
		/*
		 * Guests of another size, or guests a case before has used when
		 * this one asks for fresh ones: the next boot makes them.
		 */
		save_consoles(x, t->opts);
		stop_all(x);
	}
	if (!x->up || x->broken || !guests_alive(x, false, why, sizeof(why))) {
		/* The case before left dead guests (its rows say why): start afresh. */
		save_consoles(x, t->opts);
		stop_all(x);
		rc = boot(t, err, errsz);
		if (rc < 0)
			return rc;
	}
	for (int i = 0; i < x->nvm; i++) {
		struct sb s = SB_INIT;

		x->vm[i].console_mark = rq_vm_console_since(&x->vm[i], 0, 0, &s);
		sb_release(&s);
	}
	x->used = true;
	two = c && c->kind && c->kind->two_sided;
	p->side[0] = x->vm[0].agent;
	p->side[1] = two && x->vm2 ? x->vm[1].agent : x->vm[0].agent;
	snprintf(p->addr[0], sizeof(p->addr[0]), "%s", x->vm[0].ip);
	snprintf(p->addr[1], sizeof(p->addr[1]), "%s", two && x->vm2 ? x->vm[1].ip : x->vm[0].ip);
	p->root = "";
	/* What kinds may want to know about the place: the rxe device and its netdev. */
	p->where.rdma_dev = xstrdup("rxe0");
	p->where.netdev = xstrdup("eth0");
	/* each side's hostname, client first (the {peer_host} of a command pair) */
	p->where.host[0] = xstrdup(x->vm[0].name);
	p->where.host[1] = xstrdup(two && x->vm2 ? x->vm[1].name : x->vm[0].name);
	/*
	 * nodes: every guest, for a case that runs once on the first node for
	 * all of them (an MPI launch: {hosts}, {hostfile}, {nnodes}, {np}),
	 * by name (each guest's /etc/hosts has the others); slots: each one's
	 * CPUs.  Reached over ssh from vm0 when ssh is up.
	 */
	for (int i = 0; i < x->nvm; i++)
		rq_where_add_node(&p->where, x->vm[i].name, NULL);
	p->where.slots = x->boot_cpus;
	return 0;
}

static void row_override(struct rq_result *r, enum rq_verdict v, const char *reason)
{
	r->verdict = v;
	free(r->reason);
	r->reason = xstrdup(reason);
}

static void rxevm_unplace(struct rq_target *t, const struct rq_case *c, struct rq_placement *p,
			  struct rq_results *rows)
{
	struct rxevm *x = t->priv;
	bool any_error = false;
	char why[256];

	if (!x || !x->up)
		return;
	for (size_t i = 0; rows && i < rows->n; i++)
		if (rows->v[i]->verdict == RQ_ERROR)
			any_error = true;
	/* After an ERROR the guest may be hung rather than dead: ask it. */
	if (!guests_alive(x, any_error, why, sizeof(why))) {
		struct sb tail = SB_INIT;
		char *reason;

		x->broken = true;
		struct sb bad = SB_INIT;

		for (int i = 0; i < x->nvm; i++) {
			struct sb news = SB_INIT;
			int st;

			/* A panicking guest takes a moment to power off: let QEMU go. */
			if (x->vm[i].pid > 0 && !x->vm[i].exited &&
			    proc_wait_deadline(x->vm[i].pid, now_ms() + scaled_ms(2000), &st) == 1) {
				x->vm[i].exited = true;
				x->vm[i].wstatus = st;
			}
			sb_addf(&tail, "---- console of %s (tail) ----\n", x->vm[i].name);
			rq_vm_console_tail(&x->vm[i], 4096, &tail);
			rq_vm_console_since(&x->vm[i], x->vm[i].console_mark, 1 << 20, &news);
			if (!bad.len)
				rq_klog_find_bad(news.buf, news.len, &bad);
			sb_release(&news);
		}
		if (bad.len) {
			/* The first kernel complaint says more than "channel closed". */
			size_t n = strcspn(bad.buf, "\r\n");

			reason = xasprintf("%s; kernel: %.*s; the next case gets fresh guests", why,
					   (int)(n < 160 ? n : 160), bad.buf);
		} else {
			reason = xasprintf("%s; the next case gets fresh guests", why);
		}
		sb_release(&bad);
		if (rows && rows->n == 0 && c)
			rq_results_add(rows, rq_result_new(c->name, NULL, 0));
		for (size_t i = 0; rows && i < rows->n; i++) {
			row_override(rows->v[i], RQ_ERROR, reason);
			sb_add(&rows->v[i]->log, tail.buf, tail.len);
		}
		free(reason);
		sb_release(&tail);
		return;
	}
	/* New kernel-log lines during the case: a BUG/WARNING/Oops fails it. */
	for (int i = 0; i < x->nvm; i++) {
		struct sb news = SB_INIT, bad = SB_INIT;

		rq_vm_console_since(&x->vm[i], x->vm[i].console_mark, 1 << 20, &news);
		if (rq_klog_find_bad(news.buf, news.len, &bad)) {
			char first[200];
			size_t n = strcspn(bad.buf, "\r\n");

			snprintf(first, sizeof(first), "kernel log of %s: %.*s", x->vm[i].name,
				 (int)(n < 150 ? n : 150), bad.buf);
			for (size_t j = 0; rows && j < rows->n; j++) {
				struct rq_result *r = rows->v[j];

				if (r->verdict != RQ_ERROR)
					row_override(r, RQ_FAIL, first);
				sb_addf(&r->log, "---- new kernel log lines on %s ----\n", x->vm[i].name);
				for (size_t k = 0; k < news.len; k++)
					if (news.buf[k] != '\r')
						sb_addc(&r->log, news.buf[k]);
			}
		}
		sb_release(&news);
		sb_release(&bad);
	}
}

static void rxevm_close(struct rq_target *t)
{
	struct rxevm *x = t->priv;

	if (!x)
		return;
	save_consoles(x, t->opts);
	stop_all(x);
	free(x);
	t->priv = NULL;
}

static void rxevm_facts(struct rq_target *t, struct rq_result *sink)
{
	struct rxevm *x = t->priv;
	char buf[64];

	if (!x || !*x->img.kver)
		return;
	rq_fact_add(sink, "vm.guest_kernel", x->img.kver);
	rq_fact_add(sink, "vm.kernel_source", x->img.ksrc);
	if (*x->img.kpkg) {
		rq_fact_add(sink, "vm.kernel_package", x->img.kpkg);
		rq_fact_add(sink, "vm.kernel_package_version", x->img.kpkgver);
		rq_fact_add(sink, "vm.kernel_origin", x->img.korigin);
	}
	if (*x->img.kcache)
		rq_fact_add(sink, "vm.kernel_cache", x->img.kcache);
	snprintf(buf, sizeof(buf), "vm%d", x->nguests);
	rq_fact_add(sink, "vm.topology", buf);
	/* which image builders and init booted them: a checkout's vm/ or an install's libexec */
	rq_fact_add(sink, "vm.scripts", x->vmdir);
	rq_fact_add(sink, "vm.scratch", x->img.scratch[0] ?
		    "for cases with vm_scratch: /scratch, ext4 on virtio-blk /dev/vda (1 GiB, its writes "
		    "thrown away with the guest)" :
		    "none: mke2fs (e2fsprogs) made no scratch image");
	/* The guests run the host's udevd, seen through 9p. */
	rq_fact_add(sink, "vm.udev", access("/lib/systemd/systemd-udevd", X_OK) ?
		    "none: no /lib/systemd/systemd-udevd on the host (udev)" :
		    "for cases with udev or vm_scratch: the host's systemd-udevd (block devices "
		    "replayed at boot: /dev/disk/by-id)");
	if (t->opts->kernel_cmdline && *t->opts->kernel_cmdline)
		rq_fact_add(sink, "vm.kernel_cmdline", t->opts->kernel_cmdline);
	if (t->opts->link_delay && *t->opts->link_delay)
		rq_fact_add(sink, "vm.link_delay", t->opts->link_delay);
	if (x->nguests > 2) {
		rq_fact_add(sink, "vm.link", "bridge in a network namespace (vm/l2-segment.sh)");
	} else if (x->vm2) {
		const char *link = getenv("RQ_VM_LINK");

		rq_fact_add(sink, "vm.link", link && !strcmp(link, "dgram") ? "unix dgram" : "unix stream");
	}
	if (x->vm2)
		rq_fact_add(sink, "vm.ssh", x->ssh ? "sshd in every guest, keys made per boot"
			    : "no sshd in the guests (openssh-server or ssh-keygen not installed)");
	if (x->boots) {
		rq_fact_add(sink, "vm.accel", rq_accel_name(x->accel));
		rq_fact_add(sink, "vm.accel_why", x->accel_why);
		snprintf(buf, sizeof(buf), "%.2f", x->boot_ms / 1000.0);
		rq_fact_add(sink, "vm.boot_s", buf);
		snprintf(buf, sizeof(buf), "%u", x->boots);
		rq_fact_add(sink, "vm.boots", buf);
		snprintf(buf, sizeof(buf), "%u", x->restores);
		rq_fact_add(sink, "vm.restores", buf);
	}
	rq_fact_add(sink, "vm.snapshot", x->snap_how);
	snprintf(buf, sizeof(buf), "%d", x->cpus);
	rq_fact_add(sink, "vm.cpus", buf);
	snprintf(buf, sizeof(buf), "%d", x->mem_mb);
	rq_fact_add(sink, "vm.memory_mb", buf);
}

static void rxevm_cleanup_stale(const struct rq_run_opts *o)
{
	char dir[512];
	struct sb msgs = SB_INIT;

	rq_vm_state_dir(o, dir, sizeof(dir));
	rq_vm_cleanup_stale(dir, &msgs);
	if (msgs.len)
		fprintf(stderr, "rxe-vm cleanup:\n%s", msgs.buf);
	sb_release(&msgs);
}

struct rq_agent *rq_rxevm_agent(struct rq_target *t, int i)
{
	struct rxevm *x = t->priv;

	if (!x || !x->up || i < 0 || i >= x->nvm)
		return NULL;
	return x->vm[i].agent;
}

struct rq_vm *rq_rxevm_vm(struct rq_target *t, int i)
{
	struct rxevm *x = t->priv;

	if (!x || !x->up || i < 0 || i >= x->nvm)
		return NULL;
	return &x->vm[i];
}

/* auto, without a ConnectX: the soft-RoCE guests, for every kind but the fabric ones. */
static int rxevm_auto_rank(const struct rq_case *c, char *why, size_t whysz)
{
	(void)c;
	snprintf(why, whysz, "no ConnectX present: soft-RoCE in QEMU");
	return 3;
}

const struct rq_target_ops rq_target_rxevm = {
	.name = "rxe-vm",
	.keys = &rxevm_owner,
	.help = "soft-RoCE (rdma_rxe) in QEMU guests: vm1 (loopback), vm2 (two guests) or "
		"vm3..vm8 (N guests on one bridge; root)",
	.in_guest = true,
	.auto_rank = rxevm_auto_rank,
	.available = rxevm_available,
	.open = rxevm_open,
	.place = rxevm_place,
	.unplace = rxevm_unplace,
	.close = rxevm_close,
	.facts = rxevm_facts,
	.cleanup_stale = rxevm_cleanup_stale,
};

/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the rxe-vm pieces that need no guest: the QEMU command
 * line (microvm + PVH, dgram link vs hub port, accel, TSC hint), the
 * kernel-log scanner, persisted accelerator verdicts, and run-state
 * cleanup killing a leftover "QEMU" (a copy of sleep named qemu-fake whose
 * argv holds the recorded dir) while leaving live runs alone.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "core/proc.h"
#include "core/util.h"
#include "vm/vm.h"
#include "check_main.h"

static char tmpdir[64];

static void setup(void)
{
	strcpy(tmpdir, "/tmp/rq-vmtest-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	prctl(PR_SET_CHILD_SUBREAPER, 1);
}

static void teardown(void)
{
	rm_rf(tmpdir);
}

static int argv_find(char **argv, const char *s)
{
	for (int i = 0; argv[i]; i++)
		if (!strcmp(argv[i], s))
			return i;
	return -1;
}

static bool argv_has_sub(char **argv, const char *s)
{
	for (int i = 0; argv[i]; i++)
		if (strstr(argv[i], s))
			return true;
	return false;
}

/*
 * A guest that stops at the snapshot point: the port rq-go and a QMP
 * monitor; its command line keeps what init reads before the point (the
 * user's words, rq.mode), and the go line has this boot's own words.
 */
START_TEST(argv_snapshot_point)
{
	struct rq_vm_spec s = {
		.qemu = "qemu-system-x86_64", .accel = RQ_ACCEL_TCG, .kimage = "/c/vmlinux",
		.initrd = "/c/initrd.cpio", .pvh = true, .self_exe = "/w/rdmaqual",
		.ip = "10.77.0.1/24", .hostname = "vm0", .init_mode = "norxe",
		.cmdline = "rdma_rxe.x=1", .console_path = "/tmp/rq-1-1/vm0.console",
		.agent_sock = "/tmp/rq-1-1/vm0.agent", .go_sock = "/tmp/rq-1-1/vm0.go",
		.qmp_sock = "/tmp/rq-1-1/vm0.qmp", .ssh_dir = "/tmp/rq-1-1/ssh", .tag = "1-vm0",
	};
	char **argv = rq_vm_argv(&s);
	int i = argv_find(argv, "-append");

	ck_assert_ptr_nonnull(strstr(argv[i + 1], "rdma_rxe.x=1"));
	ck_assert_ptr_nonnull(strstr(argv[i + 1], "rq.mode=norxe"));
	ck_assert_ptr_null(strstr(argv[i + 1], "rq.exe="));
	ck_assert_ptr_null(strstr(argv[i + 1], "rq.ssh="));
	ck_assert(argv_has_sub(argv, "socket,id=c1,path=/tmp/rq-1-1/vm0.go,server=on,wait=off"));
	ck_assert(argv_has_sub(argv, "virtserialport,chardev=c1,name=rq-go"));
	i = argv_find(argv, "-qmp");
	ck_assert_str_eq(argv[i + 1], "unix:/tmp/rq-1-1/vm0.qmp,server=on,wait=off");
	ck_assert_int_lt(argv_find(argv, "-incoming"), 0);
	rq_argv_free(argv);

	/* restoring: the state comes in on QEMU's stdin */
	s.state_fd = 7;
	argv = rq_vm_argv(&s);
	i = argv_find(argv, "-incoming");
	ck_assert_int_ge(i, 0);
	ck_assert_str_eq(argv[i + 1], "fd:0");
	rq_argv_free(argv);

	char *line = rq_vm_go_line(&s), seed[65];
	long long t;
	int n = 0;

	ck_assert_int_eq(sscanf(line, "RQGO %64[0-9a-f] %lld %n", seed, &t, &n), 2);
	ck_assert_uint_eq(strlen(seed), 64);
	ck_assert(llabs(t - (long long)time(NULL)) <= 2);
	ck_assert_str_eq(line + n, "rq.exe=/w/rdmaqual rq.ip=10.77.0.1/24 rq.name=vm0 "
			 "rq.ssh=/tmp/rq-1-1/ssh\n");
	char *line2 = rq_vm_go_line(&s);

	ck_assert_str_ne(line, line2);	/* each restore gets a seed of its own */
	free(line);
	free(line2);
}
END_TEST

static void put_file(const char *path, const char *s)
{
	ck_assert_int_eq(write_file_atomic(path, s, strlen(s)), 0);
}

/*
 * What a snapshot must match: the files' identity and the machine, not
 * this boot's paths or the TSC rate measured per run; a state whose
 * description differs is never opened, nor one in a dir others can write.
 */
START_TEST(snapshot_match)
{
	char k[128], in[128], q[128], cache[128], path[1200], state[1300];
	struct rq_vm_spec s = {
		.qemu = q, .accel = RQ_ACCEL_TCG, .mem_mb = 512, .kimage = k, .initrd = in,
		.pvh = true, .self_exe = "/w/rdmaqual", .console_path = "/tmp/rq-1-1/vm0.console",
		.agent_sock = "/tmp/rq-1-1/vm0.agent", .go_sock = "/tmp/rq-1-1/vm0.go",
		.qmp_sock = "/tmp/rq-1-1/vm0.qmp", .tag = "1-vm0", .tsc_khz = 2596120,
	};

	snprintf(k, sizeof(k), "%s/vmlinux", tmpdir);
	snprintf(in, sizeof(in), "%s/initrd", tmpdir);
	snprintf(q, sizeof(q), "%s/qemu", tmpdir);
	snprintf(cache, sizeof(cache), "%s/snap", tmpdir);
	put_file(k, "kernel");
	put_file(in, "initrd");
	put_file(q, "qemu");
	ck_assert_int_eq(mkdir(cache, 0700), 0);
	char *d1 = rq_snap_describe(&s);

	ck_assert_ptr_nonnull(d1);
	/* another boot of the same machine: other paths, another TSC reading */
	s.console_path = "/tmp/rq-2-5/vm0.console";
	s.agent_sock = "/tmp/rq-2-5/vm0.agent";
	s.go_sock = "/tmp/rq-2-5/vm0.go";
	s.qmp_sock = "/tmp/rq-2-5/vm0.qmp";
	s.tag = "2-vm0";
	s.tsc_khz = 2596300;
	char *d2 = rq_snap_describe(&s);

	ck_assert_str_eq(d1, d2);
	free(d2);
	/* another machine: more memory */
	s.mem_mb = 1024;
	d2 = rq_snap_describe(&s);
	ck_assert_str_ne(d1, d2);
	free(d2);
	s.mem_mb = 512;
	ck_assert_int_eq(rq_snap_path(cache, d1, "vm0", path, sizeof(path)), 0);
	ck_assert_int_eq(rq_snap_open(path, d1), -ENOENT);
	put_file(path, "QEVM state");
	snprintf(state, sizeof(state), "%s.desc", path);
	put_file(state, d1);
	int fd = rq_snap_open(path, d1);

	ck_assert_int_ge(fd, 0);
	close(fd);
	/* a rebuilt initramfs: the description differs, the old state is not used */
	put_file(in, "initrd, rebuilt");
	d2 = rq_snap_describe(&s);
	ck_assert_str_ne(d1, d2);
	ck_assert_int_eq(rq_snap_open(path, d2), -ESTALE);
	free(d2);
	/* ... and pruning removes it, and a killed save's old temporary, not a new one */
	char old_tmp[1300], new_tmp[1300];
	struct timespec past[2] = { { time(NULL) - 3600, 0 }, { time(NULL) - 3600, 0 } };

	snprintf(old_tmp, sizeof(old_tmp), "%s.1.tmp", path);
	snprintf(new_tmp, sizeof(new_tmp), "%s.2.tmp", path);
	put_file(old_tmp, "partial");
	put_file(new_tmp, "being written");
	ck_assert_int_eq(utimensat(AT_FDCWD, old_tmp, past, 0), 0);
	rq_snap_prune(cache);
	ck_assert_int_ne(access(path, F_OK), 0);
	ck_assert_int_ne(access(state, F_OK), 0);
	ck_assert_int_ne(access(old_tmp, F_OK), 0);
	ck_assert_int_eq(access(new_tmp, F_OK), 0);
	/* a snapshot of the files as they are now stays */
	char cur[1200], cur_desc[1300];

	d2 = rq_snap_describe(&s);
	ck_assert_int_eq(rq_snap_path(cache, d2, "vm0", cur, sizeof(cur)), 0);
	snprintf(cur_desc, sizeof(cur_desc), "%s.desc", cur);
	put_file(cur, "QEVM state");
	put_file(cur_desc, d2);
	rq_snap_prune(cache);
	fd = rq_snap_open(cur, d2);
	ck_assert_int_ge(fd, 0);
	close(fd);
	free(d2);
	put_file(path, "QEVM state");
	put_file(state, d1);
	/* the kernel gone: no description at all */
	unlink(k);
	ck_assert_ptr_null(rq_snap_describe(&s));
	/* a link in place of the state is not followed */
	unlink(path);
	ck_assert_int_eq(symlink(state, path), 0);
	ck_assert_int_lt(rq_snap_open(path, d1), 0);
	rq_snap_forget(path);
	ck_assert_int_ne(access(state, F_OK), 0);
	/* a snapshot dir somebody else may write is refused */
	ck_assert_int_eq(chmod(cache, 0777), 0);
	ck_assert_int_eq(rq_snap_path(cache, d1, "vm0", path, sizeof(path)), -EPERM);
	free(d1);
}
END_TEST

START_TEST(argv_vm2_tcg)
{
	struct rq_vm_spec s = {
		.qemu = "qemu-system-x86_64", .accel = RQ_ACCEL_TCG, .cpus = 2, .mem_mb = 768,
		.kimage = "/c/vmlinux", .initrd = "/c/initrd.cpio", .pvh = true,
		.self_exe = "/w/rdmaqual", .ip = "10.77.0.2/24", .mac = "52:54:00:77:00:02",
		.console_path = "/tmp/rq-1-1/vm1.console", .agent_sock = "/tmp/rq-1-1/vm1.agent",
		.net_local = "/tmp/rq-1-1/vm1.net", .net_remote = "/tmp/rq-1-1/vm0.net",
		.tag = "1-vm1", .tsc_khz = 2596120,
	};
	char **argv = rq_vm_argv(&s);
	int i;

	ck_assert_str_eq(argv[0], "qemu-system-x86_64");
	i = argv_find(argv, "-M");
	ck_assert_int_ge(i, 0);
	ck_assert_str_eq(argv[i + 1], "microvm,pcie=on,acpi=on,rtc=on");
	i = argv_find(argv, "-accel");
	ck_assert_str_eq(argv[i + 1], "tcg");
	/* RDRAND for the guest's CRNG under TCG (else /dev/urandom blocks ~1 s). */
	i = argv_find(argv, "-cpu");
	ck_assert_int_ge(i, 0);
	ck_assert_str_eq(argv[i + 1], "max");
	i = argv_find(argv, "-smp");
	ck_assert_str_eq(argv[i + 1], "2");
	i = argv_find(argv, "-m");
	ck_assert_str_eq(argv[i + 1], "768");
	ck_assert_int_ge(argv_find(argv, "-no-reboot"), 0);
	i = argv_find(argv, "-kernel");
	ck_assert_str_eq(argv[i + 1], "/c/vmlinux");
	i = argv_find(argv, "-append");
	ck_assert_ptr_nonnull(strstr(argv[i + 1], "rq.exe=/w/rdmaqual"));
	ck_assert_ptr_nonnull(strstr(argv[i + 1], "rq.ip=10.77.0.2/24"));
	ck_assert_ptr_nonnull(strstr(argv[i + 1], "tsc_early_khz=2596120"));
	ck_assert_ptr_nonnull(strstr(argv[i + 1], "loglevel=5"));
	ck_assert_ptr_nonnull(strstr(argv[i + 1], "panic=-1 reboot=t"));
	ck_assert_ptr_null(strstr(argv[i + 1], "rq.mode="));
	/* The datagram link (RQ_VM_LINK=dgram), over unix sockets. */
	ck_assert(argv_has_sub(argv, "dgram,id=n0,local.type=unix,local.path=/tmp/rq-1-1/vm1.net,"
				     "remote.type=unix,remote.path=/tmp/rq-1-1/vm0.net"));
	ck_assert(!argv_has_sub(argv, "stream"));
	ck_assert(argv_has_sub(argv, "socket,id=c0,path=/tmp/rq-1-1/vm1.agent,server=on,wait=off"));
	ck_assert(argv_has_sub(argv, "virtserialport,chardev=c0,name=rq0"));
	ck_assert(argv_has_sub(argv, "readonly=on"));
	ck_assert(argv_has_sub(argv, "mac=52:54:00:77:00:02"));
	rq_argv_free(argv);
}
END_TEST

START_TEST(argv_vm2_stream_link)
{
	struct rq_vm_spec s = {
		.kimage = "/k", .initrd = "/i", .self_exe = "/w/rq", .console_path = "/tmp/c",
		.agent_sock = "/tmp/a", .net_stream = "/tmp/rq-1-1/vm0.net", .net_server = true,
	};
	char **argv = rq_vm_argv(&s);

	ck_assert(argv_has_sub(argv, "stream,id=n0,server=on,addr.type=unix,addr.path=/tmp/rq-1-1/vm0.net"));
	ck_assert(!argv_has_sub(argv, "dgram"));
	ck_assert(!argv_has_sub(argv, "inet"));
	rq_argv_free(argv);
	s.net_server = false;
	argv = rq_vm_argv(&s);
	ck_assert(argv_has_sub(argv, "stream,id=n0,server=off,addr.type=unix,addr.path=/tmp/rq-1-1/vm0.net"));
	rq_argv_free(argv);
}
END_TEST

START_TEST(argv_vm1_kvm_hang)
{
	struct rq_vm_spec s = {
		.accel = RQ_ACCEL_KVM, .kimage = "/k", .initrd = "/i", .self_exe = "/w/rq",
		.console_path = "/tmp/c", .agent_sock = "/tmp/a", .init_mode = "hang",
	};
	char **argv = rq_vm_argv(&s);
	int i;

	i = argv_find(argv, "-accel");
	ck_assert_str_eq(argv[i + 1], "kvm");
	ck_assert_int_lt(argv_find(argv, "-cpu"), 0);
	ck_assert(argv_has_sub(argv, "virtio-rng-pci"));
	i = argv_find(argv, "-smp");
	ck_assert_str_eq(argv[i + 1], "1");
	i = argv_find(argv, "-m");
	ck_assert_str_eq(argv[i + 1], "512");
	i = argv_find(argv, "-append");
	ck_assert_ptr_nonnull(strstr(argv[i + 1], "rq.mode=hang"));
	ck_assert_ptr_null(strstr(argv[i + 1], "tsc_early_khz"));
	ck_assert(argv_has_sub(argv, "hubport,id=n0,hubid=0"));
	ck_assert(!argv_has_sub(argv, "dgram"));
	rq_argv_free(argv);
}
END_TEST

/* --link-delay: what tc netem takes as a delay, bounded; it reaches the guest as rq.delay=. */
START_TEST(link_delay)
{
	static const char *const good[] = { "150us", "1us", "2ms", "0.5ms", "1000ms", "999999us" };
	static const char *const bad[] = { "", "150", "us", "0us", "0.5us", "1001ms", "1s", "-5us", "5 us",
					   "5usx", "1234567us", "1.2345678ms", "5us rq.mode=hang" };
	struct rq_vm_spec s = {
		.accel = RQ_ACCEL_TCG, .kimage = "/k", .initrd = "/i", .self_exe = "/w/rq",
		.console_path = "/tmp/c", .agent_sock = "/tmp/a", .link_delay = "150us",
	};
	char err[200], **argv;
	int i;

	for (size_t k = 0; k < sizeof(good) / sizeof(good[0]); k++)
		ck_assert_msg(!rq_link_delay_check(good[k], err, sizeof(err)), "%s: %s", good[k], err);
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		ck_assert_msg(rq_link_delay_check(bad[k], err, sizeof(err)) == -EINVAL, "accepted \"%s\"", bad[k]);
	ck_assert_ptr_nonnull(strstr(err, "is not a number of us or ms"));
	argv = rq_vm_argv(&s);
	i = argv_find(argv, "-append");
	ck_assert_ptr_nonnull(strstr(argv[i + 1], " rq.delay=150us"));
	rq_argv_free(argv);
	s.link_delay = NULL;
	argv = rq_vm_argv(&s);
	i = argv_find(argv, "-append");
	ck_assert_ptr_null(strstr(argv[i + 1], "rq.delay"));
	/* udevd: a case's udev reaches init as rq.udev=on; unset, no word (init's default) */
	ck_assert_ptr_null(strstr(argv[i + 1], "rq.udev"));
	rq_argv_free(argv);
	s.udev = "on";
	argv = rq_vm_argv(&s);
	i = argv_find(argv, "-append");
	ck_assert_ptr_nonnull(strstr(argv[i + 1], " rq.udev=on"));
	rq_argv_free(argv);
}
END_TEST

START_TEST(klog_scanner)
{
	const char *log =
		"[    1.5] eth0 speed is unknown\n"
		"rq-init: loading\n"
		"[   12.0] ------------[ cut here ]------------\n"
		"[   12.0] WARNING: CPU: 0 PID: 77 at drivers/infiniband/sw/rxe/rxe_comp.c:1\n"
		"[   13.1] BUG: kernel NULL pointer dereference, address: 0000000000000008\n"
		"[   13.1] Oops: 0000 [#1] PREEMPT SMP NOPTI\n"
		"[   20.0] watchdog: BUG: soft lockup - CPU#0 stuck for 22s!\n"
		"[   20.5] virtio_net virtio1 eth0: NETDEV WATCHDOG: CPU: 0: transmit queue 0 timed out 5000 ms\r\n"
		"[   21.0] all fine here";
	struct sb out = SB_INIT;

	ck_assert_uint_eq(rq_klog_find_bad(log, strlen(log), &out), 5);
	/* The serial console's \r is not part of the line. */
	ck_assert_ptr_null(strchr(out.buf, '\r'));
	ck_assert_ptr_nonnull(strstr(out.buf, "WARNING: CPU: 0"));
	ck_assert_ptr_nonnull(strstr(out.buf, "soft lockup"));
	ck_assert_ptr_null(strstr(out.buf, "speed is unknown"));
	ck_assert_ptr_null(strstr(out.buf, "all fine"));
	sb_reset(&out);
	ck_assert_uint_eq(rq_klog_find_bad("nothing\nto see\n", 15, &out), 0);
	ck_assert_uint_eq(out.len, 0);
	sb_release(&out);
}
END_TEST

START_TEST(accel_verdicts_persist)
{
	ck_assert_int_eq(rq_accel_verdict_get(tmpdir, "h1|q|g1"), -1);
	ck_assert_int_eq(rq_accel_verdict_put(tmpdir, "h1|q|g1", RQ_ACCEL_TCG), 0);
	ck_assert_int_eq(rq_accel_verdict_put(tmpdir, "h1|q|g2", RQ_ACCEL_KVM), 0);
	ck_assert_int_eq(rq_accel_verdict_get(tmpdir, "h1|q|g1"), 0);
	ck_assert_int_eq(rq_accel_verdict_get(tmpdir, "h1|q|g2"), 1);
	/* A new verdict for a key replaces the old one; other keys stay. */
	ck_assert_int_eq(rq_accel_verdict_put(tmpdir, "h1|q|g1", RQ_ACCEL_KVM), 0);
	ck_assert_int_eq(rq_accel_verdict_get(tmpdir, "h1|q|g1"), 1);
	ck_assert_int_eq(rq_accel_verdict_get(tmpdir, "h1|q|g2"), 1);
	ck_assert_int_eq(rq_accel_verdict_get(tmpdir, "h1|q"), -1);

	/* Planted verdicts are not read: through a link, or a file not ours. */
	char *f = xasprintf("%s/accel-verdicts", tmpdir);
	char *planted = xasprintf("%s/planted", tmpdir);

	ck_assert_int_eq(write_file_atomic(planted, "kvm h1|q|g3\n", 12), 0);
	ck_assert_int_eq(unlink(f), 0);
	ck_assert_int_eq(symlink(planted, f), 0);
	ck_assert_int_eq(rq_accel_verdict_get(tmpdir, "h1|q|g3"), -1);
	ck_assert_int_eq(unlink(f), 0);
	ck_assert_int_eq(rename(planted, f), 0);
	ck_assert_int_eq(rq_accel_verdict_get(tmpdir, "h1|q|g3"), 1);
	ck_assert_int_eq(chmod(f, 0666), 0);
	ck_assert_int_eq(rq_accel_verdict_get(tmpdir, "h1|q|g3"), -1);
	if (geteuid() == 0) {
		ck_assert_int_eq(chmod(f, 0644), 0);
		ck_assert_int_eq(chown(f, 65534, 65534), 0);
		ck_assert_int_eq(rq_accel_verdict_get(tmpdir, "h1|q|g3"), -1);
	}
	free(f);
	free(planted);
}
END_TEST

/* Start a fake QEMU (a copy of sleep called qemu-fake) whose argv holds dir. */
static pid_t fake_qemu(const char *dir)
{
	char *bin = xasprintf("%s/qemu-fake", dir);
	struct sb sleep_bin = SB_INIT;
	pid_t pid;

	ck_assert_int_eq(read_file("/bin/sleep", &sleep_bin, 0), 0);
	ck_assert_int_eq(write_file_atomic(bin, sleep_bin.buf, sleep_bin.len), 0);
	ck_assert_int_eq(chmod(bin, 0755), 0);
	sb_release(&sleep_bin);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		execl(bin, bin, "1000", (char *)NULL);
		_exit(127);
	}
	free(bin);
	/* Wait until it is qemu-fake (exec done) so cleanup can recognize it. */
	for (int i = 0; i < 200; i++) {
		char path[64], comm[64] = "";

		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		if (read_line(path, comm, sizeof(comm)) == 0 && !strcmp(comm, "qemu-fake"))
			break;
		usleep(10000);
	}
	return pid;
}

static bool pid_dead(pid_t pid)
{
	int st;

	for (int i = 0; i < 300; i++) {
		/* Reaped here, or already by cleanup (it reaps what it kills). */
		if (waitpid(pid, &st, WNOHANG) == pid || (kill(pid, 0) < 0 && errno == ESRCH))
			return true;
		usleep(10000);
	}
	return false;
}

START_TEST(cleanup_kills_leftovers_only)
{
	char state[128], dead_dir[128], live_dir[128], rec[256];
	pid_t dead_runner, q_dead, q_live;
	struct sb msgs = SB_INIT;

	snprintf(state, sizeof(state), "%s/state", tmpdir);
	ck_assert_int_eq(mkdir_p(state, 0700), 0);
	snprintf(dead_dir, sizeof(dead_dir), "/tmp/rq-%d-91", (int)getpid());
	snprintf(live_dir, sizeof(live_dir), "/tmp/rq-%d-92", (int)getpid());
	ck_assert_int_eq(mkdir_p(dead_dir, 0700), 0);
	ck_assert_int_eq(mkdir_p(live_dir, 0700), 0);

	/* A runner that is gone: a child that exited. */
	dead_runner = fork();
	if (dead_runner == 0)
		_exit(0);
	waitpid(dead_runner, NULL, 0);
	q_dead = fake_qemu(dead_dir);
	snprintf(rec, sizeof(rec), "%s/rxevm-%d", state, (int)dead_runner);
	char *text = xasprintf("vm 0 %s\nvm %d %s\n", dead_dir, (int)q_dead, dead_dir);
	ck_assert_int_eq(write_file_atomic(rec, text, strlen(text)), 0);
	free(text);

	/* This process's own record (a live run: comm is not rdmaqual, so it
	 * counts as gone unless named so; record it through the API and check
	 * forget removes it). */
	ck_assert_int_eq(rq_vm_state_record(state, live_dir, 0), 0);
	q_live = fake_qemu(live_dir);
	rq_vm_state_forget(state, live_dir);
	snprintf(rec, sizeof(rec), "%s/rxevm-%d", state, (int)getpid());
	ck_assert_int_ne(access(rec, F_OK), 0);

	ck_assert_int_eq(rq_vm_cleanup_stale(state, &msgs), 1);
	ck_assert(pid_dead(q_dead));
	ck_assert_ptr_nonnull(strstr(msgs.buf, "killed QEMU"));
	ck_assert_int_ne(access(dead_dir, F_OK), 0);
	snprintf(rec, sizeof(rec), "%s/rxevm-%d", state, (int)dead_runner);
	ck_assert_int_ne(access(rec, F_OK), 0);
	/* The unrecorded one is untouched. */
	ck_assert_int_eq(kill(q_live, 0), 0);
	kill(q_live, SIGKILL);
	ck_assert(pid_dead(q_live));
	rm_rf(live_dir);
	sb_release(&msgs);
}
END_TEST

START_TEST(tsc_rate_plausible)
{
#if defined(__x86_64__)
	long khz = rq_host_tsc_khz();

	/* Any x86 TSC of the last 15 years: 0.5 to 6 GHz. */
	ck_assert_int_gt(khz, 500000);
	ck_assert_int_lt(khz, 6000000);
#endif
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, argv_vm2_tcg);
	tcase_add_test(tc, argv_snapshot_point);
	tcase_add_test(tc, snapshot_match);
	tcase_add_test(tc, argv_vm2_stream_link);
	tcase_add_test(tc, argv_vm1_kvm_hang);
	tcase_add_test(tc, link_delay);
	tcase_add_test(tc, klog_scanner);
	tcase_add_test(tc, accel_verdicts_persist);
	tcase_add_test(tc, cleanup_kills_leftovers_only);
	tcase_add_test(tc, tsc_rate_plausible);
}

RQ_CHECK_MAIN("vm", add_tests)

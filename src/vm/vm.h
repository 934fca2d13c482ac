/* SPDX-License-Identifier: MIT */
/*
 * QEMU guests for the rxe-vm target: the guest image (kernel + initramfs,
 * built by the scripts in vm/), the QEMU command line, the accelerator
 * verdict, one VM's lifecycle (spawn, readiness, console, stop) and the
 * run-state records that let `rdmaqual cleanup` remove what a killed run
 * left behind.  target_rxevm.c puts these together; nothing here knows
 * about cases or kinds.
 */
#ifndef RQ_VM_H
#define RQ_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/util.h"

struct rq_agent;
struct rq_run_opts;

/* ---- the guest image (vm_image.c) ---- */

struct rq_vm_image {
	char ksrc[16];		/* host | debian | user */
	char kver[128];		/* guest kernel release */
	char kimage[1024];	/* -kernel argument */
	bool pvh;		/* kimage is a PVH ELF vmlinux */
	char modroot[1024];
	char initrd[1024];
	char vm_dir[1024];	/* the vm/ directory of the scripts */
	char scratch[1024];	/* the empty ext4 image every guest attaches (snapshot=on), or "" */
	char cache[1024];	/* the cache directory */
	/* Debian kernels: the package, its exact version, where it came from
	 * ("URI SUITE/main") and whether it was fetched now, reused from the
	 * cache, or reused because no mirror answered ("offline").  Empty for
	 * host and user kernels. */
	char kpkg[128], kpkgver[128], korigin[256], kcache[16];
};

/*
 * A --kernel-cmdline argument: words of printable ASCII without quotes or
 * backslashes, at most 1000 characters, none of the words the harness sets
 * itself (rq.*, init=, rdinit=, console=, panic=).  MODULE.PARAM=VALUE
 * words are given to that module's insmod by the guest's init, as
 * modprobe would.  0, or -EINVAL with err naming the word.
 */
int rq_kernel_cmdline_check(const char *s, char *err, size_t errsz);

/*
 * A --link-delay argument: the one-way delay the guests' init adds to
 * every packet leaving eth0 (tc netem), "150us" or "2ms": a whole or
 * decimal number of at most 6 digits each side of the point, with the unit
 * us or ms, from 1 us to 1 s.  0, or -EINVAL with a reason.
 */
int rq_link_delay_check(const char *s, char *err, size_t errsz);

/* Is this --kernel argument a Debian spec (debian:SUITE, debian:PKG=VER)? */
bool rq_kernel_spec_is_debian(const char *k);

/*
 * Where the image scripts are: $RQ_VM_DIR, else the checkout's vm/ or the
 * install's libexec dir (core/paths.h: only a tree nobody else may
 * change).  0, or -errno with err saying why.
 */
int rq_vm_dir(char *buf, size_t size, char *err, size_t errsz);
/* Run vm/kernel.sh and vm/initramfs.sh (cached, fast when nothing changed). */
int rq_vm_image_prepare(const struct rq_run_opts *o, struct rq_vm_image *img,
			char *err, size_t errsz);

/* ---- the QEMU command line (vm_qemu.c) ---- */

enum rq_accel { RQ_ACCEL_TCG, RQ_ACCEL_KVM };

/* Everything that goes into one VM's command line. */
struct rq_vm_spec {
	const char *qemu;		/* "qemu-system-x86_64" */
	enum rq_accel accel;
	int cpus, mem_mb;
	const char *kimage, *initrd;
	bool pvh;			/* microvm + PVH vmlinux; else microvm + bzImage */
	const char *self_exe;		/* rq.exe= */
	const char *ip;			/* "10.77.0.1/24" */
	const char *mac;		/* "52:54:00:77:00:01" */
	const char *init_mode;		/* rq.mode= or NULL */
	const char *hostname;		/* rq.name= (the guest's hostname) or NULL */
	const char *hosts;		/* rq.hosts= "vm0@10.77.0.1,vm1@10.77.0.2" or NULL */
	const char *modroot;		/* rq.modroot= (ROOT/lib/modules/RELEASE) or NULL */
	const char *console_path;	/* serial console captured here */
	const char *agent_sock;		/* virtio-serial port rq0's host socket */
	/* Network: both NULL: a hub port of its own (one-VM loopback);
	 * else a datagram link between two unix sockets. */
	const char *net_local, *net_remote;
	/* Or a stream link over one unix socket: vm0 listens (server), vm1 connects. */
	const char *net_stream;
	bool net_server;
	/* Or a tap on an L2 segment (vm/l2-segment.sh): QEMU runs in netns. */
	const char *netns, *tap;
	const char *ssh_dir;		/* rq.ssh= (vm/guest-ssh.sh's files) or NULL */
	const char *tag;		/* a unique word in the argv (cleanup matches it) */
	long tsc_khz;			/* > 0: tsc_early_khz= (TCG: the guest TSC is the host's) */
	const char *cmdline;		/* the user's words (rq_kernel_cmdline_check'd), or NULL */
	const char *link_delay;		/* rq.delay= (rq_link_delay_check'd), or NULL */
	const char *scratch;		/* an ext4 image attached as virtio-blk, snapshot=on, or NULL */
	const char *udev;		/* rq.udev= ("on", "off"), or NULL: init's default */
	/*
	 * Snapshots (vm_snap.c): go_sock set, the guest has the port rq-go
	 * and a QMP monitor at qmp_sock, and its command line has only what
	 * its init uses before the snapshot point; the rest is the go line's
	 * (rq_vm_go_line).  state_fd > 0: QEMU loads the guest's state from
	 * it (a snapshot, given as its stdin) instead of booting.
	 */
	const char *go_sock, *qmp_sock;
	int state_fd;
};

/* argv (NULL-terminated, each element and the array malloc'd). */
char **rq_vm_argv(const struct rq_vm_spec *s);
/*
 * The line that releases a guest waiting at its snapshot point: "RQGO",
 * a CRNG seed, the host's clock, then this boot's rq.* words (malloc'd).
 */
char *rq_vm_go_line(const struct rq_vm_spec *s);

/* ---- snapshots (vm_snap.c) ---- */

/*
 * What a snapshot of spec's guest must match to be used (malloc'd), or
 * NULL when QEMU, the kernel, the initramfs or the scratch image cannot
 * be found.
 */
char *rq_snap_describe(const struct rq_vm_spec *spec);
/* DIR/HASH-VM (DIR made if missing; it must be the euid's, written by nobody else).  0 or -errno. */
int rq_snap_path(const char *dir, const char *desc, const char *vm, char *buf, size_t size);
/* The state file open for reading if its description is desc; else -errno (-ESTALE, -ENOENT). */
int rq_snap_open(const char *path, const char *desc);
/*
 * Remove the snapshots in dir whose kernel, initramfs, QEMU or scratch
 * image is gone or changed (they can never match again), and the
 * temporary files of saves killed more than ten minutes ago.
 */
void rq_snap_prune(const char *dir);
/* Remove a snapshot (one that did not come up): never tried again. */
void rq_snap_forget(const char *path);
/*
 * Save the guest behind qmp_sock to path (stop, migrate to the file, cont:
 * the guest goes on either way).  0, or -errno with err.
 */
int rq_snap_save(const char *qmp_sock, const char *path, const char *desc, int64_t deadline,
		 char *err, size_t errsz);
/*
 * Start a guest restored from a snapshot once QEMU has loaded it (it was
 * saved stopped, so it stays paused until told).  0, or -errno with err.
 */
int rq_snap_resume(const char *qmp_sock, int64_t deadline, char *err, size_t errsz);
/*
 * The network namespace of the L2 segment of a run dir ("/tmp/rq-12-1.AbC"
 * -> "rqvm-12-1.AbC"): derived from the dir, so that cleanup after a killed
 * run finds it from the recorded dir alone.
 */
void rq_vm_netns_name(const char *dir, char *buf, size_t size);
/* The guests of a topology, "vm1" .. "vm8" (RQ_VM_GUESTS_MAX), or -1. */
#define RQ_VM_GUESTS_MAX 8
int rq_vm_topology_guests(const char *topo);
void rq_argv_free(char **argv);
/* The host TSC rate in kHz, measured over 20 ms (0 when not x86). */
long rq_host_tsc_khz(void);

/* ---- one VM (vm_qemu.c) ---- */

struct rq_vm {
	char name[16];			/* "vm0" */
	char dir[108];			/* the run's temp dir (sockets, console) */
	char agent_sock[128], net_sock[128], console[128], qemu_log[128];
	char ip[32];			/* "10.77.0.1" */
	pid_t pid;			/* QEMU (own process group), or -1 */
	struct rq_agent *agent;		/* NULL until ready */
	int64_t launched_ms, marker_ms, ready_ms;	/* now_ms() stamps: launch, RQ-READY seen, hello answered */
	off_t console_mark;		/* console size when the current case began */
	int go_fd;			/* the port rq-go's host side (rq_vm_release), or -1 */
	char go_sock[128], qmp_sock[128];
	bool exited;
	int wstatus;
};

/* Start QEMU (argv from spec).  0 or -errno with err. */
int rq_vm_launch(struct rq_vm *vm, const struct rq_vm_spec *spec, char *err, size_t errsz);
/*
 * Wait for n VMs to become ready until deadline: the console shows the
 * init's RQ-READY marker and the agent answers hello.  Fails early when a
 * QEMU exits or an init reports RQ-INIT-FAILED.  Returns 0, or -errno with
 * err naming the VM and why (plus the last console line).
 */
int rq_vm_wait_ready(struct rq_vm **vms, int n, int64_t deadline_ms, char *err, size_t errsz);
/* Has QEMU exited?  Reaps it.  Fills vm->exited. */
bool rq_vm_gone(struct rq_vm *vm);
/* How QEMU ended, with the last line of its log ("QEMU exited 1 (...)"). */
void rq_vm_exit_why(struct rq_vm *vm, char *buf, size_t size);
/* Has the console printed mark since QEMU started? */
bool rq_vm_console_has(const struct rq_vm *vm, const char *mark);
/*
 * Release a guest waiting at its snapshot point: attach the agent's
 * channel, connect to the port rq-go (until deadline) and send line.  The
 * connection stays open until rq_vm_stop (a port whose host side closes
 * reads as EOF in the guest).  0 or -errno with err.
 */
int rq_vm_release(struct rq_vm *vm, const char *go_sock, const char *line, int64_t deadline,
		  char *err, size_t errsz);
/* Ask the agent to shut down (bounded), then kill QEMU's group and reap it. */
void rq_vm_stop(struct rq_vm *vm, int64_t grace_ms);
/* The last max bytes of the console (whole lines), into sb. */
void rq_vm_console_tail(const struct rq_vm *vm, size_t max, struct sb *sb);
/* Console bytes from offset `from` to the end, into sb (at most max). */
off_t rq_vm_console_since(const struct rq_vm *vm, off_t from, size_t max, struct sb *sb);
/* Lines of text that report a kernel BUG, WARNING, Oops, panic or lockup, into out. */
size_t rq_klog_find_bad(const char *text, size_t len, struct sb *out);

/* ---- accelerator verdicts (vm_accel.c) ---- */

/* The persisted verdict for this host/QEMU/guest kernel: 1 kvm, 0 tcg, -1 unknown. */
int rq_accel_verdict_get(const char *cache, const char *key);
int rq_accel_verdict_put(const char *cache, const char *key, enum rq_accel a);
/* "host-kernel|qemu-version|guest-kernel" */
void rq_accel_key(const char *qemu, const char *guest_kver, char *buf, size_t size);
/* Can /dev/kvm be opened read-write? */
bool rq_kvm_usable(char *why, size_t whysz);
const char *rq_accel_name(enum rq_accel a);

/* ---- run state and cleanup (vm_state.c) ---- */

/* The directory for run-state files: o->state_dir, else the runner's default (harness/exec/statedir.c). */
const char *rq_vm_state_dir(const struct rq_run_opts *o, char *buf, size_t size);
/* Record (before launching) that this run owns dir; QEMUs whose argv holds dir are ours. */
int rq_vm_state_record(const char *state_dir, const char *dir, pid_t qemu_pid);
/* Forget dir (after a clean stop).  Removes the file when empty. */
void rq_vm_state_forget(const char *state_dir, const char *dir);
/*
 * Kill every QEMU recorded by runs that are gone (only processes whose
 * /proc/PID/cmdline holds the recorded dir), remove their dirs and records.
 * Returns the number of QEMU processes killed; log lines go to msgs.
 */
int rq_vm_cleanup_stale(const char *state_dir, struct sb *msgs);

/* ---- the target (target_rxevm.c) ---- */

struct rq_target;
/* Guest i's agent of an open rxe-vm target, or NULL (for `rdmaqual vm boot`). */
struct rq_agent *rq_rxevm_agent(struct rq_target *t, int i);
/* Guest i of an open rxe-vm target, or NULL (for `rdmaqual vm bench`). */
struct rq_vm *rq_rxevm_vm(struct rq_target *t, int i);

#endif

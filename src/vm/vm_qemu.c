// SPDX-License-Identifier: MIT
/*
 * One QEMU guest: its command line, launch, readiness, console and stop.
 *
 * The recipe is the one measured in docs/vm.md: microvm with the PVH
 * vmlinux (the bzImage spends most of a TCG boot decompressing itself),
 * virtio-pci devices, the host's / read-only over 9p, the serial console
 * captured to a file (it is the guest's kernel log: loglevel=5 lets
 * WARNINGs through and keeps the boot chatter off the slow UART), the agent
 * on a virtio-serial port whose host end is a unix socket, and a datagram
 * netdev between two VMs (never the TCP stream flavour: ~45 ms per RC round
 * trip through Nagle/delayed ACK).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "agent/agent.h"
#include "core/proc.h"
#include "core/util.h"
#include "vm/vm.h"

#define READY_MARK "RQ-READY"
#define FAIL_MARK "RQ-INIT-FAILED"

struct argv_b {
	char **v;
	size_t n, cap;
};

static void add(struct argv_b *a, const char *s)
{
	if (a->n + 2 > a->cap) {
		a->cap = a->cap ? a->cap * 2 : 48;
		a->v = xrealloc(a->v, a->cap * sizeof(*a->v));
	}
	a->v[a->n++] = xstrdup(s);
	a->v[a->n] = NULL;
}

static void addf(struct argv_b *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void addf(struct argv_b *a, const char *fmt, ...)
{
	struct sb sb = SB_INIT;
	va_list ap;

	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	add(a, sb.buf);
	sb_release(&sb);
}

static void rq_words(const struct rq_vm_spec *s, struct sb *app);
static void add_devices(struct argv_b *a, const struct rq_vm_spec *s);

char **rq_vm_argv(const struct rq_vm_spec *s)
{
	struct argv_b a = { 0 };
	struct sb app = SB_INIT;

	if (s->netns) {
		/* the taps of the segment are the namespace's */
		add(&a, "ip");
		add(&a, "netns");
		add(&a, "exec");
		add(&a, s->netns);
	}
	add(&a, s->qemu ? s->qemu : "qemu-system-x86_64");
	addf(&a, "-name");
	addf(&a, "rdmaqual,process=rq-%s", s->tag ? s->tag : "vm");
	add(&a, "-M");
	add(&a, "microvm,pcie=on,acpi=on,rtc=on");
	add(&a, "-accel");
	add(&a, s->accel == RQ_ACCEL_KVM ? "kvm" : "tcg");
	/*
	 * -cpu max under TCG offers RDRAND, which seeds the guest's CRNG at
	 * boot.  Without it the first read of /dev/urandom (jansson seeds its
	 * hash tables from it) blocks about a second while the kernel gathers
	 * jitter entropy: that was a third of the time to agent-ready.
	 */
	if (s->accel == RQ_ACCEL_TCG) {
		add(&a, "-cpu");
		add(&a, "max");
	} else {
		/* KVM's default CPU model has no RDRAND (and -cpu host aborts under
		 * nested virtualization here): feed the CRNG from the host. */
		add(&a, "-device");
		add(&a, "virtio-rng-pci");
	}
	add(&a, "-m");
	addf(&a, "%d", s->mem_mb > 0 ? s->mem_mb : 512);
	add(&a, "-smp");
	addf(&a, "%d", s->cpus > 0 ? s->cpus : 1);
	add(&a, "-nodefaults");
	add(&a, "-no-user-config");
	add(&a, "-nographic");
	/* A guest panic (panic=-1) or power-off ends QEMU: death is visible. */
	add(&a, "-no-reboot");
	add(&a, "-kernel");
	add(&a, s->kimage);
	add(&a, "-initrd");
	add(&a, s->initrd);
	/*
	 * panic=-1 reboot=t: a panicking guest restarts at once by triple fault,
	 * which -no-reboot turns into QEMU exiting.  The default ACPI-then-
	 * keyboard-controller sequence took ~2 s on microvm (no i8042) and
	 * sometimes never got there, leaving a dead guest that looked alive.
	 */
	sb_adds(&app, "console=ttyS0 loglevel=5 panic=-1 reboot=t");
	/*
	 * Under TCG the guest's TSC is the host's.  Calibrating it against the
	 * PIT fails when the host is busy (the vCPU thread is descheduled
	 * mid-measurement), and microvm has no HPET/ACPI PM timer to fall back
	 * on: the boot then crawls for 15 s or more.  Tell the kernel the rate.
	 */
	if (s->tsc_khz > 0)
		sb_addf(&app, " tsc_early_khz=%ld tsc=reliable", s->tsc_khz);
	/* The user's words before ours: init reads the rq.* words, which they may not set. */
	if (s->cmdline && *s->cmdline)
		sb_addf(&app, " %s", s->cmdline);
	if (s->init_mode && *s->init_mode)
		sb_addf(&app, " rq.mode=%s", s->init_mode);
	/* a guest that stops at the snapshot point is told the rest there */
	if (!s->go_sock)
		rq_words(s, &app);
	add(&a, "-append");
	add(&a, app.buf);
	sb_release(&app);
	add(&a, "-serial");
	addf(&a, "file:%s", s->console_path);
	if (s->qmp_sock) {
		add(&a, "-qmp");
		addf(&a, "unix:%s,server=on,wait=off", s->qmp_sock);
	}
	if (s->state_fd > 0) {
		add(&a, "-incoming");
		add(&a, "fd:0");
	}
	add_devices(&a, s);
	return a.v;
}

/* This boot's own words, which a snapshot's command line leaves out. */
static void rq_words(const struct rq_vm_spec *s, struct sb *app)
{
	sb_addf(app, " rq.exe=%s", s->self_exe);
	if (s->ip)
		sb_addf(app, " rq.ip=%s", s->ip);
	if (s->hostname && *s->hostname)
		sb_addf(app, " rq.name=%s", s->hostname);
	if (s->hosts && *s->hosts)
		sb_addf(app, " rq.hosts=%s", s->hosts);
	/* a word of the command line: a path with a blank cannot be one */
	if (s->modroot && *s->modroot && !strpbrk(s->modroot, " \t\n"))
		sb_addf(app, " rq.modroot=%s", s->modroot);
	if (s->ssh_dir && *s->ssh_dir)
		sb_addf(app, " rq.ssh=%s", s->ssh_dir);
	if (s->link_delay && *s->link_delay)
		sb_addf(app, " rq.delay=%s", s->link_delay);
	if (s->udev && *s->udev)
		sb_addf(app, " rq.udev=%s", s->udev);
}

char *rq_vm_go_line(const struct rq_vm_spec *s)
{
	struct sb l = SB_INIT;
	unsigned char seed[32];
	struct timespec ts;

	/* a restored guest's CRNG is its snapshot's: every restore mixes in its own */
	if (getrandom(seed, sizeof(seed), 0) != (ssize_t)sizeof(seed))
		memset(seed, 0, sizeof(seed));
	clock_gettime(CLOCK_REALTIME, &ts);
	sb_adds(&l, "RQGO ");
	for (size_t i = 0; i < sizeof(seed); i++)
		sb_addf(&l, "%02x", seed[i]);
	sb_addf(&l, " %lld", (long long)ts.tv_sec);
	rq_words(s, &l);
	sb_addc(&l, '\n');
	return sb_detach(&l);
}

static void add_devices(struct argv_b *a, const struct rq_vm_spec *s)
{
	add(a, "-fsdev");
	add(a, "local,id=fs0,path=/,readonly=on,security_model=none,multidevs=remap");
	add(a, "-device");
	add(a, "virtio-9p-pci,fsdev=fs0,mount_tag=hostroot");
	add(a, "-netdev");
	if (s->netns && s->tap)
		addf(a, "tap,id=n0,ifname=%s,script=no,downscript=no", s->tap);
	else if (s->net_stream)
		addf(a, "stream,id=n0,server=%s,addr.type=unix,addr.path=%s",
		     s->net_server ? "on" : "off", s->net_stream);
	else if (s->net_local && s->net_remote)
		addf(a, "dgram,id=n0,local.type=unix,local.path=%s,remote.type=unix,remote.path=%s",
		     s->net_local, s->net_remote);
	else
		add(a, "hubport,id=n0,hubid=0");
	add(a, "-device");
	/* speed=: rxe reports 2.5 Gb/s otherwise and the kernel logs "speed is unknown". */
	addf(a, "virtio-net-pci,netdev=n0,mac=%s,speed=10000,duplex=full",
	     s->mac ? s->mac : "52:54:00:77:00:01");
	/*
	 * The scratch disk: a filesystem on a block device (tmpfs has no
	 * O_DIRECT: nvmet file namespaces, dd oflag=direct).  snapshot=on puts
	 * the guest's writes in a QEMU temporary, gone with the guest; the
	 * cached image is only read.
	 */
	if (s->scratch && *s->scratch) {
		add(a, "-drive");
		addf(a, "file=%s,if=none,id=d0,format=raw,snapshot=on,cache=unsafe", s->scratch);
		add(a, "-device");
		add(a, "virtio-blk-pci,drive=d0,serial=rq-scratch");
	}
	add(a, "-chardev");
	addf(a, "socket,id=c0,path=%s,server=on,wait=off", s->agent_sock);
	add(a, "-device");
	add(a, "virtio-serial-pci");
	add(a, "-device");
	add(a, "virtserialport,chardev=c0,name=rq0");
	if (s->go_sock) {
		add(a, "-chardev");
		addf(a, "socket,id=c1,path=%s,server=on,wait=off", s->go_sock);
		add(a, "-device");
		add(a, "virtserialport,chardev=c1,name=rq-go");
	}
}

long rq_host_tsc_khz(void)
{
#if defined(__x86_64__) || defined(__i386__)
	static long cached;
	struct timespec a, b, d = { 0, 20 * 1000000L };
	unsigned long long t0, t1;
	long ns;

	if (cached)
		return cached;
	clock_gettime(CLOCK_MONOTONIC_RAW, &a);
	t0 = __builtin_ia32_rdtsc();
	nanosleep(&d, NULL);
	t1 = __builtin_ia32_rdtsc();
	clock_gettime(CLOCK_MONOTONIC_RAW, &b);
	ns = (b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec);
	if (ns <= 0 || t1 <= t0)
		return 0;
	cached = (long)((t1 - t0) * 1000000ULL / (unsigned long long)ns);
	return cached;
#else
	return 0;
#endif
}

int rq_vm_topology_guests(const char *topo)
{
	if (!topo || topo[0] != 'v' || topo[1] != 'm' || topo[2] < '1' ||
	    topo[2] > '0' + RQ_VM_GUESTS_MAX || topo[3])
		return -1;
	return topo[2] - '0';
}

void rq_vm_netns_name(const char *dir, char *buf, size_t size)
{
	const char *b = strrchr(dir, '/');

	b = b ? b + 1 : dir;
	if (!strncmp(b, "rq-", 3))
		b += 3;
	snprintf(buf, size, "rqvm-%s", b);
}

void rq_argv_free(char **argv)
{
	if (!argv)
		return;
	for (size_t i = 0; argv[i]; i++)
		free(argv[i]);
	free(argv);
}

int rq_vm_launch(struct rq_vm *vm, const struct rq_vm_spec *spec, char *err, size_t errsz)
{
	struct spawn_opts so = { .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1 };
	char **argv;
	int logfd;

	if (strpbrk(spec->self_exe, " \t\n,")) {
		snprintf(err, errsz, "%s: the rdmaqual path must not hold spaces or commas "
			 "(it goes on the guest's kernel command line)", spec->self_exe);
		return -EINVAL;
	}
	unlink(vm->agent_sock);
	if (spec->go_sock)
		unlink(spec->go_sock);
	if (spec->qmp_sock)
		unlink(spec->qmp_sock);
	if (spec->net_local)
		unlink(spec->net_local);
	if (spec->net_stream && spec->net_server)
		unlink(spec->net_stream);
	logfd = open(vm->qemu_log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (logfd < 0) {
		snprintf(err, errsz, "%s: %s", vm->qemu_log, strerror(errno));
		return -errno;
	}
	argv = rq_vm_argv(spec);
	so.argv = (const char *const *)argv;
	if (spec->state_fd > 0)
		so.stdin_fd = spec->state_fd;	/* -incoming fd:0 */
	so.stdout_fd = logfd;
	so.stderr_fd = logfd;
	vm->launched_ms = now_ms();
	vm->pid = proc_spawn(&so);
	close(logfd);
	rq_argv_free(argv);
	vm->exited = false;
	vm->console_mark = 0;
	vm->go_fd = -1;
	/* the caller may have pointed the spec at these very buffers */
	if (spec->go_sock != vm->go_sock)
		snprintf(vm->go_sock, sizeof(vm->go_sock), "%s", spec->go_sock ? spec->go_sock : "");
	if (spec->qmp_sock != vm->qmp_sock)
		snprintf(vm->qmp_sock, sizeof(vm->qmp_sock), "%s", spec->qmp_sock ? spec->qmp_sock : "");
	if (vm->pid < 0) {
		int e = (int)vm->pid;

		snprintf(err, errsz, "%s: cannot start %s: %s", vm->name,
			 spec->qemu ? spec->qemu : "qemu-system-x86_64", strerror(-e));
		vm->pid = -1;
		return e < 0 ? e : -EIO;
	}
	return 0;
}

bool rq_vm_gone(struct rq_vm *vm)
{
	if (vm->pid <= 0 || vm->exited)
		return true;
	if (waitpid(vm->pid, &vm->wstatus, WNOHANG) == vm->pid) {
		vm->exited = true;
		return true;
	}
	return false;
}

static void describe_exit(const struct rq_vm *vm, char *buf, size_t size)
{
	struct sb log = SB_INIT;
	const char *last;
	int n;

	if (WIFEXITED(vm->wstatus))
		n = snprintf(buf, size, "QEMU exited %d", WEXITSTATUS(vm->wstatus));
	else if (WIFSIGNALED(vm->wstatus))
		n = snprintf(buf, size, "QEMU killed by %s", strsignal(WTERMSIG(vm->wstatus)));
	else
		n = snprintf(buf, size, "QEMU ended");
	/* QEMU says why on stderr (its log): the last line, minus warnings. */
	read_file(vm->qemu_log, &log, 1 << 16);
	sb_rtrim(&log);
	last = strrchr(log.buf, '\n');
	last = last ? last + 1 : log.buf;
	if (*last && n > 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, " (%.150s)", last);
	sb_release(&log);
}

void rq_vm_exit_why(struct rq_vm *vm, char *buf, size_t size)
{
	if (rq_vm_gone(vm))
		describe_exit(vm, buf, size);
	else
		snprintf(buf, size, "QEMU still running");
}

off_t rq_vm_console_since(const struct rq_vm *vm, off_t from, size_t max, struct sb *sb)
{
	struct stat st;
	off_t end;
	int fd = open(vm->console, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return from;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return from;
	}
	end = st.st_size;
	if (end < from)		/* truncated: a new QEMU wrote it afresh */
		from = 0;
	if ((size_t)(end - from) > max)
		from = end - (off_t)max;
	while (from < end) {
		char buf[8192];
		size_t want = (size_t)(end - from) < sizeof(buf) ? (size_t)(end - from) : sizeof(buf);
		ssize_t n = pread(fd, buf, want, from);

		if (n <= 0)
			break;
		sb_add(sb, buf, (size_t)n);
		from += n;
	}
	close(fd);
	return from;
}

void rq_vm_console_tail(const struct rq_vm *vm, size_t max, struct sb *sb)
{
	struct sb raw = SB_INIT;
	const char *p;

	rq_vm_console_since(vm, 0, max, &raw);
	p = raw.buf;
	/* Start on a whole line unless the tail is one long line. */
	if (raw.len >= max) {
		const char *nl = memchr(raw.buf, '\n', raw.len);

		if (nl && (size_t)(nl - raw.buf) + 1 < raw.len)
			p = nl + 1;
	}
	/* The serial console ends lines with \r\n; reports want plain lines. */
	for (const char *e = raw.buf + raw.len; p < e; p++)
		if (*p != '\r')
			sb_addc(sb, *p);
	sb_release(&raw);
}

/* The last non-empty line of the console (for one-line reasons). */
static void console_last_line(const struct rq_vm *vm, char *buf, size_t size)
{
	struct sb t = SB_INIT;
	char *line;

	rq_vm_console_tail(vm, 2048, &t);
	sb_rtrim(&t);
	line = strrchr(t.buf, '\n');
	line = line ? line + 1 : t.buf;
	/* Keep it printable: the console may hold control characters. */
	size_t j = 0;
	for (size_t i = 0; line[i] && j + 1 < size; i++)
		buf[j++] = (line[i] >= 0x20 && line[i] < 0x7f) ? line[i] : '?';
	buf[j] = '\0';
	sb_release(&t);
}

size_t rq_klog_find_bad(const char *text, size_t len, struct sb *out)
{
	static const char *const bad[] = {
		"BUG:", "BUG ", "WARNING:", "Oops", "Kernel panic", "general protection fault",
		"soft lockup", "hard LOCKUP", "blocked for more than", "UBSAN:", "KASAN:",
		"list_add corruption", "list_del corruption", "RCU Stall", "rcu_sched self-detected",
		"detected stalls", "NETDEV WATCHDOG",
	};
	size_t found = 0;
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
			if (memmem(p, n, bad[i], strlen(bad[i]))) {
				/* The serial console ends lines with \r\n. */
				sb_add(out, p, n && p[n - 1] == '\r' ? n - 1 : n);
				sb_addc(out, '\n');
				found++;
				break;
			}
		}
		p += n + 1;
	}
	return found;
}

/* Does the console hold the marker?  Fills line with the marker's line. */
static bool console_has(const struct rq_vm *vm, const char *mark, char *line, size_t size)
{
	struct sb t = SB_INIT;
	const char *m;
	bool ok = false;

	rq_vm_console_since(vm, 0, 1 << 20, &t);
	m = memmem(t.buf, t.len, mark, strlen(mark));
	if (m) {
		size_t n = strcspn(m, "\r\n");

		if (line)
			snprintf(line, size, "%.*s", (int)n, m);
		ok = true;
	}
	sb_release(&t);
	return ok;
}

static int connect_unix(const char *path);
static bool nap_ms(int64_t ms);

bool rq_vm_console_has(const struct rq_vm *vm, const char *mark)
{
	return console_has(vm, mark, NULL, 0);
}

int rq_vm_release(struct rq_vm *vm, const char *go_sock, const char *line, int64_t deadline,
		  char *err, size_t errsz)
{
	int fd;

	/* the agent's side first: the guest's agent opens rq0 soon after this */
	if (!vm->agent && (fd = connect_unix(vm->agent_sock)) >= 0)
		vm->agent = rq_agent_attach(fd, fd, -1, vm->name);
	while ((fd = connect_unix(go_sock)) < 0) {
		if (rq_vm_gone(vm) || now_ms() >= deadline) {
			snprintf(err, errsz, "%s: cannot connect to rq-go (%s)", vm->name,
				 strerror(-fd));
			return fd;
		}
		if (!nap_ms(10)) {
			snprintf(err, errsz, "interrupted by a signal while waiting for the guests");
			return -EINTR;
		}
	}
	size_t len = strlen(line);

	if (write(fd, line, len) != (ssize_t)len) {
		int e = errno;

		close(fd);
		snprintf(err, errsz, "%s: rq-go: %s", vm->name, strerror(e));
		return -e;
	}
	vm->go_fd = fd;
	return 0;
}

static int connect_unix(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/*
 * Sleep; false when a signal handler ran meanwhile.  The runner's handlers
 * (SIGINT, SIGTERM, SIGHUP) only note the signal: a boot must then stop
 * waiting so the run can end promptly.
 */
static bool nap_ms(int64_t ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	return !(nanosleep(&ts, NULL) < 0 && errno == EINTR);
}

enum ready_phase { PH_MARK, PH_HELLO, PH_READY };

int rq_vm_wait_ready(struct rq_vm **vms, int n, int64_t deadline_ms, char *err, size_t errsz)
{
	enum ready_phase ph[8];
	uint64_t hello_id[8] = { 0 };
	int64_t nap = 5;
	/* Debug/bench knob: ready at the console marker, no agent handshake. */
	bool no_agent = getenv("RQ_VM_NO_AGENT") && *getenv("RQ_VM_NO_AGENT") == '1';
	char line[256], why[256];

	if (n > 8)
		return -EINVAL;
	for (int i = 0; i < n; i++)
		ph[i] = vms[i]->ready_ms ? PH_READY : PH_MARK;

	for (;;) {
		int ready = 0;

		for (int i = 0; i < n; i++) {
			struct rq_vm *vm = vms[i];

			if (ph[i] == PH_READY) {
				ready++;
				continue;
			}
			if (rq_vm_gone(vm)) {
				char how[256];

				describe_exit(vm, how, sizeof(how));
				console_last_line(vm, line, sizeof(line));
				if (console_has(vm, FAIL_MARK, why, sizeof(why)))
					snprintf(err, errsz, "%s: guest init failed (%s); %s", vm->name,
						 why, how);
				else
					snprintf(err, errsz, "%s: %s before the guest was ready; console: %s",
						 vm->name, how, line);
				return -ECHILD;
			}
			/*
			 * Connect as soon as QEMU has bound the socket, before the
			 * guest opens its port: a virtio-serial port whose host side
			 * is not connected reads as EOF in the guest, and the agent
			 * would take that for the end of its session.
			 */
			if (!vm->agent && !no_agent) {
				int fd = connect_unix(vm->agent_sock);

				if (fd >= 0)
					vm->agent = rq_agent_attach(fd, fd, -1, vm->name);
			}
			if (ph[i] == PH_MARK) {
				if (console_has(vm, FAIL_MARK, why, sizeof(why))) {
					snprintf(err, errsz, "%s: guest init failed: %s", vm->name, why);
					return -EIO;
				}
				if (!console_has(vm, READY_MARK, NULL, 0))
					continue;
				if (!vm->marker_ms)
					vm->marker_ms = now_ms();
				if (no_agent) {
					ph[i] = PH_READY;
					vm->ready_ms = now_ms();
					ready++;
					continue;
				}
				if (!vm->agent)
					continue;	/* QEMU has not bound it yet */
				json_t *req = json_pack("{s:s}", "op", "hello");

				hello_id[i] = rq_agent_send(vm->agent, req);
				json_decref(req);
				if (!hello_id[i]) {
					snprintf(err, errsz, "%s: cannot send hello to the agent", vm->name);
					return -EIO;
				}
				ph[i] = PH_HELLO;
			}
			if (ph[i] == PH_HELLO) {
				/* A short slice: the other VMs and QEMU's health are polled too. */
				int64_t slice = now_ms() + 50;
				json_t *resp = rq_agent_wait(vm->agent, hello_id[i],
							     slice < deadline_ms ? slice : deadline_ms,
							     why, sizeof(why));

				if (resp) {
					json_t *ok = json_object_get(resp, "ok");
					bool good = json_is_true(ok);

					json_decref(resp);
					if (!good) {
						snprintf(err, errsz, "%s: the agent refused hello", vm->name);
						return -EPROTO;
					}
					ph[i] = PH_READY;
					vm->ready_ms = now_ms();
					ready++;
				} else if (vm->agent->dead) {
					snprintf(err, errsz, "%s: agent channel broke: %s", vm->name,
						 vm->agent->dead_why);
					return -EPIPE;
				} else if (!strcmp(why, "interrupted")) {
					/* A signal (SIGINT, SIGTERM) ended the wait: stop booting. */
					snprintf(err, errsz, "interrupted by a signal while waiting for the guests");
					return -EINTR;
				}
			}
		}
		if (ready == n)
			return 0;
		if (now_ms() >= deadline_ms)
			break;
		if (!nap_ms(nap)) {
			snprintf(err, errsz, "interrupted by a signal while waiting for the guests");
			return -EINTR;
		}
		if (nap < 50)
			nap += 5;
	}
	for (int i = 0; i < n; i++) {
		if (ph[i] == PH_READY)
			continue;
		console_last_line(vms[i], line, sizeof(line));
		snprintf(err, errsz, "%s: not ready within the deadline (%s); console: %s",
			 vms[i]->name,
			 ph[i] == PH_MARK ? "the guest init never reported ready"
					  : "the agent did not answer hello",
			 *line ? line : "(empty)");
		break;
	}
	return -ETIMEDOUT;
}

void rq_vm_stop(struct rq_vm *vm, int64_t grace_ms)
{
	bool polite = vm->ready_ms && vm->agent && !vm->agent->dead;

	if (vm->agent) {
		/* Only a guest that became ready can be asked to power off. */
		if (polite && !rq_vm_gone(vm)) {
			json_t *req = json_pack("{s:s}", "op", "shutdown");
			char why[128];
			json_t *resp = rq_agent_call(vm->agent, req, grace_ms, why, sizeof(why));

			json_decref(req);
			json_decref(resp);
		}
		rq_agent_close(vm->agent);
		vm->agent = NULL;
	}
	if (vm->pid > 0 && !vm->exited) {
		/* After shutdown the init powers the guest off; give it a moment. */
		int st;

		if (polite && proc_wait_deadline(vm->pid, now_ms() + grace_ms, &st) == 1) {
			vm->wstatus = st;
			vm->exited = true;
		} else {
			proc_kill_group(vm->pid, 500);
			vm->exited = true;
		}
	}
	/* 0 is never ours: a zeroed struct has no port open */
	if (vm->go_fd > 0)
		close(vm->go_fd);
	vm->go_fd = -1;
	unlink(vm->agent_sock);
	if (*vm->go_sock)
		unlink(vm->go_sock);
	if (*vm->qmp_sock)
		unlink(vm->qmp_sock);
	if (*vm->net_sock)
		unlink(vm->net_sock);
}

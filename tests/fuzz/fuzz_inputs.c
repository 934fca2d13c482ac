/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer entry for the untrusted inputs that are not tool output (make
 * fuzz / fuzz-brief).  One binary for all of them keeps the build and the
 * brief run short; the first byte of the input picks the target (modulo
 * the number of targets), the rest is its input:
 *
 *   0 compare      two results.json documents, split at the first NUL
 *   1 agent-ctl    what an agent answers, read by the controller
 *   2 agent-serve  what a controller sends, read by the agent
 *   3 manifest     a capture's capture/manifest, replayed by sysroot
 *   4 rdmadev      a sysfs tree (see build_tree) scanned for RDMA devices
 *   5 irq          an IRQ action name, a newline, a cpu list
 *   6 oob          the bytes the other side of an out-of-band exchange sends
 *   7 opensm-conf  an opensm.conf, linted by the opensm-conf kind
 *   8 ibnet        an ibsim .net file
 *   9 redact       text with secrets planted in it (see plant_secrets)
 *  10 undo         an undo journal, applied by `rdmaqual cleanup`
 *  11 vm-state     an rxe-vm run record, cleaned up
 *  12 sm-state     an ibsim/opensm run record, cleaned up
 *
 * Besides "no crash, no leak, no UB, no hang", each target checks what its
 * input must never do (see the check_* and the targets).
 *
 * Nothing here may touch the machine: the run-state targets (10-12) act on
 * records (kill processes, remove directories, set MTUs and IRQ affinity),
 * so the binary first moves into a private network and mount namespace
 * with tmpfs over /sys and /proc/irq (an MTU set on "lo" is the private lo
 * one), kill() is wrapped (-Wl,--wrap=kill: recorded, never sent), fork()
 * fails (the agent's workers would run requested argv), and rm_rf() and
 * rm_rf_scratch() remove only the agent's scratch in this run's sandbox; a
 * removal anywhere else is checked against the one form cleanup may remove
 * (/tmp/rq-NAME, /run/rq-NAME) and recorded, not done.  Without the namespaces (no CAP_SYS_ADMIN) targets
 * 10-12 are skipped, said once.
 *
 * Records and trees name the sandbox as @ROOT@ (replaced before use).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <strings.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <jansson.h>

#include "core/target.h"
#include "agent/agent.h"
#include "core/kind.h"
#include "core/result.h"
#include "core/undo.h"
#include "core/util.h"
#include "parsers/ibnet.h"
#include "parsers/parse_interrupts.h"
#include "qual/capture.h"
#include "qual/compare.h"
#include "qual/redact.h"
#include "qual/sysroot.h"
#include "rdma/ibsm.h"
#include "rdma/nodeinfo.h"
#include "rdma/oob.h"
#include "rdma/rdmadev.h"
#include "vm/vm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char sandbox[PATH_MAX];	/* this run's mkdtemp dir */
static bool private_ns;		/* namespaces and tmpfs in place */
static const char *cur_in;	/* the input, for messages */
static size_t cur_len;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n  input (%zu bytes): %.*s\n", cur_len, (int)(cur_len > 2000 ? 2000 : cur_len),
		cur_in ? cur_in : "");
	abort();
}

/* ---- the wraps: nothing leaves the sandbox ------------------------------ */

int __real_rm_rf(const char *path);
int __wrap_rm_rf(const char *path);
int __real_rm_rf_scratch(const char *path, const char *const *prefixes);
int __wrap_rm_rf_scratch(const char *path, const char *const *prefixes);
int __wrap_kill(pid_t pid, int sig);
pid_t __wrap_fork(void);

/* The agent's own scratch dirs (TMPDIR is the sandbox): really removed. */
static bool agent_scratch(const char *p)
{
	size_t n = strlen(sandbox);

	return n && !strncmp(p, sandbox, n) && !strncmp(p + n, "/rq-agent-", 10) && !strstr(p + n, "/..");
}

/* What a cleanup may remove: one component rq-NAME right under /tmp or /run. */
static bool removable(const char *p)
{
	const char *name;

	if (!strncmp(p, "/tmp/", 5))
		name = p + 5;
	else if (!strncmp(p, "/run/", 5))
		name = p + 5;
	else
		return false;
	return !strncmp(name, "rq-", 3) && !strchr(name, '/') && strcmp(name, "rq-") != 0;
}

int __wrap_rm_rf(const char *path)
{
	if (agent_scratch(path))
		return __real_rm_rf(path);
	if (!removable(path))
		fail("cleanup would remove '%s': not one /tmp/rq-NAME or /run/rq-NAME dir", path);
	return -ENOENT;	/* recorded, not done */
}

/*
 * Cleanup removes through rm_rf_scratch: what it may remove is pretended
 * (another run's real dir may have that name); anything else must be
 * refused by its own check, which then touches nothing.
 */
int __wrap_rm_rf_scratch(const char *path, const char *const *prefixes)
{
	int r;

	if (agent_scratch(path))
		return __real_rm_rf_scratch(path, prefixes);
	if (removable(path))
		return 0;
	r = __real_rm_rf_scratch(path, prefixes);
	if (r != -EPERM)
		fail("rm_rf_scratch('%s') gave %d: not one /tmp/rq-NAME or /run/rq-NAME dir", path, r);
	return r;
}

/* Every process is gone (so cleanup goes on), and no signal is ever sent. */
int __wrap_kill(pid_t pid, int sig)
{
	if (pid <= 0)
		fail("kill(%d, %d): a group or every process", (int)pid, sig);
	errno = ESRCH;
	return -1;
}

pid_t __wrap_fork(void)
{
	errno = EAGAIN;
	return -1;
}

/* ---- set up ------------------------------------------------------------- */

static int write_all_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = len ? write(fd, buf, len) : 0;
	close(fd);
	return n == (ssize_t)len ? 0 : -EIO;
}

static void put(const char *rel, const char *text)
{
	char p[PATH_MAX * 2];
	char *slash;

	snprintf(p, sizeof(p), "%s/%s", sandbox, rel);
	slash = strrchr(p, '/');
	*slash = '\0';
	mkdir_p(p, 0700);
	*slash = '/';
	if (write_all_file(p, text, strlen(text)))
		fail("setup: cannot write %s", p);
}

static bool enter_private_ns(void)
{
	if (unshare(CLONE_NEWNET | CLONE_NEWNS) < 0)
		return false;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("rq-fuzz", "/sys", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m") < 0 ||
	    mount("rq-fuzz", "/proc/irq", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m") < 0) {
		fprintf(stderr, "fuzz_inputs: private mounts failed: %s\n", strerror(errno));
		exit(1);	/* half a sandbox is worse than none */
	}
	return true;
}

static void remove_sandbox(void)
{
	__real_rm_rf(sandbox);
	if (private_ns)
		umount2(sandbox, MNT_DETACH);
	rmdir(sandbox);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	private_ns = enter_private_ns();
	if (!private_ns)
		fprintf(stderr, "fuzz_inputs: no private namespaces (%s): the run-state targets "
			"(undo, vm-state, sm-state) are skipped\n", strerror(errno));
	snprintf(sandbox, sizeof(sandbox), "%s/rq-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(sandbox)) {
		perror("fuzz_inputs: mkdtemp");
		exit(1);
	}
	/* in our own mount namespace the sandbox is a tmpfs: trees are built per input */
	if (private_ns && mount("rq-fuzz", sandbox, "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=0700") < 0) {
		perror("fuzz_inputs: tmpfs");
		exit(1);
	}
	/* the agent's scratch dirs land in the sandbox too */
	setenv("TMPDIR", sandbox, 1);
	/* a capture for the manifest target */
	put("cap/capture/tools/ibstat.out", "CA 'mlx5_0'\n");
	put("cap/capture/tools/ibv_devinfo_-v.out",
	    "hca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n"
	    "hca_id:\tmlx5_1\n\ttransport:\t\t\tInfiniBand (0)\n");
	put("cap/capture/tools/ibv_devinfo_-v.err", "warning\n");
	put("cap/capture/tools/x.out", "x\n");
	put("cap/sys/class/net/eth0/mtu", "1500\n");
	/* a tree for the undo target */
	put("undo/sys/class/net/eth0/mtu", "1500\n");
	put("undo/proc/irq/5/smp_affinity_list", "0-3\n");
	put("undo/proc/irq/5/effective_affinity_list", "0\n");
	{
		char state[PATH_MAX + 8];

		snprintf(state, sizeof(state), "%s/state", sandbox);
		mkdir_p(state, 0700);
	}
	atexit(remove_sandbox);
	return 0;
}

/* Replace @ROOT@ by the sandbox (records and trees name it so). */
static char *with_root(const uint8_t *d, size_t n)
{
	struct sb sb = SB_INIT;
	const char *p = (const char *)d, *end = p + n, *m;

	while (p < end && (m = memmem(p, (size_t)(end - p), "@ROOT@", 6))) {
		sb_add(&sb, p, (size_t)(m - p));
		sb_adds(&sb, sandbox);
		p = m + 6;
	}
	sb_add(&sb, p, (size_t)(end - p));
	sb_addc(&sb, '\0');
	sb.len--;
	return sb.buf;
}

static int memfd_with(const uint8_t *d, size_t n)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0 || (n && write(fd, d, n) != (ssize_t)n) || lseek(fd, 0, SEEK_SET) < 0)
		fail("memfd: %s", strerror(errno));
	return fd;
}

/* ---- 0: compare --------------------------------------------------------- */

static void check_report(const struct cmp_report *rep, const struct cmp_opts *o, const char *what)
{
	unsigned regs = 0, counted = 0;
	json_t *j;
	char *text;

	for (size_t i = 0; i < rep->n; i++) {
		regs += rep->v[i].regression;
		if (rep->v[i].type >= CMP_NTYPES)
			fail("%s: finding of type %d", what, (int)rep->v[i].type);
	}
	for (int t = 0; t < CMP_NTYPES; t++)
		counted += rep->count[t];
	if (regs != rep->regressions || counted != rep->n)
		fail("%s: %u regressions counted, %u flagged; %u findings counted, %zu listed", what,
		     rep->regressions, regs, counted, rep->n);
	j = cmp_report_json(rep, o);
	text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	if (!text)
		fail("%s: the compare document does not dump", what);
	free(text);
	json_decref(j);
}

static void fuzz_compare(const uint8_t *d, size_t n)
{
	const uint8_t *nul = memchr(d, '\0', n);
	json_t *a, *b;
	json_error_t je;
	struct cmp_opts o;
	struct cmp_report rep;
	char err[512];

	if (!nul)
		return;
	a = json_loadb((const char *)d, (size_t)(nul - d), 0, &je);
	b = json_loadb((const char *)nul + 1, n - (size_t)(nul - d) - 1, 0, &je);
	cmp_opts_init(&o);
	cmp_opts_tolerance(&o, "lat*=10%", err, sizeof(err));
	if (a && b) {
		memset(&rep, 0, sizeof(rep));
		err[0] = '\0';
		if (cmp_compare(a, b, &o, &rep, err, sizeof(err)) == 0) {
			check_report(&rep, &o, "compare");
			cmp_report_release(&rep);
		} else if (!err[0]) {
			fail("compare refused without a reason");
		}
	}
	/* a document against itself: nothing can have regressed */
	if (a && cmp_check_doc(a, err, sizeof(err)) == 0) {
		memset(&rep, 0, sizeof(rep));
		if (cmp_compare(a, a, &o, &rep, err, sizeof(err)))
			fail("compare of a valid document with itself refused: %s", err);
		check_report(&rep, &o, "self-compare");
		if (rep.regressions)
			fail("a document compared with itself has %u regression(s), first %s %s",
			     rep.regressions, rep.n ? cmp_type_name(rep.v[0].type) : "",
			     rep.n && rep.v[0].row ? rep.v[0].row : "");
		cmp_report_release(&rep);
	}
	cmp_opts_release(&o);
	json_decref(a);
	json_decref(b);
}

/* ---- 1: the controller reads an agent ----------------------------------- */

static void check_answer(json_t *resp, uint64_t id, const char *why)
{
	json_t *jid;

	if (!resp) {
		if (!why[0])
			fail("agent wait failed without a reason");
		return;
	}
	jid = json_object_get(resp, "id");
	if (!json_is_integer(jid) || (uint64_t)json_integer_value(jid) != id)
		fail("asked for answer %llu, got another", (unsigned long long)id);
	json_decref(resp);
}

static void fuzz_agent_ctl(const uint8_t *d, size_t n)
{
	int rfd = memfd_with(d, n), wfd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	struct rq_agent *a = rq_agent_attach(rfd, wfd, -1, "fuzz");
	char why[512] = "";
	uint64_t ids[2];
	struct rq_agent *as[2] = { a, a };
	json_t *resp = NULL;
	int k;

	json_t *r0 = json_pack("{s:s}", "op", "hello"), *r1 = json_pack("{s:s}", "op", "facts");

	ids[0] = rq_agent_send(a, r0);
	ids[1] = rq_agent_send(a, r1);
	json_decref(r0);
	json_decref(r1);
	if (!ids[0] || !ids[1])
		fail("send to /dev/null failed");
	/* both in flight (a loopback two-sided case), then one alone */
	k = rq_agent_wait_any(as, ids, 2, now_ms() + 200, &resp, why, sizeof(why));
	if (k >= 0) {
		check_answer(resp, ids[k], why);
		why[0] = '\0';
		check_answer(rq_agent_wait(a, ids[!k], now_ms() + 200, why, sizeof(why)), ids[!k], why);
	} else if (!why[0]) {
		fail("agent wait failed without a reason");
	}
	rq_agent_close(a);
}

/* ---- 2: the agent reads a controller ------------------------------------ */

static void fuzz_agent_serve(const uint8_t *d, size_t n)
{
	int in = memfd_with(d, n), out = memfd_create("out", MFD_CLOEXEC);
	struct sb sb = SB_INIT;
	char path[64];

	if (rq_agent_serve(in, out) < 0)
		fail("serve failed: %s", strerror(errno));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", out);
	if (read_file(path, &sb, 0) < 0)
		fail("cannot read the answers back");
	/* every answer is one JSON object line: v, ok, and a reason when not ok */
	for (char *l = sb.buf, *nl; l && *l; l = nl) {
		json_error_t je;
		json_t *j, *ok;

		nl = strchr(l, '\n');
		if (!nl)
			fail("answer without a newline: %.200s", l);
		*nl++ = '\0';
		j = json_loads(l, 0, &je);
		ok = json_object_get(j, "ok");
		if (!json_is_object(j) || !json_is_boolean(ok) ||
		    json_integer_value(json_object_get(j, "v")) != RQ_AGENT_PROTO)
			fail("answer is not a v1 object with ok: %.200s", l);
		if (!json_is_true(ok) && !json_is_string(json_object_get(j, "error")))
			fail("failed answer without an error: %.200s", l);
		json_decref(j);
	}
	sb_release(&sb);
	close(in);
	close(out);
}

/* ---- 3: a capture manifest ---------------------------------------------- */

static void fuzz_manifest(const uint8_t *d, size_t n)
{
	static const char *const argvs[][6] = {
		{ "ibstat", NULL },
		{ "/usr/bin/ibv_devinfo", "-v", NULL },
		{ "ibv_devinfo", "-v", "-d", "mlx5_1", NULL },
		{ "ibv_devinfo", "--ib-dev=mlx5_0", "-v", NULL },
		{ "rdma", "link", "show", NULL },
		{ "x", NULL },
	};
	char root[PATH_MAX], mpath[PATH_MAX + 32], path[PATH_MAX], real[PATH_MAX], rroot[PATH_MAX];
	char *text = with_root(d, n);
	struct rq_ctx ctx = { .root = root, .replay = true, .log_fd = -1 };

	snprintf(root, sizeof(root), "%s/cap", sandbox);
	snprintf(mpath, sizeof(mpath), "%s/capture/manifest", root);
	if (write_all_file(mpath, text, strlen(text)))
		fail("cannot write the manifest");
	if (!realpath(root, rroot))
		fail("realpath %s", root);
	for (size_t i = 0; i < ARRAY_SIZE(argvs); i++) {
		struct proc_result r;
		int code;

		/* what is replayed stays inside the capture */
		if (rq_sysroot_find(root, argvs[i], path, sizeof(path), &code) == 0) {
			if (!realpath(path, real))
				fail("found %s, which does not resolve", path);
			if (strncmp(real, rroot, strlen(rroot)) || real[strlen(rroot)] != '/')
				fail("replay of %s reads %s, outside the capture", argvs[i][0], real);
		}
		proc_result_init(&r);
		rq_tool_replay(&ctx, argvs[i], 1000, &r);
		proc_result_release(&r);
	}
	free(text);
}

/* ---- 4: device scanning over an untrusted tree -------------------------- */

/*
 * The tree, one entry per line:  "f PATH=CONTENT" (\n in CONTENT is a
 * newline), "l PATH=TARGET" (a symlink, TARGET taken as is: it may point
 * anywhere, loop, dangle), "d PATH".  PATH is relative with no "..".
 */
static void build_tree(const char *root, char *spec)
{
	for (char *save = NULL, *l = strtok_r(spec, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char p[PATH_MAX * 2], *eq, *val = "", *slash;
		char type = l[0];

		if (!type || l[1] != ' ')
			continue;
		l += 2;
		if ((eq = strchr(l, '='))) {
			*eq = '\0';
			val = eq + 1;
		}
		if (l[0] == '/' || strstr(l, "..") || strlen(l) > 512)
			continue;
		snprintf(p, sizeof(p), "%s/%s", root, l);
		if (type == 'd') {
			mkdir_p(p, 0700);
			continue;
		}
		slash = strrchr(p, '/');
		*slash = '\0';
		mkdir_p(p, 0700);
		*slash = '/';
		if (type == 'l') {
			if (symlink(val, p)) {
				/* an existing entry: leave it */
			}
		} else if (type == 'f') {
			struct sb c = SB_INIT;

			for (const char *v = val; *v; v++) {
				if (v[0] == '\\' && v[1] == 'n') {
					sb_addc(&c, '\n');
					v++;
				} else {
					sb_addc(&c, *v);
				}
			}
			write_all_file(p, c.buf ? c.buf : "", c.len);
			sb_release(&c);
		}
	}
}

static void check_str(const char *s, size_t size, const char *what)
{
	if (!memchr(s, '\0', size))
		fail("%s is not terminated", what);
}

static void fuzz_rdmadev(const uint8_t *d, size_t n)
{
	char root[PATH_MAX], gid[64];
	char *spec = with_root(d, n);
	struct rq_case c = { .name = (char *)"fuzz", .devices = (char *)"first-active", .gid_index = -1 };
	struct rq_ctx ctx = { .c = &c, .root = root, .replay = true, .log_fd = -1 };
	struct rdma_devs devs;
	int idx[16];

	snprintf(root, sizeof(root), "%s/tree-XXXXXX", sandbox);
	if (!mkdtemp(root))
		fail("mkdtemp: %s", strerror(errno));
	build_tree(root, spec);
	if (rdma_devs_scan(&ctx, &devs) == 0) {
		for (int i = 0; i < devs.n; i++) {
			const struct rdma_dev *dv = &devs.v[i];

			check_str(dv->name, sizeof(dv->name), "name");
			check_str(dv->driver, sizeof(dv->driver), "driver");
			check_str(dv->pci, sizeof(dv->pci), "pci");
			check_str(dv->node_guid, sizeof(dv->node_guid), "node_guid");
			if (dv->nports < 0 || (dv->nports && !dv->ports))
				fail("device %s: %d ports", dv->name, dv->nports);
			for (int p = 0; p < dv->nports; p++) {
				check_str(dv->ports[p].state_str, sizeof(dv->ports[p].state_str), "state");
				check_str(dv->ports[p].netdev, sizeof(dv->ports[p].netdev), "netdev");
				rdma_pick_gid(&ctx, dv->name, dv->ports[p].num, dv->ports[p].netdev,
					      gid, sizeof(gid));
				check_str(gid, sizeof(gid), "gid");
			}
		}
		int k = rdma_devs_select(&ctx, &devs, idx, (int)ARRAY_SIZE(idx));

		for (int i = 0; i < k; i++)
			if (idx[i] < 0 || idx[i] >= devs.n)
				fail("selected device index %d of %d", idx[i], devs.n);
		c.devices = (char *)"mlx5_0,rxe0";
		rdma_devs_select(&ctx, &devs, idx, (int)ARRAY_SIZE(idx));
		rdma_devs_release(&devs);
	}
	rdma_have_mlx_pci(root);
	__real_rm_rf(root);
	free(spec);
}

/* ---- 5: IRQ names and cpu lists ----------------------------------------- */

static void fuzz_irq(const uint8_t *d, size_t n)
{
	char *s = strndup((const char *)d, n), *nl = strchr(s, '\n');
	char kind[32], bdf[32], buf[8192];
	struct cpuset a, b;
	int index, count;

	if (nl)
		*nl++ = '\0';
	if (mlx5_irq_name(s, kind, sizeof(kind), &index, bdf, sizeof(bdf)) == 0) {
		check_str(kind, sizeof(kind), "kind");
		check_str(bdf, sizeof(bdf), "bdf");
		if (!kind[0] || index < 0)
			fail("mlx5 IRQ name '%s' gave kind '%s' index %d", s, kind, index);
	}
	count = cpuset_parse(nl ? nl : s, &a);
	if (count >= 0) {
		/* what we write back must read as the same set */
		cpuset_format(&a, buf, sizeof(buf));
		if (cpuset_parse(buf, &b) != count || memcmp(&a, &b, sizeof(a)))
			fail("cpu list '%s' formats as '%s', which reads differently", nl ? nl : s, buf);
		if (cpuset_count(&a) != count || !cpuset_subset(&a, &b))
			fail("cpu list '%s': count or subset disagree", nl ? nl : s);
	}
	free(s);
}

/* ---- 6: the out-of-band exchange ---------------------------------------- */

static void fuzz_oob(const uint8_t *d, size_t n)
{
	int sv[2];
	struct oob o;
	char theirs[256], why[256], buf[OOB_MSG_MAX];
	size_t len;
	int64_t deadline;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		fail("socketpair: %s", strerror(errno));
	/* the other side said all it will say, then hung up */
	if (n && write(sv[1], d, n) != (ssize_t)n)
		fail("socketpair write");
	shutdown(sv[1], SHUT_WR);
	o.fd = sv[0];
	o.server = false;
	deadline = now_ms() + 500;
	why[0] = '\0';
	if (oob_exchange(&o, "lid 1 qpn 2 psn 3 gid ::1", theirs, sizeof(theirs), deadline, why,
			 sizeof(why)) == 0) {
		if (strlen(theirs) >= sizeof(theirs))
			fail("exchange overran its buffer");
		if (oob_sync(&o, "ready", deadline, why, sizeof(why)) == 0 &&
		    oob_recv(&o, buf, sizeof(buf), &len, deadline, why, sizeof(why)) == 0 &&
		    len > sizeof(buf))
			fail("received %zu bytes into %zu", len, sizeof(buf));
	} else if (!why[0]) {
		fail("exchange failed without a reason");
	}
	if (now_ms() > deadline + 250)
		fail("the exchange overran its deadline by %lld ms", (long long)(now_ms() - deadline));
	oob_close(&o);
	close(sv[1]);
}

/* ---- 7: the opensm.conf linter ------------------------------------------ */

static bool any_text_has(const struct rq_results *rs, const char *needle)
{
	for (size_t i = 0; i < rs->n; i++) {
		const struct rq_result *r = rs->v[i];

		if ((r->reason && strstr(r->reason, needle)) ||
		    (r->log.len && memmem(r->log.buf, r->log.len, needle, strlen(needle))))
			return true;
		for (size_t k = 0; k < r->nfacts; k++)
			if (strstr(r->facts[k].value, needle))
				return true;
	}
	return false;
}

static void fuzz_opensm_conf(const uint8_t *d, size_t n)
{
	const struct rq_kind *k = rq_kind_find("opensm-conf");
	char path[PATH_MAX];
	struct rq_case c = { .name = (char *)"fuzz", .devices = (char *)"all", .gid_index = -1 };
	struct rq_results out = { 0 };
	struct rq_ctx ctx = { .c = &c, .target = "local", .root = "", .log_fd = -1, .tool = rq_tool_replay,
			      .out = &out };

	if (!k)
		fail("no opensm-conf kind");
	snprintf(path, sizeof(path), "%s/opensm.conf", sandbox);
	if (write_all_file(path, d, n))
		fail("cannot write %s", path);
	c.kind = k;
	c.timeout_ms = 10000;
	c.cfg = xcalloc(1, k->cfg_size);
	for (const struct key_def *kd = k->keys; kd->name; kd++)
		if (!strcmp(kd->name, "file"))
			*(char **)((char *)c.cfg + kd->offset) = xstrdup(path);
	ctx.main = rq_result_new(c.name, NULL, 0);
	rq_results_add(&out, ctx.main);
	k->run(&ctx, c.cfg);
	for (size_t i = 0; i < out.n; i++)
		rq_result_finish(out.v[i]);
	if (ctx.main->verdict == RQ_NONE)
		fail("opensm-conf left its row without a verdict");
	/*
	 * Key values are secrets: the value of a *_key line never reaches a
	 * report (values of 6+ characters that appear once in the input, so
	 * the same text is not echoed from elsewhere, e.g. as an unknown key).
	 */
	{
		char *copy = strndup((const char *)d, n), *save = NULL;

		for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			char key[128], val[256];
			const char *first;

			if (sscanf(l, " %127s %255s", key, val) != 2 || !str_ends(key, "_key") ||
			    strlen(val) < 6 || !strcmp(val, "0x0000000000000000"))
				continue;
			first = memmem(d, n, val, strlen(val));
			if (first && memmem(first + 1, n - (size_t)(first + 1 - (const char *)d), val,
					    strlen(val)))
				continue;
			if (any_text_has(&out, val))
				fail("the value of %s reached the report", key);
		}
		free(copy);
	}
	free(*(char **)c.cfg);
	free(c.cfg);
	rq_results_release(&out);
}

/* ---- 8: ibsim .net files ------------------------------------------------ */

static void fuzz_ibnet(const uint8_t *d, size_t n)
{
	struct ibnet net;
	char err[512] = "";
	json_t *j;

	memset(&net, 0, sizeof(net));
	if (ibnet_parse((const char *)d, n, "fuzz.net", &net, err, sizeof(err))) {
		if (!err[0])
			fail("ibnet refused without a reason");
		ibnet_release(&net);
		return;
	}
	for (size_t i = 0; i < net.nlinks; i++) {
		const struct ibnet_link *l = &net.links[i];
		int peer = -1, pport = -1;

		if (l->a < 0 || l->b < 0 || (size_t)l->a >= net.nnodes || (size_t)l->b >= net.nnodes)
			fail("link %zu joins nodes %d and %d of %zu", i, l->a, l->b, net.nnodes);
		if (!ibnet_link_at(&net, l->a, l->aport, &peer, &pport))
			fail("link %zu (%s) is not found at its own end", i, l->where);
	}
	for (size_t i = 0; i < net.nnodes; i++) {
		check_str(net.nodes[i].id, sizeof(net.nodes[i].id), "node id");
		check_str(net.nodes[i].desc, sizeof(net.nodes[i].desc), "node desc");
		if (ibnet_find_node(&net, net.nodes[i].id) < 0)
			fail("node '%s' cannot be found by its id", net.nodes[i].id);
	}
	j = ibnet_to_json(&net);
	if (!j)
		fail("ibnet_to_json returned nothing for a parsed topology");
	json_decref(j);
	ibnet_release(&net);
}

/* ---- 9: capture redaction ----------------------------------------------- */

/*
 * Secrets are planted into the fuzz text between delimiters a tool or a
 * person writes around them (space, tab, newline, quotes, brackets, '=',
 * ',', ';', and ". " at the end of a sentence): a GUID as ibstat prints it
 * (0x + 16 hex), a colon GUID, a GID (full and "fe80::" compressed), a MAC,
 * an IPoIB hardware address and the host name.  Each byte of the input
 * after the selector is text, except that a byte 0xff followed by a byte S
 * plants secret S % 6 (its hex from the next bytes) there.  After
 * redaction none of the planted secrets' identifying hex may be left where
 * it was.
 */
struct planted {
	size_t off, len;	/* the part that must change */
	char orig[64];
};

static const char *const delims[] = { " ", "\t", "\n", "\"", "'", "(", ")", "[", "]", "=", ",", ";", ". ", "<", ">" };

static void hexdigits(const uint8_t *d, size_t n, size_t *i, char *out, size_t k, bool upper)
{
	bool nonzero = false, nonones = false;

	for (size_t j = 0; j < k; j++) {
		uint8_t b = *i < n ? d[(*i)++] : (uint8_t)(j * 7 + 1);
		/* the station id (qual/redact.h): bytes 3-4 of a 64-bit id are kept */
		bool station = k != 16 || j < 6 || j >= 10;

		out[j] = (upper ? "0123456789ABCDEF" : "0123456789abcdef")[b & 0xf];
		nonzero |= station && out[j] != '0';
		nonones |= station && out[j] != 'f' && out[j] != 'F';
	}
	out[k] = '\0';
	uint64_t v = strtoull(out, NULL, 16);
	bool mask = v && !(((v >> __builtin_ctzll(v)) + 1) & (v >> __builtin_ctzll(v)));

	/* a station of all zeros or all ones, and a mask, are no secret (qual/redact.h) */
	if (!nonzero || !nonones || mask)
		out[0] = out[k - 1] = '1';
}

static void fuzz_redact(const uint8_t *d, size_t n)
{
	struct sb text = SB_INIT;
	struct planted pl[64];
	/* a fixed key: an input replays with the same pseudonyms */
	struct rq_redact rd = { .key = { 0 } };
	size_t np = 0, i = 0;
	char host[24];
	size_t hl = 0;

	/* the host name: the first bytes, as [a-z0-9] (4..16 chars), 0 ends it */
	while (i < n && d[i] && hl < 16)
		host[hl++] = "abcdefghijklmnopqrstuvwxyz0123456789"[d[i++] % 36];
	i++;
	host[hl] = '\0';
	if (hl < 4 || strstr("host-redacted", host))
		hl = 0, host[0] = '\0';

	while (i < n) {
		if (d[i] != 0xff || i + 2 >= n || np == ARRAY_SIZE(pl)) {
			sb_addc(&text, (char)d[i++]);
			continue;
		}
		unsigned kind = d[i + 1] % 6;
		const char *pre = delims[d[i + 2] % ARRAY_SIZE(delims)];
		const char *post = delims[(d[i + 2] / ARRAY_SIZE(delims)) % ARRAY_SIZE(delims)];
		bool upper = d[i + 2] & 0x80 && kind != 0;
		char h[40], s[80];
		size_t skip = 0, len;

		i += 3;
		/* the text before must not run into the secret */
		if (text.len && (isalnum((unsigned char)text.buf[text.len - 1]) ||
				 strchr("_:.-", text.buf[text.len - 1])))
			sb_addc(&text, ' ');
		sb_adds(&text, strcmp(pre, ". ") ? pre : " ");
		switch (kind) {
		case 0:	/* ibstat */
			hexdigits(d, n, &i, h, 16, false);
			snprintf(s, sizeof(s), "0x%s", h);
			skip = 2;
			break;
		case 1:	/* colon GUID */
			hexdigits(d, n, &i, h, 16, upper);
			if (!strncasecmp(h, "fe800000", 8))
				h[0] = '1';
			snprintf(s, sizeof(s), "%.4s:%.4s:%.4s:%.4s", h, h + 4, h + 8, h + 12);
			break;
		case 2:	/* GID */
			hexdigits(d, n, &i, h, 16, upper);
			snprintf(s, sizeof(s), "%s:%.4s:%.4s:%.4s:%.4s", upper ? "FE80:0000:0000:0000" :
				 "fe80:0000:0000:0000", h, h + 4, h + 8, h + 12);
			skip = 20;
			break;
		case 3:	/* compressed GID */
			hexdigits(d, n, &i, h, 16, upper);
			snprintf(s, sizeof(s), "%s%.4s:%.4s:%.4s:%.4s", upper ? "FE80::" : "fe80::", h,
				 h + 4, h + 8, h + 12);
			skip = 6;
			break;
		case 4:	/* MAC */
			hexdigits(d, n, &i, h, 12, upper);
			snprintf(s, sizeof(s), "%.2s:%.2s:%.2s:%.2s:%.2s:%.2s", h, h + 2, h + 4, h + 6,
				 h + 8, h + 10);
			break;
		default: /* IPoIB: QPN, GID prefix, then the port GUID */
			hexdigits(d, n, &i, h, 16, upper);
			snprintf(s, sizeof(s), "00:00:10:87:fe:80:00:00:00:00:00:00:%.2s:%.2s:%.2s:%.2s:%.2s:%.2s:%.2s:%.2s",
				 h, h + 2, h + 4, h + 6, h + 8, h + 10, h + 12, h + 14);
			skip = 36;
			break;
		}
		len = strlen(s);
		pl[np].off = text.len + skip;
		pl[np].len = len - skip;
		snprintf(pl[np].orig, sizeof(pl[np].orig), "%s", s + skip);
		np++;
		sb_adds(&text, s);
		sb_adds(&text, post);
		/* and the text after must not run on from it */
		if (i < n && (isalnum(d[i]) || strchr("_:.-", d[i]) || d[i] == 0xff))
			sb_addc(&text, ' ');
	}
	if (!text.buf)
		sb_addc(&text, ' ');

	struct sb in = SB_INIT;

	sb_add(&in, text.buf, text.len);
	rq_redact_text(&rd, &text);
	if (text.len != in.len)
		fail("redaction without a host name changed the length");
	for (size_t k = 0; k < np; k++) {
		/* compare case-blind: a pseudonym is lower case */
		if (!strncasecmp(text.buf + pl[k].off, pl[k].orig, pl[k].len))
			fail("secret '%s' survived redaction in: %.*s", pl[k].orig,
			     (int)(in.len > 300 ? 300 : in.len), in.buf);
	}
	if (hl) {
		/* with the host name: none is left, but inside "host-redacted" itself */
		sb_reset(&text);
		sb_add(&text, in.buf, in.len);
		snprintf(rd.hostname, sizeof(rd.hostname), "%s", host);
		rq_redact_text(&rd, &text);
		/*
		 * In any case, as a whole name (qual/redact.c): inside a longer
		 * name (node9 in node99, in a-node9, before an '_') it is
		 * another name and stays. libFuzzer learns the host from
		 * strcasestr's arguments and plants it next to letters.
		 */
		for (const char *p = text.buf; text.len && (p = strcasestr(p, host)); p++) {
			bool inside = false;
			char b = p > text.buf ? p[-1] : ' ', a = p[hl];

			if (isalnum((unsigned char)b) || b == '-' || isalnum((unsigned char)a) ||
			    a == '-' || a == '_')
				continue;
			for (const char *r = text.buf; (r = strstr(r, "host-redacted")); r++)
				if (r < p + hl && p < r + 13)
					inside = true;
			if (!inside)
				fail("host name '%s' survived redaction", host);
		}
	}
	sb_release(&in);
	sb_release(&text);
}

/* ---- 10-12: run-state records ------------------------------------------- */

static void fuzz_undo(const uint8_t *d, size_t n)
{
	char path[PATH_MAX];
	char *text = with_root(d, n);
	struct sb log = SB_INIT, after = SB_INIT;

	snprintf(path, sizeof(path), "%s/state/" RQ_UNDO_JOURNAL, sandbox);
	if (write_all_file(path, text, strlen(text)))
		fail("cannot write the journal");
	undo_apply_pending(path, &log);
	/* what is kept is what was there (nothing invented) */
	if (read_file(path, &after, 0) == 0 && after.len)
		for (char *save = NULL, *l = strtok_r(after.buf, "\n", &save); l;
		     l = strtok_r(NULL, "\n", &save))
			if (!strstr(text, l))
				fail("the journal kept a record that was not in it: %s", l);
	unlink(path);
	sb_release(&after);
	sb_release(&log);
	free(text);
}

static void fuzz_records(const uint8_t *d, size_t n, bool vm)
{
	char path[PATH_MAX], state[PATH_MAX];
	char *text = with_root(d, n);
	struct sb msgs = SB_INIT;

	snprintf(state, sizeof(state), "%s/state", sandbox);
	/* a writer pid no process has (kill is wrapped: every pid is gone) */
	snprintf(path, sizeof(path), "%s/%s", state, vm ? "rxevm-999999" : "ibsm-999999.run");
	if (write_all_file(path, text, strlen(text)))
		fail("cannot write the record");
	if (vm)
		rq_vm_cleanup_stale(state, &msgs);
	else
		ibsm_cleanup_stale(state, &msgs);
	if (access(path, F_OK) == 0)
		fail("cleanup left the record of a dead run");
	sb_release(&msgs);
	free(text);
}

/* ------------------------------------------------------------------------- */

/* The program hands its kinds and targets to core at start; so does the fuzzer. */
__attribute__((constructor)) static void install_registries(void)
{
	rq_kinds_install();
	rq_targets_install();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned sel;

	if (size < 1)
		return 0;
	sel = data[0] % 13;
	cur_in = (const char *)data + 1;
	cur_len = size - 1;
	data++;
	size--;
	switch (sel) {
	case 0: fuzz_compare(data, size); break;
	case 1: fuzz_agent_ctl(data, size); break;
	case 2: fuzz_agent_serve(data, size); break;
	case 3: fuzz_manifest(data, size); break;
	case 4: fuzz_rdmadev(data, size); break;
	case 5: fuzz_irq(data, size); break;
	case 6: fuzz_oob(data, size); break;
	case 7: fuzz_opensm_conf(data, size); break;
	case 8: fuzz_ibnet(data, size); break;
	case 9: fuzz_redact(data, size); break;
	case 10: if (private_ns) fuzz_undo(data, size); break;
	case 11: if (private_ns) fuzz_records(data, size, true); break;
	case 12: if (private_ns) fuzz_records(data, size, false); break;
	}
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * memlock: the kind on this process's own /proc (a real sample: what the
 * kernel prints for the test), and on small node trees written here with
 * the kernel's own format (fs/proc/base.c proc_pid_limits: "%-25s %-20s
 * %-20s %-10s\n", "unlimited" for RLIM_INFINITY) and status's CapEff line
 * (fs/proc/array.c render_cap_t: 16 hex digits).  Synthesized trees, made
 * in a temporary dir and removed.
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nodecase.h"
#include "check_main.h"

static char tree[64];

static void put(const char *rel, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(const char *rel, const char *fmt, ...)
{
	char path[4096];
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", tree, rel);
	for (char *s = strchr(path + strlen(tree) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	f = fopen(path, "w");
	ck_assert_msg(f != NULL, "%s", path);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

/* /proc/PID/limits as the kernel prints it, with some of its other lines around memlock's. */
static void limits(const char *pid, const char *soft, const char *hard)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "/proc/%s/limits", pid);
	put(rel, "%-25s %-20s %-20s %-10s\n"
	    "%-25s %-20s %-20s %-10s\n"
	    "%-25s %-20s %-20s %-10s\n"
	    "%-25s %-20s %-20s %-10s\n"
	    "%-25s %-20s %-20s %-10s\n"
	    "%-25s %-20s %-20s \n",
	    "Limit", "Soft Limit", "Hard Limit", "Units",
	    "Max cpu time", "unlimited", "unlimited", "seconds",
	    "Max open files", "1024", "524288", "files",
	    "Max locked memory", soft, hard, "bytes",
	    "Max address space", "unlimited", "unlimited", "bytes",
	    /* a limit without a unit ends after the hard limit's padding */
	    "Max nice priority", "0", "0");
}

static void process(const char *pid, const char *comm, const char *soft, const char *hard)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "/proc/%s/comm", pid);
	put(rel, "%s\n", comm);
	limits(pid, soft, hard);
}

/* self: the agent's own; cap: CapEff with CAP_IPC_LOCK (root's), else a user's (none) */
static void self(const char *soft, const char *hard, bool cap)
{
	limits("self", soft, hard);
	put("/proc/self/status", "Name:\trdmaqual\nUmask:\t0022\nState:\tR (running)\n"
	    "CapInh:\t0000000000000000\nCapPrm:\t%s\nCapEff:\t%s\nCapBnd:\t000001ffffffffff\n",
	    cap ? "000001ffffffffff" : "0000000000000000", cap ? "000001ffffffffff" : "0000000000000000");
}

static void setup(void)
{
	snprintf(tree, sizeof(tree), "/tmp/rq-test-memlock.XXXXXX");
	ck_assert(mkdtemp(tree) != NULL);
}

static void teardown(void)
{
	char *argv[] = { (char *)"rm", (char *)"-rf", tree, NULL };
	pid_t pid = fork();

	if (pid == 0) {
		execvp("rm", argv);
		_exit(127);
	}
	waitpid(pid, NULL, 0);
}

static struct rq_result *run(struct nodecase *nc, const char *const *kv)
{
	nc_init(nc, "memlock", tree, kv);
	nc_run(nc);
	return nc_row(nc, "self", 0);
}

/* This process's limits as the kernel prints them, read back as getrlimit says. */
START_TEST(own_limits_read_as_getrlimit)
{
	struct nodecase nc;
	struct rlimit rl;
	char want[64];
	struct rq_result *r;

	nc_init(&nc, "memlock", "/", NULL);
	nc_run(&nc);
	r = nc_row(&nc, "self", 0);
	ck_assert(r != NULL);
	ck_assert_int_eq(getrlimit(RLIMIT_MEMLOCK, &rl), 0);
	if (rl.rlim_cur == RLIM_INFINITY)
		snprintf(want, sizeof(want), "unlimited");
	else
		fmt_size(rl.rlim_cur, want, sizeof(want));
	ck_assert_str_eq(nc_fact(r, "memlock_soft"), want);
	/* root (make check) holds CAP_IPC_LOCK: recorded, passed whatever the limit */
	if (geteuid() == 0)
		ck_assert_int_eq(r->verdict, RQ_PASS);
	nc_release(&nc);
}
END_TEST

START_TEST(user_under_8mib_fails_slurmd_unlimited_passes)
{
	struct nodecase nc;
	struct rq_result *r;

	self("8388608", "8388608", false);
	process("812", "slurmd", "unlimited", "unlimited");
	r = run(&nc, NULL);
	ck_assert_int_eq(r->verdict, RQ_FAIL);
	ck_assert_msg(strstr(r->reason, "memlock limit 8MiB (soft), below unlimited"), "%s", r->reason);
	ck_assert_str_eq(nc_fact(r, "memlock_hard"), "8MiB");
	ck_assert_int_eq(nc_row(&nc, "slurmd", 0)->verdict, RQ_PASS);
	nc_release(&nc);
}
END_TEST

/* slurmd started by hand: its steps start with its limits. */
START_TEST(slurmd_limits_fail_naming_the_unit_key)
{
	struct nodecase nc;
	struct rq_result *r;

	self("unlimited", "unlimited", false);
	process("812", "slurmd", "unlimited", "65536");
	run(&nc, NULL);
	r = nc_row(&nc, "slurmd", 0);
	ck_assert_int_eq(r->verdict, RQ_FAIL);
	ck_assert_msg(strstr(r->reason, "slurmd (pid 812): memlock limit unlimited soft, 64KiB hard"), "%s",
		      r->reason);
	ck_assert_msg(strstr(r->reason, "LimitMEMLOCK=infinity"), "%s", r->reason);
	ck_assert_int_eq(nc_row(&nc, "self", 0)->verdict, RQ_PASS);
	nc_release(&nc);

	/* a soft limit under an unlimited hard one is what a step starts with */
	self("unlimited", "unlimited", false);
	process("812", "slurmd", "8388608", "unlimited");
	run(&nc, NULL);
	r = nc_row(&nc, "slurmd", 0);
	ck_assert_int_eq(r->verdict, RQ_FAIL);
	ck_assert_msg(strstr(r->reason, "8MiB soft, unlimited hard"), "%s", r->reason);
	nc_release(&nc);
}
END_TEST

/* The daemon is the oldest of its name: a fork with other limits is not judged. */
START_TEST(oldest_of_the_name_is_the_daemon)
{
	struct nodecase nc;

	self("unlimited", "unlimited", false);
	process("9000", "slurmd", "65536", "65536");
	process("812", "slurmd", "unlimited", "unlimited");
	run(&nc, NULL);
	ck_assert_int_eq(nc_row(&nc, "slurmd", 0)->verdict, RQ_PASS);
	ck_assert_str_eq(nc_fact(nc_row(&nc, "slurmd", 0), "memlock_hard"), "unlimited");
	nc_release(&nc);
}
END_TEST

START_TEST(cap_ipc_lock_is_not_bound)
{
	struct nodecase nc;
	struct rq_result *r;

	self("65536", "65536", true);
	r = run(&nc, NULL);
	ck_assert_int_eq(r->verdict, RQ_PASS);
	ck_assert_ptr_nonnull(nc_fact(r, "cap_ipc_lock"));
	ck_assert_str_eq(nc_fact(r, "memlock_soft"), "64KiB");
	nc_release(&nc);
}
END_TEST

START_TEST(min_size_and_absent_daemon)
{
	struct nodecase nc;
	struct rq_result *r;

	self("2147483648", "unlimited", false);
	r = run(&nc, (const char *const[]){ "min=1GiB", NULL });
	ck_assert_int_eq(r->verdict, RQ_PASS);
	ck_assert_int_eq(nc_row(&nc, "slurmd", 0)->verdict, RQ_SKIP);
	ck_assert_str_eq(nc_row(&nc, "slurmd", 0)->reason, "slurmd is not running on this node");
	nc_release(&nc);

	self("536870912", "unlimited", false);
	r = run(&nc, (const char *const[]){ "min=1GiB", NULL });
	ck_assert_int_eq(r->verdict, RQ_FAIL);
	ck_assert_msg(strstr(r->reason, "512MiB (soft), below 1GiB"), "%s", r->reason);
	nc_release(&nc);
}
END_TEST

START_TEST(unreadable_limits_are_an_error)
{
	struct nodecase nc;
	struct rq_result *r;

	put("/proc/self/limits", "Limit Soft Limit Hard Limit Units\nMax locked memory  lots  lots  bytes\n");
	put("/proc/self/status", "CapEff:\t0000000000000000\n");
	r = run(&nc, NULL);
	ck_assert_int_eq(r->verdict, RQ_ERROR);
	ck_assert_msg(strstr(r->reason, "does not read as soft and hard limits"), "%s", r->reason);
	nc_release(&nc);

	put("/proc/self/limits", "Limit Soft Limit Hard Limit Units\n");
	r = run(&nc, NULL);
	ck_assert_int_eq(r->verdict, RQ_ERROR);
	ck_assert_msg(strstr(r->reason, "no \"Max locked memory\" line"), "%s", r->reason);
	nc_release(&nc);

	/* an older capture, without the file: a SKIP that says so, not an ERROR of the node */
	char gone[128];

	snprintf(gone, sizeof(gone), "%s/proc/self/limits", tree);
	ck_assert_int_eq(unlink(gone), 0);
	r = run(&nc, NULL);
	ck_assert_int_eq(r->verdict, RQ_SKIP);
	ck_assert_msg(strstr(r->reason, "not in the capture"), "%s", r->reason);
	nc_release(&nc);
}
END_TEST

START_TEST(min_key_checked_at_load)
{
	struct rq_suite s = { 0 };
	struct rq_diags d = { 0 };
	const char *y = "cases:\n  - name: m\n    kind: memlock\n    min: lots\n";

	ck_assert_int_gt(rq_load_buffer("t.yaml", y, strlen(y), &s, &d), 0);
	ck_assert_msg(d.n && strstr(d.v[0].msg, "neither a size"), "%s", d.n ? d.v[0].msg : "");
	rq_suite_release(&s);
	rq_diags_release(&d);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	(void)s;
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, own_limits_read_as_getrlimit);
	tcase_add_test(tc, user_under_8mib_fails_slurmd_unlimited_passes);
	tcase_add_test(tc, slurmd_limits_fail_naming_the_unit_key);
	tcase_add_test(tc, oldest_of_the_name_is_the_daemon);
	tcase_add_test(tc, cap_ipc_lock_is_not_bound);
	tcase_add_test(tc, min_size_and_absent_daemon);
	tcase_add_test(tc, unreadable_limits_are_an_error);
	tcase_add_test(tc, min_key_checked_at_load);
}

RQ_CHECK_MAIN("memlock", add_tests)

/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for src/core/proc.c: deadlines kill whole process groups, output
 * stays bounded, exec failures are told apart, and PDEATHSIG takes a
 * child down with its parent.  Deadlines are short (100-300 ms) but every
 * upper bound on elapsed time is generous, for a loaded 2-core box.
 *
 * The test process makes itself a child subreaper, so orphaned
 * grandchildren are reparented to it and can be reaped and inspected
 * (whether a pid is gone, and by which signal) without races against init.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "core/proc.h"
#include "check_main.h"

static char tmpdir[64];

static void setup(void)
{
	strcpy(tmpdir, "/tmp/rq-proc-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	prctl(PR_SET_CHILD_SUBREAPER, 1);
}

static void teardown(void)
{
	rm_rf(tmpdir);
}

static int run(const char *const *argv, int64_t timeout, struct proc_result *r)
{
	struct proc_opts o = { .argv = argv, .timeout_ms = timeout, .log_fd = -1,
			       .term_grace_ms = 200 };
	proc_result_init(r);
	return proc_run(&o, r);
}

/* Wait (bounded) until pid, now our orphan, has exited; return its status
 * or -1 if it is still alive after 5 s. */
static int reap_orphan(pid_t pid)
{
	int64_t end = now_ms() + 5000;
	int st;

	while (now_ms() < end) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			return st;
		if (w < 0 && errno == ECHILD)
			return kill(pid, 0) < 0 ? 0 : -1;	/* reaped elsewhere */
		usleep(5000);
	}
	return -1;
}

static pid_t read_pid(const char *path)
{
	char line[32];
	int64_t end = now_ms() + 5000;

	while (now_ms() < end) {
		if (read_line(path, line, sizeof(line)) == 0 && line[0])
			return atoi(line);
		usleep(5000);
	}
	return -1;
}

START_TEST(captures_output_and_exit)
{
	const char *argv[] = { "sh", "-c", "echo out; echo err >&2; exit 3", NULL };
	struct proc_result r;
	char d[128];

	ck_assert_int_eq(run(argv, 5000, &r), 0);
	ck_assert_int_eq(r.exit_code, 3);
	ck_assert(!r.timed_out);
	ck_assert(!r.exec_failed);
	ck_assert_str_eq(r.out.buf, "out\n");
	ck_assert_str_eq(r.err.buf, "err\n");
	proc_describe(&r, "sh", d, sizeof(d));
	ck_assert_str_eq(d, "sh exited 3");
	proc_result_release(&r);
}
END_TEST

START_TEST(timeout_kills_group)
{
	char *pidf = xasprintf("%s/gc.pid", tmpdir);
	char *script = xasprintf("sleep 30 & echo $! > %s; echo started; sleep 30", pidf);
	const char *argv[] = { "sh", "-c", script, NULL };
	struct proc_result r;
	char d[128];

	ck_assert_int_eq(run(argv, 200, &r), 0);
	ck_assert(r.timed_out);
	ck_assert_int_eq(r.signal, SIGTERM);
	ck_assert_int_ge(r.elapsed_ms, 190);
	ck_assert_int_lt(r.elapsed_ms, 4000);
	pid_t gc = read_pid(pidf);
	ck_assert_int_gt(gc, 0);
	int st = reap_orphan(gc);
	ck_assert_int_ne(st, -1);
	ck_assert_int_ne(kill(gc, 0), 0);
	proc_describe(&r, "sh", d, sizeof(d));
	ck_assert_msg(strstr(d, "timed out after"), "%s", d);
	proc_result_release(&r);
	free(script);
	free(pidf);
}
END_TEST

START_TEST(sigterm_ignored_still_dies)
{
	const char *argv[] = { "sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done", NULL };
	struct proc_result r;

	ck_assert_int_eq(run(argv, 150, &r), 0);
	ck_assert(r.timed_out);
	ck_assert_int_eq(r.signal, SIGKILL);
	/* 150 ms deadline + 200 ms grace */
	ck_assert_int_ge(r.elapsed_ms, 330);
	ck_assert_int_lt(r.elapsed_ms, 5000);
	proc_result_release(&r);
}
END_TEST

START_TEST(output_cap_holds)
{
	char *logp = xasprintf("%s/log", tmpdir);
	int fd = open(logp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	const char *argv[] = { "sh", "-c", "echo BEGIN; yes 0123456789abcde | head -c 12582912; echo END",
			       NULL };
	struct proc_opts o = { .argv = argv, .timeout_ms = scaled_ms(30000),
			       .log_fd = fd, .tail_max = 1000 };
	struct proc_result r;
	struct stat st;
	struct sb log = SB_INIT;

	ck_assert_int_ge(fd, 0);
	proc_result_init(&r);
	ck_assert_int_eq(proc_run(&o, &r), 0);
	ck_assert_int_eq(r.exit_code, 0);
	/* head (a quarter of tail_max), the cut marked where it was, the tail */
	ck_assert(r.out_truncated && !r.err_truncated);
	ck_assert_uint_eq(r.out_bytes, 6 + 12582912 + 4);
	ck_assert(str_starts(r.out.buf, "BEGIN\n0123456789abcde\n"));
	ck_assert_ptr_nonnull(strstr(r.out.buf, "\n[rdmaqual: 12581672 bytes of output cut here]\n"));
	ck_assert(str_ends(r.out.buf, "END\n"));
	ck_assert_uint_lt(r.out.len, 250 + 1000 + 100);
	ck_assert_uint_le(r.out.cap, 4 * 1000 + 65536 * 2);
	close(fd);
	/* the log: its first PROC_LOG_MAX bytes, a marker, the tails */
	ck_assert_int_eq(stat(logp, &st), 0);
	ck_assert_int_gt(st.st_size, PROC_LOG_MAX);
	ck_assert_int_lt(st.st_size, PROC_LOG_MAX + 4096);
	ck_assert_int_eq(read_file(logp, &log, 32u << 20), 0);
	ck_assert(str_starts(log.buf, "BEGIN\n"));
	ck_assert_ptr_nonnull(strstr(log.buf, "bytes of sh's output not logged"));
	ck_assert(str_ends(log.buf, "END\n\n[rdmaqual: stderr]\n"));
	sb_release(&log);
	proc_result_release(&r);
	free(logp);
}
END_TEST

START_TEST(exec_missing_binary)
{
	const char *argv[] = { "rq-definitely-not-a-command", NULL };
	struct proc_result r;
	char d[128];

	ck_assert_int_eq(run(argv, 1000, &r), 0);
	ck_assert(r.exec_failed);
	ck_assert_int_eq(r.exec_errno, ENOENT);
	proc_describe(&r, "rq-definitely-not-a-command", d, sizeof(d));
	ck_assert_str_eq(d, "not found: rq-definitely-not-a-command");
	proc_result_release(&r);

	char *f = xasprintf("%s/noexec", tmpdir);
	ck_assert_int_eq(write_file_atomic(f, "x\n", 2), 0);	/* mode 0644 */
	const char *argv2[] = { f, NULL };
	ck_assert_int_eq(run(argv2, 1000, &r), 0);
	ck_assert(r.exec_failed);
	ck_assert_int_eq(r.exec_errno, EACCES);
	proc_result_release(&r);
	ck_assert(!cmd_exists(f));
	free(f);
}
END_TEST

START_TEST(env_add_and_cwd)
{
	const char *argv[] = { "sh", "-c", "echo \"$RQ_T|$HOME|$(env | grep -c ^HOME=)|$(pwd)\"", NULL };
	const char *env[] = { "RQ_T=a b", "HOME=/rq-home", NULL };
	struct proc_opts o = { .argv = argv, .env_add = env, .cwd = tmpdir,
			       .timeout_ms = 5000, .log_fd = -1 };
	struct proc_result r;
	char *want = xasprintf("a b|/rq-home|1|%s\n", tmpdir);

	proc_result_init(&r);
	ck_assert_int_eq(proc_run(&o, &r), 0);
	ck_assert_int_eq(r.exit_code, 0);
	ck_assert_str_eq(r.out.buf, want);
	proc_result_release(&r);
	free(want);

	o.cwd = "/nonexistent-dir";
	proc_result_init(&r);
	ck_assert_int_eq(proc_run(&o, &r), 0);
	ck_assert(r.exec_failed);
	ck_assert_int_eq(r.exec_errno, ENOENT);
	proc_result_release(&r);
}
END_TEST

START_TEST(stdin_data)
{
	const char *argv[] = { "cat", NULL };
	static char big[200000];
	struct proc_opts o = { .argv = argv, .timeout_ms = scaled_ms(10000), .log_fd = -1,
			       .stdin_data = big, .stdin_len = sizeof(big),
			       .tail_max = sizeof(big) };
	struct proc_result r;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = 'a' + i % 26;
	proc_result_init(&r);
	ck_assert_int_eq(proc_run(&o, &r), 0);
	ck_assert_int_eq(r.exit_code, 0);
	ck_assert_uint_eq(r.out.len, sizeof(big));
	ck_assert(!memcmp(r.out.buf, big, sizeof(big)));
	proc_result_release(&r);

	/* default stdin is /dev/null: cat ends at once */
	o.stdin_data = NULL;
	o.stdin_len = 0;
	proc_result_init(&r);
	ck_assert_int_eq(proc_run(&o, &r), 0);
	ck_assert_int_eq(r.exit_code, 0);
	ck_assert_uint_eq(r.out.len, 0);
	proc_result_release(&r);
}
END_TEST

START_TEST(stdin_reader_gone_no_sigpipe)
{
	/* The child never reads: our write gets EPIPE, and the runner must
	 * not die of SIGPIPE. */
	static char big[1 << 20];
	const char *argv[] = { "true", NULL };
	struct proc_opts o = { .argv = argv, .timeout_ms = scaled_ms(10000), .log_fd = -1,
			       .stdin_data = big, .stdin_len = sizeof(big) };
	struct proc_result r;

	proc_result_init(&r);
	ck_assert_int_eq(proc_run(&o, &r), 0);
	ck_assert_int_eq(r.exit_code, 0);
	proc_result_release(&r);
}
END_TEST

START_TEST(path_from_env_add)
{
	char *bin = xasprintf("%s/bin", tmpdir);
	char *tool = xasprintf("%s/rq-test-tool", bin);
	char *path = xasprintf("PATH=%s:/usr/bin:/bin", bin);
	const char *env[] = { path, NULL };
	const char *argv[] = { "rq-test-tool", NULL };
	struct proc_opts o = { .argv = argv, .env_add = env, .timeout_ms = 5000, .log_fd = -1 };
	struct proc_result r;

	ck_assert_int_eq(mkdir_p(bin, 0755), 0);
	ck_assert_int_eq(write_file_atomic(tool, "#!/bin/sh\necho from-tool\n", 26), 0);
	ck_assert_int_eq(chmod(tool, 0755), 0);
	proc_result_init(&r);
	ck_assert_int_eq(proc_run(&o, &r), 0);
	ck_assert(!r.exec_failed);
	ck_assert_str_eq(r.out.buf, "from-tool\n");
	proc_result_release(&r);
	free(bin);
	free(tool);
	free(path);
}
END_TEST

START_TEST(leftover_grandchild_does_not_hang)
{
	char *pidf = xasprintf("%s/gc.pid", tmpdir);
	char *script = xasprintf("sleep 30 & echo $! > %s; echo done", pidf);
	const char *argv[] = { "sh", "-c", script, NULL };
	struct proc_result r;

	ck_assert_int_eq(run(argv, 10000, &r), 0);
	ck_assert(!r.timed_out);
	ck_assert_int_eq(r.exit_code, 0);
	ck_assert_str_eq(r.out.buf, "done\n");
	ck_assert_int_lt(r.elapsed_ms, 5000);
	pid_t gc = read_pid(pidf);
	ck_assert_int_gt(gc, 0);
	int st = reap_orphan(gc);
	ck_assert_int_ne(st, -1);
	ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	proc_result_release(&r);
	free(script);
	free(pidf);
}
END_TEST

START_TEST(spawn_wait_kill)
{
	const char *argv[] = { "sleep", "30", NULL };
	struct spawn_opts so = { .argv = argv, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1 };
	int st = 0;

	pid_t pid = proc_spawn(&so);
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(getpgid(pid), pid);
	int64_t t0 = now_ms();
	ck_assert_int_eq(proc_wait_deadline(pid, now_ms() + 100, &st), 0);
	ck_assert_int_ge(now_ms() - t0, 95);
	proc_kill_group(pid, 200);
	ck_assert_int_ne(kill(pid, 0), 0);	/* reaped, not a zombie */

	const char *argv2[] = { "sh", "-c", "exit 4", NULL };
	so.argv = argv2;
	pid = proc_spawn(&so);
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(proc_wait_deadline(pid, now_ms() + 5000, &st), 1);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 4);
	ck_assert_int_lt(proc_wait_deadline(pid, now_ms() + 10, &st), 0);

	const char *argv3[] = { "rq-definitely-not-a-command", NULL };
	so.argv = argv3;
	ck_assert_int_eq(proc_spawn(&so), -ENOENT);
}
END_TEST

START_TEST(pdeathsig_kills_spawned)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	pid_t mid = fork();
	ck_assert_int_ge(mid, 0);
	if (mid == 0) {
		const char *argv[] = { "sleep", "30", NULL };
		struct spawn_opts so = { .argv = argv, .stdin_fd = -1,
					 .stdout_fd = -1, .stderr_fd = -1 };
		pid_t c = proc_spawn(&so);
		if (write(p[1], &c, sizeof(c)) != sizeof(c))
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	pid_t gc = -1;
	ck_assert_int_eq(read(p[0], &gc, sizeof(gc)), sizeof(gc));
	close(p[0]);
	ck_assert_int_gt(gc, 0);
	ck_assert_int_eq(kill(gc, 0), 0);
	kill(mid, SIGKILL);
	int st;
	ck_assert_int_eq(waitpid(mid, &st, 0), mid);
	st = reap_orphan(gc);
	ck_assert_int_ne(st, -1);
	ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}
END_TEST

START_TEST(cmd_lookup)
{
	ck_assert(cmd_exists("sh"));
	ck_assert(cmd_exists("/bin/sh"));
	ck_assert(!cmd_exists("rq-definitely-not-a-command"));
	ck_assert(!cmd_exists(""));
	rq_timeout_mul = 2.5;
	ck_assert_int_eq(scaled_ms(1000), 2500);
	rq_timeout_mul = 1.0;
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, captures_output_and_exit);
	tcase_add_test(tc, timeout_kills_group);
	tcase_add_test(tc, sigterm_ignored_still_dies);
	tcase_add_test(tc, output_cap_holds);
	tcase_add_test(tc, exec_missing_binary);
	tcase_add_test(tc, env_add_and_cwd);
	tcase_add_test(tc, stdin_data);
	tcase_add_test(tc, stdin_reader_gone_no_sigpipe);
	tcase_add_test(tc, path_from_env_add);
	tcase_add_test(tc, leftover_grandchild_does_not_hang);
	tcase_add_test(tc, spawn_wait_kill);
	tcase_add_test(tc, pdeathsig_kills_spawned);
	tcase_add_test(tc, cmd_lookup);
}

RQ_CHECK_MAIN("proc", add_tests)

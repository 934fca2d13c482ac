/* SPDX-License-Identifier: MIT */
/*
 * The controller side of the agent protocol against a scripted agent on a
 * pipe pair: answers are accepted only for ids in flight, once; an answer
 * nobody asked for marks the agent dead instead of being kept (a guest or
 * peer sending 8,000 of them made the controller grow by 521 MB).
 */
#include <check.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <jansson.h>
#include "agent/agent.h"
#include "core/util.h"
#include "check_main.h"

static int to_ctl[2], from_ctl[2];
static struct rq_agent *a;

static void setup(void)
{
	ck_assert_int_eq(pipe2(to_ctl, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(from_ctl, O_CLOEXEC), 0);
	a = rq_agent_attach(to_ctl[0], from_ctl[1], -1, "scripted");
}

static void teardown(void)
{
	rq_agent_close(a);
	close(to_ctl[1]);
	close(from_ctl[0]);
}

static void agent_says(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void agent_says(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	ck_assert_int_eq(write(to_ctl[1], line, (size_t)n), n);
}

START_TEST(answers_only_in_flight)
{
	char why[256];
	json_t *req = json_pack("{s:s}", "op", "hello"), *ans;
	uint64_t id = rq_agent_send(a, req);

	json_decref(req);
	ck_assert_uint_ne(id, 0);
	agent_says("{\"v\":%d,\"id\":%llu,\"ok\":true}\n", RQ_AGENT_PROTO, (unsigned long long)id);
	ans = rq_agent_wait(a, id, now_ms() + 2000, why, sizeof(why));
	ck_assert_ptr_nonnull(ans);
	json_decref(ans);
	ck_assert(!a->dead);
	/* the same id again: answered already */
	agent_says("{\"v\":%d,\"id\":%llu,\"ok\":true}\n", RQ_AGENT_PROTO, (unsigned long long)id);
	req = json_pack("{s:s}", "op", "facts");
	id = rq_agent_send(a, req);
	json_decref(req);
	ans = rq_agent_wait(a, id, now_ms() + 2000, why, sizeof(why));
	ck_assert_ptr_null(ans);
	ck_assert(a->dead);
	ck_assert_ptr_nonnull(strstr(why, "not in flight"));
}
END_TEST

START_TEST(unsolicited_flood)
{
	char why[256];
	json_t *req = json_pack("{s:s}", "op", "hello"), *ans;
	uint64_t id = rq_agent_send(a, req);

	json_decref(req);
	/* A flood of answers to ids never asked, before the real one. */
	for (unsigned long long i = 1000; i < 1200; i++)
		agent_says("{\"v\":%d,\"id\":%llu,\"ok\":true,\"log\":\"xxxxxxxxxxxxxxxx\"}\n", RQ_AGENT_PROTO, i);
	agent_says("{\"v\":%d,\"id\":%llu,\"ok\":true}\n", RQ_AGENT_PROTO, (unsigned long long)id);
	ans = rq_agent_wait(a, id, now_ms() + 2000, why, sizeof(why));
	ck_assert_ptr_null(ans);
	ck_assert(a->dead);
	ck_assert_ptr_nonnull(strstr(a->dead_why, "answered id 1000"));
	ck_assert_uint_eq(json_object_size(a->stash), 0);	/* nothing kept */
}
END_TEST

/*
 * An agent that sends only newlines: empty lines count against the line
 * cap, so it is dead after 4 MiB of them.  Before, it was never dead (the
 * wait ran to its deadline) and each line cost a memmove of the buffer: a
 * three-node run took 32.8 s of controller CPU.
 */
START_TEST(newline_flood)
{
	static char nl[65536];
	char why[256];
	json_t *req = json_pack("{s:s}", "op", "hello"), *ans;
	uint64_t id = rq_agent_send(a, req);
	pid_t pid;

	json_decref(req);
	memset(nl, '\n', sizeof(nl));
	fcntl(to_ctl[1], F_SETPIPE_SZ, 1 << 20);	/* fewer wakeups on a loaded host */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* until the controller closes its end (EPIPE) or 64 MiB */
		for (int i = 0; i < 1024; i++)
			if (write(to_ctl[1], nl, sizeof(nl)) < 0)
				_exit(0);
		_exit(0);
	}
	ans = rq_agent_wait(a, id, now_ms() + 60000, why, sizeof(why));
	ck_assert_ptr_null(ans);
	ck_assert(a->dead);
	ck_assert_ptr_nonnull(strstr(a->dead_why, "empty lines"));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}
END_TEST

/* Many answers in one read, and one split across reads, all taken. */
START_TEST(lines_in_one_read)
{
	char why[256], buf[8192];
	uint64_t id[50];
	size_t n = 0;

	for (int i = 0; i < 50; i++) {
		json_t *req = json_pack("{s:s}", "op", "hello");

		id[i] = rq_agent_send(a, req);
		json_decref(req);
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\n{\"v\":%d,\"id\":%llu,\"ok\":true}\n",
				      RQ_AGENT_PROTO, (unsigned long long)id[i]);
	}
	ck_assert_int_eq(write(to_ctl[1], buf, n - 10), (ssize_t)(n - 10));
	for (int i = 0; i < 49; i++) {
		json_t *ans = rq_agent_wait(a, id[i], now_ms() + 2000, why, sizeof(why));

		ck_assert_ptr_nonnull(ans);
		json_decref(ans);
	}
	ck_assert_int_eq(write(to_ctl[1], buf + n - 10, 10), 10);
	json_t *ans = rq_agent_wait(a, id[49], now_ms() + 2000, why, sizeof(why));

	ck_assert_ptr_nonnull(ans);
	json_decref(ans);
	ck_assert(!a->dead);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_checked_fixture(tc, setup, teardown);
	/* 4 MiB through a pipe: seconds when eight builds share two cores */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, newline_flood);
	tcase_add_test(tc, lines_in_one_read);
	tcase_add_test(tc, answers_only_in_flight);
	tcase_add_test(tc, unsolicited_flood);
}

RQ_CHECK_MAIN("agent", add_tests)

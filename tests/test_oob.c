/* SPDX-License-Identifier: MIT */
/*
 * The out-of-band exchange between the two roles of a verbs case, on
 * 127.0.0.1: a normal exchange, a client started before its server, a
 * server whose client never comes (deadline, listener closed), a peer that
 * dies mid-exchange (EOF, not a hang), and a hostile length prefix.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "rdma/oob.h"
#include "core/util.h"
#include "check_main.h"

static int free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

START_TEST(exchange_client_first)
{
	int port = free_port();
	pid_t pid = fork();
	char why[256], buf[128];
	struct oob o;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* the server comes up 200 ms after the client starts connecting */
		usleep(200000);
		if (oob_open(&o, true, "127.0.0.1", NULL, port, now_ms() + 5000, why, sizeof(why)))
			_exit(1);
		if (oob_exchange(&o, "server qpn=17", buf, sizeof(buf), now_ms() + 5000, why, sizeof(why)))
			_exit(2);
		if (strcmp(buf, "client qpn=18") || oob_sync(&o, "done", now_ms() + 5000, why, sizeof(why)))
			_exit(3);
		oob_close(&o);
		_exit(0);
	}
	ck_assert_msg(oob_open(&o, false, NULL, "127.0.0.1", port, now_ms() + 5000, why, sizeof(why)) == 0,
		      "%s", why);
	ck_assert_int_eq(oob_exchange(&o, "client qpn=18", buf, sizeof(buf), now_ms() + 5000, why,
				      sizeof(why)), 0);
	ck_assert_str_eq(buf, "server qpn=17");
	ck_assert_int_eq(oob_sync(&o, "done", now_ms() + 5000, why, sizeof(why)), 0);
	oob_close(&o);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "server side status %d", st);
}
END_TEST

START_TEST(deadlines)
{
	int port = free_port();
	char why[256];
	struct oob o;
	int64_t t0 = now_ms();

	/* client, nobody listening: refused until the deadline, then a reason */
	ck_assert_int_lt(oob_open(&o, false, NULL, "127.0.0.1", port, now_ms() + 300, why, sizeof(why)), 0);
	ck_assert_int_lt(now_ms() - t0, 1500);
	ck_assert_msg(strstr(why, "connect to 127.0.0.1:") && strstr(why, "tries"), "%s", why);

	/* server, nobody connects: deadline, and the listener is gone after */
	t0 = now_ms();
	ck_assert_int_eq(oob_open(&o, true, "127.0.0.1", NULL, port, now_ms() + 300, why, sizeof(why)),
			 -ETIMEDOUT);
	ck_assert_int_lt(now_ms() - t0, 1500);
	ck_assert_msg(strstr(why, "no peer connected"), "%s", why);
	ck_assert_int_lt(oob_open(&o, false, NULL, "127.0.0.1", port, now_ms() + 100, why, sizeof(why)), 0);
	ck_assert_msg(strstr(why, "refused"), "listener left behind: %s", why);
}
END_TEST

START_TEST(peer_dies_and_hostile_length)
{
	int port = free_port();
	pid_t pid = fork();
	char why[256], buf[64];
	struct oob o;
	size_t n;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (oob_open(&o, true, NULL, NULL, port, now_ms() + 5000, why, sizeof(why)))
			_exit(1);
		/* a length prefix of 1 GiB, then die */
		if (write(o.fd, "\x40\x00\x00\x00", 4) != 4)
			_exit(2);
		usleep(100000);
		_exit(0);
	}
	ck_assert_int_eq(oob_open(&o, false, NULL, "127.0.0.1", port, now_ms() + 5000, why, sizeof(why)), 0);
	ck_assert_int_eq(oob_recv(&o, buf, sizeof(buf), &n, now_ms() + 5000, why, sizeof(why)), -EPROTO);
	ck_assert_msg(strstr(why, "refused"), "%s", why);
	/* the server is gone now: EOF, well before the 5 s deadline */
	int64_t t0 = now_ms();
	ck_assert_int_eq(oob_recv(&o, buf, sizeof(buf), &n, now_ms() + 5000, why, sizeof(why)), -ECONNRESET);
	ck_assert_int_lt(now_ms() - t0, 3000);
	oob_close(&o);
	waitpid(pid, NULL, 0);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	signal(SIGPIPE, SIG_IGN);
	tcase_add_test(tc, exchange_client_first);
	tcase_add_test(tc, deadlines);
	tcase_add_test(tc, peer_dies_and_hostile_length);
}

RQ_CHECK_MAIN("oob", add_tests)

// SPDX-License-Identifier: MIT
/*
 * Where an installed or a checked-out rdmaqual finds its files
 * (core/paths.h), and the guest image cache a user gets: created 0700,
 * refused when it is a link, another's, or writable by others.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check_main.h"
#include "core/paths.h"
#include "core/util.h"

static char T[] = "/tmp/rq-paths.XXXXXX";

static void touch_x(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0755);

	ck_assert_int_ge(fd, 0);
	close(fd);
}

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(T));
	ck_assert_int_eq(chmod(T, 0755), 0);
}

static void teardown(void)
{
	rm_rf(T);
	strcpy(T, "/tmp/rq-paths.XXXXXX");
}

static char *at(const char *rel)
{
	static char buf[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", T, rel);
	return buf[i];
}

START_TEST(test_checkout_found_from_root_and_build_san)
{
	struct rq_paths p;

	ck_assert_int_eq(mkdir_p(at("co/cases/mtu"), 0755), 0);
	ck_assert_int_eq(mkdir_p(at("co/vm"), 0755), 0);
	ck_assert_int_eq(mkdir_p(at("co/build/san"), 0755), 0);
	touch_x(at("co/vm/kernel.sh"));
	rq_paths_find(at("co/rdmaqual"), &p);
	ck_assert(p.checkout);
	ck_assert_str_eq(p.datadir, at("co"));
	ck_assert_str_eq(p.libexecdir, at("co/vm"));
	rq_paths_find(at("co/build/san/rdmaqual"), &p);
	ck_assert(p.checkout);
	ck_assert_str_eq(p.datadir, at("co"));
	/* vm/kernel.sh without cases/ is not a checkout */
	ck_assert_int_eq(rm_rf(at("co/cases")), 0);
	rq_paths_find(at("co/rdmaqual"), &p);
	ck_assert(!p.checkout);
}
END_TEST

START_TEST(test_installed_prefix_is_relative_to_the_binary)
{
	struct rq_paths p;

	ck_assert_int_eq(mkdir_p(at("dest/usr/bin"), 0755), 0);
	ck_assert_int_eq(mkdir_p(at("dest/usr/share/rdmaqual/cases"), 0755), 0);
	ck_assert_int_eq(mkdir_p(at("dest/usr/libexec/rdmaqual"), 0755), 0);
	rq_paths_find(at("dest/usr/bin/rdmaqual"), &p);
	ck_assert(!p.checkout);
	ck_assert_str_eq(p.datadir, at("dest/usr/share/rdmaqual"));
	ck_assert_str_eq(p.libexecdir, at("dest/usr/libexec/rdmaqual"));
	/* a binary beside nothing (copied to a peer) falls back to the built-in prefix */
	rq_paths_find(at("rdmaqual"), &p);
	ck_assert(!p.checkout);
	ck_assert(str_ends(p.datadir, "/share/rdmaqual"));
	ck_assert(str_ends(p.libexecdir, "/libexec/rdmaqual"));
	ck_assert(!str_starts(p.datadir, T));
}
END_TEST

/* rq_cache_dir in a child as uid 65534 (when root) with this environment: 0 ok, else 1. */
static int cache_as_user(const char *xdg, const char *home, const char *want, int want_rc,
			 const char *want_err)
{
	pid_t pid = fork();
	int st;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char buf[512], err[512] = "";
		struct stat sb;
		int rc;

		if (geteuid() == 0 && (setgid(65534) || setuid(65534)))
			_exit(2);
		if (xdg)
			setenv("XDG_CACHE_HOME", xdg, 1);
		else
			unsetenv("XDG_CACHE_HOME");
		setenv("HOME", home, 1);
		rc = rq_cache_dir(buf, sizeof(buf), err, sizeof(err));
		if (rc != want_rc) {
			printf("rq_cache_dir: %d, want %d (%s)\n", rc, want_rc, err);
			_exit(1);
		}
		if (rc == 0 && (strcmp(buf, want) || lstat(buf, &sb) || !S_ISDIR(sb.st_mode) ||
				(sb.st_mode & 07777) != 0700 || sb.st_uid != geteuid())) {
			printf("rq_cache_dir: %s, want %s 0700 of uid %u\n", buf, want, geteuid());
			_exit(1);
		}
		if (want_err && !strstr(err, want_err)) {
			printf("rq_cache_dir: error \"%s\" lacks \"%s\"\n", err, want_err);
			_exit(1);
		}
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 3;
}

/* a dir the child's uid owns */
static void user_dir(const char *rel)
{
	ck_assert_int_eq(mkdir_p(at(rel), 0755), 0);
	if (geteuid() == 0)
		ck_assert_int_eq(chown(at(rel), 65534, 65534), 0);
}

START_TEST(test_user_cache_made_private_and_refused_when_planted)
{
	uid_t u = geteuid() == 0 ? 65534 : geteuid();

	user_dir("x");
	user_dir("h");
	/* $XDG_CACHE_HOME/rdmaqual, made 0700; the second call takes it as it is */
	ck_assert_int_eq(cache_as_user(at("x"), at("h"), at("x/rdmaqual"), 0, NULL), 0);
	ck_assert_int_eq(cache_as_user(at("x"), at("h"), at("x/rdmaqual"), 0, NULL), 0);
	/* no (or a relative, hence invalid) XDG_CACHE_HOME: ~/.cache/rdmaqual */
	ck_assert_int_eq(cache_as_user(NULL, at("h"), at("h/.cache/rdmaqual"), 0, NULL), 0);
	ck_assert_int_eq(cache_as_user("rel", at("h"), at("h/.cache/rdmaqual"), 0, NULL), 0);
	/* a link planted where the cache goes */
	user_dir("l");
	ck_assert_int_eq(symlink(at("x/rdmaqual"), at("l/rdmaqual")), 0);
	ck_assert_int_eq(cache_as_user(at("l"), at("h"), NULL, -EPERM, "a symlink"), 0);
	/* ours but writable by others: whatever it holds may have been planted */
	user_dir("w/rdmaqual");
	ck_assert_int_eq(chmod(at("w/rdmaqual"), 0777), 0);
	ck_assert_int_eq(cache_as_user(at("w"), at("h"), NULL, -EPERM, "mode 0777"), 0);
	/* another user's (root's) dir */
	if (u != 0) {
		ck_assert_int_eq(mkdir_p(at("r/rdmaqual"), 0700), 0);
		ck_assert_int_eq(chmod(at("r"), 0755), 0);
		ck_assert_int_eq(cache_as_user(at("r"), at("h"), NULL, -EPERM, "owned by uid 0"), 0);
		/* a parent the user may not write: a clear error, nothing made */
		ck_assert_int_eq(mkdir_p(at("ro"), 0755), 0);
		ck_assert_int_eq(cache_as_user(at("ro"), at("h"), NULL, -EACCES, "cannot create"), 0);
		ck_assert_int_eq(access(at("ro/rdmaqual"), F_OK), -1);
	}
}
END_TEST

/* Any cache (RQ_VM_CACHE, a checkout's): its physical path, ours, under dirs nobody else can change. */
START_TEST(test_any_cache_checked_with_its_parents)
{
	char real[512], err[512];
	struct stat st;

	/* missing: made 0700, and the builders get the path without the link */
	ck_assert_int_eq(mkdir_p(at("real"), 0755), 0);
	ck_assert_int_eq(symlink(at("real"), at("link")), 0);
	ck_assert_int_eq(rq_cache_check(at("link/c"), real, sizeof(real), err, sizeof(err)), 0);
	ck_assert_str_eq(real, at("real/c"));
	ck_assert_int_eq(lstat(real, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0700);
	/* ours but writable by group */
	ck_assert_int_eq(chmod(real, 0770), 0);
	ck_assert_int_eq(rq_cache_check(real, real, sizeof(real), err, sizeof(err)), -EPERM);
	ck_assert_ptr_nonnull(strstr(err, "mode 0770"));
	/* ours, under a dir others may write (not sticky): it could be swapped */
	ck_assert_int_eq(mkdir_p(at("open/c"), 0700), 0);
	ck_assert_int_eq(chmod(at("open"), 0777), 0);
	ck_assert_int_eq(rq_cache_check(at("open/c"), real, sizeof(real), err, sizeof(err)), -EPERM);
	ck_assert_ptr_nonnull(strstr(err, "lies under"));
	/* ...sticky, as /tmp: others cannot rename what is ours in it */
	ck_assert_int_eq(chmod(at("open"), 01777), 0);
	ck_assert_int_eq(rq_cache_check(at("open/c"), real, sizeof(real), err, sizeof(err)), 0);
	/* under another user's dir */
	if (geteuid() == 0) {
		ck_assert_int_eq(mkdir_p(at("theirs/c"), 0700), 0);
		ck_assert_int_eq(chown(at("theirs"), 65534, 65534), 0);
		ck_assert_int_eq(rq_cache_check(at("theirs/c"), real, sizeof(real), err, sizeof(err)),
				 -EPERM);
		ck_assert_ptr_nonnull(strstr(err, "owned by uid 65534"));
	}
}
END_TEST


/* A checkout-looking tree above an install under a writable dir is never used. */
START_TEST(test_install_never_walks_up_to_a_planted_checkout)
{
	struct rq_paths p;

	ck_assert_int_eq(mkdir_p(at("x/inst/bin"), 0755), 0);
	ck_assert_int_eq(mkdir_p(at("x/inst/share/rdmaqual/cases"), 0755), 0);
	ck_assert_int_eq(mkdir_p(at("x/inst/libexec/rdmaqual"), 0755), 0);
	/* planted: x/vm/kernel.sh and x/cases, two levels above bin/ */
	ck_assert_int_eq(mkdir_p(at("x/vm"), 0755), 0);
	ck_assert_int_eq(mkdir_p(at("x/cases"), 0755), 0);
	touch_x(at("x/vm/kernel.sh"));
	rq_paths_find(at("x/inst/bin/rdmaqual"), &p);
	ck_assert(!p.checkout);
	ck_assert(!p.untrusted);
	ck_assert_str_eq(p.datadir, at("x/inst/share/rdmaqual"));
	ck_assert_str_eq(p.libexecdir, at("x/inst/libexec/rdmaqual"));
	/* and a binary in some other dir below a checkout does not walk up to it */
	ck_assert_int_eq(mkdir_p(at("x/sub/dir"), 0755), 0);
	rq_paths_find(at("x/sub/dir/rdmaqual"), &p);
	ck_assert(!p.checkout);
	ck_assert(!str_starts(p.datadir, T));
}
END_TEST

/* A checkout or install another user may change is refused, saying why. */
START_TEST(test_tree_of_another_user_is_refused)
{
	struct rq_paths p;

	if (geteuid() != 0)
		return;	/* chown needs root; CI runs as root */
	ck_assert_int_eq(mkdir_p(at("co/cases"), 0755), 0);
	ck_assert_int_eq(mkdir_p(at("co/vm"), 0755), 0);
	touch_x(at("co/vm/kernel.sh"));
	rq_paths_find(at("co/rdmaqual"), &p);
	ck_assert(p.checkout);
	ck_assert_str_eq(p.refused, "");

	/* another user's kernel.sh */
	ck_assert_int_eq(chown(at("co/vm/kernel.sh"), 65534, 65534), 0);
	rq_paths_find(at("co/rdmaqual"), &p);
	ck_assert(!p.checkout);
	ck_assert_ptr_nonnull(strstr(p.refused, "kernel.sh is owned by uid 65534"));
	ck_assert(!str_starts(p.datadir, T));
	ck_assert_int_eq(chown(at("co/vm/kernel.sh"), 0, 0), 0);

	/* cases/ that others may write: they could plant a case root runs */
	ck_assert_int_eq(mkdir_p(at("co/build/san"), 0755), 0);
	ck_assert_int_eq(chmod(at("co/cases"), 0777), 0);
	rq_paths_find(at("co/build/san/rdmaqual"), &p);
	ck_assert(!p.checkout);
	ck_assert_ptr_nonnull(strstr(p.refused, "cases is owned by uid 0 with mode 0777"));
	ck_assert_int_eq(chmod(at("co/cases"), 0755), 0);

	/* the checkout under another user's dir: they could swap it */
	ck_assert_int_eq(mkdir_p(at("u/co/cases"), 0755), 0);
	ck_assert_int_eq(mkdir_p(at("u/co/vm"), 0755), 0);
	touch_x(at("u/co/vm/kernel.sh"));
	ck_assert_int_eq(chown(at("u"), 65534, 65534), 0);
	rq_paths_find(at("u/co/rdmaqual"), &p);
	ck_assert(!p.checkout);
	ck_assert_ptr_nonnull(strstr(p.refused, "owned by uid 65534"));

	/* an install whose libexec another user owns: used for nothing */
	ck_assert_int_eq(mkdir_p(at("i/bin"), 0755), 0);
	ck_assert_int_eq(mkdir_p(at("i/share/rdmaqual"), 0755), 0);
	ck_assert_int_eq(mkdir_p(at("i/libexec/rdmaqual"), 0755), 0);
	ck_assert_int_eq(chown(at("i/libexec/rdmaqual"), 65534, 65534), 0);
	rq_paths_find(at("i/bin/rdmaqual"), &p);
	ck_assert(!p.checkout);
	ck_assert(p.untrusted);
	ck_assert_ptr_nonnull(strstr(p.refused, "libexec/rdmaqual is owned by uid 65534"));
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	(void)s;
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_checkout_found_from_root_and_build_san);
	tcase_add_test(tc, test_installed_prefix_is_relative_to_the_binary);
	tcase_add_test(tc, test_user_cache_made_private_and_refused_when_planted);
	tcase_add_test(tc, test_any_cache_checked_with_its_parents);
	tcase_add_test(tc, test_install_never_walks_up_to_a_planted_checkout);
	tcase_add_test(tc, test_tree_of_another_user_is_refused);
}

RQ_CHECK_MAIN("paths", add_tests)

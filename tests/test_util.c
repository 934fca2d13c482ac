/* SPDX-License-Identifier: MIT */
/* Unit tests for src/core/util.c. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "core/sha256.h"
#include "core/util.h"
#include "check_main.h"

static char tmpdir[64];

static void setup(void)
{
	strcpy(tmpdir, "/tmp/rq-util-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
	rm_rf(tmpdir);
}

START_TEST(sb_basics)
{
	struct sb sb = SB_INIT;

	ck_assert_str_eq(sb.buf, "");
	sb_reset(&sb);		/* on the static "" must not write */
	sb_adds(&sb, "abc");
	sb_addc(&sb, 'd');
	sb_addf(&sb, "%d-%s", 42, "x");
	ck_assert_str_eq(sb.buf, "abcd42-x");
	ck_assert_uint_eq(sb.len, 8);
	sb_add(&sb, "\0z", 2);
	ck_assert_uint_eq(sb.len, 10);
	ck_assert_int_eq(sb.buf[9], 'z');
	sb_reset(&sb);
	ck_assert_uint_eq(sb.len, 0);
	/* a long format goes past the small stack buffer */
	char big[1000];
	memset(big, 'q', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	sb_addf(&sb, "<%s>", big);
	ck_assert_uint_eq(sb.len, 1001);
	ck_assert_int_eq(sb.buf[1000], '>');
	sb_reset(&sb);
	sb_adds(&sb, "v \n\t ");
	sb_rtrim(&sb);
	ck_assert_str_eq(sb.buf, "v");
	char *d = sb_detach(&sb);
	ck_assert_str_eq(d, "v");
	ck_assert_str_eq(sb.buf, "");
	free(d);
	d = sb_detach(&sb);	/* never NULL, even when empty */
	ck_assert_str_eq(d, "");
	free(d);
	sb_release(&sb);
}
END_TEST

START_TEST(argv_quoted)
{
	struct sb sb = SB_INIT;
	const char *a[] = { "sh", "-c", "a && b", "", "it's", "/usr/bin/x=1,2:3", "{port}", "a\x01" "b\n", NULL };

	sb_add_argv(&sb, a);
	ck_assert_str_eq(sb.buf, "sh -c 'a && b' '' 'it'\\''s' /usr/bin/x=1,2:3 \'{port}\' $\'a\\x01b\\n\'");
	sb_release(&sb);
}
END_TEST

START_TEST(alloc_helpers)
{
	char *s = xasprintf("%s/%d", "a", 7);
	ck_assert_str_eq(s, "a/7");
	free(s);
	s = xstrndup("abcdef", 3);
	ck_assert_str_eq(s, "abc");
	free(s);
}
END_TEST

START_TEST(files_roundtrip)
{
	char *p = xasprintf("%s/f", tmpdir);
	struct sb sb = SB_INIT;
	char line[8];

	ck_assert_int_eq(write_file_atomic(p, "hello\n", 6), 0);
	ck_assert_int_eq(read_file(p, &sb, 0), 0);
	ck_assert_str_eq(sb.buf, "hello\n");
	sb_reset(&sb);
	/* over max is an error (a cut case file lost its end), the head kept */
	ck_assert_int_eq(read_file(p, &sb, 3), -EFBIG);
	ck_assert_str_eq(sb.buf, "hel");
	sb_reset(&sb);
	ck_assert_int_eq(read_file(p, &sb, 6), 0);	/* exactly max is fine */
	ck_assert_str_eq(sb.buf, "hello\n");
	ck_assert_int_eq(read_line(p, line, sizeof(line)), 0);
	ck_assert_str_eq(line, "hello");
	ck_assert_int_eq(read_line(p, line, 4), -EOVERFLOW);
	ck_assert_str_eq(line, "hel");
	/* replace: no temp file left behind */
	ck_assert_int_eq(write_file_atomic(p, "x", 1), 0);
	sb_reset(&sb);
	ck_assert_int_eq(read_file(p, &sb, 0), 0);
	ck_assert_str_eq(sb.buf, "x");
	DIR *d = opendir(tmpdir);
	struct dirent *de;
	int entries = 0;
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			entries++;
	closedir(d);
	ck_assert_int_eq(entries, 1);
	ck_assert_int_eq(write_str(p, "yz"), 0);
	ck_assert_int_eq(read_line(p, line, sizeof(line)), 0);
	ck_assert_str_eq(line, "yz");
	ck_assert_int_eq(read_file("/nonexistent/x", &sb, 0), -ENOENT);
	ck_assert_int_eq(write_str("/nonexistent/x", "1"), -ENOENT);
	char *bad = xasprintf("%s/nodir/f", tmpdir);
	ck_assert_int_eq(write_file_atomic(bad, "x", 1), -ENOENT);
	free(bad);
	sb_release(&sb);
	free(p);
}
END_TEST

START_TEST(mkdir_and_rm_rf)
{
	char *deep = xasprintf("%s/a/b/c/", tmpdir);
	char *outside = xasprintf("%s/keep", tmpdir);
	char *outfile = xasprintf("%s/keep/precious", tmpdir);
	char *link = xasprintf("%s/a/b/link", tmpdir);
	char *flink = xasprintf("%s/a/flink", tmpdir);
	char *top = xasprintf("%s/a", tmpdir);
	struct stat st;

	ck_assert_int_eq(mkdir_p(deep, 0755), 0);
	ck_assert_int_eq(mkdir_p(deep, 0755), 0);	/* exists: fine */
	ck_assert_int_eq(stat(deep, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_int_eq(mkdir_p(outside, 0755), 0);
	ck_assert_int_eq(write_file_atomic(outfile, "1", 1), 0);
	/* a file in the way */
	char *blocked = xasprintf("%s/sub", outfile);
	ck_assert_int_eq(mkdir_p(blocked, 0755), -ENOTDIR);
	free(blocked);
	/* symlinks into "keep" must be removed, not followed */
	ck_assert_int_eq(symlink(outside, link), 0);
	ck_assert_int_eq(symlink(outfile, flink), 0);
	ck_assert_int_eq(rm_rf(top), 0);
	ck_assert_int_ne(lstat(top, &st), 0);
	ck_assert_int_eq(stat(outfile, &st), 0);
	ck_assert_int_eq(rm_rf(top), 0);	/* already gone: fine */
	/* a symlink given directly is removed as a link */
	ck_assert_int_eq(symlink(outside, top), 0);
	ck_assert_int_eq(rm_rf(top), 0);
	ck_assert_int_eq(stat(outfile, &st), 0);
	free(deep);
	free(outside);
	free(outfile);
	free(link);
	free(flink);
	free(top);
}
END_TEST

/* Planted temp names (hard links to a victim) are skipped, never written. */
START_TEST(atomic_write_excl)
{
	char *p = xasprintf("%s/target", tmpdir);
	char *victim = xasprintf("%s/victim", tmpdir);
	struct sb sb = SB_INIT;

	ck_assert_int_eq(write_file_atomic(victim, "precious", 8), 0);
	for (unsigned i = 0; i < 40; i++) {
		char *t = xasprintf("%s.tmp.%ld.%u", p, (long)getpid(), i);

		ck_assert_int_eq(link(victim, t), 0);
		free(t);
	}
	ck_assert_int_eq(write_file_atomic(p, "new", 3), 0);
	ck_assert_int_eq(read_file(victim, &sb, 0), 0);
	ck_assert_str_eq(sb.buf, "precious");
	sb_reset(&sb);
	ck_assert_int_eq(read_file(p, &sb, 0), 0);
	ck_assert_str_eq(sb.buf, "new");
	sb_release(&sb);
	free(p);
	free(victim);
}
END_TEST

/* Cleanup records name dirs to remove: only one component of ours. */
START_TEST(rm_rf_scratch_checks)
{
	static const char *const pre[] = { "/tmp/rq-", NULL };
	char dir[64] = "/tmp/rq-scratch-XXXXXX";
	char *victim = xasprintf("%s/victim", tmpdir);
	char *dotdot, *sub, *tail = strrchr(tmpdir, '/') + 1;
	struct stat st;

	ck_assert_int_eq(mkdir_p(victim, 0700), 0);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	dotdot = xasprintf("%s/../%s/victim", dir, tail);
	sub = xasprintf("%s/victim", tmpdir);	/* tmpdir is /tmp/rq-util-* */
	ck_assert_int_eq(stat(dotdot, &st), 0);	/* the path does reach the victim */
	ck_assert_int_eq(rm_rf_scratch(dotdot, pre), -EPERM);
	ck_assert_int_eq(rm_rf_scratch(sub, pre), -EPERM);
	ck_assert_int_eq(rm_rf_scratch("/tmp/rq-", pre), -EPERM);
	ck_assert_int_eq(rm_rf_scratch("/etc", pre), -EPERM);
	ck_assert_int_eq(stat(victim, &st), 0);
	if (geteuid() == 0) {		/* a dir of another owner stays */
		ck_assert_int_eq(chown(dir, 65534, 65534), 0);
		ck_assert_int_eq(rm_rf_scratch(dir, pre), -EPERM);
		ck_assert_int_eq(stat(dir, &st), 0);
		ck_assert_int_eq(chown(dir, 0, 0), 0);
	}
	ck_assert_int_eq(rm_rf_scratch(dir, pre), 0);
	ck_assert_int_ne(stat(dir, &st), 0);
	ck_assert_int_eq(rm_rf_scratch(dir, pre), 0);	/* gone already: fine */
	free(dotdot);
	free(sub);
	free(victim);
}
END_TEST

/* A tree's links resolve inside it: absolute ones and ".." cannot leave. */
START_TEST(confined_reads)
{
	char *root = xasprintf("%s/tree", tmpdir), *p, *secret = xasprintf("%s/secret", tmpdir);
	struct sb sb = SB_INIT;

	ck_assert_int_eq(mkdir_p(root, 0755), 0);
	ck_assert_int_eq(write_file_atomic(secret, "SECRET", 6), 0);
	p = xasprintf("%s/inside", root);
	ck_assert_int_eq(write_file_atomic(p, "in", 2), 0);
	free(p);
	p = xasprintf("%s/abs", root);
	ck_assert_int_eq(symlink(secret, p), 0);
	free(p);
	p = xasprintf("%s/up", root);
	ck_assert_int_eq(symlink("../../../../../../../../secret", p), 0);
	free(p);
	p = xasprintf("%s/rel", root);
	ck_assert_int_eq(symlink("./inside", p), 0);
	free(p);

	p = xasprintf("%s/abs", root);
	ck_assert_int_eq(read_file(p, &sb, 0), 0);	/* not confined yet: the link is followed */
	ck_assert_str_eq(sb.buf, "SECRET");
	sb_reset(&sb);
	read_confine(root);
	ck_assert_int_lt(read_file(p, &sb, 0), 0);
	ck_assert_uint_eq(sb.len, 0);
	free(p);
	p = xasprintf("%s/up", root);
	ck_assert_int_lt(read_file(p, &sb, 0), 0);
	ck_assert_uint_eq(sb.len, 0);
	free(p);
	p = xasprintf("%s/rel", root);
	ck_assert_int_eq(read_file(p, &sb, 0), 0);
	ck_assert_str_eq(sb.buf, "in");
	sb_reset(&sb);
	free(p);
	ck_assert_int_eq(read_file(secret, &sb, 0), 0);	/* outside the tree: as ever */
	read_confine(NULL);
	sb_release(&sb);
	free(secret);
	free(root);
}
END_TEST

START_TEST(strings)
{
	char buf[] = "  \t mid dle \n";

	ck_assert_str_eq(strtrim(buf), "mid dle");
	ck_assert(str_starts("module:rdma_rxe", "module:"));
	ck_assert(!str_starts("mod", "module:"));
	ck_assert(str_ends("case.yaml", ".yaml"));
	ck_assert(!str_ends("yaml", ".yaml"));
	ck_assert_uint_eq(edit_distance("timeout", "timout"), 1);
	ck_assert_uint_eq(edit_distance("", "abc"), 3);
	ck_assert_uint_eq(edit_distance("kitten", "sitting"), 3);
	ck_assert_uint_eq(edit_distance("same", "same"), 0);
}
END_TEST

START_TEST(time_funcs)
{
	int64_t a = now_ms();
	usleep(20000);
	int64_t b = now_ms();
	ck_assert_int_ge(b - a, 15);
	char ts[32];
	iso8601_now(ts, sizeof(ts));
	ck_assert_uint_eq(strlen(ts), 20);
	ck_assert_int_eq(ts[10], 'T');
	ck_assert_int_eq(ts[19], 'Z');
}
END_TEST

START_TEST(utf8)
{
	uint32_t cp;
	struct sb sb = SB_INIT;

	ck_assert_uint_eq(utf8_decode((const unsigned char *)"\xc3\xa9", 2, &cp), 2);
	ck_assert_uint_eq(cp, 0xe9);
	ck_assert_uint_eq(utf8_decode((const unsigned char *)"\xf0\x9f\x98\x80", 4, &cp), 4);
	ck_assert_uint_eq(cp, 0x1f600);
	ck_assert_uint_eq(utf8_decode((const unsigned char *)"\xc0\x80", 2, &cp), 0);	/* overlong */
	ck_assert_uint_eq(utf8_decode((const unsigned char *)"\xed\xa0\x80", 3, &cp), 0);	/* surrogate */
	ck_assert_uint_eq(utf8_decode((const unsigned char *)"\xe2\x82", 2, &cp), 0);	/* truncated */
	ck_assert_uint_eq(utf8_decode((const unsigned char *)"\xf4\x90\x80\x80", 4, &cp), 0);
	sb_add_utf8(&sb, "a\xffz\xc3\xa9", 5);
	ck_assert_str_eq(sb.buf, "a\xef\xbf\xbdz\xc3\xa9");
	sb_release(&sb);
}
END_TEST

/* FIPS 180-4 example vectors, plus one that spans a block boundary in pieces. */
START_TEST(sha256_vectors)
{
	static const char *const in[] = {
		"", "abc", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	};
	static const char *const want[] = {
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		"248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
	};
	struct sha256 s;
	char hex[65];

	for (size_t i = 0; i < 3; i++) {
		sha256_init(&s);
		for (const char *p = in[i]; *p; p++)
			sha256_update(&s, p, 1);
		sha256_hex(&s, hex);
		ck_assert_str_eq(hex, want[i]);
	}
	/* One million 'a' (FIPS 180-2 appendix B.3), in odd-sized pieces. */
	char a[999];

	memset(a, 'a', sizeof(a));
	sha256_init(&s);
	for (size_t left = 1000000; left; ) {
		size_t n = left < sizeof(a) ? left : sizeof(a);

		sha256_update(&s, a, n);
		left -= n;
	}
	sha256_hex(&s, hex);
	ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, sb_basics);
	tcase_add_test(tc, alloc_helpers);
	tcase_add_test(tc, files_roundtrip);
	tcase_add_test(tc, mkdir_and_rm_rf);
	tcase_add_test(tc, atomic_write_excl);
	tcase_add_test(tc, rm_rf_scratch_checks);
	tcase_add_test(tc, confined_reads);
	tcase_add_test(tc, strings);
	tcase_add_test(tc, time_funcs);
	tcase_add_test(tc, utf8);
	tcase_add_test(tc, argv_quoted);
	tcase_add_test(tc, sha256_vectors);
}

RQ_CHECK_MAIN("util", add_tests)

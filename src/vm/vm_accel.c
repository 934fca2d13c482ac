// SPDX-License-Identifier: MIT
/*
 * KVM or TCG.  On this project's machines /dev/kvm exists, yet a standard
 * guest kernel hangs under it (nested virtualization); TCG works.  The
 * target probes KVM once by booting with a short deadline and falls back to
 * TCG; the verdict is kept in the VM cache, keyed by the host kernel, the
 * QEMU version and the guest kernel, so later runs do not pay for the probe.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "core/proc.h"
#include "core/util.h"
#include "vm/vm.h"

const char *rq_accel_name(enum rq_accel a)
{
	return a == RQ_ACCEL_KVM ? "kvm" : "tcg";
}

bool rq_kvm_usable(char *why, size_t whysz)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		snprintf(why, whysz, "/dev/kvm: %s", strerror(errno));
		return false;
	}
	close(fd);
	return true;
}

void rq_accel_key(const char *qemu, const char *guest_kver, char *buf, size_t size)
{
	struct utsname u;
	char qver[128] = "unknown";
	const char *argv[] = { qemu ? qemu : "qemu-system-x86_64", "--version", NULL };
	struct proc_opts po = { .argv = argv, .timeout_ms = scaled_ms(10000), .log_fd = -1 };
	struct proc_result r;

	proc_result_init(&r);
	if (proc_run(&po, &r) == 0 && r.exit_code == 0) {
		size_t n = strcspn(r.out.buf, "\n");

		snprintf(qver, sizeof(qver), "%.*s", (int)n, r.out.buf);
	}
	proc_result_release(&r);
	uname(&u);
	/* Keys are one line: no '|' or newline survives from the parts. */
	for (char *p = qver; *p; p++)
		if (*p == '|' || *p == '\n')
			*p = ' ';
	snprintf(buf, size, "%s|%s|%s", u.release, qver, guest_kver);
}

static void verdict_path(const char *cache, char *buf, size_t size)
{
	snprintf(buf, size, "%s/accel-verdicts", cache);
}

/*
 * The verdicts file, read only when it is a regular file of ours that no one
 * else may write (not through a link): a planted "kvm" line would boot
 * guests under an accelerator that hangs them.
 */
static int verdict_read(const char *path, struct sb *f)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	int rc;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022)) {
		close(fd);
		return -EPERM;
	}
	rc = read_fd_all(fd, f, 1 << 20);
	close(fd);
	return rc;
}

int rq_accel_verdict_get(const char *cache, const char *key)
{
	char path[1200];
	struct sb f = SB_INIT;
	int v = -1;

	verdict_path(cache, path, sizeof(path));
	if (verdict_read(path, &f) < 0) {
		sb_release(&f);
		return -1;
	}
	/* Lines: "kvm KEY" or "tcg KEY"; the last one for a key wins. */
	char *save = NULL;

	for (char *line = f.len ? strtok_r(f.buf, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strlen(line) > 4 && !strcmp(line + 4, key)) {
			if (!strncmp(line, "kvm ", 4))
				v = 1;
			else if (!strncmp(line, "tcg ", 4))
				v = 0;
		}
	}
	sb_release(&f);
	return v;
}

int rq_accel_verdict_put(const char *cache, const char *key, enum rq_accel a)
{
	char path[1200];
	struct sb f = SB_INIT;
	struct sb out = SB_INIT;
	int rc;

	verdict_path(cache, path, sizeof(path));
	mkdir_p(cache, 0700);
	verdict_read(path, &f);
	/* Rewrite without older lines for this key. */
	char *save = NULL;

	for (char *line = f.len ? strtok_r(f.buf, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save))
		if (!(strlen(line) > 4 && !strcmp(line + 4, key)))
			sb_addf(&out, "%s\n", line);
	sb_addf(&out, "%s %s\n", rq_accel_name(a), key);
	rc = write_file_atomic(path, out.buf, out.len);
	sb_release(&f);
	sb_release(&out);
	return rc;
}

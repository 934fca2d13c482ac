// SPDX-License-Identifier: MIT
/*
 * The guest image: which kernel, which modules, which initramfs.  The work
 * is done by vm/kernel.sh and vm/initramfs.sh (apt-get download, dpkg -x,
 * XZ extraction of the PVH vmlinux, modprobe --show-depends, cpio); both
 * cache their results (vm/cache in a checkout, /var/cache/rdmaqual or the
 * user's cache dir when installed: core/paths.h), so a warm call costs a
 * few ms.  They run from argv, and nothing from a case file reaches them.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/paths.h"
#include "core/proc.h"
#include "core/target.h"
#include "core/util.h"
#include "vm/vm.h"

int rq_vm_dir(char *buf, size_t size, char *err, size_t errsz)
{
	const char *env = getenv("RQ_VM_DIR");
	const struct rq_paths *p = rq_paths();
	char *ks;
	bool ok;

	if (env && *env) {
		snprintf(buf, size, "%s", env);
		if (access(buf, R_OK) == 0)
			return 0;
		snprintf(err, errsz, "RQ_VM_DIR=%s: %s", env, strerror(errno));
		return -ENOENT;
	}
	/*
	 * The checkout's vm/ or the install's libexec, as core/paths.c found
	 * them beside the binary: never a dir above an install, never ./vm.
	 */
	if (p->untrusted || (!p->checkout && *p->refused)) {
		snprintf(err, errsz, "%s", p->refused);
		return -EPERM;
	}
	ks = xasprintf("%s/kernel.sh", p->libexecdir);
	ok = !access(ks, X_OK) && strlen(p->libexecdir) < size;
	free(ks);
	if (!ok) {
		snprintf(err, errsz, "no guest image scripts in %s (set RQ_VM_DIR)", p->libexecdir);
		return -ENOENT;
	}
	snprintf(buf, size, "%s", p->libexecdir);
	return 0;
}

/* Copy KEY=value from a script's output into buf. */
static bool kv_get(const char *out, const char *key, char *buf, size_t size)
{
	size_t kl = strlen(key);
	const char *p = out;

	while (p && *p) {
		if (!strncmp(p, key, kl) && p[kl] == '=') {
			const char *v = p + kl + 1;
			size_t n = strcspn(v, "\n");

			if (n >= size)
				return false;
			memcpy(buf, v, n);
			buf[n] = '\0';
			return n > 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return false;
}

/* Run a vm/ script; its stdout must fit in the tail (small key=value lines). */
static int run_script(const char *const *argv, int64_t timeout_ms, struct proc_result *r,
		      char *err, size_t errsz)
{
	struct proc_opts po = {
		.argv = argv,
		.timeout_ms = timeout_ms,
		.log_fd = -1,
		.tail_max = 16384,
	};
	char how[256];
	int rc;

	proc_result_init(r);
	rc = proc_run(&po, r);
	if (rc < 0) {
		snprintf(err, errsz, "%s: cannot start: %s", argv[0], strerror(-rc));
		return rc;
	}
	if (r->exit_code != 0) {
		proc_describe(r, argv[0], how, sizeof(how));
		sb_rtrim(&r->err);
		/* The script's last stderr line says what went wrong. */
		const char *last = strrchr(r->err.buf, '\n');
		snprintf(err, errsz, "%s: %s", how, last ? last + 1 : r->err.buf);
		return r->timed_out ? -ETIMEDOUT : -EIO;
	}
	return 0;
}

int rq_kernel_cmdline_check(const char *s, char *err, size_t errsz)
{
	static const char *const ours[] = { "rq.", "init=", "rdinit=", "console=", "panic=" };
	const char *w = s;

	if (strlen(s) > 1000) {
		snprintf(err, errsz, "kernel command line of %zu characters (at most 1000)", strlen(s));
		return -EINVAL;
	}
	for (const char *p = s; *p; p++)
		if (*p < 0x20 || *p > 0x7e || *p == '"' || *p == '\'' || *p == '\\') {
			snprintf(err, errsz, "kernel command line: character 0x%02x at %zu is not allowed "
				 "(printable ASCII without quotes or backslashes)", (unsigned char)*p, (size_t)(p - s));
			return -EINVAL;
		}
	while (*w) {
		size_t n = strcspn(w, " ");

		for (size_t i = 0; n && i < sizeof(ours) / sizeof(ours[0]); i++)
			if (!strncmp(w, ours[i], strlen(ours[i]))) {
				snprintf(err, errsz, "kernel command line: \"%.*s\" is set by rdmaqual itself",
					 (int)(n < 60 ? n : 60), w);
				return -EINVAL;
			}
		w += n;
		w += strspn(w, " ");
	}
	return 0;
}

int rq_link_delay_check(const char *s, char *err, size_t errsz)
{
	size_t whole = strspn(s, "0123456789"), frac = 0;
	const char *p = s + whole;
	double v;

	if (*p == '.') {
		frac = strspn(p + 1, "0123456789");
		p += 1 + frac;
	}
	if (!whole || whole > 6 || frac > 6 || (strcmp(p, "us") && strcmp(p, "ms"))) {
		snprintf(err, errsz, "link delay \"%.40s\" is not a number of us or ms (\"150us\", \"2ms\")", s);
		return -EINVAL;
	}
	v = strtod(s, NULL) * (p[0] == 'm' ? 1000 : 1);
	if (v < 1 || v > 1e6) {
		snprintf(err, errsz, "link delay \"%.40s\" is outside 1us..1000ms", s);
		return -EINVAL;
	}
	return 0;
}

bool rq_kernel_spec_is_debian(const char *k)
{
	return k && !strncmp(k, "debian:", 7);
}

int rq_vm_image_prepare(const struct rq_run_opts *o, struct rq_vm_image *img,
			char *err, size_t errsz)
{
	char kscript[1200], iscript[1200], pvh[8];
	const char *cache_env = getenv("RQ_VM_CACHE");
	struct proc_result r;
	const char *argv[12];
	int rc, n = 0;

	memset(img, 0, sizeof(*img));
	rc = rq_vm_dir(img->vm_dir, sizeof(img->vm_dir), err, errsz);
	if (rc < 0)
		return rc;
	if (cache_env && *cache_env) {
		snprintf(img->cache, sizeof(img->cache), "%s", cache_env);
	} else if (!rq_paths()->checkout && !strcmp(img->vm_dir, rq_paths()->libexecdir)) {
		/* Installed: the scripts' dir is read-only, the cache is in /var or ~. */
		rc = rq_cache_dir(img->cache, sizeof(img->cache), err, errsz);
		if (rc < 0)
			return rc;
	} else {
		snprintf(img->cache, sizeof(img->cache), "%.*s/cache",
			 (int)(sizeof(img->cache) - sizeof("/cache")), img->vm_dir);
	}
	/* What is cached there is booted: the scripts check it again, and each file. */
	char cache[sizeof(img->cache)];

	snprintf(cache, sizeof(cache), "%s", img->cache);
	rc = rq_cache_check(cache, img->cache, sizeof(img->cache), err, errsz);
	if (rc < 0)
		return rc;
	snprintf(kscript, sizeof(kscript), "%s/kernel.sh", img->vm_dir);
	snprintf(iscript, sizeof(iscript), "%s/initramfs.sh", img->vm_dir);

	argv[n++] = kscript;
	argv[n++] = "--cache";
	argv[n++] = img->cache;
	if (o && rq_kernel_spec_is_debian(o->kernel)) {
		if (o->modules) {
			snprintf(err, errsz, "--modules goes with a kernel path, not with %s", o->kernel);
			return -EINVAL;
		}
		argv[n++] = "--spec";
		argv[n++] = o->kernel;
	} else if (o && (o->kernel || o->modules)) {
		if (!o->kernel || !o->modules) {
			snprintf(err, errsz, "--kernel and --modules go together");
			return -EINVAL;
		}
		argv[n++] = "--kernel";
		argv[n++] = o->kernel;
		argv[n++] = "--modules";
		argv[n++] = o->modules;
	}
	argv[n] = NULL;
	/* A cold cache downloads ~70 MB and unpacks it: minutes, not seconds. */
	rc = run_script(argv, scaled_ms(600000), &r, err, errsz);
	if (rc == 0 && !(kv_get(r.out.buf, "RQ_KSRC", img->ksrc, sizeof(img->ksrc)) &&
			 kv_get(r.out.buf, "RQ_KVER", img->kver, sizeof(img->kver)) &&
			 kv_get(r.out.buf, "RQ_KIMAGE", img->kimage, sizeof(img->kimage)) &&
			 kv_get(r.out.buf, "RQ_KPVH", pvh, sizeof(pvh)) &&
			 kv_get(r.out.buf, "RQ_MODROOT", img->modroot, sizeof(img->modroot)))) {
		snprintf(err, errsz, "vm/kernel.sh gave no kernel (output: %.120s)", r.out.buf);
		rc = -EIO;
	}
	if (rc == 0) {
		/* Optional: only Debian kernels have a package. */
		kv_get(r.out.buf, "RQ_KPKG", img->kpkg, sizeof(img->kpkg));
		kv_get(r.out.buf, "RQ_KPKGVER", img->kpkgver, sizeof(img->kpkgver));
		kv_get(r.out.buf, "RQ_KORIGIN", img->korigin, sizeof(img->korigin));
		kv_get(r.out.buf, "RQ_KCACHE", img->kcache, sizeof(img->kcache));
	}
	proc_result_release(&r);
	if (rc < 0)
		return rc;
	img->pvh = !strcmp(pvh, "1");

	const char *iargv[] = { iscript, "--cache", img->cache, "--modroot", img->modroot,
				"--kver", img->kver, NULL };
	rc = run_script(iargv, scaled_ms(120000), &r, err, errsz);
	if (rc == 0 && !kv_get(r.out.buf, "RQ_INITRD", img->initrd, sizeof(img->initrd))) {
		snprintf(err, errsz, "vm/initramfs.sh gave no initramfs");
		rc = -EIO;
	}
	/* optional: without mke2fs the guests have no scratch disk */
	if (rc == 0 && !kv_get(r.out.buf, "RQ_SCRATCH", img->scratch, sizeof(img->scratch)))
		img->scratch[0] = '\0';
	proc_result_release(&r);
	return rc;
}

/* SPDX-License-Identifier: MIT */
/*
 * driver-stack: do the RDMA stack's kernel modules belong to this kernel
 * and to the userspace beside them, and may they load?  (read-only)
 *
 * The classic failure of a driver stack is the kernel update after which
 * MLNX_OFED's DKMS modules were not rebuilt: modprobe then finds the
 * kernel's own (inbox) mlx5_core, it loads, the rails come up, and
 * userspace (ofed_info, libmlx5, the tools) is MLNX_OFED's while the
 * kernel half is not: features and performance go missing without an
 * error.  And with Secure Boot enforcing module signatures, an unsigned
 * out-of-tree module fails to load at the next boot ("Key was rejected by
 * service").
 *
 * One row per stack module that is loaded: where modinfo finds it
 * (filename: the kernel's tree, kernel/..., with intree: Y, or DKMS's
 * updates/dkms/ or MLNX_OFED's extra/mlnx-ofa_kernel/), its MODULE_VERSION
 * and srcversion against what is loaded (/sys/module/NAME/version,
 * srcversion) and against `ofed_info -s`, its vermagic against the running
 * kernel, the kernel headers DKMS needs (/lib/modules/KVER/build), and its
 * signer against the keys the kernel trusts (struct trust).  The NVIDIA
 * driver's modules the same way, and on a GPU node the driver even when
 * not loaded (missing for the running kernel); nvidia_peermem against the
 * loaded ib_core (judge_peermem()).  A node row `secure-boot`: Secure Boot as the kernel runs it
 * (its log line, else the EFI SecureBoot, SetupMode and shim's MokSBStateRT
 * variables as the EFI stub reads them, else `mokutil --sb-state`; see
 * secure_boot()), the kernel lockdown (/sys/kernel/security/lockdown, the
 * active mode in brackets), module.sig_enforce and the taint flags.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/kind.h"
#include "core/proc.h"
#include "core/util.h"
#include "rdma/nodeinfo.h"

enum { SB_ANY, SB_ON, SB_OFF };
static const char *const sb_names[] = { "any", "on", "off", NULL };

struct ds_cfg {
	struct rq_list modules;
	bool ofed_match;
	bool signed_modules;
	int secure_boot;
};

static const struct key_def ds_keys[] = {
	{ .name = "modules", .type = KEY_LIST, .elem = KEY_STR,
	  .def = "[mlx_compat, mlx5_core, mlx5_ib, ib_core, ib_uverbs, ib_umad, rdma_cm, rdma_ucm, ib_ipoib, nvidia, nvidia_uvm, nvidia_modeset, nvidia_drm, nvidia_peermem]",
	  .offset = offsetof(struct ds_cfg, modules),
	  .help = "the stack's modules to judge where loaded (a row each)" },
	{ .name = "ofed_match", .type = KEY_BOOL, .def = "true",
	  .offset = offsetof(struct ds_cfg, ofed_match),
	  .help = "with MLNX_OFED/DOCA-OFED userspace (ofed_info -s), each RDMA module must be OFED's build of the same version, for the running kernel" },
	{ .name = "signed_modules", .type = KEY_BOOL, .def = "true",
	  .offset = offsetof(struct ds_cfg, signed_modules),
	  .help = "with Secure Boot enforcing module signatures, every out-of-tree module must carry a signature (modinfo signer); its signer must be a key the kernel trusts (/proc/keys, enrolled MOK) where listed, not a queued enrollment; a module loaded unverified (taint E, the kernel log) fails" },
	{ .name = "secure_boot", .type = KEY_ENUM, .choices = sb_names, .def = "any",
	  .offset = offsetof(struct ds_cfg, secure_boot),
	  .help = "the Secure Boot state the lab wants (on, off); any: its state must only be known, and is recorded" },
	KEY_END
};

/* `modinfo NAME`: the fields of its first module ("filename", "version", ...). */
struct modinfo {
	char filename[PATH_MAX];
	char version[64];
	char srcversion[64];
	char vermagic[128];
	char signer[128];
	char depends[256];
	bool intree;
	bool found;
};

static void mi_field(struct modinfo *m, const char *k, const char *v)
{
#define MI(name, dst) if (!strcmp(k, name)) { snprintf(dst, sizeof(dst), "%s", v); return; }
	MI("filename", m->filename);
	MI("version", m->version);
	MI("srcversion", m->srcversion);
	MI("vermagic", m->vermagic);
	MI("signer", m->signer);
	MI("depends", m->depends);
#undef MI
	if (!strcmp(k, "intree"))
		m->intree = !strcmp(v, "Y");
}

/* 0; -ENOENT: modinfo ran and found no such module; -ENOEXEC: no modinfo (or none captured); with why. */
static int read_modinfo(struct rq_ctx *ctx, const char *name, struct modinfo *m, char *why, size_t whysz)
{
	const char *argv[] = { "modinfo", name, NULL };
	struct proc_result r;
	char *save = NULL;
	int ret = -ENOENT;

	memset(m, 0, sizeof(*m));
	proc_result_init(&r);
	if (rq_tool(ctx, argv, 10000, &r) < 0 || r.exec_failed) {
		snprintf(why, whysz, "%s", ctx->replay ? "the capture holds no modinfo output" :
			 "modinfo (kmod) is not installed");
		ret = -ENOEXEC;
	} else if (r.timed_out || r.exit_code != 0)
		snprintf(why, whysz, "modinfo %s failed (exit %d): %.120s", name, r.exit_code,
			 r.err.buf ? strtrim(r.err.buf) : "");
	else
		ret = 0;
	/* "key:   value" lines; a signature's continuation lines start with a tab */
	for (char *l = ret || !r.out.buf ? NULL : strtok_r(r.out.buf, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(l, ':');

		if (l[0] == '\t' || l[0] == ' ' || !colon)
			continue;
		*colon = '\0';
		/* only the first module when modinfo prints several (aliases) */
		if (!strcmp(l, "filename") && m->filename[0])
			break;
		mi_field(m, l, strtrim(colon + 1));
	}
	m->found = ret == 0 && m->filename[0];
	if (ret == 0 && !m->found) {
		snprintf(why, whysz, "modinfo %s printed no filename", name);
		ret = -EIO;
	}
	proc_result_release(&r);
	return ret;
}

/*
 * Where a module file comes from, by its path under /lib/modules/KVER/.
 * The kernel's own are the ones modpost marked intree: a file under
 * kernel/ without that mark was put there by an installer: NVIDIA's .run
 * installer writes nvidia*.ko to kernel/drivers/video/, Ubuntu's
 * precompiled linux-modules-nvidia-NNN packages to kernel/nvidia-NNN/.
 */
static const char *origin(const struct modinfo *m)
{
	if (!strcmp(m->filename, "(builtin)"))
		return "built-in";
	if (strstr(m->filename, "/updates/dkms/"))
		return "dkms";
	/*
	 * RHEL/SLES KMP: weak-modules links a kABI-compatible module built for
	 * an older kernel of the same stream into weak-updates/ of the new one
	 * (out of tree, its vermagic the build kernel's by design).
	 */
	if (strstr(m->filename, "/weak-updates/"))
		return "weak-updates";
	if (strstr(m->filename, "/extra/mlnx-ofa_kernel/") || strstr(m->filename, "/updates/mlnx-ofa_kernel/"))
		return "mlnx-ofa_kernel";
	if (m->intree)
		return "kernel";
	if (strstr(m->filename, "/kernel/drivers/video/"))
		return "nvidia-installer";
	if (strstr(m->filename, "/kernel/nvidia-"))
		return "precompiled";
	return "out-of-tree";
}

/* "MLNX_OFED_LINUX-23.10-1.1.9.0" / "OFED-internal-24.07-0.6.1" -> "23.10-1.1.9.0" / "24.07-0.6.1" */
static const char *ofed_release(const char *s)
{
	const char *dash = strchr(s, '-');

	while (dash && !(dash[1] >= '0' && dash[1] <= '9'))
		dash = strchr(dash + 1, '-');
	return dash ? dash + 1 : s;
}

/* OFED's module versions are the release without its last field: 23.10-1.1.9 of 23.10-1.1.9.0. */
static bool version_of_release(const char *modver, const char *rel)
{
	size_t n = strlen(modver);

	return n && !strncmp(modver, rel, n) && (rel[n] == '\0' || rel[n] == '.');
}

/*
 * The kernels a DKMS package has builds for: DKMS keeps each build as
 * /var/lib/dkms/PKG/VER/KVER/ARCH/ (and kernel-KVER-ARCH links beside the
 * versions, whose entries are not kernels).  "KVER" or "KVER (VER)" each.
 */
static void dkms_builds_of(struct rq_ctx *ctx, const char *pkg, bool with_ver, char *out, size_t size)
{
	char path[PATH_MAX];
	struct dirent *v, *k;
	DIR *dv, *dk;

	rq_path(ctx, path, sizeof(path), "/var/lib/dkms/%s", pkg);
	if (!(dv = opendir(path)))
		return;
	while ((v = readdir(dv))) {
		if (v->d_name[0] == '.' || !strcmp(v->d_name, "original_module"))
			continue;
		rq_path(ctx, path, sizeof(path), "/var/lib/dkms/%s/%.200s", pkg, v->d_name);
		if (!(dk = opendir(path)))
			continue;
		while ((k = readdir(dk)))
			if (k->d_name[0] >= '0' && k->d_name[0] <= '9')
				snprintf(out + strlen(out), size - strlen(out), with_ver ? "%s%.64s (%s %.64s)" :
					 "%s%.64s", out[0] ? ", " : "", k->d_name, pkg, v->d_name);
		closedir(dk);
	}
	closedir(dv);
}

/* The kernel builds MLNX_OFED's DKMS package has (/var/lib/dkms/mlnx-ofed-kernel/VER/KVER). */
static void dkms_builds(struct rq_ctx *ctx, char *out, size_t size)
{
	out[0] = '\0';
	dkms_builds_of(ctx, "mlnx-ofed-kernel", false, out, size);
}

/*
 * The NVIDIA driver's: DKMS calls it "nvidia" (NVIDIA's and Ubuntu's
 * nvidia-dkms-NNN packages, proprietary or open) or "nvidia-open"
 * (NVIDIA's kmod-nvidia-open-dkms).
 */
static void nvidia_dkms_builds(struct rq_ctx *ctx, char *out, size_t size)
{
	out[0] = '\0';
	dkms_builds_of(ctx, "nvidia", true, out, size);
	dkms_builds_of(ctx, "nvidia-open", true, out, size);
}

/* The NVIDIA GPU driver's modules (nvidia_peermem among them) and MLNX_OFED's legacy nv_peer_mem. */
static bool nvidia_module(const char *name)
{
	return str_starts(name, "nvidia") || !strcmp(name, "nv_peer_mem");
}

static bool peermem_module(const char *name)
{
	return !strcmp(name, "nvidia_peermem") || !strcmp(name, "nv_peer_mem");
}

/* An NVIDIA GPU on the bus: vendor 0x10de, class VGA (0x0300) or 3D controller (0x0302). */
static bool nvidia_gpu_present(struct rq_ctx *ctx)
{
	char path[PATH_MAX], v[32];
	struct dirent *e;
	bool found = false;
	DIR *d;

	rq_path(ctx, path, sizeof(path), "/sys/bus/pci/devices");
	if (!(d = opendir(path)))
		return false;
	while (!found && (e = readdir(d))) {
		unsigned long cls;

		if (e->d_name[0] == '.')
			continue;
		rq_path(ctx, path, sizeof(path), "/sys/bus/pci/devices/%s/vendor", e->d_name);
		if (read_line(path, v, sizeof(v)) || strtoul(v, NULL, 16) != 0x10de)
			continue;
		rq_path(ctx, path, sizeof(path), "/sys/bus/pci/devices/%s/class", e->d_name);
		cls = read_line(path, v, sizeof(v)) ? 0 : strtoul(v, NULL, 16) >> 8;
		found = cls == 0x0300 || cls == 0x0302;
	}
	closedir(d);
	return found;
}

/*
 * What says whom the kernel trusts, where it is there: the kernel's
 * keyrings as /proc/keys lists them (an X.509 key's description is
 * "<subject CN>: <key id>", crypto/asymmetric_keys/x509_public_key.c), the
 * enrolled MOK list (`mokutil --list-enrolled`: shim loads it into the
 * kernel's platform/machine keyring), the queued enrollments (`mokutil
 * --list-new`: MokManager enrolls them only when confirmed at the next
 * boot), and the kernel log.
 */
struct trust {
	struct sb keys, enrolled, pending, log;
	bool have_keys, have_enrolled, have_pending, have_log;
};

static bool tool_text(struct rq_ctx *ctx, const char *const *argv, struct sb *out)
{
	struct proc_result r;
	bool ok = false;

	proc_result_init(&r);
	if (rq_tool(ctx, argv, 10000, &r) == 0 && !r.exec_failed && !r.timed_out && !r.exit_code && r.out.buf) {
		sb_adds(out, r.out.buf);
		ok = true;
	}
	proc_result_release(&r);
	return ok;
}

static void trust_read(struct rq_ctx *ctx, struct trust *t)
{
	static const char *const enrolled[] = { "mokutil", "--list-enrolled", NULL };
	static const char *const pending[] = { "mokutil", "--list-new", NULL };
	static const char *const dmesg[] = { "dmesg", NULL };
	char path[PATH_MAX];

	*t = (struct trust){ .keys = SB_INIT, .enrolled = SB_INIT, .pending = SB_INIT, .log = SB_INIT };
	rq_path(ctx, path, sizeof(path), "/proc/keys");
	t->have_keys = read_file(path, &t->keys, 1 << 20) == 0 && t->keys.buf && strstr(t->keys.buf, "asymmetri");
	/* a listing, or mokutil's "MokListRT is empty"; anything else (no EFI variables) says nothing */
	t->have_enrolled = tool_text(ctx, enrolled, &t->enrolled) &&
			   (strstr(t->enrolled.buf, "Subject:") || strstr(t->enrolled.buf, "is empty"));
	t->have_pending = tool_text(ctx, pending, &t->pending);
	t->have_log = tool_text(ctx, dmesg, &t->log);
}

static void trust_release(struct trust *t)
{
	sb_release(&t->keys);
	sb_release(&t->enrolled);
	sb_release(&t->pending);
	sb_release(&t->log);
}

/* An X.509 listing (openssl's "Subject: CN = NAME, ..." or "CN=NAME/...") names a certificate of subject CN name. */
static bool cert_listed(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = text; p && (p = strstr(p, "Subject:")); p++) {
		const char *cn = strstr(p, "CN"), *nl = strchr(p, '\n');

		if (!cn || (nl && cn > nl))
			continue;
		cn += 2;
		while (*cn == ' ' || *cn == '=')
			cn++;
		if (!strncmp(cn, name, n) && (cn[n] == ',' || cn[n] == '/' || cn[n] == '\n' || !cn[n]))
			return true;
	}
	return false;
}

/* /proc/keys: "... asymmetri NAME: 0123abcd...: X509.rsa ..." */
static bool key_listed(const char *keys, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = keys; p && (p = strstr(p, "asymmetri ")); p++) {
		const char *d = p + strlen("asymmetri ");

		if (!strncmp(d, name, n) && d[n] == ':')
			return true;
	}
	return false;
}

/* The kernel log line saying it did not verify module name ("NAME: module verification failed: ..."). */
static bool log_refused(const char *log, const char *name, char *line, size_t size)
{
	static const char *const what[] = { "module verification failed", "Key was rejected by service", NULL };
	size_t n = strlen(name);

	for (const char *p = log; p && *p;) {
		const char *nl = strchr(p, '\n'), *q;
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		for (q = p; q < p + len && (q = strstr(q, name)) && q < p + len; q += n)
			if ((q == p || q[-1] == ' ' || q[-1] == ']') && q[n] == ':')
				for (int i = 0; what[i]; i++)
					if (strstr(q, what[i]) && strstr(q, what[i]) < p + len) {
						const char *b = strchr(p, ']');

						b = b && b < p + len ? b + 1 : p;
						while (*b == ' ')
							b++;
						snprintf(line, size, "%.*s", (int)(p + len - b), b);
						return true;
					}
		p = nl ? nl + 1 : NULL;
	}
	return false;
}

static void judge_trust(struct rq_ctx *ctx, struct rq_result *row, const char *name, const struct modinfo *m,
			const char *org, bool enforcing, const struct trust *t)
{
	char path[PATH_MAX], taint[32] = "", line[256];
	bool external = strcmp(org, "kernel") && strcmp(org, "built-in");

	if (external && m->signer[0] && !t->have_keys && !t->have_enrolled) {
		rq_fact_add(row, "signer_trusted", "unknown (no /proc/keys and no mokutil --list-enrolled captured)");
	} else if (external && m->signer[0]) {
		bool in_keys = t->have_keys && key_listed(t->keys.buf, m->signer),
		     in_mok = t->have_enrolled && cert_listed(t->enrolled.buf, m->signer),
		     queued = t->have_pending && cert_listed(t->pending.buf, m->signer);

		rq_fact_add(row, "signer_trusted", in_keys ? "yes (a kernel keyring in /proc/keys)" :
			    in_mok ? "yes (enrolled MOK: mokutil --list-enrolled)" :
			    queued ? "no: its enrollment is queued (mokutil --list-new), not confirmed" :
			    t->have_keys ? "no" : "not an enrolled MOK; the kernel's keyrings (/proc/keys, as root) were "
			    "not readable, so db or built-in keys are unknown");
		if (queued && !in_keys && !in_mok)
			rq_judge(row, false, "%s: signed by \"%s\", whose enrollment is queued (mokutil --list-new) "
				 "but was never confirmed: the kernel does not trust it%s; reboot and confirm it in "
				 "MokManager (Enroll MOK, the password given to mokutil --import)", name, m->signer,
				 enforcing ? " and will refuse the module at its next load" : "");
		/* the MOK list alone is not the kernel's whole trust (UEFI db, built-in keys): judged with the keyrings */
		else if (t->have_keys || in_mok)
			rq_judge(row, in_keys || in_mok, "%s: signed by \"%s\", a key the kernel does not trust "
				 "(%s%s%s)%s; enroll it (mokutil --import KEY.der, then confirm in MokManager at the next "
				 "boot)", name, m->signer, t->have_keys ? "not in /proc/keys' keyrings" : "",
				 t->have_keys && t->have_enrolled ? ", " : "",
				 t->have_enrolled ? "not an enrolled MOK" : "",
				 enforcing ? ": it will be refused at its next load" : "");
	}
	if (t->have_log && log_refused(t->log.buf, name, line, sizeof(line)))
		rq_judge(row, false, "%s: the kernel log says \"%s\"", name, line);
	/* /sys/module/NAME/taint: E = loaded without a verified signature (kernel/module/main.c) */
	rq_path(ctx, path, sizeof(path), "/sys/module/%s/taint", name);
	if (!read_line(path, taint, sizeof(taint)) && taint[0])
		rq_fact_add(row, "taint", taint);
	/*
	 * Taint E where signatures are not enforced (Secure Boot off, no
	 * sig_enforce) is how every unsigned DKMS build loads, an NVIDIA
	 * driver on most GPU nodes among them: the kernel allowed it, so it
	 * is recorded, not failed.  Under enforcement it cannot happen
	 * unless something is wrong.
	 */
	if (strchr(taint, 'E') && !enforcing)
		rq_fact_add(row, "unverified", "loaded with taint E: allowed, module signatures are not "
			    "enforced here");
	else
		rq_judge(row, !strchr(taint, 'E'), "%s: loaded with taint E (/sys/module/%s/taint %s) "
			 "although signatures are enforced: the kernel could not verify its signature%s%s",
			 name, name, taint, m->signer[0] ? ", signer " : " (unsigned)", m->signer);
}

/*
 * The kernel's own words when it refuses a module's symbols, each line
 * "NAME: ...": kernel/module/version.c check_version() prints "%s:
 * disagrees about version of symbol %s" (the CRC the module was built
 * with is not the one the loaded exporter has), then kernel/module/main.c
 * simplify_symbols() "%s: Unknown symbol %s (err %d)" (-22 after a CRC
 * mismatch, -2 when no loaded module exports it).  The first such line.
 */
static bool log_symbol_refusal(const char *log, const char *name, char *line, size_t size)
{
	static const char *const what[] = { ": disagrees about version of symbol ", ": Unknown symbol ", NULL };
	size_t n = strlen(name);

	for (const char *p = log; p && *p;) {
		const char *nl = strchr(p, '\n'), *b = p;
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		/* "[   14.203311] NAME: ..." (dmesg) or "NAME: ..." */
		if (*b == '[' && memchr(b, ']', len))
			b = (const char *)memchr(b, ']', len) + 1;
		while (b < p + len && *b == ' ')
			b++;
		for (int i = 0; what[i]; i++)
			if ((size_t)(p + len - b) > n + strlen(what[i]) && !strncmp(b, name, n) &&
			    !strncmp(b + n, what[i], strlen(what[i]))) {
				snprintf(line, size, "%.*s", (int)(p + len - b), b);
				return true;
			}
		p = nl ? nl + 1 : NULL;
	}
	return false;
}

/* "0x1a2b3c4d\tSYMBOL" lines (kmod's modprobe --dump-modversions / --show-exports): SYMBOL's CRC, or -1. */
static long long symbol_crc(const char *text, const char *sym)
{
	size_t n = strlen(sym);

	for (const char *p = text; p && *p;) {
		const char *tab = strchr(p, '\t'), *nl = strchr(p, '\n');

		if (tab && (!nl || tab < nl) && !strncmp(tab + 1, sym, n) &&
		    (tab[1 + n] == '\n' || tab[1 + n] == '\0' || tab[1 + n] == '\r'))
			return strtoll(p, NULL, 16);
		p = nl ? nl + 1 : NULL;
	}
	return -1;
}

static bool depends_on(const char *depends, const char *mod)
{
	size_t n = strlen(mod);

	for (const char *p = depends; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, mod, n) && (p[n] == ',' || p[n] == '\0'))
			return true;
	return false;
}

/*
 * nvidia_peermem (and the older nv_peer_mem) registers GPU memory with
 * ib_core's peer-memory API, ib_register_peer_memory_client(), which only
 * MLNX_OFED's ib_core has (the kernel's own never had it; upstream took
 * DMA-BUF instead).  So it is built against one ib_core: MLNX_OFED's, whose
 * symbol CRCs it records (modversions), or the kernel's, without the API
 * (nvidia-peermem then has nothing to register with).  Against another
 * ib_core than the loaded one it does not load, or does nothing.
 *
 * Judged from, in order of authority: the kernel log's refusal naming it;
 * the CRCs it was built with (`modprobe --dump-modversions FILE`) against
 * the ones the loaded ib_core's file exports (`modprobe --show-exports
 * FILE`); and without those, modinfo's depends (modpost lists ib_core there
 * exactly when the module imports an ib_core symbol, and nvidia_peermem's
 * only ib_core symbols are the peer-memory API's) against the loaded
 * ib_core's origin.
 */
static void judge_peermem(struct rq_ctx *ctx, struct rq_result *row, const char *name, const struct modinfo *m,
			  const struct trust *t)
{
	static const char *const api[] = { "ib_register_peer_memory_client", "ib_unregister_peer_memory_client", NULL };
	char why[256], line[256], ibdesc[PATH_MAX + 128], st[32];
	struct modinfo ib;
	struct sb dump = SB_INIT, exports = SB_INIT;
	bool have_ib, have_dump = false, have_exports = false, ib_ofed, imports = false;
	long long want = -1;
	const char *ib_org;

	have_ib = node_module_live(ctx, "ib_core", st, sizeof(st)) == 0 &&
		  read_modinfo(ctx, "ib_core", &ib, why, sizeof(why)) == 0;
	ib_org = have_ib ? origin(&ib) : "";
	ib_ofed = have_ib && strcmp(ib_org, "kernel") && strcmp(ib_org, "built-in");
	if (have_ib)
		snprintf(ibdesc, sizeof(ibdesc), "the loaded ib_core (%s, %s%s%s)", ib.filename,
			 ib_ofed ? "MLNX_OFED's" : "the kernel's own", ib.version[0] ? " " : "", ib.version);
	else
		snprintf(ibdesc, sizeof(ibdesc), "the loaded ib_core (%s)", node_module_live(ctx, "ib_core", st,
			 sizeof(st)) ? "not loaded" : "modinfo unknown");
	if (have_ib)
		rq_fact_add(row, "ib_core_loaded", ibdesc + strlen("the loaded ib_core ("));
	if (!m->found)
		goto log;
	if (m->depends[0])
		rq_fact_add(row, "depends", m->depends);
	{
		const char *dargv[] = { "modprobe", "--dump-modversions", m->filename, NULL };

		have_dump = tool_text(ctx, dargv, &dump) && dump.buf && strstr(dump.buf, "0x");
	}
	if (have_ib) {
		const char *eargv[] = { "modprobe", "--show-exports", ib.filename, NULL };

		have_exports = tool_text(ctx, eargv, &exports) && exports.buf && strstr(exports.buf, "0x");
	}
	if (have_dump) {
		want = symbol_crc(dump.buf, api[0]);
		imports = want >= 0;
	} else {
		imports = depends_on(m->depends, "ib_core");
	}
	snprintf(line, sizeof(line), imports ? "imports ib_register_peer_memory_client (built against MLNX_OFED's "
		 "ib_core)" : "none: built without MLNX_OFED's peer-memory API (against the kernel's own ib_core)");
	rq_fact_add(row, "peer_memory_api", line);
	rq_fact_add(row, "peer_memory_api_from", have_dump ? "modprobe --dump-modversions" : "modinfo depends");
log:
	if (t->have_log && log_symbol_refusal(t->log.buf, name, line, sizeof(line)))
		rq_judge(row, false, "%s: the kernel refused its symbols against %s: \"%s\": %s; rebuild it "
			 "against the loaded ib_core (reinstall the NVIDIA driver's DKMS module after MLNX_OFED: dkms "
			 "install), or load the ib_core it was built for", name, ibdesc, line,
			 !m->found ? "it was built against another ib_core than the loaded one" : imports ?
			 "it was built against MLNX_OFED's ib_core (it imports ib_register_peer_memory_client)" :
			 "it was built without MLNX_OFED's peer-memory API");
	if (!m->found || !have_ib || row->failed)
		goto out;
	if (imports && have_dump && have_exports) {
		for (int i = 0; api[i]; i++) {
			long long w = symbol_crc(dump.buf, api[i]), e = symbol_crc(exports.buf, api[i]);

			if (w < 0)
				continue;
			if (e < 0)
				rq_judge(row, false, "%s: %s needs %s, which %s does not export: it was built against "
					 "MLNX_OFED's ib_core (the only one with the peer-memory API); it will not load "
					 "(\"Unknown symbol %s\"); install MLNX_OFED's kernel modules for this kernel, or "
					 "rebuild it", name, m->filename, api[i], ibdesc, api[i]);
			else
				rq_judge(row, w == e, "%s: %s was built against another ib_core: its %s has CRC 0x%08llx, "
					 "%s exports 0x%08llx; the kernel will refuse it (\"disagrees about version of "
					 "symbol %s\"); rebuild it against the loaded ib_core (dkms install)", name,
					 m->filename, api[i], w, ibdesc, e, api[i]);
			if (row->failed)
				break;
		}
	} else if (imports && !ib_ofed) {
		rq_judge(row, false, "%s: %s was built against MLNX_OFED's ib_core (%s), but %s has no peer-memory "
			 "API: it will not load (\"Unknown symbol ib_register_peer_memory_client\"); install "
			 "MLNX_OFED's kernel modules for this kernel, or rebuild it", name, m->filename,
			 have_dump ? "it imports ib_register_peer_memory_client" : "modinfo depends: ib_core",
			 ibdesc);
	} else if (!imports && ib_ofed) {
		rq_judge(row, false, "%s: %s was built without MLNX_OFED's peer-memory API (%s), but %s is "
			 "MLNX_OFED's: it registers no GPU memory with it, GPUDirect RDMA through it cannot work; "
			 "rebuild it with MLNX_OFED installed (reinstall the NVIDIA driver's DKMS module)", name,
			 m->filename, have_dump ? "no ib_register_peer_memory_client in its modversions" :
			 "modinfo depends: no ib_core", ibdesc);
	}
out:
	sb_release(&dump);
	sb_release(&exports);
}

static void judge_module(struct rq_ctx *ctx, const struct ds_cfg *cfg, struct rq_result *row, const char *name,
			 const char *kernel, const char *ofed, bool enforcing, const struct trust *t, bool loaded)
{
	char path[PATH_MAX], why[256], loaded_sv[64] = "", loaded_ver[64] = "", vm[128], builds[256], hdr[PATH_MAX];
	struct modinfo m;
	struct stat st;
	const char *org;
	bool ofed_mod;
	int mret;

	rq_path(ctx, path, sizeof(path), "/sys/module/%s/srcversion", name);
	read_line(path, loaded_sv, sizeof(loaded_sv));
	rq_path(ctx, path, sizeof(path), "/sys/module/%s/version", name);
	read_line(path, loaded_ver, sizeof(loaded_ver));
	if (loaded)
		rq_fact_add(row, "loaded_version", loaded_ver[0] ? loaded_ver :
			    "none (no MODULE_VERSION: the kernel's own)");
	else
		rq_fact_add(row, "loaded", "no");
	if (loaded_sv[0])
		rq_fact_add(row, "loaded_srcversion", loaded_sv);
	if ((mret = read_modinfo(ctx, name, &m, why, sizeof(why)))) {
		rq_fact_add(row, "modinfo", why);
		if (peermem_module(name))
			judge_peermem(ctx, row, name, &m, t);
		if (!strcmp(name, "nvidia") && !loaded && mret == -ENOENT) {
			/*
			 * A GPU node whose driver is not loaded and modinfo finds
			 * no nvidia.ko for the running kernel (modinfo looks in
			 * /lib/modules/`uname -r` only): the kernel update after
			 * which DKMS did not build the NVIDIA driver.
			 */
			nvidia_dkms_builds(ctx, builds, sizeof(builds));
			rq_path(ctx, hdr, sizeof(hdr), "/lib/modules/%s/build", kernel);
			if (builds[0]) {
				rq_fact_add(row, "dkms_built_for", builds);
				rq_judge(row, false, "nvidia: the NVIDIA driver is not loaded and there is no nvidia.ko "
					 "for the running kernel %s (%s); DKMS built it only for %s (kernel headers "
					 "/lib/modules/%s/build %s); install the headers and rebuild it (dkms autoinstall "
					 "-k %s)", kernel, why, builds, kernel, stat(hdr, &st) == 0 ? "present" : "missing",
					 kernel);
			} else {
				/* no build anywhere: a GPU without the NVIDIA driver, not a stale one (gpudirect judges GPU nodes) */
				rq_result_set(row, RQ_SKIP, "nvidia: an NVIDIA GPU without the NVIDIA driver: not loaded, no "
					      "nvidia.ko for kernel %s (%s) and no DKMS build of it", kernel, why);
			}
		}
		if (!row->judged)
			rq_result_set(row, RQ_SKIP, "%s: where it comes from is unknown: %s", name, why);
		return;
	}
	org = origin(&m);
	rq_fact_add(row, "filename", m.filename);
	rq_fact_add(row, "origin", org);
	if (m.version[0])
		rq_fact_add(row, "version", m.version);
	if (m.srcversion[0])
		rq_fact_add(row, "srcversion", m.srcversion);
	rq_fact_add(row, "vermagic", m.vermagic);
	rq_fact_add(row, "signer", m.signer[0] ? m.signer : "none (unsigned)");

	/* vermagic's first word is the release the module was built for (vermagic.h UTS_RELEASE) */
	snprintf(vm, sizeof(vm), "%s", m.vermagic);
	if (strchr(vm, ' '))
		*strchr(vm, ' ') = '\0';
	if (vm[0] && kernel[0] && !strcmp(org, "weak-updates")) {
		/*
		 * Built for another kernel on purpose: weak-modules linked it only
		 * after checking the symbols it needs against this kernel's kABI.
		 * What is left to hold it to: the same upstream version (the part
		 * before the first '-'; a kABI stream never crosses one).
		 */
		size_t a = strcspn(vm, "-"), b = strcspn(kernel, "-");

		rq_fact_add(row, "kabi_built_for", vm);
		rq_judge(row, a == b && !strncmp(vm, kernel, a), "%s: %s (an out-of-tree weak-updates module) was "
			 "built for kernel %s, of another upstream version than the running %s: no kABI stream "
			 "spans them; install the KMP built for this kernel's stream", name, m.filename, vm, kernel);
	} else if (vm[0] && kernel[0]) {
		rq_judge(row, !strcmp(vm, kernel), "%s: %s was built for kernel %s, the running kernel is %s "
			 "(rebuild it for %s: dkms autoinstall -k %s)", name, m.filename, vm, kernel, kernel, kernel);
	}
	/* the loaded module is the file modinfo finds, else it was replaced after loading */
	if (loaded_sv[0] && m.srcversion[0])
		rq_judge(row, !strcmp(loaded_sv, m.srcversion), "%s: the loaded module (srcversion %s) is not "
			 "%s (srcversion %s): it was replaced on disk after loading; reload it or reboot",
			 name, loaded_sv, m.filename, m.srcversion);

	/* a weak-updates module is a KMP's (MLNX_OFED ships its kernel half so on RHEL/SLES), never the kernel's */
	ofed_mod = !strcmp(org, "dkms") || !strcmp(org, "mlnx-ofa_kernel") || !strcmp(org, "weak-updates");
	if (ofed && cfg->ofed_match && !nvidia_module(name)) {
		const char *rel = ofed_release(ofed);

		if (!ofed_mod) {
			dkms_builds(ctx, builds, sizeof(builds));
			rq_path(ctx, hdr, sizeof(hdr), "/lib/modules/%s/build", kernel);
			rq_judge(row, false, "%s: OFED userspace (%s) with %s %s (%s, %s): MLNX_OFED's "
				 "modules are missing for kernel %s (%s%s; kernel headers /lib/modules/%s/build %s); "
				 "install the headers and rebuild (dkms autoinstall -k %s), or reinstall "
				 "mlnx-ofed-kernel for this kernel",
				 name, ofed, strcmp(org, "kernel") && strcmp(org, "built-in") ? "an out-of-tree" :
				 "the kernel's own", name, m.filename, loaded_ver[0] ? "loaded" : "no MODULE_VERSION",
				 kernel, builds[0] ? "the DKMS build exists for " : "no DKMS build of mlnx-ofed-kernel",
				 builds[0] ? builds : "", kernel, stat(hdr, &st) == 0 ? "present" : "missing", kernel);
			if (builds[0])
				rq_fact_add(row, "dkms_built_for", builds);
		} else if (m.version[0]) {
			rq_judge(row, version_of_release(m.version, rel), "%s: module version %s is not of the OFED "
				 "userspace %s: kernel and userspace come from different OFED releases",
				 name, m.version, ofed);
		}
	}
	if (enforcing && cfg->signed_modules && strcmp(org, "kernel") && strcmp(org, "built-in"))
		rq_judge(row, m.signer[0] != '\0', "%s: Secure Boot enforces module signatures and %s is unsigned "
			 "(no signer): %s (\"Key was rejected by service\"); sign it with a key enrolled in the MOK "
			 "list (mokutil --import), as DKMS does with its /var/lib/dkms/mok.key", name, m.filename,
			 loaded ? "it will be refused at the next load" : "the kernel refuses to load it");
	if (cfg->signed_modules)
		judge_trust(ctx, row, name, &m, org, enforcing, t);
	if (peermem_module(name))
		judge_peermem(ctx, row, name, &m, t);
	if (!row->judged)
		rq_judge(row, true, "%s: from %s, nothing to hold it to", name, org);
}

/* Secure Boot as the kernel runs it. */
enum { SBS_UNKNOWN = -1, SBS_OFF = 0, SBS_ON = 1, SBS_SETUP = 2 };

#define EFI_GLOBAL "8be4df61-93ca-11d2-aa0d-00e098032b8c"
#define SHIM_LOCK "605dab50-e046-4300-abb6-3dd810dd8b23"

/* An efivarfs variable's first data byte (after its 4 attribute bytes); -ENOENT absent, -EIO unreadable. */
static int efi_byte(struct rq_ctx *ctx, const char *var)
{
	char path[PATH_MAX];
	struct sb v = SB_INIT;
	int ret;

	rq_path(ctx, path, sizeof(path), "/sys/firmware/efi/efivars/%s", var);
	ret = read_file(path, &v, 64);
	if (ret == 0)
		ret = v.len >= 5 ? (unsigned char)v.buf[4] : -EIO;
	else if (ret != -ENOENT)
		ret = -EIO;
	sb_release(&v);
	return ret;
}

static const char *sbs_name(int s)
{
	return s == SBS_ON ? "on" : s == SBS_OFF ? "off" : s == SBS_SETUP ? "in Setup Mode" : "unknown";
}

/*
 * Secure Boot as the kernel runs it, with the source that decided (why[]):
 *
 *  1. the kernel's own log line (arch/x86/kernel/setup.c: "Secure boot
 *     enabled" / "disabled" / "could not be determined"), where captured;
 *  2. else the EFI variables read as the kernel's EFI stub reads them
 *     (include/linux/efi.h efi_get_secureboot_mode(), and
 *     drivers/firmware/efi/libstub/secureboot.c): SecureBoot 0 or absent is
 *     off; SetupMode 1 is Setup Mode (no Platform Key: the firmware
 *     verifies nothing, the kernel runs it as off); SecureBoot 1 with shim's
 *     MokSBState 1 ("mokutil --disable-validation", seen at runtime as the
 *     volatile MokSBStateRT) boots the kernel with Secure Boot disabled: no
 *     lockdown from it, unsigned modules load;
 *  3. else `mokutil --sb-state`, the same variables through the tool:
 *     "SecureBoot validation is disabled in shim" after "SecureBoot
 *     enabled" is off; "EFI variables are not supported on this system"
 *     is unknown, not off.
 *
 * The lockdown mode is recorded beside it (distribution kernels lock down
 * under Secure Boot, upstream ones do not), never the decision.
 */
static int secure_boot(struct rq_ctx *ctx, struct rq_result *row, const char *log, bool *enforcing, char *why,
		       size_t whysz)
{
	static const char *const mok[] = { "mokutil", "--sb-state", NULL };
	char path[PATH_MAX], v[128], lock[128] = "", sig[8] = "", klog[64] = "";
	int fw, setup, shim, sb = SBS_UNKNOWN, mk = SBS_UNKNOWN;
	struct proc_result r;
	struct stat st;

	*enforcing = false;
	why[0] = '\0';
	/* 1. the kernel's word */
	if (log) {
		const char *m = NULL, *p = log;

		while ((p = strstr(p, "Secure boot "))) {
			if (str_starts(p, "Secure boot enabled") || str_starts(p, "Secure boot disabled") ||
			    str_starts(p, "Secure boot could not be determined"))
				m = p;
			p++;
		}
		if (m) {
			snprintf(klog, sizeof(klog), "%.*s", (int)strcspn(m, "\r\n"), m);
			rq_fact_add(row, "kernel_log", klog);
			if (str_starts(klog, "Secure boot enabled"))
				sb = SBS_ON;
			else if (str_starts(klog, "Secure boot disabled"))
				sb = SBS_OFF;
			if (sb != SBS_UNKNOWN)
				snprintf(why, whysz, "the kernel's log: \"%s\"", klog);
		}
	}

	/* 2. the EFI variables, as the EFI stub reads them */
	fw = efi_byte(ctx, "SecureBoot-" EFI_GLOBAL);
	setup = efi_byte(ctx, "SetupMode-" EFI_GLOBAL);
	shim = efi_byte(ctx, "MokSBStateRT-" SHIM_LOCK);
	rq_path(ctx, path, sizeof(path), "/sys/firmware/efi");
	if (fw >= 0) {
		rq_fact_add(row, "efi_secureboot", fw == 1 ? "1 (enabled)" : "0 (disabled)");
	} else if (stat(path, &st) < 0) {
		rq_fact_add(row, "efi_secureboot", "no /sys/firmware/efi: booted by legacy BIOS, no Secure Boot");
		if (sb == SBS_UNKNOWN) {
			sb = SBS_OFF;
			snprintf(why, whysz, "no EFI (legacy BIOS boot)");
		}
	} else {
		rq_fact_add(row, "efi_secureboot", "EFI, SecureBoot variable not readable");
	}
	if (setup >= 0)
		rq_fact_add(row, "efi_setupmode", setup == 1 ? "1 (Setup Mode: no Platform Key enrolled)" : "0 (User Mode)");
	if (shim >= 0)
		rq_fact_add(row, "shim_validation", shim == 1 ? "disabled (MokSBStateRT 1: mokutil --disable-validation)" :
			    "enabled (MokSBStateRT 0)");
	if (sb == SBS_UNKNOWN && fw >= 0) {
		if (fw == 1 && setup == 1) {
			sb = SBS_SETUP;
			snprintf(why, whysz, "EFI SetupMode 1 (SecureBoot %d): the firmware verifies nothing", fw);
		} else if (fw != 1) {
			sb = setup == 1 ? SBS_SETUP : SBS_OFF;
			snprintf(why, whysz, "EFI SecureBoot %d%s", fw, setup == 1 ? ", SetupMode 1" : "");
		} else if (shim == 1) {
			sb = SBS_OFF;
			snprintf(why, whysz, "shim's MokSBStateRT 1: the firmware's SecureBoot is 1 but shim's "
				 "validation is disabled, so the kernel booted with Secure Boot disabled (no lockdown "
				 "from it, unsigned modules load)");
		} else {
			sb = SBS_ON;
			snprintf(why, whysz, "EFI SecureBoot 1, SetupMode %s, shim validation %s", setup == 0 ? "0" : "not read",
				 shim == 0 ? "on" : "not overridden (no MokSBStateRT)");
		}
	}

	/* 3. mokutil */
	proc_result_init(&r);
	if (rq_tool(ctx, mok, 5000, &r) == 0 && !r.exec_failed && (r.out.buf || r.err.buf)) {
		char text[512];
		const char *o = r.out.buf ? r.out.buf : "", *e = r.err.buf ? r.err.buf : "";

		snprintf(text, sizeof(text), "%s%s%s", o, o[0] && e[0] ? "\n" : "", e);
		for (char *q = text; *q; q++)
			if (*q == '\n' && q[1])
				*q = ';';
		rq_fact_add(row, "mokutil", strtrim(text));
		if (strstr(o, "EFI variables are not supported") || strstr(e, "EFI variables are not supported"))
			mk = SBS_UNKNOWN;
		else if (strstr(o, "Setup Mode"))
			mk = SBS_SETUP;
		else if (strstr(o, "validation is disabled in shim"))
			mk = SBS_OFF;
		else if (strstr(o, "SecureBoot enabled"))
			mk = SBS_ON;
		else if (strstr(o, "SecureBoot disabled"))
			mk = SBS_OFF;
		if (sb == SBS_UNKNOWN && mk != SBS_UNKNOWN) {
			sb = mk;
			snprintf(why, whysz, "mokutil --sb-state: \"%s\"", strtrim(text));
		}
	}
	proc_result_release(&r);

	/* "[none] integrity confidentiality": the active mode in brackets (security/lockdown/lockdown.c) */
	rq_path(ctx, path, sizeof(path), "/sys/kernel/security/lockdown");
	if (!read_line(path, v, sizeof(v))) {
		char *a = strchr(v, '['), *b = a ? strchr(a, ']') : NULL;

		if (a && b) {
			*b = '\0';
			snprintf(lock, sizeof(lock), "%s", a + 1);
		}
		rq_fact_add(row, "lockdown", lock[0] ? lock : v);
	}
	rq_path(ctx, path, sizeof(path), "/sys/module/module/parameters/sig_enforce");
	if (!read_line(path, sig, sizeof(sig)))
		rq_fact_add(row, "sig_enforce", sig);
	/*
	 * Signatures are enforced with module.sig_enforce=1 (CONFIG_MODULE_SIG_FORCE)
	 * or under lockdown, which distributions switch on with Secure Boot.
	 */
	*enforcing = !strcmp(sig, "Y") || (lock[0] && strcmp(lock, "none"));
	rq_fact_add(row, "module_signatures", *enforcing ? "enforced" : "not enforced");
	rq_fact_add(row, "secure_boot", sbs_name(sb));
	if (why[0])
		rq_fact_add(row, "decided_by", why);
	return sb;
}

/* /proc/sys/kernel/tainted as letters (Documentation/admin-guide/tainted-kernels.rst). */
static void taint_fact(struct rq_ctx *ctx, struct rq_result *row)
{
	static const char letters[] = "PFSRMBUDAWCIOELKXTN";
	char path[PATH_MAX], v[32], out[64] = "";
	unsigned long t;

	rq_path(ctx, path, sizeof(path), "/proc/sys/kernel/tainted");
	if (read_line(path, v, sizeof(v)))
		return;
	t = strtoul(v, NULL, 10);
	for (unsigned i = 0; i < sizeof(letters) - 1; i++)
		if (t & (1ul << i))
			snprintf(out + strlen(out), sizeof(out) - strlen(out), "%c", letters[i]);
	snprintf(path, sizeof(path), "%lu%s%s", t, out[0] ? " " : "", out);
	rq_fact_add(row, "tainted", path);
}

static void ds_run(struct rq_ctx *ctx, const void *p)
{
	static const char *const ofed_argv[] = { "ofed_info", "-s", NULL };
	const struct ds_cfg *cfg = p;
	struct rq_result *sbrow = rq_ctx_row(ctx, "secure-boot", 0);
	char path[PATH_MAX], kernel[128] = "", ofed[128] = "", st[32], why[512];
	struct trust trust;
	struct proc_result r;
	bool enforcing, gpu, nvidia_live;
	int sb, nmods = 0;

	rq_path(ctx, path, sizeof(path), "/proc/sys/kernel/osrelease");
	read_line(path, kernel, sizeof(kernel));
	proc_result_init(&r);
	if (rq_tool(ctx, ofed_argv, 5000, &r) == 0 && !r.exec_failed && !r.exit_code && r.out.buf) {
		char *nl = strchr(r.out.buf, '\n');

		if (nl)
			*nl = '\0';
		snprintf(ofed, sizeof(ofed), "%s", strtrim(r.out.buf));
		if (ofed[0] && ofed[strlen(ofed) - 1] == ':')
			ofed[strlen(ofed) - 1] = '\0';
	}
	proc_result_release(&r);

	trust_read(ctx, &trust);
	sb = secure_boot(ctx, sbrow, trust.have_log ? trust.log.buf : NULL, &enforcing, why, sizeof(why));
	taint_fact(ctx, sbrow);
	rq_fact_add(sbrow, "kernel", kernel);
	rq_fact_add(sbrow, "ofed", ofed[0] ? ofed : "inbox (no ofed_info)");
	if (sb == SBS_UNKNOWN)
		rq_result_set(sbrow, RQ_SKIP, "Secure Boot state unknown: no kernel log line, the SecureBoot EFI "
			      "variable is not readable and mokutil gave no answer");
	else if (cfg->secure_boot == SB_ANY)
		rq_judge(sbrow, true, "Secure Boot %s as the kernel runs it (%s), module signatures %s",
			 sbs_name(sb), why, enforcing ? "enforced" : "not enforced");
	else
		/* Setup Mode verifies nothing: it is never "on", and the kernel runs it as off */
		rq_judge(sbrow, cfg->secure_boot == SB_ON ? sb == SBS_ON : sb != SBS_ON,
			 "Secure Boot is %s as the kernel runs it (%s), the lab wants it %s%s", sbs_name(sb), why,
			 cfg->secure_boot == SB_ON ? "on" : "off",
			 sb == SBS_SETUP ? " (Setup Mode: enroll a Platform Key, then the KEK, db and MOK keys)" : "");

	gpu = nvidia_gpu_present(ctx);
	nvidia_live = node_module_live(ctx, "nvidia", st, sizeof(st)) != -ENOENT;
	for (size_t i = 0; i < cfg->modules.n; i++) {
		const char *name = cfg->modules.str[i];
		struct rq_result *row;
		bool loaded = node_module_live(ctx, name, st, sizeof(st)) != -ENOENT;
		char line[256];

		/*
		 * Not loaded is judged for two: the GPU driver on a node with an
		 * NVIDIA GPU (after a kernel update its module may not exist for
		 * the new kernel), and a peer-memory module on a node whose GPU
		 * driver runs, or which the kernel log says it refused.
		 */
		if (!loaded && !(!strcmp(name, "nvidia") && gpu) &&
		    !(peermem_module(name) && (nvidia_live || (trust.have_log &&
		      log_symbol_refusal(trust.log.buf, name, line, sizeof(line))))))
			continue;
		if (!loaded && peermem_module(name) && !(trust.have_log &&
		    log_symbol_refusal(trust.log.buf, name, line, sizeof(line)))) {
			/* nothing says it was tried: only a file beside the running driver is judged */
			struct modinfo m;
			char mwhy[256];

			if (read_modinfo(ctx, name, &m, mwhy, sizeof(mwhy)))
				continue;
		}
		row = rq_ctx_row(ctx, name, 0);
		nmods++;
		judge_module(ctx, cfg, row, name, kernel, ofed[0] ? ofed : NULL, enforcing, &trust, loaded);
	}
	trust_release(&trust);
	if (!nmods)
		rq_fact_add(sbrow, "modules", "none of the stack's modules is loaded");
}

/*
 * Every module a case may judge (modules:'s default and the stack's
 * others), where each comes from; Secure Boot, lockdown, signatures,
 * taint, the keyrings and MOKs, the kernel log, DKMS builds, the headers.
 */
#define DS_MOD RQ_MOD_MODINFO
#define DS_GPU (RQ_MOD_MODINFO | RQ_MOD_MODINFO_GPU)
static const struct rq_read driver_stack_reads[] = {
	RQ_READS_MODULE("mlx5_core", DS_MOD), RQ_READS_MODULE("mlx5_ib", DS_MOD),
	RQ_READS_MODULE("mlx4_core", DS_MOD), RQ_READS_MODULE("mlx4_ib", DS_MOD),
	RQ_READS_MODULE("ib_core", DS_MOD | RQ_MOD_EXPORTS), RQ_READS_MODULE("ib_uverbs", DS_MOD),
	RQ_READS_MODULE("ib_umad", DS_MOD), RQ_READS_MODULE("ib_cm", DS_MOD), RQ_READS_MODULE("iw_cm", DS_MOD),
	RQ_READS_MODULE("rdma_cm", DS_MOD), RQ_READS_MODULE("rdma_ucm", DS_MOD),
	RQ_READS_MODULE("ib_ipoib", DS_MOD), RQ_READS_MODULE("rdma_rxe", DS_MOD), RQ_READS_MODULE("siw", DS_MOD),
	RQ_READS_MODULE("udp_tunnel", DS_MOD), RQ_READS_MODULE("ip6_udp_tunnel", DS_MOD),
	RQ_READS_MODULE("mlxfw", DS_MOD), RQ_READS_MODULE("crc32_generic", DS_MOD),
	RQ_READS_MODULE("nvidia", DS_GPU), RQ_READS_MODULE("nvidia_uvm", DS_MOD),
	RQ_READS_MODULE("nvidia_modeset", DS_MOD), RQ_READS_MODULE("nvidia_drm", DS_MOD),
	RQ_READS_MODULE("nvidia_peermem", DS_GPU | RQ_MOD_MODVERSIONS),
	RQ_READS_MODULE("nv_peer_mem", DS_GPU | RQ_MOD_MODVERSIONS),
	RQ_READS_MODULE("mlx_compat", DS_MOD),
	RQ_READS_PCI_VENDOR(0x10de),
	RQ_READS_TOOL("ofed_info", "-s"),
	RQ_READS_TOOL("mokutil", "--sb-state"), RQ_READS_TOOL("mokutil", "--list-enrolled"),
	RQ_READS_TOOL("mokutil", "--list-new"), RQ_READS_TOOL("dmesg"),
	RQ_READS_FILE("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"),
	RQ_READS_FILE("/sys/firmware/efi/efivars/SetupMode-8be4df61-93ca-11d2-aa0d-00e098032b8c"),
	RQ_READS_FILE("/sys/firmware/efi/efivars/MokSBStateRT-605dab50-e046-4300-abb6-3dd810dd8b23"),
	RQ_READS_FILE("/sys/kernel/security/lockdown"),
	RQ_READS_FILE("/sys/module/module/parameters/sig_enforce"),
	RQ_READS_FILE("/proc/sys/kernel/tainted"), RQ_READS_FILE("/proc/keys"),
	RQ_READS_FILE("/proc/sys/kernel/osrelease"),
	RQ_READS_LINK("/lib/modules/{kernel}/build"),
	RQ_READS_TREE("/var/lib/dkms/mlnx-ofed-kernel", 2), RQ_READS_TREE("/var/lib/dkms/nvidia", 2),
	RQ_READS_TREE("/var/lib/dkms/nvidia-open", 2),
	RQ_READS_END,
};

const struct rq_kind rq_kind_driver_stack = {
	.name = "driver-stack",
	.summary = "the stack's modules: for this kernel, OFED's where OFED userspace is installed, loaded from the file modinfo finds, signed where Secure Boot enforces it (read-only)",
	.doc = "After a kernel update MLNX_OFED's DKMS modules may not be rebuilt: the kernel's own "
	       "mlx5_core loads and userspace and kernel no longer match.  Per loaded stack module: "
	       "where modinfo finds it (kernel tree, updates/dkms, extra/mlnx-ofa_kernel), its "
	       "version and srcversion against the loaded one and against `ofed_info -s`, vermagic "
	       "against the running kernel; OFED userspace with the kernel's own modules FAILs naming "
	       "the kernel, the DKMS builds there are and the headers.  A row `secure-boot`: Secure Boot as "
	       "the kernel runs it (its log line, else the EFI SecureBoot/SetupMode variables with shim's "
	       "MokSBStateRT, else `mokutil --sb-state`; the source is named), lockdown, sig_enforce, taint; with "
	       "signatures enforced an unsigned out-of-tree module FAILs before it fails to load; a signer "
	       "the kernel does not trust (not in /proc/keys nor an enrolled MOK, or still queued in "
	       "mokutil --list-new) and a module loaded unverified (taint E) FAIL naming it.  The NVIDIA "
	       "driver's modules (nvidia, nvidia_uvm, nvidia_modeset, nvidia_drm, nvidia_peermem) are judged "
	       "alike; on a node with an NVIDIA GPU an nvidia.ko missing for the running kernel while DKMS "
	       "built it for another FAILs naming both kernels; nvidia_peermem must fit the loaded ib_core "
	       "(the kernel log's refusal, its modversions CRCs against ib_core's exports, modinfo depends "
	       "against ib_core's origin).",
	.keys = ds_keys,
	.reads = driver_stack_reads,
	.cfg_size = sizeof(struct ds_cfg),
	.default_targets = "hca,sysroot",
	.run = ds_run,
};

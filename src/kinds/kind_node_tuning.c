/* SPDX-License-Identifier: MIT */
/*
 * node-tuning: is the node tuned for RDMA as NVIDIA's performance tuning
 * guide and mlnx_tune check it?  (read-only)
 *
 * Per ConnectX PCI function: Max_Read_Request_Size and Max_Payload_Size
 * from the PCI Express capability's Device Control register (config
 * space, bits 14:12 and 7:5, 128 << n bytes, as lspci -vvv's DevCtl:
 * MaxPayload/MaxReadReq); a small read request caps what a card can pull
 * from host memory per request; and the MPS of every port above the
 * function (none may be smaller than the function's), Relaxed Ordering
 * recorded.  On the CPUs the function's completion
 * IRQs land on: the cpufreq governor (cpufreq/scaling_governor) and the
 * idle states still enabled (cpuidle/stateN: name, latency in us,
 * disable); a deep C-state adds its exit latency to every interrupt.
 * irqbalance running while the rails' IRQs are pinned one CPU each (their
 * requested smp_affinity_list, not the effective one): it will move them.  Node-wide facts: transparent huge pages and the
 * memlock limits of /etc/security/limits.conf and limits.d/ (verbs pin
 * memory: a low RLIMIT_MEMLOCK fails ibv_reg_mr).  Nothing is changed.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kind.h"
#include "kinds/nodekind.h"
#include "core/util.h"
#include "rdma/nodeinfo.h"
#include "rdma/rdmadev.h"

struct nt_cfg {
	long long max_read_req;
	long long max_payload;
	char *governor;
	long long cstate_latency;
	bool irqbalance_pinned;
	bool memlock_unlimited;
};

static const struct key_def nt_keys[] = {
	{ .name = "max_read_req", .type = KEY_INT, .def = "4096", .min = 0, .max = 4096,
	  .offset = offsetof(struct nt_cfg, max_read_req),
	  .help = "minimum PCIe Max_Read_Request_Size of every ConnectX function, bytes (NVIDIA's tuning guide: 4096; 0: recorded only)" },
	{ .name = "max_payload", .type = KEY_INT, .def = "0", .min = 0, .max = 4096,
	  .offset = offsetof(struct nt_cfg, max_payload),
	  .help = "minimum PCIe Max_Payload_Size, bytes (the platform sets it for the whole path; 0: recorded only)" },
	{ .name = "governor", .type = KEY_STR, .def = "performance",
	  .offset = offsetof(struct nt_cfg, governor),
	  .help = "cpufreq governor the CPUs of the rails' IRQs must run (\"any\": recorded only)" },
	{ .name = "cstate_latency", .type = KEY_INT, .def = "10", .min = -1, .max = 100000,
	  .offset = offsetof(struct nt_cfg, cstate_latency),
	  .help = "no idle state with a longer exit latency (us) may be enabled on those CPUs (C1/C1E pass, C6 does not; -1: recorded only)" },
	{ .name = "irqbalance_pinned", .type = KEY_BOOL, .def = "false",
	  .offset = offsetof(struct nt_cfg, irqbalance_pinned),
	  .help = "allow irqbalance to run while the rails' completion IRQs are pinned one CPU each (it moves them)" },
	{ .name = "memlock_unlimited", .type = KEY_BOOL, .def = "false",
	  .offset = offsetof(struct nt_cfg, memlock_unlimited),
	  .help = "require a memlock unlimited entry for all users or a group in limits.conf/limits.d (else recorded)" },
	KEY_END
};

/* Device Control of the PCI Express capability (ID 0x10) in the config space at path; -1. */
static int devctl_at(const char *path, unsigned *ctl)
{
	struct sb cfg = SB_INIT;
	const unsigned char *b;
	unsigned off;
	int ret = -1;

	if (read_file(path, &cfg, 4096) < 0 || cfg.len < 64) {
		sb_release(&cfg);
		return -1;
	}
	b = (const unsigned char *)cfg.buf;
	/* the capability list (status bit 4), bounded against a looping list */
	off = (b[6] & 0x10) ? b[0x34] & 0xfc : 0;
	for (int hops = 0; off >= 0x40 && off + 10 <= cfg.len && off < 256 && hops < 48; hops++) {
		if (b[off] == 0x10) {
			*ctl = b[off + 8] | (unsigned)b[off + 9] << 8;
			ret = (int)off;
			break;
		}
		off = b[off + 1] & 0xfc;
	}
	sb_release(&cfg);
	return ret;
}

static int devctl(struct rq_ctx *ctx, const char *dev, unsigned *ctl)
{
	char path[PATH_MAX];

	rq_path(ctx, path, sizeof(path), "/sys/class/infiniband/%s/device/config", dev);
	return devctl_at(path, ctl);
}

/*
 * Max_Payload_Size along the function's path up to its root port.  A
 * receiver drops a TLP larger than its own MPS as malformed, so no device
 * may run a larger MPS than a port its TLPs cross (drivers/pci/probe.c
 * pci_configure_mps() warns of exactly this against the upstream bridge).
 * The first upstream port with a smaller MPS goes into bad[] ("" none);
 * returns how many ports were read.
 */
static int mps_path(struct rq_ctx *ctx, struct rq_result *row, const struct rdma_dev *d, unsigned mps,
		     char *bad, size_t badsz)
{
	char path[PATH_MAX], real[PATH_MAX], facts[512] = "", *save = NULL;
	char comp[16][16];
	int n = 0, nread = 0;

	bad[0] = '\0';
	rq_path(ctx, path, sizeof(path), "/sys/bus/pci/devices/%s", d->pci);
	if (!realpath(path, real))
		return 0;
	for (char *t = strtok_r(real, "/", &save); t; t = strtok_r(NULL, "/", &save))
		if ((n || (!strncmp(t, "pci", 3) && strchr(t, ':'))) && n < 16)
			snprintf(comp[n++], sizeof(comp[0]), "%.15s", t);
	/* comp[0] the host bridge, comp[n - 1] the function: the bridges between */
	for (int k = n - 2; k >= 1; k--) {
		char dir[PATH_MAX] = "/sys/devices";
		unsigned ctl, up;

		for (int i = 0; i <= k; i++)
			snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/%s", comp[i]);
		rq_path(ctx, path, sizeof(path), "%s/config", dir);
		if (devctl_at(path, &ctl) < 0)
			continue;
		up = 128u << ((ctl >> 5) & 7);
		nread++;
		snprintf(facts + strlen(facts), sizeof(facts) - strlen(facts), "%s%s %u", facts[0] ? ", " : "",
			 comp[k], up);
		if (up < mps && !bad[0])
			snprintf(bad, badsz, "%s (%u bytes)", comp[k], up);
	}
	if (facts[0])
		rq_fact_add(row, "max_payload_path", facts);
	return nread;
}

/*
 * The CPUs the function's completion IRQs land on, and how many of them were
 * asked to stay on one CPU (msi_irqs -> /proc/irq/N).  Two files, two
 * questions: smp_affinity_list is the mask that was asked for (what
 * irqbalance or a tuning script wrote), effective_affinity_list where the
 * interrupt is delivered.  On x86 the effective list is always one CPU
 * whatever the mask (each vector has one target CPU, picked inside the mask:
 * arch/x86/kernel/apic/vector.c), so only the requested mask says whether an
 * IRQ is pinned; irqbalance's per-core or per-package masks are not.
 */
static void irq_cpus(struct rq_ctx *ctx, const struct rdma_dev *d, struct cpuset *cpus, int *nirq, int *npinned,
		     int *nmask)
{
	char path[PATH_MAX], v[4096];
	struct dirent *e;
	DIR *dir;

	memset(cpus, 0, sizeof(*cpus));
	*nirq = *npinned = *nmask = 0;
	rq_path(ctx, path, sizeof(path), "/sys/class/infiniband/%s/device/msi_irqs", d->name);
	if (!(dir = opendir(path)))
		return;
	while ((e = readdir(dir))) {
		struct cpuset want, lands;
		int nw = -1, nl = -1;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		rq_path(ctx, path, sizeof(path), "/proc/irq/%.16s/smp_affinity_list", e->d_name);
		if (!read_line(path, v, sizeof(v)))
			nw = cpuset_parse(v, &want);
		rq_path(ctx, path, sizeof(path), "/proc/irq/%.16s/effective_affinity_list", e->d_name);
		if (!read_line(path, v, sizeof(v)))
			nl = cpuset_parse(v, &lands);
		if (nl <= 0) {
			/* no effective list (a kernel before 4.15): it lands inside the mask */
			if (nw <= 0)
				continue;
			lands = want;
		}
		(*nirq)++;
		if (nw > 0) {
			(*nmask)++;
			*npinned += nw == 1;
		}
		for (int c = 0; c < RQ_MAX_CPUS; c++)
			if (cpuset_has(&lands, c))
				cpuset_add(cpus, c);
	}
	closedir(dir);
}

static void judge_cpus(struct rq_ctx *ctx, const struct nt_cfg *cfg, struct rq_result *row, const char *dev,
		       const struct cpuset *cpus)
{
	char path[PATH_MAX], v[64], bad_gov[256] = "", bad_idle[512] = "", list[256];
	int nogov = 0;

	cpuset_format(cpus, list, sizeof(list));
	rq_fact_add(row, "irq_cpus", list);
	for (int c = 0; c < RQ_MAX_CPUS; c++) {
		if (!cpuset_has(cpus, c))
			continue;
		rq_path(ctx, path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor", c);
		if (read_line(path, v, sizeof(v)))
			nogov++;
		else if (strcmp(cfg->governor, "any") && strcmp(v, cfg->governor) && strlen(bad_gov) < 200)
			snprintf(bad_gov + strlen(bad_gov), sizeof(bad_gov) - strlen(bad_gov), "%scpu%d %s",
				 bad_gov[0] ? ", " : "", c, v);
		for (int s = 0; s < 16; s++) {
			char name[32], lat[32], dis[8];

			rq_path(ctx, path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpuidle/state%d/name", c, s);
			if (read_line(path, name, sizeof(name)))
				break;
			rq_path(ctx, path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpuidle/state%d/latency", c, s);
			if (read_line(path, lat, sizeof(lat)))
				continue;
			rq_path(ctx, path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpuidle/state%d/disable", c, s);
			if (read_line(path, dis, sizeof(dis)))
				snprintf(dis, sizeof(dis), "0");
			if (cfg->cstate_latency >= 0 && atoll(lat) > cfg->cstate_latency && !strcmp(dis, "0") &&
			    strlen(bad_idle) < 400)
				snprintf(bad_idle + strlen(bad_idle), sizeof(bad_idle) - strlen(bad_idle),
					 "%scpu%d %s (%s us)", bad_idle[0] ? ", " : "", c, name, lat);
		}
	}
	if (nogov)
		rq_fact_add(row, "governor", "no cpufreq on some IRQ CPUs (no frequency scaling, or a VM)");
	if (strcmp(cfg->governor, "any"))
		rq_judge(row, !bad_gov[0], "%s: the CPUs of its IRQs do not run the %s governor: %s "
			 "(cpupower frequency-set -g %s, or tuned's network-latency profile)",
			 dev, cfg->governor, bad_gov, cfg->governor);
	if (cfg->cstate_latency >= 0)
		rq_judge(row, !bad_idle[0], "%s: deep idle states enabled on the CPUs of its IRQs: %s "
			 "(over %lld us exit latency; disable them: cpupower idle-set -D %lld, or "
			 "intel_idle.max_cstate=1 / processor.max_cstate=1 on the kernel command line)",
			 dev, bad_idle, cfg->cstate_latency, cfg->cstate_latency + 1);
}

/* memlock entries of limits.conf and limits.d/ ("*  hard  memlock  unlimited"). */
static bool memlock_facts(struct rq_ctx *ctx, struct rq_result *row)
{
	char path[PATH_MAX], files[16][300], out[512] = "";
	int nf = 0;
	bool unlimited = false;
	struct dirent *e;
	DIR *d;

	snprintf(files[nf++], sizeof(files[0]), "/etc/security/limits.conf");
	rq_path(ctx, path, sizeof(path), "/etc/security/limits.d");
	if ((d = opendir(path))) {
		while ((e = readdir(d)) && nf < 16)
			if (strlen(e->d_name) > 5 && !strcmp(e->d_name + strlen(e->d_name) - 5, ".conf"))
				snprintf(files[nf++], sizeof(files[0]), "/etc/security/limits.d/%.200s", e->d_name);
		closedir(d);
	}
	for (int i = 0; i < nf; i++) {
		struct sb t = SB_INIT;
		char *save = NULL;

		rq_path(ctx, path, sizeof(path), "%s", files[i]);
		if (read_file(path, &t, 1 << 16) == 0 && t.buf)
			for (char *l = strtok_r(t.buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
				char who[64], type[16], item[32], val[32];

				if (sscanf(l, " %63s %15s %31s %31s", who, type, item, val) != 4 || who[0] == '#' ||
				    strcmp(item, "memlock"))
					continue;
				snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%.40s %.8s %.16s (%.60s)",
					 out[0] ? "; " : "", who, type, val, files[i]);
				if ((!strcmp(who, "*") || who[0] == '@') && (!strcmp(val, "unlimited") || !strcmp(val, "-1")))
					unlimited = true;
			}
		sb_release(&t);
	}
	rq_fact_add(row, "memlock", out[0] ? out : "no memlock entry (the default, 8 MiB on current systemd)");
	return unlimited;
}

static void nt_run(struct rq_ctx *ctx, const void *p)
{
	const struct nt_cfg *cfg = p;
	struct rq_result *node = rq_ctx_row(ctx, "node", 0);
	struct rdma_devs devs;
	char path[PATH_MAX], v[128], pinned_rails[256] = "";
	bool irqbalance = node_proc_running(ctx, "irqbalance");
	int *idx, n;

	if (!nodekind_scan(ctx, &devs))
		return;
	n = nodekind_select(ctx, &devs, &idx, NULL);
	for (int i = 0; i < n; i++) {
		const struct rdma_dev *d = &devs.v[idx[i]];
		struct rq_result *row = rq_ctx_row(ctx, d->name, 0);
		struct cpuset cpus;
		unsigned ctl;
		int nirq, npinned, nmask;
		char bad[64];

		if (d->is_virtual || !d->pci[0]) {
			rq_result_set(row, RQ_SKIP, "%s is a virtual %s device: no PCIe function, no IRQs of its own",
				      d->name, d->driver[0] ? d->driver : "software");
			continue;
		}
		rq_fact_add(row, "pci", d->pci);
		if (devctl(ctx, d->name, &ctl) < 0) {
			rq_fact_add(row, "devctl", "config space not readable (not root, or not captured)");
		} else {
			unsigned mps = 128u << ((ctl >> 5) & 7), mrrs = 128u << ((ctl >> 12) & 7);

			snprintf(v, sizeof(v), "%u", mps);
			rq_fact_add(row, "max_payload", v);
			snprintf(v, sizeof(v), "%u", mrrs);
			rq_fact_add(row, "max_read_req", v);
			if (cfg->max_read_req)
				rq_judge(row, mrrs >= cfg->max_read_req, "%s (%s): PCIe MaxReadReq %u bytes, at least "
					 "%lld expected (DevCtl bits 14:12; setpci -s %s CAP_EXP+8.w=5000:7000 sets 4096)",
					 d->name, d->pci, mrrs, cfg->max_read_req, d->pci);
			if (cfg->max_payload)
				rq_judge(row, mps >= cfg->max_payload, "%s (%s): PCIe MaxPayload %u bytes, at least %lld "
					 "expected (the BIOS and pcie_bus_* set it for the whole path)",
					 d->name, d->pci, mps, cfg->max_payload);
			/* DevCtl bit 4: Relaxed Ordering (lspci's RlxdOrd), recorded */
			rq_fact_add(row, "relaxed_ordering", ctl & 0x10 ? "on (DevCtl RlxdOrd+)" : "off (DevCtl RlxdOrd-)");
			if (mps_path(ctx, row, d, mps, bad, sizeof(bad)) > 0)
				rq_judge(row, !bad[0], "%s (%s): PCIe MaxPayload %u bytes is larger than that of the port "
					 "above it, %s: TLPs over that size are malformed to the port (set one MPS for "
					 "the path: pcie_bus_safe, or the BIOS)", d->name, d->pci, mps, bad);
		}
		irq_cpus(ctx, d, &cpus, &nirq, &npinned, &nmask);
		if (!nirq) {
			rq_fact_add(row, "irqs", "none found (msi_irqs/ and /proc/irq not readable or not captured)");
		} else {
			judge_cpus(ctx, cfg, row, d->name, &cpus);
			snprintf(v, sizeof(v), "%d of %d one CPU each (smp_affinity_list)", npinned, nmask);
			rq_fact_add(row, "irqs_pinned", nmask ? v : "unknown (no smp_affinity_list captured)");
			if (nmask && npinned == nirq && strlen(pinned_rails) < 200)
				snprintf(pinned_rails + strlen(pinned_rails), sizeof(pinned_rails) - strlen(pinned_rails),
					 "%s%s", pinned_rails[0] ? ", " : "", d->name);
			if (irqbalance && !cfg->irqbalance_pinned && nmask)
				rq_judge(row, npinned < nirq, "%s: irqbalance is running while all %d of its IRQs "
					 "are pinned one CPU each (smp_affinity_list): it will move them (stop it, or ban them: "
					 "IRQBALANCE_BANNED_CPULIST / --banirq)", d->name, nirq);
		}
		if (!row->judged)
			rq_judge(row, true, "%s: recorded (no rule set for what was readable)", d->name);
	}
	rq_fact_add(node, "irqbalance", irqbalance ? "running" : "not running");
	rq_path(ctx, path, sizeof(path), "/sys/kernel/mm/transparent_hugepage/enabled");
	if (!read_line(path, v, sizeof(v)))
		rq_fact_add(node, "transparent_hugepage", v);
	if (cfg->memlock_unlimited)
		rq_judge(node, memlock_facts(ctx, node), "no memlock unlimited entry for all users or a group in "
			 "/etc/security/limits.conf or limits.d/: ibv_reg_mr of large buffers fails (rdma-core's "
			 "rdma.conf sets @rdma soft/hard memlock unlimited)");
	else
		rq_judge(node, true, "node facts recorded (irqbalance, THP%s)",
			 memlock_facts(ctx, node) ? ", memlock unlimited" : ", memlock");
	free(idx);
	rdma_devs_release(&devs);
}

/* MaxReadReq on the path, IRQ pinning, CPU governors and C-states, THP, memlock limits */
static const struct rq_read node_tuning_reads[] = {
	RQ_READS_PCI("config", RQ_PCI_FUNCTION | RQ_PCI_BRIDGES),
	RQ_READS_PCI_TREE("msi_irqs", 2, RQ_PCI_FUNCTION),
	RQ_READS_GLOB("/proc/irq/[0-9]*/smp_affinity_list"),
	RQ_READS_GLOB("/proc/irq/[0-9]*/effective_affinity_list"),
	RQ_READS_PROCESS("irqbalance"),
	RQ_READS_GLOB("/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor"),
	RQ_READS_GLOB("/sys/devices/system/cpu/cpu[0-9]*/cpuidle/state[0-9]*/name"),
	RQ_READS_GLOB("/sys/devices/system/cpu/cpu[0-9]*/cpuidle/state[0-9]*/latency"),
	RQ_READS_GLOB("/sys/devices/system/cpu/cpu[0-9]*/cpuidle/state[0-9]*/disable"),
	RQ_READS_FILE("/sys/kernel/mm/transparent_hugepage/enabled"),
	RQ_READS_FILE("/etc/security/limits.conf"), RQ_READS_TREE("/etc/security/limits.d", 1),
	RQ_READS_END,
};

const struct rq_kind rq_kind_node_tuning = {
	.name = "node-tuning",
	.summary = "node tuning for RDMA: PCIe MaxReadReq/MaxPayload per ConnectX function, governor and deep C-states on the rails' IRQ CPUs, irqbalance vs pinned IRQs, THP and memlock (read-only)",
	.doc = "As NVIDIA's tuning guide and mlnx_tune check a node.  Per RDMA device: Max_Read_Request_Size "
	       "and Max_Payload_Size from its PCI Express Device Control register (config space), no port above it "
	       "with a smaller Max_Payload_Size (its TLPs would be malformed there), Relaxed Ordering recorded, the "
	       "cpufreq governor and enabled idle states (exit latency) of the CPUs its completion IRQs "
	       "land on, and irqbalance running while those IRQs are pinned one CPU each (their requested "
	       "smp_affinity_list: the effective list is one CPU on x86 whatever was asked; it moves them).  "
	       "A row `node`: irqbalance, transparent huge pages, the memlock entries of limits.conf and "
	       "limits.d/ (judged with memlock_unlimited).  Unreadable config space or IRQs are facts.",
	.keys = nt_keys,
	.reads = node_tuning_reads,
	.cfg_size = sizeof(struct nt_cfg),
	.default_targets = "hca,sysroot",
	.run = nt_run,
};

/* SPDX-License-Identifier: MIT */
/*
 * irq-affinity: do every HCA's completion interrupts land where the
 * traffic's memory and threads are?
 *
 * A completion vector served by a CPU on the other NUMA node, or eight
 * vectors piled on CPU0, costs a large share of a 200-400 Gb/s port and
 * shows up only as "the numbers are low".  The device's completion IRQs are
 * found through its msi_irqs/ and the mlx5_comp<N>@pci:<BDF> names in
 * /proc/interrupts (named by mlx5's EQ code; docs/node-checks.md); each one's
 * effective_affinity_list is checked against the policy the case declares:
 *
 *   local         every vector on the device's NUMA-local CPUs; vectors
 *                 beyond the number of local CPUs may spill only once every
 *                 local CPU carries one (what cpumask_local_spread does)
 *   spread        no two vectors share a CPU while a local CPU has none
 *   local-spread  both (the default: mlx5's own layout)
 *   cpus          every vector inside the `cpus:` list
 *
 * A vector whose requested mask (smp_affinity_list) is wider than one CPU
 * was placed by irqbalance (or left to the kernel): where it lands inside
 * the mask is irqbalance's choice, which it revisits as load changes, not
 * a configuration.  Such a vector is judged by its mask (off-node only
 * when the mask holds no local CPU) and never for sharing; where it
 * landed is recorded (irq_effective_note).  One-CPU masks are someone's
 * pinning, judged where they land.
 *
 * irqbalance is reported (it rewrites affinities every 10 s), or forbidden.
 * `set: local-spread` writes mlx5's layout (journalled first) and restores
 * the previous affinities in cleanup().  rxe has no interrupts: SKIP, never
 * a vacuous pass.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kind.h"
#include "kinds/nodekind.h"
#include "rdma/nodeinfo.h"
#include "parsers/parse_interrupts.h"
#include "rdma/rdmadev.h"
#include "core/undo.h"
#include "rdma/settings.h"
#include "core/util.h"

enum { POL_LOCAL_SPREAD, POL_LOCAL, POL_SPREAD, POL_CPUS };
static const char *const policy_names[] = { "local-spread", "local", "spread", "cpus", NULL };
enum { SET_NONE, SET_LOCAL_SPREAD };
static const char *const set_names[] = { "none", "local-spread", NULL };
enum { IRQB_REPORT, IRQB_FORBID };
static const char *const irqb_names[] = { "report", "forbid", NULL };

struct irq_cfg {
	int policy;
	char *cpus;
	int set;
	int irqbalance;
	long long min_vectors;
	bool restore;
};

static const struct key_def irq_keys[] = {
	{ .name = "policy", .type = KEY_ENUM, .choices = policy_names, .def = "local-spread",
	  .offset = offsetof(struct irq_cfg, policy),
	  .help = "local (NUMA-local CPUs, spill only when all are used), spread (no shared CPU while local ones are free), local-spread (both), cpus (inside `cpus:`)" },
	{ .name = "cpus", .type = KEY_STR,
	  .offset = offsetof(struct irq_cfg, cpus),
	  .help = "CPU list for policy cpus (\"0-7,16-23\")" },
	{ .name = "set", .type = KEY_ENUM, .choices = set_names, .def = "none",
	  .offset = offsetof(struct irq_cfg, set),
	  .help = "local-spread: write mlx5's layout (vector i on the i-th local CPU, then the others) before checking; restored afterwards" },
	{ .name = "irqbalance", .type = KEY_ENUM, .choices = irqb_names, .def = "report",
	  .offset = offsetof(struct irq_cfg, irqbalance),
	  .help = "report: note whether irqbalance runs; forbid: fail when it does" },
	{ .name = "min_vectors", .type = KEY_INT, .def = "1", .min = 0, .max = 4096,
	  .offset = offsetof(struct irq_cfg, min_vectors),
	  .help = "at least this many completion vectors per device" },
	{ .name = "restore", .type = KEY_BOOL, .def = "true",
	  .offset = offsetof(struct irq_cfg, restore),
	  .help = "restore the previous affinities after set" },
	KEY_END
};

/* What set: changed is in the undo journal (written first): the one record to restore. */
/* An IRQ's vector, recorded with it: IRQ numbers change when a driver reloads. */
static void irq_undo_ident(const char *root, const char *what, char *buf, size_t size)
{
	char v[200];

	irq_vector(root, atoi(what), v, sizeof(v));
	snprintf(buf, size, "vector=%s", v[0] ? v : "-");
}

/* An affinity goes back to the IRQ of the recorded vector, whatever its number now. */
static int irq_undo(const char *root, const char *what, const char *old, const char *ident,
		    char *desc, size_t descsz, bool *gone)
{
	char vec[200], now[200];
	int irq = atoi(what);

	undo_ident_part(ident, "vector", vec, sizeof(vec));
	if (vec[0]) {
		irq_vector(root, irq, now, sizeof(now));
		if (strcmp(now, vec))
			irq = irq_by_vector(root, vec);
		if (irq < 0) {
			snprintf(desc, descsz, "affinity of IRQ %s (%s): that vector is gone", what, vec);
			*gone = true;
			return -ENOENT;
		}
	}
	if (irq != atoi(what))
		snprintf(desc, descsz, "affinity of IRQ %s (%s, now IRQ %d) back to %s", what, vec, irq,
			 old);
	else
		snprintf(desc, descsz, "affinity of IRQ %d%s%s%s back to %s", irq, vec[0] ? " (" : "",
			 vec, vec[0] ? ")" : "", old);
	return irq_set_affinity(root, irq, old);
}

static void irq_undo_describe(const char *what, const char *old, char *buf, size_t size)
{
	snprintf(buf, size, "IRQ %s affinity %s", what, old);
}

static const struct rq_undo_op irq_undo_op = {
	.type = "irq", .ident = irq_undo_ident, .apply = irq_undo, .describe = irq_undo_describe,
};

struct vec {
	int irq;
	char name[96];
	int cpu;		/* first CPU it can land on; -1 unknown */
	struct cpuset eff;	/* where it can land: the effective list, else the requested mask */
	bool masked;		/* eff is the requested mask (no effective list to read) */
	bool known;		/* it lands on cpu (not "somewhere in a wide mask") */
	struct cpuset req;	/* the requested mask, smp_affinity_list */
	int nreq;		/* its CPUs; > 1: irqbalance's (or the kernel's) placement, not a pinning */
};

static int irq_validate(const struct rq_case *c, char *err, size_t errsz)
{
	const struct irq_cfg *cfg = c->cfg;
	struct cpuset s;

	if (cfg->policy == POL_CPUS && (!cfg->cpus || cpuset_parse(cfg->cpus, &s) <= 0)) {
		snprintf(err, errsz, "policy cpus needs a CPU list in cpus: (\"0-7\")");
		return -1;
	}
	if (cfg->cpus && cpuset_parse(cfg->cpus, &s) < 0) {
		snprintf(err, errsz, "cpus: \"%s\" is not a CPU list", cfg->cpus);
		return -1;
	}
	return 0;
}

static enum rq_verdict irq_check(struct rq_ctx *ctx, const void *p, char *why, size_t whysz)
{
	const struct irq_cfg *cfg = p;

	if (cfg->set != SET_NONE && ctx->replay) {
		snprintf(why, whysz, "set: changes the node; %s is a read-only replay", ctx->target);
		return RQ_SKIP;
	}
	return RQ_NONE;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/*
 * Where the async (control) vector sits among a function's MSI-X vectors
 * when /proc/interrupts names none: kernels 5.16 to 6.3 allocate it last
 * (pci_irq.c's irq_set_name() names the pool's last index mlx5_async<N>),
 * older and newer ones first.  Unknown release: first, as mlnx-tools does.
 */
static bool async_is_last(struct rq_ctx *ctx, char *rel, size_t relsz)
{
	char path[PATH_MAX];
	int maj = 0, min = 0;

	rq_path(ctx, path, sizeof(path), "/proc/sys/kernel/osrelease");
	if (read_line(path, rel, relsz) || sscanf(rel, "%d.%d", &maj, &min) != 2)
		snprintf(rel, relsz, "unknown");
	return (maj == 5 && min >= 16) || (maj == 6 && min <= 3);
}

/*
 * Completion vectors of a PCI function: msi_irqs/ ∩ mlx5 completion names
 * (comp<N>, combined<N>), else msi_irqs less the async vector, with how
 * that was decided in how[] ("" when the names told).
 */
static int find_vectors(struct rq_ctx *ctx, const struct rdma_dev *d, const struct interrupts *in,
			struct vec **out, char *how, size_t howsz)
{
	char path[PATH_MAX];
	struct dirent **ents = NULL;
	int *msi = NULL, nmsi = 0, n = 0, ne;
	struct vec *v = NULL;

	rq_path(ctx, path, sizeof(path), "/sys/class/infiniband/%s/device/msi_irqs", d->name);
	ne = scandir(path, &ents, NULL, NULL);
	for (int i = 0; i < ne; i++) {
		if (ents[i]->d_name[0] != '.') {
			msi = xrealloc(msi, (size_t)(nmsi + 1) * sizeof(*msi));
			msi[nmsi++] = atoi(ents[i]->d_name);
		}
		free(ents[i]);
	}
	free(ents);
	if (nmsi)
		qsort(msi, (size_t)nmsi, sizeof(*msi), cmp_int);
	/* By name: mlx5_comp<N>@pci:<this BDF> (and single-vector "combined"). */
	for (int i = 0; in && i < in->n; i++) {
		char kind[16], bdf[32];
		int idx;

		if (mlx5_irq_name(in->v[i].name, kind, sizeof(kind), &idx, bdf, sizeof(bdf)) ||
		    strcmp(bdf, d->pci) || !strcmp(kind, "async"))
			continue;
		v = xrealloc(v, (size_t)(n + 1) * sizeof(*v));
		memset(&v[n], 0, sizeof(v[n]));
		v[n].irq = in->v[i].irq;
		snprintf(v[n].name, sizeof(v[n].name), "%s", in->v[i].name);
		n++;
	}
	how[0] = '\0';
	if (!n && nmsi > 1) {
		char rel[64];
		bool last = async_is_last(ctx, rel, sizeof(rel));

		snprintf(how, howsz, "no mlx5 vector names in /proc/interrupts: msi_irqs/ less its %s "
			 "vector (%d), the async one on kernel %s", last ? "last" : "first",
			 msi[last ? nmsi - 1 : 0], rel);
		for (int i = last ? 0 : 1; i < (last ? nmsi - 1 : nmsi); i++) {
			v = xrealloc(v, (size_t)(n + 1) * sizeof(*v));
			memset(&v[n], 0, sizeof(v[n]));
			v[n].irq = msi[i];
			snprintf(v[n].name, sizeof(v[n].name), "msi %d", msi[i]);
			n++;
		}
	}
	free(msi);
	*out = v;
	return n;
}

/*
 * Where an IRQ lands is its effective_affinity_list (x86: always one CPU,
 * the vector's target, arch/x86/kernel/apic/vector.c); smp_affinity_list is
 * only what was asked for, and irqbalance asks for whole cores or packages.
 * Without an effective list (kernels before 4.15, or a chip that leaves it
 * empty) the IRQ lands somewhere inside the requested mask: a single-CPU
 * mask still says where, a wider one does not.
 */
static void read_affinity(struct rq_ctx *ctx, struct vec *v)
{
	char path[PATH_MAX], list[4096];
	int n = -1;

	v->cpu = -1;
	v->masked = false;
	v->nreq = 0;
	memset(&v->eff, 0, sizeof(v->eff));
	memset(&v->req, 0, sizeof(v->req));
	rq_path(ctx, path, sizeof(path), "/proc/irq/%d/smp_affinity_list", v->irq);
	if (!read_line(path, list, sizeof(list)))
		v->nreq = cpuset_parse(list, &v->req);
	rq_path(ctx, path, sizeof(path), "/proc/irq/%d/effective_affinity_list", v->irq);
	if (!read_line(path, list, sizeof(list)))
		n = cpuset_parse(list, &v->eff);
	if (n <= 0) {
		rq_path(ctx, path, sizeof(path), "/proc/irq/%d/smp_affinity_list", v->irq);
		if (read_line(path, list, sizeof(list)) || (n = cpuset_parse(list, &v->eff)) <= 0)
			return;
		v->masked = true;
	}
	for (int c = 0; c < RQ_MAX_CPUS && v->cpu < 0; c++)
		if (cpuset_has(&v->eff, c))
			v->cpu = c;
	v->known = !v->masked || n == 1;
}

/* Placed inside a mask of several CPUs (irqbalance's, or the kernel's default), not pinned to one. */
static bool bal(const struct vec *v)
{
	return v->nreq > 1 && !v->masked;
}

static int cpu_node(struct rq_ctx *ctx, int cpu)
{
	char path[PATH_MAX], list[4096];
	struct cpuset s;

	for (int n = 0; n < 64; n++) {
		rq_path(ctx, path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", n);
		if (read_line(path, list, sizeof(list)))
			break;
		if (cpuset_parse(list, &s) > 0 && cpuset_has(&s, cpu))
			return n;
	}
	return -1;
}

/* NUMA-local CPUs of the function (all online CPUs when numa_node is -1). */
static int local_cpus(struct rq_ctx *ctx, const struct rdma_dev *d, struct cpuset *local,
		      struct cpuset *online)
{
	char path[PATH_MAX], list[4096];

	rq_path(ctx, path, sizeof(path), "/sys/devices/system/cpu/online");
	if (read_line(path, list, sizeof(list)) || cpuset_parse(list, online) <= 0)
		return -ENOENT;
	if (d->numa_node < 0)
		goto all;
	rq_path(ctx, path, sizeof(path), "/sys/class/infiniband/%s/device/local_cpulist", d->name);
	if (read_line(path, list, sizeof(list)) || cpuset_parse(list, local) <= 0)
		goto all;
	return 0;
all:
	*local = *online;
	return 0;
}

/* mlx5's layout: vector i on the i-th CPU of local-then-others order (cpumask_local_spread). */
static void apply_local_spread(struct rq_ctx *ctx, struct rq_result *row, const struct irq_cfg *cfg,
			       struct vec *v, int nv, const struct cpuset *local, const struct cpuset *online)
{
	int order[RQ_MAX_CPUS], no = 0;

	for (int c = 0; c < RQ_MAX_CPUS; c++)
		if (cpuset_has(local, c))
			order[no++] = c;
	for (int c = 0; c < RQ_MAX_CPUS; c++)
		if (cpuset_has(online, c) && !cpuset_has(local, c))
			order[no++] = c;
	for (int i = 0; i < nv && no; i++) {
		char path[PATH_MAX], old[256], what[16], want[16];
		int ret;

		rq_path(ctx, path, sizeof(path), "/proc/irq/%d/smp_affinity_list", v[i].irq);
		if (read_line(path, old, sizeof(old))) {
			rq_judge(row, false, "IRQ %d (%s): smp_affinity_list unreadable", v[i].irq, v[i].name);
			continue;
		}
		snprintf(want, sizeof(want), "%d", order[i % no]);
		if (!strcmp(old, want))
			continue;
		snprintf(what, sizeof(what), "%d", v[i].irq);
		if (cfg->restore && (ret = undo_push(ctx, "irq", what, old)) < 0) {
			rq_result_set(row, RQ_ERROR, "cannot journal the undo of IRQ %d: %s", v[i].irq,
				      strerror(-ret));
			return;
		}
		rq_log(ctx, "set IRQ %d (%s) affinity %s -> %s", v[i].irq, v[i].name, old, want);
		ret = irq_set_affinity(ctx->root, v[i].irq, want);
		rq_judge(row, ret == 0, "IRQ %d (%s): cannot set affinity %s: %s%s", v[i].irq, v[i].name,
			 want, strerror(-ret), ret == -EIO ? " (kernel-managed vector)" : "");
	}
}

static void judge_device(struct rq_ctx *ctx, struct rq_result *row, const struct irq_cfg *cfg,
			 const struct rdma_dev *d, const struct interrupts *in)
{
	struct cpuset local, online, used = { 0 }, pol;
	struct vec *v = NULL;
	int nv, nlocal, off = 0, first_off = -1, unknown = 0, balanced = 0, eff_far = 0;
	char ll[512], layout[2048] = "", reqs[2048] = "", how[256];

	nv = find_vectors(ctx, d, in, &v, how, sizeof(how));
	rq_figure_add(row, "comp_vectors", nv, "");
	if (how[0]) {
		/* a guess about which vector is which: say so on the row */
		rq_log(ctx, "%s: %s", d->name, how);
		rq_fact_add(row, "vectors_found_by", how);
	}
	if (!rq_judge(row, nv >= cfg->min_vectors && nv > 0,
		      "%s (%s): %d completion vectors found (msi_irqs/ and mlx5_comp*@pci:%s in /proc/interrupts)",
		      d->name, d->pci, nv, d->pci))
		goto out;
	if (local_cpus(ctx, d, &local, &online) < 0) {
		rq_result_set(row, RQ_ERROR, "cannot read /sys/devices/system/cpu/online");
		goto out;
	}
	if (cfg->set == SET_LOCAL_SPREAD)
		apply_local_spread(ctx, row, cfg, v, nv, &local, &online);
	nlocal = cpuset_count(&local);
	cpuset_format(&local, ll, sizeof(ll));
	rq_fact_add(row, "local_cpus", ll);
	for (int i = 0; i < nv; i++) {
		size_t l = strlen(layout);

		read_affinity(ctx, &v[i]);
		if (!rq_judge(row, v[i].cpu >= 0, "IRQ %d (%s): no effective affinity", v[i].irq, v[i].name))
			goto out;
		bool any_local = false;

		for (int c = 0; c < RQ_MAX_CPUS; c++) {
			if (!cpuset_has(&v[i].eff, c))
				continue;
			any_local |= cpuset_has(&local, c);
			if (v[i].known)
				cpuset_add(&used, c);
		}
		unknown += !v[i].known;
		balanced += bal(&v[i]);
		/*
		 * Off-node: it lands outside the local CPUs.  A wide mask (no
		 * effective list, or irqbalance's: it lands where irqbalance and
		 * the kernel pick inside it) is off-node only when none of it is
		 * local; landing off-node inside such a mask is recorded only.
		 */
		if (bal(&v[i])) {
			bool req_local = false;

			for (int c = 0; c < RQ_MAX_CPUS && !req_local; c++)
				req_local = cpuset_has(&v[i].req, c) && cpuset_has(&local, c);
			any_local = req_local;
			eff_far += !cpuset_subset(&v[i].eff, &local);
		}
		if (v[i].known && !bal(&v[i]) ? !cpuset_subset(&v[i].eff, &local) : !any_local) {
			off++;
			if (first_off < 0)
				first_off = i;
		}
		if (v[i].nreq > 0 && strlen(reqs) + 40 < sizeof(reqs)) {
			char m[32];

			cpuset_format(&v[i].req, m, sizeof(m));
			snprintf(reqs + strlen(reqs), sizeof(reqs) - strlen(reqs), "%s%d->%s", reqs[0] ? " " : "",
				 v[i].irq, m);
		}
		if (l + 32 < sizeof(layout)) {
			if (v[i].known)
				snprintf(layout + l, sizeof(layout) - l, "%s%d->%d", l ? " " : "", v[i].irq, v[i].cpu);
			else
				snprintf(layout + l, sizeof(layout) - l, "%s%d->?", l ? " " : "", v[i].irq);
		}
	}
	if (unknown) {
		char note[200];

		snprintf(note, sizeof(note), "%d of %d vectors have no effective_affinity_list and a mask of "
			 "several CPUs: where they land is unknown (not judged for sharing)", unknown, nv);
		rq_fact_add(row, "irq_landing", note);
	}
	rq_fact_add(row, "irq_layout", layout);
	if (reqs[0])
		rq_fact_add(row, "irq_requested", reqs);
	rq_figure_add(row, "vectors_off_node", off, "");
	rq_figure_add(row, "distinct_cpus", cpuset_count(&used), "");

	/* Local CPUs that carry no vector of this device. */
	struct cpuset idle = local;
	int nidle = 0, idle_cpu = -1;

	for (int c = 0; c < RQ_MAX_CPUS; c++)
		if (cpuset_has(&used, c) && cpuset_has(&idle, c))
			idle.bits[c / (8 * sizeof(unsigned long))] &= ~(1UL << (c % (8 * sizeof(unsigned long))));
	nidle = cpuset_count(&idle);
	for (int c = 0; c < RQ_MAX_CPUS && idle_cpu < 0; c++)
		if (cpuset_has(&idle, c))
			idle_cpu = c;

	if (cfg->policy == POL_LOCAL || cfg->policy == POL_LOCAL_SPREAD) {
		/* Off-node vectors are fine only once every local CPU has one. */
		if (first_off >= 0 && bal(&v[first_off])) {
			char m[64];

			cpuset_format(&v[first_off].req, m, sizeof(m));
			rq_judge(row, nidle == 0,
				 "%s (NUMA node %d, local CPUs %s): completion IRQ %d (%s) is asked for CPUs %s "
				 "(smp_affinity_list), none of them local; %d of %d vectors off-node while %d local "
				 "CPUs carry none", d->name, d->numa_node, ll, v[first_off].irq, v[first_off].name,
				 m, off, nv, nidle);
		} else if (first_off >= 0) {
			rq_judge(row, nidle == 0,
				 "%s (NUMA node %d, local CPUs %s): completion IRQ %d (%s) on CPU %d (node %d), "
				 "%d of %d vectors off-node while %d local CPUs carry none",
				 d->name, d->numa_node, ll, v[first_off].irq, v[first_off].name, v[first_off].cpu,
				 cpu_node(ctx, v[first_off].cpu), off, nv, nidle);
		} else {
			rq_judge(row, true, "all vectors local");
		}
		if (eff_far) {
			char note[160];

			snprintf(note, sizeof(note), "%d of %d vectors asked for masks with local CPUs land off-node "
				 "(effective_affinity_list): irqbalance's placement, not judged", eff_far, nv);
			rq_fact_add(row, "irq_effective_note", note);
		}
	}
	if (cfg->policy == POL_SPREAD || cfg->policy == POL_LOCAL_SPREAD) {
		bool shared = false;

		bool noted = false;

		for (int i = 0; i < nv && !shared; i++)
			for (int j = i + 1; j < nv && !shared; j++) {
				if (!(v[i].known && v[j].known && v[i].cpu == v[j].cpu && nidle > 0))
					continue;
				if (bal(&v[i]) || bal(&v[j])) {
					/* irqbalance put them there; it moves them as load changes */
					char note[512], mi[32], mj[32];

					if (noted)
						continue;
					noted = true;
					cpuset_format(&v[i].req, mi, sizeof(mi));
					cpuset_format(&v[j].req, mj, sizeof(mj));
					snprintf(note, sizeof(note), "IRQs %d (%s) and %d (%s) both land on CPU %d while "
						 "local CPU %d has none: irqbalance's placement (masks %s and %s), not judged",
						 v[i].irq, v[i].name, v[j].irq, v[j].name, v[i].cpu, idle_cpu, mi, mj);
					rq_fact_add(row, "irq_effective_sharing", note);
					continue;
				}
				shared = true;
				rq_judge(row, false, "%s: completion IRQs %d (%s) and %d (%s) share CPU %d while local CPU %d has none",
					 d->name, v[i].irq, v[i].name, v[j].irq, v[j].name, v[i].cpu, idle_cpu);
			}
		if (!shared)
			rq_judge(row, true, "spread");
	}
	if (cfg->policy == POL_CPUS && cpuset_parse(cfg->cpus, &pol) > 0)
		for (int i = 0; i < nv; i++)
			if (!rq_judge(row, cpuset_subset(&v[i].eff, &pol), "%s: completion IRQ %d (%s) on CPU %d, outside %s",
				      d->name, v[i].irq, v[i].name, v[i].cpu, cfg->cpus))
				break;
	(void)nlocal;
	if (balanced)
		rq_figure_add(row, "vectors_balanced", balanced, "");
out:
	free(v);
}

static void parent_layout(struct rq_ctx *ctx, struct rq_result *row, const char *parent)
{
	char path[PATH_MAX], layout[1024] = "";
	struct dirent **ents = NULL;
	int ne, nv = 0;

	/* net/<if>/device is the virtio device; its PCI function holds msi_irqs/. */
	rq_path(ctx, path, sizeof(path), "/sys/class/net/%s/device/../msi_irqs", parent);
	ne = scandir(path, &ents, NULL, alphasort);
	for (int i = 0; i < ne; i++) {
		if (ents[i]->d_name[0] != '.') {
			struct vec v = { .irq = atoi(ents[i]->d_name) };
			size_t l = strlen(layout);

			read_affinity(ctx, &v);
			if (l + 24 < sizeof(layout))
				snprintf(layout + l, sizeof(layout) - l, "%s%d->%d", l ? " " : "", v.irq, v.cpu);
			nv++;
		}
		free(ents[i]);
	}
	free(ents);
	if (nv) {
		rq_fact_add(row, "parent_irq_layout", layout);
		rq_figure_add(row, "parent_vectors", nv, "");
	}
}

static void irq_run(struct rq_ctx *ctx, const void *p)
{
	const struct irq_cfg *cfg = p;
	struct rdma_devs devs;
	struct interrupts in = { 0 };
	struct sb text = SB_INIT;
	char path[PATH_MAX], err[256];
	int *idx, n;
	bool irqb, have_in = false;

	if (!nodekind_scan(ctx, &devs))
		return;
	rq_path(ctx, path, sizeof(path), "/proc/interrupts");
	if (read_file(path, &text, 0) == 0) {
		if (interrupts_parse(text.buf, text.len, &in, err, sizeof(err)) == 0)
			have_in = true;
		else
			rq_log(ctx, "/proc/interrupts not understood (%s): using msi_irqs/ only", err);
	}
	irqb = node_proc_running(ctx, "irqbalance");
	n = nodekind_select(ctx, &devs, &idx, "no RDMA device selected: no completion IRQs to check");
	for (int i = 0; i < n; i++) {
		const struct rdma_dev *d = &devs.v[idx[i]];
		struct rq_result *row = rq_ctx_row(ctx, d->name, 0);

		if (d->is_virtual || !d->pci[0]) {
			/*
			 * rxe runs in softirq context: nothing of its own to place.
			 * Informational: where its parent's (virtio) vectors sit.
			 */
			if (d->parent[0])
				parent_layout(ctx, row, d->parent);
			rq_result_set(row, RQ_SKIP, "%s is a virtual %s device: it has no interrupts of its own%s%s%s",
				      d->name, d->driver[0] ? d->driver : "software",
				      d->parent[0] ? " (parent " : "", d->parent,
				      d->parent[0] ? "'s vectors recorded, informational)" : "");
			continue;
		}
		rq_fact_add(row, "irqbalance", irqb ? "running (affinities may change every 10 s)" : "not running");
		if (cfg->irqbalance == IRQB_FORBID)
			rq_judge(row, !irqb, "irqbalance is running: it rewrites %s's IRQ affinities", d->name);
		judge_device(ctx, row, cfg, d, have_in ? &in : NULL);
	}
	free(idx);
	interrupts_release(&in);
	sb_release(&text);
	rdma_devs_release(&devs);
}

/*
 * Restore from the journal: this case's changes, or, in the fresh worker
 * that cleans up after a killed case, the killed one's.
 */
static void irq_cleanup(struct rq_ctx *ctx, const void *p)
{
	const struct irq_cfg *cfg = p;

	if (cfg->restore)
		undo_restore(ctx, "irq");
}

/* The device's vectors and local CPUs, the kernel's affinities, irqbalance */
static const struct rq_read irq_affinity_reads[] = {
	RQ_READS_PCI_TREE("msi_irqs", 2, RQ_PCI_FUNCTION | RQ_PCI_PARENT),
	RQ_READS_PCI("local_cpulist", RQ_PCI_ALL),
	RQ_READS_FILE("/proc/interrupts"),
	RQ_READS_GLOB("/proc/irq/[0-9]*/smp_affinity_list"),
	RQ_READS_GLOB("/proc/irq/[0-9]*/effective_affinity_list"),
	RQ_READS_FILE("/sys/devices/system/cpu/online"),
	RQ_READS_GLOB("/sys/devices/system/node/node[0-9]*/cpulist"),
	RQ_READS_PROCESS("irqbalance"),
	RQ_READS_END,
};

const struct rq_kind rq_kind_irq_affinity = {
	.name = "irq-affinity",
	.summary = "every HCA's completion IRQs on its NUMA-local CPUs, spread, or on a given CPU list; optional set and restore",
	.doc = "A completion vector served from the far NUMA node, or several piled on one CPU, "
	       "costs a large share of a fast port silently.  Per device: completion IRQs from "
	       "msi_irqs/ and the mlx5_comp*@pci:<BDF> names in /proc/interrupts (layout of any "
	       "kernel), each IRQ's effective affinity checked against the declared policy (local, "
	       "spread, both, or an explicit CPU list), the IRQ->CPU layout recorded, irqbalance "
	       "reported.  A vector asked for several CPUs (irqbalance's mask) is judged by its mask "
	       "(off-node when none of it is local); where irqbalance landed it, sharing included, is "
	       "recorded, not failed.  set: local-spread writes mlx5's layout (journalled first) and restores the "
	       "old affinities afterwards.  rxe has no interrupts: SKIP.",
	.keys = irq_keys,
	.reads = irq_affinity_reads,
	.cfg_size = sizeof(struct irq_cfg),
	.undo = &irq_undo_op,
	.default_targets = "hca,sysroot",
	.validate = irq_validate,
	.check = irq_check,
	.run = irq_run,
	.cleanup = irq_cleanup,
};

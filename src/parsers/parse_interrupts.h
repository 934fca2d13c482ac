/* SPDX-License-Identifier: MIT */
/*
 * /proc/interrupts as different kernels print it: a header of online CPUs
 * ("CPU0 CPU1 ..."; absent in `grep mlx` excerpts), then per line the IRQ
 * number or name, one count per CPU, and a description whose layout changed
 * across versions (6.1: "IR-PCI-MSI 31981569-edge  mlx5_comp0@pci:BDF";
 * 6.x: "IR-PCI-MSIX-BDF 1-edge  mlx5_comp0@pci:BDF"; arch lines like
 * "NMI: ... Non-maskable interrupts", "ERR: 0").  Pure: text in, structs out.
 */
#ifndef RQ_PARSE_INTERRUPTS_H
#define RQ_PARSE_INTERRUPTS_H

#include <stddef.h>
#include <stdint.h>

struct irq_line {
	int irq;		/* number, or -1 for NMI/LOC/ERR... */
	char label[16];		/* "98", "NMI" */
	uint64_t *counts;	/* ncounts entries, in header CPU order */
	int ncounts;
	uint64_t total;
	char desc[160];		/* everything after the counts, trimmed */
	char name[96];		/* last token of desc: the action (mlx5_comp0@pci:BDF) */
};

struct interrupts {
	int *cpus;		/* CPU ids of the columns (CPU0 CPU2 ... when some are offline) */
	int ncpus;
	struct irq_line *v;
	int n;
};

int interrupts_parse(const char *text, size_t len, struct interrupts *out, char *err, size_t errsz);
void interrupts_release(struct interrupts *in);
const struct irq_line *interrupts_find(const struct interrupts *in, int irq);

/*
 * "mlx5_comp3@pci:0000:3b:00.0" -> kind "comp", index 3, bdf.  Every era's
 * names: mlx5_comp<N>, mlx5_async<N> and mlx5_combined<N> (a single vector
 * doing both) of today's pci_irq.c, and the control EQs of kernels before
 * 5.1 and of older MLNX_OFED, mlx5_pages_eq, mlx5_cmd_eq and mlx5_async_eq,
 * which come out as kind "async" (index 0).  0, or -EINVAL when the name is
 * not mlx5's.
 */
int mlx5_irq_name(const char *name, char *kind, size_t kindsz, int *index, char *bdf, size_t bdfsz);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * /proc/interrupts parser: the real ConnectX-5 excerpt in
 * ../shared/real-outputs/interrupts (read in place, skipped when absent),
 * the 6.1 and 6.8 layouts of the node fixtures, a VM's virtio lines, and
 * malformed input.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include "parsers/parse_interrupts.h"
#include "parsers/parsers.h"
#include "core/util.h"
#include "real_outputs.h"
#include "check_main.h"

START_TEST(real_cx5_grep_excerpt)
{
	struct sb s = SB_INIT;
	struct interrupts in;
	const struct irq_line *l;
	char err[256] = "", kind[16], bdf[32];
	int idx, comp0 = 0, comp1 = 0;

	if (!real_sample("interrupts/cx5-mcx516a-12cpu-grep-mlx.txt", &s)) {
		sb_release(&s);
		return;
	}
	ck_assert_msg(interrupts_parse(s.buf, s.len, &in, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(in.n, 15);
	ck_assert_int_eq(in.ncpus, 12);
	l = interrupts_find(&in, 98);
	ck_assert_str_eq(l->name, "mlx5_async0@pci:0000:01:00.0");
	ck_assert_uint_eq(l->counts[10], 23274);
	ck_assert_uint_eq(l->total, 23274);
	l = interrupts_find(&in, 99);
	ck_assert_uint_eq(l->counts[0], 324);
	ck_assert_uint_eq(l->counts[7], 4360);
	ck_assert_int_eq(mlx5_irq_name(l->name, kind, sizeof(kind), &idx, bdf, sizeof(bdf)), 0);
	ck_assert_str_eq(kind, "comp");
	ck_assert_int_eq(idx, 0);
	ck_assert_str_eq(bdf, "0000:01:00.0");
	l = interrupts_find(&in, 119);
	ck_assert_str_eq(l->name, "mlx5_comp11@pci:0000:01:00.0");
	ck_assert_uint_eq(l->counts[8], 146064);
	ck_assert_uint_eq(l->counts[11], 2);
	ck_assert_str_eq(l->desc, "IR-PCI-MSIX-0000:01:00.0   12-edge      mlx5_comp11@pci:0000:01:00.0");
	ck_assert_uint_eq(interrupts_find(&in, 102)->total, 0);
	for (int i = 0; i < in.n; i++)
		if (!mlx5_irq_name(in.v[i].name, kind, sizeof(kind), &idx, bdf, sizeof(bdf)) && !strcmp(kind, "comp"))
			(*(strcmp(bdf, "0000:01:00.0") ? &comp1 : &comp0))++;
	ck_assert_int_eq(comp0, 12);
	ck_assert_int_eq(comp1, 1);
	interrupts_release(&in);
	sb_release(&s);
}
END_TEST

static void parse_file(const char *path, struct interrupts *in)
{
	struct sb s = SB_INIT;
	char err[256] = "";

	ck_assert_int_eq(read_file(path, &s, 0), 0);
	ck_assert_msg(interrupts_parse(s.buf, s.len, in, err, sizeof(err)) == 0, "%s: %s", path, err);
	sb_release(&s);
}

START_TEST(kernel_layouts)
{
	struct interrupts in;
	const struct irq_line *l;
	char kind[16], bdf[32];
	int idx;

	/* 6.1: "IR-PCI-MSI <hwirq>-edge name", 16 CPUs, arch lines at the end */
	parse_file("fixtures/nodes/cx6dx-roce-2numa/proc/interrupts", &in);
	ck_assert_int_eq(in.ncpus, 16);
	ck_assert_int_eq(in.cpus[15], 15);
	l = interrupts_find(&in, 97);
	ck_assert_int_eq(mlx5_irq_name(l->name, kind, sizeof(kind), &idx, bdf, sizeof(bdf)), 0);
	ck_assert_str_eq(kind, "comp");
	ck_assert(str_starts(l->desc, "IR-PCI-MSI "));
	ck_assert_int_eq(in.v[in.n - 4].irq, -1);
	ck_assert_str_eq(in.v[in.n - 4].label, "NMI");
	ck_assert_str_eq(in.v[in.n - 1].label, "MIS");
	interrupts_release(&in);

	/* 6.8: "IR-PCI-MSIX-<bdf> <n>-edge name" */
	parse_file("fixtures/nodes/cx7-ndr-ib/proc/interrupts", &in);
	l = interrupts_find(&in, 98);
	ck_assert_str_eq(l->name, "mlx5_comp1@pci:0000:18:00.0");
	ck_assert(str_starts(l->desc, "IR-PCI-MSIX-0000:18:00.0"));
	interrupts_release(&in);

	/* A one-vCPU guest: virtio vectors only */
	parse_file("fixtures/nodes/rxe-vm1/proc/interrupts", &in);
	ck_assert_int_eq(in.ncpus, 1);
	ck_assert_str_eq(interrupts_find(&in, 25)->name, "virtio1-input.0");
	ck_assert_int_eq(mlx5_irq_name("virtio1-input.0", kind, sizeof(kind), &idx, bdf, sizeof(bdf)), -EINVAL);
	interrupts_release(&in);

	/* every era: the pre-5.1 control EQs are async, combined is numbered */
	ck_assert_int_eq(mlx5_irq_name("mlx5_pages_eq@pci:0000:81:00.0", kind, sizeof(kind), &idx, bdf, sizeof(bdf)), 0);
	ck_assert_str_eq(kind, "async");
	ck_assert_str_eq(bdf, "0000:81:00.0");
	ck_assert_int_eq(mlx5_irq_name("mlx5_cmd_eq@pci:0000:81:00.0", kind, sizeof(kind), &idx, bdf, sizeof(bdf)), 0);
	ck_assert_str_eq(kind, "async");
	ck_assert_int_eq(mlx5_irq_name("mlx5_async_eq@pci:0000:81:00.0", kind, sizeof(kind), &idx, bdf, sizeof(bdf)), 0);
	ck_assert_str_eq(kind, "async");
	ck_assert_int_eq(mlx5_irq_name("mlx5_combined0@pci:0000:81:00.2", kind, sizeof(kind), &idx, bdf, sizeof(bdf)), 0);
	ck_assert_str_eq(kind, "combined");
	ck_assert_int_eq(mlx5_irq_name("mlx5_async17@pci:0000:81:00.0", kind, sizeof(kind), &idx, bdf, sizeof(bdf)), 0);
	ck_assert_str_eq(kind, "async");
	ck_assert_int_eq(idx, 17);
	ck_assert_int_eq(mlx5_irq_name("mlx5_other_eq@pci:0000:81:00.0", kind, sizeof(kind), &idx, bdf, sizeof(bdf)), -EINVAL);
}
END_TEST

/* A description that is not UTF-8 was dropped from the answer (fuzz_parsers). */
START_TEST(adapter_non_utf8)
{
	static const char t[] = "      CPU0\n 24: 7 PCI-MSI 1-edge caf\xe9\n";
	const struct rq_parser *p = rq_parser_find("interrupts");
	json_t *j = NULL, *irq;
	char err[256];

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(p->parse(t, strlen(t), &j, err, sizeof(err)), 0);
	irq = json_array_get(json_object_get(j, "irqs"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(irq, "name")), "caf\xef\xbf\xbd");
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(irq, "desc")), "\xef\xbf\xbd"));
	json_decref(j);
}
END_TEST

START_TEST(malformed)
{
	struct interrupts in;
	char err[256];
	static const char toomany[] = "      CPU0 CPU1\n 5: 1 2 3 IO-APIC x\n";
	static const char nolabel[] = "      CPU0\n garbage here\n";
	static const char offline[] = "      CPU0 CPU2\n 5: 1 2 IO-APIC 5-edge foo\n";

	ck_assert_int_eq(interrupts_parse(nolabel, strlen(nolabel), &in, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "line 2: expected \"IRQ: counts...\"");
	/* counts beyond the header's CPUs are part of the description: "3" is not a CPU */
	ck_assert_int_eq(interrupts_parse(toomany, strlen(toomany), &in, err, sizeof(err)), 0);
	ck_assert_str_eq(in.v[0].desc, "3 IO-APIC x");
	interrupts_release(&in);
	ck_assert_int_eq(interrupts_parse(offline, strlen(offline), &in, err, sizeof(err)), 0);
	ck_assert_int_eq(in.cpus[1], 2);
	interrupts_release(&in);
	ck_assert_int_eq(interrupts_parse(" 5: 1 2 x\n 6: 1 y\n", 19, &in, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "line 2: IRQ 6 has 1 counts for 2 CPUs");
	/* found by fuzzing: a numbered line without counts, twice, leaked */
	ck_assert_int_eq(interrupts_parse(" 5: x\n 6: y\n", 12, &in, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "line 1: IRQ 5 has no counts");
	ck_assert_int_eq(mlx5_irq_name("mlx5_comp@pci:0000:01:00.0", err, 16, &(int){0}, err + 16, 32), -EINVAL);
	ck_assert_int_eq(mlx5_irq_name("mlx5_comp2x@pci:0000:01:00.0", err, 16, &(int){0}, err + 16, 32), -EINVAL);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_test(tc, real_cx5_grep_excerpt);
	tcase_add_test(tc, kernel_layouts);
	tcase_add_test(tc, malformed);
	tcase_add_test(tc, adapter_non_utf8);
}

RQ_CHECK_MAIN("parse_interrupts", add_tests)

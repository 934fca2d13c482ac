/* SPDX-License-Identifier: MIT */
/*
 * Every node kind (driver, pcie, mtu, irq-affinity) against every node tree
 * in fixtures/nodes/ with one lab configuration per kind: the healthy trees
 * pass (or SKIP where a kind does not apply), each fault variant fails on the
 * faulty device/port with a reason that names it, and no row ever passes
 * having judged nothing.
 */
#include <check.h>
#include <jansson.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/wait.h>
#include <unistd.h>

#include "nodecase.h"
#include "rdma/nodeinfo.h"
#include "rdma/rdmadev.h"
#include "rdma/pci_ids.h"
#include "rdma/verbs_pair.h"
#include "core/undo.h"
#include "rdma/settings.h"
#include "agent/request.h"
#include "targets/target_node.h"
#include "check_main.h"
#include "real_outputs.h"

/* The expectation table leaves trailing fields out on purpose. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

/* The lab configuration of each kind, applied to every tree. */
static const char *const driver_kv[] = {
	"min_fw=16.35.2000,20.35.1012,22.36.1010,28.39.1002", NULL,
};

struct expect {
	const char *fixture;
	const char *kind;
	enum rq_verdict verdict;	/* of the whole case: FAIL if any row fails, else PASS/SKIP */
	const char *bad_dev;		/* FAIL: the failing row's device */
	int bad_port;
	const char *reason;		/* FAIL/SKIP: substring of the reason */
	unsigned rows;			/* expected number of rows (0: don't check) */
	const char *skip_dev;		/* PASS: these devices' rows SKIP (comma-separated) */
	unsigned nfail;			/* FAIL: number of failing rows (0: one) */
};

static const struct expect table[] = {
	{ "cx5-edr-ib", "driver", RQ_PASS, NULL, 0, NULL, 2 },
	{ "cx5-edr-ib-oldfw", "driver", RQ_FAIL, "mlx5_1", 1, "mlx5_1: firmware 16.20.1010 is older than the minimum 16.35.2000", 2 },
	{ "cx6-hdr-ib", "driver", RQ_PASS, NULL, 0, NULL, 1 },
	{ "cx6-hdr-ib-x8", "driver", RQ_PASS, NULL, 0, NULL, 1 },
	{ "cx6dx-roce-2numa", "driver", RQ_PASS, NULL, 0, NULL, 3 },
	{ "cx6dx-roce-farnuma", "driver", RQ_PASS, NULL, 0, NULL, 3 },
	{ "cx6dx-roce-mtu4180", "driver", RQ_PASS, NULL, 0, NULL, 3 },
	{ "cx7-ndr-ib", "driver", RQ_PASS, NULL, 0, NULL, 8 },
	{ "cx7-ndr-ib-raildown", "driver", RQ_FAIL, "mlx5_5", 1, "mlx5_5 port 1 is DOWN (physical state Disabled)", 8 },
	{ "cx7-ndr-ib-init", "driver", RQ_FAIL, "mlx5_3", 1,
	  "mlx5_3 port 1 is INIT (physical state LinkUp) (no subnet manager has configured it)", 8 },
	{ "cx7-ndr-ib-polling", "driver", RQ_FAIL, "mlx5_6", 1,
	  "mlx5_6 port 1 is DOWN (physical state Polling) (Polling: no cable, or no peer at the other end)", 8 },
	{ "rxe-vm1", "driver", RQ_PASS, NULL, 0, NULL, 1 },
	{ "cx5-edr-ib-gen3", "driver", RQ_PASS, NULL, 0, NULL, 2 },
	{ "cx6-hdr-ib-fwfamily", "driver", RQ_FAIL, "ibp59s0", 1,
	  "ibp59s0: firmware 22.36.1010 is of family 22, but PCI id 0x101b is a ConnectX-6 (family 20)", 1 },
	{ "cx7-ndr200-gen4slot", "driver", RQ_PASS, NULL, 0, NULL, 1 },
	{ "cx9-xdr-ib", "driver", RQ_PASS, NULL, 0, NULL, 1 },
	/* mstflint q: a burned upgrade that is not running yet */
	{ "cx6dx-roce-fwpending", "driver", RQ_FAIL, "rocep59s0f0", 1,
	  "rocep59s0f0 (0000:3b:00.0): firmware 22.39.1002 is flashed but 22.36.1010 is running", 2, NULL, 2 },
	{ "cx6dx-roce-lossless", "driver", RQ_PASS, NULL, 0, NULL, 2 },
	/* functions without an RDMA device by design are SKIP rows, not FAILs */
	{ "cx6dx-roce-vfs", "driver", RQ_PASS, NULL, 0, NULL, 4, "0000:3b:00.3,0000:3b:00.4" },
	{ "bf3-host", "driver", RQ_PASS, NULL, 0, NULL, 5, "0000:3b:00.0,0000:3c:00.0,0000:3d:00.2" },
	{ "cx6dx-roce-lag", "driver", RQ_PASS, NULL, 0, NULL, 2, "0000:3b:00.1" },

	{ "cx5-edr-ib", "pcie", RQ_PASS, NULL, 0, NULL, 2 },
	{ "cx5-edr-ib-oldfw", "pcie", RQ_PASS, NULL, 0, NULL, 2 },
	{ "cx6-hdr-ib", "pcie", RQ_PASS, NULL, 0, NULL, 1 },
	{ "cx6-hdr-ib-x8", "pcie", RQ_FAIL, "ibp59s0", 0,
	  "ibp59s0 (0000:3b:00.0): PCIe link 0000:3b:00.0-0000:3a:00.0 at 16.0 GT/s x8, both ends capable of 16.0 GT/s x16 (126 of 252 Gb/s)", 1 },
	{ "cx6dx-roce-2numa", "pcie", RQ_PASS, NULL, 0, NULL, 3 },
	{ "cx6dx-roce-farnuma", "pcie", RQ_PASS, NULL, 0, NULL, 3 },
	{ "cx6dx-roce-mtu4180", "pcie", RQ_PASS, NULL, 0, NULL, 3 },
	{ "cx7-ndr-ib", "pcie", RQ_PASS, NULL, 0, NULL, 8 },
	{ "cx7-ndr-ib-raildown", "pcie", RQ_PASS, NULL, 0, NULL, 8 },
	{ "rxe-vm1", "pcie", RQ_SKIP, NULL, 0, "rxe0 is a virtual rxe device: no PCIe link", 1 },
	/* both functions share one Gen3 x16 link: 126 Gb/s for 2 x 100 */
	{ "cx5-edr-ib-gen3", "pcie", RQ_FAIL, "mlx5_0", 0,
	  "mlx5_0 (0000:3b:00.0): PCIe carries 126 Gb/s (limited by 0000:3b:00.0 at 8.0 GT/s x16), less than the 200 Gb/s of the card's 2 active ports", 2, NULL, 2 },
	/* a Gen5 card at Gen4 in a Gen4 slot is the best the slot allows */
	{ "cx7-ndr200-gen4slot", "pcie", RQ_PASS, NULL, 0, NULL, 1 },
	{ "cx9-xdr-ib", "pcie", RQ_PASS, NULL, 0, NULL, 1 },
	{ "cx6dx-roce-vfs", "pcie", RQ_PASS, NULL, 0, NULL, 2, "rocep59s0f0v0" },
	{ "bf3-host", "pcie", RQ_PASS, NULL, 0, NULL, 2 },
	/* the slot link above the card's own switch trained at x8 */
	{ "bf3-host-slotx8", "pcie", RQ_FAIL, "mlx5_0", 0,
	  "mlx5_0 (0000:3d:00.0): PCIe link 0000:3b:00.0-0000:3a:00.0 at 32.0 GT/s x8, both ends capable of 32.0 GT/s x16 (252 of 504 Gb/s)", 2, NULL, 2 },
	{ "cx6dx-roce-lag", "pcie", RQ_PASS, NULL, 0, NULL, 1 },

	{ "cx5-edr-ib", "mtu", RQ_PASS, NULL, 0, NULL, 2 },
	{ "cx5-edr-ib-oldfw", "mtu", RQ_PASS, NULL, 0, NULL, 2 },
	{ "cx6-hdr-ib", "mtu", RQ_PASS, NULL, 0, NULL, 1 },
	{ "cx6-hdr-ib-x8", "mtu", RQ_PASS, NULL, 0, NULL, 1 },
	{ "cx6dx-roce-2numa", "mtu", RQ_PASS, NULL, 0, NULL, 3 },
	{ "cx6dx-roce-farnuma", "mtu", RQ_PASS, NULL, 0, NULL, 3 },
	{ "cx6dx-roce-mtu4180", "mtu", RQ_FAIL, "rocep59s0f1", 1,
	  "rocep59s0f1 port 1: netdev ens1f1np1 MTU 4180 is jumbo but active_mtu is 2048 (mlx5 needs MTU >= 4192 for 4096)", 3 },
	{ "cx7-ndr-ib", "mtu", RQ_PASS, NULL, 0, NULL, 8 },
	{ "cx7-ndr-ib-raildown", "mtu", RQ_PASS, NULL, 0, NULL, 8, "mlx5_5" },
	{ "rxe-vm1", "mtu", RQ_PASS, NULL, 0, NULL, 1 },

	{ "cx5-edr-ib", "irq-affinity", RQ_PASS, NULL, 0, NULL, 2 },
	{ "cx5-edr-ib-oldfw", "irq-affinity", RQ_PASS, NULL, 0, NULL, 2 },
	{ "cx6-hdr-ib", "irq-affinity", RQ_PASS, NULL, 0, NULL, 1 },
	{ "cx6-hdr-ib-x8", "irq-affinity", RQ_PASS, NULL, 0, NULL, 1 },
	{ "cx6dx-roce-2numa", "irq-affinity", RQ_PASS, NULL, 0, NULL, 3 },
	{ "cx6dx-roce-farnuma", "irq-affinity", RQ_FAIL, "rocep175s0f0", 0,
	  "rocep175s0f0 (NUMA node 1, local CPUs 8-15): completion IRQ 136 (mlx5_comp0@pci:0000:af:00.0) on CPU 0 (node 0), "
	  "16 of 16 vectors off-node while 8 local CPUs carry none", 3 },
	{ "cx6dx-roce-mtu4180", "irq-affinity", RQ_PASS, NULL, 0, NULL, 3 },
	{ "cx7-ndr-ib", "irq-affinity", RQ_PASS, NULL, 0, NULL, 8 },
	{ "cx7-ndr-ib-raildown", "irq-affinity", RQ_PASS, NULL, 0, NULL, 8 },
	/* irqbalance landed two of mlx5_0's vectors on one CPU inside its 0-7 masks: its choice, not a fault */
	{ "cx7-ndr-ib-stacked", "irq-affinity", RQ_PASS, NULL, 0, NULL, 8 },
	{ "cx6dx-roce-2numa", "link-health", RQ_SKIP, NULL, 0, "a replay has one reading", 6 },

	{ "cx6dx-roce-lossless", "roce-lossless", RQ_PASS, NULL, 0, NULL, 2 },
	{ "cx6dx-roce-lossless-pfcoff", "roce-lossless", RQ_FAIL, "rocep59s0f1", 1,
	  "rocep59s0f1 port 1 (ens1f1np1): PFC is off on the RoCE priority 3 of ens1f1np1", 2 },
	{ "cx6dx-roce-lossless-trustpcp", "roce-lossless", RQ_FAIL, "rocep59s0f1", 1,
	  "rocep59s0f1 port 1 (ens1f1np1): trust is PCP (the DCB APP table of ens1f1np1 has no DSCP entry)", 2 },
	{ "cx6dx-roce-lossless-ecnoff", "roce-lossless", RQ_FAIL, "rocep59s0f1", 1,
	  "rocep59s0f1 port 1 (ens1f1np1): ECN notification point (roce_np) is off on priority 3", 2 },
	{ "cx6dx-roce-2numa", "roce-lossless", RQ_SKIP, NULL, 0, "the capture holds no dcb output", 3 },
	{ "rxe-vm1", "roce-lossless", RQ_SKIP, NULL, 0, "rxe0 is a virtual rxe device: no DCB", 1 },
	{ "rxe-vm1", "irq-affinity", RQ_SKIP, NULL, 0, "rxe0 is a virtual rxe device: it has no interrupts of its own", 1 },

	/*
	 * Socket Direct: one HDR port through two Gen3 x16 links on two
	 * buses, one PF each; the PFs are one card by sys_image_guid and
	 * board id, and their links add up (126 + 126 >= 200).
	 */
	{ "cx6-hdr-ib-sd", "pcie", RQ_PASS, NULL, 0, NULL, 2 },
	{ "cx6-hdr-ib-sd", "driver", RQ_PASS, NULL, 0, NULL, 2 },
	{ "cx6-hdr-ib-sd", "irq-affinity", RQ_PASS, NULL, 0, NULL, 2 },
	/* one of the two links at x8: that link fails, and the card's 189 Gb/s on both rows */
	{ "cx6-hdr-ib-sd-x8", "pcie", RQ_FAIL, "mlx5_0", 0,
	  "mlx5_0 (0000:3b:00.0): the card's 2 PCIe links carry 189 Gb/s (0000:3b:00.0 126 Gb/s + 0000:86:00.0 63 Gb/s), "
	  "less than the 200 Gb/s of its 1 active port", 2, NULL, 2 },
	{ "cx6-hdr-ib-sd-x8", "pcie", RQ_FAIL, "mlx5_1", 0,
	  "mlx5_1 (0000:86:00.0): PCIe link 0000:86:00.0-0000:85:00.0 at 8.0 GT/s x8, both ends capable of 8.0 GT/s x16", 2, NULL, 2 },
	/* each PF's IRQs against its own NUMA node */
	{ "cx6-hdr-ib-sd-irqnode0", "irq-affinity", RQ_FAIL, "mlx5_1", 0,
	  "mlx5_1 (NUMA node 1, local CPUs 8-15): completion IRQ 109 (mlx5_comp0@pci:0000:86:00.0) on CPU 0 (node 0)", 2 },
	{ "cx6-hdr-ib-sd-irqnode0", "pcie", RQ_PASS, NULL, 0, NULL, 2 },

	/* RoCE LAG: the slave PFs' DCB and ECN are judged, not bond0's */
	{ "cx6dx-roce-lag-lossless", "roce-lossless", RQ_PASS, NULL, 0, NULL, 1 },
	{ "cx6dx-roce-lag-lossless-pfcoff", "roce-lossless", RQ_FAIL, "mlx5_bond_0", 1,
	  "mlx5_bond_0 port 1 (ens1f1np1, LAG slave of bond0): PFC is off on the RoCE priority 3 of ens1f1np1", 1 },
	{ "cx6dx-roce-lag", "roce-lossless", RQ_SKIP, NULL, 0,
	  "mlx5_bond_0 port 1 (ens1f0np0, LAG slave of bond0): DCB state unknown", 1 },

	/* GPUDirect RDMA: 8 GPUs + 8 ConnectX-7 behind 4 switches, and one fault each */
	/*
	 * GPUDirect RDMA is judged per GPU: each needs a rail behind its own
	 * switch.  The storage card mlx5_8/mlx5_9 in a CPU slot (NODE/SYS, as on
	 * every DGX) serves no GPU: a SKIP row, not a FAIL.
	 */
	{ "hgx-h100", "gpudirect", RQ_PASS, NULL, 0, NULL, 13, "mlx5_8,mlx5_9" },
	{ "hgx-h100", "pcie", RQ_PASS, NULL, 0, NULL, 10 },
	{ "hgx-h100-farrail", "gpudirect", RQ_FAIL, "rails", 0,
	  "1 of 8 GPUs have no rail behind their PCIe switch (PIX/PXB): GPU3 (0000:4c:00.0): nearest NODE, NICs "
	  "serving no GPU there: mlx5_3, mlx5_8, mlx5_9: their GPUDirect RDMA crosses the CPU", 13 },
	{ "hgx-h100-acs", "gpudirect", RQ_FAIL, "mlx5_2", 0,
	  "mlx5_2 (0000:3c:00.0): ACS redirects peer traffic to GPU2 (0000:3b:00.0) up to the root complex at "
	  "0000:3a:01.0 (ACSCtl: SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-), "
	  "0000:3a:00.0 (ACSCtl: SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-): "
	  "disable it (setpci -s BDF ECAP_ACS+0x6.w=0000", 13 },
	{ "hgx-h100-nopeermem", "gpudirect", RQ_FAIL, "peer-memory", 0,
	  "no peer-memory path for GPUDirect RDMA: nvidia_peermem is not loaded and DMA-BUF is not possible "
	  "(the NVIDIA driver is the proprietary kernel module", 13 },
	{ "hgx-h100-iommu", "gpudirect", RQ_FAIL, "mlx5_5", 0,
	  "mlx5_5 (0000:af:00.0): IOMMU group 21 translates DMA (type DMA-FQ): GPUDirect RDMA needs pass-through; "
	  "boot with iommu=pt", 13, NULL, 8 },
	{ "cx7-ndr-ib", "gpudirect", RQ_SKIP, NULL, 0, "no NVIDIA GPU (PCI vendor 0x10de", 1 },

	/* the driver stack: OFED through DKMS with Secure Boot; a kernel update; unsigned modules */
	{ "ofed-node", "driver-stack", RQ_PASS, NULL, 0, NULL, 10 },
	{ "ofed-node-kernelupdate", "driver-stack", RQ_FAIL, "mlx5_core", 0,
	  "mlx5_core: OFED userspace (MLNX_OFED_LINUX-23.10-1.1.9.0) with the kernel's own mlx5_core "
	  "(/lib/modules/6.8.0-51-generic/kernel/drivers/net/ethernet/mellanox/mlx5/core/mlx5_core.ko.zst, no "
	  "MODULE_VERSION): MLNX_OFED's modules are missing for kernel 6.8.0-51-generic (the DKMS build exists for "
	  "6.8.0-48-generic; kernel headers /lib/modules/6.8.0-51-generic/build missing)", 9, NULL, 8 },
	{ "ofed-node-shimoff", "driver-stack", RQ_PASS, NULL, 0, NULL, 10 },
	/*
	 * A signer is not trust: the DKMS key's enrollment queued, never
	 * confirmed; the modules loaded (Secure Boot off) with taint E.
	 */
	{ "ofed-node-mokpending", "driver-stack", RQ_FAIL, "mlx5_core", 0,
	  "mlx5_core: signed by \"DKMS module signing key\", whose enrollment is queued (mokutil --list-new) but "
	  "was never confirmed: the kernel does not trust it; reboot and confirm it in MokManager", 10, NULL, 9 },
	/* RHEL KMP: kABI-compatible modules of the older kernel under weak-updates/ are not the update trap */
	{ "ofed-node-rhel-weakupdates", "driver-stack", RQ_PASS, NULL, 0, NULL, 10 },
	{ "ofed-node-unsigned", "driver-stack", RQ_FAIL, "mlx5_ib", 0,
	  "mlx5_ib: Secure Boot enforces module signatures and /lib/modules/6.8.0-48-generic/updates/dkms/mlx5_ib.ko "
	  "is unsigned (no signer): it will be refused at the next load", 10, NULL, 9 },
	/*
	 * The NVIDIA driver beside MLNX_OFED: DKMS for both (healthy); the
	 * kernel update after which DKMS built only OFED; NVIDIA's .run
	 * installer's unsigned modules under kernel/drivers/video/ on a Secure
	 * Boot node; nvidia_peermem built against MLNX_OFED's ib_core with the
	 * kernel's own loaded.
	 */
	{ "gpu-node", "driver-stack", RQ_PASS, NULL, 0, NULL, 15 },
	{ "gpu-node-kernelupdate", "driver-stack", RQ_FAIL, "nvidia", 0,
	  "nvidia: the NVIDIA driver is not loaded and there is no nvidia.ko for the running kernel 6.8.0-51-generic "
	  "(modinfo nvidia failed (exit 1): modinfo: ERROR: Module nvidia not found.); DKMS built it only for "
	  "6.8.0-48-generic (nvidia 550.127.05) (kernel headers /lib/modules/6.8.0-51-generic/build present)", 11 },
	{ "gpu-node-runfile", "driver-stack", RQ_FAIL, "nvidia", 0,
	  "nvidia: Secure Boot enforces module signatures and /lib/modules/6.8.0-48-generic/kernel/drivers/video/"
	  "nvidia.ko is unsigned (no signer): the kernel refuses to load it", 11 },
	{ "gpu-node-peermem", "driver-stack", RQ_FAIL, "nvidia_peermem", 0,
	  "nvidia_peermem: the kernel refused its symbols against the loaded ib_core (/lib/modules/6.8.0-51-generic/"
	  "kernel/drivers/infiniband/core/ib_core.ko.zst, the kernel's own): \"nvidia_peermem: Unknown symbol "
	  "ib_register_peer_memory_client (err -2)\": it was built against MLNX_OFED's ib_core (it imports "
	  "ib_register_peer_memory_client)", 14, NULL, 9 },
	/* node tuning: MaxReadReq, the governor and C-states of the IRQ CPUs, irqbalance vs pinned IRQs */
	{ "hgx-h100", "node-tuning", RQ_PASS, NULL, 0, NULL, 11 },
	{ "hgx-h100-mrrs", "node-tuning", RQ_FAIL, "mlx5_5", 0,
	  "mlx5_5 (0000:af:00.0): PCIe MaxReadReq 512 bytes, at least 4096 expected", 11 },
	{ "hgx-h100-powersave", "node-tuning", RQ_FAIL, "mlx5_4", 0,
	  "mlx5_4: the CPUs of its IRQs do not run the performance governor: cpu8 powersave, cpu9 powersave, "
	  "cpu10 powersave, cpu11 powersave, cpu12 powersave", 11, NULL, 4 },
	{ "hgx-h100-cstates", "node-tuning", RQ_FAIL, "mlx5_0", 0,
	  "mlx5_0: deep idle states enabled on the CPUs of its IRQs: cpu0 C6 (170 us)", 11, NULL, 10 },
	/*
	 * irqbalance's own masks (smp_affinity_list 0-7, effective one CPU, as
	 * x86 always delivers): nothing is pinned.  A tuning script's one-CPU
	 * masks with irqbalance still running are the fault.
	 */
	{ "cx7-ndr-ib", "node-tuning", RQ_PASS, NULL, 0, NULL, 9 },
	{ "cx7-ndr-ib-pinned", "node-tuning", RQ_FAIL, "mlx5_3", 0,
	  "mlx5_3: irqbalance is running while all 5 of its IRQs are pinned one CPU each (smp_affinity_list): "
	  "it will move them", 9, NULL, 8 },
	{ "cx7-ndr-ib-pinned", "irq-affinity", RQ_PASS, NULL, 0, NULL, 8 },
	/* no modinfo in the capture: where a module comes from is unknown, never a pass */
	{ "cx7-ndr-ib", "driver-stack", RQ_PASS, NULL, 0, NULL, 8,
	  "mlx5_core,mlx5_ib,ib_core,ib_uverbs,ib_umad,rdma_cm,rdma_ucm" },
};

static const char *const *kv_for(const char *kind)
{
	if (!strcmp(kind, "driver"))
		return driver_kv;
	return NULL;
}

START_TEST(kind_vs_fixture)
{
	const struct expect *e = &table[_i];
	struct nodecase nc;
	unsigned fails;

	nc_init(&nc, e->kind, e->fixture, kv_for(e->kind));
	nc_run(&nc);
	if (getenv("RQ_TEST_VERBOSE"))
		nc_dump(&nc, e->fixture);
	fails = nc_count(&nc, RQ_FAIL) + nc_count(&nc, RQ_ERROR);
	if (e->rows)
		ck_assert_uint_eq(nc.out.n, e->rows);
	for (size_t i = 0; i < nc.out.n; i++) {
		struct rq_result *r = nc.out.v[i];

		/* Never a vacuous pass; every non-PASS says why. */
		if (r->verdict == RQ_PASS)
			ck_assert_uint_gt(r->judged, 0);
		else
			ck_assert_ptr_nonnull(r->reason);
	}
	switch (e->verdict) {
	case RQ_PASS:
		ck_assert_uint_eq(fails, 0);
		for (size_t i = 0; i < nc.out.n; i++) {
			struct rq_result *r = nc.out.v[i];
			bool skip = false;

			if (e->skip_dev && r->device) {
				char *list = xasprintf(",%s,", e->skip_dev), *item = xasprintf(",%s,", r->device);

				skip = strstr(list, item) != NULL;
				free(list);
				free(item);
			}

			ck_assert_msg(r->verdict == (skip ? RQ_SKIP : RQ_PASS), "%s %s/%d: %s %s", e->fixture,
				      r->device, r->port, rq_verdict_name(r->verdict), r->reason ? r->reason : "");
		}
		break;
	case RQ_SKIP:
		ck_assert_uint_eq(fails, 0);
		ck_assert_uint_eq(nc_count(&nc, RQ_PASS), 0);
		if (e->reason)
			for (size_t i = 0; i < nc.out.n; i++)
				ck_assert_msg(strstr(nc.out.v[i]->reason, e->reason), "%s: reason \"%s\"",
					      e->fixture, nc.out.v[i]->reason);
		break;
	case RQ_FAIL: {
		struct rq_result *bad = nc_row(&nc, e->bad_dev, e->bad_port);

		ck_assert_ptr_nonnull(bad);
		ck_assert_int_eq(bad->verdict, RQ_FAIL);
		ck_assert_msg(strstr(bad->reason, e->reason), "%s: reason \"%s\" lacks \"%s\"",
			      e->fixture, bad->reason, e->reason);
		/* Only the faulty rows fail: the healthy rails still pass. */
		ck_assert_uint_eq(fails, e->nfail ? e->nfail : 1);
		break;
	}
	default:
		ck_abort();
	}
	nc_release(&nc);
}
END_TEST

/* The rxe profile on hardware and the hca profile on rxe SKIP, saying why. */
START_TEST(driver_profiles)
{
	static const char *const hca[] = { "profile=hca", NULL };
	static const char *const rxe[] = { "profile=rxe", NULL };
	struct nodecase nc;

	nc_init(&nc, "driver", "rxe-vm1", hca);
	nc_run(&nc);
	ck_assert_uint_eq(nc.out.n, 1);
	ck_assert_int_eq(nc.out.v[0]->verdict, RQ_SKIP);
	ck_assert_ptr_nonnull(strstr(nc.out.v[0]->reason, "ConnectX-only checks: rxe0 is a virtual rxe device"));
	nc_release(&nc);

	nc_init(&nc, "driver", "cx6-hdr-ib", rxe);
	nc_run(&nc);
	ck_assert_int_eq(nc.out.v[0]->verdict, RQ_SKIP);
	ck_assert_ptr_nonnull(strstr(nc.out.v[0]->reason, "ibp59s0 is a PCI device"));
	nc_release(&nc);
}
END_TEST

START_TEST(driver_keys)
{
	static const char *const pin_ok[] = { "fw_ver=20.35.1012", "models=ConnectX-6", "driver=mlx5_core",
					      "link_layer=InfiniBand", NULL };
	static const char *const pin_bad[] = { "fw_ver=20.36.1010", NULL };
	static const char *const pin_other[] = { "fw_ver=28.39.1002", NULL };
	static const char *const model_bad[] = { "models=ConnectX-7,0x1017", NULL };
	static const char *const ll_bad[] = { "link_layer=Ethernet", NULL };
	static const char *const parent_bad[] = { "parent=eth1", NULL };
	static const char *const missing[] = { "devices=mlx5_0", NULL };
	static const char *const mods[] = { "modules=ib_core,mlx5_fpga_tools", NULL };
	struct nodecase nc;
	struct rq_result *r;

	nc_init(&nc, "driver", "cx6-hdr-ib", pin_ok);
	nc_run(&nc);
	r = nc_row(&nc, "ibp59s0", 1);
	ck_assert_int_eq(r->verdict, RQ_PASS);
	ck_assert_str_eq(nc_fact(r, "model"), "ConnectX-6");
	ck_assert_str_eq(nc_fact(r, "fw_ver"), "20.35.1012");
	ck_assert_str_eq(nc_fact(r, "kernel"), "6.1.0-27-amd64");
	ck_assert_str_eq(nc_fact(r, "rdma_core"), "44.0");
	ck_assert_str_eq(nc_fact(r, "ofed"), "inbox (no ofed_info)");
	nc_release(&nc);

	nc_init(&nc, "driver", "cx6-hdr-ib", pin_bad);
	nc_run(&nc);
	ck_assert_str_eq(nc.out.v[0]->reason, "ibp59s0: firmware 20.35.1012, pinned 20.36.1010");
	nc_release(&nc);

	nc_init(&nc, "driver", "cx6-hdr-ib", pin_other);
	nc_run(&nc);
	ck_assert_str_eq(nc.out.v[0]->reason, "ibp59s0: firmware 20.35.1012 (family 20) has no pinned version");
	nc_release(&nc);

	nc_init(&nc, "driver", "cx6-hdr-ib", model_bad);
	nc_run(&nc);
	ck_assert_str_eq(nc.out.v[0]->reason, "ibp59s0 is a ConnectX-6 (0x101b), not an accepted model");
	nc_release(&nc);

	nc_init(&nc, "driver", "cx6-hdr-ib", ll_bad);
	nc_run(&nc);
	ck_assert_str_eq(nc.out.v[0]->reason, "ibp59s0 port 1: link layer InfiniBand, expected Ethernet");
	nc_release(&nc);

	nc_init(&nc, "driver", "rxe-vm1", parent_bad);
	nc_run(&nc);
	ck_assert_str_eq(nc.out.v[0]->reason, "rxe0 sits on eth0, expected eth1");
	nc_release(&nc);

	nc_init(&nc, "driver", "cx6-hdr-ib", missing);
	nc_run(&nc);
	ck_assert_uint_eq(nc.out.n, 1);
	ck_assert_int_eq(nc.out.v[0]->verdict, RQ_FAIL);
	ck_assert_str_eq(nc.out.v[0]->reason, "device mlx5_0 not found (1 RDMA device present)");
	nc_release(&nc);

	nc_init(&nc, "driver", "cx6-hdr-ib", mods);
	nc_run(&nc);
	ck_assert_str_eq(nc.out.v[0]->reason, "module mlx5_fpga_tools is not loaded");
	nc_release(&nc);

	/* An empty node: the node row fails, naming what is missing. */
	nc_init(&nc, "driver", "/nonexistent-node-tree", NULL);
	nc_run(&nc);
	ck_assert_uint_eq(nc.out.n, 1);
	ck_assert_int_eq(nc.out.v[0]->verdict, RQ_FAIL);
	ck_assert_ptr_nonnull(strstr(nc.out.v[0]->reason, "0 RDMA devices selected, at least 1 expected"));
	nc_release(&nc);
}
END_TEST

/* A ConnectX function without an RDMA device is a FAIL row of its own. */
START_TEST(driver_unbound_function)
{
	char tmp[] = "/tmp/rq-driver-XXXXXX", path[4096];
	struct nodecase nc;
	struct rq_result *r;

	ck_assert_ptr_nonnull(mkdtemp(tmp));
	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/0000:5e:00.0", tmp);
	ck_assert_int_eq(mkdir_p(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/0000:5e:00.0/vendor", tmp);
	ck_assert_int_eq(write_file_atomic(path, "0x15b3\n", 7), 0);
	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/0000:5e:00.0/device", tmp);
	ck_assert_int_eq(write_file_atomic(path, "0x1021\n", 7), 0);
	nc_init(&nc, "driver", tmp, NULL);
	nc_run(&nc);
	r = nc_row(&nc, "0000:5e:00.0", 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->verdict, RQ_FAIL);
	ck_assert_str_eq(r->reason, "0000:5e:00.0 (ConnectX-7) is not bound to any driver (mlx5_core)");
	nc_release(&nc);
	ck_assert_int_eq(rm_rf(tmp), 0);
}
END_TEST

/* A writable copy of a node tree (cp -a keeps the symlinks). */
static void copy_tree(const char *fixture, char *tmp)
{
	char src[4096];
	pid_t pid;
	int st;

	ck_assert_ptr_nonnull(mkdtemp(tmp));
	snprintf(src, sizeof(src), "%s/%s/.", nc_fixture_dir(), fixture);
	pid = fork();
	if (!pid) {
		execlp("cp", "cp", "-a", src, tmp, (char *)NULL);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_int_eq(st, 0);
}

/*
 * The kernel's side of an MTU change on rxe, for a writable tree: render
 * `ibv_devinfo -v` from the tree's current eth0 MTU with rxe's formula
 * (or, when stuck, keep reporting 1024 as a broken driver would).
 */
static bool stuck_active;
static int fake_devinfo(struct rq_ctx *ctx, const char *const *argv, int64_t t, struct proc_result *r)
{
	int mtu = 0, act = 256;

	ck_assert_int_eq(netdev_get_mtu(ctx->root, "eth0", &mtu), 0);
	for (int m = 4096; m >= 256; m /= 2)
		if (mtu - 80 >= m) {
			act = m;
			break;
		}
	if (stuck_active)
		act = 1024;
	sb_addf(&r->out, "hca_id:\trxe0\n\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t0.0.0\n"
		"\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tmax_mtu:\t\t4096 (5)\n"
		"\t\t\tactive_mtu:\t\t%d (0)\n\t\t\tlink_layer:\t\tEthernet\n", act);
	r->exit_code = 0;
	return 0;
}

static void journal_text(const char *scratch, struct sb *out)
{
	char path[4400];

	sb_reset(out);
	snprintf(path, sizeof(path), "%s/" RQ_UNDO_JOURNAL, scratch);
	read_file(path, out, 0);
}

START_TEST(mtu_set_and_restore)
{
	static const char *const kv[] = { "set=4200", "expect_active=4096", "settle=200ms", NULL };
	char tmp[] = "/tmp/rq-mtu-XXXXXX", scratch[4200], want[4400];
	struct nodecase nc;
	struct sb j = SB_INIT;
	int mtu = 0;

	copy_tree("rxe-vm1", tmp);
	snprintf(scratch, sizeof(scratch), "%s/scratch", tmp);
	ck_assert_int_eq(mkdir_p(scratch, 0700), 0);

	/* A sysroot replay refuses to change anything. */
	nc_init(&nc, "mtu", "rxe-vm1", kv);
	nc_run(&nc);
	ck_assert_int_eq(nc.out.v[0]->verdict, RQ_SKIP);
	ck_assert_ptr_nonnull(strstr(nc.out.v[0]->reason, "read-only replay"));
	nc_release(&nc);

	for (int pass = 0; pass < 2; pass++) {
		stuck_active = pass == 1;
		nc_init(&nc, "mtu", tmp, kv);
		nc.ctx.replay = false;
		nc.ctx.target = "rxe-vm";
		nc.ctx.tool = fake_devinfo;
		nc.ctx.scratch = scratch;
		nc.k->run(&nc.ctx, nc.c.cfg);
		/* Changed, and the undo journalled before the change. */
		ck_assert_int_eq(netdev_get_mtu(tmp, "eth0", &mtu), 0);
		ck_assert_int_eq(mtu, 4200);
		journal_text(scratch, &j);
		snprintf(want, sizeof(want), "mtu\t%s\teth0\t1500\tboot=", tmp);
		ck_assert(str_starts(j.buf, want));
		/* the device by what it is, not only its name */
		ck_assert_ptr_nonnull(strstr(j.buf, "\tifindex=-,mac=52:54:00:12:34:56\t"));
		nc.k->cleanup(&nc.ctx, nc.c.cfg);
		ck_assert_int_eq(netdev_get_mtu(tmp, "eth0", &mtu), 0);
		ck_assert_int_eq(mtu, 1500);
		journal_text(scratch, &j);
		ck_assert_str_eq(j.buf, "");
		for (size_t i = 0; i < nc.out.n; i++)
			rq_result_finish(nc.out.v[i]);
		struct rq_result *row = nc_row(&nc, "rxe0", 1);

		ck_assert_ptr_nonnull(row);
		if (pass == 0) {
			ck_assert_int_eq(row->verdict, RQ_PASS);
		} else {
			/* active_mtu did not follow: FAIL, and still restored above. */
			ck_assert_int_eq(row->verdict, RQ_FAIL);
			ck_assert_str_eq(row->reason, "rxe0 port 1: active_mtu 1024, but netdev eth0 MTU 4200 gives 4096 "
					 "(rxe: largest IB MTU <= MTU - 80)");
		}
		nc_release(&nc);
	}

	/*
	 * A case killed after the change: the agent runs cleanup() in a fresh
	 * worker that changed nothing itself; the journal still says what to undo.
	 */
	{
		struct rq_ctx c = { .root = tmp, .scratch = scratch };

		ck_assert_int_eq(undo_push(&c, "mtu", "eth0", "1500"), 0);
		ck_assert_int_eq(netdev_set_mtu(tmp, "eth0", 4200), 0);
		nc_init(&nc, "mtu", tmp, kv);
		nc.ctx.replay = false;
		nc.ctx.scratch = scratch;
		nc.k->cleanup(&nc.ctx, nc.c.cfg);
		ck_assert_int_eq(netdev_get_mtu(tmp, "eth0", &mtu), 0);
		ck_assert_int_eq(mtu, 1500);
		journal_text(scratch, &j);
		ck_assert_str_eq(j.buf, "");
		nc_release(&nc);
	}

	/* A run killed after the change: rdmaqual cleanup restores from the journal. */
	{
		struct rq_ctx c = { .root = tmp, .scratch = scratch };
		struct sb log = SB_INIT;

		ck_assert_int_eq(undo_push(&c, "mtu", "eth0", "1500"), 0);
		ck_assert_int_eq(netdev_set_mtu(tmp, "eth0", 9000), 0);
		snprintf(want, sizeof(want), "%s/" RQ_UNDO_JOURNAL, scratch);
		ck_assert_int_eq(undo_apply_pending(want, &log), 0);
		ck_assert_int_eq(netdev_get_mtu(tmp, "eth0", &mtu), 0);
		ck_assert_int_eq(mtu, 1500);
		ck_assert_int_eq(access(want, F_OK), -1);
		ck_assert_ptr_nonnull(strstr(log.buf, "restored"));
		/* A record that cannot be applied is kept. */
		ck_assert_int_eq(undo_push(&c, "mtu", "eth7", "1500"), 0);
		ck_assert_int_eq(undo_apply_pending(want, NULL), 1);
		ck_assert_int_eq(access(want, F_OK), 0);
		unlink(want);
		sb_release(&log);
	}

	/*
	 * Changed twice before the crash (1500 -> 9000 -> 4000): the first
	 * record holds the value from before, and only it is applied.
	 */
	{
		struct rq_ctx c = { .root = tmp, .scratch = scratch };
		struct sb log = SB_INIT;

		ck_assert_int_eq(undo_push(&c, "mtu", "eth0", "1500"), 0);
		ck_assert_int_eq(netdev_set_mtu(tmp, "eth0", 9000), 0);
		ck_assert_int_eq(undo_push(&c, "mtu", "eth0", "9000"), 0);
		ck_assert_int_eq(netdev_set_mtu(tmp, "eth0", 4000), 0);
		ck_assert_int_eq(undo_apply_pending(want, &log), 0);
		ck_assert_int_eq(netdev_get_mtu(tmp, "eth0", &mtu), 0);
		ck_assert_int_eq(mtu, 1500);
		ck_assert_ptr_nonnull(strstr(log.buf, "MTU of eth0 back to 1500"));
		ck_assert_ptr_nonnull(strstr(log.buf, "a later record (value 9000) dropped"));
		sb_release(&log);
	}

	/* A record of an earlier boot: the reboot undid it; dropped, said, not applied. */
	{
		struct sb log = SB_INIT;
		char *rec = xasprintf("mtu\t%s\teth0\t1500\tboot=00000000-dead-beef-0000-000000000000\t"
				      "ifindex=-,mac=52:54:00:12:34:56\t1700000000\n", tmp);

		ck_assert_int_eq(netdev_set_mtu(tmp, "eth0", 9000), 0);
		ck_assert_int_eq(write_file_atomic(want, rec, strlen(rec)), 0);
		ck_assert_int_eq(undo_apply_pending(want, &log), 0);
		ck_assert_int_eq(netdev_get_mtu(tmp, "eth0", &mtu), 0);
		ck_assert_int_eq(mtu, 9000);
		ck_assert_ptr_nonnull(strstr(log.buf, "earlier boot"));
		ck_assert_int_eq(access(want, F_OK), -1);
		free(rec);
		sb_release(&log);
	}

	/*
	 * An earlier boot's record first, then this boot's 1500, 9000, 2000:
	 * only the earlier boot's is dropped; this boot's first one (1500) is
	 * applied.  Before, the old record counted as "the first" and every
	 * record was dropped: the MTU stayed at 4000 and the journal emptied.
	 */
	{
		struct rq_ctx c = { .root = tmp, .scratch = scratch };
		struct sb log = SB_INIT;
		char *rec = xasprintf("mtu\t%s\teth0\t1280\tboot=00000000-dead-beef-0000-000000000000\t"
				      "ifindex=-,mac=52:54:00:12:34:56\t1700000000\n", tmp);

		ck_assert_int_eq(netdev_set_mtu(tmp, "eth0", 1500), 0);
		ck_assert_int_eq(write_file_atomic(want, rec, strlen(rec)), 0);
		ck_assert_int_eq(undo_push(&c, "mtu", "eth0", "1500"), 0);
		ck_assert_int_eq(undo_push(&c, "mtu", "eth0", "9000"), 0);
		ck_assert_int_eq(undo_push(&c, "mtu", "eth0", "2000"), 0);
		ck_assert_int_eq(netdev_set_mtu(tmp, "eth0", 4000), 0);
		ck_assert_int_eq(undo_apply_pending(want, &log), 0);
		ck_assert_int_eq(netdev_get_mtu(tmp, "eth0", &mtu), 0);
		ck_assert_int_eq(mtu, 1500);
		ck_assert_ptr_nonnull(strstr(log.buf, "1280: recorded during an earlier boot"));
		ck_assert_ptr_nonnull(strstr(log.buf, "MTU of eth0 back to 1500"));
		ck_assert_ptr_nonnull(strstr(log.buf, "a later record (value 9000) dropped"));
		free(rec);
		sb_release(&log);
	}

	/* Renamed since (eth0 is now eth9): the MTU goes back on that device, by its MAC. */
	{
		struct rq_ctx c = { .root = tmp, .scratch = scratch };
		struct sb log = SB_INIT;
		char *from = xasprintf("%s/sys/class/net/eth0", tmp), *to = xasprintf("%s/sys/class/net/eth9", tmp);

		ck_assert_int_eq(undo_push(&c, "mtu", "eth0", "1500"), 0);
		ck_assert_int_eq(rename(from, to), 0);
		ck_assert_int_eq(undo_apply_pending(want, &log), 0);
		ck_assert_int_eq(netdev_get_mtu(tmp, "eth9", &mtu), 0);
		ck_assert_int_eq(mtu, 1500);
		ck_assert_ptr_nonnull(strstr(log.buf, "MTU of eth0 (now named eth9) back to 1500"));
		ck_assert_int_eq(rename(to, from), 0);
		free(from);
		free(to);
		sb_release(&log);
	}
	sb_release(&j);
	ck_assert_int_eq(rm_rf(tmp), 0);
}
END_TEST

/*
 * An IRQ renumbered since the record (a driver reload): the affinity goes
 * back on the IRQ that now carries the recorded vector, not on the old
 * number, whose vector is another one now.
 */
START_TEST(undo_irq_follows_vector)
{
	char tmp[] = "/tmp/rq-irqv-XXXXXX", scratch[4200], path[4400], v[64];
	struct sb t = SB_INIT, log = SB_INIT;
	struct rq_ctx c = { .scratch = scratch };
	char *pc0, *pc1;

	copy_tree("cx6dx-roce-farnuma", tmp);
	c.root = tmp;
	snprintf(scratch, sizeof(scratch), "%s/scratch", tmp);
	ck_assert_int_eq(mkdir_p(scratch, 0700), 0);
	ck_assert_int_eq(irq_set_affinity(tmp, 136, "8"), 0);
	ck_assert_int_eq(irq_set_affinity(tmp, 137, "9"), 0);
	ck_assert_int_eq(undo_push(&c, "irq", "136", "0"), 0);	/* comp0 (IRQ 136) was on CPU 0 */
	/* the driver came back with comp0 and comp1 swapped */
	snprintf(path, sizeof(path), "%s/proc/interrupts", tmp);
	ck_assert_int_eq(read_file(path, &t, 0), 0);
	ck_assert_ptr_nonnull(pc0 = strstr(t.buf, "mlx5_comp0@pci:0000:af:00.0"));
	ck_assert_ptr_nonnull(pc1 = strstr(t.buf, "mlx5_comp1@pci:0000:af:00.0"));
	pc0[9] = '1';
	pc1[9] = '0';
	ck_assert_int_eq(write_file_atomic(path, t.buf, t.len), 0);
	snprintf(path, sizeof(path), "%s/" RQ_UNDO_JOURNAL, scratch);
	ck_assert_int_eq(undo_apply_pending(path, &log), 0);
	ck_assert_ptr_nonnull(strstr(log.buf, "now IRQ 137"));
	snprintf(path, sizeof(path), "%s/proc/irq/137/smp_affinity_list", tmp);
	ck_assert_int_eq(read_line(path, v, sizeof(v)), 0);
	ck_assert_str_eq(v, "0");
	snprintf(path, sizeof(path), "%s/proc/irq/136/smp_affinity_list", tmp);
	ck_assert_int_eq(read_line(path, v, sizeof(v)), 0);
	ck_assert_str_eq(v, "8");	/* comp1 now: left alone */
	sb_release(&t);
	sb_release(&log);
	ck_assert_int_eq(rm_rf(tmp), 0);
}
END_TEST

/* irq-affinity set: local-spread on a writable tree, verified, journalled and restored. */
START_TEST(irq_set_and_restore)
{
	static const char *const fix[] = { "set=local-spread", NULL };
	static const char *const fail[] = { "set=local-spread", "policy=cpus", "cpus=0-3", NULL };
	char tmp[] = "/tmp/rq-irq-XXXXXX", scratch[4200], path[4400], v[64];
	struct nodecase nc;
	struct sb j = SB_INIT;
	struct rq_result *r;
	int first = -1;

	copy_tree("cx6dx-roce-farnuma", tmp);
	snprintf(scratch, sizeof(scratch), "%s/scratch", tmp);
	ck_assert_int_eq(mkdir_p(scratch, 0700), 0);
	for (int pass = 0; pass < 2; pass++) {
		nc_init(&nc, "irq-affinity", tmp, pass ? fail : fix);
		nc.ctx.replay = false;
		nc.ctx.target = "hca";
		nc.ctx.scratch = scratch;
		nc.k->run(&nc.ctx, nc.c.cfg);
		r = nc_row(&nc, "rocep175s0f0", 0);
		ck_assert_ptr_nonnull(r);
		/* vectors 0-7 move to local CPUs 8-15 (8-15 already sit where local-spread spills): 8 records */
		journal_text(scratch, &j);
		unsigned lines = 0;

		for (const char *q = j.buf; (q = strchr(q, '\n')); q++)
			lines++;
		ck_assert_uint_eq(lines, 8);
		ck_assert(str_starts(j.buf, "irq\t"));
		/* each record names its vector (device and queue), not only the IRQ number */
		ck_assert_ptr_nonnull(strstr(j.buf, "\tvector=mlx5_comp0@pci:0000:af:00.0\t"));
		if (first < 0)
			first = atoi(j.buf + 4 + strlen(tmp) + 1);
		snprintf(path, sizeof(path), "%s/proc/irq/%d/effective_affinity_list", tmp, first);
		ck_assert_int_eq(read_line(path, v, sizeof(v)), 0);
		ck_assert_str_eq(v, "8");	/* comp0 -> first local CPU of node 1 */
		nc.k->cleanup(&nc.ctx, nc.c.cfg);
		journal_text(scratch, &j);
		ck_assert_str_eq(j.buf, "");
		snprintf(path, sizeof(path), "%s/proc/irq/%d/smp_affinity_list", tmp, first);
		ck_assert_int_eq(read_line(path, v, sizeof(v)), 0);
		ck_assert_str_eq(v, "0");	/* restored: the old tuning script's CPU 0 */
		for (size_t i = 0; i < nc.out.n; i++)
			rq_result_finish(nc.out.v[i]);
		if (pass == 0) {
			ck_assert_int_eq(r->verdict, RQ_PASS);
		} else {
			ck_assert_int_eq(r->verdict, RQ_FAIL);
			ck_assert_ptr_nonnull(strstr(r->reason, "outside 0-3"));
		}
		nc_release(&nc);
	}
	sb_release(&j);
	ck_assert_int_eq(rm_rf(tmp), 0);
}
END_TEST

START_TEST(nodeinfo_helpers)
{
	struct cpuset a, b;
	char buf[128], tmp[] = "/tmp/rq-ni-XXXXXX", path[4200], st[32];
	struct rq_ctx ctx = { .root = tmp };

	ck_assert_int_eq(fw_cmp("20.35.1012", "20.35.1012"), 0);
	ck_assert_int_lt(fw_cmp("16.20.1010", "16.35.2000"), 0);
	ck_assert_int_gt(fw_cmp("16.10.1", "16.9.9999"), 0);	/* numeric, not text */
	ck_assert_int_lt(fw_cmp("20.35", "20.35.1"), 0);
	ck_assert_int_eq(fw_major("28.39.1002"), 28);
	ck_assert_int_eq(fw_major("x"), -1);

	ck_assert_int_eq(cpuset_parse("0-3,8,10-11\n", &a), 7);
	cpuset_format(&a, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0-3,8,10-11");
	ck_assert_int_eq(cpuset_parse("8", &b), 1);
	ck_assert(cpuset_subset(&b, &a));
	ck_assert_int_eq(cpuset_parse("9", &b), 1);
	ck_assert(!cpuset_subset(&b, &a));
	ck_assert_int_eq(cpuset_parse("3-1", &b), -EINVAL);
	ck_assert_int_eq(cpuset_parse("a", &b), -EINVAL);
	ck_assert_int_eq(cpuset_parse("0-2000", &b), -EINVAL);

	/* module states: live, built in (dir without initstate), coming, absent */
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	snprintf(path, sizeof(path), "%s/sys/module/ib_core", tmp);
	ck_assert_int_eq(mkdir_p(path, 0755), 0);
	ck_assert_int_eq(node_module_live(&ctx, "ib_core", st, sizeof(st)), 0);
	ck_assert_str_eq(st, "built-in");
	snprintf(path, sizeof(path), "%s/sys/module/ib_core/initstate", tmp);
	ck_assert_int_eq(write_file_atomic(path, "coming\n", 7), 0);
	ck_assert_int_eq(node_module_live(&ctx, "ib_core", st, sizeof(st)), -EAGAIN);
	ck_assert_str_eq(st, "coming");
	ck_assert_int_eq(node_module_live(&ctx, "mlx5_ib", st, sizeof(st)), -ENOENT);
	ck_assert_str_eq(st, "not loaded");
	ck_assert_int_eq(rm_rf(tmp), 0);
}
END_TEST

static double nc_figure(struct rq_result *r, const char *name)
{
	for (size_t i = 0; r && i < r->nfigs; i++)
		if (!strcmp(r->figs[i].name, name))
			return r->figs[i].value;
	return -1;
}

/*
 * What the pcie rows say besides the verdict: the slot a Gen5 card sits in
 * and the path's limiting link by BDF; Gen6 in Flit mode counted 1/1 as
 * the kernel does (64 GT/s x16 = 1024 Gb/s, not 128b/130b's 1008).
 */
START_TEST(pcie_facts)
{
	struct nodecase nc;
	struct rq_result *r;

	nc_init(&nc, "pcie", "cx7-ndr200-gen4slot", NULL);
	nc_run(&nc);
	r = nc_row(&nc, "mlx5_0", 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(nc_fact(r, "pcie_slot"), "0000:3a:00.0 16.0 GT/s x16");
	ck_assert(fabs(nc_figure(r, "pcie_bandwidth") - 16.0 * 16 * 128 / 130) < 0.01);
	ck_assert(nc_figure(r, "card_ports_data_rate") == 200.0);
	nc_release(&nc);

	nc_init(&nc, "pcie", "cx9-xdr-ib", NULL);
	nc_run(&nc);
	r = nc_row(&nc, "mlx5_0", 0);
	ck_assert(nc_figure(r, "pcie_bandwidth") == 1024.0);
	nc_release(&nc);

	nc_init(&nc, "pcie", "bf3-host-slotx8", NULL);
	nc_run(&nc);
	r = nc_row(&nc, "mlx5_1", 0);
	ck_assert_str_eq(nc_fact(r, "pcie_limiting_link"), "0000:3b:00.0 32.0 GT/s x8");
	nc_release(&nc);
}
END_TEST

/*
 * IPoIB datagram: any MTU up to the group's IB MTU - 4 is legal (1500
 * under a 4096 port as well as 4092); above it, not.
 */
START_TEST(ipoib_datagram_range)
{
	static const struct { const char *mtu; enum rq_verdict v; } cases[] = {
		{ "1500\n", RQ_PASS }, { "4092\n", RQ_PASS }, { "2044\n", RQ_PASS }, { "4096\n", RQ_FAIL },
	};
	char tmp[] = "/tmp/rq-ipoib-XXXXXX", path[4200];
	struct nodecase nc;

	copy_tree("cx6-hdr-ib", tmp);
	snprintf(path, sizeof(path), "%s/sys/class/net/ibp59s0/mtu", tmp);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		ck_assert_int_eq(write_file_atomic(path, cases[i].mtu, strlen(cases[i].mtu)), 0);
		nc_init(&nc, "mtu", tmp, NULL);
		nc_run(&nc);
		ck_assert_msg(nc.out.v[0]->verdict == cases[i].v, "MTU %s: %s %s", cases[i].mtu,
			      rq_verdict_name(nc.out.v[0]->verdict), nc.out.v[0]->reason ? nc.out.v[0]->reason : "");
		if (cases[i].v == RQ_FAIL)
			ck_assert_str_eq(nc.out.v[0]->reason, "ibp59s0 (IPoIB datagram): MTU 4096 above 4092 "
					 "(active_mtu 4096 - 4: the largest a datagram interface carries)");
		nc_release(&nc);
	}
	ck_assert_int_eq(rm_rf(tmp), 0);
}
END_TEST

/*
 * Without mlx5 names in /proc/interrupts the async vector is guessed by
 * the kernel's era: last on 5.16-6.3 (Debian 12's 6.1), first after; the
 * row says which was used.  cx6-hdr-ib (6.1): comp0-15 are IRQs 96-111,
 * mlx5_async0 is 112.
 */
START_TEST(irq_fallback_era)
{
	char tmp[] = "/tmp/rq-irqfb-XXXXXX", path[4200];
	struct nodecase nc;
	struct rq_result *r;

	copy_tree("cx6-hdr-ib", tmp);
	snprintf(path, sizeof(path), "%s/proc/interrupts", tmp);
	ck_assert_int_eq(unlink(path), 0);
	nc_init(&nc, "irq-affinity", tmp, NULL);
	nc_run(&nc);
	r = nc_row(&nc, "ibp59s0", 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(nc_fact(r, "vectors_found_by"), "no mlx5 vector names in /proc/interrupts: "
			 "msi_irqs/ less its last vector (112), the async one on kernel 6.1.0-27-amd64");
	ck_assert_ptr_nonnull(strstr(nc_fact(r, "irq_layout"), "96->"));
	ck_assert_ptr_null(strstr(nc_fact(r, "irq_layout"), "112->"));
	ck_assert(nc_figure(r, "comp_vectors") == 16);
	nc_release(&nc);

	snprintf(path, sizeof(path), "%s/proc/sys/kernel/osrelease", tmp);
	ck_assert_int_eq(write_file_atomic(path, "6.8.0-48-generic\n", 17), 0);
	nc_init(&nc, "irq-affinity", tmp, NULL);
	nc_run(&nc);
	r = nc_row(&nc, "ibp59s0", 0);
	ck_assert_str_eq(nc_fact(r, "vectors_found_by"), "no mlx5 vector names in /proc/interrupts: "
			 "msi_irqs/ less its first vector (96), the async one on kernel 6.8.0-48-generic");
	nc_release(&nc);

	/* with the names, no guess is made and none is reported */
	nc_init(&nc, "irq-affinity", "cx6-hdr-ib", NULL);
	nc_run(&nc);
	ck_assert_ptr_null(nc_fact(nc_row(&nc, "ibp59s0", 0), "vectors_found_by"));
	nc_release(&nc);
	ck_assert_int_eq(rm_rf(tmp), 0);
}
END_TEST

/*
 * ib-counters judges growth: a fake fabric (ibsim's outputs) where Hca2
 * port 1 (LID 4) reads clean, then with 57 symbol errors and 3 downed
 * links, or with those errors both times (history, not growth).
 */
static int fake_perf_grows;	/* 1: LID 4's second reading has errors; 2: both have */
static int fake_perf_calls;

static int fake_fabric(struct rq_ctx *ctx, const char *const *argv, int64_t timeout_ms,
		       struct proc_result *r)
{
	const char *f = "iblinkinfo-2sw2path4hca.txt";
	char path[512];

	(void)ctx;
	(void)timeout_ms;
	if (!strcmp(argv[0], "perfquery")) {
		bool lid4 = argv[1] && !strcmp(argv[1], "4");

		f = "perfquery-lid4-port1.txt";
		if (lid4 && (fake_perf_grows == 2 || fake_perf_calls++ > 0))
			f = "perfquery-lid4-port1-errors.txt";
	}
	snprintf(path, sizeof(path), "fixtures/tool-output/ibsim/%s", f);
	ck_assert_int_eq(read_file(path, &r->out, 1 << 20), 0);
	r->exit_code = 0;
	return 0;
}

static void run_counters(struct nodecase *nc, int grows, const char *const *kv)
{
	fake_perf_grows = grows;
	fake_perf_calls = 0;
	nc_init(nc, "ib-counters", "cx6-hdr-ib", kv);
	nc->ctx.tool = fake_fabric;
	nc->ctx.replay = false;
	nc->ctx.deadline_ms = now_ms() + 30000;
	nc_run(nc);
}

START_TEST(ib_counters_growth)
{
	static const char *const quick[] = { "window=0s", NULL };
	static const char *const loose[] = { "window=0s", "thresholds=SymbolErrorCounter=100,LinkDownedCounter=3", NULL };
	static const char *const absolute[] = { "window=0s", "absolute=true", NULL };
	struct nodecase nc;
	struct rq_result *r;

	run_counters(&nc, 1, quick);
	r = nc_row(&nc, "Hca2", 1);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->verdict, RQ_FAIL);
	ck_assert_str_eq(r->reason, "Hca2 port 1: SymbolErrorCounter grew by 57 during the case (max 0)");
	ck_assert(nc_figure(r, "LinkDownedCounter_growth") == 3);
	ck_assert_int_eq(nc_row(&nc, "Hca4", 1)->verdict, RQ_PASS);
	nc_release(&nc);

	/* per-counter thresholds in ibqueryerrors' style */
	run_counters(&nc, 1, loose);
	ck_assert_int_eq(nc_row(&nc, "Hca2", 1)->verdict, RQ_PASS);
	nc_release(&nc);

	/* counts from before the case are history: figures, not failures */
	run_counters(&nc, 2, quick);
	r = nc_row(&nc, "Hca2", 1);
	ck_assert_int_eq(r->verdict, RQ_PASS);
	ck_assert(nc_figure(r, "SymbolErrorCounter") == 57);
	ck_assert(nc_figure(r, "SymbolErrorCounter_growth") == 0);
	nc_release(&nc);

	run_counters(&nc, 2, absolute);
	ck_assert_str_eq(nc_row(&nc, "Hca2", 1)->reason, "Hca2 port 1: SymbolErrorCounter 57 (max 0)");
	nc_release(&nc);
}
END_TEST

/*
 * The link a lab expects: a rail that trained at HDR passes every relative
 * check and fails only against expect_rate/expect_speed; RoCE's netdev
 * speed; LID and SM LID on InfiniBand.
 */
START_TEST(driver_expected_link)
{
	static const char *const ndr[] = { "expect_rate=400", "expect_width=4X", "expect_speed=NDR", NULL };
	static const char *const roce[] = { "expect_netdev_speed=100000", "expect_rate=100", NULL };
	static const char *const roce_bad[] = { "expect_netdev_speed=200000", NULL };
	static const char *const pending_ok[] = { "fw_pending_ok=true", NULL };
	struct nodecase nc;
	struct rq_result *r;

	nc_init(&nc, "driver", "cx7-ndr-ib", ndr);
	nc_run(&nc);
	ck_assert_uint_eq(nc_count(&nc, RQ_PASS), 8);
	ck_assert_str_eq(nc_fact(nc_row(&nc, "mlx5_0", 1), "lid"), "0x40");
	nc_release(&nc);

	nc_init(&nc, "driver", "cx7-ndr-ib-hdr", NULL);
	nc_run(&nc);
	ck_assert_uint_eq(nc_count(&nc, RQ_PASS), 8);	/* nothing relative is wrong */
	nc_release(&nc);

	nc_init(&nc, "driver", "cx7-ndr-ib-hdr", ndr);
	nc_run(&nc);
	ck_assert_uint_eq(nc_count(&nc, RQ_FAIL), 1);
	r = nc_row(&nc, "mlx5_2", 1);
	ck_assert_int_eq(r->verdict, RQ_FAIL);
	ck_assert_str_eq(r->reason, "mlx5_2 port 1 runs at 200 Gb/sec (4X HDR), expected 400 Gb/s");
	nc_release(&nc);

	nc_init(&nc, "driver", "cx6dx-roce-2numa", roce);
	nc_run(&nc);
	ck_assert_uint_eq(nc_count(&nc, RQ_PASS), 3);
	ck_assert_str_eq(nc_fact(nc_row(&nc, "rocep59s0f0", 1), "netdev_speed"), "100000");
	nc_release(&nc);

	/* mstflint's view of the firmware as facts; a staged upgrade allowed */
	nc_init(&nc, "driver", "cx6dx-roce-lossless", NULL);
	nc_run(&nc);
	r = nc_row(&nc, "rocep59s0f1", 1);
	ck_assert_str_eq(nc_fact(r, "fw_running"), "22.36.1010");
	ck_assert_str_eq(nc_fact(r, "psid"), "MT_0000000359");
	nc_release(&nc);
	nc_init(&nc, "driver", "cx6dx-roce-fwpending", pending_ok);
	nc_run(&nc);
	ck_assert_uint_eq(nc_count(&nc, RQ_PASS), 2);
	ck_assert_str_eq(nc_fact(nc_row(&nc, "rocep59s0f0", 1), "fw_flashed"), "22.39.1002");
	nc_release(&nc);
	/* no mstflint output: a fact, not a verdict */
	nc_init(&nc, "driver", "cx6dx-roce-2numa", NULL);
	nc_run(&nc);
	ck_assert_str_eq(nc_fact(nc_row(&nc, "rocep59s0f0", 1), "fw_query"), "not run: the capture holds no mstflint output");
	nc_release(&nc);

	nc_init(&nc, "driver", "cx6dx-roce-2numa", roce_bad);
	nc_run(&nc);
	ck_assert_str_eq(nc_row(&nc, "rocep59s0f0", 1)->reason,
			 "rocep59s0f0 port 1: netdev ens1f0np0 speed 100000 Mb/s, expected 200000");
	nc_release(&nc);
}
END_TEST

/*
 * link-health on a writable copy of a RoCE node: the traffic command (a
 * real cp, run as argv) bumps one counter between the two readings.
 */
static void run_health(struct nodecase *nc, const char *tree, const char *from, const char *to,
		       const char *thresholds)
{
	char *traffic = xasprintf("traffic=cp,%s,%s", from, to);
	const char *kv[] = { "window=0s", traffic, thresholds, NULL };

	nc_init(nc, "link-health", tree, kv);
	nc->ctx.tool = rq_tool_live;
	nc->ctx.replay = false;
	nc->ctx.deadline_ms = now_ms() + 30000;
	nc_run(nc);
	free(traffic);
}

START_TEST(link_health_growth)
{
	char tmp[] = "/tmp/rq-health-XXXXXX", bump[4200], ctr[4200], aer[4200];
	const char *pdir = "sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0";
	struct nodecase nc;
	struct rq_result *r;

	copy_tree("cx6dx-roce-2numa", tmp);
	snprintf(ctr, sizeof(ctr), "%s/%s/infiniband/rocep59s0f0/ports/1/counters/symbol_error", tmp, pdir);
	snprintf(bump, sizeof(bump), "%s/bump", tmp);
	/* history (3 + ...) is fine; 4 more during the case are not */
	ck_assert_int_eq(write_file_atomic(bump, "11\n", 3), 0);
	run_health(&nc, tmp, bump, ctr, NULL);
	r = nc_row(&nc, "rocep59s0f0", 1);
	ck_assert_int_eq(r->verdict, RQ_FAIL);
	ck_assert_str_eq(r->reason, "rocep59s0f0 port 1: symbol_error grew by 4 during traffic (max 0)");
	ck_assert(nc_figure(r, "symbol_error_growth") == 4);
	ck_assert(nc_figure(r, "link_downed") > 0);	/* history is a figure */
	ck_assert_uint_eq(nc_count(&nc, RQ_FAIL), 1);
	nc_release(&nc);

	/* a threshold in the case allows it */
	ck_assert_int_eq(write_file_atomic(ctr, "7\n", 2), 0);
	run_health(&nc, tmp, bump, ctr, "thresholds=symbol_error=4");
	ck_assert_int_eq(nc_row(&nc, "rocep59s0f0", 1)->verdict, RQ_PASS);
	nc_release(&nc);

	/* a correctable AER error on the function's row */
	snprintf(aer, sizeof(aer), "%s/%s/aer_dev_correctable", tmp, pdir);
	{
		static const char txt[] = "RxErr 0\nBadTLP 0\nBadDLLP 2\nTOTAL_ERR_COR 2\n";

		ck_assert_int_eq(write_file_atomic(bump, txt, sizeof(txt) - 1), 0);
	}
	run_health(&nc, tmp, bump, aer, NULL);
	r = nc_row(&nc, "rocep59s0f0", 0);
	ck_assert_int_eq(r->verdict, RQ_FAIL);
	ck_assert_str_eq(r->reason, "rocep59s0f0 (0000:3b:00.0) PCIe AER: aer_correctable grew by 2 during traffic (max 0)");
	nc_release(&nc);
	ck_assert_int_eq(rm_rf(tmp), 0);
}
END_TEST

/*
 * roce-lossless's finer points on a good node: PFC on another priority
 * too, a ToS whose DSCP is not mapped to the RoCE priority, RoCE v1 as
 * RDMA-CM's default, the CNP priority; and the facts it records.
 */
START_TEST(roce_lossless_keys)
{
	static const char *const prio4[] = { "priority=4", NULL };
	static const char *const pcp[] = { "trust=pcp", NULL };
	char tmp[] = "/tmp/rq-lossless-XXXXXX", path[4200];
	struct nodecase nc;
	struct rq_result *r;

	nc_init(&nc, "roce-lossless", "cx6dx-roce-lossless", NULL);
	nc_run(&nc);
	r = nc_row(&nc, "rocep59s0f0", 1);
	ck_assert_str_eq(nc_fact(r, "trust"), "dscp");
	ck_assert_str_eq(nc_fact(r, "pfc_priorities"), "3");
	ck_assert_str_eq(nc_fact(r, "default_roce_tos"), "106 (DSCP 26)");
	ck_assert_str_eq(nc_fact(r, "cnp_priority"), "6");
	nc_release(&nc);

	nc_init(&nc, "roce-lossless", "cx6dx-roce-lossless", prio4);
	nc_run(&nc);
	ck_assert_str_eq(nc_row(&nc, "rocep59s0f0", 1)->reason,
			 "rocep59s0f0 port 1 (ens1f0np0): PFC is off on the RoCE priority 4 of ens1f0np0");
	nc_release(&nc);

	nc_init(&nc, "roce-lossless", "cx6dx-roce-lossless", pcp);
	nc_run(&nc);
	ck_assert_str_eq(nc_row(&nc, "rocep59s0f0", 1)->reason,
			 "rocep59s0f0 port 1 (ens1f0np0): trust is DSCP (2 DSCP entries in the APP table of ens1f0np0), PCP expected");
	nc_release(&nc);

	copy_tree("cx6dx-roce-lossless", tmp);
	snprintf(path, sizeof(path), "%s/sys/kernel/config/rdma_cm/rocep59s0f0/ports/1/default_roce_tos", tmp);
	ck_assert_int_eq(write_file_atomic(path, "0\n", 2), 0);
	snprintf(path, sizeof(path), "%s/sys/kernel/config/rdma_cm/rocep59s0f1/ports/1/default_roce_mode", tmp);
	ck_assert_int_eq(write_file_atomic(path, "IB/RoCE v1\n", 11), 0);
	nc_init(&nc, "roce-lossless", tmp, NULL);
	nc_run(&nc);
	ck_assert_str_eq(nc_row(&nc, "rocep59s0f0", 1)->reason,
			 "rocep59s0f0 port 1 (ens1f0np0): RDMA-CM's ToS 0 is DSCP 0, which the APP table does not map (priority 0), not the RoCE priority 3");
	ck_assert_str_eq(nc_row(&nc, "rocep59s0f1", 1)->reason,
			 "rocep59s0f1 port 1 (ens1f1np1): RDMA-CM's default_roce_mode is IB/RoCE v1, RoCE v2 expected");
	nc_release(&nc);
	ck_assert_int_eq(rm_rf(tmp), 0);
}
END_TEST

/*
 * Two-sided cases on hca without --peer loop back inside the HCA: the row
 * says so and min_line_rate is not judged; with a peer it is, against the
 * port's data rate (QDR: 32 of the 40 signalled Gb/s).
 */
START_TEST(loopback_rows)
{
	struct rq_case c = { .name = (char *)"t" };
	struct rq_ctx ctx = { .c = &c, .log_fd = -1 };
	struct rq_results out = { 0 };
	struct vp s;
	struct rq_result *row;
	const struct vp_thresholds t = { .min_line_rate = 0.9 };

	memset(&s, 0, sizeof(s));
	s.ctx = &ctx;
	ctx.out = &out;
	ctx.main = rq_result_new("t", NULL, 0);
	rq_results_add(&out, ctx.main);
	snprintf(s.ports[0].dev, sizeof(s.ports[0].dev), "mlx5_0");
	s.ports[0].port = 1;
	s.ports[0].rate_gbps = 40;
	s.ports[0].data_gbps = 32;
	s.nports = s.npairs = 1;

	ctx.peer_addr = "127.0.0.1";
	row = vp_row(&s, 0);
	ck_assert(vp_note_loopback(&s, 0, row));
	ck_assert_str_eq(nc_fact(row, "loopback"), "loopback, the wire is not tested");
	ck_assert_str_eq(row->reason, "loopback, the wire is not tested (mlx5_0/1 to itself: no --peer)");
	vp_judge_bw(&s, 0, row, &t, 10.0, "64KiB");
	ck_assert_uint_eq(row->judged, 0);
	ck_assert_str_eq(nc_fact(row, "min_line_rate"), "not judged: loopback inside the HCA (the wire is not tested)");

	ctx.peer_addr = "192.168.50.12";
	row = rq_result_new("t", "mlx5_1", 1);
	rq_results_add(&out, row);
	ck_assert(!vp_note_loopback(&s, 0, row));
	vp_judge_bw(&s, 0, row, &t, 30.0, "64KiB");
	ck_assert_uint_eq(row->failed, 0);	/* 30 >= 0.9 x 32 (it was 0.9 x 40 = 36) */
	vp_judge_bw(&s, 0, row, &t, 28.0, "64KiB");
	ck_assert_str_eq(row->reason, "64KiB: 28.000 Gb/s, below 90 % of the port's 32.0 Gb/s data rate (40 Gb/s signalled): 28.800");

	/* a software device never had a wire: no loopback note */
	s.ports[0].is_virtual = true;
	ctx.peer_addr = NULL;
	ck_assert(!vp_note_loopback(&s, 0, ctx.main));
	rq_results_release(&out);
}
END_TEST

START_TEST(pci_models)
{
	char buf[64];

	ck_assert_str_eq(mlx_model_name(0x1021, buf, sizeof(buf)), "ConnectX-7");
	ck_assert_str_eq(mlx_model_name(0x101d, buf, sizeof(buf)), "ConnectX-6 Dx");
	ck_assert(!mlx_model_find(0x1017)->vf);
	ck_assert(mlx_model_find(0x1018)->vf);
	ck_assert(mlx_model_find(0x101e)->vf);
	ck_assert_uint_eq(mlx_model_find(0x1021)->pcie_gen, 5);
	ck_assert_ptr_null(mlx_model_find(0x1234));
	/* the kernel's table has ConnectX-9 and BlueField-4; families by firmware */
	ck_assert_str_eq(mlx_model_name(0x1025, buf, sizeof(buf)), "ConnectX-9");
	ck_assert_str_eq(mlx_model_name(0xa2df, buf, sizeof(buf)), "BlueField-4");
	ck_assert_uint_eq(mlx_model_find(0x1025)->fw_major, 82);
	ck_assert_uint_eq(mlx_model_find(0x1023)->fw_major, 40);
	ck_assert_uint_eq(mlx_model_find(0xa2dc)->fw_major, 32);
	ck_assert_uint_eq(mlx_model_find(0x101f)->fw_major, 26);
	ck_assert_uint_eq(mlx_model_find(0x101e)->fw_major, 0);
	ck_assert_ptr_nonnull(mlx_mgmt_function(0xc2d5));
	ck_assert_ptr_null(mlx_mgmt_function(0x1021));
	ck_assert_str_eq(mlx_model_name(0x1234, buf, sizeof(buf)), "unknown 0x15b3:1234");
}
END_TEST

/*
 * --peer on hca: the RDMA side of a two-sided case is each node's first
 * ACTIVE port with an IPv4 address as rdma-links finds it there (RoCE: the
 * IPv4-mapped RoCE v2 GID), never the management address; without one the
 * case cannot be placed.  Each side binds its own and connects to the other's.
 */
static int rail_of(const char *tree, const char *const *kv, char *ip, size_t ipsz,
		   char *why, size_t whysz)
{
	struct nodecase nc;
	int ret;

	nc_init(&nc, "rdma-links", tree, kv);
	nc_run(&nc);
	ret = node_rail_pick(&nc.out, ip, ipsz, why, whysz);
	nc_release(&nc);
	return ret;
}

START_TEST(peer_rdma_addrs)
{
	static const char *const inv[] = { "port_active=false", "addressable=false", NULL };
	static const char *const one[] = { "port_active=false", "addressable=false",
					   "devices=rocep59s0f1", NULL };
	static const char *const six[] = { "port_active=false", "addressable=false",
					   "devices=mlx5_6", NULL };
	char ip[64] = "", why[256] = "";

	ck_assert_int_eq(rail_of("cx6dx-roce-2numa", inv, ip, sizeof(ip), why, sizeof(why)), 0);
	ck_assert_str_eq(ip, "192.168.52.11");	/* rocep175s0f0's GID 3 ::ffff:c0a8:340b */
	ck_assert_int_eq(rail_of("cx6dx-roce-2numa", one, ip, sizeof(ip), why, sizeof(why)), 0);
	ck_assert_str_eq(ip, "192.168.51.11");	/* the case's device decides */
	ck_assert_str_eq(why, "rocep59s0f1/1 (ens1f1np1)");
	/* IB: IPoIB's address is live-only (a tree holds none); a pulled cable is no rail */
	ip[0] = '\0';
	ck_assert_int_eq(rail_of("cx7-ndr-ib", inv, ip, sizeof(ip), why, sizeof(why)), -1);
	ck_assert_str_eq(ip, "");
	ck_assert_msg(strstr(why, "without an IPv4 address on its IPoIB netdev"), "%s", why);
	ck_assert_int_eq(rail_of("cx7-ndr-ib-polling", six, ip, sizeof(ip), why, sizeof(why)), -1);
	ck_assert_str_eq(why, "no ACTIVE RDMA port with an IPv4 address: mlx5_6/1 is DOWN "
			 "without an IPv4 address on its IPoIB netdev");

	/* the request of each side: its own address to bind, the other's to reach */
	struct rq_case c = { .name = (char *)"t", .timeout_ms = 1000 };
	struct rq_placement p = { 0 };
	struct rq_request r;

	snprintf(p.addr[1], sizeof(p.addr[1]), "10.1.1.7");	/* management: out-of-band */
	rq_where_init(&p.where);
	p.where.rdma_addr[0] = xstrdup("192.168.52.11");
	p.where.rdma_addr[1] = xstrdup("192.168.52.12");
	for (int side = 0; side < 2; side++) {
		rq_request_init(&r, &c, "hca", side ? ROLE_SERVER : ROLE_CLIENT);
		rq_request_place(&r, &p, side, 4242, NULL, false);
		/* [client, server] on both sides: each takes [side] to bind, [!side] to reach */
		ck_assert_str_eq(r.where.rdma_addr[side], side ? "192.168.52.12" : "192.168.52.11");
		ck_assert_str_eq(r.where.rdma_addr[!side], side ? "192.168.52.11" : "192.168.52.12");
		if (!side)
			ck_assert_str_eq(r.peer_addr, "10.1.1.7");
		rq_request_release(&r);
	}
	rq_where_release(&p.where);
}
END_TEST

/*
 * mlxfwmanager --query beside mstflint: its flashed and running FW and PSID
 * as facts, a staged upgrade FAILs in its own words, a PSID other than
 * board_id FAILs, and a capture without its output is a fact, no verdict.
 * (The outputs are synthesized from MFT's documented layout.)
 */
START_TEST(driver_fwmanager)
{
	static const char *const tool[] = { "profile=hca", NULL };
	char tmp[] = "/tmp/rq-fwm-XXXXXX", path[4200];
	struct nodecase nc;
	struct rq_result *r;

	nc_init(&nc, "driver", "cx6dx-roce-lossless", tool);
	nc_run(&nc);
	r = nc_row(&nc, "rocep59s0f1", 1);
	ck_assert_str_eq(nc_fact(r, "fwmanager_flashed"), "22.36.1010");
	ck_assert_str_eq(nc_fact(r, "fwmanager_running"), "22.36.1010");
	ck_assert_str_eq(nc_fact(r, "fwmanager_psid"), "MT_0000000359");
	ck_assert_str_eq(nc_fact(r, "fwmanager_status"), "No matching image found");
	ck_assert_uint_eq(r->failed, 0);
	nc_release(&nc);

	nc_init(&nc, "driver", "cx6dx-roce-fwpending", tool);
	nc_run(&nc);
	r = nc_row(&nc, "rocep59s0f0", 1);
	ck_assert_str_eq(nc_fact(r, "fwmanager_running"), "22.36.1010");
	ck_assert_uint_eq(r->failed, 2);	/* mstflint's view and mlxfwmanager's */
	ck_assert_msg(strstr(r->log.buf, "mlxfwmanager: firmware 22.39.1002 is flashed but "
			     "22.36.1010 is running"), "%s", r->log.buf);
	nc_release(&nc);

	/* a PSID that is not the board's; then no mlxfwmanager output at all */
	copy_tree("cx6dx-roce-lossless", tmp);
	snprintf(path, sizeof(path), "%s/capture/tools/mlxfwmanager_--query_-d_0000_3b_00.1.out", tmp);
	{
		struct sb t = SB_INIT;
		char *at;

		ck_assert_int_ge(read_file(path, &t, 65536), 0);
		at = strstr(t.buf, "MT_0000000359");
		ck_assert_ptr_nonnull(at);
		memcpy(at, "MT_0000000999", 13);
		ck_assert_int_eq(write_file_replace(path, t.buf, t.len), 0);
		sb_release(&t);
	}
	nc_init(&nc, "driver", tmp, tool);
	nc_run(&nc);
	r = nc_row(&nc, "rocep59s0f1", 1);
	ck_assert_str_eq(r->reason, "rocep59s0f1: mlxfwmanager reports PSID MT_0000000999, sysfs "
			 "board_id MT_0000000359");
	nc_release(&nc);
	ck_assert_int_eq(unlink(path), 0);
	nc_init(&nc, "driver", tmp, tool);
	nc_run(&nc);
	r = nc_row(&nc, "rocep59s0f1", 1);
	ck_assert_uint_eq(r->failed, 0);
	ck_assert_str_eq(nc_fact(r, "fwmanager"), "not run: the capture holds no mlxfwmanager output");
	ck_assert_str_eq(nc_fact(r, "fw_running"), "22.36.1010");	/* mstflint still read */
	nc_release(&nc);
	ck_assert_int_eq(rm_rf(tmp), 0);
}
END_TEST

/* Files in dir (entries other than . and ..), or -1. */
static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * Every tree's GID and pkey tables have as many entries as the device
 * reports in its own ibv_devinfo -v (pkey_tbl_len, gid_tbl_len): sysfs
 * lists the whole table, unused entries included (IB pkeys 128, mlx5 RoCE
 * GIDs 255, rxe 1024), so a reader that stops at the first zero entry or
 * assumes a short table would be caught here.
 */
START_TEST(fixture_table_lengths)
{
	DIR *top = opendir(nc_fixture_dir());
	struct dirent *t;
	unsigned ports = 0;

	ck_assert_ptr_nonnull(top);
	while ((t = readdir(top))) {
		char path[4200], dev[64] = "", dir[4400];
		struct sb text = SB_INIT;
		int port = 0, len;

		snprintf(path, sizeof(path), "%s/%s/capture/tools/ibv_devinfo_-v.out", nc_fixture_dir(),
			 t->d_name);
		if (t->d_name[0] == '.' || read_file(path, &text, 1 << 22) < 0) {
			sb_release(&text);
			continue;
		}
		for (char *l = strtok(text.buf, "\n"); l; l = strtok(NULL, "\n")) {
			const char *what = NULL;

			if (sscanf(l, "hca_id: %63s", dev) == 1 || sscanf(l, " port: %d", &port) == 1)
				continue;
			if (sscanf(l, " pkey_tbl_len: %d", &len) == 1)
				what = "pkeys";
			else if (sscanf(l, " gid_tbl_len: %d", &len) == 1)
				what = "gids";
			if (!what)
				continue;
			snprintf(dir, sizeof(dir), "%s/%s/sys/class/infiniband/%s/ports/%d/%s",
				 nc_fixture_dir(), t->d_name, dev, port, what);
			ck_assert_msg(count_entries(dir) == len, "%s %s/%d: %d %s in sysfs, devinfo says %d",
				      t->d_name, dev, port, count_entries(dir), what, len);
			ports++;
		}
		sb_release(&text);
	}
	closedir(top);
	ck_assert_uint_gt(ports, 100);
}
END_TEST

/*
 * RoCE on a VLAN: the port's netdev is the PF's (GID 0), its address and
 * IPv4 GIDs are the VLAN netdev's.  rdma-links (and every two-sided kind
 * through rdma_pick_gid) takes the VLAN's RoCE v2 GID; the node kinds
 * judge the port as usual.
 */
START_TEST(roce_vlan)
{
	struct nodecase nc;
	struct rq_result *r;
	char ip[64], why[256], gid[64];

	nc_init(&nc, "rdma-links", "cx6dx-roce-vlan", NULL);
	nc_run(&nc);
	r = nc_row(&nc, "rocep59s0f0", 1);
	ck_assert_msg(r && r->verdict == RQ_PASS, "%s", r ? r->reason : "no row");
	ck_assert_str_eq(nc_fact(r, "netdev"), "ens1f0np0");
	ck_assert_str_eq(nc_fact(r, "gid_netdev"), "ens1f0np0.100");
	ck_assert_str_eq(nc_fact(r, "ipv4"), "192.168.60.11");
	ck_assert_str_eq(nc_fact(r, "gid_index"), "5");
	ck_assert_str_eq(nc_fact(nc_row(&nc, "rocep59s0f1", 1), "gid_netdev"), "ens1f1np1");
	ck_assert_int_eq(node_rail_pick(&nc.out, ip, sizeof(ip), why, sizeof(why)), 0);
	ck_assert_str_eq(ip, "192.168.60.11");
	/* asked for the VLAN itself, only its GIDs count; an unrelated netdev has none */
	ck_assert_int_eq(rdma_pick_gid(&nc.ctx, "rocep59s0f0", 1, "ens1f0np0.100", gid, sizeof(gid)), 5);
	ck_assert_int_eq(rdma_pick_gid(&nc.ctx, "rocep59s0f0", 1, "ens1f1np1", gid, sizeof(gid)), -ENOENT);
	nc_release(&nc);
	for (const char *const *k = (const char *const[]){ "driver", "mtu", "pcie", NULL }; *k; k++) {
		nc_init(&nc, *k, "cx6dx-roce-vlan", NULL);
		nc_run(&nc);
		ck_assert_msg(nc_count(&nc, RQ_FAIL) == 0 && nc_count(&nc, RQ_ERROR) == 0, "%s fails", *k);
		nc_release(&nc);
	}
}
END_TEST

/*
 * gpudirect: nvidia-smi's matrix and the sysfs walk agree on the HGX tree
 * (PIX to two GPUs); without the tool the walk judges alone; the keys that
 * turn a judgement into a record do so.
 */
START_TEST(gpudirect_keys)
{
	static const char *const notopo[] = { "topo=false", NULL };
	static const char *const iommu_any[] = { "iommu=any", NULL };
	static const char *const near_off[] = { "nearness=false", NULL };
	static const char *const one_rail[] = { "devices=mlx5_0", NULL };
	static const char *const storage[] = { "devices=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7,mlx5_8",
					       NULL };
	struct nodecase nc;
	struct rq_result *r;

	nc_init(&nc, "gpudirect", "hgx-h100", NULL);
	nc_run(&nc);
	r = nc_row(&nc, "mlx5_5", 0);
	ck_assert_int_eq(r->verdict, RQ_PASS);
	ck_assert_str_eq(nc_fact(r, "nearest_gpus"), "GPU5 (0000:ae:00.0)");
	ck_assert_str_eq(nc_fact(r, "gpu_connection"), "PIX");
	ck_assert_str_eq(nc_fact(r, "sysfs_connection"), "PIX");
	r = nc_row(&nc, "peer-memory", 0);
	ck_assert_str_eq(nc_fact(r, "nvidia_peermem"), "loaded");
	ck_assert_str_eq(nc_fact(r, "nvidia_smi_topo"), "read");
	ck_assert_str_eq(nc_fact(r, "gpus"), "8");
	ck_assert_ptr_nonnull(strstr(nc_fact(r, "nvidia_driver"), "Open Kernel Module for x86_64  550.54.15"));
	ck_assert_ptr_nonnull(strstr(nc_fact(r, "dmabuf"), "possible"));
	nc_release(&nc);

	nc_init(&nc, "gpudirect", "hgx-h100", notopo);
	nc_run(&nc);
	ck_assert_uint_eq(nc_count(&nc, RQ_PASS), 11);
	ck_assert_str_eq(nc_fact(nc_row(&nc, "mlx5_0", 0), "gpu_connection"), "PIX");
	nc_release(&nc);

	/* the faulty rail's tree has no nvidia-smi output: the walk finds NODE */
	nc_init(&nc, "gpudirect", "hgx-h100-farrail", near_off);
	nc_run(&nc);
	r = nc_row(&nc, "mlx5_3", 0);
	ck_assert_int_eq(r->verdict, RQ_SKIP);
	ck_assert_str_eq(nc_fact(r, "gpu_connection"), "NODE");
	ck_assert_ptr_null(nc_row(&nc, "rails", 0));
	ck_assert_ptr_nonnull(strstr(nc_fact(nc_row(&nc, "peer-memory", 0), "nvidia_smi_topo"),
				     "the capture holds no nvidia-smi output"));
	nc_release(&nc);

	/* idle GPUs at 2.5 GT/s are power saving; a GPU at x8 of x16 is a fault */
	r = NULL;
	nc_init(&nc, "gpudirect", "hgx-h100", NULL);
	nc_run(&nc);
	r = nc_row(&nc, "gpu-links", 0);
	ck_assert_int_eq(r->verdict, RQ_PASS);
	ck_assert_ptr_nonnull(strstr(nc_fact(r, "gpu_links"), "GPU5 2.5 GT/s PCIe x16 (max 32.0 GT/s PCIe x16) idle or "
				     "power saving"));
	nc_release(&nc);
	{
		char tmp[] = "/tmp/rq-gpulink-XXXXXX", path[4400];

		copy_tree("hgx-h100", tmp);
		snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/0000:ae:00.0/current_link_width", tmp);
		ck_assert_int_eq(write_file_atomic(path, "8\n", 2), 0);
		nc_init(&nc, "gpudirect", tmp, NULL);
		nc_run(&nc);
		r = nc_row(&nc, "gpu-links", 0);
		ck_assert_int_eq(r->verdict, RQ_FAIL);
		ck_assert_str_eq(r->reason, "GPU5 (0000:ae:00.0) at x8 of x16: PCIe link narrower than GPU and slot allow "
				 "(reseat the GPU board, check its riser; a speed below the maximum is power saving, not this)");
		ck_assert_uint_eq(nc_count(&nc, RQ_FAIL), 1);
		nc_release(&nc);
		ck_assert_int_eq(rm_rf(tmp), 0);
	}

	/* the storage NIC named in devices: is held to a rail's standard */
	nc_init(&nc, "gpudirect", "hgx-h100", storage);
	nc_run(&nc);
	r = nc_row(&nc, "mlx5_8", 0);
	ck_assert_int_eq(r->verdict, RQ_FAIL);
	ck_assert_ptr_nonnull(strstr(r->reason, "mlx5_8 (0000:61:00.0): the nearest GPUs, GPU0 (0000:19:00.0), "
				     "GPU1 (0000:2a:00.0), GPU2 (0000:3b:00.0), GPU3 (0000:4c:00.0), are NODE"));
	ck_assert_int_eq(nc_row(&nc, "rails", 0)->verdict, RQ_PASS);
	nc_release(&nc);
	/* devices: naming some rails: the other GPUs' rails are not missing, only unselected */
	nc_init(&nc, "gpudirect", "hgx-h100-farrail", one_rail);
	nc_run(&nc);
	ck_assert_int_eq(nc_row(&nc, "rails", 0)->verdict, RQ_PASS);
	ck_assert_uint_eq(nc_count(&nc, RQ_FAIL), 0);
	ck_assert_str_eq(nc_fact(nc_row(&nc, "rails", 0), "gpu_rails"),
			 "GPU0: mlx5_0; GPU1: none; GPU2: none; GPU3: none; GPU4: none; GPU5: none; GPU6: none; GPU7: none");
	nc_release(&nc);
	nc_init(&nc, "gpudirect", "hgx-h100", storage);
	nc_run(&nc);
	ck_assert_str_eq(nc_fact(nc_row(&nc, "rails", 0), "gpu_rails"),
			 "GPU0: mlx5_0; GPU1: mlx5_1; GPU2: mlx5_2; GPU3: mlx5_3; GPU4: mlx5_4; GPU5: mlx5_5; "
			 "GPU6: mlx5_6; GPU7: mlx5_7");
	nc_release(&nc);

	nc_init(&nc, "gpudirect", "hgx-h100-iommu", iommu_any);
	nc_run(&nc);
	ck_assert_uint_eq(nc_count(&nc, RQ_FAIL), 0);
	ck_assert_str_eq(nc_fact(nc_row(&nc, "mlx5_0", 0), "iommu"),
			 "mlx5_0: group 11 DMA-FQ; GPU0: group 10 DMA-FQ");
	nc_release(&nc);
}
END_TEST

/* Replace the first FROM in TREE/REL by TO (to "" deletes it). */
static void edit_tree_file(const char *tree, const char *rel, const char *from, const char *to)
{
	char path[4400], *p;
	struct sb t = SB_INIT, o = SB_INIT;

	snprintf(path, sizeof(path), "%s/%s", tree, rel);
	ck_assert_int_eq(read_file(path, &t, 0), 0);
	ck_assert_msg((p = strstr(t.buf, from)) != NULL, "%s lacks %s", rel, from);
	sb_add(&o, t.buf, (size_t)(p - t.buf));
	sb_adds(&o, to);
	sb_adds(&o, p + strlen(from));
	ck_assert_int_eq(write_file_atomic(path, o.buf ? o.buf : "", o.len), 0);
	sb_release(&t);
	sb_release(&o);
}

#define PEER_DUMP "capture/tools/modprobe_--dump-modversions__lib_modules_6.8.0-48-generic_updates_dkms_nvidia-peermem.ko.out"
#define IB_EXPORTS "capture/tools/modprobe_--show-exports__lib_modules_6.8.0-48-generic_updates_dkms_ib_core.ko.out"

/*
 * The NVIDIA driver's modules judged as OFED's: origin, vermagic against
 * the running kernel, missing for it; nvidia_peermem against the loaded
 * ib_core by the kernel's log, the CRCs and modinfo's depends.
 */
START_TEST(driver_stack_nvidia)
{
	struct nodecase nc;
	struct rq_result *r;
	struct sb t = SB_INIT;

	nc_init(&nc, "driver-stack", "gpu-node", NULL);
	nc_run(&nc);
	r = nc_row(&nc, "nvidia", 0);
	ck_assert_str_eq(nc_fact(r, "origin"), "dkms");
	ck_assert_str_eq(nc_fact(r, "signer_trusted"), "yes (a kernel keyring in /proc/keys)");
	r = nc_row(&nc, "nvidia_peermem", 0);
	ck_assert_int_eq(r->verdict, RQ_PASS);
	ck_assert_str_eq(nc_fact(r, "peer_memory_api"), "imports ib_register_peer_memory_client (built against "
			 "MLNX_OFED's ib_core)");
	ck_assert_str_eq(nc_fact(r, "peer_memory_api_from"), "modprobe --dump-modversions");
	ck_assert_str_eq(nc_fact(r, "ib_core_loaded"), "/lib/modules/6.8.0-48-generic/updates/dkms/ib_core.ko, "
			 "MLNX_OFED's 23.10-1.1.9)");
	nc_release(&nc);

	/* .run installer: under kernel/ but not intree, so out of tree (the kernel's own before) */
	nc_init(&nc, "driver-stack", "gpu-node-runfile", NULL);
	nc_run(&nc);
	r = nc_row(&nc, "nvidia", 0);
	ck_assert_str_eq(nc_fact(r, "origin"), "nvidia-installer");
	ck_assert_str_eq(nc_fact(r, "loaded"), "no");
	nc_release(&nc);

	{
		char tmp[] = "/tmp/rq-nv-XXXXXX", path[4400];

		/* nvidia.ko of another kernel where modinfo finds it: FAIL naming both kernels */
		copy_tree("gpu-node", tmp);
		edit_tree_file(tmp, "capture/tools/modinfo_nvidia.out", "vermagic:       6.8.0-48-generic",
			       "vermagic:       6.8.0-45-generic");
		nc_init(&nc, "driver-stack", tmp, NULL);
		nc_run(&nc);
		r = nc_row(&nc, "nvidia", 0);
		ck_assert_int_eq(r->verdict, RQ_FAIL);
		ck_assert_str_eq(r->reason, "nvidia: /lib/modules/6.8.0-48-generic/updates/dkms/nvidia.ko was built for "
				 "kernel 6.8.0-45-generic, the running kernel is 6.8.0-48-generic (rebuild it for "
				 "6.8.0-48-generic: dkms autoinstall -k 6.8.0-48-generic)");
		ck_assert_uint_eq(nc_count(&nc, RQ_FAIL), 1);
		nc_release(&nc);
		edit_tree_file(tmp, "capture/tools/modinfo_nvidia.out", "vermagic:       6.8.0-45-generic",
			       "vermagic:       6.8.0-48-generic");

		/* the loaded ib_core exports another CRC: the kernel would refuse it */
		edit_tree_file(tmp, IB_EXPORTS, "0x5a3e7c21\tib_register_peer_memory_client",
			       "0x77e1c0d4\tib_register_peer_memory_client");
		nc_init(&nc, "driver-stack", tmp, NULL);
		nc_run(&nc);
		r = nc_row(&nc, "nvidia_peermem", 0);
		ck_assert_int_eq(r->verdict, RQ_FAIL);
		ck_assert_str_eq(r->reason, "nvidia_peermem: /lib/modules/6.8.0-48-generic/updates/dkms/nvidia-peermem.ko "
				 "was built against another ib_core: its ib_register_peer_memory_client has CRC "
				 "0x5a3e7c21, the loaded ib_core (/lib/modules/6.8.0-48-generic/updates/dkms/ib_core.ko, "
				 "MLNX_OFED's 23.10-1.1.9) exports 0x77e1c0d4; the kernel will refuse it (\"disagrees about "
				 "version of symbol ib_register_peer_memory_client\"); rebuild it against the loaded "
				 "ib_core (dkms install)");
		ck_assert_uint_eq(nc_count(&nc, RQ_FAIL), 1);
		nc_release(&nc);

		/* ... and once modprobe was refused, not loaded: the kernel's own line decides */
		snprintf(path, sizeof(path), "%s/sys/module/nvidia_peermem", tmp);
		ck_assert_int_eq(rm_rf(path), 0);
		snprintf(path, sizeof(path), "%s/capture/tools/dmesg.out", tmp);
		ck_assert_int_eq(read_file(path, &t, 0), 0);
		sb_adds(&t, "[   15.002117] nvidia_peermem: disagrees about version of symbol ib_register_peer_memory_client\n"
			"[   15.002201] nvidia_peermem: Unknown symbol ib_register_peer_memory_client (err -22)\n");
		ck_assert_int_eq(write_file_atomic(path, t.buf, t.len), 0);
		nc_init(&nc, "driver-stack", tmp, NULL);
		nc_run(&nc);
		r = nc_row(&nc, "nvidia_peermem", 0);
		ck_assert_int_eq(r->verdict, RQ_FAIL);
		ck_assert_msg(str_starts(r->reason, "nvidia_peermem: the kernel refused its symbols against the loaded "
					 "ib_core (/lib/modules/6.8.0-48-generic/updates/dkms/ib_core.ko, MLNX_OFED's "
					 "23.10-1.1.9): \"nvidia_peermem: disagrees about version of symbol "
					 "ib_register_peer_memory_client\""), "%s", r->reason);
		ck_assert_str_eq(nc_fact(r, "loaded"), "no");
		nc_release(&nc);
		ck_assert_int_eq(rm_rf(tmp), 0);

		/* the reverse: built without MLNX_OFED's peer-memory API, MLNX_OFED's ib_core loaded */
		strcpy(tmp, "/tmp/rq-nv-XXXXXX");
		copy_tree("gpu-node", tmp);
		edit_tree_file(tmp, PEER_DUMP, "0x5a3e7c21\tib_register_peer_memory_client\n", "");
		edit_tree_file(tmp, PEER_DUMP, "0xd0b46f18\tib_unregister_peer_memory_client\n", "");
		nc_init(&nc, "driver-stack", tmp, NULL);
		nc_run(&nc);
		r = nc_row(&nc, "nvidia_peermem", 0);
		ck_assert_int_eq(r->verdict, RQ_FAIL);
		ck_assert_msg(str_starts(r->reason, "nvidia_peermem: /lib/modules/6.8.0-48-generic/updates/dkms/"
					 "nvidia-peermem.ko was built without MLNX_OFED's peer-memory API (no "
					 "ib_register_peer_memory_client in its modversions), but the loaded ib_core "
					 "(/lib/modules/6.8.0-48-generic/updates/dkms/ib_core.ko, MLNX_OFED's 23.10-1.1.9) "
					 "is MLNX_OFED's"), "%s", r->reason);
		nc_release(&nc);
		/* without the CRC dump, modinfo's depends (no ib_core) says the same */
		snprintf(path, sizeof(path), "%s/" PEER_DUMP, tmp);
		ck_assert_int_eq(unlink(path), 0);
		edit_tree_file(tmp, "capture/tools/modinfo_nvidia_peermem.out", "depends:        ib_core,nvidia",
			       "depends:        nvidia");
		nc_init(&nc, "driver-stack", tmp, NULL);
		nc_run(&nc);
		r = nc_row(&nc, "nvidia_peermem", 0);
		ck_assert_int_eq(r->verdict, RQ_FAIL);
		ck_assert_ptr_nonnull(strstr(r->reason, "(modinfo depends: no ib_core)"));
		ck_assert_str_eq(nc_fact(r, "peer_memory_api_from"), "modinfo depends");
		nc_release(&nc);
		ck_assert_int_eq(rm_rf(tmp), 0);

		/* built against MLNX_OFED, the kernel's own ib_core loaded, no log: the exports decide, then depends */
		strcpy(tmp, "/tmp/rq-nv-XXXXXX");
		copy_tree("gpu-node-peermem", tmp);
		edit_tree_file(tmp, "capture/tools/dmesg.out",
			       "[   14.203311] nvidia_peermem: Unknown symbol ib_register_peer_memory_client (err -2)\n", "");
		edit_tree_file(tmp, "capture/tools/dmesg.out",
			       "[   14.203420] nvidia_peermem: Unknown symbol ib_unregister_peer_memory_client (err -2)\n", "");
		nc_init(&nc, "driver-stack", tmp, NULL);
		nc_run(&nc);
		r = nc_row(&nc, "nvidia_peermem", 0);
		ck_assert_int_eq(r->verdict, RQ_FAIL);
		ck_assert_str_eq(r->reason, "nvidia_peermem: /lib/modules/6.8.0-51-generic/updates/dkms/nvidia-peermem.ko "
				 "needs ib_register_peer_memory_client, which the loaded ib_core (/lib/modules/"
				 "6.8.0-51-generic/kernel/drivers/infiniband/core/ib_core.ko.zst, the kernel's own) does not "
				 "export: it was built against MLNX_OFED's ib_core (the only one with the peer-memory API); "
				 "it will not load (\"Unknown symbol ib_register_peer_memory_client\"); install MLNX_OFED's "
				 "kernel modules for this kernel, or rebuild it");
		nc_release(&nc);
		snprintf(path, sizeof(path), "%s/capture/tools/modprobe_--show-exports__lib_modules_6.8.0-51-generic_"
			 "kernel_drivers_infiniband_core_ib_core.ko.zst.out", tmp);
		ck_assert_int_eq(unlink(path), 0);
		snprintf(path, sizeof(path), "%s/capture/tools/modprobe_--dump-modversions__lib_modules_6.8.0-51-generic_"
			 "updates_dkms_nvidia-peermem.ko.out", tmp);
		ck_assert_int_eq(unlink(path), 0);
		nc_init(&nc, "driver-stack", tmp, NULL);
		nc_run(&nc);
		r = nc_row(&nc, "nvidia_peermem", 0);
		ck_assert_int_eq(r->verdict, RQ_FAIL);
		ck_assert_msg(str_starts(r->reason, "nvidia_peermem: /lib/modules/6.8.0-51-generic/updates/dkms/"
					 "nvidia-peermem.ko was built against MLNX_OFED's ib_core (modinfo depends: "
					 "ib_core), but the loaded ib_core (/lib/modules/6.8.0-51-generic/kernel/drivers/"
					 "infiniband/core/ib_core.ko.zst, the kernel's own) has no peer-memory API"),
			      "%s", r->reason);
		nc_release(&nc);
		ck_assert_int_eq(rm_rf(tmp), 0);
	}
	sb_release(&t);

	/* the real modinfo samples: in-tree (intree: Y) is the kernel's own, updates/dkms is DKMS's */
	{
		static const struct { const char *sample, *origin; } smp[] = {
			{ "driver-stack/modinfo-mlx5_core-inbox-signed-debian-secure-boot-ca-6.1.0-31-skyao.txt", "kernel" },
			{ "driver-stack/modinfo-mlx5_core-mlnx-ofed-24.10-dkms-signed-mok-6.1.0-31-skyao.txt", "dkms" },
		};
		char tmp[] = "/tmp/rq-nvs-XXXXXX", path[4400];

		copy_tree("ofed-node", tmp);
		snprintf(path, sizeof(path), "%s/proc/sys/kernel/osrelease", tmp);
		ck_assert_int_eq(write_file_atomic(path, "6.1.0-31-amd64\n", 15), 0);
		for (size_t i = 0; i < ARRAY_SIZE(smp); i++) {
			struct sb m = SB_INIT;

			if (!real_sample(smp[i].sample, &m)) {
				sb_release(&m);
				continue;
			}
			snprintf(path, sizeof(path), "%s/capture/tools/modinfo_mlx5_core.out", tmp);
			ck_assert_int_eq(write_file_atomic(path, m.buf, m.len), 0);
			nc_init(&nc, "driver-stack", tmp, NULL);
			nc_run(&nc);
			r = nc_row(&nc, "mlx5_core", 0);
			ck_assert_str_eq(nc_fact(r, "origin"), smp[i].origin);
			ck_assert_str_eq(nc_fact(r, "vermagic"), "6.1.0-31-amd64 SMP preempt mod_unload modversions");
			/* the running kernel's: no vermagic complaint whatever else fails */
			ck_assert_ptr_null(strstr(r->reason ? r->reason : "", "was built for kernel"));
			nc_release(&nc);
			sb_release(&m);
		}
		ck_assert_int_eq(rm_rf(tmp), 0);
	}
}
END_TEST

/* driver-stack: what modinfo says, the Secure Boot facts, the keys that judge them */
START_TEST(driver_stack_facts)
{
	static const char *const sb_off[] = { "secure_boot=off", NULL };
	static const char *const sb_on[] = { "secure_boot=on", NULL };
	static const char *const no_ofed[] = { "ofed_match=false", NULL };
	struct nodecase nc;
	struct rq_result *r;

	nc_init(&nc, "driver-stack", "ofed-node", NULL);
	nc_run(&nc);
	r = nc_row(&nc, "mlx5_core", 0);
	ck_assert_str_eq(nc_fact(r, "origin"), "dkms");
	ck_assert_str_eq(nc_fact(r, "version"), "23.10-1.1.9");
	ck_assert_str_eq(nc_fact(r, "loaded_version"), "23.10-1.1.9");
	ck_assert_str_eq(nc_fact(r, "signer"), "DKMS module signing key");
	ck_assert_str_eq(nc_fact(r, "vermagic"), "6.8.0-48-generic SMP preempt mod_unload modversions");
	ck_assert_str_eq(nc_fact(r, "signer_trusted"), "yes (a kernel keyring in /proc/keys)");
	ck_assert_str_eq(nc_fact(r, "taint"), "O");
	r = nc_row(&nc, "secure-boot", 0);
	ck_assert_str_eq(nc_fact(r, "efi_secureboot"), "1 (enabled)");
	ck_assert_str_eq(nc_fact(r, "efi_setupmode"), "0 (User Mode)");
	ck_assert_str_eq(nc_fact(r, "mokutil"), "SecureBoot enabled");
	ck_assert_str_eq(nc_fact(r, "kernel_log"), "Secure boot enabled");
	ck_assert_str_eq(nc_fact(r, "decided_by"), "the kernel's log: \"Secure boot enabled\"");
	ck_assert_str_eq(nc_fact(r, "lockdown"), "integrity");
	ck_assert_str_eq(nc_fact(r, "module_signatures"), "enforced");
	ck_assert_str_eq(nc_fact(r, "tainted"), "4096 O");
	nc_release(&nc);

	nc_init(&nc, "driver-stack", "ofed-node", sb_off);
	nc_run(&nc);
	r = nc_row(&nc, "secure-boot", 0);
	ck_assert_int_eq(r->verdict, RQ_FAIL);
	ck_assert_str_eq(r->reason, "Secure Boot is on as the kernel runs it (the kernel's log: \"Secure boot "
			 "enabled\"), the lab wants it off");
	nc_release(&nc);

	/*
	 * Firmware SecureBoot 1 but shim's validation disabled (MokSBStateRT 1):
	 * the kernel runs with Secure Boot off, a lab that wants it on FAILs
	 * (it passed on the SecureBoot variable alone before).
	 */
	nc_init(&nc, "driver-stack", "ofed-node-shimoff", sb_on);
	nc_run(&nc);
	r = nc_row(&nc, "secure-boot", 0);
	ck_assert_int_eq(r->verdict, RQ_FAIL);
	ck_assert_str_eq(r->reason, "Secure Boot is off as the kernel runs it (shim's MokSBStateRT 1: the firmware's "
			 "SecureBoot is 1 but shim's validation is disabled, so the kernel booted with Secure Boot "
			 "disabled (no lockdown from it, unsigned modules load)), the lab wants it on");
	ck_assert_str_eq(nc_fact(r, "mokutil"), "SecureBoot enabled;SecureBoot validation is disabled in shim");
	ck_assert_str_eq(nc_fact(r, "module_signatures"), "not enforced");
	ck_assert_uint_eq(nc_count(&nc, RQ_FAIL), 1);
	nc_release(&nc);

	/*
	 * The queued key is the reason and the log's line a failure too; taint
	 * E on this node, whose signatures are not enforced, is how the kernel
	 * let it load: recorded, not failed (a false FAIL on every GPU node
	 * with an unsigned DKMS driver otherwise).
	 */
	nc_init(&nc, "driver-stack", "ofed-node-mokpending", NULL);
	nc_run(&nc);
	r = nc_row(&nc, "mlx_compat", 0);
	ck_assert_int_eq(r->verdict, RQ_FAIL);
	ck_assert_uint_eq(r->failed, 2);	/* not trusted, the log's line */
	ck_assert_str_eq(nc_fact(r, "signer_trusted"), "no: its enrollment is queued (mokutil --list-new), not confirmed");
	ck_assert_str_eq(nc_fact(r, "unverified"), "loaded with taint E: allowed, module signatures are not "
			 "enforced here");
	ck_assert_uint_eq(nc_row(&nc, "mlx5_core", 0)->failed, 1);
	ck_assert_str_eq(nc_fact(nc_row(&nc, "secure-boot", 0), "secure_boot"), "off");
	nc_release(&nc);
	/* no enrollment queued: simply a key the kernel does not trust */
	{
		char tmp[] = "/tmp/rq-mokq-XXXXXX", path[4400];

		copy_tree("ofed-node-mokpending", tmp);
		snprintf(path, sizeof(path), "%s/capture/tools/mokutil_--list-new.out", tmp);
		ck_assert_int_eq(write_file_atomic(path, "MokNew is empty\n", 16), 0);
		nc_init(&nc, "driver-stack", tmp, NULL);
		nc_run(&nc);
		r = nc_row(&nc, "ib_core", 0);
		ck_assert_int_eq(r->verdict, RQ_FAIL);
		ck_assert_str_eq(r->reason, "ib_core: signed by \"DKMS module signing key\", a key the kernel does not "
				 "trust (not in /proc/keys' keyrings, not an enrolled MOK); enroll it (mokutil --import "
				 "KEY.der, then confirm in MokManager at the next boot)");
		nc_release(&nc);
		/* a non-root capture: no keyrings, the MOK list alone decides nothing (db, built-in keys) */
		snprintf(path, sizeof(path), "%s/proc/keys", tmp);
		ck_assert_int_eq(unlink(path), 0);
		nc_init(&nc, "driver-stack", tmp, NULL);
		nc_run(&nc);
		r = nc_row(&nc, "ib_core", 0);
		ck_assert_ptr_nonnull(strstr(nc_fact(r, "signer_trusted"), "not an enrolled MOK; the kernel's keyrings"));
		/* and taint E, signatures not enforced here: recorded only */
		ck_assert_str_eq(nc_fact(r, "unverified"), "loaded with taint E: allowed, module "
				 "signatures are not enforced here");
		ck_assert_uint_eq(r->failed, 0);
		nc_release(&nc);
		/* the same taint E with module.sig_enforce=1: the kernel should have refused it */
		snprintf(path, sizeof(path), "%s/sys/module/module/parameters/sig_enforce", tmp);
		ck_assert_int_eq(write_file_atomic(path, "Y\n", 2), 0);
		nc_init(&nc, "driver-stack", tmp, NULL);
		nc_run(&nc);
		r = nc_row(&nc, "ib_core", 0);
		ck_assert_int_eq(r->verdict, RQ_FAIL);
		ck_assert_msg(strstr(r->reason, "ib_core: loaded with taint E (/sys/module/ib_core/taint OE) "
				     "although signatures are enforced"), "%s", r->reason);
		nc_release(&nc);
		ck_assert_int_eq(rm_rf(tmp), 0);
	}

	/* weak-updates: out of tree, built for the older kernel of the stream, OFED's version */
	nc_init(&nc, "driver-stack", "ofed-node-rhel-weakupdates", NULL);
	nc_run(&nc);
	r = nc_row(&nc, "mlx5_core", 0);
	ck_assert_int_eq(r->verdict, RQ_PASS);
	ck_assert_str_eq(nc_fact(r, "origin"), "weak-updates");
	ck_assert_str_eq(nc_fact(r, "kabi_built_for"), "5.14.0-427.13.1.el9_4.x86_64");
	ck_assert_str_eq(nc_fact(nc_row(&nc, "secure-boot", 0), "kernel"), "5.14.0-427.22.1.el9_4.x86_64");
	nc_release(&nc);
	/* ... but a weak-updates link to a module of another upstream version spans no kABI stream */
	{
		char tmp[] = "/tmp/rq-weak-XXXXXX", path[4400], *p;
		struct sb t = SB_INIT;

		copy_tree("ofed-node-rhel-weakupdates", tmp);
		snprintf(path, sizeof(path), "%s/capture/tools/modinfo_mlx5_core.out", tmp);
		ck_assert_int_eq(read_file(path, &t, 0), 0);
		ck_assert_ptr_nonnull(p = strstr(t.buf, "vermagic:       5.14.0"));
		memcpy(p + strlen("vermagic:       "), "4.18.0", 6);
		ck_assert_int_eq(write_file_atomic(path, t.buf, t.len), 0);
		nc_init(&nc, "driver-stack", tmp, NULL);
		nc_run(&nc);
		r = nc_row(&nc, "mlx5_core", 0);
		ck_assert_int_eq(r->verdict, RQ_FAIL);
		ck_assert_str_eq(r->reason, "mlx5_core: /lib/modules/5.14.0-427.22.1.el9_4.x86_64/weak-updates/"
				 "mlnx-ofa_kernel/mlx5_core.ko (an out-of-tree weak-updates module) was built for kernel "
				 "4.18.0-427.13.1.el9_4.x86_64, of another upstream version than the running "
				 "5.14.0-427.22.1.el9_4.x86_64: no kABI stream spans them; install the KMP built for this "
				 "kernel's stream");
		ck_assert_uint_eq(nc_count(&nc, RQ_FAIL), 1);
		nc_release(&nc);
		sb_release(&t);
		ck_assert_int_eq(rm_rf(tmp), 0);
	}

	nc_init(&nc, "driver-stack", "ofed-node-kernelupdate", no_ofed);
	nc_run(&nc);
	ck_assert_uint_eq(nc_count(&nc, RQ_FAIL), 0);
	r = nc_row(&nc, "ib_core", 0);
	ck_assert_str_eq(nc_fact(r, "origin"), "kernel");
	ck_assert_str_eq(nc_fact(r, "loaded_version"), "none (no MODULE_VERSION: the kernel's own)");
	nc_release(&nc);
}
END_TEST

/* node-tuning: the Device Control fields and the node facts; keys that relax a rule */
START_TEST(node_tuning_facts)
{
	static const char *const relaxed[] = { "max_read_req=512", "governor=any", "cstate_latency=-1",
					       "irqbalance_pinned=true", "memlock_unlimited=true", NULL };
	struct nodecase nc;
	struct rq_result *r;

	nc_init(&nc, "node-tuning", "hgx-h100", NULL);
	nc_run(&nc);
	r = nc_row(&nc, "mlx5_5", 0);
	ck_assert_str_eq(nc_fact(r, "max_read_req"), "4096");
	ck_assert_str_eq(nc_fact(r, "max_payload"), "256");
	ck_assert_str_eq(nc_fact(r, "irq_cpus"), "10-14");
	r = nc_row(&nc, "node", 0);
	ck_assert_str_eq(nc_fact(r, "irqbalance"), "not running");
	ck_assert_str_eq(nc_fact(r, "transparent_hugepage"), "always [madvise] never");
	ck_assert_ptr_nonnull(strstr(nc_fact(r, "memlock"), "* hard unlimited (/etc/security/limits.d/rdma.conf)"));
	nc_release(&nc);

	/* every rule relaxed: the faults become facts; memlock is judged and present */
	for (size_t i = 0; i < 3; i++) {
		static const char *const trees[] = { "hgx-h100-mrrs", "hgx-h100-cstates", "cx7-ndr-ib" };

		nc_init(&nc, "node-tuning", trees[i], relaxed);
		nc_run(&nc);
		ck_assert_uint_eq(nc_count(&nc, RQ_FAIL), i == 2 ? 1 : 0);
		nc_release(&nc);
	}
	/* cx7-ndr-ib has no limits.d: memlock_unlimited fails the node row */
	nc_init(&nc, "node-tuning", "cx7-ndr-ib", relaxed);
	nc_run(&nc);
	r = nc_row(&nc, "node", 0);
	ck_assert_int_eq(r->verdict, RQ_FAIL);
	ck_assert_ptr_nonnull(strstr(r->reason, "no memlock unlimited entry for all users or a group"));
	nc_release(&nc);
}
END_TEST

/* The line a busybox prompt's "cat FILE" printed in a /proc/irq sample. */
static bool sample_cat(const char *text, const char *file, char *out, size_t outsz)
{
	char key[128];
	const char *p;

	snprintf(key, sizeof(key), "cat %s", file);
	for (p = text; (p = strstr(p, key)); p += strlen(key)) {
		const char *nl = strchr(p, '\n'), *end;

		if (!nl || (p[strlen(key)] != ' ' && p[strlen(key)] != '\n'))
			continue;
		end = strchr(nl + 1, '\n');
		snprintf(out, outsz, "%.*s", (int)((end ? end : nl + 1 + strlen(nl + 1)) - nl - 1), nl + 1);
		return true;
	}
	return false;
}

/*
 * Requested vs effective affinity: the real pair of
 * irq-affinity/proc-irq-35-... (asked 0-3, delivered to 0) on every IRQ of
 * mlx5_0 of a copy of cx7-ndr-ib (irqbalance running) is not "pinned";
 * the old reading of effective_affinity_list first called it pinned.
 * Without an effective list, a wide mask says nothing of sharing.
 */
START_TEST(irq_requested_vs_effective)
{
	char tmp[] = "/tmp/rq-irqeff-XXXXXX", path[4400], want[64], eff[64];
	struct sb s = SB_INIT;
	struct nodecase nc;
	struct rq_result *r;
	struct dirent *e;
	DIR *d;

	if (!real_sample("irq-affinity/proc-irq-35-smp-affinity-0-3-effective-0-arm-gic-blog.txt", &s)) {
		sb_release(&s);
		return;
	}
	ck_assert(sample_cat(s.buf, "smp_affinity_list", want, sizeof(want)));
	ck_assert(sample_cat(s.buf, "effective_affinity_list", eff, sizeof(eff)));
	ck_assert_str_eq(want, "0-3");
	ck_assert_str_eq(eff, "0");
	copy_tree("cx7-ndr-ib", tmp);
	snprintf(path, sizeof(path), "%s/sys/class/infiniband/mlx5_0/device/msi_irqs", tmp);
	ck_assert_ptr_nonnull(d = opendir(path));
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/proc/irq/%s/smp_affinity_list", tmp, e->d_name);
		ck_assert_int_eq(write_file_atomic(path, want, strlen(want)), 0);
		snprintf(path, sizeof(path), "%s/proc/irq/%s/effective_affinity_list", tmp, e->d_name);
		ck_assert_int_eq(write_file_atomic(path, eff, strlen(eff)), 0);
	}
	closedir(d);
	nc_init(&nc, "node-tuning", tmp, NULL);
	nc_run(&nc);
	r = nc_row(&nc, "mlx5_0", 0);
	ck_assert_msg(r->verdict == RQ_PASS, "%s", r->reason);
	ck_assert_str_eq(nc_fact(r, "irqs_pinned"), "0 of 5 one CPU each (smp_affinity_list)");
	ck_assert_str_eq(nc_fact(r, "irq_cpus"), "0");
	nc_release(&nc);

	/* no effective lists at all: mlx5_0's vectors may land anywhere in 0-3 */
	snprintf(path, sizeof(path), "%s/sys/class/infiniband/mlx5_0/device/msi_irqs", tmp);
	ck_assert_ptr_nonnull(d = opendir(path));
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/proc/irq/%s/effective_affinity_list", tmp, e->d_name);
		ck_assert_int_eq(unlink(path), 0);
	}
	closedir(d);
	nc_init(&nc, "irq-affinity", tmp, NULL);
	nc_run(&nc);
	r = nc_row(&nc, "mlx5_0", 0);
	ck_assert_msg(r->verdict == RQ_PASS, "%s", r->reason);
	ck_assert_str_eq(nc_fact(r, "irq_landing"), "4 of 4 vectors have no effective_affinity_list and a mask "
			 "of several CPUs: where they land is unknown (not judged for sharing)");
	nc_release(&nc);
	sb_release(&s);
	ck_assert_int_eq(rm_rf(tmp), 0);
}
END_TEST

/* Write "LIST\n" into /proc/irq/IRQ/FILE of tree. */
static void irq_write(const char *tree, int irq, const char *file, const char *list)
{
	char path[4400], v[64];

	snprintf(path, sizeof(path), "%s/proc/irq/%d/%s", tree, irq, file);
	snprintf(v, sizeof(v), "%s\n", list);
	ck_assert_int_eq(write_file_atomic(path, v, strlen(v)), 0);
}

/*
 * Under irqbalance (requested masks wider than one CPU) where a vector
 * lands is irqbalance's choice: irq-affinity judges the masks for
 * locality and records the landing.  The real ARM GIC sample (mask 0-3,
 * effective 0) on every vector of mlx5_0: four vectors on CPU 0 while
 * local CPUs are free FAILed "share CPU 0" before.  Pinned one-CPU masks
 * on one CPU, and irqbalance masks with no local CPU, still FAIL.
 */
START_TEST(irq_balanced_placement)
{
	char tmp[] = "/tmp/rq-irqbal-XXXXXX", want[64] = "0-3", eff[64] = "0";
	struct sb s = SB_INIT;
	struct nodecase nc;
	struct rq_result *r;

	nc_init(&nc, "irq-affinity", "cx7-ndr-ib-stacked", NULL);
	nc_run(&nc);
	r = nc_row(&nc, "mlx5_0", 0);
	ck_assert_msg(r->verdict == RQ_PASS, "%s", r->reason);
	ck_assert_str_eq(nc_fact(r, "irq_effective_sharing"), "IRQs 98 (mlx5_comp1@pci:0000:18:00.0) and 99 "
			 "(mlx5_comp2@pci:0000:18:00.0) both land on CPU 1 while local CPU 2 has none: irqbalance's "
			 "placement (masks 0-7 and 0-7), not judged");
	ck_assert_str_eq(nc_fact(r, "irq_requested"), "97->0-7 98->0-7 99->0-7 100->0-7");
	ck_assert_str_eq(nc_fact(r, "irq_layout"), "97->0 98->1 99->1 100->3");
	nc_release(&nc);

	copy_tree("cx7-ndr-ib-stacked", tmp);
	if (real_sample("irq-affinity/proc-irq-35-smp-affinity-0-3-effective-0-arm-gic-blog.txt", &s)) {
		ck_assert(sample_cat(s.buf, "smp_affinity_list", want, sizeof(want)));
		ck_assert(sample_cat(s.buf, "effective_affinity_list", eff, sizeof(eff)));
	}
	for (int irq = 97; irq <= 100; irq++) {
		irq_write(tmp, irq, "smp_affinity_list", want);
		irq_write(tmp, irq, "effective_affinity_list", eff);
	}
	nc_init(&nc, "irq-affinity", tmp, NULL);
	nc_run(&nc);
	r = nc_row(&nc, "mlx5_0", 0);
	ck_assert_msg(r->verdict == RQ_PASS, "%s", r->reason);
	ck_assert_ptr_nonnull(strstr(nc_fact(r, "irq_effective_sharing"), "both land on CPU 0 while local CPU 1 has "
				     "none: irqbalance's placement (masks 0-3 and 0-3)"));
	nc_release(&nc);

	/* a tuning script's one-CPU masks on one CPU: a configuration, judged */
	irq_write(tmp, 98, "smp_affinity_list", "1");
	irq_write(tmp, 98, "effective_affinity_list", "1");
	irq_write(tmp, 99, "smp_affinity_list", "1");
	irq_write(tmp, 99, "effective_affinity_list", "1");
	nc_init(&nc, "irq-affinity", tmp, NULL);
	nc_run(&nc);
	r = nc_row(&nc, "mlx5_0", 0);
	ck_assert_int_eq(r->verdict, RQ_FAIL);
	ck_assert_str_eq(r->reason, "mlx5_0: completion IRQs 98 (mlx5_comp1@pci:0000:18:00.0) and 99 "
			 "(mlx5_comp2@pci:0000:18:00.0) share CPU 1 while local CPU 2 has none");
	nc_release(&nc);

	/* irqbalance's masks on the far node: the mask is judged for locality, and fails */
	for (int irq = 97; irq <= 100; irq++) {
		char c[8];

		snprintf(c, sizeof(c), "%d", 8 + irq - 97);
		irq_write(tmp, irq, "smp_affinity_list", "8-15");
		irq_write(tmp, irq, "effective_affinity_list", c);
	}
	nc_init(&nc, "irq-affinity", tmp, NULL);
	nc_run(&nc);
	r = nc_row(&nc, "mlx5_0", 0);
	ck_assert_int_eq(r->verdict, RQ_FAIL);
	ck_assert_msg(str_starts(r->reason, "mlx5_0 (NUMA node 0, local CPUs 0-7): completion IRQ 97 "
				 "(mlx5_comp0@pci:0000:18:00.0) is asked for CPUs 8-15 (smp_affinity_list), none of "
				 "them local; 4 of 4 vectors off-node"), "%s", r->reason);
	nc_release(&nc);

	/* a mask with local CPUs that landed far: recorded, not failed */
	for (int irq = 97; irq <= 100; irq++)
		irq_write(tmp, irq, "smp_affinity_list", "0-15");
	nc_init(&nc, "irq-affinity", tmp, NULL);
	nc_run(&nc);
	r = nc_row(&nc, "mlx5_0", 0);
	ck_assert_msg(r->verdict == RQ_PASS, "%s", r->reason);
	ck_assert_str_eq(nc_fact(r, "irq_effective_note"), "4 of 4 vectors asked for masks with local CPUs land "
			 "off-node (effective_affinity_list): irqbalance's placement, not judged");
	nc_release(&nc);
	sb_release(&s);
	ck_assert_int_eq(rm_rf(tmp), 0);
}
END_TEST

/*
 * mokutil alone decides where no kernel log and no EFI variable is there:
 * the real samples (enabled; disabled; enabled with shim's validation off)
 * and mokutil's own message for a machine without EFI variables
 * (mokutil.c: "EFI variables are not supported on this system"), which is
 * unknown, never off.
 */
START_TEST(secure_boot_mokutil_samples)
{
	static const struct {
		const char *sample, *text, *state;
		enum rq_verdict v;
	} cases[] = {
		{ "driver-stack/mokutil-sb-state-enabled-debian-guide.txt", NULL, "on", RQ_PASS },
		{ "driver-stack/mokutil-sb-state-disabled-ltp-mail.txt", NULL, "off", RQ_FAIL },
		{ "driver-stack/mokutil-sb-state-enabled-validation-disabled-in-shim-ethercat-notes.txt", NULL, "off",
		  RQ_FAIL },
		{ NULL, "EFI variables are not supported on this system\n", "unknown", RQ_SKIP },
		{ NULL, "SecureBoot disabled\nPlatform is in Setup Mode\n", "in Setup Mode", RQ_FAIL },
	};
	static const char *const sb_on[] = { "secure_boot=on", NULL };
	char tmp[] = "/tmp/rq-mok-XXXXXX", path[4400];
	struct nodecase nc;
	struct rq_result *r;

	copy_tree("ofed-node", tmp);
	snprintf(path, sizeof(path), "%s/sys/firmware/efi/efivars", tmp);
	ck_assert_int_eq(rm_rf(path), 0);
	snprintf(path, sizeof(path), "%s/capture/tools/dmesg.out", tmp);
	ck_assert_int_eq(unlink(path), 0);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sb t = SB_INIT;

		if (cases[i].sample && !real_sample(cases[i].sample, &t)) {
			sb_release(&t);
			continue;
		}
		if (!cases[i].sample)
			sb_adds(&t, cases[i].text);
		snprintf(path, sizeof(path), "%s/capture/tools/mokutil_--sb-state.out", tmp);
		ck_assert_int_eq(write_file_atomic(path, t.buf, t.len), 0);
		nc_init(&nc, "driver-stack", tmp, sb_on);
		nc_run(&nc);
		r = nc_row(&nc, "secure-boot", 0);
		ck_assert_msg(r->verdict == cases[i].v, "%zu: %s", i, r->reason);
		ck_assert_str_eq(nc_fact(r, "secure_boot"), cases[i].state);
		if (cases[i].v != RQ_SKIP)
			ck_assert(str_starts(nc_fact(r, "decided_by"), "mokutil --sb-state: \""));
		if (cases[i].v == RQ_FAIL)
			ck_assert_ptr_nonnull(strstr(r->reason, "(mokutil --sb-state: \""));
		nc_release(&nc);
		sb_release(&t);
	}
	ck_assert_int_eq(rm_rf(tmp), 0);
}
END_TEST

/*
 * MaxPayload along the path: the real ConnectX-7's DevCtl of
 * lspci/lspci-vvv-cx7-...txt (MaxPayload 512, RlxdOrd+) written into
 * mlx5_5 of a copy of hgx-h100, whose switch ports run 256: TLPs of 512
 * bytes are malformed to them.  The healthy tree (256 everywhere) passes.
 */
START_TEST(max_payload_path)
{
	char tmp[] = "/tmp/rq-mps-XXXXXX", path[4400];
	struct sb s = SB_INIT, cfg = SB_INIT;
	struct nodecase nc;
	struct rq_result *r;
	const char *dc, *mp;
	unsigned mps = 0, ctl;

	nc_init(&nc, "node-tuning", "hgx-h100", NULL);
	nc_run(&nc);
	r = nc_row(&nc, "mlx5_5", 0);
	ck_assert_int_eq(r->verdict, RQ_PASS);
	ck_assert_str_eq(nc_fact(r, "max_payload_path"), "0000:ad:01.0 256, 0000:ac:00.0 256, 0000:ab:01.0 256");
	ck_assert_str_eq(nc_fact(r, "relaxed_ordering"), "on (DevCtl RlxdOrd+)");
	nc_release(&nc);
	if (!real_sample("lspci/lspci-vvv-cx7-mt2910-gen5-x16-mps512-mrrs512-esc8000a-stelline.txt", &s)) {
		sb_release(&s);
		return;
	}
	ck_assert_ptr_nonnull(dc = strstr(s.buf, "DevCtl:"));
	ck_assert_ptr_nonnull(mp = strstr(dc, "MaxPayload "));
	ck_assert_int_eq(sscanf(mp, "MaxPayload %u bytes", &mps), 1);
	ck_assert_uint_eq(mps, 512);
	copy_tree("hgx-h100", tmp);
	snprintf(path, sizeof(path), "%s/sys/class/infiniband/mlx5_5/device/config", tmp);
	ck_assert_int_eq(read_file(path, &cfg, 4096), 0);
	/* ConnectX's PCI Express capability at 0x60: Device Control at +8, MPS in bits 7:5 */
	ctl = (unsigned char)cfg.buf[0x68] | (unsigned)(unsigned char)cfg.buf[0x69] << 8;
	ctl = (ctl & ~0xe0u) | (unsigned)(__builtin_ctz(mps / 128) << 5);
	cfg.buf[0x68] = (char)(ctl & 0xff);
	cfg.buf[0x69] = (char)(ctl >> 8);
	ck_assert_int_eq(write_file_atomic(path, cfg.buf, cfg.len), 0);
	nc_init(&nc, "node-tuning", tmp, NULL);
	nc_run(&nc);
	r = nc_row(&nc, "mlx5_5", 0);
	ck_assert_int_eq(r->verdict, RQ_FAIL);
	ck_assert_msg(str_starts(r->reason, "mlx5_5 (0000:af:00.0): PCIe MaxPayload 512 bytes is larger than that of "
				 "the port above it, 0000:ad:01.0 (256 bytes)"), "%s", r->reason);
	ck_assert_uint_eq(nc_count(&nc, RQ_FAIL), 1);
	nc_release(&nc);
	sb_release(&cfg);
	sb_release(&s);
	ck_assert_int_eq(rm_rf(tmp), 0);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, kind_vs_fixture, 0, (int)ARRAY_SIZE(table));
	tcase_add_test(tc, driver_profiles);
	tcase_add_test(tc, driver_keys);
	tcase_add_test(tc, driver_unbound_function);
	tcase_add_test(tc, mtu_set_and_restore);
	tcase_add_test(tc, irq_set_and_restore);
	tcase_add_test(tc, undo_irq_follows_vector);
	tcase_add_test(tc, nodeinfo_helpers);
	tcase_add_test(tc, pci_models);
	tcase_add_test(tc, pcie_facts);
	tcase_add_test(tc, ipoib_datagram_range);
	tcase_add_test(tc, irq_fallback_era);
	tcase_add_test(tc, ib_counters_growth);
	tcase_add_test(tc, driver_expected_link);
	tcase_add_test(tc, link_health_growth);
	tcase_add_test(tc, roce_lossless_keys);
	tcase_add_test(tc, loopback_rows);
	tcase_add_test(tc, peer_rdma_addrs);
	tcase_add_test(tc, driver_fwmanager);
	tcase_add_test(tc, fixture_table_lengths);
	tcase_add_test(tc, roce_vlan);
	tcase_add_test(tc, gpudirect_keys);
	tcase_add_test(tc, driver_stack_facts);
	tcase_add_test(tc, driver_stack_nvidia);
	tcase_add_test(tc, node_tuning_facts);
	tcase_add_test(tc, irq_requested_vs_effective);
	tcase_add_test(tc, irq_balanced_placement);
	tcase_add_test(tc, secure_boot_mokutil_samples);
	tcase_add_test(tc, max_payload_path);
}

RQ_CHECK_MAIN("node_kinds", add_tests)

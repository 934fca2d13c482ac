/* SPDX-License-Identifier: MIT */
/*
 * Mellanox/NVIDIA PCI device ids (vendor 0x15b3) mapped to the model names
 * lab engineers use ("ConnectX-6 Dx"), with virtual functions recognised as
 * such.  Sources: the kernel's mlx5_core_pci_table and pci.ids.
 */
#ifndef RQ_PCI_IDS_H
#define RQ_PCI_IDS_H

#include <stdbool.h>

#define PCI_VENDOR_MELLANOX 0x15b3

struct mlx_model {
	unsigned device;	/* PCI device id */
	const char *name;	/* "ConnectX-6 Dx", "ConnectX-6 VF" */
	const char *family;	/* pci.ids family: "MT2892 Family [ConnectX-6 Dx]" */
	bool vf;		/* a virtual function id */
	unsigned pcie_gen;	/* highest PCIe generation of the family, 0 unknown */
	unsigned fw_major;	/* firmware's first number for the family, 0 unknown/shared */
};

/* The model for a device id, or NULL when the id is not a known mlx5 part. */
const struct mlx_model *mlx_model_find(unsigned device);
/* The model name, or "unknown 0x15b3:XXXX" written into buf. */
const char *mlx_model_name(unsigned device, char *buf, unsigned size);

/*
 * Functions of a card that never get an RDMA device by design: the
 * BlueField SoC management interfaces (a host-side channel to the Arm
 * cores, served by mlxbf-bootctl or the rshim driver, not mlx5_core).
 * Returns their pci.ids name, else NULL.
 */
const char *mlx_mgmt_function(unsigned device);

#endif

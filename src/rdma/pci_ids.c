/* SPDX-License-Identifier: MIT */
/*
 * PCI id -> ConnectX model.  The table follows the kernel's
 * drivers/net/ethernet/mellanox/mlx5/core/main.c mlx5_core_pci_table (ids
 * and the "PCIe x.0" comments) and /usr/share/misc/pci.ids family names.
 * From ConnectX-6 Dx on, every family shares one VF id (0x101e, "mlx5Gen
 * VF"), so a VF's model is only "ConnectX VF".
 *
 * The last column is the firmware family: the first number of fw_ver that
 * NVIDIA's firmware images for the part carry (16.x for ConnectX-5, 28.x for
 * ConnectX-7, ...).  A VF runs its PF's firmware, so the per-family VF ids
 * carry the family too; the shared mlx5Gen VF id cannot (0: not judged).
 * BlueField-4's family number is not published yet (0).
 */
#include <stdio.h>
#include "rdma/pci_ids.h"
#include "core/util.h"

static const struct mlx_model models[] = {
	{ 0x1011, "Connect-IB",		"MT27600 [Connect-IB]",			false, 3, 10 },
	{ 0x1012, "Connect-IB VF",	"MT27600 Family [Connect-IB Virtual Function]", true, 3, 10 },
	{ 0x1013, "ConnectX-4",		"MT27700 Family [ConnectX-4]",		false, 3, 12 },
	{ 0x1014, "ConnectX-4 VF",	"MT27700 Family [ConnectX-4 Virtual Function]", true, 3, 12 },
	{ 0x1015, "ConnectX-4 Lx",	"MT27710 Family [ConnectX-4 Lx]",	false, 3, 14 },
	{ 0x1016, "ConnectX-4 Lx VF",	"MT27710 Family [ConnectX-4 Lx Virtual Function]", true, 3, 14 },
	{ 0x1017, "ConnectX-5",		"MT27800 Family [ConnectX-5]",		false, 3, 16 },
	{ 0x1018, "ConnectX-5 VF",	"MT27800 Family [ConnectX-5 Virtual Function]", true, 3, 16 },
	{ 0x1019, "ConnectX-5 Ex",	"MT28800 Family [ConnectX-5 Ex]",	false, 4, 16 },
	{ 0x101a, "ConnectX-5 Ex VF",	"MT28800 Family [ConnectX-5 Ex Virtual Function]", true, 4, 16 },
	{ 0x101b, "ConnectX-6",		"MT28908 Family [ConnectX-6]",		false, 4, 20 },
	{ 0x101c, "ConnectX-6 VF",	"MT28908 Family [ConnectX-6 Virtual Function]", true, 4, 20 },
	{ 0x101d, "ConnectX-6 Dx",	"MT2892 Family [ConnectX-6 Dx]",	false, 4, 22 },
	{ 0x101e, "ConnectX VF",	"ConnectX Family mlx5Gen Virtual Function", true, 0, 0 },
	{ 0x101f, "ConnectX-6 Lx",	"MT2894 Family [ConnectX-6 Lx]",	false, 4, 26 },
	{ 0x1021, "ConnectX-7",		"MT2910 Family [ConnectX-7]",		false, 5, 28 },
	{ 0x1023, "ConnectX-8",		"CX8 Family [ConnectX-8]",		false, 6, 40 },
	{ 0x1025, "ConnectX-9",		"CX9 Family [ConnectX-9]",		false, 6, 82 },
	{ 0xa2d2, "BlueField",		"MT416842 BlueField integrated ConnectX-5 network controller", false, 4, 18 },
	{ 0xa2d3, "BlueField VF",	"MT416842 BlueField multicore SoC family VF", true, 4, 18 },
	{ 0xa2d6, "BlueField-2",	"MT42822 BlueField-2 integrated ConnectX-6 Dx network controller", false, 4, 24 },
	{ 0xa2dc, "BlueField-3",	"MT43244 BlueField-3 integrated ConnectX-7 network controller", false, 5, 32 },
	{ 0xa2df, "BlueField-4",	"BlueField-4 integrated ConnectX-8 network controller", false, 6, 0 },
};

/* pci.ids: "MT416842 BlueField SoC management interface" and its successors. */
static const struct { unsigned device; const char *name; } mgmt[] = {
	{ 0xc2d1, "BlueField auxiliary communication channel" },
	{ 0xc2d2, "BlueField SoC management interface" },
	{ 0xc2d3, "BlueField-2 SoC management interface" },
	{ 0xc2d4, "BlueField-3 Lx SoC management interface" },
	{ 0xc2d5, "BlueField-3 SoC management interface" },
	{ 0xc2d6, "BlueField-4 SoC management interface" },
};

const char *mlx_mgmt_function(unsigned device)
{
	for (size_t i = 0; i < ARRAY_SIZE(mgmt); i++)
		if (mgmt[i].device == device)
			return mgmt[i].name;
	return NULL;
}

const struct mlx_model *mlx_model_find(unsigned device)
{
	for (size_t i = 0; i < ARRAY_SIZE(models); i++)
		if (models[i].device == device)
			return &models[i];
	return NULL;
}

const char *mlx_model_name(unsigned device, char *buf, unsigned size)
{
	const struct mlx_model *m = mlx_model_find(device);

	if (m)
		return m->name;
	snprintf(buf, size, "unknown 0x15b3:%04x", device);
	return buf;
}

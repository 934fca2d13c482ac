/* SPDX-License-Identifier: MIT */
/*
 * `nvidia-smi topo -m`: the GPU/NIC connection matrix.
 *
 *   <TAB>GPU0<TAB>GPU1<TAB>NIC0<TAB>CPU Affinity<TAB>NUMA Affinity<TAB>GPU NUMA ID
 *   GPU0<TAB> X <TAB>NV18<TAB>PIX<TAB>0-55,112-167<TAB>0<TAB><TAB>N/A
 *   NIC0<TAB>PIX<TAB>SYS<TAB> X
 *
 *   Legend:
 *     X    = Self
 *     SYS  = Connection traversing PCIe as well as the SMP interconnect ...
 *     ...
 *   NIC Legend:
 *     NIC0: mlx5_0
 *
 * The header names the devices (GPU<n>, NIC<n>; older drivers name an
 * HCA by its RDMA device, "mlx5_0") and then the affinity columns.  Cells
 * are separated by tabs; copies pasted from a terminal have runs of spaces
 * instead, which are taken as separators too (no cell holds two spaces).
 * On a terminal the header is underlined with ANSI escapes, which are
 * dropped.  NIC rows carry no affinity columns.
 *
 * Pure: text in, struct out.  A row whose label is not in the header, or
 * a matrix cell that is none of X, NV<n>, PIX, PXB, PHB, NODE, SYS (or
 * SOC, the old name of SYS), is an error naming the line.
 */
#ifndef RQ_PARSE_NVTOPO_H
#define RQ_PARSE_NVTOPO_H

#include <stdbool.h>
#include <stddef.h>
#include "parsers/parsers.h"

#define NVTOPO_MAX 64

/* Connection levels, nearest first (nvidia-smi's legend, in its order reversed). */
enum nvtopo_level {
	NVT_SELF = 0,	/* X */
	NVT_NVLINK,	/* NV<n>: a bonded set of n NVLinks */
	NVT_PIX,	/* at most a single PCIe bridge */
	NVT_PXB,	/* multiple PCIe bridges, not the host bridge */
	NVT_PHB,	/* a PCIe host bridge (typically the CPU) */
	NVT_NODE,	/* between host bridges within a NUMA node */
	NVT_SYS,	/* the SMP interconnect between NUMA nodes (QPI/UPI) */
};

struct nvtopo {
	int n;					/* devices (matrix columns) */
	char name[NVTOPO_MAX][24];		/* "GPU0", "NIC3", "mlx5_0" */
	char nic[NVTOPO_MAX][64];		/* NIC Legend: "mlx5_3" for NIC3, else "" */
	signed char level[NVTOPO_MAX][NVTOPO_MAX];	/* enum nvtopo_level, -1 not given */
	unsigned char nvlinks[NVTOPO_MAX][NVTOPO_MAX];	/* n of NV<n> */
	char cpu_affinity[NVTOPO_MAX][64];	/* "0-55,112-167", "" */
	char numa_affinity[NVTOPO_MAX][16];	/* "0", "N/A", "" */
};

/* 0, or -EINVAL with err naming the line.  t is filled either way. */
int nvtopo_parse(const char *text, size_t len, struct nvtopo *t, char *err, size_t errsz);
/* "PIX" -> NVT_PIX ... ; -1 for anything else.  *links gets n of "NV<n>". */
int nvtopo_level_of(const char *cell, int *links);
const char *nvtopo_level_name(int level);
/* Is column c a GPU (GPU<n>)?  Every other column is a NIC. */
bool nvtopo_is_gpu(const struct nvtopo *t, int c);
/*
 * GPU column g's rails: the NIC columns behind its PCIe switch (PIX, PXB),
 * up to max of them into nics; returns how many there are.
 */
int nvtopo_rails_of(const struct nvtopo *t, int g, int *nics, int max);
/* The column of device name ("GPU0") or of the NIC whose legend says name ("mlx5_0"); -1. */
int nvtopo_find(const struct nvtopo *t, const char *name);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * What an MPI job really used to carry its messages, read from the lines
 * Open MPI and UCX print when their selection is made verbose
 * (OMPI_MCA_pml_base_verbose=10, OMPI_MCA_btl_base_verbose=10,
 * UCX_LOG_LEVEL=info), not from what was asked:
 *
 *   [vm0:00221] select: component ucx selected
 *   [vm1:00229] mca: bml: Using tcp btl for send to [[28027,1],0] on node vm0
 *   [1796187870.1] [vm1:202  :0]  ucp_worker.c:1763 UCX  INFO    ep_cfg[1]: tag(rc_verbs/rxe0:1)
 *
 * The pml is the first one selected; btls and UCX transports are kept
 * once each, those that reach another process only (self, vader, shared
 * memory and cma are left out).
 */
#ifndef RQ_PARSE_MPI_USED_H
#define RQ_PARSE_MPI_USED_H

#include <stdbool.h>
#include <stddef.h>
#include "core/util.h"

struct mpi_used {
	char pml[32];		/* "" when no selection line was seen */
	struct sb btl, ucx;	/* ", "-separated, each once: "tcp"; "rc_verbs/rxe0:1" */
	bool rdma;		/* an RDMA transport (rc/ud/dc, openib, ofi, uct) carried traffic */
	bool tcp;		/* TCP did */
};

#define MPI_USED_INIT { .btl = SB_INIT, .ucx = SB_INIT }

/* Add what the lines of text say; may be called on stdout and stderr both. */
void mpi_used_scan(struct mpi_used *u, const char *text, size_t len);
/* "pml ucx, UCX rc_verbs/rxe0:1", for reasons */
void mpi_used_words(const struct mpi_used *u, char *buf, size_t size);
void mpi_used_release(struct mpi_used *u);
/*
 * The first line in which UCX or Open MPI said a peer cannot be reached
 * over the RDMA transports it was given (MPI_Init then fails), into buf;
 * false when there is none.
 */
bool mpi_used_refused(const char *text, size_t len, char *buf, size_t size);

#endif

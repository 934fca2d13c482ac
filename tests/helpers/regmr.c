/* SPDX-License-Identifier: MIT */
/*
 * regmr DEVICE BYTES: register BYTES of memory on DEVICE and say so; exit 1
 * with the reason when the kernel refuses (RLIMIT_MEMLOCK for a non-root
 * process).  The integration tests run it in a guest as nobody, the way
 * RDMA software runs in CI.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	size_t bytes;
	void *buf;
	int n;

	if (argc != 3) {
		fprintf(stderr, "usage: regmr DEVICE BYTES\n");
		return 2;
	}
	bytes = strtoull(argv[2], NULL, 0);
	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx) {
		fprintf(stderr, "regmr: cannot open %s\n", argv[1]);
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	buf = calloc(1, bytes);
	if (!pd || !buf) {
		fprintf(stderr, "regmr: no PD or no memory\n");
		return 1;
	}
	mr = ibv_reg_mr(pd, buf, bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!mr) {
		printf("regmr: ibv_reg_mr of %zu bytes failed: %s\n", bytes, strerror(errno));
		return 1;
	}
	printf("regmr: registered %zu bytes on %s as uid %d\n", bytes, argv[1], (int)getuid());
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(buf);
	return 0;
}

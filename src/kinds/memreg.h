/* SPDX-License-Identifier: MIT */
/*
 * The pure rules of the memreg kind (kind_memreg.c): which sizes a case
 * measures, how much a registration pins against RLIMIT_MEMLOCK, the
 * figures made from the timings, the thresholds, and the text of the
 * ERROR a memlock limit causes.  No device, no system call: the unit
 * tests (tests/test_memreg.c) reach every rule.
 */
#ifndef RQ_MEMREG_H
#define RQ_MEMREG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The page kinds, in the order of memreg_page_names[] (the pages: key). */
enum memreg_pages { MR_4K, MR_2M, MR_1G, MR_ODP, MR_DMABUF, MR_NPAGES };
extern const char *const memreg_page_names[];	/* "4k", "2m", "1g", "odp", "dmabuf", NULL */

#define MR_MIN_SIZE 4096ull
#define MR_MAX_SIZES 64

/*
 * The sizes to measure.  Given ones (the sizes: key) as they are, each
 * at most max_size; without them 4 KiB, 16 KiB, ... by x4 up to max_size
 * and, there alone, up to memlock_cap too (UINT64_MAX: none), so a
 * default run measures what the limit allows and a case that names a
 * size beyond it gets the memlock ERROR.  Both lists drop sizes above
 * mem_cap (what memory allows).  Returns the count; *dropped (may be
 * NULL) is the first size left out, 0 when none was.
 */
size_t memreg_sizes(const int64_t *given, size_t ngiven, uint64_t max_size, uint64_t mem_cap,
		    uint64_t memlock_cap, uint64_t *out, size_t max, uint64_t *dropped);

/* What memory allows: half of /proc/meminfo's MemAvailable (0 when the text has none). */
uint64_t memreg_mem_cap(const char *meminfo);

/*
 * Bytes a registration of size bytes (page-aligned) pins against
 * RLIMIT_MEMLOCK: ib_umem_get() counts whole pages of the system page
 * size in mm->pinned_vm, huge-page backed or not.  ODP and dma-buf
 * registrations pin nothing there: 0.
 */
uint64_t memreg_pinned(enum memreg_pages pages, uint64_t size, uint64_t page_size);

/*
 * Does the limit stop a registration that pins need bytes?  The kernel
 * refuses (ENOMEM; EPERM with a limit of 0) when pinned_vm would pass the
 * soft limit and the process lacks CAP_IPC_LOCK.
 */
bool memreg_memlock_stops(uint64_t need, bool unlimited, uint64_t limit, bool cap_ipc_lock);

/*
 * The ERROR when memlock stopped a registration: what failed, the limit
 * and what the registration needed, and the fix (limits.d for logins,
 * LimitMEMLOCK for a systemd service, ulimit -l for a shell).
 */
void memreg_memlock_why(char *buf, size_t size, const char *dev, enum memreg_pages pages,
			uint64_t bytes, int err, uint64_t limit, bool unlimited);

/* "64 KiB", "1 GiB", "unlimited" (unlimited set). */
void memreg_size_text(uint64_t bytes, bool unlimited, char *buf, size_t size);

/* Figures from the median times: microseconds per GiB registered, registrations per second. */
double memreg_us_per_gib(double reg_us, uint64_t bytes);
double memreg_regs_per_s(double reg_us);

/*
 * The thresholds (0: not judged).  max_us_per_gib is judged at each page
 * kind's largest size (the per-byte cost dominates there), min_regs_per_s
 * at its smallest (the per-call cost does).  Returns -1 when not judged,
 * 1 when met, 0 when not (why says by how much).
 */
int memreg_judge_gib(double max_us_per_gib, double us_per_gib, const char *what,
		     char *why, size_t whysz);
int memreg_judge_rate(double min_regs_per_s, double regs_per_s, const char *what,
		      char *why, size_t whysz);

#endif

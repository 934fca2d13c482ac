/* SPDX-License-Identifier: MIT */
/*
 * What `compare`, `qualify` and `baseline` share: reading a run's
 * results.json and printing the findings (harness/report/compare.c).
 */
#ifndef RQ_REPORT_COMPARE_H
#define RQ_REPORT_COMPARE_H

#include <stddef.h>
#include <stdio.h>
#include "qual/compare.h"

struct json_t;

/*
 * A run directory or a results.json into d, read a row at a time and
 * checked (core/run_doc.h): d is cmp_doc_init'd (or rq_run_doc_init'd)
 * before, which says what is kept and checked, so two large runs are never
 * two trees.  0, or -1 after a message on stderr naming the file (d
 * released).
 */
struct rq_run_doc;
int compare_load_doc(const char *arg, char *path, size_t size, struct rq_run_doc *d);
/* The tables and the result line `compare` prints. */
void compare_print(FILE *fp, const struct cmp_report *rep, const char *pb, const char *pa);

#endif

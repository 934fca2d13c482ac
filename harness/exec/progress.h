/* SPDX-License-Identifier: MIT */
/*
 * The live progress line of `rdmaqual run` on a terminal:
 *
 *   [12/67] bw.write_64k on rxe-vm 3.1 s, 2 failed so far, ETA 40 s
 *
 * and with run --jobs, when cases of other targets run at the same time,
 * "... ETA 40 s (3 targets running)": the case named is the next one the
 * report waits for (rows keep the plan's order).
 *
 * redrawn in place twice a second by a small thread while a case runs, and
 * cleared whenever a result line is printed, so result lines scroll above
 * it.  When stdout is not a terminal (CI logs), or TERM is "dumb", nothing
 * is drawn and the output is the plain result lines as before.
 */
#ifndef RQ_PROGRESS_H
#define RQ_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

/* Start for total cases; false (and no-op calls after) when not on a terminal. */
bool progress_start(size_t total);
/* Is the line being drawn? */
bool progress_active(void);
/* Case number i (0-based) begins on target (a name, may be NULL). */
void progress_case(size_t i, const char *name, const char *target);
/* run --jobs: n targets have a case in flight now (shown when n > 1). */
void progress_running(unsigned n);
/* Before printing result lines: takes the terminal and clears the line. */
void progress_hold(void);
/* After printing them: failed is the count of FAIL and ERROR rows so far. */
void progress_release(unsigned failed);
/* Clear the line and stop the thread. */
void progress_stop(void);

#endif

/* SPDX-License-Identifier: MIT */
#ifndef RQ_MANPAGE_H
#define RQ_MANPAGE_H

/* Print rdmaqual(1) ("1") or rdmaqual-cases(5) ("5") as roff; an exit status. */
int man_page(const char *section);

#endif

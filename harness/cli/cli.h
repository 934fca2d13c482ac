/* SPDX-License-Identifier: MIT */
/* Shared by the subcommands: loading and filtering cases, exit codes. */
#ifndef RQ_CLI_H
#define RQ_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include "core/case.h"
#include "exec/run.h"		/* RQ_EXIT_OK, RQ_EXIT_FAIL, RQ_EXIT_USAGE */

struct case_filter {
	char **globs;	size_t nglobs;	/* -k: name globs, any may match */
	char **tags;	size_t ntags;	/* -t: tags, any may match; "!tag" excludes */
};

/* argv[0] of the process, absolute (for agents in VMs and forked agents). */
extern const char *rq_self_exe;
extern const char *rq_prog;

void filter_add_glob(struct case_filter *f, const char *g);
void filter_add_tag(struct case_filter *f, const char *t);
bool filter_match(const struct case_filter *f, const struct rq_case *c);
/* The opt-in tag that keeps c out unless f asks for it (-t TAG, -k NAME), else NULL. */
const char *filter_opt_in(const struct case_filter *f, const struct rq_case *c);
void filter_release(struct case_filter *f);

/*
 * Load paths (default "cases/"), print every error to stderr.  Returns 0 or
 * RQ_EXIT_USAGE when any file had errors (nothing is run then).
 */
int load_cases(char **paths, int npaths, struct rq_suite *suite);
/*
 * list and lint: -k, -t (and --json where json is not NULL), then the files;
 * -1 after --help, else an exit status.
 */
int load_filtered(const char *cmd, int argc, char **argv, struct rq_suite *suite,
		  struct case_filter *f, bool *json);

/*
 * One word of a command line and the function that takes the words from it
 * on: the commands (commands.def) and every command's subcommands.
 */
struct cli_word {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

/*
 * argv[1] looked up in words (cmd NULL: the top level): its function gets
 * argc - 1, argv + 1.  No word: usage on stderr, RQ_EXIT_USAGE; --help or
 * -h: usage on stdout, 0; an unknown word is named, with the nearest known
 * one, and the usage follows on stderr (RQ_EXIT_USAGE).
 */
int cli_dispatch(const char *cmd, const struct cli_word *words, size_t n, int argc, char **argv,
		 void (*usage)(FILE *fp));

/* Is this `CMD --help` (or -h)?  The usage then goes to stdout, exit 0. */
bool wants_help(int argc, char **argv);
/* The usage on stdout (exit 0) for --help, else on stderr (RQ_EXIT_USAGE). */
int usage_out(int argc, char **argv, void (*print)(FILE *fp));

/* "usage: ..." on stderr, returns RQ_EXIT_USAGE. */
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define CMD(name, sym, help) int cmd_##sym(int argc, char **argv);
#include "cli/commands.def"
#undef CMD

/*
 * qualify: 0 when a side's results.json has a row that is not an ERROR;
 * else says so on err, with the first reason made inert (core/term.h), -1.
 */
struct json_t;
struct rq_run_doc;
int qualify_side_usable(const char *label, const struct rq_run_doc *doc, FILE *err);

#endif

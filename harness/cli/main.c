/* SPDX-License-Identifier: MIT */
/*
 * rdmaqual: qualify RDMA networks from declarative case files.
 * One table of subcommands (commands.def), each in its own cmd_*.c.
 */
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/cli.h"
#include "core/util.h"


const char *rq_self_exe;
const char *rq_prog = "rdmaqual";

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
#define CMD(name, sym, help) { name, cmd_##sym, help },
#include "cli/commands.def"
#undef CMD
};

static void usage(FILE *fp)
{
	fprintf(fp, "usage: %s COMMAND [OPTIONS] [ARGS]\n\ncommands:\n", rq_prog);
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(fp, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(fp, "\n'%s COMMAND --help' describes a command's options.\n", rq_prog);
}

bool wants_help(int argc, char **argv)
{
	return argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"));
}

int usage_out(int argc, char **argv, void (*print)(FILE *fp))
{
	if (wants_help(argc, argv)) {
		print(stdout);
		return 0;
	}
	print(stderr);
	return RQ_EXIT_USAGE;
}

int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s %s: ", rq_prog, cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(see '%s %s --help')\n", rq_prog, cmd);
	return RQ_EXIT_USAGE;
}

void filter_add_glob(struct case_filter *f, const char *g)
{
	f->globs = xrealloc(f->globs, (f->nglobs + 1) * sizeof(*f->globs));
	f->globs[f->nglobs++] = xstrdup(g);
}

void filter_add_tag(struct case_filter *f, const char *t)
{
	f->tags = xrealloc(f->tags, (f->ntags + 1) * sizeof(*f->tags));
	f->tags[f->ntags++] = xstrdup(t);
}

static bool has_tag(const struct rq_case *c, const char *t)
{
	for (size_t i = 0; i < c->ntags; i++)
		if (!strcmp(c->tags[i], t))
			return true;
	return false;
}

bool filter_match(const struct case_filter *f, const struct rq_case *c)
{
	bool ok = f->nglobs == 0, want_tag = false, tag_ok = false;

	for (size_t i = 0; i < f->nglobs && !ok; i++)
		ok = !fnmatch(f->globs[i], c->name, 0);
	if (!ok)
		return false;
	for (size_t i = 0; i < f->ntags; i++) {
		if (f->tags[i][0] == '!') {
			if (has_tag(c, f->tags[i] + 1))
				return false;
			continue;
		}
		want_tag = true;
		tag_ok = tag_ok || has_tag(c, f->tags[i]);
	}
	return !want_tag || tag_ok;
}

void filter_release(struct case_filter *f)
{
	for (size_t i = 0; i < f->nglobs; i++)
		free(f->globs[i]);
	for (size_t i = 0; i < f->ntags; i++)
		free(f->tags[i]);
	free(f->globs);
	free(f->tags);
}

int load_cases(char **paths, int npaths, struct rq_suite *suite)
{
	struct rq_diags diags = { 0 };
	char *def[] = { (char *)"cases" };
	int n;

	if (npaths == 0) {
		paths = def;
		npaths = 1;
	}
	n = rq_load_paths(paths, (size_t)npaths, suite, &diags);
	n += rq_suite_check_dups(suite, &diags);
	if (diags.n) {
		rq_diags_print(&diags, stderr);
		fprintf(stderr, "%zu error%s in case files\n", diags.n, diags.n == 1 ? "" : "s");
	}
	rq_diags_release(&diags);
	return n || diags.n ? RQ_EXIT_USAGE : 0;
}

int main(int argc, char **argv)
{
	static char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	/* Agents in VMs and forked agents run this very binary. */
	if (n > 0) {
		exe[n] = '\0';
		rq_self_exe = exe;
	} else {
		rq_self_exe = argv[0];
	}
	if (argc < 2) {
		usage(stderr);
		return RQ_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("rdmaqual %s\n", RQ_VERSION);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "%s: unknown command \"%s\"", rq_prog, argv[1]);
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (edit_distance(argv[1], commands[i].name) <= 2) {
			fprintf(stderr, "; did you mean \"%s\"?", commands[i].name);
			break;
		}
	fprintf(stderr, "\n");
	usage(stderr);
	return RQ_EXIT_USAGE;
}

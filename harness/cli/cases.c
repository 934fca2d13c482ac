/* SPDX-License-Identifier: MIT */
/* The case files a command reads and the filters (-k, -t) that select among them. */
#include <fnmatch.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/options.h"
#include "core/paths.h"
#include "core/util.h"

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

/*
 * Tags whose cases run only when asked for: a lab-scale fabric (hundreds of
 * simulated hosts, a minute and more here) is no part of a plain
 * `rdmaqual run` or of make demo.  A positive -t naming the tag, or a -k
 * naming the case exactly, asks for it.
 */
static const char *const opt_in_tags[] = { "lab-scale" };

const char *filter_opt_in(const struct case_filter *f, const struct rq_case *c)
{
	for (size_t t = 0; t < ARRAY_SIZE(opt_in_tags); t++) {
		bool asked = false;

		if (!has_tag(c, opt_in_tags[t]))
			continue;
		for (size_t i = 0; i < f->ntags && !asked; i++)
			asked = !strcmp(f->tags[i], opt_in_tags[t]);
		for (size_t i = 0; i < f->nglobs && !asked; i++)
			asked = !strcmp(f->globs[i], c->name);
		if (!asked)
			return opt_in_tags[t];
	}
	return NULL;
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
	char *def[] = { (char *)rq_default_cases() };
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

int load_filtered(const char *cmd, int argc, char **argv, struct rq_suite *suite,
		  struct case_filter *f, bool *json)
{
	static const struct option lo[] = {
		{ "name", required_argument, NULL, 'k' },
		{ "tag", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "k:t:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'k': filter_add_glob(f, optarg); break;
		case 't': filter_add_tag(f, optarg); break;
		case 'j':
			if (!json)
				return usage_error(cmd, "--json is not an option of %s", cmd);
			*json = true;
			break;
		case 'h':
			printf("usage: rdmaqual %s [-k GLOB] [-t TAG]%s [FILE|DIR...]\n"
			       CLI_HELP_NAME CLI_HELP_TAG, cmd, json ? " [--json]" : "");
			return -1;
		default:
			return RQ_EXIT_USAGE;
		}
	}
	return load_cases(argv + optind, argc - optind, suite);
}

// SPDX-License-Identifier: MIT
/*
 * rdmaqual baseline save [-T TOL] RUN FILE: keep a known-good run's figures
 * (src/qual/baseline.c) for `rdmaqual run --baseline FILE`.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "cli/cli.h"
#include "report/compare.h"
#include "core/util.h"
#include "qual/baseline.h"

static void baseline_usage(FILE *fp)
{
	fprintf(fp,
"usage: rdmaqual baseline save [-T [GLOB=]PCT]... RUN FILE\n"
"Stores the figures of RUN's passing rows (a run directory or results.json),\n"
"keyed by case, target and HCA model, in FILE; 'rdmaqual run --baseline FILE'\n"
"then fails a row whose figure is worse than the stored one by more than the\n"
"tolerance (default %g%%, as compare).\n", RQ_COMPARE_DEFAULT_TOL);
}

int cmd_baseline(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "tolerance", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct cmp_opts o;
	char err[300], path[PATH_MAX];
	int opt, ret = RQ_EXIT_USAGE;

	cmp_opts_init(&o);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "T:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'T':
			if (cmp_opts_tolerance(&o, optarg, err, sizeof(err))) {
				cmp_opts_release(&o);
				return usage_error("baseline", "%s", err);
			}
			break;
		case 'h':
			baseline_usage(stdout);
			cmp_opts_release(&o);
			return 0;
		default:
			baseline_usage(stderr);
			cmp_opts_release(&o);
			return RQ_EXIT_USAGE;
		}
	}
	if (argc - optind != 3 || strcmp(argv[optind], "save")) {
		cmp_opts_release(&o);
		return usage_error("baseline", "wants: baseline save RUN FILE");
	}
	json_t *res = compare_load(argv[optind + 1], path, sizeof(path));

	if (res) {
		const char *id = json_string_value(json_object_get(json_object_get(res, "run"), "id"));
		json_t *bl = rq_baseline_from_results(res, &o, id ? id : path);
		char *text = json_dumps(bl, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));

		if (text && !write_file_atomic(argv[optind + 2], text, strlen(text))) {
			printf("baseline: %zu entries from %s in %s\n",
			       json_array_size(json_object_get(bl, "entries")), path, argv[optind + 2]);
			ret = RQ_EXIT_OK;
		} else {
			fprintf(stderr, "rdmaqual baseline: cannot write %s\n", argv[optind + 2]);
			ret = RQ_EXIT_FAIL;
		}
		free(text);
		json_decref(bl);
		json_decref(res);
	}
	cmp_opts_release(&o);
	return ret;
}

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
#include "core/run_doc.h"
#include "core/util.h"
#include "qual/baseline.h"

static void baseline_usage(FILE *fp)
{
	fprintf(fp,
"usage: rdmaqual baseline save [-T [GLOB=]PCT]... [--all-figures] RUN... FILE\n"
"Stores the figures of the RUNs' passing rows (run directories or results.json),\n"
"keyed by case, target and HCA model, in FILE; 'rdmaqual run --baseline FILE'\n"
"then fails a row whose figure is worse than the stored one by more than the\n"
"tolerance (default %g%%, as compare).  From several runs each figure keeps its\n"
"distribution (median, spread, n), and a new value is judged against that noise.\n"
"Only each row's key figures are judged (its case's judge:, else its kind's;\n"
"rdmaqual help KIND), as compare and qualify do; --all-figures judges every\n"
"figure with a direction.\n",
		RQ_COMPARE_DEFAULT_TOL);
}

int cmd_baseline(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "tolerance", required_argument, NULL, 'T' },
		{ "all-figures", no_argument, NULL, 'A' },
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
		case 'A':
			o.all_figures = true;
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
	if (argc - optind < 3 || strcmp(argv[optind], "save")) {
		cmp_opts_release(&o);
		return usage_error("baseline", "wants: baseline save RUN... FILE");
	}
	int nruns = argc - optind - 2;
	const char *out = argv[argc - 1];
	struct rq_run_doc *res = xcalloc((size_t)nruns, sizeof(*res));
	const struct rq_run_doc **rp = xcalloc((size_t)nruns, sizeof(*rp));
	int nres = 0;

	for (; nres < nruns; nres++) {
		/* compare's reading: a run it would refuse makes no baseline either */
		cmp_doc_init(&res[nres], 0);
		if (compare_load_doc(argv[optind + 1 + nres], path, sizeof(path), &res[nres]))
			break;
		rp[nres] = &res[nres];
	}
	if (nres == nruns) {
		const char *id = res[0].run.id;
		json_t *bl = rq_baseline_from_docs(rp, (size_t)nruns, &o, id ? id : path);
		char *text = json_dumps(bl, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));

		if (text && !write_file_atomic(out, text, strlen(text))) {
			if (nruns == 1)
				printf("baseline: %zu entries from %s in %s\n",
				       json_array_size(json_object_get(bl, "entries")), path, out);
			else
				printf("baseline: %zu entries from %d runs in %s (each figure's median, spread and n)\n",
				       json_array_size(json_object_get(bl, "entries")), nruns, out);
			ret = RQ_EXIT_OK;
		} else {
			fprintf(stderr, "rdmaqual baseline: cannot write %s\n", out);
			ret = RQ_EXIT_FAIL;
		}
		free(text);
		json_decref(bl);
	}
	for (int i = 0; i < nres; i++)
		rq_run_doc_release(&res[i]);
	free(res);
	free(rp);
	cmp_opts_release(&o);
	return ret;
}

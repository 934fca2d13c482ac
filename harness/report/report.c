/* SPDX-License-Identifier: MIT */
/* Run information shared by the reporters, and writing all report files. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "report/report.h"
#include "report/html.h"

void rq_run_info_init(struct rq_run_info *ri, const char *version, int argc, char **argv)
{
	char host[256] = "unknown";
	char ts[32], id[32];
	struct sb sb = SB_INIT;
	time_t t = time(NULL);
	struct tm tm;

	memset(ri, 0, sizeof(*ri));
	ri->started_ms = now_ms();
	iso8601_now(ts, sizeof(ts));
	ri->started = xstrdup(ts);
	gmtime_r(&t, &tm);
	strftime(id, sizeof(id), "%Y%m%dT%H%M%SZ", &tm);
	ri->run_id = xasprintf("%s-%ld", id, (long)getpid());
	if (gethostname(host, sizeof(host)) < 0)
		strcpy(host, "unknown");
	host[sizeof(host) - 1] = '\0';
	ri->hostname = xstrdup(host);
	ri->version = xstrdup(version ? version : "unknown");
	for (int i = 0; i < argc; i++) {
		if (i)
			sb_addc(&sb, ' ');
		sb_adds(&sb, argv[i]);
	}
	ri->argv = sb_detach(&sb);
}

void rq_run_info_fact(struct rq_run_info *ri, const char *key, const char *value)
{
	for (size_t i = 0; i < ri->nfacts; i++) {
		if (!strcmp(ri->facts[i].key, key)) {
			free(ri->facts[i].value);
			ri->facts[i].value = xstrdup(value ? value : "");
			return;
		}
	}
	ri->facts = xrealloc(ri->facts, (ri->nfacts + 1) * sizeof(*ri->facts));
	ri->facts[ri->nfacts++] = (struct rq_fact){
		.key = xstrdup(key),
		.value = xstrdup(value ? value : ""),
	};
}

void rq_run_info_finish(struct rq_run_info *ri)
{
	char ts[32];

	iso8601_now(ts, sizeof(ts));
	free(ri->finished);
	ri->finished = xstrdup(ts);
	ri->duration_s = (now_ms() - ri->started_ms) / 1000.0;
}

void rq_run_info_release(struct rq_run_info *ri)
{
	free(ri->run_id);
	free(ri->started);
	free(ri->finished);
	free(ri->hostname);
	free(ri->version);
	free(ri->argv);
	free(ri->html_extra);
	for (size_t i = 0; i < ri->nfacts; i++) {
		free(ri->facts[i].key);
		free(ri->facts[i].value);
	}
	free(ri->facts);
	json_decref(ri->lab);
	memset(ri, 0, sizeof(*ri));
}

int rq_reports_write(const char *dir, const struct rq_run_info *ri, const struct rq_results *rs)
{
	int ret = mkdir_p(dir, 0755), fd;

	if (ret)
		return ret;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = rq_reports_write_at(fd, dir, ri, rs);
	close(fd);
	return ret;
}

int rq_reports_write_at(int dirfd, const char *dir, const struct rq_run_info *ri,
			const struct rq_results *rs)
{
	int ret = rq_junit_write(dirfd, "junit.xml", ri, rs);
	int r2 = rq_json_write(dirfd, "results.json", ri, rs);

	/*
	 * The page is drawn from what results.json holds, as a comparison's
	 * is, so both read the same fields: its head read back from its text
	 * (numbers as the file has them), its rows one at a time.
	 */
	json_t *head = rq_json_head(ri, rs);
	char *text = json_dumps(head, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	json_t *doc = text ? json_loads(text, 0, NULL) : NULL;
	int r3 = -ENOMEM;

	if (doc)
		r3 = rq_html_run_rows_write(dirfd, "report.html", doc, rs, dir, ri->html_extra);
	json_decref(head);
	json_decref(doc);
	free(text);
	int r4 = rq_trend_index_write(dirfd, ri, rs);

	return ret ? ret : r2 ? r2 : r3 ? r3 : r4;
}

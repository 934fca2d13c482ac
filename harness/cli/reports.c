// SPDX-License-Identifier: MIT
/*
 * rdmaqual reports prune --keep N [--report-dir DIR] [--dry-run]: a reports
 * folder grows by one directory per run; keep the N newest.
 *
 * Only what a run or a qualification wrote is removed: a directory (not a
 * symlink) directly under DIR that holds results.json or qualify.json and
 * is the caller's own (in a shared reports dir, root removed other users'
 * runs).  The one reports/latest points to is always kept.  Age is the
 * time in the run id (YYYYMMDD-HHMMSS-PID, qualify-YYYYMMDD-...): a
 * directory's mtime is anyone's to set (touch -d 2099 kept a dir and
 * removed the caller's older run).  Names without one are older than any
 * with one, and go by their mtime among themselves.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli/cli.h"
#include "core/util.h"

static void reports_usage(FILE *fp)
{
	fprintf(fp,
"usage: rdmaqual reports prune --keep N [--report-dir DIR] [--dry-run]\n"
"Removes all but the N newest run and qualification directories under DIR\n"
"(default reports); the one DIR/latest points to is always kept.\n");
}

struct entry {
	char *name;
	struct timespec mtime;		/* the run id's time where it has one */
	bool has_id;
};

static int newest_first(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	/* a name without a run id's time is older than every one with one */
	if (x->has_id != y->has_id)
		return x->has_id ? -1 : 1;
	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? 1 : -1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? 1 : -1;
	return -strcmp(x->name, y->name);
}

/* The time a run id names (YYYYMMDD-HHMMSS...), or -1. */
static time_t id_time(const char *name)
{
	struct tm tm = { 0 };
	const char *p = str_starts(name, "qualify-") ? name + 8 : name, *end;

	end = strptime(p, "%Y%m%d-%H%M%S", &tm);
	if (!end || (*end && *end != '-'))
		return -1;
	tm.tm_isdst = -1;
	return mktime(&tm);
}

/*
 * A directory a run or qualify wrote, of the caller's: results.json or
 * qualify.json in it.  *others counts report dirs of other users.
 */
static bool is_report_dir(int dfd, const char *name, struct timespec *mtime, bool *has_id,
			  size_t *others)
{
	struct stat st;
	char p[PATH_MAX];
	bool ours;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode))
		return false;
	ours = st.st_uid == geteuid();
	*mtime = st.st_mtim;
	time_t t = id_time(name);

	*has_id = t != (time_t)-1;
	if (*has_id) {
		mtime->tv_sec = t;
		mtime->tv_nsec = 0;
	}
	/* a run's dir (results.json) or a qualify's (qualify.json); another user's is counted, kept */
	snprintf(p, sizeof(p), "%s/results.json", name);
	if (fstatat(dfd, p, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode)) {
		snprintf(p, sizeof(p), "%s/qualify.json", name);
		if (fstatat(dfd, p, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			return false;
	}
	*others += !ours;
	return ours;
}

static int prune(const char *dir, long keep, bool dry)
{
	char latest[256] = "", path[PATH_MAX];
	struct entry *v = NULL;
	size_t n = 0, removed = 0, others = 0;
	struct dirent *de;
	DIR *d = opendir(dir);
	int ret = 0, rc;
	ssize_t ll;

	if (!d) {
		fprintf(stderr, "rdmaqual reports: %s: %s\n", dir, strerror(errno));
		return RQ_EXIT_FAIL;
	}
	snprintf(path, sizeof(path), "%s/latest", dir);
	ll = readlink(path, latest, sizeof(latest) - 1);
	latest[ll > 0 ? ll : 0] = '\0';
	while ((de = readdir(d))) {
		struct timespec mt;
		bool has_id = false;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, latest) ||
		    !is_report_dir(dirfd(d), de->d_name, &mt, &has_id, &others))
			continue;
		v = xrealloc(v, (n + 1) * sizeof(*v));
		v[n++] = (struct entry){ .name = xstrdup(de->d_name), .mtime = mt, .has_id = has_id };
	}
	closedir(d);
	qsort(v, n, sizeof(*v), newest_first);
	/* latest counts as one of the kept */
	long room = keep - (*latest ? 1 : 0);

	for (size_t i = 0; i < n; i++) {
		if ((long)i < room) {
			free(v[i].name);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, v[i].name);
		if (dry) {
			printf("would remove %s\n", path);
		} else if ((rc = rm_rf(path))) {
			fprintf(stderr, "rdmaqual reports: cannot remove %s: %s\n", path, strerror(-rc));
			ret = RQ_EXIT_FAIL;
		} else {
			printf("removed %s\n", path);
		}
		removed++;
		free(v[i].name);
	}
	free(v);
	printf("%zu of %zu report director%s %s, %s kept\n", removed, n + (*latest ? 1 : 0),
	       n + (*latest ? 1 : 0) == 1 ? "y" : "ies", dry ? "would go" : "removed",
	       *latest ? "latest and the newest" : "the newest");
	if (others)
		printf("%zu report director%s of other users left alone\n", others,
		       others == 1 ? "y" : "ies");
	return ret;
}

int cmd_reports(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "keep", required_argument, NULL, 'n' },
		{ "report-dir", required_argument, NULL, 'd' },
		{ "dry-run", no_argument, NULL, 1 },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *dir = "reports";
	long keep = -1;
	bool dry = false;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "n:d:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'n': {
			long long k;

			if (parse_ll(optarg, &k) || k < 1 || k > 1000000)
				return usage_error("reports", "--keep wants a count of 1 or more, not \"%s\"", optarg);
			keep = (long)k;
			break;
		}
		case 'd': dir = optarg; break;
		case 1: dry = true; break;
		case 'h': reports_usage(stdout); return 0;
		default: reports_usage(stderr); return RQ_EXIT_USAGE;
		}
	}
	if (argc - optind != 1 || strcmp(argv[optind], "prune"))
		return usage_error("reports", "wants: reports prune --keep N");
	if (keep < 0)
		return usage_error("reports", "prune wants --keep N");
	return prune(dir, keep, dry);
}

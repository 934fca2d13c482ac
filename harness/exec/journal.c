/* SPDX-License-Identifier: MIT */
/* The run's journal (exec/journal.h): one writer and one reader for plain and lab runs. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "core/json_text.h"
#include "core/util.h"
#include "exec/journal.h"

int rq_journal_start(const char *run_dir, int argc, char **argv)
{
	char *path = xasprintf("%s/journal.jsonl", run_dir);
	json_t *a = json_array(), *o;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	char *text;
	int ret = 0;

	free(path);
	if (fd < 0) {
		json_decref(a);
		return -errno;
	}
	for (int i = 0; i < argc; i++)
		json_array_append_new(a, json_string(argv[i]));
	o = json_pack("{s:o}", "argv", a);
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (text && (write(fd, text, strlen(text)) < 0 || write(fd, "\n", 1) < 0 || fsync(fd)))
		ret = -errno;
	free(text);
	close(fd);
	return ret;
}

json_t *rq_journal_parse(char *text)
{
	json_t *lines = json_array();

	for (char *l = text, *next; l && *l; l = next) {
		next = strchr(l, '\n');
		if (!next)
			break;		/* torn: never fsync'd whole */
		*next++ = '\0';
		json_t *j = json_loads(l, 0, NULL);

		if (json_is_object(j))
			json_array_append_new(lines, j);
		else
			json_decref(j);
	}
	return lines;
}

static json_t *journal_lines(const char *run_dir, char *err, size_t errsz)
{
	char *path = xasprintf("%s/journal.jsonl", run_dir);
	struct sb text = SB_INIT;
	json_t *lines = NULL;

	/* rundir_trust() checked it; still never through a link */
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int rc = fd < 0 ? -errno : read_fd_all(fd, &text, 1u << 30);

	if (fd >= 0)
		close(fd);
	if (rc)
		snprintf(err, errsz, "cannot read %s: %s (not a lab run's report dir?)", path,
			 strerror(-rc));
	else
		lines = rq_journal_parse(text.buf);
	sb_release(&text);
	free(path);
	return lines;
}

int rq_journal_argv(const char *run_dir, int *argc, char ***argv, char *err, size_t errsz)
{
	json_t *lines = journal_lines(run_dir, err, errsz);
	json_t *a = lines ? json_object_get(json_array_get(lines, 0), "argv") : NULL;

	if (!json_is_array(a)) {
		if (lines)
			snprintf(err, errsz, "%s/journal.jsonl does not start with the run's command",
				 run_dir);
		json_decref(lines);
		return -1;
	}
	*argc = (int)json_array_size(a);
	*argv = xcalloc((size_t)*argc + 1, sizeof(char *));
	for (int i = 0; i < *argc; i++)
		(*argv)[i] = xstrdup(json_string_value(json_array_get(a, (size_t)i)) ?: "");
	json_decref(lines);
	return 0;
}

/*
 * A journal cut short mid-line (ENOSPC tore a line at 4096 bytes, a kill
 * between writes) ends without a newline: appended to as it is, the next
 * line would join the fragment and be lost too, so that unit reran on
 * every --resume.  Cut it back to its last newline first.  0 or -errno.
 */
static int journal_drop_torn(int fd)
{
	char buf[4096];
	struct stat st;
	off_t end;

	if (fstat(fd, &st) < 0)
		return -errno;
	end = st.st_size;
	while (end > 0) {
		size_t n = end < (off_t)sizeof(buf) ? (size_t)end : sizeof(buf);
		ssize_t r = pread(fd, buf, n, end - (off_t)n);

		if (r != (ssize_t)n)
			return r < 0 ? -errno : -EIO;
		for (size_t i = n; i-- > 0;)
			if (buf[i] == '\n') {
				off_t keep = end - (off_t)n + (off_t)i + 1;

				return keep == st.st_size || !ftruncate(fd, keep) ? 0 : -errno;
			}
		end -= (off_t)n;
	}
	return st.st_size && ftruncate(fd, 0) ? -errno : 0;
}

int rq_journal_open(struct rq_journal *j, const char *run_dir, bool resume)
{
	char *path = xasprintf("%s/journal.jsonl", run_dir);
	char err[256];
	int ret = 0;

	j->done = NULL;
	if (resume) {
		json_t *lines = journal_lines(run_dir, err, sizeof(err));
		size_t i;
		json_t *l;

		j->done = json_object();
		json_array_foreach(lines, i, l) {
			const char *k = json_string_value(json_object_get(l, "unit"));

			if (k && json_is_array(json_object_get(l, "rows")))
				json_object_set(j->done, k, json_object_get(l, "rows"));
		}
		json_decref(lines);
		fprintf(stderr, "rdmaqual: resuming %s: %zu units already finished\n", run_dir,
			json_object_size(j->done));
	}
	j->fd = open(path, O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (j->fd < 0)
		ret = -errno;
	else if ((ret = journal_drop_torn(j->fd))) {
		close(j->fd);
		j->fd = -1;
	}
	free(path);
	return ret;
}

json_t *rq_journal_done(const struct rq_journal *j, const char *key)
{
	return j->done ? json_object_get(j->done, key) : NULL;
}

int rq_journal_unit(struct rq_journal *j, const char *key, struct rq_result *const *rows,
		    size_t n)
{
	struct sb line = SB_INIT;
	json_t *a = json_array(), *o;
	char *t;
	int e = 0;

	if (j->fd < 0)
		return -EBADF;
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, rq_result_to_json(rows[i], false));
	o = json_pack("{s:o, s:o}", "unit", rq_json_text(key), "rows", a);
	t = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	json_decref(o);
	if (!t)
		return -ENOMEM;
	sb_adds(&line, t);
	sb_addc(&line, '\n');
	free(t);
	/* One write of the whole line (O_APPEND), then on disk before the unit counts as done. */
	e = write_full(j->fd, line.buf, line.len);
	if (!e && fdatasync(j->fd) < 0)
		e = -errno;
	sb_release(&line);
	return e;
}

void rq_journal_close(struct rq_journal *j)
{
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
	json_decref(j->done);
	j->done = NULL;
}

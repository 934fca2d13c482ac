/* SPDX-License-Identifier: MIT */
/*
 * Console reporter: one line per row as it finishes, then a summary.
 * Plain text unless stdout is a TTY (and NO_COLOR is unset), so logs and
 * CI consoles stay greppable.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/term.h"
#include "report/report.h"

#define C_RESET "\033[0m"

static const char *verdict_color(enum rq_verdict v)
{
	switch (v) {
	case RQ_PASS: return "\033[32m";	/* green */
	case RQ_FAIL: return "\033[1;31m";	/* bold red */
	case RQ_SKIP: return "\033[33m";	/* yellow */
	default: return "\033[1;35m";		/* bold magenta: ERROR */
	}
}

bool rq_console_color(int fd)
{
	const char *nc = getenv("NO_COLOR");

	if (nc && *nc)
		return false;
	return isatty(fd) == 1;
}

void rq_console_render_row(struct sb *out, const struct rq_result *r, bool color)
{
	size_t start;

	if (color)
		sb_adds(out, verdict_color(r->verdict));
	sb_addf(out, "%-5s", rq_verdict_name(r->verdict));
	if (color)
		sb_adds(out, C_RESET);
	sb_addc(out, ' ');
	start = out->len;
	sb_add_term(out, r->id);
	while (out->len - start < 36)
		sb_addc(out, ' ');
	sb_addf(out, "  %.1fs", r->duration_s > 0 ? r->duration_s : 0.0);
	if (r->reason && *r->reason && r->verdict != RQ_PASS) {
		sb_adds(out, "  ");
		sb_add_term(out, r->reason);
	}
	sb_addc(out, '\n');
}

void rq_console_render_summary(struct sb *out, const struct rq_run_info *ri,
			       const struct rq_results *rs, bool color)
{
	struct rq_counts c;
	double t = ri->duration_s;

	if (!ri->finished)
		t = (now_ms() - ri->started_ms) / 1000.0;
	rq_results_count(rs, &c);
	sb_addf(out, "%u rows: ", c.total);
	const struct { unsigned n; enum rq_verdict v; const char *what; } parts[] = {
		{ c.pass, RQ_PASS, "passed" },
		{ c.fail, RQ_FAIL, "failed" },
		{ c.skip, RQ_SKIP, "skipped" },
		{ c.error, RQ_ERROR, "errors" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++) {
		if (i)
			sb_adds(out, ", ");
		bool hl = color && parts[i].n;
		if (hl)
			sb_adds(out, verdict_color(parts[i].v));
		sb_addf(out, "%u %s", parts[i].n, parts[i].what);
		if (hl)
			sb_adds(out, C_RESET);
	}
	sb_addf(out, " in %.1fs\n", t > 0 ? t : 0.0);
	if (rq_run_info_synthesized(ri)) {
		sb_adds(out, "note: replayed ");
		sb_add_term(out, rq_run_info_fact_get(ri, "sysroot"));
		sb_adds(out, ", a synthesized node tree (made by ");
		sb_add_term(out, rq_run_info_fact_get(ri, "sysroot.synthesized_by"));
		sb_adds(out, "), not a capture of a machine\n");
	}
}

void rq_console_row(FILE *f, const struct rq_result *r)
{
	struct sb sb = SB_INIT;

	rq_console_render_row(&sb, r, rq_console_color(fileno(f)));
	fwrite(sb.buf, 1, sb.len, f);
	fflush(f);
	sb_release(&sb);
}

void rq_console_summary(FILE *f, const struct rq_run_info *ri, const struct rq_results *rs)
{
	struct sb sb = SB_INIT;

	rq_console_render_summary(&sb, ri, rs, rq_console_color(fileno(f)));
	fwrite(sb.buf, 1, sb.len, f);
	fflush(f);
	sb_release(&sb);
}

/* SPDX-License-Identifier: MIT */
/*
 * rdmaqual help --man 1|5: the man pages, made from the tables the program
 * itself uses, so they cannot drift from it (make docs writes man/, and
 * docs-check fails when man/ differs from what this prints):
 *
 *   rdmaqual(1)        commands.def, each command's own --help output (run
 *                      as this very binary: what a user sees is what the
 *                      page says), environ.def, the exit codes;
 *   rdmaqual-cases(5)  the common keys, the targets and every kind's key
 *                      table, as docs/kinds.md.
 *
 * The --help texts are laid out by one convention (an option or name, two
 * or more spaces, its description; deeper-indented continuation lines),
 * which is what turns them into .TP paragraphs here.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/manpage.h"
#include "core/kind.h"
#include "core/proc.h"
#include "core/target.h"
#include "qual/capture.h"

/* The date of the release in VERSION: bump both together. */
#define MAN_DATE "2026-12-01"

struct command_doc {
	const char *name, *help;
};

static const struct command_doc commands[] = {
#define CMD(name, sym, help) { name, help },
#include "cli/commands.def"
#undef CMD
};

static const struct command_doc environ_vars[] = {
#define ENV(name, help) { name, help },
#include "cli/environ.def"
#undef ENV
};

/*
 * Text for roff: backslashes escaped, a leading '.' or '\'' made harmless,
 * and every '-' of a word that starts with one (an option) a minus sign, so
 * that "--report-dir" can be copied from the page.
 */
static void roff(struct sb *o, const char *s, size_t n)
{
	bool bol = o->len == 0 || o->buf[o->len - 1] == '\n';
	bool opt = false;

	for (size_t i = 0; i < n && s[i]; i++) {
		char c = s[i];
		char prev = i ? s[i - 1] : ' ';

		if (bol && (c == '.' || c == '\''))
			sb_adds(o, "\\&");
		if (c == '-' && (opt || strchr(" \t([|,=\"'`", prev) || i == 0))
			opt = true;
		else if (!(isalnum((unsigned char)c) || c == '-' || c == '_'))
			opt = false;
		if (c == '\\')
			sb_adds(o, "\\e");
		else if (c == '-' && opt)
			sb_adds(o, "\\-");
		else
			sb_addc(o, c);
		bol = c == '\n';
	}
}

static void roffs(struct sb *o, const char *s)
{
	roff(o, s, strlen(s));
}

/*
 * A kind's reads (rq_capture_reads_describe) as one paragraph, an item a
 * source line: `code` bold, and a path may break after each '/' (\\:), so
 * that a long sysfs path neither overflows nor leaves a line roff cannot
 * adjust.
 */
static void reads_para(struct sb *o, const struct rq_read *reads)
{
	struct sb d = SB_INIT;
	bool code = false;

	rq_capture_reads_describe(reads, &d);
	if (d.len) {
		sb_adds(o, ".PP\nReads of a node (what \\fBrdmaqual capture\\fR copies for it):\n");
		for (const char *p = d.buf; *p; p++) {
			size_t n = strcspn(p, code ? "`/\n" : "`\n");

			roff(o, p, n);
			p += n;
			if (!*p)
				break;
			if (*p == '/') {
				sb_adds(o, "/\\:");
			} else if (*p == '`') {
				sb_adds(o, code ? "\\fR" : "\\fB");
				code = !code;
			} else {
				sb_adds(o, p[1] ? ";\n" : ".\n");
			}
		}
	}
	sb_release(&d);
}

/* An item's tag: option words bold, upper-case placeholders italic. */
static void tag(struct sb *o, const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t j = i;

		while (j < n && !strchr(" ,|[]", s[j]))
			j++;
		if (j > i) {
			bool upper = true, word = s[i] == '-' || islower((unsigned char)s[i]);

			for (size_t k = i; k < j; k++)
				if (islower((unsigned char)s[k]))
					upper = false;
			/* "GLOB=PCT", "[GLOB=]PCT": placeholders; "-k", "vm1|vm2", "sysroot:DIR" words. */
			sb_adds(o, upper && !word ? "\\fI" : "\\fB");
			roff(o, s + i, j - i);
			sb_adds(o, "\\fR");
		}
		if (j < n)
			roff(o, s + j, 1);
		i = j + 1;
	}
}

static size_t indent_of(const char *l)
{
	size_t n = 0;

	while (l[n] == ' ')
		n++;
	return n;
}

/* "  NAME  description" or "      --opt ARG   description": where the gap is, or 0. */
static size_t item_gap(const char *l, size_t len)
{
	size_t ind = indent_of(l);

	if (ind < 2 || ind > 6 || ind >= len)
		return 0;
	for (size_t i = ind; i + 2 < len; i++)
		if (l[i] == ' ' && l[i + 1] == ' ')
			return i;
	return 0;
}

/* One command's --help output, as this binary prints it. */
static int command_help(const char *cmd, struct sb *out)
{
	const char *argv[] = { rq_self_exe, cmd, "--help", NULL };
	struct proc_opts po = { .argv = argv, .timeout_ms = 10000, .log_fd = -1, .tail_max = 1 << 20 };
	struct proc_result r;
	int rc;

	proc_result_init(&r);
	rc = proc_run(&po, &r);
	if (rc == 0 && r.exit_code == 0 && !r.out_truncated)
		sb_add(out, r.out.buf, r.out.len);
	else
		rc = -1;
	proc_result_release(&r);
	if (rc)
		fprintf(stderr, "rdmaqual help --man: '%s %s --help' failed\n", rq_self_exe, cmd);
	return rc;
}

enum mode { M_START, M_TEXT, M_ITEM, M_SYNOPSIS };

/* The --help text as roff: usage lines, paragraphs, .TP items. */
static void help_to_roff(struct sb *o, const char *text)
{
	enum mode m = M_START;
	const char *l = text;

	while (*l) {
		size_t len = strcspn(l, "\n"), gap;
		const char *next = l[len] ? l + len + 1 : l + len;

		while (len && l[len - 1] == ' ')
			len--;
		if (len == 0) {
			if (m == M_SYNOPSIS)
				sb_adds(o, ".fi\n");
			if (m != M_START)
				sb_adds(o, ".PP\n");
			m = M_START;
		} else if (!strncmp(l, "usage: ", 7) || (m == M_SYNOPSIS && indent_of(l) > 6 &&
							      !item_gap(l, len))) {
			if (m != M_SYNOPSIS) {
				if (m == M_ITEM || m == M_TEXT)
					sb_adds(o, ".PP\n");
				sb_adds(o, ".nf\n");
			}
			if (!strncmp(l, "usage: ", 7)) {
				l += 7;
				len -= 7;
			}
			sb_adds(o, "\\fB");
			roff(o, l + indent_of(l), len - indent_of(l));
			sb_adds(o, "\\fR\n");
			m = M_SYNOPSIS;
		} else if ((gap = item_gap(l, len))) {
			size_t ind = indent_of(l), d = gap;

			if (m == M_SYNOPSIS)
				sb_adds(o, ".fi\n");
			while (d < len && l[d] == ' ')
				d++;
			sb_adds(o, ".TP\n");
			tag(o, l + ind, gap - ind);
			sb_addc(o, '\n');
			roff(o, l + d, len - d);
			sb_addc(o, '\n');
			m = M_ITEM;
		} else if (m == M_ITEM && indent_of(l) > 6) {
			/* a continuation of the item's description */
			roff(o, l + indent_of(l), len - indent_of(l));
			sb_addc(o, '\n');
		} else {
			if (m == M_SYNOPSIS)
				sb_adds(o, ".fi\n");
			if (m == M_ITEM || m == M_SYNOPSIS)
				sb_adds(o, ".PP\n");
			roff(o, l + indent_of(l), len - indent_of(l));
			sb_addc(o, '\n');
			m = M_TEXT;
		}
		l = next;
	}
	if (m == M_SYNOPSIS)
		sb_adds(o, ".fi\n");
}

static void th(struct sb *o, const char *name, int section, const char *what)
{
	sb_addf(o, ".\\\" Generated by 'rdmaqual help --man %d' (make docs); do not edit.\n", section);
	sb_addf(o, ".TH %s %d %s \"rdmaqual %s\" \"%s\"\n", name, section, MAN_DATE, RQ_RELEASE, what);
	/* Names, paths and options are not to be hyphenated. */
	sb_adds(o, ".nh\n");
}

static void item(struct sb *o, const char *name, const char *text)
{
	sb_adds(o, ".TP\n.B ");
	roffs(o, name);
	sb_addc(o, '\n');
	roffs(o, text);
	sb_addc(o, '\n');
}

static int page1(struct sb *o)
{
	th(o, "RDMAQUAL", 1, "User Commands");
	sb_adds(o, ".SH NAME\nrdmaqual \\- qualify RDMA networks from declarative case files\n"
		".SH SYNOPSIS\n.B rdmaqual\n.I COMMAND\n[\\fIOPTIONS\\fR] [\\fIARGS\\fR]\n.br\n"
		".B rdmaqual \\-\\-version\n"
		".SH DESCRIPTION\n"
		".B rdmaqual\nruns the checklist engineers run by hand on InfiniBand and RoCE clusters "
		"(driver and firmware present, subnet manager up, MTUs right, IRQs pinned, verbs "
		"traffic flowing, bandwidth and latency where they should be) from declarative case "
		"files, and reports the results as JUnit XML, JSON and a self-contained HTML page.\n"
		".PP\nThe same cases run on real ConnectX HCAs (target \\fBhca\\fR), on soft-RoCE "
		"(rdma_rxe) inside QEMU guests rdmaqual boots itself (\\fBrxe-vm\\fR), on a simulated "
		"InfiniBand fabric (\\fBibsim\\fR) and on captured sysfs trees "
		"(\\fBsysroot:\\fIDIR\\fR), so CI without RDMA hardware checks what a lab checks on "
		"real nodes.  The case format, every kind's keys and the targets are described in\n"
		".BR rdmaqual-cases (5).\n"
		".PP\nCommand lines run by cases are argument vectors, never given to a shell.  Each "
		"run writes \\fIREPORT-DIR\\fR/\\fIRUN-ID\\fR/ with \\fBjunit.xml\\fR, "
		"\\fBresults.json\\fR, \\fBreport.html\\fR and a log per case, and points "
		"\\fIREPORT-DIR\\fR/\\fBlatest\\fR at it.\n"
		".SH COMMANDS\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		struct sb h = SB_INIT;

		sb_addf(o, ".SS %s\n", commands[i].name);
		roffs(o, commands[i].help);
		sb_adds(o, ".\n.PP\n");
		if (command_help(commands[i].name, &h)) {
			sb_release(&h);
			return -1;
		}
		help_to_roff(o, h.buf);
		sb_release(&h);
	}
	sb_adds(o, ".SH EXIT STATUS\n");
	item(o, "0", "nothing failed or errored");
	item(o, "1", "a case failed or errored, a report or log could not be written, a skip "
	     "under --fail-on-skip; for compare and qualify: a regression");
	item(o, "2", "usage errors and case-file errors (nothing is run then), filters that "
	     "select no case, unreadable input to compare");
	sb_adds(o, ".SH ENVIRONMENT\n");
	for (size_t i = 0; i < ARRAY_SIZE(environ_vars); i++)
		item(o, environ_vars[i].name, environ_vars[i].help);
	sb_adds(o, ".SH FILES\n"
		"\\fIPREFIX\\fR is /usr for the packages and /usr/local for make install; the "
		"installed binary finds these relative to its own location, a checkout finds its "
		"own cases/, fixtures/ and vm/.\n");
	item(o, "PREFIX/share/rdmaqual/cases/", "the shipped suite: what rdmaqual run, list and "
	     "lint load when given no path");
	item(o, "PREFIX/share/rdmaqual/fixtures/", "topologies (fabrics/) and opensm.conf files "
	     "(opensm/) the shipped ibsim and sm cases name");
	item(o, "PREFIX/libexec/rdmaqual/", "the guest image builders (kernel.sh, cache.sh, "
	     "debian-kernel.sh, initramfs.sh) and the guest's init");
	item(o, "/var/cache/rdmaqual/", "guest kernels, modules and initramfs of an installed "
	     "rdmaqual run as root (RQ_VM_CACHE overrides)");
	item(o, "$XDG_CACHE_HOME/rdmaqual/", "the same for a user (default ~/.cache/rdmaqual, "
	     "mode 0700)");
	item(o, "/run/rdmaqual/", "run state and lock of root's runs: VMs, daemons and settings "
	     "to undo after a killed run (a user's: $XDG_RUNTIME_DIR/rdmaqual or "
	     "/tmp/rdmaqual-UID, mode 0700)");
	item(o, "reports/RUN-ID/", "one run's junit.xml, results.json, report.html and logs/ "
	     "(--report-dir; reports/latest points to the last)");
	item(o, "PREFIX/share/doc/rdmaqual/", "README.md and docs/: the guides (lab runs, "
	     "upgrades, reports, security)");
	sb_adds(o, ".SH EXAMPLES\n.nf\n"
		"rdmaqual run \\-\\-dry\\-run\n"
		"rdmaqual run \\-t smoke \\-\\-report\\-dir /var/tmp/rq\n"
		"rdmaqual run \\-\\-target sysroot:node1\\-tree/\n"
		"rdmaqual run \\-\\-nodes \\(aqnode[01\\-16]\\(aq \\-\\-pairs all "
		"\\-\\-drain\\-list drain.txt\n"
		"rdmaqual compare reports/BEFORE reports/latest\n"
		".fi\n"
		".SH SEE ALSO\n.BR rdmaqual-cases (5),\n.BR ibv_devinfo (1),\n.BR ib_write_bw (1),\n"
		".BR opensm (8),\n.BR srun (1)\n");
	return 0;
}

static void key_item(struct sb *o, const struct key_def *k)
{
	struct sb d = SB_INIT;

	rq_keys_describe(k, &d);
	sb_adds(o, ".TP\n.B ");
	roffs(o, k->name);
	sb_addc(o, '\n');
	sb_adds(o, "(");
	roffs(o, d.buf);
	sb_adds(o, ")\n");
	if (k->help && *k->help) {
		roffs(o, k->help);
		sb_addc(o, '\n');
	}
	sb_release(&d);
}

static void page5(struct sb *o)
{
	th(o, "RDMAQUAL-CASES", 5, "File Formats");
	sb_adds(o, ".SH NAME\nrdmaqual-cases \\- the case files of rdmaqual: format, kinds, keys, "
		"targets\n"
		".SH SYNOPSIS\n\\fIPREFIX\\fR/share/rdmaqual/cases/*/*.yaml, and any \\fIFILE\\fR"
		".yaml given to rdmaqual run, list or lint\n"
		".SH DESCRIPTION\n"
		"A case file is YAML: one document holding a mapping with an optional "
		"\\fBdefaults:\\fR and a list of \\fBcases:\\fR.  Each case names its \\fBkind\\fR; "
		"the kind decides which further keys it takes.  Keys a case does not set come from "
		"\\fBdefaults:\\fR (tags and needs are merged), then from the kind.  Top-level keys "
		"starting with \\fBx\\-\\fR are ignored: they hold anchors that cases merge with "
		"\\fB<<:\\fR.  Directories are searched recursively for *.yaml and *.yml in sorted "
		"path order.  An unknown key, a value of the wrong type or out of range is an error "
		"naming \\fIfile\\fR:\\fIline\\fR:\\fIcolumn\\fR, and nothing runs.\n"
		".PP\nTypes: durations take ms, s, m or h (\\fB30s\\fR); sizes take bytes or KiB, "
		"MiB, GiB, KB, MB, GB (\\fB64KiB\\fR); lists are YAML sequences; a \\fBneeds:\\fR "
		"entry is one of \\fBroot\\fR, \\fBdevice\\fR, \\fBmodule:\\fINAME\\fR, "
		"\\fBcmd:\\fINAME\\fR, \\fBlink_layer:IB\\fR or \\fBlink_layer:Ethernet\\fR, "
		"\\fBmemlock:\\fISIZE\\fR, \\fBfile:\\fIPATH\\fR, checked on the target; an unmet "
		"need is a SKIP with the reason.\n"
		".SH EXAMPLE\n.nf\n.RS\n"
		"defaults:\n  targets: [hca, rxe\\-vm]\n  timeout: 30s\n  tags: [mtu]\n"
		"cases:\n  \\- name: mtu.roce_active_mtu\n    kind: mtu\n"
		"    summary: active MTU 4096 at netdev MTU 4200\n    needs: [root]\n"
		"    netdev_mtu: 4200\n    expect_active: 4096\n"
		".RE\n.fi\n"
		".SH KEYS EVERY CASE HAS\n");
	for (const struct key_def *d = rq_common_keys; d->name; d++)
		key_item(o, d);
	const struct rq_key_owner *ow;

	sb_adds(o, ".SH KEYS OF TARGETS AND THE LAB\n");
	for (size_t i = 0; (ow = rq_key_owner_iter(i)); i++) {
		sb_adds(o, ".SS ");
		roffs(o, ow->name);
		sb_adds(o, " (");
		roffs(o, ow->for_whom);
		sb_adds(o, ")\n");
		for (const struct key_def *d = ow->keys; d && d->name; d++)
			key_item(o, d);
	}
	sb_adds(o, ".SH TARGETS\n");
	for (size_t i = 0; rq_target_ops_all[i]; i++) {
		const struct rq_target_ops *t = rq_target_ops_all[i];
		char *name = t->arg ? xasprintf("%s:%s", t->name, t->arg) : xstrdup(t->name);

		item(o, name, t->help);
		free(name);
	}
	sb_adds(o, ".SH KINDS\n");
	for (size_t i = 0; i < rq_nkinds; i++) {
		const struct rq_kind *k = rq_kinds[i];

		sb_addf(o, ".SS %s\n", k->name);
		roffs(o, k->summary);
		sb_adds(o, ".");
		if (k->doc) {
			sb_addc(o, '\n');
			roffs(o, k->doc);
		}
		sb_adds(o, "\n.PP\nDefault targets: ");
		roffs(o, k->no_target ? "none (runs on the controller)" : k->default_targets);
		roffs(o, k->two_sided ? "; two-sided (a server and a client role)" : "");
		roffs(o, k->needs_fabric ? "; needs an InfiniBand link layer and a subnet manager" : "");
		sb_adds(o, ".\n");
		if (k->old_name)
			sb_addf(o, "Its earlier name, \\fB%s\\fR, is still taken.\n", k->old_name);
		if (k->needs_fabric)
			sb_addf(o, "Its cases may say \\fBfabric:\\fR and \\fBfabric_sm:\\fR (default "
				"%s).\n", k->fabric_sm ? "true" : "false");
		if (!k->keys || !k->keys->name)
			sb_adds(o, "No keys of its own.\n");
		for (const struct key_def *d = k->keys; d && d->name; d++)
			key_item(o, d);
		reads_para(o, k->reads);
	}
	sb_adds(o, ".SH SEE ALSO\n.BR rdmaqual (1)\n");
}

/*
 * Text lines broken at spaces to at most 80 bytes (mandoc's style check;
 * roff refills them anyway), never inside a no-fill block.
 */
static void wrap(const struct sb *in, struct sb *out)
{
	const char *l = in->buf;
	bool nofill = false;

	while (*l) {
		size_t len = strcspn(l, "\n");

		if (!strncmp(l, ".nf", 3))
			nofill = true;
		else if (!strncmp(l, ".fi", 3))
			nofill = false;
		while (!nofill && l[0] != '.' && len > 80) {
			size_t cut = 80;

			while (cut > 0 && l[cut] != ' ')
				cut--;
			if (cut == 0)
				break;
			size_t keep = cut;

			while (keep > 0 && l[keep - 1] == ' ')
				keep--;
			sb_add(out, l, keep);
			sb_addc(out, '\n');
			while (l[cut] == ' ')
				cut++;
			l += cut;
			len -= cut;
			if (*l == '.' || *l == '\'')
				sb_adds(out, "\\&");
		}
		sb_add(out, l, len);
		sb_addc(out, '\n');
		l += len + (l[len] == '\n');
	}
}

int man_page(const char *section)
{
	struct sb o = SB_INIT;
	int rc = 0;

	if (!strcmp(section, "1"))
		rc = page1(&o);
	else if (!strcmp(section, "5"))
		page5(&o);
	else
		return usage_error("help", "--man takes 1 (rdmaqual(1)) or 5 (rdmaqual-cases(5))");
	if (rc == 0) {
		struct sb w = SB_INIT;

		wrap(&o, &w);
		fwrite(w.buf, 1, w.len, stdout);
		sb_release(&w);
	}
	sb_release(&o);
	return rc ? RQ_EXIT_FAIL : 0;
}

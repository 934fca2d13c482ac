/* SPDX-License-Identifier: MIT */
/*
 * rdmaqual fabric: topologies for the ibsim target.
 *
 *   fabric gen SPEC [-o FILE] [--plan FILE]   a fat tree, rail or ring layout (src/fabric/fabgen.h)
 *   fabric import TOPOLOGY [-o FILE]          a real fabric's ibnetdiscover output as an ibsim net
 *   fabric qos-lint POLICY [--vlcap N]        a qos-policy.conf against opensm's grammar
 *
 * `import` is how a change (routing engine, opensm.conf, QoS policy) is
 * rehearsed on an exact copy of the lab's fabric before it reaches the
 * fabric: the file it writes is a `fabric:` of cases and the plan they are
 * judged against (docs/fabric.md).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "fabric/fabgen.h"
#include "parsers/ibnet.h"
#include "parsers/qos_policy.h"
#include "core/util.h"

static void fabric_usage(FILE *fp)
{
	fprintf(fp, "usage: rdmaqual fabric gen SPEC [-o FILE] [--plan FILE]\n"
		    "       rdmaqual fabric import IBNETDISCOVER-OUTPUT [-o FILE]\n"
		    "       rdmaqual fabric qos-lint QOS-POLICY-FILE [--vlcap 1|2|4|8|15]\n"
		    "SPEC: fat-tree:leaves=N,spines=N,hosts-per-leaf=N[,ports=36][,links=1][,speed=QDR]\n"
		    "      rail:hosts=N,rails=N,spines=N[,ports=36][,speed=QDR]\n"
		    "      ...,fault=missing|swapped|1x|slow|dup-guid|dup-desc|dup-port-guid|no-sl2vl\n"
		    "      (fault= is repeatable)\n");
}

static int put(const char *path, const struct sb *text)
{
	int ret;

	if (!path || !strcmp(path, "-")) {
		fwrite(text->buf, 1, text->len, stdout);
		return 0;
	}
	ret = write_file_atomic(path, text->buf, text->len);
	if (ret)
		fprintf(stderr, "rdmaqual fabric: cannot write %s: %s\n", path, strerror(-ret));
	return ret ? RQ_EXIT_FAIL : 0;
}

static int parse_out(int argc, char **argv, const char **out, const char **plan)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "plan", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'o': *out = optarg; break;
		case 'p':
			if (!plan)
				return usage_error("fabric", "--plan is an option of fabric gen only");
			*plan = optarg;
			break;
		case 'h': fabric_usage(stdout); return -1;
		default: return RQ_EXIT_USAGE;
		}
	}
	return 0;
}

static int fabric_gen(int argc, char **argv)
{
	const char *out = NULL, *plan = NULL;
	struct fabgen g;
	char err[512];
	int ret = parse_out(argc, argv, &out, &plan);

	if (ret)
		return ret < 0 ? 0 : ret;
	if (optind != argc - 1)
		return usage_error("fabric", "fabric gen takes one SPEC");
	if (fabgen_build(argv[optind], &g, err, sizeof(err))) {
		fprintf(stderr, "rdmaqual fabric: ERROR: %s\n", err);
		return RQ_EXIT_USAGE;
	}
	fprintf(stderr, "%u hosts, %u HCAs, %u switches, %u cables planned\n", g.hosts, g.cas, g.switches, g.links);
	for (unsigned i = 0; i < g.nfaults; i++)
		fprintf(stderr, "fault %s\n", g.fault[i]);
	ret = put(out, &g.sim);
	if (!ret && plan)
		ret = put(plan, &g.planned);
	fabgen_release(&g);
	return ret;
}

static int fabric_import(int argc, char **argv)
{
	const char *out = NULL;
	struct ibnet net;
	struct sb text = SB_INIT, notes = SB_INIT;
	char err[512], title[600];
	int ret = parse_out(argc, argv, &out, NULL);
	unsigned sw = 0;

	if (ret)
		return ret < 0 ? 0 : ret;
	if (optind != argc - 1)
		return usage_error("fabric", "fabric import takes one topology file");
	/* ibdiagnet's link list (ibdiagnet2.lst), else a topology file: ibnetdiscover's or ibdiagnet's */
	if (read_file(argv[optind], &text, 64u << 20) < 0) {
		fprintf(stderr, "rdmaqual fabric: ERROR: cannot read %s\n", argv[optind]);
		sb_release(&text);
		return RQ_EXIT_FAIL;
	}
	if (ibnet_is_lst(text.buf, text.len) ? ibnet_parse_lst(text.buf, text.len, argv[optind], &net, err, sizeof(err)) :
	    ibnet_load(argv[optind], &net, err, sizeof(err))) {
		fprintf(stderr, "rdmaqual fabric: ERROR: %s\n", err);
		sb_release(&text);
		return RQ_EXIT_FAIL;
	}
	sb_reset(&text);
	for (size_t i = 0; i < net.nnodes; i++)
		sw += net.nodes[i].is_switch;
	if (sw > FABGEN_MAX_SWITCHES || net.nnodes > FABGEN_MAX_NODES) {
		fprintf(stderr, "rdmaqual fabric: ERROR: %s: %u switches and %zu nodes, beyond ibsim's %d and %d\n",
			argv[optind], sw, net.nnodes, FABGEN_MAX_SWITCHES, FABGEN_MAX_NODES);
		ibnet_release(&net);
		return RQ_EXIT_FAIL;
	}
	snprintf(title, sizeof(title), "imported from %s", argv[optind]);
	ibnet_write(&net, title, &text, &notes);
	fprintf(stderr, "%zu nodes (%u switches), %zu links\n%s", net.nnodes, sw, net.nlinks, notes.buf);
	ret = put(out, &text);
	ibnet_release(&net);
	sb_release(&text);
	sb_release(&notes);
	return ret;
}

/* file:line:col: error: ... as the case loader reports YAML; exit 1 on an error, warnings do not fail. */
static int fabric_qos_lint(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "vlcap", required_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct qos_lint_opts o = { .vlcap = 15 };
	struct qos_policy p;
	struct sb text = SB_INIT;
	int opt, ret;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (opt) {
		case 'v':
			o.vlcap = atoi(optarg);
			if (o.vlcap != 1 && o.vlcap != 2 && o.vlcap != 4 && o.vlcap != 8 && o.vlcap != 15)
				return usage_error("fabric", "--vlcap: the data VLs of a port, 1, 2, 4, 8 or 15");
			break;
		case 'h': fabric_usage(stdout); return 0;
		default: return RQ_EXIT_USAGE;
		}
	}
	if (optind != argc - 1)
		return usage_error("fabric", "fabric qos-lint takes one policy file");
	ret = read_file(argv[optind], &text, 16u << 20);
	if (ret < 0) {
		fprintf(stderr, "rdmaqual fabric: ERROR: cannot read %s: %s\n", argv[optind], strerror(-ret));
		sb_release(&text);
		return RQ_EXIT_FAIL;
	}
	ret = qos_policy_lint(text.buf, text.len, &o, &p);
	for (size_t i = 0; i < p.nd; i++)
		fprintf(stderr, "%s:%u:%u: %s: %s\n", argv[optind], p.d[i].line, p.d[i].col,
			p.d[i].warning ? "warning" : "error", p.d[i].msg);
	if (!ret)
		printf("%s: %u port group(s), %u QoS level(s), %u match rule(s), %u ULP rule(s), no errors%s\n",
		       argv[optind], p.port_groups, p.qos_levels, p.match_rules, p.ulp_rules,
		       p.warnings ? " (see the warnings)" : "");
	qos_policy_release(&p);
	sb_release(&text);
	return ret ? RQ_EXIT_FAIL : 0;
}

static const struct cli_word fabric_words[] = {
	{ "gen", fabric_gen, "a fat tree or rail layout as an ibsim net" },
	{ "import", fabric_import, "a real fabric's ibnetdiscover output as an ibsim net" },
	{ "qos-lint", fabric_qos_lint, "a qos-policy.conf against opensm's grammar" },
};

int cmd_fabric(int argc, char **argv)
{
	return cli_dispatch("fabric", fabric_words, ARRAY_SIZE(fabric_words), argc, argv, fabric_usage);
}

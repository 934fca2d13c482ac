/* SPDX-License-Identifier: MIT */
/*
 * ibsim: a simulated InfiniBand fabric for the subnet-manager and fabric
 * kinds, which RoCE/rxe can never exercise (no SM, no LIDs, no switches).
 *
 * Per case: `ibsim -s -n TOPOLOGY` from fixtures/fabrics (the case's
 * `fabric:` key; 2sw2path4hca by default) on a socket name of its own, a
 * scratch directory with the tools' working directory (libumad2sim writes
 * sys-<pid>/ snapshots there) and opensm's OSM_TMP_DIR/OSM_CACHE_DIR.  The
 * placement hands kinds an environment with IBSIM_SOCKNAME and the
 * libumad2sim preload for the tools they run, never for rdmaqual itself
 * (an ASan build aborts under it).  Unless the case says `fabric_sm: false`
 * (the SM kinds bring their own), an opensm of the target's at priority 0
 * brings the subnet up first, judged by sminfo and iblinkinfo.
 *
 * ibsim's stdin is a pipe we hold: with stdin at EOF it spins a core, and
 * the pipe is where link faults could be injected at run time.  Both
 * daemons are recorded in the run state before anything else can fail, and
 * torn down on every exit path: opensm first, then ibsim, then the scratch.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "agent/agent.h"
#include "fabric/fabgen.h"
#include "parsers/ibnet.h"
#include "parsers/qos_policy.h"
#include "rdma/ibsm.h"
#include "core/kind.h"
#include "core/target.h"
#include "core/util.h"

#define IBSIM_DEFAULT_FABRIC "2sw2path4hca"

struct ibsim_priv {
	struct rq_agent *agent;
	char base[64];		/* /tmp/rq-ibsim-XXXXXX: one scratch per case below */
	unsigned seq;
};

/* What one placement started; kept in a list keyed by the placement. */
struct ibsim_place {
	const struct rq_placement *pl;
	pid_t ibsim, opensm;
	int stdin_w;			/* our end of ibsim's stdin */
	char dir[PATH_MAX];
	struct ibsim_place *next;
};

static struct ibsim_place *places;

/*
 * The case keys this target owns (core/case.h: rq_key_owner): the fabric to
 * simulate and the SM it brings up, for the kinds that need a fabric.  A
 * new ibsim key is a row here and a field there.
 */
struct ibsim_keys {
	char *fabric;
	bool fabric_sm;
	char *routing_engine;
	char *sm_config, *qos_policy, *sm_partitions;
};

/* opensm 3.3.23's -R names (opensm --help), and its no_fallback. */
static int check_routing(const char *v, char *err, size_t errsz)
{
	static const char *const engines[] = { "minhop", "updn", "dnup", "file", "ftree", "lash", "dor",
		"torus-2QoS", "nue", "dfsssp", "sssp", "no_fallback", NULL };
	char *copy = xstrdup(v), *save = NULL;
	int ret = 0;

	if (!*v) {
		snprintf(err, errsz, "empty (minhop, updn, ftree, ...)");
		ret = -1;
	}
	for (char *t = strtok_r(copy, ",", &save); t && !ret; t = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; engines[i] && strcmp(engines[i], strtrim(t)); i++)
			;
		if (!engines[i]) {
			snprintf(err, errsz, "\"%s\" is not an opensm routing engine (minhop, updn, dnup, file, "
				 "ftree, lash, dor, torus-2QoS, nue, dfsssp, sssp, no_fallback)", strtrim(t));
			ret = -1;
		}
	}
	free(copy);
	return ret;
}

#define IK(f) offsetof(struct ibsim_keys, f)
static const struct key_def ibsim_key_rows[] = {
	{ .name = "fabric", .type = KEY_STR, .offset = IK(fabric),
	  .help = "the topology to simulate: a name in fixtures/fabrics, a .net path, or a generator spec "
		  "(fat-tree:..., rail:..., ring:...; rdmaqual fabric gen); default 2sw2path4hca" },
	{ .name = "fabric_sm", .type = KEY_BOOL, .offset = IK(fabric_sm),
	  .help = "bring the subnet up with an opensm of the target's (priority 0) before the case; default: the kind's" },
	{ .name = "routing_engine", .type = KEY_STR, .offset = IK(routing_engine), .check = check_routing,
	  .help = "the routing engine(s) of the target's opensm (-R): minhop, updn, dnup, ftree, lash, dor, "
		  "torus-2QoS, nue, dfsssp, sssp, file, comma-separated in order, no_fallback; default opensm's (minhop)" },
	{ .name = "sm_config", .type = KEY_STR, .offset = IK(sm_config),
	  .help = "an opensm.conf for the target's opensm (-F), relative to the case file; its qos_* options "
		  "are the SL2VL and VLArb tables fabric-qos expects" },
	{ .name = "qos_policy", .type = KEY_STR, .offset = IK(qos_policy),
	  .help = "a qos-policy.conf for the target's opensm (-Q -Y), relative to the case file; linted "
		  "against opensm's grammar when the case loads" },
	{ .name = "sm_partitions", .type = KEY_STR, .offset = IK(sm_partitions),
	  .help = "a partitions.conf for the target's opensm (-P), relative to the case file; fabric-health "
		  "checks every CA port's P_Key table against it" },
	KEY_END
};
#undef IK

static bool ibsim_keys_apply(const struct rq_kind *k)
{
	return k->needs_fabric;
}

static void ibsim_keys_init(void *cfg, const struct rq_kind *k)
{
	((struct ibsim_keys *)cfg)->fabric_sm = k->fabric_sm;
}

/*
 * rdmaqual lint of the case file lints its QoS policy, as opensm would
 * refuse it: the first error, at the policy's own line and column.
 */
static int ibsim_keys_validate(const struct rq_case *c, const void *vcfg, char *err, size_t errsz)
{
	const struct ibsim_keys *ik = vcfg;
	char *dir, *slash, *path;
	struct sb text = SB_INIT;
	struct qos_policy p;
	int ret = 0;

	if (!ik->qos_policy)
		return 0;
	dir = xstrdup(c->file ? c->file : ".");
	slash = strrchr(dir, '/');
	path = ik->qos_policy[0] == '/' || !slash ? xstrdup(ik->qos_policy) :
	       (*slash = '\0', xasprintf("%s/%s", dir, ik->qos_policy));
	if (read_file(path, &text, 16u << 20) < 0) {
		snprintf(err, errsz, "qos_policy: cannot read %s", path);
		ret = -ENOENT;
	} else if (qos_policy_lint(text.buf, text.len, NULL, &p)) {
		for (size_t i = 0; i < p.nd; i++)
			if (!p.d[i].warning) {
				snprintf(err, errsz, "qos_policy: %s:%u:%u: %s", path, p.d[i].line, p.d[i].col, p.d[i].msg);
				break;
			}
		ret = -EINVAL;
		qos_policy_release(&p);
	} else {
		qos_policy_release(&p);
	}
	sb_release(&text);
	free(path);
	free(dir);
	return ret;
}

static const struct rq_key_owner ibsim_owner = {
	.name = "ibsim",
	.for_whom = "fabric kinds",
	.keys = ibsim_key_rows,
	.cfg_size = sizeof(struct ibsim_keys),
	.applies = ibsim_keys_apply,
	.init = ibsim_keys_init,
	.validate = ibsim_keys_validate,
};

static bool ibsim_available(const struct rq_run_opts *o, const char *arg, char *why, size_t whysz)
{
	static const char *const cmds[] = { "ibsim", "opensm", "sminfo", "iblinkinfo" };

	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		if (!cmd_exists(cmds[i])) {
			snprintf(why, whysz, "%s not installed (packages ibsim-utils, opensm, infiniband-diags)",
				 cmds[i]);
			return false;
		}
	if (!ibsm_umad2sim_path()) {
		snprintf(why, whysz, "libumad2sim.so not found (package libumad2sim0; or set RQ_UMAD2SIM)");
		return false;
	}
	snprintf(why, whysz, "ibsim, opensm and libumad2sim are installed");
	return true;
}

static int ibsim_open(struct rq_target *t, char *err, size_t errsz)
{
	struct ibsim_priv *p = xcalloc(1, sizeof(*p));

	snprintf(p->base, sizeof(p->base), "/tmp/rq-ibsim-XXXXXX");
	if (!mkdtemp(p->base)) {
		snprintf(err, errsz, "cannot create a scratch directory in /tmp: %s", strerror(errno));
		free(p);
		return -errno;
	}
	ibsm_record_dir(t->opts ? t->opts->state_dir : NULL, p->base);
	p->agent = rq_agent_local(t->opts->self_exe, err, errsz);
	if (!p->agent) {
		rm_rf(p->base);
		free(p);
		return -EIO;
	}
	t->priv = p;
	return 0;
}

/* The tools' environment of a placement, as the runner runs them. */
struct env_run {
	const char *const *env;
	const char *cwd;
};

static int env_run(void *arg, const char *const *argv, int64_t timeout_ms, struct proc_result *r)
{
	const struct env_run *e = arg;
	struct proc_opts o = {
		.argv = argv, .env_add = e->env, .cwd = e->cwd,
		.timeout_ms = scaled_ms(timeout_ms), .log_fd = -1, .tail_max = 1 << 20,
	};

	return proc_run(&o, r);
}

/* The tail of a file, for reasons ("ibsim: parsing failed ..."). */
static void file_tail(const char *path, char *buf, size_t size)
{
	struct sb sb = SB_INIT;
	const char *p;

	buf[0] = '\0';
	if (read_file(path, &sb, 1 << 20) < 0)
		return;
	sb_rtrim(&sb);
	p = strrchr(sb.buf, '\n');
	snprintf(buf, size, "%s", p ? p + 1 : sb.buf);
	sb_release(&sb);
}

static void teardown(struct ibsim_place *ip, const char *state_dir)
{
	char what[32];

	if (ip->opensm > 0) {
		ibsm_stop(ip->opensm, scaled_ms(2000));
		snprintf(what, sizeof(what), "pid %d", (int)ip->opensm);
		ibsm_unrecord(state_dir, what);
		ip->opensm = 0;
	}
	if (ip->stdin_w >= 0) {
		close(ip->stdin_w);
		ip->stdin_w = -1;
	}
	if (ip->ibsim > 0) {
		ibsm_stop(ip->ibsim, scaled_ms(1000));
		snprintf(what, sizeof(what), "pid %d", (int)ip->ibsim);
		ibsm_unrecord(state_dir, what);
		ip->ibsim = 0;
	}
	if (ip->dir[0]) {
		char rec[PATH_MAX + 8];

		rm_rf(ip->dir);
		snprintf(rec, sizeof(rec), "dir %s", ip->dir);
		ibsm_unrecord(state_dir, rec);
		ip->dir[0] = '\0';
	}
}

/*
 * How long opensm may take to bring a fabric up: 30 s, and 50 ms more a
 * node beyond a hundred (a 702-node fat tree's first sweep took N s here,
 * docs/fabric.md), so a large fabric is not cut short and a small one that
 * never comes up fails soon.
 */
static int64_t settle_ms(const struct ibnet *net)
{
	return 30000 + (net->nnodes > 100 ? (int64_t)(net->nnodes - 100) * 50 : 0);
}

/* The first ERR of opensm's log, appended to a reason: why an SM never settled. */
static void osm_reason(const char *log, char *why, size_t size)
{
	struct sb sb = SB_INIT;
	struct osm_summary os = { 0 };
	char r[256];
	size_t n = strlen(why);

	if (read_file(log, &sb, 8u << 20) < 0) {
		sb_release(&sb);
		return;
	}
	opensm_log_parse(sb.buf, sb.len, &os);
	if (os.nerrs && n + 10 < size) {
		osm_summary_reason(&os, r, sizeof(r));
		snprintf(why + n, size - n, "; opensm: %s", r);
	}
	osm_summary_release(&os);
	sb_release(&sb);
}

/* A file the case names (sm_config:, qos_policy:), next to the case file: its real path, or NULL with err. */
static char *case_file_path(const struct rq_case *c, const char *key, const char *name, char *err, size_t errsz)
{
	char *dir = xstrdup(c->file ? c->file : "."), *slash = strrchr(dir, '/'), *joined, *real;

	if (slash)
		*slash = '\0';
	joined = name[0] == '/' || !slash ? xstrdup(name) : xasprintf("%s/%s", dir, name);
	real = realpath(joined, NULL);
	if (!real)
		snprintf(err, errsz, "%s: cannot open %s: %s", key, joined, strerror(errno));
	free(joined);
	free(dir);
	return real;
}

static int ibsim_place(struct rq_target *t, const struct rq_case *c, struct rq_placement *pl,
		       char *err, size_t errsz)
{
	struct ibsim_priv *p = t->priv;
	const char *state_dir = t->opts ? t->opts->state_dir : NULL;
	struct ibsim_place *ip = xcalloc(1, sizeof(*ip));
	char path[PATH_MAX + 16], plan[PATH_MAX + 16] = "", sock[64], *dir_of_net = NULL;
	struct fabgen gen = { 0 };
	bool generated = false;
	const char *preload = ibsm_umad2sim_path();
	struct ibnet net = { 0 };
	const struct ibsim_keys none = { .fabric_sm = c->kind && c->kind->fabric_sm };
	const struct ibsim_keys *ik = rq_case_keys(c, &ibsim_owner) ?: &none;
	bool start_sm = ik->fabric_sm;
	int pipefd[2] = { -1, -1 }, logfd = -1, ret = -EIO;
	int64_t sm_t0, sm_ms = 0, ready_ms = 0;
	bool sm_up = true;
	char *sm_config = NULL, *qos_policy = NULL, *partitions = NULL;

	ip->stdin_w = -1;
	ip->pl = pl;
	if (fabgen_is_spec(ik->fabric)) {
		/* A generated fabric: the simulated file and the plan it is judged against. */
		if (fabgen_build(ik->fabric, &gen, err, errsz))
			goto fail;
		generated = true;
	} else if (ibnet_resolve(ik->fabric ? ik->fabric : IBSIM_DEFAULT_FABRIC, c->file, path, sizeof(path), err, errsz)) {
		goto fail;
	} else {
		/* ibsim runs in the topology's directory (its includes): a relative path would not be found there */
		char *abs = realpath(path, NULL);

		if (abs) {
			snprintf(path, sizeof(path), "%s", abs);
			free(abs);
		}
	}
	if (!preload) {
		snprintf(err, errsz, "libumad2sim.so not found");
		goto fail;
	}
	if ((ik->sm_config && !(sm_config = case_file_path(c, "sm_config", ik->sm_config, err, errsz))) ||
	    (ik->qos_policy && !(qos_policy = case_file_path(c, "qos_policy", ik->qos_policy, err, errsz))) ||
	    (ik->sm_partitions && !(partitions = case_file_path(c, "sm_partitions", ik->sm_partitions, err, errsz))))
		goto fail;
	snprintf(ip->dir, sizeof(ip->dir), "%s/c%u", p->base, ++p->seq);
	ibsm_record_dir(state_dir, ip->dir);
	if (mkdir_p(ip->dir, 0700) < 0) {
		snprintf(err, errsz, "cannot create %s: %s", ip->dir, strerror(errno));
		goto fail;
	}
	if (generated) {
		snprintf(path, sizeof(path), "%s/fabric.net", ip->dir);
		snprintf(plan, sizeof(plan), "%s/plan.net", ip->dir);
		if (write_file_atomic(path, gen.sim.buf, gen.sim.len) ||
		    write_file_atomic(plan, gen.planned.buf, gen.planned.len)) {
			snprintf(err, errsz, "cannot write the generated fabric into %s", ip->dir);
			goto fail;
		}
	}
	if (ibnet_load(path, &net, err, errsz))
		goto fail;
	/*
	 * A file that gives two nodes one GUID (a hand-edited or imported
	 * topology): ibsim refuses it unless told -I (sim_net.c:
	 * find_node_by_guid), and no SM brings such a subnet up, so the target
	 * waits until it has settled and leaves the verdict to the kinds, as
	 * for the generated dup-guid fault.
	 */
	bool dup_guids = ibnet_has_dup_guid(&net);
	char *tools = xasprintf("%s/tools", ip->dir), *osm = xasprintf("%s/osm", ip->dir);

	mkdir_p(tools, 0700);
	mkdir_p(osm, 0700);
	/* An abstract socket name unique to this runner and case. */
	snprintf(sock, sizeof(sock), "rq%d-%u", (int)getpid(), p->seq);
	pl->env = xcalloc(6, sizeof(char *));
	pl->env[0] = xasprintf("IBSIM_SOCKNAME=%s", sock);
	pl->env[1] = xasprintf("LD_PRELOAD=%s", preload);
	pl->env[2] = xasprintf("OSM_TMP_DIR=%s", osm);
	pl->env[3] = xasprintf("OSM_CACHE_DIR=%s", osm);
	pl->tool_cwd = tools;
	free(osm);

	/* ibsim: stdin a pipe we keep, output to a file, cwd the topology's dir (includes). */
	char *ilog = xasprintf("%s/ibsim.log", ip->dir);
	const char *ienv[] = { pl->env[0], NULL };
	const char *iargv[] = { "ibsim", "-s", "-n", path, NULL, NULL };

	if (dup_guids) {
		iargv[2] = "-I";
		iargv[3] = "-n";
		iargv[4] = path;
	}

	dir_of_net = xstrdup(path);
	*strrchr(dir_of_net, '/') = '\0';
	logfd = open(ilog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (logfd < 0 || pipe2(pipefd, O_CLOEXEC) < 0) {
		snprintf(err, errsz, "cannot set up ibsim's log or stdin: %s", strerror(errno));
		free(ilog);
		goto fail;
	}
	struct spawn_opts so = {
		.argv = iargv, .env_add = ienv, .cwd = dir_of_net,
		.stdin_fd = pipefd[0], .stdout_fd = logfd, .stderr_fd = logfd,
	};
	int64_t t0 = now_ms();

	ip->ibsim = proc_spawn(&so);
	close(pipefd[0]);
	close(logfd);
	ip->stdin_w = pipefd[1];
	if (ip->ibsim < 0) {
		snprintf(err, errsz, "cannot start ibsim: %s", strerror((int)-ip->ibsim));
		ip->ibsim = 0;
		free(ilog);
		goto fail;
	}
	ibsm_record_pid(state_dir, ip->ibsim);

	/* Ready when a client can attach: ibstat succeeds (it needs no SM). */
	struct env_run er = { .env = (const char *const *)pl->env, .cwd = pl->tool_cwd };
	int64_t deadline = now_ms() + scaled_ms(10000), backoff = 20;
	bool ready = false;

	while (!ready) {
		static const char *const ibstat[] = { "ibstat", NULL };
		struct proc_result r;
		int st;

		proc_result_init(&r);
		if (env_run(&er, ibstat, 5000, &r) == 0 && !r.exec_failed && r.exit_code == 0)
			ready = true;
		proc_result_release(&r);
		if (ready)
			break;
		if (proc_wait_deadline(ip->ibsim, now_ms(), &st) == 1) {
			char tail[200];

			ip->ibsim = 0;
			file_tail(ilog, tail, sizeof(tail));
			snprintf(err, errsz, "ibsim exited at start on %s: %s", path, tail);
			free(ilog);
			goto fail;
		}
		if (now_ms() > deadline) {
			snprintf(err, errsz, "ibsim on %s did not accept clients within %.0f s", path,
				 scaled_ms(10000) / 1000.0);
			free(ilog);
			goto fail;
		}
		usleep((useconds_t)(backoff * 1000));
		backoff = backoff * 2 > 200 ? 200 : backoff * 2;
	}
	free(ilog);
	ready_ms = now_ms() - t0;

	if (start_sm) {
		char *log = xasprintf("%s/opensm.log", ip->dir), *out = xasprintf("%s/opensm.out", ip->dir);
		/*
		 * A sweep a second: the fabric kinds judge an SM-written table only
		 * once two reads a sweep apart agree (ibkind_settled), so the sweep
		 * interval is what each such case waits; a light sweep of a
		 * simulated pod is a few hundred SMPs.
		 */
		struct ibsm_opensm o = {
			.priority = 0, .sweep_s = 1, .log_path = log, .out_path = out,
			.env = (const char *const *)pl->env, .cwd = pl->tool_cwd,
			.routing = ik->routing_engine,
			.config = sm_config, .qos = qos_policy != NULL, .qos_policy = qos_policy,
			.partitions = partitions,
		};
		struct ibsm_tools tt = { .run = env_run, .arg = &er };
		struct ibsm_view v = { 0 };

		ip->opensm = ibsm_opensm_start(&o, err, errsz);
		if (ip->opensm < 0) {
			ip->opensm = 0;
			free(log);
			free(out);
			goto fail;
		}
		ibsm_record_pid(state_dir, ip->opensm);
		sm_t0 = now_ms();
		if ((generated && gen.sm_blocked) || dup_guids) {
			/* A planted fault no SM gets past (a duplicated GUID): judged by the kinds. */
			ret = ibsm_wait_answer(&tt, now_ms() + scaled_ms(settle_ms(&net)), ip->opensm, &v);
			sm_up = false;
		} else {
			ret = ibsm_wait_up(&tt, &net, now_ms() + scaled_ms(settle_ms(&net)), ip->opensm, &v);
		}
		sm_ms = now_ms() - sm_t0;
		if (ret) {
			osm_reason(log, v.why, sizeof(v.why));
			snprintf(err, errsz, "the target's opensm did not bring %s up: %s",
				 strrchr(path, '/') + 1, v.why);
			ibsm_view_release(&v);
			free(log);
			free(out);
			goto fail;
		}
		ibsm_view_release(&v);
		free(log);
		free(out);
	}

	struct rq_where_fabric *f = &pl->where.fabric;

	f->sim = true;
	f->topology = xstrdup(path);
	f->socket = xstrdup(sock);
	f->target_sm = start_sm;
	f->sm_up = start_sm && sm_up;
	f->ibsim_start_ms = t0;
	f->ibsim_ready_ms = ready_ms;
	f->sm_settle_ms = sm_ms;
	if (plan[0])
		f->planned = xstrdup(plan);
	if (start_sm) {
		f->sm_log = xasprintf("%s/opensm.log", ip->dir);
		f->sm_config = sm_config ? xstrdup(sm_config) : NULL;
		f->sm_partitions = partitions ? xstrdup(partitions) : NULL;
		f->qos_policy = qos_policy ? xstrdup(qos_policy) : NULL;
		f->routing_engine = ik->routing_engine ? xstrdup(ik->routing_engine) : NULL;
	}
	pl->where.allow_sm_takeover = t->opts && t->opts->allow_sm_takeover;
	if (c->file && realpath(c->file, path))
		pl->where.case_file = xstrdup(path);
	/* The shared agent, replaced if a case before this one killed it. */
	p->agent = rq_agent_local(t->opts->self_exe, err, errsz);
	pl->side[0] = pl->side[1] = p->agent;
	pl->root = "";
	ip->next = places;
	places = ip;
	ibnet_release(&net);
	fabgen_release(&gen);
	free(dir_of_net);
	free(sm_config);
	free(qos_policy);
	free(partitions);
	return 0;
fail:
	teardown(ip, state_dir);
	free(ip);
	/* sched frees a placement's env only when place() succeeded. */
	for (size_t i = 0; pl->env && pl->env[i]; i++)
		free(pl->env[i]);
	free(pl->env);
	pl->env = NULL;
	free(pl->tool_cwd);
	pl->tool_cwd = NULL;
	ibnet_release(&net);
	fabgen_release(&gen);
	free(dir_of_net);
	free(sm_config);
	free(qos_policy);
	free(partitions);
	return ret ? ret : -EIO;
}

static void ibsim_unplace(struct rq_target *t, const struct rq_case *c, struct rq_placement *pl,
			  struct rq_results *rows)
{
	struct ibsim_place **pp;

	for (pp = &places; *pp; pp = &(*pp)->next)
		if ((*pp)->pl == pl) {
			struct ibsim_place *ip = *pp;

			*pp = ip->next;
			teardown(ip, t->opts ? t->opts->state_dir : NULL);
			free(ip);
			return;
		}
}

static void ibsim_close(struct rq_target *t)
{
	struct ibsim_priv *p = t->priv;
	const char *state_dir = t->opts ? t->opts->state_dir : NULL;

	while (places) {
		struct ibsim_place *ip = places;

		places = ip->next;
		teardown(ip, state_dir);
		free(ip);
	}
	if (p) {
		char rec[PATH_MAX + 8];

		rm_rf(p->base);
		snprintf(rec, sizeof(rec), "dir %s", p->base);
		ibsm_unrecord(state_dir, rec);
	}
	free(p);
	t->priv = NULL;	/* the shared local agent is closed once, at the end of the run */
}

static void ibsim_cleanup_stale(const struct rq_run_opts *o)
{
	struct sb msgs = SB_INIT;

	ibsm_cleanup_stale(o->state_dir, &msgs);
	if (msgs.len && o->verbose)
		fputs(msgs.buf, stderr);
	sb_release(&msgs);
}

/*
 * The run's scratch dir (each case's fabric is a dir below it): named in the
 * report so that whoever checks what the run left (a test beside others on
 * one host) looks at this run's dir, not at every /tmp/rq-ibsim-*.
 */
static void ibsim_facts(struct rq_target *t, struct rq_result *sink)
{
	struct ibsim_priv *p = t->priv;

	if (p)
		rq_fact_add(sink, "ibsim.scratch", p->base);
}

/* auto, without a ConnectX: first choice for a fabric kind, after rxe-vm for the rest. */
static int ibsim_auto_rank(const struct rq_case *c, char *why, size_t whysz)
{
	if (c->kind->needs_fabric) {
		snprintf(why, whysz, "no ConnectX present and the case needs an InfiniBand fabric");
		return 2;
	}
	snprintf(why, whysz, "no ConnectX present: simulated fabric");
	return 4;
}

const struct rq_target_ops rq_target_ibsim = {
	.name = "ibsim",
	.parallel = true,
	.keys = &ibsim_owner,
	.help = "a simulated InfiniBand fabric (ibsim + libumad2sim) from fixtures/fabrics, one per case, for SM and fabric kinds",
	.auto_rank = ibsim_auto_rank,
	.available = ibsim_available,
	.open = ibsim_open,
	.place = ibsim_place,
	.unplace = ibsim_unplace,
	.close = ibsim_close,
	.cleanup_stale = ibsim_cleanup_stale,
	.facts = ibsim_facts,
};

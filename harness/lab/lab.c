/* SPDX-License-Identifier: MIT */
/*
 * Lab runs: the nodes, their launcher, the dry run and the journal (the
 * run itself, cluster_run, is run.c).
 *
 * Agents start fanout at a time from a pool of threads, because the ssh
 * launcher (agent_ssh.c, the same one --peer uses) copies the build and
 * greets the agent with blocking calls, and an unreachable node costs its
 * ConnectTimeout: one at a time, a rack with three dead nodes would wait
 * half a minute before the first case.  The threads stay parked until the
 * agents are closed: PR_SET_PDEATHSIG follows the thread that forked, so a
 * thread that ended would take its node's ssh with it.  All the running
 * happens on the main thread.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "agent/agent.h"
#include "core/kind.h"
#include "core/proc.h"
#include "lab/lab_int.h"
#include "qual/sysroot.h"
#include "report/table.h"

/* ---- setup ---------------------------------------------------------- */

static bool is_dir(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISDIR(st.st_mode);
}

struct cluster *cluster_new(const struct cluster_opts *co, const struct rq_run_opts *o,
			    char *err, size_t errsz)
{
	struct cluster *cl = xcalloc(1, sizeof(*cl));

	cl->co = *co;
	cl->o = o;
	cl->journal.fd = -1;
	if (!cl->co.fanout)
		cl->co.fanout = 32;
	if (!co->launcher)
		cl->launcher = !strcmp(co->nodes, "slurm") ? LAUNCH_SLURM : LAUNCH_SSH;
	else if (!strcmp(co->launcher, "ssh"))
		cl->launcher = LAUNCH_SSH;
	else if (!strcmp(co->launcher, "slurm"))
		cl->launcher = LAUNCH_SLURM;
	else if (!strcmp(co->launcher, "local"))
		cl->launcher = LAUNCH_LOCAL;
	else {
		snprintf(err, errsz, "--launcher is ssh, slurm or local, not \"%s\"", co->launcher);
		goto fail;
	}
	if (rq_nodes_resolve(co->nodes, &cl->hosts, err, errsz))
		goto fail;
	/*
	 * A name is an argument to ssh or srun, a {peer_host} in a case's
	 * argv and a dir under a sysroot: one starting with '-' would be an
	 * option (-oProxyCommand=...), one with '/' a path.  Every launcher.
	 */
	for (size_t i = 0; i < cl->hosts.n; i++) {
		const char *h = cl->hosts.v[i];

		if (!rq_ssh_host_ok(h) || strchr(h, '/') || !strcmp(h, ".") || !strcmp(h, "..")) {
			char *t = term_safe(h);

			snprintf(err, errsz, "--nodes: \"%s\" is not a node name (no leading '-', no "
				 "'/', blanks or quotes)", t);
			free(t);
			goto fail;
		}
	}
	cl->policy_text = co->pairs ? co->pairs : "ring";
	if (rq_pairs_parse(cl->policy_text, &cl->hosts, &cl->policy, err, errsz))
		goto fail;
	if (o->target && str_starts(o->target, "sysroot:")) {
		if (cl->launcher != LAUNCH_LOCAL) {
			snprintf(err, errsz, "--target sysroot:DIR goes with --launcher local "
				 "(remote nodes are qualified as they are)");
			goto fail;
		}
		cl->sysroot = xstrdup(o->target + 8);
	} else if (o->target && strcmp(o->target, "auto") && strcmp(o->target, "hca") &&
		   strcmp(o->target, "local")) {
		snprintf(err, errsz, "a lab run qualifies the nodes themselves: --target is auto, "
			 "hca, local or sysroot:DIR (local launcher), not %s", o->target);
		goto fail;
	}
	cl->n = cl->hosts.n;
	cl->nodes = xcalloc(cl->n, sizeof(*cl->nodes));
	for (size_t i = 0; i < cl->n; i++) {
		struct cnode *nd = &cl->nodes[i];

		nd->name = cl->hosts.v[i];
		nd->hostname = xstrdup(nd->name);
		nd->same_host = -1;
		if (cl->sysroot) {
			/* DIR/NODE when there is one (a tree per node), else DIR for all. */
			char *own = xasprintf("%s/%s", cl->sysroot, nd->name);
			char *sys = xasprintf("%s/sys", own);

			nd->root = is_dir(sys) ? own : xstrdup(cl->sysroot);
			if (nd->root != own)
				free(own);
			free(sys);
			nd->target = xasprintf("sysroot:%s", nd->root);
		} else {
			nd->target = xstrdup(cl->launcher == LAUNCH_LOCAL ? "local" : "hca");
		}
	}
	return cl;
fail:
	cluster_free(cl);
	return NULL;
}

void cluster_node_down(struct cluster *cl, struct cnode *nd, const char *fmt, ...)
{
	va_list ap;

	if (nd->down)
		return;
	nd->down = true;
	va_start(ap, fmt);
	vsnprintf(nd->down_why, sizeof(nd->down_why), fmt, ap);
	va_end(ap);
	char *why = term_safe(nd->down_why);	/* what the node or its launcher said */

	fprintf(stderr, "rdmaqual: node %s: %s\n", nd->name, why);
	free(why);
}

/* ---- launching ------------------------------------------------------ */

struct pool {
	struct cluster *cl;
	pthread_t *th;
	unsigned nth;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t next;		/* next node to start */
	size_t started;		/* nodes whose start has ended (either way) */
	bool release;		/* agents closed: threads may end */
	bool stop;		/* interrupted: start no more */
};

/*
 * srun inside the allocation: one task on that node, its stdio our pipe.
 * Its stderr (srun's own errors, and the agent's) goes to
 * logs/srun-NODE.log in the run dir, so a refusal can be quoted.
 */
static struct rq_agent *launch_srun(struct cluster *cl, struct cnode *nd, char *err, size_t errsz)
{
	const char *srun = getenv("RDMAQUAL_SRUN");
	char *nodearg = xasprintf("--nodelist=%s", nd->name);
	const char *argv[] = {
		srun && *srun ? srun : "srun", "--nodes=1", "--ntasks=1", nodearg,
		/* a step beside the others on the node; no srun chatter on our pipe */
		"--overlap", "--quiet", "--kill-on-bad-exit=1", "--job-name=rdmaqual-agent",
		cl->o->self_exe, "agent", "--stdio", NULL
	};
	int to[2], from[2];

	if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC)) {
		snprintf(err, errsz, "pipe: %s", strerror(errno));
		free(nodearg);
		return NULL;
	}
	int efd = nd->launch_log ? open(nd->launch_log, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
					 O_CLOEXEC, 0644) : -1;
	struct spawn_opts so = { .argv = argv, .stdin_fd = to[0], .stdout_fd = from[1],
				 .stderr_fd = efd >= 0 ? efd : 2 };
	pid_t pid = proc_spawn(&so);

	close(to[0]);
	close(from[1]);
	if (efd >= 0)
		close(efd);
	free(nodearg);
	if (pid < 0) {
		snprintf(err, errsz, "cannot start srun: %s", strerror(-pid));
		close(to[1]);
		close(from[0]);
		return NULL;
	}
	return rq_agent_attach(from[0], to[1], pid, nd->name);
}

/*
 * A simulated node: a local agent whose environment names its node
 * (RDMAQUAL_NODE), so everything it runs, and a test, can tell the nodes
 * apart on one host.
 */
static struct rq_agent *spawn_local(struct cluster *cl, struct cnode *nd, char *err, size_t errsz)
{
	char *env = xasprintf("RDMAQUAL_NODE=%s", nd->name);
	const char *argv[] = { cl->o->self_exe, "agent", "--stdio", NULL };
	const char *envv[] = { env, NULL };
	int to[2], from[2];

	if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC)) {
		snprintf(err, errsz, "pipe: %s", strerror(errno));
		free(env);
		return NULL;
	}
	struct spawn_opts so = { .argv = argv, .env_add = envv, .stdin_fd = to[0],
				 .stdout_fd = from[1], .stderr_fd = 2 };
	pid_t pid = proc_spawn(&so);

	close(to[0]);
	close(from[1]);
	free(env);
	if (pid < 0) {
		snprintf(err, errsz, "cannot start agent %s: %s", cl->o->self_exe, strerror(-pid));
		close(to[1]);
		close(from[0]);
		return NULL;
	}
	return rq_agent_attach(from[0], to[1], pid, nd->name);
}

static bool greet(struct rq_agent *a, struct cnode *nd, const char *how, char *err, size_t errsz)
{
	json_t *req = json_pack("{s:s}", "op", "hello");
	char why[256] = "";
	json_t *ans = rq_agent_call(a, req, scaled_ms(60000), why, sizeof(why));
	bool ok = ans && json_is_true(json_object_get(ans, "ok"));

	json_decref(req);
	json_decref(ans);
	if (!ok)
		snprintf(err, errsz, "%s: agent did not greet: %s", how, why[0] ? why : "bad answer");
	return ok;
}

static void launch_one(struct cluster *cl, struct cnode *nd)
{
	char err[512] = "";
	struct rq_agent *a = NULL;

	switch (cl->launcher) {
	case LAUNCH_LOCAL:
		a = spawn_local(cl, nd, err, sizeof(err));
		if (a && !greet(a, nd, "local agent", err, sizeof(err))) {
			rq_agent_close(a);
			a = NULL;
		}
		break;
	case LAUNCH_SSH:
		a = rq_agent_ssh(nd->name, cl->o->self_exe, nd->launch_log, err, sizeof(err));
		break;
	case LAUNCH_SLURM:
		a = launch_srun(cl, nd, err, sizeof(err));
		if (a && !greet(a, nd, "srun", err, sizeof(err))) {
			struct sb log = SB_INIT;

			rq_agent_close(a);	/* srun has ended: its words are in the log */
			a = NULL;
			if (nd->launch_log && !read_file(nd->launch_log, &log, 65536)) {
				char *last;

				sb_rtrim(&log);
				last = strrchr(log.buf, '\n');
				if (log.len)
					snprintf(err, sizeof(err), "%s", last ? last + 1 : log.buf);
			}
			sb_release(&log);
		}
		break;
	}
	if (!a) {
		nd->down = true;
		snprintf(nd->down_why, sizeof(nd->down_why), "unreachable: %s", err);
		return;
	}
	free(a->label);
	a->label = xstrdup(nd->name);
	json_t *req = json_pack("{s:s}", "op", "facts");
	char why[128];
	json_t *ans = rq_agent_call(a, req, scaled_ms(30000), why, sizeof(why));
	const char *hn = json_string_value(json_object_get(json_object_get(ans, "facts"), "hostname"));
	const char *exe = json_string_value(json_object_get(json_object_get(ans, "facts"), "rdmaqual_exe"));

	/* Local agents all run on this host: they are simulated nodes, named as given. */
	if (hn && *hn && cl->launcher != LAUNCH_LOCAL) {
		free(nd->hostname);
		nd->hostname = xstrdup(hn);
	}
	if (exe && *exe && cl->launcher != LAUNCH_LOCAL)
		nd->exe = xstrdup(exe);
	json_decref(req);
	json_decref(ans);
	nd->ag = a;
}

static void *pool_thread(void *arg)
{
	struct pool *p = arg;

	pthread_mutex_lock(&p->mu);
	while (!p->stop && p->next < p->cl->n) {
		struct cnode *nd = &p->cl->nodes[p->next++];

		pthread_mutex_unlock(&p->mu);
		launch_one(p->cl, nd);
		pthread_mutex_lock(&p->mu);
		p->started++;
		pthread_cond_broadcast(&p->cv);
	}
	/* Parked, not ended: our children's PDEATHSIG is tied to this thread. */
	while (!p->release)
		pthread_cond_wait(&p->cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static void mgmt_address(struct cluster *cl, struct cnode *nd)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res;

	if (cl->launcher == LAUNCH_LOCAL) {
		snprintf(nd->mgmt, sizeof(nd->mgmt), "127.0.0.1");
		return;
	}
	/* ssh_config aliases (HostName) apply to ssh nodes; srun nodes resolve as named. */
	if (cl->launcher == LAUNCH_SSH && !rq_ssh_resolve4(nd->name, nd->mgmt, sizeof(nd->mgmt)))
		return;
	if (!getaddrinfo(nd->name, NULL, &hints, &res)) {
		inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr, nd->mgmt,
			  sizeof(nd->mgmt));
		freeaddrinfo(res);
	}
}

/*
 * Nodes that report one hostname (cloned images do, with no attacker):
 * said once per name; rows, ids and logs go by the --nodes names anyway.
 */
static void flag_same_hostnames(struct cluster *cl)
{
	struct strmap seen = { 0 };

	for (size_t i = 0; i < cl->n; i++) {
		struct cnode *nd = &cl->nodes[i];
		bool added;
		size_t *first;

		nd->same_host = -1;
		if (!nd->ag || cl->launcher == LAUNCH_LOCAL)
			continue;
		first = strmap_put(&seen, nd->hostname, i, &added);
		if (added)
			continue;
		nd->same_host = (long)*first;
		char *h = term_safe(nd->hostname);

		fprintf(stderr, "rdmaqual: nodes %s and %s both report hostname %s (cloned images?); "
			"rows and logs go by the --nodes names\n", cl->nodes[*first].name, nd->name, h);
		free(h);
	}
	strmap_release(&seen);
}

void cluster_launch(struct cluster *cl)
{
	struct pool *p = xcalloc(1, sizeof(*p));
	sigset_t all, old;
	int64_t t0 = now_ms();
	size_t up = 0;

	cl->launched = true;
	cl->pool = p;
	p->cl = cl;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->nth = cl->co.fanout < cl->n ? cl->co.fanout : (unsigned)cl->n;
	p->th = xcalloc(p->nth ? p->nth : 1, sizeof(*p->th));
	/* Signals go to the main thread, whose waits see EINTR. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (unsigned i = 0; i < p->nth; i++)
		if (pthread_create(&p->th[i], NULL, pool_thread, p)) {
			p->nth = i;
			break;
		}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_mutex_lock(&p->mu);
	while (p->started < p->next || (p->next < cl->n && !p->stop && p->nth)) {
		struct timespec ts;

		if (rq_interrupted)
			p->stop = true;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&p->cv, &p->mu, &ts);
	}
	pthread_mutex_unlock(&p->mu);
	for (size_t i = 0; i < cl->n; i++) {
		struct cnode *nd = &cl->nodes[i];

		if (!nd->ag && !nd->down) {
			nd->down = true;
			snprintf(nd->down_why, sizeof(nd->down_why), "not started: %s",
				 rq_interrupted ? "interrupted" : "no launcher thread");
		}
		if (nd->ag) {
			mgmt_address(cl, nd);
			up++;
		} else {
			char *why = term_safe(nd->down_why);

			fprintf(stderr, "rdmaqual: node %s: %s\n", nd->name, why);
			free(why);
		}
	}
	flag_same_hostnames(cl);
	fprintf(stderr, "rdmaqual: %zu of %zu nodes up (launcher %s, fanout %u) in %.1f s\n", up,
		cl->n, cl->launcher == LAUNCH_SSH ? "ssh" : cl->launcher == LAUNCH_SLURM ? "slurm" :
		"local", cl->co.fanout, (now_ms() - t0) / 1000.0);
}

static void pool_end(struct cluster *cl)
{
	struct pool *p = cl->pool;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->release = true;
	p->stop = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	for (unsigned i = 0; i < p->nth; i++)
		pthread_join(p->th[i], NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p->th);
	free(p);
	cl->pool = NULL;
}

void cluster_free(struct cluster *cl)
{
	if (!cl)
		return;
	/*
	 * Every node's work stops: a shutdown to each agent (which kills its
	 * workers), then closing the channel kills ssh/srun; a remote agent
	 * ends when its stdin closes.  Shutdowns go out first, so a rack of
	 * agents stops in one round trip, not one per node.
	 */
	for (size_t i = 0; i < cl->n; i++)
		if (cl->nodes && cl->nodes[i].ag && !cl->nodes[i].ag->dead) {
			json_t *req = json_pack("{s:s}", "op", "shutdown");

			rq_agent_send(cl->nodes[i].ag, req);
			json_decref(req);
		}
	/*
	 * Then wait for them all at once (a channel closes as its agent
	 * exits), 2 s at most; after an interrupt, closing is what stops them.
	 */
	struct rq_agent **live = xcalloc(cl->n + 1, sizeof(*live));
	int64_t dl = now_ms() + 2000;

	for (;;) {
		size_t nl = 0;

		for (size_t i = 0; i < cl->n; i++)
			if (cl->nodes[i].ag && !cl->nodes[i].ag->dead)
				live[nl++] = cl->nodes[i].ag;
		if (!nl || rq_agent_poll(live, nl, dl) != 0 || now_ms() >= dl)
			break;
	}
	free(live);
	for (size_t i = 0; i < cl->n; i++) {
		struct cnode *nd = &cl->nodes[i];

		if (nd->ag)
			rq_agent_close(nd->ag);
		free(nd->hostname);
		free(nd->exe);
		free(nd->root);
		free(nd->target);
		free(nd->rails);
		free(nd->first_fail);
		free(nd->launch_log);
	}
	pool_end(cl);
	if (cl->launched) {
		/*
		 * What the controller itself cost against what the nodes did
		 * (bench/cluster.sh reads this line).  Children's figures cover
		 * local agents only, reaped above; remote agents' CPU is theirs.
		 */
		struct rusage self, kids;

		getrusage(RUSAGE_SELF, &self);
		getrusage(RUSAGE_CHILDREN, &kids);
		double cs = self.ru_utime.tv_sec + self.ru_stime.tv_sec +
			    (self.ru_utime.tv_usec + self.ru_stime.tv_usec) / 1e6;
		double ks = kids.ru_utime.tv_sec + kids.ru_stime.tv_sec +
			    (kids.ru_utime.tv_usec + kids.ru_stime.tv_usec) / 1e6;

		fprintf(stderr, "rdmaqual: lab cost: %zu nodes, %zu node-cases; controller CPU %.3f s "
			"(%.3f ms per node-case), peak RSS %.1f MiB; local agents' CPU %.3f s; "
			"planning %.3f ms\n", cl->n, cl->units, cs,
			cl->units ? cs * 1e3 / (double)cl->units : 0.0, self.ru_maxrss / 1024.0, ks,
			cl->plan_ms);
	}
	for (size_t i = 0; i < cl->npairs; i++) {
		free(cl->pairs[i].what);
		free(cl->pairs[i].rounds);
	}
	free(cl->pairs);
	free(cl->pair_cases);
	free(cl->nodes);
	free(cl->sysroot);
	rq_pairs_release(&cl->policy);
	rq_hosts_release(&cl->hosts);
	rq_journal_close(&cl->journal);
	free(cl);
}

/* ---- dry run -------------------------------------------------------- */

bool cluster_runs_on_nodes(const struct rq_case *c)
{
	return !c->kind->no_target && !c->kind->needs_fabric;
}

bool cluster_case_is_pairs(const struct rq_case *c)
{
	return c->kind->two_sided;
}

/*
 * The case keys a lab run owns (core/case.h: rq_key_owner): how its pairs
 * are chosen.  Taken by every kind, as before there were owners: a suite
 * written for one kind of run also runs as a lab.
 */
struct lab_keys {
	char *pairs;
};

static int check_pairs(const char *v, char *err, size_t errsz)
{
	return rq_pairs_syntax(v, err, errsz);
}

static const struct key_def lab_key_rows[] = {
	{ .name = "pairs", .type = KEY_STR, .offset = offsetof(struct lab_keys, pairs), .check = check_pairs,
	  .help = "lab runs (--nodes), two-sided kinds: ring, all, or CLIENT:SERVER node pairs (n1:n2,n3:n4); default: the run's --pairs" },
	KEY_END
};

const struct rq_key_owner rq_lab_keys = {
	.name = "lab",
	.for_whom = "every kind, in lab runs",
	.keys = lab_key_rows,
	.cfg_size = sizeof(struct lab_keys),
};

void rq_lab_install(void)
{
	rq_key_owner_register(&rq_lab_keys);
}

/* The case's own pairs:, or NULL. */
static const char *case_pairs(const struct rq_case *c)
{
	const struct lab_keys *lk = rq_case_keys(c, &rq_lab_keys);

	return lk ? lk->pairs : NULL;
}

const char *cluster_case_policy(const struct cluster *cl, const struct rq_case *c)
{
	return case_pairs(c) ? case_pairs(c) : cl->policy_text;
}

int cluster_case_rounds(struct cluster *cl, const struct rq_case *c, struct rq_rounds *r,
			char *err, size_t errsz)
{
	struct rq_pairs_policy own;
	const struct rq_pairs_policy *p = &cl->policy;
	struct timespec a, b;

	memset(r, 0, sizeof(*r));
	clock_gettime(CLOCK_MONOTONIC, &a);
	/* A case's own pairs: win over the run's --pairs. */
	if (case_pairs(c)) {
		char e2[256];

		if (rq_pairs_parse(case_pairs(c), &cl->hosts, &own, e2, sizeof(e2))) {
			snprintf(err, errsz, "%s: pairs: %s", c->name, e2);
			return -1;
		}
		p = &own;
	}
	rq_plan_rounds(p, cl->n, r);
	if (p == &own)
		rq_pairs_release(&own);
	clock_gettime(CLOCK_MONOTONIC, &b);
	cl->plan_ms += (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	return 0;
}

int cluster_check_cases(struct cluster *cl, struct rq_case *const *sel, size_t nsel,
			char *err, size_t errsz)
{
	struct rq_pairs_policy p;

	for (size_t i = 0; i < nsel; i++)
		if (cluster_runs_on_nodes(sel[i]) && cluster_case_is_pairs(sel[i]) && case_pairs(sel[i])) {
			char e2[256];

			if (rq_pairs_parse(case_pairs(sel[i]), &cl->hosts, &p, e2, sizeof(e2))) {
				snprintf(err, errsz, "%s (%s:%u): pairs: %s", sel[i]->name,
					 sel[i]->file ? sel[i]->file : "?", sel[i]->pos.line, e2);
				return -1;
			}
			rq_pairs_release(&p);
		}
	return 0;
}

void cluster_dry_run(struct cluster *cl, struct rq_case *const *sel, size_t nsel)
{
	printf("lab: %zu nodes via %s, fanout %u, pairs %s\n", cl->n,
	       cl->launcher == LAUNCH_SSH ? "ssh" : cl->launcher == LAUNCH_SLURM ? "slurm (srun)" :
	       "local agents", cl->co.fanout, cl->policy_text);
	for (size_t i = 0; i < cl->n && i < 64; i++)
		printf("  node %-24s %s\n", cl->nodes[i].name, cl->nodes[i].target);
	if (cl->n > 64)
		printf("  ... and %zu more nodes\n", cl->n - 64);
	for (size_t i = 0; i < nsel; i++) {
		const struct rq_case *c = sel[i];

		if (!cluster_runs_on_nodes(c)) {
			printf("%-40s once, on the controller (%s)\n", c->name,
			       c->kind->no_target ? "no target" : "needs the fabric");
			continue;
		}
		if (c->kind->spans_nodes) {
			printf("%-40s once, across all %zu nodes, launched from %s\n", c->name,
			       cl->n, cl->n ? cl->nodes[0].name : "-");
			continue;
		}
		if (!cluster_case_is_pairs(c)) {
			printf("%-40s node-local, on %zu nodes, %u at once\n", c->name, cl->n,
			       cl->co.fanout);
			continue;
		}
		struct rq_rounds r;
		char err[300];

		if (cluster_case_rounds(cl, c, &r, err, sizeof(err))) {
			printf("%-40s %s\n", c->name, err);
			continue;
		}
		printf("%-40s two-sided, pairs %s: %zu pairs in %zu rounds, rail i with rail i\n",
		       c->name, cluster_case_policy(cl, c), r.npairs, r.nrounds);
		for (size_t k = 0; k < r.nrounds; k++) {
			printf("  round %zu:", k + 1);
			for (size_t j = r.start[k]; j < r.start[k + 1]; j++)
				printf(" %s->%s", cl->nodes[r.pairs[j].client].name,
				       cl->nodes[r.pairs[j].server].name);
			printf("\n");
		}
		rq_rounds_release(&r);
	}
	printf("planned in %.3f ms\n", cl->plan_ms);
}

/* ---- journal (exec/journal.c) ------------------------------------------ */

void cluster_journal_open(struct cluster *cl, const char *run_dir)
{
	int rc = rq_journal_open(&cl->journal, run_dir, cl->co.resume != NULL);

	if (rc)
		fprintf(stderr, "rdmaqual: no journal %s/journal.jsonl (%s): this run cannot be "
			"resumed\n", run_dir, strerror(-rc));
}

void cluster_journal_unit(struct cluster *cl, const char *key, const struct rq_results *rows,
			  size_t first)
{
	int rc;

	if (cl->journal.fd < 0 || rq_interrupted)
		return;		/* an interrupted unit is not finished: --resume runs it again */
	rc = rq_journal_unit(&cl->journal, key, rows->v + first, rows->n - first);
	if (rc)
		fprintf(stderr, "rdmaqual: journal write failed: %s\n", strerror(-rc));
}

static bool same_name(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : !a && !b;
}

/*
 * Rows of a unit the interrupted run finished: back into the results, if
 * each is a row of the unit the plan has under that key.  The journal is
 * the euid's (rundir_trust), but a row that names another case, node or
 * peer is no result of this plan, whatever wrote it.
 */
bool cluster_resume_unit(struct cluster *cl, const char *key, const char *case_name,
			 const char *node, const char *peer, struct rq_results *out,
			 const struct rq_run_sink *sink)
{
	json_t *rows = rq_journal_done(&cl->journal, key);
	struct rq_results got = { 0 };
	const char *why = NULL;
	size_t i;
	json_t *j;

	if (!rows)
		return false;
	json_array_foreach(rows, i, j) {
		char err[128];
		struct rq_result *r = rq_result_from_json(j, err, sizeof(err));

		if (!r)
			why = "a row that does not parse";
		else if (!same_name(r->case_name, case_name))
			why = "a row of another case";
		else if (!same_name(r->node, node))
			why = "a row of another node";
		else if (!same_name(r->peer_node, peer))
			why = "a row against another peer";
		if (r)
			rq_results_add(&got, r);
		if (why)
			break;
	}
	if (!why && !got.n)
		why = "no rows";
	if (why) {
		char *k = term_safe(key);

		fprintf(stderr, "rdmaqual: journal unit %s has %s: not this plan's; it runs again\n",
			k, why);
		free(k);
		rq_results_release(&got);
		return false;
	}
	for (i = 0; i < got.n; i++) {
		rq_results_add(out, got.v[i]);
		sink->row(sink->arg, got.v[i]);
	}
	free(got.v);
	return true;
}

size_t cluster_synthesized(const struct cluster *cl, size_t *nodes, char *by, size_t bysz)
{
	size_t n = 0;

	*nodes = cl->n;
	for (size_t i = 0; i < cl->n; i++) {
		struct rq_tree_meta m;

		if (!cl->nodes[i].root)
			continue;
		rq_sysroot_origin(cl->nodes[i].root, &m);
		if (m.origin == RQ_TREE_SYNTHESIZED && !n++)
			snprintf(by, bysz, "%s", m.synthesized);
	}
	return n;
}

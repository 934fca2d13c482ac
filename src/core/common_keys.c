/* SPDX-License-Identifier: MIT */
/*
 * The keys every case has (name, kind, summary, tags, targets, needs,
 * timeout, devices, port, gid_index, ...): their table and the checks beyond
 * their type (valid names, known targets, the needs: syntax, device lists).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/kind.h"
#include "core/kmod.h"
#include "core/loader_int.h"
#include "core/target.h"

#define CO(f) offsetof(struct common, f)
const struct key_def rq_common_keys[] = {
	[CK_NAME] = { .name = "name", .type = KEY_STR, .offset = CO(name), .required = true,
		.help = "unique case name, [A-Za-z0-9_.-]+ (suite.case by convention)" },
	[CK_KIND] = { .name = "kind", .type = KEY_STR, .offset = CO(kind), .required = true,
		.help = "what the case does: one of the kinds (rdmaqual help)" },
	[CK_SUMMARY] = { .name = "summary", .type = KEY_STR, .offset = CO(summary),
		.help = "one line shown in reports" },
	[CK_TAGS] = { .name = "tags", .type = KEY_LIST, .elem = KEY_STR, .offset = CO(tags),
		.help = "labels for --tag filters; merged with defaults' tags" },
	[CK_TARGETS] = { .name = "targets", .type = KEY_LIST, .elem = KEY_STR,
		.offset = CO(targets),
		.help = "targets the case may run on (the targets table; sysroot:DIR for one tree); default: the kind's" },
	[CK_NEEDS] = { .name = "needs", .type = KEY_LIST, .elem = KEY_STR, .offset = CO(needs),
		.help = "requirements checked on the target: root, device, module:NAME, cmd:NAME, link_layer:IB or link_layer:Ethernet, memlock:SIZE, file:PATH; merged with defaults' needs" },
	[CK_TIMEOUT] = { .name = "timeout", .type = KEY_DURATION, .offset = CO(timeout_ms),
		.def = "60s", .min = 1, .max = 24LL * 3600 * 1000,
		.help = "deadline for the whole case (scaled by --timeout-mul)" },
	[CK_DEVICES] = { .name = "devices", .type = KEY_STR, .offset = CO(devices), .def = "all",
		.help = "all (every device and port, a row each), first-active, or a list of device names" },
	[CK_PORT] = { .name = "port", .type = KEY_INT, .offset = CO(port), .def = "0",
		.min = 0, .max = 255, .help = "port number; 0: every port (or the first active one)" },
	[CK_GID_INDEX] = { .name = "gid_index", .type = KEY_INT, .offset = CO(gid_index),
		.def = "-1", .min = -1, .max = 255,
		.help = "GID table index; -1: resolve (RoCE v2 IPv4-mapped GID)" },
	[CK_VM_CPUS] = { .name = "vm_cpus", .type = KEY_INT, .offset = CO(vm_cpus), .def = "0",
		.min = 0, .max = 64,
		.help = "rxe-vm: vCPUs of each guest for this case (guests reboot when it differs); 0: the run's ($RQ_VM_CPUS, else 1)" },
	[CK_VM_MEMORY] = { .name = "vm_memory", .type = KEY_SIZE, .offset = CO(vm_memory),
		.def = "0", .min = 0, .max = 64LL << 30,
		.help = "rxe-vm: memory of each guest for this case, at least 128MiB (guests reboot when it differs); 0: the run's ($RQ_VM_MEM_MB, else 512MiB)" },
	[CK_PAIRS] = { .name = "pairs", .type = KEY_STR, .offset = CO(pairs),
		.help = "lab runs (--nodes), two-sided kinds: ring, all, or CLIENT:SERVER node pairs (n1:n2,n3:n4); default: the run's --pairs" },
	/* What a target needs to place the case (the ibsim fabric): typed in struct rq_case. */
	[CK_FABRIC] = { .name = "fabric", .type = KEY_STR, .offset = CO(fabric),
		.help = "fabric kinds only; ibsim target: topology to simulate, a name in fixtures/fabrics or a .net path; default 2sw2path4hca" },
	[CK_FABRIC_SM] = { .name = "fabric_sm", .type = KEY_BOOL, .offset = CO(fabric_sm),
		.help = "fabric kinds only; ibsim target: bring the subnet up with an opensm of the target's (priority 0) before the case; default: the kind's" },
	[CK_ROUTING] = { .name = "routing_engine", .type = KEY_STR, .offset = CO(routing_engine),
		.help = "fabric kinds only; ibsim target: the routing engine(s) of the target's opensm (-R): minhop, updn, dnup, ftree, lash, dor, torus-2QoS, nue, dfsssp, sssp, file, comma-separated in order, no_fallback; default opensm's (minhop)" },
	[CK_MODULES] = { .name = "modules", .type = KEY_LIST, .elem = KEY_STR, .offset = CO(modules),
		.help = "command, command_pair: kernel modules to load with modprobe where the case runs (each side of a pair) before it starts; afterwards the ones it loaded, dependencies included, are unloaded; one missing for that kernel: SKIP" },
	[CK_FRESH_GUEST] = { .name = "fresh_guest", .type = KEY_BOOL, .offset = CO(fresh_guest),
		.def = "false",
		.help = "rxe-vm: boot fresh guests for this case (nothing left in /run, /tmp, configfs or the modules by the cases before; costs a boot)" },
	[CK_VM_SCRATCH] = { .name = "vm_scratch", .type = KEY_BOOL, .offset = CO(vm_scratch),
		.def = "false",
		.help = "rxe-vm: guests with a scratch disk at /scratch for this case (ext4 on virtio-blk: O_DIRECT, which tmpfs lacks; its writes are gone with the guests; they reboot when it differs)" },
	[CK_UDEV] = { .name = "udev", .type = KEY_BOOL, .offset = CO(udev),
		.def = "false",
		.help = "rxe-vm: guests running the host's systemd-udevd for this case (/dev/disk/by-id links, what multipath and SRP need; on anyway with vm_scratch; costs about a quarter of a TCG boot; they reboot when it differs)" },
	[CK_SM_CONFIG] = { .name = "sm_config", .type = KEY_STR, .offset = CO(sm_config),
		.help = "fabric kinds only; ibsim target: an opensm.conf for the target's opensm (-F), relative to the case file; its qos_* options are the SL2VL and VLArb tables fabric-qos expects" },
	[CK_QOS_POLICY] = { .name = "qos_policy", .type = KEY_STR, .offset = CO(qos_policy),
		.help = "fabric kinds only; ibsim target: a qos-policy.conf for the target's opensm (-Q -Y), relative to the case file; fabric-qos lints it against opensm's grammar" },
	[CK_SM_PARTITIONS] = { .name = "sm_partitions", .type = KEY_STR, .offset = CO(sm_partitions),
		.help = "fabric kinds only; ibsim target: a partitions.conf for the target's opensm (-P), relative to the case file; fabric-health checks every CA port's P_Key table against it" },
	[CK_JUDGE] = { .name = "judge", .type = KEY_LIST, .elem = KEY_STR, .offset = CO(judge),
		.help = "the figures (names or globs: lat_p99, bw_*) that qualify, compare, run --baseline and a lab run's pair matrix judge against other runs; default: the kind's key figures (rdmaqual help KIND)" },
	[CK_DAEMON_ALLOWED] = { .name = "daemon_allowed", .type = KEY_STR, .offset = CO(daemon_allowed),
		.help = "why a process the case starts may outlive it (a daemon); it is still killed and named at the case's end, as the fact leftover_processes; unset: a leftover process FAILs the case" },
	[CK_COUNT] = KEY_END,
};
#undef CO

static bool check_name(struct ld *ld, const yaml_node_t *n)
{
	if (name_chars_ok(stext(n), "_.-"))
		return true;
	lerr(ld, NPOS(n), "name: \"%s\" is not a valid case name (expected [A-Za-z0-9_.-]+)",
	     stext(n));
	return false;
}

/* A target of the registry: NAME, or NAME:ARG for one that takes an argument. */
static bool check_target(struct ld *ld, const yaml_node_t *n)
{
	const char *s = stext(n), *colon = strchr(s, ':');
	const struct rq_target_ops *t = rq_target_ops_find(s);
	struct hint h = { .word = s };
	struct sb names = SB_INIT;
	char hb[300];

	if (t && (!colon || (t->arg && colon[1])))
		return true;
	if (t && t->arg) {
		lerr(ld, NPOS(n), "targets: \"%s\" needs %s (%s:%s)", s, t->arg_what, t->name,
		     t->arg);
		return false;
	}
	for (size_t i = 0; rq_target_ops_at(i); i++)
		hint_try(&h, rq_target_ops_at(i)->name);
	rq_target_names(&names, ", ", " or ");
	lerr(ld, NPOS(n), "targets: unknown target \"%s\" (expected %s)%s", s, names.buf,
	     hint_text(&h, hb, sizeof(hb)));
	sb_release(&names);
	return false;
}

int rq_pairs_syntax(const char *text, char *err, size_t errsz)
{
	if (!strcmp(text, "ring") || !strcmp(text, "all"))
		return 0;
	for (const char *p = text;;) {
		const char *e = strchrnul(p, ','), *colon = memchr(p, ':', (size_t)(e - p));
		bool ok = colon && colon > p && colon + 1 < e && !memchr(colon + 1, ':', (size_t)(e - colon - 1));

		for (const char *q = p; ok && q < e; q++)
			ok = *q == ':' || *q == '-' || *q == '.' || *q == '_' || (*q >= '0' && *q <= '9') ||
			     (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z');
		if (!ok) {
			snprintf(err, errsz, "expected ring, all, or a list of CLIENT:SERVER node "
				 "pairs (n1:n2,n3:n4), not \"%s\"", text);
			return -1;
		}
		if (!*e)
			return 0;
		p = e + 1;
	}
}

static bool check_pairs(struct ld *ld, const yaml_node_t *n)
{
	char err[300];

	if (!rq_pairs_syntax(stext(n), err, sizeof(err)))
		return true;
	lerr(ld, NPOS(n), "pairs: %s", err);
	return false;
}

/* A figure glob, as fnmatch(3) reads it; as long as compare's glob buffer allows. */
static bool check_judge(struct ld *ld, const yaml_node_t *n)
{
	const char *s = stext(n);
	size_t len = strlen(s);

	if (len && len < 64 && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-*?[]!") == len)
		return true;
	lerr(ld, NPOS(n), "judge: \"%s\" is not a figure name or glob (expected [A-Za-z0-9_.-] and * ? [ ], "
	     "1 to 63 characters)", s);
	return false;
}

static bool check_module(struct ld *ld, const yaml_node_t *n)
{
	if (rq_kmod_name_ok(stext(n)))
		return true;
	lerr(ld, NPOS(n), "modules: \"%s\" is not a module name (expected [A-Za-z0-9_-]+ not starting with -, at most 55)",
	     stext(n));
	return false;
}

static bool check_need(struct ld *ld, const yaml_node_t *n)
{
	struct rq_need nd;
	char err[512];

	if (rq_need_parse(stext(n), &nd, err, sizeof(err))) {
		lerr(ld, NPOS(n), "needs: %s", err);
		return false;
	}
	free(nd.arg);
	return true;
}

/* devices: all | first-active | name[,name...] (a list of names is accepted too). */
static bool check_device_list(struct ld *ld, const yaml_node_t *n, const char *s)
{
	char *dup = xstrdup(s), *save = NULL;
	bool ok = true, any = false;

	for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		t = strtrim(t);
		any = true;
		if (!name_chars_ok(t, "_.:-")) {
			lerr(ld, NPOS(n), "devices: \"%s\" is not a device name", t);
			ok = false;
		}
	}
	if (!any) {
		lerr(ld, NPOS(n), "devices: expected all, first-active or device names");
		ok = false;
	}
	free(dup);
	return ok;
}

static bool conv_devices(struct ld *ld, yaml_document_t *doc, const yaml_node_t *n,
			 struct common *cc)
{
	const struct key_def *k = &rq_common_keys[CK_DEVICES];
	struct sb sb = SB_INIT;
	bool ok = true;

	if (n->type == YAML_SEQUENCE_NODE) {
		for (yaml_node_item_t *it = n->data.sequence.items.start;
		     it < n->data.sequence.items.top; it++) {
			yaml_node_t *e = node_at(doc, *it);
			union val v;
			if (!e)
				continue;
			if (!conv_scalar(ld, k, KEY_STR, e, &v)) {
				ok = false;
				continue;
			}
			if (strchr(v.s, ',') || !strcmp(v.s, "all") || !strcmp(v.s, "first-active") ||
			    !check_device_list(ld, e, v.s)) {
				if (strchr(v.s, ',') || !strcmp(v.s, "all") ||
				    !strcmp(v.s, "first-active"))
					lerr(ld, NPOS(e), "devices: \"%s\" in a list: expected a device name",
					     v.s);
				ok = false;
			} else {
				sb_addf(&sb, "%s%s", sb.len ? "," : "", strtrim(v.s));
			}
			free(v.s);
		}
		if (ok && !sb.len) {
			lerr(ld, NPOS(n), "devices: expected all, first-active or device names, got an empty list");
			ok = false;
		}
	} else {
		union val v;
		if (!conv_scalar(ld, k, KEY_STR, n, &v))
			return false;
		if (!strcmp(v.s, "all") || !strcmp(v.s, "first-active")) {
			sb_adds(&sb, v.s);
		} else if (check_device_list(ld, n, v.s)) {
			char *save = NULL;
			for (char *t = strtok_r(v.s, ",", &save); t; t = strtok_r(NULL, ",", &save))
				sb_addf(&sb, "%s%s", sb.len ? "," : "", strtrim(t));
		} else {
			ok = false;
		}
		free(v.s);
	}
	if (!ok) {
		sb_release(&sb);
		return false;
	}
	free(cc->devices);
	cc->devices = sb_detach(&sb);
	return true;
}

/* opensm 3.3.23's -R names (opensm --help), and its no_fallback. */
static bool check_routing(struct ld *ld, const yaml_node_t *n, const char *v)
{
	static const char *const engines[] = { "minhop", "updn", "dnup", "file", "ftree", "lash", "dor",
		"torus-2QoS", "nue", "dfsssp", "sssp", "no_fallback", NULL };
	char *copy = xstrdup(v), *save = NULL;
	bool ok = *v != '\0';

	for (char *t = strtok_r(copy, ",", &save); t && ok; t = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; engines[i] && strcmp(engines[i], strtrim(t)); i++)
			;
		if (!engines[i]) {
			lerr(ld, NPOS(n), "routing_engine: \"%s\" is not an opensm routing engine (minhop, updn, "
			     "dnup, file, ftree, lash, dor, torus-2QoS, nue, dfsssp, sssp, no_fallback)", strtrim(t));
			ok = false;
		}
	}
	if (!*v)
		lerr(ld, NPOS(n), "routing_engine: empty (minhop, updn, ftree, ...)");
	free(copy);
	return ok;
}

bool conv_common(struct ld *ld, int ck, const struct ent *e, struct common *cc)
{
	const struct key_def *k = &rq_common_keys[ck];
	elem_check_fn check = NULL;
	bool dedup = false;

	switch (ck) {
	case CK_DEVICES:
		return conv_devices(ld, ld->doc, e->v, cc);
	case CK_NAME:
		check = check_name;
		break;
	case CK_TARGETS:
		check = check_target;
		break;
	case CK_PAIRS:
		check = check_pairs;
		break;
	case CK_NEEDS:
		check = check_need;
		dedup = true;
		break;
	case CK_TAGS:
		dedup = true;
		break;
	case CK_ROUTING:
		if (!conv_key(ld, ld->doc, k, e->pre, e->v, cc, NULL, false))
			return false;
		return check_routing(ld, e->v, cc->routing_engine);
	case CK_MODULES:
		check = check_module;
		dedup = true;
		break;
	case CK_JUDGE:
		check = check_judge;
		dedup = true;
		break;
	case CK_DAEMON_ALLOWED:
		/* a reason is what the key is for: an empty one says nothing */
		if (!conv_key(ld, ld->doc, k, e->pre, e->v, cc, NULL, false))
			return false;
		if (!*strtrim(cc->daemon_allowed)) {
			lerr(ld, NPOS(e->v), "daemon_allowed: empty (say why a process of the case may outlive it)");
			return false;
		}
		return true;
	case CK_VM_MEMORY:
		/* 0 is "the run's"; a guest smaller than 128 MiB does not boot. */
		if (!conv_key(ld, ld->doc, k, e->pre, e->v, cc, NULL, false))
			return false;
		if (cc->vm_memory && cc->vm_memory < (128u << 20)) {
			lerr(ld, NPOS(e->v), "vm_memory: %s is below the 128MiB a guest needs "
			     "(0: the run's)", stext(e->v));
			return false;
		}
		return true;
	}
	return conv_key(ld, ld->doc, k, e->pre, e->v, cc, check, dedup);
}

int common_index(const char *key)
{
	for (int i = 0; i < CK_COUNT; i++)
		if (!strcmp(rq_common_keys[i].name, key))
			return i;
	return -1;
}


bool common_allowed(int ck, const struct rq_kind *kind)
{
	if (ck == CK_FABRIC || ck == CK_FABRIC_SM || ck == CK_ROUTING || ck == CK_SM_CONFIG || ck == CK_QOS_POLICY ||
	    ck == CK_SM_PARTITIONS)
		return kind && kind->needs_fabric;
	/* The driver kind's own modules: key checks modules, it loads none. */
	if (ck == CK_MODULES)
		return kind && kind->loads_modules;
	return ck >= 0;
}

void common_release(struct common *cc)
{
	rq_cfg_release(rq_common_keys, cc);
}

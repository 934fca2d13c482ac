/* SPDX-License-Identifier: MIT */
/*
 * The case model: typed key tables (fio-style option rows), loaded cases,
 * and requirements.  A kind declares its keys as rows of struct key_def;
 * one generic loader (loader.c) converts, range-checks and reports every
 * mistake as file:line:column.
 */
#ifndef RQ_CASE_H
#define RQ_CASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum key_type {
	KEY_STR,	/* char *                                   */
	KEY_INT,	/* long long, range [min, max]              */
	KEY_DOUBLE,	/* double, range [dmin, dmax]               */
	KEY_BOOL,	/* bool: true/false/yes/no                  */
	KEY_ENUM,	/* int: index into choices[]                */
	KEY_DURATION,	/* int64_t milliseconds: "500ms" "30s" "2m" "1h"   */
	KEY_SIZE,	/* uint64_t bytes: "64" "4KiB" "1MiB" "1GiB" "10KB" */
	KEY_LIST,	/* struct rq_list of elem type (STR/INT/ENUM/SIZE/DURATION) */
};

struct key_def {
	const char *name;
	enum key_type type;
	size_t offset;			/* offsetof(kind cfg, field) */
	const char *def;		/* default as it would be written in YAML; NULL: unset */
	long long min, max;		/* KEY_INT / KEY_SIZE / KEY_DURATION range; min == max == 0: none */
	double dmin, dmax;		/* KEY_DOUBLE range; both 0: none */
	const char *const *choices;	/* KEY_ENUM, or KEY_LIST of KEY_ENUM: NULL-terminated */
	enum key_type elem;		/* KEY_LIST element type */
	bool required;
	const char *help;		/* one line, shown by `rdmaqual help KIND` and docs/ */
};

#define KEY_END { .name = NULL }

/* A list value: str[] always filled (canonical text); num[] for numeric elems. */
struct rq_list {
	size_t n;
	char **str;
	int64_t *num;
};

/* Where a value came from, for messages about it at run time. */
struct rq_pos {
	const char *file;
	unsigned line, col;	/* 1-based */
};

/* A requirement from needs: */
enum need_type {
	NEED_ROOT,		/* root */
	NEED_MODULE,		/* module:NAME (live in /sys/module, root-relative) */
	NEED_CMD,		/* cmd:NAME (in PATH) */
	NEED_LINK_LAYER,	/* link_layer:IB|Ethernet (some port has it) */
	NEED_MEMLOCK,		/* memlock:SIZE (RLIMIT_MEMLOCK soft limit) */
	NEED_DEVICE,		/* device (at least one RDMA device) */
	NEED_FILE,		/* file:PATH (root-relative path exists) */
};

struct rq_need {
	enum need_type type;
	char *arg;
	uint64_t size;		/* NEED_MEMLOCK */
};

/* Parse one needs: entry ("root", "module:rdma_rxe", "memlock:64MiB"...)
 * into nd (nd->arg malloc'd); 0, or -EINVAL with the reason in err. */
int rq_need_parse(const char *s, struct rq_need *nd, char *err, size_t errsz);

struct rq_kind;

/*
 * The case's effective keys as written (after defaults: and merge keys),
 * each part with the position it was written at: a case travels to an
 * agent (VM, peer) in this form and is loaded there by the same loader,
 * which reports any error at the case file's own line and column.
 * Scalars are kept as their text: the loader converts from text either way.
 */
struct rq_src_val {
	char *text;
	unsigned line, col;
};

struct rq_src_key {
	char *key;
	unsigned line, col;		/* of the key */
	bool list;			/* a sequence: items v[0..nv) (may be 0) */
	unsigned vline, vcol;		/* of the value (the sequence itself for a list) */
	struct rq_src_val *v;		/* scalar: v[0] */
	size_t nv;
};

struct rq_case {
	char *name;
	const struct rq_kind *kind;
	char *summary;
	char **tags;		size_t ntags;
	char **targets;		size_t ntargets;	/* allowed targets; from kind default if unset */
	struct rq_need *needs;	size_t nneeds;
	int64_t timeout_ms;	/* unscaled; scaled by rq_timeout_mul where used */
	char *devices;		/* "all" | "first-active" | comma-separated names */
	long long port;		/* 0: all/auto */
	long long gid_index;	/* -1: auto */
	int vm_cpus;		/* rxe-vm guests' vCPUs; 0: the run's */
	uint64_t vm_memory;	/* rxe-vm guests' memory in bytes; 0: the run's */
	char *pairs;		/* lab runs: the case's pairing policy, or NULL (the run's) */
	char *fabric;		/* needs_fabric kinds: the topology to simulate; NULL: the target's */
	bool fabric_sm;		/* ... and whether the target brings it up with an SM first */
	char *routing_engine;	/* ... and that SM's routing engine(s) (opensm -R); NULL: opensm's */
	char *sm_config;	/* ... its opensm.conf (-F), as the case says it; NULL: none */
	char *qos_policy;	/* ... its qos-policy.conf (-Q -Y); NULL: QoS as sm_config says */
	char *sm_partitions;	/* ... its partitions.conf (-P); NULL: none */
	char **modules;		size_t nmodules;	/* loaded before the case, unloaded after */
	bool fresh_guest;	/* rxe-vm: boot fresh guests for this case */
	bool vm_scratch;	/* rxe-vm: guests with the scratch disk at /scratch */
	bool udev;		/* rxe-vm: guests running udevd (/dev/disk/by-id) */
	char *judge;		/* figure globs judged against other runs, space-separated; NULL: the kind's key figures */
	char *daemon_allowed;	/* why a process of the case may outlive it; NULL: one that does FAILs the case */
	void *cfg;		/* kind's config struct, cfg_size bytes */
	struct rq_pos pos;	/* where the case starts */
	char *file;		/* owning file path */
	struct rq_src_key *src;	size_t nsrc;	/* effective keys as written, table order */
};

struct rq_suite {
	struct rq_case **cases;
	size_t ncases;
};

/* Diagnostics collected while loading: all errors of a file, not just the first. */
struct rq_diag {
	char *file;
	unsigned line, col;
	char *msg;
};

struct rq_diags {
	struct rq_diag *v;
	size_t n;
};

/*
 * Load one case file, appending its cases to suite and its errors to diags.
 * Returns the number of errors added (0: the file is good).  Cases of a file
 * that has errors are not added.
 */
int rq_load_file(const char *path, struct rq_suite *suite, struct rq_diags *diags);
/* Load from memory (fuzzing, agent requests); name is used in messages. */
int rq_load_buffer(const char *name, const char *text, size_t len,
		   struct rq_suite *suite, struct rq_diags *diags);
/*
 * Load files or directories (recursively, *.yaml / *.yml, sorted; names
 * starting with '.' skipped).  A path named explicitly is loaded whatever
 * its extension.  Does not check duplicates across files: call
 * rq_suite_check_dups() after.
 */
int rq_load_paths(char *const *paths, size_t npaths, struct rq_suite *suite,
		  struct rq_diags *diags);
/* Duplicate names across files are errors too; call after all loads. */
int rq_suite_check_dups(struct rq_suite *suite, struct rq_diags *diags);

void rq_suite_release(struct rq_suite *suite);
void rq_diags_release(struct rq_diags *d);
void rq_diags_print(const struct rq_diags *d, FILE *fp);

/* Is text a pairing policy (pairs:): ring, all or A:B,C:D?  0, or -1 with err. */
int rq_pairs_syntax(const char *text, char *err, size_t errsz);

/* Value conversions, shared with the CLI; 0 or -EINVAL. */
int parse_duration_ms(const char *s, int64_t *ms);
int parse_size(const char *s, uint64_t *bytes);
int parse_bool(const char *s, bool *b);
/* Decimal or 0x hex, optional sign (no octal); -EINVAL or -ERANGE. */
int parse_ll(const char *s, long long *v);
/* A finite number; -EINVAL or -ERANGE. */
int parse_double(const char *s, double *v);
/* Inverse of the parsers, largest exact unit: "90s" -> "90s", 3600000 -> "1h", 4096 -> "4KiB". */
void fmt_duration(int64_t ms, char *buf, size_t size);
void fmt_size(uint64_t bytes, char *buf, size_t size);

/* Key tables described for help and docs/kinds.md. */
struct sb;
const char *rq_key_type_name(enum key_type t);	/* "int", "duration", ... */
/* "int, 0..255, default 0" / "list of str, required" ... (appended to out) */
void rq_keys_describe(const struct key_def *k, struct sb *out);

/* The key rows every case has (name, kind, summary, tags, ...). */
extern const struct key_def rq_common_keys[];

/* Free a kind cfg's owned fields by walking its key table. */
void rq_cfg_release(const struct key_def *keys, void *cfg);
/*
 * The wire form of a case (case_wire.c): a JSON object with the case file,
 * the case's position and its effective keys (struct rq_src_key), each
 * with its position.  rq_case_wire_load() loads it back, with the same
 * checks and messages as a file and the file's own line:column.
 */
struct json_t;
struct json_t *rq_case_wire(const struct rq_case *c);
int rq_case_wire_load(const struct json_t *j, struct rq_suite *suite, struct rq_diags *diags);
/* Set key's value in a wire form to text (no position: the runner's, not the file's). */
void rq_case_wire_set(struct json_t *j, const char *key, const char *text);

/*
 * Kinds besides kinds.def, searched by rq_kind_find() too: test-only kinds
 * (unit tests, the fuzzer) with a key of every type.  At most 8.
 */
void rq_kind_register_extra(const struct rq_kind *k);
/* Every kind, registered and extra: i = 0, 1, ... until NULL. */
const struct rq_kind *rq_kind_iter(size_t i);
/*
 * Check a kind's key table (names, offsets against cfg_size, ranges, enum
 * choices, defaults that convert, help text); one line per problem appended
 * to out.  Returns the number of problems.
 */
int rq_kind_check_keys(const struct rq_kind *kind, struct sb *out);

#endif

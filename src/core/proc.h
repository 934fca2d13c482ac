/* SPDX-License-Identifier: MIT */
/*
 * Running commands: argv only, never a shell.  Each child gets its own
 * process group, PR_SET_PDEATHSIG(SIGKILL) so it dies with the runner even
 * when the runner is SIGKILLed, and a deadline after which the whole group
 * is killed (SIGTERM, then SIGKILL after a grace period).
 *
 * Output of both stdout and stderr is appended to an optional log fd (at
 * most PROC_LOG_MAX bytes per run, then the tails of both with a marker),
 * and each is kept in memory for reasons, reports and parsing: all of it
 * when it fits, else its first tail_max/4 and last tail_max bytes with a
 * "[rdmaqual: N bytes of output cut here]" line between; out_truncated /
 * err_truncated tell a kind that parses it.
 */
#ifndef RQ_PROC_H
#define RQ_PROC_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/util.h"

struct proc_opts {
	const char *const *argv;	/* argv[0] searched in PATH */
	const char *const *env_add;	/* "K=V" entries added to the environment, NULL-terminated */
	const char *cwd;		/* chdir before exec, or NULL */
	int64_t timeout_ms;		/* <= 0: no deadline (forbidden for callers; asserted) */
	int log_fd;			/* -1: no log file */
	size_t tail_max;		/* bytes of stdout/stderr tail kept (0: 4096), plus a head of a quarter */
	const char *stdin_data;		/* written to the child's stdin then closed; NULL: /dev/null */
	size_t stdin_len;
	bool keep_stdin_open;		/* give the child a pipe on stdin kept open (ibsim) */
	int64_t term_grace_ms;		/* SIGTERM -> SIGKILL grace (0: 500 ms) */
};

struct proc_result {
	int status;		/* raw wait status */
	int exit_code;		/* WEXITSTATUS, or -1 when killed */
	int signal;		/* terminating signal, or 0 */
	bool timed_out;		/* deadline expired and the group was killed */
	bool exec_failed;	/* argv[0] not found or not executable */
	int exec_errno;
	int64_t elapsed_ms;
	struct sb out;		/* stdout: all, or head + marker + tail */
	struct sb err;		/* stderr: likewise */
	bool out_truncated;	/* the middle of stdout was cut */
	bool err_truncated;
	uint64_t out_bytes;	/* what the tool wrote, cut or not */
	uint64_t err_bytes;
};

/* Bytes of one tool's output written to the log fd before only tails are. */
#define PROC_LOG_MAX (8u << 20)

void proc_result_init(struct proc_result *r);
void proc_result_release(struct proc_result *r);

/* Run to completion or deadline.  Returns 0 when the child was started
 * (inspect r), -errno when it could not be forked. */
int proc_run(const struct proc_opts *o, struct proc_result *r);

/* Describe how a finished process ended, e.g. "exited 1", "killed by
 * SIGKILL", "timed out after 5.0 s", "not found: ib_write_bw". */
void proc_describe(const struct proc_result *r, const char *name, char *buf, size_t size);

/*
 * Background children (daemons: ibsim, opensm, qemu, a server role).
 * proc_spawn starts it and returns its pid (also its pgid); output goes to
 * the fds given (or /dev/null).  proc_kill_group sends SIGTERM then SIGKILL
 * to the group after grace_ms and reaps it.  proc_wait_deadline waits for
 * exit until deadline (now_ms() based), returns 1 if exited, 0 if not.
 * proc_spawn returns -errno (never 0) when it cannot start argv[0], e.g.
 * -ENOENT; proc_wait_deadline returns -ECHILD when pid is not our child.
 * A PATH given in env_add is the one argv[0] is searched in.
 */
struct spawn_opts {
	const char *const *argv;
	const char *const *env_add;
	const char *cwd;
	int stdin_fd;	/* -1: /dev/null */
	int stdout_fd;	/* -1: /dev/null */
	int stderr_fd;	/* -1: same as stdout_fd */
};
pid_t proc_spawn(const struct spawn_opts *o);
int proc_wait_deadline(pid_t pid, int64_t deadline_ms, int *status);
void proc_kill_group(pid_t pid, int64_t grace_ms);

/*
 * Called with each child's group (its pid: every child leads a session of
 * its own) when it starts and once it is reaped and its group killed;
 * NULL: nobody listens.  The agent's workers record the groups they have
 * running, so that the agent can kill and wait for them when it kills a
 * worker (a cancelled or timed-out run): PR_SET_PDEATHSIG reaches a
 * worker's children, not what they started.
 */
extern void (*proc_group_hook)(pid_t pgid, bool started);

/* Is the named command in PATH? */
bool cmd_exists(const char *name);

/* The run-wide timeout multiplier (TCG is slow); every deadline passes through it. */
extern double rq_timeout_mul;
/*
 * Set (to the signal number) by the runner's SIGINT/SIGTERM/SIGHUP handler;
 * every wait loop checks it so a run stops promptly wherever it waits.
 */
extern volatile sig_atomic_t rq_interrupted;
/*
 * --timeout-mul takes RQ_TIMEOUT_MUL_MIN..MAX.  A scaled deadline is capped
 * at RQ_DEADLINE_MAX_MS (one week), so a case's timeout (at most 24 h) times
 * any accepted multiplier is always a deadline the agent takes.
 */
#define RQ_TIMEOUT_MUL_MIN 0.1
#define RQ_TIMEOUT_MUL_MAX 100.0
#define RQ_DEADLINE_MAX_MS (7LL * 24 * 3600 * 1000)
static inline int64_t scaled_ms(int64_t ms)
{
	double v = (double)ms * rq_timeout_mul;

	return v >= (double)RQ_DEADLINE_MAX_MS ? RQ_DEADLINE_MAX_MS : v <= 0 ? 0 : (int64_t)v;
}

#endif

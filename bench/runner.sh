#!/bin/sh
# The runner's own cost per case (printed, not judged): N cases of the
# `command` kind running /bin/true on the local target, against spawning
# /bin/true N times from a shell loop, interleaved REPS times in one run.
# Wall time and CPU time (user + system of every process: runner, agent,
# workers, commands; from the shell's `times`) per case:
#   overhead:  (runner - spawn alone) / N, the runner's part, its start included
#   ratio:     runner / spawn alone
# On a machine shared with other work, wall time includes waiting for a
# CPU at each hand-over (runner -> agent -> worker -> command and back);
# CPU time does not.
# Env: N (1000), REPS (3), RQ (./rdmaqual); RQ_BEFORE=BIN adds another build
# (an older commit's) to each round, for a before/after figure.
set -eu
cd "$(dirname "$0")/.." || exit 1
RQ=${RQ:-./rdmaqual}
N=${N:-1000}
REPS=${REPS:-3}
[ -x "$RQ" ] || { echo "build rdmaqual first (make)"; exit 1; }
T=$(mktemp -d /tmp/rq-bench-runner.XXXXXX)
trap 'rm -rf "$T"' EXIT
export RDMAQUAL_STATE_DIR="$T/state"

{
	echo "defaults:"
	echo "  targets: [local]"
	echo "  timeout: 10s"
	echo "cases:"
	i=0
	while [ $i -lt "$N" ]; do
		echo "  - name: bench.true_$i"
		echo "    kind: command"
		echo "    summary: spawn /bin/true"
		echo "    argv: [/bin/true]"
		i=$((i + 1))
	done
} >"$T/cases.yaml"

now() { date +%s%N; }
# CPU nanoseconds of this shell's waited-for children so far: `times`, line
# 2 (run in this shell: in a $(...) subshell it would see no children)
cpu() {
	times >"$T/cpu"
	awk 'NR == 2 { gsub(/s/, ""); split($1, u, "m"); split($2, y, "m");
		printf "%.0f\n", (u[1] * 60 + u[2] + y[1] * 60 + y[2]) * 1e9 }' "$T/cpu"
}
spawn_alone() {
	i=0
	while [ $i -lt "$N" ]; do /bin/true; i=$((i + 1)); done
}

# one_run BIN ROUND: the N cases through BIN; wall and cpu ns to stdout
one_run() {
	cpu >"$T/ca"; ta=$(now)
	"$1" run --report-dir "$T/rep" "$T/cases.yaml" >"$T/run.out" 2>&1 || {
		echo "run $2 failed:" >&2; tail -n 5 "$T/run.out" >&2; exit 1; }
	tb=$(now); cpu >"$T/cb"
	pass=$(jq -r '.counts.pass' "$T/rep/latest/results.json")
	[ "$pass" = "$N" ] || { echo "run $2: $pass of $N cases passed" >&2; exit 1; }
	rm -rf "$T/rep"
	echo "$((tb - ta)) $(( $(cat "$T/cb") - $(cat "$T/ca") ))"
}

echo "host: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); N=$N cases, $REPS rounds"
[ -n "${RQ_BEFORE:-}" ] && echo "before: $RQ_BEFORE ($("$RQ_BEFORE" --version))"
echo "runner: $RQ ($("$RQ" --version))"
r=1
while [ "$r" -le "$REPS" ]; do
	cpu >"$T/c0"; t0=$(now)
	spawn_alone
	t1=$(now); cpu >"$T/c1"
	line="$r $((t1 - t0)) $(( $(cat "$T/c1") - $(cat "$T/c0") )) $(one_run "$RQ" "$r")"
	[ -n "${RQ_BEFORE:-}" ] && line="$line $(one_run "$RQ_BEFORE" "$r")"
	echo "$line" >>"$T/times"
	r=$((r + 1))
done
awk -v n="$N" '
	function median(v, m,   i, j, t, w) {
		for (i = 1; i <= m; i++) w[i] = v[i]
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
			if (w[j] < w[i]) { t = w[i]; w[i] = w[j]; w[j] = t }
		return w[int((m + 1) / 2)] / 1e6
	}
	{ sw[NR] = $2; sc[NR] = $3; rw[NR] = $4; rc[NR] = $5; bw[NR] = $6; bc[NR] = $7
	  printf "  round %d: spawn alone %.0f ms (cpu %.0f), runner %.0f ms (cpu %.0f)", $1,
		$2 / 1e6, $3 / 1e6, $4 / 1e6, $5 / 1e6
	  if (NF > 5) printf ", before %.0f ms (cpu %.0f)", $6 / 1e6, $7 / 1e6
	  printf "\n"; before = NF > 5 }
	END {
		m = NR; a = median(sw, m); c = median(sc, m); b = median(rw, m); d = median(rc, m)
		printf "per case, median of %d rounds:  wall ms   cpu ms\n", m
		printf "  spawn /bin/true alone       %7.2f  %7.2f\n", a / n, c / n
		printf "  rdmaqual run                %7.2f  %7.2f\n", b / n, d / n
		printf "  runner overhead             %7.2f  %7.2f   (goal: at most 5 ms)\n",
			(b - a) / n, (d - c) / n
		printf "  ratio runner / spawn        %7.1f  %7.1f\n", b / a, (c > 0 ? d / c : 0)
		if (before) {
			e = median(bw, m); f = median(bc, m)
			printf "  before: rdmaqual run        %7.2f  %7.2f\n", e / n, f / n
			printf "  before: runner overhead     %7.2f  %7.2f\n", (e - a) / n, (f - c) / n
			printf "  before: ratio / spawn       %7.1f  %7.1f\n", e / a, (c > 0 ? f / c : 0)
		}
	}' "$T/times"

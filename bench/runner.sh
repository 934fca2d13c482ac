#!/bin/sh
# The runner's own cost per case (printed, not judged): N cases of the
# `command` kind running /bin/true on the local target, against spawning
# /bin/true N times from a shell loop, interleaved REPS times in one run.
#   per case:  runner total / N  and  spawn alone / N
#   overhead:  (runner - spawn) / N, the runner's part, its start included
#   ratio:     runner / spawn
# Env: N (1000), REPS (3), RQ (./rdmaqual).
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
spawn_alone() {
	i=0
	while [ $i -lt "$N" ]; do /bin/true; i=$((i + 1)); done
}

echo "host: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); N=$N cases, $REPS rounds"
r=1
while [ $r -le "$REPS" ]; do
	t0=$(now)
	spawn_alone
	t1=$(now)
	"$RQ" run --report-dir "$T/rep$r" "$T/cases.yaml" >"$T/run$r.out" 2>&1 || {
		echo "run $r failed:"; tail -n 5 "$T/run$r.out"; exit 1; }
	t2=$(now)
	total=$(jq -r '.counts.pass' "$T/rep$r/latest/results.json")
	[ "$total" = "$N" ] || { echo "run $r: $total of $N cases passed"; exit 1; }
	echo "$r $((t1 - t0)) $((t2 - t1))" >>"$T/times"
	rm -rf "$T/rep$r"
	r=$((r + 1))
done
awk -v n="$N" '
	{ s[NR] = $2; q[NR] = $3 }
	END {
		# medians of the rounds
		m = NR; for (i = 1; i <= m; i++) { a[i] = s[i]; b[i] = q[i] }
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) {
			if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			if (b[j] < b[i]) { t = b[i]; b[i] = b[j]; b[j] = t }
		}
		sp = a[int((m + 1) / 2)] / 1e6; rn = b[int((m + 1) / 2)] / 1e6
		for (i = 1; i <= m; i++)
			printf "  round %d: spawn alone %.0f ms, runner %.0f ms\n", i, s[i] / 1e6, q[i] / 1e6
		printf "spawn /bin/true alone:  %.2f ms per case (median of %d rounds)\n", sp / n, m
		printf "rdmaqual run:           %.2f ms per case\n", rn / n
		printf "runner overhead:        %.2f ms per case (goal: at most 5)\n", (rn - sp) / n
		printf "ratio runner / spawn:   %.1f\n", rn / sp
	}' "$T/times"

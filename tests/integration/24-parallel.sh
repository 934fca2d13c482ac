#!/bin/sh
# run --jobs (exec/par.c): targets' cases in parallel give the rows, the
# verdicts and the order of a serial run (a sysroot: replay beside local
# lint cases and cases with no target; with ibsim, ibsim beside local), an
# interrupted parallel run leaves a valid report and none of its workers,
# agents, sleeps or ibsim daemons, and a worker SIGKILLed mid-case costs
# ERROR rows that name it, never a lost row or a hang.  Only what this test
# started is checked: pids it learnt, processes with its $T in their
# environment.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

RQ=${RQ:-build/san/rdmaqual}
T=$(mktemp -d /tmp/rq-it-parallel.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
export RDMAQUAL_STATE_DIR="$T/state"
# no progress line: the console rows are compared as they are
export RQ_NO_PROGRESS=1

"$RQ" run --jobs 0 tests/cases/runner >"$T/bad.out" 2>&1
expect_eq "--jobs 0 is a usage error" 2 $?

# norm NAME: the run NAME's reports with what differs between any two runs
# (times, ids, pids, ports, scratch dirs, the command) made equal
norm() {
	d="$T/$1/latest"
	jq -S 'del(.run.id, .run.started, .run.finished, .run.hostname, .run.argv, .run.duration_s)
	       | .facts |= with_entries(select(.key | startswith("host.") | not))
	       | .results[] |= (.duration_s = 0 | .figures |= map(.value = 0))' "$d/results.json" |
		sed -E -e 's/port [0-9]+/port P/g' -e 's#/tmp/rq-[A-Za-z0-9._-]+#/tmp/rq-X#g' >"$T/$1.json"
	sed -E -e 's/ time="[0-9.]+"/ time="T"/g' -e 's/ timestamp="[^"]*"/ timestamp="TS"/' \
	       -e 's/ hostname="[^"]*"/ hostname="H"/' -e '/<property name="(host\.|argv)/d' \
	       -e 's/[0-9]+(\.[0-9]+)? s\b/N s/g' -e 's/port [0-9]+/port P/g' \
	       -e 's#/tmp/rq-[A-Za-z0-9._-]+#/tmp/rq-X#g' "$d/junit.xml" |
		# the structure, verdicts and reasons; the logs' own lines carry pids and clocks
		grep -E '<(testsuites|testsuite|testcase|failure|error|skipped|property) ' >"$T/$1.xml"
	sed -nE 's/^(PASS|FAIL|SKIP|ERROR) +([^ ]+).*/\1 \2/p' "$T/$1.out" >"$T/$1.rows"
	jq -r '.unit // empty' "$d/journal.jsonl" >"$T/$1.units"
}

# same A B WHAT: the two runs' reports, console rows and journal agree
same() {
	expect_true "$3: results.json alike (rows, verdicts, reasons, order, facts)" \
		diff -u "$T/$1.json" "$T/$2.json"
	expect_true "$3: junit.xml alike (but the logs)" diff -u "$T/$1.xml" "$T/$2.xml"
	expect_true "$3: console rows in the same order" diff -u "$T/$1.rows" "$T/$2.rows"
	expect_true "$3: journal units in the same order" diff -u "$T/$1.units" "$T/$2.units"
	diff -u "$T/$1.json" "$T/$2.json" | head -20
}

# 1. a replay beside local lint cases and cases with no target here
SR=sysroot:fixtures/nodes/cx6-hdr-ib
for j in 1 3; do
	"$RQ" run --jobs "$j" --target "$SR" --report-dir "$T/s$j" cases/driver cases/sm cases/pcie \
		>"$T/s$j.out" 2>"$T/s$j.err"
	echo $? >"$T/s$j.rc"
	norm "s$j"
done
expect_eq "sysroot: the same exit status serial and parallel" "$(cat "$T/s1.rc")" "$(cat "$T/s3.rc")"
expect_grep "sysroot: --jobs 3 ran the replay and local in workers" \
	'running 2 groups of targets at once \(--jobs 3\)' "$T/s3.err"
expect_nogrep "sysroot: --jobs 1 ran case by case" 'groups of targets at once' "$T/s1.err"
expect_true "sysroot: the plan has local and sysroot rows" \
	sh -c "grep -q '\"target\": \"local\"' '$T/s3.json' && grep -q '\"target\": \"$SR\"' '$T/s3.json'"
same s1 s3 "sysroot"
# RQ_JOBS is the default's override
RQ_JOBS=1 "$RQ" run --target "$SR" --report-dir "$T/e1" cases/sm >"$T/e1.out" 2>"$T/e1.err"
expect_nogrep "RQ_JOBS=1: case by case" 'groups of targets at once' "$T/e1.err"

if ! command -v ibsim >/dev/null ||
	! "$RQ" run --dry-run --target ibsim cases/sm/bringup.yaml >/dev/null 2>&1; then
	echo "  (no ibsim here: the ibsim, interrupt and worker-death parts are left out)"
	finish
	exit $?
fi

# 2. ibsim beside local (auto)
for j in 1 2; do
	"$RQ" run --jobs "$j" --report-dir "$T/i$j" cases/sm >"$T/i$j.out" 2>"$T/i$j.err"
	echo $? >"$T/i$j.rc"
	norm "i$j"
done
expect_eq "ibsim: the same exit status serial and parallel" "$(cat "$T/i1.rc")" "$(cat "$T/i2.rc")"
expect_grep "ibsim: --jobs 2 ran ibsim and local in workers" 'running 2 groups' "$T/i2.err"
same i1 i2 "ibsim"

# 2b. a report written mid-run has the facts of a worker's target, not only the final one
mkdir -p "$T/mid"
cat >"$T/mid/mid.yaml" <<'EOF'
cases:
  - name: mid.ibsim_quick
    kind: command
    targets: [ibsim]
    argv: ["true"]
  - name: mid.local_sleep
    kind: command
    targets: [local]
    timeout: 60s
    argv: [sleep, "47.3"]
EOF
"$RQ" run --jobs 2 --report-dir "$T/midr" "$T/mid/mid.yaml" >"$T/mid.out" 2>&1 &
pid=$!
first_row() { [ "$(jq '.results | length' "$T/midr/latest/results.json" 2>/dev/null)" = 1 ]; }
wait_for "mid-run: the worker's row is in the report while the other case runs" 60 first_row
expect_true "mid-run: its target's facts are in that report (ibsim.scratch)" \
	jq -e '.facts["ibsim.scratch"] | length > 0' "$T/midr/latest/results.json"
kill -INT "$pid"
wait "$pid"
expect_true "mid-run: no sleep of this test's left" none_with 'sleep 47' "$T"

# 3. SIGINT mid-run: two workers, each in a long case (an ibsim fabric up for one)
mkdir -p "$T/mix"
cat >"$T/mix/mix.yaml" <<'EOF'
cases:
  - name: mix.local_sleep
    kind: command
    targets: [local]
    timeout: 60s
    argv: [sleep, "47.1"]
  - name: mix.ibsim_sleep
    kind: command
    targets: [ibsim]
    timeout: 60s
    argv: [sleep, "47.2"]
  - name: mix.local_after
    kind: command
    targets: [local]
    argv: ["true"]
EOF
"$RQ" run --jobs 2 --report-dir "$T/int" "$T/mix" >"$T/int.out" 2>&1 &
pid=$!
both_sleep() { [ "$(procs_with 'sleep 47\.[12]' "$T" | wc -l)" -ge 2 ]; }
wait_for "interrupt: both workers are in their cases" 60 both_sleep
workers=$(pgrep -P "$pid" | tr '\n' ' ')
expect_true "interrupt: the runner has two workers ($workers)" [ "$(echo "$workers" | wc -w)" -eq 2 ]
t0=$(date +%s)
kill -INT "$pid"
wait "$pid"
rc=$?
took=$(( $(date +%s) - t0 ))
expect_eq "interrupt: exit status 1" 1 "$rc"
expect_true "interrupt: the run ended within 20 s of SIGINT (${took}s)" [ "$took" -lt 20 ]
R=$T/int/latest/results.json
expect_true "interrupt: results.json is valid JSON" jq -e . "$R"
expect_true "interrupt: junit.xml is well-formed" xmllint --noout "$T/int/latest/junit.xml"
expect_eq "interrupt: the two cases it held are ERROR, in plan order" \
	"mix.local_sleep:ERROR mix.ibsim_sleep:ERROR" \
	"$(jq -r '[.results[] | "\(.id):\(.verdict)"] | join(" ")' "$R")"
left=
for w in $workers; do kill -0 "$w" 2>/dev/null && left="$left $w"; done
expect_eq "interrupt: no worker left" "" "$left"
expect_true "interrupt: no sleep of this test's left" none_with 'sleep 47' "$T"
expect_true "interrupt: no agent of this test's left" none_with 'rdmaqual agent' "$T"
# ibsim gets an environment of its own: found by its run's scratch dir, which the report names
sc=$(facts_of ibsim.scratch "$T/int")
expect_true "interrupt: the report names its ibsim scratch dir ($sc)" [ -n "$sc" ]
expect_true "interrupt: no ibsim of this run's left" no_proc "${sc:-/nonexistent}/"
expect_true "interrupt: the ibsim scratch dir is gone" none_exist "$sc"

# 4. a worker SIGKILLed mid-case: its cases are ERROR naming it, the other worker's PASS
"$RQ" run --jobs 2 --report-dir "$T/kill" "$T/mix" >"$T/kill.out" 2>&1 &
pid=$!
wait_for "worker death: both workers are in their cases" 60 both_sleep
# the worker of local: the parent of the parent of the agent's worker running sleep 47.1
s=$(procs_with 'sleep 47\.1' "$T" | head -1)
w=$s
while [ -n "$w" ] && [ "$(ps -o ppid= -p "$w" | tr -d ' ')" != "$pid" ]; do
	w=$(ps -o ppid= -p "$w" | tr -d ' ')
	[ "$w" = 1 ] && w=
done
expect_true "worker death: found the local worker ($w)" [ -n "$w" ]
t0=$(date +%s)
[ -n "$w" ] && kill -KILL "$w"
wait "$pid"
rc=$?
expect_eq "worker death: exit status 1" 1 "$rc"
R=$T/kill/latest/results.json
expect_eq "worker death: every row there, in plan order" \
	"mix.local_sleep:ERROR mix.ibsim_sleep:PASS mix.local_after:ERROR" \
	"$(jq -r '[.results[] | "\(.id):\(.verdict)"] | join(" ")' "$R")"
expect_grep "worker death: the rows name the worker and its end" \
	"worker running target local \\(pid $w\\) was killed by signal 9" "$R"
expect_true "worker death: no sleep of this test's left" none_with 'sleep 47' "$T"
sc=$(facts_of ibsim.scratch "$T/kill")
expect_true "worker death: no ibsim of this run's left" no_proc "${sc:-/nonexistent}/"
expect_true "worker death: the ibsim scratch dir is gone" none_exist "$sc"
finish

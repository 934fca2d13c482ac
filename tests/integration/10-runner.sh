#!/bin/sh
# The runner end to end on the local target: lint errors with positions,
# every outcome, timeouts, filters, the node lock, and a run killed with
# SIGKILL or interrupted with SIGINT still leaving a valid report and no
# process behind.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

RQ=${RQ:-build/san/rdmaqual}
T=$(mktemp -d /tmp/rq-it-runner.XXXXXX)
trap 'rm -rf "$T"' EXIT
export RDMAQUAL_STATE_DIR="$T/state"

# 1. lint: every mistake of a file, each with file:line:column
"$RQ" lint tests/cases/bad >"$T/lint.out" 2>&1
expect_eq "lint exit status" 2 $?
expect_grep "unknown key with position and hint" 'mistakes.yaml:6:5:.*argvv.*did you mean "argv"' "$T/lint.out"
expect_grep "duration without unit" 'mistakes.yaml:10:14:.*duration' "$T/lint.out"
expect_grep "unknown kind with hint" 'mistakes.yaml:12:11:.*comand.*did you mean "command"' "$T/lint.out"
"$RQ" lint tests/cases/runner >/dev/null 2>&1
expect_eq "lint of good files" 0 $?

# 2. every outcome
start=$(date +%s)
"$RQ" run --report-dir "$T/rep" tests/cases/runner >"$T/run.out" 2>&1
expect_eq "run exit status with failures" 1 $?
took=$(( $(date +%s) - start ))
expect_true "hanging case killed at its 1 s timeout (run took ${took}s)" [ "$took" -lt 15 ]
J="$T/rep/latest/junit.xml"
R="$T/rep/latest/results.json"
expect_true "junit.xml is well-formed XML" xmllint --noout "$J"
if [ -f tests/junit-10.xsd ]; then
	expect_true "junit.xml follows the junit-10 schema" xmllint --noout --schema tests/junit-10.xsd "$J"
fi
for pair in runner.pass:PASS runner.fail_exit:FAIL runner.fail_output:FAIL \
	    runner.skip_needs:SKIP runner.error_missing:ERROR runner.error_timeout:ERROR; do
	name=${pair%%:*}; want=${pair#*:}
	got=$(jq -r --arg n "$name" '.results[] | select(.id == $n) | .verdict' "$R")
	expect_eq "verdict of $name" "$want" "$got"
done
expect_grep "skip names every unmet need" 'rdmaqual-no-such-tool.*no_such_module' "$R"
expect_grep "console has one line per case" 'runner.error_timeout' "$T/run.out"
expect_true "no sleep left by the timed-out case" none_with "^sleep 30.3" "$T/state"

# 3. filters that select nothing are an error, not a green run
"$RQ" run --report-dir "$T/rep" -k 'no.such.*' tests/cases/runner >/dev/null 2>&1
expect_eq "empty selection exit status" 2 $?
"$RQ" run --report-dir "$T/rep" -k 'runner.pass' tests/cases/runner >/dev/null 2>&1
expect_eq "a passing selection" 0 $?
"$RQ" run --report-dir "$T/rep" --fail-on-skip -k 'runner.skip*' tests/cases/runner >/dev/null 2>&1
expect_eq "--fail-on-skip turns a skip into failure" 1 $?

# 4. dry run
"$RQ" run --dry-run tests/cases/runner >"$T/dry.out" 2>&1
expect_grep "dry run names the target and why" 'runner.skip_needs.*local' "$T/dry.out"
expect_grep "dry run lists requirements" 'needs cmd:rdmaqual-no-such-tool' "$T/dry.out"

# 5. SIGKILL mid-run: valid report of what finished, nothing left running
"$RQ" run --report-dir "$T/k" tests/cases/slow >/dev/null 2>&1 &
pid=$!
wait_for "the run reaches the hanging case" 20 grep -q slow.second "$T/k/latest/junit.xml"
sleep 0.5
kill -9 $pid
wait $pid 2>/dev/null
expect_true "report after SIGKILL is well-formed" xmllint --noout "$T/k/latest/junit.xml"
expect_grep "finished cases are in it" 'slow.second' "$T/k/latest/junit.xml"
expect_nogrep "unstarted cases are not" 'never_reached' "$T/k/latest/junit.xml"
# the journal: one row a line, appended (and fsynced) as each case ended
J="$T/k/latest/journal.jsonl"
expect_grep "the journal starts with the run's command" '^\{"argv":\[' "$J"
expect_eq "then the two finished cases, a line each" "slow.first slow.second" \
	"$(jq -r '.unit // empty' "$J" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"
expect_eq "... with the rows results.json has" "$(jq -r '[.results[].id] | join(" ")' "$T/k/latest/results.json")" \
	"$(jq -r '.rows[]?.id' "$J" | tr '\n' ' ' | sed 's/ $//')"
wait_for "no process of the killed run remains" 5 none_with "^sleep 31.7" "$T/state"

# 6. the node lock
"$RQ" run --report-dir "$T/l" -k slow.hang tests/cases/slow >/dev/null 2>&1 &
pid=$!
wait_for "first run holds the lock" 10 test -s "$T/state/lock"
sleep 0.3
"$RQ" run --report-dir "$T/l2" -k runner.pass tests/cases/runner >"$T/lock.out" 2>&1
expect_eq "second run refused" 1 $?
expect_grep "refusal names the holder" 'another run holds this node' "$T/lock.out"

# 7. SIGINT ends the run promptly with a report, once the case runs (a
# signal before its first case leaves no row to say "interrupted"): its
# sleep is up, ours by the state dir in its environment
our_sleep() { [ -n "$(procs_with '^sleep 31.7' "$T/state")" ]; }
wait_for "the hanging case runs" 10 our_sleep
kill -INT $pid
wait $pid
expect_eq "interrupted run exit status" 1 $?
expect_true "report after SIGINT is well-formed" xmllint --noout "$T/l/latest/junit.xml"
expect_grep "interrupted case is an error" 'interrupted' "$T/l/latest/results.json"
expect_true "no sleep left after SIGINT" none_with "^sleep 31.7" "$T/state"

# 8. an opt-in target that cannot work here says why
if [ ! -d "/lib/modules/$(uname -r)" ] && [ ! -d /sys/module/rdma_rxe ]; then
	"$RQ" run --report-dir "$T/h" --target rxe-host tests/cases/runner-hosts >"$T/h.out" 2>&1
	expect_eq "forced rxe-host without rdma_rxe fails the run" 1 $?
	expect_grep "the reason names the missing module" 'ERROR.*rxe-host.*rdma_rxe' "$T/h.out"
	"$RQ" run --report-dir "$T/h" tests/cases/runner-hosts >"$T/h2.out" 2>&1
	expect_grep "auto never picks rxe-host" 'SKIP.*no target for this case here' "$T/h2.out"
fi

# 9. --profile: where the time went, by target, on stdout and in the run's facts
printf 'defaults:\n  targets: [local]\ncases:\n' >"$T/prof.yaml"
for c in a b c; do
	printf '  - {name: prof.%s, kind: command, argv: [sleep, "0.3"]}\n' "$c" >>"$T/prof.yaml"
done
"$RQ" run --profile --report-dir "$T/p" "$T/prof.yaml" >"$T/p.out" 2>&1
expect_eq "profiled run exit status" 0 $?
expect_grep "the table names the target and its three cases" '^  local +[0-9.]+ +3 ' "$T/p.out"
prof=$(jq -r '.facts["profile.local"]' "$T/p/latest/results.json")
expect_true "the fact says three cases ($prof)" sh -c "echo '$prof' | grep -q '3 cases: place '"
expect_true "... whose run time covers the three sleeps ($prof)" \
	awk -v s="$prof" 'BEGIN { sub(/.* run /, "", s); exit !(s + 0 >= 0.9) }'
"$RQ" run --report-dir "$T/p2" "$T/prof.yaml" >"$T/p2.out" 2>&1
expect_eq "without --profile: no profile fact" null "$(jq -r '.facts["profile.local"]' "$T/p2/latest/results.json")"

finish

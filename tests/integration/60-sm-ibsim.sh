#!/bin/sh
# Subnet-manager and fabric kinds on the ibsim target, run by the sanitizer
# build (libumad2sim must never be preloaded into rdmaqual itself): the
# shipped cases/sm/ suite passes; a 1X link and a missing link FAIL
# fabric-links naming both ends; preset error counters FAIL ib-counters at
# the right port; 4096 against ibsim's 2048 ports FAILs ib-mtu; an opensm
# that cannot bind is an ERROR saying why; the opensm.conf lint reports each
# mistake with file:line.  Afterwards no ibsim or opensm of ours runs and no
# scratch or run-state record is left, also after a run killed with SIGKILL
# and `rdmaqual cleanup`.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

RQ=${RQ:-build/san/rdmaqual}
T=$(mktemp -d /tmp/rq-it-sm.XXXXXX)
trap 'rm -rf "$T"' EXIT
export RDMAQUAL_STATE_DIR="$T/state"
# This test's processes: its runs' children inherit RDMAQUAL_STATE_DIR=$T/state.
ours() { procs_with "$1" "$T"; }

if ! "$RQ" run --dry-run --target ibsim cases/sm/bringup.yaml >/dev/null 2>&1 || ! command -v ibsim >/dev/null; then
	skip "ibsim target unavailable here"
fi

# 1. the shipped suite
"$RQ" run --state-dir "$T/state" --report-dir "$T/rep" cases/sm >"$T/suite.out" 2>&1
expect_eq "cases/sm exit status" 0 $?
R="$T/rep/latest/results.json"
expect_eq "no FAIL or ERROR in cases/sm" 0 "$(jq '[.results[] | select(.verdict == "FAIL" or .verdict == "ERROR")] | length' "$R")"
expect_eq "sm.bringup_4hca passes on ibsim" PASS "$(jq -r '.results[] | select(.id == "sm.bringup_4hca") | .verdict' "$R")"
expect_eq "sm.bringup_4hca ran on ibsim" ibsim "$(jq -r '.results[] | select(.id == "sm.bringup_4hca") | .target' "$R")"
expect_grep "opensm's log is in the case output" 'opensm log' "$T/rep/latest/logs/sm.bringup_4hca.log"
expect_eq "all 6 links of 2sw2path4hca judged" 6 "$(jq '[.results[] | select(.id | startswith("fabric.links_4hca["))] | length' "$R")"
expect_eq "two SMs: one MASTER" PASS "$(jq -r '.results[] | select(.id == "sm.single_master_two_sms") | .verdict' "$R")"

# 2. faults
"$RQ" run --state-dir "$T/state" --report-dir "$T/rf" tests/integration/sm-faults >"$T/faults.out" 2>&1
expect_eq "fault run exit status" 1 $?
F="$T/rf/latest/results.json"
v() { jq -r --arg n "$1" '.results[] | select(.id == $n) | .verdict' "$F"; }
r() { jq -r --arg n "$1" '.results[] | select(.id == $n) | .reason' "$F"; }
expect_eq "1X link FAILs" FAIL "$(v 'faults.links_1x[Switch1/2]')"
expect_true "1X reason names both ends" sh -c "echo '$(r 'faults.links_1x[Switch1/2]')' | grep -q 'Switch1 port 2 <-> Hca3 port 1 at 1X/1X, expected 4X'"
expect_eq "only that link FAILs (4X links pass)" 1 "$(jq '[.results[] | select((.id | startswith("faults.links_1x[")) and .verdict == "FAIL")] | length' "$F")"
expect_eq "missing link FAILs" FAIL "$(v 'faults.links_missing[Switch1/5]')"
expect_true "missing-link reason names both ends" sh -c "echo '$(r 'faults.links_missing[Switch1/5]')' | grep -q 'Switch1 port 5 <-> Switch2 port 5.*Switch1 port 5 Down/Polling, Switch2 port 5 Down/Polling'"
expect_eq "the other inter-switch link passes" PASS "$(v 'faults.links_missing[Switch1/3]')"
expect_eq "error counters FAIL Hca2 port 1" FAIL "$(v 'faults.counters_errors[Hca2/1]')"
expect_true "counter reason names the counter" sh -c "echo '$(r 'faults.counters_errors[Hca2/1]')' | grep -q 'SymbolErrorCounter 57'"
expect_eq "its peer Switch2 port 1 is clean" PASS "$(v 'faults.counters_errors[Switch2/1]')"
expect_eq "MTU 4096 against ibsim FAILs" FAIL "$(v 'faults.mtu_4096[Hca1/1]')"
expect_eq "opensm that cannot bind is an ERROR" ERROR "$(v faults.sm_cannot_bind)"
expect_true "its reason quotes opensm" sh -c "echo '$(r faults.sm_cannot_bind)' | grep -q 'Unable to find requested CA guid 0x1234'"
expect_eq "bad opensm.conf FAILs" FAIL "$(v faults.conf_bad)"
L="$T/rf/latest/logs/faults.conf_bad.log"
expect_grep "two guid lines explained" 'bad.conf:5: a second .guid. line.*one opensm binds one port.*second opensm' "$L"
expect_grep "typo with hint" "bad.conf:6: unknown key 'sm_priorty' \(did you mean 'sm_priority'\?\)" "$L"
expect_grep "out of range with line" "bad.conf:7: 'sm_priority' 16 is out of range 0-15" "$L"
expect_grep "repeated key with both lines" "bad.conf:10: 'sweep_interval' repeated \(first at line 9" "$L"

# 3. nothing left
expect_eq "no ibsim of ours left" "" "$(ours 'ibsim -s -n')"
expect_eq "no opensm of ours left" "" "$(ours '^opensm')"
# The runs' own scratch dirs, as their reports name them (fact ibsim.scratch).
scratch=$(facts_of ibsim.scratch "$T/rep"; facts_of ibsim.scratch "$T/rf")
expect_eq "both runs name their ibsim scratch" 2 "$(echo "$scratch" | grep -c '^/tmp/rq-ibsim-')"
expect_true "no ibsim scratch of theirs left" none_exist "$scratch"
expect_eq "no run-state record left" 0 "$(count "$T/state"/ibsm-*)"

# 4. SIGKILL in the middle of a bring-up wait, then rdmaqual cleanup
cat > "$T/slow.yaml" <<'YAML'
cases:
  - name: slow.bringup
    kind: sm-bringup
    summary: waits on a subnet that cannot come up (expects a link ibsim does not have)
    targets: [ibsim]
    fabric: 2sw2path4hca-nolink
    expect_topology: 2sw2path4hca
    deadline: 60s
    timeout: 90s
YAML
"$RQ" run --state-dir "$T/state2" --report-dir "$T/rk" "$T/slow.yaml" >"$T/kill.out" 2>&1 &
pid=$!
wait_for "opensm of the killed run started" 30 sh -c "ls $T/state2/ibsm-*.run 2>/dev/null | xargs -r grep -l '^pid' | xargs -r cat | grep -c '^pid' | grep -q 2"
# The killed run wrote no report: its scratch is the one its run-state record names.
kscratch=$(sed -n 's/^dir //p' "$T/state2"/ibsm-*.run 2>/dev/null | head -n1)
kill -9 $pid
wait $pid 2>/dev/null
expect_true "the killed run's record named its scratch ($kscratch)" test -n "$kscratch"
# The killed run's agent dies with it (PDEATHSIG), not always at once: a record
# whose writer still lives is left for the next cleanup, so retry briefly.
cleaned() {
	"$RQ" cleanup --state-dir "$T/state2" >>"$T/cleanup.out" 2>&1
	[ "$(count "$T/state2"/ibsm-*)" = 0 ]
}
wait_for "rdmaqual cleanup finished what the run left" 10 cleaned
wait_for "no ibsim of the killed run" 10 none_with 'ibsim -s -n' "$T"
expect_eq "no run-state record after cleanup" 0 "$(count "$T/state2"/ibsm-*)"
expect_true "its ibsim scratch is gone after cleanup" none_exist "$kscratch"
finish

#!/bin/sh
# QoS and identity on ibsim.  rdmaqual fabric qos-lint names each mistake
# of a qos-policy.conf at file:line:column and passes a valid one; a case's
# qos_policy: is linted by rdmaqual lint the same way.  opensm -Q with an
# opensm.conf's qos_* options and a policy: every port's SL2VL and VLArb
# tables pass (4 HCA ports, 8 switch ports); a plan with another SL2VL
# table FAILs naming the ports; a qos_sl2vl VL beyond the ports' OperVLs
# (opensm folds it onto another VL) FAILs; an HCA port that drops SL-to-VL
# MADs FAILs naming it.  A duplicated port GUID FAILs fabric-health's guids row
# naming both ports.  opensm -P with a partitions.conf: every HCA port's
# P_Key table passes (full and limited members, the Default partition); a
# plan that puts one more port in a partition FAILs naming its missing
# P_Key; a membership flag opensm does not know, a file opensm refused and
# the SM's own port made limited each FAIL saying so.  A policy opensm
# dropped (an IPoIB rule on a partition without two full members) FAILs the
# policy row quoting opensm's ERR lines.
# Nothing of ours is left running (ibsim, opensm) and no run-state record
# (daemon or scratch dir) is left.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

RQ=${RQ:-build/san/rdmaqual}
T=$(mktemp -d /tmp/rq-it-qos.XXXXXX)
trap 'rm -rf "$T"' EXIT
export RDMAQUAL_STATE_DIR="$T/state"

# the lint needs no fabric
cat > "$T/bad.conf" <<'POLICY'
port-groups
    port-group
        name: Storage
        port-guid: 0x10000000000001
    end-port-group
end-port-groups
qos-levels
    qos-level
        name: DEFAULT
        sl: 20
    end-qos-level
end-qos-levels
qos-match-rules
    qos-match-rule
        destination: Storge
        qos-level-name: DEFAULT
    end-qos-match-rule
end-qos-match-rules
POLICY
"$RQ" fabric qos-lint "$T/bad.conf" >"$T/lint.out" 2>"$T/lint.err"
expect_eq "qos-lint of a bad policy: exit 1" 1 $?
expect_grep "SL out of range at file:line:col" "bad.conf:10:13: error: sl: 20 is out of range" "$T/lint.err"
expect_grep "undefined group at file:line:col" "bad.conf:15:22: error: port-group \"Storge\" is used but not defined" "$T/lint.err"
sed -e 's/sl: 20/sl: 2/' -e 's/Storge/Storage/' "$T/bad.conf" > "$T/good.conf"
"$RQ" fabric qos-lint "$T/good.conf" >"$T/lint.out" 2>"$T/lint.err"
expect_eq "qos-lint of the fixed policy: exit 0" 0 $?
expect_grep "... and says what it read" "1 port group\(s\), 1 QoS level\(s\), 1 match rule\(s\), 0 ULP rule\(s\), no errors" "$T/lint.out"

if ! "$RQ" run --dry-run --target ibsim cases/sm/bringup.yaml >/dev/null 2>&1 || ! command -v ibsim >/dev/null; then
	skip "ibsim target unavailable here"
fi

# a case's qos_policy: is linted with the case file
cp tests/integration/qos-cases/opensm-qos.conf "$T/"
cp "$T/bad.conf" "$T/qos-policy.conf"
sed -e 's/^  sm_config: .*/  sm_config: opensm-qos.conf/' tests/integration/qos-cases/qos.yaml > "$T/qos.yaml"
"$RQ" lint "$T/qos.yaml" >"$T/clint.out" 2>&1
expect_eq "rdmaqual lint of a case with a bad policy: exit 2 (invalid case file)" 2 $?
expect_grep "... naming the policy's file:line:col" "qos_policy: .*/qos-policy.conf:10:13: sl: 20 is out of range" "$T/clint.out"

"$RQ" run --state-dir "$T/state" --report-dir "$T/rq" tests/integration/qos-cases/qos.yaml >"$T/qout" 2>&1
expect_eq "qos run exit status" 1 $?
R="$T/rq/latest/results.json"
v() { jq -r --arg n "$1" '.results[] | select(.id == $n) | .verdict' "$R"; }
r() { jq -r --arg n "$1" '.results[] | select(.id == $n) | .reason' "$R"; }
fig() { jq --arg n "$1" --arg f "$2" '.results[] | select(.id == $n) | .figures[] | select(.name == $f) | .value' "$R"; }
for row in qos.ok 'qos.ok[policy]' 'qos.ok[sl2vl]' 'qos.ok[vlarb]'; do
	expect_eq "healthy: $row passes" PASS "$(v "$row")"
done
expect_eq "healthy: 12 ports judged (4 HCA, 8 switch)" 12 "$(fig qos.ok ports)"
settle=$(jq -r '.results[] | select(.id == "qos.ok") | .facts.settle_sl2vl_vlarb_tables' "$R")
expect_true "healthy: the tables judged once two reads a sweep apart agreed ($settle)" sh -c "echo '$settle' | grep -Eq '^[1-9][0-9]* ms$'"
expect_eq "planned other SL2VL: FAIL" FAIL "$(v 'qos.planned_other[sl2vl]')"
expect_eq "... every one of the 12 ports" 12 "$(fig 'qos.planned_other[sl2vl]' bad_ports)"
expect_true "... named by switch port and in/out row" sh -c "echo '$(r 'qos.planned_other[sl2vl]')' | grep -q 'leaf02 port 1 (in 0, out 1): SL 1 -> VL 0, the plan (sl2vl:) asks VL 1'"
expect_eq "... VLArb still as configured" PASS "$(v 'qos.planned_other[vlarb]')"
expect_eq "a VL beyond the ports' OperVLs: FAIL on all 12 ports" 12 "$(fig 'qos.vl_beyond[sl2vl]' bad_ports)"
expect_true "... naming what opensm programmed instead" sh -c "echo '$(r 'qos.vl_beyond[sl2vl]')' | grep -q 'qos_sl2vl maps SL 8 to VL 9, beyond its OperVLs VL0-7 (opensm programs VL 1)'"
expect_eq "a policy opensm dropped: FAIL" FAIL "$(v 'qos.policy_refused[policy]')"
expect_true "... quoting opensm's own lines" sh -c "echo '$(r 'qos.policy_refused[policy]')' | grep -q 'opensm did not take .*qos-policy.conf and runs without a QoS policy: yyerror: ERR AC05: Syntax error (line 4:27): IPoIB partition, pkey 0x7FFF - partition has less than two full members; osm_qos_parse_policy_file: ERR AC03: Failed parsing QoS policy file'"
expect_eq "... its tables, from opensm.conf, still as configured" PASS "$(v 'qos.policy_refused[sl2vl]')"
expect_eq "a port that drops SL2VL MADs: FAIL" FAIL "$(v 'qos.no_sl2vl[sl2vl]')"
expect_true "... naming it" sh -c "echo '$(r 'qos.no_sl2vl[sl2vl]')' | grep -q '^1 problem(s): h04 HCA-1 port 1: no SL2VL table'"

"$RQ" run --state-dir "$T/state" --report-dir "$T/rh" tests/integration/qos-cases/health.yaml >"$T/hout" 2>&1
expect_eq "health run exit status" 1 $?
R="$T/rh/latest/results.json"
expect_eq "dup-port-guid: guids FAILs" FAIL "$(v 'health.dup_port_guid[guids]')"
expect_eq "dup-port-guid: both ports named" \
	"duplicated port GUID 0x0002c90300000011: h02 HCA-1 port 2 (behind leaf01 port 2) and h01 HCA-1 port 1 (behind leaf01 port 1)" \
	"$(r 'health.dup_port_guid[guids]')"
expect_eq "dup-port-guid: the second port has no LID" "1 LID problem(s): h02 HCA-1 port 2 has no LID" \
	"$(r 'health.dup_port_guid[lids]')"
expect_eq "dup-port-guid: descriptions still fine" PASS "$(v 'health.dup_port_guid[descriptions]')"

expect_eq "pkeys: every HCA port's table as partitions.conf asks" PASS "$(v 'health.pkeys[pkeys]')"
expect_eq "pkeys: 4 HCA ports judged" 4 "$(jq '.results[] | select(.id == "health.pkeys[pkeys]") | .figures[] | select(.name == "ca_ports") | .value' "$R")"
expect_eq "missing pkey: FAIL naming the port and the P_Key" \
	"1 P_Key problem(s): h03 HCA-1 port 1: P_Key 0x8002 (storage, full member) missing" "$(r 'health.pkey_missing[pkeys]')"
expect_eq "no pkeys row without a partitions.conf" "" "$(v 'health.dup_port_guid[pkeys]')"
# partitions.conf as opensm reads it: the tables match that reading in each
# case below, and the row names what the file made opensm do
expect_eq "=ful, =limi taken as opensm takes them; =FULL named as no flag opensm knows" \
	"1 P_Key problem(s): $PWD/tests/integration/qos-cases/partitions-prefix.conf: line 5: membership flag 'FULL' is not one opensm knows (full, limited, both, by prefix and case): opensm makes the port a limited member" \
	"$(r 'health.pkeys_prefix[pkeys]')"
expect_true "a file opensm refused: FAIL quoting its fallback" sh -c "echo '$(r 'health.pkeys_refused[pkeys]')' | grep -q '^1 P_Key problem(s): opensm refused .*partitions-refused.conf (line 5: bad PortGUID) and runs its default partitions: every port a full member of Default 0x7fff only (opensm: \"osm_prtn_make_partitions: Partition configuration in error; retrying with default config\")'"
# has TEXT RE: TEXT (a reason that may hold a quote) matches RE
has() { printf '%s\n' "$1" | grep -q -- "$2"; }
expect_true "the SM's own port made limited: the SA unreachable" has "$(r 'health.pkeys_sm_limited[pkeys]')" \
	"^1 P_Key problem(s): .*partitions-sm-limited.conf line 6 makes the SM's port (h01 HCA-1 port 1) a limited member of the Default partition: the SA becomes unreachable"

expect_eq "no ibsim of ours left" "" "$(pgrep -f "ibsim -s -n /tmp/rq-ibsim" | while read -r p; do grep -qa "$T" "/proc/$p/environ" 2>/dev/null && echo "$p"; done)"
expect_eq "no opensm of ours left" "" "$(pgrep -x opensm | while read -r p; do grep -qa "$T" "/proc/$p/environ" 2>/dev/null && echo "$p"; done)"
# The target records each daemon and scratch dir in the run state before it
# starts it and removes the record once it is gone: no record left, nothing
# left (other runs on this host have /tmp/rq-ibsim-* dirs of their own).
expect_eq "no run-state record left" 0 "$(count "$T"/state/ibsm-*.run)"
# The run's own scratch dir, as its report names it (fact ibsim.scratch).
scratch=$(facts_of ibsim.scratch "$T/rh")
expect_true "the run names its ibsim scratch ($scratch)" test -n "$scratch"
expect_true "and it is gone" none_exist "$scratch"
echo "62-fabric-qos: $_checks checks, $_fails failed"
[ "$_fails" -eq 0 ]

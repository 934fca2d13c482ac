#!/bin/sh
# QoS and identity on ibsim.  rdmaqual fabric qos-lint names each mistake
# of a qos-policy.conf at file:line:column and passes a valid one.  A
# duplicated port GUID FAILs fabric-health's guids row naming both ports.
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

"$RQ" run --state-dir "$T/state" --report-dir "$T/rh" tests/integration/qos-cases/health.yaml >"$T/hout" 2>&1
expect_eq "health run exit status" 1 $?
R="$T/rh/latest/results.json"
v() { jq -r --arg n "$1" '.results[] | select(.id == $n) | .verdict' "$R"; }
r() { jq -r --arg n "$1" '.results[] | select(.id == $n) | .reason' "$R"; }
expect_eq "dup-port-guid: guids FAILs" FAIL "$(v 'health.dup_port_guid[guids]')"
expect_eq "dup-port-guid: both ports named" \
	"duplicated port GUID 0x0002c90300000011: h02 HCA-1 port 2 (behind leaf01 port 2) and h01 HCA-1 port 1 (behind leaf01 port 1)" \
	"$(r 'health.dup_port_guid[guids]')"
expect_eq "dup-port-guid: the second port has no LID" "1 LID problem(s): h02 HCA-1 port 2 has no LID" \
	"$(r 'health.dup_port_guid[lids]')"
expect_eq "dup-port-guid: descriptions still fine" PASS "$(v 'health.dup_port_guid[descriptions]')"

expect_eq "no ibsim of ours left" "" "$(pgrep -f "ibsim -s -n /tmp/rq-ibsim" | while read -r p; do grep -qa "$T" "/proc/$p/environ" 2>/dev/null && echo "$p"; done)"
expect_eq "no opensm of ours left" "" "$(pgrep -x opensm | while read -r p; do grep -qa "$T" "/proc/$p/environ" 2>/dev/null && echo "$p"; done)"
# The target records each daemon and scratch dir in the run state before it
# starts it and removes the record once it is gone: no record left, nothing
# left (other runs on this host have /tmp/rq-ibsim-* dirs of their own).
expect_eq "no run-state record left" 0 "$(count "$T"/state/ibsm-*.run)"
echo "62-fabric-qos: $_checks checks, $_fails failed"
[ "$_fails" -eq 0 ]

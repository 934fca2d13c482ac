#!/bin/sh
# A lab run against real lab nodes: four QEMU guests with rxe on one L2
# segment (vm/lab-rig.sh), each reached by ssh with keys made here.
# `rdmaqual run --nodes vm[0-3] --launcher ssh`: every guest's node-local
# row and every ring pair's RC ping-pong and RDMA WRITE bandwidth over the
# rxe rails pass, and results.json carries the lab matrix.  Then vm2's rxe
# link is deleted and a second run must name vm2, and only vm2, as the
# suspect and in the drain list.  Afterwards no QEMU, namespace or rig dir
# is left.  Boots guests: run it under flock /tmp/rq-vm.lock.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

if [ "${1:-}" = --inside ]; then
	# In the rig's namespace, guests up; $2 is the test's dir.
	T=$2
	C=tests/integration/lab-vm-cases
	RQ=${RQ_VM:-./rdmaqual}
	"$RQ" run --nodes "$RQ_LAB_NODES" --launcher ssh --pairs ring \
		--report-dir "$T/good" $C >"$T/good.out" 2>&1
	echo "$?" >"$T/good.rc"
	ssh -F "$RDMAQUAL_SSH_CONFIG" -o BatchMode=yes vm2 "$PWD/${RQ#./}" rxe del rxe0 \
		>"$T/degrade.out" 2>&1
	echo "$?" >"$T/degrade.rc"
	"$RQ" run --nodes "$RQ_LAB_NODES" --launcher ssh --pairs ring \
		--drain-list "$T/drain.txt" --report-dir "$T/bad" $C >"$T/bad.out" 2>&1
	echo "$?" >"$T/bad.rc"
	echo "$RQ_LAB_DIR" >"$T/rig.dir"
	cp "$RQ_LAB_DIR"/console-vm*.log "$T/" 2>/dev/null
	exit 0
fi

if [ "$(id -u)" -ne 0 ] || [ ! -x /usr/sbin/sshd ]; then
	skip "needs root and openssh-server (make deps)"
fi
vm_test_setup labvm
start=$(date +%s)
vm/lab-rig.sh -n 4 -- sh "$0" --inside "$T" >"$T/rig.out" 2>&1
rc=$?
expect_eq "rig booted 4 guests and ran the inner script" 0 "$rc"
[ "$rc" -eq 0 ] || sed 's/^/    | /' "$T/rig.out" | tail -20
echo "  (rig + two lab runs: $(($(date +%s) - start)) s)"

expect_eq "healthy lab run exits 0" 0 "$(cat "$T/good.rc" 2>/dev/null)"
[ "$(cat "$T/good.rc" 2>/dev/null)" = 0 ] || tail -30 "$T/good.out" | sed 's/^/    | /'
g=$T/good/latest/results.json
expect_true "healthy run wrote results.json" test -s "$g"
expect_eq "node-local row PASSes on every guest" 4 \
	"$(jq '[.results[] | select(.id|startswith("lab.rxe_port[")) | select(.verdict=="PASS")] | length' "$g" 2>/dev/null)"
expect_eq "4 ring pairs x 2 cases PASS over rxe0" 8 \
	"$(jq '[.results[] | select(.peer_node) | select(.verdict=="PASS")] | length' "$g" 2>/dev/null)"
expect_eq "a pair row names both rails" 1 \
	"$(jq '[.results[] | select(.id=="lab.write_64k[vm0:rxe0/1->vm1:rxe0/1]")] | length' "$g" 2>/dev/null)"
expect_eq "a 4x4 matrix for the bandwidth case" 4 \
	"$(jq '.lab.matrices[] | select(.case=="lab.write_64k") | .values | length' "$g" 2>/dev/null)"
expect_eq "no suspects when all is well" 0 "$(jq '.lab.suspects | length' "$g" 2>/dev/null)"
[ "$(jq '.lab.suspects | length' "$g" 2>/dev/null)" = 0 ] || jq -c '.lab.suspects[]' "$g" | sed 's/^/    | /'

expect_eq "vm2's rxe0 deleted over ssh" 0 "$(cat "$T/degrade.rc" 2>/dev/null)"
b=$T/bad/latest/results.json
expect_true "degraded run fails" test "$(cat "$T/bad.rc" 2>/dev/null)" != 0
expect_eq "vm2's node-local row FAILs" FAIL \
	"$(jq -r '.results[] | select(.id=="lab.rxe_port[vm2]") | .verdict' "$b" 2>/dev/null)"
expect_eq "the others' node-local rows PASS" 3 \
	"$(jq '[.results[] | select(.id|startswith("lab.rxe_port[")) | select(.verdict=="PASS")] | length' "$b" 2>/dev/null)"
expect_eq "vm2 is the one suspect" vm2 \
	"$(jq -r '[.lab.suspects[] | if .link then .node + "-" + .link else .node end] | join(",")' "$b" 2>/dev/null)"
expect_eq "the drain list names vm2 alone" vm2 "$(cut -d' ' -f1 "$T/drain.txt" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"

rig_gone "$T/rig.out"
[ "$_fails" -eq 0 ] || { tail -5 "$T"/console-vm*.log 2>/dev/null | sed 's/^/    | /'; }
finish

#!/bin/sh
# MPI across N rxe guests: `--vm-topology vm4` boots four guests on one
# bridge, sshd in each with keys made for the boot.  A user's own MPI
# program runs from vm0 as a plain command case (mpirun --hostfile
# {hostfile} -np {np}), rdmaqual-coll's allreduce, alltoall and bisection
# pass across the four guests over RDMA (UCX on rc_verbs, every guest's rxe
# counters grown) with every result checked, and with vm3's sshd stopped a
# collective is an ERROR in mpirun's and ssh's own words.  Afterwards no
# QEMU, namespace or run dir of the test is left.  Boots guests: run it
# under flock /work/vm.lock (or /tmp/rq-vm.lock) on a shared host.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

if [ "$(id -u)" -ne 0 ] || [ ! -x /usr/sbin/sshd ] || ! command -v mpirun >/dev/null ||
	[ ! -x build/rdmaqual-coll ]; then
	echo "  SKIP: needs root, openssh-server, Open MPI and build/rdmaqual-coll (make deps all)"
	exit 0
fi
vm_test_setup collvm
C=tests/integration/collective-cases
start=$(date +%s)
"$RQ" run --target rxe-vm --vm-topology vm4 --accel "${RQ_ACCEL:-tcg}" --report-dir "$T/rep" \
	"$C/vm.yaml" >"$T/run.out" 2>&1
rc=$?
took=$(($(date +%s) - start))
R=$T/rep/latest/results.json
verdict() { jq -r --arg n "$1" '.results[] | select(.case == $n) | .verdict' "$R"; }
fact() { jq -r --arg n "$1" --arg f "$2" '.results[] | select(.case == $n) | .facts[$f] // empty' "$R"; }
fig() { jq -r --arg n "$1" --arg f "$2" '.results[] | select(.case == $n) | .figures[] | select(.name == $f) | .value' "$R"; }
expect_eq "the run exits 1 (the unreachable node ERRORs)" 1 "$rc"
expect_eq "a user's own MPI program across the four guests" PASS "$(verdict vmmpi.own_program)"
expect_eq "allreduce across four guests" PASS "$(verdict vmmpi.allreduce)"
expect_eq "... four ranks on vm0..vm3" "vm0,vm1,vm2,vm3" "$(fact vmmpi.allreduce nodes)"
expect_true "... a busbw figure at 32 KiB, its largest size" [ -n "$(fig vmmpi.allreduce busbw_32KiB)" ]
expect_eq "alltoall across four guests" PASS "$(verdict vmmpi.alltoall)"
for c in allreduce alltoall bisection; do
	expect_eq "... $c over RDMA: UCX on rc_verbs over rxe0" "ucx rc_verbs/rxe0:1 rdma" \
		"$(fact vmmpi.$c mpi_pml) $(fact vmmpi.$c ucx_transports) $(fact vmmpi.$c transport_used)"
	expect_true "... $c: every guest's rxe port counted packets" sh -c \
		"echo '$(fact vmmpi.$c rdma_counters)' | grep -Eq '^vm0: [1-9][0-9]* packets.*; vm1: [1-9][0-9]* packets.*; vm2: [1-9][0-9]* packets.*; vm3: [1-9][0-9]* packets'"
done
expect_eq "bisection across four guests" PASS "$(verdict vmmpi.bisection)"
expect_true "... a link figure vm0->vm2" [ -n "$(fig vmmpi.bisection link_vm0_vm2)" ]
expect_eq "vm3 unreachable at launch: ERROR" ERROR "$(verdict vmmpi.unreachable)"
expect_grep "... in ssh's and mpirun's words" "ssh: connect to host vm3 port 22: Connection refused|ORTE was unable to reliably start" "$T/run.out"
echo "  (run took ${took}s: $(grep -c '^PASS\|^FAIL\|^ERROR\|^SKIP' "$T/run.out") rows)"
sed -n 's/^\(PASS\|FAIL\|ERROR\|SKIP\) *\([^ ]*\) *\([0-9.]*s\).*/    \1 \2 \3/p' "$T/run.out"
owner=$(vm_record_owner)
expect_true "no QEMU of the run left" no_proc "/tmp/rq-$owner-"
expect_eq "no run dir left" 0 "$(count /tmp/rq-"$owner"-*)"
expect_true "no segment namespace left" sh -c "! ip netns list | grep -q 'rqvm-$owner-'"
echo "  $_checks checks, $_fails failed"
[ "$_fails" -eq 0 ]

#!/bin/sh
# Failure paths of the rxe-vm boot, with short deadlines: a guest whose init
# never becomes ready (RQ_VM_INIT_MODE=hang boots an init that only sleeps)
# gives ERROR with a clear reason within its deadline, and leaves no QEMU,
# socket or temp dir behind.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

vm_test_setup vmnr

# 8 s: under a loaded host (two make checks) a TCG guest took over 4 s to
# reach the init that prints rq.mode=hang, so the console tail held only
# the kernel's PCI lines and the reason could not quote it.
start=$(date +%s)
RQ_VM_INIT_MODE=hang RQ_VM_READY_TIMEOUT_MS=8000 \
	"$RQ" run --target rxe-vm --accel tcg --vm-topology vm1 --report-dir "$T/rep" \
	tests/integration/vm-cases >"$T/run.out" 2>&1 &
runner=$!
# The QEMUs' dirs are /tmp/rq-<pid of the process that booted them>-N.XXXXXX: learn
# that pid from the run-state record while the run is going.
owner=$(vm_owner "$runner")
wait $runner
rc=$?
expect_true "the run recorded its guests in the run state (owner pid ${owner:-none})" [ -n "$owner" ]
took=$(( $(date +%s) - start ))
expect_eq "run exit status" 1 "$rc"
expect_grep "every case ERROR with the reason" '^ERROR +vm\.driver_rxe .*not ready within the deadline \(the guest init never reported ready\)' "$T/run.out"
expect_grep "the reason quotes the console" 'console: .*rq\.mode=hang' "$T/run.out"
expect_grep "the second case is not retried into another boot" '^ERROR +vm\.devinfo_rxe0 .*not ready within the deadline' "$T/run.out"
expect_true "failed within its 8 s deadline plus image check (${took}s < 16s)" [ "$took" -lt 16 ]
# Only this run's QEMUs (other runs may have guests up).
expect_true "no QEMU of the run left" no_proc "/tmp/rq-${owner:-none}-[0-9]+\.[^/]+/vm"
expect_true "no temp dir of the run left" sh -c "! ls -d /tmp/rq-${owner:-none}-* 2>/dev/null | grep -q ."
expect_true "no run-state record left" sh -c "! ls '$T/state'/rxevm-* 2>/dev/null | grep -q ."

# A guest kernel that is not there at all: a clear error, no QEMU started.
"$RQ" run --target rxe-vm --accel tcg --kernel /nonexistent/vmlinuz --modules "$T" \
	--report-dir "$T/rep2" tests/integration/vm-cases >"$T/run2.out" 2>&1
expect_eq "run exit status with a bad --kernel" 1 $?
expect_grep "bad --modules named" 'ERROR +vm\.driver_rxe .*no rdma_rxe module under' "$T/run2.out"
finish

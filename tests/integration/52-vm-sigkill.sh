#!/bin/sh
# A runner SIGKILLed mid-case on rxe-vm leaves no QEMU behind once
# `rdmaqual cleanup` has run: the process table holds no QEMU whose argv
# names the run's dir, and the dir (sockets, consoles) and the run-state
# record are gone.  A runner interrupted with SIGINT stops its guests
# itself, with no cleanup needed.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

vm_test_setup vmkill

"$RQ" run --target rxe-vm --accel tcg --report-dir "$T/rep" tests/integration/vm-slow \
	>"$T/run.out" 2>&1 &
runner=$!
rec="$T/state/rxevm-$runner"
# Both QEMUs recorded with their pids, both guests ready (the case is running).
both_up() {
	[ "$(grep -c '^vm [1-9]' "$rec" 2>/dev/null)" = 2 ] || return 1
	rd=$(sed -n 's/^vm [0-9]* //p' "$rec" | head -n1)
	grep -q RQ-READY "$rd/vm0.console" && grep -q RQ-READY "$rd/vm1.console"
}
wait_for "runner recorded two ready guests" 90 both_up
dir=$(sed -n 's/^vm [0-9]* //p' "$rec" | head -n1)
qpids=$(sed -n 's/^vm \([1-9][0-9]*\) .*/\1/p' "$rec" | tr '\n' ' ')
expect_true "QEMUs of the run are running ($qpids)" pgrep -f "$dir/"
sleep 1
kill -KILL "$runner"
wait "$runner" 2>/dev/null
"$RQ" cleanup >"$T/cleanup.out" 2>&1
expect_eq "cleanup exit status" 0 $?
sed 's/^/    | /' "$T/cleanup.out"
wait_for "no QEMU of the killed run in the process table" 10 no_proc "$dir/"
# Gone, or a zombie waiting for init to reap it (it no longer runs).
gone() { ! kill -0 "$1" 2>/dev/null || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
for p in $qpids; do
	wait_for "QEMU pid $p is gone" 10 gone "$p"
done
expect_true "the run's dir (sockets, consoles) is removed" sh -c "[ ! -e '$dir' ]"
expect_true "the run-state record is removed" sh -c "[ ! -e '$rec' ]"

# SIGINT: the runner stops its guests and removes its dir and record itself.
"$RQ" run --target rxe-vm --accel tcg --report-dir "$T/rep2" tests/integration/vm-slow \
	>"$T/run2.out" 2>&1 &
runner=$!
second_up() {
	o=$(vm_record_owner)
	[ -n "$o" ] && grep -qs RQ-READY /tmp/rq-"$o"-*/vm1.console
}
wait_for "second run: guests up" 90 second_up
owner=$(vm_record_owner)
kill -INT "$owner"
wait "$runner" 2>/dev/null
expect_grep "the run says it was stopped" 'stopped by signal 2' "$T/run2.out"
expect_true "no QEMU of the interrupted run" no_proc "/tmp/rq-$owner-"
expect_true "its dir is removed" sh -c "! ls -d /tmp/rq-$owner-* 2>/dev/null | grep -q ."
expect_true "its record is removed" sh -c "[ ! -e '$T/state/rxevm-$owner' ]"
finish

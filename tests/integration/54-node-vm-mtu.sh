#!/bin/sh
# The mtu kind's set mode on real rxe inside a QEMU guest: the netdev MTU is
# set through SIOCSIFMTU, active_mtu follows with rxe's formula (MTU - 80),
# and the old MTU is back for the next case; the driver kind passes there
# with its rxe profile.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

vm_test_setup nodevm

"$RQ" run --target rxe-vm --vm-topology vm1 --report-dir "$T/rep" tests/integration/node-vm >"$T/run.out" 2>&1
rc=$?
sed 's/^/    | /' "$T/run.out"
expect_eq "run exit status" 0 $rc
expect_grep "4180 gives 4096 on rxe" '^PASS +nodevm\.a_set_4180\[rxe0/1\]' "$T/run.out"
expect_grep "MTU restored for the next case" '^PASS +nodevm\.b_restored\[rxe0/1\]' "$T/run.out"
expect_grep "600 gives 512" '^PASS +nodevm\.c_set_600\[rxe0/1\]' "$T/run.out"
expect_grep "driver rxe profile in the guest" '^PASS +nodevm\.d_driver\[rxe0/1\]' "$T/run.out"
expect_grep "the set was logged with the old value" 'set eth0 MTU 1500 -> 4180 \(was 1500\)' "$T/rep/latest/logs/"*a_set_4180*
expect_grep "the restore was logged" 'restore eth0 MTU 1500: ok' "$T/rep/latest/logs/"*a_set_4180*
finish

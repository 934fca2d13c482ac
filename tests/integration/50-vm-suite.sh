#!/bin/sh
# rxe-vm end to end, one vm2 boot for the whole suite: driver presence and
# a command inside the guests, then faults injected inside them: a kernel
# WARNING fails the case that was running, a guest panic makes its case
# ERROR with the console tail and the next case runs on fresh guests.  At
# the end no QEMU, socket or temp dir of the run is left.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

vm_test_setup vm

start=$(date +%s)
# The project's own driver, MTU and verbs suites run in the same boot, before
# the faults (the panic reboots the guests).
suites=
for d in cases/driver cases/mtu cases/verbs; do [ -d "$d" ] && suites="$suites $d"; done
# shellcheck disable=SC2086
"$RQ" run --target rxe-vm --report-dir "$T/rep" tests/integration/vm-cases $suites tests/integration/vm-faults \
	>"$T/run.out" 2>&1 &
runner=$!
# The QEMUs' dirs are /tmp/rq-<pid of the process that booted them>-N.XXXXXX: learn
# that pid from the run-state record while the run is going.
owner=$(vm_owner "$runner")
wait $runner
rc=$?
expect_true "the run recorded its guests in the run state (owner pid ${owner:-none})" [ -n "$owner" ]
took=$(( $(date +%s) - start ))
sed 's/^/    | /' "$T/run.out"
expect_eq "run exit status (one FAIL, one ERROR injected)" 1 $rc
J="$T/rep/latest/junit.xml"
R="$T/rep/latest/results.json"
expect_grep "driver presence passes inside the guest" '^PASS +vm\.driver_rxe\[rxe0/1\]' "$T/run.out"
expect_grep "driver opened rxe0 through libibverbs and queried its port" '"verbs": *"opened; 1 port, fw' "$R"
expect_grep "ibv_devinfo in the guest sees rxe0 ACTIVE" '^PASS +vm\.devinfo_rxe0' "$T/run.out"
expect_nogrep "the project's driver/mtu/verbs cases neither fail nor error in the guests" '^(FAIL|ERROR) +(driver|mtu|verbs)\.' "$T/run.out"
for c in dev_fd std_streams module_autoload loop_control debugfs boot_config real_root writable_root scratch_odirect udev_by_id udev_dm_by_id writable_root_fresh; do
	expect_grep "the guest as a whole Linux: $c" "^PASS +vmlinux\\.$c " "$T/run.out"
done
expect_true "... and the host's tree untouched by the guest's writes" sh -c \
	"[ ! -e /etc/rq-vmlinux-written ] && [ ! -e /mnt/rq-vmlinux-x ]"
expect_grep "kernel WARNING fails the case" '^FAIL +vmfault\.a_kernel_warning .*kernel log of vm0:.*WARNING: CPU: 0 PID: 1 at rdmaqual-injected' "$T/run.out"
expect_grep "guest panic is ERROR naming the panic" '^ERROR +vmfault\.b_guest_panic .*Kernel panic' "$T/run.out"
expect_grep "the case after the panic runs on fresh guests" '^PASS +vmfault\.c_after_panic' "$T/run.out"
expect_grep "console tail in the panicked case's system-out" 'console of vm0 \(tail\)' "$J"
expect_grep "accelerator in the report facts" '"vm\.accel": *"(tcg|kvm)"' "$R"
expect_grep "the scratch disk in the report facts" '"vm\.scratch": *"for cases with vm_scratch: /scratch, ext4 on virtio-blk' "$R"
expect_grep "udevd in the report facts" '"vm\.udev": *"for cases with udev or vm_scratch: the host.s systemd-udevd' "$R"
expect_grep "guest kernel in the report facts" '"vm\.guest_kernel": *"[0-9]' "$R"
expect_grep "topology vm2 by default" '"vm\.topology": *"vm2"' "$R"
expect_grep "the two guests joined by a unix stream link" '"vm\.link": *"unix stream"' "$R"
expect_grep "boots for vmlinux.scratch_odirect (a disk), writable_root_fresh (fresh), vm-smoke (no disk), the panic (one more when KVM was probed)" '"vm\.boots": *"[56]"' "$R"
expect_true "consoles kept in the run dir" sh -c "ls $T/rep/latest/console-vm1-boot*.log"
expect_true "suite took under 3 minutes (${took}s)" [ "$took" -lt 180 ]
# Only this run's QEMUs (other runs may have guests up).
expect_true "no QEMU of the run left" no_proc "/tmp/rq-${owner:-none}-[0-9]+\.[^/]+/vm"
expect_true "no temp dir of the run left" sh -c "! ls -d /tmp/rq-${owner:-none}-* 2>/dev/null | grep -q ."
expect_true "no run-state record left" sh -c "! ls '$T/state'/rxevm-* 2>/dev/null | grep -q ."
# A failed run's guests are gone with $T: their consoles' last lines go to
# the test's output (a CI log), where the next one to look finds them.
if [ "$_fails" -ne 0 ]; then
	for c in "$T"/rep/latest/console-*.log; do
		[ -f "$c" ] || continue
		echo "  --- tail of $(basename "$c")"
		tail -n 15 "$c" | sed 's/^/  | /'
	done
fi
finish

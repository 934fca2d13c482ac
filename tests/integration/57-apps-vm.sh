#!/bin/sh
# Any program on the guests (command-pair, guest environment), on vm2 under
# TCG with one boot for all: the shipped cases/apps (qperf, fi_pingpong,
# ucx_perftest, rping) pass with their figures; a server that never prints
# its ready text fails at its deadline naming it; a client that exits
# non-zero fails with its output in the log; one that never ends is
# stopped at the deadline with both sides' output in the log; placeholders are the other
# guest's address and name; vm1 resolves in vm0; a non-root process
# registers 64 MiB (and cannot under memlock: 8MiB); vm_cpus reboots the
# guests with the vCPUs a case asks for.  Then `vm boot` with both guests
# answering ~400 KB at once: every answer arrives whole, vm1's prefixed.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

vm_test_setup apps

# The helper lives under build/ of this checkout: the guests see it over 9p
# (they cover /tmp with their own tmpfs, so not in $T).
mkdir -p build/tests
cc -std=gnu11 -Wall -Wextra -O2 -o build/tests/regmr tests/helpers/regmr.c -libverbs || {
	echo "  FAIL: cannot build tests/helpers/regmr.c"
	exit 1
}
REGMR=$(pwd)/build/tests/regmr
cat >"$T/regmr.yaml" <<EOT
defaults:
  targets: [rxe-vm]
cases:
  - name: afault.g_regmr_nobody
    kind: command
    summary: a non-root process registers 64 MiB (memlock unlimited in the guest)
    timeout: 30s
    argv: [setpriv, --reuid=65534, --regid=65534, --clear-groups, "$REGMR", rxe0, "67108864"]
    stdout_contains: "registered 67108864 bytes on rxe0 as uid 65534"

  - name: afault.g2_command_memlock
    kind: command
    summary: memlock 8MiB on the command kind (registering 64 MiB as nobody fails)
    timeout: 30s
    memlock: 8MiB
    argv: [setpriv, --reuid=65534, --regid=65534, --clear-groups, "$REGMR", rxe0, "67108864"]
    exit: 1
    stdout_contains: "ibv_reg_mr of 67108864 bytes failed"

  - name: afault.h_memlock_key
    kind: command-pair
    summary: memlock 8MiB is applied (registering 64 MiB as nobody fails)
    timeout: 30s
    memlock: 8MiB
    server: ["true"]
    client: [setpriv, --reuid=65534, --regid=65534, --clear-groups, "$REGMR", rxe0, "67108864"]
    exit: 1
    stdout_contains: "ibv_reg_mr of 67108864 bytes failed"

  - name: afault.z_vm_cpus
    kind: command
    summary: vm_cpus 2 boots guests with two vCPUs
    timeout: 30s
    vm_cpus: 2
    argv: [nproc]
    stdout_contains: "2"
EOT

start=$(date +%s)
"$RQ" run --target rxe-vm --vm-topology vm2 --accel "${RQ_ACCEL:-tcg}" --report-dir "$T/rep" \
	cases/apps tests/integration/apps-faults "$T/regmr.yaml" >"$T/run.out" 2>&1 &
pid=$!
wait $pid
rc=$?
took=$(( $(date +%s) - start ))
sed 's/^/    | /' "$T/run.out"
R="$T/rep/latest/results.json"
L="$T/rep/latest/logs"
expect_eq "run exit status (three failures on purpose)" 1 $rc
for c in qperf_rc_bw qperf_rc_lat fi_pingpong_msg fi_pingpong_dgram fi_pingpong_rdm ucx_tag_bw_rc ucx_tag_lat_rc \
	ucx_tag_bw_ud ucx_tag_lat_ud rping; do
	expect_grep "apps.$c passes" "^PASS +apps\\.$c " "$T/run.out"
done
fig() { jq -r --arg n "$1" --arg f "$2" \
	'.results[] | select(.case == $n) | .figures[] | select(.name == $f) | .value' "$R"; }
for nf in apps.qperf_rc_bw:rc_bw apps.qperf_rc_lat:rc_lat apps.fi_pingpong_msg:mb_per_sec \
	apps.fi_pingpong_dgram:usec_per_xfer apps.fi_pingpong_rdm:mb_per_sec apps.ucx_tag_bw_rc:bw \
	apps.ucx_tag_lat_rc:lat apps.ucx_tag_bw_ud:bw apps.ucx_tag_lat_ud:lat apps.rping:pings; do
	v=$(fig "${nf%%:*}" "${nf#*:}")
	expect_true "${nf%%:*} reports ${nf#*:} > 0 (${v:-none})" awk -v v="${v:-0}" 'BEGIN { exit !(v > 0) }'
done
expect_grep "a server that never prints its ready text fails naming it" \
	'^FAIL +afault\.a_never_ready +[0-9.]+s +client not started: the server side failed \(server side: server sleep never printed its ready text "now listening" within' "$T/run.out"
# shellcheck disable=SC2016 # $3 is awk's
expect_true "... at its 15 s deadline, not later" awk '/afault\.a_never_ready/ { t=$3; sub("s","",t); exit !(t+0 < 25) }' "$T/run.out"
expect_grep "a client that exits non-zero fails" \
	'^FAIL +afault\.b_client_fails .*client ls exited 2 \(expected exit 0\)' "$T/run.out"
expect_grep "... with its output in the log" 'No such file or directory' "$L/afault.b_client_fails.log"
expect_grep "a client that never ends is stopped at the deadline" \
	'^FAIL +afault\.i_client_hangs +[0-9.]+s +client tail did not finish before the deadline' "$T/run.out"
expect_grep "... the stopped client's output is in the log" '^vm0$' "$L/afault.i_client_hangs.log"
expect_grep "... and so is the stopped server's" '^vm1$' "$L/afault.i_client_hangs.log"
expect_grep "placeholders: the client's peer is vm1's rxe address" '^PASS +afault\.c_placeholders' "$T/run.out"
expect_grep "... and the server's peer is vm0's" 'server sees peer=10.77.0.1 host=vm0 port=[0-9]+' \
	"$L/afault.c_placeholders.log"
expect_grep "getent hosts vm1 works in vm0" '^PASS +afault\.d_hosts' "$T/run.out"
expect_grep "hostname -f works in vm0" '^PASS +afault\.e_hostname' "$T/run.out"
expect_grep "ib_umad is loaded" '^PASS +afault\.f_umad' "$T/run.out"
expect_grep "a non-root process registers 64 MiB" '^PASS +afault\.g_regmr_nobody' "$T/run.out"
expect_grep "memlock: 8MiB is applied to the programs" '^PASS +afault\.h_memlock_key' "$T/run.out"
expect_grep "... and to the command kind's" '^PASS +afault\.g2_command_memlock' "$T/run.out"
expect_grep "vm_cpus: 2 gives guests two vCPUs" '^PASS +afault\.z_vm_cpus' "$T/run.out"
expect_true "suite took under 4 minutes (${took}s)" [ "$took" -lt 240 ]
expect_true "no QEMU of the run left" no_proc "/tmp/rq-$pid-[0-9]+/vm"

# vm boot relays both guests' answers on one stdout: large ones must not
# interleave.  Requests go in through a fifo held open until both answers
# are out (the pump stops the guests at EOF).
mkfifo "$T/in"
"$RQ" vm boot --topology vm2 --accel "${RQ_ACCEL:-tcg}" <"$T/in" >"$T/boot.out" 2>&1 &
bpid=$!
exec 3>"$T/in"
big='"argv":["seq","1","60000"],"timeout_ms":60000}'
printf '{"v":1,"id":1,"op":"exec",%s\nvm1 {"v":1,"id":2,"op":"exec",%s\n' "$big" "$big" >&3
answers() { [ "$(grep -c '"id":[12],"ok":true' "$T/boot.out")" -eq 2 ]; }
wait_for "vm boot: both guests answer" 120 answers
exec 3>&-
wait $bpid
whole() {
	# each answer a line of its own that parses, its output complete
	grep '^{.*"id":1,' "$T/boot.out" | jq -e '.out | endswith("\n60000\n")' &&
		grep '^vm1 {.*"id":2,' "$T/boot.out" | cut -c5- | jq -e '.out | endswith("\n60000\n")'
}
expect_true "vm boot: each ~400 KB answer arrives whole, vm1's prefixed" whole
expect_true "vm boot left no QEMU" no_proc "/tmp/rq-$bpid-[0-9]+/vm"
finish

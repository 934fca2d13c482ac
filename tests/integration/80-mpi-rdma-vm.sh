#!/bin/sh
# MPI over RDMA between two rxe guests, on both guest kernels (Debian 12's
# 6.1 and bookworm-backports' 6.12): the collective kind's default carries
# the bytes over Open MPI's UCX pml on rc_verbs, the run names the
# transport it really used, and every guest's rxe port counted the
# packets.  `transport: tcp` passes over TCP; a case whose mpi_args take
# ob1 (TCP) FAILs, and so does a collective after vm1 lost its rxe link,
# in UCX's and Open MPI's own words.  Boots guests: run it under flock
# /work/vm.lock (or /tmp/rq-vm.lock) on a shared host.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

if [ "$(id -u)" -ne 0 ] || [ ! -x /usr/sbin/sshd ] || ! command -v mpirun >/dev/null ||
	[ ! -x build/rdmaqual-coll ]; then
	echo "  SKIP: needs root, openssh-server, Open MPI and build/rdmaqual-coll (make deps all)"
	exit 0
fi
vm_test_setup mpirdma
C=tests/integration/collective-cases/rdma.yaml
# versus: tcp beside a run that is already TCP is a case-file error
printf 'cases:\n  - name: v\n    kind: collective\n    transport: tcp\n    versus: tcp\n' >"$T/versus.yaml"
"$RQ" lint "$T/versus.yaml" >"$T/lint.out" 2>&1
expect_eq "versus: tcp with transport: tcp does not lint" 2 "$?"
expect_grep "... saying why" "versus: tcp runs rdmaqual-coll again over TCP beside a run over another transport" "$T/lint.out"
for kernel in bookworm bookworm-backports; do
	rep=$T/rep-$kernel
	"$RQ" run --target rxe-vm --vm-topology vm2 --kernel "debian:$kernel" \
		--accel "${RQ_ACCEL:-tcg}" --report-dir "$rep" "$C" >"$T/run-$kernel.out" 2>&1
	rc=$?
	R=$rep/latest/results.json
	k=$(jq -r '.facts["vm.guest_kernel"] // "?"' "$R" 2>/dev/null)
	verdict() { jq -r --arg n "$1" '.results[] | select(.case == $n) | .verdict' "$R"; }
	fact() { jq -r --arg n "$1" --arg f "$2" '.results[] | select(.case == $n) | .facts[$f] // empty' "$R"; }
	reason() { jq -r --arg n "$1" '.results[] | select(.case == $n) | .reason // empty' "$R"; }
	echo "  guest kernel $k (debian:$kernel)"
	expect_eq "[$kernel] the run exits 1 (the ob1 and broken-rxe cases FAIL)" 1 "$rc"
	for c in allreduce alltoall bisection; do
		expect_eq "[$kernel] $c over RDMA passes" PASS "$(verdict "rdmampi.$c")"
		expect_eq "[$kernel] ... Open MPI's pml was ucx" ucx "$(fact "rdmampi.$c" mpi_pml)"
		expect_eq "[$kernel] ... UCX carried it on rc_verbs over rxe0" "rc_verbs/rxe0:1" \
			"$(fact "rdmampi.$c" ucx_transports)"
		expect_eq "[$kernel] ... transport_used rdma" rdma "$(fact "rdmampi.$c" transport_used)"
		expect_true "[$kernel] ... both guests' rxe ports counted packets" sh -c \
			"echo '$(fact "rdmampi.$c" rdma_counters)' | grep -Eq '^vm0: [1-9][0-9]* packets .*; vm1: [1-9][0-9]* packets'"
	done
	fig() { jq -r --arg n "$1" --arg f "$2" '.results[] | select(.case == $n) | .figures[] | select(.name == $f) | .value' "$R"; }
	v=rdmampi.cpu_versus_tcp
	expect_eq "[$kernel] the allreduce over RDMA and over TCP, side by side" PASS "$(verdict $v)"
	expect_eq "[$kernel] ... the first over RDMA, the second over ob1's tcp" "rdma / pml ob1, btl tcp" \
		"$(fact $v transport_used) / $(fact $v versus_transport_used)"
	for f in cpu_s_per_GB tcp_cpu_s_per_GB cpu_ranks_s tcp_cpu_ranks_s busbw tcp_busbw; do
		expect_true "[$kernel] ... $f above 0 ($(fig $v $f))" awk -v x="$(fig $v $f)" 'BEGIN { exit !(x + 0 > 0) }'
	done
	expect_true "[$kernel] ... the CPU-per-GB ratio is theirs ($(fig $v cpu_per_GB_ratio))" awk \
		-v r="$(fig $v cpu_per_GB_ratio)" -v a="$(fig $v cpu_s_per_GB)" -v b="$(fig $v tcp_cpu_s_per_GB)" \
		'BEGIN { exit !(r > 0 && (r - a / b) < 1e-6 && (a / b - r) < 1e-6) }'
	expect_eq "[$kernel] transport: tcp passes" PASS "$(verdict rdmampi.tcp_asked)"
	expect_eq "[$kernel] ... over ob1's tcp btl" "ob1 tcp tcp" \
		"$(fact rdmampi.tcp_asked mpi_pml) $(fact rdmampi.tcp_asked mpi_btl) $(fact rdmampi.tcp_asked transport_used)"
	expect_eq "[$kernel] mpi_args taking ob1 FAIL" FAIL "$(verdict rdmampi.ob1_fallback)"
	expect_eq "[$kernel] ... naming what carried it" \
		"allreduce went over TCP, not RDMA (pml ob1, btl tcp); say transport: tcp if that is meant" \
		"$(reason rdmampi.ob1_fallback)"
	expect_true "[$kernel] ... and the rxe ports carried nothing" sh -c \
		"echo '$(fact rdmampi.ob1_fallback rdma_counters)' | grep -q '^vm0: 0 packets (at most 0 B); vm1: 0 packets'"
	expect_eq "[$kernel] vm1's rxe link deleted" PASS "$(verdict rdmampi.break_rxe)"
	expect_eq "[$kernel] the collective then FAILs, not passes over TCP" FAIL "$(verdict rdmampi.broken)"
	expect_true "[$kernel] ... in Open MPI's words, naming vm1" sh -c \
		"echo '$(reason rdmampi.broken)' | grep -q '^MPI could not carry the allreduce over RDMA: \[vm1:[0-9]*\] PML ucx cannot be selected'"
	# every row, with its reason (cut): a flaky one says why in CI's log
	grep -E '^(PASS|FAIL|ERROR|SKIP) ' "$T/run-$kernel.out" | cut -c1-400 | sed 's/^/    /'
done
owner=$(vm_record_owner)
expect_true "no QEMU of the run left" no_proc "/tmp/rq-$owner-"
expect_eq "no run dir left" 0 "$(count /tmp/rq-"$owner"-*)"
expect_true "no segment namespace left" sh -c "! ip netns list | grep -q 'rqvm-$owner-'"
echo "  $_checks checks, $_fails failed"
[ "$_fails" -eq 0 ]

#!/bin/sh
# A lab run through Slurm across real lab nodes: the four-guest rig
# (vm/lab-rig.sh --slurm) with munged + slurmctld in the rig's namespace and
# munged + slurmd in every guest.  `salloc -N4 rdmaqual run --nodes slurm
# --launcher slurm --pairs ring`: srun starts `rdmaqual agent --stdio` on
# each guest, every node-local row and every ring pair's RC ping-pong and
# RDMA WRITE bandwidth over the rxe rails pass, and results.json carries the
# lab matrix.  Afterwards no Slurm daemon, QEMU, namespace or rig dir is
# left.  Boots guests: run it under flock /tmp/rq-vm.lock.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

if [ "${1:-}" = --inside ]; then
	# In the rig's namespace, guests and Slurm up; $2 is the test's dir.
	T=$2
	RQ=$(readlink -f "${RQ_VM:-./rdmaqual}")
	sinfo -h -N -o '%N %T' >"$T/sinfo.out" 2>&1
	timeout 300 salloc -N4 --time=5 "$RQ" run --nodes slurm --launcher slurm --pairs ring \
		--report-dir "$T/good" tests/integration/lab-vm-cases >"$T/good.out" 2>&1
	echo "$?" >"$T/good.rc"
	# salloc returns while its steps complete: give them a few seconds.
	i=0
	while squeue -h -s >"$T/squeue.out" 2>&1 && [ -s "$T/squeue.out" ] && [ $i -lt 30 ]; do
		sleep 0.5
		i=$((i + 1))
	done
	echo "$RQ_LAB_DIR" >"$T/rig.dir"
	cp "$RQ_LAB_DIR"/console-vm*.log "$T/" 2>/dev/null
	cp "$RQ_LAB_DIR"/slurm/log/slurmctld.log "$RQ_LAB_DIR"/slurm/*.pid "$T/" 2>/dev/null
	exit 0
fi

if [ "$(id -u)" -ne 0 ] || [ ! -x /usr/sbin/sshd ]; then
	skip "needs root and openssh-server (make deps)"
fi
for b in slurmctld slurmd salloc srun munged mungekey; do
	if ! command -v $b >/dev/null 2>&1; then
		skip "needs slurmctld, slurmd, slurm-client, munge (make deps)"
	fi
done
vm_test_setup slurmvm
start=$(date +%s)
vm/lab-rig.sh -n 4 --slurm -- sh "$0" --inside "$T" >"$T/rig.out" 2>&1
rc=$?
expect_eq "rig booted 4 guests, Slurm on each, and ran the inner script" 0 "$rc"
[ "$rc" -eq 0 ] || sed 's/^/    | /' "$T/rig.out" | tail -20
echo "  (rig + Slurm + one lab run: $(($(date +%s) - start)) s)"

expect_eq "every guest is an idle Slurm node" "vm0 idle,vm1 idle,vm2 idle,vm3 idle" \
	"$(sort "$T/sinfo.out" 2>/dev/null | tr '\n' ',' | sed 's/,$//')"
expect_eq "salloc -N4 ... run --nodes slurm exits 0" 0 "$(cat "$T/good.rc" 2>/dev/null)"
[ "$(cat "$T/good.rc" 2>/dev/null)" = 0 ] || tail -30 "$T/good.out" | sed 's/^/    | /'
expect_grep "the agents came up through srun" '4 of 4 nodes up \(launcher slurm' "$T/good.out"
g=$T/good/latest/results.json
expect_true "the run wrote results.json" test -s "$g"
expect_eq "node-local row PASSes on every guest" 4 \
	"$(jq '[.results[] | select(.id|startswith("lab.rxe_port[")) | select(.verdict=="PASS")] | length' "$g" 2>/dev/null)"
expect_eq "4 ring pairs x 2 cases PASS over rxe0" 8 \
	"$(jq '[.results[] | select(.peer_node) | select(.verdict=="PASS")] | length' "$g" 2>/dev/null)"
expect_eq "a pair row names both rails" 1 \
	"$(jq '[.results[] | select(.id=="lab.write_64k[vm0:rxe0/1->vm1:rxe0/1]")] | length' "$g" 2>/dev/null)"
expect_eq "a 4x4 matrix for the bandwidth case" 4 \
	"$(jq '.lab.matrices[] | select(.case=="lab.write_64k") | .values | length' "$g" 2>/dev/null)"
expect_eq "srun's logs, one per node" 4 "$(count "$(readlink -f "$T/good/latest")"/logs/srun-vm*.log)"
expect_eq "no job step left running" "" "$(cat "$T/squeue.out" 2>/dev/null)"

# The guests' slurmd and munged ended with their QEMU; the host's daemons
# are known by their pid (another test's Slurm may run beside this one).
for dm in slurmctld munged; do
	expect_true "the rig's $dm ran" test -s "$T/$dm.pid"
	# (a zombie awaiting its reaper has ended)
	expect_true "no $dm of the rig left" sh -c \
		"ps -o stat= -p $(cat "$T/$dm.pid" 2>/dev/null || echo 1) | grep -qvx 'Z.*' && exit 1; exit 0"
done
rig_gone "$T/rig.out"
[ "$_fails" -eq 0 ] || { tail -5 "$T"/console-vm*.log "$T/slurmctld.log" 2>/dev/null | sed 's/^/    | /'; }
finish

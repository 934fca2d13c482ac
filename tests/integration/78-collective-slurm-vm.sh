#!/bin/sh
# Collectives through Slurm: the lab rig's four guests as a Slurm cluster
# (vm/lab-rig.sh --slurm), and inside `salloc -N4` the collective kind
# launches rdmaqual-coll with srun --mpi=pmix (Slurm's PMIx plugin, Open
# MPI 4.1's PMIx): an allreduce and a bisection across vm0..vm3 pass with
# every result checked.  Afterwards no QEMU, namespace or dir of this rig is
# left (another rig may run on the host).
# Boots guests: run it under flock /work/vm.lock on a shared host.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

if [ "${1:-}" = --inside ]; then
	T=$2
	RQ=${RQ_VM:-./rdmaqual}
	salloc -N4 --time=10 "$PWD/${RQ#./}" run --report-dir "$T/rep" \
		tests/integration/lab-collective-cases >"$T/run.out" 2>&1
	echo "$?" >"$T/run.rc"
	echo "$RQ_LAB_DIR" >"$T/rig.dir"
	exit 0
fi
if [ "$(id -u)" -ne 0 ] || [ ! -x /usr/sbin/sshd ] || [ ! -x build/rdmaqual-coll ]; then
	skip "needs root, openssh-server and build/rdmaqual-coll (make deps all)"
fi
for t in slurmctld slurmd salloc srun munged; do
	command -v $t >/dev/null || skip "$t not installed (make deps)"
done
[ -e /usr/lib/x86_64-linux-gnu/slurm-wlm/mpi_pmix.so ] ||
	skip "Slurm's mpi_pmix plugin not installed (slurm-wlm-basic-plugins)"
vm_test_setup collslurm
start=$(date +%s)
vm/lab-rig.sh -n 4 --slurm -- sh "$0" --inside "$T" >"$T/rig.out" 2>&1
expect_eq "rig booted 4 guests with Slurm and ran the inner script" 0 $?
R=$T/rep/latest/results.json
verdict() { jq -r --arg n "$1" '.results[] | select(.case == $n) | .verdict' "$R"; }
fact() { jq -r --arg n "$1" --arg f "$2" '.results[] | select(.case == $n) | .facts[$f] // empty' "$R"; }
expect_eq "the run exits 0" 0 "$(cat "$T/run.rc" 2>/dev/null)"
expect_eq "allreduce through srun --mpi=pmix" PASS "$(verdict slurm.allreduce)"
expect_eq "... launched by srun" "srun --mpi=pmix" "$(fact slurm.allreduce launcher)"
expect_eq "... four ranks" 4 "$(fact slurm.allreduce ranks)"
expect_eq "bisection through srun" PASS "$(verdict slurm.bisection)"
[ "$(verdict slurm.allreduce)" = PASS ] || { tail -n 20 "$T/run.out"; tail -n 5 "$T/rig.out"; }
echo "  (took $(($(date +%s) - start)) s)"
rig_gone "$T/rig.out"
finish

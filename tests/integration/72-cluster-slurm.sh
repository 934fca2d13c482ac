#!/bin/sh
# Lab runs through Slurm without a cluster: this host is a one-node Slurm
# cluster made by the test (munged with a generated key, slurmctld, slurmd;
# configuration, state and logs in a mktemp dir), inside a network
# inside a network namespace of its own, so whatever the daemons listen on
# is that namespace's, reached from nowhere else.  Checks that `salloc ... rdmaqual run --nodes slurm` starts the
# agent through srun (stdio as the pipe) and its rows pass with the node's
# hostname as the JUnit suite, that a node outside the allocation ERRORs
# with srun's own words while the run goes on, and that nothing is left.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

RQ=${RQ:-build/san/rdmaqual}
for b in slurmctld slurmd salloc srun munged mungekey unshare; do
	if ! command -v $b >/dev/null 2>&1 || [ "$(id -u)" -ne 0 ]; then
		skip "needs root and slurmctld, slurmd, slurm-client, munge (make deps)"
	fi
done
# Listeners on a private loopback only: the test runs in a network namespace
# of its own.  Slurm's clients resolve with AI_ADDRCONFIG, which wants an
# IPv4 address besides loopback: a veth pair inside the namespace has one
# (it leads nowhere).
if [ -z "${RQ_IN_NETNS:-}" ]; then
	RQ_IN_NETNS=1 exec unshare -n "$0" "$@"
fi
ip link set lo up
if ! { ip link add rqlab0 type veth peer name rqlab1 && ip addr add 10.253.77.1/24 dev rqlab0 &&
	ip link set rqlab0 up && ip link set rqlab1 up; }; then
	skip "no veth in a network namespace"
fi
T=$(mktemp -d /tmp/rq-it-slurm.XXXXXX)
chmod 700 "$T"
cleanup() {
	for d in slurmd slurmctld munged; do
		[ -s "$T/$d.pid" ] && kill "$(cat "$T/$d.pid")" 2>/dev/null
	done
	sleep 0.5
	for d in slurmd slurmctld munged; do
		[ -s "$T/$d.pid" ] && kill -9 "$(cat "$T/$d.pid")" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/state" "$T/spool" "$T/log"
host=$(hostname)
case "$(getent ahostsv4 "$host" | head -1 | cut -d' ' -f1)" in
127.*) ;;
*) skip "$host does not resolve to loopback (the daemons bind to it)" ;;
esac
pctl=$(( 36000 + $$ % 2000 * 2 ))
mungekey -c -k "$T/munge.key" -b 1024
chmod 600 "$T/munge.key"
munged -f --key-file="$T/munge.key" --socket="$T/munge.sock" --log-file="$T/log/munged.log" \
	--pid-file="$T/munged.pid" --seed-file="$T/munged.seed"
vm/slurm-conf.sh "$T" "$host" 127.0.0.1 "$pctl" "$host@127.0.0.1@$(nproc)" >"$T/slurm.conf"
export SLURM_CONF="$T/slurm.conf"
export RDMAQUAL_STATE_DIR="$T/rqstate"
slurmctld -i
slurmd
wait_for "the node is idle in Slurm" 30 sh -c "sinfo -h -o %T | grep -qx idle"
expect_eq "the daemons listen in the test's own namespace only" "" \
	"$(ip netns identify $$ 2>/dev/null; readlink /proc/1/ns/net | grep -x "$(readlink /proc/self/ns/net)")"
C=tests/integration/lab-cases
RQA=$(readlink -f "$RQ")

timeout 120 salloc -N1 --time=5 "$RQA" run --nodes slurm --report-dir "$T/rep" $C/node.yaml \
	>"$T/out" 2>&1
expect_eq "salloc ... run --nodes slurm passes" 0 $?
expect_grep "the agent came up through srun" '1 of 1 nodes up \(launcher slurm' "$T/out"
expect_grep "its rows pass" "PASS +lab\\.hello\\[$host\\]" "$T/out"
expect_grep "JUnit suite named by the node's hostname" "<testsuite name=\"$host\"" "$T/rep/latest/junit.xml"

start=$(date +%s)
timeout 120 salloc -N1 --time=5 "$RQA" run --nodes "$host,rqghost" --launcher slurm --pairs ring \
	--report-dir "$T/rep2" --drain-list "$T/drain" $C/node.yaml $C/pair-rate.yaml >"$T/out2" 2>&1
expect_eq "a node outside the allocation fails the run" 1 $?
expect_true "which ends in bounded time" test $(( $(date +%s) - start )) -lt 60
expect_grep "its rows ERROR with srun's own words" \
	'ERROR +lab\.hello\[rqghost\] .*rqghost unreachable: srun: error: .*(Requested node configuration|not available|Invalid)' "$T/out2"
expect_grep "its pair ERRORs naming it" 'ERROR +lab\.rate\[.*rqghost\] .*rqghost unreachable' "$T/out2"
expect_grep "the reachable node's rows pass" "PASS +lab\\.hello\\[$host\\]" "$T/out2"
expect_eq "drain list: rqghost" rqghost "$(cut -d' ' -f1 "$T/drain")"
expect_true "srun's words are kept" test -s "$(readlink -f "$T/rep2/latest")/logs/srun-rqghost.log"
expect_eq "no job step left running" "" "$(squeue -h -s 2>/dev/null)"
# ours: srun passes this test's environment (SLURM_CONF=$T/slurm.conf) on
expect_true "no agent left" none_with "^$RQA agent --stdio" "$T"
finish

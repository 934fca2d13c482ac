#!/bin/sh
# Figures for MPI collectives across rxe-vm guests (printed, not judged),
# for N = 2, 4 and 8 guests (BENCH_GUESTS overrides), each one run of
# tests/integration/collective-cases/bench.yaml under TCG:
#   - boot: the N guests up (launch to every agent ready, vm.boot_s);
#   - launch overhead: `mpirun --hostfile {hostfile} -np {np} true` from vm0,
#     case start to every rank run and gone (ssh to each guest, orted, exec);
#   - allreduce 8 B time (avg over ranks), 1 MiB busbw and CPU seconds per
#     GB moved (rdmaqual-coll, every result checked), over RDMA (the
#     collective kind's default: UCX's rc_verbs on rxe) and over TCP (ob1's
#     tcp btl over the guests' virtio-net, transport: tcp), side by side;
#   - the controller's peak memory (/usr/bin/time: the runner and its agents).
# Under TCG these show that the machinery works and what it costs, not what
# an HCA does: a guest's CPU is emulated and its "wire" is a host bridge.
# Root (vm3 and up share a bridge in a network namespace).
set -eu
cd "$(dirname "$0")/.."
RQ=${RQ:-./rdmaqual}
[ -x "$RQ" ] || { echo "build rdmaqual first (make)"; exit 1; }
[ -x build/rdmaqual-coll ] || { echo "build/rdmaqual-coll missing (make, with libopenmpi-dev)"; exit 1; }
T=$(mktemp -d /tmp/rq-bench-coll.XXXXXX)
trap 'rm -rf "$T"' EXIT
RDMAQUAL_STATE_DIR=$T/state
export RDMAQUAL_STATE_DIR
echo "host: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(free -g | awk '/^Mem/ { print $2 }') GiB"
printf '%-7s %7s %8s %17s %15s %13s %8s %s\n' guests boot_s launch_s "8B_us rdma/tcp" \
	"1MiB_GBs r/t" "cpu_s/GB r/t" rss_MiB verdicts
for n in ${BENCH_GUESTS:-2 4 8}; do
	/usr/bin/time -f '%M' -o "$T/rss" "$RQ" run --target rxe-vm --vm-topology "vm$n" --accel tcg \
		--report-dir "$T/r$n" tests/integration/collective-cases/bench.yaml >"$T/out$n" 2>&1 || true
	R=$T/r$n/latest/results.json
	fig() { jq -r --arg n "$1" --arg f "$2" '[.results[] | select(.case == $n) | .figures[] | select(.name == $f) | .value][0] // "-"' "$R"; }
	boot=$(jq -r '.facts["vm.boot_s"] // "-"' "$R")
	v=$(jq -r '[.results[] | .case + "=" + .verdict] | join(" ")' "$R")
	printf '%-7s %7s %8s %17s %15s %13s %8s %s\n' "vm$n" "$boot" "$(fig bench.launch elapsed)" \
		"$(fig bench.allreduce time_8B)/$(fig bench.allreduce_tcp time_8B)" \
		"$(fig bench.allreduce busbw_1MiB)/$(fig bench.allreduce_tcp busbw_1MiB)" \
		"$(printf '%.0f/%.0f' "$(fig bench.allreduce cpu_s_per_GB)" "$(fig bench.allreduce_tcp cpu_s_per_GB)" 2>/dev/null || echo -)" \
		"$(($(cat "$T/rss") / 1024))" "$v"
done

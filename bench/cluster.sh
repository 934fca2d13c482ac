#!/bin/sh
# Lab-run scale, measured with --launcher local: N simulated nodes, each its
# own agent process replaying its own captured tree (the synthesized
# fixtures/nodes/* trees, one per node, in turn).  Printed, not judged;
# the goals (docs/cluster.md) are beside each figure:
#   - planning all-pairs rounds (dry run of one two-sided case): < 1 s at 256
#     (above 1,448 nodes all pairs is over the plan limit and refused)
#   - controller peak RSS of the node cases (driver, pcie, mtu, irq on every
#     node): < 64 MiB for 256 agents, < 256 MiB for 4,096, so that it grows
#     with the nodes, not with the rows
#   - controller CPU per node-case: <= 5 ms, against the agents' own CPU in
#     the same run
# Each size's figures come from the run's own "lab cost:" line (getrusage of
# the controller alone) and /usr/bin/time -v (its maximum RSS is the largest
# of the controller and the agents it waited for).  A table at the end puts
# the sizes side by side.
# Sizes: BENCH_NODES (default "256 1024 4096"); fanouts: BENCH_FANOUT
# (default "32").  Two cores make the agents' work slow; the controller's
# share is what the goals are about.  4,096 nodes take minutes here.
set -eu
cd "$(dirname "$0")/.."
RQ=${RQ:-./rdmaqual}
[ -x "$RQ" ] || { echo "build rdmaqual first (make)"; exit 1; }
[ -x /usr/bin/time ] || { echo "bench needs /usr/bin/time (package time)"; exit 1; }
T=$(mktemp -d /tmp/rq-bench-lab.XXXXXX)
trap 'rm -rf "$T"' EXIT
export RDMAQUAL_STATE_DIR="$T/state"
echo "host: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
# One tree per node, in turn, made once for the largest size.
max=0
for n in ${BENCH_NODES:-256 1024 4096}; do if [ "$n" -gt "$max" ]; then max=$n; fi; done
mkdir -p "$T/lab"
awk -v max="$max" -v dir="$T/lab" -v fx="$PWD/fixtures/nodes" 'BEGIN {
	split("cx7-ndr-ib cx6-hdr-ib cx6dx-roce-2numa cx5-edr-ib", t, " ")
	for (i = 1; i <= max; i++)
		printf "%s/%s\n%s/n%04d\n", fx, t[(i - 1) % 4 + 1], dir, i
}' | xargs -n 2 ln -s
printf '%s\n' "nodes fanout rows wall_s ctl_cpu_s ms_per_node_case ctl_peak_MiB time_maxrss_MiB agents_cpu_s" \
	>"$T/table"
for n in ${BENCH_NODES:-256 1024 4096}; do
	nodes="n[0001-$(printf '%04d' "$n")]"
	echo "== $n nodes ($nodes)"
	if "$RQ" run --nodes "$nodes" --launcher local --pairs all --dry-run cases/bw/native.yaml \
		>"$T/dry$n" 2>&1; then
		pairs=$(grep -m1 'two-sided' "$T/dry$n" | sed 's/.*: \([0-9]* pairs in [0-9]* rounds\).*/\1/')
		echo "  planning all-pairs ($pairs per case): $(grep '^planned in' "$T/dry$n" | \
			sed 's/planned in //') for all $(grep -c 'two-sided' "$T/dry$n") cases together (goal < 1 s)"
	else
		echo "  planning all-pairs: refused, as it should be: $(grep -m1 -o 'pairs.*' "$T/dry$n" | sed 's/: use .*//')"
	fi
	for f in ${BENCH_FANOUT:-32}; do
		/usr/bin/time -v -o "$T/time$n-$f" "$RQ" run --nodes "$nodes" --launcher local \
			--target "sysroot:$T/lab" --fanout "$f" --report-dir "$T/r$n-$f" \
			cases/driver cases/pcie cases/mtu cases/irq >"$T/out$n-$f" 2>&1 || true
		cost=$(grep 'lab cost' "$T/out$n-$f" || echo "no lab cost line")
		up=$(grep 'nodes up' "$T/out$n-$f" | sed 's/rdmaqual: //')
		wall=$(awk -F': ' '/Elapsed/ { n = split($2, p, ":"); s = 0
			for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.1f", s }' "$T/time$n-$f")
		maxrss=$(awk '/Maximum resident/ { printf "%.1f", $NF / 1024 }' "$T/time$n-$f")
		rows=$(grep -o '^[0-9]* rows' "$T/out$n-$f" | cut -d' ' -f1)
		echo "  fanout $f: wall $wall s, $rows rows; $up"
		echo "    $(echo "$cost" | sed 's/rdmaqual: lab cost: //')"
		echo "    /usr/bin/time -v: maximum RSS $maxrss MiB; reports $(du -sh "$T/r$n-$f/latest/" | cut -f1)"
		echo "$cost" | awk -v n="$n" -v f="$f" -v rows="${rows:-0}" -v wall="$wall" \
			-v maxrss="$maxrss" -v table="$T/table" '{
			for (i = 1; i <= NF; i++) {
				if ($i == "(" || $(i) ~ /^\(/) ms = substr($i, 2)
				if ($i == "RSS") rss = $(i + 1)
				if ($i == "CPU" && $(i - 1) == "controller") c = $(i + 1)
				if ($i == "CPU" && $(i - 1) == "agents'\''") a = $(i + 1)
			}
			goal = n <= 256 ? 64 : 256
			printf "    goals: %.3f ms per node-case (<= 5), controller peak RSS %s MiB (< %d)\n", ms, rss, goal
			printf "%s %s %s %s %s %.3f %s %s %s\n", n, f, rows, wall, c, ms, rss, maxrss, a >> table
		}'
		rm -rf "$T/r$n-$f"
	done
done
echo "== side by side"
awk '{ for (i = 1; i <= NF; i++) printf "%-*s", i == 1 ? 7 : 17, $i; print "" }' "$T/table"

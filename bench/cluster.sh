#!/bin/sh
# Lab-run scale, measured with --launcher local: N simulated nodes, each its
# own agent process replaying its own captured tree (the synthesized
# fixtures/nodes/* trees, one per node, in turn).  Printed, not judged;
# the goals (docs/cluster.md) are beside each figure:
#   - planning all-pairs rounds (dry run of one two-sided case): < 1 s at 256
#   - controller peak RSS: < 64 MiB for 256 agents
#   - controller CPU per node-case: <= 5 ms, against the agents' own CPU in
#     the same run (the node cases: driver, pcie, mtu, irq on every node)
# Sizes: BENCH_NODES (default "64 256").  Two cores make the agents' work
# slow; the controller's share is what the goals are about.
set -eu
cd "$(dirname "$0")/.."
RQ=${RQ:-./rdmaqual}
[ -x "$RQ" ] || { echo "build rdmaqual first (make)"; exit 1; }
T=$(mktemp -d /tmp/rq-bench-lab.XXXXXX)
trap 'rm -rf "$T"' EXIT
export RDMAQUAL_STATE_DIR="$T/state"
echo "host: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
trees="cx7-ndr-ib cx6-hdr-ib cx6dx-roce-2numa cx5-edr-ib"
for n in ${BENCH_NODES:-64 256}; do
	lab=$T/lab$n
	mkdir -p "$lab"
	i=0
	# shellcheck disable=SC2086 # the list of trees, split on purpose
	set -- $trees
	while [ $i -lt "$n" ]; do
		i=$((i + 1))
		t=$(echo "$trees" | cut -d' ' -f$(( (i - 1) % 4 + 1 )))
		ln -s "$PWD/fixtures/nodes/$t" "$lab/$(printf 'n%03d' $i)"
	done
	nodes="n[001-$(printf '%03d' "$n")]"
	echo "== $n nodes ($nodes)"
	"$RQ" run --nodes "$nodes" --launcher local --pairs all --dry-run cases/bw/native.yaml \
		>"$T/dry$n" 2>&1
	pairs=$(grep -m1 'two-sided' "$T/dry$n" | sed 's/.*: \([0-9]* pairs in [0-9]* rounds\).*/\1/')
	echo "  planning all-pairs ($pairs per case): $(grep '^planned in' "$T/dry$n" | \
		sed 's/planned in //') for all $(grep -c 'two-sided' "$T/dry$n") cases together (goal < 1 s)"
	for f in 32 128; do
		start=$(date +%s.%N)
		"$RQ" run --nodes "$nodes" --launcher local --target "sysroot:$lab" --fanout $f \
			--report-dir "$T/r$n-$f" cases/driver cases/pcie cases/mtu cases/irq \
			>"$T/out$n-$f" 2>&1 || true
		end=$(date +%s.%N)
		cost=$(grep 'lab cost' "$T/out$n-$f" || echo "no lab cost line")
		up=$(grep 'nodes up' "$T/out$n-$f" | sed 's/rdmaqual: //')
		echo "  fanout $f: wall $(printf '%.1f' "$(echo "$end - $start" | bc)") s; $up"
		echo "    $(echo "$cost" | sed 's/rdmaqual: lab cost: //')"
		echo "$cost" | awk '{
			for (i = 1; i <= NF; i++) {
				if ($i == "(" || $(i) ~ /^\(/) ms = substr($i, 2)
				if ($i == "RSS") rss = $(i + 1)
				if ($i == "CPU" && $(i - 1) == "controller") c = $(i + 1)
				if ($i == "CPU" && $(i - 1) == "agents'\''") a = $(i + 1)
			}
			printf "    goals: %.3f ms per node-case (<= 5), peak RSS %s MiB (< 64), controller/agents CPU %s/%s s\n", ms, rss, c, a
		}'
	done
done

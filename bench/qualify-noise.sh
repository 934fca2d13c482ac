#!/bin/sh
# Figures for the noise-aware verdicts of `rdmaqual qualify` (printed, not
# judged), on this machine, with the default options (--repeat auto):
#   - A/A: the same kernel against itself, RUNS times: how many runs exit 1
#     (a false regression; goal 0) and how many figures end inconclusive;
#   - power: the after guests booted with a planted slowdown, RUNS times:
#     how many runs report it as a regression (goal all of them).  The
#     planted slowdown is a real kernel command line: pti=on (page-table
#     isolation forced on; under TCG every kernel entry then flushes the
#     emulated TLB), which made verbs.rc_latency's lat_min about 30 %
#     higher here and left bandwidth as it was;
#   - the wall time of each qualification, so the cost of --repeat auto shows.
# CASES picks the case set (default: bench/cases/noise.yaml, the RC SEND
# round trip of verbs.rc_latency without its latency threshold: 5 judged
# figures),
# TOPO the guest topology (default vm2: the two guests the plant slows;
# in vm1's loopback pti=on changed nothing measurable), KINDS which of
# "aa planted" to run.
# RUNS=N (default 10).  Boots guests: run it alone (flock /work/vm.lock).
set -eu
cd "$(dirname "$0")/.."
RQ=${RQ:-./rdmaqual}
[ -x "$RQ" ] || { echo "build rdmaqual first (make)"; exit 1; }
T=$(mktemp -d /tmp/rq-bench-noise.XXXXXX)
trap 'rm -rf "$T"' EXIT
export RDMAQUAL_STATE_DIR="$T/state"
RUNS=${RUNS:-10}
CASES=${CASES:-bench/cases/noise.yaml}
TOPO=${TOPO:-vm2}
PLANT=${PLANT:-pti=on}
KERNEL=${KERNEL:-debian:bookworm}

echo "host: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$RQ" vm image --kernel "$KERNEL" | sed -n 's/^package: */  '"$KERNEL"': /p'
echo "cases: $CASES (--vm-topology $TOPO), default options (--repeat auto, --max-repeat 7, 95 %)"
ms() { date +%s%3N; }

# one NAME I [qualify options...]: one qualification (aa: A/A), one line of figures.
one() {
	name=$1 i=$2
	shift 2
	t0=$(ms)
	rc=0
	# shellcheck disable=SC2086 # a bound on a hang (SIGTERM: the runs stop their guests)
	timeout 1500 "$RQ" qualify --before "$KERNEL" --after "$KERNEL" --vm-topology "$TOPO" --report-dir "$T/$name-$i" \
		"$@" $CASES >"$T/$name-$i.out" 2>&1 || rc=$?
	t1=$(ms)
	j=$(find "$T/$name-$i" -name qualify.json | head -1)
	if [ -z "$j" ]; then
		printf '%-7s run %2d: exit %d, no qualify.json (%s)\n' "$name" "$i" "$rc" \
			"$(tail -1 "$T/$name-$i.out")"
		return
	fi
	printf '%-7s run %2d: exit %d, %d a side (%s), %d figure regressions, %d inconclusive of %d judged, %.0f s; %s\n' \
		"$name" "$i" "$rc" "$(jq .repeat "$j")" "$(jq -r .stopped "$j")" \
		"$(jq '[.compare.findings[] | select(.regression and .name != null)] | length' "$j")" \
		"$(jq .inconclusive "$j")" \
		"$(jq '[.compare.findings[] | select(.tolerance_pct != null)] | length' "$j")" \
		"$(awk "BEGIN { print ($t1 - $t0) / 1000 }")" \
		"$(jq -r '[.compare.findings[] | select(.name == "lat_min") | "lat_min \(.change_pct * 10 | round / 10)% \(.type)"] | join(", ")' "$j")"
	echo "$name $rc $(( t1 - t0 )) $(jq .inconclusive "$j")" >>"$T/tally"
}

KINDS=${KINDS:-aa planted}
for i in $(seq "$RUNS"); do
	for k in $KINDS; do
		case $k in
		aa) one aa "$i" ;;
		planted) one planted "$i" --after-cmdline "$PLANT" ;;
		esac
	done
done
awk -v runs="$RUNS" -v plant="$PLANT" '
	{ n[$1]++; fail[$1] += ($2 == 1); t[$1] += $3; unsure[$1] += $4 }
	END {
		printf "A/A: %d of %d runs exit 1 (false regressions; goal 0); %d figures inconclusive in all; mean wall %.0f s\n",
			fail["aa"], n["aa"], unsure["aa"], t["aa"] / (n["aa"] ? n["aa"] : 1) / 1000
		printf "power (%s on the after side): %d of %d runs report a regression; mean wall %.0f s\n",
			plant, fail["planted"], n["planted"], t["planted"] / (n["planted"] ? n["planted"] : 1) / 1000
	}' "$T/tally"

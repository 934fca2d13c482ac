#!/bin/sh
# Figures for the noise-aware verdicts of `rdmaqual qualify` (printed, not
# judged), on this machine, with the default options (--repeat auto):
#   - A/A: the same kernel against itself, RUNS times: how many runs exit 1
#     (a false regression; goal 0) and how many figures end inconclusive;
#   - power: the after guests delay every packet they send by PLANT
#     (--after-link-delay: tc netem on each guest's eth0; default 300us)
#     and the before guests by PLANTBASE (default 100us; PLANTBASE= for
#     none), about 30 % slower here (docs/upgrade.md), RUNS times: how
#     many runs report it as a regression (goal 9 of 10 or more);
#   - small: a slowdown of about 3 %: both sides' guests delay every packet,
#     the before ones by SMALLBASE (default 100us), the after ones by SMALL
#     (default 103us), so that both pay the same qdisc and only the delay
#     differs; never a regression (no change within the 5 % tolerance, or
#     inconclusive).  SMALLBASE= (empty) delays the after side alone;
#   - the wall time of each qualification, so the cost of --repeat auto shows.
# CASES picks the case set (default: bench/cases/noise.yaml, an RC SEND
# round trip with event polling and no latency threshold; its kind's key
# figures lat_min and lat_median are judged), TOPO the guest topology
# (default vm2; in vm1 rxe loops back inside one guest and no link delay
# reaches it), KINDS which of "aa planted small" to run (in that order,
# interleaved run by run), EXTRA more qualify options (--max-repeat 5).
# RUNS=N (default 10); KEEP=1 keeps the qualifications' reports and
# output (the directory is printed).  Boots guests: with LOCK=FILE each qualification
# holds flock FILE for itself, so that other VM jobs interleave.
set -eu
cd "$(dirname "$0")/.."
RQ=${RQ:-./rdmaqual}
[ -x "$RQ" ] || { echo "build rdmaqual first (make)"; exit 1; }
T=$(mktemp -d /tmp/rq-bench-noise.XXXXXX)
if [ -n "${KEEP:-}" ]; then echo "reports kept in $T"; else trap 'rm -rf "$T"' EXIT; fi
export RDMAQUAL_STATE_DIR="$T/state"
RUNS=${RUNS:-10}
CASES=${CASES:-bench/cases/noise.yaml}
TOPO=${TOPO:-vm2}
PLANT=${PLANT:-300us}
PLANTBASE=${PLANTBASE-100us}
SMALL=${SMALL:-103us}
SMALLBASE=${SMALLBASE-100us}
KERNEL=${KERNEL:-debian:bookworm}
KINDS=${KINDS:-aa planted small}
EXTRA=${EXTRA:-}
LOCK=${LOCK:-}

echo "host: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$RQ" vm image --kernel "$KERNEL" | sed -n 's/^package: */  '"$KERNEL"': /p'
echo "cases: $CASES (--vm-topology $TOPO), default options (--repeat auto, --max-repeat 7, 95 %)${EXTRA:+ and $EXTRA}"
ms() { date +%s%3N; }

# one NAME I [qualify options...]: one qualification (aa: A/A), one line of figures.
one() {
	name=$1 i=$2
	shift 2
	t0=$(ms)
	rc=0
	# shellcheck disable=SC2086 # EXTRA and CASES are word lists
	set -- ${LOCK:+flock "$LOCK"} timeout 1500 "$RQ" qualify --before "$KERNEL" --after "$KERNEL" \
		--vm-topology "$TOPO" --report-dir "$T/$name-$i" $EXTRA "$@" $CASES
	# timeout: a bound on a hang (SIGTERM: the runs stop their guests)
	"$@" >"$T/$name-$i.out" 2>&1 || rc=$?
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
		"$(jq -r '[.compare.findings[] | select(.tolerance_pct != null) | "\(.name) \(.change_pct * 10 | round / 10)% \(.type)"] | join(", ")' "$j")"
	echo "$name $rc $(( t1 - t0 )) $(jq .inconclusive "$j")" >>"$T/tally"
}

for i in $(seq "$RUNS"); do
	for k in $KINDS; do
		case $k in
		aa) one aa "$i" ;;
		planted) one planted "$i" ${PLANTBASE:+--before-link-delay "$PLANTBASE"} --after-link-delay "$PLANT" ;;
		small) one small "$i" ${SMALLBASE:+--before-link-delay "$SMALLBASE"} --after-link-delay "$SMALL" ;;
		esac
	done
done
[ -s "$T/tally" ] || { echo "no qualification finished"; exit 1; }
awk -v plant="$PLANT" -v plantbase="$PLANTBASE" -v small="$SMALL" -v smallbase="$SMALLBASE" '
	{ n[$1]++; fail[$1] += ($2 == 1); t[$1] += $3; unsure[$1] += $4 }
	function wall(k) { return t[k] / (n[k] ? n[k] : 1) / 1000 }
	END {
		if (n["aa"])
			printf "A/A: %d of %d runs exit 1 (false regressions; goal 0); %d figures inconclusive in all; mean wall %.0f s\n",
				fail["aa"], n["aa"], unsure["aa"], wall("aa")
		if (n["planted"])
			printf "power (%s--after-link-delay %s): %d of %d runs report a regression (goal 9 of 10); %d figures inconclusive; mean wall %.0f s\n",
				plantbase == "" ? "" : "--before-link-delay " plantbase " ", plant, fail["planted"], n["planted"], unsure["planted"], wall("planted")
		if (n["small"])
			printf "small (%s--after-link-delay %s): %d of %d runs report a regression (goal 0); %d figures inconclusive; mean wall %.0f s\n",
				smallbase == "" ? "" : "--before-link-delay " smallbase " ", small, fail["small"], n["small"], unsure["small"], wall("small")
	}' "$T/tally"

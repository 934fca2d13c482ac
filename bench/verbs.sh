#!/bin/sh
# Native verbs engine against the reference tools, side by side on one vm2
# link (one boot), repetitions interleaved so drift in the host's load hits
# both sides alike.  Prints each comparison as the median of the per-rep
# ratios with their spread (min..max):
#   bandwidth  native RDMA WRITE 64 KiB / ib_write_bw 64 KiB, same duration  (goal >= 0.95)
#   latency    native RC SEND mean RTT / ibv_rc_pingpong usec/iter           (goal <= 1.05)
#              native RC SEND median RTT / 2 / ib_send_lat t_typical          (goal <= 1.05)
#              (perftest's *_lat report half a round trip; the native kind the whole one)
# and the runner's peak RSS during the bandwidth case (the guest-side worker
# that streams, and the host-side controller of the whole run).
#
# Env: REPS (5), DUR seconds (3), ITERS latency round trips (1000), LSIZE
# latency message size (64), RQ_ACCEL (tcg: a standard guest kernel hangs
# under this machine's KVM), RQ (./rdmaqual).
set -u
cd "$(dirname "$0")/.." || exit 1
RQ=${RQ:-./rdmaqual}
REPS=${REPS:-5}
DUR=${DUR:-3}
ITERS=${ITERS:-1000}
LSIZE=${LSIZE:-64}
if ! command -v qemu-system-x86_64 >/dev/null; then
	echo "bench/verbs.sh: SKIP (qemu-system-x86_64 not installed)"
	exit 0
fi
T=$(mktemp -d /tmp/rq-bench-verbs.XXXXXX)
trap 'rm -rf "$T"' EXIT

# One case file; within a rep the order alternates so neither side always runs first.
{
	echo "defaults: {targets: [rxe-vm], timeout: 120s}"
	echo "cases:"
	i=1
	while [ "$i" -le "$REPS" ]; do
		bw_native="  - {name: b.bw_native_$i, kind: bandwidth, op: write, sizes: [64KiB], duration: ${DUR}s}"
		bw_tool="  - {name: b.bw_perftest_$i, kind: perftest, test: write_bw, size: 64KiB, duration: ${DUR}s}"
		lat_native="  - {name: b.lat_native_$i, kind: verbs-pingpong, transport: rc, op: send, size: $LSIZE, iterations: $ITERS, poll: busy}"
		lat_pp="  - {name: b.lat_rcpp_$i, kind: perftest, test: rc_pingpong, size: $LSIZE, iterations: $ITERS}"
		lat_tool="  - {name: b.lat_sendlat_$i, kind: perftest, test: send_lat, size: $LSIZE, iterations: $ITERS}"
		if [ $((i % 2)) -eq 1 ]; then
			printf '%s\n' "$bw_native" "$bw_tool" "$lat_native" "$lat_pp" "$lat_tool"
		else
			printf '%s\n' "$bw_tool" "$bw_native" "$lat_tool" "$lat_pp" "$lat_native"
		fi
		i=$((i + 1))
	done
} >"$T/bench.yaml"

echo "== bench/verbs.sh: $REPS reps, ${DUR}s bandwidth runs, $ITERS x $LSIZE B round trips, vm2 (${RQ_ACCEL:-tcg})"
"$RQ" run --target rxe-vm --vm-topology vm2 --accel "${RQ_ACCEL:-tcg}" \
	--report-dir "$T/rep" "$T/bench.yaml" >"$T/run.out" 2>&1 &
pid=$!
# the host-side runner's own peak RSS (VmHWM; QEMU is a child and not counted)
hwm=0
while kill -0 "$pid" 2>/dev/null; do
	h=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
	[ -n "$h" ] && hwm=$h
	sleep 0.5
done
wait "$pid"
rc=$?
R="$T/rep/latest/results.json"
if [ ! -f "$R" ]; then
	cat "$T/run.out"
	echo "bench/verbs.sh: no results (exit $rc)"
	exit 1
fi
grep -E '^(FAIL|ERROR|SKIP)' "$T/run.out" | sed 's/^/  (not passed: figures used if present) /'

# "case figure value" lines from the pretty-printed results.json
awk '
	/"case":/   { gsub(/[",]/, "", $2); c = $2 }
	/"verdict":/ { gsub(/[",]/, "", $2); v[c] = $2 }
	/"name":/   { gsub(/[",]/, "", $2); n = $2 }
	/"value":/  { gsub(/,/, "", $2); if (n != "") print c, n, $2; n = "" }
' "$R" >"$T/figs.txt"

fig() { awk -v c="$1" -v n="$2" '$1 == c && $2 == n { print $3 }' "$T/figs.txt"; }

# ratios RATIO_NAME GOAL_OP GOAL, one "num den" pair per rep on stdin
summary() {
	awk -v what="$1" -v op="$2" -v goal="$3" '
		function median(x, m,   i, j, t) {
			for (i = 0; i < m; i++) for (j = i + 1; j < m; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
			return m % 2 ? x[(m - 1) / 2] : (x[m / 2 - 1] + x[m / 2]) / 2
		}
		$1 > 0 && $2 > 0 { u[n] = $1; d[n] = $2; r[n++] = $1 / $2; a = a sprintf(" %.3f", $1 / $2) }
		END {
			if (!n) { printf "%-44s no complete pair\n", what; exit }
			med = median(r, n)
			ok = op == ">=" ? med >= goal : med <= goal
			printf "%-44s median %.3f  spread %.3f..%.3f  (n=%d; goal %s %.2f: %s)\n", what, med, r[0], r[n - 1], n, op, goal, ok ? "met" : "NOT met"
			printf "%-44s per rep:%s\n", "", a
			printf "%-44s ratio of the medians: %.3f\n", "", median(u, n) / median(d, n)
		}'
}

i=1
: >"$T/bw" ; : >"$T/mean" ; : >"$T/med"
while [ "$i" -le "$REPS" ]; do
	echo "$(fig b.bw_native_$i bw_64KiB) $(fig b.bw_perftest_$i bw_avg)" >>"$T/bw"
	echo "$(fig b.lat_native_$i lat_mean) $(fig b.lat_rcpp_$i usec_per_iter)" >>"$T/mean"
	m=$(fig b.lat_native_$i lat_median)
	echo "$(awk -v m="${m:-0}" 'BEGIN { print m / 2 }') $(fig b.lat_sendlat_$i t_typical)" >>"$T/med"
	i=$((i + 1))
done
echo "absolute (per rep):"
awk '{ printf "  bw Gb/s      native %-10s ib_write_bw %s\n", $1, $2 }' "$T/bw"
awk '{ printf "  RTT mean us  native %-10s ibv_rc_pingpong %s\n", $1, $2 }' "$T/mean"
awk '{ printf "  half-RTT us  native %-10s ib_send_lat t_typical %s\n", $1, $2 }' "$T/med"
summary "native WRITE 64KiB / ib_write_bw" ">=" 0.95 <"$T/bw"
summary "native RC SEND mean / ibv_rc_pingpong" "<=" 1.05 <"$T/mean"
summary "native RC SEND median/2 / ib_send_lat typ" "<=" 1.05 <"$T/med"
rss=$(awk '$2 == "runner_peak_rss" { if ($3 > m) m = $3 } END { printf "%.1f", m }' "$T/figs.txt")
host=$(awk -v k="$hwm" 'BEGIN { printf "%.1f", k / 1024 }')
echo "peak RSS: guest-side worker during the bandwidth case ${rss} MiB; host-side runner (whole run) ${host} MiB"

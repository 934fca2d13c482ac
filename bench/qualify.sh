#!/bin/sh
# Figures for `rdmaqual qualify` (printed, not judged): the time to qualify
# the short suite (driver, mtu, verbs, one bandwidth case) on two guest
# kernels, debian:bookworm (6.1) and debian:bookworm-backports (6.12),
# against one run of the same suite on one kernel, measured side by side in
# this script with a warm cache (both kernels fetched first, not timed).
# A qualification with --repeat 1 is two runs plus fetching nothing, a
# comparison and the reports: the ratio should be close to 2 (6.12 boots
# slower under TCG).  bench/qualify-noise.sh measures --repeat auto.
# ROUNDS=N (default 2) alternates the two measurements N times.
set -eu
cd "$(dirname "$0")/.."
RQ=${RQ:-./rdmaqual}
[ -x "$RQ" ] || { echo "build rdmaqual first (make)"; exit 1; }
T=$(mktemp -d /tmp/rq-bench-qual.XXXXXX)
trap 'rm -rf "$T"' EXIT
export RDMAQUAL_STATE_DIR="$T/state"
SUITE="cases/driver cases/mtu cases/verbs cases/bw/native.yaml -k driver.* -k mtu.* -k verbs.* -k bw.write_64k"
ROUNDS=${ROUNDS:-2}

echo "host: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for s in bookworm bookworm-backports; do
	"$RQ" vm image --kernel "debian:$s" | sed -n 's/^package: */  debian:'"$s"': /p'
done
ms() { date +%s%3N; }
one=0 two=0
for r in $(seq "$ROUNDS"); do
	t0=$(ms)
	# shellcheck disable=SC2086
	"$RQ" run --target rxe-vm --kernel debian:bookworm --report-dir "$T/one" $SUITE >"$T/one.out" 2>&1 || true
	t1=$(ms)
	# shellcheck disable=SC2086
	"$RQ" qualify --repeat 1 --before debian:bookworm --after debian:bookworm-backports --report-dir "$T/two" \
		$SUITE >"$T/two.out" 2>&1 || true
	t2=$(ms)
	printf 'round %d: one run %.1f s (%s), qualify %.1f s (%s)\n' "$r" \
		"$(awk "BEGIN { print ($t1 - $t0) / 1000 }")" "$(grep -o '^[0-9]* rows: .*' "$T/one.out" | cut -d' ' -f1-8)" \
		"$(awk "BEGIN { print ($t2 - $t1) / 1000 }")" "$(grep '^result:' "$T/two.out")"
	one=$((one + t1 - t0))
	two=$((two + t2 - t1))
done
printf 'mean over %d rounds: one run %.1f s, qualify on two kernels %.1f s, ratio %.2f\n' "$ROUNDS" \
	"$(awk "BEGIN { print $one / $ROUNDS / 1000 }")" "$(awk "BEGIN { print $two / $ROUNDS / 1000 }")" \
	"$(awk "BEGIN { print $two / $one }")"

#!/bin/sh
# Golden reports of the runner's own suite (one case per outcome), run
# through the CLI, with times, hostnames, run ids, the version (git
# describe) and machine facts normalised.  RQ_UPDATE_GOLDEN=1 rewrites the golden files.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

RQ=${RQ:-build/san/rdmaqual}
T=$(mktemp -d /tmp/rq-it-golden.XXXXXX)
trap 'rm -rf "$T"' EXIT
export RDMAQUAL_STATE_DIR="$T/state"

"$RQ" run --report-dir "$T/rep" tests/cases/runner >/dev/null 2>&1
sed -E -e 's/ time="[0-9.]+"/ time="T"/g' -e 's/ timestamp="[^"]*"/ timestamp="TS"/' \
       -e 's/ hostname="[^"]*"/ hostname="H"/' -e '/<property name="host\./d' \
       -e 's/(name="[^"]*\.elapsed" value=")[0-9.]+/\1N/' \
       -e 's/(target [a-z-]+ opened in )[0-9.]+ s/\1N s/' \
       "$T/rep/latest/junit.xml" >"$T/junit.xml"
jq -S 'del(.run.id, .run.started, .run.finished, .run.hostname, .run.argv, .run.duration_s, .facts)
       | .run.version |= (if type == "string" and . != "" then "VERSION" else . end)
       | .results[] |= (.duration_s = 0 | .figures |= map(.value = 0))' \
       "$T/rep/latest/results.json" >"$T/results.json"
if [ "${RQ_UPDATE_GOLDEN:-}" = 1 ]; then
	cp "$T/junit.xml" tests/golden/runner-junit.xml
	cp "$T/results.json" tests/golden/runner-results.json
	echo "  golden files rewritten"
fi
# Repeated rows judged against their noise (tests/golden/noise/README.md):
# the console and the rdmaqual-compare/1 document are deterministic (the
# bootstrap has a fixed seed), so they are golden as they are.
N=tests/golden/noise
"$RQ" compare $N/before.json $N/after.json >"$T/noise.txt" 2>&1
expect_eq "noise: the planted changes are regressions (exit 1)" 1 $?
"$RQ" compare --json $N/before.json $N/after.json >"$T/noise.json" 2>&1
if [ "${RQ_UPDATE_GOLDEN:-}" = 1 ]; then
	cp "$T/noise.txt" $N/compare.txt
	cp "$T/noise.json" $N/compare.json
fi
expect_true "noise: the console matches $N/compare.txt" diff -u $N/compare.txt "$T/noise.txt"
expect_true "noise: the JSON matches $N/compare.json" diff -u $N/compare.json "$T/noise.json"
# Two: msg_rate_64KiB is bw_64KiB over the size, not a key figure of bandwidth (reported, not judged).
expect_eq "noise: two regressions, each with its interval, n=8 a side" "2 2" \
	"$(jq -r '[.findings[] | select(.regression)] | "\(length) \([.[] | select(.interval_pct != null and .n_before == 8)] | length)"' "$T/noise.json")"
expect_eq "noise: no judged figure is inconclusive" 0 \
	"$(jq '[.findings[] | select(.type == "figure_inconclusive")] | length' "$T/noise.json")"
expect_true "junit.xml matches tests/golden/runner-junit.xml" diff -u tests/golden/runner-junit.xml "$T/junit.xml"
expect_true "results.json matches tests/golden/runner-results.json" diff -u tests/golden/runner-results.json "$T/results.json"
diff -u tests/golden/runner-junit.xml "$T/junit.xml" | head -20
diff -u tests/golden/runner-results.json "$T/results.json" | head -20
finish

#!/bin/sh
# Figures for the ibsim target and the SM kinds (printed, not judged):
#   - time from ibsim start to a passing sm-bringup on the four-HCA
#     topology (2sw2path4hca), five runs: the case's since_fabric_start_s
#     (ibsim start -> subnet judged up, opensm included) and bringup_s
#     (opensm start -> up), from results.json;
#   - the whole cases/sm/ suite, wall time and per case.
set -eu
cd "$(dirname "$0")/.."
RQ=${RQ:-./rdmaqual}
[ -x "$RQ" ] || { echo "build rdmaqual first (make)"; exit 1; }
command -v ibsim >/dev/null || { echo "ibsim not installed: nothing to measure"; exit 0; }
T=$(mktemp -d /tmp/rq-bench-sm.XXXXXX)
trap 'rm -rf "$T"' EXIT
export RDMAQUAL_STATE_DIR="$T/state"
echo "host: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "sm-bringup on 2sw2path4hca (ibsim start -> passing case):"
for i in 1 2 3 4 5; do
	"$RQ" run --report-dir "$T/r$i" -k sm.bringup_4hca cases/sm/bringup.yaml >/dev/null 2>&1 || true
	jq -r '.results[] | select(.id == "sm.bringup_4hca") |
		"  run \($n): \(.verdict)  ibsim start -> up \([.figures[] | select(.name == "since_fabric_start_s") | .value][0]) s" +
		"  (opensm start -> up \([.figures[] | select(.name == "bringup_s") | .value][0]) s; case \(.duration_s) s)"' \
		--arg n "$i" "$T/r$i/latest/results.json"
done
echo "cases/sm/ suite:"
start=$(date +%s.%N)
"$RQ" run --report-dir "$T/suite" cases/sm >/dev/null 2>&1 || true
end=$(date +%s.%N)
jq -r '.counts | "  \(.total) rows: \(.pass) pass, \(.fail) fail, \(.skip) skip, \(.error) error"' "$T/suite/latest/results.json"
jq -r '[.results[] | select(.id | contains("[") | not)] | .[] | "  \(.id): \(.verdict) \(.duration_s) s"' "$T/suite/latest/results.json"
echo "  wall: $(echo "$end - $start" | bc) s"

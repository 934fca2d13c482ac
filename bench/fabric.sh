#!/bin/sh
# Figures for fabrics of real size on ibsim (printed, not judged), for 36,
# 324 and 648 hosts on 36-port switches (two-level fat trees):
#   - ibsim start to its first client, and the target's opensm start to the
#     subnet up (its first sweep), from the fabric-routing case's figures;
#   - the fabric suite: fabric-health (GUIDs, descriptions, LIDs, SM),
#     fabric-links (every cable against the plan) and fabric-routing
#     (reachability, credit loops, balance), each case on a fabric of its own:
#     wall time of the whole run, and the cases' own time once the SM has
#     settled (the sum of their duration_s);
#   - the routes followed and the time fabric-routing took to analyse them;
#   - the largest RSS of the run's processes (/usr/bin/time %M: the runner,
#     its agent, and ibsim, opensm and the tools under them; the runner is
#     the largest of ours).
# Goal on this machine: 648 hosts within 120 s after the SM settled, < 256 MiB.
set -eu
cd "$(dirname "$0")/.."
RQ=${RQ:-./rdmaqual}
[ -x "$RQ" ] || { echo "build rdmaqual first (make)"; exit 1; }
command -v ibsim >/dev/null || { echo "ibsim not installed: nothing to measure"; exit 0; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time (package time) not installed"; exit 0; }
T=$(mktemp -d /tmp/rq-bench-fabric.XXXXXX)
trap 'rm -rf "$T"' EXIT
export RDMAQUAL_STATE_DIR="$T/state"
echo "host: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %-38s %9s %9s %9s %9s %9s %8s %9s %8s\n' hosts spec ibsim_ms sm_ms wall_s cases_s routes route_ms rows rss_MiB
for size in 36:2:1 324:18:9 648:36:18; do
	hosts=${size%%:*}; rest=${size#*:}; leaves=${rest%%:*}; spines=${rest#*:}
	spec="fat-tree:leaves=$leaves,spines=$spines,hosts-per-leaf=18"
	cat > "$T/suite-$hosts.yaml" <<YAML
defaults:
  targets: [ibsim]
  timeout: 600s
  fabric: $spec
cases:
  - name: fab.health
    kind: fabric-health
  - name: fab.links
    kind: fabric-links
  - name: fab.routing
    kind: fabric-routing
    routing_engine: ftree
YAML
	/usr/bin/time -f '%e %M' -o "$T/time-$hosts" "$RQ" run --report-dir "$T/r$hosts" "$T/suite-$hosts.yaml" >"$T/out-$hosts" 2>&1 || true
	R="$T/r$hosts/latest/results.json"
	fig() { jq -r --arg f "$1" '[.results[] | select(.id == "fab.routing") | .figures[] | select(.name == $f) | .value][0] // "-"' "$R"; }
	printf '%-6s %-38s %9s %9s %9s %9.2f %9s %8s %9s %8d\n' "$hosts" "$spec" "$(fig ibsim_start)" "$(fig sm_first_sweep)" \
		"$(cut -d' ' -f1 "$T/time-$hosts")" "$(jq '[.results[] | select(.id | contains("[") | not) | .duration_s] | add' "$R")" \
		"$(fig routes)" "$(fig analysis_time)" \
		"$(jq -r '.counts | "\(.total)/\(.pass)"' "$R")" "$(( $(cut -d' ' -f2 "$T/time-$hosts") / 1024 ))"
done
echo "(rows: total/passed; cases_s: the three cases' own time after each fabric's SM settled)"

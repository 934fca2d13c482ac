#!/bin/sh
# Figures for inputs that grow (printed, not judged): the wall time of
#   - `rdmaqual lint` of one case file with N cases (the duplicate-name
#     check was a scan per case: 40k cases took 10 s), and
#   - `rdmaqual compare` of two results.json files of N rows on 4 devices
#     whose model only the last rows record (the HCA-fact lookup scanned
#     every row per row: 20k rows took 19 s),
# for N and 4N side by side in one run: near 4x is linear, near 16x is not.
set -eu
cd "$(dirname "$0")/.."
RQ=${RQ:-./rdmaqual}
[ -x "$RQ" ] || { echo "build rdmaqual first (make)"; exit 1; }
T=$(mktemp -d /tmp/rq-bench-scale.XXXXXX)
trap 'rm -rf "$T"' EXIT
echo "host: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

cases() {	# cases N FILE
	awk -v n="$1" 'BEGIN { print "cases:"; for (i = 0; i < n; i++)
		printf "  - {name: scale.c%d, kind: command, targets: [local], argv: [\"true\"]}\n", i }' >"$2"
}
results() {	# results N MODEL FILE
	awk -v n="$1" -v m="$2" 'BEGIN {
		printf "{\"schema\": \"rdmaqual-results/1\", \"run\": {\"id\": \"r\", \"complete\": true}, \"results\": ["
		for (i = 0; i < n; i++) {
			f = i >= n - 4 ? sprintf(", \"facts\": {\"model\": \"%s\"}", m) : ""
			printf "%s{\"id\": \"r%d\", \"case\": \"c\", \"device\": \"mlx5_%d\", \"verdict\": \"PASS\"%s, " \
			       "\"figures\": [{\"name\": \"bw_avg\", \"value\": 100, \"unit\": \"Gb/s\"}]}", i ? "," : "", i, i % 4, f
		}
		print "]}" }' >"$3"
}
secs() {	# secs CMD...: wall seconds of CMD
	s=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s.%N)
	echo "$s $e" | awk '{ printf "%.2f", $2 - $1 }'
}
for n in 10000 40000; do
	cases "$n" "$T/c$n.yaml"
	results "$n" ConnectX-6 "$T/b$n.json"
	results "$n" ConnectX-6 "$T/a$n.json"
done
l1=$(secs "$RQ" lint "$T/c10000.yaml"); l4=$(secs "$RQ" lint "$T/c40000.yaml")
c1=$(secs "$RQ" compare "$T/b10000.json" "$T/a10000.json")
c4=$(secs "$RQ" compare "$T/b40000.json" "$T/a40000.json")
echo "lint, one file:   10k cases ${l1} s, 40k cases ${l4} s (ratio $(echo "$l1 $l4" | awk '{ printf "%.1f", ($1 > 0 ? $2 / $1 : 0) }'))"
echo "compare, 4 devs:  10k rows ${c1} s, 40k rows ${c4} s (ratio $(echo "$c1 $c4" | awk '{ printf "%.1f", ($1 > 0 ? $2 / $1 : 0) }'))"

#!/bin/sh
# rdmaqual compare through the CLI: two real runs of the runner's own suite
# (tests/cases/runner), then copies of the second run's results.json edited
# with jq to play what an upgrade can do (a row fails, vanishes or skips, a
# figure drops, the kernel changes, the target changes).  Checks exit codes
# (0 none, 1 regression, 2 bad input), the table and the JSON document.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

RQ=${RQ:-build/san/rdmaqual}
T=$(mktemp -d /tmp/rq-it-compare.XXXXXX)
trap 'rm -rf "$T"' EXIT
export RDMAQUAL_STATE_DIR="$T/state"

"$RQ" run --report-dir "$T/a" tests/cases/runner >/dev/null 2>&1
"$RQ" run --report-dir "$T/b" tests/cases/runner >/dev/null 2>&1
A=$T/a/latest/results.json
B=$T/b/latest/results.json
expect_true "two runs wrote results.json" test -s "$A" -a -s "$B"

# cmp NAME EXPECTED_RC ARGS...: run compare, keep stdout+stderr in $T/NAME.out
cmp() {
	n=$1; want=$2; shift 2
	"$RQ" compare "$@" >"$T/$n.out" 2>&1
	expect_eq "$n: exit $want" "$want" "$?"
}
# edit NAME JQ-FILTER [FILE]: a copy of FILE (default: after) edited by jq
edit() { jq "$2" "${3:-$B}" >"$T/$1.json"; }

echo "-- two runs of the same suite"
cmp same 0 "$T/a/latest" "$T/b/latest"
expect_grep "same: says no regression" '^result: no regression$' "$T/same.out"
expect_grep "same: all 6 rows matched" '^6 rows matched; 0 regressions' "$T/same.out"
expect_nogrep "same: elapsed (unit s) never judged" 'elapsed.*(WORSE|better)' "$T/same.out"
cmp same_files 0 "$A" "$(readlink -f "$T/b/latest")"
"$RQ" compare --json "$A" "$B" >"$T/same.json"
expect_eq "json: schema" "rdmaqual-compare/1" "$(jq -r .schema "$T/same.json")"
expect_eq "json: no regressions, 6 matched" "0 6" "$(jq -r '"\(.regressions) \(.counts.matched)"' "$T/same.json")"
expect_eq "json: input paths" "$A" "$(jq -r .before.path "$T/same.json")"

echo "-- verdicts"
edit fail '(.results[] | select(.id == "runner.pass")) |= (.verdict = "FAIL" | .reason = "driver said no")'
cmp fail 1 "$A" "$T/fail.json"
expect_grep "PASS -> FAIL is a regression" '^  REGRESSION +runner\.pass +PASS -> FAIL +driver said no' "$T/fail.out"
expect_grep "result line" '^result: REGRESSION$' "$T/fail.out"
edit gone 'del(.results[] | select(.id == "runner.pass"))'
cmp gone 1 "$A" "$T/gone.json"
expect_grep "a PASS row missing after is a regression" '^  MISSING +runner\.pass +PASS -> \(none\)' "$T/gone.out"
edit skip '(.results[] | select(.id == "runner.pass")) |= (.verdict = "SKIP" | .reason = "no device")'
cmp skip 1 "$A" "$T/skip.json"
expect_grep "PASS -> SKIP is a regression" '^  NEW SKIP +runner\.pass +PASS -> SKIP' "$T/skip.out"
cmp skip_allowed 0 --allow-new-skips "$A" "$T/skip.json"
expect_grep "--allow-new-skips still reports it" 'new skip \(allowed\) +runner\.pass' "$T/skip_allowed.out"
edit fixed '(.results[] | select(.id == "runner.fail_exit")) |= (.verdict = "PASS" | .reason = null)
	| .results += [.results[0] | .id = "runner.new" | .case = "runner.new"]'
cmp fixed 0 "$A" "$T/fixed.json"
expect_grep "FAIL -> PASS is a fix" '^  FIXED +runner\.fail_exit +FAIL -> PASS' "$T/fixed.out"
expect_grep "a new row is reported" '^  NEW ROW +runner\.new +\(none\) -> PASS' "$T/fixed.out"

echo "-- figures"
bw() { edit "$1" "(.results[] | select(.id == \"runner.pass\")).figures += [{\"name\": \"bw_avg\", \"value\": $2, \"unit\": \"Gb/s\"}, {\"name\": \"lat_p99\", \"value\": $3, \"unit\": \"us\"}]${4:-}" "$5"; }
bw fb 100 10 "" "$A"
bw fa 90 10.8 "" "$B"
cmp fig 1 "$T/fb.json" "$T/fa.json"
expect_grep "bw 100 -> 90 Gb/s is worse by 10%" 'runner\.pass +bw_avg +100 Gb/s +90 Gb/s +-10\.0% +5% +WORSE' "$T/fig.out"
expect_grep "lat 10 -> 10.8 us is worse by 8%" 'runner\.pass +lat_p99 +10 us +10\.8 us +\+8\.0% +5% +WORSE' "$T/fig.out"
cmp fig_tol 0 --tolerance 10 "$T/fb.json" "$T/fa.json"
expect_grep "exactly at --tolerance 10 is within" 'bw_avg +100 Gb/s +90 Gb/s +-10\.0% +10% +ok' "$T/fig_tol.out"
cmp fig_glob 1 -T 'bw_*=12' "$T/fb.json" "$T/fa.json"
expect_grep "bw_*=12 covers bw_avg" 'bw_avg .* 12% +ok' "$T/fig_glob.out"
expect_grep "the default still covers lat_p99" 'lat_p99 .* 5% +WORSE' "$T/fig_glob.out"
cmp fig_both 0 -T 'bw_*=12' -T 'lat_*=8' "$T/fb.json" "$T/fa.json"
"$RQ" compare --json "$T/fb.json" "$T/fa.json" >"$T/fig.json"
expect_eq "json: the bw finding" "figure_worse true 100 90 -10 higher" \
	"$(jq -r '.findings[] | select(.name == "bw_avg") | "\(.type) \(.regression) \(.before_value) \(.after_value) \(.change_pct) \(.better)"' "$T/fig.json")"
expect_eq "json: two regressions" "2" "$(jq -r .regressions "$T/fig.json")"
# A case's judge: names the figures judged: from a case file through a run into results.json
mkdir "$T/jcase"
cat >"$T/jcase/j.yaml" <<'EOF'
cases:
  - {name: runner.pass, kind: command, targets: [local], argv: [echo, hello], judge: ["lat_*"]}
EOF
"$RQ" run --report-dir "$T/j" "$T/jcase" >/dev/null 2>&1
expect_eq "judge: is the row's, in results.json" "lat_*" \
	"$(jq -r '.results[] | select(.id == "runner.pass") | .judge' "$T/j/latest/results.json")"
bw fbj 100 10 "" "$T/j/latest/results.json"
bw faj 90 10.8 "" "$T/j/latest/results.json"
cmp fig_judge 1 "$T/fbj.json" "$T/faj.json"
expect_grep "judge: lat_* judges lat_p99" 'runner\.pass +lat_p99 +10 us +10\.8 us +\+8\.0% +5% +WORSE' "$T/fig_judge.out"
"$RQ" compare --json "$T/fbj.json" "$T/faj.json" >"$T/fig_judge.json"
expect_eq "judge: bw_avg is reported, not judged" "figure_unjudged false" \
	"$(jq -r '.findings[] | select(.name == "bw_avg") | "\(.type) \(.regression)"' "$T/fig_judge.json")"
expect_eq "judge: one regression" "1" "$(jq -r .regressions "$T/fig_judge.json")"
# Another target: rxe numbers say nothing about the hca's
edit fa_rxe '(.results[] | select(.id == "runner.pass")).target = "rxe-vm"' "$T/fa.json"
cmp fig_target 0 "$T/fb.json" "$T/fa_rxe.json"
expect_grep "targets differ: warned" 'runner\.pass +targets differ \(before local, after rxe-vm\)' "$T/fig_target.out"
expect_grep "targets differ: figure shown, not judged" 'bw_avg +100 Gb/s +90 Gb/s +-10\.0% +- +not judged: targets differ' "$T/fig_target.out"

echo "-- environment facts"
edit kern '.facts["host.kernel"] = "9.9.9-upgraded" | (.results[] | select(.id == "runner.pass")).facts.fw_ver = "20.99.1000"'
cmp kern 0 "$A" "$T/kern.json"
expect_grep "run fact change listed" '^  \(run\) +host\.kernel +[^ ]+ +-> +9\.9\.9-upgraded' "$T/kern.out"
expect_grep "row fact appearing listed" '^  runner\.pass +fw_ver +\(none\) +-> +20\.99\.1000' "$T/kern.out"

echo "-- bad input"
cmp one_arg 2 "$A"
expect_grep "one argument: usage" 'wants two runs' "$T/one_arg.out"
cmp nofile 2 "$A" "$T/nope.json"
expect_grep "a missing file is named" "$T/nope.json: No such file" "$T/nofile.out"
cmp xml 2 "$A" "$T/b/latest/junit.xml"
expect_grep "junit.xml: named, not a results.json" 'junit\.xml: not a results\.json: not JSON' "$T/xml.out"
edit schema '.schema = "rdmaqual-results/9"'
cmp schema 2 "$T/schema.json" "$B"
expect_grep "unknown schema: named" 'schema\.json: unknown schema "rdmaqual-results/9"' "$T/schema.out"
cmp rootdir 2 "$T/a" "$B"
expect_grep "a reports folder: hint at latest" 'holds no results\.json .*try .*/latest' "$T/rootdir.out"
cmp badtol 2 -T 'lat_*=x' "$A" "$B"
expect_grep "a bad tolerance is a usage error" 'is not a percentage' "$T/badtol.out"

echo "-- read a row at a time: the same findings as whole documents"
# Without --html compare reads each results.json a row at a time; with it,
# whole (the page draws every row).  Same tables, same JSON, same verdicts.
# Repeats too (a merged document's "spread": {"samples"}), judged with their noise.
spread='(.results[] | select(.id == "runner.pass")).figures[-2].spread = {"samples": SAMPLES}'
edit sb "$(echo "$spread" | sed 's/SAMPLES/[100, 101, 99, 100]/')" "$T/fb.json"
edit sa "$(echo "$spread" | sed 's/SAMPLES/[90, 91, 89, 90]/')" "$T/fa.json"
for args in "" "--json"; do
	for pair in "fb fa" "sb sa"; do
		# shellcheck disable=SC2086 # two names, split on purpose
		set -- $pair
		# shellcheck disable=SC2086 # args: empty or one option, split on purpose
		"$RQ" compare $args "$T/$1.json" "$T/$2.json" >"$T/rows.out" 2>&1
		rc_rows=$?
		# shellcheck disable=SC2086
		"$RQ" compare $args --html "$T/page.html" "$T/$1.json" "$T/$2.json" >"$T/whole.out" 2>&1
		expect_eq "compare ${args:-(tables)} $pair: exit 1 either way (bw_avg -10%)" "1 1" "$rc_rows $?"
		expect_true "compare ${args:-(tables)} $pair: same output either way" diff -q "$T/rows.out" "$T/whole.out"
	done
done
expect_grep "the repeats were judged with their noise" '"n_before": 4' "$T/rows.out"
# Keys in another order, "results" twice (the later one wins, as in jansson), a
# string with escapes: the row reader takes them as the document does.
jq -c '{results: [], facts, counts, run, schema, results: .results, lab: {"a\"b": [1, {"x": null}]}}' \
	"$B" >"$T/order.json"
cmp order 0 "$A" "$T/order.json"
expect_grep "reordered, duplicate key: 6 rows matched" '^6 rows matched; 0 regressions' "$T/order.out"
# A bad row is named by its position, as before.
edit badrow '.results[2].verdict = "MAYBE"'
cmp badrow 2 "$A" "$T/badrow.json"
expect_grep "a bad row: its position named" 'badrow\.json: results\[2\]: result: unknown verdict "MAYBE"' "$T/badrow.out"
edit notarr '.results = {"a": 1}'
cmp notarr 2 "$A" "$T/notarr.json"
expect_grep "results not an array: said so" '"results" is missing or not an array' "$T/notarr.out"
# What the row reader does not expect goes to the whole-file reader, whose
# message names the line: text after the document, a cut file.
{ cat "$B"; echo '{}'; } >"$T/trail.json"
cmp trail 2 "$A" "$T/trail.json"
expect_grep "text after the document: not JSON, with its line" 'trail\.json: not a results\.json: not JSON \(line [0-9]+: ' "$T/trail.out"
head -c 2000 "$B" >"$T/cut.json"
cmp cut 2 "$A" "$T/cut.json"
expect_grep "a cut file: not JSON" 'cut\.json: not a results\.json: not JSON' "$T/cut.out"

echo "-- run --repeat: rounds, then compare with their noise"
mkdir "$T/rep"
# rep.flaky fails in its second round only (a counter in the test's dir)
cat >"$T/rep/r.yaml" <<EOF
cases:
  - {name: rep.steady, kind: command, targets: [local], argv: [echo, steady]}
  - name: rep.flaky
    kind: command
    targets: [local]
    argv: [sh, -c, 'n=\$(cat "\$0" 2>/dev/null || echo 0); n=\$((n + 1)); echo \$n >"\$0"; [ \$n -ne 2 ]', "$T/rep/count"]
EOF
"$RQ" run --repeat 3 --report-dir "$T/r3" "$T/rep" >"$T/r3.out" 2>&1
expect_eq "run --repeat 3: the round that failed fails the run" 1 $?
R3=$T/r3/latest/results.json
expect_eq "six rows, each case in rounds 1 2 3, round by round" \
	"rep.steady:1 rep.flaky:1 rep.steady:2 rep.flaky:2 rep.steady:3 rep.flaky:3" \
	"$(jq -r '[.results[] | "\(.id):\(.repeat)"] | join(" ")' "$R3")"
expect_eq "only rep.flaky's round 2 failed" "rep.flaky:2" \
	"$(jq -r '[.results[] | select(.verdict != "PASS") | "\(.id):\(.repeat)"] | join(" ")' "$R3")"
expect_grep "JUnit names each round" '<testcase classname="[^"]*" name="rep\.flaky #2"' "$T/r3/latest/junit.xml"
expect_eq "each round has its own log" "logs/rep.flaky.r1.log logs/rep.flaky.r2.log logs/rep.flaky.r3.log" \
	"$(jq -r '[.results[] | select(.id == "rep.flaky") | .log_path] | join(" ")' "$R3")"
expect_grep "the failed round's log is its own" 'exited 1' "$T/r3/latest/logs/rep.flaky.r2.log"
expect_nogrep "and the rounds that passed say so" 'exited 1' "$T/r3/latest/logs/rep.flaky.r3.log"
expect_grep "the page names the failed round" '<b class="FAIL">FAIL</b> <b>rep\.flaky #2</b>' "$T/r3/latest/report.html"
expect_eq "the journal has a unit a round" 6 "$(grep -c '"unit"' "$T/r3/latest/journal.jsonl")"
# the counter is at 3 now: every round of this run passes
"$RQ" run --repeat 3 --report-dir "$T/r3ok" "$T/rep" >/dev/null 2>&1
expect_eq "a run whose rounds all pass exits 0" 0 $?
R3OK=$T/r3ok/latest/results.json
cmp rep_fail 1 "$R3OK" "$R3"
expect_grep "compare: a round that failed is the row's verdict" '^ *REGRESSION +rep\.flaky +PASS -> FAIL' "$T/rep_fail.out"
expect_nogrep "compare: rounds are no repeated-row warning" 'appears more than once' "$T/rep_fail.out"
# the rounds' figures are judged with their noise (three a side cannot
# make a regression: the rank test's smallest p there is 0.05)
"$RQ" run --repeat 5 -k rep.steady --report-dir "$T/r5" "$T/rep" >/dev/null 2>&1
fig5() { jq --argjson k "$2" '.results |= map(.figures += [{"name": "bw_avg", "value": ($k * (100 + .repeat)), "unit": "Gb/s"}])' "$T/r5/latest/results.json" >"$T/$1.json"; }
fig5 n100 1
fig5 n70 0.7
cmp rep_noise 1 "$T/n100.json" "$T/n70.json"
expect_grep "compare: five rounds a side judged with their noise" \
	'rep\.steady +bw_avg .*WORSE .*n=5/5' "$T/rep_noise.out"
fig5 n101 1.01
cmp rep_same 0 "$T/n100.json" "$T/n101.json"
"$RQ" compare --json "$T/n100.json" "$T/n101.json" >"$T/rep_same.json"
expect_eq "compare: 1 % apart is no change, judged by its noise at n=5/5" "figure_within bootstrap 5 5" \
	"$(jq -r '.findings[] | select(.name == "bw_avg") | "\(.type) \(.method) \(.n_before) \(.n_after)"' "$T/rep_same.json")"
"$RQ" baseline save "$T/n100.json" "$T/base5.json" >/dev/null 2>&1
expect_eq "baseline save of a --repeat run keeps each figure's distribution" "5 101 105" \
	"$(jq -r '.entries[0].figures[] | select(.name == "bw_avg") | "\(.n) \(.min) \(.max)"' "$T/base5.json")"
"$RQ" run --repeat 0 --report-dir "$T/r0" "$T/rep" >"$T/r0.out" 2>&1
expect_eq "--repeat 0: usage error" 2 $?
expect_grep "naming the range" '--repeat wants a number of rounds in \[1, 1000\], not "0"' "$T/r0.out"
finish

#!/bin/sh
# report.html beside junit.xml for a run and a comparison, checked in a real
# headless browser (tests/integration/browser.sh), and the golden
# comparison of an upgrade with planted regressions (tests/golden/upgrade:
# a real rxe-vm run on 6.1 and the same run with the kernel facts of 6.12,
# a bandwidth drop of 30 % and a failing RDMA READ planted) that exits 1,
# names both and matches the golden text.  Also baselines: a run judged
# against a saved baseline.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh
. tests/integration/browser.sh

RQ=${RQ:-build/san/rdmaqual}
T=$(mktemp -d /tmp/rq-it-html.XXXXXX)
trap 'rm -rf "$T"' EXIT
export RDMAQUAL_STATE_DIR="$T/state"

# A run with every verdict: its page.
"$RQ" run --report-dir "$T/rep" tests/cases/runner >"$T/run.out" 2>&1
R="$T/rep/latest"
expect_true "report.html beside junit.xml" sh -c "[ -s '$R/report.html' ] && [ -s '$R/junit.xml' ]"
# In-page links (href="#row-3", the verdict grid's cells) are not assets.
expect_nogrep "no external asset (src=, href= but #fragments, url()" 'src=|href="[^#]|url\(' "$R/report.html"
expect_grep "a verdict grid at the top: devices/ports x suites" '<section id="grid"><h2>At a glance</h2><table class="grid"' "$R/report.html"
expect_grep "its cells link to their rows" '<td class="cell g-FAIL" data-verdict="FAIL"><a href="#row-[0-9]+">FAIL' "$R/report.html"
expect_true "every cell's link names a row of the page" sh -c "grep -o 'href=\"#row-[0-9]*' '$R/report.html' | cut -d'#' -f2 | while read -r a; do grep -q \"id=\\\"\$a\\\"\" '$R/report.html' || exit 1; done"
expect_true "the grid comes before the rows" sh -c "[ \$(grep -bo 'id=\"grid\"' '$R/report.html' | cut -d: -f1) -lt \$(grep -bo 'id=\"rows\"' '$R/report.html' | cut -d: -f1) ]"
expect_true "failures first: the failure section comes before the rows" \
	awk '/id="failures"/ && !f { f = NR } /id="rows"/ && !r { r = NR } END { exit !(f && r && f < r) }' "$R/report.html"
expect_grep "a failure shows its log tail" '<pre class="log-tail">' "$R/report.html"
browser_check run "$R/report.html" "$(expect_counts "$R/results.json")"
# The console check can fail: a page with a script error and an external
# image under the same policy shows both on the console.
if [ -n "$BROWSER" ]; then
	sed 's|<p class="muted" id="dom-counts">|<img src="http://192.0.2.1/x.png"><script>nosuch();</script>&|' \
		"$R/report.html" >"$T/broken.html"
	timeout 90 "$BROWSER" --headless --no-sandbox --disable-gpu --user-data-dir="$T/chr" \
		--enable-logging=stderr --v=0 --dump-dom "file://$T/broken.html" >/dev/null 2>"$T/broken.log"
	expect_grep "a planted script error reaches the console log the check reads" \
		':CONSOLE.*nosuch is not defined' "$T/broken.log"
	expect_grep "a planted external image is refused by the page's policy" \
		':CONSOLE.*Content Security Policy' "$T/broken.log"
fi

# The golden comparison.
G=tests/golden/upgrade
"$RQ" compare --html "$T/compare.html" "$G/before.json" "$G/after.json" >"$T/cmp.out" 2>&1
expect_eq "compare with planted regressions exits 1" 1 $?
expect_grep "names the failing row" 'REGRESSION +verbs\.rc_read\[rxe0/1\] +PASS -> FAIL' "$T/cmp.out"
expect_grep "names the slower figure" 'bw\.write_64k\[rxe0/1\] +bw_64KiB .* -30\.0% .*WORSE' "$T/cmp.out"
expect_grep "shows the kernel package that changed" 'vm\.kernel_package_version +6\.1\.192-3 +-> +6\.12\.95-1~bpo12\+1' "$T/cmp.out"
if diff -u "$G/compare.txt" "$T/cmp.out" >"$T/cmp.diff"; then
	ok "output matches tests/golden/upgrade/compare.txt"
else
	bad "output differs from tests/golden/upgrade/compare.txt"
	head -30 "$T/cmp.diff" | sed 's/^/    | /'
fi
H="$T/compare.html"
expect_grep "the page's verdict: regression" 'id="verdict" data-regressions="[1-9]' "$H"
expect_grep "the regressed row comes first" '<tr class="row" data-verdict="[A-Z]*" data-regression="1" data-id="(bw\.write_64k|verbs\.rc_read)' "$H"
expect_grep "before and after overlaid in the bandwidth chart" 'before dashed, after solid' "$H"
expect_grep "the after side's failure with its log tail" 'first difference at byte 4096' "$H"
browser_check compare "$H" "$(expect_counts "$G/after.json")"

# Figures judged with repeats (tests/golden/noise: rows repeated 8 times):
# the page shows each one's two samples, the tolerance band and the outcome.
N=tests/golden/noise
"$RQ" compare --html "$T/noise.html" "$N/before.json" "$N/after.json" >/dev/null 2>&1
expect_eq "noise page: compare exits 1 (planted regressions)" 1 $?
expect_grep "noise page: a section of judged figures" '<section id="noise"><h2>Judged figures and their noise</h2>' "$T/noise.html"
expect_eq "noise page: two regressions first, each with its strips" 2 \
	"$(grep -o '<tr class="judged" data-outcome="regression">' "$T/noise.html" | wc -l)"
expect_eq "noise page: 8 dots a side per judged figure" \
	"$(( $(grep -o '<tr class="judged"' "$T/noise.html" | wc -l) * 8 ))" \
	"$(grep -o '<circle class="sample s1"' "$T/noise.html" | wc -l)"
expect_true "noise page: the tolerance band is drawn" grep -q '<rect class="band"' "$T/noise.html"
# One table row per row id (the repeats are one row); data-verdict is the after side's.
browser_check noise "$T/noise.html" \
	"$(jq '{results: (.results | unique_by(.id))}' "$N/after.json" >"$T/uniq.json"; expect_counts "$T/uniq.json")"

# Baselines: save the before run, judge the after run's figures against it.
"$RQ" baseline save "$G/before.json" "$T/base.json" >"$T/bl.out" 2>&1
expect_eq "baseline save" 0 $?
expect_eq "entries keyed by case, target and HCA model" "bw.write_64k rxe-vm rxe" \
	"$(jq -r '.entries[] | select(.case == "bw.write_64k") | "\(.case) \(.target) \(.hca_model)"' "$T/base.json")"
"$RQ" run --baseline "$G/after.json" --report-dir "$T/rep" tests/cases/runner >"$T/blbad.out" 2>&1
expect_eq "a results.json is no baseline: usage error" 2 $?
expect_grep "naming the file and the schema" 'after\.json: "schema" is not "rdmaqual-baseline/1"' "$T/blbad.out"
finish

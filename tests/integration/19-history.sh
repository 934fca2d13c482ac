#!/bin/sh
# rdmaqual history over a reports directory of ten runs made from a real
# rxe-vm run (tests/golden/upgrade/before.json): every figure within +-2 %
# of its value, and from the sixth run on bw_64KiB 40 % lower.  The change
# point is flagged at the sixth run, for the worse, and nowhere else; the
# JSON says the same; the page has one chart per figure (checked in
# chromium: rendered, no console message, nothing fetched, a screenshot).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh
. tests/integration/browser.sh
RQ=./rdmaqual
T=$(mktemp -d /tmp/rq-it-history.XXXXXX)
trap 'rm -rf "$T"' EXIT
G=tests/golden/upgrade/before.json

# Ten runs; noise +-2 % by a fixed pattern; the step at run 6.
i=0
for k in 1.01 0.99 1.02 0.985 1.0 1.015 0.98 1.005 0.995 1.01; do
	i=$((i + 1))
	step=1
	[ "$i" -ge 6 ] && step=0.6
	d=$T/reports/2026113$((i / 10))-$(printf '%02d' "$i")0000-1
	mkdir -p "$d"
	jq --argjson k "$k" --argjson s "$step" --arg id "run-$(printf '%02d' "$i")" \
		--arg t "2026-11-30T10:$(printf '%02d' "$i"):00Z" '
		.run.id = $id | .run.started = $t |
		.results |= map(.figures |= map(if (.value | type) == "number" then
			.value = .value * $k * (if .name == "bw_64KiB" then $s else 1 end) else . end))' \
		"$G" >"$d/results.json"
done
ln -s "$(basename "$d")" "$T/reports/latest"

"$RQ" history "$T/reports" >"$T/h.out" 2>&1
expect_eq "history exits 0" 0 $?
sed 's/^/    | /' "$T/h.out" | head -8
expect_grep "ten runs, in order (latest counted once)" '^history of 10 runs, 2026-11-30T10:01:00Z \.\. 2026-11-30T10:10:00Z' "$T/h.out"
expect_grep "the step is flagged at run 6, for the worse" \
	'bw\.write_64k\[rxe0/1\] +bw_64KiB +10 .*at run run-06: [0-9.e-]+ -> [0-9.e-]+ \(-(39|40)\.[0-9]%, WORSE, p=' "$T/h.out"
expect_grep "and it is the only change point" '^[0-9]+ figures, 1 change point$' "$T/h.out"

"$RQ" history --json "$T/reports" >"$T/h.json"
expect_eq "json: schema" "rdmaqual-history/1" "$(jq -r .schema "$T/h.json")"
expect_eq "json: the change point's run and index" "run-06 5 true" \
	"$(jq -r '.figures[] | select(.name == "bw_64KiB") | .change_points[0] | "\(.run) \(.index) \(.worse)"' "$T/h.json")"
expect_eq "json: no other figure has one" 1 "$(jq '[.figures[] | select(.change_points | length > 0)] | length' "$T/h.json")"
expect_eq "json: points in run order" "run-01 run-10" \
	"$(jq -r '.figures[0].points | "\(.[0].run) \(.[-1].run)"' "$T/h.json")"
# the key figures, as compare judges them: bandwidth's msg_rate_SIZE only with --all-figures
expect_eq "json: msg_rate_64KiB is no key figure of bandwidth" 0 \
	"$(jq '[.figures[] | select(.name == "msg_rate_64KiB")] | length' "$T/h.json")"
"$RQ" history --all-figures --json "$T/reports" >"$T/h_all.json"
expect_eq "--all-figures: msg_rate_64KiB is listed" 1 \
	"$(jq '[.figures[] | select(.name == "msg_rate_64KiB")] | length' "$T/h_all.json")"
expect_true "--all-figures: more figures than the key ones" \
	[ "$(jq '.figures | length' "$T/h_all.json")" -gt "$(jq '.figures | length' "$T/h.json")" ]

"$RQ" history --html "$T/h.html" "$T/reports" >/dev/null
expect_eq "one chart per figure" "$(jq '.figures | length' "$T/h.json")" "$(grep -o '<svg class="spark"' "$T/h.html" | wc -l)"
expect_nogrep "self-contained: nothing fetched" '(src|href)="(https?:)?//' "$T/h.html"
if [ -n "$BROWSER" ]; then
	prof=$(mktemp -d /tmp/rq-chromium.XXXXXX)
	set -- --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$prof" \
		--disable-extensions --disable-background-networking
	timeout 90 "$BROWSER" "$@" --enable-logging=stderr --v=0 --dump-dom "file://$T/h.html" \
		>"$prof/dom.html" 2>"$prof/log"
	expect_eq "chromium rendered the page" 0 $?
	expect_eq "the DOM has the flagged figure first" 1 \
		"$(grep -o '<tr class="figure" data-cp="[0-9]*"' "$prof/dom.html" | head -1 | grep -c 'data-cp="1"')"
	expect_grep "the DOM marks the change for the worse" '<div class="worse">at run-06' "$prof/dom.html"
	expect_nogrep "no console messages" ':CONSOLE' "$prof/log"
	mkdir -p "$ARTIFACTS"
	timeout 90 "$BROWSER" "$@" --hide-scrollbars --window-size=1000,900 \
		--screenshot="$(realpath "$ARTIFACTS")/history.png" "file://$T/h.html" >/dev/null 2>&1
	expect_true "screenshot kept as $ARTIFACTS/history.png" [ -s "$ARTIFACTS/history.png" ]
	rm -rf "$prof"
else
	echo "  SKIP: chromium not installed (deps.txt test group): the page not checked in a browser"
fi

# Hostile text in runs (a case's figures:, a node's answers): a unit with
# markup, a started time with terminal sequences.  The page escapes them and
# has the run page's CSP; the console prints them inert.  In a shared
# reports dir another user's run dir is skipped, as reports prune does.
H=$T/hostile
for i in 1 2 3 4; do
	d=$H/20261201-0${i}0000-1
	mkdir -p "$d"
	jq -n --arg t "$(printf '2026-12-01T10:0%s:00Z\033]0;OWNED\007\033[2J' "$i")" --arg id "h-$i" '
		{schema: "rdmaqual-results/1", run: {id: $id, started: $t}, counts: {},
		 results: [{id: "x.rate", case: "x.rate", kind: "command", verdict: "PASS",
			    figures: [{name: "rate", value: 100, unit: "<script>alert(1)</script>/s"},
				      {name: "ops", value: 7, unit: "<img src=x onerror=alert(2)>/s"}]}]}' \
		>"$d/results.json"
done
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	jq '.results[0].figures[0].value = 1' "$H/20261201-040000-1/results.json" >"$T/r4" &&
		mv "$T/r4" "$H/20261201-040000-1/results.json"
	chown -R nobody "$H/20261201-040000-1"
	nruns=3
else
	nruns=4
fi
"$RQ" history --all-figures --html "$T/hostile.html" "$H" >"$T/hostile.out" 2>"$T/hostile.err"
expect_eq "hostile runs: history exits 0" 0 $?
expect_nogrep "the unit's script tag is not in the page" '<script>alert|<img src' "$T/hostile.html"
expect_grep "it is there, escaped, in the cell and the chart's title" \
	'\(&lt;script&gt;alert\(1\)&lt;/script&gt;/s,.*: 100 &lt;script&gt;' "$T/hostile.html"
expect_grep "the page has the run page's CSP" \
	"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'" \
	"$T/hostile.html"
expect_eq "the console has no escape or bell byte" 0 "$(tr -dc '\033\007' <"$T/hostile.out" | wc -c)"
expect_grep "the started time prints inert" '^history of [0-9]+ runs, 2026-12-01T10:01:00Z\?\]0;OWNED\?\?\[2J \.\. ' \
	"$T/hostile.out"
if [ "$nruns" = 3 ]; then
	expect_grep "another user's run dir is not read" '^history of 3 runs' "$T/hostile.out"
	expect_grep "and history says it skipped it" 'skipped 1 run dir of other users' "$T/hostile.err"
fi

"$RQ" history "$T/nothing" >"$T/none.out" 2>&1
expect_eq "a directory that does not exist: exit 2" 2 $?
mkdir "$T/empty"
"$RQ" history "$T/empty" >"$T/empty.out" 2>&1
expect_eq "no run found: exit 2" 2 $?
expect_grep "and says so" 'no run \(a directory with results.json\)' "$T/empty.out"
finish

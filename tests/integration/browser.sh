# shellcheck shell=sh
# Checks of report.html in a real headless browser (Debian's chromium),
# sourced by the integration tests after lib.sh.
#
# browser_check NAME HTML EXPECT
#   loads HTML (file://, no network), lets its script run, and checks that
#   the rendered DOM's row counts line (#dom-counts, filled in by the page's
#   script from the rows it drew) equals EXPECT, "rows N PASS a FAIL b SKIP
#   c ERROR d" (callers compute it from results.json with expect_counts),
#   that the console showed nothing (no script error, no blocked asset),
#   and keeps a screenshot as build/artifacts/reports/NAME.png.
# expect_counts RESULTS_JSON   prints that EXPECT line.
BROWSER=$(command -v chromium || command -v chromium-browser || true)
ARTIFACTS=${RQ_ARTIFACTS:-build/artifacts/reports}

expect_counts() {
	jq -r '"rows \(.results | length)" + ([ "PASS", "FAIL", "SKIP", "ERROR" ] | map(. as $v |
		" \($v) \([ $r[] | select(.verdict == $v) ] | length)") | join(""))' \
		--argjson r "$(jq '.results' "$1")" "$1"
}

browser_check() {
	name=$1 html=$2 want=$3
	if [ -z "$BROWSER" ]; then
		echo "  SKIP: chromium not installed (deps.txt test group): $name not checked in a browser"
		return 0
	fi
	url="file://$(realpath "$html")"
	prof=$(mktemp -d /tmp/rq-chromium.XXXXXX)
	# --no-sandbox: tests may run as root, where chromium refuses its sandbox.
	set -- --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$prof" \
		--disable-extensions --disable-background-networking
	timeout 90 "$BROWSER" "$@" --enable-logging=stderr --v=0 --dump-dom "$url" \
		>"$prof/dom.html" 2>"$prof/log"
	expect_eq "$name: chromium rendered the page" 0 $?
	got=$(sed -n 's/.*<p class="muted" id="dom-counts">\([^<]*\)<.*/\1/p' "$prof/dom.html")
	expect_eq "$name: rendered DOM counts match the results" "$want" "$got"
	if grep -q ':CONSOLE' "$prof/log"; then
		bad "$name: the console showed messages"
		grep ':CONSOLE' "$prof/log" | sed 's/^/    | /' | head -5
	else
		ok "$name: no console messages (no script error, no blocked asset)"
	fi
	mkdir -p "$ARTIFACTS"
	timeout 90 "$BROWSER" "$@" --hide-scrollbars --window-size=1200,1600 \
		--screenshot="$(realpath "$ARTIFACTS")/$name.png" "$url" >/dev/null 2>&1
	expect_true "$name: screenshot kept as $ARTIFACTS/$name.png" [ -s "$ARTIFACTS/$name.png" ]
	rm -rf "$prof"
}

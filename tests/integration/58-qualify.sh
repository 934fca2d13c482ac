#!/bin/sh
# Qualify a kernel upgrade in VMs: debian:bookworm (6.1) against
# debian:bookworm-backports (6.12) on a short suite (driver, mtu, verbs, one
# bandwidth case), both runs kept and reported, the comparison printed and
# written (qualify.json, junit.xml, report.html, checked in chromium); a
# package that does not exist is a clear error before anything boots;
# offline (no mirror answers) both cached kernels are used, --repeat 2
# judges medians with their spread; the same kernel against itself with
# the default --repeat auto exits 0 (no figure "regresses" by chance); bad
# option values exit 2 before anything boots; a run judged against a
# planted baseline fails naming the figure.  Kernels are fetched on a cold
# cache.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh
. tests/integration/browser.sh

if ! command -v qemu-system-x86_64 >/dev/null; then
	skip "qemu-system-x86_64 not installed"
fi
RQ=${RQ_VM:-./rdmaqual}
T=$(mktemp -d /tmp/rq-it-qualify.XXXXXX)
trap 'rm -rf "$T"' EXIT
export RDMAQUAL_STATE_DIR="$T/state"
SUITE="cases/driver cases/mtu cases/verbs cases/bw/native.yaml -k driver.* -k mtu.* -k verbs.* -k bw.write_64k"

# Both kernels first (a cold cache downloads them): without a mirror and
# without a cache there is nothing to qualify here.
start=$(date +%s)
for s in bookworm bookworm-backports; do
	if ! "$RQ" vm image --kernel "debian:$s" >"$T/img-$s.out" 2>&1; then
		sed 's/^/    | /' "$T/img-$s.out"
		skip "debian:$s cannot be fetched here and is not cached"
	fi
done
echo "    kernels ready in $(( $(date +%s) - start ))s"
expect_grep "bookworm is 6.1, with its package version and origin" \
	'^package: +linux-image-6\.1\.[^ ]* 6\.1\.[^ ]* from http[^ ]* bookworm[^ ]*/main' "$T/img-bookworm.out"
expect_grep "bookworm-backports is 6.12" \
	'^package: +linux-image-6\.12\.[^ ]* 6\.12\.[^ ]*bpo[^ ]* from http[^ ]* bookworm-backports/main' \
	"$T/img-bookworm-backports.out"

# A package that does not exist: exit 2 before any boot, naming it.
"$RQ" qualify --before debian:linux-image-6.1.0-99-amd64=0.0 --after debian:bookworm \
	--report-dir "$T/q" -k driver.rxe >"$T/missing.out" 2>&1
expect_eq "missing package: qualify exits 2" 2 $?
expect_grep "and says which package, version and suites" \
	'--before debian:linux-image-6\.1\.0-99-amd64=0\.0: .*no package linux-image-6\.1\.0-99-amd64 version 0\.0 in bookworm, bookworm-updates, bookworm-security, bookworm-backports' \
	"$T/missing.out"
expect_true "nothing was booted or written" [ ! -e "$T/q" ]

# Bad values: exit 2 before anything boots or is written, saying why.
badval() {
	n=$1 want=$2
	shift 2
	"$RQ" qualify --before debian:bookworm --after debian:bookworm --report-dir "$T/bad" "$@" \
		-k driver.rxe >"$T/bad-$n.out" 2>&1
	expect_eq "$n: exit 2" 2 $?
	expect_grep "$n: says why" "$want" "$T/bad-$n.out"
}
badval repeat0 '--repeat wants auto or 1 to 20, not "0"' --repeat 0
badval maxbelow '--max-repeat 2 is below --repeat 3' --repeat 3 --max-repeat 2
badval conf '--confidence: confidence "0.9999" is not above 0.5 and below 0.999' --confidence 0.9999
badval conflow 'is not above 0.5' --confidence 0.5
badval cmdline '--after-cmdline: kernel command line: "rq.mode=hang" is set by rdmaqual itself' \
	--after-cmdline rq.mode=hang
badval delay '--after-link-delay: link delay "150" is not a number of us or ms' --after-link-delay 150
badval delayvm1 'link-delay need two guests or more .*, not vm1$' --vm-topology vm1 --after-link-delay 150us
expect_true "bad values: nothing was booted or written" [ ! -e "$T/bad" ]

# The qualification, one run a side: no noise measured, so no figure is
# judged a regression (each is inconclusive) and, every row passing on
# 6.12 as on 6.1, the exit status is 0.
start=$(date +%s)
# shellcheck disable=SC2086
"$RQ" qualify --repeat 1 --before debian:bookworm --after debian:bookworm-backports --report-dir "$T/q" \
	$SUITE >"$T/qual.out" 2>&1
rc=$?
took=$(( $(date +%s) - start ))
sed -n '/^== qualify/,$p' "$T/qual.out" | sed 's/^/    | /'
Q=
for q in "$T"/q/qualify-*; do [ -e "$q" ] && Q=$q && break; done
J="$Q/qualify.json"
expect_true "qualify.json written" [ -s "$J" ]
expect_eq "one run a side: exit 0" 0 "$rc"
expect_eq "no finding is a regression" 0 "$(jq '[.compare.findings[] | select(.regression)] | length' "$J")"
expect_true "the latency and bandwidth figures are inconclusive (n=1)" \
	jq -e '[.compare.findings[] | select(.type == "figure_inconclusive")] | length > 3' "$J"
expect_grep "the console says why" 'inconclusive: [-+][0-9.]+% with no noise measured \(n=1/1\)' "$T/qual.out"
expect_eq "qualify.json: the repeat mode" "fixed 1" "$(jq -r '"\(.repeat_mode) \(.repeat)"' "$J")"
expect_eq "no row regressed: the suite passes on 6.12 as on 6.1" 0 \
	"$(jq '[.compare.findings[] | select(.regression and .row != null and .name == null)] | length' "$J")"
B=$(jq -r '.before.runs[0]' "$J")
A=$(jq -r '.after.runs[0]' "$J")
for side in B A; do
	# (not $d: lib.sh's expect_true uses it)
	eval rd=\$$side
	# shellcheck disable=SC2154 # rd is set by the eval above
	expect_true "$side run is an ordinary run dir (junit.xml, results.json, report.html)" \
		sh -c "[ -s '$rd/junit.xml' ] && [ -s '$rd/results.json' ] && [ -s '$rd/report.html' ]"
	expect_eq "$side run: driver, mtu, verbs and bandwidth rows pass" 0 \
		"$(jq '[.results[] | select(.verdict == "FAIL" or .verdict == "ERROR")] | length' "$rd/results.json")"
	expect_true "$side run records the kernel package version and origin" \
		jq -e '.facts["vm.kernel_package_version"] and .facts["vm.kernel_origin"]' "$rd/results.json"
done
expect_eq "before ran 6.1" "6.1" "$(jq -r '.facts["vm.guest_kernel"]' "$B/results.json" | cut -d. -f1,2)"
expect_eq "after ran 6.12" "6.12" "$(jq -r '.facts["vm.guest_kernel"]' "$A/results.json" | cut -d. -f1,2)"
expect_grep "per-row verdicts side by side" '^  bw\.write_64k\[rxe0/1\] +PASS +PASS' "$T/qual.out"
expect_grep "figures side by side" 'bw\.write_64k\[rxe0/1\] +bw_64KiB +[0-9.]+ Gb/s +[0-9.]+ Gb/s' "$T/qual.out"
expect_grep "the kernel facts that changed" 'vm\.kernel_package_version +6\.1\.[^ ]+ +-> +6\.12\.' "$T/qual.out"
expect_grep "the verdict line" '^result: no regression$' "$T/qual.out"
# compare judges one run a side as a fixed limit (a lab's low-noise runs);
# --noise-only asks it for qualify's view: no noise measured, no verdict.
"$RQ" compare --noise-only "$B" "$A" >"$T/cmp.out" 2>&1
expect_eq "compare --noise-only of the two kept runs agrees with qualify" "$rc" $?
expect_true "qualify's junit.xml follows the junit-10 schema" \
	xmllint --noout --schema tests/junit-10.xsd "$Q/junit.xml"
expect_grep "the page links each side's runs to their own pages" \
	"<a class=\"side-run\" href=\"after/$(basename "$A")/report.html\">" "$Q/report.html"
browser_check qualify "$Q/report.html" "$(expect_counts "$A/results.json")"
browser_check qualify-before-run "$B/report.html" "$(expect_counts "$B/results.json")"
browser_check qualify-after-run "$A/report.html" "$(expect_counts "$A/results.json")"

# Offline: no mirror answers, both cached kernels are used and say so;
# --repeat 2 alternates the sides and judges medians.
start=$(date +%s)
RQ_DEBIAN_MIRROR=http://127.0.0.1:9/debian "$RQ" qualify --repeat 2 --before debian:bookworm \
	--after debian:bookworm-backports --report-dir "$T/off" cases/driver cases/bw/native.yaml \
	-k driver.rxe -k bw.write_64k >"$T/off.out" 2>&1
rc=$?
took2=$(( $(date +%s) - start ))
sed -n '/^== qualify/,/^before  \//p' "$T/off.out" | sed 's/^/    | /'
# Two runs a side cannot make a regression out of noise: the rank test's
# smallest p-value at n=2 is 1/3.
expect_eq "offline qualify: exit 0" 0 $rc
expect_nogrep "offline: every row ran (none is an ERROR)" '^(ERROR|FAIL) ' "$T/off.out"
grep -E '^(ERROR|FAIL) ' "$T/off.out" | sed 's/^/    | /'	# which, when one did
expect_grep "offline: the cached 6.1 is used and said to be" '^before +debian:bookworm: .*\(offline\)$' "$T/off.out"
expect_grep "offline: the cached 6.12 too" '^after +debian:bookworm-backports: .*\(offline\)$' "$T/off.out"
OJ=
for q in "$T"/off/qualify-*/qualify.json; do [ -e "$q" ] && OJ=$q && break; done
expect_eq "two runs a side" "2 2" "$(jq -r '"\(.before.runs | length) \(.after.runs | length)"' "$OJ")"
expect_eq "the runs' facts say offline" "offline" \
	"$(jq -r '.facts["vm.kernel_cache"]' "$(jq -r '.after.runs[1]' "$OJ")/results.json")"
expect_grep "medians with their spread" 'bw\.write_64k\[rxe0/1\] +bw_64KiB +[0-9.e-]+ \[[0-9.e-]+\.\.[0-9.e-]+\] n=2' "$T/off.out"
expect_grep "the sides alternate" '== before run 2' "$T/off.out"

# A/A: the same kernel on both sides, the default --repeat auto (capped at
# 4 here to keep the test short): nothing changed, so exit 0.
start=$(date +%s)
RQ_DEBIAN_MIRROR=http://127.0.0.1:9/debian "$RQ" qualify --max-repeat 4 --before debian:bookworm \
	--after debian:bookworm --report-dir "$T/aa" cases/bw/native.yaml -k bw.write_64k >"$T/aa.out" 2>&1
rc=$?
took3=$(( $(date +%s) - start ))
sed -n '/^== qualify/,/^result/p' "$T/aa.out" | sed 's/^/    | /'
expect_eq "A/A: the same kernel against itself exits 0" 0 $rc
AJ=
for q in "$T"/aa/qualify-*/qualify.json; do [ -e "$q" ] && AJ=$q && break; done
expect_eq "A/A: --repeat auto is the default" auto "$(jq -r .repeat_mode "$AJ")"
expect_true "A/A: at least 3 runs a side, at most 4" jq -e '.repeat >= 3 and .repeat <= 4' "$AJ"
expect_true "A/A: the bandwidth is judged with its noise (bootstrap, n per side)" \
	jq -e '[.compare.findings[] | select(.name == "bw_64KiB" and .method == "bootstrap" and .n_before >= 3)] | length == 1' "$AJ"
expect_grep "A/A: the console names why auto stopped" '^each side ran [34] times, alternating; .*--repeat auto stopped: ' "$T/aa.out"

# A planted baseline (the after run's figures, bandwidth made 10 times
# higher) fails the bandwidth row of the next run, naming the figure.
"$RQ" baseline save "$A" "$T/base.json" >/dev/null 2>&1
jq '(.entries[] | select(.case == "bw.write_64k") | .figures[] | select(.name == "bw_64KiB") | .value) |= . * 10' \
	"$T/base.json" >"$T/planted.json"
"$RQ" run --target rxe-vm --kernel debian:bookworm-backports --baseline "$T/planted.json" \
	--report-dir "$T/bl" cases/bw/native.yaml -k bw.write_64k >"$T/bl.out" 2>&1
expect_eq "the run against the planted baseline fails" 1 $?
expect_grep "naming the figure, both values and the tolerance" \
	'^FAIL +bw\.write_64k\[rxe0/1\] .*bw_64KiB [0-9.e-]+ Gb/s is [0-9.]+% lower than the baseline [0-9.e-]+ \(tolerance 5%\)' "$T/bl.out"
echo "    qualify (short suite, two kernels): ${took}s; offline --repeat 2: ${took2}s; A/A auto: ${took3}s"
finish

#!/bin/sh
# The shipped fabric cases (cases/fabric/) on ibsim: the small fat tree and
# the rehearsal on the imported lab pass with every row; the lab-scale ones
# stay out of a plain run, say so, and are planned when asked for (-t
# lab-scale; they run in bench/fabric.sh's sizes, not here); the shipped
# import is what `rdmaqual fabric import` makes of its ibnetdiscover source
# today.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

ibsim_test_setup fabcases

"$RQ" fabric import fixtures/fabrics/lab-ibnetdiscover.txt -o "$T/lab.net" >"$T/imp.out" 2>&1
expect_eq "fabric import of the shipped ibnetdiscover exits 0" 0 $?
expect_eq "fixtures/fabrics/lab-import.net is today's import of it (else: rdmaqual fabric import ... -o it)" "" \
	"$(diff fixtures/fabrics/lab-import.net "$T/lab.net" | head -5)"

"$RQ" run --report-dir "$T/rep" cases/fabric >"$T/run.out" 2>&1
expect_eq "cases/fabric (a plain run) exits 0" 0 $?
R=$T/rep/latest/results.json
expect_eq "... every row passes" "0" "$(jq '[.results[] | select(.verdict != "PASS")] | length' "$R")"
expect_eq "... the small fabric and the rehearsal, not the lab-scale cases" \
	"fabric.rehearse_cables fabric.rehearse_ftree fabric.rehearse_identity fabric.small_health fabric.small_links fabric.small_routing" \
	"$(jq -r '[.results[].case] | unique | join(" ")' "$R")"
expect_grep "... and it says what it left out" '^rdmaqual run: 5 lab-scale cases left out \(they run with -t lab-scale\)$' "$T/run.out"
expect_grep "the rehearsal's ftree reaches every pair" '^PASS +fabric\.rehearse_ftree\[reachability\]' "$T/run.out"

"$RQ" run --dry-run -t lab-scale cases/fabric >"$T/dry.out" 2>&1
expect_eq "-t lab-scale plans them" 0 $?
expect_eq "... all five on ibsim" 5 "$(grep -c '^fabric\.\(ft648\|rail512\)_[a-z]* .*ibsim' "$T/dry.out")"
"$RQ" run --dry-run -k fabric.ft648_links cases/fabric >"$T/dry1.out" 2>&1
expect_grep "-k naming one asks for it too" '^fabric\.ft648_links ' "$T/dry1.out"
"$RQ" run --dry-run -k 'fabric.ft648*' cases/fabric >"$T/dry2.out" 2>&1
expect_eq "a glob alone does not (no case selected: exit 2)" 2 $?
finish

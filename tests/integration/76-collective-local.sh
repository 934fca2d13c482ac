#!/bin/sh
# The collective kind on this host: rdmaqual-coll under mpirun, four ranks
# over shared memory (tests/integration/collective-cases/local.yaml).  Every
# operation passes with nccl-tests' busbw; a wrong element FAILs naming its
# size and rank; a late rank is named as the straggler; a missing benchmark
# SKIPs; mpirun refusing to start ranks is an ERROR in its own words; an
# unknown placeholder is a lint error at file:line:col; a hung rank is ended
# by the case's deadline and a rank killed mid-collective is an ERROR, with
# none of the test's ranks left either way.  Needs Open MPI (skips without).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

RQ=${RQ:-build/san/rdmaqual}
if ! command -v mpirun >/dev/null || [ ! -x build/rdmaqual-coll ]; then
	echo "  SKIP: mpirun or build/rdmaqual-coll missing (make deps all)"
	exit 0
fi
T=$(mktemp -d /tmp/rq-it-coll.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
# a run state of its own: another run on this host (a second make check)
# holds the default one's lock
RDMAQUAL_STATE_DIR="$T/state"
export RDMAQUAL_STATE_DIR
C=tests/integration/collective-cases
R=$T/rep/latest/results.json

"$RQ" run "$C/local.yaml" --report-dir "$T/rep" >"$T/run.out" 2>&1
expect_eq "the run exits 1 (the fault cases fail)" 1 $?
verdict() { jq -r --arg n "$1" '.results[] | select(.case == $n) | .verdict' "$R"; }
reason() { jq -r --arg n "$1" '.results[] | select(.case == $n) | .reason' "$R"; }
fig() { jq -r --arg n "$1" --arg f "$2" '.results[] | select(.case == $n) | .figures[] | select(.name == $f) | .value' "$R"; }
fact() { jq -r --arg n "$1" --arg f "$2" '.results[] | select(.case == $n) | .facts[$f] // empty' "$R"; }
for c in allreduce allgather reduce_scatter alltoall bcast barrier ring bisection; do
	expect_eq "coll.$c passes" PASS "$(verdict coll.$c)"
done
expect_eq "four ranks" 4 "$(fact coll.allreduce ranks)"
a=$(fig coll.allreduce algbw_64KiB) b=$(fig coll.allreduce busbw_64KiB)
expect_true "allreduce busbw = algbw x 2(n-1)/n = 1.5 algbw ($a, $b)" \
	awk -v a="$a" -v b="$b" 'BEGIN { exit !(a > 0 && b - 1.5 * a < 0.002 && 1.5 * a - b < 0.002) }'
a=$(fig coll.alltoall algbw_64KiB) b=$(fig coll.alltoall busbw_64KiB)
expect_true "alltoall busbw = algbw x (n-1)/n ($a, $b)" \
	awk -v a="$a" -v b="$b" 'BEGIN { exit !(a > 0 && b - 0.75 * a < 0.002 && 0.75 * a - b < 0.002) }'
expect_true "ring: an aggregate and four links" [ "$(jq '[.results[] | select(.case == "coll.ring") | .figures[] | select(.name | startswith("link_r"))] | length' "$R")" -eq 4 ]
expect_eq "a wrong element FAILs" FAIL "$(verdict fault.wrong)"
expect_eq "... naming its size and rank" \
	"alltoall 64KiB: rank 2 on $(hostname): 1 wrong element (first 8192: got 2015, expected 2014)" \
	"$(reason fault.wrong)"
expect_eq "a late rank: FAIL" FAIL "$(verdict fault.late)"
expect_grep "... the straggler named: rank 1" "straggler: rank 1 on" "$T/run.out"
expect_eq "... and a suspect" "$(hostname)" "$(fact fault.late suspects)"
expect_eq "busbw below min_busbw FAILs" FAIL "$(verdict fault.toosmall)"
expect_eq "no benchmark: SKIP" SKIP "$(verdict fault.noprog)"
expect_grep "... naming it" "/nonexistent/rdmaqual-coll not found on this node" "$T/run.out"
expect_grep "... and the package that has it" "install the package rdmaqual-mpi" "$T/run.out"
expect_eq "mpirun refusing to start ranks: ERROR" ERROR "$(verdict fault.nostart)"
expect_grep "... in mpirun's words" "mpirun has detected an attempt to run as root" "$T/run.out"
expect_eq "command fills {hosts} {hostfile} {np} {nnodes}" PASS "$(verdict cmd.placeholders)"

# A lab run: the job spans the nodes, so it runs once for the lab, from its
# first node, every node in the hostfile (three local agents, all this
# host: one line of 12 slots); the straggler's host is a lab suspect and
# drained, the node it was launched from is not.  The second node takes
# this host's name, which the ranks print.
H=$(hostname)
"$RQ" run --nodes "n1,$H,n3" --launcher local --dry-run -k coll.allreduce "$C/local.yaml" \
	>"$T/labdry.out" 2>&1
expect_grep "lab dry run: once, across all nodes" '^coll\.allreduce +once, across all 3 nodes, launched from n1$' \
	"$T/labdry.out"
RDMAQUAL_STATE_DIR="$T/labst" "$RQ" run --nodes "n1,$H,n3" --launcher local --report-dir "$T/lab" \
	--drain-list "$T/drain" -k coll.allreduce -k fault.late "$C/local.yaml" >"$T/lab.out" 2>&1
expect_eq "lab: exits 1 (fault.late)" 1 $?
expect_eq "lab: one row a collective, the lab's, launched from n1, 3 x 4 ranks" \
	"coll.allreduce[all] n1 PASS 12|fault.late[all] n1 FAIL 12" \
	"$(jq -r '.results[] | "\(.id) \(.node) \(.verdict) \(.facts.ranks)"' "$T/lab/latest/results.json" | paste -sd'|')"
expect_eq "lab: the straggler's node is drained, alone" "$H fault.late[all]" "$(cut -d: -f1 "$T/drain")"

# lint: an unknown placeholder names the case's file:line:col
printf 'cases:\n  - name: x.dev\n    kind: command\n    argv: [ibv_devinfo, -d, "{devv}"]\n' >"$T/bad.yaml"
"$RQ" lint "$T/bad.yaml" >"$T/lint.out" 2>&1
expect_eq "lint exits 2" 2 $?
expect_grep "... at file:line:col" "bad.yaml:2:5: error: argv: unknown placeholder \{devv\}" "$T/lint.out"

# a hung rank: the deadline ends mpirun and every rank; a killed rank: ERROR
cp build/rdmaqual-coll "$T/coll-hang"
cp build/rdmaqual-coll "$T/coll-kill"
sed -e "s|KPROG|$T/coll-kill|" -e "s|PROG|$T/coll-hang|" "$C/hang.yaml" >"$T/hang.yaml"
"$RQ" run "$T/hang.yaml" -k fault.hang --report-dir "$T/h" >"$T/hang.out" 2>&1
expect_eq "a hung rank: ERROR at the deadline" ERROR \
	"$(jq -r '.results[0].verdict' "$T/h/latest/results.json")"
expect_grep "... saying so" "did not finish within the case timeout" "$T/hang.out"
# mpirun gets SIGTERM with a grace to kill its ranks (their own process
# groups): none is left when the run ends
expect_true "... no rank of it left when the run ends" no_proc "$T/coll-hang"
"$RQ" run "$T/hang.yaml" -k fault.killed --report-dir "$T/k" >"$T/kill.out" 2>&1 &
run=$!
wait_for "the killed case's ranks run" 30 pgrep -f "$T/coll-kill -o"
sleep 1
pkill -KILL -f -n -- "$T/coll-kill -o"
wait "$run"
expect_eq "a rank killed mid-collective: ERROR" ERROR \
	"$(jq -r '.results[0].verdict' "$T/k/latest/results.json")"
expect_grep "... in mpirun's words" "exited on signal 9|killed|signal" "$T/kill.out"
wait_for "... no rank of it left" 10 no_proc "$T/coll-kill"
echo "  $_checks checks, $_fails failed"
[ "$_fails" -eq 0 ]

#!/bin/sh
# memreg on rxe in one guest (vm1) under TCG, one boot for all: the shipped
# case (4 KiB to 64 MiB) passes with its figures in under 3 s; with 2 MiB
# huge pages reserved, both page kinds are measured; a memlock of 8 MiB caps
# the default sizes and says so; a memlock of 64 KiB stops a named 1 MiB
# registration with an ERROR naming the limit and the fix (as root too:
# the kind drops CAP_IPC_LOCK); thresholds no device meets fail naming the
# figure; what the guest lacks (ODP, dma-buf) is a fact, not a failure.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

vm_test_setup memreg

start=$(date +%s)
"$RQ" run --target rxe-vm --vm-topology vm1 --accel "${RQ_ACCEL:-tcg}" --report-dir "$T/rep" \
	cases/verbs/memreg.yaml tests/integration/memreg-vm-cases >"$T/run.out" 2>&1 &
pid=$!
wait $pid
rc=$?
took=$(( $(date +%s) - start ))
sed 's/^/    | /' "$T/run.out"
R="$T/rep/latest/results.json"
# row ID: its reason; row ID KEY: a fact; row ID NAME: is the figure there?
reason() { jq -r --arg id "$1" '.results[] | select(.id == $id) | .reason // ""' "$R"; }
fact() { jq -r --arg id "$1" --arg k "$2" '.results[] | select(.id == $id) | .facts[$k] // ""' "$R"; }
has_fig() {
	jq -e --arg id "$1" --arg f "$2" \
		'[.results[] | select(.id == $id) | .figures[]? | select(.name == $f)] | length > 0' "$R" >/dev/null
}
no_fig() { ! has_fig "$@"; }
# contains TEXT PART...: every PART is in TEXT, in that order
contains() {
	_t=$1; shift
	for _p in "$@"; do
		case $_t in *"$_p"*) _t=${_t#*"$_p"} ;; *) return 1 ;; esac
	done
}
nonempty() { for _v in "$@"; do [ -n "$_v" ] || return 1; done; }

expect_eq "run exit status (a FAIL and an ERROR on purpose)" 1 $rc
s='verbs.memreg[rxe0]'
expect_grep "the shipped memreg case passes on rxe0" '^PASS +verbs\.memreg\[rxe0\]' "$T/run.out"
# shellcheck disable=SC2016 # $2 and $3 are awk's
expect_true "... in under 3 s" awk '$2 == "verbs.memreg[rxe0]" { t=$3; sub("s","",t); f=1; exit !(t+0 < 3) } END { if (!f) exit 1 }' "$T/run.out"
for f in reg_us_4k_4KiB reg_us_4k_64MiB dereg_us_4k_64MiB us_per_GiB_4k_64MiB regs_per_s_4k_64MiB; do
	expect_true "... with the figure $f" has_fig "$s" "$f"
done
expect_true "the device's max_mr, max_mr_size and page_size_cap are facts" nonempty \
	"$(fact "$s" max_mr)" "$(fact "$s" max_mr_size)" "$(fact "$s" page_size_cap)"
expect_eq "the guest agent's memlock (unlimited) is a fact" unlimited "$(fact "$s" memlock_limit)"
expect_true "rxe without ODP says so, as a fact" contains "$(fact "$s" pages_odp)" "reports no ODP"

expect_grep "huge pages reserved in the guest" '^PASS +mreg\.a_reserve_hugepages' "$T/run.out"
expect_grep "4 KiB and 2 MiB pages registered" '^PASS +mreg\.b_hugepages\[rxe0\]' "$T/run.out"
expect_true "... with a 2 MiB huge-page figure at 16 MiB" has_fig 'mreg.b_hugepages[rxe0]' reg_us_2m_16MiB
expect_true "... and a 4 KiB-page one" has_fig 'mreg.b_hugepages[rxe0]' reg_us_4k_16MiB

c='mreg.c_default_capped_by_memlock[rxe0]'
expect_grep "memlock 8 MiB: the default sizes still pass" '^PASS +mreg\.c_default_capped_by_memlock\[rxe0\]' "$T/run.out"
expect_true "... measuring up to 4 MiB" has_fig "$c" reg_us_4k_4MiB
expect_true "... and not 16 MiB" no_fig "$c" reg_us_4k_16MiB
expect_eq "... saying what was left out and why" \
	"from 16MiB up: above the memlock limit (sizes: names them, to see its ERROR)" "$(fact "$c" sizes_left_out)"

stops='mreg.d_memlock_stops[rxe0]'
expect_grep "memlock 64 KiB stops 1 MiB with an ERROR, not a crash" '^ERROR +mreg\.d_memlock_stops\[rxe0\]' "$T/run.out"
why=$(reason "$stops")
expect_true "... naming the call and the size ($why)" contains "$why" "ibv_reg_mr of 1 MiB (4 KiB pages) on rxe0 failed"
expect_true "... the limit and what it needed" contains "$why" "RLIMIT_MEMLOCK is 64 KiB and the registration pins 1 MiB"
expect_true "... and the fix (limits.d, LimitMEMLOCK)" contains "$why" \
	"memlock unlimited" "/etc/security/limits.d/" "LimitMEMLOCK=infinity"
expect_true "... after measuring what fits (4 KiB)" has_fig "$stops" reg_us_4k_4KiB
expect_eq "... with the lowered limit as a fact" "64 KiB" "$(fact "$stops" memlock_limit)"
expect_grep "... and CAP_IPC_LOCK dropped, in its log" 'CAP_IPC_LOCK dropped' "$T/rep/latest/logs/mreg.d_memlock_stops_rxe0_.log"

e='mreg.e_thresholds[rxe0]'
expect_grep "an unmet min_regs_per_s fails the row" '^FAIL +mreg\.e_thresholds\[rxe0\]' "$T/run.out"
expect_true "... naming the figure and the threshold" contains "$(reason "$e")" \
	"registrations per second, below min_regs_per_s 1000000000000"

expect_true "suite took under 3 minutes (${took}s)" [ "$took" -lt 180 ]
# other runs may share this machine: look for this run's own QEMUs only
expect_true "no QEMU of the run left" no_proc "/tmp/rq-$pid-[0-9]+\.[^/]+/vm"
finish

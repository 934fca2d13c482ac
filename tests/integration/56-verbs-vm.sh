#!/bin/sh
# Verbs on vm2 under TCG, one boot for all: RC ping-pong and a short native
# bandwidth run pass with their figures; the adaptive latency row stops
# before its 1000 round trips and its server stops with it, the adaptive
# bandwidth row says how it stopped; then the failure paths: a perftest
# server that refuses (wrong device) ends as FAIL naming it within its
# deadline and leaves no ib_write_bw behind, a server side without the
# selected device stops the client with a FAIL, and an RDMA CM connect to an
# address nobody answers for fails naming the CM event, and a case whose
# selected port does not exist SKIPs saying so.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

vm_test_setup verbs

start=$(date +%s)
"$RQ" run --target rxe-vm --vm-topology vm2 --accel "${RQ_ACCEL:-tcg}" --report-dir "$T/rep" \
	-k verbs.rc_send -k verbs.rc_latency -k bw.write_64k -k 'vfault.*' \
	cases/verbs/rc.yaml cases/bw/native.yaml tests/integration/verbs-faults >"$T/run.out" 2>&1 &
pid=$!
wait $pid
rc=$?
took=$(( $(date +%s) - start ))
sed 's/^/    | /' "$T/run.out"
R="$T/rep/latest/results.json"
expect_eq "run exit status (three failures on purpose)" 1 $rc
expect_grep "RC SEND ping-pong passes" '^PASS +verbs\.rc_send\[rxe0/1\]' "$T/run.out"
expect_grep "its latency figures are reported" '"lat_median"' "$R"
expect_grep "native RDMA WRITE 64 KiB passes its floor" '^PASS +bw\.write_64k\[rxe0/1\]' "$T/run.out"
expect_grep "its bandwidth figure is reported" '"bw_64KiB"' "$R"
expect_grep "... with its interval and how long it streamed" '"ci95_pct_64KiB"' "$R"
expect_grep "... and how its adaptive stream stopped" '"converged_64KiB": ?"(yes|no): ' "$R"
# the server stops when the client does: else the client waits for its "served" to the deadline
expect_grep "the adaptive RC latency row passes" '^PASS +verbs\.rc_latency\[rxe0/1\]' "$T/run.out"
expect_true "... in fewer than its 1000 round trips" \
	jq -e '[.results[] | select(.case == "verbs.rc_latency") | .figures[] | select(.name == "iterations") | .value] | .[0] < 1000' "$R"
expect_true "... within seconds, the server stopping with it" \
	jq -e '[.results[] | select(.case == "verbs.rc_latency") | .duration_s] | .[0] < 10' "$R"
expect_grep "... saying how it stopped" '"converged": ?"(yes|no): ' "$R"
expect_grep "min_line_rate is not judged on rxe, and says so" 'not judged: software device' "$R"
# 14 (67 ms) timed out between busy TCG guests and rxe 6.1 failed the retransmitted SENDs
expect_eq "rxe QPs get the software ACK timeout, 19, on both sides" 2 \
	"$(grep -c '^# opened rxe0/1: .*, ACK timeout 19 ' "$T/rep/latest/logs/bw.write_64k_rxe0_1_.log")"
expect_grep "a refusing perftest server fails the case, naming why" \
	'^FAIL +vfault\.a_perftest_server_refuses\[rxe0/1\] +[0-9.]+s .*IB device rxe9 not found' "$T/run.out"
# shellcheck disable=SC2016 # $3 is awk's
expect_true "... within its 60 s deadline" awk '/vfault\.a_perftest_server_refuses/ { t=$3; sub("s","",t); exit !(t+0 < 60) }' "$T/run.out"
expect_grep "... and leaves no ib_write_bw in the guest" '^PASS +vfault\.b_no_perftest_left' "$T/run.out"
expect_grep "a server side without the device stops the client with a FAIL" \
	'^FAIL +vfault\.c_pingpong_server_device_missing .*device rxe9 not found on the server side' "$T/run.out"
expect_grep "a wrong CM address fails naming the CM event" \
	'^FAIL +vfault\.d_rdma_cm_wrong_address .*RDMA_CM_EVENT_(ADDR_ERROR|UNREACHABLE|ROUTE_ERROR)' "$T/run.out"
expect_grep "no ACTIVE port selected is a SKIP that says so, on both sides" \
	'^SKIP +vfault\.e_no_active_port .*no ACTIVE port on the client side' "$T/run.out"
expect_grep "perftest versions recorded as facts" '"perftest_version"' "$R"
expect_true "suite took under 4 minutes (${took}s)" [ "$took" -lt 240 ]
# other runs may share this machine: look for this run's own QEMUs only
expect_true "no QEMU of the run left" no_proc "/tmp/rq-$pid-[0-9]+\.[^/]+/vm"
finish

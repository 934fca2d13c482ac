#!/bin/sh
# A daemon does not outlive its case.  A command that double-forks out of
# its process group (setsid sh -c "sleep &", a perl fork/setsid/fork
# daemon) leaves a process running when the case ends: the agent kills it,
# names it (pid, comm, argv[0]) in the row, and the row FAILs unless the
# case says why one may outlive it (daemon_allowed), where it is a fact.
# A plain run and a --launcher local lab run, each with the case's own
# cgroup (where this host lets root make one) and with RQ_NO_CGROUP=1 (the
# fallback: the worker as subreaper).  Only this test's sleeps are looked
# for: their durations carry this script's pid.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

RQ=${RQ:-build/san/rdmaqual}
T=$(mktemp -d /tmp/rq-it-daemon.XXXXXX)
trap 'rm -rf "$T"' EXIT
export RDMAQUAL_STATE_DIR="$T/state"
M=$(( $$ % 90000 + 10000 ))
SH_S="3$M.11" PL_S="3$M.22" OK_S="3$M.33" HANG_S="3$M.44" KILL_S="3$M.55"
# ours PATTERN: pids of this test's sleeps (exact argv)
ours() { pgrep -x -f -- "sleep $1" | tr '\n' ' '; }
HAVE_PERL=
command -v perl >/dev/null && HAVE_PERL=1

{
	echo "cases:"
	echo "  - name: daemon.sh"
	echo "    kind: command"
	echo "    targets: [local, sysroot]"
	# setsid -w: the starter (the inner sh) is gone when the case ends, so the
	# one process left is the sleep; without it a loaded host sometimes
	# found the inner sh still there, and the reason named two processes
	echo "    argv: [sh, -c, 'setsid -w sh -c \"sleep $SH_S </dev/null >/dev/null 2>&1 &\"; echo started']"
	echo "    stdout_contains: started"
	if [ -n "$HAVE_PERL" ]; then
		# the parent waits for the grandchild (a pipe that its exec of sleep
		# closes: perl opens it close-on-exec), as a daemon's starter does
		echo "  - name: daemon.perl"
		echo "    kind: command"
		echo "    targets: [local, sysroot]"
		printf '%s\n' "    argv: [perl, -MPOSIX, -e, 'pipe(R, W) or die; \$p = fork; (close(W), scalar(<R>), print(\"started\\n\"), exit(0)) if \$p; close R; POSIX::setsid(); exit 0 if fork; open STDIN, \"</dev/null\"; open STDOUT, \">/dev/null\"; open STDERR, \">/dev/null\"; exec \"sleep\", \"$PL_S\"']"
		echo "    stdout_contains: started"
	fi
} >"$T/d.yaml"
# a file of its own: a build without the key refuses it, and still runs d.yaml
{
	echo "cases:"
	echo "  - name: daemon.allowed"
	echo "    kind: command"
	echo "    targets: [local, sysroot]"
	echo "    daemon_allowed: \"the test's own sleep: named, killed, not a FAIL\""
	echo "    argv: [sh, -c, 'setsid -w sh -c \"sleep $OK_S </dev/null >/dev/null 2>&1 &\"; echo started; cat /proc/self/cgroup']"
	echo "    stdout_contains: started"
} >"$T/allowed.yaml"
cat >"$T/hang.yaml" <<YAML
cases:
  - name: daemon.hang
    kind: command
    targets: [local]
    timeout: 2s
    argv: [sh, -c, 'setsid sh -c "sleep $HANG_S </dev/null >/dev/null 2>&1 &"; exec sleep $HANG_S']
YAML

cat >"$T/killed.yaml" <<YAML
cases:
  - name: daemon.killed
    kind: command
    targets: [local]
    argv: [sh, -c, 'setsid sh -c "sleep $KILL_S </dev/null >/dev/null 2>&1 &"; exec sleep $KILL_S']
YAML

# Does this host give root a cgroup2 dir of its own to make children in?
# (cgroup2 at /sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid host)
CGMNT=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
CGSELF=$(sed -n 's/^0:://p' /proc/self/cgroup)
CG_OK=
if [ -n "$CGMNT" ] && [ -n "$CGSELF" ] && mkdir "$CGMNT$CGSELF/rq-it-probe-$$" 2>/dev/null; then
	rmdir "$CGMNT$CGSELF/rq-it-probe-$$"
	CG_OK=1
fi
if [ -n "$CG_OK" ]; then
	echo "-- cgroup2 at $CGMNT, ours $CGSELF: child cgroups can be made"
else
	echo "-- cgroup2 at '${CGMNT:-none}', ours '${CGSELF:-none}': no child cgroups here, only the fallback is tested"
fi

# check NAME REPDIR ALLOWED_REPDIR SUFFIX CGROUP: the rows of one run of
# d.yaml and one of allowed.yaml (SUFFIX: a lab run's [node]; CGROUP set:
# the cases must have had cgroups of their own)
check() {
	name=$1 rep=$2 arep=$3 sfx=$4 want=$5
	r=$rep/results.json
	row() { jq -r --arg id "$1$sfx" ".results[] | select(.id == \$id) | $2" "$r"; }
	expect_eq "$name: daemon.sh FAILs" FAIL "$(row daemon.sh .verdict)"
	expect_true "$name: its reason names the sleep (pid, comm, argv[0])" sh -c \
		"printf '%s' \"\$1\" | grep -Eq '^left 1 process running at its end \\(killed\\): pid [0-9]+ sleep \\(sleep\\); .*daemon_allowed'" \
		- "$(row daemon.sh .reason)"
	expect_true "$name: and so does its fact leftover_processes" sh -c \
		"printf '%s' \"\$1\" | grep -Eq '^pid [0-9]+ sleep \\(sleep\\)$'" - "$(row daemon.sh '.facts.leftover_processes')"
	if [ -n "$HAVE_PERL" ]; then
		expect_eq "$name: the perl fork/setsid/fork daemon FAILs" FAIL "$(row daemon.perl .verdict)"
		expect_true "$name: naming its sleep" sh -c \
			"printf '%s' \"\$1\" | grep -Eq 'pid [0-9]+ sleep \\(sleep\\)'" - "$(row daemon.perl .reason)"
	fi
	expect_eq "$name: no sleep of the cases is left" "" "$(ours "$SH_S")$(ours "$PL_S")"
	r=$arep/results.json
	expect_eq "$name: daemon.allowed PASSes" PASS "$(row daemon.allowed .verdict)"
	expect_true "$name: its fact names the sleep it killed" sh -c \
		"printf '%s' \"\$1\" | grep -Eq '^pid [0-9]+ sleep \\(sleep\\)$'" - "$(row daemon.allowed '.facts.leftover_processes')"
	expect_eq "$name: and the reason it was allowed" "the test's own sleep: named, killed, not a FAIL" \
		"$(row daemon.allowed '.facts.daemon_allowed')"
	expect_eq "$name: nor of daemon.allowed" "" "$(ours "$OK_S")"
	# where the case ran: the cgroup its own cat printed, gone after the run
	node=${sfx#[}
	log=$(find "$arep/logs" -name "daemon.allowed*${node%]}*" | head -1)
	cg=$(sed -n 's/^0:://p' "$log" 2>/dev/null | head -1)
	if [ -n "$want" ]; then
		expect_true "$name: the case ran in a cgroup of its own ($cg)" sh -c \
			"printf '%s' \"\$1\" | grep -Eq '/rdmaqual-case-[0-9]+-[0-9]+$'" - "$cg"
		expect_true "$name: which is removed after it" test ! -e "$CGMNT$cg"
	else
		expect_eq "$name: no cgroup of its own (the fallback)" "$CGSELF" "$cg"
	fi
}

for mode in cgroup fallback; do
	if [ "$mode" = cgroup ]; then
		[ -n "$CG_OK" ] || continue
		unset RQ_NO_CGROUP
		want=1
	else
		RQ_NO_CGROUP=1
		export RQ_NO_CGROUP
		want=
	fi
	echo "-- plain run ($mode)"
	"$RQ" run --report-dir "$T/p-$mode" "$T/d.yaml" >"$T/p-$mode.out" 2>&1
	expect_eq "plain ($mode): the run fails (the leftovers)" 1 $?
	"$RQ" run --report-dir "$T/pa-$mode" "$T/allowed.yaml" >"$T/pa-$mode.out" 2>&1
	expect_eq "plain ($mode): the allowed daemon's run passes" 0 $?
	check "plain ($mode)" "$T/p-$mode/latest" "$T/pa-$mode/latest" "" "$want"

	echo "-- a case stopped at its timeout ($mode)"
	"$RQ" run --report-dir "$T/h-$mode" "$T/hang.yaml" >"$T/h-$mode.out" 2>&1
	expect_eq "hang ($mode): ERROR" ERROR "$(jq -r '.results[0].verdict' "$T/h-$mode/latest/results.json")"
	expect_true "hang ($mode): the daemon it started is named" sh -c \
		"printf '%s' \"\$1\" | grep -Eq 'pid [0-9]+ sleep \\(sleep\\)'" - \
		"$(jq -r '.results[0].facts.leftover_processes' "$T/h-$mode/latest/results.json")"
	expect_eq "hang ($mode): no sleep of the case is left" "" "$(ours "$HANG_S")"

	echo "-- lab run, --nodes n[1-2] --launcher local ($mode)"
	"$RQ" run --nodes 'n[1-2]' --launcher local --report-dir "$T/l-$mode" "$T/d.yaml" \
		>"$T/l-$mode.out" 2>&1
	expect_eq "lab ($mode): the run fails (the leftovers)" 1 $?
	"$RQ" run --nodes 'n[1-2]' --launcher local --report-dir "$T/la-$mode" "$T/allowed.yaml" \
		>"$T/la-$mode.out" 2>&1
	expect_eq "lab ($mode): the allowed daemon's run passes" 0 $?
	for n in n1 n2; do
		check "lab ($mode) $n" "$T/l-$mode/latest" "$T/la-$mode/latest" "[$n]" "$want"
	done
done
unset RQ_NO_CGROUP

if [ -n "$CG_OK" ]; then
	# The agent itself, not the runner: a runner's SIGKILL closes the
	# agent's stdin before its PDEATHSIG lands, and an agent that sees EOF
	# first kills what its cases run on its way out (either is fine; this
	# row wants the agent gone without a word, as an OOM kill does).
	echo "-- the agent SIGKILLed mid-case: its worker and tool die, the daemon lives on in the case's cgroup; cleanup kills it"
	"$RQ" run --report-dir "$T/k" "$T/killed.yaml" >"$T/k.out" 2>&1 &
	rp=$!
	wait_for "the case's daemon runs" 20 sh -c "[ \$(pgrep -x -f -- 'sleep $KILL_S' | wc -l) -ge 2 ]"
	ap=$(pgrep -P "$rp" -f 'agent --stdio')
	expect_true "the run's agent is found (pid ${ap:-none})" test -n "$ap"
	[ -n "$ap" ] && kill -9 "$ap"
	wait_for "the run ends" 20 sh -c "! kill -0 $rp 2>/dev/null"
	wait "$rp" 2>/dev/null
	expect_grep "its row is an ERROR naming the dead agent" "ERROR +daemon.killed" "$T/k.out"
	wait_for "the tool dies with its worker (PDEATHSIG), the daemon stays" 10 sh -c \
		"[ \$(pgrep -x -f -- 'sleep $KILL_S' | wc -l) -eq 1 ]"
	"$RQ" cleanup >"$T/cleanup.out" 2>&1
	expect_eq "cleanup exits 0" 0 $?
	expect_grep "cleanup names what it killed" "killed in cgroup rdmaqual-case-[0-9]+-[0-9]+, whose agent is gone: pid [0-9]+ sleep \\(sleep\\)" "$T/cleanup.out"
	expect_grep "and removes the cgroup" "removed cgroup rdmaqual-case-" "$T/cleanup.out"
	expect_eq "no sleep of the killed run is left" "" "$(ours "$KILL_S")"
fi

echo "-- lint refuses an empty reason"
printf 'cases:\n  - {name: x, kind: command, argv: [true], daemon_allowed: ""}\n' >"$T/bad.yaml"
"$RQ" lint "$T/bad.yaml" >"$T/lint.out" 2>&1
expect_eq "lint exits 2 (a case file error)" 2 $?
expect_grep "and says why" 'daemon_allowed: empty' "$T/lint.out"

# whatever a failed check left: this test's sleeps only
for s in "$SH_S" "$PL_S" "$OK_S" "$HANG_S" "$KILL_S"; do
	for p in $(ours "$s"); do kill "$p" 2>/dev/null; done
done
finish

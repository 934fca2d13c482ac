#!/bin/sh
# The concurrency row of the fault table (docs/reliability.md): two full
# demos (make demo's run line, each with a state dir and report dir of its
# own, as two clones on one CI host have) and read-only sysroot replays
# that share the first demo's state dir, all at once.
#
# It checks every verdict: both demos exit 0 with no FAIL or ERROR row and
# the same verdict for every row; the replay (fixtures/nodes/cx6-hdr-ib-x8,
# a card at x8 in a x16 slot), run every 10 s while a demo runs, exits 1
# with exactly its planted FAIL each time.  And
# that nothing of theirs is left behind: no process carrying this run's tag
# in its environment (runners, agents, QEMUs, ibsim, opensm, tools), no
# QEMU dir /tmp/rq-<runner pid>-*, no record in their state dirs, nothing
# in their TMPDIR (the agents' rq-agent-* dirs), no /tmp/rq-ibsim-* dir
# made during the run that no live process uses.  Prints the row's figures; exits 1 on any wrong verdict or
# leftover, 4 (skip) without QEMU or jq.
#
# Boots four TCG guests at once: where others test on the same machine,
# run it under the same flock as the other VM tests.
#   bench/concurrency.sh                 # RQ=./rdmaqual, DEADLINE_S=1500
set -u
cd "$(dirname "$0")/.." || exit 1
RQ=${RQ:-./rdmaqual}
DEADLINE_S=${DEADLINE_S:-1500}
for t in qemu-system-x86_64 jq; do
	command -v "$t" >/dev/null 2>&1 || { echo "== skip: $t not installed"; exit 4; }
done
[ -x "$RQ" ] || { echo "concurrency: $RQ not built (make all)"; exit 1; }

T=$(mktemp -d /tmp/rq-conc.XXXXXX) || exit 1
TAG=RQ_CONC_TAG=$(basename "$T")
trap 'rm -rf "$T"' EXIT
mkdir -m 700 "$T/s1" "$T/s2" "$T/tmp"
# the agents' scratch dirs (rq-agent-PID-*) go to TMPDIR: what is left there is ours
export TMPDIR="$T/tmp"
bad=0
fail() { echo "FAIL: $*"; bad=1; }

# pids of processes whose environment carries our tag (never by name)
tagged() {
	grep -lzxF "$TAG" /proc/[0-9]*/environ 2>/dev/null | sed 's|^/proc/\([0-9]*\)/environ$|\1|'
}
# /tmp/rq-ibsim-* dirs (their name has no pid), to tell the ones made during the run
scratch() { find /tmp -maxdepth 1 -name 'rq-ibsim-*' 2>/dev/null | sort; }
# is DIR named in a live process's argv or cwd?
in_use() {
	for p in /proc/[0-9]*; do
		case "$(readlink "$p/cwd" 2>/dev/null)" in "$1"|"$1"/*) return 0 ;; esac
		{ tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -qF "$1" && return 0
	done
	return 1
}

scratch >"$T/before"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date +%s.%N)
# make demo's run line (Makefile), twice, and a replay beside them
env "$TAG" RDMAQUAL_STATE_DIR="$T/s1" "$RQ" run --report-dir "$T/r1" \
	-t '!apps' -t '!mpi' -t '!ulp' -t '!suites' cases/ >"$T/d1.out" 2>&1 &
p1=$!
env "$TAG" RDMAQUAL_STATE_DIR="$T/s2" "$RQ" run --report-dir "$T/r2" \
	-t '!apps' -t '!mpi' -t '!ulp' -t '!suites' cases/ >"$T/d2.out" 2>&1 &
p2=$!
# the replay, again every 10 s while a demo runs (each while both hold their
# nodes, through boots, bandwidth and ibsim): every one must be right
replays() {
	n=0
	while kill -0 $p1 2>/dev/null || kill -0 $p2 2>/dev/null; do
		n=$((n + 1))
		t0=$(date +%s.%N)
		env "$TAG" RDMAQUAL_STATE_DIR="$T/s1" "$RQ" run --target sysroot:fixtures/nodes/cx6-hdr-ib-x8 \
			--report-dir "$T/r3" cases/driver cases/pcie cases/mtu cases/irq >"$T/rp$n.out" 2>&1
		echo "$n $? $t0 $(date +%s.%N)" >>"$T/replays"
		# the first replay's report must come through the rest untouched
		if [ $n = 1 ]; then
			readlink -f "$T/r3/latest" >"$T/first.dir"
			(cd "$T/r3/latest" && sha256sum ./*) >"$T/first.sum" 2>/dev/null
		fi
		sleep 10
	done
}
sleep 2
replays &
p3=$!

# every wait has a deadline: past it, the tagged processes are killed and the row fails
(
	trap 'kill $s 2>/dev/null; exit 0' TERM
	sleep "$DEADLINE_S" &
	s=$!
	wait $s
	echo "concurrency: past the deadline of $DEADLINE_S s, killing what carries the tag"
	for p in $(tagged); do kill -KILL "$p" 2>/dev/null; done
) &
guard=$!
wait $p1; rc1=$?
wait $p2; rc2=$?
wait $p3
kill "$guard" 2>/dev/null
end=$(date +%s.%N)
sleep 1	# a QEMU's last exit after its runner's

verdicts() {	# results.json of report dir $1 -> "id verdict" lines, sorted
	jq -r '.results[] | "\(.id) \(.verdict)"' "$1"/latest/results.json 2>/dev/null | sort
}
counts() { jq -r '.counts | "\(.total) rows: \(.pass) pass, \(.skip) skip, \(.fail) fail, \(.error) error"' "$1"/latest/results.json 2>/dev/null; }
verdicts "$T/r1" >"$T/v1"
verdicts "$T/r2" >"$T/v2"
[ "$rc1" = 0 ] || fail "demo 1 exited $rc1: $(grep -E '^(FAIL|ERROR) ' "$T/d1.out" | head -5)"
[ "$rc2" = 0 ] || fail "demo 2 exited $rc2: $(grep -E '^(FAIL|ERROR) ' "$T/d2.out" | head -5)"
[ -s "$T/v1" ] || fail "demo 1 wrote no results.json"
grep -E ' (FAIL|ERROR)$' "$T/v1" "$T/v2" >"$T/bad" && fail "FAIL/ERROR rows: $(tr '\n' ';' <"$T/bad")"
cmp -s "$T/v1" "$T/v2" || fail "the demos' verdicts differ: $(diff "$T/v1" "$T/v2" | grep '^[<>]' | tr '\n' ';')"
nrp=0
rpmax=0
while read -r n rc t0 t1; do
	nrp=$n
	rpmax=$(echo "$rpmax $t0 $t1" | awk '{d = $3 - $2; print (d > $1 ? d : $1)}')
	o="$T/rp$n.out"
	[ "$rc" = 1 ] || fail "replay $n exited $rc (expected 1: its planted fault): $(tail -3 "$o")"
	grep -q '^FAIL \+pcie\.full_link\[ibp59s0\] .*x8, both ends capable of 16\.0 GT/s x16' "$o" ||
		fail "replay $n: no FAIL naming the x8 link"
	[ "$(grep -c '^FAIL ' "$o")" = 1 ] || fail "replay $n: not exactly one FAIL row"
	grep -q '^ERROR ' "$o" && fail "replay $n: an ERROR row: $(grep '^ERROR ' "$o" | head -2)"
done <"$T/replays"
[ "$nrp" -ge 1 ] || fail "no replay ran"
first=$(sed -n 's|^.*/\(2[0-9-]*\)/*$|\1|p' "$T/first.dir" 2>/dev/null)
if [ -s "$T/first.sum" ] && (cd "$T/r3/$first" && sha256sum -c --quiet "$T/first.sum" >/dev/null 2>&1) &&
   jq -e .run.complete "$T/r3/$first/results.json" >/dev/null 2>&1; then
	intact=intact
else
	intact="changed or invalid"
	fail "the first replay's report ($first) $intact"
fi

left=""
for p in $(tagged); do left="$left pid $p ($(tr '\0' ' ' <"/proc/$p/cmdline" | cut -c1-60))"; done
for p in $p1 $p2; do
	for d in /tmp/rq-"$p"-*; do [ -e "$d" ] && left="$left $d"; done
done
for d in "$T/tmp"/*; do [ -e "$d" ] && left="$left $d ($(find "$d" -mindepth 1 -maxdepth 1 -printf '%f '))"; done
for s in s1 s2; do
	for f in "$T/$s"/*; do
		[ -e "$f" ] && [ "$(basename "$f")" != lock ] && left="$left $f"
	done
done
scratch | comm -13 "$T/before" - | while read -r d; do in_use "$d" || echo "$d"; done >"$T/new"
[ -s "$T/new" ] && left="$left $(tr '\n' ' ' <"$T/new")"
[ -z "$left" ] || fail "left behind:$left"

f() { echo "$1 $2" | awk '{printf "%.1f", $2 - $1}'; }
echo "concurrency: two demos and a replay at once, $(nproc) CPUs, load at the start $load0"
dur() { jq -r '.run.duration_s' "$1"/latest/results.json 2>/dev/null; }
echo "  demo 1: exit $rc1, $(counts "$T/r1"), $(dur "$T/r1") s"
echo "  demo 2: exit $rc2, $(counts "$T/r2"), $(dur "$T/r2") s"
echo "  replays: $nrp beside the demos (state dir shared with demo 1), each: $(counts "$T/r3"), exit 1 (its planted FAIL), longest $(echo "$rpmax" | awk '{printf "%.1f", $1}') s"
echo "  verdicts of the demos identical: $(cmp -s "$T/v1" "$T/v2" && echo yes || echo no); all three done in $(f "$start" "$end") s of $DEADLINE_S"
echo "  left behind: ${left:-nothing}; the first replay's report: $intact"
[ $bad = 0 ] && echo "ok concurrency" || echo "not ok concurrency"
exit $bad

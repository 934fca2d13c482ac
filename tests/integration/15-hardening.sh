#!/bin/sh
# What a hostile local user or a careless one could do to a root runner,
# and what a run must do when its own writes fail: state dirs someone else
# made, links planted in them, forged cleanup records, bad options, full
# report disks, colliding run ids.  Each check failed before its fix.
# shellcheck disable=SC2086 # $PASS is a filter and a folder: split on purpose
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

RQ=${RQ:-build/san/rdmaqual}
T=$(mktemp -d /tmp/rq-it-harden.XXXXXX)
trap 'umount "$T/full" 2>/dev/null; rm -rf "$T"' EXIT
export RDMAQUAL_STATE_DIR="$T/state"
PASS="-k runner.pass tests/cases/runner"

# 1. The state dir: made 0700 when missing; refused when it is a link, not
# ours or open to others; the lock is never opened through a link.
"$RQ" run --report-dir "$T/rep" $PASS >/dev/null 2>&1
expect_eq "a fresh state dir works" 0 $?
expect_eq "it is made 0700" 700 "$(stat -c %a "$T/state")"
mkdir -m 0777 "$T/open"
"$RQ" run --state-dir "$T/open" --report-dir "$T/rep" $PASS >"$T/open.out" 2>&1
expect_eq "a state dir open to others is refused" 1 $?
expect_grep "and the reason says so" "must be owned by uid $(id -u) with mode 0700" "$T/open.out"
mkdir -m 0755 "$T/older"
"$RQ" cleanup --state-dir "$T/older" >"$T/older.out" 2>&1
expect_eq "one of ours only readable by others (an older rdmaqual's) is tightened" 0 $?
expect_eq "to 0700" 700 "$(stat -c %a "$T/older")"
if id nobody >/dev/null 2>&1; then
	mkdir -m 0700 "$T/theirs"
	chown nobody "$T/theirs"
	"$RQ" cleanup --state-dir "$T/theirs" >"$T/theirs.out" 2>&1
	expect_eq "a state dir of another user is refused" 1 $?
fi
mkdir -m 0700 "$T/real"
ln -s "$T/real" "$T/link"
"$RQ" run --state-dir "$T/link" --report-dir "$T/rep" $PASS >"$T/link.out" 2>&1
expect_eq "a state dir that is a symlink is refused" 1 $?
mkdir -m 0700 "$T/planted"
echo precious >"$T/victim"
ln -s "$T/victim" "$T/planted/lock"
"$RQ" run --state-dir "$T/planted" --report-dir "$T/rep" $PASS >"$T/planted.out" 2>&1
expect_eq "a lock that is a symlink is refused" 1 $?
expect_eq "and its target is untouched" precious "$(cat "$T/victim")"

# 2. Forged records left in the state dir: cleanup removes one dir of ours
# under /tmp/rq-*, nothing through "..", deeper, or of another owner.
dead=$(sh -c 'echo $$')
mkdir -p "$T/victim1/data" "$T/victim2/data"
own=$(mktemp -d /tmp/rq-harden-own.XXXXXX)
theirs=$(mktemp -d /tmp/rq-harden-theirs.XXXXXX)
id nobody >/dev/null 2>&1 && chown nobody "$theirs"
printf 'dir %s/victim1\ndir %s/../%s/victim1\ndir %s\n' "$T" "$own" "$(basename "$T")" "$own" \
	>"$T/state/ibsm-$dead.run"
printf 'vm 0 %s/victim2\nvm 0 %s\n' "$T" "$theirs" >"$T/state/rxevm-$dead"
"$RQ" cleanup >"$T/cleanup.out" 2>&1
expect_eq "cleanup of forged records" 0 $?
expect_true "a dir two levels under /tmp/rq-* stays" test -d "$T/victim1/data"
expect_true "a vm record's deeper dir stays" test -d "$T/victim2/data"
id nobody >/dev/null 2>&1 && expect_true "another user's /tmp/rq-* dir stays" test -d "$theirs"
expect_true "the one dir of ours is removed" test ! -e "$own"
expect_true "the records are gone" sh -c "! ls '$T/state' | grep -q -e ibsm- -e rxevm-"
rm -rf "$theirs" "$own"

# 3. A node tree's links stay inside it: a shared capture whose files link
# to this node's 0600 files must not put them into the (0644) reports.
cp -a fixtures/nodes/cx5-edr-ib "$T/tree"
echo SECRET-host-c1 >"$T/secret-host"
echo SECRET-fw-c1 >"$T/secret-fw"
chmod 600 "$T/secret-host" "$T/secret-fw"
fw=$(ls "$T"/tree/sys/devices/*/*/*/infiniband/mlx5_0/fw_ver)
ln -sf "$T/secret-host" "$T/tree/proc/sys/kernel/hostname"
ln -sf "$T/secret-fw" "$fw"
"$RQ" run --target "sysroot:$T/tree" --report-dir "$T/rep-tree" cases/driver >"$T/tree.out" 2>&1
expect_true "the tree's run made a report" test -s "$T/rep-tree/latest/results.json"
expect_true "no file outside the tree reaches the report" \
	sh -c "! grep -rq SECRET- '$T/rep-tree' '$T/tree.out'"

# 4. Options: nonsense multipliers and usage errors exit 2, before the lock
# is taken (the state dir is not even made); a 20 h case scaled by 2 runs.
for m in nan inf 1e-300 -1 0 101 2x; do
	"$RQ" run --timeout-mul "$m" --report-dir "$T/rep" $PASS >/dev/null 2>&1
	expect_eq "--timeout-mul $m is a usage error" 2 $?
done
cat >"$T/long.yaml" <<CASE
cases:
  - name: harden.long
    kind: command
    targets: [local]
    timeout: 20h
    argv: ["true"]
CASE
"$RQ" run --timeout-mul 2 --report-dir "$T/rep" "$T/long.yaml" >"$T/long.out" 2>&1
expect_eq "a 20 h case with --timeout-mul 2 runs" 0 $?
echo file >"$T/notadir"
"$RQ" run --state-dir "$T/state-usage" --report-dir "$T/notadir/x" $PASS >"$T/rd.out" 2>&1
expect_eq "a --report-dir that cannot be made is a usage error" 2 $?
expect_grep "which names it" 'report-dir .*notadir/x' "$T/rd.out"
"$RQ" run --state-dir "$T/state-usage" --target "sysroot:$T/no-such-tree" --report-dir "$T/rep" \
	$PASS >"$T/sr.out" 2>&1
expect_eq "a missing sysroot dir is a usage error" 2 $?
expect_true "neither took the lock (no state dir made)" test ! -e "$T/state-usage"

# 5. Run ids are made with mkdir: a run whose id (second + pid) is taken,
# as two runs in PID namespaces get, writes beside it, not into it.
if unshare -pf true 2>/dev/null; then
	mkdir -p "$T/ids"
	now=$(date +%s)
	for i in $(seq 0 40); do
		mkdir "$T/ids/$(date -u -d "@$((now + i))" +%Y%m%d-%H%M%S)-1"
	done
	unshare -pf "$RQ" run --report-dir "$T/ids" $PASS >"$T/ids.out" 2>&1
	expect_eq "a run whose id is taken" 0 $?
	expect_true "leaves the taken dirs alone" sh -c "! ls '$T'/ids/*-1/junit.xml 2>/dev/null"
	expect_true "and reports under a suffixed id" test -s "$T/ids/latest/junit.xml"
	expect_true "latest names the suffixed id" sh -c "readlink '$T/ids/latest' | grep -q -- '-1-2\$'"
fi

# 6. A full report disk is a failed run that says where, never exit 0.
mkdir "$T/full"
if mount -t tmpfs -o size=64k tmpfs "$T/full" 2>/dev/null; then
	mkdir "$T/full/rep"
	dd if=/dev/zero of="$T/full/fill" bs=4k >/dev/null 2>&1
	"$RQ" run --report-dir "$T/full/rep" $PASS >"$T/full.out" 2>&1
	expect_eq "a run whose reports cannot be written exits 1" 1 $?
	expect_grep "and names where" 'cannot write .*full/rep/.*(No space|junit)' "$T/full.out"
	umount "$T/full"
fi

# 7. opensm.conf: 64-bit keys (>= 2^63) are valid; key values never reach
# the (world-readable) reports, even in the message about a repeat.
printf 'sm_key 0xdeadbeefcafe1234\nsa_key 0xfeedfacecafe5678\n' >"$T/keys-ok.conf"
printf 'sm_key 0xdeadbeefcafe1234\nsm_key 0x1111222233334444\nm_key nonsense77\n' >"$T/keys-bad.conf"
cat >"$T/keys.yaml" <<CASE
cases:
  - name: harden.keys_ok
    kind: opensm-conf
    file: $T/keys-ok.conf
  - name: harden.keys_bad
    kind: opensm-conf
    file: $T/keys-bad.conf
CASE
"$RQ" run --target local --report-dir "$T/rep-keys" "$T/keys.yaml" >"$T/keys.out" 2>&1
R="$T/rep-keys/latest/results.json"
expect_eq "sm_key 0xdeadbeefcafe1234 (>= 2^63) is valid" PASS \
	"$(jq -r '.results[] | select(.id == "harden.keys_ok") | .verdict' "$R")"
expect_eq "a repeated key still FAILs" FAIL \
	"$(jq -r '.results[] | select(.id == "harden.keys_bad") | .verdict' "$R")"
expect_grep "and says it is repeated" "'sm_key' repeated" "$R"
expect_true "no key value is in the reports or the console" \
	sh -c "! grep -rqi -e deadbeef -e 11112222 -e nonsense77 '$T/rep-keys' '$T/keys.out'"

# 8. One noisy case: 1.5 MiB of control bytes escape to 9 MiB of JSON, past
# the agent's 4 MiB line.  It is cut (and says so), the agent lives on, and
# the next case on the target runs.
cat >"$T/noisy.yaml" <<CASE
defaults:
  targets: [local]
  timeout: 30s
cases:
  - name: harden.a_noisy
    kind: command
    argv: [sh, -c, "echo FIRST; head -c 1500000 /dev/zero | tr '\\\\000' '\\\\001'; echo; echo LAST"]
  - name: harden.b_after
    kind: command
    argv: [echo, still here]
    stdout_contains: still here
CASE
"$RQ" run --report-dir "$T/rep-noisy" "$T/noisy.yaml" >"$T/noisy.out" 2>&1
expect_eq "a noisy case and the next both pass" 0 $?
L="$T/rep-noisy/latest/logs/harden.a_noisy.log"
expect_grep "the noisy log keeps its head" '^FIRST' "$L"
expect_grep "and its tail" '^LAST' "$L"
expect_grep "and marks the cut" 'rdmaqual: [0-9]+ bytes .*cut here' "$L"

# 9. Agents' scratch dirs: a closed agent removes its own (SIGTERM included),
# and cleanup sweeps those of agents that are gone, never a live one's.
mkdir -m 700 "$T/tmpd"
TMPDIR="$T/tmpd" "$RQ" run --report-dir "$T/rep" $PASS >/dev/null 2>&1
expect_true "a passing run leaves no agent scratch dir" sh -c "[ -z \"\$(ls -A '$T/tmpd')\" ]"
stale=$(mktemp -d "/tmp/rq-agent-$dead-XXXXXX")
mkfifo "$T/agent.in"
exec 3<>"$T/agent.in"		# held open: the agent sees no EOF
"$RQ" agent --stdio <"$T/agent.in" >/dev/null 2>&1 &
apid=$!
wait_for "a live agent made its dir" 10 sh -c "ls -d /tmp/rq-agent-$apid-* >/dev/null"
"$RQ" cleanup >"$T/sweep.out" 2>&1
expect_true "cleanup sweeps a dead agent's dir" test ! -e "$stale"
# an agent run with TMPDIR makes its dir there: the sweep reads $TMPDIR too
stale_t=$(mktemp -d "$T/tmpd/rq-agent-$dead-XXXXXX")
TMPDIR="$T/tmpd" "$RQ" cleanup >"$T/sweep_t.out" 2>&1
expect_true "cleanup sweeps a dead agent's dir under \$TMPDIR" test ! -e "$stale_t"
expect_grep "and names it" "removed $stale_t" "$T/sweep_t.out"
expect_true "and keeps a live agent's" sh -c "ls -d /tmp/rq-agent-$apid-* >/dev/null"
kill -TERM "$apid"
wait_for "an agent stopped by SIGTERM removes its dir" 10 sh -c "! ls -d /tmp/rq-agent-$apid-* 2>/dev/null"
exec 3>&-
rm -rf "$stale"
# An agent in its own PID namespace is pid 1 there: its dir is named
# rq-agent-1-..., and host pid 1 is not an rdmaqual.  Its lock, not its
# name, keeps it from the sweep.
if unshare -pf true 2>/dev/null; then
	exec 3<>"$T/agent.in"
	# 3>&-: the agent must not hold the fifo's write end, or it never sees EOF
	unshare -pf "$RQ" agent --stdio <"$T/agent.in" >/dev/null 2>&1 3>&- &
	upid=$!
	if wait_for "an agent in a PID namespace made its dir" 10 sh -c "ls -d /tmp/rq-agent-1-* >/dev/null"; then
		udir=$(find /tmp -maxdepth 1 -name "rq-agent-1-*" | head -n 1)
		"$RQ" cleanup >"$T/sweep2.out" 2>&1
		expect_true "cleanup keeps the dir of a live agent in a PID namespace" test -d "$udir"
	fi
	exec 3>&-			# EOF: the agent ends, and unshare with it
	wait "$upid" 2>/dev/null
	wait_for "the namespaced agent's dir goes with it" 10 sh -c "! ls -d /tmp/rq-agent-1-* 2>/dev/null"
fi

# 10. A case that kills its agent costs that case only: the next case on
# the same target gets a fresh agent.
cat >"$T/killer.yaml" <<'CASE'
defaults:
  targets: [local]
  timeout: 20s
cases:
  - name: harden.c_kills_agent
    kind: command
    summary: SIGKILL the agent that runs this case (the worker's parent)
    argv: [sh, -c, 'kill -9 $(cut -d" " -f4 /proc/$PPID/stat); sleep 5']
  - name: harden.d_next
    kind: command
    argv: [echo, fresh agent]
    stdout_contains: fresh agent
CASE
"$RQ" run --report-dir "$T/rep-kill" "$T/killer.yaml" >"$T/kill.out" 2>&1
R="$T/rep-kill/latest/results.json"
expect_eq "the case that killed its agent is an ERROR" ERROR \
	"$(jq -r '.results[] | select(.id == "harden.c_kills_agent") | .verdict' "$R")"
expect_eq "the next case runs on a fresh agent" PASS \
	"$(jq -r '.results[] | select(.id == "harden.d_next") | .verdict' "$R")"

# 11. Input limits and typed values: a case file over 16 MiB is an error,
# never cut; expect_active "4096junk" is not 4096.
{ echo 'cases:'; echo '  - {name: harden.big, kind: command, argv: ["true"]}'
  head -c 17000000 /dev/zero | tr '\0' '#'; echo; } >"$T/big.yaml"
"$RQ" lint "$T/big.yaml" >"$T/big.out" 2>&1
expect_eq "a case file over 16 MiB is a lint error" 2 $?
expect_grep "that says so" 'big.yaml.*larger than 16 MiB' "$T/big.out"
"$RQ" parse ibstat "$T/big.yaml" >"$T/bigp.out" 2>&1
expect_eq "parse refuses it too" 1 $?
expect_grep "and says so" 'larger than 16 MiB' "$T/bigp.out"
cat >"$T/junk.yaml" <<'CASE'
cases:
  - name: harden.mtu_junk
    kind: mtu
    expect_active: ["4096junk"]
CASE
"$RQ" lint "$T/junk.yaml" >"$T/junk.out" 2>&1
expect_eq "expect_active 4096junk does not lint clean" 2 $?
expect_grep "and names it" 'expect_active "4096junk"' "$T/junk.out"
# 10. run --resume obeys only a journal its own user wrote, in a dir no
# one else can change; every resumed row must be the plan's.
echo "-- run --resume trusts only its owner's run dir"
LABC=tests/integration/lab-cases/node.yaml
"$RQ" run --nodes 'n[1-2]' --launcher local --report-dir "$T/res" $LABC >"$T/res0.out" 2>&1
expect_eq "a lab run to resume" 0 $?
good=$(readlink -f "$T/res/latest")
cat >"$T/pwn.yaml" <<YAML
cases:
  - name: pwn
    kind: command
    targets: [local]
    argv: [touch, "$T/pwned"]
YAML
refused() {	# DESC DIR: --resume DIR is refused, and nothing of it ran
	"$RQ" run --resume "$2" >"$T/refused.out" 2>&1
	expect_eq "$1: refused" 1 $?
	expect_grep "$1: says why" 'resume refused: ' "$T/refused.out"
	expect_true "$1: nothing of it ran" test ! -e "$T/pwned"
}
if id nobody >/dev/null 2>&1; then
	mkdir -m 0755 "$T/evil"
	printf '{"argv":["run","--nodes","n1","--launcher","local","%s"]}\n' "$T/pwn.yaml" \
		>"$T/evil/journal.jsonl"
	chown -R nobody "$T/evil"
	refused "another user's run dir and journal" "$T/evil"
	cp -a "$good" "$T/theirjournal"
	chown nobody "$T/theirjournal/journal.jsonl"
	refused "another user's journal in our dir" "$T/theirjournal"
fi
cp -a "$good" "$T/gw" && chmod g+w "$T/gw/journal.jsonl"
refused "a group-writable journal" "$T/gw"
cp -a "$good" "$T/ow" && chmod o+w "$T/ow"
refused "a run dir others may write" "$T/ow"
cp -a "$good" "$T/jl" && mv "$T/jl/journal.jsonl" "$T/jl.journal" &&
	ln -s "$T/jl.journal" "$T/jl/journal.jsonl"
refused "a journal that is a symlink" "$T/jl"
mkdir -m 0700 "$T/rootonly"
cp -a "$good" "$T/lg" && rm -rf "$T/lg/logs" && ln -s "$T/rootonly" "$T/lg/logs"
refused "logs a symlink to another dir" "$T/lg"
expect_eq "nothing was written into the link's target" "" "$(ls -A "$T/rootonly")"
mkdir -m 0777 "$T/opendir" && cp -a "$good" "$T/opendir/run"
refused "a run dir under a dir others may write (not sticky)" "$T/opendir/run"
# Our own journal, edited: a forged unit for a plan unit (another node's
# row) and one for a node not in --nodes.
cp -a "$good" "$T/forged"
python3 - "$T/forged/journal.jsonl" <<'PY'
import json, sys
p = sys.argv[1]
lines = [json.loads(l) for l in open(p)]
keep = [l for l in lines if l.get("unit") != "lab.hello|n1"]
row = next(r for l in lines if l.get("unit") == "lab.hello|n1" for r in l["rows"])
evil = dict(row, node="evil", id="lab.hello[evil]")
keep.append({"unit": "lab.hello|n1", "rows": [evil]})
keep.append({"unit": "lab.hello|n9", "rows": [dict(row, node="n9", id="lab.hello[n9]")]})
open(p, "w").write("".join(json.dumps(l) + "\n" for l in keep))
PY
rm -f "$T/forged/results.json"
"$RQ" run --resume "$T/forged" >"$T/forged.out" 2>&1
expect_eq "a resumed run with forged units still runs (and passes)" 0 $?
expect_grep "it prints the command it resumes first" \
	"resuming $T/forged: run --nodes n\\[1-2\\] --launcher local --report-dir $T/res $LABC" "$T/forged.out"
expect_grep "a unit whose row names another node is not taken" \
	'journal unit lab.hello\|n1 has a row of another node: not this plan.s; it runs again' "$T/forged.out"
expect_eq "the report has the plan's nodes only, each row once" \
	"lab.hello[n1] lab.hello[n2] lab.not_node02[n1] lab.not_node02[n2]" \
	"$(python3 -c "import json,sys; print(' '.join(sorted(r['id'] for r in json.load(open(sys.argv[1]))['results'])))" "$T/forged/results.json")"
# 11. Case programs run in a session of their own without the runner's
# terminal: under a pty, a case's TIOCSTI reached the shell's input.
echo "-- case programs have no controlling terminal"
for mode in plain lab; do
	extra=""
	[ $mode = lab ] && extra="--nodes n1 --launcher local"
	python3 tests/integration/faults/ptyrun.py "$RQ" run $extra --report-dir "$T/tty-$mode" \
		tests/integration/faults/tty.yaml >"$T/tty-$mode.out" 2>&1
	expect_eq "$mode run: nothing was pushed into the runner's terminal" "rc=0 queued=b''" \
		"$(cat "$T/tty-$mode.out")"
	expect_grep "$mode run: the case had no controlling tty and stdin /dev/null" \
		'tty_nr=0 stdin=/dev/null' "$T/tty-$mode/latest/junit.xml"
	expect_grep "$mode run: and could not open /dev/tty" 'no tty: No such device' \
		"$T/tty-$mode/latest/junit.xml"
done
# 12. Node names and plan sizes: a name starting with '-' reaches ssh,
# srun and {peer_host} as an option; all pairs of 20,000 nodes took 81 s
# and 1.6 GB to print.
echo "-- --nodes names and plan sizes"
for l in local slurm ssh; do
	"$RQ" run --nodes 'n1,-oProxyCommand' --launcher $l --dry-run \
		tests/integration/lab-cases/node.yaml >"$T/dash.out" 2>&1
	expect_eq "launcher $l: a node name starting with '-' is a usage error" 2 $?
	expect_grep "launcher $l: naming it" '"-oProxyCommand" is not a node name' "$T/dash.out"
done
"$RQ" run --nodes 'n[1-20000]' --launcher local --pairs all --dry-run \
	tests/integration/lab-cases/pairs.yaml >"$T/big.out" 2>&1
expect_eq "all pairs of 20,000 nodes is refused up front" 2 $?
expect_grep "with its count and the limit" '199990000 pairs per two-sided case, over the limit of 1048576' \
	"$T/big.out"
# 13. No fixed name under /tmp: every /tmp path in the code is a mkdtemp
# template (XXXXXX), the prefix that matches what one made, or the state
# dir's /tmp/rdmaqual-UID (checked: the euid's, 0700).  kind_perftest fell
# back to /tmp/perftest-PID.out (O_TRUNC) and rxe-host to /tmp/rxe-host.
echo "-- no fixed /tmp names in the code"
expect_eq "no source file builds a fixed /tmp name" "" \
	"$(grep -rnE '"/tmp[/"]' src harness | grep -vE 'XXXXXX|rq-agent-|rdmaqual-peer\.|"/tmp/rq-"|rdmaqual-%u|rdmaqual-UID|opendir\("/tmp"\)|sweep_dir\("/tmp"|strcmp\(real, "/tmp"\)|str_starts\([a-z]*, "/tmp/"\)|"/tmp/%s"|^[^:]*:[0-9]+:\s*/?\*')"
# 14. A replay, a lint and a dry run change nothing on the node: they take
# no node lock, so they run while another run holds it.
echo "-- replays, lints and dry runs take no node lock"
mkdir -m 0700 "$T/held"
flock "$T/held/lock" sleep 30 &
holder=$!
wait_for "another run holds the node lock" 5 sh -c "! flock -n '$T/held/lock' true"
"$RQ" run --state-dir "$T/held" --target sysroot:fixtures/nodes/cx6dx-roce-lossless \
	--report-dir "$T/replay" cases/driver >"$T/replay.out" 2>&1
expect_eq "a sysroot replay runs and passes, not refused" 0 $?
expect_true "and writes its report" test -s "$T/replay/latest/results.json"
"$RQ" run --state-dir "$T/held" --dry-run $PASS >"$T/dry.out" 2>&1
expect_eq "a dry run too" 0 $?
"$RQ" lint tests/cases/runner >"$T/lint.out" 2>&1
expect_eq "a lint too" 0 $?
"$RQ" run --state-dir "$T/held" --report-dir "$T/rep" $PASS >"$T/real.out" 2>&1
expect_eq "a real run is refused while it is held" 1 $?
expect_grep "saying so" 'another run holds this node' "$T/real.out"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
# 15. Honest start errors: a two-sided case whose server is missing said
# "cannot start ...: Success" (errno read after cleanup) and was a FAIL.
echo "-- a program that cannot start"
"$RQ" run --target local --report-dir "$T/nostart" tests/integration/faults/pair-nostart.yaml \
	>"$T/nostart.out" 2>&1
expect_eq "the run fails" 1 $?
expect_grep "an ERROR (setup), not a FAIL, with the real errno" \
	'ERROR +cp\.missing_server .*cannot start /tmp/rq-no-such-dir/rqpp: No such file or directory' "$T/nostart.out"
expect_grep "saying the guests have their own /tmp" 'rxe-vm guests have their own /tmp' "$T/nostart.out"
# 16. Writes through planted links.  A run dir in a reports dir others can
# write is renamed and a link to a victim put in its place while a case
# runs: the reports still go into the run dir (by its fd), none into the
# victim.  capture refuses a dir it did not make (an empty one with a
# planted link was written through).
echo "-- a run dir swapped for a link mid-run; capture into a planted dir"
mkdir -m 1777 "$T/lk-shared" "$T/lk-victim"
cat >"$T/slow.yaml" <<'YAML'
defaults:
  targets: [local]
  timeout: 20s
cases:
  - name: link.slow
    kind: command
    summary: long enough to swap the run dir under it
    argv: [sleep, "3"]
YAML
"$RQ" run --report-dir "$T/lk-shared" "$T/slow.yaml" >"$T/swap.out" 2>&1 &
runner=$!
wait_for "the run dir is made" 10 sh -c "ls -d '$T'/lk-shared/2*/logs"
rd=$(find "$T/lk-shared" -mindepth 1 -maxdepth 1 -type d -name "2*" | head -1)
mv "$rd" "$T/lk-shared/moved" && ln -s "$T/lk-victim" "$rd"
wait "$runner"
expect_eq "the run ends well" 0 $?
expect_eq "nothing written into the link's target" "" "$(ls -A "$T/lk-victim")"
expect_true "the reports are in the run dir itself" test -s "$T/lk-shared/moved/results.json"
expect_eq "with the row" "PASS" "$(jq -r '.results[0].verdict' "$T/lk-shared/moved/results.json" 2>/dev/null)"
if id nobody >/dev/null 2>&1; then
	mkdir -m 0777 "$T/lk-planted" "$T/lk-victim2"
	ln -s "$T/lk-victim2" "$T/lk-planted/capture"
	chown -h nobody "$T/lk-planted" "$T/lk-planted/capture"
	"$RQ" capture "$T/lk-planted" --root fixtures/nodes/rxe-vm1 >"$T/cap.out" 2>&1
	expect_eq "capture into an existing dir is refused" 1 $?
	expect_grep "saying it must be new" 'exists: capture into a new directory' "$T/cap.out"
	expect_eq "nothing written through the planted link" "" "$(ls -A "$T/lk-victim2")"
	"$RQ" capture "$T/lk-planted/new" --root fixtures/nodes/rxe-vm1 >"$T/cap2.out" 2>&1
	expect_eq "capture under another user's open dir is refused" 1 $?
	expect_grep "naming its owner" 'owned by uid [0-9]+ with mode 0777' "$T/cap2.out"
fi
# 17. vm/cache.sh run directly (a builder script, not `vm image`) refuses a
# cache under a dir another user owns, or one anyone may write that is not
# sticky, as `vm image` does; under /tmp-like sticky dirs it is fine.
echo "-- vm/cache.sh: a cache under another user's dir"
cache_try() {
	sh -c '. vm/cache.sh; die() { echo "die: $*"; exit 1; }; cache_open "$1" && echo opened' sh "$1"
}
mkdir -m 0777 "$T/cache-open" && chmod 0777 "$T/cache-open"
cache_try "$T/cache-open/c" >"$T/cache1.out" 2>&1
expect_eq "a cache under a dir anyone may write (not sticky) is refused" 1 $?
expect_grep "naming that dir" "lies under $(ere "$T/cache-open"), owned by uid $(id -u) with mode 777" "$T/cache1.out"
mkdir -m 1777 "$T/cache-sticky"
cache_try "$T/cache-sticky/c" >"$T/cache2.out" 2>&1
expect_eq "under a sticky one it opens" 0 $?
if id nobody >/dev/null 2>&1; then
	mkdir -m 0755 "$T/cache-theirs" && chown nobody "$T/cache-theirs"
	mkdir -m 0700 "$T/cache-theirs/c"
	cache_try "$T/cache-theirs/c" >"$T/cache3.out" 2>&1
	expect_eq "a cache of ours under another user's dir is refused" 1 $?
	expect_grep "naming its owner" "lies under $(ere "$T/cache-theirs"), owned by uid $(id -u nobody)" "$T/cache3.out"
fi
finish

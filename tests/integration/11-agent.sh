#!/bin/sh
# The agent protocol against what an untrusted channel can deliver:
# garbage, wrong versions, unknown ops, oversized and truncated lines.
# Each gets an error answer and the agent keeps serving.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

RQ=${RQ:-build/san/rdmaqual}
T=$(mktemp -d /tmp/rq-it-agent.XXXXXX)
trap 'rm -rf "$T"' EXIT

{
	echo 'garbage that is not json'
	echo '[1,2,3]'
	echo '{"v":1,"op":"hello"}'
	echo '{"v":99,"id":3,"op":"hello"}'
	echo '{"v":1,"id":4,"op":"no-such-op"}'
	echo '{"v":1,"id":5,"op":"run"}'
	echo '{"v":1,"id":6,"op":"run","case":{"keys":[{"key":"name","value":{"text":"x"}},{"key":"kind","value":{"text":"nosuchkind"}}]},"timeout_ms":5000}'
	echo '{"v":1,"id":7,"op":"exec","argv":[]}'
	echo '{"v":1,"id":8,"op":"run","case":{"keys":[{"key":"name","value":{"text":"a.b"}},{"key":"kind","value":{"text":"command"}},{"key":"argv","value":{"list":[{"text":"true"}]}}]}}'
	head -c 5000000 /dev/zero | tr '\0' 'x'; echo
	echo '{"v":1,"id":9,"op":"hello"}'
	echo '{"v":1,"id":10,"op":"run","case":{"file":"cases/a.yaml","at":[2,5],"keys":[{"key":"name","at":[2,5],"value":{"text":"a.b","at":[2,11]}},{"key":"kind","at":[3,5],"value":{"text":"command","at":[3,11]}},{"key":"argv","at":[4,5],"value":{"list":[{"text":"echo","at":[4,12]},{"text":"hi","at":[4,18]}],"at":[4,11]}}]},"timeout_ms":5000}'
	sleep 2
	printf '{"v":1,"id":11,"op":"hel'
} | timeout 30 "$RQ" agent --stdio >"$T/out" 2>"$T/err"
expect_eq "agent ends cleanly at EOF after a truncated line" 0 $?
expect_true "every answer is one JSON object per line" jq -e . "$T/out"
n=$(wc -l <"$T/out")
expect_eq "one answer per complete line" 12 "$n"
expect_grep "garbage is answered" '"error":"not a JSON object' "$T/out"
expect_grep "missing id is answered" 'without a positive integer' "$T/out"
expect_grep "version mismatch is answered" '"id":3.*unsupported protocol version' "$T/out"
expect_grep "unknown op is answered" '"id":4.*unknown op' "$T/out"
expect_grep "run without case is answered" '"id":5.*needs a \\"case\\"' "$T/out"
jqt() { jq -e -s "$1" "$T/out" >/dev/null; }
expect_true "unknown kind comes back as an ERROR row" \
	jqt 'map(select(.id == 6))[0] | .ok and .rows[0].verdict == "ERROR" and (.rows[0].reason | test("could not load"))'
expect_grep "exec with empty argv is answered" '"id":7.*non-empty' "$T/out"
expect_grep "run without timeout is refused" '"id":8.*timeout_ms' "$T/out"
expect_grep "oversized line is answered" 'over 4194304 bytes' "$T/out"
expect_grep "agent still serves after all that" '"id":9.*"ok":true' "$T/out"
expect_true "a run answers with its rows and log" \
	jqt 'map(select(.id == 10))[0] | .rows[0].verdict == "PASS" and (.log | test("hi"))'
expect_true "the agent wrote nothing to stderr" test ! -s "$T/err"

echo "-- a cancelled run: what its tool started is gone before the agent answers"
# The tool's background child outlives the tool (PR_SET_PDEATHSIG reaches
# the tool, not what it started) unless the agent kills the tool's group.
# Its argv is this test's own: "sleep 3<pid>".
LEFT="sleep 3$$"
{
	printf '{"v":1,"id":1,"op":"run","timeout_ms":60000,"case":{"keys":[{"key":"name","value":{"text":"a.stopped"}},{"key":"kind","value":{"text":"command"}},{"key":"argv","value":{"list":[{"text":"sh"},{"text":"-c"},{"text":"%s & exec sleep 600"}]}}]}}\n' "$LEFT"
	sleep 1
	echo '{"v":1,"id":2,"op":"cancel","target_id":1}'
	sleep 4
} | timeout 30 "$RQ" agent --stdio >"$T/cancel" 2>"$T/cerr"
expect_true "the cancelled run answers: cancelled, its groups reaped" \
	jq -e -s 'map(select(.id == 1))[0] | (.ok | not) and .error == "cancelled" and .reaped == true' "$T/cancel"
expect_true "the tool's background child is gone" no_proc "^$LEFT\$"
# ours by argv, should the check fail: never left running
for p in $(pgrep -f -- "^$LEFT\$"); do kill "$p"; done

echo "-- a cancelled run whose child left the tool's group and holds a zombie in it"
# A child leaves the tool's group and keeps a zombie in it that it never
# reaps: the group outlives its SIGKILL.  Once that was the answer's
# "leftover"; now the escaped child is killed as a process of the case
# (its cgroup, or without one the agent's adopted orphan, contain.h), the
# zombie is reaped and the answer says so.  The escaped child is this
# test's "sleep 4<pid>".
ESC="sleep 4$$"
cat >"$T/escape.py" <<'PY'
import os, sys, time
if os.fork() == 0:
    if os.fork() == 0:
        time.sleep(0.3)
        os._exit(0)
    os.setpgid(0, 0)
    os.execvp("sleep", ["sleep", sys.argv[1]])
time.sleep(600)
PY
for nocg in 0 1; do
	{
		printf '{"v":1,"id":1,"op":"run","timeout_ms":60000,"case":{"keys":[{"key":"name","value":{"text":"a.left"}},{"key":"kind","value":{"text":"command"}},{"key":"argv","value":{"list":[{"text":"python3"},{"text":"%s"},{"text":"%s"}]}}]}}\n' "$T/escape.py" "${ESC#sleep }"
		sleep 1
		echo '{"v":1,"id":2,"op":"cancel","target_id":1}'
		sleep 4
	} | RQ_NO_CGROUP=$nocg timeout 30 "$RQ" agent --stdio >"$T/left" 2>"$T/lerr"
	expect_true "RQ_NO_CGROUP=$nocg: the answer says reaped, the escaped child killed and named" \
		jq -e -s 'map(select(.id == 1))[0] | .error == "cancelled" and .reaped == true and (.log | test("left after its worker, killed: .*pid [0-9]+ sleep \\(sleep\\)"))' "$T/left"
	expect_true "RQ_NO_CGROUP=$nocg: the escaped child is gone" no_proc "^$ESC\$"
	# ours by argv, should the check fail: never left running
	for p in $(pgrep -f -- "^$ESC\$"); do kill "$p"; done
done
finish

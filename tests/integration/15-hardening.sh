#!/bin/sh
# What a hostile local user or a careless one could do to a root runner,
# and what a run must do when its own writes fail: state dirs someone else
# made, links planted in them, forged cleanup records, bad options, full
# report disks, colliding run ids.  Each check failed before its fix.
set -u
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

RQ=${RQ:-build/san/rdmaqual}
T=$(mktemp -d /tmp/rq-it-harden.XXXXXX)
trap 'rm -rf "$T"' EXIT
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
expect_grep "and the reason says so" 'must be owned by uid 0 with mode 0700' "$T/open.out"
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
finish

#!/bin/sh
# Guests from snapshots (RQ_VM_SNAPSHOT=1): the first boot saves each
# guest at its init's snapshot point; a fresh_guest case and the next run
# restore them instead of booting; a restored guest is as fresh as a booted
# one (a file written in one case is gone in the next fresh one), has this
# boot's identity (name, address, rxe0, the host's clock, sshd from this
# boot's dir) and answers as one; a snapshot whose description no longer
# matches is never used but saved anew, and a snapshot dir others may
# write is not used at all.  The snapshots are this test's own
# (RQ_VM_SNAPSHOT_DIR under its temp dir).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

vm_test_setup snap
S=$T/snap
export RQ_VM_SNAPSHOT=1 RQ_VM_SNAPSHOT_DIR="$S"
now=$(date +%s)
# The cases: written here, for the host's clock at the test's start.
cat >"$T/snap.yaml" <<EOC
defaults:
  targets: [rxe-vm]
  timeout: 60s
cases:
  - name: snap.a_write
    kind: command
    argv: [sh, -c, "echo one >/etc/rq-snap-written && echo written-on-\$(hostname)"]
    stdout_contains: written-on-vm0
  - name: snap.b_fresh
    kind: command
    summary: a restored guest has none of the last one's writes, this boot's name, address, rxe0 and clock
    fresh_guest: true
    argv: [sh, -c, "test ! -e /etc/rq-snap-written && test \$(date +%s) -ge $now && ip -4 addr show eth0 | grep -q 10.77.0.1/24 && rdma link show rxe0/1 | grep -q ACTIVE && echo fresh-\$(hostname)"]
    stdout_contains: fresh-vm0
  - name: snap.c_peer
    kind: verbs-pingpong
    summary: the two restored guests reach each other over RDMA (RC SEND, payloads verified)
    transport: rc
    op: send
    size: 4KiB
    iterations: 50
    max_latency_us: 50000
EOC
run() {	# run NAME: one rdmaqual run of the cases into $T/NAME
	"$RQ" run --target rxe-vm --report-dir "$T/$1" "$T/snap.yaml" >"$T/$1.out" 2>&1
	_rc=$?
	sed 's/^/    | /' "$T/$1.out"
	return $_rc
}
fact() { jq -r --arg k "$2" '.facts[$k] // empty' "$T/$1/latest/results.json"; }

run first
expect_eq "first run passes" 0 $?
for c in a_write b_fresh c_peer; do
	expect_grep "first run: snap.$c passes" "^PASS +snap\\.$c" "$T/first.out"
done
expect_eq "first run: two boots (the first, then the fresh guests)" 2 "$(fact first vm.boots)"
expect_eq "... of which the fresh guests' was a restore" 1 "$(fact first vm.restores)"
expect_true "... from the snapshots this run saved" sh -c "ls '$S'/*-vm0 '$S'/*-vm1 '$S'/*-vm0.desc"
expect_eq "the snapshot dir is private" 700 "$(stat -c %a "$S")"
n=$(find "$S" -type f | wc -l)
expect_eq "one state and one description a guest" 4 "$n"

run second
expect_eq "second run passes" 0 $?
for c in a_write b_fresh c_peer; do
	expect_grep "second run: snap.$c passes" "^PASS +snap\\.$c" "$T/second.out"
done
expect_eq "second run: both boots restored" 2 "$(fact second vm.restores)"
expect_grep "... said in the facts" '^restored: 2 guests' "$(printf '%s' "$(fact second vm.snapshot)" >"$T/how"; echo "$T/how")"
echo "    boot (launch to ready): first run's last $(fact first vm.boot_s) s, second run's $(fact second vm.boot_s) s"

# A description that no longer matches (as a rebuilt kernel, initramfs or
# QEMU makes it): that snapshot is not loaded; the first boot saves anew.
for d in "$S"/*-vm1.desc; do echo "changed" >>"$d"; done
run third
expect_eq "third run passes" 0 $?
expect_eq "third run: its first boot was not a restore, the fresh guests' was" 1 "$(fact third vm.restores)"
expect_nogrep "no guest loaded a state it did not match" 'load of migration failed|restore failed' "$T/third.out"
expect_true "the changed description was replaced" sh -c "! grep -q changed '$S'/*-vm1.desc"

# A snapshot dir others may write: not used (a planted state would be
# loaded as the guest's memory); the run goes on booting.
mkdir -m 0777 "$T/open" && chmod 0777 "$T/open"
RQ_VM_SNAPSHOT_DIR=$T/open run fourth
expect_eq "a run with an open snapshot dir passes" 0 $?
expect_eq "... restoring nothing" 0 "$(fact fourth vm.restores)"
fact fourth vm.snapshot >"$T/how4"
expect_grep "... saying why in the facts" '^off: .RQ_VM_SNAPSHOT_DIR .*' "$T/how4"
expect_eq "... and nothing was written there" 0 "$(find "$T/open" -type f | wc -l)"
finish

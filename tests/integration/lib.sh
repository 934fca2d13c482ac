# shellcheck shell=sh
# Helpers for integration tests: each check prints ok/FAIL and is counted.
# Sourced by tests/integration/NN-*.sh, run from the repository root.
_fails=0
_checks=0
ok()   { _checks=$((_checks + 1)); echo "  ok   $1"; }
bad()  { _checks=$((_checks + 1)); _fails=$((_fails + 1)); echo "  FAIL $1"; }
expect_eq() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: expected '$2', got '$3'"; fi; }
expect_true() { d=$1; shift; if "$@" >/dev/null 2>&1; then ok "$d"; else bad "$d"; fi; }
expect_grep() { if grep -Eq -- "$2" "$3"; then ok "$1"; else bad "$1: /$2/ not in $3"; sed 's/^/    | /' "$3" | tail -20; fi; }
# ere TEXT: TEXT as an extended regex that matches it literally (paths hold
# '+' and '.': 6.12.95+deb12-amd64).
ere() { printf '%s' "$1" | sed 's/[][\\.^$*+?(){}|]/\\&/g'; }
expect_nogrep() { if grep -Eq -- "$2" "$3"; then bad "$1: /$2/ found in $3"; else ok "$1"; fi; }
# no_proc PATTERN: no process whose command line matches PATTERN (pgrep -f).
# Machine-wide: use it only with a PATTERN that names something of this
# test's own (its $T, a dir or pid it learnt); else procs_with.
no_proc() { ! pgrep -f -- "$1" >/dev/null; }
# procs_with PATTERN TEXT: the pids whose command line matches PATTERN and
# whose environment holds TEXT (this test's $T, e.g. in the
# RDMAQUAL_STATE_DIR it exported, which its runs' children inherit): the
# test's own processes, not those of another run on the host.
procs_with() {
	for _q in $(pgrep -f -- "$1"); do
		grep -qaF -- "$2" "/proc/$_q/environ" 2>/dev/null && echo "$_q"
	done
	return 0
}
# none_with PATTERN TEXT: no such process of this test's
none_with() { [ -z "$(procs_with "$1" "$2")" ]; }
# facts_of KEY DIR: the values of the report fact KEY in every results.json
# under DIR (the runs this test made), one a line
facts_of() {
	find "$2" -name results.json -exec jq -r --arg k "$1" '.facts[$k] // empty' {} + 2>/dev/null |
		sort -u
}
# peer_copies REPORT...: the peer copy dirs (/tmp/rdmaqual-peer.*) that the
# runs' reports name (facts peer.rdmaqual_exe, NODE.node.rdmaqual_exe)
peer_copies() {
	grep -ohE 'rdmaqual_exe" value="/tmp/rdmaqual-peer\.[^/"]+' "$@" 2>/dev/null |
		sed 's/.*value="//' | sort -u
}
# none_exist LIST...: none of the paths exists (each argument a path or
# paths one a line, as facts_of and peer_copies print them)
none_exist() {
	printf '%s\n' "$@" | while IFS= read -r _p; do
		[ -z "$_p" ] || [ ! -e "$_p" ] || exit 1
	done
}
# wait_for DESC SECONDS CMD...: poll until CMD succeeds or time is up
wait_for() {
	d=$1; s=$2; shift 2
	end=$(( $(date +%s) + s ))
	while ! "$@" >/dev/null 2>&1; do
		if [ "$(date +%s)" -ge "$end" ]; then bad "$d (not within ${s}s)"; return 1; fi
		sleep 0.1
	done
	ok "$d"
}
# count PATH...: how many of the paths exist (pass a glob unquoted: one
# that matches nothing stays itself and does not exist)
count() { _n=0; for _p in "$@"; do [ -e "$_p" ] && _n=$((_n + 1)); done; echo "$_n"; }

# vm_test_setup NAME: the start of every test that boots guests.  Without
# QEMU it skips (exit 4, see skip).  RQ is the release build (the guest runs it too,
# over 9p, and ASan is slow under TCG; RQ_VM overrides), T a private temp
# dir removed at exit, and the run state goes to a private dir under it.
# shellcheck disable=SC2034 # RQ is for the test that calls this
vm_test_setup() {
	if ! command -v qemu-system-x86_64 >/dev/null; then
		skip "qemu-system-x86_64 not installed"
	fi
	RQ=${RQ_VM:-./rdmaqual}
	T=$(mktemp -d "/tmp/rq-it-$1.XXXXXX") || exit 1
	trap 'rm -rf "$T"' EXIT
	RDMAQUAL_STATE_DIR="$T/state"
	export RDMAQUAL_STATE_DIR
}

# ibsim_test_setup NAME: the start of every test on the ibsim target.  RQ is
# the sanitizer build (RQ overrides), T a private temp dir removed at exit
# holding the run state; without ibsim (or a target that cannot start) it
# skips (exit 4).
# shellcheck disable=SC2034 # RQ is for the test that calls this
ibsim_test_setup() {
	RQ=${RQ:-build/san/rdmaqual}
	T=$(mktemp -d "/tmp/rq-it-$1.XXXXXX") || exit 1
	trap 'rm -rf "$T"' EXIT
	RDMAQUAL_STATE_DIR="$T/state"
	export RDMAQUAL_STATE_DIR
	if ! "$RQ" run --dry-run --target ibsim cases/sm/bringup.yaml >/dev/null 2>&1 ||
		! command -v ibsim >/dev/null; then
		skip "ibsim target unavailable here"
	fi
}

# vm_record_owner: the pid named by the run-state record of booted guests
# (rxevm-<pid>), "" when there is none yet.  The guests' dirs are
# /tmp/rq-<that pid>-N.
vm_record_owner() {
	for _r in "$RDMAQUAL_STATE_DIR"/rxevm-*; do
		_o=${_r##*/rxevm-}
		case $_o in '' | *[!0-9]*) ;; *) echo "$_o"; return 0 ;; esac
	done
	echo ""
}

# vm_owner PID: vm_record_owner, polled while the run PID is going.
vm_owner() {
	_owner=
	while kill -0 "$1" 2>/dev/null && [ -z "$_owner" ]; do
		_owner=$(vm_record_owner)
		[ -n "$_owner" ] || sleep 0.1
	done
	echo "$_owner"
}

# skip WHY: the test cannot run here (a missing tool, module or privilege):
# say why and exit 4, kselftest's KSFT_SKIP, which the runner reports as a
# skip, not as a pass.
skip() { echo "  SKIP: $1"; exit 4; }
# rig_gone RIGOUT: the lab rig this test started (vm/lab-rig.sh, whose
# stderr is RIGOUT; the inner script wrote its RQ_LAB_DIR to $T/rig.dir)
# left nothing: no QEMU of its dir, its namespace, its dir, its
# /etc/netns entry.  Only this rig's: another may run on the host.
rig_gone() {
	_ns=$(sed -n 's/^lab-rig: .*, namespace \(rqlab[0-9]*\)$/\1/p' "$1" | tail -1)
	_d=$(cat "$T/rig.dir" 2>/dev/null)
	expect_true "the rig named its namespace ($_ns) and dir ($_d)" test -n "$_ns" -a -n "$_d"
	expect_true "no QEMU of this rig left" no_proc "rq.lab=$_d/guest"
	expect_true "its namespace is gone" sh -c "! ip netns list | grep -Eq '^$_ns( |\$)'"
	expect_true "its dir is gone" test ! -e "$_d"
	expect_true "its /etc/netns entry is gone" test ! -e "/etc/netns/$_ns"
}

finish() { echo "  $_checks checks, $_fails failed"; [ "$_fails" -eq 0 ]; }

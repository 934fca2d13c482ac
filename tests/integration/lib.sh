# Helpers for integration tests: each check prints ok/FAIL and is counted.
_fails=0
_checks=0
ok()   { _checks=$((_checks + 1)); echo "  ok   $1"; }
bad()  { _checks=$((_checks + 1)); _fails=$((_fails + 1)); echo "  FAIL $1"; }
expect_eq() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: expected '$2', got '$3'"; fi; }
expect_true() { d=$1; shift; if "$@" >/dev/null 2>&1; then ok "$d"; else bad "$d"; fi; }
expect_grep() { if grep -Eq -- "$2" "$3"; then ok "$1"; else bad "$1: /$2/ not in $3"; sed 's/^/    | /' "$3" | tail -20; fi; }
expect_nogrep() { if grep -Eq -- "$2" "$3"; then bad "$1: /$2/ found in $3"; else ok "$1"; fi; }
# no_proc PATTERN: no process whose command line matches PATTERN (pgrep -f)
no_proc() { ! pgrep -f -- "$1" >/dev/null; }
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
finish() { echo "  $_checks checks, $_fails failed"; [ "$_fails" -eq 0 ]; }

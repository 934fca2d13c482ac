#!/bin/sh
# Run the integration tests (tests/integration/NN-*.sh) one at a time, in
# order: VM tests share one machine's 2 cores and must not overlap.  With
# an argument NN, run only tests/integration/NN-*.sh (make integration T=NN).
set -u
cd "$(dirname "$0")/.." || exit 1
if [ $# -gt 0 ]; then
	set -- tests/integration/"$1"-*.sh
	if [ ! -e "$1" ]; then
		echo "no integration test ${1%-\*.sh}-*.sh; there are:" >&2
		for t in tests/integration/[0-9]*.sh; do echo "  ${t##*/}" >&2; done
		exit 2
	fi
else
	set -- tests/integration/[0-9]*.sh
fi
fail=0
skipped=0
for t in "$@"; do
	[ -e "$t" ] || continue
	echo "== $t"
	start=$(date +%s)
	"$t"
	rc=$?
	took="$(( $(date +%s) - start ))s"
	# exit 4 is a skip (kselftest's KSFT_SKIP, tests/integration/lib.sh skip)
	case $rc in
	0) echo "== ok $t ($took)" ;;
	4) echo "== skip $t ($took)"; skipped=$((skipped + 1)) ;;
	*) echo "== FAILED $t ($took)" >&2; fail=1 ;;
	esac
	# Every later test (and sshd's daemon()) needs /dev/null a character
	# device; one replaced by a regular file once broke a whole run
	# without naming who did it.  Name the test, and stop.
	if [ ! -c /dev/null ]; then
		echo "== FAILED $t: /dev/null is no longer a character device ($(ls -l /dev/null))" >&2
		exit 1
	fi
done
[ "$skipped" -eq 0 ] || echo "== $skipped skipped (each says why above)"
exit $fail

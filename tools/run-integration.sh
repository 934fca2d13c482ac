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
for t in "$@"; do
	[ -e "$t" ] || continue
	echo "== $t"
	start=$(date +%s)
	if "$t"; then echo "== ok $t ($(( $(date +%s) - start ))s)"
	else echo "== FAILED $t ($(( $(date +%s) - start ))s)" >&2; fail=1; fi
done
exit $fail

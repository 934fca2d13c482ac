#!/bin/sh
# Run the integration tests (tests/integration/NN-*.sh) one at a time, in
# order: VM tests share one machine's 2 cores and must not overlap.
set -u
cd "$(dirname "$0")/.."
fail=0
for t in tests/integration/[0-9]*.sh; do
	[ -e "$t" ] || continue
	echo "== $t"
	start=$(date +%s)
	if "$t"; then echo "== ok $t ($(( $(date +%s) - start ))s)"
	else echo "== FAILED $t ($(( $(date +%s) - start ))s)" >&2; fail=1; fi
done
exit $fail

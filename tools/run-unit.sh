#!/bin/sh
# Run each unit-test binary; report all, fail if any failed.
set -u
fail=0
for t in "$@"; do
	if "$t"; then :; else echo "FAILED: $t" >&2; fail=1; fi
done
exit $fail

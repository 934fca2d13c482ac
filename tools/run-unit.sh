#!/bin/sh
# Run each unit-test binary; report all, fail if any failed.
#
# libcheck's timeouts only guard against a hang; they are wall-clock, so
# on a CI host running two pipelines at once a test that needs 2.4 s of CPU
# can miss a 10 s limit.  CK_TIMEOUT_MULTIPLIER (libcheck's own variable)
# stretches every limit; a caller's value wins.
set -u
: "${CK_TIMEOUT_MULTIPLIER:=4}"
export CK_TIMEOUT_MULTIPLIER
fail=0
for t in "$@"; do
	if "$t"; then :; else echo "FAILED: $t" >&2; fail=1; fi
	# the same guard as run-integration.sh's: name who replaced /dev/null
	if [ ! -c /dev/null ]; then
		echo "FAILED: $t: /dev/null is no longer a character device" >&2
		exit 1
	fi
done
exit $fail

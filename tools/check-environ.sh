#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tools/check-environ.sh: the environment variables the sources read (the C
# code's getenv/env_int calls, the installed vm scripts' $RQ_* variables)
# and harness/cli/environ.def (rdmaqual(1)'s ENVIRONMENT) must name the same set.
set -eu
cd "$(dirname "$0")/.."
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
grep -rhoE '(getenv|env_int)\("[A-Za-z_][A-Za-z0-9_]*"' harness src |
	sed 's/.*("//; s/"$//' >"$t/read"
grep -hoE '\$\{?RQ_[A-Z0-9_]+' vm/kernel.sh vm/debian-kernel.sh vm/initramfs.sh vm/init |
	sed 's/^\${\{0,1\}//' >>"$t/read"
sort -u "$t/read" -o "$t/read"
sed -n 's/^ENV("\([^"]*\)".*/\1/p' harness/cli/environ.def | sort -u >"$t/doc"
bad=0
for v in $(comm -23 "$t/read" "$t/doc"); do
	echo "check-environ: $v is read but not described in harness/cli/environ.def" >&2
	bad=1
done
for v in $(comm -13 "$t/read" "$t/doc"); do
	echo "check-environ: harness/cli/environ.def describes $v, which nothing reads" >&2
	bad=1
done
[ $bad = 0 ] && echo "check-environ: $(wc -l <"$t/doc") variables, all described"
exit $bad

#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tools/check-man.sh PAGE...: each man page must pass groff's strictest
# warnings and mandoc's lint (styles included) without a word, and man(1)
# must render it with its NAME and SYNOPSIS sections.
set -eu
bad=0
for p in "$@"; do
	out=$(groff -ww -man -z "$p" 2>&1) || bad=1
	[ -z "$out" ] || { echo "check-man: groff -ww $p:"; echo "$out"; bad=1; } >&2
	out=$(mandoc -Tlint "$p" 2>&1) || bad=1
	[ -z "$out" ] || { echo "check-man: mandoc -Tlint $p:"; echo "$out"; bad=1; } >&2
	txt=$(MANWIDTH=80 man -l "$p" 2>&1) || { echo "check-man: man -l $p failed" >&2; bad=1; }
	for s in NAME SYNOPSIS DESCRIPTION; do
		printf '%s\n' "$txt" | grep -q "^$s\$" ||
			{ echo "check-man: man -l $p: no $s section" >&2; bad=1; }
	done
done
[ $bad = 0 ] && echo "check-man: $# pages clean (groff -ww, mandoc -Tlint, man -l)"
exit $bad

#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tools/check-doc-yaml.sh RDMAQUAL: every ```yaml block of README.md and
# docs/*.md is a case file that `rdmaqual lint` takes (make docs-check), so
# an example cannot drift from the case format.  A block that starts with a
# list item ("  - name: ...") is one case shown alone: it is linted under
# "cases:".  Errors name the doc's file and the line the block starts at.
# (Examples of other YAML, or of mistakes, are fenced as plain ```.)
set -eu
cd "$(dirname "$0")/.."
RQ=${1:-./rdmaqual}
T=$(mktemp -d /tmp/rq-doc-yaml.XXXXXX)
trap 'rm -rf "$T"' EXIT

n=0
bad=0
for doc in README.md docs/*.md; do
	# one file per block: T/N.yaml, and T/N.where = "doc:line"
	awk -v dir="$T" -v doc="$doc" -v start="$n" '
	# a fence may be indented (a block inside a list item): so are its lines
	/^[[:space:]]*```yaml[[:space:]]*$/ {
		n++; f = dir "/" (start + n) ".yaml"; print doc ":" FNR + 1 > (dir "/" (start + n) ".where")
		inb = 1; first = 1; ind = index($0, "`") - 1; next
	}
	/^[[:space:]]*```/ && inb { inb = 0; close(f); next }
	inb {
		$0 = substr($0, ind + 1)
		if (first && $0 !~ /^[[:space:]]*(#|$)/) {
			first = 0
			if ($0 ~ /^[[:space:]]+- /)
				print "cases:" > f
		}
		print > f
	}
	END { print n + 0 > (dir "/count") }' "$doc"
	n=$((n + $(cat "$T/count")))
done
i=1
while [ "$i" -le "$n" ]; do
	if ! "$RQ" lint "$T/$i.yaml" >"$T/out" 2>&1; then
		echo "$(cat "$T/$i.where"): this yaml example fails rdmaqual lint:" >&2
		sed "s|$T/$i.yaml|example|" "$T/out" >&2
		bad=1
	fi
	i=$((i + 1))
done
[ "$bad" -eq 0 ] || exit 1
echo "check-doc-yaml: $n yaml examples lint clean"

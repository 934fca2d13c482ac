#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tools/capture-compare.sh OLD NEW [TREE...]: capture every node tree with
# two builds of rdmaqual and diff what they copied, for a change to capture
# or to the kinds' reads (core/reads.h) that must not change a capture.
# TREEs default to every node fixture (fixtures/nodes/*/).  Each pair of
# copies is compared byte for byte: every file, link and directory
# (diff -r, links not followed), and capture/manifest with its one volatile
# line (meta captured, the time) dropped, first as it is and then with its
# lines sorted.  A manifest whose lines only moved is reported as such; a
# change in what was copied fails.  Exit 0 when every tree's copies match.
set -eu

[ $# -ge 2 ] || { echo "usage: $0 OLD-RDMAQUAL NEW-RDMAQUAL [TREE...]" >&2; exit 2; }
old=$1
new=$2
shift 2
[ $# -gt 0 ] || set -- fixtures/nodes/*/
work=$(mktemp -d /tmp/rq-capcmp.XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM

same=0 moved=0 differ=0
for tree in "$@"; do
	name=$(basename "$tree")
	for b in old new; do
		bin=$old
		[ "$b" = new ] && bin=$new
		timeout 120 "$bin" capture --root "$tree" "$work/$b-$name" >/dev/null
		grep -v '^meta	captured	' "$work/$b-$name/capture/manifest" >"$work/$b-$name.man"
		rm "$work/$b-$name/capture/manifest"
	done
	if ! diff -r --no-dereference "$work/old-$name" "$work/new-$name" >"$work/diff-$name" 2>&1; then
		echo "DIFFER  $name: the copies differ"
		sed 's/^/    /' "$work/diff-$name" | head -20
		differ=$((differ + 1))
	elif cmp -s "$work/old-$name.man" "$work/new-$name.man"; then
		echo "SAME    $name ($(wc -l <"$work/new-$name.man") manifest lines)"
		same=$((same + 1))
	elif [ "$(sort "$work/old-$name.man" | cksum)" = "$(sort "$work/new-$name.man" | cksum)" ]; then
		echo "MOVED   $name: the manifest's lines are the same, in another order"
		moved=$((moved + 1))
	else
		echo "DIFFER  $name: the manifests differ"
		diff "$work/old-$name.man" "$work/new-$name.man" | sed 's/^/    /' | head -20
		differ=$((differ + 1))
	fi
done
echo "$same same, $moved same but reordered manifest, $differ differ (of $#)"
[ "$differ" -eq 0 ]

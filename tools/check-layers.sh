#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tools/check-layers.sh: fail when a folder of src/ includes a header from a
# folder it may not use.  The table below is the layering that
# docs/architecture.md draws; a folder may use the folders listed after it
# (its own always).  harness/ sits on top and may use every folder.
# Includes are written "folder/name.h" (relative to src/), so this is a grep.
set -eu
cd "$(dirname "$0")/.."

allowed() {
	case $1 in
	core)    echo "" ;;
	parsers) echo "core" ;;
	rdma)    echo "core parsers" ;;
	qual)    echo "core parsers rdma" ;;
	agent)   echo "core" ;;
	kinds)   echo "core parsers rdma qual" ;;
	vm)      echo "core agent" ;;
	targets) echo "core parsers rdma qual agent vm" ;;
	cluster) echo "core" ;;
	*)       echo "UNKNOWN" ;;
	esac
}

bad=0
for dir in src/*/; do
	layer=$(basename "$dir")
	ok=$(allowed "$layer")
	if [ "$ok" = UNKNOWN ]; then
		echo "check-layers: src/$layer is not in the layer table (tools/check-layers.sh)" >&2
		bad=1
		continue
	fi
	# every quoted include of a file in this folder
	for f in "$dir"*; do
		grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" 2>/dev/null |
		while IFS= read -r line; do
			inc=$(printf '%s\n' "$line" | sed 's/^[^"]*"\([^"]*\)".*/\1/')
			case $inc in
			*/*) used=${inc%%/*} ;;
			*) echo "$f:${line%%:*}: include \"$inc\" without its folder (write \"$layer/$inc\")"; continue ;;
			esac
			[ "$used" = "$layer" ] && continue
			case " $ok " in
			*" $used "*) ;;
			*) echo "$f:${line%%:*}: $layer may not include $inc (allowed: ${ok:-nothing})" ;;
			esac
		done
	done
done > build/layers.out 2>&1 || true
if [ -s build/layers.out ] || [ $bad -ne 0 ]; then
	cat build/layers.out >&2
	echo "check-layers: FAILED" >&2
	exit 1
fi
set -- src/*/
echo "check-layers: $# folders, includes point down the layers"

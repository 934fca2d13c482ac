#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tools/check-layers.sh: fail when a folder of src/ or harness/ includes a
# header from a folder it may not use.  The table below is the layering that
# docs/architecture.md draws; a folder may use the folders listed after it
# (its own always).  The folders of harness/ (the program) sit on top: each
# may use every folder of src/ and the harness folders below it.
# Includes are written "folder/name.h" (relative to src/ or harness/), so
# this is a grep; a folder name means one folder, in src/ or in harness/.
set -eu
cd "$(dirname "$0")/.."

SRC_ALL="core parsers rdma qual agent kinds vm targets cluster"
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
	# harness/
	report)  echo "$SRC_ALL" ;;
	exec)    echo "$SRC_ALL report" ;;
	lab)     echo "$SRC_ALL report exec" ;;
	cli)     echo "$SRC_ALL report exec lab" ;;
	*)       echo "UNKNOWN" ;;
	esac
}

bad=0
for dir in harness/*/; do
	if [ -d "src/$(basename "$dir")" ]; then
		echo "check-layers: $dir and src/$(basename "$dir") share a name (an include could mean either)" >&2
		bad=1
	fi
done
for dir in src/*/ harness/*/; do
	layer=$(basename "$dir")
	ok=$(allowed "$layer")
	if [ "$ok" = UNKNOWN ]; then
		echo "check-layers: ${dir%/} is not in the layer table (tools/check-layers.sh)" >&2
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
set -- src/*/ harness/*/
echo "check-layers: $# folders, includes point down the layers"

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
#
# Given the objects (make layers passes every one it builds), it also reads
# what the linker sees: nm's undefined symbols, each resolved to the object
# that defines it.  An edge to a folder the table does not allow fails
# (a call declared in a lower header but defined above, a weak symbol), and
# so does a cycle of objects inside one folder (tsort finds it).  The
# table itself must be a DAG, so no edge it allows closes a cycle of folders.
#
#   tools/check-layers.sh [OBJECT...]
set -eu
cd "$(dirname "$0")/.."
# where the check keeps its files (a test points it at its own dir)
out=${RQ_LAYERS_OUT:-build}
mkdir -p "$out"

SRC_ALL="core parsers rdma fabric qual agent kinds vm targets cluster"
allowed() {
	case $1 in
	core)    echo "" ;;
	parsers) echo "core" ;;
	rdma)    echo "core parsers" ;;
	fabric)  echo "core parsers" ;;
	qual)    echo "core parsers rdma" ;;
	agent)   echo "core" ;;
	kinds)   echo "core parsers rdma fabric qual" ;;
	vm)      echo "core agent" ;;
	targets) echo "core parsers rdma fabric qual agent vm" ;;
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
done > "$out"/layers.out 2>&1 || true
# ---- symbols --------------------------------------------------------------
objs=$#
if [ "$objs" -gt 0 ]; then
	table=
	for l in $SRC_ALL report exec lab cli; do
		table="$table$l=$(allowed "$l");"
		for u in $(allowed "$l"); do echo "$l $u"; done
	done >"$out"/layers.table
	if ! tsort "$out"/layers.table >/dev/null 2>"$out"/layers.tsort; then
		echo "check-layers: the layer table has a cycle: $(sed -n 's/^tsort: //p' "$out"/layers.tsort | tr '\n' ' ')" >&2
		bad=1
	fi
	nm -A -P "$@" >"$out"/layers.nm
	awk -v table="$table" -v edges="$out/layers.fedges" -v nedges="$out/layers.nedges" '
	function path(p) { return match(p, /(src|harness)\/[^\/]+\/[^\/]+\.o$/) ? substr(p, RSTART) : p }
	function layer(p,  a) { split(path(p), a, "/"); return a[2] }
	BEGIN {
		n = split(table, T, ";")
		for (i = 1; i <= n; i++)
			if (T[i] != "") {
				split(T[i], kv, "=")
				ok[kv[1]] = " " kv[2] " "
			}
	}
	{
		f = $1; sub(/:$/, "", f)
		if ($3 ~ /^[TDBRCGSVWi]$/) {
			if (!($2 in def))
				def[$2] = f
		} else if ($3 == "U" || $3 == "w" || $3 == "v") {
			nu++; uf[nu] = f; us[nu] = $2
		}
	}
	END {
		for (i = 1; i <= nu; i++) {
			if (!(us[i] in def) || def[us[i]] == uf[i])
				continue
			u = uf[i]; d = def[us[i]]; lu = layer(u); ld = layer(d)
			if (lu == ld) {
				print path(u), path(d) > edges
				continue
			}
			if (!seen[u, d]++)
				cross++
			if (index(ok[lu], " " ld " ") == 0)
				printf "%s: %s uses %s, defined in %s (%s may use: %s)\n", path(u), lu, us[i],
				       path(d), lu, ok[lu] == "  " ? "nothing" : substr(ok[lu], 2, length(ok[lu]) - 2)
		}
		print cross + 0 > nedges
		close(edges)
	}' "$out"/layers.nm >>"$out"/layers.out
	# one folder at a time: a cycle of objects is a pair (or ring) that cannot be split
	for dir in src/*/ harness/*/; do
		layer=$(basename "$dir")
		awk -v l="$layer" '{ split($1, a, "/"); if (a[2] == l) print }' "$out"/layers.fedges >"$out"/layers.dir
		if ! tsort "$out"/layers.dir >/dev/null 2>"$out"/layers.tsort; then
			sed -n 's/^tsort: \([^ ]*\.o\)$/\1/p' "$out"/layers.tsort | sort -u | tr '\n' ' ' |
				sed "s|^|${dir%/}: objects in a cycle (each uses the next): |; s| \$|\n|" >>"$out"/layers.out
		fi
	done
fi
if [ -s "$out"/layers.out ] || [ $bad -ne 0 ]; then
	cat "$out"/layers.out >&2
	echo "check-layers: FAILED" >&2
	exit 1
fi
set -- src/*/ harness/*/
nfolders=$#
summary="includes"
if [ "$objs" -gt 0 ]; then
	summary="includes and $(cat "$out"/layers.nedges) symbol edges of $objs objects (no cycle)"
fi
echo "check-layers: $nfolders folders, $summary point down the layers"

#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tools/release-check.sh (make release-check): the whole path a maintainer
# takes before a release, in a fresh clone of this checkout's HEAD (what is
# committed, nothing else), one step after another:
#
#   make, make check, make distcheck, make deb (lintian clean), make rpm
#   (rpmlint clean), the .deb unpacked into a throwaway root and its binary
#   run against its own installed cases (lint, a sysroot replay, --dry-run,
#   an rxe-vm pair booted from the package's own libexec on vm2 and vm4),
#   make demo, make demo-cluster, and a plain make again at the end.
#
# Each step's time is printed as it ends; the first that fails stops the
# check (exit 1) and names its log.  Root (make check and the guests need
# it); about 45 minutes on a 2-core TCG host, so it is no part of make check.
#
#   tools/release-check.sh [--keep] [--from STEP]
#
# --keep leaves the clone (else removed when all passed; kept on a failure);
# --from STEP starts at STEP in a clone kept from before (RELEASE_DIR=...).
set -u
cd "$(dirname "$0")/.." || exit 1
src=$(pwd)
keep=0
from=
while [ $# -gt 0 ]; do
	case $1 in
	--keep) keep=1 ;;
	--from) from=${2:?--from STEP}; shift ;;
	-h | --help) sed -n '3,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "release-check: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
[ "$(id -u)" = 0 ] || { echo "release-check: needs root (make check, guests, packages)" >&2; exit 2; }
git rev-parse --verify -q HEAD >/dev/null || { echo "release-check: needs the git checkout" >&2; exit 2; }
git diff --quiet HEAD -- || echo "release-check: uncommitted changes are left out (the clone is HEAD)" >&2

if [ -n "$from" ]; then
	dir=${RELEASE_DIR:?--from needs RELEASE_DIR, the clone kept by an earlier run}
else
	dir=$(mktemp -d /tmp/rq-release.XXXXXX) || exit 1
	git clone -q --no-hardlinks "$src" "$dir/rdmaqual" || exit 1
fi
W=$dir/rdmaqual
cd "$W" || exit 1
echo "release-check: $(git rev-parse --short HEAD) in $W, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

total0=$(date +%s)
started=${from:+0}
started=${started:-1}
# step NAME CMD...: run CMD (its output to $dir/NAME.log), print its time.
step() {
	_n=$1
	shift
	[ "$started" = 1 ] || [ "$_n" = "$from" ] || { echo "-- $_n: skipped (--from $from)"; return 0; }
	started=1
	_t0=$(date +%s)
	"$@" >"$dir/$_n.log" 2>&1 </dev/null
	_rc=$?
	_t=$(( $(date +%s) - _t0 ))
	if [ $_rc != 0 ]; then
		printf '%-22s FAILED after %4d s (exit %d); last lines of %s:\n' "$_n" "$_t" "$_rc" "$dir/$_n.log"
		tail -n 25 "$dir/$_n.log" | sed 's/^/    | /'
		echo "release-check: FAILED at $_n; the clone is kept in $W"
		exit 1
	fi
	printf '%-22s ok %6d s\n' "$_n" "$_t"
}

# The .deb's binary in a root of its own, against its own installed cases
# (a subshell: its cd and environment stay in it).
pkgroot() (
	r=$dir/pkgroot
	rm -rf "$r" && mkdir -p "$r" || return 1
	for d in build/deb/rdmaqual_*.deb build/deb/rdmaqual-mpi_*.deb; do
		[ -f "$d" ] || { echo "no $d"; return 1; }
		dpkg-deb -x "$d" "$r" || return 1
	done
	B=$r/usr/bin/rdmaqual
	ls -l "$r/usr/libexec/rdmaqual"
	cd "$dir" || return 1
	export RDMAQUAL_STATE_DIR="$dir/pkgstate"
	"$B" --version &&
		"$B" lint &&
		"$B" run --dry-run >"$dir/pkg-dry.out" && grep -q '^mtu\.consistent ' "$dir/pkg-dry.out" &&
		"$B" run --report-dir "$dir/pkgrep" --target "sysroot:$W/fixtures/nodes/cx7-ndr-ib" \
			"$r/usr/share/rdmaqual/cases/driver" &&
		RQ_VM_CACHE="$W/vm/cache" "$B" run --report-dir "$dir/pkgrep" --target rxe-vm --vm-topology vm2 \
			-k verbs.rc_send &&
		RQ_VM_CACHE="$W/vm/cache" "$B" run --report-dir "$dir/pkgrep" --target rxe-vm --vm-topology vm4 \
			-k verbs.rc_send
)

step make make
step make-check make check
step make-distcheck make distcheck
step make-deb make deb
step make-rpm make rpm
step package-root pkgroot
step make-demo make demo
step make-demo-cluster make demo-cluster
step make-again make
echo "release-check: all steps passed in $(( $(date +%s) - total0 )) s ($(git rev-parse --short HEAD))"
if [ $keep = 1 ]; then
	echo "release-check: the clone is kept in $W"
else
	rm -rf "$dir"
fi

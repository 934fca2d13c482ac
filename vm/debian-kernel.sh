#!/bin/sh
# SPDX-License-Identifier: MIT
#
# vm/debian-kernel.sh: fetch one Debian kernel for the rxe-vm guest, by
# suite (SUITE: what linux-image-amd64 points to there) or by exact version
# (PACKAGE=VERSION), and unpack it into the cache.  Prints
#
#   RQ_KDIR=DIR   the unpacked tree (DIR/boot/vmlinuz-VER, DIR/lib/modules/VER)
#   RQ_KVER=VER   the kernel release ("6.12.57+deb12-amd64")
#
# and leaves DIR.meta (RQ_KPKG, RQ_KPKGVER, RQ_KORIGIN lines) beside it.
#
# apt runs on a private state under CACHE/apt/KEY: its own sources.list
# (the host's Debian mirror, or $RQ_DEBIAN_MIRROR), lists, archives and an
# empty dpkg status, all passed as -o options.  The host's apt sources,
# lists and dpkg database are never read or written, and nothing is
# installed: the .deb is only unpacked with dpkg -x.
#
# A tree is keyed by package and exact version and complete once DIR.meta
# exists (written last).  When the mirror does not answer, a cached tree
# for the same spec is used and RQ_KORIGIN says so.
#
# usage: vm/debian-kernel.sh --cache DIR SUITE | PACKAGE=VERSION
set -eu
# modprobe and depmod live in /usr/sbin, which a user's PATH lacks on Debian.
PATH=$PATH:/usr/sbin:/sbin

cache=
while [ $# -gt 1 ]; do
	case $1 in
	--cache) cache=$2; shift 2 ;;
	*) break ;;
	esac
done
{ [ $# -eq 1 ] && [ -n "$cache" ]; } || { echo "usage: debian-kernel.sh --cache DIR SUITE|PACKAGE=VERSION" >&2; exit 2; }
spec=$1
die() { echo "debian-kernel.sh: $*" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=vm/cache.sh
. "$here/cache.sh"
# Checked and locked (by kernel.sh, when it runs this one).
cache_open "$cache"

# The spec is a file-name component below: letters, digits and . + ~ - = : only.
case $spec in
*[!A-Za-z0-9.+~:=_-]* | "" | -*) die "bad kernel spec \"debian:$spec\": expected debian:SUITE or debian:PACKAGE=VERSION" ;;
esac

# The host's Debian mirror, so a machine behind a local mirror keeps using it.
host_mirror() {
	{
		sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | tr ' ' '\n'
		sed -n 's/^deb *\(\[[^]]*\] *\)\{0,1\}\([^ ]*\) .*/\2/p' \
			/etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null
	} | grep -v -- '-security' | grep '/debian/*$' | head -n1 | sed 's|/*$||'
}
mirror=${RQ_DEBIAN_MIRROR:-$(host_mirror)}
mirror=${mirror:-http://deb.debian.org/debian}
security=${RQ_DEBIAN_SECURITY_MIRROR:-${mirror%/debian}/debian-security}
# shellcheck source=/dev/null # the host's
codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
codename=${codename:-bookworm}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || die "$keyring missing (install debian-archive-keyring)"

case $spec in
*=*)
	pkg=${spec%%=*} want=${spec#*=}
	{ [ -n "$pkg" ] && [ -n "$want" ]; } || die "debian:$spec: expected debian:PACKAGE=VERSION"
	# An exact version may be in any of this release's suites.
	suites="$codename $codename-updates $codename-security $codename-backports"
	key=$codename-all
	;;
*)
	pkg=linux-image-amd64 want=
	case $spec in
	*-*) suites=$spec ;;
	# A release's kernel is updated through -security and -updates.
	*) suites="$spec $spec-updates $spec-security" ;;
	esac
	key=$spec
	;;
esac

deb=$cache/debian
st=$cache/apt/$key
mkdir -p "$st/lists/partial" "$st/archives/partial" "$deb"
: >"$st/status"
{
	for s in $suites; do
		case $s in
		*-security) echo "deb [signed-by=$keyring] $security $s main" ;;
		*) echo "deb [signed-by=$keyring] $mirror $s main" ;;
		esac
	done
} >"$st/sources.list.new"
mv -f "$st/sources.list.new" "$st/sources.list"
APT="-o Dir::Etc::SourceList=$st/sources.list -o Dir::Etc::SourceParts=/nonexistent
 -o Dir::Etc::Preferences=/nonexistent -o Dir::Etc::PreferencesParts=/nonexistent
 -o Dir::State=$st -o Dir::State::Lists=$st/lists -o Dir::State::status=$st/status
 -o Dir::Cache=$st -o Dir::Cache::archives=$st/archives
 -o Dir::Cache::pkgcache=$st/pkgcache.bin -o Dir::Cache::srcpkgcache=
 -o Acquire::GzipIndexes=true -o Acquire::Languages=none
 -o APT::Sandbox::User=root -o Acquire::Retries=0 -o Acquire::http::Timeout=20
 -o Debug::NoLocking=1"

err=$(mktemp "$st/err.XXXXXX")
trap 'rm -f "$err"' EXIT

# The lists are used as they are when the last update, for exactly these
# sources, succeeded less than an hour ago (a warm qualify run does not pay
# apt-get update's parsing twice); RQ_APT_REFRESH=1 forces an update.  The
# stamp holds the sources it was made for and goes when an update fails,
# so lists of another mirror are never taken for this one's.
online=1
stamp=$st/updated
if [ -n "$(find "$stamp" -mmin -60 2>/dev/null)" ] && cmp -s "$stamp" "$st/sources.list" &&
   [ "${RQ_APT_REFRESH:-0}" != 1 ] && [ -s "$st/pkgcache.bin" ]; then
	:
else
	rm -f "$stamp"
	# shellcheck disable=SC2086
	if ! apt-get $APT -q update >"$err" 2>&1 || grep -q '^\(W\|E\): Failed to fetch' "$err"; then
		! grep -q 'does not have a Release file' "$err" ||
			die "debian:$spec: $(grep -o "'[^']*' does not have a Release file" "$err" | head -n1) (no such suite at that mirror?)"
		online=0
		echo "debian-kernel.sh: apt-get update failed: $(grep '^[WE]:' "$err" | grep -v unsandboxed | head -n1)" >&2
	else
		cp "$st/sources.list" "$stamp"
	fi
fi

# Offline: the newest cached tree fetched for this spec.
use_cached() {
	why=$1
	m=$(grep -lx "RQ_KSPEC=$spec" "$deb"/*.meta 2>/dev/null | sort -V | tail -n1) || true
	[ -n "$m" ] || die "debian:$spec: $why, and $deb holds no kernel fetched for it (run once online, or pass --kernel PATH --modules DIR)"
	dir=${m%.meta}
	echo "debian-kernel.sh: $why; using the cached $(sed -n 's/^RQ_KPKG=//p' "$m") $(sed -n 's/^RQ_KPKGVER=//p' "$m")" >&2
	sed -i "s/^RQ_KCACHE=.*/RQ_KCACHE=offline/" "$m"
	echo "RQ_KDIR=$dir"
	echo "RQ_KVER=$(sed -n 's/^RQ_KREL=//p' "$m")"
	exit 0
}

# shellcheck disable=SC2086
policy() { apt-cache $APT policy "$1" 2>/dev/null; }
# shellcheck disable=SC2086
show() { apt-cache $APT show "$1" 2>/dev/null; }

if [ -z "$want" ]; then
	want=$(policy "$pkg" | sed -n 's/^ *Candidate: //p')
	if [ -z "$want" ] || [ "$want" = "(none)" ]; then
		[ $online = 1 ] || use_cached "no mirror answered ($mirror)"
		die "debian:$spec: no $pkg in $(echo "$suites" | sed 's/ /, /g') at $mirror"
	fi
fi
# Does PKG=VERSION exist?  (apt-cache show exits 0 on no match with a note.)
if ! show "$pkg=$want" | grep -q '^Package:'; then
	[ $online = 1 ] || use_cached "no mirror answered ($mirror)"
	have=$(policy "$pkg" | awk '/Version table:/ { t = 1; next } t && /^ {5}[^ ]/ { print $NF == "" ? $1 : ($1 == "***" ? $2 : $1) }' | tr '\n' ' ')
	die "debian:$spec: no package $pkg version $want in $(echo "$suites" | sed 's/ /, /g') at $mirror${have:+ (it has: $have)}"
fi
# The metapackage linux-image-amd64 points to the real image package.
case $pkg in
linux-image-[0-9]*) ;;
*)
	real=$(show "$pkg=$want" | sed -n 's/^Depends: //p' | head -n1 | tr ',' '\n' |
		sed -n 's/^ *\(linux-image-[0-9][^ ]*\).*/\1/p' | head -n1)
	[ -n "$real" ] || die "debian:$spec: $pkg $want depends on no linux-image-VERSION package"
	pkg=$real
	want=$(policy "$pkg" | sed -n 's/^ *Candidate: //p')
	{ [ -n "$want" ] && [ "$want" != "(none)" ]; } || die "debian:$spec: $pkg is not available from $mirror"
	;;
esac
origin=$(policy "$pkg" | awk -v v="$want" '
	$1 == v || ($1 == "***" && $2 == v) { getline; print $2, $3; exit }')
rel=${pkg#linux-image-}
rel=${rel%-unsigned}
dir=$deb/$(echo "${pkg}_$want" | tr ':~' '__')

# A tree whose vmlinuz no longer matches the sha256 recorded when it was
# unpacked (or that has none: an older rdmaqual's) is fetched again.
if [ -e "$dir.meta" ] && ! cache_verify "$dir/boot/vmlinuz-$rel" "$dir.meta" RQ_KSHA256 2>"$err"; then
	echo "debian-kernel.sh: $(cat "$err"): fetching it again" >&2
	rm -f "$dir.meta"
fi
if [ ! -e "$dir.meta" ]; then
	echo "debian-kernel.sh: fetching $pkg $want from $origin" >&2
	dl=$(mktemp -d "$st/archives/dl.XXXXXX")
	# shellcheck disable=SC2086
	(cd "$dl" && apt-get $APT -q download "$pkg=$want") >"$err" 2>&1 ||
		{ rm -rf "$dl"; die "apt-get download $pkg=$want failed: $(grep '^E:' "$err" | head -n1)"; }
	rm -rf "$dir"
	dpkg -x "$dl"/*.deb "$dir" || { rm -rf "$dl" "$dir"; die "dpkg -x of $pkg $want failed"; }
	rm -rf "$dl"
	[ -r "$dir/boot/vmlinuz-$rel" ] || { rm -rf "$dir"; die "$pkg $want holds no boot/vmlinuz-$rel"; }
	find "$dir/lib/modules/$rel" -name 'rdma_rxe.ko*' | grep -q . ||
		{ rm -rf "$dir"; die "$pkg $want has no rdma_rxe module (soft-RoCE is needed)"; }
	depmod -b "$dir" "$rel"
	{
		echo "RQ_KSHA256=$(cache_sum "$dir/boot/vmlinuz-$rel")"
		echo "RQ_KSPEC=$spec"
		echo "RQ_KREL=$rel"
		echo "RQ_KPKG=$pkg"
		echo "RQ_KPKGVER=$want"
		echo "RQ_KORIGIN=$origin"
		echo "RQ_KCACHE=fetched"
	} >"$dir.meta.tmp"
	mv -f "$dir.meta.tmp" "$dir.meta"
else
	# Resolved from lists an earlier update left: say that no mirror answered.
	[ $online = 1 ] && how=cached || how=offline
	sed -i "s/^RQ_KCACHE=.*/RQ_KCACHE=$how/" "$dir.meta"
	# The same tree can be reached by another spec (bookworm and PKG=VER).
	grep -qx "RQ_KSPEC=$spec" "$dir.meta" || echo "RQ_KSPEC=$spec" >>"$dir.meta"
fi
echo "RQ_KDIR=$dir"
echo "RQ_KVER=$rel"

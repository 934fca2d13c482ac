#!/bin/sh
# SPDX-License-Identifier: MIT
#
# vm/kernel.sh: find the guest kernel for the rxe-vm target and print where
# it is, as KEY=VALUE lines on stdout (read by src/vm/vm_image.c):
#
#   RQ_KSRC=host|debian|user   where the kernel came from
#   RQ_KVER=6.1.0-57-amd64     its release
#   RQ_KIMAGE=PATH             what to give -kernel (PVH vmlinux when we
#                              could extract one, else the bzImage)
#   RQ_KPVH=1|0                whether RQ_KIMAGE is a PVH ELF (microvm boots it
#                              without the bzImage decompressing itself)
#   RQ_MODROOT=DIR             a root with lib/modules/RQ_KVER (for modprobe -d)
#   RQ_KPKG=NAME RQ_KPKGVER=V  the Debian package and its exact version (debian)
#   RQ_KORIGIN=TEXT            where that package came from ("URI SUITE/main",
#                              or "cache (offline: ...)" when no mirror answered)
#
# Order: --kernel/--modules when given; else the host's own kernel when
# /boot/vmlinuz-$(uname -r) and its /lib/modules carry rdma_rxe; else the
# kernel Debian's linux-image-amd64 points to, fetched with apt-get download
# and unpacked with dpkg -x into the cache (never installed on the host).
# When no mirror answers, the newest kernel already in the cache is used, so
# a pre-seeded cache works offline.
#
# --spec debian:SUITE or debian:PACKAGE=VERSION asks for one Debian kernel
# instead (vm/debian-kernel.sh resolves it through a private apt state).
#
# usage: vm/kernel.sh [--cache DIR] [--kernel PATH --modules DIR] [--no-host]
#                     [--spec debian:SUITE|debian:PACKAGE=VERSION]
set -eu
# modprobe and depmod live in /usr/sbin, which a user's PATH lacks on Debian.
PATH=$PATH:/usr/sbin:/sbin

here=$(cd "$(dirname "$0")" && pwd)
cache=${RQ_VM_CACHE:-$here/cache}
kernel=
modules=
try_host=1
spec=

while [ $# -gt 0 ]; do
	case $1 in
	--cache) cache=$2; shift 2 ;;
	--kernel) kernel=$2; shift 2 ;;
	--modules) modules=$2; shift 2 ;;
	--no-host) try_host=0; shift ;;
	--spec) spec=$2; shift 2 ;;
	*) echo "kernel.sh: unknown option: $1" >&2; exit 2 ;;
	esac
done

die() { echo "kernel.sh: $*" >&2; exit 1; }
# shellcheck source=vm/cache.sh
. "$here/cache.sh"
# Checked (ours, written by no one else) and locked: one builder at a time
# per cache (concurrent runs, other checkouts sharing it).
cache_open "$cache"

# Extract the ELF vmlinux from a bzImage: Debian compresses it with XZ (6.1)
# or zstd (6.12); the stream starts at the first FD 37 7A 58 5A 00 or
# 28 B5 2F FD.  Cached next to the image by the image's size+mtime; prints
# the vmlinux path, or nothing when the image holds no such stream or the
# result is not a PVH-capable ELF.
extract_pvh() {
	img=$1
	key=$(stat -L -c '%s-%Y' "$img")
	out="$cache/vmlinux/$(basename "$img")-$key"
	# Booted as it is: reused only with the sha256 recorded at extraction.
	if [ -e "$out" ] || [ -L "$out" ]; then
		if cache_verify "$out" 2>"$cache/vmlinux/why.$$"; then
			rm -f "$cache/vmlinux/why.$$"
			echo "$out"
			return 0
		fi
		echo "kernel.sh: $(cat "$cache/vmlinux/why.$$"): extracting it again" >&2
		rm -f "$cache/vmlinux/why.$$" "$out" "$out.meta"
	fi
	mkdir -p "$cache/vmlinux"
	tmp="$out.tmp.$$"
	off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$img" 2>/dev/null | head -n1 | cut -d: -f1) || true
	if [ -n "$off" ]; then
		# --single-stream: the bzImage carries trailing data after the stream.
		tail -c +"$((off + 1))" "$img" | xz -dc --single-stream >"$tmp" 2>/dev/null || rm -f "$tmp"
	else
		off=$(LC_ALL=C grep -obUaP '\x28\xb5\x2f\xfd' "$img" 2>/dev/null | head -n1 | cut -d: -f1) || true
		[ -n "$off" ] || return 0
		# zstd has no --single-stream: it writes the whole frame, then
		# complains about the trailing data (exit 1).  The ELF check below
		# decides whether what came out is usable.
		tail -c +"$((off + 1))" "$img" | zstd -qdc >"$tmp" 2>/dev/null || true
	fi
	[ -s "$tmp" ] || { rm -f "$tmp"; return 0; }
	# The PVH entry is a "Xen" ELF note (XEN_ELFNOTE_PHYS32_ENTRY); without it
	# QEMU refuses an uncompressed kernel.
	if ! readelf -n "$tmp" 2>/dev/null | grep -q 'Xen.*(0x00000012)'; then
		rm -f "$tmp"
		return 0
	fi
	mv -f "$tmp" "$out"
	cache_record "$out"
	echo "$out"
}

# Give modprobe a root: ROOT/lib/modules/VER -> DIR (a symlink in the cache).
modroot_for() {
	dir=$1 ver=$2
	case $dir in
	*/lib/modules/"$ver") echo "${dir%/lib/modules/"$ver"}"; return ;;
	esac
	r="$cache/modroot/$(echo "$dir" | sha256sum | cut -c1-16)"
	mkdir -p "$r/lib/modules"
	ln -sfn "$dir" "$r/lib/modules/$ver"
	echo "$r"
}

has_rxe() {
	find "$1" -name 'rdma_rxe.ko*' 2>/dev/null | grep -q .
}

emit() {
	src=$1 ver=$2 img=$3 moddir=$4
	[ -r "$img" ] || die "kernel image not readable: $img"
	# A cached Debian kernel is booted (or its vmlinux extracted) only with
	# the sha256 recorded when it was unpacked.
	if [ "$src" = debian ] && [ "${kverified:-0}" != 1 ]; then
		cache_verify "$img" "$meta" RQ_KSHA256 2>"$cache/why.$$" ||
			{ why=$(cat "$cache/why.$$"); rm -f "$cache/why.$$"; die "$why: refusing to boot it (remove $(dirname "$(dirname "$img")") to fetch it again)"; }
		rm -f "$cache/why.$$"
	fi
	[ -d "$moddir" ] || die "modules directory missing: $moddir"
	[ -e "$moddir/modules.dep" ] || die "no modules.dep in $moddir (run depmod)"
	pvh=$(extract_pvh "$img")
	echo "RQ_KSRC=$src"
	echo "RQ_KVER=$ver"
	if [ -n "$pvh" ]; then
		echo "RQ_KIMAGE=$pvh"
		echo "RQ_KPVH=1"
	else
		echo "RQ_KIMAGE=$img"
		echo "RQ_KPVH=0"
	fi
	echo "RQ_MODROOT=$(modroot_for "$moddir" "$ver")"
	[ -z "${meta:-}" ] || [ ! -r "$meta" ] || grep -v '^RQ_KSHA256=' "$meta" || true
	[ -z "${kcache:-}" ] || echo "RQ_KCACHE=$kcache"
	exit 0
}

# 1. explicit
if [ -n "$kernel$modules" ]; then
	{ [ -n "$kernel" ] && [ -n "$modules" ]; } || die "--kernel and --modules go together"
	modules=$(cd "$modules" && pwd)
	kernel=$(cd "$(dirname "$kernel")" && pwd)/$(basename "$kernel")
	has_rxe "$modules" || die "no rdma_rxe module under $modules"
	emit user "$(basename "$modules")" "$kernel" "$modules"
fi

# 1b. one Debian kernel by suite or exact version
if [ -n "$spec" ]; then
	case $spec in
	debian:?*) ;;
	*) die "kernel spec \"$spec\": expected debian:SUITE or debian:PACKAGE=VERSION (or a path with --modules)" ;;
	esac
	out=$("$here/debian-kernel.sh" --cache "$cache" "${spec#debian:}") || exit 1
	dir=$(echo "$out" | sed -n 's/^RQ_KDIR=//p')
	ver=$(echo "$out" | sed -n 's/^RQ_KVER=//p')
	{ [ -n "$dir" ] && [ -n "$ver" ]; } || die "debian-kernel.sh gave no kernel for $spec"
	meta="$dir.meta"
	emit debian "$ver" "$dir/boot/vmlinuz-$ver" "$dir/lib/modules/$ver"
fi

# 2. the host's own kernel
hv=$(uname -r)
if [ "$try_host" = 1 ] && [ -r "/boot/vmlinuz-$hv" ] && [ -e "/lib/modules/$hv/modules.dep" ] &&
   has_rxe "/lib/modules/$hv"; then
	# The package that installed it, when dpkg knows one.
	hp=$(dpkg-query -S "/boot/vmlinuz-$hv" 2>/dev/null | head -n1 | cut -d: -f1) || true
	if [ -n "$hp" ]; then
		meta="$cache/host-kernel.meta"
		{
			echo "RQ_KPKG=$hp"
			echo "RQ_KPKGVER=$(dpkg-query -W -f='${Version}' "$hp" 2>/dev/null)"
			echo "RQ_KORIGIN=installed on this host"
		} >"$meta"
	fi
	emit host "$hv" "/boot/vmlinuz-$hv" "/lib/modules/$hv"
fi

# 3. Debian's current kernel, cached.  An unpacked tree is complete once its
# .ok stamp exists (written last), so an interrupted unpack is redone.
deb="$cache/debian"
mkdir -p "$deb"
ver=
# Resolving linux-image-amd64 costs apt-cache ~0.5 s: keep the answer until
# the package lists change (apt-get update touches them).
stamp=$(stat -c '%Y' /var/lib/apt/lists /var/cache/apt/pkgcache.bin 2>/dev/null | tr '\n' '-')
pkg=
if [ -n "$stamp" ] && [ -r "$deb/resolved" ] && [ "$(cut -d' ' -f1 "$deb/resolved")" = "$stamp" ]; then
	pkg=$(cut -d' ' -f2 "$deb/resolved")
fi
if [ -z "$pkg" ]; then
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n1) || true
	[ -n "$pkg" ] && [ -n "$stamp" ] && echo "$stamp $pkg" >"$deb/resolved"
fi
if [ -n "$pkg" ]; then
	ver=${pkg#linux-image-}
	# A tree whose vmlinuz no longer matches its recorded sha256 (or that
	# has none: unpacked by an older rdmaqual) is fetched again.
	if [ -e "$deb/$ver.ok" ]; then
		if cache_verify "$deb/$ver/boot/vmlinuz-$ver" "$deb/$ver.meta" RQ_KSHA256 2>"$deb/why.$$"; then
			kverified=1
		else
			echo "kernel.sh: $(cat "$deb/why.$$"): fetching it again" >&2
			rm -f "$deb/$ver.ok"
		fi
		rm -f "$deb/why.$$"
	fi
	if [ ! -e "$deb/$ver.ok" ]; then
		dl="$deb/dl.$$"
		new="$deb/new.$$"
		rm -rf "$dl" "$new"
		mkdir -p "$dl"
		echo "kernel.sh: fetching $pkg" >&2
		# Unpacked beside the old tree and swapped in when complete, so a
		# tree is never half there.
		if (cd "$dl" && apt-get download "$pkg" >&2 2>"$dl.err") &&
		   dpkg -x "$dl"/*.deb "$new" && depmod -b "$new" "$ver"; then
			rm -rf "${deb:?}/$ver"
			mv "$new" "$deb/$ver"
			{
				echo "RQ_KSHA256=$(cache_sum "$deb/$ver/boot/vmlinuz-$ver")"
				echo "RQ_KPKG=$pkg"
				echo "RQ_KPKGVER=$(dpkg-deb -f "$dl"/*.deb Version)"
				cand=$(apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: //p')
				echo "RQ_KORIGIN=$(apt-cache policy "$pkg" 2>/dev/null | awk -v v="$cand" '
					$1 == v || ($1 == "***" && $2 == v) { getline; print $2, $3; exit }')"
			} >"$deb/$ver.meta"
			touch "$deb/$ver.ok"
			kcache=fetched
			kverified=1
		else
			echo "kernel.sh: apt-get download $pkg failed: $(tail -n1 "$dl.err" 2>/dev/null)" >&2
			ver=
		fi
		rm -rf "$dl" "$dl.err" "$new"
	fi
fi
if [ -z "$ver" ]; then
	# Offline: the newest complete tree in the cache.
	ok=$(for f in "$deb"/*.ok; do [ -e "$f" ] && basename "$f" .ok; done | sort -V | tail -n1)
	[ -n "$ok" ] || die "no guest kernel: no mirror answered and $deb holds none (pre-seed it, or pass --kernel/--modules)"
	ver=$ok
	echo "kernel.sh: using cached $ver" >&2
	kcache=offline
fi
meta="$deb/$ver.meta"
kcache=${kcache:-cached}
emit debian "$ver" "$deb/$ver/boot/vmlinuz-$ver" "$deb/$ver/lib/modules/$ver"

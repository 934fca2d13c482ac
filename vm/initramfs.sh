#!/bin/sh
# SPDX-License-Identifier: MIT
#
# vm/initramfs.sh: build the rxe-vm guest's initramfs and print
# RQ_INITRD=PATH.  Contents: busybox-static, vm/init as /init, and the
# modules that `modprobe -a --show-depends` lists for the virtio devices,
# 9p, rdma_rxe, rdma_ucm and ib_umad, plus crc32_generic (rxe needs it and nothing
# pulls it in: without it creating rxe0 fails with ENOENT) and virtio_rng.  Nothing
# autoloads under busybox, so /init loads them in this order.
#
# The archive is named by a hash of every input (this script, vm/init,
# busybox, the resolved module files), so it is rebuilt only when one of
# them changes.  A requested module that resolves to nothing is an error.
#
# usage: vm/initramfs.sh --modroot ROOT --kver VER [--cache DIR]
set -eu
# modprobe and depmod live in /usr/sbin, which a user's PATH lacks on Debian.
PATH=$PATH:/usr/sbin:/sbin

here=$(cd "$(dirname "$0")" && pwd)
cache=${RQ_VM_CACHE:-$here/cache}
modroot=
kver=
busybox=${RQ_BUSYBOX:-/bin/busybox}
# virtio_rng: under KVM the guest CPU model has no RDRAND, and without an
# entropy source the first /dev/urandom read blocks about a second.
# ib_umad: /dev/infiniband/umad*, which MAD tools (ibstat, perfquery,
# libibumad users) open; nothing autoloads it here.
MODULES="virtio_pci virtio_net virtio_console 9pnet_virtio 9p rdma_rxe rdma_ucm crc32_generic virtio_rng ib_umad"
# overlay: when the host has no /lib/modules to mount the guest's module
# tree on (a container), the init overlays /usr/lib to make one.  Optional:
# a kernel without it still boots, without that.
OPTIONAL="overlay"
APPLETS="sh mount insmod ip mkdir chroot echo sleep cat poweroff reboot mknod ln tr"

while [ $# -gt 0 ]; do
	case $1 in
	--cache) cache=$2; shift 2 ;;
	--modroot) modroot=$2; shift 2 ;;
	--kver) kver=$2; shift 2 ;;
	*) echo "initramfs.sh: unknown option: $1" >&2; exit 2 ;;
	esac
done
die() { echo "initramfs.sh: $*" >&2; exit 1; }
{ [ -n "$modroot" ] && [ -n "$kver" ]; } || die "--modroot and --kver are required"
[ -x "$busybox" ] || die "busybox not found at $busybox (install busybox-static)"
! command -v file >/dev/null || ! file -L "$busybox" | grep -q 'dynamically linked' ||
	die "$busybox is dynamically linked: the initramfs needs busybox-static"
# shellcheck source=vm/cache.sh
. "$here/cache.sh"
# Checked (ours, written by no one else) and locked: one builder at a time
# per cache (concurrent runs, other checkouts sharing it).
cache_open "$cache"

# The guests' scratch disk: an empty ext4 of 1 GiB, sparse, made once per
# cache.  Each guest attaches it with snapshot=on, so its writes go to a
# QEMU temporary and are thrown away with it; the image itself is never
# written after this.  Without mke2fs the guests have none (said so).
scratch="$cache/scratch-ext4-1G.img"
if [ ! -f "$scratch" ] || [ -L "$scratch" ]; then
	rm -f "$scratch"
	if command -v mke2fs >/dev/null &&
		mke2fs -q -F -t ext4 -L rq-scratch -E nodiscard "$scratch.tmp.$$" 1G 2>/dev/null &&
		mv -f "$scratch.tmp.$$" "$scratch"; then :; else
		rm -f "$scratch.tmp.$$"
		echo "initramfs.sh: no scratch disk: mke2fs (e2fsprogs) could not make $scratch" >&2
	fi
fi
[ -f "$scratch" ] && echo "RQ_SCRATCH=$scratch"

# Resolve.  -a matters: without it every name after the first is taken as a
# module parameter and silently dropped.
err=$(mktemp)
trap 'rm -f "$err"' EXIT
# shellcheck disable=SC2086
deps=$(modprobe -a -d "$modroot" -S "$kver" --show-depends $MODULES 2>"$err") ||
	die "modprobe --show-depends failed: $(tr '\n' ' ' <"$err")"
for m in $MODULES; do
	# A module resolves to an insmod line of its own file, or is built in.
	mf=$(echo "$m" | tr '-' '_')
	echo "$deps" | sed -n 's/^insmod \([^ ]*\).*/\1/p; s/^builtin \([^ ]*\).*/\1/p' |
		sed 's|.*/||; s/\.ko.*$//' | tr '-' '_' | grep -qx "$mf" ||
		die "module $m resolves to nothing for $kver under $modroot"
done
for m in $OPTIONAL; do
	d=$(modprobe -d "$modroot" -S "$kver" --show-depends "$m" 2>/dev/null) &&
		deps="$deps
$d"
done
# De-duplicated, in first-seen order (dependencies first).
files=$(echo "$deps" | sed -n 's/^insmod \([^ ]*\).*/\1/p' | awk '!seen[$0]++')

# Contents, not paths: the same inputs reached by another path give the same key.
key=$({
	cat "$0" "$here/init" "$busybox" | sha256sum
	echo "$kver $MODULES $OPTIONAL $APPLETS"
	for f in $files; do echo "$(basename "$f") $(stat -L -c '%s %Y' "$f")"; done
} | sha256sum | cut -c1-16)
out="$cache/initramfs-$kver-$key.cpio"
# Booted as it is: reused only with the sha256 recorded when it was built
# (the key names the inputs, not the archive's bytes).
if [ -e "$out" ] || [ -L "$out" ]; then
	if cache_verify "$out" 2>"$err"; then
		echo "RQ_INITRD=$out"
		exit 0
	fi
	echo "initramfs.sh: $(cat "$err"): building it again" >&2
	rm -f "$out" "$out.meta"
fi

stage=$(mktemp -d "$cache/stage.XXXXXX")
trap 'rm -f "$err"; rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib/modules" "$stage/proc" "$stage/sys" "$stage/dev" \
	"$stage/mnt/root" "$stage/tmp"
cp "$busybox" "$stage/bin/busybox"
for a in $APPLETS; do ln -s busybox "$stage/bin/$a"; done
cp "$here/init" "$stage/init"
chmod 755 "$stage/init"
# Drop a module's appended signature: checking it (SHA-512 + RSA) for every
# module costs ~0.15 s of a TCG boot.  Debian does not force signatures; the
# kernel notes the unsigned module (taint E) at a level the console hides.
# Layout at the end: signature, struct module_signature (12 bytes, sig_len a
# big-endian u32 in its last 4), then the 28-byte magic.
MAGIC='~Module signature appended~'
strip_sig() {
	size=$(stat -c %s "$1")
	[ "$size" -gt 40 ] || return 0
	[ "$(tail -c 28 "$1" | head -c 27)" = "$MAGIC" ] || return 0
	siglen=$(od -An -tu1 -j $((size - 32)) -N 4 "$1" |
		awk '{ print (($1 * 256 + $2) * 256 + $3) * 256 + $4 }')
	keep=$((size - 28 - 12 - siglen))
	[ "$keep" -gt 0 ] || return 0
	head -c "$keep" "$1" >"$1.tmp" && mv -f "$1.tmp" "$1"
}
n=0
: >"$stage/lib/modules/order"
for f in $files; do
	n=$((n + 1))
	base=$(basename "$f")
	dst="$stage/lib/modules/$(printf '%02d' $n)-${base%%.ko*}.ko"
	case $f in
	*.ko.xz) xz -dc "$f" >"$dst" ;;
	*.ko.zst) zstd -qdc "$f" >"$dst" ;;
	*.ko.gz) gzip -dc "$f" >"$dst" ;;
	*) cp "$f" "$dst" ;;
	esac
	strip_sig "$dst"
	echo "/lib/modules/$(basename "$dst")" >>"$stage/lib/modules/order"
done

# The archive: the staged tree, then /dev/console written by hand (a device
# node cannot be staged without being root; the kernel opens it for /init's
# stdio).  The kernel unpacks concatenated newc archives in turn.
cpio_entry() { # name mode major minor
	name=$1
	namesize=$((${#name} + 1))
	printf '070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X' \
		0 "$2" 0 0 1 0 0 0 0 "$3" "$4" "$namesize" 0
	printf '%s\0' "$name"
	# header (110) + name padded to 4
	pad=$(((4 - (110 + namesize) % 4) % 4))
	[ $pad -gt 0 ] && head -c $pad /dev/zero
	return 0
}
tmp="$out.tmp.$$"
{
	(cd "$stage" && find . -mindepth 1 | sort | cpio -o -H newc -R 0:0 --quiet)
	cpio_entry dev/console $((0020000 | 0600)) 5 1
	cpio_entry TRAILER!!! 0 0 0
} >"$tmp"
mv -f "$tmp" "$out"
cache_record "$out"
# Older archives of this kernel are stale now; leave recent ones alone, a
# concurrent run (another checkout sharing RQ_VM_CACHE) may be booting one.
find "$cache" -maxdepth 1 \( -name "initramfs-$kver-*.cpio" -o -name "initramfs-$kver-*.cpio.meta" \) \
	! -name "$(basename "$out")" ! -name "$(basename "$out").meta" -mmin +60 -delete 2>/dev/null || true
echo "RQ_INITRD=$out"

#!/bin/sh
# The guest image cache is trusted only when it is ours, and what is booted
# from it only with the sha256 recorded when it was made (nothing here
# boots a guest): a cache dir of another user, or one group/others may
# write, or one under another user's dir, is refused; a planted .lock link
# is not followed; an entry not ours is refused; a tampered cached vmlinuz
# is refused, a tampered PVH vmlinux re-extracted and a tampered initramfs
# rebuilt.  Every cache here is one of this test's own dirs.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

[ "$(id -u)" = 0 ] || skip "planting another user's files needs root"
id nobody >/dev/null 2>&1 || skip "no user nobody to own the planted files"
RQ=${RQ_VM:-./rdmaqual}
T=$(mktemp -d /tmp/rq-it-vmcache.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT

# A kernel and a module tree that kernel.sh accepts as --kernel/--modules
# (it checks that they exist, not that they boot).
K=$T/k/vmlinuz-0.0-fake
M=$T/mods/lib/modules/0.0-fake
mkdir -p "$T/k" "$M/kernel"
echo "not a bzImage" >"$K"
: >"$M/modules.dep"
: >"$M/kernel/rdma_rxe.ko"
kargs="--kernel $K --modules $M"

# 1. Another user's cache dir with a .lock link to a file of ours: refused,
#    and the file is not truncated (it was, by `exec 9>"$cache/.lock"`).
echo keep >"$T/precious"
mkdir "$T/foreign"
ln -s "$T/precious" "$T/foreign/.lock"
chown -h nobody "$T/foreign" "$T/foreign/.lock"
# shellcheck disable=SC2086
vm/kernel.sh --cache "$T/foreign" $kargs >"$T/f.out" 2>"$T/f.err"
expect_eq "kernel.sh refuses a cache dir of another user" 1 $?
expect_grep "and says whose it is" 'not a directory of uid 0 \(directory of uid 65534\)' "$T/f.err"
vm/initramfs.sh --cache "$T/foreign" --modroot "$T/mods" --kver 0.0-fake >/dev/null 2>"$T/fi.err"
expect_eq "initramfs.sh refuses it too" 1 $?
expect_grep "saying why" 'not a directory of uid 0' "$T/fi.err"
expect_eq "the file the planted .lock points to is intact" keep "$(cat "$T/precious")"
# shellcheck disable=SC2086
RQ_VM_CACHE=$T/foreign "$RQ" vm image $kargs >"$T/fc.out" 2>&1
expect_eq "rdmaqual vm image refuses it before running a script" 1 $?
expect_grep "naming the owner" 'owned by uid 65534' "$T/fc.out"

# 2. Ours but writable by group: refused.
mkdir -m 0775 "$T/gw"
chmod 0775 "$T/gw"
# shellcheck disable=SC2086
vm/kernel.sh --cache "$T/gw" $kargs >/dev/null 2>"$T/gw.err"
expect_eq "a group-writable cache dir is refused" 1 $?
expect_grep "naming its mode" 'has mode 775' "$T/gw.err"

# 3. Ours, under another user's dir (who could swap it after the check).
mkdir -p "$T/evil/cache"
chmod 0700 "$T/evil/cache"
chown nobody "$T/evil"
# shellcheck disable=SC2086
RQ_VM_CACHE=$T/evil/cache "$RQ" vm image $kargs >"$T/ev.out" 2>&1
expect_eq "a cache under another user's dir is refused" 1 $?
expect_grep "naming that dir" "lies under $(ere "$T/evil"), owned by uid 65534" "$T/ev.out"

# 4. A cache of ours with a .lock link to a file of ours: the link is not
#    followed (the lock is the directory itself) and the file stays whole.
mkdir -m 0700 "$T/c"
echo keep >"$T/precious2"
ln -s "$T/precious2" "$T/c/.lock"
# shellcheck disable=SC2086
vm/kernel.sh --cache "$T/c" $kargs >"$T/c.out" 2>"$T/c.err"
expect_eq "kernel.sh with a planted .lock link in our cache" 0 $?
expect_eq "the file that link points to is intact" keep "$(cat "$T/precious2")"
expect_grep "the kernel given is used" "^RQ_KIMAGE=$(ere "$K")$" "$T/c.out"

# 5. An entry another user owns in our cache (a .meta not ours): refused.
mkdir -p "$T/c/vmlinux"
echo "RQ_SHA256=0" >"$T/c/vmlinux/planted.meta"
chown nobody "$T/c/vmlinux/planted.meta"
# shellcheck disable=SC2086
vm/kernel.sh --cache "$T/c" $kargs >/dev/null 2>"$T/own.err"
expect_eq "a cache holding another user's .meta is refused" 1 $?
expect_grep "naming it" "holds $(ere "$T/c/vmlinux/planted.meta"), which is not of uid 0" "$T/own.err"
rm -f "$T/c/vmlinux/planted.meta"

# 6. A cached PVH vmlinux is reused only with its recorded sha256.  Plant
#    one where kernel.sh keeps the vmlinux extracted from $K.
pvh=$T/c/vmlinux/$(basename "$K")-$(stat -L -c '%s-%Y' "$K")
echo "a vmlinux" >"$pvh"
echo "RQ_SHA256=$(sha256sum <"$pvh" | cut -d' ' -f1)" >"$pvh.meta"
# shellcheck disable=SC2086
vm/kernel.sh --cache "$T/c" $kargs >"$T/p1.out" 2>"$T/p1.err"
expect_grep "a vmlinux matching its sha256 is reused" "^RQ_KIMAGE=$(ere "$pvh")$" "$T/p1.out"
echo "changed" >>"$pvh"
# shellcheck disable=SC2086
vm/kernel.sh --cache "$T/c" $kargs >"$T/p2.out" 2>"$T/p2.err"
expect_eq "kernel.sh with a tampered vmlinux" 0 $?
expect_grep "the tampered vmlinux is not booted (the bzImage is)" "^RQ_KIMAGE=$(ere "$K")$" "$T/p2.out"
expect_grep "and it says so" 'does not match the sha256 recorded.*extracting it again' "$T/p2.err"
expect_true "the tampered vmlinux is gone" test ! -e "$pvh"

# 7. A cached Debian kernel, offline (apt fails): booted only with the
#    vmlinuz sha256 its .meta recorded at unpack time.
mkdir -p "$T/bin" "$T/d/debian/0.0-fake/boot" "$T/d/debian/0.0-fake/lib/modules"
printf '#!/bin/sh\necho "E: no mirror (test)" >&2\nexit 100\n' >"$T/bin/apt-get"
cp "$T/bin/apt-get" "$T/bin/apt-cache"
chmod +x "$T/bin/apt-get" "$T/bin/apt-cache"
chmod 0700 "$T/d"
cp "$K" "$T/d/debian/0.0-fake/boot/vmlinuz-0.0-fake"
cp -r "$M" "$T/d/debian/0.0-fake/lib/modules/"
touch "$T/d/debian/0.0-fake.ok"
dk=$T/d/debian/0.0-fake/boot/vmlinuz-0.0-fake
printf 'RQ_KSHA256=%s\nRQ_KPKG=linux-image-0.0-fake\nRQ_KPKGVER=0.0-1\n' \
	"$(sha256sum <"$dk" | cut -d' ' -f1)" >"$T/d/debian/0.0-fake.meta"
PATH="$T/bin:$PATH" vm/kernel.sh --no-host --cache "$T/d" >"$T/d1.out" 2>"$T/d1.err"
expect_eq "a cached kernel matching its sha256 is used offline" 0 $?
expect_grep "that kernel" '^RQ_KVER=0.0-fake$' "$T/d1.out"
expect_nogrep "its sha256 is not passed on as a package fact" 'RQ_KSHA256' "$T/d1.out"
echo "tampered" >>"$dk"
PATH="$T/bin:$PATH" vm/kernel.sh --no-host --cache "$T/d" >"$T/d2.out" 2>"$T/d2.err"
expect_eq "a tampered cached vmlinuz is refused" 1 $?
expect_grep "naming the mismatch" 'vmlinuz-0.0-fake does not match the sha256 recorded.*refusing to boot it' "$T/d2.err"
sed -i '/^RQ_KSHA256=/d' "$T/d/debian/0.0-fake.meta"
PATH="$T/bin:$PATH" vm/kernel.sh --no-host --cache "$T/d" >/dev/null 2>"$T/d3.err"
expect_eq "a cached kernel with no recorded sha256 is refused offline" 1 $?
expect_grep "saying so" 'has no recorded sha256' "$T/d3.err"

# 7b. The same for a kernel fetched by spec (debian-kernel.sh, run by
#     kernel.sh under kernel.sh's lock: it must not wait for that lock).
sd=$T/s/debian/linux-image-0.0-fake_1
mkdir -p "$sd/boot" "$sd/lib/modules"
chmod 0700 "$T/s"
cp "$K" "$sd/boot/vmlinuz-0.0-fake"
cp -r "$M" "$sd/lib/modules/"
printf 'RQ_KSHA256=%s\nRQ_KSPEC=bookworm\nRQ_KREL=0.0-fake\nRQ_KPKG=linux-image-0.0-fake\nRQ_KPKGVER=1\nRQ_KCACHE=fetched\n' \
	"$(sha256sum <"$sd/boot/vmlinuz-0.0-fake" | cut -d' ' -f1)" >"$sd.meta"
PATH="$T/bin:$PATH" timeout 60 vm/kernel.sh --cache "$T/s" --spec debian:bookworm >"$T/s1.out" 2>"$T/s1.err"
expect_eq "a cached spec kernel matching its sha256 is used offline (no wait on its own lock)" 0 $?
expect_grep "that kernel" '^RQ_KVER=0.0-fake$' "$T/s1.out"
echo "tampered" >>"$sd/boot/vmlinuz-0.0-fake"
PATH="$T/bin:$PATH" timeout 60 vm/kernel.sh --cache "$T/s" --spec debian:bookworm >/dev/null 2>"$T/s2.err"
expect_eq "a tampered spec kernel is refused offline" 1 $?
expect_grep "naming the mismatch" 'vmlinuz-0.0-fake does not match the sha256 recorded.*refusing to boot it' "$T/s2.err"

# 8. The initramfs: built with a recorded sha256, reused while it matches,
#    rebuilt when tampered with.  It needs a real module tree: the one a
#    default `rdmaqual vm image` unpacked (read, not written).
tree=
for dep in "${RQ_VM_CACHE:-vm/cache}"/debian/*/lib/modules/*/modules.dep; do
	[ -e "$dep" ] && tree=$dep
done
if [ -z "$tree" ]; then
	"$RQ" vm image >/dev/null 2>&1
	for dep in "${RQ_VM_CACHE:-vm/cache}"/debian/*/lib/modules/*/modules.dep; do
		[ -e "$dep" ] && tree=$dep
	done
fi
expect_true "a cached guest module tree to build from ($tree)" test -n "$tree"
kver=$(basename "$(dirname "$tree")")
root=${tree%/lib/modules/*}
vm/initramfs.sh --cache "$T/i" --modroot "$root" --kver "$kver" >"$T/i1.out" 2>"$T/i1.err"
expect_eq "initramfs built" 0 $?
initrd=$(sed -n 's/^RQ_INITRD=//p' "$T/i1.out")
expect_true "in our cache" test -s "$initrd"
expect_eq "its .meta records its sha256" "RQ_SHA256=$(sha256sum <"$initrd" | cut -d' ' -f1)" \
	"$(cat "$initrd.meta" 2>/dev/null)"
expect_eq "the cache it made is private" 700 "$(stat -c %a "$T/i")"
before=$(stat -c %Y "$initrd")
sleep 1
vm/initramfs.sh --cache "$T/i" --modroot "$root" --kver "$kver" >"$T/i2.out" 2>&1
expect_eq "reused while it matches" "$before" "$(stat -c %Y "$initrd")"
printf 'X' | dd of="$initrd" bs=1 seek=200 conv=notrunc 2>/dev/null
bad=$(sha256sum <"$initrd" | cut -d' ' -f1)
vm/initramfs.sh --cache "$T/i" --modroot "$root" --kver "$kver" >"$T/i3.out" 2>"$T/i3.err"
expect_eq "initramfs.sh with a tampered archive" 0 $?
expect_grep "the mismatch is found (without booting)" 'does not match the sha256 recorded.*building it again' "$T/i3.err"
now=$(sha256sum <"$initrd" | cut -d' ' -f1)
expect_true "and the archive is rebuilt ($bad -> $now)" test "$now" != "$bad"
expect_eq "with its new sha256 recorded" "RQ_SHA256=$now" "$(cat "$initrd.meta")"
chown nobody "$initrd.meta"
vm/initramfs.sh --cache "$T/i" --modroot "$root" --kver "$kver" >/dev/null 2>"$T/i4.err"
expect_eq "an initramfs .meta not ours is refused" 1 $?
expect_grep "naming it" "holds $(ere "$initrd.meta"), which is not of uid 0" "$T/i4.err"
finish

#!/bin/sh
# The rxe-vm guest image without booting: an explicit --kernel/--modules is
# used as given, a pre-seeded cache works with no mirror reachable, a
# module that resolves to nothing stops the initramfs build, and the
# initramfs is rebuilt only when an input changes.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

RQ=${RQ_VM:-./rdmaqual}
T=$(mktemp -d /tmp/rq-it-vmimg.XXXXXX)
trap 'rm -rf "$T"' EXIT

# The default image (fetches the kernel on a cold cache).
"$RQ" vm image >"$T/img.out" 2>&1
expect_eq "vm image exit status" 0 $?
sed 's/^/    | /' "$T/img.out"
kver=$(sed -n 's/^kernel: *\([^ ]*\) .*/\1/p' "$T/img.out")
modroot=$(sed -n 's/^modules: *\(.*\)\/lib\/modules\/.*/\1/p' "$T/img.out")
initrd=$(sed -n 's/^initramfs: *//p' "$T/img.out")
expect_true "a kernel version ($kver)" [ -n "$kver" ]
expect_true "the initramfs exists" [ -s "$initrd" ]
expect_grep "a PVH vmlinux was extracted (microvm boots it directly)" 'PVH vmlinux' "$T/img.out"

# Rebuilt only when inputs change: the same call gives the same file, untouched.
before=$(stat -c %Y "$initrd")
sleep 1
"$RQ" vm image >"$T/img2.out" 2>&1
expect_eq "same initramfs on a second call" "$initrd" "$(sed -n 's/^initramfs: *//p' "$T/img2.out")"
expect_eq "not rebuilt" "$before" "$(stat -c %Y "$initrd")"
expect_true "initramfs lists the modules in order, crc32_generic included" \
	sh -c "cpio -i --to-stdout lib/modules/order <'$initrd' 2>/dev/null | grep -q crc32_generic"
expect_true "dependencies come before their users (ib_core before rdma_rxe)" \
	sh -c "cpio -i --to-stdout lib/modules/order <'$initrd' 2>/dev/null | grep -n 'ib_core\|rdma_rxe' | head -n1 | grep -q ib_core"

# --kernel/--modules: used as given, reported as such.
kimg=
for k in "$modroot"/boot/vmlinuz-*; do [ -e "$k" ] && kimg=$k && break; done
if [ -n "$kimg" ]; then
	"$RQ" vm image --kernel "$kimg" --modules "$modroot/lib/modules/$kver" >"$T/user.out" 2>&1
	expect_eq "vm image with --kernel/--modules" 0 $?
	expect_grep "source is user" "^kernel: *$kver \(user\)" "$T/user.out"
fi
"$RQ" vm image --kernel /nonexistent --modules "$T" >"$T/bad.out" 2>&1
expect_eq "a modules dir without rdma_rxe is refused" 1 $?
expect_grep "and says why" 'no rdma_rxe module under' "$T/bad.out"

# Offline: apt-get and apt-cache fail, the cached kernel is used.
mkdir -p "$T/bin"
printf '#!/bin/sh\necho "E: no mirror (test)" >&2\nexit 100\n' >"$T/bin/apt-get"
cp "$T/bin/apt-get" "$T/bin/apt-cache"
chmod +x "$T/bin/apt-get" "$T/bin/apt-cache"
# (forget the remembered resolution, as a cache copied from another machine would)
rm -f "$(dirname "$modroot")/resolved"
PATH="$T/bin:$PATH" vm/kernel.sh --no-host >"$T/off.out" 2>"$T/off.err"
expect_eq "kernel.sh offline exit status" 0 $?
expect_grep "offline: the cached kernel" "^RQ_KVER=$kver$" "$T/off.out"
expect_grep "offline: says so" 'using cached' "$T/off.err"
# ...and an empty cache offline is a clear error.
PATH="$T/bin:$PATH" vm/kernel.sh --no-host --cache "$T/empty-cache" >/dev/null 2>"$T/off2.err"
expect_eq "empty cache offline fails" 1 $?
expect_grep "and says how to fix it" 'no mirror answered.*pre-seed' "$T/off2.err"

# A module that resolves to nothing stops the build.
mkdir -p "$T/mods/lib/modules/0.0-test/kernel"
cp "$modroot/lib/modules/$kver/modules.builtin" "$T/mods/lib/modules/0.0-test/" 2>/dev/null
depmod -b "$T/mods" 0.0-test 2>/dev/null
vm/initramfs.sh --cache "$T/c" --modroot "$T/mods" --kver 0.0-test >/dev/null 2>"$T/mod.err"
expect_eq "initramfs with unresolvable modules fails" 1 $?
expect_grep "naming the module" 'virtio_net|rdma_rxe|modprobe' "$T/mod.err"
expect_true "and leaves no archive" sh -c "! ls '$T/c'/initramfs-0.0-test-*.cpio 2>/dev/null | grep -q ."
finish

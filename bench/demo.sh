#!/bin/sh
# The warm `make demo` (its suite, run a second time so the kernel,
# initramfs and guest caches are built) against a plain boot of the same
# guest kernel to its init, measured in the same run, so the ratio is the
# figure to judge (printed, not judged):
#   plain boot: qemu-system-x86_64 with the machine, kernel and initramfs
#     the rxe-vm target uses, told to run an init that does not exist, so
#     the kernel panics where it would start one and -no-reboot ends QEMU:
#     QEMU's start to the kernel's hand-over to init;
#   demo: the wall time of `rdmaqual run` over make demo's suite, and its
#     --profile (boot, per-case placement, runs, teardown, by target).
# Goal (issue 34): the warm demo within 30 s on a quiet 2-core TCG host.
# Env: RQ (./rdmaqual), REPS (3 plain boots; their median is used),
# RQ_VM_SNAPSHOT (1, as make demo: guests from snapshots; 0 boots them).
set -eu
cd "$(dirname "$0")/.." || exit 1
RQ=${RQ:-./rdmaqual}
REPS=${REPS:-3}
[ -x "$RQ" ] || { echo "build rdmaqual first (make)"; exit 1; }
command -v qemu-system-x86_64 >/dev/null || { echo "qemu-system-x86_64 not installed (make deps)"; exit 4; }
T=$(mktemp -d /tmp/rq-bench-demo.XXXXXX)
trap 'rm -rf "$T"' EXIT
export RDMAQUAL_STATE_DIR="$T/state"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

suite() {	# make demo's command line, into report dir $1
	RQ_VM_SNAPSHOT=${RQ_VM_SNAPSHOT-1} "$RQ" run --profile --report-dir "$1" -t '!apps' -t '!mpi' -t '!ulp' -t '!suites' cases/
}

echo "host: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "warming (first run of the suite: kernel, initramfs, caches)..."
suite "$T/warm" >"$T/warm.out" 2>&1 || true
"$RQ" vm image >"$T/image"
img=$(awk '/^image:/ {print $2}' "$T/image")
initrd=$(awk '/^initramfs:/ {print $2}' "$T/image")
if [ ! -r "$img" ] || [ ! -r "$initrd" ]; then
	echo "no guest kernel or initramfs: $(cat "$T/image")"
	exit 1
fi
# The guest's TSC is the host's under TCG; the target tells the kernel its
# rate (calibration on a busy host crawls), and so does this boot.
khz=$(awk -F': *' '/^cpu MHz/ { printf "%d", $2 * 1000; exit }' /proc/cpuinfo)

plain() {
	timeout 120 qemu-system-x86_64 -M microvm,pcie=on,acpi=on,rtc=on -accel tcg -cpu max -m 512 -smp 1 \
		-nodefaults -no-user-config -nographic -no-reboot -kernel "$img" -initrd "$initrd" \
		-append "console=ttyS0 loglevel=5 panic=-1 reboot=t tsc_early_khz=$khz tsc=reliable rdinit=/rq-bench-none root=/dev/rq-bench-none" \
		-serial "file:$T/console" >/dev/null 2>&1 </dev/null || true
}

: >"$T/plain"
i=0
while [ $i -lt "$REPS" ]; do
	a=$(now)
	plain
	b=$(now)
	secs "$a" "$b" >>"$T/plain"
	echo >>"$T/plain"
	i=$((i + 1))
done
grep -q 'Unable to mount root fs' "$T/console" || echo "note: the plain boot's console does not show the kernel at its search for init"
p=$(sort -n "$T/plain" | awk 'NF { v[++n] = $1 } END { print v[int((n + 1) / 2)] }')

a=$(now)
suite "$T/demo" >"$T/demo.out" 2>&1 || true
b=$(now)
d=$(secs "$a" "$b")
echo "plain boot of $(awk '/^kernel:/ {print $2}' "$T/image") to its init (TCG, median of $REPS): $p s"
echo "warm demo (make demo's suite): $d s"
tail -n 1 "$T/demo.out" | grep -q 'reports:' && grep -E '^[0-9]+ rows:' "$T/demo.out" | sed 's/^/  /'
sed -n '/^profile (wall seconds):/,/^[0-9]* rows:/p' "$T/demo.out" | grep -v ' rows:' | sed 's/^/  /'
awk -v d="$d" -v p="$p" 'BEGIN { printf "ratio demo / plain boot: %.1f\n", d / p }'

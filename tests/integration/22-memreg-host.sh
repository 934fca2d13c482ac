#!/bin/sh
# memreg on a host without RDMA devices (this project's CI machines): the
# shipped case and a case without needs both SKIP saying there is no RDMA
# device (needs: [device], and the kind's own device scan), never pass,
# fail or crash; a memlock limit the kind cannot parse is a lint error.
# The measurements themselves run in a guest: 79-memreg-vm.sh.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

RQ=${RQ:-build/san/rdmaqual}
T=$(mktemp -d /tmp/rq-it-memreg.XXXXXX)
trap 'rm -rf "$T"' EXIT
export RDMAQUAL_STATE_DIR="$T/state"

if [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
	skip "this host has RDMA devices: memreg measures them (79-memreg-vm.sh covers the kind)"
fi

cat >"$T/noneeds.yaml" <<'EOT'
cases:
  - name: hmreg.no_needs
    kind: memreg
    summary: no needs, so the kind's own scan decides
    targets: [hca]
    timeout: 30s
    sizes: [4KiB]
EOT
cat >"$T/bad.yaml" <<'EOT'
cases:
  - name: hmreg.bad_memlock
    kind: memreg
    memlock: plenty
  - name: hmreg.bad_size
    kind: memreg
    sizes: [1KiB]
EOT

# --target hca: on this host auto would pick rxe-vm and boot guests
"$RQ" run --target hca --report-dir "$T/rep" cases/verbs/memreg.yaml "$T/noneeds.yaml" >"$T/run.out" 2>&1
rc=$?
sed 's/^/    | /' "$T/run.out"
expect_eq "run exit status (SKIPs only)" 0 $rc
expect_grep "the shipped case SKIPs: no RDMA device" '^SKIP +verbs\.memreg .*no RDMA device' "$T/run.out"
expect_grep "the kind itself SKIPs: no RDMA device on this node" '^SKIP +hmreg\.no_needs .*no RDMA device on this node' "$T/run.out"
expect_nogrep "no row passes, fails or errors" '^(PASS|FAIL|ERROR) ' "$T/run.out"

"$RQ" lint "$T/bad.yaml" >"$T/lint.out" 2>&1
expect_eq "lint of a bad memreg case exits 2" 2 $?
expect_grep "... naming the memlock value" 'memlock: "plenty" is neither a size' "$T/lint.out"
expect_grep "... and the size below 4 KiB" 'sizes: 1KiB is outside 4KiB to max_size' "$T/lint.out"
finish

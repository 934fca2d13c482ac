#!/bin/sh
# Kernel ULPs and a test suite's own results in the guests, on vm2 under
# TCG with one boot for all: the guest kernel's module tree is at
# /lib/modules/$(uname -r) and configfs at /sys/kernel/config; modules:
# loads null_blk (needs: module:null_blk then holds) and the next case
# finds it unloaded; a module the guest kernel lacks SKIPs naming module
# and kernel; python3 -m unittest -v in the guest becomes a row per test
# (a failure FAILs the case, a skip is a skip); the shipped NVMe-oF case
# (cases/ulp) writes 8 MiB over nvme_rdma, reads them back and leaves no
# module loaded; ready_rdma_cm: an rping server (which prints nothing
# before it listens) is found ready by its listening RDMA CM id and the
# pair passes, and a server that never listens FAILs at its ready deadline
# naming the port.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

vm_test_setup ulp
command -v nvme >/dev/null || skip "nvme-cli not installed"

# The test module lives under build/ of this checkout: the guests see it
# over 9p (they cover /tmp with their own tmpfs, so not in $T).
mkdir -p build/tests/ulp
cat >build/tests/ulp/test_guest.py <<'PY'
import os
import unittest


class Guest(unittest.TestCase):
    def test_rxe0(self):
        self.assertTrue(os.path.exists("/sys/class/infiniband/rxe0"))

    def test_broken(self):
        self.assertEqual(os.uname().nodename, "not-this-guest")

    @unittest.skip("no ConnectX in a guest")
    def test_mlx5(self):
        pass
PY
UT=$(pwd)/build/tests/ulp
cat >"$T/ulp.yaml" <<EOT
defaults:
  targets: [rxe-vm]
  timeout: 60s
cases:
  - name: ulp_t.a_modules
    kind: command
    modules: [null_blk]
    needs: [module:null_blk]
    argv: [sh, -c, 'test -e "/lib/modules/\$(uname -r)/modules.dep" && test -b /dev/nullb0 && grep -q " /sys/kernel/config configfs " /proc/mounts && echo guest-facts-ok']
    stdout_contains: guest-facts-ok
  - name: ulp_t.b_unloaded
    kind: command
    argv: [sh, -c, 'test ! -e /sys/module/null_blk && echo unloaded']
    stdout_contains: unloaded
  - name: ulp_t.c_missing
    kind: command
    modules: [rq_no_such_module]
    argv: ["true"]
  - name: ulp_t.d_unittest
    kind: command
    argv: [python3, -m, unittest, -v, test_guest]
    env: [PYTHONPATH=$UT]
    exit: 1
    results: unittest
  - name: ulp_t.e_rdma_cm
    kind: command-pair
    ready_rdma_cm: true
    server: [rping, -s, -a, "{ip}", -p, "{port}", -C, "3"]
    client: [rping, -c, -v, -a, "{peer_ip}", -p, "{port}", -C, "3"]
    parser: rping
  - name: ulp_t.f_never_listens
    kind: command-pair
    timeout: 20s
    ready_rdma_cm: true
    server: [sleep, "60"]
    client: ["true"]
EOT
"$RQ" run --target rxe-vm --report-dir "$T/rep" "$T/ulp.yaml" cases/ulp >"$T/out" 2>&1
rc=$?
R="$T/rep/latest"
expect_eq "the run exits 1 (a unittest failure)" 1 "$rc"
row() { jq -r --arg id "$1" '.results[] | select(.id == $id) | "\(.verdict) \(.reason // "")"' "$R/results.json"; }
expect_eq "module tree, configfs and null_blk in the guest" "PASS " "$(row ulp_t.a_modules)"
expect_eq "null_blk unloaded after its case" "PASS " "$(row ulp_t.b_unloaded)"
kver=$(jq -r '.facts["vm.guest_kernel"] // empty' "$R/results.json")
[ -n "$kver" ] || kver=$(jq -r '[.results[].facts[]? | select(.key == "vm.guest_kernel") | .value][0]' "$R/results.json")
expect_eq "a missing module SKIPs naming module and kernel" \
	"SKIP module rq_no_such_module does not exist for kernel $kver (not in /lib/modules/$kver)" \
	"$(row ulp_t.c_missing)"
expect_eq "unittest: the case FAILs on its failed test" \
	"FAIL 1 of 3 tests failed (1 failures, 0 errors; first: test_guest.Guest.test_broken)" "$(row ulp_t.d_unittest)"
expect_eq "unittest: a passing test is a row" "PASS " "$(row 'ulp_t.d_unittest[test_guest.Guest.test_rxe0]')"
expect_grep "unittest: the failure's message" "^FAIL +ulp_t.d_unittest\[test_guest.Guest.test_broken\].*AssertionError: 'vm0' != 'not-this-guest'" "$T/out"
expect_eq "unittest: a skip is a skip" "SKIP no ConnectX in a guest" "$(row 'ulp_t.d_unittest[test_guest.Guest.test_mlx5]')"
expect_eq "ready_rdma_cm: rping's listening CM id made the server ready" "PASS " "$(row ulp_t.e_rdma_cm)"
expect_grep "ready_rdma_cm: the readiness is logged before the client ran" '^# server ready after [0-9.]+ s' \
	"$R/logs/ulp_t.e_rdma_cm.log"
expect_eq "ready_rdma_cm: a server that never listens FAILs naming the port" "FAIL" \
	"$(row ulp_t.f_never_listens | cut -d' ' -f1)"
expect_grep "ready_rdma_cm: the reason says no listening RDMA CM id" \
	'ulp_t.f_never_listens.*server sleep had no listening RDMA CM id on port [0-9]+ within' "$T/out"
expect_eq "NVMe-oF over RDMA between the guests" "PASS " "$(row ulp.nvmeof_rdma)"
L="$R/logs/ulp.nvmeof_rdma.log"
expect_grep "8 MiB verified over nvme_rdma" "^8 MiB written over NVMe/RDMA, read back and verified" "$L"
expect_grep "the target tore its configfs entries down" "^target removed" "$L"
expect_grep "nvmet unloaded on the server side" "modules: unloaded nvmet \(loaded for this case\)" "$L"
expect_nogrep "no module left loaded" "modules: left loaded" "$L"
finish

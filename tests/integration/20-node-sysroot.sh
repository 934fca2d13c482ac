#!/bin/sh
# The node checks (driver, pcie, mtu, irq-affinity) end to end through the
# CLI on --target sysroot: the synthesized node trees of fixtures/nodes pass
# or fail exactly where their faults are; `rdmaqual capture --root` of a
# tree replays with the same verdicts, redacted or not; every report of a
# synthesized tree says so, and of a capture made here does not; `rdmaqual
# parse` reads ibv_devinfo and /proc/interrupts.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

RQ=${RQ:-build/san/rdmaqual}
T=$(mktemp -d /tmp/rq-it-node.XXXXXX)
trap 'rm -rf "$T"' EXIT
export RDMAQUAL_STATE_DIR="$T/state"
CASES="cases/driver cases/pcie cases/mtu cases/irq"
F=fixtures/nodes

run_on() {	# run_on TREE OUT -> exit status in $rc
	# shellcheck disable=SC2086 # CASES is a list of folders
	"$RQ" run --target "sysroot:$1" --report-dir "$T/rep" $CASES >"$2" 2>&1
	rc=$?
}

for n in cx5-edr-ib cx6-hdr-ib cx6dx-roce-2numa cx7-ndr-ib rxe-vm1 cx7-ndr200-gen4slot cx9-xdr-ib \
	 cx6dx-roce-vfs bf3-host cx6dx-roce-lag cx6-hdr-ib-sd cx7-ndr-ib-stacked; do
	run_on "$F/$n" "$T/$n.out"
	expect_eq "healthy $n: exit 0" 0 $rc
	expect_nogrep "healthy $n: no FAIL or ERROR row" '^(FAIL|ERROR) ' "$T/$n.out"
done
expect_grep "rxe: driver passes" '^PASS +driver\.stack\[rxe0/1\]' "$T/rxe-vm1.out"
expect_grep "rxe: pcie skips with the reason" '^SKIP +pcie\.full_link\[rxe0\] .*virtual rxe device' "$T/rxe-vm1.out"
expect_grep "cx7: eight rails, eight rows" '^PASS +driver\.stack\[mlx5_7/1\]' "$T/cx7-ndr-ib.out"

check_fault() {	# check_fault TREE ROW-REGEX
	run_on "$F/$1" "$T/$1.out"
	expect_eq "fault $1: exit 1" 1 $rc
	expect_grep "fault $1: failing row names it" "$2" "$T/$1.out"
	expect_eq "fault $1: exactly one failing row" 1 "$(grep -c '^FAIL ' "$T/$1.out")"
}
check_fault cx5-edr-ib-oldfw '^FAIL +driver\.hca_firmware\[mlx5_1/1\] .*firmware 16\.20\.1010 is older than the minimum 16\.35\.2000'
check_fault cx6-hdr-ib-x8 '^FAIL +pcie\.full_link\[ibp59s0\] .*0000:3b:00\.0-0000:3a:00\.0 at 16\.0 GT/s x8, both ends capable of 16\.0 GT/s x16'
check_fault cx6dx-roce-farnuma '^FAIL +irq\.comp_local_spread\[rocep175s0f0\] .*completion IRQ [0-9]+ \(mlx5_comp0@pci:0000:af:00\.0\) on CPU 0 \(node 0\)'
check_fault cx6dx-roce-mtu4180 '^FAIL +mtu\.consistent\[rocep59s0f1/1\] .*MTU 4180 is jumbo but active_mtu is 2048'
# functions without an RDMA device by design are reported, not failed
expect_grep "vfs: a VF on vfio-pci is a SKIP row" '^SKIP +driver\.stack\[0000:3b:00\.3\] .*bound to vfio-pci' "$T/cx6dx-roce-vfs.out"
expect_grep "vfs: a VF's unknown link is a SKIP" '^SKIP +pcie\.full_link\[rocep59s0f0v0\] .*speed/width unknown' "$T/cx6dx-roce-vfs.out"
expect_grep "bf3: the card's bridge function is a SKIP row" '^SKIP +driver\.stack\[0000:3b:00\.0\] .*PCIe bridge function' "$T/bf3-host.out"
expect_grep "lag: the second PF is covered by the bond" '^SKIP +driver\.stack\[0000:3b:00\.1\] .*mlx5_bond_0' "$T/cx6dx-roce-lag.out"
run_on "$F/bf3-host-slotx8" "$T/bfx8.out"
expect_eq "bf3 slot at x8: exit 1" 1 $rc
expect_grep "bf3 slot at x8: the slot link above the card's switch is named" \
	'^FAIL +pcie\.full_link\[mlx5_0\] .*link 0000:3b:00\.0-0000:3a:00\.0 at 32\.0 GT/s x8' "$T/bfx8.out"
run_on "$F/cx5-edr-ib-gen3" "$T/gen3.out"
expect_grep "dual-port Gen3 card: capacity per card" \
	'^FAIL +pcie\.full_link\[mlx5_1\] .*carries 126 Gb/s .*less than the 200 Gb/s of the card.s 2 active ports' "$T/gen3.out"
# Socket Direct: one HDR port on two Gen3 x16 links, one PF each, judged together
expect_grep "socket direct: both PFs pass, the card's links add up" \
	'^PASS +pcie\.full_link\[mlx5_1\]' "$T/cx6-hdr-ib-sd.out"
check_fault cx6-hdr-ib-sd-irqnode0 '^FAIL +irq\.comp_local_spread\[mlx5_1\] .*\(NUMA node 1, local CPUs 8-15\).* on CPU 0 \(node 0\)'
run_on "$F/cx6-hdr-ib-sd-x8" "$T/sdx8.out"
expect_grep "socket direct, one link at x8: the card's links no longer carry its port" \
	'^FAIL +pcie\.full_link\[mlx5_0\] .*the card.s 2 PCIe links carry 189 Gb/s .*less than the 200 Gb/s' "$T/sdx8.out"
run_on "$F/cx6-hdr-ib-fwfamily" "$T/fwf.out"
expect_grep "firmware family vs PCI id" '^FAIL +driver\.stack\[ibp59s0/1\] .*family 22, but PCI id 0x101b is a ConnectX-6 \(family 20\)' "$T/fwf.out"
run_on "$F/cx7-ndr-ib-init" "$T/init.out"
expect_grep "IB port in INIT: no SM" '^FAIL +driver\.stack\[mlx5_3/1\] .*INIT .*no subnet manager' "$T/init.out"
run_on "$F/cx7-ndr-ib-polling" "$T/poll.out"
expect_grep "pulled cable: Polling" '^FAIL +driver\.stack\[mlx5_6/1\] .*physical state Polling.*no cable' "$T/poll.out"
run_on "$F/cx7-ndr-ib-raildown" "$T/rail.out"
expect_eq "rail down: exit 1" 1 $rc
expect_grep "rail down: driver fails mlx5_5 only" '^FAIL +driver\.stack\[mlx5_5/1\] .*mlx5_5 port 1 is DOWN' "$T/rail.out"
expect_grep "rail down: the other rails pass" '^PASS +driver\.stack\[mlx5_4/1\]' "$T/rail.out"
expect_grep "rail down: mtu skips the down port" '^SKIP +mtu\.consistent\[mlx5_5/1\] .*DOWN' "$T/rail.out"

# capture a tree, replay it: same rows and verdicts (times stripped)
verdicts() { sed -n 's/^\(PASS\|FAIL\|SKIP\|ERROR\) \+\([^ ]*\) \+[0-9.]*s *\(.*\)$/\1 \2 \3/p' "$1" | sed "s|sysroot:[^ ]*|sysroot|g"; }
"$RQ" capture "$T/cap" --root "$F/cx6dx-roce-farnuma" >"$T/cap.out" 2>&1
expect_eq "capture --root exit 0" 0 $?
expect_grep "capture reports what it copied" 'captured .* files, .* links' "$T/cap.out"
expect_true "manifest written" test -s "$T/cap/capture/manifest"
run_on "$T/cap" "$T/cap-run.out"
expect_eq "replay of the capture: exit 1 (the fault is kept)" 1 $rc
verdicts "$T/cx6dx-roce-farnuma.out" >"$T/a"
verdicts "$T/cap-run.out" >"$T/b"
expect_true "verdicts extracted ($(wc -l <"$T/a") rows)" [ "$(wc -l <"$T/a")" -ge 15 ]
expect_true "replay of the capture: identical rows, verdicts and reasons" cmp -s "$T/a" "$T/b"
"$RQ" capture "$T/capr" --redact --root "$F/cx6dx-roce-farnuma" >/dev/null 2>&1
run_on "$T/capr" "$T/capr-run.out"
verdicts "$T/capr-run.out" >"$T/c"
expect_true "redacted capture: identical verdicts" cmp -s "$T/a" "$T/c"
expect_nogrep "redacted capture: no node GUID left" '1070:fd03:00b4' "$T/capr/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/infiniband/rocep59s0f0/node_guid"
# RoCE lossless settings: dcb -j outputs and ecn/ and configfs survive capture
"$RQ" run --target "sysroot:$F/cx6dx-roce-lossless-pfcoff" --report-dir "$T/rep" cases/roce >"$T/pfc.out" 2>&1
expect_grep "PFC off on the RoCE priority fails that port" \
	'^FAIL +roce\.lossless\[rocep59s0f1/1\] .*PFC is off on the RoCE priority 3 of ens1f1np1' "$T/pfc.out"
"$RQ" capture "$T/capd" --root "$F/cx6dx-roce-lossless-pfcoff" >/dev/null 2>&1
expect_true "capture stored dcb -j pfc" test -s "$T/capd/capture/tools/dcb_-j_pfc_show_dev_ens1f1np1.out"
"$RQ" run --target "sysroot:$T/capd" --report-dir "$T/rep" cases/roce >"$T/pfc2.out" 2>&1
verdicts "$T/pfc.out" >"$T/d1"
verdicts "$T/pfc2.out" >"$T/d2"
expect_true "roce-lossless: the capture replays with the same rows" cmp -s "$T/d1" "$T/d2"
# RoCE LAG: each slave PF's DCB is judged (bond0 has none); bonding/slaves survives capture
"$RQ" run --target "sysroot:$F/cx6dx-roce-lag-lossless" --report-dir "$T/rep" cases/roce >"$T/lag.out" 2>&1
expect_eq "lag set up lossless: exit 0" 0 $?
expect_grep "lag set up lossless: the bond's row passes" '^PASS +roce\.lossless\[mlx5_bond_0/1\]' "$T/lag.out"
"$RQ" capture "$T/capl" --root "$F/cx6dx-roce-lag-lossless-pfcoff" >/dev/null 2>&1
"$RQ" run --target "sysroot:$T/capl" --report-dir "$T/rep" cases/roce >"$T/lag2.out" 2>&1
expect_eq "lag, PFC off on one slave (captured): exit 1" 1 $?
expect_grep "lag, PFC off on one slave: that slave is named" \
	'^FAIL +roce\.lossless\[mlx5_bond_0/1\] .*ens1f1np1, LAG slave of bond0.*PFC is off on the RoCE priority 3' "$T/lag2.out"
# GPUDirect RDMA on an HGX-class tree (8 GPUs, 8 ConnectX-7, 4 switches): healthy, and each
# fault, live from the tree and from its capture (config space, IOMMU groups, nvidia-smi topo -m)
"$RQ" run --target "sysroot:$F/hgx-h100" --report-dir "$T/rep" cases/gpu >"$T/hgx.out" 2>&1
expect_eq "hgx: gpudirect exit 0" 0 $?
expect_eq "hgx: 8 rails, the rails, gpu-links (4 idle GPUs at 2.5 GT/s) and peer-memory rows pass" 11 \
	"$(grep -cE '^PASS +gpu\.gpudirect' "$T/hgx.out")"
expect_grep "hgx: the storage NIC serves no GPU: SKIP, not FAIL" \
	'^SKIP +gpu\.gpudirect\[mlx5_8\] .*serves no GPU .*not a GPUDirect rail' "$T/hgx.out"
gpu_fault() {	# gpu_fault TREE ROW-REGEX
	"$RQ" capture "$T/cap-$1" --root "$F/$1" >/dev/null 2>&1
	"$RQ" run --target "sysroot:$T/cap-$1" --report-dir "$T/rep" cases/gpu >"$T/$1.out" 2>&1
	expect_eq "$1 (captured): exit 1" 1 $?
	expect_grep "$1 (captured): the faulty row says why" "$2" "$T/$1.out"
}
gpu_fault hgx-h100-farrail '^FAIL +gpu\.gpudirect\[rails\] .*1 of 8 GPUs have no rail .*GPU3 \(0000:4c:00\.0\): nearest NODE, NICs serving no GPU there: mlx5_3'
gpu_fault hgx-h100-acs '^FAIL +gpu\.gpudirect\[mlx5_2\] .*ACSCtl: SrcValid\+ TransBlk- ReqRedir\+ CmpltRedir\+'
gpu_fault hgx-h100-nopeermem '^FAIL +gpu\.gpudirect\[peer-memory\] .*nvidia_peermem is not loaded'
gpu_fault hgx-h100-iommu '^FAIL +gpu\.gpudirect\[mlx5_0\] .*IOMMU group 11 translates DMA \(type DMA-FQ\)'
expect_true "capture stored nvidia-smi topo -m" test -s "$T/cap-hgx-h100-acs/capture/tools/nvidia-smi_topo_-m.out"
"$RQ" parse nvidia-smi-topo "$F/hgx-h100/capture/tools/nvidia-smi_topo_-m.out" >"$T/p4" 2>&1
expect_eq "parse nvidia-smi-topo exit 0" 0 $?
expect_grep "parse nvidia-smi-topo: the NIC legend" '"nic": *"mlx5_7"' "$T/p4"
"$RQ" run --target "sysroot:$F/cx7-ndr-ib" --report-dir "$T/rep" cases/gpu >"$T/nogpu.out" 2>&1
expect_grep "no GPU: gpudirect skips saying so" '^SKIP +gpu\.gpudirect .*no NVIDIA GPU' "$T/nogpu.out"
# the driver stack: OFED's DKMS modules missing after a kernel update, unsigned modules under
# Secure Boot; modinfo, ofed_info, mokutil and the EFI variable survive capture
"$RQ" run --target "sysroot:$F/ofed-node" --report-dir "$T/rep" cases/driver/modules.yaml >"$T/ofed.out" 2>&1
expect_eq "ofed node: driver-stack exit 0" 0 $?
expect_grep "ofed node: Secure Boot recorded" '^PASS +driver\.modules\[secure-boot\]' "$T/ofed.out"
# a signer is not trust: the DKMS key queued in MokNew, never confirmed; the capture keeps the MOK lists,
# /proc/keys and each module's taint
"$RQ" capture "$T/cap-mokpending" --root "$F/ofed-node-mokpending" >/dev/null 2>&1
"$RQ" run --target "sysroot:$T/cap-mokpending" --report-dir "$T/rep-mok" cases/driver/modules.yaml >"$T/ofed-mok.out" 2>&1
expect_eq "queued MOK enrollment (captured): exit 1" 1 $?
expect_grep "queued MOK enrollment named" \
	'^FAIL +driver\.modules\[mlx5_core\] .*signed by "DKMS module signing key", whose enrollment is queued \(mokutil --list-new\) but was never confirmed' \
	"$T/ofed-mok.out"
# the kernel log is captured (dmesg.out) and replayed: its verification failure is mlx_compat's FAIL
expect_true "capture stored the kernel log" test -s "$T/cap-mokpending/capture/tools/dmesg.out"
expect_eq "the captured kernel log decides Secure Boot" "Secure boot disabled" \
	"$(jq -r '[.. | objects | select(.facts? and (.facts | type) == "object" and .facts.kernel_log?)][0].facts.kernel_log' \
	   "$T/rep-mok/latest/results.json" 2>/dev/null)"
# the NVIDIA driver judged as OFED's: missing for the running kernel after an update; nvidia_peermem
# built against MLNX_OFED's ib_core with the kernel's own loaded, from the redacted capture's kernel log
"$RQ" capture "$T/cap-nvku" --root "$F/gpu-node-kernelupdate" >/dev/null 2>&1
"$RQ" run --target "sysroot:$T/cap-nvku" --report-dir "$T/rep" cases/driver/modules.yaml >"$T/nvku.out" 2>&1
expect_eq "gpu-node-kernelupdate (captured): exit 1" 1 $?
expect_grep "no nvidia.ko for the new kernel, DKMS built it for the old one" \
	'^FAIL +driver\.modules\[nvidia\] .*no nvidia\.ko for the running kernel 6\.8\.0-51-generic .*DKMS built it only for 6\.8\.0-48-generic' \
	"$T/nvku.out"
"$RQ" capture "$T/cap-peermem" --redact --root "$F/gpu-node-peermem" >/dev/null 2>&1
expect_true "redacted capture stored the kernel log" test -s "$T/cap-peermem/capture/tools/dmesg.out"
expect_nogrep "redacted kernel log: no host name" 'ofed-node03' "$T/cap-peermem/capture/tools/dmesg.out"
"$RQ" run --target "sysroot:$T/cap-peermem" --report-dir "$T/rep" cases/driver/modules.yaml >"$T/peermem.out" 2>&1
expect_eq "gpu-node-peermem (captured, redacted): exit 1" 1 $?
expect_grep "nvidia_peermem refused against the kernel's own ib_core, the kernel's line quoted" \
	'^FAIL +driver\.modules\[nvidia_peermem\] .*ib_core\.ko\.zst, the kernel.s own\): "nvidia_peermem: Unknown symbol ib_register_peer_memory_client \(err -2\)"' \
	"$T/peermem.out"
# shim's validation off: the capture keeps MokSBStateRT, the kernel's state is off
"$RQ" capture "$T/cap-shimoff" --root "$F/ofed-node-shimoff" >/dev/null 2>&1
expect_true "capture stored shim's MokSBStateRT" \
	test -s "$T/cap-shimoff/sys/firmware/efi/efivars/MokSBStateRT-605dab50-e046-4300-abb6-3dd810dd8b23"
"$RQ" run --target "sysroot:$T/cap-shimoff" --report-dir "$T/rep-shim" cases/driver/modules.yaml >/dev/null 2>&1
expect_eq "shim validation off: Secure Boot off as the kernel runs it, MokSBStateRT decided" \
	"off shim's MokSBStateRT 1" \
	"$(jq -r '[.. | objects | select(.facts? and (.facts | type) == "object" and .facts.secure_boot?)][0].facts | "\(.secure_boot) \(.decided_by[0:21])"' \
	   "$T/rep-shim/latest/results.json" 2>/dev/null)"
for f in kernelupdate unsigned; do
	"$RQ" capture "$T/cap-$f" --root "$F/ofed-node-$f" >/dev/null 2>&1
	"$RQ" run --target "sysroot:$T/cap-$f" --report-dir "$T/rep" cases/driver/modules.yaml >"$T/ofed-$f.out" 2>&1
	expect_eq "ofed-node-$f (captured): exit 1" 1 $?
done
expect_grep "kernel update: OFED userspace, the kernel's own mlx5_core, the kernel named" \
	'^FAIL +driver\.modules\[mlx5_core\] .*OFED userspace \(MLNX_OFED_LINUX-23\.10-1\.1\.9\.0\) with the kernel.s own mlx5_core.*missing for kernel 6\.8\.0-51-generic \(the DKMS build exists for 6\.8\.0-48-generic' \
	"$T/ofed-kernelupdate.out"
expect_grep "unsigned under Secure Boot: refused at the next load" \
	'^FAIL +driver\.modules\[mlx5_core\] .*Secure Boot enforces module signatures and .*mlx5_core\.ko is unsigned' "$T/ofed-unsigned.out"
# node tuning on the HGX tree and its faults (config space, cpufreq, cpuidle, /proc/irq via capture)
"$RQ" run --target "sysroot:$F/hgx-h100" --report-dir "$T/rep" cases/node >"$T/tune.out" 2>&1
expect_eq "hgx: node-tuning exit 0" 0 $?
for f in mrrs cstates; do
	"$RQ" capture "$T/capt-$f" --root "$F/hgx-h100-$f" >/dev/null 2>&1
	"$RQ" run --target "sysroot:$T/capt-$f" --report-dir "$T/rep" cases/node >"$T/tune-$f.out" 2>&1
	expect_eq "hgx-h100-$f (captured): node-tuning exit 1" 1 $?
done
expect_grep "MaxReadReq 512 named" '^FAIL +node\.tuning\[mlx5_5\] .*PCIe MaxReadReq 512 bytes, at least 4096' "$T/tune-mrrs.out"
expect_grep "C6 on the IRQ CPUs named" '^FAIL +node\.tuning\[mlx5_7\] .*deep idle states .*cpu8 C6 \(170 us\)' "$T/tune-cstates.out"
# irqbalance's own masks (smp_affinity_list 0-7, effective one CPU) are not pinned; one-CPU masks are
"$RQ" run --target "sysroot:$F/cx7-ndr-ib" --report-dir "$T/rep" cases/node >"$T/tune-irqb.out" 2>&1
expect_eq "cx7 irqbalance masks: node-tuning exit 0" 0 $?
"$RQ" run --target "sysroot:$F/cx7-ndr-ib-pinned" --report-dir "$T/rep" cases/node >"$T/tune-pin.out" 2>&1
expect_eq "cx7 pinned under irqbalance: node-tuning exit 1" 1 $?
expect_grep "pinned under irqbalance named" \
	'^FAIL +node\.tuning\[mlx5_0\] .*irqbalance is running while all 5 of its IRQs are pinned one CPU each \(smp_affinity_list\)' \
	"$T/tune-pin.out"
# firmware flashed but not running (mstflint q) survives capture
"$RQ" capture "$T/capf" --root "$F/cx6dx-roce-fwpending" >/dev/null 2>&1
run_on "$T/capf" "$T/fwp.out"
expect_grep "a staged firmware upgrade is visible after capture" \
	'^FAIL +driver\.stack\[rocep59s0f0/1\] .*22\.39\.1002 is flashed but 22\.36\.1010 is running' "$T/fwp.out"
expect_true "capture stored mlxfwmanager --query" \
	test -s "$T/capf/capture/tools/mlxfwmanager_--query_-d_0000_3b_00.0.out"
"$RQ" parse mlxfwmanager "$T/capf/capture/tools/mlxfwmanager_--query_-d_0000_3b_00.0.out" >"$T/p3" 2>&1
expect_eq "parse mlxfwmanager exit 0" 0 $?
expect_grep "parse mlxfwmanager: the staged image" '"fw_pending": *true' "$T/p3"
"$RQ" capture "$T/cap" --root "$F/rxe-vm1" >/dev/null 2>&1
expect_eq "capture into a non-empty dir refused" 1 $?

# where a tree comes from is in every report: a synthesized fixture says so,
# a capture this run made of this machine is a capture
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
"$RQ" run --target "sysroot:$F/cx5-edr-ib" --report-dir "$T/syn" cases/mtu >"$T/syn.out" 2>&1
R=$T/syn/latest
expect_grep "synthesized: the console says so first" \
	"^note: $F/cx5-edr-ib is a synthesized node tree \\(made by fixtures/nodes/mkfixtures.py" "$T/syn.out"
expect_eq "synthesized: the console's first line is the note" note: "$(head -1 "$T/syn.out" | cut -d' ' -f1)"
expect_grep "synthesized: and after the summary" '^note: replayed .*, a synthesized node tree' "$T/syn.out"
expect_eq "synthesized: results.json run.synthesized, no captured_host" "True synthesized None edr-node01" \
	"$(json "$R/results.json" "d['run']['synthesized'], d['facts']['sysroot.origin'], d['facts'].get('captured_host'), d['facts']['synthesized_host']")"
expect_grep "synthesized: a JUnit property" '<property name="synthesized" value="true"/>' "$R/junit.xml"
expect_grep "synthesized: the page's banner" '<p id="synthesized" class="banner-synth"><b>Synthesized node tree.</b>' "$R/report.html"
"$RQ" capture "$T/capsyn" --root "$F/cx5-edr-ib" >/dev/null 2>&1
"$RQ" run --target "sysroot:$T/capsyn" --report-dir "$T/capsynr" cases/mtu >"$T/capsyn.out" 2>&1
expect_eq "a capture of a synthesized tree stays synthesized" True \
	"$(json "$T/capsynr/latest/results.json" "d['run']['synthesized']")"
"$RQ" capture "$T/live" >/dev/null 2>&1
"$RQ" run --target "sysroot:$T/live" --report-dir "$T/liver" cases/mtu >"$T/live.out" 2>&1
# a comparison of a synthesized replay with a capture says which side is the fixture
"$RQ" compare --html "$T/cmpsyn.html" "$T/syn/latest" "$T/liver/latest" >"$T/cmpsyn.out" 2>&1
expect_grep "compare: the synthesized side says so on the console" \
	'^ +a replay of a synthesized node tree \(made by fixtures/nodes/mkfixtures\.py' "$T/cmpsyn.out"
expect_eq "compare: only the before side is" 1 "$(grep -c 'a replay of a synthesized node tree' "$T/cmpsyn.out")"
expect_grep "compare: the page's banner names the before side" \
	'<p id="synthesized-before" class="banner-synth"><b>Synthesized node tree.</b> The before side replayed' "$T/cmpsyn.html"
expect_nogrep "compare: no banner for the captured side" 'id="synthesized-after"' "$T/cmpsyn.html"
"$RQ" compare --json "$T/syn/latest" "$T/liver/latest" >"$T/cmpsyn.json" 2>/dev/null
expect_eq "compare --json: run.synthesized of each side" "true false" \
	"$(jq -r '"\(.before.synthesized) \(.after.synthesized)"' "$T/cmpsyn.json")"
R=$T/liver/latest
expect_eq "captured here: not synthesized, captured_host is this host" "False captured $(cat /proc/sys/kernel/hostname)" \
	"$(json "$R/results.json" "d['run']['synthesized'], d['facts']['sysroot.origin'], d['facts']['captured_host']")"
expect_nogrep "captured here: no note on the console" '^note: .*synthesized' "$T/live.out"
expect_nogrep "captured here: no JUnit property" 'name="synthesized"' "$R/junit.xml"
expect_nogrep "captured here: no banner" 'id="synthesized"' "$R/report.html"
# a lab run over per-node trees says it too
mkdir "$T/labsyn"
ln -s "$PWD/$F/cx7-ndr-ib" "$T/labsyn/n1"
ln -s "$PWD/$F/cx5-edr-ib" "$T/labsyn/n2"
"$RQ" run --nodes 'n[1-2]' --launcher local --target "sysroot:$T/labsyn" --report-dir "$T/labr" cases/mtu \
	>"$T/labsyn.out" 2>&1
expect_grep "lab: the console says so first" '^note: 2 of 2 nodes replay a synthesized node tree' "$T/labsyn.out"
expect_eq "lab: results.json run.synthesized, 2 of 2 nodes" "True 2 of 2" \
	"$(json "$T/labr/latest/results.json" "d['run']['synthesized'], d['facts']['sysroot.synthesized_nodes']")"
expect_grep "lab: a JUnit property" '<property name="synthesized" value="true"/>' "$T/labr/latest/junit.xml"
expect_grep "lab: the page's banner" '<p id="synthesized"' "$T/labr/latest/report.html"

# parse tools
"$RQ" parse ibv_devinfo "$F/cx6dx-roce-mtu4180/capture/tools/ibv_devinfo_-v.out" >"$T/p1" 2>&1
expect_eq "parse ibv_devinfo exit 0" 0 $?
expect_grep "parse ibv_devinfo: active_mtu" '"active_mtu": *2048' "$T/p1"
"$RQ" parse interrupts "$F/cx7-ndr-ib/proc/interrupts" >"$T/p2" 2>&1
expect_eq "parse interrupts exit 0" 0 $?
expect_grep "parse interrupts: mlx5 vector" '"kind": *"comp"' "$T/p2"
finish

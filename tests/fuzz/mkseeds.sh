#!/bin/sh
# Regenerates the parser fuzz seeds tests/fuzz/corpus-parsers/NAME--FILE from
# the project's own fixtures (never from /work/shared/real-outputs): each seed
# is one selector byte, the parser's index in src/parsers/parsers.def (what
# fuzz_parsers.c takes modulo the number of parsers), then the tool output.
# Seeds named regress-* (inputs that once broke a parser) are kept.
# Run from the repository root after a fixture or parsers.def changes.
set -eu
out=tests/fuzz/corpus-parsers
mkdir -p "$out"
find "$out" -type f ! -name 'regress-*' -delete

idx() {
	i=$(grep '^PARSER(' src/parsers/parsers.def | sed 's/PARSER(\(.*\))/\1/' | grep -nx "$1" | cut -d: -f1)
	[ -n "$i" ] || { echo "mkseeds: no parser $1 in src/parsers/parsers.def" >&2; exit 1; }
	echo $((i - 1))
}

# seed PARSER FILE [NAME]: selector byte + file
# (the format is the selector byte as an octal escape)
# shellcheck disable=SC2059
seed() {
	name=${3:-$(basename "$2")}
	{ printf "\\$(printf '%03o' "$(idx "$1")")"; cat "$2"; } > "$out/$1--$name"
}

# seedtext PARSER NAME TEXT: selector byte + text (synthesized samples)
# shellcheck disable=SC2059
seedtext() {
	{ printf "\\$(printf '%03o' "$(idx "$1")")"; printf '%s\n' "$3"; } > "$out/$1--$2"
}

for f in fixtures/perftest/*.txt fixtures/perftest/*.json; do seed perftest "$f"; done
for n in rxe-vm1 cx7-ndr-ib cx6dx-roce-mtu4180; do
	for f in fixtures/nodes/"$n"/capture/tools/ibv_devinfo*.out; do
		seed ibv_devinfo "$f" "$n-$(basename "$f")"
	done
done
for n in rxe-vm1 cx5-edr-ib cx7-ndr-ib; do
	seed interrupts fixtures/nodes/$n/proc/interrupts "$n-interrupts"
done
for n in cx7-ndr-ib cx6dx-roce-2numa; do
	[ -f fixtures/nodes/$n/capture/tools/ibstat.out ] &&
		seed ibstat fixtures/nodes/$n/capture/tools/ibstat.out "$n-ibstat.out"
done
t=fixtures/tool-output/ibsim
for f in "$t"/sminfo-*.txt; do seed sminfo "$f"; done
for f in "$t"/iblinkinfo-*.txt; do seed iblinkinfo "$f"; done
for f in "$t"/perfquery-*.txt; do seed perfquery "$f"; done
for f in "$t"/ibnetdiscover-*.txt; do seed ibnetdiscover "$f"; done
for f in "$t"/ibstat-*.txt; do seed ibstat "$f"; done
for f in "$t"/smpquery-*.txt; do seed smpquery "$f"; done
for f in "$t"/saquery-s-*.txt; do seed saquery_sm "$f"; done
for f in "$t"/dump_fts-*.txt; do seed dump_fts "$f"; done
for f in "$t"/smpquery-sl2vl-*.txt; do seed sl2vl "$f"; done
for f in "$t"/smpquery-vlarb-*.txt; do seed vlarb "$f"; done
for f in "$t"/ibqueryerrors-*.txt; do seed ibqueryerrors "$f"; done
for f in "$t"/saquery-ft*.txt; do seed saquery "$f"; done
for f in "$t"/opensm-*.txt; do seed opensm_log "$f"; done
for f in fixtures/tool-output/mpi/rdmaqual-coll-*.txt; do seed rdmaqual_coll "$f"; done
seed qos_policy tests/integration/qos-cases/qos-policy.conf
for f in tests/integration/qos-cases/partitions*.conf; do seed partitions "$f"; done
t=fixtures/tool-output/testresults
for f in "$t"/tap-*.txt; do seed tap "$f"; done
for f in "$t"/*-junit.xml; do seed junit "$f"; done
for f in "$t"/unittest-*.txt; do seed unittest "$f"; done
seed nvidia_smi_topo fixtures/nodes/hgx-h100/capture/tools/nvidia-smi_topo_-m.out hgx-h100-topo.out

# Synthesized from the formats in rdma-core 44's pingpong.c and rping.c (as
# in tests/test_perftest.c): no project fixture holds these tools' output.
seedtext ibv_rc_pingpong rc-client.txt '  local address:  LID 0x0000, QPN 0x000012, PSN 0xdedad9, GID fe80::9c7f:f4ff:feaf:f294
  remote address: LID 0x0000, QPN 0x000011, PSN 0x5e06c1, GID fe80::9c7f:f4ff:feaf:f293
8192000 bytes in 0.02 seconds = 2956.87 Mbit/sec
1000 iters in 0.02 seconds = 22.16 usec/iter'
seedtext ibv_rc_pingpong ud-server.txt '  local address:  LID 0x0000, QPN 0x000033, PSN 0x3b0f2b: GID ::ffff:10.1.16.61
  remote address: LID 0x0000, QPN 0x000034, PSN 0x8f6a3e, GID ::ffff:10.1.16.62
2048000 bytes in 1.06 seconds = 15.44 Mbit/sec
1000 iters in 1.06 seconds = 1060.80 usec/iter'
seedtext ibv_rc_pingpong size-error.txt 'Requested size larger than port MTU (1024)'
seedtext rping client-v.txt 'ping data: rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ[\]^_`abcdefghijklmnopqr
ping data: rdma-ping-1: BCDEFGHIJKLMNOPQRSTUVWXYZ[\]^_`abcdefghijklmnopqrs
ping data: rdma-ping-2: CDEFGHIJKLMNOPQRSTUVWXYZ[\]^_`abcdefghijklmnopqrst
client DISCONNECT EVENT...'
seedtext rping server-d.txt 'cma_event type RDMA_CM_EVENT_CONNECT_REQUEST cma_id 0x55d8 (child)
ESTABLISHED
cma_event type RDMA_CM_EVENT_ESTABLISHED cma_id 0x55d8 (child)
server ping data: rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ[\]^_`abcdefghijklmnopqr
server ping data: rdma-ping-1: BCDEFGHIJKLMNOPQRSTUVWXYZ[\]^_`abcdefghijklmnopqrs
cma_event type RDMA_CM_EVENT_DISCONNECTED cma_id 0x55d8 (child)
server DISCONNECT EVENT...'
seedtext rping rejected.txt 'cma event RDMA_CM_EVENT_REJECTED, error 8
connect error -1'

# Synthesized from OMB's osu_util.c print formats (5.x header, 7.x -f with
# Validation) and nccl-tests' src/common.cu (current and old layouts).
seedtext osu allreduce-full.txt '# OSU MPI Allreduce Latency Test v7.3
# Datatype: MPI_INT.
# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations        Validation
4                       1.62              1.50              1.71        1000              Pass
1048576               812.25            800.10            830.00         100              Fail'
seedtext osu mbw-mr.txt '# OSU MPI Multiple Bandwidth / Message Rate Test v5.7
# [ pairs: 2 ] [ window size: 64 ]
# Size                  MB/s        Messages/s
1                       1.55        1550000.00'
seedtext nccl_tests allreduce.txt '# nThread 1 nGpus 1 minBytes 8 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid   6899 on vm0 device  0 [0000:04:00] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             2     float     sum      -1    135.8    0.00    0.00      0    123.5    0.00    0.00    N/A
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 0.001'
seedtext nccl_tests alltoall-old.txt '#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error
host:1:1 [0] NCCL INFO Launch mode Parallel
          32             1   float            89.00    0.00    0.00    N/A    85.13    0.00    0.00  0e+00'

# QoS policy with every section and block, and a P_Key table as ibsim answered
# smpquery pkeys after opensm -P (tests/test_qos.c has the same rows).
seedtext qos_policy all-sections.conf 'port-groups
    port-group
        name: Storage
        use: SRP Targets
        port-guid: 0x10000000000001, 0x10000000000005-0x1000000000FFFA
        port-name: vs1 HCA-1/P1
        pkey: 0x1234
        partition: Part1
        node-type: CA, SELF
    end-port-group
end-port-groups
qos-setup
    vlarb-tables
        vlarb-scope
            group: Storage
            across: Storage
            vlarb-high: 0:255,1:127
            vlarb-low: 7:192,8:64
            vl-high-limit: 10
        end-vlarb-scope
    end-vlarb-tables
    sl2vl-tables
        sl2vl-scope
            group: Storage
            from: *
            to: 1-4
            sl2vl-table: 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
        end-sl2vl-scope
    end-sl2vl-tables
end-qos-setup
qos-levels
    qos-level
        name: DEFAULT
        sl: 0
        mtu-limit: 4
        rate-limit: 5
        packet-life: 8
        path-bits: 1,2
        pkey: 0x0F00-0x0FFF
    end-qos-level
end-qos-levels
qos-match-rules
    qos-match-rule
        qos-class: 7-9,11
        source: Storage
        destination: Storage
        service-id: 0x0000000000010000-0x000000000001FFFF
        pkey: 0x0F00-0x0FFF
        qos-level-name: DEFAULT
    end-qos-match-rule
end-qos-match-rules
qos-ulps
    default : 0
    sdp, port-num 10000-20000 : 1
    srp, target-port-guid 0x1234 : 2
    any, source-target-port-guid 0x9abcd : 8
end-qos-ulps'
seedtext pkeys ibsim-after-partitions.txt '   0: 0xffff 0x8002 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000
   8: 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000
64 pkeys capacity for this port'

#!/bin/sh
# Lab runs with --launcher local: each simulated node is its own agent
# process, with its own captured tree (sysroot fixtures, synthesized) where
# the run gives one.  Checks the report's shape (a JUnit suite per node, the
# lab section, row names), the suspect and drain list by elimination, a node
# dying mid-case (its rows and its partners' ERROR, bounded), SIGINT (stops
# every node's work, nothing left running) and --resume (the same rows as an
# uninterrupted run).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

RQ=${RQ:-build/san/rdmaqual}
T=$(mktemp -d /tmp/rq-it-lab.XXXXXX)
export RDMAQUAL_STATE_DIR="$T/state"
trap 'rm -rf "$T"' EXIT
C=tests/integration/lab-cases
# A node-local case that takes a while (interrupts and dying nodes land in
# it), with a sleep of its own: other runs of this test may share the host.
SLOW="sleep 4.$(( $$ % 900 + 100 ))"
cat >"$T/slow.yaml" <<YAML
cases:
  - name: lab.slow
    kind: command
    targets: [local, sysroot, hca]
    timeout: 60s
    argv: [$(echo "$SLOW" | sed 's/ /, "/; s/$/"/')]
YAML
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

echo "-- four nodes, one with a rail down (cx7-ndr-ib-raildown)"
mkdir -p "$T/lab"
for n in node01 node02 node04; do ln -s "$PWD/fixtures/nodes/cx7-ndr-ib" "$T/lab/$n"; done
ln -s "$PWD/fixtures/nodes/cx7-ndr-ib-raildown" "$T/lab/node03"
"$RQ" run --nodes 'node[01-04]' --launcher local --target "sysroot:$T/lab" --pairs all \
	--report-dir "$T/r1" --drain-list "$T/drain" cases/driver cases/bw/native.yaml \
	>"$T/out1" 2>&1
expect_eq "a failed node check fails the run" 1 $?
R=$T/r1/latest
expect_grep "row names its node and rail" 'driver\.stack\[node03:mlx5_5/1\]' "$T/out1"
expect_grep "the down rail FAILs on node03" 'FAIL +driver\.stack\[node03:mlx5_5/1\]' "$T/out1"
for n in node01 node02 node03 node04 pairs; do
	expect_grep "junit suite $n" "<testsuite name=\"$n\"" "$R/junit.xml"
done
expect_eq "junit suite's hostname is the node's" node03 \
	"$(grep -o '<testsuite name="node03"[^>]*' "$R/junit.xml" | sed 's/.*hostname="\([^"]*\)".*/\1/')"
expect_eq "results.json lab: 4 nodes, 8 rails each" "4 8" \
	"$(json "$R/results.json" "len(d['lab']['nodes']), len(d['lab']['nodes'][2]['rails'])")"
expect_eq "all pairs: 6 per two-sided case, in 3 rounds" "6 3" \
	"$(json "$R/results.json" "sum(1 for p in d['lab']['pairs'] if p['case']=='bw.write_64k'), max(p['round'] for p in d['lab']['pairs'])")"
expect_eq "a 4x4 matrix per two-sided case" "4 4" \
	"$(json "$R/results.json" "len(d['lab']['matrices'][0]['values']), len(d['lab']['matrices'][0]['values'][3])")"
expect_eq "the one suspect is node03" "node03" \
	"$(json "$R/results.json" "' '.join(s['node'] for s in d['lab']['suspects'])")"
expect_eq "drain list: node03 with the evidence" 1 "$(grep -c '^node03 driver\.stack\[node03:mlx5_5/1\]: ' "$T/drain")"
expect_eq "drain list names nobody else" 1 "$(wc -l <"$T/drain")"
expect_grep "journal names the command" '^\{"argv":\["run","--nodes"' "$R/journal.jsonl"

echo "-- a node-local case failing on one node; dry run prints the rounds"
"$RQ" run --nodes 'n[1-5]' --launcher local --pairs ring --dry-run $C/pairs.yaml >"$T/dry" 2>&1
expect_eq "dry run exits 0" 0 $?
expect_grep "ring of 5: 5 pairs in 3 rounds" 'lab.pingpong .*pairs ring: 5 pairs in 3 rounds' "$T/dry"
expect_grep "n5->n1 closes the ring" 'round 2: n5->n1 n2->n3' "$T/dry"
expect_grep "round 3: what is left" 'round 3: n4->n5$' "$T/dry"

cat >"$T/pc.yaml" <<'YAML'
cases:
  - name: p.all
    kind: verbs-pingpong
    pairs: all
  - name: p.list
    kind: verbs-pingpong
    pairs: n1:n3,n2:n5
YAML
"$RQ" run --nodes 'n[1-5]' --launcher local --pairs ring --dry-run "$T/pc.yaml" >"$T/dry2" 2>&1
expect_grep "a case's pairs: all wins over --pairs ring" 'p\.all .*pairs all: 10 pairs in 5 rounds' "$T/dry2"
expect_grep "an explicit list: one round" 'p\.list .*pairs n1:n3,n2:n5: 2 pairs in 1 rounds' "$T/dry2"
"$RQ" run --nodes 'n[1-4]' --launcher local --dry-run "$T/pc.yaml" >"$T/dry3" 2>&1
expect_eq "a case pairing a node outside --nodes is a usage error" 2 $?
expect_grep "naming the case, its file and the node" 'p\.list \(.*pc\.yaml:5\): pairs: .*not in --nodes \(n5\)' "$T/dry3"

echo "-- pairs between nodes: a matrix, and the degraded node named by elimination"
"$RQ" run --nodes 'node[01-04]' --launcher local --pairs all --report-dir "$T/rp" \
	--drain-list "$T/drain2" $C/pair-rate.yaml >"$T/outp" 2>&1
expect_eq "a failed pair fails the run" 1 $?
expect_grep "a pair row names both ends" 'PASS +lab\.rate\[node01->node04\]' "$T/outp"
expect_grep "node03 as the client: its server fails" 'FAIL +lab\.rate\[node03->node01\] .*server side' "$T/outp"
expect_eq "the matrix: rate [client][server], null where no pair" "42.0 4.2 None" \
	"$(json "$T/rp/latest/results.json" "' '.join(str(v) for v in [d['lab']['matrices'][0]['values'][0][1], d['lab']['matrices'][0]['values'][1][2], d['lab']['matrices'][0]['values'][0][2]])")"
expect_eq "the slow pair (node02->node03) is marked slow" True \
	"$(json "$T/rp/latest/results.json" "[p['slow'] for p in d['lab']['pairs'] if p['client']=='node02' and p['server']=='node03'][0]")"
expect_eq "one suspect: node03" node03 \
	"$(json "$T/rp/latest/results.json" "' '.join(s['node'] for s in d['lab']['suspects'])")"
expect_grep "with the evidence of elimination" '90% below the median 42 Gb/s of 4 pairs, beyond the matrix.s noise \(the other pairs agree\), while node02 passed with node01' "$T/outp"
expect_eq "the drain list holds node03 alone" node03 "$(cut -d' ' -f1 "$T/drain2")"
expect_grep "pair rows in a JUnit suite 'pairs'" '<testsuite name="pairs"' "$T/rp/latest/junit.xml"
expect_grep "the matrix as a heat map in report.html" 'lab\.rate: client \(row\) to server \(column\)' "$T/rp/latest/report.html"

echo "-- --repeat 2: the suite twice, round by round, one matrix"
"$RQ" run --repeat 2 --nodes 'node[01-04]' --launcher local --pairs all --report-dir "$T/rr" \
	$C/pair-rate.yaml >"$T/outr" 2>&1
expect_eq "a failed pair still fails the run" 1 $?
RR=$T/rr/latest/results.json
expect_eq "each pair row in rounds 1 and 2" "2 2" \
	"$(jq -r '[.results[] | select(.id == "lab.rate[node01->node04]") | .repeat] | "\(length) \(max)"' "$RR")"
expect_eq "one matrix, one entry a pair, as without --repeat" \
	"$(jq '.lab.matrices | length' "$T/rp/latest/results.json") $(jq '.lab.pairs | length' "$T/rp/latest/results.json")" \
	"$(jq '.lab.matrices | length' "$RR") $(jq '.lab.pairs | length' "$RR")"
expect_eq "the same suspect: node03" node03 "$(jq -r '[.lab.suspects[].node] | join(" ")' "$RR")"
expect_eq "the journal keys the second round's units with #2" \
	"$(grep -c '"unit"' "$T/rp/latest/journal.jsonl")" "$(grep -c '"unit": *"[^"]*#2"' "$T/rr/latest/journal.jsonl")"
cmp_rc=0
"$RQ" compare "$T/rp/latest" "$T/rr/latest" >"$T/cmprr" 2>&1 || cmp_rc=$?
expect_eq "compare of a run with its --repeat 2: no regression" 0 "$cmp_rc"
expect_nogrep "and no repeated-row warning" 'appears more than once' "$T/cmprr"
# a pair's cell over the rounds is their median, not its weakest round:
# node01->node02 measures 10, 30 and 20 (a counter of its own), median 20
cat >"$T/rm.yaml" <<YAML
cases:
  - name: lab.rm
    kind: command-pair
    targets: [local]
    server: [sh, -c, 'echo ready']
    ready: ready
    client: [sh, -c, 'f=\$0.{peer_host}; n=\$(cat "\$f" 2>/dev/null || echo 0); n=\$((n + 1)); echo \$n >"\$f"; case \$n in 1) echo rate=10;; 2) echo rate=30;; *) echo rate=20;; esac', "$T/rmcount"]
    figures: ["rate[Gb/s]=rate=([0-9.]+)"]
YAML
"$RQ" run --repeat 3 --nodes 'node[01-02]' --launcher local --pairs node01:node02 --report-dir "$T/rm" \
	"$T/rm.yaml" >"$T/outrm" 2>&1
expect_eq "the three rounds' rates" "10 30 20" \
	"$(jq -r '[.results[] | select(.case == "lab.rm") | .figures[] | select(.name == "rate") | .value] | join(" ")' "$T/rm/latest/results.json")"
expect_eq "the pair's cell is their median" 20 \
	"$(jq -r '.lab.pairs[] | select(.client == "node01" and .server == "node02") | .figure.value' "$T/rm/latest/results.json")"
# an interrupted --repeat run resumes the rounds it did not finish, and only those
cat >"$T/rs.yaml" <<YAML
cases:
  - {name: lab.rs, kind: command, targets: [local], timeout: 60s, argv: [sleep, "1.$(( $$ % 900 + 100 ))"]}
YAML
"$RQ" run --repeat 3 --nodes 'node[01-02]' --launcher local --report-dir "$T/rs" "$T/rs.yaml" >"$T/outrs" 2>&1 &
rs_pid=$!
wait_for "two rounds journaled" 20 sh -c "[ \"\$(grep -c '\"unit\": *\"lab.rs|node0[12]#2\"' '$T/rs/latest/journal.jsonl' 2>/dev/null)\" = 2 ]"
kill -INT "$rs_pid"
wait "$rs_pid"
"$RQ" run --resume "$T/rs/latest" >"$T/outrs2" 2>&1
expect_eq "the resumed --repeat run passes" 0 $?
expect_eq "every node in every round once" "lab.rs[node01]:1 lab.rs[node02]:1 lab.rs[node01]:2 lab.rs[node02]:2 lab.rs[node01]:3 lab.rs[node02]:3" \
	"$(jq -r '[.results | sort_by(.repeat, .id)[] | "\(.id):\(.repeat)"] | join(" ")' "$T/rs/latest/results.json")"
expect_eq "each round's log is its own" 6 "$(count "$T/rs/latest/logs"/lab.rs_node0[12]_.r[123].log)"

echo "-- a node dies in the middle of a pair"
cat >"$T/pairslow.yaml" <<YAML
cases:
  - name: lab.pairslow
    kind: command-pair
    targets: [local]
    server: [sh, -c, 'echo ready; exec $SLOW']
    ready: ready
    client: [$(echo "$SLOW" | sed 's/ /, "/; s/$/"/')]
YAML
"$RQ" run --nodes 'node[01-04]' --launcher local --pairs ring --report-dir "$T/rq" \
	"$T/pairslow.yaml" >"$T/outq" 2>&1 &
pid=$!
# The slow case's processes of this test's runs (their environment holds $T).
pairs_run() { [ "$(procs_with "$SLOW" "$T/state" | grep -c .)" -ge 4 ]; }
slow_runs() { [ -n "$(procs_with "$SLOW" "$T/state")" ]; }
wait_for "the pairs of round 1 run" 20 pairs_run
# node02's agent: local agents carry their node's name in their environment
victim=
for a in $(pgrep -P $pid); do
	tr '\0' '\n' <"/proc/$a/environ" 2>/dev/null | grep -qx RDMAQUAL_NODE=node02 && victim=$a
done
expect_true "found node02's agent" test -n "$victim"
kill -9 "$victim"
start=$(date +%s)
wait $pid
expect_eq "the run fails" 1 $?
expect_true "and ends soon after (bounded)" test $(( $(date +%s) - start )) -lt 20
expect_grep "its partner's row ERRORs: peer gone" 'ERROR +lab\.pairslow\[node01->node02\] .*peer node02 gone: agent node02 closed the channel' "$T/outq"
expect_grep "its next pair ERRORs too, without running" 'ERROR +lab\.pairslow\[node02->node03\] .*node02 gone' "$T/outq"
expect_grep "pairs without node02 pass" 'PASS +lab\.pairslow\[node03->node04\]' "$T/outq"
expect_true "nothing of the pairs left running" none_with "$SLOW" "$T/state"

echo "-- a node dies mid-case"
"$RQ" run --nodes 'node[01-04]' --launcher local --report-dir "$T/r2" "$C/node.yaml" "$T/slow.yaml" \
	$C/pairs.yaml >"$T/out2" 2>&1 &
pid=$!
wait_for "the slow case runs on the nodes" 20 slow_runs
# node02's agent: local agents carry their node's name in their environment
victim=
for a in $(pgrep -P $pid); do
	tr '\0' '\n' <"/proc/$a/environ" 2>/dev/null | grep -qx RDMAQUAL_NODE=node02 && victim=$a
done
expect_true "found node02's agent" test -n "$victim"
kill -9 "$victim"
start=$(date +%s)
wait $pid
expect_eq "the run fails" 1 $?
expect_true "and ends soon after (bounded)" test $(( $(date +%s) - start )) -lt 20
expect_grep "the dead node's row ERRORs, naming it" 'ERROR +lab\.slow\[node02\] +[0-9.]+s  node02 gone: agent node02 closed the channel' "$T/out2"
expect_grep "the others' rows pass" 'PASS +lab\.slow\[node03\]' "$T/out2"
expect_grep "its partners' pairs ERROR: peer gone" 'ERROR +lab\.pingpong\[node01->node02\] .*peer node02 gone: agent node02 closed' "$T/out2"
expect_grep "and where it is the client too" 'ERROR +lab\.pingpong\[node02->node03\] +[0-9.]+s  node02 gone: agent node02 closed' "$T/out2"
expect_grep "the failing node check names node02" 'FAIL +lab\.not_node02\[node02\]' "$T/out2"
expect_eq "suspects: node02 (down, and its failed check)" "node02" \
	"$(json "$T/r2/latest/results.json" "' '.join(s['node'] for s in d['lab']['suspects'])")"

echo "-- SIGINT stops every node's work; --resume completes the same report"
"$RQ" run --nodes 'node[01-03]' --launcher local --report-dir "$T/r3" "$C/node.yaml" "$T/slow.yaml" \
	>"$T/out3" 2>&1 &
pid=$!
wait_for "the slow case runs" 20 slow_runs
kill -INT $pid
start=$(date +%s)
wait $pid
expect_eq "interrupted run exits 1" 1 $?
expect_true "within 5 s" test $(( $(date +%s) - start )) -lt 5
expect_true "no agent or case left running" none_with "$SLOW" "$T/state"
expect_grep "it says how to resume" 'rdmaqual run --resume ' "$T/out3"
run3=$(readlink -f "$T/r3/latest")
expect_nogrep "the interrupted units are not journaled" 'lab\.slow' "$run3/journal.jsonl"
"$RQ" run --resume "$run3" >"$T/out4" 2>&1
expect_eq "resumed run exits 1 (node02 still fails its check)" 1 $?
expect_grep "resume reruns only unfinished units" 'resuming .*: 6 units already finished' "$T/out4"
"$RQ" run --nodes 'node[01-03]' --launcher local --report-dir "$T/r5" "$C/node.yaml" "$T/slow.yaml" \
	>"$T/out5" 2>&1
rows() { json "$1" "'\n'.join(sorted(r['id'] + ' ' + r['verdict'] for r in d['results']))"; }
expect_eq "resumed report has the uninterrupted run's rows" "$(rows "$T/r5/latest/results.json")" \
	"$(rows "$run3/results.json")"
[ "$(rows "$T/r5/latest/results.json")" = "$(rows "$run3/results.json")" ] ||
	sed 's/^/    | /' "$T/out4" "$T/out5"
expect_eq "the resumed run names the same suspect" node02 \
	"$(json "$run3/results.json" "' '.join(s['node'] for s in d['lab']['suspects'])")"
expect_eq "and is complete" True "$(json "$run3/results.json" "d['run']['complete']")"
"$RQ" run --resume "$run3" --nodes x >"$T/out6" 2>&1
expect_eq "--resume with other options is a usage error" 2 $?
finish

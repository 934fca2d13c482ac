#!/bin/sh
# Lab runs over ssh without a lab: a private sshd on a loopback port stands
# in for three nodes (ssh_config aliases lab1..lab3, the same copy
# mechanism as --peer), plus a node whose ssh is refused.  Checks that
# every reachable node's rows pass, the unreachable one ERRORs with ssh's
# own error while the run goes on and ends in bounded time, its JUnit suite
# carries the node's --nodes name (the hostname it reported is a fact:
# three nodes on one host report one), and nothing is left running.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

RQ=${RQ:-build/san/rdmaqual}
SSHD=/usr/sbin/sshd
if [ ! -x "$SSHD" ] || [ "$(id -u)" -ne 0 ]; then
	skip "needs root and openssh-server (make deps)"
fi
T=$(mktemp -d /tmp/rq-it-labssh.XXXXXX)
port=$(( 30000 + ($$ + 7) % 20000 ))
cleanup() {
	[ -f "$T/sshd.pid" ] && kill "$(cat "$T/sshd.pid")" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
ssh-keygen -q -t ed25519 -N '' -f "$T/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$T/id"
cp "$T/id.pub" "$T/authorized_keys"
chmod 700 "$T"
cat >"$T/sshd_config" <<CFG
Port $port
ListenAddress 127.0.0.1
HostKey $T/host_key
PidFile $T/sshd.pid
AuthorizedKeysFile $T/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
StrictModes no
UsePAM no
MaxStartups 30
SetEnv RQ_IT_SSHD=$T
CFG
cat >"$T/ssh_config" <<CFG
Host lab1 lab2 lab3
	HostName 127.0.0.1
	Port $port
Host labdead
	HostName 127.0.0.1
	Port 1
Host *
	User root
	IdentityFile $T/id
	StrictHostKeyChecking no
	UserKnownHostsFile /dev/null
	LogLevel ERROR
CFG
mkdir -p /run/sshd
"$SSHD" -f "$T/sshd_config" -E "$T/sshd.log"
wait_for "private sshd is up" 10 test -s "$T/sshd.pid"
export RDMAQUAL_SSH_CONFIG="$T/ssh_config"
export RDMAQUAL_STATE_DIR="$T/state"
C=tests/integration/lab-cases

start=$(date +%s)
"$RQ" run --nodes 'lab[1-3],labdead' --launcher ssh --fanout 4 --report-dir "$T/rep" \
	--drain-list "$T/drain" $C/node.yaml $C/pairs.yaml >"$T/out" 2>&1
expect_eq "the run fails (a node unreachable, node02's check is not there)" 1 $?
expect_true "and ends in bounded time" test $(( $(date +%s) - start )) -lt 60
expect_grep "lab1's rows pass over ssh" 'PASS +lab\.hello\[lab1\]' "$T/out"
expect_grep "lab3's too" 'PASS +lab\.not_node02\[lab3\]' "$T/out"
expect_grep "the unreachable node ERRORs with ssh's error" \
	'ERROR +lab\.hello\[labdead\] .*labdead unreachable: ssh labdead: .*(refused|exited)' "$T/out"
expect_grep "its pairs ERROR naming it" 'ERROR +lab\.pingpong\[lab3->labdead\] .*peer labdead unreachable' "$T/out"
expect_grep "3 of 4 nodes up" '3 of 4 nodes up \(launcher ssh' "$T/out"
expect_grep "the report names the binary each node ran: this build's copy (none installed there)" \
	'name="[^"]*node\.rdmaqual_exe" value="/tmp/rdmaqual-peer\.[^/]*/rdmaqual-[0-9a-f]{64}"' "$T/rep/latest/junit.xml"
host=$(hostname)
expect_grep "JUnit suite named by the --nodes name, with the hostname the node reported" \
	"<testsuite name=\"lab1\"[^>]* hostname=\"$host\"" "$T/rep/latest/junit.xml"
expect_grep "three nodes on one host report one hostname: said" \
	"nodes lab1 and lab2 both report hostname $host" "$T/out"
expect_eq "lab3's rows are its own (no row of another node under its name)" "lab3 lab3" \
	"$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(' '.join(r['node'] for r in d['results'] if r['id'].endswith('[lab3]')))" "$T/rep/latest/results.json")"
expect_true "each node has its own log" test -s "$T/rep/latest/logs/lab.hello_lab1_.log" -a \
	-s "$T/rep/latest/logs/lab.hello_lab2_.log" -a -s "$T/rep/latest/logs/lab.hello_lab3_.log"
expect_eq "results.json flags the duplicate" "lab1" \
	"$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['lab']['nodes'][2]['same_hostname_as'])" "$T/rep/latest/results.json")"
expect_eq "results.json: lab1's hostname is the node's own" "$host" \
	"$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['lab']['nodes'][0]['hostname'])" "$T/rep/latest/results.json")"
expect_eq "the drain list names the unreachable node" "labdead" "$(cut -d' ' -f1 "$T/drain")"
# Ours: the nodes run under this test's sshd (SetEnv puts $T in their
# environment), and the copy dirs are those this run's report names.
expect_true "no node agent left running" none_with "/tmp/rdmaqual-peer.*/rdmaqual-.* agent" "$T"
copies=$(peer_copies "$T/rep/latest/junit.xml")
expect_eq "the report names the three nodes' copies" 3 "$(echo "$copies" | grep -c .)"
wait_for "the nodes' private copy dirs are removed" 5 none_exist "$copies"
finish

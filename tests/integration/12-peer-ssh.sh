#!/bin/sh
# Two-node mode without a second machine: a private sshd on a loopback
# port stands in for the peer.  Checks that the controller copies its own
# build to the peer (a fresh private dir, never a pre-made one), the peer's
# agent answers over ssh, the peer's facts
# reach the report, and nothing (sshd, agent, copy) is left afterwards.
# An rdmaqual on the peer's PATH is run instead of a copy exactly when its
# --version is this build's (and this build is of a clean tree).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

RQ=${RQ:-build/san/rdmaqual}
SSHD=/usr/sbin/sshd
if [ ! -x "$SSHD" ] || [ "$(id -u)" -ne 0 ]; then
	skip "needs root and openssh-server (make deps)"
fi
T=$(mktemp -d /tmp/rq-it-ssh.XXXXXX)
port=$(( 30000 + $$ % 20000 ))
cleanup() {
	[ -f "$T/sshd.pid" ] && kill "$(cat "$T/sshd.pid")" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
ssh-keygen -q -t ed25519 -N '' -f "$T/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$T/id"
ssh-keygen -q -t ed25519 -N '' -f "$T/id2"
cp "$T/id.pub" "$T/authorized_keys"
# The second key is a hostile node's: its forced command writes terminal
# sequences and a forged row line to stderr before it runs what was asked.
cat >"$T/evil.sh" <<'EVIL'
#!/bin/sh
printf '\033]0;OWNED\007\033[2J\nPASS   evil.fake\n' >&2
exec sh -c "$SSH_ORIGINAL_COMMAND"
EVIL
chmod 755 "$T/evil.sh"
printf 'command="%s" %s\n' "$T/evil.sh" "$(cat "$T/id2.pub")" >>"$T/authorized_keys"
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
SetEnv PATH=$T/peerbin:/usr/bin:/bin
CFG
mkdir "$T/peerbin"
cat >"$T/ssh_config" <<CFG
Host rq-peer
	HostName 127.0.0.1
	Port $port
	User root
	IdentityFile $T/id
	StrictHostKeyChecking no
	UserKnownHostsFile /dev/null
	LogLevel ERROR
Host rq-evil
	HostName 127.0.0.1
	Port $port
	User root
	IdentityFile $T/id2
	IdentitiesOnly yes
	StrictHostKeyChecking no
	UserKnownHostsFile /dev/null
	LogLevel ERROR
CFG
mkdir -p /run/sshd
"$SSHD" -f "$T/sshd_config" -E "$T/sshd.log"
wait_for "private sshd is up" 10 test -s "$T/sshd.pid"
export RDMAQUAL_SSH_CONFIG="$T/ssh_config"
export RDMAQUAL_STATE_DIR="$T/state"
rm -rf /tmp/rdmaqual-peer

# A hostile user on the peer pre-made the old fixed cache dir, world-writable,
# with a script under the predictable name (size + mtime) of this build.
old=$(printf 'rdmaqual-%x-%x' "$(stat -c %s "$RQ")" "$(stat -c %Y "$RQ")")
mkdir -m 1777 /tmp/rdmaqual-peer
printf '#!/bin/sh\ntouch %s/pwned\n' "$T" >"/tmp/rdmaqual-peer/$old"
chmod 755 "/tmp/rdmaqual-peer/$old"

"$RQ" run --report-dir "$T/rep" --target local --peer rq-peer -k runner.pass tests/cases/runner >"$T/run.out" 2>&1
expect_eq "run with a peer" 0 $?
expect_grep "peer facts are in the report" 'name="peer.kernel"' "$T/rep/latest/junit.xml"
expect_true "a planted file in a pre-made cache dir never runs" test ! -e "$T/pwned"
# Ours: the peer side runs under this test's sshd (its PATH holds $T), and
# the copy dir is the one this run's report names.
expect_true "no peer agent left running" none_with "/tmp/rdmaqual-peer.*/rdmaqual-.* agent" "$T"
copy=$(peer_copies "$T/rep/latest/junit.xml")
expect_true "the report names the peer's copy ($copy)" test -n "$copy"
wait_for "the peer's private copy dir is removed" 5 none_exist "$copy"

expect_grep "the peer's agent is the copy" 'name="peer.rdmaqual_exe" value="/tmp/rdmaqual-peer\.[^/]*/rdmaqual-' "$T/rep/latest/junit.xml"

# An "installed" rdmaqual on the peer's PATH: another version is not used;
# this very build is, unless the tree it was built from had changes.
printf '#!/bin/sh\necho "rdmaqual 0.0.1"\n' >"$T/peerbin/rdmaqual"
chmod 755 "$T/peerbin/rdmaqual"
"$RQ" run --report-dir "$T/rep4" --target local --peer rq-peer -k runner.pass tests/cases/runner >"$T/run4.out" 2>&1
expect_eq "run with another version on the peer's PATH" 0 $?
expect_grep "another version on the peer: the copy runs" 'name="peer.rdmaqual_exe" value="/tmp/rdmaqual-peer\.' "$T/rep4/latest/junit.xml"
cp "$RQ" "$T/peerbin/rdmaqual"
"$RQ" run --report-dir "$T/rep5" --target local --peer rq-peer -k runner.pass tests/cases/runner >"$T/run5.out" 2>&1
expect_eq "run with this build on the peer's PATH" 0 $?
case $("$RQ" --version) in
*dirty*) expect_grep "this build is of a changed tree: the copy runs" \
	'name="peer.rdmaqual_exe" value="/tmp/rdmaqual-peer\.' "$T/rep5/latest/junit.xml" ;;
*) expect_grep "the same version on the peer's PATH runs, no copy" \
	"name=\"peer.rdmaqual_exe\" value=\"$T/peerbin/rdmaqual\"" "$T/rep5/latest/junit.xml" ;;
esac
copies=$(peer_copies "$T/rep4/latest/junit.xml" "$T/rep5/latest/junit.xml")
expect_true "the reports name the copies ($copies)" test -n "$copies"
wait_for "no copy dir is left" 5 none_exist "$copies"

# --peer never becomes an ssh option.
"$RQ" run --report-dir "$T/rep3" --target local --peer "-oProxyCommand=touch $T/pwned2" \
	-k runner.pass tests/cases/runner >"$T/run3.out" 2>&1
expect_eq "a --peer with a leading '-' is a usage error" 2 $?
expect_true "and no ProxyCommand ran" test ! -e "$T/pwned2"

# A node's stderr reaches our terminal only made inert, named by the peer;
# its bytes as they came are in the run's logs/ssh-PEER.log.
"$RQ" run --report-dir "$T/rep6" --target local --peer rq-evil -k runner.pass tests/cases/runner \
	>"$T/run6.out" 2>&1
expect_eq "run with a peer whose stderr is hostile" 0 $?
expect_eq "no escape or bell byte reached the terminal" 0 "$(tr -dc '\033\007' <"$T/run6.out" | wc -c)"
expect_grep "the sequence is shown inert, named by the peer" '^rdmaqual: peer rq-evil: \?\]0;OWNED\?\?\[2J$' "$T/run6.out"
expect_nogrep "the forged row line is not a line of its own" '^PASS +evil\.fake' "$T/run6.out"
expect_grep "it is shown as the peer's" '^rdmaqual: peer rq-evil: PASS +evil\.fake$' "$T/run6.out"
expect_true "the raw bytes are in logs/ssh-rq-evil.log" grep -q "$(printf '\033')]0;OWNED" "$T/rep6/latest/logs/ssh-rq-evil.log"

# A peer that does not answer is an ERROR with the reason, within its deadline.
sed -i "s/Port $port/Port 1/" "$T/ssh_config"
"$RQ" run --report-dir "$T/rep2" --target local --peer rq-peer -k runner.pass tests/cases/runner >"$T/run2.out" 2>&1
expect_eq "unreachable peer fails the run" 1 $?
expect_grep "the reason names ssh" 'ERROR.*ssh rq-peer' "$T/run2.out"
# The fixed dir this test planted (nothing else uses that name now).
rm -rf /tmp/rdmaqual-peer
finish

#!/bin/bash
# The fault table (docs/reliability.md): each row injects one fault into a
# real run and records the verdict it produced, the time from the fault to
# the end of the run against the deadline it must meet, and what was left
# behind: processes, QEMUs, temp dirs, run-state records, an MTU not
# restored.  Every row must end within its deadline, with the expected
# verdict, nothing left behind and the earlier report intact; the script
# fails otherwise.  It writes the table (markdown) to $RQ_FAULT_TABLE
# (default build/fault-table.md) and prints it.
#
# Rows on guests boot QEMU: on a shared machine run the script under
# `flock /tmp/rq-vm.lock` as every VM test (make check runs one at a time);
# rows with a peer use a private sshd on loopback as 12-peer-ssh.sh does.
# RQ_FAULT_ROWS="local peer vm state" picks groups (default: all).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

RQ=${RQ:-build/san/rdmaqual}
RQ_VM=${RQ_VM:-./rdmaqual}
ROWS=${RQ_FAULT_ROWS:-local peer vm state}
TABLE=${RQ_FAULT_TABLE:-build/fault-table.md}
F=tests/integration/faults
T=$(mktemp -d /tmp/rq-it-faults.XXXXXX)
SSHD_PID=
cleanup() {
	[ -n "$SSHD_PID" ] && kill "$SSHD_PID" 2>/dev/null
	mountpoint -q "$T/full" 2>/dev/null && umount "$T/full"
	if [ -n "${RQ_FAULT_KEEP:-}" ]; then echo "kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT
export RDMAQUAL_STATE_DIR="$T/state"
# The agents' scratch dirs go here, so what a run leaves is visible.
export TMPDIR="$T/tmp"
mkdir -p "$TMPDIR" "$(dirname "$TABLE")"
: >"$T/table"

ms() { date +%s%3N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1000 }'; }
within() { awk -v s="$1" -v d="$2" 'BEGIN { exit !(s <= d) }'; }

# verdicts REPDIR: "case=VERDICT ..." from results.json
verdicts() {
	jq -r '[.results[] | "\(.case)=\(.verdict)"] | join(" ")' "$1/results.json" 2>/dev/null ||
		echo "no valid results.json"
}
# report_ok REPDIR: junit.xml and results.json are whole
report_ok() { xmllint --noout "$1/junit.xml" 2>/dev/null && jq -e .results "$1/results.json" >/dev/null 2>&1; }

# left PATTERN...: what is left behind: processes whose argv matches a
# pattern (pgrep -f), the agents' temp dirs, run-state records, the guests'
# dirs of runner pid $RUNNER.
RUNNER=
# mine PATTERN: pids whose argv matches and whose environment names this
# script's dir (other helpers' runs are not ours to judge)
mine() {
	for q in $(pgrep -f -- "$1"); do
		{ tr '\0' '\n' <"/proc/$q/environ"; } 2>/dev/null | grep -qF "$T" && printf '%s ' "$q"
	done
}
left() {
	out=
	for p in "$@"; do
		pids=$(mine "$p")
		[ -n "$pids" ] && out="$out process '$p' ($pids);"
	done
	# the peer copies this script's sshd made (peer-wrap.sh lists them)
	pd=
	if [ -r "${S:-$T}/fault.dirs" ]; then
		while IFS= read -r d; do
			[ -e "$d" ] && pd="$pd$d "
		done <"${S:-$T}/fault.dirs"
	fi
	[ -n "$pd" ] && out="$out peer copies $pd;"
	t=$(find "$TMPDIR" -mindepth 1 -maxdepth 1 -printf '%f ')
	[ -n "$t" ] && out="$out temp dirs $t;"
	s=$(find "$T/state" -mindepth 1 -maxdepth 1 ! -name lock -printf '%f ' 2>/dev/null)
	[ -n "$s" ] && out="$out state records $s;"
	if [ -n "$RUNNER" ]; then
		q=$(pgrep -f -- "/tmp/rq-$RUNNER-" | tr '\n' ' ')
		[ -n "$q" ] && out="$out QEMU ($q);"
		d=$(find /tmp -maxdepth 1 -name "rq-$RUNNER-*" | tr '\n' ' ')
		[ -n "$d" ] && out="$out guest dirs $d;"
	fi
	echo "${out:-nothing}"
}

# row NAME FAULT EXPECTED GOT SECONDS DEADLINE LEFT [EARLIER]
row() {
	name=$1 fault=$2 want=$3 got=$4 took=$5 dl=$6 lb=$7 earlier=${8:-n/a}
	printf '| %s | %s | %s | %s s / %s s | %s | %s |\n' "$name" "$fault" "$got" "$took" "$dl" \
		"$lb" "$earlier" >>"$T/table"
	expect_eq "$name: verdict" "$want" "$got"
	if within "$took" "$dl"; then ok "$name: ended ${took} s after the fault (deadline $dl s)"
	else bad "$name: ended ${took} s after the fault, past its deadline of $dl s"; fi
	expect_eq "$name: nothing left behind" nothing "$lb"
	[ "$earlier" = n/a ] || expect_eq "$name: the earlier report is intact" intact "$earlier"
	# counted once: the next row starts clean
	rm -rf "${TMPDIR:?}"/* "$T"/state/rq-* 2>/dev/null
}

# run_local CASE [ARGS...]: one run of the local cases CASE (a glob); sets REP, TOOK
run_local() {
	REP="$T/rep-$1"
	t0=$(ms)
	"$RQ" run --report-dir "$REP" -k "$1" "${@:2}" "$F/local.yaml" >"$T/$1.out" 2>&1
	TOOK=$(secs "$t0" "$(ms)")
}

# wait_proc PATTERN SECONDS: until a process matches
wait_proc() {
	end=$(( $(date +%s) + $2 ))
	until [ -n "$(mine "$1")" ]; do
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.05
	done
}

# An earlier report that later rows must not damage.
"$RQ" run --report-dir "$T/rep-earlier" -k fault.small "$F/local.yaml" >"$T/earlier.out" 2>&1
EARLIER=$(readlink -f "$T/rep-earlier/latest")
cp "$EARLIER/results.json" "$T/earlier.json"
rm -rf "${TMPDIR:?}"/*
earlier() {
	if report_ok "$EARLIER" && cmp -s "$EARLIER/results.json" "$T/earlier.json"; then echo intact
	else echo damaged; fi
}

# ---- local rows -------------------------------------------------------------

if [[ " $ROWS " = *" local "* ]]; then
	echo "-- local rows"
	run_local fault.hung_tool
	row "hung tool" "\`sleep\` that never ends, case timeout 2 s" fault.hung_tool=ERROR \
		"$(verdicts "$REP/latest")" "$TOOK" 6 "$(left 'sleep 1000.11')" "$(earlier)"

	run_local fault.term_ignored
	row "SIGTERM ignored" "a child and its child ignore SIGTERM, case timeout 2 s" \
		fault.term_ignored=ERROR "$(verdicts "$REP/latest")" "$TOOK" 8 \
		"$(left 'sleep 1000.12' 'sleep 1000.13')" "$(earlier)"

	run_local fault.flood
	logsz=$(stat -c %s "$REP/latest/logs/fault.flood.log" 2>/dev/null || echo 0)
	repsz=$(cat "$REP/latest/junit.xml" "$REP/latest/results.json" | wc -c)
	row "100 MB of output" "100 MB on stdout, then the expected line (log kept: $((logsz / 1024)) KiB, reports $((repsz / 1024)) KiB)" \
		fault.flood=PASS "$(verdicts "$REP/latest")" "$TOOK" 30 "$(left 'head -c 100000000')" "$(earlier)"
	expect_true "100 MB of output: the reports stay small" [ "$repsz" -lt $((8 << 20)) ]

	run_local 'fault.bytes_*'
	row "invalid UTF-8, control bytes, NUL" "bytes 0xff 0xfe 0xc0, ESC sequences, CR and BS, NUL before the expected text" \
		"fault.bytes_invalid=PASS fault.bytes_nul=PASS fault.bytes_after=PASS" \
		"$(verdicts "$REP/latest")" "$TOOK" 10 "$(left 'printf')" "$(earlier)"
	expect_true "invalid bytes: junit.xml and results.json are valid" report_ok "$REP/latest"
	expect_grep "invalid bytes: the log keeps the output (U+FFFD for bad bytes)" \
		$'\xef\xbf\xbd.* not utf-8 .*red' "$REP/latest/logs/fault.bytes_invalid.log"

	# SIGINT / SIGTERM mid-case: the run stops, its report is whole, the
	# interrupted case says so, nothing keeps running.
	for sig in INT TERM; do
		REP="$T/rep-$sig"
		"$RQ" run --report-dir "$REP" -k fault.slow "$F/local.yaml" >"$T/$sig.out" 2>&1 &
		pid=$!
		wait_proc 'sleep 1000.3' 20
		t0=$(ms)
		kill -"$sig" "$pid"
		wait "$pid"
		rc=$?
		took=$(secs "$t0" "$(ms)")
		got="$(verdicts "$REP/latest") exit=$rc"
		report_ok "$REP/latest" || got="$got, report invalid"
		row "SIG$sig mid-case" "SIG$sig to the runner while a 60 s case runs" \
			"fault.slow=ERROR exit=1" "$got" "$took" 5 "$(left 'sleep 1000.3')" "$(earlier)"
	done

	# A full report disk: the run must say so and fail, the earlier report
	# on that disk stays whole.
	mkdir -p "$T/full"
	if mount -t tmpfs -o size=512k rq-faults "$T/full" 2>/dev/null; then
		"$RQ" run --report-dir "$T/full" -k fault.small "$F/local.yaml" >"$T/full0.out" 2>&1
		before=$(readlink -f "$T/full/latest")
		cp "$before/results.json" "$T/full0.json"
		dd if=/dev/zero of="$T/full/filler" bs=4k 2>/dev/null
		t0=$(ms)
		"$RQ" run --report-dir "$T/full" -k 'fault.bytes_*' "$F/local.yaml" >"$T/full.out" 2>&1
		rc=$?
		took=$(secs "$t0" "$(ms)")
		intact=damaged
		report_ok "$before" && cmp -s "$before/results.json" "$T/full0.json" && intact=intact
		said=no
		grep -qiE 'no space|cannot write|ENOSPC' "$T/full.out" && said=yes
		row "full report disk" "report dir on a full 512 KiB tmpfs" "exit=1 said=yes" \
			"exit=$rc said=$said" "$took" 10 "$(left 'printf')" "$intact"
		umount "$T/full"
	else
		echo "  SKIP full report disk: cannot mount a tmpfs here"
	fi
fi

# ---- a peer over ssh ----------------------------------------------------------

start_sshd() {
	S=$T/ssh
	mkdir -p "$S"
	chmod 700 "$S"
	port=$(( 30000 + ($$ + 7) % 20000 ))
	ssh-keygen -q -t ed25519 -N '' -f "$S/host_key"
	ssh-keygen -q -t ed25519 -N '' -f "$S/id"
	# The peer's agent runs through a wrapper that can misbehave (see faults/peer-wrap.sh).
	printf 'command="%s/%s/peer-wrap.sh" %s\n' "$PWD" "$F" "$(cat "$S/id.pub")" >"$S/authorized_keys"
	cat >"$S/sshd_config" <<-CFG
	Port $port
	ListenAddress 127.0.0.1
	HostKey $S/host_key
	PidFile $S/sshd.pid
	AuthorizedKeysFile $S/authorized_keys
	PermitRootLogin prohibit-password
	PasswordAuthentication no
	StrictModes no
	UsePAM no
	SetEnv RQ_PEER_FAULT_FILE=$S/fault
	CFG
	cat >"$S/ssh_config" <<-CFG
	Host rq-peer
		HostName 127.0.0.1
		Port $port
		User root
		IdentityFile $S/id
		StrictHostKeyChecking no
		UserKnownHostsFile /dev/null
		LogLevel ERROR
	CFG
	mkdir -p /run/sshd
	/usr/sbin/sshd -f "$S/sshd_config" -E "$S/sshd.log" || return 1
	for _ in $(seq 50); do [ -s "$S/sshd.pid" ] && break; sleep 0.1; done
	SSHD_PID=$(cat "$S/sshd.pid")
	export RDMAQUAL_SSH_CONFIG="$S/ssh_config"
}

if [[ " $ROWS " = *" peer "* ]]; then
	echo "-- peer rows"
	if [ "$(id -u)" -ne 0 ] || [ ! -x /usr/sbin/sshd ] || ! start_sshd; then
		echo "  SKIP peer rows: needs root and openssh-server"
	else
		# garbage and an answer nobody asked for, after the peer's hello
		echo garbage >"$S/fault"
		REP="$T/rep-garbage"
		t0=$(ms)
		"$RQ" run --report-dir "$REP" --target local --peer rq-peer -k fault.small \
			"$F/local.yaml" >"$T/garbage.out" 2>&1
		rc=$?
		took=$(secs "$t0" "$(ms)")
		said=no
		grep -q 'peer.error' "$REP/latest/junit.xml" 2>/dev/null && said=yes
		row "agent garbage, unsolicited answer" "the peer's agent answers an id nobody asked for, then a line of garbage" \
			"fault.small=PASS exit=0 peer.error=yes" "$(verdicts "$REP/latest") exit=$rc peer.error=$said" \
			"$took" 20 "$(left 'rdmaqual.* agent --stdio' 'ssh .*rq-peer')" "$(earlier)"

		# a newline flood: the peer's agent sends only empty lines after its hello
		echo newlines >"$S/fault"
		REP="$T/rep-newlines"
		t0=$(ms)
		/usr/bin/time -f '%U %S' -o "$T/newlines.cpu" "$RQ" run --report-dir "$REP" --target local \
			--peer rq-peer -k fault.small "$F/local.yaml" >"$T/newlines.out" 2>&1
		rc=$?
		took=$(secs "$t0" "$(ms)")
		cpu=$(awk '{ printf "%.2f", $1 + $2 }' "$T/newlines.cpu" 2>/dev/null)
		said=no
		grep -q 'peer.error.*empty lines' "$REP/latest/junit.xml" 2>/dev/null && said=yes
		row "newline flood" "the peer's agent sends only empty lines after its hello (runner CPU: ${cpu:-?} s)" \
			"fault.small=PASS exit=0 peer.error=yes" "$(verdicts "$REP/latest") exit=$rc peer.error=$said" \
			"$took" 20 "$(left 'rdmaqual.* agent --stdio' 'ssh .*rq-peer' '^yes $')" "$(earlier)"

		# the peer vanishes: its session (agent, shell) is SIGKILLed while a case runs
		echo vanish >"$S/fault"
		REP="$T/rep-vanish"
		"$RQ" run --report-dir "$REP" --target local --peer rq-peer -k fault.hung_tool \
			"$F/local.yaml" >"$T/vanish.out" 2>&1 &
		pid=$!
		wait_proc 'sleep 1000.11' 30
		t0=$(ms)
		pg=$(cat "$S/fault.pgid" 2>/dev/null)
		[ -n "$pg" ] && kill -KILL -- "-$pg"
		wait "$pid"
		rc=$?
		took=$(secs "$t0" "$(ms)")
		said=no
		grep -q 'peer.error' "$REP/latest/junit.xml" 2>/dev/null && said=yes
		row "peer vanishes mid-case" "the peer's session (agent, shell) is SIGKILLed while a 2 s case runs" \
			"fault.hung_tool=ERROR exit=1 peer.error=yes" \
			"$(verdicts "$REP/latest") exit=$rc peer.error=$said" "$took" 6 \
			"$(left 'rdmaqual.* agent --stdio' 'ssh .*rq-peer' 'sleep 1000.11')" "$(earlier)"
		unset RDMAQUAL_SSH_CONFIG
	fi
fi

# ---- run-state records ------------------------------------------------------

if [[ " $ROWS " = *" state "* ]] && ! unshare -n true 2>/dev/null; then
	echo "  SKIP state rows: cannot make a private network namespace here"
elif [[ " $ROWS " = *" state "* ]]; then
	echo "-- state rows"
	# A stale record forged in the state dir: a dead run's VM record whose
	# dir climbs out of /tmp/rq-*, an SM record naming a live process by a
	# pid whose command line differs, an undo record.  cleanup restores the
	# undo (lo's MTU in a private network namespace) and touches nothing else.
	mkdir -p "$T/victim" "$T/state"
	chmod 700 "$T/state"
	sleep 1000.6 &
	decoy=$!
	dead=999999
	printf 'vm %d %s/../victim\n' "$decoy" "$T" >"$T/state/rxevm-$dead"
	printf 'pid %d 736c65657000\ndir %s/victim\n' "$decoy" "$T" >"$T/state/ibsm-$dead.run"
	boot=$(cat /proc/sys/kernel/random/boot_id)
	{
		# one of another boot first: dropped, and not "the first record"
		# (before, it was, and this boot's records were dropped after it)
		printf 'mtu\t/\tlo\t1500\tboot=00000000-dead-beef-0000-000000000000\tifindex=1,mac=00:00:00:00:00:00\t1\n'
		# lo's MTU from before the (killed) change, this boot
		printf 'mtu\t/\tlo\t65536\tboot=%s\tifindex=1,mac=00:00:00:00:00:00\t%s\n' "$boot" "$(date +%s)"
		# a later record of the same setting: it does not apply
		printf 'mtu\t/\tlo\t1280\tboot=%s\tifindex=1,mac=00:00:00:00:00:00\t%s\n' "$boot" "$(date +%s)"
	} >"$T/state/undo.journal"
	t0=$(ms)
	unshare -n sh -c "ip link set lo mtu 9000 && '$RQ' cleanup >'$T/cleanup.out' 2>&1; ip -o link show lo" \
		>"$T/lo.out" 2>&1
	took=$(secs "$t0" "$(ms)")
	mtu=$(sed -n 's/.* mtu \([0-9]*\) .*/\1/p' "$T/lo.out")
	alive=killed
	kill -0 "$decoy" 2>/dev/null && alive=alive
	kill "$decoy" 2>/dev/null
	wait "$decoy" 2>/dev/null
	victim=removed
	[ -d "$T/victim" ] && victim=kept
	sed 's/^/    | /' "$T/cleanup.out"
	row "stale forged records" "a dead run's records: a VM dir \`/tmp/rq-.../../victim\`, an SM pid of a live unrelated process, lo's MTU journaled three times (another boot, then this boot twice)" \
		"mtu=65536 decoy=alive victim=kept" "mtu=$mtu decoy=$alive victim=$victim" "$took" 5 \
		"$(left 'sleep 1000.6')" "$(earlier)"
fi

# ---- guests -------------------------------------------------------------------

vm_rows() {
	# A guest panics mid-case: that case ERRORs with the console tail, the
	# next one runs on fresh guests.
	REP="$T/rep-panic"
	"$RQ_VM" run --target rxe-vm --accel tcg --vm-topology vm1 --report-dir "$REP" \
		-k 'vmfault.[ab]_*' "$F/vm.yaml" >"$T/panic.out" 2>&1 &
	RUNNER=$!
	# The runner removes the panicked guest's dir at once: follow its console
	# from the moment it exists and stamp the panic line as it is written.
	c=
	rm -f "$T/panic.t"
	for _ in $(seq 900); do
		c=$(find /tmp -maxdepth 2 -path "/tmp/rq-$RUNNER-*/vm0.console" 2>/dev/null | head -n1)
		[ -n "$c" ] && break
		kill -0 "$RUNNER" 2>/dev/null || break
		sleep 0.05
	done
	[ -n "$c" ] && { tail --pid="$RUNNER" -n +1 -f "$c" 2>/dev/null |
		grep -m1 -q 'Kernel panic\|sysrq: Trigger a crash' && ms >"$T/panic.t"; } &
	stamp=$!
	wait "$RUNNER"
	rc=$?
	wait "$stamp" 2>/dev/null
	took=never
	[ -s "$T/panic.t" ] && took=$(secs "$(cat "$T/panic.t")" "$(ms)")
	row "guest panic" "the guest kernel panics mid-case (sysrq c); the next case" \
		"vmfault.a_panic=ERROR vmfault.b_after=PASS exit=1" "$(verdicts "$REP/latest") exit=$rc" \
		"$took" 60 "$(left "/tmp/rq-$RUNNER-")" "$(earlier)"
	expect_grep "guest panic: the reason carries the console" 'panic|Kernel|sysrq' "$REP/latest/results.json"

	# QEMU is SIGKILLed mid-case (a guest that vanishes); the next case.
	REP="$T/rep-qemu"
	"$RQ_VM" run --target rxe-vm --accel tcg --vm-topology vm1 --report-dir "$REP" \
		-k 'vmfault.[ce]_*' "$F/vm.yaml" >"$T/qemu.out" 2>&1 &
	RUNNER=$!
	rec="$T/state/rxevm-$RUNNER"
	q=
	# c_long is the first case: kill once the guest's agent is up and 2 s into it
	for _ in $(seq 1800); do
		q=$(sed -n 's/^vm \([1-9][0-9]*\) .*/\1/p' "$rec" 2>/dev/null | head -n1)
		d=$(sed -n 's/^vm [0-9]* //p' "$rec" 2>/dev/null | head -n1)
		[ -n "$q" ] && grep -q RQ-READY "$d/vm0.console" 2>/dev/null && break
		kill -0 "$RUNNER" 2>/dev/null || break
		sleep 0.05
	done
	sleep 2
	t0=$(ms)
	[ -n "$q" ] && kill -KILL "$q"
	wait "$RUNNER"
	rc=$?
	took=$(secs "$t0" "$(ms)")
	row "killed QEMU" "QEMU SIGKILLed 2 s into a 60 s case; the next case" \
		"vmfault.c_long=ERROR vmfault.e_after_kill=PASS exit=1" "$(verdicts "$REP/latest") exit=$rc" \
		"$took" 60 "$(left "/tmp/rq-$RUNNER-")" "$(earlier)"

	# The runner is SIGKILLed while a case has changed the guest's MTU, then
	# `rdmaqual cleanup`: no QEMU, dir or record is left.
	REP="$T/rep-kill"
	"$RQ_VM" run --target rxe-vm --accel tcg --vm-topology vm1 --report-dir "$REP" \
		-k 'vmfault.d_*' "$F/vm.yaml" >"$T/kill.out" 2>&1 &
	RUNNER=$!
	rec="$T/state/rxevm-$RUNNER"
	for _ in $(seq 900); do
		d=$(sed -n 's/^vm [0-9]* //p' "$rec" 2>/dev/null | head -n1)
		[ -n "$d" ] && grep -q 'rq-fault: mtu changed' "$d/vm0.console" 2>/dev/null && break
		kill -0 "$RUNNER" 2>/dev/null || break
		sleep 0.1
	done
	t0=$(ms)
	kill -KILL "$RUNNER"
	wait "$RUNNER" 2>/dev/null
	"$RQ_VM" cleanup >"$T/kill-cleanup.out" 2>&1
	rc=$?
	# gone, or a zombie for init to reap
	for _ in $(seq 50); do
		[ -z "$(pgrep -f "/tmp/rq-$RUNNER-")" ] && break
		sleep 0.1
	done
	took=$(secs "$t0" "$(ms)")
	said=no
	grep -q "removed /tmp/rq-$RUNNER-" "$T/kill-cleanup.out" && said=yes
	row "SIGKILL mid-MTU-change, then cleanup" "runner SIGKILLed after the guest's MTU changed (the guest dies with it); \`rdmaqual cleanup\`" \
		"cleanup exit=0 removed-guest-dir=yes" "cleanup exit=$rc removed-guest-dir=$said" "$took" 15 \
		"$(left "/tmp/rq-$RUNNER-")" "$(earlier)"
	RUNNER=
}

if [[ " $ROWS " = *" vm "* ]]; then
	echo "-- guest rows"
	if ! command -v qemu-system-x86_64 >/dev/null; then
		echo "  SKIP guest rows: qemu-system-x86_64 not installed"
	else
		vm_rows
	fi
fi

{
	echo "| fault | injected | verdict | fault to end / deadline | left behind | earlier report |"
	echo "| --- | --- | --- | --- | --- | --- |"
	cat "$T/table"
} >"$TABLE"
echo
cat "$TABLE"
echo
finish

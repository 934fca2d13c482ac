#!/bin/sh
# The forced command of the fault table's private sshd (75-faults.sh): runs
# what the controller asked for, and when that starts the peer's agent,
# misbehaves as $RQ_PEER_FAULT_FILE says:
#   garbage  after the agent's first answer (hello), an answer with an id
#            nobody asked for and a line that is not JSON (a login banner)
#   newlines after the agent's first answer, empty lines only, without end
#   vanish   records the session's process group in FILE.pgid, so the test
#            can SIGKILL the whole peer side mid-case
cmd=$SSH_ORIGINAL_COMMAND
fault=$(cat "$RQ_PEER_FAULT_FILE" 2>/dev/null)
case $cmd in
*"agent --stdio"*) ;;
*"mktemp -d /tmp/rdmaqual-peer."*)
	# the copy: its dir goes to FILE.dirs, so the test checks the copies
	# it made, not every rdmaqual-peer dir on the host
	out=$(sh -c "$cmd")
	rc=$?
	printf '%s\n' "$out" | tee -a "$RQ_PEER_FAULT_FILE.dirs"
	exit $rc
	;;
*) exec sh -c "$cmd" ;;
esac
case $fault in
garbage)
	sh -c "$cmd" | {
		IFS= read -r first
		printf '%s\n' "$first"
		printf '{"v":1,"id":4242,"ok":true}\n'
		printf 'Last login: Mon Nov 30 from 10.0.0.1 \033[1mWelcome\033[0m\n'
		cat
	}
	;;
newlines)
	sh -c "$cmd" | {
		IFS= read -r first
		printf '%s\n' "$first"
		exec yes ''
	}
	;;
vanish)
	ps -o pgid= $$ | tr -d ' ' >"$RQ_PEER_FAULT_FILE.pgid"
	exec sh -c "$cmd"
	;;
*)
	exec sh -c "$cmd"
	;;
esac

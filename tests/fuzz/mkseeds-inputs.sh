#!/bin/sh
# Regenerates the seeds of fuzz_inputs (tests/fuzz/corpus-inputs/NAME--WHAT):
# one selector byte, the target's number in fuzz_inputs.c, then its input,
# from the project's own fixtures or synthesized here.  Seeds named
# regress-* (inputs that once broke something) are kept.
# Run from the repository root.
set -eu
out=tests/fuzz/corpus-inputs
mkdir -p "$out"
find "$out" -type f ! -name 'regress-*' -delete

# shellcheck disable=SC2059 # the format is the selector byte as an octal escape
sel() { printf "\\$(printf '%03o' "$1")"; }
# seed N NAME: selector N + stdin
seed() { { sel "$1"; cat; } > "$out/$2"; }

# 0 compare: a results.json against itself with one verdict and one figure changed
{ cat tests/golden/results.json; printf '\0'
  sed -e '0,/"PASS"/s//"FAIL"/' tests/golden/results.json; } | seed 0 compare--golden

# 1 agent answers: in order, out of order, unsolicited, garbage
printf '%s\n' '{"v":1,"id":1,"ok":true,"agent":"rdmaqual","version":"0","proto":1}' \
	'{"v":1,"id":2,"ok":true,"facts":{"kernel":"6.1"}}' | seed 1 agent-ctl--answers
printf '%s\n' '{"v":1,"id":2,"ok":true}' '{"v":1,"id":77,"ok":true}' \
	'{"v":1,"id":1,"ok":false,"error":"x"}' | seed 1 agent-ctl--unsolicited
printf 'login: \r\n{"v":1,"id":1,"ok":true}\n' | seed 1 agent-ctl--console-noise
printf '{"v":2,"id":1,"ok":true}\n' | seed 1 agent-ctl--version

# 2 agent requests (exec and run reach fork, which fails in the fuzzer)
printf '%s\n' '{"v":1,"id":1,"op":"hello"}' '{"v":1,"id":2,"op":"ping"}' \
	'{"v":1,"id":3,"op":"exec","argv":["true"],"timeout_ms":1000}' \
	'{"v":1,"id":4,"op":"run","case":{"file":"/x.yaml","at":[1,1],"keys":[{"key":"name","at":[1,1],"value":{"text":"x","at":[1,7]}},{"key":"kind","at":[2,1],"value":{"text":"command","at":[2,7]}},{"key":"argv","at":[3,1],"value":{"list":[{"text":"true","at":[3,8]}],"at":[3,7]}}]},"role":"single","target":"local","timeout_ms":1000,"timeout_mul":1}' \
	'{"v":1,"id":5,"op":"cancel","target_id":3}' '{"v":2,"id":6,"op":"hello"}' \
	'{"id":7}' 'not json' '{"v":1,"id":8,"op":"shutdown"}' | seed 2 agent-serve--ops
printf '{"v":1,"id":1,"op":"nope"}\r\n\n   \n{"v":1,"id":-1,"op":"hello"}\n' | seed 2 agent-serve--odd

# 3 manifests
for n in rxe-vm1 cx7-ndr-ib; do
	m=fixtures/nodes/$n/capture/manifest
	[ -f "$m" ] && seed 3 "manifest--$n" < "$m"
done
printf 'rdmaqual-capture\t1\nmeta\thost\tnode1\ntool\tcapture/tools/x.out\t0\tibstat\ntool\tcapture/tools/ibv_devinfo_-v.out\t0\tibv_devinfo\t-v\ntool\t../../etc/passwd\t0\trdma\tlink\tshow\n' |
	seed 3 manifest--synth

# 4 device trees: the fixture nodes' RDMA parts, as "f/l/d PATH=..." lines
tree() {
	(cd "fixtures/nodes/$1" && {
		find sys/class/infiniband sys/class/infiniband_verbs sys/class/net -maxdepth 1 -type l |
			while read -r p; do echo "l $p=$(readlink "$p")"; done
		find -L sys/class/infiniband/ -maxdepth 2 -type l 2>/dev/null | head -20 |
			while read -r p; do echo "l $p=$(readlink "$p")"; done
		find sys/class/infiniband -maxdepth 1 -type l | while read -r d; do
			r=$(cd "$d" && pwd -P); r=${r#"$(pwd -P)/"}
			find "$r" -type f -size -200c 2>/dev/null | grep -v '/gids/[1-9]' | head -40 |
				while read -r f; do printf 'f %s=%s\n' "$f" "$(sed ':a;N;$!ba;s/\n/\\n/g' "$f")"; done
			find "$r" -type l 2>/dev/null | head -10 |
				while read -r f; do echo "l $f=$(readlink "$f")"; done
		done
	}) | head -c 7000
}
for n in rxe-vm1 cx7-ndr-ib cx6dx-roce-2numa; do tree "$n" | seed 4 "rdmadev--$n"; done
printf 'l sys/class/infiniband/loop=loop\nl sys/class/infiniband/out=/etc\nd sys/class/infiniband/empty\n' |
	seed 4 rdmadev--hostile

# 5 IRQ names and cpu lists
printf 'mlx5_comp3@pci:0000:3b:00.0\n0-3,8,10-11' | seed 5 irq--comp
printf 'mlx5_async0@pci:0000:3b:00.1\n255' | seed 5 irq--async
printf 'mlx5_combined7\n0,2,4,6' | seed 5 irq--combined

# 6 out-of-band: length-prefixed messages
printf '\0\0\0\031lid 2 qpn 17 psn 5 gid ::1\0\0\0\005ready\0\0\0\004data' | seed 6 oob--good
printf '\0\0\020\001' | seed 6 oob--toolong
printf '\0\0\0\003a\0b' | seed 6 oob--nul

# 7 opensm.conf
# shellcheck disable=SC2094 # seed writes $out/NAME, not the file it reads
for f in fixtures/opensm/*.conf; do seed 7 "opensm-conf--$(basename "$f")" < "$f"; done
printf 'sm_key 0xdeadbeefcafe1234\nm_key 0x1234567812345678\nsa_key 0x0000000000000001\n' |
	seed 7 opensm-conf--keys

# 8 ibsim .net
# shellcheck disable=SC2094 # as above
for f in fixtures/fabrics/*.net; do seed 8 "ibnet--$(basename "$f")" < "$f"; done

# 9 redaction: host name, NUL, text with secrets (0xff KIND DELIMS HEX...)
printf 'node07\0port GUID \377\000\000\021\042\063\104\125\146\167\210 and \377\001\017\001\002\003\004\005\006\007\010\011\012\013\014\015\016\017 on node07\n' |
	seed 9 redact--guids
printf 'nodeA1\0gid \377\002\014abcdef0123456789 mac \377\004\001abcdef012345 ipoib \377\005\002abcdef0123456789\nfe80 \377\003\200abcdef0123456789\n' |
	seed 9 redact--gids

# 10-12 run-state records (@ROOT@ is the fuzzer's sandbox)
printf 'mtu\t@ROOT@/undo\teth0\t9000\nirq\t@ROOT@/undo\t5\t0-1\nmtu\t/\tlo\t65536\nirq\t/\t5\t0\n' |
	seed 10 undo--journal
printf 'vm 4242 /tmp/rq-4242-0\nvm 4243 /tmp/rq-4242-0\nvm 1 @ROOT@/x\n' | seed 11 vm-state--record
printf 'dir /tmp/rq-ibsim-abc\npid 4242 2f7573722f7362696e2f6f70656e736d00\n' | seed 12 sm-state--record

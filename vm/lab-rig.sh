#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A lab of QEMU guests for `rdmaqual run --nodes`: N guests (default 4,
# vm0..vmN-1) with rdma_rxe on one virtual L2 segment, each running sshd,
# reachable from the host as lab nodes are.  Runs CMD inside the rig's
# network namespace once every guest answers ssh, then tears it all down
# (QEMUs, namespace, keys), also when CMD fails or the rig is interrupted.
#
#   vm/lab-rig.sh [-n N] [--degrade vmK] [--slurm] [--deb FILE] -- CMD [ARGS...]
#
# The segment: a network namespace made here (rqlab<pid>) holding a bridge
# (10.77.1.254/24) and one tap per guest; QEMU runs in the namespace and
# guest K's eth0 is 10.77.1.(K+1), its rxe0 on eth0.  Nothing is routed to
# or from the host's own interfaces.  CMD sees:
#   RDMAQUAL_SSH_CONFIG  an ssh_config naming vm0.. (root, the rig's key,
#                        the rig's known_hosts: host keys are checked)
#   RQ_LAB_NODES         the hostlist, "vm[0-3]"
#   RQ_LAB_DIR           the rig's dir (consoles console-vmK.log)
# --degrade vmK deletes that guest's rxe0 before CMD runs (a node whose
# RDMA link is gone; its node-local and pair rows must single it out).
# --slurm makes the rig a Slurm cluster as well: munged (a key made here)
# and slurmctld in the namespace on the bridge address, munged and slurmd
# in every guest (started over ssh once it answers), partition "lab" of
# vm0..; configuration, state and logs under RQ_LAB_DIR/slurm, the same
# path on the host and on each guest's own tmpfs (vm/slurm-conf.sh).  CMD
# then also sees SLURM_CONF, so `salloc -N4 rdmaqual run --nodes slurm`
# works in it.
# --deb FILE installs that rdmaqual package in every guest as on a lab
# node (dpkg -i, from the .deb sent over ssh, not from the host's tree):
# the guest's /usr and /var/lib/dpkg get an overlay in guest memory over
# the host's read-only ones, so the host is not touched.  CMD then also
# sees RQ_LAB_RDMAQUAL, the same package unpacked in the rig's dir
# (dpkg-deb -x; it runs from there), to be the controller: the same
# version as the nodes' /usr/bin/rdmaqual, which the ssh launcher then
# runs instead of a copy.
#
# The guests: the rxe-vm image (kernel + initramfs from `rdmaqual vm
# image`), vm/init with rq.lab=DIR (sshd instead of the agent port).  Must
# run as root; take /tmp/rq-vm.lock around it on a shared host.
# Environment: RQ (the rdmaqual binary, default ./rdmaqual),
# RQ_LAB_ACCEL (tcg|kvm, default tcg), RQ_VM_MEM_MB (default 512),
# RQ_LAB_READY_S (boot deadline, default 180).
set -u
cd "$(dirname "$0")/.." || exit 1

n=4 degrade='' slurm='' deb=''
while [ $# -gt 0 ]; do
	case $1 in
	-n) n=$2; shift 2 ;;
	--degrade) degrade=$2; shift 2 ;;
	--slurm) slurm=1; shift ;;
	--deb) deb=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "lab-rig: unknown option $1" >&2; exit 2 ;;
	esac
done
[ $# -gt 0 ] || { echo "usage: vm/lab-rig.sh [-n N] [--degrade vmK] [--slurm] [--deb FILE] -- CMD..." >&2; exit 2; }
if [ -n "$deb" ] && [ ! -r "$deb" ]; then
	echo "lab-rig: --deb $deb: no such package (make deb)" >&2
	exit 2
fi
case $n in
'' | *[!0-9]*) echo "lab-rig: -n wants a number" >&2; exit 2 ;;
esac
if [ "$n" -lt 2 ] || [ "$n" -gt 16 ]; then
	echo "lab-rig: -n between 2 and 16" >&2
	exit 2
fi
[ "$(id -u)" -eq 0 ] || { echo "lab-rig: needs root (network namespace, taps)" >&2; exit 77; }
for t in ip ssh ssh-keygen qemu-system-x86_64 /usr/sbin/sshd; do
	command -v "$t" >/dev/null 2>&1 || { echo "lab-rig: $t not found (make deps)" >&2; exit 77; }
done
if [ -n "$slurm" ]; then
	for t in slurmctld slurmd salloc srun munged mungekey tar; do
		command -v "$t" >/dev/null 2>&1 || { echo "lab-rig: --slurm: $t not found (make deps)" >&2; exit 77; }
	done
fi
RQ=${RQ:-rdmaqual}
case $RQ in /*) ;; *) RQ=$PWD/$RQ ;; esac
[ -x "$RQ" ] || { echo "lab-rig: no $RQ (make all)" >&2; exit 2; }

img=$("$RQ" vm image) || { echo "lab-rig: rdmaqual vm image failed" >&2; exit 1; }
kimage=$(echo "$img" | sed -n 's/^image: *\([^ ]*\).*/\1/p')
initrd=$(echo "$img" | sed -n 's/^initramfs: *//p')
if [ ! -r "$kimage" ] || [ ! -r "$initrd" ]; then
	echo "lab-rig: cannot read the image: $img" >&2
	exit 1
fi

D=$(mktemp -d /tmp/rq-lab.XXXXXX) || exit 1
ns=rqlab$$
pids='' cmd='' dpids=''
# shellcheck disable=SC2317 # run by the EXIT trap
teardown() {
	if [ -n "$cmd" ]; then
		kill -TERM "$cmd" 2>/dev/null
		wait "$cmd" 2>/dev/null
	fi
	# The host's Slurm daemons (the guests' go with their QEMU).  Their
	# pids are read first: slurmctld removes its pid file on SIGTERM, then
	# may linger trying to reach nodes that are gone, so it gets SIGKILL.
	dpids=
	for f in slurmctld munged; do
		[ -s "$D/slurm/$f.pid" ] && dpids="$dpids $(cat "$D/slurm/$f.pid")"
	done
	for p in $dpids; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in $pids; do
		kill -KILL "$p" 2>/dev/null
	done
	for p in $pids; do
		wait "$p" 2>/dev/null
	done
	for p in $dpids; do
		kill -KILL "$p" 2>/dev/null
	done
	ip netns del "$ns" 2>/dev/null
	[ -n "$slurm" ] && rm -rf "/etc/netns/$ns"
	rm -rf "$D"
}
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Throwaway keys made for this rig (vm/guest-ssh.sh, shared with the rxe-vm
# target): one host key for all guests, one client key, which the host's
# client below and root's client in every guest use.
mkdir "$D/guest"
guests=
: >"$D/ssh_config"
hosts=
i=0
while [ $i -lt "$n" ]; do
	ipa=10.77.1.$((i + 1))
	hosts="$hosts${hosts:+,}vm$i@$ipa"
	guests="$guests vm$i@$ipa"
	printf 'Host vm%d\n\tHostName %s\n' "$i" "$ipa" >>"$D/ssh_config"
	i=$((i + 1))
done
# shellcheck disable=SC2086 # one word per guest
vm/guest-ssh.sh "$D/guest" $guests || exit 1
cat >>"$D/ssh_config" <<CFG
Host *
	User root
	IdentityFile $D/guest/id
	IdentitiesOnly yes
	UserKnownHostsFile $D/guest/known_hosts
	StrictHostKeyChecking yes
	LogLevel ERROR
CFG
chmod 700 "$D"

# The segment (vm/l2-segment.sh, shared with the rxe-vm target's vmN).
vm/l2-segment.sh up "$ns" "$n" 10.77.1.254/24 || exit 1

accel=${RQ_LAB_ACCEL:-tcg}
cpu="-cpu max"
[ "$accel" = kvm ] && cpu="-device virtio-rng-pci"
# Under TCG the guest's TSC is the host's: tell the kernel its rate, as
# the rxe-vm target does (a busy host makes PIT calibration fail).
tsc=$(awk '/^cpu MHz/ { printf "%d", $4 * 1000; exit }' /proc/cpuinfo)
append_tsc=
[ -n "$tsc" ] && append_tsc="tsc_early_khz=$tsc tsc=reliable"
i=0
while [ $i -lt "$n" ]; do
	tap=rqtap$i
	mac=$(printf '52:54:00:77:01:%02x' $((i + 1)))
	# $cpu is two words on purpose.
	# shellcheck disable=SC2086
	ip netns exec "$ns" qemu-system-x86_64 -name "rdmaqual,process=rq-lab-vm$i" \
		-M microvm,pcie=on,acpi=on,rtc=on -accel "$accel" $cpu \
		-m "${RQ_VM_MEM_MB:-512}" -smp 1 -nodefaults -no-user-config \
		-nographic -no-reboot -kernel "$kimage" -initrd "$initrd" \
		-append "console=ttyS0 loglevel=5 panic=-1 reboot=t $append_tsc rq.exe=$RQ rq.ip=10.77.1.$((i + 1))/24 rq.name=vm$i rq.hosts=$hosts rq.lab=$D/guest" \
		-serial "file:$D/console-vm$i.log" \
		-fsdev local,id=fs0,path=/,readonly=on,security_model=none,multidevs=remap \
		-device virtio-9p-pci,fsdev=fs0,mount_tag=hostroot \
		-netdev "tap,id=n0,ifname=$tap,script=no,downscript=no" \
		-device "virtio-net-pci,netdev=n0,mac=$mac,speed=10000,duplex=full" \
		>"$D/qemu-vm$i.log" 2>&1 &
	pids="$pids $!"
	i=$((i + 1))
done

# Ready: every console shows RQ-READY (or a failure), then ssh answers.
deadline=$(($(date +%s) + ${RQ_LAB_READY_S:-180}))
i=0
while [ $i -lt "$n" ]; do
	c=$D/console-vm$i.log
	while ! grep -q '^RQ-READY' "$c" 2>/dev/null; do
		if grep -q 'RQ-INIT-FAILED' "$c" 2>/dev/null; then
			echo "lab-rig: vm$i: $(grep 'RQ-INIT-FAILED' "$c" | head -n 1)" >&2
			exit 1
		fi
		if [ "$(date +%s)" -ge "$deadline" ]; then
			echo "lab-rig: vm$i not ready in ${RQ_LAB_READY_S:-180} s; console tail:" >&2
			tail -n 5 "$c" >&2
			tail -n 3 "$D/qemu-vm$i.log" >&2
			exit 1
		fi
		sleep 0.5
	done
	# timeout: ConnectTimeout bounds the TCP connect only; a guest that
	# accepts and then stalls must not hang the rig (seen once under load)
	until timeout 20 ip netns exec "$ns" ssh -F "$D/ssh_config" -o BatchMode=yes \
		-o ConnectTimeout=10 "vm$i" true 2>"$D/ssh-vm$i.err"; do
		if [ "$(date +%s)" -ge "$deadline" ]; then
			echo "lab-rig: vm$i: ssh: $(tail -n 1 "$D/ssh-vm$i.err")" >&2
			exit 1
		fi
		sleep 1
	done
	i=$((i + 1))
done
echo "lab-rig: $n guests up ($(($(date +%s) + ${RQ_LAB_READY_S:-180} - deadline)) s), namespace $ns" >&2

deb_env=
if [ -n "$deb" ]; then
	dpkg-deb -x "$deb" "$D/pkg" || { echo "lab-rig: dpkg-deb -x $deb failed" >&2; exit 1; }
	v=$("$D/pkg/usr/bin/rdmaqual" --version) || { echo "lab-rig: $deb: its rdmaqual does not run" >&2; exit 1; }
	i=0
	while [ $i -lt "$n" ]; do
		# dpkg's database and /usr are the host's, read-only over 9p:
		# an overlay in guest memory over each takes the install.
		timeout 120 ip netns exec "$ns" ssh -F "$D/ssh_config" -o BatchMode=yes "vm$i" "set -e
			for d in /usr /var/lib/dpkg; do
				o=/run/rq-ov\$(echo \$d | tr / _); mkdir -p \$o/u \$o/w
				mount -t overlay overlay -o lowerdir=\$d,upperdir=\$o/u,workdir=\$o/w \$d
			done
			cat >/tmp/rdmaqual.deb
			dpkg --log=/tmp/dpkg.log --no-triggers -i /tmp/rdmaqual.deb >/tmp/dpkg.out 2>&1 ||
				{ tail -n 3 /tmp/dpkg.out; exit 1; }
			[ \"\$(/usr/bin/rdmaqual --version)\" = '$v' ]" <"$deb" >"$D/deb-vm$i.err" 2>&1 ||
			{ echo "lab-rig: vm$i: dpkg -i: $(tail -n 3 "$D/deb-vm$i.err")" >&2; exit 1; }
		i=$((i + 1))
	done
	deb_env="RQ_LAB_RDMAQUAL=$D/pkg/usr/bin/rdmaqual"
	echo "lab-rig: $(basename "$deb") installed in $n guests ($v)" >&2
fi

slurm_env=
if [ -n "$slurm" ]; then
	S=$D/slurm
	mkdir -m 700 "$S" "$S/state" "$S/log" || exit 1
	nodes=
	i=0
	while [ $i -lt "$n" ]; do
		nodes="$nodes vm$i@10.77.1.$((i + 1))@1"
		i=$((i + 1))
	done
	# The namespace is the rig's own: fixed ports clash with nothing.
	# shellcheck disable=SC2086 # one word per node
	vm/slurm-conf.sh "$S" "$(hostname)" 10.77.1.254 6817 $nodes >"$S/slurm.conf" || exit 1
	mungekey -c -k "$S/munge.key" -b 1024 || exit 1
	chmod 600 "$S/munge.key"
	ip netns exec "$ns" munged -f --key-file="$S/munge.key" --socket="$S/munge.sock" \
		--log-file="$S/log/munged.log" --pid-file="$S/munged.pid" --seed-file="$S/munged.seed" ||
		{ echo "lab-rig: munged: $(tail -n 1 "$S/log/munged.log" 2>/dev/null)" >&2; exit 1; }
	SLURM_CONF=$S/slurm.conf ip netns exec "$ns" slurmctld -i ||
		{ echo "lab-rig: slurmctld failed" >&2; exit 1; }
	i=0
	while [ $i -lt "$n" ]; do
		# Key and config through ssh's stdin into the same path on the
		# guest's tmpfs, then its munged and slurmd (which will not start
		# without a cgroup fs, whatever the proctrack plugin: its cgroup/v2
		# wants systemd, so a bare cgroup v1 tree with the named hierarchy
		# its cgroup/v1 checks for).
		tar -C "$S" -cf - munge.key slurm.conf | timeout 60 ip netns exec "$ns" ssh -F "$D/ssh_config" \
			-o BatchMode=yes "vm$i" "mkdir -p $S && chmod 700 $S && mkdir $S/spool $S/log &&
			tar -C $S -xf - || exit 1
			munged -f --key-file=$S/munge.key --socket=$S/munge.sock --log-file=$S/log/munged.log \
				--pid-file=$S/munged.pid --seed-file=$S/munged.seed ||
				{ tail -n 2 $S/log/munged.log; exit 1; }
			mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup && mkdir /sys/fs/cgroup/systemd &&
				mount -t cgroup -o none,name=systemd cgroup /sys/fs/cgroup/systemd || exit 1
			slurmd -f $S/slurm.conf -N vm$i || { tail -n 3 $S/log/slurmd.log; exit 1; }" \
			>"$D/slurmd-vm$i.err" 2>&1 ||
			{ echo "lab-rig: vm$i: munged/slurmd: $(grep -v pyenv "$D/slurmd-vm$i.err" | tail -n 3)" >&2; exit 1; }
		i=$((i + 1))
	done
	# Ready when every node is idle to slurmctld (slurmd registers at once;
	# a minute is ample even for a busy TCG guest).
	deadline=$(($(date +%s) + 60))
	until [ "$(SLURM_CONF=$S/slurm.conf ip netns exec "$ns" sinfo -h -o '%T %D' 2>/dev/null)" = "idle $n" ]; do
		if [ "$(date +%s)" -ge "$deadline" ]; then
			echo "lab-rig: Slurm nodes not idle in time: $(SLURM_CONF=$S/slurm.conf ip netns exec "$ns" sinfo -h -N -o '%N %T' 2>&1 | tr '\n' ' ')" >&2
			exit 1
		fi
		sleep 1
	done
	slurm_env="SLURM_CONF=$S/slurm.conf"
	# srun nodes are reached by name (the lab's pair traffic goes to
	# the address a node's name resolves to), as DNS would on a real
	# cluster: `ip netns exec` puts /etc/netns/NS/hosts over /etc/hosts
	# for CMD, so the guests' names resolve there and nowhere else.
	mkdir -p "/etc/netns/$ns" || exit 1
	{ cat /etc/hosts; i=0; while [ $i -lt "$n" ]; do
		echo "10.77.1.$((i + 1))	vm$i"; i=$((i + 1)); done; } >"/etc/netns/$ns/hosts" || exit 1
	echo "lab-rig: Slurm: $n nodes idle (slurmctld on 10.77.1.254)" >&2
fi

if [ -n "$degrade" ]; then
	timeout 30 ip netns exec "$ns" ssh -F "$D/ssh_config" -o BatchMode=yes "$degrade" \
		"$RQ" rxe del rxe0 || { echo "lab-rig: cannot degrade $degrade" >&2; exit 1; }
	echo "lab-rig: $degrade: rxe0 deleted" >&2
fi

# In the background, so that a SIGINT/SIGTERM to the rig is handled at
# once (sh defers a trap until its foreground child ends): the teardown
# then stops CMD (SIGTERM: a lab run writes its report) and the guests.
# shellcheck disable=SC2086 # empty or one assignment
env $slurm_env $deb_env RDMAQUAL_SSH_CONFIG="$D/ssh_config" RQ_LAB_NODES="vm[0-$((n - 1))]" RQ_LAB_DIR="$D" \
	ip netns exec "$ns" "$@" &
cmd=$!
wait "$cmd"
rc=$?
cmd=
exit "$rc"

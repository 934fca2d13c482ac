#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The ssh files of a set of guests, made fresh for one run (never the
# host's keys): vm/init (rq.ssh= or rq.lab=) starts sshd with them and
# gives root in each guest an ssh client that reaches every other guest by
# name, so `mpirun --host vm0,vm1` and hostfiles work there as on a
# cluster.  Shared by the lab rig and the rxe-vm target.
#
#   vm/guest-ssh.sh DIR NAME@ADDR...
#
# DIR (made by the caller, 0700) receives: host_key (one host key for all
# guests), id and id.pub (the client key), authorized_keys, sshd_config,
# known_hosts (every guest's name and address with that host key) and
# ssh_config (root's client inside the guests).
set -u
[ $# -ge 2 ] || { echo "usage: guest-ssh.sh DIR NAME@ADDR..." >&2; exit 2; }
d=$1
shift
[ -d "$d" ] || { echo "guest-ssh: no directory $d" >&2; exit 2; }
ssh-keygen -q -t ed25519 -N '' -C rq-guest-host -f "$d/host_key" || exit 1
ssh-keygen -q -t ed25519 -N '' -C rq-guest-client -f "$d/id" || exit 1
cp "$d/id.pub" "$d/authorized_keys" || exit 1
cat >"$d/sshd_config" <<CFG
Port 22
HostKey /run/rq-ssh/host_key
AuthorizedKeysFile /run/rq-ssh/authorized_keys
PidFile /run/rq-ssh/sshd.pid
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
MaxStartups 64
CFG
hostpub=$(cut -d' ' -f1,2 "$d/host_key.pub") || exit 1
: >"$d/known_hosts"
for h in "$@"; do
	echo "${h%@*},${h#*@} $hostpub" >>"$d/known_hosts"
done
cat >"$d/ssh_config" <<CFG
Host *
	User root
	IdentityFile /root/.ssh/id
	IdentitiesOnly yes
	UserKnownHostsFile /root/.ssh/known_hosts
	StrictHostKeyChecking yes
	BatchMode yes
	ConnectTimeout 20
	LogLevel ERROR
CFG

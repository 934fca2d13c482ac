#!/bin/sh
# SPDX-License-Identifier: MIT
#
# One virtual L2 segment for N QEMU guests: a network namespace holding a
# bridge and one tap per guest.  The lab rig (vm/lab-rig.sh) and the rxe-vm
# target's N-guest topologies (vmN, N > 2) both make their segment here.
#
#   vm/l2-segment.sh up NS N ADDR/PREFIX   # netns NS, br0 with ADDR, taps rqtap0..rqtapN-1
#   vm/l2-segment.sh down NS               # the namespace and all in it
#
# QEMU then runs inside the namespace (ip netns exec NS qemu ... -netdev
# tap,ifname=rqtapK,script=no,downscript=no).  Nothing is routed to or
# from the host's own interfaces: the segment is the guests' and the
# bridge address's alone.  Interface names are the namespace's own, so
# concurrent segments never clash.  Needs root (CAP_NET_ADMIN).
set -u
case ${1:-} in
up)
	[ $# -eq 4 ] || { echo "usage: l2-segment.sh up NS N ADDR/PREFIX" >&2; exit 2; }
	ns=$2 n=$3 addr=$4
	case $n in '' | *[!0-9]*) echo "l2-segment: N must be a number" >&2; exit 2 ;; esac
	ip netns add "$ns" || exit 1
	fail() { echo "l2-segment: $*" >&2; ip netns del "$ns" 2>/dev/null; exit 1; }
	ip -n "$ns" link set lo up || fail "lo up"
	ip -n "$ns" link add br0 type bridge || fail "bridge"
	ip -n "$ns" addr add "$addr" dev br0 || fail "address $addr"
	ip -n "$ns" link set br0 up || fail "br0 up"
	i=0
	while [ "$i" -lt "$n" ]; do
		ip -n "$ns" tuntap add dev "rqtap$i" mode tap || fail "tap rqtap$i"
		ip -n "$ns" link set "rqtap$i" master br0 up || fail "rqtap$i on br0"
		i=$((i + 1))
	done
	;;
down)
	[ $# -eq 2 ] || { echo "usage: l2-segment.sh down NS" >&2; exit 2; }
	ip netns del "$2"
	;;
*)
	echo "usage: l2-segment.sh up NS N ADDR/PREFIX | down NS" >&2
	exit 2
	;;
esac

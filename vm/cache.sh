#!/bin/sh
# SPDX-License-Identifier: MIT
#
# vm/cache.sh: the guest image cache, for the builders that source it
# (kernel.sh, debian-kernel.sh, initramfs.sh; each defines die()).  It has
# a #! and mode 0755 like every file of libexec/rdmaqual (dh_fixperms makes
# them executable; lintian wants a #! then), but run by itself it only says
# what it is.
#
# What is cached is booted, often as root, so the cache is trusted only when
# it is a directory of the euid that nobody else may write, and the files
# that are booted (vmlinuz, the PVH vmlinux, the initramfs) are checked
# against the sha256 recorded when they were made.  The lock is the cache
# directory itself, held on the descriptor that was checked: a lock file
# inside would be one more name to plant a link on (opening "$cache/.lock"
# for writing truncated whatever a link there pointed to).

# cache_open DIR: DIR becomes $cache (its physical path; created 0700 when
# missing), fd 9 is open on it and holds its lock.  When fd 9 is already open
# on that directory (a builder calling another, e.g. kernel.sh running
# debian-kernel.sh), the lock is the caller's and is not taken again.
cache_open() {
	if [ ! -e "$1" ] && [ ! -L "$1" ]; then
		# Only the cache itself is made private; parents as mkdir -p makes them.
		# shellcheck disable=SC2174
		mkdir -p -m 0700 -- "$1" || die "cannot create the image cache $1"
	fi
	cache=$(cd -P -- "$1" 2>/dev/null && pwd -P) || die "the image cache $1 is not a directory"
	_uid=$(id -u)
	# Every dir above it as `vm image` wants them (src/core/paths.c,
	# safe_parents): owned by root or us, and writable by others only when
	# sticky; else their owner could swap the cache after it was checked.
	_p=$cache
	while [ "$_p" != / ]; do
		_p=$(dirname -- "$_p")
		_ps=$(stat -c '%u|%a' -- "$_p") || die "cannot stat $_p, above the image cache $cache"
		_pu=${_ps%%|*}
		_pm=${_ps#*|}
		if { [ "$_pu" != 0 ] && [ "$_pu" != "$_uid" ]; } ||
			{ [ $((0$_pm & 022)) != 0 ] && [ $((0$_pm & 01000)) = 0 ]; }; then
			die "the image cache $cache lies under $_p, owned by uid $_pu with mode $_pm: someone else could replace it (set RQ_VM_CACHE to a dir under directories only root or uid $_uid may change)"
		fi
	done
	_held=0
	[ "$(stat -L -c %d:%i /dev/fd/9 2>/dev/null)" != "$(stat -c %d:%i "$cache")" ] || _held=1
	[ $_held = 1 ] || exec 9<"$cache"
	# Judge what was opened, not the name (the name can be swapped after a
	# check); then the name must still lead to it.
	_st=$(stat -L -c '%F|%u|%a|%d:%i' /dev/fd/9)
	_mode=${_st#*|*|}
	_mode=${_mode%%|*}
	case $_st in
	"directory|$_uid|"*) ;;
	*) die "the image cache $cache is not a directory of uid $_uid ($(stat -L -c '%F of uid %u' /dev/fd/9)); it must be ours and written by no one else (remove it, or set RQ_VM_CACHE to a dir of yours)" ;;
	esac
	[ $((0$_mode & 022)) = 0 ] ||
		die "the image cache $cache has mode $_mode: group or others may write it (chmod go-w it, or set RQ_VM_CACHE to a dir of yours)"
	[ "$(stat -c %d:%i "$cache")" = "${_st##*|}" ] || die "the image cache $cache changed while it was opened"
	if [ $_held = 0 ]; then
		flock -w 600 9 || die "the image cache $cache is locked by another build for 10 minutes"
	fi
	# Anything another user could have put in (or still change): refuse it
	# rather than guess which of it matters.  Two levels hold every file the
	# builders read back (.meta, .ok, vmlinux/, initramfs-*, accel-verdicts).
	_bad=$(find "$cache" -mindepth 1 -maxdepth 2 \( ! -user "$_uid" -o \( ! -type l -perm /022 \) \) \
		-print -quit 2>/dev/null)
	[ -z "$_bad" ] || die "the image cache $cache holds $_bad, which is not of uid $_uid or is writable by group or others (remove it)"
}

# cache_sum FILE: its sha256, hex.
cache_sum() {
	sha256sum <"$1" | cut -d' ' -f1
}

# cache_record FILE: FILE.meta says FILE's sha256 (RQ_SHA256=...).
cache_record() {
	echo "RQ_SHA256=$(cache_sum "$1")" >"$1.meta.tmp"
	mv -f "$1.meta.tmp" "$1.meta"
}

# cache_verify FILE [META KEY]: FILE is a regular file of ours that nobody
# else may write, with the sha256 that META's KEY line recorded (default
# FILE.meta, RQ_SHA256).  Otherwise says why on stderr and fails.
cache_verify() {
	_m=${2:-$1.meta}
	_k=${3:-RQ_SHA256}
	_st=$(stat -c '%F|%u|%a' "$1" 2>/dev/null) || { echo "$1 is missing" >&2; return 1; }
	case $_st in
	"regular file|$(id -u)|"*) ;;
	*) echo "$1 is not a regular file of uid $(id -u) ($(stat -c '%F of uid %u' "$1"))" >&2; return 1 ;;
	esac
	[ $((0${_st##*|} & 022)) = 0 ] || { echo "$1 is writable by group or others" >&2; return 1; }
	_want=$(sed -n "s/^$_k=//p" "$_m" 2>/dev/null | tail -n1)
	[ -n "$_want" ] || { echo "$1 has no recorded sha256 ($_k in $_m; made by an older rdmaqual)" >&2; return 1; }
	_got=$(cache_sum "$1")
	[ "$_got" = "$_want" ] ||
		{ echo "$1 does not match the sha256 recorded when it was made ($_got, recorded $_want)" >&2; return 1; }
}

# Run, not sourced: $0 is this file (sourced, it is the builder's).
case ${0##*/} in
cache.sh)
	echo "vm/cache.sh is sourced by kernel.sh, debian-kernel.sh and initramfs.sh; it does nothing alone" >&2
	exit 2
	;;
esac

#!/bin/sh
# Install the Debian packages listed in deps.txt that are missing.  The list
# is the single source of truth; README.md quotes it.
set -eu
cd "$(dirname "$0")/.."
pkgs=$(grep -v '^#' deps.txt | cut -d' ' -f2- | tr '\n' ' ')
missing=""
for p in $pkgs; do
	s=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$s" in *" installed") ;; *) missing="$missing $p" ;; esac
done
[ "${1:-}" = list ] && { echo "$pkgs"; exit 0; }
if [ -z "$missing" ]; then
	# shellcheck disable=SC2086 # the list, one word a package
	echo "deps: all $(echo $pkgs | wc -w) packages present"
	exit 0
fi
echo "deps: installing$missing"
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: need root to install:$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086 # the list, one word a package
apt-get install -y -qq --no-install-recommends $missing

#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tools/check-rpm.sh RPM: rpmlint on rdmaqual.spec and RPM (no error; the
# warnings are printed), then the package's files and their modes must be
# exactly what `make install PREFIX=/usr` installs (plus the %license file,
# in licenses/NAME or, as Debian's rpm puts it, licenses/NAME-VERSION; man
# pages may have been compressed; rpm's own .build-id links aside), owned
# by root.
set -eu
cd "$(dirname "$0")/.."
rpm=$1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
bad=0

if command -v rpmlint >/dev/null; then
	rpmlint -r rdmaqual.rpmlintrc rdmaqual.spec "$rpm" >"$t/lint" 2>&1 || bad=1
	sed 's/^/rpmlint: /' "$t/lint"
	[ $bad = 0 ] || echo "check-rpm: rpmlint reports errors" >&2
else
	echo "check-rpm: rpmlint not installed, not run"
fi

rpm -qp --qf '[%{FILEMODES:perms} %{FILEUSERNAME}:%{FILEGROUPNAME} %{FILENAMES}\n]' "$rpm" |
	grep -v '^d' | grep -v ' /usr/lib/\.build-id/' |
	sed 's/\.gz$//; s|/usr/share/licenses/rdmaqual-[^/]*/|/usr/share/licenses/rdmaqual/|' | sort -k3 >"$t/rpm"
make -s install DESTDIR="$t/dest" PREFIX=/usr MPICC= >/dev/null
(cd "$t/dest" && find . ! -type d -printf '%M root:root /%P\n') | sort -k3 >"$t/inst"
echo "-rw-r--r-- root:root /usr/share/licenses/rdmaqual/LICENSE" >>"$t/inst"
sort -k3 -o "$t/inst" "$t/inst"
if diff -u "$t/inst" "$t/rpm" >"$t/diff"; then
	echo "check-rpm: $(wc -l <"$t/rpm") files, the same as make install's, same modes, owned by root"
else
	echo "check-rpm: the package's files differ from make install's (- install, + rpm):" >&2
	cat "$t/diff" >&2
	bad=1
fi
exit $bad

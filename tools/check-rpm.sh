#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tools/check-rpm.sh RPM [MPI-RPM]: rpmlint on rdmaqual.spec and the RPMs
# (no error; the warnings are printed), then the packages' files and their
# modes, together, must be exactly what `make install PREFIX=/usr` installs
# (rdmaqual-coll and its page in the -mpi one; plus each %license file,
# in licenses/NAME or, as Debian's rpm puts it, licenses/NAME-VERSION; man
# pages may have been compressed; rpm's own .build-id links aside), owned
# by root.
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: tools/check-rpm.sh RPM [MPI-RPM]" >&2; exit 2; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
bad=0

if command -v rpmlint >/dev/null; then
	rpmlint -r rdmaqual.rpmlintrc rdmaqual.spec "$@" >"$t/lint" 2>&1 || bad=1
	sed 's/^/rpmlint: /' "$t/lint"
	[ $bad = 0 ] || echo "check-rpm: rpmlint reports errors" >&2
else
	echo "check-rpm: rpmlint not installed, not run"
fi

for rpm; do
	# each package's license dir: NAME, or NAME-VERSION (Debian's rpm)
	name=$(rpm -qp --qf '%{NAME}' "$rpm")
	rpm -qp --qf '[%{FILEMODES:perms} %{FILEUSERNAME}:%{FILEGROUPNAME} %{FILENAMES}\n]' "$rpm" |
		grep -v '^d' | grep -v ' /usr/lib/\.build-id/' |
		sed "s/\\.gz\$//; s|/usr/share/licenses/$name-[0-9][^/]*/|/usr/share/licenses/$name/|"
	echo "-rw-r--r-- root:root /usr/share/licenses/$name/LICENSE" >>"$t/lic"
done | sort -k3 >"$t/rpm"
# make install as the spec runs it: the MPI benchmark where the -mpi package was given
mpicc=; [ $# -lt 2 ] || mpicc=$(command -v mpicc || true)
make -s install DESTDIR="$t/dest" PREFIX=/usr MPICC="$mpicc" >/dev/null
(cd "$t/dest" && find . ! -type d -printf '%M root:root /%P\n') | sort -k3 >"$t/inst"
cat "$t/lic" >>"$t/inst"
sort -k3 -o "$t/inst" "$t/inst"
if diff -u "$t/inst" "$t/rpm" >"$t/diff"; then
	echo "check-rpm: $(wc -l <"$t/rpm") files, the same as make install's, same modes, owned by root"
else
	echo "check-rpm: the package's files differ from make install's (- install, + rpm):" >&2
	cat "$t/diff" >&2
	bad=1
fi
exit $bad

#!/bin/sh
# make install into a DESTDIR, then the installed binary alone, run from a
# directory with no checkout: help, --version, list and lint of the
# installed suite, run --dry-run with no path, the shipped opensm cases
# (their fixtures found under the prefix), a sysroot replay of a fixture
# tree; the installed man pages pass the lint and the bash and zsh
# completions complete from the installed binary; a user gets clear errors and a
# private cache; make uninstall removes every file and leaves the tree as
# it was.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

T=$(mktemp -d /tmp/rq-it-install.XXXXXX)
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
export RDMAQUAL_STATE_DIR="$T/state"
D=$T/dest
P=/usr/local
B=$D$P/bin/rdmaqual
SRC=$(pwd)
before=$(git status --porcelain 2>/dev/null)

make -s install DESTDIR="$D" >"$T/install.out" 2>&1
expect_eq "make install DESTDIR=... exits 0" 0 $?
expect_true "the binary is in bin/, mode 0755" sh -c "[ \"\$(stat -c %a '$B')\" = 755 ]"
if [ -x build/rdmaqual-coll ]; then
	expect_true "the MPI benchmark (built: mpicc is here) is in bin/, mode 0755" \
		sh -c "[ \"\$(stat -c %a '$D$P/bin/rdmaqual-coll')\" = 755 ]"
fi
for f in share/rdmaqual/cases/mtu/consistency.yaml share/rdmaqual/fixtures/opensm/good.conf \
	share/rdmaqual/fixtures/fabrics/2sw2path4hca.net share/doc/rdmaqual/README.md \
	share/doc/rdmaqual/docs/cluster.md share/man/man1/rdmaqual.1 share/man/man5/rdmaqual-cases.5 \
	share/bash-completion/completions/rdmaqual share/zsh/site-functions/_rdmaqual; do
	expect_true "$f installed, mode 0644" sh -c "[ \"\$(stat -c %a '$D$P/$f')\" = 644 ]"
done
L=$D$P/libexec/rdmaqual
# Every script the binary runs or a script sources: the names src/ spells
# ("guest-ssh.sh", "%s/kernel.sh", ...) and those the installed scripts run
# or source ("$here/NAME.sh").
need=$( (grep -rhoE '[/"][a-z0-9_-]+\.sh"' src harness | tr -d '"/'
	for f in vm/*.sh; do
		case $f in vm/lab-*.sh | vm/slurm-conf.sh) continue ;; esac
		# shellcheck disable=SC2016 # the literal $here of the scripts
		grep -hoE '"\$here/[a-z0-9_-]+\.sh"' "$f" | sed 's|.*/||; s|"||'
	done
	echo init) | sort -u)
missing=
for f in $need; do [ -e "$L/$f" ] || missing="$missing $f"; done
expect_eq "every script the binary runs or sources is in libexec/rdmaqual ($(echo "$need" | wc -w) names)" "" "$missing"
expect_true "guest-ssh.sh and l2-segment.sh (multi-guest topologies) among them" \
	sh -c "[ -x '$L/guest-ssh.sh' ] && [ -x '$L/l2-segment.sh' ]"
# dh_fixperms makes every file under usr/libexec executable and lintian
# then wants a #!: so each is 0755 with one already, and the package keeps
# make install's modes.
bad=
for f in "$L"/*; do
	[ "$(stat -c %a "$f")" = 755 ] && [ "$(head -c2 "$f")" = '#!' ] || bad="$bad ${f##*/}($(stat -c %a "$f"))"
done
expect_eq "every file of libexec/rdmaqual is 0755 and starts with #!" "" "$bad"
expect_eq "nothing installed is writable by group or others" "" \
	"$(find "$D" -perm /022 ! -type l | head -3)"

# The cheap half of make deb: make install PREFIX=/usr split by debian/'s
# file lists as dh_install splits debian/tmp, each part packed by
# dpkg-deb --build, and the packages' modes read back with dpkg-deb -c.
if command -v dpkg-deb >/dev/null; then
	make -s install DESTDIR="$T/deb/tmp" PREFIX=/usr ZSHCOMPDIR=/usr/share/zsh/vendor-completions \
		>"$T/deb.out" 2>&1
	expect_eq "make install PREFIX=/usr (the package's layout) exits 0" 0 $?
	for pkg in rdmaqual rdmaqual-mpi; do
		mkdir -p "$T/deb/$pkg/DEBIAN"
		while read -r path; do
			mkdir -p "$T/deb/$pkg/${path%/*}"
			[ ! -e "$T/deb/tmp/$path" ] || mv "$T/deb/tmp/$path" "$T/deb/$pkg/$path"
		done <debian/$pkg.install
		printf 'Package: %s\nVersion: %s\nArchitecture: all\nMaintainer: t <t@t>\nDescription: t\n' \
			"$pkg" "$(cat VERSION)" >"$T/deb/$pkg/DEBIAN/control"
		dpkg-deb --root-owner-group -Znone --build "$T/deb/$pkg" "$T/deb/$pkg.deb" >/dev/null 2>&1
		dpkg-deb -c "$T/deb/$pkg.deb" | awk '{ print $1, $NF }' >"$T/deb/$pkg.list"
	done
	expect_eq "debian/*.install take every file make install writes (dh_missing's rule)" "" \
		"$(cd "$T/deb/tmp" && find . ! -type d)"
	expect_grep "rdmaqual-mpi has the MPI benchmark" '^-rwxr-xr-x \./usr/bin/rdmaqual-coll$' "$T/deb/rdmaqual-mpi.list"
	expect_eq "rdmaqual itself has no MPI program" "" "$(grep rdmaqual-coll "$T/deb/rdmaqual.list")"
	expect_eq "the .deb's libexec files are all -rwxr-xr-x (what dh_fixperms leaves)" "" \
		"$(grep ' \./usr/libexec/rdmaqual/.' "$T/deb/rdmaqual.list" | grep -v '^-rwxr-xr-x ')"
	expect_eq "the .deb's other files are 0644 but the two programs" "" \
		"$(grep '^-' "$T/deb/"*.list | grep -v -e ' \./usr/libexec/' -e ' \./usr/bin/' | grep -v ':-rw-r--r-- ')"
fi

# make after a source tree was unpacked under build/ (make dist, deb, rpm,
# distcheck do): a folder of it named *.d is no dependency file.
mkdir -p build && DT=$(mktemp -d build/it-unpacked.XXXXXX) && mkdir -p "$DT/etc/security/limits.d"
make -n rdmaqual >"$T/make-n.out" 2>&1
expect_eq "make with an unpacked tree's limits.d under build/ still reads its makefiles" 0 $?
rm -rf "$DT"

expect_eq "every case file of the checkout is installed" \
	"$(cd cases && find . -name '*.yaml' | sort)" \
	"$(cd "$D$P/share/rdmaqual/cases" && find . -name '*.yaml' | sort)"

# A checkout-looking tree planted above the install (vm/kernel.sh and
# cases/ two levels above bin/, as anyone could under /tmp): the installed
# binary uses its own prefix, never that tree.
mkdir -p "$D/usr/vm" "$D/usr/cases"
printf '#!/bin/sh\ntouch %s/planted-ran\n' "$T" >"$D/usr/vm/kernel.sh"
chmod 755 "$D/usr/vm/kernel.sh"
printf 'cases:\n  - name: planted.case\n    kind: command\n    command: [true]\n' >"$D/usr/cases/p.yaml"
chown -R 65534:65534 "$D/usr/vm" "$D/usr/cases" 2>/dev/null
(cd "$T" && "$B" list) >"$T/planted.out" 2>&1
expect_eq "a planted tree above the install: list shows the installed cases only" "" \
	"$(grep planted "$T/planted.out")"
(cd "$T" && "$B" vm image --help >/dev/null 2>&1; "$B" run --dry-run --target rxe-vm -k mtu.consistent) \
	>"$T/planted2.out" 2>&1
expect_true "... and runs nothing of it" [ ! -e "$T/planted-ran" ]
rm -rf "$D/usr/vm" "$D/usr/cases"

# From here on, nothing of the checkout is reachable by a relative path.
cd "$T" || exit 1
"$B" --version >"$T/v.out" 2>&1
expect_grep "installed --version prints the release" "^rdmaqual $(cat "$SRC/VERSION")( |\$)" "$T/v.out"
"$B" help >"$T/help.out" 2>&1
expect_eq "installed help exits 0" 0 $?
"$B" help mtu >"$T/help-mtu.out" 2>&1
expect_grep "installed help mtu describes the kind's keys" '^  expect_active' "$T/help-mtu.out"
"$B" list >"$T/list.out" 2>&1
expect_eq "installed list (no path) exits 0" 0 $?
expect_eq "installed list: the same cases as the checkout's, same names" \
	"$(cd "$SRC" && ./rdmaqual list | awk '{ print $1 }')" "$(awk '{ print $1 }' "$T/list.out")"
"$B" lint >"$T/lint.out" 2>&1
expect_eq "installed lint (no path) exits 0" 0 $?
expect_grep "installed lint checked the installed suite" '^[1-9][0-9]* cases, no errors' "$T/lint.out"
"$B" run --dry-run >"$T/dry.out" 2>&1
expect_eq "installed run --dry-run (no path) exits 0" 0 $?
expect_grep "run --dry-run plans the shipped cases" '^mtu\.consistent ' "$T/dry.out"
"$B" run --report-dir "$T/rep" -k 'sm.conf_*' >"$T/sm.out" 2>&1
expect_eq "the shipped opensm-conf cases pass (fixtures under the prefix)" 0 $?
expect_grep "sm.conf_template_clean passes" '^PASS +sm\.conf_template_clean' "$T/sm.out"
"$B" run --report-dir "$T/rep" --target "sysroot:$SRC/fixtures/nodes/cx7-ndr-ib" \
	"$D$P/share/rdmaqual/cases/driver" "$D$P/share/rdmaqual/cases/pcie" >"$T/sys.out" 2>&1
expect_eq "installed binary replays a sysroot fixture, exit 0" 0 $?
expect_grep "the replay checks all eight rails" '^PASS +driver\.stack\[mlx5_7/1\]' "$T/sys.out"
expect_true "the replay wrote its reports" [ -s "$T/rep/latest/junit.xml" ]
# One pair of guests booted from the install alone: its libexec's image
# builders and init, guest-ssh.sh for the pair's sshd (the image cache is
# the checkout's, so the kernel is fetched once for all tests).
if command -v qemu-system-x86_64 >/dev/null; then
	RQ_VM_CACHE="$SRC/vm/cache" "$B" run --report-dir "$T/rep" --target rxe-vm --vm-topology vm2 \
		--accel "${RQ_ACCEL:-tcg}" -k verbs.rc_send >"$T/vm.out" 2>&1
	expect_eq "the installed binary boots a guest pair from its own libexec, exit 0" 0 $?
	expect_grep "... and RC SEND passes between them" '^PASS +verbs\.rc_send\[rxe0/1\]' "$T/vm.out"
	expect_eq "... not from the checkout's vm/" "$D$P/libexec/rdmaqual" \
		"$(jq -r '.facts["vm.scripts"] // empty' "$T/rep/latest/results.json")"
fi
out=$("$B" help --man 1 | cmp - "$D$P/share/man/man1/rdmaqual.1" 2>&1)
expect_eq "the installed rdmaqual(1) is what the installed binary makes" "" "$out"
"$SRC/tools/check-man.sh" "$D$P/share/man/man1/rdmaqual.1" "$D$P/share/man/man5/rdmaqual-cases.5" \
	>"$T/man.out" 2>&1
expect_eq "the installed man pages pass groff -ww, mandoc -Tlint and man -l" 0 $?

# Bash completion, as bash-completion loads it, asking the installed binary.
if [ -r /usr/share/bash-completion/bash_completion ]; then
	cat >"$T/comp.bash" <<EOF
. /usr/share/bash-completion/bash_completion
. '$D$P/share/bash-completion/completions/rdmaqual'
c() { COMP_LINE="\$*"; COMP_POINT=\${#COMP_LINE}; read -ra COMP_WORDS <<<"\$COMP_LINE"
	[[ \$COMP_LINE == *' ' ]] && COMP_WORDS+=("")
	COMP_CWORD=\$((\${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _rdmaqual 2>/dev/null
	echo "\${COMPREPLY[*]}"; }
c '$B' ru
c '$B' run --fail
c '$B' run --target rxe
c '$B' run -k mtu.rxe_42
c '$B' help ib-c
c '$B' vm im
EOF
	bash "$T/comp.bash" >"$T/comp.out" 2>&1
	expect_eq "completion: commands, options, targets, case names, kinds, subcommands" \
		"run|--fail-on-skip|rxe-vm rxe-host|mtu.rxe_4200_gives_4096|ib-counters|image" \
		"$(paste -sd'|' "$T/comp.out")"
fi

# zsh completion, autoloaded from the installed site dir as compinit does,
# with compadd and the file completers stood in by recorders: what is
# asserted is what the function offers for each line (the recorder does
# compadd's prefix match; '^' marks a candidate with no space after it).
if command -v zsh >/dev/null; then
	cat >"$T/comp.zsh" <<EOF
fpath=('$D$P/share/zsh/site-functions' \$fpath)
autoload -Uz _rdmaqual
compadd() {
	local -a w; local a arr=0 sfx=
	while (( \$# )); do
		case \$1 in
		-a) arr=1; shift ;;
		-S) [[ -z \$2 ]] && sfx='^'; shift 2 ;;
		--) shift; break ;;
		-*) shift ;;
		*) break ;;
		esac
	done
	if (( arr )); then for a; do w+=("\${(@P)a}"); done; else w=("\$@"); fi
	for a in "\${w[@]}"; do
		[[ \$a == "\${words[CURRENT]}"* ]] && out+=("\$a\$sfx")
	done
}
compset() { return 0; }
_files() { out+=("<files>"); }
_directories() { out+=("<dirs>"); }
_hosts() { out+=("<hosts>"); }
c() { words=("\$@"); CURRENT=\$#words; out=(); _rdmaqual; print -r -- "\${(j: :)out}"; }
c '$B' ru
c '$B' run --fail
c '$B' run --target rxe
c '$B' run --target sys
c '$B' run -k mtu.rxe_42
c '$B' help ib-c
c '$B' vm im
c '$B' run --report-dir x
EOF
	zsh -f "$T/comp.zsh" >"$T/zcomp.out" 2>&1
	expect_eq "zsh completion: commands, options, targets, sysroot: (no space), case names, kinds, subcommands, dirs" \
		"run|--fail-on-skip|rxe-vm rxe-host|sysroot:^|mtu.rxe_4200_gives_4096|ib-counters|image|<dirs>" \
		"$(paste -sd'|' "$T/zcomp.out")"
fi

# A user: a private image cache under XDG_CACHE_HOME, clear errors where
# root or a writable directory is needed, nothing half-made.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	mkdir -p "$T/u/run" "$T/u/home" "$T/u/ro"
	chown 65534:65534 "$T/u/run" "$T/u/home"
	asuser() { env -i PATH=/usr/bin:/bin HOME="$T/u/home" XDG_RUNTIME_DIR="$T/u/run" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	(cd "$T/u/ro" && asuser "$B" run -k mtu.consistent) >"$T/u.out" 2>&1
	expect_eq "user, unwritable cwd: usage error, not a crash" 2 $?
	expect_grep "user, unwritable cwd: says which dir and why" 'report-dir reports: Permission denied' "$T/u.out"
	expect_eq "user, unwritable cwd: nothing made there" "" "$(ls -A "$T/u/ro")"
	asuser "$B" run --state-dir "$T/u/ro/state" --report-dir "$T/u/home/rep" \
		-k mtu.consistent >"$T/u2.out" 2>&1
	expect_eq "user, unwritable state dir: the run does not start" 1 $?
	expect_grep "user, unwritable state dir: says so" "cannot create state dir $T/u/ro/state: Permission denied" "$T/u2.out"
	expect_eq "user, unwritable state dir: the report dir it made is removed again" "" "$(ls -A "$T/u/home")"
	asuser "$B" run --dry-run --report-dir "$T/u/home/rep" -k 'mtu.rxe_4200*' >"$T/u3.out" 2>&1
	expect_grep "user: a case that needs root says so in the plan" 'needs root' "$T/u3.out"
fi

cd "$SRC" || exit 1
make -s uninstall DESTDIR="$D" >"$T/uninstall.out" 2>&1
expect_eq "make uninstall exits 0" 0 $?
expect_eq "make uninstall leaves no file behind" "" "$(find "$D" ! -type d)"
expect_eq "make uninstall removes rdmaqual's own dirs" "" \
	"$(find "$D" -name rdmaqual)"
expect_eq "the tree is as it was (git status)" "$before" "$(git status --porcelain 2>/dev/null)"
finish

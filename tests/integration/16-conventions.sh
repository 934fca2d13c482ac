#!/bin/sh
# CLI conventions: --version; 'rdmaqual CMD --help' prints that command's
# usage on stdout and exits 0 for every command; an unknown subcommand is
# named; the live progress line on a
# terminal (script(1) gives the run one) and plain lines in a pipe; reports
# prune --keep N removes only old run directories.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

RQ=${RQ:-build/san/rdmaqual}
T=$(mktemp -d /tmp/rq-it-conv.XXXXXX)
trap 'rm -rf "$T"' EXIT
export RDMAQUAL_STATE_DIR="$T/state"

"$RQ" --version >"$T/v.out" 2>&1
expect_eq "--version exit status" 0 $?
expect_grep "--version names the program and a version" '^rdmaqual [0-9a-z]' "$T/v.out"

# Every command of the table, from the program's own list.
cmds=$("$RQ" --help | sed -n 's/^  \([a-z]*\)  .*/\1/p')
expect_true "the command list is not empty" [ -n "$cmds" ]
for c in $cmds; do
	"$RQ" "$c" --help >"$T/h.out" 2>"$T/h.err"
	rc=$?
	if [ $rc -eq 0 ] && grep -q "usage: rdmaqual $c" "$T/h.out" && [ ! -s "$T/h.err" ]; then
		ok "$c --help: usage on stdout, exit 0"
	else
		bad "$c --help: exit $rc, stdout $(head -c 80 "$T/h.out"), stderr $(head -c 80 "$T/h.err")"
	fi
done
"$RQ" parse >"$T/p.out" 2>"$T/p.err"
expect_eq "a usage mistake still exits 2" 2 $?
expect_grep "and prints the usage on stderr" 'usage: rdmaqual parse' "$T/p.err"
# Numbers on the command line go through the case files' converter: "3x" is
# refused (strtol read it as 3), hex is taken as in a case file.
"$RQ" vm bench --n 20x >"$T/n.out" 2>"$T/n.err"
expect_eq "a count with a unit it does not have exits 2" 2 $?
expect_grep "and is named" 'rdmaqual vm: --n wants a count of 1 to 100000, not "20x"' "$T/n.err"
"$RQ" run --dry-run --fanout 0x10 --nodes a,b tests/cases/runner >"$T/f.out" 2>&1
expect_grep "0x10 is 16, as in a case file" 'fanout 16' "$T/f.out"
# Subcommands come from a table too: an unknown word is named, with a hint.
"$RQ" vm frob >"$T/w.out" 2>"$T/w.err"
expect_eq "an unknown subcommand exits 2" 2 $?
expect_grep "and is named" 'rdmaqual vm: unknown command "frob"' "$T/w.err"
"$RQ" rxe ad x y >"$T/w.out" 2>"$T/w.err"
expect_grep "with the nearest known word" 'rdmaqual rxe: unknown command "ad"; did you mean "add"\?' "$T/w.err"
"$RQ" fabric qos-lnt x >"$T/w.out" 2>"$T/w.err"
expect_eq "fabric's subcommands too: an unknown one exits 2" 2 $?
expect_grep "named, with the nearest known word" 'rdmaqual fabric: unknown command "qos-lnt"; did you mean "qos-lint"\?' "$T/w.err"

# Progress: one updating line on a terminal, none in a pipe.
if command -v script >/dev/null; then
	TERM=xterm script -qc "$RQ run --report-dir $T/rep tests/cases/runner" "$T/tty.out" >/dev/null 2>&1
	expect_grep "on a terminal: the progress line with count, case, target and failures" \
		'\[6/6\] runner\.error_timeout on local [0-9.]+ s, 3 failed so far' "$T/tty.out"
	expect_grep "the line is redrawn in place (carriage return, erase line)" \
		"$(printf '\r')$(printf '\033')\[K\[[0-9]/6\]" "$T/tty.out"
	expect_grep "an ETA once a case has finished" 'ETA [0-9]+ s' "$T/tty.out"
fi
"$RQ" run --report-dir "$T/rep" tests/cases/runner >"$T/pipe.out" 2>&1
expect_nogrep "in a pipe: no progress line" '\[[0-9]+/6\]' "$T/pipe.out"
expect_nogrep "in a pipe: no carriage returns" "$(printf '\r')" "$T/pipe.out"
expect_grep "in a pipe: the plain result lines" '^PASS +runner\.pass' "$T/pipe.out"

# reports prune
R="$T/prune"
mkdir -p "$R"
for i in 1 2 3 4 5; do
	mkdir "$R/2026010$i-000000-1"
	echo '{}' >"$R/2026010$i-000000-1/results.json"
	touch -d "-$((10 - i)) min" "$R/2026010$i-000000-1"
done
mkdir "$R/qualify-x" "$R/notes"
echo '{}' >"$R/qualify-x/qualify.json"
touch -d "-20 min" "$R/qualify-x"
ln -s 20260101-000000-1 "$R/latest"
ln -s /etc "$R/etc-link"
"$RQ" reports prune --keep 3 --report-dir "$R" >"$T/prune.out" 2>&1
expect_eq "prune exit status" 0 $?
sed 's/^/    | /' "$T/prune.out"
expect_eq "kept: latest and the two newest" "20260101-000000-1 20260104-000000-1 20260105-000000-1" \
	"$(for d in "$R"/2026*; do [ -e "$d" ] && printf '%s ' "${d##*/}"; done | sed 's/ $//')"
expect_true "an old qualification is pruned too" [ ! -e "$R/qualify-x" ]
expect_true "a directory that is no report is left alone" [ -d "$R/notes" ]
expect_true "a symlink is left alone (and not followed)" sh -c "[ -L '$R/etc-link' ] && [ -d /etc ]"
"$RQ" reports prune --report-dir "$R" >/dev/null 2>&1
expect_eq "prune without --keep is a usage error" 2 $?
# A shared reports dir: another user's runs (one dated 2099) are neither
# removed nor counted; age is the run id's time, not a touchable mtime.
if id nobody >/dev/null 2>&1; then
	R2="$T/shared"
	mkdir -p "$R2"
	for d in 20990101-000000-7 20250101-000000-8; do
		mkdir "$R2/$d" && echo '{}' >"$R2/$d/results.json" && chown -R nobody "$R2/$d"
	done
	touch -d "2099-01-01" "$R2/20990101-000000-7"
	for i in 1 2 3; do
		mkdir "$R2/2026020$i-000000-1" && echo '{}' >"$R2/2026020$i-000000-1/results.json"
	done
	touch -d "2099-01-01" "$R2/20260201-000000-1"	# our oldest, touched into the future
	"$RQ" reports prune --keep 2 --report-dir "$R2" >"$T/prune2.out" 2>&1
	expect_eq "prune in a shared dir exits 0" 0 $?
	expect_true "another user's runs are left alone" test -d "$R2/20990101-000000-7" -a \
		-d "$R2/20250101-000000-8"
	expect_eq "ours: the two newest by run id kept, the touched oldest removed" \
		"20260202-000000-1 20260203-000000-1" \
		"$(for d in "$R2"/2026*; do [ -e "$d" ] && printf '%s ' "${d##*/}"; done | sed 's/ $//')"
	expect_grep "and it says it left others' alone" '2 report directories of other users left alone' \
		"$T/prune2.out"
fi
finish

#!/bin/sh
# The layer check reads what the linker sees: the program's own objects
# pass, and each planted object fails it naming what it did: a call from
# core up into kinds declared without any include, a weak reference from
# agent up into qual, and two objects of one folder that use each other.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

T=$(mktemp -d /tmp/rq-it-layers.XXXXXX)
trap 'rm -rf "$T"' EXIT
export RQ_LAYERS_OUT="$T/out"

# The objects make builds for the program, from the sources (not whatever
# else lies in build/).
objs=
for f in src/*/*.c harness/*/*.c; do
	o=build/rel/${f%.c}.o
	[ -e "$o" ] || { bad "no object $o: build first (make all)"; finish; exit 1; }
	objs="$objs $o"
done

# shellcheck disable=SC2086 # word splitting is wanted: one argument per object
tools/check-layers.sh $objs >"$T/ok.out" 2>&1
expect_eq "the program's objects pass" 0 $?
expect_grep "and the symbol pass ran over them" 'symbol edges of [0-9]+ objects' "$T/ok.out"

plant() {	# plant FOLDER NAME C-TEXT: an object FOLDER/NAME.o under $T
	mkdir -p "$T/$1"
	printf '%s\n' "$3" >"$T/$2.c"
	cc -c -o "$T/$1/$2.o" "$T/$2.c"
}

plant src/core planted_up 'void rq_kinds_install(void); void planted_up(void); void planted_up(void) { rq_kinds_install(); }'
# shellcheck disable=SC2086
tools/check-layers.sh $objs "$T/src/core/planted_up.o" >"$T/up.out" 2>&1
expect_eq "an upward call fails the check" 1 $?
expect_grep "and is named with its symbol and where it is defined" \
	'src/core/planted_up.o: core uses rq_kinds_install, defined in src/kinds/kinds.o \(core may use: nothing\)' "$T/up.out"

plant src/agent planted_weak '#include <stddef.h>
extern int rq_tool_replay(void) __attribute__((weak));
int planted_weak(void); int planted_weak(void) { return rq_tool_replay != NULL; }'
# shellcheck disable=SC2086
tools/check-layers.sh $objs "$T/src/agent/planted_weak.o" >"$T/weak.out" 2>&1
expect_eq "a weak upward reference fails it too" 1 $?
expect_grep "named" 'src/agent/planted_weak.o: agent uses rq_tool_replay, defined in src/qual/sysroot.o' "$T/weak.out"

plant harness/report planted_a 'int planted_b(void); int planted_a(void); int planted_a(void) { return planted_b(); }'
plant harness/report planted_b 'int planted_a(void); int planted_b(void); int planted_b(void) { return planted_a(); }'
# shellcheck disable=SC2086
tools/check-layers.sh $objs "$T/harness/report/planted_a.o" "$T/harness/report/planted_b.o" >"$T/cyc.out" 2>&1
expect_eq "two objects of a folder that use each other fail it" 1 $?
expect_grep "named as a cycle" 'harness/report: objects in a cycle \(each uses the next\): harness/report/planted_a.o harness/report/planted_b.o' "$T/cyc.out"
finish

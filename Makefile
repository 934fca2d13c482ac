# rdmaqual: see README.md.  Files are picked up by wildcard: a new kind is
# one file in src/kinds/ plus one line in src/kinds/kinds.def (its keys,
# the node files it reads and its docs come from its descriptor: make docs
# regenerates docs/kinds.md and the man pages); a new test is one file
# tests/test_*.c.  src/ has one folder per layer (see docs/architecture.md
# and tools/check-layers.sh).
CC       ?= gcc
PKGS     := yaml-0.1 jansson libnl-3.0 libnl-route-3.0 libibverbs librdmacm
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
WARN     := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wformat=2 -Wmissing-prototypes
CFLAGS   ?= -O2 -g
# The release is the VERSION file (the tarball, the packages).  The version
# reports, the agent's hello and --version carry is git describe of the tree
# when this is its own git checkout (a tarball unpacked inside another
# repository is not), else the release.  `make RQ_VERSION=1.2` sets it.
RQ_RELEASE := $(shell cat VERSION 2>/dev/null || echo unknown)
RQ_VERSION ?= $(shell [ "$$(git rev-parse --show-toplevel 2>/dev/null)" = "$(CURDIR)" ] && \
	git describe --tags --always --dirty 2>/dev/null || echo '$(RQ_RELEASE)')
VERSION_DEF := -DRQ_VERSION='"$(RQ_VERSION)"' -DRQ_RELEASE='"$(RQ_RELEASE)"'
ALL_CFLAGS := -std=gnu11 $(WARN) $(CFLAGS) $(CPPFLAGS) -D_GNU_SOURCE $(VERSION_DEF) -Isrc -iquote harness $(PKG_CFLAGS) -MMD -MP
LDLIBS   := $(PKG_LIBS) -lm
SAN      := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

SRC      := $(sort $(wildcard src/*/*.c))
HARNESS  := $(sort $(wildcard harness/*/*.c))
LIBSRC   := $(SRC) $(filter-out harness/cli/main.c,$(HARNESS))
TESTS    := $(sort $(wildcard tests/test_*.c))

REL_OBJ  := $(LIBSRC:%.c=build/rel/%.o)
SAN_OBJ  := $(LIBSRC:%.c=build/san/%.o)
TEST_BIN := $(TESTS:tests/%.c=build/san/tests/%)

.PHONY: all deps check unit integration fuzz fuzz-brief demo bench clean docs docs-check layers \
	shellcheck cleanup demo-cluster test-cluster-vm FORCE
# rdmaqual's own MPI benchmark (mpi/rdmaqual-coll.c), a program of its own
# outside the layered library, built where mpicc is installed (make deps
# installs it: deps.txt's libopenmpi-dev).
MPICC ?= $(shell command -v mpicc 2>/dev/null)
COLL  := $(if $(MPICC),build/rdmaqual-coll)
all: rdmaqual $(COLL)

build/rdmaqual-coll: mpi/rdmaqual-coll.c
	@mkdir -p $(dir $@)
	$(MPICC) -std=gnu11 $(WARN) $(CFLAGS) $(CPPFLAGS) $(LDFLAGS) -o $@ $< -lm

deps:
	@tools/deps.sh install

rdmaqual: $(REL_OBJ) build/rel/harness/cli/main.o
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The sanitizer build of the runner itself, used by the tests that do not
# preload libumad2sim (which aborts under ASan).
build/san/rdmaqual: $(SAN_OBJ) build/san/harness/cli/main.o
	$(CC) $(ALL_CFLAGS) $(SAN) -o $@ $^ $(LDLIBS)

build/rel/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

build/san/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN) -c -o $@ $<

# The files that use RQ_VERSION are rebuilt when it changes (a commit, an
# edit that makes the tree dirty): build/version holds the last one built.
VERSION_USERS := harness/cli/main.c harness/cli/manpage.c src/agent/agent_ssh.c harness/exec/runreport.c src/agent/agent_serve.c
build/version: FORCE
	@mkdir -p build
	@echo '$(RQ_VERSION) $(RQ_RELEASE)' | cmp -s - $@ || echo '$(RQ_VERSION) $(RQ_RELEASE)' >$@
$(foreach v,rel san fuzz/obj,$(VERSION_USERS:%.c=build/$(v)/%.o)): build/version
# (a prerequisite that is always out of date)
FORCE:

# Tests link against an archive, so a test pulls in only the objects it
# uses (and works while other parts are still being written).
build/san/librq.a: $(SAN_OBJ)
	@rm -f $@
	ar rcs $@ $^

build/san/tests/%: tests/%.c build/san/librq.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN) -o $@ $< build/san/librq.a $(LDLIBS) $(shell pkg-config --libs check)

# make unit: every unit test; make unit T=loader: tests/test_loader.c alone.
UNIT_BIN := $(if $(T),build/san/tests/test_$(T),$(TEST_BIN))
unit: $(if $(T),$(if $(wildcard tests/test_$(T).c),$(UNIT_BIN),FORCE),$(UNIT_BIN))
	@$(if $(T),$(if $(wildcard tests/test_$(T).c),,echo "no unit test tests/test_$(T).c; there are: $(TESTS:tests/test_%.c=%)" >&2; exit 2))
	@tools/run-unit.sh $(UNIT_BIN)

# make integration: every script; make integration T=60: tests/integration/60-*.sh
# (those that boot guests: under `flock /tmp/rq-vm.lock` on a shared machine).
integration: rdmaqual build/san/rdmaqual
	@tools/run-integration.sh $(T)

# Every shell script of the project (sh, run by the tests, the VM guest and CI).
SCRIPTS := $(sort $(wildcard bench/*.sh tests/integration/*.sh tests/fuzz/*.sh tools/*.sh vm/*.sh \
	fixtures/*/*/*.sh) vm/init .ci/run)

shellcheck:
	@shellcheck $(SCRIPTS) && echo "shellcheck: $(words $(SCRIPTS)) scripts clean"

check: deps
	$(MAKE) all build/san/rdmaqual
	$(MAKE) unit
	$(MAKE) docs-check layers shellcheck
	$(MAKE) integration
	$(MAKE) fuzz-brief

docs:
	./rdmaqual help --markdown > docs/kinds.md

# src/ and harness/ folders include and link only down the layers
# (docs/architecture.md): the includes, then nm over every object
layers: $(REL_OBJ) build/rel/harness/cli/main.o
	@mkdir -p build
	@tools/check-layers.sh $^

docs-check: rdmaqual
	@./rdmaqual help --markdown | diff -u docs/kinds.md - >/dev/null || \
		{ echo "docs/kinds.md is stale: run 'make docs'"; ./rdmaqual help --markdown | diff -u docs/kinds.md -; exit 1; }
	@# every yaml example in README.md and docs/ is a case file lint takes
	@tools/check-doc-yaml.sh ./rdmaqual

# Fuzz targets tests/fuzz/fuzz_NAME.c: the code under test lives in src/,
# harness/exec/ and harness/report/ (the rest of harness/ is the CLI, which
# needs main.c).  They are compiled once for all targets, with the fuzzer's
# coverage; each target has its seeds in tests/fuzz/corpus-NAME
# (the loader's in tests/fuzz/corpus) and grows build/fuzz/corpus-NAME.
FUZZ_SRC := $(SRC) $(sort $(wildcard harness/exec/*.c harness/report/*.c))
FUZZ_OBJ := $(FUZZ_SRC:%.c=build/fuzz/obj/%.o)
# UB must stop the run: by default UBSan only prints and libFuzzer goes on
FUZZ_CFLAGS := -std=gnu11 -g -O1 -D_GNU_SOURCE $(VERSION_DEF) -Isrc -iquote harness $(PKG_CFLAGS) \
	-fno-sanitize-recover=undefined
# -timeout: an input that runs 30 s is a hang, reported as one; libFuzzer's
# default (1200 s) let a parser's endless loop hold make check for 20 min.
FUZZ_RUN = build/fuzz/fuzz_$(1) -max_total_time=$(2) -timeout=30 -max_len=$(3) $(4) build/fuzz/corpus-$(1) \
	$(if $(filter loader,$(1)),tests/fuzz/corpus,tests/fuzz/corpus-$(1))

build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined -MMD -MP -c -o $@ $<

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJ)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined -o $@ $^ $(FUZZ_LDFLAGS) $(LDLIBS)

# fuzz_parsers.c checks that no field is dropped (see there)
build/fuzz/fuzz_parsers: FUZZ_LDFLAGS := -Wl,--wrap=json_object_set_new,--wrap=json_array_append_new
# fuzz_inputs.c acts on forged run-state records: kill(), rm_rf() and
# rm_rf_scratch() are recorded and checked, fork() fails (see there)
build/fuzz/fuzz_inputs: FUZZ_LDFLAGS := -Wl,--wrap=kill,--wrap=rm_rf,--wrap=rm_rf_scratch,--wrap=fork

# kept between builds (pattern-rule objects are intermediate otherwise)
.SECONDARY: $(FUZZ_OBJ)

FUZZ_BIN := build/fuzz/fuzz_loader build/fuzz/fuzz_parsers build/fuzz/fuzz_result \
	build/fuzz/fuzz_inputs build/fuzz/fuzz_exec
FUZZ_DIRS := build/fuzz/corpus-loader build/fuzz/corpus-parsers build/fuzz/corpus-result \
	build/fuzz/corpus-inputs build/fuzz/corpus-exec

# make check: about 125 s in all (fuzz_inputs has 13 targets behind a selector byte).
# A fixed seed: the gate replays the same mutations on every machine, so a
# crash it finds is one anybody can reproduce from the seed, not a draw of
# CI's luck; make fuzz takes libFuzzer's own random seed to explore.
fuzz-brief: $(FUZZ_BIN)
	@mkdir -p $(FUZZ_DIRS)
	$(call FUZZ_RUN,loader,20,4096,-seed=1)
	$(call FUZZ_RUN,parsers,15,16384,-seed=1)
	$(call FUZZ_RUN,result,10,4096,-seed=1)
	$(call FUZZ_RUN,inputs,60,8192,-seed=1)
	$(call FUZZ_RUN,exec,10,8192,-seed=1)

fuzz: $(FUZZ_BIN)
	@mkdir -p $(FUZZ_DIRS)
	$(call FUZZ_RUN,loader,$${FUZZ_SECONDS:-600},8192)
	$(call FUZZ_RUN,parsers,$${FUZZ_SECONDS:-600},16384)
	$(call FUZZ_RUN,result,$${FUZZ_SECONDS:-600},8192)
	$(call FUZZ_RUN,inputs,$${FUZZ_SECONDS:-600},16384)
	$(call FUZZ_RUN,exec,$${FUZZ_SECONDS:-600},16384)

# cases/apps (qperf, libfabric, UCX, rping between the guests) are left
# out: under TCG they add ~40 s to a warm demo whose goal is 45 s.  Run them
# with ./rdmaqual run -t apps (docs/any-program.md).  So are cases/ulp
# (NVMe-oF between the guests, -t ulp) and cases/suites (rdma-core's own
# tests and blktests, from checkouts, -t suites).
# The demo is a run made again and again on one machine: its guests come
# from snapshots (docs/vm.md), unless RQ_VM_SNAPSHOT says otherwise.
demo: deps
	$(MAKE) all
	RQ_VM_SNAPSHOT=$${RQ_VM_SNAPSHOT-1} ./rdmaqual run --report-dir reports -t '!apps' -t '!mpi' -t '!ulp' -t '!suites' cases/

# A lab of four QEMU guests with rxe on one L2 segment (vm/lab-rig.sh), and
# a lab run over ssh between them: node checks on each, all pairs over the
# rxe rails (docs/cluster.md), the package installed on the guests;
# through Slurm, then an allreduce and a bisection across the four with
# srun --mpi=pmix (docs/collectives.md).
# Root; boots guests.
demo-cluster: deps
	$(MAKE) all
	@# The package, installed in every guest as on a lab node (kept in
	@# build/deb; made again only when it is not HEAD's): the nodes run
	@# /usr/bin/rdmaqual.
	@$(MAKE) --no-print-directory deb-current
	@# Through Slurm where it is installed: docs/examples/rdmaqual.sbatch
	@# submitted to the guests' cluster (its controller on the first node,
	@# agents through srun); else over ssh, the controller the same
	@# package beside the rig (the ssh launcher then runs each node's own).
	deb=$$(ls build/deb/rdmaqual_$(RQ_RELEASE)_*.deb | head -n 1); \
	if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && \
		command -v sbatch >/dev/null && command -v munged >/dev/null; then \
		vm/lab-rig.sh -n 4 --slurm --deb "$$deb" -- sh -c 'vm/lab-sbatch.sh reports \
			"$$PWD/tests/integration/lab-vm-cases"; lab=$$?; \
			salloc -N4 --time=10 "$$PWD/rdmaqual" run --report-dir reports \
			tests/integration/lab-collective-cases && exit $$lab'; \
	else \
		vm/lab-rig.sh -n 4 --deb "$$deb" -- sh -c '"$$RQ_LAB_RDMAQUAL" run --nodes "$$RQ_LAB_NODES" \
			--launcher ssh --pairs all --drain-list reports/drain.txt --report-dir reports \
			tests/integration/lab-vm-cases'; \
	fi

# The same rig as a test (healthy run, then one guest degraded); also part
# of make check (make integration T=73).
test-cluster-vm: rdmaqual
	tests/integration/73-cluster-vm.sh

bench: rdmaqual
	@# 4 is a skip (kselftest's code: a tool this host lacks)
	@for b in bench/*.sh; do echo "== $$b"; $$b; rc=$$?; [ $$rc = 0 ] || [ $$rc = 4 ] || exit 1; done

cleanup: rdmaqual
	./rdmaqual cleanup

clean:
	rm -rf build rdmaqual

# Installation, packaging and release targets (install, uninstall, dist,
# man pages, completion): kept in their own files.
include mk/install.mk
include mk/package.mk

# The compiler's dependency files, named from the objects and programs the
# build makes (-MMD writes X.d beside X): never a search of build/, which
# holds unpacked source trees (make dist, deb, rpm) whose own folders may
# end in .d (etc/security/limits.d) and are no makefiles.
DEP_FILES := $(REL_OBJ:.o=.d) $(SAN_OBJ:.o=.d) build/rel/harness/cli/main.d build/san/harness/cli/main.d \
	$(FUZZ_OBJ:.o=.d) $(TEST_BIN:=.d) $(FUZZ_BIN:=.d)
-include $(wildcard $(DEP_FILES))

# rdmaqual: see README.md.  Files are picked up by wildcard: a new kind is
# one file in src/ plus one line in src/kinds.def; a new test is one file
# tests/test_*.c.
CC       ?= gcc
PKGS     := yaml-0.1 jansson libnl-3.0 libnl-route-3.0 libibverbs librdmacm
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
WARN     := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wformat=2 -Wmissing-prototypes
CFLAGS   ?= -O2 -g
ALL_CFLAGS := -std=gnu11 $(WARN) $(CFLAGS) -D_GNU_SOURCE -Isrc -iquote harness $(PKG_CFLAGS) -MMD -MP
LDLIBS   := $(PKG_LIBS) -lm
SAN      := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

SRC      := $(sort $(wildcard src/*.c))
HARNESS  := $(sort $(wildcard harness/*.c))
LIBSRC   := $(SRC) $(filter-out harness/main.c,$(HARNESS))
TESTS    := $(sort $(wildcard tests/test_*.c))

REL_OBJ  := $(LIBSRC:%.c=build/rel/%.o)
SAN_OBJ  := $(LIBSRC:%.c=build/san/%.o)
TEST_BIN := $(TESTS:tests/%.c=build/san/tests/%)

.PHONY: all deps check unit integration fuzz fuzz-brief demo bench clean docs lint-cases cleanup
all: rdmaqual

deps:
	@tools/deps.sh install

rdmaqual: $(REL_OBJ) build/rel/harness/main.o
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

# The sanitizer build of the runner itself, used by the tests that do not
# preload libumad2sim (which aborts under ASan).
build/san/rdmaqual: $(SAN_OBJ) build/san/harness/main.o
	$(CC) $(ALL_CFLAGS) $(SAN) -o $@ $^ $(LDLIBS)

build/rel/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

build/san/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN) -c -o $@ $<

# Tests link against an archive, so a test pulls in only the objects it
# uses (and works while other parts are still being written).
build/san/librq.a: $(SAN_OBJ)
	@rm -f $@
	ar rcs $@ $^

build/san/tests/%: tests/%.c build/san/librq.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN) -o $@ $< build/san/librq.a $(LDLIBS) $(shell pkg-config --libs check)

unit: $(TEST_BIN)
	@tools/run-unit.sh $(TEST_BIN)

integration: rdmaqual build/san/rdmaqual
	@tools/run-integration.sh

check: deps
	$(MAKE) all build/san/rdmaqual
	$(MAKE) unit
	$(MAKE) docs-check
	$(MAKE) integration
	$(MAKE) fuzz-brief

docs:
	./rdmaqual help --markdown > docs/kinds.md

docs-check: rdmaqual
	@./rdmaqual help --markdown | diff -u docs/kinds.md - >/dev/null || \
		{ echo "docs/kinds.md is stale: run 'make docs'"; ./rdmaqual help --markdown | diff -u docs/kinds.md -; exit 1; }

# The loader and what it uses live in src/; harness/ needs main.c.
FUZZ_SRC := $(SRC)
build/fuzz/fuzz_loader: tests/fuzz/fuzz_loader.c $(FUZZ_SRC)
	@mkdir -p $(dir $@)
	clang -std=gnu11 -g -O1 -D_GNU_SOURCE -Isrc -iquote harness $(PKG_CFLAGS) \
		-fsanitize=fuzzer,address,undefined -o $@ $^ $(LDLIBS)

fuzz-brief: build/fuzz/fuzz_loader
	@mkdir -p build/fuzz/corpus && cp -n tests/fuzz/corpus/* build/fuzz/corpus/ 2>/dev/null || true
	build/fuzz/fuzz_loader -max_total_time=$${FUZZ_SECONDS:-20} -max_len=4096 build/fuzz/corpus tests/fuzz/corpus

fuzz: build/fuzz/fuzz_loader
	@mkdir -p build/fuzz/corpus
	build/fuzz/fuzz_loader -max_total_time=$${FUZZ_SECONDS:-600} -max_len=8192 build/fuzz/corpus tests/fuzz/corpus

demo: deps
	$(MAKE) all
	./rdmaqual run --report-dir reports cases/

bench: rdmaqual
	@for b in bench/*.sh; do echo "== $$b"; $$b || exit 1; done

cleanup: rdmaqual
	./rdmaqual cleanup

clean:
	rm -rf build rdmaqual

-include $(shell find build -name '*.d' 2>/dev/null)

# Installing rdmaqual: `make install` / `make uninstall`, with PREFIX
# (default /usr/local) and DESTDIR, in the layout a distribution expects
# (the Debian package and rdmaqual.spec use exactly this).  The installed
# binary finds its files relative to its own prefix (src/core/paths.h), so
# DESTDIR trees and moved prefixes run without a checkout.
#
#   $(BINDIR)/rdmaqual, $(BINDIR)/rdmaqual-coll (the MPI benchmark, where mpicc built it)
#   $(PKGDATADIR)/cases/...            the shipped suite (`rdmaqual run` with no path)
#   $(PKGDATADIR)/fixtures/{fabrics,opensm}   what the shipped ibsim/sm cases read
#   $(PKGLIBEXECDIR)/{kernel.sh,debian-kernel.sh,initramfs.sh,init}   guest image
#   $(DOCDIR)/README.md, $(DOCDIR)/docs/*.md
#   $(MANDIR)/man1/rdmaqual.1, $(MANDIR)/man5/rdmaqual-cases.5
#   $(BASHCOMPDIR)/rdmaqual
PREFIX        ?= /usr/local
BINDIR        ?= $(PREFIX)/bin
DATADIR       ?= $(PREFIX)/share
LIBEXECDIR    ?= $(PREFIX)/libexec
MANDIR        ?= $(DATADIR)/man
DOCDIR        ?= $(DATADIR)/doc/rdmaqual
BASHCOMPDIR   ?= $(DATADIR)/bash-completion/completions
PKGDATADIR    := $(DATADIR)/rdmaqual
PKGLIBEXECDIR := $(LIBEXECDIR)/rdmaqual
INSTALL       ?= install

INST_CASES    := $(sort $(shell find cases -type f -name '*.yaml' 2>/dev/null))
INST_FIXTURES := $(sort $(wildcard fixtures/fabrics/*.net fixtures/fabrics/README \
	fixtures/opensm/*.conf fixtures/opensm/README))
INST_VM       := vm/kernel.sh vm/debian-kernel.sh vm/initramfs.sh vm/init
INST_DOCS     := $(sort $(wildcard docs/*.md))
INST_MAN      := man/rdmaqual.1 man/rdmaqual-cases.5
INST_COMP     := completion/rdmaqual.bash

# The prefix the binary falls back to when it finds no tree beside it
# (src/core/paths.c); objects that use it are rebuilt when it changes.
PREFIX_DEF := -DRQ_PREFIX='"$(PREFIX)"'
$(foreach v,rel san,build/$(v)/src/core/paths.o): ALL_CFLAGS += $(PREFIX_DEF)
$(foreach v,rel san fuzz/obj,build/$(v)/src/core/paths.o): build/prefix
build/prefix: FORCE
	@mkdir -p build
	@echo '$(PREFIX)' | cmp -s - $@ || echo '$(PREFIX)' >$@

.PHONY: install uninstall
install: rdmaqual $(COLL) $(INST_MAN) $(INST_COMP)
	$(INSTALL) -d -m 0755 $(DESTDIR)$(BINDIR) $(DESTDIR)$(PKGLIBEXECDIR) \
		$(DESTDIR)$(DOCDIR)/docs $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	$(INSTALL) -m 0755 rdmaqual $(COLL) $(DESTDIR)$(BINDIR)/
	@# Trees keep their folders (cases/mtu/..., fixtures/opensm/...).
	@set -e; for f in $(INST_CASES) $(INST_FIXTURES); do \
		$(INSTALL) -d -m 0755 "$(DESTDIR)$(PKGDATADIR)/$${f%/*}"; \
		$(INSTALL) -m 0644 "$$f" "$(DESTDIR)$(PKGDATADIR)/$$f"; \
	done; echo "installed $(words $(INST_CASES)) case files and $(words $(INST_FIXTURES)) fixtures in $(DESTDIR)$(PKGDATADIR)"
	$(INSTALL) -m 0755 $(INST_VM) $(DESTDIR)$(PKGLIBEXECDIR)/
	$(INSTALL) -m 0644 README.md $(DESTDIR)$(DOCDIR)/
	$(INSTALL) -m 0644 $(INST_DOCS) $(DESTDIR)$(DOCDIR)/docs/
	$(INSTALL) -m 0644 man/rdmaqual.1 $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 0644 man/rdmaqual-cases.5 $(DESTDIR)$(MANDIR)/man5/
	$(INSTALL) -m 0644 completion/rdmaqual.bash $(DESTDIR)$(BASHCOMPDIR)/rdmaqual

# Exactly what install wrote, then the folders that are rdmaqual's own.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/rdmaqual $(DESTDIR)$(BINDIR)/rdmaqual-coll $(DESTDIR)$(MANDIR)/man1/rdmaqual.1 \
		$(DESTDIR)$(MANDIR)/man5/rdmaqual-cases.5 $(DESTDIR)$(BASHCOMPDIR)/rdmaqual
	rm -f $(addprefix $(DESTDIR)$(PKGDATADIR)/,$(INST_CASES) $(INST_FIXTURES))
	rm -f $(addprefix $(DESTDIR)$(PKGLIBEXECDIR)/,$(notdir $(INST_VM)))
	rm -f $(DESTDIR)$(DOCDIR)/README.md $(addprefix $(DESTDIR)$(DOCDIR)/,$(INST_DOCS))
	@# rmdir, never rm -r: a file someone put there stays, and says so.
	-@for d in $(DESTDIR)$(PKGDATADIR) $(DESTDIR)$(PKGLIBEXECDIR) $(DESTDIR)$(DOCDIR); do \
		[ ! -d "$$d" ] || find "$$d" -depth -type d -exec rmdir {} + 2>/dev/null; \
		[ ! -d "$$d" ] || echo "uninstall: $$d kept: not empty" >&2; \
	done; true

# The man pages are made by the binary from its own tables (harness/cli/manpage.c)
# and kept in man/ like docs/kinds.md: make docs writes them, docs-check
# fails when they are stale, and the rendering is linted.
MAN_SECTIONS := 1 5
man_file = man/$(if $(filter 1,$(1)),rdmaqual.1,rdmaqual-cases.5)
.PHONY: docs-man man-check environ-check man-lint
docs: docs-man
docs-man: rdmaqual
	@mkdir -p man
	@set -e; for s in $(MAN_SECTIONS); do \
		f=man/$$( [ $$s = 1 ] && echo rdmaqual.1 || echo rdmaqual-cases.5); \
		./rdmaqual help --man $$s >$$f.tmp && mv $$f.tmp $$f; echo "wrote $$f"; done
docs-check: man-check environ-check man-lint
man-check: rdmaqual
	@set -e; for s in $(MAN_SECTIONS); do \
		f=man/$$( [ $$s = 1 ] && echo rdmaqual.1 || echo rdmaqual-cases.5); \
		./rdmaqual help --man $$s | diff -u $$f - >/dev/null || \
		{ echo "$$f is stale: run 'make docs'"; ./rdmaqual help --man $$s | diff -u $$f - | head -40; exit 1; }; \
	done
environ-check:
	@tools/check-environ.sh
# groff's and mandoc's own checks, and man(1) renders each page
man-lint: $(INST_MAN)
	@tools/check-man.sh $(INST_MAN)

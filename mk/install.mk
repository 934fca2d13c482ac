# Installing rdmaqual: `make install` / `make uninstall`, with PREFIX
# (default /usr/local) and DESTDIR, in the layout a distribution expects
# (the Debian package and rdmaqual.spec use exactly this).  The installed
# binary finds its files relative to its own prefix (src/core/paths.h), so
# DESTDIR trees and moved prefixes run without a checkout.
#
#   $(BINDIR)/rdmaqual, $(BINDIR)/rdmaqual-coll (the MPI benchmark, where mpicc built it)
#   $(MANDIR)/man1/rdmaqual-coll.1 (with it)
#   $(PKGDATADIR)/cases/...            the shipped suite (`rdmaqual run` with no path)
#   $(PKGDATADIR)/fixtures/{fabrics,opensm}   what the shipped ibsim/sm cases read
#   $(PKGLIBEXECDIR)/{kernel.sh,initramfs.sh,cache.sh,guest-ssh.sh,l2-segment.sh,...,init}   guests
#   $(DOCDIR)/README.md, $(DOCDIR)/docs/*.md, $(DOCDIR)/examples/rdmaqual.sbatch
#   $(MANDIR)/man1/rdmaqual.1, $(MANDIR)/man5/rdmaqual-cases.5
#   $(BASHCOMPDIR)/rdmaqual, $(ZSHCOMPDIR)/_rdmaqual
PREFIX        ?= /usr/local
BINDIR        ?= $(PREFIX)/bin
DATADIR       ?= $(PREFIX)/share
LIBEXECDIR    ?= $(PREFIX)/libexec
MANDIR        ?= $(DATADIR)/man
DOCDIR        ?= $(DATADIR)/doc/rdmaqual
BASHCOMPDIR   ?= $(DATADIR)/bash-completion/completions
# zsh's own default site dir (in Debian's fpath for /usr/local); the Debian
# package sets vendor-completions, the RPM site-functions under /usr.
ZSHCOMPDIR    ?= $(DATADIR)/zsh/site-functions
PKGDATADIR    := $(DATADIR)/rdmaqual
PKGLIBEXECDIR := $(LIBEXECDIR)/rdmaqual
INSTALL       ?= install

INST_CASES    := $(sort $(shell find cases -type f -name '*.yaml' 2>/dev/null))
INST_FIXTURES := $(sort $(wildcard fixtures/fabrics/*.net fixtures/fabrics/README \
	fixtures/opensm/*.conf fixtures/opensm/README))
# Everything the binary runs or sources at run time from its libexec dir:
# every vm/ script but those only a checkout's make targets and tests run
# (the lab rig of make demo-cluster), and the guest's init.  A wildcard, so
# that a new helper script is installed without a line here
# (tests/integration/18-install.sh checks that every script name in src/
# is installed).  All are scripts with #! and 0755: dh_fixperms makes
# whatever lies in usr/libexec executable, and lintian then wants a #!.
INST_VM_CHECKOUT := vm/lab-rig.sh vm/lab-sbatch.sh vm/slurm-conf.sh
INST_VM       := $(filter-out $(INST_VM_CHECKOUT),$(sort $(wildcard vm/*.sh))) vm/init
INST_DOCS     := $(sort $(wildcard docs/*.md))
INST_EXAMPLES := docs/examples/rdmaqual.sbatch
INST_MAN      := man/rdmaqual.1 man/rdmaqual-cases.5
# rdmaqual-coll's page, written by hand; installed with the program
INST_MAN_COLL := man/rdmaqual-coll.1
INST_COMP     := completion/rdmaqual.bash completion/_rdmaqual

# The prefix the binary falls back to when it finds no tree beside it
# (src/core/paths.c); objects that use it are rebuilt when it changes.
PREFIX_DEF := -DRQ_PREFIX='"$(PREFIX)"'
$(foreach v,rel san,build/$(v)/src/core/paths.o): ALL_CFLAGS += $(PREFIX_DEF)
$(foreach v,rel san fuzz/obj,build/$(v)/src/core/paths.o): build/prefix
build/prefix: FORCE
	@mkdir -p build
	@echo '$(PREFIX)' | cmp -s - $@ || echo '$(PREFIX)' >$@

# the example batch script is a script too
SCRIPTS += $(INST_EXAMPLES)

.PHONY: install uninstall
install: rdmaqual $(COLL) $(INST_MAN) $(INST_COMP)
	$(INSTALL) -d -m 0755 $(DESTDIR)$(BINDIR) $(DESTDIR)$(PKGLIBEXECDIR) \
		$(DESTDIR)$(DOCDIR)/docs $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
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
	$(INSTALL) -m 0644 $(INST_EXAMPLES) $(DESTDIR)$(DOCDIR)/examples/
	$(INSTALL) -m 0644 man/rdmaqual.1 $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 0644 man/rdmaqual-cases.5 $(DESTDIR)$(MANDIR)/man5/
	$(if $(COLL),$(INSTALL) -m 0644 $(INST_MAN_COLL) $(DESTDIR)$(MANDIR)/man1/)
	$(INSTALL) -m 0644 completion/rdmaqual.bash $(DESTDIR)$(BASHCOMPDIR)/rdmaqual
	$(INSTALL) -m 0644 completion/_rdmaqual $(DESTDIR)$(ZSHCOMPDIR)/_rdmaqual

# Exactly what install wrote, then the folders that are rdmaqual's own.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/rdmaqual $(DESTDIR)$(BINDIR)/rdmaqual-coll $(DESTDIR)$(MANDIR)/man1/rdmaqual.1 \
		$(DESTDIR)$(MANDIR)/man1/rdmaqual-coll.1 \
		$(DESTDIR)$(MANDIR)/man5/rdmaqual-cases.5 $(DESTDIR)$(BASHCOMPDIR)/rdmaqual \
		$(DESTDIR)$(ZSHCOMPDIR)/_rdmaqual
	rm -f $(addprefix $(DESTDIR)$(PKGDATADIR)/,$(INST_CASES) $(INST_FIXTURES))
	rm -f $(addprefix $(DESTDIR)$(PKGLIBEXECDIR)/,$(notdir $(INST_VM)))
	rm -f $(DESTDIR)$(DOCDIR)/README.md $(addprefix $(DESTDIR)$(DOCDIR)/,$(INST_DOCS)) \
		$(DESTDIR)$(DOCDIR)/examples/$(notdir $(INST_EXAMPLES))
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
man-lint: $(INST_MAN) $(INST_MAN_COLL)
	@tools/check-man.sh $(INST_MAN) $(INST_MAN_COLL)

# A release tarball: the committed tree (git archive of HEAD) as
# rdmaqual-VERSION/, reproducible (gzip -n, git's own timestamps).  Built
# outside git, the version comes from VERSION.  distcheck unpacks it where
# no git describe reaches (the check of a tree inside this checkout would
# find this repository: the Makefile only asks git when the tree is its
# toplevel), builds it, runs the unit tests and docs-check there, and
# installs it into a DESTDIR.
DIST_NAME := rdmaqual-$(RQ_RELEASE)
DIST_DIR  := build/distcheck
.PHONY: dist distcheck
dist:
	@[ "$$(git rev-parse --show-toplevel 2>/dev/null)" = "$(CURDIR)" ] || \
		{ echo "make dist: needs the git checkout (it archives HEAD)" >&2; exit 2; }
	@git diff --quiet HEAD -- || echo "make dist: uncommitted changes are left out (the tarball is HEAD)" >&2
	@# tar.umask 022: dirs 0755, files 0644 (git's default 002 leaves them group-writable,
	@# which tar as root keeps, and rdmaqual then refuses the unpacked tree as a checkout)
	git -c tar.umask=022 archive --format=tar --prefix=$(DIST_NAME)/ HEAD | gzip -9n >$(DIST_NAME).tar.gz.tmp
	@mv $(DIST_NAME).tar.gz.tmp $(DIST_NAME).tar.gz
	@echo "wrote $(DIST_NAME).tar.gz ($$(du -h $(DIST_NAME).tar.gz | cut -f1))"

distcheck: dist
	rm -rf $(DIST_DIR) && mkdir -p $(DIST_DIR)
	tar -xzf $(DIST_NAME).tar.gz -C $(DIST_DIR)
	$(MAKE) -C $(DIST_DIR)/$(DIST_NAME) all build/san/rdmaqual
	$(MAKE) -C $(DIST_DIR)/$(DIST_NAME) unit docs-check
	@v=$$($(DIST_DIR)/$(DIST_NAME)/rdmaqual --version); [ "$$v" = "rdmaqual $(RQ_RELEASE)" ] || \
		{ echo "distcheck: --version says '$$v', want 'rdmaqual $(RQ_RELEASE)'" >&2; exit 1; }
	$(MAKE) -C $(DIST_DIR)/$(DIST_NAME) install DESTDIR=$(CURDIR)/$(DIST_DIR)/dest PREFIX=/usr
	$(DIST_DIR)/dest/usr/bin/rdmaqual lint
	@echo "distcheck: $(DIST_NAME).tar.gz builds, passes the unit tests and installs outside git"

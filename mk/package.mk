# Packages, built from the release tarball (make dist) so that what is
# packaged is exactly what is released, each in its own scratch tree:
#
#   make deb        build/deb/rdmaqual_VERSION_ARCH.deb and rdmaqual-mpi_...
#                   (dpkg-buildpackage -b, the unit tests included), then
#                   lintian: no error, no warning
#   make rpm        build/rpm/RPMS/ARCH/rdmaqual-VERSION-1.ARCH.rpm
#                   (rpmbuild -bb --nodeps: Debian's rpm has no EL build
#                   dependencies to check), rpmlint, and its file list
#                   compared with make install's
#
# Neither is part of make check (each builds the tree twice, minutes here);
# tools/check-packages.sh runs both.
DEB_DIR := build/deb
RPM_DIR := build/rpm
.PHONY: deb rpm
deb: dist
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)
	tar -xzf $(DIST_NAME).tar.gz -C $(DEB_DIR)
	@v=$$(cd $(DEB_DIR)/$(DIST_NAME) && dpkg-parsechangelog -S Version); [ "$$v" = "$(RQ_RELEASE)" ] || \
		{ echo "deb: debian/changelog says $$v, VERSION says $(RQ_RELEASE)" >&2; exit 1; }
	cd $(DEB_DIR)/$(DIST_NAME) && dpkg-buildpackage -us -uc -b -j2
	lintian --fail-on error,warning --info $(DEB_DIR)/rdmaqual_$(RQ_RELEASE)_*.changes
	@# what deb-current compares: the packages are HEAD's tree
	@git rev-parse 'HEAD^{tree}' >$(DEB_DIR)/source-tree
	@# the unpacked source tree is done with (the packages stay)
	rm -rf $(DEB_DIR)/$(DIST_NAME)

# The packages that make demo-cluster installs in its guests, rebuilt only
# when they are not HEAD's: build/deb/source-tree names the tree they were
# built from (make deb writes it after lintian passed), and a package is
# current while that is HEAD's tree (docs/packaging.md).
.PHONY: deb-current
deb-current:
	@t=$$(git rev-parse 'HEAD^{tree}' 2>/dev/null); \
	if [ -n "$$t" ] && [ "$$(cat $(DEB_DIR)/source-tree 2>/dev/null)" = "$$t" ] && \
		ls $(DEB_DIR)/rdmaqual_$(RQ_RELEASE)_*.deb >/dev/null 2>&1; then \
		echo "deb: $$(ls $(DEB_DIR)/rdmaqual_$(RQ_RELEASE)_*.deb) is current (built from HEAD's tree)"; \
	else $(MAKE) deb; fi

rpm: dist
	rm -rf $(RPM_DIR) && mkdir -p $(RPM_DIR)/SOURCES
	@v=$$(sed -n 's/^Version: *//p' rdmaqual.spec); [ "$$v" = "$(RQ_RELEASE)" ] || \
		{ echo "rpm: rdmaqual.spec says $$v, VERSION says $(RQ_RELEASE)" >&2; exit 1; }
	cp $(DIST_NAME).tar.gz $(RPM_DIR)/SOURCES/
	@# Debian's rpm has no find-debuginfo: no debuginfo subpackage here.
	rpmbuild -bb --nodeps --define '_topdir $(CURDIR)/$(RPM_DIR)' \
		--define 'debug_package %{nil}' --define '_smp_mflags -j2' \
		$(if $(MPICC),--define 'mpicc $(MPICC)') rdmaqual.spec
	tools/check-rpm.sh $(RPM_DIR)/RPMS/*/rdmaqual-$(RQ_RELEASE)-1*.rpm $(RPM_DIR)/RPMS/*/rdmaqual-mpi-$(RQ_RELEASE)-1*.rpm

# The maintainer's path before a release, in a fresh clone (tools/release-check.sh):
# about an hour here, so no part of make check.
.PHONY: release-check
release-check:
	tools/release-check.sh

# Packages, built from the release tarball (make dist) so that what is
# packaged is exactly what is released, each in its own scratch tree:
#
#   make deb        build/deb/rdmaqual_VERSION_ARCH.deb (dpkg-buildpackage -b,
#                   the unit tests included), then lintian: no error, no warning
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

rpm: dist
	rm -rf $(RPM_DIR) && mkdir -p $(RPM_DIR)/SOURCES
	@v=$$(sed -n 's/^Version: *//p' rdmaqual.spec); [ "$$v" = "$(RQ_RELEASE)" ] || \
		{ echo "rpm: rdmaqual.spec says $$v, VERSION says $(RQ_RELEASE)" >&2; exit 1; }
	cp $(DIST_NAME).tar.gz $(RPM_DIR)/SOURCES/
	@# Debian's rpm has no find-debuginfo: no debuginfo subpackage here.
	rpmbuild -bb --nodeps --define '_topdir $(CURDIR)/$(RPM_DIR)' \
		--define 'debug_package %{nil}' --define '_smp_mflags -j2' rdmaqual.spec
	tools/check-rpm.sh $(RPM_DIR)/RPMS/*/rdmaqual-$(RQ_RELEASE)-1*.rpm

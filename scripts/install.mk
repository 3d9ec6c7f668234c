# Installing XenNetVM (included by the top Makefile).
#   make install          everything below, under DESTDIR + PREFIX
#   make install-libxnv   libxnv alone (header, .so, .a, .pc, libxnv(3)):
#                         builds libxnv only, so it needs neither DPDK nor
#                         the Xen libraries (an NF guest's build host)
#   make deb              Debian packages into $(B)/deb/ (debian/README.md)
# Where things go (each a variable; DESTDIR is prepended to all of them):
#   SBINDIR      xnv-core, xnv-ctl, xnv-xl
#   LIBEXECDIR   the example NFs (xnv-forwarder, ...) and xnv-nf-run,
#                which xnv-nf@.service runs
#   LIBDIR       libxnv.so.VERSION (+ .so.0, .so), libxnv.a, pkgconfig/
#   DATADIR      xnv/python/xnv (xnv-ctl's package), bash completion
#   SYSCONFDIR   xnv/xnv.ini and xnv/nf/fwd-{a,b}.conf (samples; an
#                existing file is left alone)
#   SYSTEMDUNITDIR, SYSUSERSDIR   units, the xnv user and group
#   DKMSDIR      gntshare's module source and dkms.conf
PREFIX         ?= /usr/local
MULTIARCH      ?= $(or $(DEB_HOST_MULTIARCH),$(shell $(CC) -print-multiarch 2>/dev/null))
LIBDIR         ?= $(PREFIX)/lib$(if $(MULTIARCH),/$(MULTIARCH))
SBINDIR        ?= $(PREFIX)/sbin
LIBEXECDIR     ?= $(PREFIX)/libexec/xnv
INCLUDEDIR     ?= $(PREFIX)/include
DATADIR        ?= $(PREFIX)/share
MANDIR         ?= $(DATADIR)/man
SYSCONFDIR     ?= /etc
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR    ?= $(PREFIX)/lib/sysusers.d
BASHCOMPDIR    ?= $(DATADIR)/bash-completion/completions
DKMSDIR        ?= /usr/src/gntshare-$(VERSION)
D              := $(DESTDIR)

.PHONY: install install-libxnv deb

# The installed paths into a packaging/*.in file.
install_subst = sed -e 's|@SBINDIR@|$(SBINDIR)|g' \
	-e 's|@LIBEXECDIR@|$(LIBEXECDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g'

install-libxnv: $(XNV_A) $(XNV_SO)
	install -d $(D)$(LIBDIR)/pkgconfig $(D)$(INCLUDEDIR)/xnv $(D)$(MANDIR)/man3
	install -m 644 domu-lib/include/xnv/nf.h $(D)$(INCLUDEDIR)/xnv/
	install -m 644 $(XNV_A) $(D)$(LIBDIR)/
	install -m 644 $(XNV_SO) $(D)$(LIBDIR)/libxnv.so.$(VERSION)
	ln -sf libxnv.so.$(VERSION) $(D)$(LIBDIR)/libxnv.so.0
	ln -sf libxnv.so.0 $(D)$(LIBDIR)/libxnv.so
	$(call xnv_pc,$(PREFIX),$(LIBDIR),$(INCLUDEDIR)) \
	    > $(D)$(LIBDIR)/pkgconfig/libxnv.pc
	install -m 644 docs/man/libxnv.3 $(D)$(MANDIR)/man3/

install: all install-libxnv
	install -d $(D)$(SBINDIR) $(D)$(LIBEXECDIR) $(D)$(MANDIR)/man8 \
	    $(D)$(DATADIR)/xnv/python/xnv $(D)$(BASHCOMPDIR) \
	    $(D)$(SYSCONFDIR)/xnv/nf $(D)$(SYSTEMDUNITDIR) $(D)$(SYSUSERSDIR)
	install -m 755 $(B)/bin/xnv-core $(B)/bin/xnv-ctl $(B)/bin/xnv-xl \
	    $(D)$(SBINDIR)/
	install -m 755 $(EXAMPLES:%=$(B)/bin/xnv-%) $(D)$(LIBEXECDIR)/
	install -m 644 $(B)/lib/python/xnv/*.py $(B)/lib/python/xnv/VERSION \
	    $(D)$(DATADIR)/xnv/python/xnv/
	install -m 644 docs/man/*.8 $(D)$(MANDIR)/man8/
	install -m 644 packaging/xnv-ctl.bash $(D)$(BASHCOMPDIR)/xnv-ctl
	install -m 644 packaging/sysusers-xnv.conf $(D)$(SYSUSERSDIR)/xnv.conf
	$(install_subst) packaging/xnv-nf-run.in > $(D)$(LIBEXECDIR)/xnv-nf-run
	chmod 755 $(D)$(LIBEXECDIR)/xnv-nf-run
	for u in xnv-core.service xnv-nf@.service; do \
	    $(install_subst) packaging/$$u.in > $(D)$(SYSTEMDUNITDIR)/$$u; done
	test -e $(D)$(SYSCONFDIR)/xnv/xnv.ini || \
	    install -m 644 packaging/xnv.ini $(D)$(SYSCONFDIR)/xnv/
	for n in fwd-a fwd-b; do f=$(D)$(SYSCONFDIR)/xnv/nf/$$n.conf; \
	    test -e $$f || $(install_subst) -e "s|@NAME@|$$n|g" \
	        packaging/nf.conf.in > $$f; done
	$(MAKE) --no-print-directory -f gntshare/kmod/Makefile dist \
	    DESTDIR=$(D)$(DKMSDIR)

# Built from a copy of the tree in $(B)/deb/xnv-$(VERSION), so that
# dpkg-buildpackage leaves its files in $(B)/deb/ and its clean step
# (make clean) never touches this tree's build/.
DEB_DIR := $(B)/deb
deb:
	@command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null || \
	    { echo "make deb: needs dpkg-dev and debhelper (make deps)" >&2; exit 1; }
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/xnv-$(VERSION)
	tar -c --exclude-vcs --exclude=./build --exclude=./build-san \
	    --exclude=./.venv --exclude=./bench/results . | \
	    tar -x -C $(DEB_DIR)/xnv-$(VERSION)
	cd $(DEB_DIR)/xnv-$(VERSION) && dpkg-buildpackage -b -us -uc
	@ls $(DEB_DIR)/*.deb

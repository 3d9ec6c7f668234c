# libxnv: the NF library (static, shared, pkg-config file).  No DPDK; the
# Xen client only when the Xen libraries exist (HAVE_XEN, gntshare/build.mk).
XNV_SRC  := domu-lib/nf.c domu-lib/io.c domu-lib/liveness.c domu-lib/stats.c \
            domu-lib/sleep.c
XNV_OBJ  := $(XNV_SRC:%.c=$(B)/obj/%.o)
# What libxnv carries of gntshare: the common and client parts only.
XNV_GNTS_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(GNTS_COMMON) $(GNTS_CLIENT))
XNV_A    := $(B)/lib/libxnv.a
XNV_SO   := $(B)/lib/libxnv.so.0
XNV_PC   := $(B)/lib/pkgconfig/libxnv.pc
# The Xen client is referenced weakly (gntshare/cli.c): a static link pulls
# it in only when asked to, which libxnv.pc does where it was built (with
# --static; as Libs.private, not Requires.private, so that a plain
# `pkg-config libxnv` never needs the Xen libraries' .pc files; their own
# static dependencies, xentoollog and xentoolcore, are listed with them).
ifeq ($(HAVE_XEN),1)
XNV_PC_LIBS     := -Wl,-u,gnts_xen_cli_ops \
                   $(shell pkg-config --static --libs xenstore xengnttab xenevtchn 2>/dev/null)
endif

all: $(XNV_A) $(XNV_SO) $(XNV_PC)

$(XNV_A): $(XNV_OBJ) $(XNV_GNTS_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# Only the API of <xnv/nf.h> is exported (libxnv.map).
$(XNV_SO): $(XNV_OBJ) $(XNV_GNTS_OBJ) domu-lib/libxnv.map
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libxnv.so.0 \
	    -Wl,--version-script=domu-lib/libxnv.map $(LDSAN) -o $@ \
	    $(XNV_OBJ) $(XNV_GNTS_OBJ) $(XEN_LIBS)
	ln -sf libxnv.so.0 $(B)/lib/libxnv.so

# In-tree .pc: examples build against the build directory with
# PKG_CONFIG_PATH=$(B)/lib/pkgconfig, exactly as users do after install
# (scripts/install.mk writes the installed one with the same function).
# Static linking by default so NF binaries run anywhere (and in DomUs).
#   $(call xnv_pc,PREFIX,LIBDIR,INCLUDEDIR)
xnv_pc = sed -e 's|@PREFIX@|$(1)|' -e 's|@LIBDIR@|$(2)|' \
	     -e 's|@INCLUDEDIR@|$(3)|' \
	     -e 's|@VERSION@|$(VERSION)|' -e 's|@XEN_LIBS@|$(XNV_PC_LIBS)|' \
	     domu-lib/libxnv.pc.in

$(XNV_PC): domu-lib/libxnv.pc.in Makefile
	@mkdir -p $(dir $@)
	$(call xnv_pc,$(abspath $(B)),$(abspath $(B))/lib,$(CURDIR)/domu-lib/include) > $@

# xnv_version(): the project's one version (the top Makefile's VERSION).
EXTRA_CFLAGS_domu-lib := -DXNV_VERSION=\"$(VERSION)\"

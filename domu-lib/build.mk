# libxnv: the NF library (static, shared, pkg-config file).  No DPDK.
XNV_SRC  := domu-lib/nf.c domu-lib/io.c domu-lib/liveness.c
XNV_OBJ  := $(XNV_SRC:%.c=$(B)/obj/%.o)
XNV_A    := $(B)/lib/libxnv.a
XNV_SO   := $(B)/lib/libxnv.so.0
XNV_PC   := $(B)/lib/pkgconfig/libxnv.pc
PREFIX   ?= /usr/local

all: $(XNV_A) $(XNV_SO) $(XNV_PC)

# libxnv carries the gntshare objects it needs, so NFs link one library.
$(XNV_A): $(XNV_OBJ) $(GNTS_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(XNV_SO): $(XNV_OBJ) $(GNTS_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libxnv.so.0 $(LDSAN) -o $@ $^ $(XEN_LIBS)
	ln -sf libxnv.so.0 $(B)/lib/libxnv.so

# In-tree .pc: examples build against the build directory with
# PKG_CONFIG_PATH=$(B)/lib/pkgconfig, exactly as users do after install.
# Static linking by default so NF binaries run anywhere (and in DomUs).
$(XNV_PC): domu-lib/libxnv.pc.in
	@mkdir -p $(dir $@)
	sed -e 's|@LIBDIR@|$(CURDIR)/$(B)/lib|' \
	    -e 's|@CFLAGS@|-I$(CURDIR)/domu-lib/include|' \
	    $< > $@

install: all
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include/xnv
	install -m 644 domu-lib/include/xnv/nf.h $(DESTDIR)$(PREFIX)/include/xnv/
	install -m 644 $(XNV_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(XNV_SO) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libxnv.so.0 $(DESTDIR)$(PREFIX)/lib/libxnv.so
	sed -e 's|@LIBDIR@|$(PREFIX)/lib|' -e 's|@CFLAGS@|-I$(PREFIX)/include|' \
	    domu-lib/libxnv.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/libxnv.pc

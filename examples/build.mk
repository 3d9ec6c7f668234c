# Example NFs: built only against libxnv, through its pkg-config file.
XNV_PKG = PKG_CONFIG_PATH=$(CURDIR)/$(B)/lib/pkgconfig pkg-config
EXAMPLES := forwarder generator sink

all: $(EXAMPLES:%=$(B)/bin/xnv-%)

$(B)/bin/xnv-%: examples/%/*.c $(XNV_A) $(XNV_PC)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(OPT) $(shell $(XNV_PKG) --cflags libxnv) \
	    -o $@ $(filter %.c,$^) $(shell $(XNV_PKG) --libs libxnv) $(LDSAN)

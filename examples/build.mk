# Example NFs: built only against libxnv, through its pkg-config file.
# xnv-<name> is examples/<name>/*.c linked with examples/common (packet
# parsing, checksums, prefixes, rule files, hash table, the shared main()).
XNV_PKG = PKG_CONFIG_PATH=$(abspath $(B))/lib/pkgconfig pkg-config
EXAMPLES := forwarder generator sink router firewall lb monitor dpi nat
EX_CFLAGS = $(CSTD) $(WARN) $(OPT) $(shell $(XNV_PKG) --cflags libxnv) \
	    -Iexamples/common
EX_COMMON_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(wildcard examples/common/*.c))
EX_COMMON_A   := $(B)/lib/libxnv-examples.a
ex_objs = $(patsubst %.c,$(B)/obj/%.o,$(wildcard examples/$(1)/*.c))

all: $(EXAMPLES:%=$(B)/bin/xnv-%)

# Not the generic rule of the top Makefile: examples see libxnv only
# through pkg-config, as out-of-tree NFs do.
$(B)/obj/examples/%.o: examples/%.c $(XNV_PC)
	@mkdir -p $(dir $@)
	$(CC) $(EX_CFLAGS) -MMD -MP -c $< -o $@

$(EX_COMMON_A): $(EX_COMMON_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

.PRECIOUS: $(B)/obj/examples/%.o
.SECONDEXPANSION:
$(B)/bin/xnv-%: $$(call ex_objs,$$*) $(EX_COMMON_A) $(XNV_A) $(XNV_PC)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $(filter %.o,$^) $(EX_COMMON_A) \
	    $(shell $(XNV_PKG) --static --libs libxnv) $(LDSAN)

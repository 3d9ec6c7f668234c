# libgntshare: regions, rendezvous (host and xen backends), descriptor rings.
# Programs using the xen backend link $(XEN_LIBS) too.
GNTS_SRC := gntshare/ring.c gntshare/region.c gntshare/kgrant.c gntshare/galloc.c \
            gntshare/host_msg.c \
            gntshare/host_server.c gntshare/host_client.c \
            gntshare/xen_server.c gntshare/xen_client.c
GNTS_OBJ := $(GNTS_SRC:%.c=$(B)/obj/%.o)
GNTS_LIB := $(B)/lib/libgntshare.a

all: $(GNTS_LIB)
$(GNTS_LIB): $(GNTS_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

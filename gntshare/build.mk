# libgntshare: regions, rendezvous (host and xen backends), descriptor rings.
#   GNTS_COMMON  both sides: rings, socket message framing, logging
#   GNTS_CLIENT  the NF side (linked into libxnv): backend registry, host
#                client, and the Xen client when the Xen libraries exist
#   GNTS_SERVER  the core side: regions and grant engines, backend
#                registry, host server, Xen server
# HAVE_XEN (pkg-config finds xenstore, xengnttab, xenevtchn, xenlight) builds
# the Xen parts; programs using them link $(XEN_LIBS) too; the server part
# $(XEN_SRV_LIBS) (libxl as well: xen_punish.c).
HAVE_XEN ?= $(shell pkg-config --exists xenstore xengnttab xenevtchn xenlight 2>/dev/null && echo 1)
GNTS_COMMON := gntshare/ring.c gntshare/host_msg.c gntshare/log.c \
               gntshare/bell_sock.c gntshare/rt.c
GNTS_CLIENT := gntshare/cli.c gntshare/host_client.c
GNTS_SERVER := gntshare/region.c gntshare/srv.c gntshare/host_server.c \
               gntshare/host_listen.c gntshare/host_wait.c gntshare/host_srv_ops.c
ifeq ($(HAVE_XEN),1)
# both sides: doorbells under Xen (event channels), and the strict
# parsing of XenStore numbers (xen_keys.c needs no Xen library, but is
# the Xen protocol's: a libxnv without Xen compiles none of it)
GNTS_COMMON += gntshare/bell_evtchn.c gntshare/xen_keys.c
GNTS_CLIENT += gntshare/xen_client.c gntshare/xen_answer.c
GNTS_SERVER += gntshare/kgrant.c gntshare/galloc.c gntshare/xen_server.c \
               gntshare/xen_events.c gntshare/xen_publish.c gntshare/xen_scan.c \
               gntshare/xen_bell.c gntshare/xen_punish.c
EXTRA_CFLAGS_gntshare := -DGNTS_HAVE_XEN
else
XEN_LIBS :=
XEN_SRV_LIBS :=
endif
GNTS_SRC := $(GNTS_COMMON) $(GNTS_CLIENT) $(GNTS_SERVER)
GNTS_OBJ := $(GNTS_SRC:%.c=$(B)/obj/%.o)
GNTS_LIB := $(B)/lib/libgntshare.a

all: $(GNTS_LIB)
$(GNTS_LIB): $(GNTS_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# toolstack-hooks: xnv-xl (xl wrapper for NF domains).  libxlutil parses
# the domain configs, libxenstore registers the NF devices.
XNVXL_SRC := toolstack-hooks/xnv-xl.c toolstack-hooks/nfv_cfg.c \
             toolstack-hooks/xl_run.c toolstack-hooks/nfdom.c \
             toolstack-hooks/suspend.c \
             toolstack-hooks/xs_dev.c
# gntshare's strict XenStore number parser (xen_keys.c), shared with the core
XNVXL_OBJ := $(XNVXL_SRC:%.c=$(B)/obj/%.o) $(B)/obj/gntshare/xen_keys.o
XLU_LIBS  := $(shell pkg-config --libs xlutil xenstore 2>/dev/null)

all: $(B)/bin/xnv-xl

$(B)/bin/xnv-xl: $(XNVXL_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $(XNVXL_OBJ) $(XLU_LIBS) $(LDSAN)
# xnv-xl --version: the project's one version (the top Makefile's VERSION).
EXTRA_CFLAGS_toolstack-hooks := -DXNV_VERSION=\"$(VERSION)\"

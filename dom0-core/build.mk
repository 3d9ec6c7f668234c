# xnv-core: the Dom0 DPDK engine.
CORE_SRC := dom0-core/main.c dom0-core/opts.c dom0-core/eal_args.c dom0-core/config.c \
            dom0-core/config_file.c dom0-core/config_keys.c dom0-core/config_port.c \
            dom0-core/config_devargs.c \
            dom0-core/config_access.c dom0-core/config_limits.c \
            dom0-core/pool.c dom0-core/port.c dom0-core/port_drv.c dom0-core/port_intr.c \
            dom0-core/port_afpacket.c dom0-core/port_memif.c \
            dom0-core/attach.c dom0-core/domain.c \
            dom0-core/classify.c dom0-core/datapath.c dom0-core/port_rx.c dom0-core/nf_rx.c dom0-core/stats.c \
            dom0-core/doorbell.c dom0-core/worker.c dom0-core/worker_port.c \
            dom0-core/worker_steer.c \
            dom0-core/chain.c dom0-core/service.c dom0-core/flow.c \
            dom0-core/flow_rule.c dom0-core/flow_acl.c dom0-core/flow_cmds.c \
            dom0-core/flow_path.c \
            dom0-core/config_flow.c dom0-core/config_fabric.c dom0-core/fabric.c \
            dom0-core/ctl.c dom0-core/ctl_cmds.c dom0-core/ctl_pointer.c dom0-core/config_show.c dom0-core/ctl_ops.c dom0-core/ctl_reload.c dom0-core/nf_stats.c dom0-core/guard.c \
            dom0-core/latency.c dom0-core/latency_rte.c \
            dom0-core/pace.c dom0-core/quota.c dom0-core/counters.c \
            dom0-core/service_table.c dom0-core/chain_table.c \
            dom0-core/logbuf.c dom0-core/logsink.c dom0-core/pcap_check.c \
            dom0-core/notify.c dom0-core/preflight.c dom0-core/table_out.c
CORE_OBJ := $(CORE_SRC:%.c=$(B)/obj/%.o)
EXTRA_CFLAGS_dom0-core := $(DPDK_CFLAGS) -DALLOW_EXPERIMENTAL_API \
                          -DXNV_VERSION=\"$(VERSION)\"
# sd_notify (notify.c) through libsystemd when it is there; without it the
# core cannot tell a Type=notify unit it is ready (one warning at run time).
HAVE_SYSTEMD ?= $(shell pkg-config --exists libsystemd 2>/dev/null && echo 1)
ifeq ($(HAVE_SYSTEMD),1)
EXTRA_CFLAGS_dom0-core += -DXNV_HAVE_SYSTEMD $(shell pkg-config --cflags libsystemd)
SYSTEMD_LIBS := $(shell pkg-config --libs libsystemd)
else ifneq ($(filter all $(B)/bin/xnv-core,$(or $(MAKECMDGOALS),all)),)
$(info xnv-core: libsystemd not found (apt-get install libsystemd-dev): built without sd_notify, so a Type=notify unit never sees it ready)
endif

all: $(B)/bin/xnv-core

$(B)/bin/xnv-core: $(CORE_OBJ) $(GNTS_LIB)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $(CORE_OBJ) $(GNTS_LIB) $(DPDK_LIBS) $(XEN_SRV_LIBS) \
	    $(SYSTEMD_LIBS) $(LDSAN)

# xnv-ctl: the operator's client of the control plane (Python 3, stdlib only).
# The launcher goes to bin/, the xnv package it runs to lib/python/xnv/
# (the launcher looks in ../lib/python first, then in dom0-core/python).
XNV_PY := $(wildcard dom0-core/python/xnv/*.py)
all: $(B)/bin/xnv-ctl

$(B)/bin/xnv-ctl: dom0-core/xnv-ctl $(XNV_PY:dom0-core/python/%=$(B)/lib/python/%) \
		$(B)/lib/python/xnv/VERSION
	@mkdir -p $(dir $@)
	cp $< $@
	chmod 755 $@

# xnv.version reads the project's VERSION from here in the build tree.
$(B)/lib/python/xnv/VERSION: Makefile
	@mkdir -p $(dir $@)
	echo $(VERSION) > $@

$(B)/lib/python/xnv/%.py: dom0-core/python/xnv/%.py
	@mkdir -p $(dir $@)
	cp $< $@

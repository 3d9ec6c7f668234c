# Test tools for the integration tests (tests/integration).  Included from
# tests/build.mk; built by `make check-integration`, not by `make all`.
#   xnv-probe:  attaches like an NF and asks the core to map regions
#               (isolation tests).  Uses gntshare's private wire format
#               (gntshare/host_msg.h) for its --raw-check.
#   xnv-testnf: a test NF (verdict, per-packet delay, flows seen), built
#               against libxnv only, like the examples.
#   xnv-hostile: a hostile NF (bad descriptors, impossible ring index);
#               gntshare directly, like xnv-probe.
#   xnv-bellhostile: an NF breaking the doorbell protocol (kick floods, a
#               sleep word never cleared, closed doorbell fds); the same.
PROBE_BIN := $(B)/tests/tools/xnv-probe
TESTNF_BIN := $(B)/tests/tools/xnv-testnf
HOSTILE_BIN := $(B)/tests/tools/xnv-hostile
BELLHOSTILE_BIN := $(B)/tests/tools/xnv-bellhostile

$(PROBE_BIN): tests/tools/xnv-probe.c tests/tools/tool_time.h $(GNTS_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(OPT) -Igntshare/include -Igntshare -Idomu-lib/include \
	    -o $@ $< $(GNTS_LIB) $(LDSAN)

$(TESTNF_BIN): tests/tools/xnv-testnf.c $(XNV_A)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(OPT) -Idomu-lib/include \
	    -o $@ $< $(XNV_A) $(LDSAN)

# The two hostile NFs: one rule.
$(HOSTILE_BIN) $(BELLHOSTILE_BIN): $(B)/tests/tools/%: tests/tools/%.c \
		tests/tools/tool_opts.h tests/tools/tool_time.h $(GNTS_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(OPT) -Igntshare/include -Idomu-lib/include \
	    -o $@ $< $(GNTS_LIB) $(LDSAN)

check-integration: $(PROBE_BIN) $(TESTNF_BIN) $(HOSTILE_BIN) $(BELLHOSTILE_BIN)

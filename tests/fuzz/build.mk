# libFuzzer harnesses (clang -fsanitize=fuzzer,address,undefined).
#   make fuzz                      replay the committed corpora and
#                                  regressions, then fuzz each harness for
#                                  FUZZ_SECONDS (default 25; 4 harnesses)
#   make fuzz FUZZ_SECONDS=600     the same, longer
#   make check-fuzz                what `make check` runs: the same as fuzz
# New inputs a run finds go to $(B)/fuzz/work/<harness>/ (not the tree);
# a crash leaves $(B)/fuzz/artifacts/<harness>-crash-*: once fixed, commit
# it under tests/fuzz/regressions/<harness>/ so every run replays it.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 25
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS  := -std=c11 -D_GNU_SOURCE -g -O1 -Wall -Igntshare/include \
                -Idomu-lib/include -Idom0-core
FUZZ_DIR     := $(B)/fuzz
FUZZ_NAMES   := fuzz_validate fuzz_config fuzz_ctl fuzz_nfv
FUZZ_BINS    := $(FUZZ_NAMES:%=$(FUZZ_DIR)/%)

# The core's sources, instrumented for coverage (main.c is the harness's).
FUZZ_CORE_SRC := $(filter-out dom0-core/main.c,$(CORE_SRC)) $(GNTS_SRC)
FUZZ_CORE_OBJ := $(FUZZ_CORE_SRC:%.c=$(FUZZ_DIR)/obj/%.o)

$(FUZZ_DIR)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(FUZZ_SAN) \
	    $(DPDK_CFLAGS) -DALLOW_EXPERIMENTAL_API -DXNV_VERSION=\"$(VERSION)\" \
	    -MMD -MP -c $< -o $@

$(FUZZ_DIR)/fuzz_validate: tests/fuzz/fuzz_validate.c gntshare/ring.c \
		dom0-core/validate.h gntshare/include/gntshare/ring.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ \
	    tests/fuzz/fuzz_validate.c gntshare/ring.c

$(FUZZ_DIR)/fuzz_config: tests/fuzz/fuzz_config.c $(FUZZ_DIR)/obj/dom0-core/config.o \
		$(FUZZ_DIR)/obj/dom0-core/config_file.o \
		$(FUZZ_DIR)/obj/dom0-core/config_keys.o \
		$(FUZZ_DIR)/obj/dom0-core/config_port.o \
		$(FUZZ_DIR)/obj/dom0-core/config_devargs.o \
		$(FUZZ_DIR)/obj/dom0-core/config_access.o \
		$(FUZZ_DIR)/obj/dom0-core/config_limits.o \
		$(FUZZ_DIR)/obj/dom0-core/config_flow.o \
		$(FUZZ_DIR)/obj/dom0-core/config_fabric.o \
		$(FUZZ_DIR)/obj/dom0-core/flow_rule.o
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) $(DPDK_CFLAGS) \
	    -o $@ $^ $(DPDK_LIBS)

$(FUZZ_DIR)/fuzz_ctl: tests/fuzz/fuzz_ctl.c $(FUZZ_CORE_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) $(DPDK_CFLAGS) \
	    -DALLOW_EXPERIMENTAL_API -o $@ $^ $(DPDK_LIBS) $(XEN_SRV_LIBS) -lpthread \
	    -Wl,--wrap=rte_tel_data_alloc -Wl,--wrap=rte_tel_data_free

# nfv_* keys of xl domain configs (toolstack-hooks/nfv_cfg.c); libxlutil
# itself is linked as is, not instrumented.
$(FUZZ_DIR)/fuzz_nfv: tests/fuzz/fuzz_nfv.c toolstack-hooks/nfv_cfg.c \
		toolstack-hooks/nfv_cfg.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Itoolstack-hooks -fsanitize=fuzzer $(FUZZ_SAN) \
	    -o $@ tests/fuzz/fuzz_nfv.c toolstack-hooks/nfv_cfg.c $(XLU_LIBS)

fuzz-build: $(FUZZ_BINS)

# Per harness: replay every committed input (a crash fails at once), then
# fuzz for FUZZ_SECONDS.  One line at the end: "FUZZ: N passed, N failed".
fuzz check-fuzz: $(FUZZ_BINS)
	@pass=0; fail=0; \
	for h in $(FUZZ_NAMES); do \
		bin=$(FUZZ_DIR)/$$h; work=$(FUZZ_DIR)/work/$$h; \
		mkdir -p $$work $(FUZZ_DIR)/artifacts; \
		opts="-artifact_prefix=$(FUZZ_DIR)/artifacts/$$h- -max_len=4096"; \
		echo "== $$h: replay"; \
		inputs=$$(find tests/fuzz/corpus/$$h tests/fuzz/regressions/$$h -type f 2>/dev/null); \
		if ! $$bin $$opts $$inputs > $(FUZZ_DIR)/$$h.replay.log 2>&1; then \
			tail -30 $(FUZZ_DIR)/$$h.replay.log; echo "== $$h: FAILED on a committed input"; \
			fail=$$((fail + 1)); continue; fi; \
		echo "== $$h: fuzz $(FUZZ_SECONDS) s"; \
		if $$bin $$opts -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			$$work tests/fuzz/corpus/$$h > $(FUZZ_DIR)/$$h.log 2>&1; then \
			grep -E "^stat::number_of_executed_units|^Done" $(FUZZ_DIR)/$$h.log | tr '\n' ' '; echo; \
			pass=$$((pass + 1)); \
		else \
			tail -40 $(FUZZ_DIR)/$$h.log; \
			echo "== $$h: FAILED: input in $(FUZZ_DIR)/artifacts/ (commit it under tests/fuzz/regressions/$$h/ once fixed)"; \
			fail=$$((fail + 1)); \
		fi; \
	done; \
	echo "FUZZ: $$pass passed, $$fail failed"; \
	[ $$fail -eq 0 ]

-include $(shell find $(FUZZ_DIR)/obj -name '*.d' 2>/dev/null)

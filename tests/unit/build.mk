# Unit tests (cmocka) of libgntshare and of the example NFs' data
# structures.  Not part of `all`:
#   make check-unit          build and run every binary; fails if one fails
#   make SAN=1 check-unit    the same under ASan + UBSan (build-san/)
# The ring tests and test_srv_control are also built with ThreadSanitizer
# (tsan/, whatever SAN says: TSan cannot be combined with ASan) and run by
# check-unit: the two-thread stress then checks the ring's memory ordering
# too (test_ring_sleep's: the sleep protocol's), and the control thread's
# handover its locking; so is test_worker_sync (the core's workers'
# barrier and kick, dom0-core/worker_sync.h).  test_ring_sleep sleeps 10^5 times, 10^7 with
# XNV_STRESS=1 in the environment.
UNIT_TESTS  := test_ring test_ring_region test_ring_hostile test_ring_ctl \
               test_ring_sleep test_ring_model test_bell test_host_backend test_host_server test_galloc \
               test_proto test_host_listen test_srv_control test_xen_events \
               test_xen_keys
# libraries a test needs beyond libgntshare (galloc.o calls libxengnttab)
UNIT_LIBS_test_galloc := $(XEN_SRV_LIBS)
UNIT_LIBS_test_proto := $(XEN_SRV_LIBS)
UNIT_LIBS_test_srv_control := $(XEN_SRV_LIBS)
UNIT_LIBS_test_host_listen := $(XEN_SRV_LIBS)
UNIT_LIBS_test_xen_events := $(XEN_SRV_LIBS)
TSAN_TESTS  := test_ring test_ring_region test_ring_hostile test_ring_ctl \
               test_ring_sleep
TSAN_BINS   := $(TSAN_TESTS:%=$(B)/tests/tsan/%) $(B)/tests/tsan/test_srv_control \
               $(B)/tests/tsan/test_worker_sync
TSAN_STRESS_N ?= 10000000
# test_<x> of an example (or of the core's DPDK-free arithmetic): its object
# files (examples/build.mk, dom0-core/build.mk compile them)
EX_UNIT_TESTS := test_lpm test_maglev test_aho test_latency test_pace \
                 test_flow_key test_service_table test_validate \
                 test_chain_table test_prefix test_logbuf \
                 test_config_access test_quota test_pcap_check test_flow_rule \
                 test_htab test_config_file test_config_devargs test_pkt \
                 test_worker_sync
EX_UNIT_OBJ_test_lpm := examples/router/lpm
EX_UNIT_OBJ_test_latency := dom0-core/latency
EX_UNIT_OBJ_test_pace := dom0-core/pace
EX_UNIT_OBJ_test_quota := dom0-core/quota
EX_UNIT_OBJ_test_pcap_check := dom0-core/pcap_check
EX_UNIT_OBJ_test_flow_key :=
EX_UNIT_OBJ_test_htab :=
EX_UNIT_OBJ_test_pkt :=
EX_UNIT_OBJ_test_worker_sync :=
EX_UNIT_OBJ_test_flow_rule := dom0-core/flow_rule
EX_UNIT_OBJ_test_service_table := dom0-core/service_table
EX_UNIT_OBJ_test_validate :=
EX_UNIT_OBJ_test_chain_table := dom0-core/chain_table
EX_UNIT_OBJ_test_prefix := dom0-core/eal_args
EX_UNIT_OBJ_test_logbuf := dom0-core/logbuf
EX_UNIT_OBJ_test_config_access := dom0-core/config_access
EX_UNIT_OBJ_test_config_file := dom0-core/config_file
# test_config_file builds its rte_cfgfile with DPDK's library (no EAL)
EX_UNIT_LIBS_test_config_file := $(DPDK_LIBS)
$(B)/obj/tests/unit/test_config_file.o: EXTRA_CFLAGS_tests += $(DPDK_CFLAGS)
# test_config_devargs parses with DPDK's rte_kvargs (no EAL)
EX_UNIT_OBJ_test_config_devargs := dom0-core/config_devargs
EX_UNIT_LIBS_test_config_devargs := $(DPDK_LIBS)
$(B)/obj/tests/unit/test_config_devargs.o: EXTRA_CFLAGS_tests += $(DPDK_CFLAGS)
EX_UNIT_OBJ_test_maglev := examples/lb/maglev
EX_UNIT_OBJ_test_aho := examples/dpi/ac
UNIT_BINS   := $(UNIT_TESTS:%=$(B)/tests/unit/%) $(EX_UNIT_TESTS:%=$(B)/tests/unit/%)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)
EXTRA_CFLAGS_tests := -Iexamples -Iexamples/common -Idom0-core

$(UNIT_TESTS:%=$(B)/tests/unit/%): $(B)/tests/unit/%: $(B)/obj/tests/unit/%.o $(GNTS_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDSAN) -o $@ $< $(GNTS_LIB) $(UNIT_LIBS_$*) $(CMOCKA_LIBS) -lpthread

.SECONDEXPANSION:
$(EX_UNIT_TESTS:%=$(B)/tests/unit/%): $(B)/tests/unit/%: $(B)/obj/tests/unit/%.o \
		$$(addprefix $(B)/obj/,$$(addsuffix .o,$$(EX_UNIT_OBJ_$$*))) \
		$(EX_COMMON_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDSAN) -o $@ $(filter %.o,$^) $(EX_COMMON_A) $(CMOCKA_LIBS) \
	    $(EX_UNIT_LIBS_$*)

$(TSAN_TESTS:%=$(B)/tests/tsan/%): $(B)/tests/tsan/%: tests/unit/%.c gntshare/ring.c \
		gntshare/include/gntshare/ring.h tests/unit/ring_fixture.h
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O1 -g -fsanitize=thread -Igntshare/include \
	    -DSTRESS_N=$(TSAN_STRESS_N) -o $@ $< gntshare/ring.c \
	    $(CMOCKA_LIBS) -lpthread

# The control thread and its handover (srv.c) under TSan: all of
# libgntshare built with it, as the core links it.
$(B)/tests/tsan/test_srv_control: tests/unit/test_srv_control.c $(GNTS_SRC) \
		$(wildcard gntshare/*.h gntshare/include/gntshare/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O1 -g -fsanitize=thread -Igntshare/include \
	    $(EXTRA_CFLAGS_gntshare) -o $@ $< $(GNTS_SRC) $(XEN_SRV_LIBS) \
	    $(CMOCKA_LIBS) -lpthread

# The core's worker handshakes (dom0-core/worker_sync.h, header only)
# under TSan.
$(B)/tests/tsan/test_worker_sync: tests/unit/test_worker_sync.c \
		dom0-core/worker_sync.h gntshare/include/gntshare/ring.h
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O1 -g -fsanitize=thread -Idom0-core \
	    -Igntshare/include -o $@ $< $(CMOCKA_LIBS) -lpthread

# Run them all even when one fails, then fail if any did.
check-unit: $(UNIT_BINS) $(TSAN_BINS)
	@fail=""; \
	for t in $(UNIT_BINS) $(TSAN_BINS); do \
		echo "== $$t"; \
		TSAN_OPTIONS=halt_on_error=1 ./$$t || fail="$$fail $${t#$(B)/tests/}"; \
	done; \
	if [ -n "$$fail" ]; then echo "check-unit: FAILED:$$fail" >&2; exit 1; fi; \
	echo "check-unit: all $(words $(UNIT_BINS) $(TSAN_BINS)) unit test binaries passed"

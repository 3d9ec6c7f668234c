# Benchmarks (see bench/README.md).  Not part of `all`:
#   make bench-smoke   raw ring round trip vs xnv-core + 1 forwarder NF,
#                      measured side by side on CPUs 0 and 1; prints a
#                      table and the line "bench-smoke: 1-NF/raw = NN %"
# BENCH_SMOKE_ARGS is passed to bench/smoke.py (e.g. "--reps 5").
RING_RT := $(B)/bench/ring-rt
BENCH_SMOKE_ARGS ?=
# Keep ring-rt's descriptor-building loop a loop (GCC would make it a
# memset call + stores); only where the compiler knows the flag (not clang).
EXTRA_CFLAGS_bench := $(shell $(CC) -Werror -fno-tree-loop-distribute-patterns \
	-c -x c /dev/null -o /dev/null 2>/dev/null && \
	echo -fno-tree-loop-distribute-patterns)

$(RING_RT): $(B)/obj/bench/ring_rt.o $(GNTS_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDSAN) -o $@ $< $(GNTS_LIB) -lpthread

bench-smoke: all $(RING_RT)
	python3 bench/smoke.py --build $(B) $(BENCH_SMOKE_ARGS)

# make bench: every system side by side, sizes, chains, latency, plots
# (bench/bench.py; about 10 minutes; needs root).  BENCH_ARGS: e.g. --quick.
BENCH_ARGS ?=
# flow-cost: the flow director's data path alone (bench/flows.py runs it).
FLOW_COST := $(B)/bench/flow-cost
$(B)/obj/bench/flow_cost.o: EXTRA_CFLAGS_bench += $(DPDK_CFLAGS) \
	-DALLOW_EXPERIMENTAL_API -Idom0-core
$(FLOW_COST): $(B)/obj/bench/flow_cost.o $(filter-out %/main.o,$(CORE_OBJ)) $(GNTS_LIB)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(DPDK_LIBS) $(XEN_SRV_LIBS) $(SYSTEMD_LIBS) -lpcap $(LDSAN)

# core-cost: xnv-core's own data path alone, one thread (bench/README.md,
# "Where the cycles go"); like flow-cost, linked with the core's objects.
CORE_COST := $(B)/bench/core-cost
$(B)/obj/bench/core_cost.o: EXTRA_CFLAGS_bench += $(DPDK_CFLAGS) \
	-DALLOW_EXPERIMENTAL_API -Idom0-core
$(CORE_COST): $(B)/obj/bench/core_cost.o $(filter-out %/main.o,$(CORE_OBJ)) $(GNTS_LIB)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(DPDK_LIBS) $(XEN_SRV_LIBS) $(SYSTEMD_LIBS) $(LDSAN)

# wake-floor: one doorbell wake-up alone (bench/doorbell.py runs it).
WAKE_FLOOR := $(B)/bench/wake-floor
$(WAKE_FLOOR): $(B)/obj/bench/wake_floor.o $(GNTS_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDSAN) -o $@ $< $(GNTS_LIB)

bench: all $(RING_RT) $(FLOW_COST) $(CORE_COST) $(WAKE_FLOOR) $(NF_COST)
	$(PYTHON) bench/bench.py --build $(B) $(BENCH_ARGS)

# make bench-xen: XenNetVM vs netfront/netback in one emulated Xen boot
# (QEMU TCG, about 5 minutes): a ratio, not rates.  See bench/xen/README.md.
bench-xen: all
	bash bench/xen/tcg/run.sh

# nf-cost-NAME: an example NF's handler alone on a pcap's packets (best ns
# per packet; bench/nf_cost.c): the NF's own objects, main() included,
# whose call of nf_main() ld's --wrap sends to nf_cost.c.
NF_COST_NFS := router firewall lb monitor dpi nat
NF_COST := $(NF_COST_NFS:%=$(B)/bench/nf-cost-%)
$(B)/obj/bench/nf_cost.o: bench/nf_cost.c $(XNV_PC)
	@mkdir -p $(dir $@)
	$(CC) $(EX_CFLAGS) -MMD -MP -c $< -o $@
$(B)/bench/nf-cost-%: $$(call ex_objs,$$*) $(B)/obj/bench/nf_cost.o \
		$(EX_COMMON_A) $(XNV_A) $(XNV_PC)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $(filter %.o,$^) -Wl,--wrap=nf_main -Wl,--wrap=nf_publish \
	    -Wl,--wrap=xnv_nf_port_count $(EX_COMMON_A) \
	    $(shell $(XNV_PKG) --static --libs libxnv) -lpcap $(LDSAN)

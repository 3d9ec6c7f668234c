# XenNetVM top-level Makefile.  Everything is built under build/.
#   make              all: libgntshare, libxnv (static + shared + libxnv.pc),
#                     xnv-core, xnv-ctl, xnv-xl, the example NFs
#   make deps         install Debian packages + Python venv (root, idempotent);
#                     XEN=1: the Xen suite's hypervisor and QEMU too
#   make demo         host-mode demo: pcap -> xnv-core -> 2 forwarder NFs -> pcap
#   make demo-fabric  a 3-NF chain across 2 simulated hosts (namespaces, Open
#                     vSwitch, VXLAN; root): fabric/README.md
#   make install      everything under PREFIX (default /usr/local), DESTDIR
#                     for staging (scripts/install.mk); install-libxnv: libxnv,
#                     <xnv/nf.h> and libxnv.pc alone (no DPDK, no Xen needed)
#   make deb          Debian packages into build/deb (debian/README.md)
#   make check        unit (cmocka) + integration (pytest) + Xen (QEMU) tests,
#                     fuzz (libFuzzer, short) and san (unit + integration, ASan)
#   make check-unit   the cmocka unit tests alone
#   make check-integration  the pytest host-mode suite alone (PYTEST_ARGS=...)
#   make check-san    unit + integration again, built with ASan + UBSan
#   make check-fuzz   what make check fuzzes: corpora replayed, short runs
#   make fuzz         libFuzzer harnesses; FUZZ_SECONDS=600 for longer runs;
#                     fuzz-build: build the harnesses only
#   make check-xen    the Xen suite alone (PV); not in check: check-xen-pvh-domu
#                     (NFs in PVH DomUs), check-xen-pvh (PVH Dom0, hugepage pools)
#   make soak         SOAK_SECONDS (600) of mixed traffic with NF churn (not in check)
#   make bench-smoke  raw ring vs 1-NF path, one line of ratio at the end
#   make bench        every system side by side (bench/README.md)
#   make bench-xen    XenNetVM vs netfront in one emulated Xen boot (ratio only)
#   make clean        remove build/ and build-san/
#   make help         this text
#   SAN=1             build with ASan + UBSan (into build-san/)

VERSION  := 0.1.0
B        := build
CC       ?= gcc
CSTD     := -std=c11 -D_GNU_SOURCE
WARN     := -Wall -Wextra -Werror
OPT      ?= -O2 -g
SAN      ?=
ifeq ($(SAN),1)
OPT      += -fsanitize=address,undefined -fno-omit-frame-pointer
LDSAN    := -fsanitize=address,undefined
B        := build-san
endif
# One name for one build directory: B=$(CURDIR)/build (the tests' make
# calls pass their XNV_BUILD) names the objects build/..., so that what
# the compiler's .d files say an object depends on applies to it however
# B was spelled (else a header changed after such a build rebuilt
# nothing that included it).
override B := $(patsubst $(CURDIR)/%,%,$(B))
CFLAGS_BASE := $(CSTD) $(WARN) $(OPT) -fPIC -Igntshare/include -Idomu-lib/include
DPDK_CFLAGS := $(shell pkg-config --cflags libdpdk 2>/dev/null)
DPDK_LIBS   := $(shell pkg-config --libs libdpdk 2>/dev/null)
PYTHON   := $(CURDIR)/.venv/bin/python
# Xen's user-space libraries (libxen-dev): the xen backend of gntshare
# (event channels: its doorbells)
XEN_LIBS := $(shell pkg-config --libs xenstore xengnttab xenevtchn 2>/dev/null)
# the core's side also pauses / destroys hostile domains through libxl
XEN_SRV_LIBS := $(XEN_LIBS) $(shell pkg-config --libs xenlight xentoollog 2>/dev/null)

.PHONY: all deps demo demo-fabric check check-unit check-integration check-xen check-xen-pvh check-xen-pvh-domu soak \
        bench-smoke bench bench-xen install clean help fuzz fuzz-build check-fuzz check-san
all:

include gntshare/build.mk
include domu-lib/build.mk
include dom0-core/build.mk
include toolstack-hooks/build.mk
include examples/build.mk
include tests/build.mk
include bench/build.mk
include scripts/install.mk

# What every object is compiled with beyond its sources, in one file that
# is rewritten only when that changes: the Xen libraries installed after a
# first build (make before make deps), another DPDK, OPT or CC then rebuild
# every object, not only those whose sources changed (a gntshare built
# without GNTS_HAVE_XEN would otherwise stay without its xen backend).
BUILD_FLAGS := $(VERSION) $(CC) $(CFLAGS_BASE) HAVE_XEN=$(HAVE_XEN) $(DPDK_CFLAGS)
$(shell mkdir -p $(B) && printf '%s\n' '$(BUILD_FLAGS)' | cmp -s - $(B)/build.flags || \
	printf '%s\n' '$(BUILD_FLAGS)' > $(B)/build.flags)

$(B)/obj/%.o: %.c $(B)/build.flags
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) $(EXTRA_CFLAGS_$(firstword $(subst /, ,$<))) -MMD -MP -c $< -o $@

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)

deps:
	bash scripts/deps.sh $(if $(filter 1,$(XEN)),--xen)

demo: all
	bash scripts/demo.sh

demo-fabric: all
	$(PYTHON) scripts/demo_fabric.py --build $(B)

check: all
	MAKE="$(MAKE)" bash tests/run_checks.sh

clean:
	rm -rf build build-san

# The comment block this file opens with, whole.
help:
	@sed -n '2,/^[^#]/s/^# \{0,1\}//p' Makefile

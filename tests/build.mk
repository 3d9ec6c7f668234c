# Tests: unit (cmocka), integration (pytest, host mode), xen (QEMU),
# fuzz (libFuzzer), san (unit + integration under ASan + UBSan).
include tests/unit/build.mk
include tests/tools/build.mk
include tests/fuzz/build.mk

# Sanitizer builds: a UBSan report stops the process (so the test that
# ran it fails) instead of scrolling by.
ifeq ($(SAN),1)
export UBSAN_OPTIONS ?= halt_on_error=1:print_stacktrace=1
endif

PYTEST_ARGS ?=
check-integration: all
	@if [ ! -x $(PYTHON) ]; then echo "check-integration: no venv, run 'make deps'" >&2; exit 1; fi
	cd tests/integration && XNV_BUILD=$(CURDIR)/$(B) $(PYTHON) -m pytest -v $(PYTEST_ARGS)

# The PV suite (one boot).  The PVH NF domains' boot is check-xen-pvh-domu,
# not part of make check: QEMU's emulated AMD-V crashes PVH guests now and
# then (tests/xen/README.md, "PVH NF domains").
check-xen: all
	bash tests/xen/run.sh

# Optional (not in make check): NFs in PVH DomUs, QEMU's CPU with AMD-V and
# nested paging; ends with its own "XEN: N passed, N failed" line.
check-xen-pvh-domu: all
	XT_ONLY=pvh XT_OUT=$(CURDIR)/$(B)/xen-pvh XT_CACHE=$(CURDIR)/$(B)/xen/cache \
		bash tests/xen/run.sh

# The unit and host integration suites again, built with ASan + UBSan into
# build-san/ (make check runs this; `make check SAN=1` is all-SAN already).
check-san:
	@if [ "$(SAN)" = 1 ]; then echo "check-san: skipped, this run is the SAN build"; \
	else $(MAKE) --no-print-directory SAN=1 all check-unit check-integration; fi

# Optional (not in make check): PVH Dom0 with 2 MiB hugepage pools.
check-xen-pvh: all
	XT_PVH=1 bash tests/xen/run.sh

# Soak (not in make check): SOAK_SECONDS (600) of mixed traffic with NF
# churn, then no leak and flat core memory; see tests/soak/soak.py.
soak: all
	@if [ ! -x $(PYTHON) ]; then echo "soak: no venv, run 'make deps'" >&2; exit 1; fi
	XNV_BUILD=$(CURDIR)/$(B) $(PYTHON) tests/soak/soak.py

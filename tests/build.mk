# Tests: unit (cmocka), integration (pytest, host mode), xen (QEMU).
include tests/unit/build.mk
include tests/tools/build.mk

PYTEST_ARGS ?=
check-integration: all
	@if [ ! -x $(PYTHON) ]; then echo "check-integration: no venv, run 'make deps'" >&2; exit 1; fi
	cd tests/integration && XNV_BUILD=$(CURDIR)/$(B) $(PYTHON) -m pytest -v $(PYTEST_ARGS)

check-xen: all
	bash tests/xen/run.sh

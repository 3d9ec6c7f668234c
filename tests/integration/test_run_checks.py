# SPDX-License-Identifier: BSD-3-Clause
"""tests/run_checks.sh, the runner behind `make check`, on suites' output.

The suites are stood in for by a stand-in `make` (MAKE=...) that prints
what each real suite prints (cmocka, pytest, the Xen test, the fuzzers),
so the runner's own arithmetic and roll-call are what is checked: the
real suites cannot be made to fail on purpose here.
"""
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

FAILING = {
    "unit": ("[  PASSED  ] 3 test(s).\n[  FAILED  ] 1 test(s), listed below:\n"
             "[  FAILED  ] test_ring_full\n", 1),
    "integration": ("FAILED test_a.py::test_b - assert 1 == 2\n"
                    "===== 1 failed, 5 passed, 2 skipped in 3.0s =====\n", 1),
    "xen": ("XEN: ok - core-starts\nXEN: FAIL - doorbell-x: stalled 3 s\n"
            "XEN: FAIL - run-complete: XT-DONE rc=1\nXEN: 1 passed, 2 failed\n", 1),
    "fuzz": ("== fuzz_ctl: FAILED on a committed input\nFUZZ: 3 passed, 1 failed\n", 1),
    "san": ("===== 4 passed, 1 skipped in 1.0s =====\n", 0),
}


def run_checks(tmp_path, suites):
    """Run the runner with a make that plays SUITES: {name: (output, rc)}."""
    for name, (text, rc) in suites.items():
        (tmp_path / f"{name}.out").write_text(text)
        (tmp_path / f"{name}.rc").write_text(str(rc))
    fake = tmp_path / "make"
    fake.write_text('#!/bin/sh\ns=${2#check-}\ncat "%s/$s.out"\nexit $(cat "%s/$s.rc")\n'
                    % (tmp_path, tmp_path))
    fake.chmod(0o755)
    r = subprocess.run(["bash", str(REPO / "tests/run_checks.sh")], capture_output=True,
                       text=True, env={"MAKE": str(fake), "PATH": "/usr/bin:/bin"},
                       timeout=60)
    return r.returncode, r.stdout.splitlines()


def test_failures_named_above_the_summary(tmp_path):
    rc, lines = run_checks(tmp_path, FAILING)
    assert rc == 1
    assert lines[-1] == "check: 16 passed, 5 failed, 3 skipped"
    named = [l for l in lines if l.startswith("check: ") and " failed: " in l]
    assert named == [
        "check: unit failed: [  FAILED  ] test_ring_full",
        "check: integration failed: FAILED test_a.py::test_b - assert 1 == 2",
        "check: xen failed: XEN: FAIL - doorbell-x: stalled 3 s",
        "check: xen failed: XEN: FAIL - run-complete: XT-DONE rc=1",
        "check: fuzz failed: == fuzz_ctl: FAILED on a committed input",
    ]
    # they come last, just above the count
    assert lines[-len(named) - 1:-1] == named


def test_all_passing_names_nothing(tmp_path):
    ok = {
        "unit": ("[  PASSED  ] 7 test(s).\n", 0),
        "integration": ("===== 5 passed in 2.0s =====\n", 0),
        "xen": ("SKIP: tests/xen: qemu-system-x86_64 not installed\n", 0),
        "fuzz": ("FUZZ: 4 passed, 0 failed\n", 0),
        "san": ("===== 5 passed in 2.0s =====\n", 0),
    }
    rc, lines = run_checks(tmp_path, ok)
    assert rc == 0
    assert lines[-1] == "check: 21 passed, 0 failed, 1 skipped"
    assert not [l for l in lines if " failed: " in l]


def test_a_suite_dying_uncounted_still_fails(tmp_path):
    suites = dict(FAILING, unit=("make: *** [check-unit] Error 2\n", 2),
                  integration=("===== 5 passed in 2.0s =====\n", 0),
                  xen=("XEN: 1 passed, 0 failed\n", 0),
                  fuzz=("FUZZ: 4 passed, 0 failed\n", 0))
    rc, lines = run_checks(tmp_path, suites)
    assert rc == 1
    assert lines[-1] == "check: 14 passed, 1 failed, 1 skipped"


def test_both_xen_boots_counted(tmp_path):
    """A Xen log of two boots (check-xen, then check-xen-pvh-domu): each
    boot's closing line counts."""
    suites = dict(FAILING, unit=("[  PASSED  ] 1 test(s).\n", 0),
                  integration=("===== 1 passed in 2.0s =====\n", 0),
                  xen=("XEN: ok - core-starts\nXEN: 60 passed, 0 failed\n"
                       "XEN: FAIL - migrate-pvh-localhost: away\nXEN: 9 passed, 1 failed\n", 1),
                  fuzz=("FUZZ: 4 passed, 0 failed\n", 0))
    rc, lines = run_checks(tmp_path, suites)
    assert rc == 1
    assert lines[-1] == "check: 79 passed, 1 failed, 1 skipped"
    assert "check: xen failed: XEN: FAIL - migrate-pvh-localhost: away" in lines

# SPDX-License-Identifier: BSD-3-Clause
"""Integration tests of XenNetVM in host mode: fixtures and hooks.

  hugepages   (session, autouse) make 2 MiB hugepages usable if it can,
              undo it at the end; tests pass either way
  probe_bin   (session) tests/tools/xnv-probe, built by tests/tools/build.mk
              or, when missing, compiled here once
  xnv         (function) an XnvEnv: start core / NFs / probes, all stopped
              by PID at teardown
  xnv_module  (module) the same, for scenarios shared by a module's tests

Plain helpers live in harness.py (processes, configs, scenarios) and
traffic.py (pcap files, crafted packets); test modules import them.  What
xnv-ctl and the bench share with the tests (telemetry, processes stopped by
PID, wait_until, hugepages, the file-prefix) is the xnv package in
dom0-core/python, which harness.py puts on sys.path.
"""
import contextlib
import logging
import os
import signal
import subprocess

import pytest

# harness puts the xnv package (dom0-core/python) on sys.path
from harness import BUILD, CORE_BIN, FWD_BIN, PROBE_SRC, REPO, scaled, xnv_env
from xnv.hugepages import HUGE_DIR, NR_HUGE, hugetlbfs_mounts, meminfo, mount_hugetlbfs, umount

HUGE_WANT = 256                     # 2 MiB pages we try to have in total
TEST_TIMEOUT_S = 180                # hard limit per test (setup + call + teardown)

log = logging.getLogger("xnv-it")


# --------------------------------------------------------------------------
# fixtures

class HugeState:
    """What the session could do about 2 MiB hugepages (see hugepages())."""

    def __init__(self):
        self.total = self.free = 0
        self.mounts = []
        self.notes = []

    @property
    def pool_can_be_huge(self):
        # a test pool needs a few pages; DPDK may take some for itself
        return self.free >= 16

    def __repr__(self):
        return (f"2 MiB hugepages: {self.free} free of {self.total}; hugetlbfs "
                f"at {self.mounts or 'nowhere'}; {'; '.join(self.notes) or 'ok'}")


def _say(config, msg):
    log.warning(msg)
    tr = config.pluginmanager.get_plugin("terminalreporter")
    capman = config.pluginmanager.get_plugin("capturemanager")
    if tr is not None:
        with (capman.global_and_fixture_disabled() if capman
              else contextlib.nullcontext()):
            tr.write_line(f"[xnv-it] {msg}")


@pytest.fixture(scope="session", autouse=True)
def hugepages(request):
    """Try to make 2 MiB hugepages usable: nr_hugepages >= HUGE_WANT and a
    hugetlbfs mounted at /dev/hugepages.  Whatever is changed is undone at
    the end of the session.  Never fails: tests pass either way."""
    st = HugeState()
    nr_path = NR_HUGE
    old_nr = None
    mounted = created_dir = False
    try:
        cur = int(nr_path.read_text())
        if cur < HUGE_WANT:
            nr_path.write_text(str(HUGE_WANT))
            old_nr = cur
            st.notes.append(f"raised nr_hugepages {cur} -> {int(nr_path.read_text())}")
    except (OSError, ValueError) as e:
        st.notes.append(f"cannot raise nr_hugepages: {e}")
    if not hugetlbfs_mounts():
        try:
            if not HUGE_DIR.exists():
                HUGE_DIR.mkdir()
                created_dir = True
            mount_hugetlbfs(HUGE_DIR).check_returncode()
            mounted = True
            st.notes.append(f"mounted hugetlbfs at {HUGE_DIR}")
        except (OSError, subprocess.SubprocessError) as e:
            err = getattr(e, "stderr", "") or e
            st.notes.append(f"cannot mount hugetlbfs at {HUGE_DIR}: {str(err).strip()}")
    st.total = meminfo("HugePages_Total")
    st.free = meminfo("HugePages_Free")
    st.mounts = hugetlbfs_mounts()
    if not st.pool_can_be_huge or not st.mounts:
        _say(request.config, f"hugepages not fully available, tests go on "
             f"without: {st!r}")
    else:
        _say(request.config, repr(st))
    yield st
    if mounted:
        r = umount(HUGE_DIR)
        if r.returncode != 0:
            _say(request.config, f"cannot unmount {HUGE_DIR}: {r.stderr.strip()}")
        elif created_dir:
            with contextlib.suppress(OSError):
                HUGE_DIR.rmdir()
    if old_nr is not None:
        with contextlib.suppress(OSError):
            nr_path.write_text(str(old_nr))


@pytest.fixture(scope="session")
def probe_bin(tmp_path_factory):
    """The xnv-probe binary: from the build, else compiled here."""
    built = BUILD / "tests" / "tools" / "xnv-probe"
    if built.exists() and built.stat().st_mtime >= PROBE_SRC.stat().st_mtime:
        return built
    out = tmp_path_factory.mktemp("tools") / "xnv-probe"
    cmd = [os.environ.get("CC", "cc"), "-std=c11", "-D_GNU_SOURCE", "-O2",
           "-Wall", "-I", REPO / "gntshare" / "include", "-I", REPO / "gntshare",
           "-I", REPO / "domu-lib" / "include",
           "-o", out, PROBE_SRC, BUILD / "lib" / "libgntshare.a"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=scaled(120))
    if r.returncode != 0:       # a sanitizer build (make SAN=1) of the library
        r = subprocess.run(cmd + ["-fsanitize=address,undefined"],
                           capture_output=True, text=True, timeout=scaled(120))
    assert r.returncode == 0, f"cannot build xnv-probe:\n{r.stderr}"
    log.warning("%s missing or stale: compiled %s", built, out)
    return out


@pytest.fixture
def xnv(tmp_path, probe_bin):
    """Per-test environment; every process it started is stopped after."""
    with xnv_env(tmp_path, probe_bin) as env:
        yield env


@pytest.fixture(scope="module")
def xnv_module(tmp_path_factory, probe_bin, request):
    """The same for module-scoped scenarios."""
    with xnv_env(tmp_path_factory.mktemp(request.module.__name__), probe_bin) as env:
        yield env


def pytest_sessionstart(session):
    missing = [b for b in (CORE_BIN, FWD_BIN) if not b.exists()]
    if missing:
        raise pytest.UsageError(f"missing {missing}: run `make` first "
                                f"(XNV_BUILD={BUILD})")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """A hard time limit per test (its fixtures included), on top of the
    timeout of every wait: TEST_TIMEOUT_S, or a module's
    `pytest.mark.time_limit(S)` (make deb), times XNV_TIME_SCALE."""
    mark = item.get_closest_marker("time_limit")
    limit = round(scaled(mark.args[0] if mark else TEST_TIMEOUT_S))

    def on_alarm(signum, frame):
        raise TimeoutError(f"{item.nodeid}: over {limit} s")
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(limit)
    try:
        return (yield)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)

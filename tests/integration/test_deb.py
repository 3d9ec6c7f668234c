# SPDX-License-Identifier: BSD-3-Clause
"""make deb: the Debian packages build, pass lintian, install on a fresh
Debian 12 and run there under systemd.

Runs once (module fixture; skipped in the SAN pass, which would only
package the same sources again) and is skipped when dpkg-buildpackage or
debhelper is missing.  Nothing is installed on this machine: the packages
go into a throwaway bookworm root (scripts/container-smoke.sh: mmdebstrap,
apt-get install, booted with systemd-nspawn), or are unpacked with
`dpkg-deb -x` into a temporary directory.

- make deb leaves xnv-core, xnv-tools, libxnv0, libxnv-dev and
  gntshare-dkms in $BUILD/deb, each with the files it is meant to carry.
- lintian reports no error and no warning.
- An out-of-tree NF builds against libxnv0 + libxnv-dev unpacked, with
  plain `pkg-config libxnv`, and runs --help (exit 0).
- scripts/container-smoke.sh: in a fresh bookworm root booted with
  systemd as PID 1, `systemctl start xnv-core` (READY=1), two xnv-nf@
  units as user xnv (one running an NF built there with `pkg-config
  libxnv`), xnv-ctl and the metrics endpoint show traffic, and a clean
  `systemctl stop`; before that, a core without /sys/module says what to
  do.  Skipped, with the script's one line, only when this machine cannot
  run containers or lacks mmdebstrap / systemd-nspawn (make deps).
- scripts/install-smoke.sh --direct: the unpacked xnv-core started with
  its unit's ExecStart= says READY=1 on our NOTIFY_SOCKET, two NFs
  started as xnv-nf@.service would forward, xnv-ctl's counters move.
"""
import os
import shutil
import subprocess

import pytest

from harness import BUILD, REPO, scaled
from installtree import LIBDIR, VERSION, build_nf, make

ARCH = subprocess.run(["dpkg", "--print-architecture"], capture_output=True,
                      text=True).stdout.strip()
DEBS = {
    "xnv-core": {"usr/sbin/xnv-core", "lib/systemd/system/xnv-core.service",
                 "etc/xnv/xnv.ini", "usr/lib/sysusers.d/xnv-core.conf",
                 "usr/share/man/man8/xnv-core.8.gz"},
    "xnv-tools": {"usr/sbin/xnv-ctl", "usr/sbin/xnv-xl",
                  "usr/libexec/xnv/xnv-forwarder", "usr/libexec/xnv/xnv-nf-run",
                  "lib/systemd/system/xnv-nf@.service", "etc/xnv/nf/fwd-a.conf",
                  "usr/share/xnv/python/xnv/ctl.py",
                  "usr/share/bash-completion/completions/xnv-ctl",
                  "usr/share/man/man8/xnv-ctl.8.gz"},
    "libxnv0": {f"{LIBDIR}/libxnv.so.0", f"{LIBDIR}/libxnv.so.{VERSION}"},
    "libxnv-dev": {"usr/include/xnv/nf.h", f"{LIBDIR}/libxnv.so",
                   f"{LIBDIR}/libxnv.a", f"{LIBDIR}/pkgconfig/libxnv.pc",
                   "usr/share/man/man3/libxnv.3.gz"},
    "gntshare-dkms": {f"usr/src/gntshare-{VERSION}/dkms.conf",
                      f"usr/src/gntshare-{VERSION}/gntshare.c"},
}

pytestmark = [
    # make deb (the module's first test pays for it) builds everything
    pytest.mark.time_limit(1200),
    pytest.mark.skipif(shutil.which("dpkg-buildpackage") is None or
                       shutil.which("dh") is None,
                       reason="dpkg-buildpackage or debhelper missing (make deps)"),
    pytest.mark.skipif(BUILD.name == "build-san",
                       reason="packaging runs once, in the plain pass"),
]


def deb_path(pkg):
    return BUILD / "deb" / f"{pkg}_{VERSION}_{'all' if pkg.endswith('-dkms') else ARCH}.deb"


@pytest.fixture(scope="module")
def debs():
    make("deb", timeout=1200)
    return {p: deb_path(p) for p in DEBS}


def contents(deb):
    out = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True,
                         check=True).stdout
    return {line.split(None, 5)[5].split(" -> ")[0].lstrip("./")
            for line in out.splitlines() if not line.endswith("/")}


@pytest.mark.parametrize("pkg", sorted(DEBS))
def test_package_carries_its_files(debs, pkg):
    assert debs[pkg].exists()
    assert DEBS[pkg] <= contents(debs[pkg])


def test_only_gntshare_dkms_needs_dkms(debs):
    for pkg, deb in debs.items():
        dep = subprocess.run(["dpkg-deb", "-f", deb, "Depends"], capture_output=True,
                             text=True, check=True).stdout
        assert ("dkms" in dep) == (pkg == "gntshare-dkms"), (pkg, dep)


@pytest.mark.skipif(shutil.which("lintian") is None, reason="lintian missing")
def test_lintian_no_error_no_warning(debs):
    r = subprocess.run(["lintian", "--tag-display-limit", "0", *debs.values()],
                       capture_output=True, text=True, timeout=scaled(600))
    tags = [line for line in r.stdout.splitlines() if line[:2] in ("E:", "W:")]
    assert r.returncode == 0 and not tags, r.stdout + r.stderr


def unpack(tmp_path, *pkgs):
    root = tmp_path / "root"
    for p in pkgs:
        subprocess.run(["dpkg-deb", "-x", deb_path(p), root], check=True)
    return root


def test_nf_builds_against_unpacked_libxnv_dev(debs, tmp_path):
    root = unpack(tmp_path, "libxnv0", "libxnv-dev")
    _, out = build_nf(root, tmp_path)
    assert "--service" in out


def test_install_smoke_direct(debs):
    r = subprocess.run([REPO / "scripts" / "install-smoke.sh", "--direct",
                        "--debs", BUILD / "deb"], capture_output=True, text=True,
                       timeout=scaled(300), env=dict(os.environ))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "xnv-core is ready (READY=1)" in r.stdout
    assert "counters moved" in r.stdout


def test_container_smoke(debs):
    r = subprocess.run([REPO / "scripts" / "container-smoke.sh", "--debs", BUILD / "deb"],
                       capture_output=True, text=True, timeout=scaled(900),
                       env=dict(os.environ))
    if r.returncode == 77:
        pytest.skip(r.stdout.strip().splitlines()[-1])
    assert r.returncode == 0, r.stdout[-5000:] + r.stderr[-3000:]
    for step in ("systemctl start xnv-core: active", "xnv-nf@fwd-a: active, user xnv",
                 "xnv-nf@fwd-b: active, user xnv", "fwd-a and fwd-b attached",
                 "port out sent", "metrics: xnv_port_tx_packets_total",
                 "systemctl stop xnv-core: inactive, Result=success",
                 "builds with pkg-config libxnv", "without /sys/module"):
        assert step in r.stdout, r.stdout[-5000:]

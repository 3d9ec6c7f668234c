"""tests/xen/real-host/run.sh, the NF-domain checks for a real Xen host's
Dom0: what it says and does where it cannot run (every refusal one line,
exit 2, nothing written), and its build stage on this machine when a
kernel to build from is here.  Its run stage is exercised against real
Xen by the PVH boot of tests/xen (make check-xen-pvh-domu), whose Dom0
runs it as a real host's would; its build stage by every tests/xen run
(check real-host-builds)."""
import gzip
import os
import subprocess

import pytest

from harness import REPO, scaled

SCRIPT = REPO / "tests" / "xen" / "real-host" / "run.sh"


def run(args, **kw):
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True,
                          text=True, timeout=scaled(kw.pop("t", 30)), **kw)


def test_syntax():
    for p in (SCRIPT, REPO / "tests" / "xen" / "xt-host.sh"):
        r = subprocess.run(["bash", "-n", str(p)], capture_output=True,
                           text=True, timeout=scaled(10))
        assert r.returncode == 0, r.stderr


def test_help():
    r = run(["--help"])
    assert r.returncode == 0
    assert r.stdout.startswith("usage: tests/xen/real-host/run.sh")
    for opt in ("--out", "--kernel", "--modules", "--headers",
                "--no-migrate", "--build-only", "--run-only",
                "XNV_TIME_SCALE"):
        assert opt in r.stdout, opt


@pytest.mark.parametrize("args,env,says", [
    (["--bogus"], {}, "unknown argument '--bogus'"),
    (["--out"], {}, "--out wants a value"),
    (["--kernel", ""], {}, "--kernel wants a value"),
    (["--build-only", "--run-only"], {}, "--build-only or --run-only"),
    ([], {"XNV_TIME_SCALE": "0"}, "XNV_TIME_SCALE=0: want a number"),
])
def test_bad_input_one_line_nothing_written(args, env, says, tmp_path):
    out = tmp_path / "out"
    if "--out" not in args:
        args = args + ["--out", str(out)]
    r = run(args, env={**os.environ, **env})
    assert r.returncode == 2, r.stderr
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("real-host: "), r.stderr
    assert says in lines[0]
    assert not out.exists()


@pytest.mark.skipif(os.path.exists("/proc/xen/capabilities"),
                    reason="this machine runs on Xen")
def test_not_a_dom0(tmp_path):
    out = tmp_path / "out"
    r = run(["--out", str(out)])
    assert r.returncode == 2
    assert r.stderr.strip() == (
        "real-host: not the Dom0 of a Xen host (/proc/xen/capabilities has "
        "no control_d); --build-only builds anyway"), r.stderr
    assert not out.exists()


def cached_kernel():
    """The kernel tests/xen fetched (build/xen/cache/KV/), and the headers
    it built gntshare.ko against, or None."""
    cache = REPO / "build" / "xen" / "cache"
    for k in sorted(cache.glob("*/vmlinux")) if cache.is_dir() else []:
        kv = k.parent.name
        for h in (f"/usr/src/linux-headers-{kv}",
                  cache / f"headers-{kv}" / "usr" / "src" /
                  f"linux-headers-{kv}"):
            if os.path.exists(os.path.join(h, "Makefile")):
                return k, k.parent / "modules", h
    return None


def test_build_only(tmp_path):
    found = cached_kernel()
    if found is None:
        pytest.skip("no kernel of tests/xen in build/xen/cache (make "
                    "check-xen fetches it): the build stage is checked "
                    "there (real-host-builds)")
    kernel, mods, hdrs = found
    out = tmp_path / "rh"
    r = run(["--build-only", "--out", str(out), "--kernel", str(kernel),
             "--modules", str(mods), "--headers", str(hdrs)], t=300)
    assert r.returncode == 0, r.stderr + r.stdout
    assert r.stdout.startswith("real-host: built in ")
    d = out / "domU"
    assert (d / "vmlinux").read_bytes()[:4] == b"\x7fELF"
    for name, kind, svc in (("nf-pvh", "pvh", "fwd-a"), ("nf-mp", "pvh",
                            "fwd-b"), ("nf-a", "pv", "fwd-a"),
                            ("nf-b", "pv", "fwd-b")):
        cfg = (d / f"{name}.cfg").read_text()
        assert f'type = "{kind}"' in cfg
        assert f'kernel = "{d}/vmlinux"' in cfg
        assert f'nfv_service = "{svc}"' in cfg
    ini = (out / "nf" / "xnv.ini").read_text()
    assert f"rx_pcap={out}/nf/in.pcap" in ini
    assert f"tx_pcap={out}/tmp/out.pcap" in ini
    assert (out / "nf" / "count").read_text().strip() == "1000"
    assert (out / "lib" / "modules" / "gntshare.ko").stat().st_size > 0
    cpio = gzip.decompress((d / "initrd.cpio.gz").read_bytes())
    for member in (b"init", b"bin/xnv-forwarder", b"bin/busybox",
                   b"lib/modules/xen-gntdev.ko",
                   b"lib/modules/xen-evtchn.ko"):
        assert member + b"\0" in cpio, member

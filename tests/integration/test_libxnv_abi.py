# SPDX-License-Identifier: BSD-3-Clause
"""libxnv exports its API and nothing else, and a host-mode NF needs no Xen.

- `nm -D libxnv.so.0` defines exactly the functions <xnv/nf.h> declares,
  and they are the list in domu-lib/libxnv.map (version LIBXNV_0).
- An NF linked against libxnv.a with no Xen library on the link line
  links, runs, and says the Xen backend is not in it; with
  `pkg-config --static` the Xen client is in (where it was built).
"""
import os
import re
import shutil
import subprocess

import pytest

from harness import BUILD, REPO, scaled, write_config

LIB = BUILD / "lib"
HEADER = REPO / "domu-lib" / "include" / "xnv" / "nf.h"
MAP = REPO / "domu-lib" / "libxnv.map"

NF_SRC = r"""
#include <stdio.h>
#include <xnv/nf.h>

static xnv_action_t fwd(struct xnv_pkt *p, void *c) { (void)p; (void)c; return XNV_NEXT; }

int main(int argc, char **argv)
{
	struct xnv_nf *nf;
	int rc = xnv_nf_init(argc, argv, &nf);

	if (rc < 0)
		return 2;
	rc = xnv_nf_run(nf, fwd, NULL);
	xnv_nf_close(nf);
	return rc < 0;
}
"""


def declared_functions():
    """Functions nf.h declares (not its static inline helpers)."""
    text = HEADER.read_text()
    names = set()
    for m in re.finditer(r"^(?!static)[a-z][\w ]*?[\s*](xnv_\w+)\(", text,
                         re.M):
        names.add(m.group(1))
    return names


def mapped_functions():
    body = MAP.read_text().split("global:")[1].split("local:")[0]
    return set(re.findall(r"(\w+);", body))


def exported_functions():
    out = subprocess.run(["nm", "-D", "--defined-only",
                          str(LIB / "libxnv.so.0")], capture_output=True,
                         text=True, check=True).stdout
    return {line.split()[2].split("@")[0] for line in out.splitlines()
            if line.split()[1] in ("T", "W", "D", "B", "R")}


def test_shared_library_exports_only_the_api():
    declared = declared_functions()
    assert len(declared) >= 12, declared
    assert mapped_functions() == declared
    assert exported_functions() == declared


def sanitizer_flags():
    """The flags libxnv.a was built with, if it is a sanitizer build."""
    out = subprocess.run(["nm", str(LIB / "libxnv.a")], capture_output=True,
                         text=True).stdout
    return ["-fsanitize=address,undefined"] if "__asan_" in out else []


def build_nf(tmp_path, libs):
    src = tmp_path / "nf.c"
    src.write_text(NF_SRC)
    exe = tmp_path / "nf"
    cmd = [os.environ.get("CC", "cc"), "-std=c11", "-Wall", "-Werror",
           f"-I{REPO / 'domu-lib' / 'include'}", str(src), "-o", str(exe)]
    cmd += libs + sanitizer_flags()
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return exe


def needed(exe):
    out = subprocess.run(["readelf", "-d", str(exe)], capture_output=True,
                         text=True, check=True).stdout
    return re.findall(r"\(NEEDED\).*\[(.*)\]", out)


def test_host_nf_links_and_runs_without_xen_libs(tmp_path, xnv):
    exe = build_nf(tmp_path, [str(LIB / "libxnv.a")])
    assert not [n for n in needed(exe) if "xen" in n]
    r = xnv.run([exe, "--backend", "xen"])
    assert r.returncode == 2
    assert "--backend xen: expected auto or one of this libxnv's backends " \
        "(host)" in r.stderr
    # It attaches to a core and forwards in host mode.
    cfg = write_config(xnv.path("abi.ini"), [
        ("group g", {}),
        ("service fwd", {}),
        ("port in", {"dev": "net_null0", "group": "g",
                     "chain": "fwd -> out"}),
        ("port out", {"dev": "net_null1", "group": "g"}),
    ])
    core = xnv.start_core(cfg)
    core.wait_ready()
    nf = xnv.start_nf("fwd", "g", "abi-nf", binary=exe)
    core.wait_output(r"NF abi-nf \(pid \d+\) attached as domain", 30)
    assert nf.alive()


@pytest.mark.skipif(shutil.which("pkg-config") is None,
                    reason="pkg-config not installed")
def test_static_pkg_config_brings_the_xen_client(tmp_path):
    env = dict(os.environ, PKG_CONFIG_PATH=str(LIB / "pkgconfig"))
    libs = subprocess.run(["pkg-config", "--static", "--libs", "libxnv"],
                          env=env, capture_output=True, text=True,
                          check=True).stdout.split()
    if "-Wl,-u,gnts_xen_cli_ops" not in libs:
        pytest.skip("libxnv was built without the Xen client")
    exe = build_nf(tmp_path, libs)
    r = subprocess.run([str(exe), "--backend", "xen"], capture_output=True,
                       text=True, timeout=scaled(30))
    assert r.returncode == 2
    assert "one of this libxnv's backends" not in r.stderr
    assert "attach refused" in r.stderr

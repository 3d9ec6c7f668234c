# SPDX-License-Identifier: BSD-3-Clause
"""What the install and packaging tests share: running make in the repo,
the file list `make install` must produce, and building an out-of-tree NF
against an installed (or extracted) tree with plain `pkg-config libxnv`."""
import os
import subprocess
from pathlib import Path

from harness import BUILD, REPO, scaled

MULTIARCH = subprocess.run(["gcc", "-print-multiarch"], capture_output=True,
                           text=True).stdout.strip()
LIBDIR = f"usr/lib/{MULTIARCH}" if MULTIARCH else "usr/lib"
VERSION = next(line.split(":=")[1].strip()
               for line in (REPO / "Makefile").read_text().splitlines()
               if line.startswith("VERSION"))
EXAMPLES = sorted(p.parent.name for p in (REPO / "examples").glob("*/README.md")
                  if p.parent.name != "common")
PY_FILES = sorted(p.name for p in (REPO / "dom0-core/python/xnv").glob("*.py"))

LIBXNV_FILES = {
    "usr/include/xnv/nf.h",
    f"{LIBDIR}/libxnv.a", f"{LIBDIR}/libxnv.so", f"{LIBDIR}/libxnv.so.0",
    f"{LIBDIR}/libxnv.so.{VERSION}", f"{LIBDIR}/pkgconfig/libxnv.pc",
    "usr/share/man/man3/libxnv.3",
}
# make install DESTDIR=... PREFIX=/usr: every file, nothing else
INSTALL_FILES = LIBXNV_FILES | {
    *(f"usr/sbin/{b}" for b in ("xnv-core", "xnv-ctl", "xnv-xl")),
    *(f"usr/libexec/xnv/xnv-{e}" for e in EXAMPLES),
    "usr/libexec/xnv/xnv-nf-run",
    *(f"usr/share/xnv/python/xnv/{f}" for f in PY_FILES),
    "usr/share/xnv/python/xnv/VERSION",
    *(f"usr/share/man/man8/{m}.8" for m in ("xnv-core", "xnv-ctl", "xnv-xl")),
    "usr/share/bash-completion/completions/xnv-ctl",
    "usr/lib/systemd/system/xnv-core.service",
    "usr/lib/systemd/system/xnv-nf@.service",
    "usr/lib/sysusers.d/xnv.conf",
    "etc/xnv/xnv.ini", "etc/xnv/nf/fwd-a.conf", "etc/xnv/nf/fwd-b.conf",
    *(f"usr/src/gntshare-{VERSION}/{f}" for f in (
        "Kbuild", "Makefile", "VERSION", "dkms.conf", "gntshare.c",
        "include/gntshare/kmod.h")),
}

# The out-of-tree NF those builds compile (container-smoke.sh too).
NF_SRC = Path(__file__).with_name("oot_nf.c").read_text()


def make(*args, timeout=600, env=None):
    """make -C REPO ARGS with the tests' build directory; output returned,
    a failure raised with its tail."""
    r = subprocess.run(["make", "--no-print-directory", "-C", str(REPO),
                        f"B={BUILD}",
                        *args], capture_output=True, text=True,
                       timeout=scaled(timeout), env=env)
    assert r.returncode == 0, f"make {' '.join(args)}: {r.stderr[-3000:]}"
    return r.stdout + r.stderr


def files_under(root):
    """Every file and symlink under root, relative to it."""
    root = Path(root)
    return {str(p.relative_to(root)) for p in root.rglob("*")
            if p.is_file() or p.is_symlink()}


def build_nf(root, workdir, pkgconfig_dir=None):
    """Compile NF_SRC against the tree at root with `pkg-config libxnv`
    (sysroot root) and run it with --help: (binary, its output)."""
    src = Path(workdir) / "my_nf.c"
    src.write_text(NF_SRC)
    env = dict(os.environ, PKG_CONFIG_SYSROOT_DIR=str(root),
               PKG_CONFIG_LIBDIR=str(pkgconfig_dir or Path(root) / LIBDIR / "pkgconfig"))
    env.pop("PKG_CONFIG_PATH", None)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libxnv"],
                           capture_output=True, text=True, env=env, check=True)
    assert str(root) in flags.stdout, flags.stdout
    out = Path(workdir) / "my_nf"
    subprocess.run(["gcc", "-std=c11", "-Wall", "-Werror", "-o", str(out), str(src),
                    *flags.stdout.split()], check=True, timeout=scaled(120))
    r = subprocess.run([str(out), "--help"], capture_output=True, text=True,
                       timeout=scaled(10))
    assert r.returncode == 0, r.stderr
    return out, r.stdout + r.stderr

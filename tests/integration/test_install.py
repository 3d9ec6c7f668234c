# SPDX-License-Identifier: BSD-3-Clause
"""make install, make install-libxnv, the units, the NF launcher.

- `make install DESTDIR=d PREFIX=/usr` puts exactly the expected files
  there (binaries, libexec NFs, libxnv with its soname links and .pc,
  xnv-ctl's package, man pages, units, sample config, completion, the
  module's DKMS source); the .pc names /usr and the multiarch libdir; an
  out-of-tree NF builds against the staged tree with plain
  `pkg-config libxnv` and runs with --help (exit 0); the staged xnv-ctl
  finds its package.
- `make install-libxnv` in a fresh build directory with pkg-config seeing
  neither DPDK nor Xen compiles libxnv's files only, reading no DPDK or
  Xen header, and installs libxnv alone, which an NF builds against.
- `systemd-analyze verify` accepts both units, as installed (PID 1 here
  need not be systemd: the units are checked, not started).
- Bash completion offers xnv-ctl's commands as its --help lists them.
- scripts/deps.sh (make deps): the host-mode list carries libxen-dev and
  none of the Xen suite's hypervisor / QEMU packages, which --xen adds and
  --xen-only installs alone (DEPS_DRY_RUN=1: nothing is installed); an
  unknown argument is one line, exit 2.
- xnv-nf-run: a bad name (exit 2), a missing or bad file (exit 1), one
  line each; a good file runs the NF with --name, --reattach, ARGS, --,
  NF_ARGS, in place (same PID).
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness import BUILD, REPO, scaled
from installtree import (INSTALL_FILES, LIBDIR, LIBXNV_FILES, VERSION,
                         build_nf, files_under, make)


# The SAN pass would install sanitized libraries an NF cannot link
# without the sanitizers: installing is checked once, in the plain pass.
pytestmark = pytest.mark.skipif(BUILD.name == "build-san",
                                reason="install runs once, in the plain pass")


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    root = tmp_path_factory.mktemp("destdir")
    make("install", f"DESTDIR={root}", "PREFIX=/usr")
    return root


def test_install_puts_every_file_and_nothing_else(staged):
    got = files_under(staged)
    assert got - INSTALL_FILES == set(), "unexpected"
    assert INSTALL_FILES - got == set(), "missing"


def test_libxnv_soname_links_and_pc(staged):
    lib = staged / LIBDIR
    assert os.readlink(lib / "libxnv.so") == "libxnv.so.0"
    assert os.readlink(lib / "libxnv.so.0") == f"libxnv.so.{VERSION}"
    dyn = subprocess.run(["readelf", "-d", lib / f"libxnv.so.{VERSION}"],
                         capture_output=True, text=True, check=True).stdout
    assert "Library soname: [libxnv.so.0]" in dyn
    pc = (lib / "pkgconfig" / "libxnv.pc").read_text()
    assert "prefix=/usr\n" in pc
    assert f"libdir=/{LIBDIR}\n" in pc
    assert "includedir=/usr/include\n" in pc
    assert "Requires" not in pc         # plain pkg-config needs no Xen .pc


def test_out_of_tree_nf_builds_against_install(staged, tmp_path):
    _, out = build_nf(staged, tmp_path)
    assert "--service" in out


def test_installed_xnv_ctl_finds_its_package(staged):
    r = subprocess.run([staged / "usr/sbin/xnv-ctl", "--version"],
                       capture_output=True, text=True, timeout=scaled(30))
    assert r.returncode == 0, r.stderr
    assert VERSION in r.stdout


def test_install_libxnv_needs_neither_dpdk_nor_xen(tmp_path):
    root = tmp_path / "root"
    env = dict(os.environ, PKG_CONFIG_LIBDIR=str(tmp_path / "no-pc"))
    env.pop("PKG_CONFIG_PATH", None)
    out = make(f"B={tmp_path / 'b'}", "install-libxnv", f"DESTDIR={root}",
               env=env)
    compiled = set(re.findall(r" -c (\S+\.c) ", out))
    assert compiled and all(re.match(r"(domu-lib|gntshare)/", c) for c in compiled), compiled
    assert not any("xen" in c for c in compiled), compiled
    assert "rte_" not in out
    # and no header of either was read (the compiler's dependency files)
    deps = "".join(d.read_text() for d in (tmp_path / "b").rglob("*.d"))
    assert deps and not re.search(r"/(xen\w*|dpdk|rte_\w+)[./]", deps), deps
    # PREFIX default /usr/local
    assert files_under(root) == {f.replace("usr/", "usr/local/", 1)
                                 for f in LIBXNV_FILES}
    build_nf(root, tmp_path, root / "usr/local" / LIBDIR.split("/", 1)[1] / "pkgconfig")


@pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                    reason="systemd-analyze not installed")
def test_units_verify(tmp_path):
    """Installed to real paths (not a DESTDIR), so that ExecStart= and the
    man pages named in Documentation= exist where the units say."""
    p = tmp_path
    make("install", f"PREFIX={p}/usr", f"SYSCONFDIR={p}/etc",
         f"DKMSDIR={p}/src", f"SYSTEMDUNITDIR={p}/units")
    units = [p / "units/xnv-core.service", p / "units/xnv-nf@.service"]
    text = "".join(u.read_text() for u in units)
    assert f"ExecStart={p}/usr/sbin/xnv-core -l 0 -- --config {p}/etc/xnv/xnv.ini" in text
    assert f"ExecStart={p}/usr/libexec/xnv/xnv-nf-run %i" in text
    assert "Type=notify" in text and "After=xnv-core.service" in text
    r = subprocess.run(["systemd-analyze", "verify", *units], capture_output=True,
                       text=True, timeout=scaled(60),
                       env=dict(os.environ, MANPATH=f"{p}/usr/share/man"))
    assert r.returncode == 0 and r.stderr == "", r.stderr


def complete(staged, *words):
    """COMPREPLY of the installed completion for `xnv-ctl WORDS` (the last
    word the one completed)."""
    script = (f"source {staged}/usr/share/bash-completion/completions/xnv-ctl\n"
              f"COMP_WORDS=(xnv-ctl {' '.join(repr(w) for w in words)})\n"
              f"COMP_CWORD={len(words)}\n_xnv_ctl\necho \"${{COMPREPLY[@]}}\"\n")
    env = dict(os.environ, PATH=f"{staged}/usr/sbin:{os.environ['PATH']}")
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                       env=env, timeout=scaled(30), check=True)
    return r.stdout.split()


def test_bash_completion(staged):
    assert complete(staged, "fl") == ["flow"]
    assert complete(staged, "f") == ["fabric", "flow"]
    assert {"list", "add", "del", "reload"} <= set(complete(staged, "flow", ""))
    assert complete(staged, "--js") == ["--json"]
    assert {"ports", "nfs", "info", "watch"} <= set(complete(staged, ""))


def nf_run(staged, tmp_path, name, conf=None):
    d = tmp_path / "nf"
    d.mkdir(exist_ok=True)
    if conf is not None:
        (d / f"{name}.conf").write_text(conf)
    env = dict(os.environ, XNV_NF_DIR=str(d))
    p = subprocess.Popen([staged / "usr/libexec/xnv/xnv-nf-run", name],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env)
    out, err = p.communicate(timeout=scaled(30))
    return subprocess.CompletedProcess(p.pid, p.returncode, out, err)


@pytest.mark.parametrize("name,conf,rc,line", [
    ("../x", None, 2, "'../x': an NF name is letters"),
    ("nope", None, 1, "nope.conf: cannot read it"),
    ("a", "NF=forwarder\nARG=--x\n", 1, "a.conf:2: expected NF=, ARGS= or NF_ARGS="),
    ("a", "ARGS=--service a\n", 1, "a.conf: NF= is missing"),
    ("a", "NF=../../bin/sh\n", 1, "NF=../../bin/sh: an example's name or an absolute path"),
    ("a", "NF=nosuch\n", 1, "xnv-nosuch is not an executable"),
])
def test_nf_run_refuses_bad_input(staged, tmp_path, name, conf, rc, line):
    r = nf_run(staged, tmp_path, name, conf)
    assert r.returncode == rc
    assert r.stdout == "" and len(r.stderr.splitlines()) == 1, r.stderr
    assert line in r.stderr


def test_nf_run_execs_the_nf(staged, tmp_path):
    show = tmp_path / "show"
    show.write_text('#!/bin/sh\necho "$$" "$@"\n')
    show.chmod(0o755)
    r = nf_run(staged, tmp_path, "fw-1",
               f"# comment\n\nNF={show}\nARGS=--service fw --group blue\n"
               "NF_ARGS=--rules /etc/r.txt *\n")
    assert r.returncode == 0, r.stderr
    pid, *argv = r.stdout.split()
    assert int(pid) == r.args           # exec'd in place: the unit's main PID
    assert argv == ["--name", "fw-1", "--reattach", "--service", "fw",
                    "--group", "blue", "--", "--rules", "/etc/r.txt", "*"]


def deps(*args):
    r = subprocess.run(["bash", REPO / "scripts" / "deps.sh", *args], capture_output=True,
                       text=True, timeout=scaled(30), env=dict(os.environ, DEPS_DRY_RUN="1"))
    return r


def would_install(*args):
    r = deps(*args)
    assert r.returncode == 0, r.stderr
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("deps: would install: ")]
    assert len(line) == 1, r.stdout
    return set(line[0].split(": ", 2)[2].split())


def test_deps_leave_the_xen_suite_to_xen_1():
    base, xen, only = would_install(), would_install("--xen"), would_install("--xen-only")
    assert {"xen-hypervisor-4.17-amd64", "qemu-system-x86"} <= only
    assert {"libxen-dev", "openvswitch-switch"} <= base and not base & only
    assert xen == base | only
    r = deps("--bogus")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "--bogus" in r.stderr

# SPDX-License-Identifier: BSD-3-Clause
"""xnv-xl without Xen: the nfv_* checks (libxlutil parsing) and --dry-run
run anywhere; every bad config gets one error line naming the file and
nothing is started (no xl is run: XNV_XL points at a program that records
being called).  The Xen side of xnv-xl runs in tests/xen (make check-xen).
Also: xnv-core and libxnv refuse a bad --backend."""
import os
import subprocess

import pytest

from harness import BUILD, CORE_BIN, FWD_BIN, scaled

XL_BIN = BUILD / "bin" / "xnv-xl"

BASE = ('name = "fw1"\ntype = "pv"\nkernel = "/boot/vmlinuz"\n'
        'extra = "console=hvc0; nfv_fake = 1 # inside a string"\n'
        'nfv_trust_group = "blue"  # the group\n'
        'nfv_service = "firewall"\n')


def xnv_xl(tmp_path, *args, text=None):
    marker = tmp_path / "xl-was-run"
    fake = tmp_path / "fake-xl"
    fake.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    fake.chmod(0o755)
    argv = [str(XL_BIN), *args]
    if text is not None:
        cfg = tmp_path / "dom.cfg"
        cfg.write_text(text)
        argv = [a if a != "CFG" else str(cfg) for a in argv]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=scaled(20),
                       env={**os.environ, "XNV_XL": str(fake)})
    return p, marker.exists()


def test_dry_run_prints_the_plan(tmp_path):
    p, ran = xnv_xl(tmp_path, "create", "--dry-run", "CFG", "-q",
                    text=BASE + "nfv_instances = 2\n")
    assert p.returncode == 0, p.stderr
    assert not ran
    out = p.stdout
    assert "domain fw1: service firewall, trust group blue, 2 NF devices" in out
    assert f"create -p {tmp_path / 'dom.cfg'} -q" in out
    assert "/local/domain/0/backend/xnv/<domid>/0..1" in out
    assert "unpause <domid> (the domid of fw1, read once after step 1)" in out


def test_dry_run_with_a_driver_domain(tmp_path):
    """nfv_backend names the domain xnv-core runs in: the devices are
    registered under its backend tree; "Domain-0" is the default."""
    p, ran = xnv_xl(tmp_path, "create", "--dry-run", "CFG",
                    text=BASE + 'nfv_backend = "drv"\n')
    assert p.returncode == 0 and not ran, p.stderr
    assert ("register /local/domain/<domid of nfv_backend>/backend/xnv/<domid>/0..0"
            in p.stdout), p.stdout
    p, _ = xnv_xl(tmp_path, "create", "--dry-run", "CFG",
                  text=BASE + 'nfv_backend = "Domain-0"\n')
    assert "register /local/domain/0/backend/xnv/<domid>/0..0" in p.stdout, p.stdout


def test_unknown_driver_domain_creates_nothing(tmp_path):
    """A backend domain xl does not know: one line, and xl is asked only
    for its domid, never to create anything."""
    calls = tmp_path / "xl-calls"
    fake = tmp_path / "fake-xl"
    fake.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexit 1\n')
    fake.chmod(0o755)
    cfg = tmp_path / "dom.cfg"
    cfg.write_text(BASE + 'nfv_backend = "drv"\n')
    p = subprocess.run([str(XL_BIN), "create", str(cfg)], capture_output=True, text=True,
                       timeout=scaled(20), env={**os.environ, "XNV_XL": str(fake)})
    assert p.returncode == 1
    assert p.stderr.strip() == ('xnv-xl: nfv_backend = "drv": no domain of that name (start '
                                "the driver domain and its xnv-core first); no domain created")
    assert calls.read_text() == "domid drv\n"


def test_name_override_is_the_domain_name(tmp_path):
    """`xnv-xl create CFG name="x"`: xl names the domain x, so xnv-xl
    registers, unpauses and names the NFs of x, not of the file's name."""
    p, ran = xnv_xl(tmp_path, "create", "--dry-run", "CFG", 'name="fw2"',
                    text=BASE)
    assert p.returncode == 0, p.stderr
    assert "domain fw2: service firewall" in p.stdout
    assert "the domid of fw2" in p.stdout and "fw1" not in p.stdout


def test_dry_run_shows_command_line_overrides(tmp_path):
    """xl's KEY=VALUE arguments after CFG override the file: the plan
    lists them (not xl's own options), and says none when there are none."""
    p, ran = xnv_xl(tmp_path, "create", "--dry-run", "CFG", "-q", 'name="fw2"',
                    "memory=256", text=BASE)
    assert p.returncode == 0 and not ran, p.stderr
    cfg = tmp_path / "dom.cfg"
    assert (f'overrides of {cfg} on the command line: name="fw2" (the domain\'s '
            "name), memory=256\n") in p.stdout, p.stdout
    p, _ = xnv_xl(tmp_path, "create", "--dry-run", "CFG", "-q", text=BASE)
    assert f"overrides of {cfg} on the command line: none\n" in p.stdout, p.stdout


@pytest.mark.parametrize("arg,line", [
    ('nfv_trust_group="red"', "nfv_trust_group=\"red\": nfv_* settings go "
     "in the domain's config file, not on the command line"),
    ('name=""', 'name="": expected a domain name of 1 to 63 characters'),
])
def test_bad_override_refused(tmp_path, arg, line):
    p, ran = xnv_xl(tmp_path, "create", "CFG", arg, text=BASE)
    assert p.returncode == 2 and not ran, p.stderr     # a usage error
    assert p.stderr.strip() == f"xnv-xl: {line}", p.stderr


BAD = {
    "unknown-key": (BASE + "nfv_instance = 2\n",
                    r"dom.cfg:7: unknown key 'nfv_instance'"),
    "unknown-key-after-semicolon": (BASE.replace('"firewall"\n', '"firewall"; nfv_grp = "x"\n'),
                                    r"dom.cfg:6: unknown key 'nfv_grp'"),
    "instances-zero": (BASE + "nfv_instances = 0\n", "nfv_instances must be a number from 1 to 16"),
    "instances-17": (BASE + "nfv_instances = 17\n", "nfv_instances must be a number from 1 to 16"),
    "instances-string": (BASE + 'nfv_instances = "two"\n', "nfv_instances must be a number"),
    "group-missing": (BASE.replace('nfv_trust_group = "blue"  # the group\n', ""),
                      "nfv_trust_group is missing"),
    "service-missing": (BASE.replace('nfv_service = "firewall"\n', ""), "nfv_service is missing"),
    "group-bad-chars": (BASE.replace('"blue"', '"bl ue"'), "nfv_trust_group must be a string"),
    "service-too-long": (BASE.replace('"firewall"', '"' + "s" * 32 + '"'), "nfv_service must be a string"),
    "no-name": (BASE.replace('name = "fw1"\n', ""), "name = \"...\" is missing"),
    "backend-slash": (BASE + 'nfv_backend = "drv/0"\n', "nfv_backend must be a domain name"),
    "backend-blank": (BASE + 'nfv_backend = "dr v"\n', "nfv_backend must be a domain name"),
    "backend-empty": (BASE + 'nfv_backend = ""\n', "nfv_backend must be a domain name"),
    "backend-too-long": (BASE + 'nfv_backend = "' + "d" * 64 + '"\n',
                         "nfv_backend must be a domain name of up to 63 characters"),
    "syntax": (BASE + "nfv_service\n", "not a valid xl config"),
    # libxlutil aborts on this one (found by tests/fuzz/fuzz_nfv.c)
    "nul-byte": (BASE.replace('"fw1"', '"f\x00w1"'), "contains a NUL byte"),
}


@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.parametrize("dry", [False, True], ids=["create", "dry-run"])
def test_bad_config_is_refused_before_anything(tmp_path, case, dry):
    text, msg = BAD[case]
    args = ["create", "--dry-run", "CFG"] if dry else ["create", "CFG"]
    p, ran = xnv_xl(tmp_path, *args, text=text)
    assert p.returncode == 1
    assert not ran, "xl must not run for a bad config"
    assert p.stdout == ""
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("xnv-xl: ") and msg in last and "no domain created" in last, p.stderr


@pytest.mark.parametrize("args,msg", [
    (["frob"], "unknown command 'frob'"),
    (["create"], "no domain config given"),
    (["create", "--timeout", "x", "a.cfg"], "--timeout x: expected seconds"),
    (["create", "--bogus", "a.cfg"], "unknown or incomplete option '--bogus'"),
    (["create", "/nonexistent.cfg"], "cannot read /nonexistent.cfg"),
    (["destroy"], "destroy: expected exactly one domain name"),
    (["save", "nf-b"], "save: expected a domain name and a file"),
    (["save", "--timeout", "0", "nf-b", "f"], "--timeout 0: expected seconds > 0"),
    (["save", "-x", "nf-b", "f"], "save: unknown or incomplete option '-x'"),
    (["restore"], "restore: expected the file xnv-xl save wrote"),
    (["migrate", "nf-b"], "migrate: expected a domain name and a host"),
    (["migrate", "-s"], "migrate: unknown or incomplete option '-s'"),
    (["register", "nf-b"], "register: expected a domain name and its nfv_KEY=VALUE"),
    (["register", "nf-b", "memory=4", "x"], "register: 'memory=4': expected nfv_KEY=VALUE"),
    (["register", "nf-b", "nfv_trust_group=blue", "nfv_servce=x"],
     "register:3: unknown key 'nfv_servce'"),
    (["register", "nf-b", "nfv_trust_group=blue", "nfv_instances=99"],
     "nfv_service is missing"),
])
def test_bad_command_line(tmp_path, args, msg):
    p, ran = xnv_xl(tmp_path, *args)
    assert p.returncode != 0 and not ran
    assert msg in p.stderr, p.stderr


def test_restore_needs_the_registration(tmp_path):
    """xnv-xl save writes FILE.nfv beside xl's image; restore without it
    says so in one line and runs no xl (a domain without NF devices is
    restored by xl itself)."""
    img = tmp_path / "nf.save"
    img.write_bytes(b"not read")
    p, ran = xnv_xl(tmp_path, "restore", str(img))
    assert p.returncode == 1 and not ran
    assert p.stderr.count("\n") == 1, p.stderr
    assert f"no registration of NF devices next to {img}" in p.stderr
    (tmp_path / "nf.save.nfv").write_text('name = "nf-b"\nnfv_service = "fwd-b"\n')
    p, ran = xnv_xl(tmp_path, "restore", str(img))
    assert p.returncode == 1 and not ran
    assert "nfv_trust_group is missing" in p.stderr and "not restored" in p.stderr


def test_register_checks_before_asking_xl(tmp_path):
    """register builds the registration from nfv_KEY=VALUE arguments with
    the one nfv_* parser; a good one then looks the domain up (xl domid),
    a bad one never gets that far."""
    calls = tmp_path / "xl-calls"
    fake = tmp_path / "fake-xl"
    fake.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexit 1\n')
    fake.chmod(0o755)
    env = {**os.environ, "XNV_XL": str(fake)}
    p = subprocess.run([str(XL_BIN), "register", "nf-b", "nfv_trust_group=blue",
                        "nfv_service=fwd-b", "nfv_instances=2", "nfv_backend=drv"],
                       capture_output=True, text=True, timeout=scaled(20), env=env)
    assert p.returncode == 1 and p.stderr.strip() == "xnv-xl: no domain named nf-b", p.stderr
    assert calls.read_text() == "domid nf-b\n"
    p = subprocess.run([str(XL_BIN), "register", "nf-b", 'nfv_trust_group=bl"ue',
                        "nfv_service=fwd-b"], capture_output=True, text=True,
                       timeout=scaled(20), env=env)
    assert p.returncode == 2 and "nothing registered" in p.stderr
    assert calls.read_text() == "domid nf-b\n"


def test_help(tmp_path):
    p, _ = xnv_xl(tmp_path, "--help")
    assert p.returncode == 0 and "nfv_instances" in p.stdout
    for cmd in ("save", "restore", "migrate", "register"):
        assert f"xnv-xl {cmd} [--timeout SEC]" in p.stdout, cmd


def test_bad_backend_options():
    """Usage errors: exit 2."""
    p = subprocess.run([str(CORE_BIN), "--", "--config", "/x.ini", "--backend", "vmware"],
                       capture_output=True, text=True, timeout=scaled(20))
    assert p.returncode == 2
    assert "--backend vmware: expected one of: host, xen" in p.stderr
    p = subprocess.run([str(FWD_BIN), "--backend", "vmware", "--service", "a"],
                       capture_output=True, text=True, timeout=scaled(20))
    assert p.returncode == 2
    assert "--backend vmware: expected auto or one of this libxnv's backends (host, xen)" in p.stderr
    p = subprocess.run([str(FWD_BIN), "--backend", "xen", "--dev", "16"],
                       capture_output=True, text=True, timeout=scaled(20))
    assert p.returncode == 2 and "--dev 16: expected a device number" in p.stderr
    for args, env in ((["--attach-timeout", "0"], {}), ([], {"XNV_ATTACH_TIMEOUT": "1x"})):
        p = subprocess.run([str(FWD_BIN), "--backend", "xen", *args], capture_output=True,
                           text=True, timeout=scaled(20), env={**os.environ, **env})
        assert p.returncode == 2, p.stderr
        assert "expected seconds from 1 to 3600" in p.stderr and "attach" not in p.stderr.split(
            "expected")[1], p.stderr
    # In a Xen domain the domain's config names the group and the instance
    for opt, what in (("--group", "trust group"), ("--name", "instance name")):
        p = subprocess.run([str(FWD_BIN), "--backend", "xen", opt, "blue"],
                           capture_output=True, text=True, timeout=scaled(20))
        assert p.returncode == 2, p.stderr
        assert f"in a Xen domain the {what} comes from the domain's config" in p.stderr
        assert "attach" not in p.stderr, p.stderr    # refused before trying
    p = subprocess.run([str(FWD_BIN), "--backend", "xen"], capture_output=True,
                       text=True, timeout=scaled(20), env={"XNV_GROUP": "blue"})
    assert p.returncode == 2 and "--group / XNV_GROUP: in a Xen domain" in p.stderr

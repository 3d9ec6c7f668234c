"""bench/xen: the real-Xen benchmark scripts parse (bash -n) and, with
--dry-run, print a plan with every step they would take, without touching
Xen or the host (no xl, no root, nothing written)."""
import subprocess

import pytest

from harness import REPO, scaled

XEN = REPO / "bench" / "xen"
SCRIPTS = {
    "xnv-chain.sh": [
        "nfv_trust_group = \"blue\"", "nfv_service = \"fwd1\"",
        "nfv_service = \"fwd4\"", "xnv-xl create", "xnv-xl destroy",
        "xnv-core -l", "chain = fwd1 -> fwd2 -> fwd3 -> fwd4 -> out",
        "dev = net_null0,size=1518", "rate.py --prefix xnv-xen-core "
        "--dev net_null1"],
    "netfront.sh": [
        "ip link add xnvbr0 type bridge", "vif = [ 'bridge=xnvbr0",
        "--forward-mode=mac --eth-peer=1,00:16:3e:78:6e:01",
        "--forward-mode=macswap",
        "xl create", "xl destroy xnv-netfront", "net_af_packet0,iface=eth0",
        "net_af_packet0,iface=xnvx0", "net_null0,size=64",
        "ip link del xnvx0", "rate.py --prefix xnv-xen-traffic"],
    "sriov.sh": [
        "xl pci-assignable-add", "pci = [ '", "xl create", "xl destroy "
        "xnv-sriov", "dpdk-devbind.py -b vfio-pci", "vf 1 mac",
        "--forward-mode=mac", "net_null0,size=1518",
        "xl pci-assignable-remove"],
}


def test_every_script_is_covered():
    assert sorted(p.name for p in XEN.glob("*.sh") if p.name != "common.sh") \
        == sorted(SCRIPTS)


@pytest.mark.parametrize("name", sorted(SCRIPTS) + ["common.sh"])
def test_syntax(name):
    r = subprocess.run(["bash", "-n", XEN / name], capture_output=True,
                       text=True, timeout=scaled(10))
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_dry_run_plan(name, tmp_path):
    out = tmp_path / "res"
    r = subprocess.run(["bash", XEN / name, "--dry-run", "--out", out,
                        "--reps", "1"], capture_output=True, text=True,
                       timeout=scaled(30), env={"PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    plan = r.stdout
    for step in SCRIPTS[name]:
        assert step in plan, f"{name} --dry-run does not mention {step!r}"
    # the plan is printed, not carried out
    assert not out.exists()
    for line in plan.splitlines():
        if line.startswith("+ ") and "xl " in line:
            assert "create" in line or "destroy" in line or \
                "pci-assignable" in line, line


def test_help_and_bad_option():
    for name in SCRIPTS:
        r = subprocess.run(["bash", XEN / name, "--help"],
                           capture_output=True, text=True, timeout=scaled(10))
        assert r.returncode == 0 and "--dry-run" in r.stdout
        r = subprocess.run(["bash", XEN / name, "--no-such-option"],
                           capture_output=True, text=True, timeout=scaled(10))
        assert r.returncode == 2 and "unknown option" in r.stderr


# make bench-xen (bench/xen/tcg/): the emulated boot itself runs in
# `make bench-xen`, not here; its scripts parse and its report is checked.
TCG = XEN / "tcg"


@pytest.mark.parametrize("name", ["run.sh", "scenario.sh", "vif.sh"])
def test_tcg_syntax(name):
    r = subprocess.run(["bash", "-n", TCG / name], capture_output=True,
                       text=True, timeout=scaled(10))
    assert r.returncode == 0, r.stderr


def report(tmp_path, lines):
    src = tmp_path / "xb-results.txt"
    src.write_text("".join(line + "\n" for line in lines))
    return subprocess.run(["python3", TCG / "report.py", src,
                           tmp_path / "out"], capture_output=True,
                          text=True, timeout=scaled(30))


def test_tcg_report_pairs_windows(tmp_path):
    r = report(tmp_path, ["xnv 64 1 60000", "netfront 64 1 2000",
                          "xnv 64 2 40000", "netfront 64 2 1000",
                          "xnv 64 3 50000", "netfront 64 3 1000"])
    assert r.returncode == 0, r.stderr
    # ratios of paired windows 30, 40, 50: median 40, not 50000 / 1000
    assert "xnv/netfront 40.0x (30.0-50.0)" in r.stdout
    assert "emulated (TCG): ratio only" in r.stdout
    md = (tmp_path / "out" / "results.md").read_text()
    assert "| 64 | 50.0 | 1.0 | 40.0x (30.0-50.0) | 3 |" in md
    csv = (tmp_path / "out" / "results.csv").read_text().splitlines()
    assert csv[0].startswith("system,config,size,chain_len,mpps_median")
    assert csv[1].startswith("netfront,emulated (TCG): ratio only,64,1,"
                             "0.001000,0.001000,0.002000,3,")
    assert csv[2].startswith("xnv,emulated (TCG): ratio only,64,1,"
                             "0.050000,0.040000,0.060000,3,")


@pytest.mark.parametrize("lines, msg", [
    (["xnv 64 1 12.5"], "not 'system size rep pps'"),
    (["memif 64 1 100"], "not 'system size rep pps'"),
    ([], "no results"),
])
def test_tcg_report_refuses(tmp_path, lines, msg):
    r = report(tmp_path, lines)
    assert r.returncode != 0 and msg in r.stderr
    assert not (tmp_path / "out").exists()

"""bench/xen: the real-Xen benchmark scripts parse (bash -n) and, with
--dry-run, print a plan with every step they would take, without touching
Xen or the host (no xl, no root, nothing written)."""
import subprocess

import pytest

from harness import REPO

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
                       text=True, timeout=10)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_dry_run_plan(name, tmp_path):
    out = tmp_path / "res"
    r = subprocess.run(["bash", XEN / name, "--dry-run", "--out", out,
                        "--reps", "1"], capture_output=True, text=True,
                       timeout=30, env={"PATH": "/usr/bin:/bin"})
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
                           capture_output=True, text=True, timeout=10)
        assert r.returncode == 0 and "--dry-run" in r.stdout
        r = subprocess.run(["bash", XEN / name, "--no-such-option"],
                           capture_output=True, text=True, timeout=10)
        assert r.returncode == 2 and "unknown option" in r.stderr

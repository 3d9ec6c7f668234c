# SPDX-License-Identifier: BSD-3-Clause
"""A pool per NF (`[core] nf_pools = own`; what the xen backend does by
itself under gntalloc, without the gntshare module): each NF gets a pool
of its own of its group's pool_bufs, so packets are copied whenever they
cross pools, port -> NF and NF -> NF inside one trust group too, and
counted in the group's copy counters.  An NF's pool goes once the NF is
gone and every buffer is home.

  chain:   port in (blue) -> fwd-a -> fwd-b -> port out, all in blue
  release: null port -> fwd (blue) -> null port; the NF is killed"""
import re
import signal

import pytest

from harness import run_pcap_chain, wait_until, write_config
from traffic import first_difference, make_traffic

N_PACKETS = 2000
SEED = 0x6f776e70
POOL_BUFS = 4096           # > the NFs' rings (2 x 1024): no rx_nombuf


@pytest.fixture(scope="module")
def chain(xnv_module):
    return run_pcap_chain(xnv_module, make_traffic(N_PACKETS, SEED, n_flows=16),
                          pool_bufs=POOL_BUFS, core_opts={"nf_pools": "own"})


def test_chain_intact(chain):
    assert chain["core_rc"] == 0, chain["core"].log()[-3000:]
    assert chain["nf_rcs"] == [0, 0]
    assert chain["stats"]["ports"][0]["rx"] == N_PACKETS
    diff = first_difference(chain["in"], chain["out"])
    assert diff is None, diff
    assert all(v == 0 for v in chain["stats"]["drops"].values()), \
        chain["stats"]["drops"]


def test_each_nf_got_a_pool_of_its_own(chain):
    log = chain["core"].log()
    assert "nf_pools = own: each NF gets a pool of its own" in log
    for name in ("fwd-a-1", "fwd-b-1"):
        assert re.search(rf"NF {name} \(pid \d+\) attached as domain \d+: .*"
                         rf"pool: its own \(#\d+, {POOL_BUFS} buffers\)",
                         log), log[-3000:]
    nfs = {n["name"]: n for n in chain["stats"]["nfs"]}
    assert nfs["fwd-a-1"]["own_pool"] and nfs["fwd-b-1"]["own_pool"]


def test_crossing_pools_copies_counted_in_the_group(chain):
    """port -> fwd-a and fwd-a -> fwd-b are copies (two per packet), fwd-b
    -> port out is sent from fwd-b's pool as is."""
    (g,) = chain["stats"]["groups"]
    assert g["copies_in"] == 2 * N_PACKETS, g
    assert g["copies_to"] == {"blue": 2 * N_PACKETS}, g
    assert g["free"] == g["pool_bufs"] == POOL_BUFS, g


def test_nf_pools_home_at_exit(chain):
    pools = chain["stats"]["nf_pools"]
    assert sorted(p["region"] for p in pools) == ["xnv-pool-fwd-a-1",
                                                  "xnv-pool-fwd-b-1"], pools
    for p in pools:
        assert p["retired"] and p["free"] == p["pool_bufs"] == POOL_BUFS, p
    assert chain["stats"]["gntalloc_pages"] == 0


def test_killed_nf_pool_released(xnv):
    """SIGKILL the NF under traffic: its buffers are reclaimed, its own
    pool is released, the group's pool is full again."""
    cfg = write_config(xnv.path("release.ini"), [
        ("core", {"nf_pools": "own", "ring_size": 256}),
        ("group blue", {"pool_bufs": 1024}),
        ("port in", {"dev": "net_null0", "group": "blue",
                     "chain": "fwd -> out"}),
        ("port out", {"dev": "net_null1", "group": "blue"}),
        ("service fwd", {}),
    ])
    core = xnv.start_core(cfg)
    core.wait_ready()
    nf = xnv.start_nf("fwd", "blue", "victim")
    core.wait_attached(nf)
    wait_until(lambda: core.snapshot()["nfs"]["victim"]["rx"] > 10000, 20,
               "traffic through the NF")
    s = core.snapshot()
    assert s["pools"]["xnv-pool-victim"]["pool_bufs"] == 1024, s
    nf.signal(signal.SIGKILL)
    core.wait_output(r"pool \d+ \(xnv-pool-victim, group blue\) released: "
                     r"its NF is gone and its 1024 buffers are home", 10)
    s = core.snapshot()
    assert s["pools"] == {}, s
    assert s["nfs"]["victim"]["state"] == "gone", s
    wait_until(lambda: core.snapshot()["groups"]["blue"]["free"] == 1024, 5,
               "the group's pool full again")
    core.stop()

# SPDX-License-Identifier: BSD-3-Clause
"""Which trust group an NF's own verdict may hand packets to: [group]
may_send_to (dom0-core/config_access.c, datapath.c resolve()).

Two groups.  Port in (blue) -> sender (an xnv-testnf of group blue with a
fixed verdict) -> ...; victim is an xnv-testnf of group red that sends
what it gets out of red's port outR.  Ports: in 0, outB 1 (blue), outR 2
(red); services: sender 1, victim 2.

  - sender's XNV_OUT to outR, or XNV_TO_SERVICE to victim, without
    may_send_to: every packet dropped and charged to sender as a bad
    descriptor of kind "policy"; nothing reaches red (victim attached,
    outR silent, nothing copied);
  - with blue's may_send_to = red: every packet passes (into victim:
    copied into red's pool, counted);
  - the operator's chain sender -> victim -> outR crosses without it;
  - the policy's bad descriptors count against the error budget."""
import re

import pytest

from harness import start_testnf, write_config
from traffic import first_difference, make_traffic, read_pcap, write_pcap

N = 600                 # under the default error budget (1000 / s)
PORT_OUT_R = 2
VICTIM_ID = 2


def policy_run(env, name, action, chain="sender -> outB", blue=None, red=None,
               core_opts=None):
    """The scenario once, sender's verdict `action`; blue, red: more keys
    of those groups.  The core stops once idle; returns its counters."""
    pkts = make_traffic(N, 0x5e4d, n_flows=8)
    in_pcap = write_pcap(env.path(f"{name}-in.pcap"), pkts)
    sock = env.sockdir / f"{name}.sock"
    cfg = write_config(env.path(f"{name}.ini"), [
        ("core", {"socket": sock, "stall_timeout_ms": 20000, **(core_opts or {})}),
        ("group blue", {"pool_bufs": 1024, **(blue or {})}),
        ("group red", {"pool_bufs": 1024, **(red or {})}),
        ("port in", {"dev": f"net_pcap0,rx_pcap={in_pcap}", "group": "blue",
                     "chain": chain}),
        ("port outB", {"dev": f"net_pcap1,tx_pcap={env.path(f'{name}-outB.pcap')}",
                       "group": "blue"}),
        ("port outR", {"dev": f"net_pcap2,tx_pcap={env.path(f'{name}-outR.pcap')}",
                       "group": "red"}),
        ("service sender", {"id": 1}),
        ("service victim", {"id": VICTIM_ID}),
    ])
    core = env.start_core(cfg, socket=sock, idle_exit=500, name=name)
    core.wait_ready()
    victim = start_testnf(env, "victim", "red", f"{name}-victim",
                          action=f"out:{PORT_OUT_R}", flows=False, socket=sock)
    core.wait_attached(victim)
    sender = start_testnf(env, "sender", "blue", f"{name}-sender", action=action,
                          flows=False, socket=sock)
    core.wait_attached(sender)
    rc = core.wait(60)
    st = core.stats()
    return dict(core=core, rc=rc, in_=pkts, stats=st,
                nfs={n["name"].rsplit("-", 1)[1]: n for n in st["nfs"]},
                groups={g["name"]: g for g in st["groups"]},
                ports={p["name"]: p for p in st["ports"]},
                outR=read_pcap(env.path(f"{name}-outR.pcap")),
                rcs=(sender.wait(10), victim.wait(10)))


def assert_pools_home(r):
    for g in r["groups"].values():
        assert g["free"] == g["pool_bufs"], g


@pytest.mark.parametrize("action", [f"out:{PORT_OUT_R}", f"service:{VICTIM_ID}"],
                         ids=["out-port", "to-service"])
def test_refused_without_may_send_to(xnv, action):
    r = policy_run(xnv, "deny", action)
    assert r["rc"] == 0, r["core"].log()[-3000:]
    sender, victim = r["nfs"]["sender"], r["nfs"]["victim"]
    assert sender["rx"] == N and sender["tx"] == N, sender
    assert sender["bad"] == N and sender["bad_kinds"]["policy"] == N, sender
    assert all(v == 0 for k, v in sender["bad_kinds"].items() if k != "policy")
    assert not sender["quarantined"], sender
    assert r["stats"]["drops"]["bad_desc"] == N, r["stats"]["drops"]
    # nothing reached red: its NF (attached all along) and its port saw
    # nothing
    assert victim["rx"] == 0, victim
    assert r["ports"]["outR"]["tx"] == 0 and r["outR"] == []
    assert r["groups"]["red"]["copies_in"] == 0
    assert r["groups"]["blue"]["copies_to"]["red"] == 0
    assert_pools_home(r)


@pytest.mark.parametrize("action,copied", [(f"out:{PORT_OUT_R}", 0),
                                           (f"service:{VICTIM_ID}", N)],
                         ids=["out-port", "to-service"])
def test_allowed_with_may_send_to(xnv, action, copied):
    """A port sends from any pool (nothing copied); an NF of red gets its
    packets copied into red's pool, counted."""
    r = policy_run(xnv, "allow", action, blue={"may_send_to": "red"})
    assert r["rc"] == 0, r["core"].log()[-3000:]
    sender = r["nfs"]["sender"]
    assert sender["bad"] == 0 and sender["tx"] == N, sender
    assert r["ports"]["outR"]["tx"] == N
    assert first_difference(r["in_"], r["outR"]) is None
    assert r["nfs"]["victim"]["rx"] == copied
    assert r["groups"]["blue"]["copies_to"]["red"] == copied
    assert r["groups"]["red"]["copies_in"] == copied
    assert all(v == 0 for v in r["stats"]["drops"].values()), r["stats"]["drops"]
    assert_pools_home(r)


def test_may_send_to_is_one_way(xnv):
    """red may send to blue: that says nothing about blue -> red."""
    r = policy_run(xnv, "oneway", f"service:{VICTIM_ID}",
                   red={"may_send_to": "blue"})
    assert r["nfs"]["sender"]["bad_kinds"]["policy"] == N
    assert r["nfs"]["victim"]["rx"] == 0


def test_operator_chain_crosses_without_may_send_to(xnv):
    r = policy_run(xnv, "chain", "next", chain="sender -> victim -> outR")
    assert r["rc"] == 0, r["core"].log()[-3000:]
    assert r["nfs"]["sender"]["bad"] == 0 and r["nfs"]["victim"]["rx"] == N
    assert r["ports"]["outR"]["tx"] == N
    assert first_difference(r["in_"], r["outR"]) is None
    assert r["groups"]["blue"]["copies_to"]["red"] == N


def test_policy_counts_against_the_error_budget(xnv):
    r = policy_run(xnv, "budget", f"out:{PORT_OUT_R}",
                   core_opts={"error_budget": 100})
    sender = r["nfs"]["sender"]
    assert sender["quarantined"], sender
    assert re.fullmatch(r"quarantined: \d+ bad descriptors within 1 s, over "
                        r"error_budget 100 \(last: verdict into a group "
                        r"may_send_to does not allow\)", sender["reason"]), sender
    assert 100 < sender["bad_kinds"]["policy"] <= N, sender
    assert r["ports"]["outR"]["tx"] == 0
    assert_pools_home(r)

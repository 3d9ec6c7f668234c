"""Chain versions under churn: more distinct chains are set on a live port
than the version table holds, so versions no longer referenced must be
found and reused while packets are in flight on the newest ones (see
dom0-core/chain.c).  Nothing may be lost or misrouted on the way."""
import itertools

from harness import Telemetry, start_named_core, wait_until, write_config

SERVICES = ("fwd-a", "fwd-b", "fwd-c")
N_SETS = 4500          # > XNV_MAX_CHAINS (4096 + 256) distinct versions


def distinct_chains():
    """Service sequences of length 1..7, ending at the out port or in a
    drop step: 2 * (3 + 9 + ... + 2187) = 6558 distinct chains."""
    for end in ("out", "drop"):
        for n in range(1, 8):
            for seq in itertools.product(SERVICES, repeat=n):
                yield "->".join((*seq, end))


def test_chain_versions_reused_under_traffic(xnv):
    cfg = write_config(xnv.path("chains.ini"), [
        ("core", {"socket": xnv.sockdir / "chains.sock"}),
        ("group g", {"pool_bufs": 8192}),
        ("port in", {"dev": "net_null0,size=64", "group": "g",
                     "chain": "fwd-a -> out"}),
        ("port out", {"dev": "net_null1", "group": "g"}),
        *[(f"service {s}", {}) for s in SERVICES],
    ])
    core = start_named_core(xnv, cfg, "chains")
    nfs = [xnv.start_nf(s, "g", s, socket=core.socket) for s in SERVICES]
    for nf in nfs:
        core.wait_attached(nf)
    errors = []
    with Telemetry(core) as t:
        for i, chain in zip(range(N_SETS), distinct_chains()):
            r = t("/xnv/chain/set", f"in {chain}")
            if "error" in r:
                errors.append((i, chain, r["error"]))
                break
        n_set = i + 1
        final = t("/xnv/chain/set", "in fwd-c->out")
        last = t("/xnv/port/info", 0)["chain"]
        before = core.snapshot()["nfs"]["fwd-c"]["rx"]
    assert errors == [] and n_set == N_SETS
    assert final["chain"] == last == ["fwd-c", "out"]
    # the newest chain carries traffic end to end
    wait_until(lambda: core.snapshot()["nfs"]["fwd-c"]["rx"] > before + 1000,
               10, "traffic on the last chain")
    core.stop()
    st = core.stats()
    ports = {p["name"]: p for p in st["ports"]}
    lost = (ports["in"]["rx"] - ports["out"]["tx"]
            - sum(st["drops"].values()) - sum(n["drop"] for n in st["nfs"]))
    assert lost == 0, st
    (g,) = st["groups"]
    assert g["free"] == g["pool_bufs"]

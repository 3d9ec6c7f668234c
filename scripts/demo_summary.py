#!/usr/bin/env python3
"""Print the demo's summary from xnv-core's --stats-json and the pcaps.

usage: demo_summary.py STATS.json IN.pcap OUT.pcap
"""
import json
import sys

from scapy.utils import RawPcapReader


def frames(path):
    return [bytes(data) for data, _ in RawPcapReader(path)]


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.strip())
    st = json.load(open(sys.argv[1]))
    fin, fout = frames(sys.argv[2]), frames(sys.argv[3])
    ports = {p["name"]: p for p in st["ports"]}
    print("XenNetVM demo: pcap -> xnv-core -> fwd-a -> fwd-b -> pcap (host mode)")
    print(f"  {'stage':<22}{'in':>10}{'out':>10}{'dropped':>10}")
    print(f"  {'port in (rx)':<22}{ports['in']['rx']:>10}")
    for nf in sorted(st["nfs"], key=lambda n: n["service"]):
        print(f"  {'NF ' + nf['service']:<22}{nf['rx']:>10}{nf['tx']:>10}"
              f"{nf['drop'] + nf['bad']:>10}")
    print(f"  {'port out (tx)':<22}{'':>10}{ports['out']['tx']:>10}")
    core_drops = sum(st["drops"].values())
    print(f"  {'core drops':<22}{'':>10}{'':>10}{core_drops:>10}")
    for g in st["groups"]:
        print(f"  pool of group {g['name']}: {g['free']}/{g['pool_bufs']} "
              f"buffers back home, {g['copies_in']} packets copied")
    if st["traffic_s"] > 0:
        mpps = ports["out"]["tx"] / st["traffic_s"] / 1e6
        print(f"  rate: {mpps:.3f} Mpps ({ports['out']['tx']} packets in "
              f"{st['traffic_s'] * 1e3:.1f} ms; pcap I/O bound)")
    same = fin == fout
    print(f"  output pcap: {len(fout)} packets, "
          f"{'identical to the input' if same else 'DIFFERS from the input'}")
    sys.exit(0 if same and core_drops == 0 else 1)


if __name__ == "__main__":
    main()

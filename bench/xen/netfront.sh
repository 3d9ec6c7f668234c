#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# netfront/netback on a real Xen host, the path XenNetVM replaces:
# net_null -> testpmd (Dom0, pCPU A, mac fwd) -> net_af_packet on a veth end in a
# Linux bridge (or Open vSwitch, --ovs) -> vif (netback) -> eth0
# (netfront) of a DomU whose testpmd (macswap) loops every packet back through
# net_af_packet on eth0 -> ... -> net_null, counted at net_null0.
# --dry-run prints the plan.
set -euo pipefail
. "$(dirname "$0")/common.sh"

BR=xnvbr0
OVS=0
usage() {
	echo "usage: $0 [--bridge NAME] [--ovs] [common options]"
	common_usage
}
parse_own() {
	case $1 in
	--bridge) BR=$2 ;;
	--ovs) OVS=1; return 1 ;;
	*) return 2 ;;
	esac
}
parse_common "$@"
need xl dpdk-testpmd python3 ip

begin "netfront/netback: Dom0 testpmd <-> bridge $BR <-> vif <-> DomU testpmd (af_packet)"
if [ "$OVS" = 1 ]; then
	need ovs-vsctl
	run ovs-vsctl --may-exist add-br "$BR"
	bridge_add() { run ovs-vsctl --may-exist add-port "$BR" "$1"; }
	VIF_SCRIPT=", script=vif-openvswitch"
else
	run ip link add "$BR" type bridge
	bridge_add() { run ip link set "$1" master "$BR"; }
	VIF_SCRIPT=""
fi
run ip link add xnvx0 type veth peer name xnvx1
bridge_add xnvx1
for dev in "$BR" xnvx0 xnvx1; do run ip link set "$dev" mtu 1600 up; done
cleanup_net() {
	stop_all
	run ip link del xnvx0 || true
	if [ "$OVS" = 1 ]; then run ovs-vsctl del-br "$BR" || true
	else run ip link del "$BR" || true; fi
}
[ "$DRY" = 1 ] || trap cleanup_net EXIT

domain_cfg xnv-netfront "$OUT/netfront.cfg" <<CFG
vif = [ 'bridge=$BR, mac=00:16:3e:78:6e:01$VIF_SCRIPT' ]
extra = 'xnv_nf="ip link set eth0 mtu 1600 up; dpdk-testpmd --no-pci --no-huge -m 256 --vdev net_af_packet0,iface=eth0,qdisc_bypass=1 -- --forward-mode=macswap --port-topology=loop --nb-cores=1 --total-num-mbufs=16384"'
CFG
# A Linux bridge drops frames whose source MAC is not a valid unicast one,
# and net_null's frames carry none: the Dom0 side writes its own MAC and the
# guest's (mac forwarding), the guest swaps them back (macswap).
TRAFFIC_FWD="--forward-mode=mac --eth-peer=1,00:16:3e:78:6e:01"
af_packet_traffic() {
	start_traffic "$1" --vdev net_af_packet0,iface=xnvx0,qdisc_bypass=1
}
each_point netfront "1 NF (af_packet in DomU)" xnv-netfront \
	"$OUT/netfront.cfg" af_packet_traffic
trap - EXIT
cleanup_net
echo "results: $OUT/results.csv"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# SR-IOV on a real Xen host: net_null -> testpmd (Dom0, pCPU A) on VF 0
# -> the NIC's embedded switch -> VF 1 passed through to a DomU (pci=)
# whose testpmd swaps MACs and sends every packet back -> VF 0 -> net_null,
# counted at net_null0.  The hardware does the switching: the upper bound
# a software NF platform is compared with.  --dry-run prints the plan.
set -euo pipefail
. "$(dirname "$0")/common.sh"

PF=""			# the PF's netdev, e.g. enp3s0f0
VF_DOM0=""		# PCI address of the VF kept in Dom0 (vfio-pci)
VF_GUEST=""		# PCI address of the VF passed to the DomU
MAC_DOM0=02:00:00:78:6e:10
MAC_GUEST=02:00:00:78:6e:11
usage() {
	echo "usage: $0 --pf NETDEV --vf-dom0 PCI --vf-guest PCI [common options]"
	common_usage
}
parse_own() {
	case $1 in
	--pf) PF=$2 ;;
	--vf-dom0) VF_DOM0=$2 ;;
	--vf-guest) VF_GUEST=$2 ;;
	*) return 2 ;;
	esac
}
parse_common "$@"
if [ "$DRY" = 1 ]; then	# a plan with placeholders is still a plan
	PF=${PF:-enp3s0f0}; VF_DOM0=${VF_DOM0:-0000:03:02.0}
	VF_GUEST=${VF_GUEST:-0000:03:02.1}
fi
[ -n "$PF" ] && [ -n "$VF_DOM0" ] && [ -n "$VF_GUEST" ] || {
	usage >&2; exit 2; }
need xl dpdk-testpmd dpdk-devbind.py python3 ip

begin "SR-IOV: Dom0 testpmd on VF $VF_DOM0 <-> NIC switch <-> VF $VF_GUEST in a DomU"
run ip link set "$PF" up
run ip link set "$PF" vf 0 mac "$MAC_DOM0"
run ip link set "$PF" vf 1 mac "$MAC_GUEST"
run modprobe vfio-pci
run dpdk-devbind.py -b vfio-pci "$VF_DOM0"
run xl pci-assignable-add "$VF_GUEST"
domain_cfg xnv-sriov "$OUT/sriov.cfg" <<CFG
pci = [ '$VF_GUEST' ]
extra = 'xnv_nf="dpdk-testpmd -a 0000:00:00.0 --no-huge -m 256 -- --forward-mode=mac --eth-peer=0,$MAC_DOM0 --port-topology=loop --nb-cores=1 --total-num-mbufs=16384"'
CFG
# The Dom0 side: like start_traffic, but mac forwarding, so that the NIC
# switches the frames to the guest's VF.
vf_traffic() {
	start traffic dpdk-testpmd --lcores "0@$CPU_A,1@$CPU_A" \
		--file-prefix xnv-xen-traffic --in-memory -a "$VF_DOM0" \
		--vdev "net_null0,size=$1" -- --forward-mode=mac \
		--eth-peer="0,$MAC_GUEST" --eth-peer="1,$MAC_GUEST" \
		--nb-cores=1 --total-num-mbufs=16384 --no-mlockall
}
each_point sriov "1 NF (VF passthrough)" xnv-sriov "$OUT/sriov.cfg" \
	vf_traffic
run xl pci-assignable-remove -r "$VF_GUEST"
echo "results: $OUT/results.csv"

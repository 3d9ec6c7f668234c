#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# XenNetVM on a real Xen host: net_null -> xnv-core (Dom0, pCPU A) -> a
# chain of 1..N forwarder DomUs (vCPUs on pCPU B) -> xnv-core -> net_null,
# counted at net_null1 through DPDK telemetry, as bench.py does in host
# mode.  Each DomU is created with xnv-xl from a config carrying
# nfv_trust_group / nfv_service.  --dry-run prints the plan.
set -euo pipefail
. "$(dirname "$0")/common.sh"

CHAINS="1 2 3 4"
usage() {
	echo "usage: $0 [--chains \"1 2 3 4\"] [common options]"
	common_usage
}
parse_own() {
	case $1 in
	--chains) CHAINS=$2 ;;
	*) return 2 ;;
	esac
}
parse_common "$@"
need xl xnv-xl dpdk-testpmd python3
DESTROY="xnv-xl destroy"

begin "XenNetVM: xnv-core in Dom0 + a chain of forwarder DomUs (group blue)"
for n in $CHAINS; do
	# One NF alone busy-polls its vCPU; several share pCPU B and poll
	# adaptively (as in host mode).
	poll=""
	[ "$n" -gt 1 ] || poll=" --busy-poll"
	for size in $SIZES; do
		[ "$n" -eq 1 ] || [ "$size" -eq 64 ] || continue
		chain=""
		for k in $(seq 1 "$n"); do chain="${chain}fwd$k -> "; done
		put "$OUT/core-$n-$size.ini" <<INI
; xnv-core, Dom0: $n forwarder DomUs, $size B
[group blue]
pool_bufs = 8192
[port in]
dev = net_null0,size=$size
group = blue
chain = ${chain}out
[port out]
dev = net_null1
group = blue
$(for k in $(seq 1 "$n"); do echo "[service fwd$k]"; done)
INI
		for rep in $(seq 1 "$REPS"); do
			start "core-$n-$size-$rep" "$BUILD/bin/xnv-core" -l "$CPU_A" \
				--file-prefix xnv-xen-core -- --config \
				"$OUT/core-$n-$size.ini" --backend xen --busy-poll --duration 3600
			for k in $(seq 1 "$n"); do
				domain_cfg "xnv-fwd$k" "$OUT/fwd$k.cfg" <<CFG
extra = 'xnv_nf="xnv-forwarder --service fwd$k$poll"'
nfv_trust_group = "blue"
nfv_service = "fwd$k"
nfv_instances = 1
CFG
				run xnv-xl create "$OUT/fwd$k.cfg"
				DOMAINS+=("xnv-fwd$k")
			done
			if [ "$n" -eq 1 ]; then what="1 NF"; else what="chain of $n"; fi
			count xennetvm "$what" "$size" "$n" xnv-xen-core net_null1
			stop_all
		done
	done
done
echo "results: $OUT/results.csv"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# make bench-xen: one emulated boot (tests/xen/run.sh with XT_BENCH=1; in the Dom0: scenario.sh)
# that pushes the same net_null traffic through XenNetVM (xnv-core -> NF
# in a PV DomU -> xnv-core) and through netfront/netback + a bridge, then
# writes bench/results/xen-tcg-<date>/results.{csv,md}.  Emulated (TCG):
# the ratio is the result, not the rates.
# Knobs: XB_SIZES ("64 1024") XB_REPS (3) XB_WIN (4 s) XB_WARM (2 s)
# XB_OUT (results dir) and tests/xen/run.sh's XT_* (XT_OUT: build/xen-bench).
set -uo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
out=${XT_OUT:-$top/build/xen-bench}
res=${XB_OUT:-$top/bench/results/xen-tcg-$(date +%Y-%m-%d-%H%M%S)}
mkdir -p "$out" && rm -f "$out/xb-results.txt"
XT_BENCH=1 XT_OUT=$out XT_CACHE=${XT_CACHE:-$top/build/xen/cache} \
	bash "$top/tests/xen/run.sh" | tee "$out.log"
rc=${PIPESTATUS[0]}
grep -q '^SKIP:' "$out.log" && exit 0
[ -s "$out/xb-results.txt" ] || { echo "bench-xen: no results (see $out/run.log.txt)"; exit 1; }
python3 "$top/bench/xen/tcg/report.py" "$out/xb-results.txt" "$res" || rc=1
exit "$rc"

# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the bench/xen scripts: options, the dry-run plan, domain
# configs, the Dom0 traffic side and the count.  Nothing here runs by
# itself.  See bench/xen/README.md.
#
# Every command goes through `run` (or `start` for background ones), and
# every file through `put`: with --dry-run they are only printed, exactly
# as they would run, and nothing on the host (or in Xen) is touched.

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)

DRY=0
SIZES="64 128 256 512 1024 1518"
REPS=3
DURATION=10
WARMUP=2
CPU_A=2			# Dom0 pCPU of the traffic side / xnv-core
CPU_B=3			# pCPU the NF DomU's vCPU is pinned to
KERNEL=/boot/xnv-guest/vmlinuz
RAMDISK=/boot/xnv-guest/initrd.img
MEMORY=1024
BUILD=$REPO/build
OUT=$BENCH_DIR/results/xen-$(date +%Y-%m-%d-%H%M%S)
PIDS=()			# background processes we started (stopped by PID)
DOMAINS=()		# domains we created

common_usage() {
	cat <<EOF
common options:
  --dry-run        print every command and file, run nothing
  --sizes "S ..."  packet sizes (default: $SIZES)
  --reps N         runs per point (default $REPS)
  --duration S     counted seconds per run (default $DURATION)
  --warmup S       seconds before counting (default $WARMUP)
  --cpu-a N        Dom0 pCPU of the traffic side / xnv-core (default $CPU_A)
  --cpu-b N        pCPU the NF guest's vCPU is pinned to (default $CPU_B)
  --kernel F --ramdisk F   PV guest image (default $KERNEL, $RAMDISK);
                   its /init runs the command given as xnv_nf="..." on the
                   kernel command line (see bench/xen/README.md)
  --build DIR      XenNetVM build tree (default $BUILD)
  --out DIR        results directory (default bench/results/xen-<date-time>)
EOF
}

# parse_common "$@": sets the globals; script options are handled by the
# caller's parse_own NAME VALUE (returns 1 if it took no value, 2 if the
# option is unknown).
parse_common() {
	while [ $# -gt 0 ]; do
		case $1 in
		--dry-run) DRY=1 ;;
		--sizes) SIZES=$2; shift ;;
		--reps) REPS=$2; shift ;;
		--duration) DURATION=$2; shift ;;
		--warmup) WARMUP=$2; shift ;;
		--cpu-a) CPU_A=$2; shift ;;
		--cpu-b) CPU_B=$2; shift ;;
		--kernel) KERNEL=$2; shift ;;
		--ramdisk) RAMDISK=$2; shift ;;
		--build) BUILD=$2; shift ;;
		--out) OUT=$2; shift ;;
		-h|--help) usage; exit 0 ;;
		*)
			local rc=0
			parse_own "$1" "${2-}" || rc=$?
			case $rc in
			0) shift ;;
			1) ;;
			*) echo "$0: unknown option $1 (see --help)" >&2; exit 2 ;;
			esac ;;
		esac
		shift
	done
}

# run CMD...: print it; execute it unless --dry-run.
run() {
	echo "+ $*"
	[ "$DRY" = 1 ] || "$@"
}

# start NAME CMD...: run in the background, log in $OUT/NAME.log.
start() {
	local name=$1; shift
	echo "+ $* > $OUT/$name.log 2>&1 &"
	[ "$DRY" = 1 ] && return 0
	"$@" >"$OUT/$name.log" 2>&1 &
	PIDS+=($!)
}

# put FILE: write stdin to FILE (printed in full under --dry-run).
put() {
	if [ "$DRY" = 1 ]; then
		echo "+ cat > $1 <<'EOF'"
		cat
		echo "EOF"
	else
		cat >"$1"
	fi
}

need() {	# need TOOL...: fail early on a real run
	[ "$DRY" = 1 ] && return 0
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null || { echo "$0: needs $t" >&2; exit 1; }
	done
	[ "$(id -u)" -eq 0 ] || { echo "$0: needs root" >&2; exit 1; }
}

# domain_cfg NAME FILE: a PV guest config, 1 vCPU pinned to CPU_B, with
# the lines on stdin added (its /init runs what their xnv_nf= says).
domain_cfg() {
	{ cat <<EOF
name = "$1"
type = "pv"
kernel = "$KERNEL"
ramdisk = "$RAMDISK"
memory = $MEMORY
vcpus = 1
cpus = "$CPU_B"
on_crash = "destroy"
EOF
	cat; } | put "$2"
}

# The DPDK traffic side in Dom0 (CPU A): testpmd io forwarding between a
# net_null source/sink and one more port (EAL args in "$@"), as bench.py's
# peers.  Its telemetry prefix is xnv-xen-traffic.  TRAFFIC_FWD: testpmd's
# forwarding options (default --forward-mode=io).
start_traffic() {
	local size=$1; shift
	start traffic dpdk-testpmd --lcores "0@$CPU_A,1@$CPU_A" \
		--file-prefix xnv-xen-traffic --in-memory --single-file-segments \
		--vdev "net_null0,size=$size" "$@" -- ${TRAFFIC_FWD:---forward-mode=io} \
		--nb-cores=1 --total-num-mbufs=16384 --no-mlockall
}

# count SYSTEM CONFIG SIZE CHAIN PREFIX DEV: one measurement, appended to
# $OUT/results.csv (the columns bench.py writes, one row per run).
count() {
	local line
	echo "+ python3 $BENCH_DIR/rate.py --prefix $5 --dev $6" \
		"--warmup $WARMUP --duration $DURATION"
	[ "$DRY" = 1 ] && return 0
	line=$(cd "$BENCH_DIR" && python3 rate.py --prefix "$5" --dev "$6" \
		--warmup "$WARMUP" --duration "$DURATION")
	echo "$1: $2, $3 B: ${line#Mpps }"
	echo "$1,$2,$3,$4,${line#Mpps },,,1,,A=$CPU_A B=$CPU_B" >>"$OUT/results.csv"
}

# each_point SYSTEM CONFIG DOMAIN CFG_FILE TRAFFIC_FN: for every size and
# rep: create the NF domain, start the Dom0 traffic side (TRAFFIC_FN SIZE),
# count at net_null0 of xnv-xen-traffic, stop both.
each_point() {
	local size rep
	for size in $SIZES; do
		for rep in $(seq 1 "$REPS"); do
			run xl create "$4"
			DOMAINS+=("$3")
			"$5" "$size"
			count "$1" "$2" "$size" 1 xnv-xen-traffic net_null0
			stop_all
		done
	done
}

# stop_all: every background process we started (by PID), every domain
# we created.  Runs on exit, also after an error or ^C.
stop_all() {
	local p d
	for p in "${PIDS[@]}"; do
		kill -INT "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	PIDS=()
	for d in "${DOMAINS[@]}"; do
		run ${DESTROY:-xl destroy} "$d" || true
	done
	DOMAINS=()
}

begin() {	# begin TITLE: results dir, header, cleanup on exit
	echo "== $1"
	echo "sizes: $SIZES; $REPS runs of ${DURATION}s after ${WARMUP}s;" \
		"traffic side on pCPU $CPU_A, NF vCPU on pCPU $CPU_B"
	run mkdir -p "$OUT"
	if [ "$DRY" = 0 ]; then
		[ -s "$OUT/results.csv" ] || echo "system,config,size,chain_len,mpps_median,mpps_min,mpps_max,reps,disturbed,cores" >"$OUT/results.csv"
		trap stop_all EXIT
		trap 'exit 130' INT TERM
	fi
}

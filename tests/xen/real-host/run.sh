#!/usr/bin/env bash
# NF domains on a real Xen host: what tests/xen checks under QEMU, run in
# this host's Dom0 (README.md).  Builds the DomU image from this Dom0's own
# kernel (tests/xen/xt-host.sh, as run.sh builds its images), then runs
# the same scenario scripts as the QEMU boot: nf-pvh.sh, nf-migrate.sh pvh.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
xt_here=$(cd "$here/.." && pwd)
xt_top=$(cd "$xt_here/../.." && pwd)
. "$xt_here/xt-host.sh"

usage() {
	cat <<-EOF
	usage: tests/xen/real-host/run.sh [options]

	Runs XenNetVM's NF-domain checks on this Xen host, in its Dom0, as root,
	from a built tree (make): an NF in a PVH DomU chained with one in a PV
	DomU under traffic (tests/xen/nf-pvh.sh), then a PVH NF domain saved,
	restored and live-migrated to localhost while traffic flows
	(tests/xen/nf-migrate.sh pvh).  One line per check, then
	"real-host: N passed, N failed" (exit 1 if any failed; 2: could not run).

	  --out DIR       images, configs and logs (build/xen/real-host)
	  --kernel FILE   the DomUs' kernel, a bzImage or an ELF
	                  (/boot/vmlinuz-\$(uname -r))
	  --modules DIR   its modules: xen-gntdev, xen-evtchn for the DomUs
	                  (/lib/modules/\$(uname -r))
	  --headers DIR   the running kernel's build tree, for gntshare.ko
	                  (MODULES/build)
	  --no-migrate    save and restore only, no live migration
	  --build-only    build the images and configs, boot nothing (any host)
	  --run-only      run with what a --build-only left in --out (or what
	                  tests/xen/run.sh put in its Dom0's /: XT_ONLY=pvh)
	  -h, --help      this text

	Environment: XNV_TIME_SCALE (1) multiplies every timeout.
	EOF
}
die() { echo "real-host: $*" >&2; exit 2; }
log() { echo "real-host: $*"; }

kv=$(uname -r)
out=$xt_top/build/xen/real-host kernel="" mods="" hdrs="" mig=1 build_only=0 run_only=0
while [ $# -gt 0 ]; do
	case $1 in
	--out|--kernel|--modules|--headers)
		[ $# -ge 2 ] && [ -n "$2" ] || die "$1 wants a value (--help)"
		case $1 in
		--out) out=$2 ;; --kernel) kernel=$2 ;;
		--modules) mods=$2 ;; --headers) hdrs=$2 ;;
		esac
		shift 2 ;;
	--no-migrate) mig=0; shift ;;
	--build-only) build_only=1; shift ;;
	--run-only) run_only=1; shift ;;
	-h|--help) usage; exit 0 ;;
	*) die "unknown argument '$1' (--help)" ;;
	esac
done
kernel=${kernel:-/boot/vmlinuz-$kv} mods=${mods:-/lib/modules/$kv}
hdrs=${hdrs:-$mods/build}
scale=${XNV_TIME_SCALE:-1}
awk -v s="$scale" 'BEGIN { exit !(s ~ /^[0-9]+(\.[0-9]+)?$/ && s >= 1 && s <= 100) }' ||
	die "XNV_TIME_SCALE=$scale: want a number from 1 to 100"
case $out in /*) ;; *) out=$PWD/$out ;; esac
[ $build_only = 1 ] && [ $run_only = 1 ] && die "--build-only or --run-only, not both"
case $out in *[[:space:]]*) die "--out $out: a path without blanks, please" ;; esac

# ---- can it run here?  (one line each, nothing changed yet) ------------------
doms="nf-pvh nf-b nf-a nf-mp"
if [ $build_only = 0 ]; then
	[ "$(id -u)" = 0 ] || die "run as root (it loads gntshare.ko and creates domains)"
	grep -qs control_d /proc/xen/capabilities ||
		die "not the Dom0 of a Xen host (/proc/xen/capabilities has no control_d); --build-only builds anyway"
	command -v xl >/dev/null || die "xl missing (xen-utils)"
	caps=$(xl info 2>/dev/null | sed -n 's/^virt_caps *: //p')
	echo " $caps " | grep -q ' hvm ' ||
		die "Xen offers no HVM guests here (virt_caps: '$caps'): a PVH DomU needs VT-x or AMD-V"
	# the scenarios read each guest's console from xenconsoled's guest logs
	logs=no
	for p in /proc/[0-9]*; do
		c=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) || continue
		case $c in *xenconsoled*) ;; *) continue ;; esac
		echo "$c" | grep -qE -- '--log[= ](guest|all)' && logs=yes
		echo "$c" | grep -qE -- '--log-dir[= ]' &&
			! echo "$c" | grep -qE -- '--log-dir[= ]/var/log/xen/console( |/|$)' && logs=elsewhere
	done
	[ $logs = yes ] || die "xenconsoled does not log guest consoles to /var/log/xen/console ($logs): set XENCONSOLED_TRACE=guest in /etc/default/xencommons and restart xenconsoled"
	for d in $doms; do
		xl domid "$d" >/dev/null 2>&1 && die "a domain named $d exists: the checks create their own ($doms)"
	done
fi
# ---- build (any Debian host with the tree built) --------------------------------
build_needs() {	# each missing piece: one line, exit 2
	[ -x "$xt_top/build/bin/xnv-core" ] && [ -x "$xt_top/build/bin/xnv-xl" ] &&
		[ -r "$xt_top/build/lib/pkgconfig/libxnv.pc" ] || die "build the tree first (make)"
	for t in gcc make cpio xz gzip pkg-config; do
		command -v $t >/dev/null || die "$t missing (make deps)"
	done
	[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 ||
		die "/bin/busybox missing or not static (busybox-static): the DomUs' initramfs needs it"
	[ -r /usr/lib/x86_64-linux-gnu/libxengnttab.a ] || die "libxen-dev missing (make deps): the programs are static"
	py=${XT_PYTHON:-$xt_top/.venv/bin/python}
	[ -x "$py" ] || die "$py missing (make deps makes .venv; gen_pcap.py needs scapy)"
	[ -r "$kernel" ] || die "no DomU kernel $kernel (--kernel)"
	[ -e "$hdrs/Makefile" ] || die "no kernel build tree at $hdrs (linux-headers-$kv, or --headers)"
}
build() {
	t0=$(date +%s)
	rm -rf "$out"/{bin,domU,nf,lib,tmp,rootU,kmods,kmod}
	mkdir -p "$out"/{domU,nf,lib/modules,tmp,kmods}
	for m in xen-gntdev xen-evtchn; do	# Debian 13 compresses modules
		f=$(find "$mods" -name "$m.ko*" 2>/dev/null | head -n 1)
		case $f in
		"") die "no $m module under $mods (--modules)" ;;
		*.ko) cp "$f" "$out/kmods/" ;;
		*.ko.xz) xz -dc "$f" >"$out/kmods/$m.ko" ;;
		*.ko.zst) zstd -qdc "$f" >"$out/kmods/$m.ko" ;;
		*.ko.gz) gzip -dc "$f" >"$out/kmods/$m.ko" ;;
		*) die "$f: an unknown module format" ;;
		esac || die "could not unpack $f"
	done
	xt_kmod "$hdrs" "$out/kmod" "$out/kmod-build.log" ||
		die "gntshare.ko does not build against $hdrs: $(grep -m1 -E 'error|Error' "$out/kmod-build.log")"
	cp "$out/kmod/gntshare.ko" "$out/lib/modules/"
	xt_programs "$out/bin" "$out/cc.log" || die "test programs: $(grep -m1 error "$out/cc.log")"
	xt_elf_kernel "$kernel" "$out/domU/vmlinux" ||
		die "$kernel: neither an ELF nor a bzImage with an xz payload (--kernel: an ELF vmlinux)"
	xt_domu_root "$out/rootU" "$out/bin" "$out/kmods"
	xt_cpio_gz "$out/rootU" "$out/domU/initrd.cpio.gz"
	xt_traffic "$out/nf" 1000 "$py" "$out/pcap.log" || die "gen_pcap.py: $(tail -n 1 "$out/pcap.log")"
	xt_core_ini "$out/nf" "$out/nf" "$out/tmp" "$scale"
	xt_cfg=$out/domU xt_domu=$out/domU xt_scale=$scale xt_nfmem=96
	xt_deadline=$(awk -v s="$scale" 'BEGIN { printf "%d", 3600 * s }')
	nfdom nf-a blue fwd-a nf
	nfdom nf-b blue fwd-b nf
	xt_pvh_domains
	log "built in $(($(date +%s) - t0)) s: $out (DomU kernel $kernel, modules $mods, gntshare.ko against $hdrs)"
}
if [ $run_only = 1 ]; then
	[ -r "$out/nf/xnv.ini" ] && [ -r "$out/domU/nf-pvh.cfg" ] ||
		die "--run-only: nothing built in $out (run with --build-only first)"
	command -v xnv-core >/dev/null || [ -x "$xt_top/build/bin/xnv-core" ] ||
		die "--run-only: no xnv-core (make)"
else
	build_needs
	mkdir -p "$out" || die "cannot make $out"
	build
fi
[ $build_only = 1 ] && exit 0

# ---- run ---------------------------------------------------------------------------
npass=0 nfail=0
ok()   { echo "real-host: ok - $1${2:+ ($2)}"; npass=$((npass + 1)); }
fail() { echo "real-host: FAIL - $1: $2"; nfail=$((nfail + 1)); }
loaded=""
if [ ! -e /dev/xen/gntshare ]; then
	insmod "$out/lib/modules/gntshare.ko" || die "insmod gntshare.ko failed (dmesg says why)"
	loaded=gntshare
fi
lsmod | grep -q '^xen_gntalloc' || modprobe xen-gntalloc limit=4096 ||
	log "xen-gntalloc not loaded: the core runs without the fallback"
sc_pid=""
tidy() {
	[ -n "$sc_pid" ] && kill -TERM -- "-$sc_pid" 2>/dev/null
	for d in $doms; do xl destroy "$d" 2>/dev/null; done
	[ -n "$loaded" ] && { rmmod gntshare 2>/dev/null || log "gntshare.ko stays loaded (rmmod: in use)"; }
}
trap 'tidy; exit 2' INT TERM
# the scenarios read these consoles from their start: no earlier run's lines
for d in $doms; do rm -f "/var/log/xen/console/guest-$d.log"; done
export XT_ROOT=$out XT_SCALE=$scale XT_PVH_MIGRATE=$mig
export PATH=$out/bin:$xt_here:$xt_top/build/bin:$PATH
log "$(xl info | grep -m1 xen_version | tr -s ' '), virt_caps $caps, Dom0 $kv; logs: $out/run.log"
# its own session: a signal to this script stops the scenario, its core too
setsid sh -c 'nf-pvh.sh; nf-migrate.sh pvh' >"$out/run.log" 2>&1 &
sc_pid=$!
wait $sc_pid
sc_pid=""
tidy
expected="pvh-domu-boots pvh-nf-attaches pvh-chain-forwards pvh-under-traffic pvh-doorbell
	pvh-core-exits-cleanly save-restore-pvh migrate-pvh-pools-full"
[ $mig = 1 ] && expected="$expected migrate-pvh-localhost"
xt_verdicts "$out/run.log" $expected
echo "real-host: $npass passed, $nfail failed"
[ $nfail = 0 ]

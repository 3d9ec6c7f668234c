#!/usr/bin/env bash
# Real-Xen test under QEMU (TCG): Xen 4.17 + PV Dom0 + two PV DomUs, the
# gntshare kernel module loaded in Dom0.  Recipe: XEN-IN-QEMU.md; what is
# checked: tests/xen/README.md.
#
# Output: one line per check, "XEN: ok - <name>" / "XEN: FAIL - <name>: why",
# then exactly "XEN: N passed, N failed" (exit 1 if any failed), or a single
# "SKIP: ..." line (exit 0) when Xen/QEMU/libxen-dev are not installed.
#
# Knobs (environment): XNV_TIME_SCALE (1: every timeout times it)
# XT_PAGES (512) XT_MAX_FRAMES (16) XT_TIMEOUT (2160 x scale)
# XT_WATCHDOG (2100 x scale) XT_QEMU_MEM (3072) XT_KPKG (linux-image-<KV>-amd64)
# XT_HEADERS (auto|cache) XT_OUT (build/xen) XT_VERBOSE (0)
# XT_PVH (0; 1: PVH Dom0 with 2 MiB hugepage pools, make check-xen-pvh)
# XT_INSTALL (1; 0: skip instead of installing the Xen suite's packages)
# XT_ONLY (empty: every check; doorbell: the NFs' doorbells alone, with
# what they need: core, nf-a, nf-b, the blue chain, the clean shutdown;
# driver: the driver domain's checks alone, nf-driver.sh; migrate: save,
# restore and migration of a PV NF domain alone, nf-migrate.sh; pvh: an NF
# in a PVH DomU, nf-pvh.sh, then a PVH NF domain saved and restored,
# nf-migrate.sh pvh, QEMU's CPU with AMD-V then) XT_PVH_HAP (1; 0: the PVH
# DomU on shadow paging, hap = 0, and no nested paging in QEMU's CPU)
# XT_PVH_MIGRATE (0; 1: the PVH boot also live-migrates its PVH NF domain
# to localhost: not in make check, the emulator crashed the migrated guest
# once, see README)
# XT_BENCH (0; 1: make bench-xen: bench/xen/tcg/scenario.sh instead of the
# checks, XB_SIZES XB_REPS XB_WIN XB_WARM passed to it) XT_CACHE (XT_OUT/cache)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
xt_here=$here xt_top=$top
. "$here/xt-host.sh"
out=${XT_OUT:-$top/build/xen}
cache=${XT_CACHE:-$out/cache}
# absolute: the module is built from the kernel headers' directory
case $out in /*) ;; *) out=$PWD/$out ;; esac
case $cache in /*) ;; *) cache=$PWD/$cache ;; esac
pages=${XT_PAGES:-512}
maxf=${XT_MAX_FRAMES:-16}
# One scale factor for every timeout (tests/README.md): XNV_TIME_SCALE.
scale=${XNV_TIME_SCALE:-1}
if ! awk -v s="$scale" 'BEGIN { exit !(s ~ /^[0-9]+(\.[0-9]+)?$/ && s >= 1 && s <= 100) }'; then
	echo "XNV_TIME_SCALE=$scale: want a number from 1 to 100" >&2; exit 2
fi
sc() { awk -v s="$scale" -v t="$1" 'BEGIN { printf "%d\n", t * s + 0.999 }'; }
tmo=${XT_TIMEOUT:-$(sc 2160)}
wd=${XT_WATCHDOG:-$(sc 2100)}
pvh=${XT_PVH:-0}
pvhhap=${XT_PVH_HAP:-1}
pvhmig=${XT_PVH_MIGRATE:-0}
bench=${XT_BENCH:-0}
only=${XT_ONLY:-}
case $only in
""|doorbell|driver|migrate|pvh) ;;
*) echo "XT_ONLY=$only: want doorbell, driver, migrate or pvh (or nothing: every check)" >&2; exit 2 ;;
esac
qmem=${XT_QEMU_MEM:-3072}
xenbin=/usr/lib/xen-4.17/bin
libdir=/usr/lib/x86_64-linux-gnu
CC=${CC:-gcc}

skip() { echo "SKIP: tests/xen: $*"; exit 0; }
# What make deps leaves out (make deps XEN=1 puts in): installed here,
# saying which, when this runs as root; XT_INSTALL=0 skips instead.
missing=$(bash "$top/scripts/deps.sh" --xen-missing | tr '\n' ' ')
if [ -n "$missing" ]; then
	[ "$(id -u)" = 0 ] && [ "${XT_INSTALL:-1}" != 0 ] ||
		skip "not installed: $missing(make deps XEN=1)"
	echo "tests/xen: installing the Xen suite's packages: $missing(as make deps XEN=1 does)"
	mkdir -p "$out"
	bash "$top/scripts/deps.sh" --xen-only > "$out/deps.log" 2>&1 ||
		skip "could not install $missing: $(tail -1 "$out/deps.log")"
fi
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed (make deps)"
[ -r /boot/xen-4.17-amd64.gz ] || skip "/boot/xen-4.17-amd64.gz missing (xen-hypervisor-4.17-amd64, make deps)"
[ -r /usr/include/xenstore.h ] && [ -r $libdir/libxengnttab.a ] ||
	skip "libxen-dev not installed (make deps)"
for t in "$xenbin/xl" /bin/busybox cpio xz dpkg-deb apt-get "$top/build/bin/xnv-core" \
	"$top/build/bin/xnv-xl"; do
	command -v "$t" >/dev/null || skip "$t missing (make deps)"
done

npass=0 nfail=0
ok()   { echo "XEN: ok - $1${2:+ ($2)}"; npass=$((npass + 1)); }
fail() { echo "XEN: FAIL - $1: $2"; nfail=$((nfail + 1)); }
finish() { echo "XEN: $npass passed, $nfail failed"; [ "$nfail" -eq 0 ]; exit; }
log() { [ "${XT_VERBOSE:-0}" = 0 ] || echo "xen: $*" >&2; }
mkdir -p "$cache" "$out"
t_start=$(date +%s.%N)
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f s", b - a }'; }

# ---- 1. kernel: the package linux-image-amd64 depends on, fetched once ----
kpkg=${XT_KPKG:-$(apt-cache depends linux-image-amd64 2>/dev/null |
	awk '/Depends: linux-image-[0-9]/ { print $2; exit }')}
[ -n "$kpkg" ] || { fail kernel-fetch "apt-cache knows no linux-image-amd64 (apt-get update?)"; finish; }
kv=${kpkg#linux-image-}
kdir=$cache/$kv
kmods="xen-privcmd xenfs xen-evtchn xen-gntdev xen-gntalloc"
# make bench-xen: netback + bridge in Dom0, netfront in the DomU
kmods_net="xen-netback xen-netfront veth bridge stp llc"
have_kernel() {
	[ -s "$kdir/vmlinux" ] || return 1
	for m in $kmods $kmods_net; do [ -s "$kdir/modules/$m.ko" ] || return 1; done
}
if ! have_kernel; then
	t=$(date +%s.%N)
	rm -rf "$kdir" && mkdir -p "$kdir/modules"
	( cd "$cache" && ls "${kpkg}"_*.deb >/dev/null 2>&1 || apt-get download "$kpkg" ) \
		>"$kdir/fetch.log" 2>&1
	deb=$(ls "$cache/${kpkg}"_*.deb 2>/dev/null | tail -1)
	if [ -z "$deb" ]; then
		fail kernel-fetch "apt-get download $kpkg: $(grep -E '^E:' "$kdir/fetch.log" | head -1)"
		finish
	fi
	x=$kdir/x
	dpkg-deb -x "$deb" "$x"
	cp "$x/boot/config-$kv" "$kdir/config"
	for m in $kmods $kmods_net; do
		find "$x/lib/modules/$kv/kernel/drivers" "$x/lib/modules/$kv/kernel/net" \
			-name "$m.ko" -exec cp {} "$kdir/modules/" \;
	done
	xt_elf_kernel "$x/boot/vmlinuz-$kv" "$kdir/vmlinux"
	rm -rf "$x"
	have_kernel || { fail kernel-fetch "no ELF vmlinux or modules ($kmods $kmods_net) in $deb"; finish; }
	log "kernel $kv fetched and extracted in $(since "$t")"
fi

# ---- 2. gntshare.ko against the headers of exactly that kernel ------------
hdr=/usr/src/linux-headers-$kv
if [ "${XT_HEADERS:-auto}" = cache ] || [ ! -e "$hdr/Makefile" ]; then
	hroot=$cache/headers-$kv
	hdr=$hroot/usr/src/linux-headers-$kv
	if [ ! -e "$hdr/Makefile" ]; then
		kbuild=linux-kbuild-$(echo "$kv" | cut -d. -f1,2)
		common=linux-headers-${kv%-amd64}-common
		mkdir -p "$hroot"
		if ! ( cd "$cache" && apt-get download "linux-headers-$kv" "$common" "$kbuild" ) \
			>"$cache/headers-fetch.log" 2>&1; then
			fail kmod-build "apt-get download linux-headers-$kv $common $kbuild failed: $(grep -E '^E:' "$cache/headers-fetch.log" | head -1)"
			finish
		fi
		for d in "$cache/linux-headers-${kv}"_*.deb "$cache/${common}"_*.deb "$cache/${kbuild}"_*.deb; do
			dpkg-deb -x "$d" "$hroot"
		done
		# the package's Makefile includes the -common tree by absolute path
		sed -i "s#/usr/src/#$hroot/usr/src/#" "$hdr/Makefile"
	fi
fi
kbo=$out/kmod
if xt_kmod "$hdr" "$kbo" "$out/kmod-build.log"; then
	ok kmod-build "gntshare.ko for $kv, headers $hdr"
else
	fail kmod-build "make -C $hdr M=... modules failed: $(grep -m1 -E 'error|Error' "$out/kmod-build.log")"
	finish
fi

# ---- 3. static test programs, initramfs images ---------------------------
bld=$out/bin
mkdir -p "$bld"
if ! xt_programs "$bld" "$out/cc.log"; then
	fail test-programs "$(grep -m1 error "$out/cc.log")"
	finish
fi

# Dynamic programs go in with their libraries.  The PMDs named keep the
# host's symlinks into the PMD directory (XEN-IN-QEMU.md section 15) and
# are all that directory holds, so EAL loads just those as plugins; every
# other library (testpmd links many drivers) is a plain file beside libc.
pmds=/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0
copy_chain() {	# ROOT PATH: PATH and each symlink on the way to the file, under /usr
	local p=$2 t
	case $p in /lib/*) p=/usr$p ;; esac
	while :; do
		mkdir -p "$1$(dirname "$p")"
		if [ -L "$p" ]; then
			cp -P "$p" "$1$p"
			t=$(readlink "$p")
			case $t in /*) p=$t ;; *) p=$(dirname "$p")/$t ;; esac
		else
			cp "$p" "$1$p"
			break
		fi
	done
}
install_dyn() {	# ROOT "PROGRAMS" "PMDS": programs into ROOT/usr/bin, libraries, PMDs
	local l n
	mkdir -p "$1/usr/bin" "$1/lib/x86_64-linux-gnu" "$1/lib64" "$1/var/run/dpdk"
	cp $2 "$1/usr/bin/"
	for l in $3; do copy_chain "$1" "$pmds/librte_$l.so.23"; done
	for l in $(ldd $2 $(for p in $3; do echo "$pmds/librte_$p.so.23"; done) |
		   awk '/=> \//{ print $3 }' | sort -u) $libdir/libgcc_s.so.1; do
		n=${l##*/librte_}
		case " $3 " in
		*" ${n%.so.*} "*) copy_chain "$1" "$l" ;;	# a named PMD
		*) cp -L "$l" "$1/lib/x86_64-linux-gnu/" ;;	# not a plugin
		esac
	done
	cp -L /lib64/ld-linux-x86-64.so.2 "$1/lib64/"
}

# real-host/run.sh's build stage as on a real host, from the kernel fetched
# here (its run stage: the PVH boot's Dom0, XT_ONLY=pvh)
rh=$out/real-host
if bash "$here/real-host/run.sh" --build-only --out "$rh" --kernel "$kdir/vmlinux" \
	--modules "$kdir/modules" --headers "$hdr" >"$out/real-host.log" 2>&1 &&
	grep -q "^kernel = \"$rh/domU/vmlinux\"" "$rh/domU/nf-pvh.cfg"; then
	ok real-host-builds "$(tail -n 1 "$out/real-host.log")"
else
	fail real-host-builds "$(tail -n 1 "$out/real-host.log")"
fi

ru=$out/rootU
rm -rf "$ru"
xt_domu_root "$ru" "$bld" "$kdir/modules"
if [ "$bench" = 1 ]; then
	cp "$kdir/modules/xen-netfront.ko" "$ru/lib/modules/"
	install_dyn "$ru" /usr/bin/dpdk-testpmd "net_af_packet mempool_ring"
fi
xt_cpio_gz "$ru" "$out/domU-initrd.cpio.gz"

r0=$out/root0
rm -rf "$r0"
busybox_root "$r0"
mkdir -p "$r0"/{usr/sbin,usr/bin,lib/x86_64-linux-gnu,lib64,domU,etc}
bins="$xenbin/xl $xenbin/xenstored $xenbin/xenconsoled $xenbin/xen-init-dom0"
cp -L $bins "$r0/usr/sbin/"
# xl save / restore / migrate run libxl's helper from where libxl was built
# to find it (nf-migrate.sh)
mkdir -p "$r0$xenbin"
cp -L "$xenbin/libxl-save-helper" "$r0$xenbin/"
cp -L /usr/bin/xenstore "$r0/usr/bin/"
for a in read write ls list rm exists watch chmod; do ln -s xenstore "$r0/usr/bin/xenstore-$a"; done
for l in $(ldd $bins "$xenbin/libxl-save-helper" /usr/bin/xenstore | awk '/=> \//{ print $3 }' | sort -u); do
	cp -L "$l" "$r0/lib/x86_64-linux-gnu/"
done
cp "$kdir"/modules/*.ko "$kbo/gntshare.ko" "$r0/lib/modules/"
cp "$bld/xt-dom0" "$bld/xt-pcapcmp" "$bld/xt-ctl" "$here/nf-scenario.sh" "$here/nf-flood.sh" \
	"$here/nf-hostile.sh" "$here/nf-bell.sh" "$here/nf-driver.sh" "$here/nf-migrate.sh" \
	"$here/nf-pvh.sh" "$here/xt-ssh" "$here/xt-xl" "$here/xt-lib.sh" "$here/xt-host.sh" \
	"$r0/usr/bin/"
# the PVH boot runs real-host/run.sh's run stage (bash) as on a real host
mkdir -p "$r0/usr/bin/real-host"
cp "$here/real-host/run.sh" "$r0/usr/bin/real-host/"
dyn="$top/build/bin/xnv-core $top/build/bin/xnv-xl /bin/bash" pmdl="net_null net_pcap mempool_ring"
if [ "$bench" = 1 ]; then
	# iproute2's ip: busybox's cannot make veth pairs or bridges
	dyn="$dyn /usr/bin/dpdk-testpmd $(command -v ip)" pmdl="$pmdl net_af_packet"
	install -m 755 "$top/bench/xen/tcg/scenario.sh" "$r0/usr/bin/xb-scenario"
	install -m 755 "$top/bench/xen/tcg/vif.sh" "$r0/usr/bin/xb-vif"
fi
install_dyn "$r0" "$dyn" "$pmdl"
mkdir -p "$r0/nf" "$r0/var/run/dpdk"
if ! xt_traffic "$r0/nf" 1000 "${XT_PYTHON:-$top/.venv/bin/python}" "$out/pcap.log"; then
	fail test-programs "gen_pcap.py: $(tail -n 1 "$out/pcap.log") (make deps makes .venv)"
	finish
fi
xt_core_ini "$r0/nf" /nf /tmp "$scale"
cp "$kdir/vmlinux" "$out/domU-initrd.cpio.gz" "$r0/domU/"
mv "$r0/domU/domU-initrd.cpio.gz" "$r0/domU/initrd.cpio.gz"
for g in 1 2; do
	cat >"$r0/domU/guest$g.cfg" <<-EOF
	name = "guest$g"
	type = "pv"
	kernel = "/domU/vmlinux"
	ramdisk = "/domU/initrd.cpio.gz"
	extra = "console=hvc0 quiet xt_deadline=$((wd - 20))"
	memory = 128
	vcpus = 1
	EOF
done
nfmem=96
[ "$bench" = 1 ] && nfmem=256	# the DomU initrd holds testpmd then
xt_cfg=$r0/domU xt_domu=/domU xt_deadline=$((wd - 20)) xt_scale=$scale xt_nfmem=$nfmem
nfdom nf-a blue fwd-a nf2; nfdom nf-b blue fwd-b nf
nfdom nf-r red fwd-r red service "nfv_instances = 2"
nfdom nf-c1 blue fwd-c nf; nfdom nf-c2 blue fwd-c nf
nfdom nf-h blue fwd-h hostile; nfdom nf-hb blue fwd-h break
nfdom nf-bad blue fwd-a nf servce; nfdom nf-nosvc blue nosuch nf
nfdom nf-fl blue fwd-c flood
nfdom nf-k blue fwd-h kick; nfdom nf-s blue fwd-s sleeper
nfdom nf-m blue fwd-b nf	# nf-migrate.sh: saved, restored, migrated
# nf-driver.sh: a driver domain (drv-init.sh) serves nf-da and nf-db
nfdom nf-da blue fwd-a nf service 'nfv_backend = "drv"'
nfdom nf-db blue fwd-b nf service 'nfv_backend = "drv"'
nfdom nf-dnone blue fwd-a nf service 'nfv_backend = "nosuch"'
# nf-pvh.sh, nf-migrate.sh pvh: PVH NF domains
hapline=""
[ "$pvhhap" = 0 ] && hapline="hap = 0"
xt_pvh_domains "$hapline"
cat >"$r0/domU/drv.cfg" <<-EOF
	name = "drv"
	type = "pv"
	driver_domain = 1
	kernel = "/domU/vmlinux"
	ramdisk = "/domU/drv-initrd.cpio.gz"
	extra = "console=hvc0 quiet xt_scale=$scale"
	memory = 384
	vcpus = 1
	EOF
rd=$out/rootD
rm -rf "$rd"
busybox_root "$rd"
install_dyn "$rd" "$top/build/bin/xnv-core /usr/bin/xenstore" "net_pcap mempool_ring"
for a in read write exists; do ln -s xenstore "$rd/usr/bin/xenstore-$a"; done
cp "$kdir/modules/xen-evtchn.ko" "$kdir/modules/xen-gntdev.ko" "$kdir/modules/xen-gntalloc.ko" \
	"$kbo/gntshare.ko" "$rd/lib/modules/"
cp "$bld/xt-pcapcmp" "$here/xt-lib.sh" "$rd/usr/bin/"
mkdir -p "$rd/nf"
cp "$r0/nf/in.pcap" "$r0/nf/count" "$rd/nf/"
# the Dom0 chain's config, its two ports and two services alone
awk '/^\[/ { keep = ($0 ~ /^\[(core|group blue|port in|port out|service fwd-[ab])\]/) } keep' \
	"$r0/nf/xnv.ini" >"$rd/nf/xnv-drv.ini"
install -m 755 "$here/drv-init.sh" "$rd/init"
(cd "$rd" && find . | cpio -o -H newc --quiet | gzip -1) >"$r0/domU/drv-initrd.cpio.gz"
if [ "$bench" = 1 ]; then	# bench/xen/tcg/scenario.sh: @SIZE@ set per size
	cat >"$r0/nf/bench.ini" <<-EOF
	; make bench-xen: net_null0 -> fwd-a (DomU nf-a) -> net_null1
	; frozen half the time (SIGSTOP, xl pause): no stall or heartbeat timeouts
	[core]
	stall_timeout_ms = 600000
	heartbeat_timeout_ms = 0
	[group blue]		; the ports' group: the first one
	pool_bufs = 4096
	[service fwd-a]
	[port gen]
	dev = net_null0,size=@SIZE@
	chain = fwd-a -> sink
	[port sink]
	dev = net_null1
	EOF
	cat >"$r0/domU/nf-net.cfg" <<-EOF
	name = "nf-net"
	type = "pv"
	kernel = "/domU/vmlinux"
	ramdisk = "/domU/initrd.cpio.gz"
	extra = "console=hvc0 quiet xt_role=netfront"
	memory = 384
	vcpus = 1
	vif = [ 'mac=00:16:3e:78:6e:01,bridge=xnvbr0,script=/usr/bin/xb-vif' ]
	EOF
fi
install -m 755 "$here/dom0-init.sh" "$r0/init"
(cd "$r0" && find . | cpio -o -H newc --quiet) >"$out/dom0-initrd.cpio"
[ -s "$out/xen" ] || zcat /boot/xen-4.17-amd64.gz >"$out/xen"
log "built in $(since "$t_start")"

# ---- 4. boot ---------------------------------------------------------------
t_boot=$(date +%s.%N)
runlog=$out/run.log
dom0cmd="$kdir/vmlinux console=hvc0 earlyprintk=xen quiet grant_table.free_per_iteration=0 xt_n=$pages xt_maxf=$maxf xt_wd=$wd xt_scale=$scale"
[ -n "$only" ] && dom0cmd="$dom0cmd xt_only=$only"
[ "$pvhmig" = 1 ] && dom0cmd="$dom0cmd xt_pvh_migrate=1"
# PV Dom0 (default): no hugepages.  PVH Dom0 (XEN-IN-QEMU.md section 14):
# emulated AMD-V + an IOMMU, real 2 MiB hugepages for the pools and DPDK.
machine="-machine pc" cpu=qemu64 xenpvh=""
if [ "$pvh" = 1 ]; then
	machine="-machine q35 -device intel-iommu,intremap=on" cpu=qemu64,+svm,+npt
	xenpvh=" dom0=pvh"
	dom0cmd="$dom0cmd hugepages=160 xt_pvh=1"
elif [ "$only" = pvh ]; then
	# a PVH DomU is an HVM container: Xen needs AMD-V (SVM) for it, and
	# nested paging (NPT) for hap; the PV suite keeps qemu64 as it was
	# (loglvl: Xen's own account of building and running it in run.log.txt)
	cpu=qemu64,+svm xenpvh=" loglvl=all guest_loglvl=all"
	[ "$pvhhap" = 1 ] && cpu=$cpu,+npt
fi
# bench boot: a second Dom0 vCPU for netback, the traffic side on the first
d0cpus=1
if [ "$bench" = 1 ]; then
	d0cpus=2
	dom0cmd="$dom0cmd xt_bench=1 xb_sizes=$(echo ${XB_SIZES:-64 1024} | tr ' ' :) xb_reps=${XB_REPS:-3} xb_win=${XB_WIN:-4} xb_warm=${XB_WARM:-2}"
fi
# DPDK in Dom0 needs SSE4.2 + POPCNT (XEN-IN-QEMU.md section 15)
timeout -k 10 "$tmo" qemu-system-x86_64 $machine -accel tcg -m "$qmem" -smp 2 \
	-cpu $cpu,+ssse3,+sse4.1,+sse4.2,+popcnt \
	-nographic -no-reboot -monitor none -serial stdio -nic none \
	-kernel "$out/xen" \
	-append "console=com1 com1=115200,8n1 dom0_mem=768M,max:768M dom0_max_vcpus=$d0cpus gnttab_max_frames=$maxf$xenpvh" \
	-initrd "$dom0cmd,$out/dom0-initrd.cpio" \
	</dev/null >"$runlog" 2>&1
qrc=$?
boot_time=$(since "$t_boot")
tr -d '\r' <"$runlog" >"$runlog.txt"

# ---- 5. results --------------------------------------------------------------
expected="module-loads domains-created device grant-bad-arguments
	pinned-pages-budget guests-ready
	grant-one-pool-to-two-domains zero-copy-dom0-domU1-domU2 foreign-refs-refused
	revoke-unmapped-ends-at-once revoke-while-mapped-keeps-pages drain-after-unmap
	readonly-grant fd-release-revokes grant-table-full-unwinds drain-after-domain-destroy
	core-starts xnv-xl-bad-key core-refuses-unknown-service nf-in-domu-attaches
	red-nf-attaches red-cannot-map-blue blue-chain-forwards blue-domus-zero-copy
	state-flood-rate-limited attach-after-closed-100 hostile-domu-refused
	quarantine-sticks release-clears-quarantine doorbell-nf-sleeps-wakes
	doorbell-rebind-after-reattach doorbell-kick-flood-counted doorbell-sleeper-no-stall
	doorbells-closed destroy-under-traffic pool-back-to-full
	xnv-xl-list
	core-exits-cleanly
	blue-chain-intact nfs-see-core-shutdown gntshare-unloads fallback-core-starts
	fallback-nfs-attach fallback-chain-copies gntalloc-limit-named hostile-paused
	fallback-pools-released fallback-core-exits-cleanly fallback-chain-intact
	hostile-destroyed core-refuses-without-grant-modules
	driver-core-starts driver-unknown-refused driver-nfs-attach driver-chain-forwards
	driver-xnv-xl-list driver-sees-domain-destroyed driver-core-exits-cleanly
	plain-xl-save-restore-loses-devices save-lets-go save-restore-reattaches
	register-paused-domain save-checkpoint-nfs-return attach-refused-by-a-save-asks-again
	migrate-refused-nfs-return migrate-fails-as-for-any-pv-domain migrate-via-ssh-stood-in
	migrate-pools-full"
[ "$pvh" = 1 ] && expected="$expected pools-on-hugepages"
[ "$only" = doorbell ] && expected="module-loads core-starts nf-in-domu-attaches
	blue-chain-forwards blue-domus-zero-copy doorbell-nf-sleeps-wakes
	doorbell-rebind-after-reattach doorbell-kick-flood-counted doorbell-sleeper-no-stall
	doorbells-closed core-exits-cleanly blue-chain-intact nfs-see-core-shutdown"
[ "$only" = pvh ] && expected="module-loads pvh-domu-boots pvh-nf-attaches pvh-chain-forwards
	pvh-under-traffic pvh-doorbell pvh-core-exits-cleanly save-restore-pvh
	migrate-pvh-pools-full"
[ "$only" = pvh ] && [ "$pvhmig" = 1 ] && expected="$expected migrate-pvh-localhost"
[ "$only" = driver ] && expected="module-loads driver-core-starts driver-unknown-refused
	driver-nfs-attach driver-chain-forwards driver-xnv-xl-list driver-sees-domain-destroyed
	driver-core-exits-cleanly"
[ "$only" = migrate ] && expected="module-loads plain-xl-save-restore-loses-devices save-lets-go
	save-restore-reattaches register-paused-domain save-checkpoint-nfs-return
	attach-refused-by-a-save-asks-again migrate-refused-nfs-return
	migrate-fails-as-for-any-pv-domain migrate-via-ssh-stood-in migrate-pools-full"
if [ "$bench" = 1 ]; then
	expected="module-loads netfront-network netfront-vif netfront-guest"
	for z in ${XB_SIZES:-64 1024}; do expected="$expected xnv-$z-forwards netfront-$z-forwards"; done
	grep -aE '^XB-RESULT ' "$runlog.txt" | cut -d' ' -f2- >"$out/xb-results.txt"
fi
xt_verdicts "$runlog.txt" $expected
done_line=$(grep -aE '^XT-DONE rc=' "$runlog.txt" | tail -1)
phase() { grep -aoE "t=[0-9.]+s $1" "$runlog.txt" | head -1 | grep -oE '[0-9.]+' | head -1; }
phases="Dom0 uptime: /init $(phase 'dom0 /init')s, xl ready $(phase xenstored)s, grant tests done $(phase 'grant tests')s, gntalloc fallback from $(phase 'gntalloc fallback')s, NF tests done $(phase xt-dom0)s"
[ "$bench" = 1 ] && phases="Dom0 uptime: /init $(phase 'dom0 /init')s, xl ready $(phase xenstored)s, bench done $(phase 'bench finished')s"
if [ "$done_line" = "XT-DONE rc=0" ]; then
	ok run-complete "XT-DONE rc=0, QEMU boot-to-poweroff $boot_time ($phases), total $(since "$t_start")"
else
	why=${done_line:-no XT-DONE marker}
	[ $qrc -eq 124 ] && why="$why; QEMU killed by the host timeout after ${tmo}s"
	fail run-complete "$why (qemu exit $qrc); log: $runlog.txt"
	grep -aE '^XT|panic|Panic|BUG|Oops|\(XEN\) .*(FATAL|crash)' "$runlog.txt" | tail -n 30 | sed 's/^/  | /'
fi
finish

# What the Xen checks boot, built the same way wherever they run: sourced
# (bash) by tests/xen/run.sh (Xen under QEMU) and real-host/run.sh (a real
# Xen host's Dom0).  Functions only; each says what it reads and writes.
# Needs xt_here (this directory) and xt_top (the project's root).

# xt_elf_kernel KERNEL OUT: the raw ELF vmlinux Xen's loaders take, from a
# bzImage (its xz payload, as Debian builds it) or from an ELF as it is.
# Trailing-garbage warnings of xz are harmless.
xt_elf_kernel() {
	local off
	if [ "$(head -c4 "$1" | od -An -tx1 | tr -d ' ')" = 7f454c46 ]; then
		cp "$1" "$2"
		return
	fi
	for off in $(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$1" | cut -d: -f1); do
		tail -c +$((off + 1)) "$1" | xz -dc >"$2" 2>/dev/null
		[ "$(head -c4 "$2" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] && return 0
	done
	rm -f "$2"
	return 1
}

# xt_programs BLD LOG: the static test programs and the NF (xnv-forwarder,
# built as users build an NF: libxnv through its pkg-config file) into
# BLD; the compiler's output in LOG.  Needs the project built (make).
xt_programs() {
	local cflags="-O2 -g -Wall -Wextra -Werror -static" cc=${CC:-gcc}
	local pc="$xt_top/build/lib/pkgconfig" h=$xt_here
	mkdir -p "$1"
	{ $cc $cflags -I"$xt_top/gntshare/include" "$h/xt_dom0.c" "$h/xt_dom0_lib.c" \
		-o "$1/xt-dom0" -lxenstore -lxentoolcore &&
	  $cc $cflags "$h/xt_guest.c" -o "$1/xt-guest" \
		-lxengnttab -lxenstore -lxentoolcore -lxentoollog &&
	  $cc $cflags "$h/xt_flood.c" -o "$1/xt-flood" -lxenstore -lxentoolcore &&
	  $cc $cflags "$h/xt_ctl.c" -o "$1/xt-ctl" &&
	  $cc $cflags "$h/xt_pcapcmp.c" -o "$1/xt-pcapcmp" &&
	  # libxnv's own Xen client, driven honestly or not (xt_hostile.c)
	  $cc $cflags -I"$xt_top/gntshare/include" "$h/xt_hostile.c" -o "$1/xt-hostile" \
		$(PKG_CONFIG_PATH="$pc" pkg-config --static --libs libxnv) &&
	  $cc $cflags "$xt_top/examples/forwarder/forwarder.c" -o "$1/xnv-forwarder" \
		$(PKG_CONFIG_PATH="$pc" pkg-config --static --cflags --libs libxnv); } \
		>"$2" 2>&1
}

busybox_root() {	# busybox_root DIR: busybox and its applets, the usual dirs
	mkdir -p "$1"/{bin,sbin,proc,sys,dev,tmp,lib/modules}
	cp /bin/busybox "$1/bin/"
	for a in $(/bin/busybox --list); do
		[ -e "$1/bin/$a" ] || ln -s busybox "$1/bin/$a"
	done
}

# xt_domu_root DIR BLD MODS: the NF domains' initramfs tree (domU-init.sh
# as /init, the programs of BLD, xen-gntdev and xen-evtchn out of MODS)
xt_domu_root() {
	busybox_root "$1"
	cp "$2/xt-guest" "$2/xt-flood" "$2/xnv-forwarder" "$2/xt-hostile" "$1/bin/"
	cp "$3/xen-gntdev.ko" "$3/xen-evtchn.ko" "$1/lib/modules/"
	install -m 755 "$xt_here/domU-init.sh" "$1/init"
}
xt_cpio_gz() { (cd "$1" && find . | cpio -o -H newc --quiet | gzip -1) >"$2"; }

# xt_traffic DIR N PYTHON LOG: DIR/in.pcap (N packets, scripts/gen_pcap.py)
# and DIR/count
xt_traffic() {
	mkdir -p "$1"
	"$3" "$xt_top/scripts/gen_pcap.py" "$1/in.pcap" --count "$2" --flows 16 >"$4" 2>&1 &&
		echo "$2" >"$1/count"
}

# xt_core_ini DIR NF TMP SCALE: the core's configs into DIR, naming the
# pcaps as Dom0 sees them (NF: DIR's path there; TMP: where the output
# pcaps go): xnv.ini, its gntalloc-fallback variants, xnv-migrate.ini.
xt_core_ini() {
	local st=$(awk -v s="$4" 'BEGIN { printf "%d", 5000 * s + 0.999 }')
	local hb=$(awk -v s="$4" 'BEGIN { printf "%d", 30000 * s + 0.999 }')
	cat >"$1/xnv.ini" <<-EOF
	; tests/xen: blue chain in -> fwd-a -> fwd-b -> out (pcap), blue fwd-c
	; replicas between null ports (nin paced: NFs fed without pause keep
	; every emulated CPU busy, and xenstored in Dom0 then answers the
	; flood phase's guest too slowly for it to end), a red service.
	[core]
	ring_size = 128
	; both times XNV_TIME_SCALE: TCG on a shared host can leave a DomU's
	; vCPU unscheduled for seconds, and a packet waiting that long for an
	; NF must not be dropped as a stall
	stall_timeout_ms = $st
	; an NF still mapping its rings must not be declared dead meanwhile
	heartbeat_timeout_ms = $hb
	[group blue]
	pool_bufs = 1024
	[group red]
	pool_bufs = 256
	[port in]
	dev = net_pcap0,rx_pcap=$2/in.pcap
	group = blue
	chain = fwd-a -> fwd-b -> out
	[port out]
	dev = net_pcap1,tx_pcap=$3/out.pcap
	group = blue
	[port nin]
	dev = net_null0
	group = blue
	chain = fwd-c -> nout
	rx_rate = 2000
	[port nout]
	dev = net_null1
	group = blue
	[service fwd-a]
	[service fwd-b]
	[service fwd-c]
	[service fwd-r]
	; nf-h and nf-hb (nf-hostile.sh), nf-k (nf-bell.sh): in no chain
	[service fwd-h]
	; nf-s (nf-bell.sh): its sleep word stuck, put in nin's chain
	[service fwd-s]
	EOF
	# The same for the gntalloc fallback (module unloaded), with a fresh
	# output and a hostile domain paused (nf-hb breaks its ring); one more
	# run with the same config destroys it instead
	sed -e "s#tx_pcap=$3/out.pcap#tx_pcap=$3/out-fallback.pcap#" \
		-e 's#^\[core\]#[core]\non_hostile = pause#' "$1/xnv.ini" >"$1/xnv-fallback.ini"
	sed -e "s#tx_pcap=$3/out.pcap#tx_pcap=$3/out-destroy.pcap#" \
		-e 's#^\[core\]#[core]\non_hostile = destroy#' "$1/xnv.ini" >"$1/xnv-destroy.ini"
	# nf-migrate.sh: nin -> fwd-a -> fwd-b -> nout, fwd-b's domain saved,
	# restored and migrated while nin sends
	awk '/^\[/ { keep = ($0 ~ /^\[(core|group blue|port nin|port nout|service fwd-[ab])\]/) } keep' \
		"$1/xnv.ini" | sed 's/^chain = fwd-c -> nout/chain = fwd-a -> fwd-b -> nout/' \
		>"$1/xnv-migrate.ini"
}

# nfdom NAME GROUP SERVICE ROLE [key [extra line]]: an NF domain's xl
# config, DIR/NAME.cfg.  Reads xt_cfg (DIR), xt_domu (that directory as
# Dom0 sees it: its vmlinux and initrd.cpio.gz), xt_deadline (s, the
# guest's own end), xt_scale, xt_nfmem (MiB).
nfdom() {
	cat >"$xt_cfg/$1.cfg" <<-EOF
	name = "$1"
	type = "pv"
	kernel = "$xt_domu/vmlinux"
	ramdisk = "$xt_domu/initrd.cpio.gz"
	extra = "console=hvc0 quiet xt_role=$4 xt_deadline=$xt_deadline xt_scale=$xt_scale"
	memory = $xt_nfmem
	vcpus = 1
	nfv_trust_group = "$2"
	nfv_${5:-service} = "$3"
	${6:-}
	EOF
}
# xt_pvh_domains [LINE]: the PVH NF domains (LINE added to both: "hap = 0"
# or nothing).  nf-pvh (nf-pvh.sh): fwd-a, its whole boot log on its
# console (no quiet); nf-mp (nf-migrate.sh pvh): fwd-b, migrated (HAP's
# log-dirty); a crash or reboot ends it (xl's default restart would make a
# new domain without NF devices: xnv-xl registers them only at create)
xt_pvh_domains() {
	nfdom nf-pvh blue fwd-a nf service "${1:-}"
	sed -i -e 's/^type = "pv"$/type = "pvh"/' -e 's/ quiet / /' "$xt_cfg/nf-pvh.cfg"
	nfdom nf-mp blue fwd-b nf service "${1:-}"
	sed -i -e 's/^type = "pv"$/type = "pvh"/' -e '$a on_crash = "destroy"' \
		-e '$a on_reboot = "destroy"' "$xt_cfg/nf-mp.cfg"
}

# xt_kmod HEADERS DIR LOG: gntshare.ko built in DIR against the kernel
# build tree HEADERS (-Werror), make's output in LOG
xt_kmod() {
	rm -rf "$2"
	make -s -C "$xt_top/gntshare/kmod" dist DESTDIR="$2" >/dev/null &&
		make -C "$1" M="$2" KCFLAGS=-Werror modules >"$3" 2>&1
}

# xt_verdicts LOG NAME...: each check NAME as its last "XT-CHECK ok|FAIL
# NAME" line in LOG says, through the caller's ok NAME DETAIL and fail
# NAME WHY; a NAME LOG does not report fails as such, and so does a check
# LOG reports that is not among the NAMEs
xt_verdicts() {
	local log=$1 c line d
	shift
	for c in "$@"; do
		line=$(grep -aE "^XT-CHECK (ok|FAIL) $c[ :]" "$log" | tail -1)
		case $line in
		"XT-CHECK ok $c"*)
			d=${line#"XT-CHECK ok $c"}; d=${d# (}; ok "$c" "${d%)*}${d##*)}" ;;
		"XT-CHECK FAIL $c"*)
			fail "$c" "${line#"XT-CHECK FAIL $c: "}" ;;
		*)
			fail "$c" "not reported (run stopped earlier; see $log)" ;;
		esac
	done
	# a check a scenario reports that the list leaves out would pass or
	# fail unseen: each one is a failure of its own
	for c in $(grep -aoE '^XT-CHECK (ok|FAIL) [A-Za-z0-9_.-]+' "$log" |
		   cut -d' ' -f3 | sort -u); do
		case " $* " in
		*" $c "*) ;;
		*) fail "$c" "reported ($(grep -aoE "^XT-CHECK (ok|FAIL) $c" "$log" | tail -1 | cut -d' ' -f2)) but not in the list of checks expected (run.sh)" ;;
		esac
	done
}

#!/bin/sh
# /init of the DomU initramfs (tests/xen).  Its role comes on the kernel
# command line (xt_role=):
#   xt   the grant tests' guest program (xt-guest)
#   nf   an NF: xnv-forwarder, attaching through the domain's xnv device
#   nf2  the same, run a second time when the first one ends (nf-bell.sh
#        has the core kick it out: it attaches again, a new event channel)
#   red  two NFs of trust group red (nfv_instances = 2: devices 0 and 1)
#        and xt-guest, so Dom0 can make it try to map another group's refs
#   hostile  xt-hostile: 100 honest attach/close cycles, then the attack
#        (attach, map, Closed without unmapping, again: nf-hostile.sh)
#   break  xt-hostile: attach, map, an impossible tx ring index
#   netfront  make bench-xen: testpmd swapping MACs on net_af_packet over
#        the netfront eth0 (bench/xen/tcg/scenario.sh)
#   flood  xt-flood: the vCPU busy for 15 s (times xt_scale), then 10000
#        writes of its own xnv state node (nf-flood.sh); stays up until
#        Dom0 destroys it
#   kick  xt-hostile: attach with a doorbell, then notify the core's event
#        channel without pause for 30 s (times xt_scale) once Dom0 says go
#   sleeper  xt-hostile: attach with a doorbell, pass packets on with its
#        sleep word set and never cleared, until Dom0 says stop
export PATH=/sbin:/bin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
# how Xen built this domain and how the kernel came up (nf-pvh.sh reads it)
echo "xt: guest type $(cat /sys/hypervisor/guest_type 2>/dev/null); $(dmesg | grep -oE 'Hypervisor detected: .*|Booting paravirtualized kernel on .*|Xen HVM callback vector .*' | tr '\n' ';')"
insmod /lib/modules/xen-gntdev.ko
insmod /lib/modules/xen-evtchn.ko	# /dev/xen/evtchn: NFs' doorbells
D=120 ROLE=xt SCALE=1
for a in $(cat /proc/cmdline); do
	case $a in
	xt_deadline=*) D=${a#xt_deadline=} ;;
	xt_role=*) ROLE=${a#xt_role=} ;;
	xt_scale=*) SCALE=${a#xt_scale=} ;;
	esac
done
scaled() { awk -v s="$SCALE" -v t="$1" 'BEGIN { printf "%d", t * s + 0.999 }'; }
# libxnv waits this long for the core's answer to an attach (10 s by
# default): TCG on a busy host can make the core's XenStore answer slower
export XNV_ATTACH_TIMEOUT=$(scaled 10)
case $ROLE in
nf)
	xnv-forwarder
	echo "xnv-forwarder exited rc=$?" ;;
nf2)
	xnv-forwarder
	echo "xnv-forwarder exited rc=$?"
	xnv-forwarder
	echo "xnv-forwarder exited rc=$? (again)" ;;
kick)
	xt-hostile "$D" kick "$(scaled 30)"
	echo "xt-hostile kick exited rc=$?" ;;
sleeper)
	xt-hostile "$D" sleeper "$D"
	echo "xt-hostile sleeper exited rc=$?" ;;
red)
	xnv-forwarder --dev 0 &
	F0=$!
	xnv-forwarder --dev 1 &
	F1=$!
	xt-guest "$D"
	echo "xt-guest exited rc=$?"
	wait $F0
	echo "xnv-forwarder exited rc=$?"
	wait $F1
	echo "xnv-forwarder exited rc=$? (device 1)" ;;
hostile)
	xt-hostile "$D" cycle 100
	echo "xt-hostile cycle exited rc=$?"
	xt-hostile "$D" attack 100
	echo "xt-hostile exited rc=$?" ;;
break)
	xt-hostile "$D" break ;;
flood)
	# Dom0 samples its traffic while this spins, then while it floods
	xt-flood spin "$(scaled 15)"
	xt-flood flood 10000
	echo "xt-flood exited rc=$?"
	sleep "$D" ;;
netfront)
	export PATH=$PATH:/usr/bin LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu
	insmod /lib/modules/xen-netfront.ko
	i=0
	while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	ip link set eth0 up
	mkdir -p /var/run/dpdk
	echo "xb-netfront-ready $(cat /sys/class/net/eth0/address)"
	# --stats-period keeps it running (and shows the guest's counters)
	dpdk-testpmd --lcores 0@0,1@0 --no-huge -m 192 --no-pci \
		--vdev net_af_packet0,iface=eth0,qdisc_bypass=1 -- --forward-mode=macswap \
		--port-topology=loop --nb-cores=1 --total-num-mbufs=8192 --no-mlockall \
		--stats-period 10 </dev/null
	echo "dpdk-testpmd exited rc=$?" ;;
*)
	xt-guest "$D"
	echo "xt-guest exited rc=$?" ;;
esac
poweroff -f

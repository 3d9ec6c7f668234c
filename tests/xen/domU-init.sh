#!/bin/sh
# /init of the DomU initramfs (tests/xen).  Its role comes on the kernel
# command line (xt_role=):
#   xt   the grant tests' guest program (xt-guest)
#   nf   an NF: xnv-forwarder, attaching through the domain's xnv device
#   red  two NFs of trust group red (nfv_instances = 2: devices 0 and 1)
#        and xt-guest, so Dom0 can make it try to map another group's refs
export PATH=/sbin:/bin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
insmod /lib/modules/xen-gntdev.ko
D=120 ROLE=xt
for a in $(cat /proc/cmdline); do
	case $a in
	xt_deadline=*) D=${a#xt_deadline=} ;;
	xt_role=*) ROLE=${a#xt_role=} ;;
	esac
done
case $ROLE in
nf)
	xnv-forwarder
	echo "xnv-forwarder exited rc=$?" ;;
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
*)
	xt-guest "$D"
	echo "xt-guest exited rc=$?" ;;
esac
poweroff -f

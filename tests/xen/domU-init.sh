#!/bin/sh
# /init of the DomU initramfs (tests/xen).  Its role comes on the kernel
# command line (xt_role=):
#   xt   the grant tests' guest program (xt-guest)
#   nf   an NF: xnv-forwarder, attaching through the domain's xnv device
#   red  an NF of trust group red that also runs xt-guest, so Dom0 can
#        make it try to map another group's refs
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
	xnv-forwarder &
	F=$!
	xt-guest "$D"
	echo "xt-guest exited rc=$?"
	wait $F
	echo "xnv-forwarder exited rc=$?" ;;
*)
	xt-guest "$D"
	echo "xt-guest exited rc=$?" ;;
esac
poweroff -f

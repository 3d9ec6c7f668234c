#!/bin/sh
# /init of the DomU initramfs (tests/xen): gntdev + the guest test program.
export PATH=/sbin:/bin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
insmod /lib/modules/xen-gntdev.ko
D=120
for a in $(cat /proc/cmdline); do case $a in xt_deadline=*) D=${a#xt_deadline=} ;; esac; done
xt-guest "$D"
echo "xt-guest exited rc=$?"
poweroff -f

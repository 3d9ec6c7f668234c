#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# vif hotplug script of make bench-xen (Dom0 of the emulated boot): libxl
# runs it with "online" / "offline" and vif=<vifD.N> in the environment;
# the vif joins bridge xnvbr0, where bench/xen/tcg/scenario.sh put xnvx1
# (iproute2's ip by path: busybox sh prefers its own applet).
dev=${vif:-vif$(echo "$XENBUS_PATH" | awk -F/ '{ print $(NF - 1) "." $NF }')}
case $1 in
online|add)
	/usr/bin/ip link set "$dev" master xnvbr0 && /usr/bin/ip link set "$dev" up &&
		xenstore-write "$XENBUS_PATH/hotplug-status" connected ;;
offline|remove)
	/usr/bin/ip link set "$dev" nomaster 2>/dev/null; exit 0 ;;
esac

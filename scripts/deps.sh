#!/usr/bin/env bash
# deps.sh [--xen | --xen-only | --xen-missing]
# Install what XenNetVM needs on Debian 12, as root. Idempotent: apt-get
# install of an installed package is a no-op, the venv is reused.
#   (none)         the host-mode product, its build and its tests
#                  (make deps)
#   --xen          that and the Xen suite's hypervisor, tools and QEMU
#                  (make deps XEN=1)
#   --xen-only     the Xen suite's packages alone (tests/xen/run.sh runs
#                  this when they are missing)
#   --xen-missing  print which of those are not installed; install nothing
# DEPS_DRY_RUN=1: print the packages it would install, one line, and stop.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
venv="$here/.venv"
base=1 xen=0

# Xen 4.17's hypervisor and tools, and QEMU, for the real-Xen suite
# (tests/xen: it boots them, with busybox + cpio + xz for the initramfs and
# gntshare.ko built against the headers linux-image-amd64 points at).
# libxen-dev is not here: xnv-core and libxnv build against it.
xen_pkgs=(xen-utils-4.17 xen-hypervisor-4.17-amd64 qemu-system-x86
	busybox-static cpio xz-utils kmod linux-headers-amd64)

case ${1:-} in
'') ;;
--xen) xen=1 ;;
--xen-only) xen=1 base=0 ;;
--xen-missing)
	for p in "${xen_pkgs[@]}"; do
		dpkg-query -W -f '${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii' ||
			echo "$p"
	done
	exit 0 ;;
-h|--help) sed -n '2,13s/^# \{0,1\}//p' "$0"; exit 0 ;;
*) echo "deps: unknown argument '$1' (--xen, --xen-only, --xen-missing)" >&2
   exit 2 ;;
esac

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: must run as root (apt-get install)" >&2
	exit 1
fi

pkgs=(
	# build
	build-essential pkg-config make gcc clang
	# DPDK 22.11 (dpdk-dev carries dpdk-testpmd, used by bench/)
	dpdk dpdk-dev libdpdk-dev libnuma-dev libpcap-dev
	# Xen 4.17's libraries (the hypervisor and QEMU: --xen)
	libxen-dev
	# tests (libclang-rt: libFuzzer and the sanitizers' runtimes for clang)
	libcmocka-dev python3 python3-venv python3-pip iproute2 libclang-rt-14-dev
	util-linux linux-perf
	# xnv-ctl metrics (Prometheus / OpenMetrics exposition)
	python3-prometheus-client
	# sd_notify for xnv-core.service (Type=notify)
	libsystemd-dev
	# make deb and its test (tests/integration/test_deb.py), man pages
	dpkg-dev debhelper dh-dkms lintian groff-base man-db
	# scripts/container-smoke.sh: the packages on a fresh bookworm root
	# booted with systemd (test_deb.py)
	mmdebstrap systemd-container
)

if [ "$base" = 0 ]; then
	pkgs=()
else
	echo "deps: host mode, build and tests (the Xen suite's packages:" \
		"make deps XEN=1, or make check-xen installs them)"
fi
if [ "$xen" = 1 ]; then
	echo "deps: the Xen suite's packages: ${xen_pkgs[*]}"
	pkgs+=("${xen_pkgs[@]}")
fi
if [ "${DEPS_DRY_RUN:-0}" = 1 ]; then
	echo "deps: would install: ${pkgs[*]}${pkgs[*]:+ }$([ "$base" = 1 ] &&
		echo openvswitch-switch)"
	exit 0
fi

# Open vSwitch for the fabric tests (fabric/README.md): they run private
# instances in network namespaces on the userspace datapath.  The
# package's own service would start a system OVS and load the openvswitch
# kernel module on this machine: it is installed without being started
# (policy-rc.d, as in containers) and left disabled.
install_ovs() {
	local made=0 rc=0
	dpkg-query -W -f '${db:Status-Abbrev}' openvswitch-switch 2>/dev/null |
		grep -q '^ii' && return 0
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod 755 /usr/sbin/policy-rc.d
		made=1
	fi
	apt-get install -y --no-install-recommends openvswitch-switch || rc=$?
	[ "$made" = 0 ] || rm -f /usr/sbin/policy-rc.d
	if [ -d /run/systemd/system ]; then
		systemctl disable --quiet openvswitch-switch ovs-vswitchd \
			ovsdb-server 2>/dev/null || true
	fi
	[ "$rc" = 0 ] && echo "deps: openvswitch-switch installed for the" \
		"fabric tests; its system service not started, and disabled"
	return "$rc"
}
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${pkgs[@]}"
[ "$base" = 1 ] || { echo "deps: done (Xen suite)"; exit 0; }
install_ovs

if [ ! -x "$venv/bin/python" ]; then
	python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --upgrade pip
"$venv/bin/pip" install --quiet -r "$here/tests/requirements.txt"
echo "deps: done (venv at $venv)"

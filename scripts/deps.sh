#!/usr/bin/env bash
# Install everything XenNetVM needs on Debian 12, as root. Idempotent:
# apt-get install of an installed package is a no-op, the venv is reused.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
venv="$here/.venv"

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: must run as root (apt-get install)" >&2
	exit 1
fi

pkgs=(
	# build
	build-essential pkg-config make gcc clang
	# DPDK 22.11 (dpdk-dev carries dpdk-testpmd, used by bench/)
	dpdk dpdk-dev libdpdk-dev libnuma-dev libpcap-dev
	# Xen 4.17: libs, tools, hypervisor and QEMU for the real-Xen test
	libxen-dev xen-utils-4.17 xen-hypervisor-4.17-amd64
	qemu-system-x86 busybox-static cpio xz-utils kmod
	# gntshare.ko: headers of the kernel linux-image-amd64 points at (tests/xen boots it)
	linux-headers-amd64
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

export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${pkgs[@]}"

if [ ! -x "$venv/bin/python" ]; then
	python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --upgrade pip
"$venv/bin/pip" install --quiet -r "$here/tests/requirements.txt"
echo "deps: done (venv at $venv)"

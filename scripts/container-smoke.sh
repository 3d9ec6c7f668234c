#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# container-smoke.sh [--debs DIR] [--keep]
# The packages on a fresh Debian 12, under a real systemd, without
# touching this machine:
#   1. make deb (or take the .debs in DIR)
#   2. mmdebstrap a minimal bookworm root from Debian's mirror, and
#      `apt-get install` xnv-core, xnv-tools, libxnv0 and libxnv-dev into
#      it (dependencies from the mirror, maintainer scripts run: the xnv
#      user comes from the package)
#   3. boot that root with systemd-nspawn -b (systemd is its PID 1, with a
#      network namespace of its own) and let a unit run
#      scripts/container-smoke-guest.sh: systemctl start xnv-core and two
#      xnv-nf@ units, xnv-ctl and the metrics endpoint show traffic
#   4. print the guest's result lines and the units' journal.
# Exit 0 when every guest step passed, 1 when one failed, 2 for a usage
# error, 77 when this machine cannot do it (not root, mmdebstrap or
# systemd-nspawn missing, or nspawn cannot start a container here): the
# one line says which.  XNV_TIME_SCALE times every wait.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
keep=0 debs= mirrors=()
while [ $# -gt 0 ]; do
	case $1 in
	--keep) keep=1 ;;
	--debs) debs=${2:?--debs DIR}; shift ;;
	-h|--help) sed -n '3,20s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "container-smoke: unknown argument '$1' (--debs DIR, --keep)" >&2
	   exit 2 ;;
	esac
	shift
done
scale=${XNV_TIME_SCALE:-1}
scale=${scale%%.*}
say() { echo "container-smoke: $*"; }
cannot() { say "cannot run here: $*"; exit 77; }

[ "$(id -u)" = 0 ] || cannot "needs root (mmdebstrap, systemd-nspawn)"
for t in mmdebstrap systemd-nspawn; do
	command -v "$t" >/dev/null || cannot "$t missing (make deps)"
done

if [ -z "$debs" ]; then
	make -C "$here" deb
	debs=$here/build/deb
fi
tmp=$(mktemp -d /var/tmp/xnv-container-XXXXXX)
root=$tmp/root
cleanup() {
	[ "$keep" = 1 ] && say "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT

mkdir -p "$tmp/debs"
for p in xnv-core xnv-tools libxnv0 libxnv-dev; do
	cp "$(ls "$debs"/${p}_*.deb)" "$tmp/debs/"
done
# The root comes from where this machine's apt gets its packages, with its
# Acquire:: settings (a snapshot mirror may need Check-Valid-Until false).
opts=()
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
	/etc/apt/sources.list.d/*.sources; do
	[ -s "$f" ] && grep -q '^[^#]' "$f" && mirrors+=("$f")
done
for f in /etc/apt/apt.conf.d/*; do
	grep -q '^Acquire::' "$f" 2>/dev/null && opts+=("--aptopt=$f")
done
say "debootstrapping bookworm (${mirrors[*]:-deb.debian.org}) with $(cd "$tmp/debs" && echo *.deb)"
# apt inside the root resolves the packages' dependencies from the mirror
# and runs their maintainer scripts, as on a real machine.
if ! mmdebstrap --variant=minbase \
	--include=systemd,systemd-sysv,dbus,python3-prometheus-client,gcc,libc6-dev,pkg-config \
	--customize-hook='mkdir -p "$1/tmp/xnv-debs"' \
	--customize-hook="sync-in $tmp/debs /tmp/xnv-debs" \
	--customize-hook='chroot "$1" sh -c "apt-get install -y --no-install-recommends /tmp/xnv-debs/*.deb"' \
	"${opts[@]}" bookworm "$root" "${mirrors[@]}" > "$tmp/mmdebstrap.log" 2>&1; then
	say "mmdebstrap failed:"; tail -20 "$tmp/mmdebstrap.log"
	exit 1
fi
say "installed: $(chroot "$root" dpkg-query -W -f '${Package} ${Version}\n' \
	xnv-core xnv-tools libxnv0 libxnv-dev | paste -sd, | sed "s/,/, /g")"

# Can this machine run a container at all?  (Not a test of ours.)
if ! systemd-nspawn -q --register=no --keep-unit --private-network -D "$root" /bin/true \
	> "$tmp/probe.log" 2>&1; then
	cannot "systemd-nspawn cannot start a container: $(tail -1 "$tmp/probe.log")"
fi

# Without sysfs's module directory (nspawn's own /sys with a private
# network) DPDK's EAL cannot start: the core must say so before EAL does.
line=$(systemd-nspawn -q --register=no --keep-unit --private-network -D "$root" \
	/usr/sbin/xnv-core -- --config /etc/xnv/xnv.ini 2>&1 | grep -m1 'xnv-core:') || true
case $line in
*"/sys/module"*"bind-mount"*) say "ok - without /sys/module: $line" ;;
*) say "FAIL - without /sys/module, xnv-core said: ${line:-nothing}"; exit 1 ;;
esac

install -m 0755 "$here/scripts/container-smoke-guest.sh" "$root/usr/local/sbin/xnv-smoke"
install -m 0644 "$here/tests/integration/oot_nf.c" "$root/root/mynf.c"
echo "$scale" > "$root/etc/xnv-smoke.scale"
cat > "$root/etc/systemd/system/xnv-smoke.service" <<'EOF'
[Unit]
Description=XenNetVM package smoke test (scripts/container-smoke-guest.sh)
After=basic.target network.target

[Service]
Type=simple
ExecStart=/usr/local/sbin/xnv-smoke
EOF
mkdir -p "$root/etc/systemd/system/default.target.wants"
ln -s ../xnv-smoke.service "$root/etc/systemd/system/default.target.wants/"

say "booting it: systemd-nspawn -b (timeout $((600 * scale)) s)"
timeout $((600 * scale)) systemd-nspawn -q --register=no --keep-unit \
	--private-network --bind-ro=/sys/module --machine="xnv-smoke-$$" \
	-D "$root" -b --console=pipe \
	> "$tmp/boot.log" 2>&1 || say "systemd-nspawn exited $?"
res=$root/var/log/xnv-smoke.result
if [ ! -s "$res" ]; then
	say "the guest wrote no result; the boot's last lines:"
	tail -30 "$tmp/boot.log"
	exit 1
fi
cat "$res"
grep -Eq '^SMOKE: [1-9][0-9]* passed, 0 failed$' "$res"

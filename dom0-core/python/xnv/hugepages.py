# SPDX-License-Identifier: BSD-3-Clause
"""2 MiB hugepages and hugetlbfs, as DPDK will find them.

xnv-core makes the same check in C before choosing its EAL memory options
(hugetlbfs_mounted and free_hugepages in dom0-core/eal_args.c).
"""
import subprocess
from pathlib import Path

NR_HUGE = Path("/proc/sys/vm/nr_hugepages")
FREE_HUGE = Path("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages")
HUGE_DIR = Path("/dev/hugepages")


def hugetlbfs_mounts():
    """Mount points of every hugetlbfs currently mounted."""
    out = []
    with open("/proc/mounts") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[2] == "hugetlbfs":
                out.append(parts[1])
    return out


def meminfo(key):
    """A /proc/meminfo value (e.g. "HugePages_Free"), 0 if absent."""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def mount_hugetlbfs(path=HUGE_DIR):
    """mount -t hugetlbfs -o pagesize=2M nodev PATH; the CompletedProcess."""
    return subprocess.run(["mount", "-t", "hugetlbfs", "-o", "pagesize=2M",
                           "nodev", str(path)], capture_output=True, text=True,
                          timeout=10)


def umount(path=HUGE_DIR):
    """umount PATH; the CompletedProcess."""
    return subprocess.run(["umount", str(path)], capture_output=True, text=True,
                          timeout=10)

# SPDX-License-Identifier: BSD-3-Clause
"""xnv: the Python side of XenNetVM, shared by xnv-ctl, the tests and the
benchmarks.  Python 3 standard library only.

  prefix     the EAL file-prefix of a core (FNV-1a of its NF socket path,
             as eal_args.c computes it) and DPDK's runtime directory
  telemetry  a DPDK telemetry v2 client (xnv-core's control plane, and the
             /ethdev/ counters of any DPDK process)
  procs      child processes stopped by PID only, wait_until, thread CPU time
  hugepages  hugetlbfs mounts, /proc/meminfo, 2 MiB hugepage counters
  ctl        xnv-ctl, the operator's command line (dom0-core/xnv-ctl runs it)
"""


class Error(Exception):
    """A helper of this package could not do its job.  The message is one
    line that says what; callers print it or fail with it."""

/* SPDX-License-Identifier: BSD-3-Clause */
/* Buffer quota and hoarding, the arithmetic (no DPDK): see quota.h. */
#include <errno.h>
#include <stdio.h>

#include "quota.h"

int
xnv_quota_check_alloc(uint32_t alloc, uint32_t ring_size, uint32_t max_held,
		      char *err, size_t errlen)
{
	if (alloc > ring_size) {
		snprintf(err, errlen, "alloc_bufs %u is more than the ring "
			 "size %u: a free ring holds at most that many", alloc,
			 ring_size);
		return -EINVAL;
	}
	if (max_held != 0 && alloc >= max_held) {
		snprintf(err, errlen, "alloc_bufs %u is not below [core] "
			 "max_held %u: its free ring alone would fill its "
			 "quota", alloc, max_held);
		return -EINVAL;
	}
	return 0;
}

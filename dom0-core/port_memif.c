/* SPDX-License-Identifier: BSD-3-Clause */
/* net_memif ports: what port.c's generic setup leaves out (port_drv.h). */
#include "core.h"
#include "port_drv.h"

const struct xnv_port_drv xnv_port_drv_memif = {
	.prefix = "net_memif",
};

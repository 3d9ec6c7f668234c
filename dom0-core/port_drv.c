/* SPDX-License-Identifier: BSD-3-Clause */
/* The driver tables of port_drv.h, by device name prefix. */
#include <string.h>

#include "port_drv.h"

static const struct xnv_port_drv *const drivers[] = {
	&xnv_port_drv_afpacket,
	&xnv_port_drv_memif,
};

const struct xnv_port_drv *
xnv_port_drv_find(const char *dev)
{
	size_t i;

	for (i = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++)
		if (strncmp(dev, drivers[i]->prefix,
			    strlen(drivers[i]->prefix)) == 0)
			return drivers[i];
	return NULL;
}

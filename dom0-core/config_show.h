/* SPDX-License-Identifier: BSD-3-Clause */
/* The effective config, a section per command (config_show.c). */
#ifndef XNV_CONFIG_SHOW_H
#define XNV_CONFIG_SHOW_H

struct xnv_core;
struct rte_tel_data;

/** /xnv/config: path (the file loaded) and every [core] key. */
void xnv_cmd_config_core(struct xnv_core *c, const char *p,
			 struct rte_tel_data *d);
/** /xnv/config/group INDEX: section (its name) and its keys. */
void xnv_cmd_config_group(struct xnv_core *c, const char *p,
			  struct rte_tel_data *d);
/** /xnv/config/port INDEX: section, keys; chain as it is now (array). */
void xnv_cmd_config_port(struct xnv_core *c, const char *p,
			 struct rte_tel_data *d);
/** /xnv/config/service ID (as /xnv/service/info): section, id, allow_* when given. */
void xnv_cmd_config_service(struct xnv_core *c, const char *p,
			    struct rte_tel_data *d);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: the control commands (dom0-core/ctl_cmds.c) with any
 * parameters, in any order, against a running core's state (EAL in
 * memory, a config with ports, services and chains, flow table, one
 * attached NF whose rings live in plain memory).  An input is up to 16
 * lines; a line's first byte picks the command (modulo the table), the
 * rest is its parameter string, as telemetry would pass it.  After each
 * input every flow rule is removed and the port chains restored, so an
 * input replays the same way alone.  Checked: no crash / ASan / UBSan /
 * leak report, and the chain table and flow count stay consistent.
 * /xnv/nf/kick is left out: it detaches the NF through the backend's
 * server, which the harness has not (its parameter is an id or a name,
 * as for the other NF commands).  The NF's stats area is the region's,
 * and each line's parameter is also written over it, so /xnv/nf/info
 * reads garbage names and values.
 *
 * Telemetry frees the containers of a reply (arrays added with keep = 0)
 * after sending it; here the link wraps rte_tel_data_alloc/free
 * (-Wl,--wrap) so the harness can do the same after each command.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_telemetry.h>

#include "core.h"
#include "ctl.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int xnv_logtype;
static struct xnv_core core;
static unsigned n_cmds;

static const char config_text[] =
	"[core]\nring_size = 64\n"
	"[group a]\n[group b]\n"
	"[port in]\ndev = net_null0\ngroup = a\nchain = fw -> lb -> out\n"
	"[port out]\ndev = net_null1\ngroup = a\n"
	"[port side]\ndev = net_null2\ngroup = b\nchain = mon -> drop\n"
	"[port fab]\ndev = net_null3\ngroup = a\nfabric = vlan\n"
	"hop.18 = fw -> fab:19\nhop.20 = lb -> out\n"
	"[service fw]\n[service lb]\nid = 9\n[service mon]\n";

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every telemetry container alive, as telemetry itself would track. */
#define MAX_LIVE 64
static struct rte_tel_data *live[MAX_LIVE];
static unsigned n_live;

struct rte_tel_data *__real_rte_tel_data_alloc(void);
void __real_rte_tel_data_free(struct rte_tel_data *d);
struct rte_tel_data *__wrap_rte_tel_data_alloc(void);
void __wrap_rte_tel_data_free(struct rte_tel_data *d);

struct rte_tel_data *
__wrap_rte_tel_data_alloc(void)
{
	struct rte_tel_data *d = __real_rte_tel_data_alloc();

	CHECK(d != NULL && n_live < MAX_LIVE);
	live[n_live++] = d;
	return d;
}

void
__wrap_rte_tel_data_free(struct rte_tel_data *d)
{
	for (unsigned i = 0; i < n_live; i++)
		if (live[i] == d) {
			live[i] = live[--n_live];
			break;
		}
	__real_rte_tel_data_free(d);
}

/* After a command: what telemetry frees once the reply is sent. */
static void
free_replies(void)
{
	while (n_live > 0)
		__real_rte_tel_data_free(live[--n_live]);
}

static void
fake_nf(struct xnv_core *c)
{
	static struct gnts_ring_port ports[GNTS_RING_COUNT];
	size_t bytes = gnts_ring_region_bytes(c->cfg.ring_size);
	void *mem = aligned_alloc(GNTS_CACHE_LINE, bytes);
	struct xnv_nfrec *nf = &c->nfs[0];

	CHECK(mem && gnts_ring_region_format(mem, bytes, c->cfg.ring_size) == 0);
	CHECK(gnts_ring_region_attach(mem, bytes, 0, ports) == 0);
	nf->state = XNV_REC_ATTACHED;
	snprintf(nf->name, sizeof(nf->name), "fw-1");
	nf->rx = ports[GNTS_RING_RX];
	nf->tx = ports[GNTS_RING_TX];
	nf->ctl = gnts_ring_region_ctl(mem);
	nf->stats = (struct gnts_nf_stat *)((char *)mem + GNTS_RING_STATS_OFF);
	c->active[c->n_active++] = 0;
	xnv_service_join(&c->services[0], 0, 0);
	c->nfs[1].state = XNV_REC_GONE;		/* one on record */
	snprintf(c->nfs[1].gone_reason, sizeof(c->nfs[1].gone_reason),
		 "quarantined: fuzz");
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char *eal[] = { "fuzz_ctl", "--no-huge", "-m", "128", "--no-pci",
			"--no-shconf", "--no-telemetry", "--log-level=1",
			NULL };
	char path[] = "/tmp/fuzz_ctl.XXXXXX", err[512];
	struct xnv_core *c = &core;
	int fd = mkstemp(path);
	uint16_t i;

	(void)argc;
	(void)argv;
	CHECK(fd >= 0);
	CHECK(write(fd, config_text, sizeof(config_text) - 1) > 0);
	close(fd);
	if (xnv_config_load(path, &c->cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_ctl: %s\n", err);
		abort();
	}
	unlink(path);
	optind = 1;	/* EAL parses with getopt, like any program */
	if (rte_eal_init(8, eal) < 0) {
		fprintf(stderr, "fuzz_ctl: EAL init failed\n");
		abort();
	}
	xnv_logtype = rte_log_register("xnv.fuzz");
	c->tsc_hz = rte_get_tsc_hz();
	c->start_tsc = rte_rdtsc();
	xnv_services_init(c);
	for (i = 0; i < c->cfg.n_ports; i++)
		c->port_chain[i] = (uint16_t)xnv_chain_new(c, &c->cfg.ports[i].chain);
	CHECK(xnv_fabric_start(c) == 0);
	CHECK(xnv_ctl_register(c) == 0);	/* the core xnv_ctl_on_loop uses */
	CHECK(xnv_flows_create(c, err, sizeof(err)) == 0);
	fake_nf(c);
	while (xnv_ctl_cmds[n_cmds].name != NULL)
		n_cmds++;
	return 0;
}

/* Undo what an input changed: no flow rules, the config's chains. */
static void
reset(struct xnv_core *c)
{
	struct rte_tel_data *d = __wrap_rte_tel_data_alloc();
	unsigned users = 0;

	xnv_cmd_flow_clear(c, "", d);
	free_replies();
	CHECK(xnv_flows_count(c) == 0);
	for (uint16_t p = 0; p < c->cfg.n_ports; p++)
		CHECK(xnv_chain_set_port(c, p, &c->cfg.ports[p].chain) >= 0);
	for (unsigned i = 0; i < XNV_MAX_CHAINS; i++)
		users += c->chains[i].users;
	/* one each, ports and hops, nothing else */
	CHECK(users == c->cfg.n_ports + c->cfg.n_hops);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char buf[1024];
	size_t off = 0;
	int lines = 0;

	while (off < size && lines++ < 16) {
		const struct xnv_ctl_cmd *cmd = &xnv_ctl_cmds[data[off] % n_cmds];
		size_t end = off + 1, len;
		struct rte_tel_data *d;

		while (end < size && data[end] != '\n')
			end++;
		len = end - off - 1 < sizeof(buf) - 1 ? end - off - 1 : sizeof(buf) - 1;
		memcpy(buf, data + off + 1, len);
		buf[len] = '\0';
		off = end + 1;
		/* As on_command() (ctl.c): a required parameter is there. */
		if ((cmd->needs_param && buf[0] == '\0') ||
		    strcmp(cmd->name, "/xnv/nf/kick") == 0)
			continue;
		/* What a hostile NF may write: any bytes in its stats. */
		memcpy(core.nfs[0].stats, buf,
		       len < GNTS_RING_STATS_BYTES ? len : GNTS_RING_STATS_BYTES);
		d = __wrap_rte_tel_data_alloc();
		cmd->fn(&core, buf, d);
		free_replies();		/* d and the containers in it */
		CHECK(xnv_flows_count(&core) <= XNV_MAX_FLOWS);
	}
	reset(&core);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_af_packet ports: what port.c's generic setup leaves out (port_drv.h).
 *
 * DPDK 22.11's driver (drivers/net/af_packet) reads one TPACKET_V2 ring
 * per queue; three things about it need the core's help:
 *
 * - Frame size.  The kernel puts a frame at TPACKET_ALIGN(TPACKET2_HDRLEN
 *   + 16) - 14 = 66 bytes into its ring slot of framesz= bytes and cuts
 *   whatever does not fit, silently (tp_snaplen < tp_len, which the
 *   driver does not look at).  So before the probe the interface's MTU is
 *   read and the port refused unless framesz holds its largest frame (MTU
 *   + Ethernet header + one VLAN tag); the driver also wants one buffer
 *   of the group to hold framesz - 32 bytes.  The check is made at start;
 *   an MTU raised later is seen at the next link watch and logged, since
 *   frames then arrive cut and nothing counts them.
 * - Ring geometry.  The driver finds slot i at i * framesz, the kernel at
 *   (i / per block) * blocksz + (i % per block) * framesz: a blocksz that
 *   is not a multiple of framesz makes it wait for frames where none come.
 *   A worker polls one queue of each port ([core] workers, worker.h), so
 *   qpairs= may not exceed the workers: the kernel spreads flows over the
 *   queues' sockets by hash and a queue nobody polls would lose its share.
 * - Drops.  Frames the kernel found no free slot for are counted in the
 *   socket's PACKET_STATISTICS, which the driver never reads (its imissed
 *   is always 0).  The core finds the driver's socket in its own fds and
 *   adds them to rx_missed; each read resets the kernel's count, so they
 *   are summed here, at every link watch (the kernel's count is 32 bits)
 *   and whenever the counters are read.
 *
 * VLAN: the kernel hands every frame without its outer tag (tp_vlan_tci);
 * see afp_configure.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/if_packet.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_kvargs.h>

#include "core.h"
#include "counters.h"
#include "port_drv.h"

/* Where the kernel puts an Ethernet frame in a TPACKET_V2 slot
 * (net/packet/af_packet.c, tpacket_rcv: netoff - maclen), and how much of
 * a slot the driver copies into one buffer (eth_rx_queue_setup). */
#define AFP_MAC_OFF	(TPACKET_ALIGN(TPACKET2_HDRLEN + 16) - RTE_ETHER_HDR_LEN)
#define AFP_COPY_OFF	(TPACKET2_HDRLEN - sizeof(struct sockaddr_ll))
/* The largest frame an interface of MTU m hands up: the kernel passes the
 * tag separately, the core puts it back (datapath.c, vlan_restore). */
#define AFP_FRAME_MAX(m) ((m) + RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN)

/* The driver's devargs and their defaults (rte_eth_af_packet.c). */
struct afp_args {
	char iface[IFNAMSIZ];
	uint32_t qpairs, blocksz, framesz, framecnt;
};

/* What the core keeps of each af_packet port, by port index. */
static struct afp_port {
	struct afp_args a;
	unsigned int ifindex;
	uint32_t mtu;		/* last read */
	unsigned int n_fd;	/* fd[0..n_fd): the driver's sockets */
	int fd[XNV_MAX_WORKERS];
	uint64_t drops;		/* PACKET_STATISTICS tp_drops, summed */
} afp[XNV_MAX_PORTS];

/* @p value as a number from 1 to 2^30 into @p out: 0, or -1. */
static int
afp_number(const char *value, uint32_t *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(value, &end, 10);
	if (errno != 0 || end == value || *end != '\0' || v == 0 ||
	    v > (1ul << 30) || value[0] == '-')
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* The devargs of @p dev ("net_af_packet0,iface=..,...") as the driver
 * reads them: a number given twice counts the last time. */
static int
afp_parse(const char *dev, struct afp_args *a, char *err, size_t errlen)
{
	static const char *const num_keys[] = {
		"qpairs", "blocksz", "framesz", "framecnt",
	};
	uint32_t *const num[] = {
		&a->qpairs, &a->blocksz, &a->framesz, &a->framecnt,
	};
	const char *args = strchr(dev, ',');
	struct rte_kvargs *kv;
	const char *iface;
	unsigned int i, k;
	int rc = 0;

	*a = (struct afp_args){ .qpairs = 1, .framesz = 2048,
				.framecnt = 512,
				.blocksz = (uint32_t)sysconf(_SC_PAGESIZE) };
	/* The keys were checked with the config (config_devargs.h). */
	kv = rte_kvargs_parse(args != NULL ? args + 1 : "", NULL);
	if (kv == NULL) {
		snprintf(err, errlen, "cannot parse its devargs as "
			 "key=value,...");
		return -EINVAL;
	}
	iface = rte_kvargs_get(kv, "iface");
	if (rte_kvargs_count(kv, "iface") != 1 || iface == NULL ||
	    *iface == '\0')
		rc = snprintf(err, errlen, "af_packet needs one iface= (e.g. "
			      "net_af_packet0,iface=eth1)");
	else if (strlen(iface) >= sizeof(a->iface))
		rc = snprintf(err, errlen, "af_packet interface name '%s' is "
			      "longer than %d bytes", iface, IFNAMSIZ - 1);
	else
		snprintf(a->iface, sizeof(a->iface), "%s", iface);
	for (i = 0; rc == 0 && i < kv->count; i++)
		for (k = 0; k < RTE_DIM(num_keys); k++)
			if (strcmp(kv->pairs[i].key, num_keys[k]) == 0 &&
			    afp_number(kv->pairs[i].value, num[k]) < 0)
				rc = snprintf(err, errlen, "%s=%s: must be a "
					      "number from 1 to %lu",
					      num_keys[k], kv->pairs[i].value,
					      1ul << 30);
	rte_kvargs_free(kv);
	return rc == 0 ? 0 : -EINVAL;
}

/* The ring the driver will ask for, as the kernel and the driver both
 * need it.  0, or -EINVAL with the reason in @p err. */
static int
afp_geometry(const struct afp_args *a, uint32_t workers, char *err,
	     size_t errlen)
{
	uint32_t page = (uint32_t)sysconf(_SC_PAGESIZE);

	if (a->qpairs < 1 || a->qpairs > workers)
		snprintf(err, errlen, "qpairs=%" PRIu32 ": xnv-core polls one "
			 "queue per %s ([core] workers = %" PRIu32 "), frames "
			 "the kernel hands the other queues would never be "
			 "read; use qpairs=%s%" PRIu32, a->qpairs,
			 workers == 1 ? "port" : "worker", workers,
			 workers == 1 ? "" : "1..", workers);
	else if (a->framesz % TPACKET_ALIGNMENT != 0)
		snprintf(err, errlen, "framesz=%" PRIu32 ": must be a multiple "
			 "of %d", a->framesz, TPACKET_ALIGNMENT);
	else if (a->blocksz % page != 0)
		snprintf(err, errlen, "blocksz=%" PRIu32 ": must be a multiple "
			 "of the page size (%" PRIu32 ")", a->blocksz, page);
	else if (a->blocksz % a->framesz != 0)
		snprintf(err, errlen, "blocksz=%" PRIu32 " is not a multiple of "
			 "framesz=%" PRIu32 ": the driver would look for frames "
			 "where the kernel does not put them", a->blocksz,
			 a->framesz);
	else if (a->framecnt % (a->blocksz / a->framesz) != 0)
		snprintf(err, errlen, "framecnt=%" PRIu32 ": must be a multiple "
			 "of the frames per block (blocksz / framesz = %" PRIu32
			 ")", a->framecnt, a->blocksz / a->framesz);
	else
		return 0;
	return -EINVAL;
}

/* The MTU of interface @p name, asked through socket @p fd (any kind
 * will do; -1: one made here).  0 if it cannot be read. */
static uint32_t
afp_mtu(int fd, const char *name)
{
	struct ifreq ifr;
	int s = fd >= 0 ? fd : socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	uint32_t mtu = 0;
	int e;

	if (s < 0)
		return 0;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(s, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0)
		mtu = (uint32_t)ifr.ifr_mtu;
	e = errno;
	if (fd < 0)
		close(s);
	errno = e;
	return mtu;
}

/* Whether port @p idx, its interface at @p mtu, gets every frame whole
 * into one buffer of its group: 0, or -EMSGSIZE with what is wrong and the
 * fix in @p err ("...; use framesz=..,blocksz=.. and [group g] buf_size
 * >= .."). */
static int
afp_fits(const struct xnv_core *c, uint16_t idx, uint32_t mtu, char *err,
	 size_t errlen)
{
	const struct afp_args *a = &afp[idx].a;
	const struct xnv_group_cfg *g = &c->cfg.groups[c->cfg.ports[idx].group];
	uint32_t page = (uint32_t)sysconf(_SC_PAGESIZE);
	uint32_t need = AFP_FRAME_MAX(mtu) + AFP_MAC_OFF, fsz, bsz, buf;
	uint32_t fsz_max;
	int n;

	if (need <= a->framesz &&
	    a->framesz - AFP_COPY_OFF <= g->buf_size - XNV_HEADROOM)
		return 0;
	/* The smallest framesz that holds it and tiles its blocks: a power
	 * of two up to a page, else whole pages (blocksz = framesz). */
	need = RTE_ALIGN_CEIL(need, TPACKET_ALIGNMENT);
	fsz = need <= page ? rte_align32pow2(need) : RTE_ALIGN_CEIL(need, page);
	bsz = RTE_MAX(fsz, page);
	if (need > a->framesz)
		n = snprintf(err, errlen, "af_packet interface '%s' has MTU %"
			     PRIu32 ": its frames of up to %" PRIu32 " bytes do not "
			     "fit framesz=%" PRIu32 " (%" PRIu32 " bytes of "
			     "frame, the rest would be cut)", a->iface, mtu,
			     (uint32_t)AFP_FRAME_MAX(mtu), a->framesz,
			     a->framesz - (uint32_t)AFP_MAC_OFF);
	else
		n = snprintf(err, errlen, "framesz=%" PRIu32 " needs buffers "
			     "of %" PRIu32 " bytes of data, [group %s] buf_size "
			     "%" PRIu32 " has %" PRIu32, a->framesz,
			     a->framesz - (uint32_t)AFP_COPY_OFF, g->name,
			     g->buf_size, g->buf_size - XNV_HEADROOM);
	buf = RTE_ALIGN_CEIL(fsz - AFP_COPY_OFF + XNV_HEADROOM, 64);
	/* The largest framesz one buffer can take, in whole pages. */
	fsz_max = RTE_ALIGN_FLOOR(XNV_BUF_SIZE_MAX - XNV_HEADROOM +
				  AFP_COPY_OFF, page);
	if (n < 0 || (size_t)n >= errlen)
		return -EMSGSIZE;
	if (buf <= XNV_BUF_SIZE_MAX)
		snprintf(err + n, errlen - (size_t)n, "; use framesz=%" PRIu32
			 ",blocksz=%" PRIu32 " and [group %s] buf_size >= %"
			 PRIu32, fsz, bsz, g->name, buf);
	else
		snprintf(err + n, errlen - (size_t)n, "; no buf_size holds "
			 "that (%u at most): set the MTU of '%s' to %" PRIu32
			 " or less", XNV_BUF_SIZE_MAX, a->iface,
			 fsz_max - (uint32_t)(AFP_MAC_OFF + RTE_ETHER_HDR_LEN +
					      RTE_VLAN_HLEN));
	return -EMSGSIZE;
}

/* Before the probe: devargs, ring geometry, the interface and its MTU. */
static int
afp_pre_probe(struct xnv_core *c, uint16_t idx, char *err, size_t errlen)
{
	const struct xnv_port_cfg *pc = &c->cfg.ports[idx];
	struct afp_port *p = &afp[idx];
	char why[384];
	int rc;

	memset(p, 0, sizeof(*p));
	rc = afp_parse(pc->dev, &p->a, why, sizeof(why));
	if (rc == 0)
		rc = afp_geometry(&p->a, c->cfg.workers, why, sizeof(why));
	if (rc == 0 && (p->ifindex = if_nametoindex(p->a.iface)) == 0) {
		snprintf(why, sizeof(why), "af_packet interface '%s' does not "
			 "exist", p->a.iface);
		rc = -ENODEV;
	}
	if (rc == 0 && (p->mtu = afp_mtu(-1, p->a.iface)) == 0) {
		snprintf(why, sizeof(why), "cannot read the MTU of af_packet "
			 "interface '%s': %s", p->a.iface, strerror(errno));
		rc = -ENODEV;
	}
	if (rc == 0)
		rc = afp_fits(c, idx, p->mtu, why, sizeof(why));
	if (rc < 0)
		snprintf(err, errlen, "port %s: %s", pc->name, why);
	return rc;
}

/* The kernel hands an af_packet socket every frame with its outer VLAN
 * tag taken out (tp_vlan_tci).  Left to itself the driver puts it back
 * with rte_vlan_insert(), which refuses the core's external buffers
 * (one "Failed to reinsert VLAN tag" per frame, the tag lost); asked to
 * strip, it leaves the tag in vlan_tci, and the core's rx puts it back
 * (datapath.c, vlan_restore).  The driver does not pass the tag's TPID
 * on (tp_vlan_tpid): an 802.1ad (0x88a8) outer tag comes back as 0x8100. */
static void
afp_configure(struct xnv_core *c, uint16_t idx,
	      const struct rte_eth_dev_info *info, struct rte_eth_conf *conf)
{
	(void)c;
	(void)idx;
	if (info->rx_offload_capa & RTE_ETH_RX_OFFLOAD_VLAN_STRIP)
		conf->rxmode.offloads |= RTE_ETH_RX_OFFLOAD_VLAN_STRIP;
}

/* 1 if @p fd is the socket of another port than @p idx. */
static int
afp_taken(uint16_t idx, int fd)
{
	uint16_t i;
	unsigned int k;

	for (i = 0; i < XNV_MAX_PORTS; i++)
		for (k = 0; i != idx && k < afp[i].n_fd; k++)
			if (afp[i].fd[k] == fd)
				return 1;
	return 0;
}

/* The AF_PACKET sockets of this process bound to @p p's interface that no
 * other port has taken: the driver's (one per queue), into @p p->fd.
 * @return how many. */
static unsigned int
afp_find_sockets(uint16_t idx, struct afp_port *p)
{
	struct sockaddr_ll sll;
	socklen_t len;
	struct dirent *e;
	int fd, dom;
	unsigned int n = 0;
	DIR *d = opendir("/proc/self/fd");

	if (d == NULL)
		return 0;
	while (n < RTE_DIM(p->fd) && (e = readdir(d)) != NULL) {
		fd = atoi(e->d_name);
		if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd == dirfd(d))
			continue;
		len = sizeof(dom);
		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) != 0 ||
		    dom != AF_PACKET)
			continue;
		len = sizeof(sll);
		if (getsockname(fd, (struct sockaddr *)&sll, &len) != 0 ||
		    sll.sll_ifindex != (int)p->ifindex || afp_taken(idx, fd))
			continue;
		p->fd[n++] = fd;
	}
	closedir(d);
	return n;
}

/* The kernel's ring drops since the last read, added to the port's. */
static void
afp_read_drops(struct afp_port *p)
{
	struct tpacket_stats st;
	socklen_t len;
	unsigned int k;

	for (k = 0; k < p->n_fd; k++) {
		len = sizeof(st);
		if (getsockopt(p->fd[k], SOL_PACKET, PACKET_STATISTICS, &st,
			       &len) == 0)
			p->drops += st.tp_drops;
	}
}

static int
afp_started(struct xnv_core *c, uint16_t idx, int rc, char *err,
	    size_t errlen)
{
	const struct xnv_port_cfg *pc = &c->cfg.ports[idx];
	struct afp_port *p = &afp[idx];

	if (rc != 0) {
		snprintf(err, errlen, "port %s: net_af_packet on %s could not "
			 "be set up: %s (the driver's line above says why)",
			 pc->name, p->a.iface, rte_strerror(rc < 0 ? -rc : rc));
		return rc < 0 ? rc : -rc;
	}
	p->n_fd = afp_find_sockets(idx, p);
	if (p->n_fd != p->a.qpairs)
		XLOG(WARNING, "port %s: %u of the driver's %" PRIu32 " sockets "
		     "on %s found in /proc/self/fd: frames the kernel drops "
		     "for want of ring slots are %scounted\n", pc->name,
		     p->n_fd, p->a.qpairs, p->a.iface,
		     p->n_fd == 0 ? "not " : "not all ");
	afp_read_drops(p);	/* those since the probe */
	return 0;
}

static void
afp_counters(const struct xnv_core *c, uint16_t idx,
	     struct xnv_port_counters *out)
{
	(void)c;
	afp_read_drops(&afp[idx]);
	out->rx_missed += afp[idx].drops;
}

/* Every link watch: the drops read (before the kernel's 32-bit count
 * could wrap), and an MTU that changed since the last look said. */
static void
afp_link_tick(struct xnv_core *c, uint16_t idx, uint64_t up, uint64_t since,
	      uint64_t now)
{
	struct afp_port *p = &afp[idx];
	const char *name = c->cfg.ports[idx].name;
	char why[384];
	uint32_t mtu;

	(void)up;
	(void)since;
	(void)now;
	if (p->n_fd == 0)
		return;
	afp_read_drops(p);
	mtu = afp_mtu(p->fd[0], p->a.iface);
	if (mtu == 0 || mtu == p->mtu)
		return;
	p->mtu = mtu;
	if (afp_fits(c, idx, mtu, why, sizeof(why)) < 0)
		XLOG(WARNING, "port %s: %s; until the core restarts so, "
		     "longer frames arrive cut, uncounted\n", name, why);
	else
		XLOG(INFO, "port %s: interface %s MTU now %" PRIu32 ", its "
		     "frames fit framesz=%" PRIu32 "\n", name, p->a.iface, mtu,
		     p->a.framesz);
}

/* The last drops read while the driver's socket is still open. */
static void
afp_close(struct xnv_core *c, uint16_t idx)
{
	(void)c;
	afp_read_drops(&afp[idx]);
	afp[idx].n_fd = 0;
}

const struct xnv_port_drv xnv_port_drv_afpacket = {
	.prefix = "net_af_packet",
	.no_rx_intr = 1,
	.pre_probe = afp_pre_probe,
	.configure = afp_configure,
	.started = afp_started,
	.counters = afp_counters,
	.link_tick = afp_link_tick,
	.close = afp_close,
};

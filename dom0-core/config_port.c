/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What config.c cannot see one key at a time: a port's device (a vdev or
 * a PCI address, on no other port, the keys of its devargs its driver's
 * (config_devargs.h), its capture files found from the config's
 * directory), and the warnings about chains that are allowed but likely
 * not meant.  No DPDK beyond rte_cfgfile and rte_kvargs.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "config_devargs.h"
#include "config_file.h"

/* "0000:01:00.0" or "01:00.0": a PCI address. */
static int
pci_addr(const char *s)
{
	const char *shape = strlen(s) > 7 ? "xxxx:xx:xx.x" : "xx:xx.x";
	size_t i;

	if (strlen(s) != strlen(shape))
		return 0;
	for (i = 0; shape[i] != '\0'; i++)
		if (shape[i] == 'x' ? !isxdigit((unsigned char)s[i]) :
				      s[i] != shape[i])
			return 0;
	return 1;
}

/* Device string @p dev has argument @p arg ("key=value") after its name. */
static int
has_arg(const char *dev, const char *arg)
{
	size_t n = strlen(arg);
	const char *a;

	for (a = strchr(dev, ','); a != NULL; a = strchr(a, ','))
		if (strncmp(++a, arg, n) == 0 && (a[n] == ',' || a[n] == '\0'))
			return 1;
	return 0;
}

/* @p v with each relative file it names made the config directory's. */
static int
resolve_paths(const struct xnv_config *c, const char *v, char *out,
	      size_t len)
{
	const struct xnv_devargs_drv *d = xnv_devargs_drv(v);
	const char *slash = strrchr(c->path, '/'), *a, *k;
	const char *const *keys = d != NULL ? d->files : NULL;
	char dir[sizeof(c->path)];
	size_t o = 0, n, kn;

	if (keys != NULL && d->files_when != NULL &&
	    !has_arg(v, d->files_when))
		keys = NULL;
	if (keys == NULL || slash == NULL)	/* no paths, or the config's
						 * directory is . */
		return snprintf(out, len, "%s", v) < (int)len ? 0 : -1;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - c->path), c->path);
	for (a = v; o < len; a += n + (a[n] == ',')) {
		n = strcspn(a, ",");
		k = a == v ? NULL : xnv_devargs_key(a, keys);
		kn = k != NULL ? strlen(k) + 1 : 0;	/* "key=" */
		if (k != NULL && a[kn] != '/')
			o += (size_t)snprintf(out + o, len - o, "%s%s=%s/%.*s",
					      a == v ? "" : ",", k, dir,
					      (int)(n - kn), a + kn);
		else
			o += (size_t)snprintf(out + o, len - o, "%s%.*s",
					      a == v ? "" : ",", (int)n, a);
		if (a[n] == '\0')
			break;
	}
	return o < len ? 0 : -1;
}

/* The device @p dev names, as one spelling: a vdev's name, or a PCI
 * address with its domain (01:00.0 is 0000:01:00.0). */
static void
dev_name(const char *dev, char *out, size_t len)
{
	size_t n = strcspn(dev, ",");

	snprintf(out, len, "%.*s", (int)n, dev);
	if (n == 7 && pci_addr(out))
		snprintf(out, len, "0000:%.*s", (int)n, dev);
	for (; *out != '\0'; out++)
		*out = (char)tolower((unsigned char)*out);
}

int
xnv_config_port_dev(struct xnv_config *c, uint16_t idx, const char *v,
		    unsigned line, char *err, size_t errlen)
{
	struct xnv_port_cfg *p = &c->ports[idx];
	char name[XNV_DEV_LEN], other[XNV_DEV_LEN], why[512];
	uint16_t i;

	snprintf(name, sizeof(name), "%.*s", (int)strcspn(v, ","), v);
	if (strncmp(name, "net_", 4) != 0 && !pci_addr(name))
		return xnv_cfg_fail(err, errlen, "[port %s] dev = %s: '%s' is neither "
			    "a DPDK vdev (net_DRIVERn[,key=value...], such as "
			    "net_pcap0,rx_pcap=in.pcap) nor a PCI address "
			    "(0000:01:00.0); a kernel interface is "
			    "net_af_packet0,iface=%s", p->name, v, name, name);
	if (xnv_devargs_check_keys(v, why, sizeof(why)) < 0)
		return xnv_cfg_fail(err, errlen, "[port %s] dev = %s: %s",
				    p->name, v, why);
	dev_name(v, name, sizeof(name));
	for (i = 0; i < idx; i++) {
		dev_name(c->ports[i].dev, other, sizeof(other));
		if (strcmp(name, other) == 0)
			return xnv_cfg_fail(err, errlen, "[port %s] dev = %s: device %s "
				    "is [port %s]'s already (line %u): one "
				    "device per port", p->name, v, name,
				    c->ports[i].name, c->ports[i].line);
	}
	if (resolve_paths(c, v, p->dev, sizeof(p->dev)) < 0)
		return xnv_cfg_fail(err, errlen, "[port %s] dev = %s: longer than %d "
			    "characters once its files are found from the "
			    "config's directory", p->name, v, XNV_DEV_LEN - 1);
	p->line = line;
	return 0;
}

static void
warn(struct xnv_config *c, const struct xnv_ini *ini, const char *sec,
     const char *key, const char *fmt, ...)
{
	char w[XNV_WARNING_LEN];
	va_list ap;
	int o;

	if (c->n_warnings == XNV_MAX_WARNINGS)
		return;
	o = snprintf(w, sizeof(w), "%s:%u: warning: [%s] %s: ", c->path,
		     xnv_ini_line(ini, sec, key), sec, key);
	va_start(ap, fmt);
	if (o > 0 && (size_t)o < sizeof(w))
		vsnprintf(w + o, sizeof(w) - (size_t)o, fmt, ap);
	va_end(ap);
	memcpy(c->warnings[c->n_warnings++], w, sizeof(w));
}

const char *
xnv_config_step_text(const struct xnv_config *c, const struct xnv_step *s,
		     char *buf, size_t len)
{
	if (s->kind == XNV_STEP_PORT && s->hop != 0)
		snprintf(buf, len, "%s:%u", c->ports[s->id].name, s->hop);
	else
		snprintf(buf, len, "%s", s->kind == XNV_STEP_SERVICE ?
			 c->services[s->id].name : s->kind == XNV_STEP_PORT ?
			 c->ports[s->id].name : "drop");
	return buf;
}

/* Steps nothing reaches, and a chain that ends in a service. */
static void
warn_chain(struct xnv_config *c, const struct xnv_ini *ini, const char *sec,
	   const char *key, const struct xnv_chain *ch)
{
	char t[XNV_STEP_TEXT];
	uint8_t i;

	if (ch->n == 0)
		return;
	for (i = 0; i + 1 < ch->n; i++)
		if (ch->s[i].kind != XNV_STEP_SERVICE) {
			warn(c, ini, sec, key, "the steps after '%s' are "
			     "never reached (a packet leaves the chain at a "
			     "port or a drop)",
			     xnv_config_step_text(c, &ch->s[i], t, sizeof(t)));
			return;
		}
	if (ch->s[ch->n - 1].kind == XNV_STEP_SERVICE)
		warn(c, ini, sec, key, "no port or 'drop' at its end: "
		     "what '%s' passes on is dropped (counted as chain_end)",
		     xnv_config_step_text(c, &ch->s[ch->n - 1], t,
		     sizeof(t)));
}

/* A device that receives only given one of some keys (net_pcap), given
 * none of them (tx_pcap= only). */
static int
send_only(const char *dev)
{
	const struct xnv_devargs_drv *d = xnv_devargs_drv(dev);
	const char *a;

	if (d == NULL || d->rx == NULL)
		return 0;
	for (a = strchr(dev, ','); a != NULL; a = strchr(a, ','))
		if (xnv_devargs_key(++a, d->rx) != NULL)
			return 0;
	return 1;
}

void
xnv_config_warn(struct xnv_config *c, const struct xnv_ini *ini)
{
	char sec[CFG_NAME_LEN];
	unsigned i;

	for (i = 0; i < c->n_ports; i++) {
		const struct xnv_port_cfg *p = &c->ports[i];

		snprintf(sec, sizeof(sec), "port %s", p->name);
		warn_chain(c, ini, sec, "chain", &p->chain);
		if (p->chain.n > 0 && send_only(p->dev))
			warn(c, ini, sec, "chain", "device %.*s only sends "
			     "(no rx_pcap=, rx_iface= or iface=): nothing "
			     "arrives to take this chain",
			     (int)strcspn(p->dev, ","), p->dev);
	}
	for (i = 0; i < c->n_flows; i++) {
		snprintf(sec, sizeof(sec), "flow %s", c->flows[i].name);
		warn_chain(c, ini, sec, "chain", &c->flows[i].chain);
	}
	for (i = 0; i < c->n_hops; i++) {
		char key[16];

		snprintf(sec, sizeof(sec), "port %s",
			 c->ports[c->hops[i].port].name);
		snprintf(key, sizeof(key), "hop.%u", c->hops[i].hop);
		warn_chain(c, ini, sec, key, &c->hops[i].chain);
	}
}

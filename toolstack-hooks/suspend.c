/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xnv-xl save, restore, migrate, register: an NF domain saved to a file,
 * restored, or moved to another host (or to this one) keeps its NF
 * devices.
 *
 * Why xl alone cannot carry them: an NF maps grants of the domain that
 * serves it (Dom0 or a driver domain), and a PV domain that maps another
 * domain's pages cannot be saved (those frames are not its own); and the
 * devices' XenStore nodes are neither saved nor made again by xl restore
 * or xl migrate (libxl does not know this device type).  So:
 *
 *   save, migrate   write each device's suspend node: xnv-core lets the
 *                   NF go (GNTS_DETACH_SUSPEND), the NF unmaps and waits
 *                   (libxnv); once no device is connected, xl save / xl
 *                   migrate -p.  The registration goes into FILE.nfv
 *                   (save) or is made again at the receiving end
 *                   (migrate).  When xl fails, or `save -c` keeps the
 *                   domain, the nodes are removed and the NFs attach again
 *                   where they are.
 *   restore         xl restore -p FILE, then FILE.nfv's devices registered
 *                   as by create, then unpause.
 *   register        the same for a domain that exists paused (what
 *                   migrate runs at the receiving end).
 *
 * In the domain the NF's process is frozen with the rest and goes on
 * after the resume: it attaches again through the same device.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xenstore.h>

#include "nfdom.h"
#include "nfv_cfg.h"
#include "suspend.h"
#include "xl_run.h"
#include "xs_dev.h"

struct sopts {
	double timeout;		/* --timeout: for xnv-core, and for the NFs */
	int checkpoint;		/* save -c: the domain runs on */
	const char *ssh;	/* migrate -s: NULL (ssh, or none for localhost) */
};

/* The options of @p cmd up to its first argument ("c" / "s:" allowed as
 * @p extra says).  -1 with optind at the first argument, or the exit
 * status to return now. */
static int
sopts_parse(const char *cmd, int argc, char **argv, const char *extra,
	    struct sopts *o)
{
	static const struct option lo[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char shorts[8], *e;
	int opt;

	snprintf(shorts, sizeof(shorts), "+%s", extra);
	o->timeout = 10;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		switch (opt) {
		case 't':
			o->timeout = strtod(optarg, &e);
			if (e == optarg || *e != '\0' || o->timeout <= 0) {
				ERR("--timeout %s: expected seconds > 0",
				    optarg);
				return 2;
			}
			break;
		case 'c': o->checkpoint = 1; break;
		case 's': o->ssh = optarg; break;
		case 'h': xnv_xl_usage(stdout); return 0;
		default:
			ERR("%s: unknown or incomplete option '%s' (see --help)",
			    cmd, argv[optind - 1]);
			return 2;
		}
	}
	return -1;
}

/* The registration of @p c as xl config text (what FILE.nfv holds),
 * checked by reading it back with the one parser.  0 or -1 said why. */
static int
reg_text(const struct nfv_cfg *c, char *buf, size_t len)
{
	struct nfv_cfg back;
	char err[256];
	int n;

	n = snprintf(buf, len, "# NF devices of domain %s, for xnv-xl "
		     "restore\nname = \"%s\"\nnfv_trust_group = \"%s\"\n"
		     "nfv_service = \"%s\"\nnfv_instances = %d\n", c->name,
		     c->name, c->group, c->service, c->instances);
	if (n > 0 && (size_t)n < len && c->backend[0] != '\0')
		n += snprintf(buf + n, len - (size_t)n,
			      "nfv_backend = \"%s\"\n", c->backend);
	if (n <= 0 || (size_t)n >= len ||
	    nfv_cfg_parse(c->name, buf, (size_t)n, stderr, &back, err,
			  sizeof(err)) < 0) {
		ERR("domain %s's NF device nodes do not read back as a "
		    "registration (%s)", c->name, n > 0 && (size_t)n < len ?
		    err : "too long");
		return -1;
	}
	return 0;
}

/* The domain and its NF devices, before a save or migration. */
struct nfdom {
	struct xs_handle *xs;
	struct nfv_cfg c;
	int domid, bdom, n;
};

/* Find domain @p name and read back its devices' registration.  0 (n:
 * how many; 0 = none), or -1 said why. */
static int
nfdom_find(struct nfdom *d, const char *name)
{
	memset(d, 0, sizeof(*d));
	d->domid = xl_domid(name);
	if (d->domid < 0) {
		ERR("no domain named %s", name);
		return -1;
	}
	d->xs = xs_open(0);
	if (d->xs == NULL) {
		ERR("cannot connect to XenStore: %s (run in Dom0 as root)",
		    strerror(errno));
		return -1;
	}
	snprintf(d->c.name, sizeof(d->c.name), "%s", name);
	d->n = xs_dev_read(d->xs, d->domid, &d->c, &d->bdom);
	return 0;
}

/* Ask xnv-core to let the domain's NFs go (@p what: "save", "migrate")
 * and wait until they did.  0, or -1 said why with the nodes removed. */
static int
let_go(struct nfdom *d, const char *what, double timeout)
{
	char why[96];

	if (xs_dev_suspend(d->xs, d->domid, d->bdom, d->n, what) < 0) {
		ERR("cannot write the suspend nodes of %s's NF devices: %s",
		    d->c.name, strerror(errno));
		(void)xs_dev_suspend(d->xs, d->domid, d->bdom, d->n, NULL);
		return -1;
	}
	if (xs_dev_wait_let_go(d->xs, d->domid, d->bdom, d->n, timeout, why,
			       sizeof(why)) < 0) {
		(void)xs_dev_suspend(d->xs, d->domid, d->bdom, d->n, NULL);
		ERR("%s: an NF did not let go within %.0f s (%s: is xnv-core "
		    "running, and the NF on libxnv with save support?); not "
		    "%sd, its NFs attach again", d->c.name, timeout, why, what);
		return -1;
	}
	printf("xnv-xl: %s: %d NF device%s let go (xnv-core detached the "
	       "NFs, which unmapped)\n", d->c.name, d->n, d->n > 1 ? "s" : "");
	fflush(stdout);
	return 0;
}

/* The domain is still here (a failed save or migration, save -c): its
 * NFs attach again. */
static void
stay(struct nfdom *d)
{
	(void)xs_dev_suspend(d->xs, d->domid, d->bdom, d->n, NULL);
}

static int
write_reg(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int rc = f != NULL && fputs(text, f) >= 0 ? 0 : -1;

	if (f != NULL && fclose(f) != 0)
		rc = -1;
	if (rc < 0)
		ERR("cannot write %s: %s; not saved", path, strerror(errno));
	return rc;
}

static int
cmd_save(int argc, char **argv)
{
	struct sopts o = { 0 };
	struct nfdom d;
	char reg[512], path[4096], *xargv[6];
	int rc, k = 0;

	if ((rc = sopts_parse("save", argc, argv, "c", &o)) >= 0)
		return rc;
	if (argc - optind != 2) {
		ERR("save: expected a domain name and a file (see --help)");
		return 2;
	}
	if (nfdom_find(&d, argv[optind]) < 0)
		return 1;
	snprintf(path, sizeof(path), "%s.nfv", argv[optind + 1]);
	if (d.n > 0 && (reg_text(&d.c, reg, sizeof(reg)) < 0 ||
			write_reg(path, reg) < 0 ||
			let_go(&d, "save", o.timeout) < 0)) {
		xs_close(d.xs);
		return 1;
	}
	xargv[k++] = (char *)xl_bin;
	xargv[k++] = "save";
	if (o.checkpoint)
		xargv[k++] = "-c";
	xargv[k++] = d.c.name;
	xargv[k++] = argv[optind + 1];
	xargv[k] = NULL;
	rc = xl_run(xargv, NULL, 0);
	if (d.n > 0 && (rc != 0 || o.checkpoint))
		stay(&d);
	if (rc != 0) {
		if (d.n > 0)
			remove(path);
		ERR("xl save %s failed (exit %d)%s", d.c.name, rc, d.n > 0 ?
		    "; the domain runs on and its NFs attach again" : "");
	} else if (d.n > 0) {
		if (!o.checkpoint)
			xs_dev_unregister(d.xs, d.domid, d.bdom);
		printf("xnv-xl: domain %s saved to %s, its NF devices to %s "
		       "(xnv-xl restore %s)\n", d.c.name, argv[optind + 1],
		       path, argv[optind + 1]);
	} else {
		printf("xnv-xl: domain %s has no NF devices: saved as xl save "
		       "does, no %s\n", d.c.name, path);
	}
	xs_close(d.xs);
	return rc != 0;
}

/* Register the devices of domain @p c->name, which exists paused, with
 * the core in @p bdom, and start it; closes @p xs (nfdom_open()).  The
 * exit status. */
static int
start_paused(struct xs_handle *xs, const struct nfv_cfg *c, int bdom,
	     double timeout, const char *how)
{
	int domid = xl_domid(c->name);
	int rc = nfdom_start(xs, c, domid, bdom, timeout, 1);

	xs_close(xs);
	if (rc < 0)
		return 1;
	printf("xnv-xl: domain %s (domid %d) %s: service %s, trust group %s, "
	       "%d NF device%s\n", c->name, domid, how, c->service, c->group,
	       c->instances, c->instances > 1 ? "s" : "");
	return 0;
}

static int
cmd_restore(int argc, char **argv)
{
	struct sopts o = { 0 };
	struct xs_handle *xs;
	struct nfv_cfg c;
	char path[4096], err[256], *data, *xargv[5];
	size_t len;
	int rc, bdom;

	if ((rc = sopts_parse("restore", argc, argv, "", &o)) >= 0)
		return rc;
	if (argc - optind != 1) {
		ERR("restore: expected the file xnv-xl save wrote (see --help)");
		return 2;
	}
	snprintf(path, sizeof(path), "%s.nfv", argv[optind]);
	if (access(path, F_OK) != 0) {
		ERR("no registration of NF devices next to %s (xnv-xl save "
		    "writes %s): a domain without NF devices restores with xl "
		    "restore", argv[optind], path);
		return 1;
	}
	if (xl_read_file(path, &data, &len) < 0)
		return 1;
	rc = nfv_cfg_parse(path, data, len, stderr, &c, err, sizeof(err));
	free(data);
	if (rc < 0) {
		ERR("%s; not restored", err);
		return 1;
	}
	xs = nfdom_open(&c, &bdom);	/* its backend domain first */
	if (xs == NULL)
		return 1;
	xargv[0] = (char *)xl_bin;
	xargv[1] = "restore";
	xargv[2] = "-p";
	xargv[3] = argv[optind];
	xargv[4] = NULL;
	rc = xl_run(xargv, NULL, 0);
	if (rc != 0) {
		ERR("xl restore -p %s failed (exit %d)", argv[optind], rc);
		xs_close(xs);
		return 1;
	}
	return start_paused(xs, &c, bdom, o.timeout, "restored");
}

/* Append " 'a'" to @p buf (@p *n of its @p len used; no blank first
 * when empty): @p a quoted for sh.  0, or -1 when it does not fit. */
static int
sh_quote(char *buf, size_t len, size_t *n, const char *a)
{
	size_t k = *n;
	const char *p;

	if (k > 0)
		buf[k++] = ' ';
	buf[k++] = '\'';
	for (p = a; *p != '\0' && k + 6 < len; p++) {
		if (*p == '\'') {
			memcpy(buf + k, "'\\''", 4);
			k += 4;
		} else {
			buf[k++] = *p;
		}
	}
	buf[k++] = '\'';
	buf[k] = '\0';
	*n = k;
	return *p == '\0' ? 0 : -1;
}

/* At the receiving end of a migration to another host: `xnv-xl register`
 * there, through @p ssh (sh syntax, as xl's -s).  The exit status. */
static int
register_remote(const struct nfdom *d, const char *ssh, const char *host,
		double timeout)
{
	char cmd[1024], line[2048], kv[5][96];
	char *argv[] = { "sh", "-c", line, NULL };
	size_t n = 0, m;
	int i, k = 0, rc;

	snprintf(kv[k++], sizeof(kv[0]), "%.0f", timeout < 1 ? 1 : timeout);
	snprintf(kv[k++], sizeof(kv[0]), "nfv_trust_group=%s", d->c.group);
	snprintf(kv[k++], sizeof(kv[0]), "nfv_service=%s", d->c.service);
	snprintf(kv[k++], sizeof(kv[0]), "nfv_instances=%d", d->c.instances);
	if (d->c.backend[0] != '\0')
		snprintf(kv[k++], sizeof(kv[0]), "nfv_backend=%s",
			 d->c.backend);
	rc = sh_quote(cmd, sizeof(cmd), &n, "xnv-xl");
	rc |= sh_quote(cmd, sizeof(cmd), &n, "register");
	rc |= sh_quote(cmd, sizeof(cmd), &n, "--timeout");
	rc |= sh_quote(cmd, sizeof(cmd), &n, kv[0]);
	rc |= sh_quote(cmd, sizeof(cmd), &n, d->c.name);
	for (i = 1; i < k; i++)
		rc |= sh_quote(cmd, sizeof(cmd), &n, kv[i]);
	m = strlen(ssh) < sizeof(line) / 2 ?
	    (size_t)snprintf(line, sizeof(line), "%s", ssh) : 0;
	rc |= m == 0 ? -1 : sh_quote(line, sizeof(line), &m, host);
	rc |= sh_quote(line, sizeof(line), &m, cmd);
	if (rc != 0) {
		ERR("-s %s: the command to register %s on %s is too long; the "
		    "domain is paused there without NF devices", ssh,
		    d->c.name, host);
		return 1;
	}
	rc = xl_run(argv, NULL, 0);
	if (rc != 0)
		ERR("%s on %s failed (exit %d): the domain is paused there, "
		    "without NF devices (run that command there, or xl destroy "
		    "%s there)", cmd, host, rc, d->c.name);
	return rc != 0;
}

static int
cmd_migrate(int argc, char **argv)
{
	struct sopts o = { 0 };
	struct xs_handle *xs;
	struct nfdom d;
	char rune[256], *xargv[9];
	const char *host;
	int rc, k = 0, local, bdom;

	if ((rc = sopts_parse("migrate", argc, argv, "s:", &o)) >= 0)
		return rc;
	if (argc - optind != 2) {
		ERR("migrate: expected a domain name and a host (see --help)");
		return 2;
	}
	host = argv[optind + 1];
	local = o.ssh == NULL && strcmp(host, "localhost") == 0;
	if (nfdom_find(&d, argv[optind]) < 0)
		return 1;
	if (d.n > 0 && let_go(&d, "migrate", o.timeout) < 0) {
		xs_close(d.xs);
		return 1;
	}
	/* Paused at the receiving end until its devices are registered
	 * there.  To this host: the receiver runs here, without ssh. */
	snprintf(rune, sizeof(rune), "exec %s migrate-receive%s", xl_bin,
		 d.n > 0 ? " -p" : "");
	xargv[k++] = (char *)xl_bin;
	xargv[k++] = "migrate";
	if (d.n > 0)
		xargv[k++] = "-p";
	if (local || o.ssh != NULL) {
		xargv[k++] = "-s";
		xargv[k++] = local ? "" : (char *)o.ssh;
	}
	xargv[k++] = d.c.name;
	xargv[k++] = local ? rune : (char *)host;
	xargv[k] = NULL;
	rc = xl_run(xargv, NULL, 0);
	if (rc != 0) {
		if (d.n > 0)
			stay(&d);
		ERR("xl migrate %s %s failed (exit %d)%s", d.c.name, host, rc,
		    d.n > 0 ? "; where the domain runs on, its NFs attach "
		    "again" : "");
	} else if (d.n > 0) {
		xs_dev_unregister(d.xs, d.domid, d.bdom);	/* the source */
		rc = !local ? register_remote(&d, o.ssh ? o.ssh : "ssh",
					      host, o.timeout) :
		     (xs = nfdom_open(&d.c, &bdom)) == NULL ? 1 :
		     start_paused(xs, &d.c, bdom, o.timeout, "migrated here");
	}
	xs_close(d.xs);
	return rc != 0;
}

static int
cmd_register(int argc, char **argv)
{
	struct sopts o = { 0 };
	struct xs_handle *xs;
	struct nfv_cfg c;
	struct nfdom d;
	char text[1024], err[256];
	const char *eq, *q;
	size_t n;
	int rc, i, bdom;

	if ((rc = sopts_parse("register", argc, argv, "", &o)) >= 0)
		return rc;
	if (argc - optind < 3) {
		ERR("register: expected a domain name and its nfv_KEY=VALUE "
		    "settings (see --help)");
		return 2;
	}
	n = (size_t)snprintf(text, sizeof(text), "name = \"%s\"\n",
			     argv[optind]);
	for (i = optind + 1; i < argc && n < sizeof(text); i++) {
		eq = strchr(argv[i], '=');
		if (strncmp(argv[i], "nfv_", 4) != 0 || eq == NULL) {
			ERR("register: '%s': expected nfv_KEY=VALUE", argv[i]);
			return 2;
		}
		/* strings quoted; nfv_instances is a number */
		q = strncmp(argv[i], "nfv_instances=", 14) == 0 ? "" : "\"";
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "%.*s = %s%s%s\n", (int)(eq - argv[i]),
				      argv[i], q, eq + 1, q);
	}
	if (n >= sizeof(text) || nfv_cfg_parse("register", text, n, stderr,
					       &c, err, sizeof(err)) < 0) {
		ERR("%s; nothing registered", n >= sizeof(text) ?
		    "register: settings too long" : err);
		return 2;
	}
	if (nfdom_find(&d, c.name) < 0)
		return 1;
	rc = d.n;
	xs_close(d.xs);
	if (rc > 0) {
		ERR("domain %s has NF devices already (xnv-xl list)",
		    argv[optind]);
		return 1;
	}
	xs = nfdom_open(&c, &bdom);
	return xs == NULL ? 1 : start_paused(xs, &c, bdom, o.timeout,
					     "registered");
}

int
xnv_xl_suspend_cmd(const char *cmd, int argc, char **argv)
{
	if (strcmp(cmd, "save") == 0)
		return cmd_save(argc, argv);
	if (strcmp(cmd, "restore") == 0)
		return cmd_restore(argc, argv);
	if (strcmp(cmd, "migrate") == 0)
		return cmd_migrate(argc, argv);
	if (strcmp(cmd, "register") == 0)
		return cmd_register(argc, argv);
	return -1;
}

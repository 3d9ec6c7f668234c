/* SPDX-License-Identifier: BSD-3-Clause */
/* EAL argument defaults; see eal_args.h. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "eal_args.h"

#define FREE_HUGE "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"
#define MIN_FREE_HUGE 64	/* 128 MiB: DPDK's own memory + a small pool */

static char notice[128];

const char *
xnv_eal_notice(void)
{
	return notice;
}

static long
free_hugepages(void)
{
	FILE *f = fopen(FREE_HUGE, "r");
	long n = 0;

	if (f == NULL)
		return 0;
	if (fscanf(f, "%ld", &n) != 1)
		n = 0;
	fclose(f);
	return n;
}

/* DPDK's hugepage memory needs a mounted hugetlbfs. */
static int
hugetlbfs_mounted(void)
{
	char line[512];
	FILE *f = fopen("/proc/mounts", "r");
	int found = 0;

	if (f == NULL)
		return 0;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = strstr(line, " hugetlbfs ") != NULL;
	fclose(f);
	return found;
}

static int
has_opt(int argc, char **argv, const char *const *opts)
{
	int i, j;

	for (i = 1; i < argc; i++)
		for (j = 0; opts[j] != NULL; j++)
			if (strncmp(argv[i], opts[j], strlen(opts[j])) == 0)
				return 1;
	return 0;
}

static const char *const mem_opts[] = { "--no-huge", "--in-memory",
	"--huge-dir", "-m", "--socket-mem", "--legacy-mem", "--no-shconf",
	NULL };
static const char *const prefix_opts[] = { "--file-prefix", NULL };
static const char *const iova_opts[] = { "--iova-mode", NULL };
static const char *const dev_opts[] = { "-a", "--allow", "-b", "--block",
	"--no-pci", "-w", "--pci-whitelist", NULL };

int
xnv_split_args(int argc, char **argv, int *eal_argc, char ***eal_argv,
	       int *app_argc, char ***app_argv)
{
	static char *huge[] = { "--in-memory" };
	static char *nohuge[] = { "--no-huge", "-m", "512", "--no-shconf" };
	/* The pools are memory DPDK did not allocate (extmem): one IOVA
	 * range each only when IOVA is VA.  EAL would pick PA wherever
	 * physical addresses can be read and no bus asks for VA. */
	static char iova_va[] = "--iova-mode=va";
	char **extra = NULL, **ev;
	int sep = -1, n_extra = 0, i, k, iova;
	long freehp;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			sep = i;
			break;
		}
	if (sep < 0)
		sep = 0;	/* no EAL options: all are the app's */
	if (!has_opt(sep > 0 ? sep : 1, argv, mem_opts)) {
		freehp = free_hugepages();
		if (freehp >= MIN_FREE_HUGE && hugetlbfs_mounted()) {
			extra = huge;
			n_extra = 1;
		} else {
			extra = nohuge;
			n_extra = 4;
			snprintf(notice, sizeof(notice), "%s: DPDK runs with "
				 "--no-huge", freehp < MIN_FREE_HUGE ?
				 "fewer than 64 free 2 MiB hugepages" :
				 "no hugetlbfs mounted");
		}
	}
	iova = !has_opt(sep > 0 ? sep : 1, argv, iova_opts);
	ev = calloc((size_t)(argc + n_extra + iova + 1), sizeof(*ev));
	if (ev == NULL) {
		fprintf(stderr, "xnv-core: out of memory\n");
		return -1;
	}
	k = 0;
	ev[k++] = argv[0];
	for (i = 0; i < n_extra; i++)
		ev[k++] = extra[i];
	if (iova)
		ev[k++] = iova_va;
	for (i = 1; i < sep; i++)
		ev[k++] = argv[i];
	*eal_argc = k;
	*eal_argv = ev;
	/* The app's argv starts at the "--" (getopt skips argv[0]). */
	*app_argc = sep > 0 ? argc - sep : argc;
	*app_argv = sep > 0 ? argv + sep : argv;
	return 0;
}

int
xnv_eal_prefix(int *eal_argc, char ***eal_argv, const char *socket)
{
	static char opt[] = "--file-prefix";
	static char prefix[32];
	uint32_t h = 2166136261u;	/* FNV-1a of the socket path */
	const char *p;
	char **ev;

	if (has_opt(*eal_argc, *eal_argv, prefix_opts))
		return 0;
	for (p = socket; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	snprintf(prefix, sizeof(prefix), "xnv-%08x", h);
	ev = realloc(*eal_argv, sizeof(*ev) * (size_t)(*eal_argc + 3));
	if (ev == NULL) {
		fprintf(stderr, "xnv-core: out of memory\n");
		return -1;
	}
	ev[(*eal_argc)++] = opt;
	ev[(*eal_argc)++] = prefix;
	ev[*eal_argc] = NULL;
	*eal_argv = ev;
	return 0;
}

int
xnv_eal_devices(int *eal_argc, char ***eal_argv, char **pci, int n_pci)
{
	static char no_pci[] = "--no-pci", allow[] = "-a";
	char **ev;
	int i, k = *eal_argc;

	if (has_opt(*eal_argc, *eal_argv, dev_opts))
		return 0;
	ev = realloc(*eal_argv, sizeof(*ev) * (size_t)(k + 2 * n_pci + 2));
	if (ev == NULL) {
		fprintf(stderr, "xnv-core: out of memory\n");
		return -1;
	}
	if (n_pci == 0)
		ev[k++] = no_pci;
	for (i = 0; i < n_pci; i++) {
		ev[k++] = allow;
		ev[k++] = pci[i];
	}
	ev[k] = NULL;
	*eal_argc = k;
	*eal_argv = ev;
	return 0;
}

int
xnv_eal_from_config(int *eal_argc, char ***eal_argv,
		    struct xnv_config *cfg)
{
	char *pci[XNV_MAX_PORTS];
	int n_pci = 0, i;

	/* vdevs are named net_*; anything else is a PCI address. */
	for (i = 0; i < cfg->n_ports; i++)
		if (strncmp(cfg->ports[i].dev, "net_", 4) != 0)
			pci[n_pci++] = cfg->ports[i].dev;
	if (xnv_eal_devices(eal_argc, eal_argv, pci, n_pci) < 0 ||
	    xnv_eal_prefix(eal_argc, eal_argv, cfg->socket) < 0)
		return -1;
	return 0;
}

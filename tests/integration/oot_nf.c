/* SPDX-License-Identifier: BSD-3-Clause */
/* An out-of-tree NF: what an operator builds with `pkg-config libxnv`
 * against an installed libxnv (installtree.build_nf(), and
 * scripts/container-smoke.sh on a fresh Debian root). */
#include <errno.h>
#include <xnv/nf.h>

static xnv_action_t fwd(struct xnv_pkt *p, void *c) { (void)p; (void)c; return XNV_NEXT; }

int main(int argc, char **argv)
{
	struct xnv_nf *nf;
	int rc = xnv_nf_init(argc, argv, &nf);

	if (rc < 0)
		return rc == -EAGAIN ? 0 : 1;
	rc = xnv_nf_run(nf, fwd, NULL);
	xnv_nf_close(nf);
	return rc < 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* forwarder: the smallest useful NF.  Every packet goes to the next step
 * of its chain, untouched.  Run: xnv-forwarder --service fwd-a */
#include <stdio.h>

#include <xnv/nf.h>

static xnv_action_t
forward(struct xnv_pkt *pkt, void *ctx)
{
	(void)pkt;
	(void)ctx;
	return XNV_NEXT;
}

int
main(int argc, char **argv)
{
	struct xnv_nf *nf;
	int rc = xnv_nf_args(argc, argv);

	if (rc >= 0 && rc < argc) {	/* it has no options of its own */
		fprintf(stderr, "%s: unexpected argument '%s' after --\n",
			argv[0], argv[rc]);
		return 2;
	}
	rc = rc < 0 ? rc : xnv_nf_init(argc, argv, &nf);
	if (rc < 0)
		return xnv_nf_exit_status(rc);
	rc = xnv_nf_run(nf, forward, NULL);
	xnv_nf_close(nf);
	return rc < 0 ? 1 : 0;
}

// SPDX-License-Identifier: BSD-3-Clause
/*
 * xt-pcapcmp: do two classic pcap files hold the same packets (bytes and
 * order; timestamps ignored)?  Dom0 side of tests/xen's chain check.
 * usage: xt-pcapcmp A.pcap B.pcap   -> "same N" (exit 0) or why not (exit 1)
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct rec { uint32_t ts, us, caplen, len; };

static int next(FILE *f, unsigned char *buf, uint32_t *n)
{
	struct rec r;

	if (fread(&r, sizeof(r), 1, f) != 1)
		return 0;
	if (r.caplen > 65535 || fread(buf, 1, r.caplen, f) != r.caplen)
		return -1;
	*n = r.caplen;
	return 1;
}

int main(int argc, char **argv)
{
	static unsigned char a[65536], b[65536];
	unsigned char gh[24];
	FILE *fa, *fb;
	uint32_t na, nb;
	long k = 0;
	int ra, rb;

	if (argc != 3 || !(fa = fopen(argv[1], "rb")) || !(fb = fopen(argv[2], "rb"))) {
		fprintf(stderr, "usage: xt-pcapcmp A.pcap B.pcap (readable)\n");
		return 2;
	}
	if (fread(gh, 24, 1, fa) != 1 || fread(gh, 24, 1, fb) != 1) {
		printf("differ: short pcap header\n");
		return 1;
	}
	for (;;) {
		ra = next(fa, a, &na);
		rb = next(fb, b, &nb);
		if (ra < 0 || rb < 0) {
			printf("differ: truncated record after %ld packets\n", k);
			return 1;
		}
		if (ra == 0 || rb == 0)
			break;
		if (na != nb || memcmp(a, b, na) != 0) {
			printf("differ: packet %ld (%u vs %u bytes)\n", k, na, nb);
			return 1;
		}
		k++;
	}
	if (ra != rb) {
		printf("differ: %s has more than %ld packets\n", ra ? argv[1] : argv[2], k);
		return 1;
	}
	printf("same %ld\n", k);
	return 0;
}

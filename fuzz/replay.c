/* SPDX-License-Identifier: ISC */
/*
 * replay.c: a main for the fuzz targets when libFuzzer is not in use.  It
 * runs the target on each corpus file, then on random mutations of them
 * (bit flips, truncations, splices) so `make check` exercises every
 * decoder with hostile input under the sanitizers.
 *
 * usage: fuzz-X [-n mutations] [-s seed] file...
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static uint8_t	*replay_read(const char *, size_t *);

static uint8_t *
replay_read(const char *path, size_t *len)
{
	FILE	*f;
	uint8_t	*buf;
	long	 n;

	if ((f = fopen(path, "rb")) == NULL)
		return (NULL);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	*len = fread(buf, 1, (size_t)n, f);
	fclose(f);
	return (buf);
}

int
main(int argc, char **argv)
{
	uint8_t		**seeds, *m;
	size_t		 *lens, mlen, i, k;
	long		  count = 10000, it;
	unsigned	  seed = 1;
	int		  ch, nseeds = 0;

	while ((ch = getopt(argc, argv, "n:s:")) != -1) {
		switch (ch) {
		case 'n':
			count = strtol(optarg, NULL, 10);
			break;
		case 's':
			seed = (unsigned)strtoul(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: %s [-n count] [-s seed] file...\n",
			    argv[0]);
			return (2);
		}
	}
	argc -= optind;
	argv += optind;
	seeds = calloc((size_t)argc + 1, sizeof *seeds);
	lens = calloc((size_t)argc + 1, sizeof *lens);
	for (i = 0; i < (size_t)argc; i++) {
		if ((seeds[nseeds] = replay_read(argv[i], &lens[nseeds])) ==
		    NULL) {
			fprintf(stderr, "cannot read %s\n", argv[i]);
			return (1);
		}
		LLVMFuzzerTestOneInput(seeds[nseeds], lens[nseeds]);
		nseeds++;
	}
	if (nseeds == 0)
		return (0);
	srandom(seed);
	for (it = 0; it < count; it++) {
		k = (size_t)random() % (size_t)nseeds;
		mlen = lens[k] + (size_t)(random() % 16);
		m = malloc(mlen + 1);
		memcpy(m, seeds[k], lens[k]);
		for (i = lens[k]; i < mlen; i++)
			m[i] = (uint8_t)random();
		switch (random() % 4) {
		case 0:		/* flip some bits */
			for (i = 0; i < 1 + (size_t)(random() % 8); i++)
				m[random() % mlen] ^= 1U << (random() % 8);
			break;
		case 1:		/* truncate */
			mlen = (size_t)random() % (mlen + 1);
			break;
		case 2:		/* random bytes at a random place */
			for (i = 0; i < 1 + (size_t)(random() % 4); i++)
				m[random() % mlen] = (uint8_t)random();
			break;
		default:	/* splice another seed's tail */
			i = (size_t)random() % (size_t)nseeds;
			if (lens[i] > 0 && mlen > 0) {
				size_t	at = (size_t)random() % mlen;
				size_t	n = lens[i] < mlen - at ? lens[i] :
				    mlen - at;

				memcpy(m + at, seeds[i], n);
			}
			break;
		}
		LLVMFuzzerTestOneInput(m, mlen);
		free(m);
	}
	/* stderr: fuzz-proxy makes stdout its client. */
	fprintf(stderr, "%ld inputs from %d seeds: ok\n", count + nseeds,
	    nseeds);
	for (i = 0; i < (size_t)nseeds; i++)
		free(seeds[i]);
	free(seeds);
	free(lens);
	return (0);
}

/* SPDX-License-Identifier: ISC */
/*
 * ipynb.c: time runtimed's .ipynb load and save of one file.
 *
 *	bench-ipynb FILE OUT ROUNDS
 *
 * Load = read the file + parse into a room_nb; save = stream it to the
 * file as nbformat.write writes it (room_ipynb_write_fd, what a save
 * does before its fsync; no fsync, as Python's write; the atomic save
 * with fsync is timed apart).  Prints best-of-ROUNDS times
 * and peak RSS (VmHWM) after loading and after saving.
 */

#include <sys/resource.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "runtimed/runtimed.h"

static double	bench_now(void);
static long	bench_maxrss(void);

static double
bench_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + ts.tv_nsec / 1e9);
}

/*
 * Peak RSS in kB: VmHWM, this program's own.  getrusage's ru_maxrss
 * keeps the peak of the process before its exec, the parent's copy
 * (node's, 60-100 MB, when bench/run.mjs spawns it).
 */
static long
bench_maxrss(void)
{
	struct rusage	ru;
	char		line[128];
	long		kb = -1;
	FILE		*f;

	if ((f = fopen("/proc/self/status", "r")) != NULL) {
		while (fgets(line, sizeof line, f) != NULL) {
			if (sscanf(line, "VmHWM: %ld", &kb) == 1)
				break;
		}
		fclose(f);
	}
	if (kb >= 0)
		return (kb);
	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_maxrss);
}

int
main(int argc, char **argv)
{
	struct room_nb	*nb = NULL;
	char		*cause = NULL;
	double		 t, load = 1e9, save = 1e9, atomic = 1e9;
	long		 rss_load;
	int		 i, rounds, fd;

	if (argc != 4) {
		fprintf(stderr, "usage: bench-ipynb FILE OUT ROUNDS\n");
		return (2);
	}
	rounds = atoi(argv[3]);
	for (i = 0; i < rounds; i++) {
		room_nb_free(nb);
		t = bench_now();
		if ((nb = room_ipynb_read(argv[1], &cause)) == NULL) {
			fprintf(stderr, "%s\n", cause);
			return (1);
		}
		t = bench_now() - t;
		if (t < load)
			load = t;
	}
	rss_load = bench_maxrss();
	for (i = 0; i < rounds; i++) {
		t = bench_now();
		if ((fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC |
		    O_CLOEXEC, 0644)) == -1 || room_ipynb_write_fd(nb, fd,
		    argv[2], &cause) != 0 || close(fd) != 0) {
			fprintf(stderr, "cannot write %s\n", argv[2]);
			return (1);
		}
		t = bench_now() - t;
		if (t < save)
			save = t;
	}
	for (i = 0; i < rounds; i++) {
		t = bench_now();
		if (room_ipynb_write(nb, argv[2], &cause) != 0) {
			fprintf(stderr, "%s\n", cause);
			return (1);
		}
		t = bench_now() - t;
		if (t < atomic)
			atomic = t;
	}
	printf("%f %f %f %ld %ld\n", load, save, atomic, rss_load,
	    bench_maxrss());
	room_nb_free(nb);
	return (0);
}

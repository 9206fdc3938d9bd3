# SPDX-License-Identifier: ISC
"""Time nbformat.read and nbformat.write of one file (the reference).

usage: ipynb-py.py FILE OUT ROUNDS -> prints "load_s save_s maxrss_kb"
"""
import resource
import sys
import time

import nbformat

path, out, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
best_load = best_save = 1e9
for _ in range(rounds):
    t = time.perf_counter()
    nb = nbformat.read(path, as_version=4)
    best_load = min(best_load, time.perf_counter() - t)
    t = time.perf_counter()
    nbformat.write(nb, out)
    best_save = min(best_save, time.perf_counter() - t)
print("%f %f %d" % (best_load, best_save,
                    resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))

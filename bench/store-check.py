#!/usr/bin/python3
# SPDX-License-Identifier: ISC
# store-check.py: what the start-up check of the state database costs.
# Builds a store of runtimed's schema (N notebooks with 100 KB snapshots,
# 100 journal entries and 8 execution records each) and times PRAGMA
# quick_check (what runtimed runs at start) and integrity_check, with the
# page cache warm and cold (the file's pages dropped with
# posix_fadvise, no root needed).  Usage:
# python3 bench/store-check.py [DIR] [N] [SNAPSHOT_KB]
import os, sqlite3, sys, tempfile, time

d = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
snap = (int(sys.argv[3]) if len(sys.argv) > 3 else 100) * 1000
path = os.path.join(d, 'runtimed.db')
db = sqlite3.connect(path)
db.executescript('''PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE rooms (notebook_id TEXT PRIMARY KEY, path TEXT,
 kernel TEXT NOT NULL, dirty INTEGER NOT NULL, seq INTEGER NOT NULL,
 snapshot BLOB NOT NULL, updated_at INTEGER NOT NULL);
CREATE INDEX rooms_path ON rooms(path);
CREATE TABLE journal (notebook_id TEXT NOT NULL, seq INTEGER NOT NULL,
 op BLOB NOT NULL, PRIMARY KEY (notebook_id, seq));
CREATE TABLE executions (execution_id TEXT PRIMARY KEY,
 notebook_id TEXT NOT NULL, finished_at INTEGER NOT NULL,
 record BLOB NOT NULL);
CREATE INDEX executions_nb ON executions(notebook_id, finished_at);''')
for i in range(n):
    nb = 'nb-%05d' % i
    db.execute('INSERT INTO rooms VALUES (?,?,?,?,?,?,?)',
               (nb, '/x/%d.ipynb' % i, 'python3', 1, 0, os.urandom(snap), 0))
    db.executemany('INSERT INTO journal VALUES (?,?,?)',
                   [(nb, j, os.urandom(200)) for j in range(1, 101)])
    db.executemany('INSERT INTO executions VALUES (?,?,?,?)',
                   [('%s-e%d' % (nb, j), nb, j, os.urandom(2000))
                    for j in range(8)])
db.commit()
db.close()
print('%s: %d MiB, %d notebooks, SQLite %s' % (path,
      os.path.getsize(path) >> 20, n, sqlite3.sqlite_version))


def cold():
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)


for pragma in ('quick_check', 'integrity_check'):
    for cache in ('warm', 'cold'):
        db = sqlite3.connect(path)
        db.execute('SELECT count(*) FROM meta').fetchall()
        if cache == 'cold':
            cold()
        t = time.time()
        r = db.execute('PRAGMA %s' % pragma).fetchall()
        print('%-16s %-4s %-6s %.2f s' % (pragma, cache, r[0][0],
              time.time() - t))
        db.close()

// SPDX-License-Identifier: ISC
// worker-world.mjs: the private world the SDK-driven worker tests share:
// a temporary directory T with its own socket and state directory, and
// the environment the worker (and the daemon it starts) gets. Sanitizer
// builds write their reports under SAN, which each test checks at the
// end. Extra names the environment variables passed through as they are.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function workerWorld(prefix, extra = []) {
  const T = fs.mkdtempSync(path.join(os.tmpdir(), `rtd-${prefix}-`));
  const env = {
    PATH: process.env.PATH || '/usr/bin:/bin',
    HOME: process.env.HOME || T,
    RUNTIMED_SOCKET: path.join(T, 'run', 'runtimed.sock'),
    RUNTIMED_STATE_DIR: path.join(T, 'state'),
    RUNTIMED_LIBEXEC_DIR: process.env.RUNTIMED_LIBEXEC_DIR || '',
    PYDEVD_DISABLE_FILE_VALIDATION: '1',
  };
  for (const k of ['LSAN_OPTIONS', ...extra])
    if (process.env[k]) env[k] = process.env[k];
  const SAN = path.join(os.tmpdir(), `rtd-${prefix}-san-${process.pid}`);
  for (const k of ['ASAN_OPTIONS', 'UBSAN_OPTIONS'])
    if (process.env[k]) env[k] = `${process.env[k]}:log_path=${SAN}`;
  fs.mkdirSync(path.join(T, 'run'), { mode: 0o700 });
  return { T, env, SAN };
}

// A PNG maker in the cell: RGB, a gradient in bands, zlib from the stdlib.
export const MKPNG = [
  'import zlib, struct, base64',
  'from IPython.display import Image, display',
  'def png(w, h):',
  '    def chunk(t, d):',
  '        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)',
  '    rows = [b"\\x00" + bytes((x * 7 + b * 40) % 256 for x in range(w * 3)) for b in range(4)]',
  '    raw = b"".join(rows[(y // 50) % 4] for y in range(h))',
  '    return (b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +',
  '            chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))',
].join('\n');

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

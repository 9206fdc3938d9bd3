// SPDX-License-Identifier: ISC
// fs-shim.mjs: node:fs with a globSync that says it is missing (only the
// suite's tier-check uses it, which these tests do not run).
export * from 'node:fs';
export { default } from 'node:fs';
export function globSync() {
  throw new Error('fs.globSync needs Node 22');
}

// SPDX-License-Identifier: ISC
// node20-compat.mjs: the conformance suite (0.1.15 and later) imports
// fs.globSync, which Node 22 added; on Node 20 its "fs" resolves to
// fs-shim.mjs instead.  Usage: node --import ./node20-compat.mjs ...
import { register } from 'node:module';

const shim = new URL('./fs-shim.mjs', import.meta.url).href;
register('data:text/javascript,' + encodeURIComponent(`
export async function resolve(spec, ctx, next) {
  if ((spec === 'fs' || spec === 'node:fs') && ctx.parentURL &&
      ctx.parentURL.includes('/@modelcontextprotocol/conformance/'))
    return { url: ${JSON.stringify(shim)}, shortCircuit: true };
  return next(spec, ctx);
}`));

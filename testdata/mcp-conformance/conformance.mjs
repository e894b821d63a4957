// Runs the pinned @modelcontextprotocol/conformance CLI with the arguments
// given, on Node.js 20 as on 22: its bundle imports fs.globSync (Node.js 22)
// at load time although only its tier-check command calls it, so on an older
// Node.js the import of 'fs' resolves to node:fs plus a globSync that throws.
//
//   node testdata/mcp-conformance/conformance.mjs client --command "..." --scenario auth/metadata-default
import fs from 'node:fs';
import { register } from 'node:module';

if (typeof fs.globSync !== 'function') {
  const shim = `export * from 'node:fs'; export { default } from 'node:fs';
export function globSync() { throw new Error('fs.globSync needs Node.js 22 or newer'); }`;
  const hooks = `const shim = ${JSON.stringify('data:text/javascript,' + encodeURIComponent(shim))};
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && !context.parentURL?.startsWith('data:')) {
    return { url: shim, shortCircuit: true };
  }
  return next(specifier, context);
}`;
  register('data:text/javascript,' + encodeURIComponent(hooks));
}

await import('@modelcontextprotocol/conformance/dist/index.js');

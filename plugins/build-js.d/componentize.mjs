// Builds one JavaScript plugin into a WebAssembly component with the
// componentize-js API (the `jco componentize` CLI mishandles paths here).
// plugins/build-js copies this file next to the installed node_modules in
// <target>/toolchains/js and runs it from there, so that the import below
// resolves to the pinned toolchain.
//
// Usage: node componentize.mjs WIT_DIR ENTRY.js OUT.wasm
//
// Every optional WASI feature of the engine is disabled: console output,
// Math.random/crypto, clocks, fetch and the HTTP handler would each import a
// WASI interface, which Corral reports as authority the plugin asks for. The
// plugin's only imports are then the host's log and progress. The build fails
// if anything else is imported.

import { componentize } from '@bytecodealliance/componentize-js';
import { writeFile } from 'node:fs/promises';

const [witPath, sourcePath, outPath] = process.argv.slice(2);
if (!outPath) {
  console.error('usage: node componentize.mjs WIT_DIR ENTRY.js OUT.wasm');
  process.exit(2);
}

const { component, imports } = await componentize({
  sourcePath,
  witPath,
  worldName: 'plugin',
  disableFeatures: ['stdio', 'random', 'clocks', 'http', 'fetch-event'],
});

const unexpected = imports.map(([iface]) => iface).filter((iface) => !iface.startsWith('corral:plugin/'));
if (unexpected.length > 0) {
  console.error(`componentize: ${sourcePath} imports ${[...new Set(unexpected)].join(', ')}; only corral:plugin/* is allowed`);
  process.exit(1);
}
await writeFile(outPath, component);

// Builds one JavaScript plugin into a WebAssembly component with the
// componentize-js API (the `jco componentize` CLI mishandles paths here).
// plugins/build-js copies this file next to the installed node_modules in
// <target>/toolchains/js and runs it from there, so that the import below
// resolves to the pinned toolchain. `corral new js` projects carry a copy
// (toolchain/componentize.mjs, compiled into corral from this file) that
// their ./build uses the same way.
//
// Usage: node componentize.mjs WIT_DIR ENTRY.js OUT.wasm [WORLD]
//
// WORLD is `plugin` (the default), `plugin-with-state`, which adds the
// wasi:keyvalue imports for a plugin whose manifest grants [state]
// (wit/plugin-with-state.wit), `plugin-with-files`, which adds
// wasi:filesystem's types and preopens and wasi:cli/environment for a plugin
// whose manifest grants [[dirs]] (wit/plugin-with-files.wit), or
// `plugin-with-state-and-files`, or `plugin-full`, which exports `resources`,
// `prompts` and `completion` besides `tools` (wit/plugin.wit), for a plugin
// whose plugin.js exports `resources` or `prompts`.
//
// Console output (the engine's `stdio` feature) stays on: without it an
// uncaught error's message and stack are lost and the call fails with a bare
// trap; with it they go to stderr, which Corral captures into the call's
// error and its log. It brings WASI imports that grant nothing Corral does not
// give every plugin: wasi:io, wasi:cli's standard streams and terminals (never
// a terminal), the wall clock, and wasi:filesystem with no directory unless
// the manifest grants one. Every other optional feature is disabled:
// Math.random/crypto, the monotonic clock, fetch and the HTTP handler (whose
// wasi:http import needs a grant). The build fails if the plugin's own source
// imports anything but corral:plugin/* (and wasi:keyvalue/* with state;
// with files, wasi:filesystem/*, the wasi:io/* and wasi:clocks/* its types
// use, and wasi:cli/environment).

import { componentize } from '@bytecodealliance/componentize-js';
import { writeFile } from 'node:fs/promises';

const [witPath, sourcePath, outPath, worldName = 'plugin'] = process.argv.slice(2);
// What each world lets the plugin's source import.
const files = ['wasi:filesystem/', 'wasi:io/', 'wasi:clocks/', 'wasi:cli/environment@'];
const worlds = {
  plugin: ['corral:plugin/'],
  'plugin-with-state': ['corral:plugin/', 'wasi:keyvalue/'],
  'plugin-with-files': ['corral:plugin/', ...files],
  'plugin-with-state-and-files': ['corral:plugin/', 'wasi:keyvalue/', ...files],
  'plugin-full': ['corral:plugin/'],
};
const allowed = worlds[worldName];
if (!outPath || !allowed) {
  console.error(`usage: node componentize.mjs WIT_DIR ENTRY.js OUT.wasm [${Object.keys(worlds).join('|')}]`);
  process.exit(2);
}

const { component, imports } = await componentize({
  sourcePath,
  witPath,
  worldName,
  disableFeatures: ['random', 'clocks', 'http', 'fetch-event'],
});

const unexpected = imports
  .map(([iface]) => iface)
  .filter((iface) => !allowed.some((prefix) => iface.startsWith(prefix)));
if (unexpected.length > 0) {
  const may = allowed.map((prefix) => `${prefix}*`).join(' and ');
  console.error(`componentize: ${sourcePath} imports ${[...new Set(unexpected)].join(', ')}; world ${worldName} allows only ${may}`);
  process.exit(1);
}
await writeFile(outPath, component);

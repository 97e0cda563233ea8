// Writes the TypeScript declarations of the plugin contract for one world:
// what `jco guest-types WIT_DIR --world-name WORLD -o OUT_DIR` does, through
// jco's library. TypeScript plugins (plugins/build-ts, `corral new ts`
// projects) type-check against these files: `declare module
// 'corral:plugin/host@0.3.0'` and the rest, one file per interface, and one
// per world (OUT_DIR/WORLD.d.ts) naming what the plugin imports and exports.
//
// Usage: node guest-types.mjs WIT_DIR WORLD OUT_DIR
//
// Why not the `jco guest-types` command itself: jco 1.35.0 runs its WIT
// reader as a WebAssembly component on @bytecodealliance/preview2-shim
// 0.26.1, which gives a component no directory unless told to (earlier shims
// gave it `/`), and the command never tells it: every path fails with "No
// such file or directory (os error 44)". Here the shim that jco's library
// resolves is given `/` first. Like componentize.mjs, this file runs from
// next to the toolchain's node_modules.

import { createRequire } from 'node:module';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [witPath, worldName, outDir] = process.argv.slice(2);
if (!outDir) {
  console.error('usage: node guest-types.mjs WIT_DIR WORLD OUT_DIR');
  process.exit(2);
}

// The shim jco-transpile itself imports (its own copy when npm nests one),
// so that the preopen is set on the instance its WIT reader uses.
const require = createRequire(import.meta.url);
const transpile = require.resolve('@bytecodealliance/jco-transpile');
const filesystem = createRequire(transpile).resolve('@bytecodealliance/preview2-shim/filesystem');
const { _setPreopens } = await import(pathToFileURL(filesystem).href);
_setPreopens({ '/': '/' });
const { generateGuestTypes } = await import(pathToFileURL(transpile).href);

let files;
try {
  files = await generateGuestTypes(resolve(witPath), {
    worldName,
    outDir: `${resolve(outDir)}/`,
  });
} catch (err) {
  // The WIT reader's own words, without the JavaScript stack under them.
  const message = String(err?.message ?? err).split('\n    at ')[0];
  console.error(`guest-types: no types for world \`${worldName}\` of ${witPath}: ${message}`);
  process.exit(1);
}
for (const [path, bytes] of Object.entries(files)) {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, bytes);
}

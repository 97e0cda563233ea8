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
// WORLD is `plugin` (the default) or `plugin-full`, which exports
// `resources`, `prompts` and `completion` besides `tools` (wit/plugin.wit),
// for a plugin whose plugin.js exports `resources` or `prompts`; either
// followed by the grants whose imports it adds, `-with-G1-and-G2...` in the
// order state, files, secrets, as plugins/build-common.sh composes it
// (world_name, world_wit: WIT_DIR then holds it): `state` the wasi:keyvalue
// imports for a plugin whose manifest grants [state]
// (wit/plugin-with-state.wit), `files` wasi:filesystem's types and preopens
// and wasi:cli/environment for [[dirs]] (wit/plugin-with-files.wit),
// and `secrets` wasi:config/store for [secrets]
// (wit/plugin-with-secrets.wit). For example
// `plugin-with-state`, `plugin-with-files-and-secrets`,
// `plugin-full-with-secrets`.
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
// use, and wasi:cli/environment; with secrets, wasi:config/*).
//
// What the engine prints of an uncaught Error is its message, without its
// class (`can't access property "x" of null`, not `TypeError: ...`), and
// its stack in the compiled JavaScript: a TypeScript plugin's frames point
// at tsc's output (`.build/plugin/tool.js:12:5`, not `tool.ts:13:3`). Both
// are read from the engine's own records of the error, which no property
// of it changes. So the component's entry is not ENTRY.js itself but a
// module generated beside it for this build (`.corral-entry-PID.js`,
// removed when the build ends): it re-exports ENTRY.js, and wraps the
// functions of its exported interfaces (`tools`, `resources`, `prompts`,
// `completion`) so that an Error escaping one, which fails the call
// anyway, is rethrown as a value the engine prints as it is: `TypeError:
// message`, then `Stack:` and the frames, each compiled position that a
// source map beside its file (FILE.js.map, as tsc --sourceMap writes)
// covers replaced by the source's, relative to the current folder
// (`greet@tool.ts:13:3`), and without the frames of the wrapper and of
// componentize-js's glue. The maps become a table of positions here, at
// build time; on a call nothing happens unless an Error escapes. An
// Error carrying a `payload` (a `result`'s error, which the glue returns
// rather than fails the call with) and a thrown non-Error pass unchanged.

import { componentize } from '@bytecodealliance/componentize-js';
import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';

const [witPath, sourcePath, outPath, worldName = 'plugin'] = process.argv.slice(2);
// What each grant lets the plugin's source import, besides corral:plugin/*.
const files = ['wasi:filesystem/', 'wasi:io/', 'wasi:clocks/', 'wasi:cli/environment@'];
const grants = {
  state: ['wasi:keyvalue/'],
  files,
  secrets: ['wasi:config/'],
};
const allowed = worldImports(worldName);
if (!outPath || !allowed) {
  console.error('usage: node componentize.mjs WIT_DIR ENTRY.js OUT.wasm [plugin|plugin-full[-with-GRANT[-and-GRANT...]]]');
  console.error(`  (each GRANT one of ${Object.keys(grants).join(', ')}, in that order)`);
  process.exit(2);
}

// The prefixes of what world `name` lets the source import, or undefined
// for a name that is not plugin or plugin-full with grants in order.
function worldImports(name) {
  const match = /^plugin(?:-full)?(?:-with-([a-z-]+))?$/.exec(name);
  if (!match) return undefined;
  const order = Object.keys(grants);
  const named = match[1] ? match[1].split('-and-') : [];
  if (named.some((grant, i) => !order.includes(grant) || (i > 0 && order.indexOf(grant) <= order.indexOf(named[i - 1])))) {
    return undefined;
  }
  return ['corral:plugin/', ...named.flatMap((grant) => grants[grant])];
}

// The component's entry: ENTRY.js's exports, guarded (above). It must sit
// beside ENTRY.js, in the folder componentize-js maps into the component.
const entryPath = resolve(sourcePath);
const guardedPath = join(dirname(entryPath), `.corral-entry-${process.pid}.js`);
await writeFile(guardedPath, guardedEntry(basename(entryPath), basename(guardedPath), await positions(dirname(entryPath))));
let built;
try {
  built = await componentize({
    sourcePath: guardedPath,
    witPath,
    worldName,
    disableFeatures: ['random', 'clocks', 'http', 'fetch-event'],
  });
} finally {
  await rm(guardedPath, { force: true });
}
const { component, imports } = built;

const unexpected = imports
  .map(([iface]) => iface)
  .filter((iface) => !allowed.some((prefix) => iface.startsWith(prefix)));
if (unexpected.length > 0) {
  const may = allowed.map((prefix) => `${prefix}*`).join(' and ');
  console.error(`componentize: ${sourcePath} imports ${[...new Set(unexpected)].join(', ')}; world ${worldName} allows only ${may}`);
  process.exit(1);
}
await writeFile(outPath, component);

// The generated entry module: ENTRY's exports, with `guardExports` run on
// them as the component is initialized.
function guardedEntry(entry, self, maps) {
  const from = JSON.stringify(`./${entry}`);
  return `// Generated by componentize.mjs for one build of ${entry}, and removed after it.
import * as entry from ${from};
export * from ${from};
(${guardExports})(entry, ${JSON.stringify(maps)}, ${JSON.stringify(self)});
`;
}

// The source maps under DIR (FILE.js.map beside FILE.js; node_modules and
// hidden folders skipped), as { 'FILE.js' (relative to DIR): { sources,
// lines } }: sources are the original files, relative to the current
// folder; lines[n] lists, for line n + 1 of FILE.js, one quadruple per
// mapped segment, [column, source, line, column] (0-based, columns
// ascending), decoded from the map's base64 VLQ mappings.
async function positions(dir) {
  const maps = {};
  const walk = async (folder) => {
    for (const item of await readdir(folder, { withFileTypes: true })) {
      const path = join(folder, item.name);
      if (item.isDirectory()) {
        if (!item.name.startsWith('.') && item.name !== 'node_modules') await walk(path);
      } else if (item.name.endsWith('.js.map')) {
        let map;
        try {
          map = JSON.parse(await readFile(path, 'utf8'));
        } catch {
          continue;
        }
        if (typeof map.mappings !== 'string' || !Array.isArray(map.sources)) continue;
        const root = resolve(folder, map.sourceRoot || '');
        const sources = map.sources.map((source) => {
          const original = resolve(root, source);
          const shown = relative(process.cwd(), original);
          return shown.startsWith('..') ? original : shown.split(sep).join('/');
        });
        const file = relative(dir, path.slice(0, -'.map'.length)).split(sep).join('/');
        maps[file] = { sources, lines: decodeMappings(map.mappings) };
      }
    }
  };
  await walk(dir);
  return maps;
}

function decodeMappings(mappings) {
  const digits = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let source = 0;
  let line = 0;
  let column = 0;
  return mappings.split(';').map((text) => {
    const segments = [];
    let generated = 0;
    for (const segment of text === '' ? [] : text.split(',')) {
      const fields = [];
      let value = 0;
      let shift = 0;
      for (const char of segment) {
        const digit = digits.indexOf(char);
        value += (digit & 31) * 2 ** shift;
        if (digit & 32) {
          shift += 5;
        } else {
          fields.push(value % 2 === 1 ? -(value - 1) / 2 : value / 2);
          value = 0;
          shift = 0;
        }
      }
      generated += fields[0];
      if (fields.length >= 4) {
        source += fields[1];
        line += fields[2];
        column += fields[3];
        segments.push(generated, source, line, column);
      }
    }
    return segments;
  });
}

// Runs in the component, once, as the generated entry is initialized: its
// source is copied there, so it uses nothing from this file. ENTRY is the
// plugin's module namespace, MAPS what `positions` found, SELF the
// generated module's file name (its frames, and the glue's after them, are
// left out of a stack).
function guardExports(entry, maps, self) {
  const interfaces = ['tools', 'resources', 'prompts', 'completion'];
  // Longest first, so that `lib/tool.js` wins over `tool.js`.
  const files = Object.keys(maps).sort((a, b) => b.length - a.length);
  // Guarded calls under way: only the outermost reports, so that the
  // plugin's own calls of its exports keep their errors as they are.
  let depth = 0;

  // `NAME@FILE:LINE:COLUMN` of a compiled file with a map, in the source.
  const mapped = (frame) => {
    const match = /^([^@]*)@(.*):(\d+):(\d+)$/.exec(frame);
    if (match === null) return frame;
    const [, name, file, line, column] = match;
    const key = files.find((known) => file === known || file.endsWith(`/${known}`));
    const segments = key === undefined ? undefined : maps[key].lines[Number(line) - 1];
    if (segments === undefined || segments.length === 0) return frame;
    // The last segment starting at or before the column (1-based there).
    let at = 0;
    for (let i = 4; i < segments.length && segments[i] <= Number(column) - 1; i += 4) at = i;
    const source = maps[key].sources[segments[at + 1]];
    return `${name}@${source}:${segments[at + 2] + 1}:${segments[at + 3] + 1}`;
  };

  const isSelf = (frame) => {
    const match = /@(.*):\d+:\d+$/.exec(frame);
    return match !== null && (match[1] === self || match[1].endsWith(`/${self}`));
  };

  // What the engine will print of the escaping ERR: for an Error, an object
  // of the same prototype (still `instanceof` its class, so that the glue
  // fails the call with it), but not an Error object, whose toSource() the
  // engine prints as it is.
  const reported = (err) => {
    try {
      if (!(err instanceof Error) || Object.prototype.hasOwnProperty.call(err, 'payload')) return err;
      let name = typeof err.name === 'string' && err.name !== '' ? err.name : 'Error';
      const constructor = err.constructor && err.constructor.name;
      if (name === 'Error' && typeof constructor === 'string' && constructor !== '') name = constructor;
      const message = err.message === undefined ? '' : String(err.message);
      const frames = [];
      for (const frame of String(err.stack ?? '').split('\n')) {
        if (frame === '') continue;
        if (isSelf(frame)) break;
        frames.push(mapped(frame));
      }
      const head = message === '' ? name : `${name}: ${message}`;
      const text = frames.length === 0 ? head : `${head}\nStack:\n${frames.map((frame) => `  ${frame}`).join('\n')}`;
      const report = Object.create(Object.getPrototypeOf(err));
      Object.defineProperties(report, {
        name: { value: name, configurable: true, writable: true },
        message: { value: message, configurable: true, writable: true },
        stack: { value: frames.map((frame) => `${frame}\n`).join(''), configurable: true, writable: true },
        toSource: { value: () => text, configurable: true, writable: true },
      });
      return report;
    } catch {
      return err;
    }
  };

  const guard = (fn) =>
    function (...args) {
      depth += 1;
      try {
        const result = fn.apply(this, args);
        return depth === 1 && result instanceof Promise
          ? result.catch((err) => {
              throw reported(err);
            })
          : result;
      } catch (err) {
        throw depth === 1 ? reported(err) : err;
      } finally {
        depth -= 1;
      }
    };

  // componentize-js's glue (the functions that lift a call's arguments,
  // call the export and lower its result) runs in a realm of its own,
  // beside the plugin's. StarlingMonkey creates every built-in class of the
  // plugin's realm up front, but those of the glue's only at their first
  // use there, and only the glue's setup, which uses none of them, runs
  // there before the snapshot: so each call, in its fresh instance, created
  // Promise (every export is wrapped in an async function), the typed
  // arrays and DataView again, a quarter to a half of a small call. `warm`
  // creates them, and runs an async function, in the glue's realm.
  const builtins = [
    'Promise', 'ArrayBuffer', 'DataView', 'Uint8Array', 'Int8Array', 'Uint16Array', 'Int16Array',
    'Uint32Array', 'Int32Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array',
    'Map', 'Set', 'WeakMap', 'WeakRef', 'FinalizationRegistry', 'Symbol', 'BigInt', 'Error',
    'TypeError', 'RangeError', 'SyntaxError', 'Array', 'Object', 'String', 'Number', 'Boolean',
    'Function', 'RegExp', 'Date', 'JSON', 'Math', 'Reflect',
  ];
  const warm = `for (const name of ${JSON.stringify(builtins)}) void globalThis[name]; (async function () {})();`;
  // The glue reads each exported function once as the component is
  // initialized, after this module. Until the first read, each is an
  // accessor whose getter is a non-strict function: its `caller` is the
  // glue's reader, and that reader's own `Function` runs `warm` in the
  // glue's realm. That first read turns every accessor back into the
  // property it stands for, and the mark on this realm's global says the
  // glue's realm was reached (tests/isolation.rs checks it). Should a later
  // componentize-js hide the reader, calls only cost what they did before.
  const warmed = Symbol.for('corral.glue-realm-warmed');
  const untilRead = [];
  const firstRead = (reader) => {
    for (const { iface, name, descriptor } of untilRead.splice(0)) {
      Reflect.defineProperty(iface, name, descriptor);
    }
    if (typeof reader !== 'function' || reader.constructor === Function) return;
    try {
      reader.constructor(warm)();
      Object.defineProperty(globalThis, warmed, { value: true });
    } catch {
      // Not the glue's realm after all (nothing warmed), or a global that
      // takes no mark.
    }
  };
  let getterOf;
  try {
    // A body given to Function is not strict, as `caller` requires.
    getterOf = Function('value', 'read', 'return function get() { read(get.caller); return value; };');
  } catch {
    // No Function (the module locked it away): the exports are plain.
  }
  const defineExport = (iface, name, value, enumerable) => {
    const descriptor = { value, writable: true, configurable: true, enumerable };
    if (getterOf === undefined) return Object.defineProperty(iface, name, descriptor);
    Object.defineProperty(iface, name, { get: getterOf(value, firstRead), configurable: true, enumerable });
    untilRead.push({ iface, name, descriptor });
  };

  for (const key of Object.keys(entry)) {
    const iface = entry[key];
    if (!(interfaces.includes(key) || key.startsWith('corral:plugin/')) || iface === null || typeof iface !== 'object') continue;
    // Its functions, own or inherited (an instance of a class).
    const seen = new Set(['constructor']);
    for (let object = iface; object !== null && object !== Object.prototype; object = Object.getPrototypeOf(object)) {
      for (const name of Object.getOwnPropertyNames(object)) {
        if (seen.has(name)) continue;
        seen.add(name);
        const property = Object.getOwnPropertyDescriptor(object, name);
        if (typeof property.value !== 'function') continue;
        try {
          defineExport(iface, name, guard(property.value), object === iface && property.enumerable);
        } catch {
          // Frozen: left as it is, and its errors as the engine prints them.
        }
      }
    }
  }
}

// Files for a componentize-js plugin, on wasi:filesystem 0.2 (the world
// `plugin-with-files`): the engine has no Node `fs`, so this module opens,
// reads, writes and renames through the directories the manifest grants
// (`[[dirs]]`), which getDirectories() lists with their guest paths.
//
// Errors from the interface are thrown by the bindings as an Error whose
// `payload` is the wasi:filesystem error-code ('no-entry', 'read-only',
// 'access', ...); they become FileErrors naming the path and the code.

import { getDirectories } from 'wasi:filesystem/preopens@0.2.12';
import { now } from 'wasi:clocks/wall-clock@0.2.12';
import { locate } from './location.js';

/** A file could not be read or written: the message is for the model. */
export class FileError extends Error {}

/** Bytes read per call: the host answers at most what it is asked for. */
const CHUNK = 1 << 20;
/** How many temporary names a write tries before giving up. */
const TEMP_ATTEMPTS = 16;

const codeOf = (err) => (err && typeof err.payload === 'string' ? err.payload : undefined);

/** The codes with which a grant of mode "ro" refuses a change. */
const REFUSED = new Set(['read-only', 'access', 'not-permitted']);

/**
 * Throws a FileError for `err` (rethrows anything else). Only a change
 * (`changing`: a create, write or rename) gets the hint about the grant's
 * mode: a read-only grant opens, reads and looks up files as a read-write
 * one does, so an open refused with `not-permitted` (a symbolic link out of
 * the granted directories) has another cause.
 */
function fail(what, path, err, changing = false) {
  const code = codeOf(err);
  if (code === undefined) throw err;
  const hint = changing && REFUSED.has(code) ? ' (is its [[dirs]] grant mode "rw"?)' : '';
  throw new FileError(`cannot ${what} ${path}: ${code}${hint}`);
}

/** The granted directories: [{ descriptor, guest }], in the manifest's order. */
export function grants() {
  return getDirectories().map(([descriptor, guest]) => ({ descriptor, guest }));
}

/** The grant holding `path` and the path inside it, or a FileError saying why none does. */
function place(path, granted) {
  const found = locate(path, granted.map((g) => g.guest));
  if (found === undefined) {
    const list = granted.length > 0 ? granted.map((g) => g.guest).join(', ') : 'none';
    throw new FileError(`${path} is not a file inside a directory granted in the manifest's [[dirs]] (granted: ${list})`);
  }
  return { dir: granted[found.index].descriptor, relative: found.relative };
}

const FOLLOW = { symlinkFollow: true };

function readAll(dir, relative, path) {
  let file;
  try {
    file = dir.openAt(FOLLOW, relative, {}, { read: true });
  } catch (err) {
    if (codeOf(err) === 'no-entry') return undefined;
    fail('open', path, err);
  }
  const parts = [];
  let size = 0;
  try {
    for (;;) {
      const [bytes, end] = file.read(BigInt(CHUNK), BigInt(size));
      parts.push(bytes);
      size += bytes.length;
      if (end || bytes.length === 0) break;
    }
  } catch (err) {
    fail('read', path, err);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length;
  }
  // As Node's readFile(path, 'utf-8'): invalid sequences become U+FFFD and a
  // byte order mark is kept (it then fails to parse, in both servers).
  return new TextDecoder('utf-8', { ignoreBOM: true }).decode(all);
}

/** A name for the temporary file beside `relative`, unlikely to be another call's. */
function tempName(relative, attempt) {
  const { seconds, nanoseconds } = now();
  const stamp = `${seconds.toString(16)}${nanoseconds.toString(16).padStart(8, '0')}${attempt.toString(16)}`;
  return `${relative}.${stamp}.tmp`;
}

/**
 * Replaces the file at `relative` with `text`, as the original does: the
 * bytes go to a temporary file in the same directory, which is then renamed
 * over it, so that a call cut short (fuel, timeout) leaves the old file
 * whole rather than a truncated one. The temporary file is created
 * exclusively: concurrent calls never share one.
 */
function writeAll(dir, relative, path, text) {
  const bytes = new TextEncoder().encode(text);
  let temp;
  let file;
  for (let attempt = 0; file === undefined; attempt += 1) {
    temp = tempName(relative, attempt);
    try {
      file = dir.openAt(FOLLOW, temp, { create: true, exclusive: true }, { write: true });
    } catch (err) {
      if (codeOf(err) !== 'exist' || attempt + 1 >= TEMP_ATTEMPTS) fail('create a temporary file for', path, err, true);
    }
  }
  try {
    let written = 0;
    while (written < bytes.length) {
      const count = Number(file.write(bytes.subarray(written), BigInt(written)));
      if (count === 0) throw new FileError(`cannot write ${path}: the disk took no bytes`);
      written += count;
    }
    dir.renameAt(temp, dir, relative);
  } catch (err) {
    // Never leave a stray temporary file behind on failure.
    try {
      dir.unlinkFileAt(temp);
    } catch {
      // Already gone, or the directory refuses: the first error matters.
    }
    if (err instanceof FileError) throw err;
    fail('write', path, err, true);
  }
}

/** graph.js's file: the file at the absolute guest `path`. */
export function fileAt(path, granted) {
  const { dir, relative } = place(path, granted);
  return {
    read: () => readAll(dir, relative, path),
    write: (text) => writeAll(dir, relative, path, text),
  };
}

/** location.js's `files`, for the legacy migration: exists and rename. */
export function pathOps(granted) {
  const exists = (path) => {
    const { dir, relative } = place(path, granted);
    try {
      dir.statAt(FOLLOW, relative);
      return true;
    } catch (err) {
      if (codeOf(err) === 'no-entry') return false;
      return fail('look for', path, err);
    }
  };
  const rename = (from, to) => {
    const source = place(from, granted);
    const target = place(to, granted);
    try {
      source.dir.renameAt(source.relative, target.dir, target.relative);
    } catch (err) {
      // Every call checks for the legacy file, so concurrent first calls may
      // all see memory.json and no memory.jsonl: all but the first find the
      // source gone, renamed by the first. The migration is then done.
      if (codeOf(err) === 'no-entry' && !exists(from) && exists(to)) return;
      fail(`rename ${from} to`, to, err, true);
    }
  };
  return { exists, rename };
}

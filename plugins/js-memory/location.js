// Where the memory file is, decided as the reference server
// (@modelcontextprotocol/server-memory 2026.8.31, ensureMemoryFilePath)
// decides it, with one change of base: the original resolves a relative
// MEMORY_FILE_PATH, and puts its default memory.jsonl, in the folder of its
// own script (dist/); the plugin has no such folder, so its base is `home`,
// the guest path of the first directory its manifest grants.
//
//   MEMORY_FILE_PATH set and not empty: that path, joined to home when
//     relative;
//   otherwise home/memory.jsonl, after the original's legacy migration: when
//     home/memory.json exists and home/memory.jsonl does not, memory.json is
//     renamed to memory.jsonl (older versions of the server wrote the same
//     JSONL lines under that name).
//
// Paths are POSIX paths in the guest's view of the granted directories;
// `locate` maps one onto a grant.

/** `path` with "." and ".." resolved and repeated slashes collapsed, as Node's path.normalize. */
export function normalize(path) {
  const absolute = path.startsWith('/');
  const parts = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length > 0 && parts[parts.length - 1] !== '..') parts.pop();
      else if (!absolute) parts.push('..');
    } else {
      parts.push(part);
    }
  }
  const joined = parts.join('/');
  if (absolute) return `/${joined}`;
  return joined === '' ? '.' : joined;
}

export const join = (base, path) => normalize(`${base}/${path}`);

/**
 * The memory file's path. `env` is the environment (MEMORY_FILE_PATH);
 * `home` the base folder; `files` has exists(path) and rename(from, to),
 * used only for the migration.
 */
export function memoryFilePath(env, home, files) {
  const configured = env.MEMORY_FILE_PATH;
  if (configured) {
    return configured.startsWith('/') ? normalize(configured) : join(home, configured);
  }
  const legacy = join(home, 'memory.json');
  const current = join(home, 'memory.jsonl');
  if (files.exists(legacy) && !files.exists(current)) {
    files.rename(legacy, current);
  }
  return current;
}

/**
 * Which granted directory holds the absolute, normalized `path`: the index in
 * `granted` (guest paths) of the innermost one, and the path relative to it.
 * Undefined when no grant holds it.
 */
export function locate(path, granted) {
  let best;
  granted.forEach((guest, index) => {
    const root = normalize(guest);
    const prefix = root === '/' ? '/' : `${root}/`;
    if (!path.startsWith(prefix) || path === root) return;
    if (best === undefined || root.length > best.root.length) {
      best = { index, root, relative: path.slice(prefix.length) };
    }
  });
  return best && { index: best.index, relative: best.relative };
}

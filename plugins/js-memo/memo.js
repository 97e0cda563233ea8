// The memo logic, apart from the bindings so that Node can test it
// (memo.test.js) with a Map for a store.
//
// Each memo is one key of the bucket, `memo/<name>`, whose value is the
// memo's JSON text (UTF-8). One key per memo keeps every save a single small
// write, and lets a listing read the memos of a prefix in batches. Names
// with slashes ("project-x/deadline") group memos so that a prefix lists or
// clears a group.
//
// There is no expiry: the build leaves SpiderMonkey's clocks out (see
// plugins/build-js.d/componentize.mjs), and Date.now() does not move there.

/** A mistake the model can correct (a memo that does not exist). */
export class MemoError extends Error {}

export const PREFIX = 'memo/';
/** The longest name, in characters (the host allows keys of 1 KiB). */
export const MAX_NAME = 200;
/** The largest value, as JSON text: memos are notes, not files. */
export const MAX_VALUE_CHARS = 64 * 1024;
/** At most this many memos are listed with their values. */
export const LIST_LIMIT = 200;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Saves `value` (any JSON) under `name`, replacing what was there. `store` is
 * { get, set, exists, keys, getMany, deleteMany } (plugin.js has the one on
 * wasi:keyvalue).
 */
export function save(store, name, value) {
  checkName(name);
  const text = JSON.stringify(value);
  if (text === undefined) throw new MemoError('the value must be JSON (a string, number, object, ...)');
  if (text.length > MAX_VALUE_CHARS) {
    throw new MemoError(`the value is ${text.length} characters as JSON; a memo holds at most ${MAX_VALUE_CHARS}`);
  }
  store.set(PREFIX + name, encoder.encode(text));
}

/** The value saved under `name`; a MemoError when there is none. */
export function recall(store, name) {
  checkName(name);
  const bytes = store.get(PREFIX + name);
  if (bytes === undefined) throw new MemoError(`there is no memo named "${name}" (memo_list shows the names)`);
  return decode(bytes);
}

/**
 * The memos whose names start with `prefix`, by name: `total` counts them
 * all, `memos` holds the first LIST_LIMIT as { name, value }.
 */
export function list(store, prefix) {
  const keys = names(store, prefix).map((name) => PREFIX + name);
  const first = keys.slice(0, LIST_LIMIT);
  const memos = [];
  store.getMany(first).forEach((bytes, i) => {
    // undefined: deleted by another call since it was listed.
    if (bytes !== undefined) memos.push({ name: first[i].slice(PREFIX.length), value: decode(bytes) });
  });
  return { total: keys.length, memos };
}

/** Deletes the memo `name`; returns whether there was one. */
export function forget(store, name) {
  checkName(name);
  const key = PREFIX + name;
  if (!store.exists(key)) return false;
  store.deleteMany([key]);
  return true;
}

/** Deletes every memo whose name starts with `prefix` ("" is all); returns how many. */
export function clear(store, prefix) {
  const keys = names(store, prefix).map((name) => PREFIX + name);
  if (keys.length > 0) store.deleteMany(keys);
  return keys.length;
}

/** One memo as the model reads it in a listing: its name and the start of its value. */
export function preview(memo) {
  const text = JSON.stringify(memo.value);
  return `${memo.name}: ${text.length > 80 ? `${text.slice(0, 77)}...` : text}`;
}

function names(store, prefix) {
  return [...store.keys()]
    .filter((key) => key.startsWith(PREFIX + prefix))
    .map((key) => key.slice(PREFIX.length))
    .sort();
}

function decode(bytes) {
  return JSON.parse(decoder.decode(bytes));
}

function checkName(name) {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME) {
    throw new MemoError(`a memo's name is 1 to ${MAX_NAME} characters`);
  }
}

// Corral example plugin in JavaScript: memos, a small memory the model keeps
// between conversations (the user's preferences, a project's decisions, a
// result worth not computing twice). It saves any JSON value under a name,
// recalls it, lists memos by name prefix and forgets them.
//
// It shows a JavaScript plugin keeping state through the standard
// `wasi:keyvalue@0.2.0-draft` interfaces: `store` (get, set, exists, paged
// list-keys) and `batch` (get-many, delete-many). The store exists only with
// the grant in js-memo.toml beside the component:
//
//   [state]
//   buckets = ["default"]
//
// plugins/build-js sees that [state] table and builds this project against
// the world `plugin-with-state` (wit/plugin-with-state.wit), which adds the
// wasi:keyvalue imports to `plugin`. This file is the WIT glue; the memo
// logic is in memo.js.

import { log } from 'corral:plugin/host@0.3.0';
import { open } from 'wasi:keyvalue/store@0.2.0-draft';
import { getMany, deleteMany } from 'wasi:keyvalue/batch@0.2.0-draft';
import { MemoError, MAX_NAME, LIST_LIMIT, save, recall, list, forget, clear, preview } from './memo.js';

/** The bucket js-memo.toml grants; opening any other is refused by the host. */
const BUCKET = 'default';
/** The host answers get-many and delete-many for at most 1,000 keys at once. */
const BATCH = 1000;

/** The store refused (the quota is full, the grant is missing): the host's message is meant to be shown. */
class StoreError extends Error {}

/**
 * Runs one binding call. A `result` whose error case comes back is thrown
 * by the bindings as an Error whose `payload` is the wasi:keyvalue `error`
 * variant ({ tag: 'other', val: message }, or 'access-denied',
 * 'no-such-store'); that becomes a StoreError with the host's words.
 */
function kv(operation) {
  try {
    return operation();
  } catch (err) {
    const error = err && err.payload;
    if (error && error.tag === 'other') throw new StoreError(`the store refused: ${error.val}`);
    if (error && error.tag === 'access-denied') {
      throw new StoreError(`the store refused access to bucket "${BUCKET}"; js-memo.toml must grant it`);
    }
    if (error && error.tag === 'no-such-store') throw new StoreError('the store is missing');
    throw err;
  }
}

/** memo.js's store, on a wasi:keyvalue bucket. */
function openStore() {
  const bucket = kv(() => open(BUCKET));
  return {
    get: (key) => kv(() => bucket.get(key)),
    set: (key, bytes) => kv(() => bucket.set(key, bytes)),
    exists: (key) => kv(() => bucket.exists(key)),
    *keys() {
      // list-keys answers a page at a time; the cursor is undefined after the last.
      let cursor;
      do {
        const page = kv(() => bucket.listKeys(cursor));
        yield* page.keys;
        cursor = page.cursor;
      } while (cursor !== undefined);
    },
    getMany(keys) {
      const values = [];
      for (let start = 0; start < keys.length; start += BATCH) {
        // Each answer is [key, value], or undefined for a key that is gone.
        const found = kv(() => getMany(bucket, keys.slice(start, start + BATCH)));
        values.push(...found.map((pair) => pair && pair[1]));
      }
      return values;
    },
    deleteMany(keys) {
      for (let start = 0; start < keys.length; start += BATCH) {
        kv(() => deleteMany(bucket, keys.slice(start, start + BATCH)));
      }
    },
  };
}

const NAME = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_NAME,
  description: 'The memo\'s name; slashes group memos, e.g. "user/units" or "trip-2026/hotel".',
};
const PREFIX = (what) => ({ type: 'string', maxLength: MAX_NAME, description: `Only memos whose names start with this${what}.` });

const object = (properties, required) => ({ type: 'object', properties, required, additionalProperties: false });
const hints = (readOnly, destructive, idempotent) => ({
  readOnlyHint: readOnly, destructiveHint: destructive, idempotentHint: idempotent, openWorldHint: false,
});

const TOOLS = [
  {
    name: 'memo_save',
    title: 'Save a memo',
    description:
      'Remember a value (any JSON) under a name, across conversations, replacing what the name held. ' +
      'Use it for what the user will want remembered next time: preferences, decisions, facts about their work.',
    inputSchema: object({ name: NAME, value: { description: 'What to remember: any JSON value.' } }, ['name', 'value']),
    outputSchema: object({ name: { type: 'string' } }, ['name']),
    annotations: hints(false, true, true),
    run: (store, args) => {
      save(store, args.name, args.value);
      return { text: `Saved "${args.name}".`, structured: { name: args.name } };
    },
  },
  {
    name: 'memo_recall',
    title: 'Recall a memo',
    description: 'Return the value saved under a name, as JSON.',
    inputSchema: object({ name: NAME }, ['name']),
    outputSchema: object({ name: { type: 'string' }, value: { description: 'The value, as it was saved.' } }, ['name', 'value']),
    annotations: hints(true, false, true),
    run: (store, args) => {
      const value = recall(store, args.name);
      return { text: JSON.stringify(value), structured: { name: args.name, value } };
    },
  },
  {
    name: 'memo_list',
    title: 'List memos',
    description: `List the saved memos by name, with the start of each value (at most ${LIST_LIMIT}; narrow with prefix).`,
    inputSchema: object({ prefix: { ...PREFIX(''), default: '' } }, []),
    outputSchema: object(
      {
        total: { type: 'integer', description: 'How many memos match, listed or not.' },
        memos: {
          type: 'array',
          items: object({ name: { type: 'string' }, value: {} }, ['name', 'value']),
        },
      },
      ['total', 'memos'],
    ),
    annotations: hints(true, false, true),
    run: (store, args) => {
      const { total, memos } = list(store, args.prefix ?? '');
      const lines = memos.map(preview);
      if (total > memos.length) lines.push(`... and ${total - memos.length} more (narrow with prefix)`);
      return { text: lines.length > 0 ? lines.join('\n') : 'No memos.', structured: { total, memos } };
    },
  },
  {
    name: 'memo_forget',
    title: 'Forget a memo',
    description: 'Delete the memo saved under a name.',
    inputSchema: object({ name: NAME }, ['name']),
    outputSchema: object({ forgotten: { type: 'boolean', description: 'False when there was no such memo.' } }, ['forgotten']),
    annotations: hints(false, true, true),
    run: (store, args) => {
      const forgotten = forget(store, args.name);
      return { text: forgotten ? `Forgot "${args.name}".` : `There was no memo named "${args.name}".`, structured: { forgotten } };
    },
  },
  {
    name: 'memo_clear',
    title: 'Forget a group of memos',
    description: 'Delete every memo whose name starts with prefix (an empty prefix deletes them all). Returns how many went.',
    inputSchema: object({ prefix: PREFIX(' ("" for every memo)') }, ['prefix']),
    outputSchema: object({ removed: { type: 'integer' } }, ['removed']),
    annotations: hints(false, true, true),
    run: (store, args) => {
      const removed = clear(store, args.prefix);
      return { text: `Forgot ${removed} memo${removed === 1 ? '' : 's'}.`, structured: { removed } };
    },
  },
];

const textContent = (text) => ({ tag: 'text', val: { text } });
const errorResult = (message) => ({ content: [textContent(message)], isError: true });

export const tools = {
  list() {
    return TOOLS.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: JSON.stringify(tool.inputSchema),
      outputSchema: JSON.stringify(tool.outputSchema),
      annotations: { title: tool.title, ...tool.annotations },
      icons: [],
    }));
  },

  call(name, argumentsJson) {
    const tool = TOOLS.find((t) => t.name === name);
    if (!tool) return errorResult(`unknown tool: ${name}`);
    // The host has validated the arguments against the input schema.
    const args = JSON.parse(argumentsJson);
    try {
      const result = tool.run(openStore(), args);
      return { content: [textContent(result.text)], structuredContent: JSON.stringify(result.structured), isError: false };
    } catch (err) {
      // A MemoError is the caller's mistake, a StoreError the store's
      // refusal: both are for the model to read. Anything else is a bug
      // here, still reported rather than trapping.
      if (err instanceof MemoError || err instanceof StoreError) return errorResult(err.message);
      log('error', `${name} failed: ${(err && err.stack) || err}`);
      return errorResult(`internal error in ${name}: ${err}`);
    }
  },
};

// Unit tests of the sequential-thinking logic, run by Node outside the
// component with a Map for a store:
//   node --test plugins/js-sequential-thinking/
// (plugin.js is not imported: its corral:plugin and wasi:keyvalue imports
// exist only in the component.) tests/reference.rs compares the built
// plugin with the reference server itself.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { META, thoughtKey, parseArguments, processThought, formatThought } from './thinking.js';

function mapStore() {
  const data = new Map();
  return { data, get: (key) => data.get(key), set: (key, bytes) => data.set(key, bytes) };
}

const call = (store, args) => {
  const parsed = parseArguments(args);
  return parsed.error !== undefined ? { text: parsed.error, isError: true } : processThought(store, parsed.input);
};
const thought = (n, total, extra = {}) => ({ thought: `t${n}`, nextThoughtNeeded: true, thoughtNumber: n, totalThoughts: total, ...extra });

test('answers the reference text, two-space JSON, and counts the history in the store', () => {
  const store = mapStore();
  const first = call(store, thought(1, 3));
  assert.equal(first.text, '{\n  "thoughtNumber": 1,\n  "totalThoughts": 3,\n  "nextThoughtNeeded": true,\n  "branches": [],\n  "thoughtHistoryLength": 1\n}');
  assert.deepEqual(first.structured, { thoughtNumber: 1, totalThoughts: 3, nextThoughtNeeded: true, branches: [], thoughtHistoryLength: 1 });
  assert.equal(call(store, thought(2, 3)).structured.thoughtHistoryLength, 2);
  assert.ok(store.data.has(thoughtKey(1)) && store.data.has(thoughtKey(2)) && store.data.has(META));
});

test('raises totalThoughts to thoughtNumber when it is exceeded', () => {
  const result = call(mapStore(), thought(7, 3));
  assert.equal(result.structured.totalThoughts, 7);
});

test('coerces "true"/"false" strings in any case, and refuses other strings with zod\'s words', () => {
  assert.equal(call(mapStore(), thought(1, 1, { nextThoughtNeeded: 'FALSE' })).structured.nextThoughtNeeded, false);
  const refused = call(mapStore(), thought(1, 1, { nextThoughtNeeded: 'maybe', isRevision: 'x' }));
  assert.equal(refused.isError, true);
  assert.equal(
    refused.text,
    'MCP error -32602: Input validation error: Invalid arguments for tool sequentialthinking: ' +
      'Expected boolean or "true"/"false" string, received "maybe" at nextThoughtNeeded\n' +
      'Expected boolean or "true"/"false" string, received "x" at isRevision',
  );
});

test('lists branches in JavaScript key order: integer-like ids first', () => {
  const store = mapStore();
  for (const id of ['10', 'b', '2', 'a']) call(store, thought(2, 3, { branchFromThought: 1, branchId: id }));
  // No branch without both branchFromThought and a non-empty branchId.
  call(store, thought(2, 3, { branchFromThought: 1, branchId: '' }));
  call(store, thought(2, 3, { branchId: 'c' }));
  const result = call(store, thought(3, 3, { branchFromThought: 1, branchId: 'b' }));
  assert.deepEqual(result.structured.branches, ['2', '10', 'b', 'a']);
  assert.equal(result.structured.thoughtHistoryLength, 7);
});

test('a branch id naming an Object.prototype member fails as the reference does, after counting the thought', () => {
  const store = mapStore();
  for (const id of ['constructor', '__proto__']) {
    const result = call(store, thought(1, 1, { branchFromThought: 1, branchId: id }));
    assert.equal(result.isError, true);
    assert.deepEqual(JSON.parse(result.text), { error: 'this.branches[input.branchId].push is not a function', status: 'failed' });
  }
  assert.deepEqual(call(store, thought(1, 1)).structured.branches, []);
  assert.equal(call(store, thought(1, 1)).structured.thoughtHistoryLength, 4);
});

test('drops unknown arguments, as zod does', () => {
  const parsed = parseArguments({ ...thought(1, 1), extra: 5 });
  assert.equal('extra' in parsed.input, false);
});

test('formats a thought for the log as the reference does, without colours', () => {
  assert.equal(formatThought(thought(1, 3)), '\n┌──────────────────┐\n│ 💭 Thought 1/3 │\n├──────────────────┤\n│ t1               │\n└──────────────────┘');
});

test('a thought the store refuses is not counted', () => {
  const store = mapStore();
  call(store, thought(1, 2));
  const full = { get: store.get, set: (key, bytes) => { if (key.startsWith('thought/')) throw Object.assign(new Error('quota'), { storeError: true }); store.set(key, bytes); } };
  assert.throws(() => call(full, thought(2, 2)), /quota/);
  assert.equal(call(store, thought(2, 2)).structured.thoughtHistoryLength, 2);
});

// Unit tests of the memo logic, run by Node outside the component with a
// Map for a store:
//   node --test plugins/js-memo/
// (plugin.js is not imported: its corral:plugin and wasi:keyvalue imports
// exist only in the component.)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoError, LIST_LIMIT, MAX_VALUE_CHARS, save, recall, list, forget, clear, preview } from './memo.js';

/** memo.js's store on a Map, counting the batches it is asked for. */
function mapStore() {
  const data = new Map();
  return {
    data,
    batches: 0,
    get: (key) => data.get(key),
    set: (key, bytes) => data.set(key, bytes),
    exists: (key) => data.has(key),
    keys: () => data.keys(),
    getMany(keys) {
      this.batches += 1;
      return keys.map((key) => data.get(key));
    },
    deleteMany(keys) {
      this.batches += 1;
      keys.forEach((key) => data.delete(key));
    },
  };
}

test('a saved value is recalled as it was given, and saving again replaces it', () => {
  const store = mapStore();
  save(store, 'units', { length: 'km', weight: 'kg' });
  assert.deepEqual(recall(store, 'units'), { length: 'km', weight: 'kg' });
  save(store, 'units', 'imperial');
  assert.equal(recall(store, 'units'), 'imperial');
  assert.equal(store.data.size, 1);
});

test('a listing is sorted by name, narrowed by prefix, and read in one batch', () => {
  const store = mapStore();
  save(store, 'user/b', 2);
  save(store, 'user/a', 1);
  save(store, 'other', [3]);
  assert.deepEqual(list(store, 'user/'), { total: 2, memos: [{ name: 'user/a', value: 1 }, { name: 'user/b', value: 2 }] });
  assert.deepEqual(list(store, '').memos.map((memo) => memo.name), ['other', 'user/a', 'user/b']);
  assert.deepEqual(list(store, 'nobody/'), { total: 0, memos: [] });
  assert.equal(store.batches, 3);
});

test('a listing holds at most LIST_LIMIT memos but counts them all', () => {
  const store = mapStore();
  for (let i = 0; i < LIST_LIMIT + 5; i += 1) save(store, `n${String(i).padStart(4, '0')}`, i);
  const { total, memos } = list(store, '');
  assert.equal(total, LIST_LIMIT + 5);
  assert.equal(memos.length, LIST_LIMIT);
  assert.equal(memos[0].name, 'n0000');
});

test('forget says whether there was a memo', () => {
  const store = mapStore();
  save(store, 'a', true);
  assert.equal(forget(store, 'a'), true);
  assert.equal(forget(store, 'a'), false);
  assert.throws(() => recall(store, 'a'), MemoError);
});

test('clear deletes a group in one batch and leaves the rest', () => {
  const store = mapStore();
  ['trip/hotel', 'trip/flight', 'tripod', 'home'].forEach((name) => save(store, name, name));
  assert.equal(clear(store, 'trip/'), 2);
  assert.equal(store.batches, 1);
  assert.deepEqual(list(store, '').memos.map((memo) => memo.name), ['home', 'tripod']);
  assert.equal(clear(store, ''), 2);
  assert.equal(store.data.size, 0);
});

test('names and values out of bounds are MemoErrors that say the bound', () => {
  const store = mapStore();
  assert.throws(() => save(store, '', 1), /1 to 200 characters/);
  assert.throws(() => save(store, 'big', 'x'.repeat(MAX_VALUE_CHARS)), /at most 65536/);
  assert.throws(() => recall(store, 'missing'), /no memo named "missing"/);
  assert.equal(store.data.size, 0);
});

test('a preview shows the start of a long value', () => {
  assert.equal(preview({ name: 'n', value: 'short' }), 'n: "short"');
  const long = preview({ name: 'n', value: 'y'.repeat(200) });
  assert.equal(long.length, 'n: '.length + 80);
  assert.ok(long.endsWith('...'));
});

// Unit tests of checklists.js: node --test (from this folder).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CHECKLISTS, complete, markdown, read, uriOf } from './checklists.js';

test('every checklist reads as markdown at its URI', () => {
  for (const name of Object.keys(CHECKLISTS)) {
    assert.equal(read(uriOf(name)), markdown(name));
    assert.match(markdown(name), /^# .*\n\n- \[ \] /);
  }
});

test('other URIs and names read nothing', () => {
  assert.equal(read('other://release'), undefined);
  assert.equal(read('checklist://nope'), undefined);
  assert.equal(markdown('toString'), undefined);
});

test('names complete by prefix', () => {
  assert.deepEqual(complete('R'), ['release', 'review']);
  assert.deepEqual(complete('x'), []);
});

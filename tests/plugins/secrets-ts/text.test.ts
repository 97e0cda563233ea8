import assert from 'node:assert/strict';
import { test } from 'node:test';
import { text } from './text.js';

test('a text result holds the text and the error flag', () => {
  assert.deepEqual(text('none'), { content: [{ tag: 'text', val: { text: 'none' } }], isError: false });
  assert.equal(text('error: io: x', true).isError, true);
});

// Unit tests of greetings.ts on Node: ./test

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GREETINGS, completeLanguage, helloIn, markdown } from './greetings.js';

test('hello in a known language', () => {
  assert.equal(helloIn('french'), 'Bonjour');
  assert.equal(helloIn('klingon'), undefined);
  assert.equal(helloIn('constructor'), undefined);
});

test('the listing has every greeting', () => {
  assert.ok(markdown().includes('- german: Hallo\n'));
  assert.equal(markdown().split('\n').length - 1, Object.keys(GREETINGS).length);
});

test('languages complete by prefix', () => {
  assert.deepEqual(completeLanguage('Fr'), ['french']);
  assert.equal(completeLanguage('').length, Object.keys(GREETINGS).length);
});

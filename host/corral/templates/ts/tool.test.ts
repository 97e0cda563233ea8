// Unit tests of tool.ts on Node (no component needed): ./test compiles
// them with tsc and runs them with node --test. (plugin.ts is not imported:
// its corral:plugin/host import exists only in the component.)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ToolFailure, greet } from './tool.js';

test('greets by name', () => {
  assert.equal(greet('Ada'), 'Hello, Ada!');
});

test('a blank name is a tool failure', () => {
  assert.throws(() => greet('  '), ToolFailure);
});

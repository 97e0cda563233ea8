// Unit tests of the js-json tools, run by Node outside the component:
//   node --test plugins/js-json/
// (plugin.js is not imported: its corral:plugin/host import exists only in the component.)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ToolError, parsePath, jsonQuery, jsonDiff, jsonFormat, jsonToCsv } from './json-tools.js';

const store = JSON.stringify({
  store: {
    book: [{ title: 'A', price: 8.95, id: 1 }, { title: 'B', price: 12.99, id: 2 }],
    'odd key': { id: 3 },
  },
});

const paths = (result) => result.structured.matches.map((m) => m.path);

test('json_query selects children, indexes, wildcards and descendants', () => {
  assert.deepEqual(paths(jsonQuery({ json: store, path: '$.store.book[*].price' })), ['/store/book/0/price', '/store/book/1/price']);
  assert.equal(jsonQuery({ json: store, path: '$.store.book[-1].title' }).text, '"B"');
  assert.deepEqual(paths(jsonQuery({ json: store, path: '$..id' })), ['/store/book/0/id', '/store/book/1/id', '/store/odd key/id']);
  assert.deepEqual(jsonQuery({ json: store, path: "$.store['odd key'].id" }).structured.matches, [{ path: '/store/odd key/id', value: 3 }]);
  assert.equal(jsonQuery({ json: '{"a/b":{"~":1}}', path: '$["a/b"]["~"]' }).structured.matches[0].path, '/a~1b/~0');
  assert.equal(jsonQuery({ json: store, path: '$..*' }).structured.count, 12);
  assert.deepEqual(jsonQuery({ json: store, path: '$.nothing' }).structured, { count: 0, truncated: false, matches: [] });
  assert.deepEqual(jsonQuery({ json: '[1,2]', path: '$' }).structured.matches, [{ path: '', value: [1, 2] }]);
});

test('json_query rejects bad paths and bad JSON with a ToolError', () => {
  assert.throws(() => parsePath('$.store[book'), ToolError);
  assert.throws(() => parsePath('$.'), ToolError);
  assert.throws(() => parsePath('$..[0]'), ToolError);
  assert.throws(() => jsonQuery({ json: '{', path: '$' }), /"json" is not valid JSON/);
});

test('json_diff lists replace, add and remove changes', () => {
  const result = jsonDiff({ before: '{"a":1,"b":[1,2,3],"c":{"d":true}}', after: '{"c":{"e":null,"d":true},"b":[1,2],"a":2,"f":"x"}' });
  assert.deepEqual(result.structured, {
    equal: false, count: 4, add: 2, remove: 1, replace: 1,
    changes: [
      { op: 'replace', path: '/a', before: 1, after: 2 },
      { op: 'remove', path: '/b/2', before: 3 },
      { op: 'add', path: '/c/e', after: null },
      { op: 'add', path: '/f', after: 'x' },
    ],
  });
  assert.equal(jsonDiff({ before: '{"a":[1,{"b":0}]}', after: '{ "a": [1, {"b": -0}] }' }).structured.equal, true);
  assert.equal(jsonDiff({ before: '{"a":1}', after: '[1]' }).structured.changes[0].path, '');
  assert.throws(() => jsonDiff({ before: '1', after: 'nope' }), /"after" is not valid JSON/);
});

test('json_format pretty-prints, minifies and sorts keys', () => {
  assert.equal(jsonFormat({ json: '{"b":1,"a":[1,{"d":0,"c":1}]}', indent: 0, sort_keys: true }).text, '{"a":[1,{"c":1,"d":0}],"b":1}');
  assert.equal(jsonFormat({ json: '[1]' }).text, '[\n  1\n]');
  assert.throws(() => jsonFormat({ json: '{"a":1,}' }), ToolError);
});

test('json_to_csv writes a header and quoted fields', () => {
  const rows = JSON.stringify([{ name: 'Ada, L', age: 36 }, { name: 'Alan "T"', tags: [1, 2] }, { age: null }]);
  assert.equal(jsonToCsv({ json: rows }).text, 'name,age,tags\r\n"Ada, L",36,\r\n"Alan ""T""",,"[1,2]"\r\n,,\r\n');
  assert.equal(jsonToCsv({ json: rows, columns: ['age'] }).text, 'age\r\n36\r\n\r\n\r\n');
  assert.throws(() => jsonToCsv({ json: '{"a":1}' }), /must be an array of objects, but it is an object/);
  assert.throws(() => jsonToCsv({ json: '[{"a":1},[2]]' }), /item 1 is an array/);
});

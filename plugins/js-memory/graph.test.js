// Unit tests of the memory plugin's logic, run by Node outside the component
// with a variable for a file:
//   node --test plugins/js-memory/
// (plugin.js and files.js are not imported: their corral:plugin and wasi
// imports exist only in the component.) tests/reference/memory.rs compares
// the built plugin, and the files it writes, with the reference server.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as graph from './graph.js';
import { normalize, join, memoryFilePath, locate } from './location.js';

/** A file held in a variable; `text` undefined means it does not exist. */
function memoryFile(text) {
  const file = { text, writes: 0 };
  file.read = () => file.text;
  file.write = (value) => {
    file.text = value;
    file.writes += 1;
  };
  return file;
}

const entity = (name, entityType = 'person', observations = []) => ({ name, entityType, observations });
const relation = (from, to, relationType = 'knows') => ({ from, to, relationType });

test('a missing file is an empty graph, and an empty graph is an empty file', () => {
  const file = memoryFile(undefined);
  assert.deepEqual(graph.readGraph(file), { entities: [], relations: [] });
  graph.deleteEntities(file, ['nobody']);
  assert.equal(file.text, '');
});

test('writes the original format: type first, entities before relations, no final newline', () => {
  const file = memoryFile(undefined);
  graph.createRelations(file, [relation('Ada', 'Bob')]);
  graph.createEntities(file, [entity('Ada', 'person', ['writes code'])]);
  assert.equal(
    file.text,
    '{"type":"entity","name":"Ada","entityType":"person","observations":["writes code"]}\n' +
      '{"type":"relation","from":"Ada","to":"Bob","relationType":"knows"}',
  );
});

test('reads what it writes, skipping blank lines and lines of other types', () => {
  const text =
    '\n{"observations":["o"],"entityType":"t","name":"n","type":"entity"}\n  \n' +
    '{"type":"other","name":"x"}\n{"relationType":"r","to":"b","from":"a","type":"relation"}\r\n';
  assert.deepEqual(graph.parseGraph(text), {
    entities: [{ name: 'n', entityType: 't', observations: ['o'] }],
    relations: [{ from: 'a', to: 'b', relationType: 'r' }],
  });
  assert.throws(() => graph.parseGraph('{"type":"entity"'), SyntaxError);
});

test('create_entities ignores names already in the graph, but not repeats within one call', () => {
  const file = memoryFile(undefined);
  assert.deepEqual(graph.createEntities(file, [entity('A')]), [entity('A')]);
  assert.deepEqual(graph.createEntities(file, [entity('A', 'other'), entity('B'), entity('B', 'again')]), [
    entity('B'),
    entity('B', 'again'),
  ]);
  assert.equal(graph.readGraph(file).entities.length, 3);
});

test('create_relations ignores exact duplicates and does not check the ends exist', () => {
  const file = memoryFile(undefined);
  assert.deepEqual(graph.createRelations(file, [relation('X', 'Y')]), [relation('X', 'Y')]);
  assert.deepEqual(graph.createRelations(file, [relation('X', 'Y'), relation('X', 'Y', 'likes')]), [
    relation('X', 'Y', 'likes'),
  ]);
});

test('add_observations adds only new ones, and an unknown entity fails the call and saves nothing', () => {
  const file = memoryFile(undefined);
  graph.createEntities(file, [entity('A', 't', ['one'])]);
  assert.deepEqual(graph.addObservations(file, [{ entityName: 'A', contents: ['one', 'two', 'two'] }]), [
    { entityName: 'A', addedObservations: ['two', 'two'] },
  ]);
  const before = file.text;
  assert.throws(
    () => graph.addObservations(file, [{ entityName: 'A', contents: ['three'] }, { entityName: 'Nope', contents: ['x'] }]),
    { message: 'Entity with name Nope not found' },
  );
  assert.equal(file.text, before);
});

test('delete_entities takes the relations from and to them; other deletes ignore what is absent', () => {
  const file = memoryFile(undefined);
  graph.createEntities(file, [entity('A', 't', ['o1', 'o2']), entity('B'), entity('C')]);
  graph.createRelations(file, [relation('A', 'B'), relation('C', 'A'), relation('B', 'C')]);
  graph.deleteEntities(file, ['A', 'ghost']);
  assert.deepEqual(graph.readGraph(file).relations, [relation('B', 'C')]);
  graph.deleteObservations(file, [{ entityName: 'ghost', observations: ['x'] }, { entityName: 'B', observations: ['x'] }]);
  graph.deleteRelations(file, [relation('B', 'C', 'other'), relation('B', 'C')]);
  assert.deepEqual(graph.readGraph(file), { entities: [entity('B'), entity('C')], relations: [] });
});

test('search_nodes ignores case in names, types and observations; relations need one end found', () => {
  const file = memoryFile(undefined);
  graph.createEntities(file, [entity('Ada Lovelace', 'Mathematician', ['Wrote the first PROGRAM']), entity('Bob')]);
  graph.createRelations(file, [relation('Ada Lovelace', 'Bob'), relation('Bob', 'Carl')]);
  assert.deepEqual(graph.searchNodes(file, 'LOVE').entities.map((e) => e.name), ['Ada Lovelace']);
  assert.deepEqual(graph.searchNodes(file, 'mathem').relations, [relation('Ada Lovelace', 'Bob')]);
  assert.equal(graph.searchNodes(file, 'program').entities.length, 1);
  assert.equal(graph.searchNodes(file, '').entities.length, 2);
  assert.deepEqual(graph.openNodes(file, ['Bob', 'Nobody']).relations, [relation('Ada Lovelace', 'Bob'), relation('Bob', 'Carl')]);
});

test('paths are normalized as Node normalizes them', () => {
  assert.equal(normalize('/a//b/./c/../d'), '/a/b/d');
  assert.equal(normalize('/../x'), '/x');
  assert.equal(join('/memory', '../other/m.jsonl'), '/other/m.jsonl');
  assert.equal(join('/memory', 'sub/m.jsonl'), '/memory/sub/m.jsonl');
});

test('the memory file: MEMORY_FILE_PATH, relative to home, or home/memory.jsonl after the legacy migration', () => {
  const present = new Set();
  const renames = [];
  const files = {
    exists: (path) => present.has(path),
    rename: (from, to) => {
      renames.push([from, to]);
      present.delete(from);
      present.add(to);
    },
  };
  assert.equal(memoryFilePath({ MEMORY_FILE_PATH: '/data/g.jsonl' }, '/memory', files), '/data/g.jsonl');
  assert.equal(memoryFilePath({ MEMORY_FILE_PATH: 'g.jsonl' }, '/memory', files), '/memory/g.jsonl');
  assert.equal(memoryFilePath({}, '/memory', files), '/memory/memory.jsonl');
  assert.deepEqual(renames, []);
  present.add('/memory/memory.json');
  assert.equal(memoryFilePath({ MEMORY_FILE_PATH: '' }, '/memory', files), '/memory/memory.jsonl');
  assert.deepEqual(renames, [['/memory/memory.json', '/memory/memory.jsonl']]);
  present.add('/memory/memory.json');
  memoryFilePath({}, '/memory', files);
  assert.equal(renames.length, 1, 'no migration over an existing memory.jsonl');
});

test('locate maps a path onto the innermost grant holding it', () => {
  const granted = ['/memory', '/memory/deep', '/data/'];
  assert.deepEqual(locate('/memory/m.jsonl', granted), { index: 0, relative: 'm.jsonl' });
  assert.deepEqual(locate('/memory/deep/x/m.jsonl', granted), { index: 1, relative: 'x/m.jsonl' });
  assert.deepEqual(locate('/data/m.jsonl', granted), { index: 2, relative: 'm.jsonl' });
  assert.equal(locate('/memoryx/m.jsonl', granted), undefined);
  assert.equal(locate('/memory', granted), undefined);
  assert.deepEqual(locate('/m.jsonl', ['/']), { index: 0, relative: 'm.jsonl' });
});

// Corral plugin in JavaScript: the nine tools of the MCP reference server
// npm @modelcontextprotocol/server-memory (2026.8.31), a knowledge graph of
// entities, relations and observations kept in a JSONL file, with the same
// names, input and output schemas and results. tests/reference/memory.rs
// drives both through the same session and compares them, and their files.
//
// The file is in a directory js-memory.toml grants, named as the original
// names it (location.js):
//
//   [[dirs]]
//   host = "memory"
//   guest = "/memory"
//   mode = "rw"
//
//   [env]
//   set = { MEMORY_FILE_PATH = "/memory/memory.jsonl" }
//
// Because the manifest grants [[dirs]], plugins/build-js builds this
// project against the world `plugin-with-files`, whose wasi:filesystem and
// wasi:cli/environment imports files.js and this file use. This file is the
// WIT glue and the tools' definitions; the graph is in graph.js.

import { log } from 'corral:plugin/host@0.3.0';
import { getEnvironment } from 'wasi:cli/environment@0.2.12';
import * as graph from './graph.js';
import { memoryFilePath } from './location.js';
import { FileError, fileAt, grants, pathOps } from './files.js';

// The reference's schemas exactly as its SDK (zod 4's toJSONSchema) lists
// them: input objects allow other fields (zod strips them), output objects
// do not.
const SCHEMA = 'http://json-schema.org/draft-07/schema#';
const string = (description) => (description ? { type: 'string', description } : { type: 'string' });
const strings = (description) => {
  const schema = { type: 'array', items: { type: 'string' } };
  return description ? { ...schema, description } : schema;
};
const object = (properties, output) => {
  const schema = { type: 'object', properties, required: Object.keys(properties) };
  return output ? { ...schema, additionalProperties: false } : schema;
};
const top = (properties, output) => ({ $schema: SCHEMA, ...object(properties, output) });

const entity = (output) =>
  object(
    {
      name: string('The name of the entity'),
      entityType: string('The type of the entity'),
      observations: strings('An array of observation contents associated with the entity'),
    },
    output,
  );
const relation = (output) =>
  object(
    {
      from: string('The name of the entity where the relation starts'),
      to: string('The name of the entity where the relation ends'),
      relationType: string('The type of the relation'),
    },
    output,
  );
const list = (items, description) => (description ? { type: 'array', items, description } : { type: 'array', items });
const GRAPH = top({ entities: list(entity(true)), relations: list(relation(true)) }, true);
const DONE = top({ success: { type: 'boolean' }, message: { type: 'string' } }, true);

const hints = (readOnly, destructive, idempotent) => ({
  readOnlyHint: readOnly,
  destructiveHint: destructive,
  idempotentHint: idempotent,
  openWorldHint: false,
});
const WRITES = hints(false, false, false);
const DELETES = hints(false, true, true);
const READS = hints(true, false, true);

// Each tool's result, as the original builds it: the text is its result as
// two-space JSON (or a fixed sentence), the structured content an object.
const json = (value) => JSON.stringify(value, null, 2);
const asGraph = (found) => ({ text: json(found), structured: { ...found } });
const deleted = (what) => {
  const message = `${what} deleted successfully`;
  return { text: message, structured: { success: true, message } };
};

const TOOLS = [
  {
    name: 'create_entities',
    title: 'Create Entities',
    description: 'Create multiple new entities in the knowledge graph',
    inputSchema: top({ entities: list(entity(false)) }),
    outputSchema: top({ entities: list(entity(true)) }, true),
    annotations: WRITES,
    run: (file, args) => {
      const added = graph.createEntities(file, args.entities.map(graph.stripEntity));
      return { text: json(added), structured: { entities: added } };
    },
  },
  {
    name: 'create_relations',
    title: 'Create Relations',
    description:
      'Create multiple new relations between entities in the knowledge graph. Relations should be in active voice',
    inputSchema: top({ relations: list(relation(false)) }),
    outputSchema: top({ relations: list(relation(true)) }, true),
    annotations: WRITES,
    run: (file, args) => {
      const added = graph.createRelations(file, args.relations.map(graph.stripRelation));
      return { text: json(added), structured: { relations: added } };
    },
  },
  {
    name: 'add_observations',
    title: 'Add Observations',
    description: 'Add new observations to existing entities in the knowledge graph',
    inputSchema: top({
      observations: list(
        object({
          entityName: string('The name of the entity to add the observations to'),
          contents: strings('An array of observation contents to add'),
        }),
      ),
    }),
    outputSchema: top(
      { results: list(object({ entityName: string(), addedObservations: strings() }, true)) },
      true,
    ),
    annotations: WRITES,
    run: (file, args) => {
      const observations = args.observations.map((o) => ({ entityName: o.entityName, contents: o.contents }));
      const results = graph.addObservations(file, observations);
      return { text: json(results), structured: { results } };
    },
  },
  {
    name: 'delete_entities',
    title: 'Delete Entities',
    description: 'Delete multiple entities and their associated relations from the knowledge graph',
    inputSchema: top({ entityNames: strings('An array of entity names to delete') }),
    outputSchema: DONE,
    annotations: DELETES,
    run: (file, args) => {
      graph.deleteEntities(file, args.entityNames);
      return deleted('Entities');
    },
  },
  {
    name: 'delete_observations',
    title: 'Delete Observations',
    description: 'Delete specific observations from entities in the knowledge graph',
    inputSchema: top({
      deletions: list(
        object({
          entityName: string('The name of the entity containing the observations'),
          observations: strings('An array of observations to delete'),
        }),
      ),
    }),
    outputSchema: DONE,
    annotations: DELETES,
    run: (file, args) => {
      graph.deleteObservations(file, args.deletions);
      return deleted('Observations');
    },
  },
  {
    name: 'delete_relations',
    title: 'Delete Relations',
    description: 'Delete multiple relations from the knowledge graph',
    inputSchema: top({ relations: list(relation(false), 'An array of relations to delete') }),
    outputSchema: DONE,
    annotations: DELETES,
    run: (file, args) => {
      graph.deleteRelations(file, args.relations.map(graph.stripRelation));
      return deleted('Relations');
    },
  },
  {
    name: 'read_graph',
    title: 'Read Graph',
    description: 'Read the entire knowledge graph',
    inputSchema: { $schema: SCHEMA, type: 'object', properties: {} },
    outputSchema: GRAPH,
    annotations: READS,
    run: (file) => asGraph(graph.readGraph(file)),
  },
  {
    name: 'search_nodes',
    title: 'Search Nodes',
    description: 'Search for nodes in the knowledge graph based on a query',
    inputSchema: top({
      query: string('The search query to match against entity names, types, and observation content'),
    }),
    outputSchema: GRAPH,
    annotations: READS,
    run: (file, args) => asGraph(graph.searchNodes(file, args.query)),
  },
  {
    name: 'open_nodes',
    title: 'Open Nodes',
    description: 'Open specific nodes in the knowledge graph by their names',
    inputSchema: top({ names: strings('An array of entity names to retrieve') }),
    outputSchema: GRAPH,
    annotations: READS,
    run: (file, args) => asGraph(graph.openNodes(file, args.names)),
  },
];

/** The memory file, where the manifest's grant and MEMORY_FILE_PATH put it. */
function memoryFile() {
  const granted = grants();
  if (granted.length === 0) {
    throw new FileError(
      'no directory to keep the memory file in: the manifest (js-memory.toml) must grant one in [[dirs]], with mode = "rw"',
    );
  }
  const env = Object.fromEntries(getEnvironment());
  return fileAt(memoryFilePath(env, granted[0].guest, pathOps(granted)), granted);
}

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
      annotations: tool.annotations,
      icons: [],
    }));
  },

  call(name, argumentsJson) {
    const tool = TOOLS.find((t) => t.name === name);
    if (!tool) return errorResult(`unknown tool: ${name}`);
    // The host has checked the arguments against the input schema.
    const args = JSON.parse(argumentsJson);
    try {
      const result = tool.run(memoryFile(), args);
      return { content: [textContent(result.text)], structuredContent: JSON.stringify(result.structured), isError: false };
    } catch (err) {
      if (err instanceof FileError) return errorResult(err.message);
      // The original answers any other error (an unknown entity, a line of
      // the file that is not JSON) with its message as the result's text.
      if (err instanceof Error) {
        if (!(err.message.startsWith('Entity with name ') || err instanceof SyntaxError)) {
          log('error', `${name} failed: ${err.stack || err}`);
        }
        return errorResult(err.message);
      }
      return errorResult(String(err));
    }
  },
};

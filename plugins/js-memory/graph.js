// The knowledge graph of the MCP reference server npm
// @modelcontextprotocol/server-memory (2026.8.31), operation for operation:
// its KnowledgeGraphManager, made synchronous, over a `file` object instead
// of Node's fs. The graph lives in one JSONL file in the original's format
// (one object per line, fields in its order, a `type` tag of "entity" or
// "relation", lines joined by "\n" with no final newline), so a file written
// by either server is read by the other, byte for byte.
//
// `file` has read(): the file's text, or undefined when it does not exist
// (the original's ENOENT: an empty graph), and write(text), which replaces
// the file whole. plugin.js passes one on wasi:filesystem (files.js);
// graph.test.js one on a variable.
//
// The arguments arrive as the original's zod schemas leave them: every
// object holding only its schema's fields, in the schema's order (zod strips
// the rest, and the input schemas allow the rest). `strip*` below do that.

/** The graph in `text`, the file's contents. */
export function parseGraph(text) {
  const graph = { entities: [], relations: [] };
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const item = JSON.parse(line);
    if (item.type === 'entity') {
      graph.entities.push({ name: item.name, entityType: item.entityType, observations: item.observations });
    }
    if (item.type === 'relation') {
      graph.relations.push({ from: item.from, to: item.to, relationType: item.relationType });
    }
  }
  return graph;
}

/** The file's contents for `graph`. */
export function formatGraph(graph) {
  return [
    ...graph.entities.map((e) =>
      JSON.stringify({ type: 'entity', name: e.name, entityType: e.entityType, observations: e.observations }),
    ),
    ...graph.relations.map((r) =>
      JSON.stringify({ type: 'relation', from: r.from, to: r.to, relationType: r.relationType }),
    ),
  ].join('\n');
}

export const stripEntity = (e) => ({ name: e.name, entityType: e.entityType, observations: [...e.observations] });
export const stripRelation = (r) => ({ from: r.from, to: r.to, relationType: r.relationType });
const sameRelation = (a, b) => a.from === b.from && a.to === b.to && a.relationType === b.relationType;

const load = (file) => {
  const text = file.read();
  return text === undefined ? { entities: [], relations: [] } : parseGraph(text);
};
const save = (file, graph) => file.write(formatGraph(graph));

/** Adds the entities whose names the graph lacks; returns those added. */
export function createEntities(file, entities) {
  const graph = load(file);
  // As the original: checked against the graph as it was, so two entities
  // of one name in the same call are both added.
  const added = entities.filter((e) => !graph.entities.some((existing) => existing.name === e.name));
  graph.entities.push(...added);
  save(file, graph);
  return added;
}

/** Adds the relations the graph lacks (their ends need not exist); returns those added. */
export function createRelations(file, relations) {
  const graph = load(file);
  const added = relations.filter((r) => !graph.relations.some((existing) => sameRelation(existing, r)));
  graph.relations.push(...added);
  save(file, graph);
  return added;
}

/**
 * Adds each entity's new observations; returns what was added per entity.
 * An unknown entity fails the whole call with the original's message, and
 * nothing is saved.
 */
export function addObservations(file, observations) {
  const graph = load(file);
  const results = observations.map((o) => {
    const entity = graph.entities.find((e) => e.name === o.entityName);
    if (!entity) {
      throw new Error(`Entity with name ${o.entityName} not found`);
    }
    const added = o.contents.filter((content) => !entity.observations.includes(content));
    entity.observations.push(...added);
    return { entityName: o.entityName, addedObservations: added };
  });
  save(file, graph);
  return results;
}

/** Deletes the entities and every relation from or to them; absent names are ignored. */
export function deleteEntities(file, entityNames) {
  const graph = load(file);
  graph.entities = graph.entities.filter((e) => !entityNames.includes(e.name));
  graph.relations = graph.relations.filter((r) => !entityNames.includes(r.from) && !entityNames.includes(r.to));
  save(file, graph);
}

/** Deletes observations from entities; absent entities and observations are ignored. */
export function deleteObservations(file, deletions) {
  const graph = load(file);
  for (const d of deletions) {
    const entity = graph.entities.find((e) => e.name === d.entityName);
    if (entity) {
      entity.observations = entity.observations.filter((o) => !d.observations.includes(o));
    }
  }
  save(file, graph);
}

/** Deletes the relations; absent ones are ignored. */
export function deleteRelations(file, relations) {
  const graph = load(file);
  graph.relations = graph.relations.filter((r) => !relations.some((gone) => sameRelation(r, gone)));
  save(file, graph);
}

export const readGraph = (file) => load(file);

/** The graph around `entities`: them, and every relation with at least one end among them. */
function around(graph, entities) {
  const names = new Set(entities.map((e) => e.name));
  return { entities, relations: graph.relations.filter((r) => names.has(r.from) || names.has(r.to)) };
}

/**
 * The entities whose name, type or an observation contains `query`,
 * ignoring case as the original does (String.prototype.toLowerCase, no
 * locale), and the relations touching them.
 */
export function searchNodes(file, query) {
  const graph = load(file);
  const q = query.toLowerCase();
  const found = graph.entities.filter(
    (e) =>
      e.name.toLowerCase().includes(q) ||
      e.entityType.toLowerCase().includes(q) ||
      e.observations.some((o) => o.toLowerCase().includes(q)),
  );
  return around(graph, found);
}

/** The entities named (exactly; unknown names are ignored) and the relations touching them. */
export function openNodes(file, names) {
  const graph = load(file);
  return around(graph, graph.entities.filter((e) => names.includes(e.name)));
}

// The sequential-thinking logic, apart from the bindings so that Node can
// test it (thinking.test.js) with a Map for a store.
//
// It is the reference server's (npm @modelcontextprotocol/server-sequential-
// thinking 2026.8.31, dist/lib.js and dist/index.js) call for call: the same
// adjustment of totalThoughts, the same branch bookkeeping (a plain object,
// so that branch ids read back in JavaScript's key order: integer-like ids
// first), the same JSON text and the same error results, down to the
// TypeError a branch id such as "constructor" provokes there.
//
// The original keeps its history in the memory of its process. Here every
// call runs in a fresh instance, so the history lives in the plugin's
// key-value store:
//   thought/<n>  the n-th thought's arguments, as JSON (n from 1);
//   meta         {"length": <thoughts so far>, "branches": [[id, count], ...]}
//                with the branch ids in the order Object.keys gave them.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const META = 'meta';
export const thoughtKey = (n) => `thought/${n}`;

/**
 * The reference's `coercedBoolean`: a boolean, or the string "true"/"false"
 * in any case. Returns [value] or [undefined, message].
 */
function coerceBoolean(val) {
  if (typeof val === 'boolean') return [val];
  if (val.toLowerCase() === 'true') return [true];
  if (val.toLowerCase() === 'false') return [false];
  return [undefined, `Expected boolean or "true"/"false" string, received "${val}"`];
}

const BOOLEANS = ['nextThoughtNeeded', 'isRevision', 'needsMoreThoughts'];
/** The reference's input shape, in its order (the order zod reports issues in). */
const FIELDS = [
  'thought', 'nextThoughtNeeded', 'thoughtNumber', 'totalThoughts', 'isRevision',
  'revisesThought', 'branchFromThought', 'branchId', 'needsMoreThoughts',
];

/**
 * Parses arguments the host has already checked against the input schema,
 * as the reference's zod schema would: the booleans may be "true"/"false"
 * strings; unknown keys are dropped. Returns { input } or { error } (the
 * reference's result text for arguments zod refuses).
 */
export function parseArguments(args) {
  const input = {};
  const issues = [];
  for (const field of FIELDS) {
    if (!(field in args) || args[field] === undefined) continue;
    if (BOOLEANS.includes(field)) {
      const [value, message] = coerceBoolean(args[field]);
      if (message !== undefined) issues.push(`${message} at ${field}`);
      else input[field] = value;
    } else {
      input[field] = args[field];
    }
  }
  if (issues.length > 0) {
    return {
      error: `MCP error -32602: Input validation error: Invalid arguments for tool sequentialthinking: ${issues.join('\n')}`,
    };
  }
  return { input };
}

/** The history so far: `store` is { get(key) -> Uint8Array|undefined, set(key, bytes) }. */
function load(store) {
  const bytes = store.get(META);
  const meta = bytes === undefined ? { length: 0, branches: [] } : JSON.parse(decoder.decode(bytes));
  // A plain object, filled in its stored order, as the reference's `branches`.
  const branches = {};
  for (const [id, count] of meta.branches) branches[id] = new Array(count).fill(null);
  return { length: meta.length, branches };
}

function saveMeta(store, state) {
  const branches = Object.keys(state.branches).map((id) => [id, state.branches[id].length]);
  store.set(META, encoder.encode(JSON.stringify({ length: state.length, branches })));
}

/**
 * The reference's processThought on the stored history. Returns
 * { text, structured } or { text, isError: true }, and `thought` (the
 * processed input, for the log) when it was recorded.
 */
export function processThought(store, input) {
  const state = load(store);
  const thinking = {
    branches: state.branches,
    process(input) {
      // As the reference: the thought is recorded before the branch, so a
      // branch id that breaks the bookkeeping still counts in the history.
      if (input.thoughtNumber > input.totalThoughts) {
        input.totalThoughts = input.thoughtNumber;
      }
      // Counted once stored: a store that refuses (its quota) leaves the count as it was.
      store.set(thoughtKey(state.length + 1), encoder.encode(JSON.stringify(input)));
      state.length += 1;
      if (input.branchFromThought && input.branchId) {
        if (!this.branches[input.branchId]) {
          this.branches[input.branchId] = [];
        }
        this.branches[input.branchId].push(input);
      }
    },
  };
  try {
    try {
      thinking.process(input);
    } finally {
      saveMeta(store, state);
    }
    const structured = {
      thoughtNumber: input.thoughtNumber,
      totalThoughts: input.totalThoughts,
      nextThoughtNeeded: input.nextThoughtNeeded,
      branches: Object.keys(state.branches),
      thoughtHistoryLength: state.length,
    };
    return { text: JSON.stringify(structured, null, 2), structured, thought: input };
  } catch (error) {
    if (error && error.storeError) throw error;
    return {
      text: JSON.stringify({ error: error instanceof Error ? error.message : String(error), status: 'failed' }, null, 2),
      isError: true,
    };
  }
}

/** The reference's formatThought, without the colours: for the host log. */
export function formatThought(thoughtData) {
  const { thoughtNumber, totalThoughts, thought, isRevision, revisesThought, branchFromThought, branchId } = thoughtData;
  let prefix = '';
  let context = '';
  if (isRevision) {
    prefix = '🔄 Revision';
    context = ` (revising thought ${revisesThought})`;
  } else if (branchFromThought) {
    prefix = '🌿 Branch';
    context = ` (from thought ${branchFromThought}, ID: ${branchId})`;
  } else {
    prefix = '💭 Thought';
  }
  const header = `${prefix} ${thoughtNumber}/${totalThoughts}${context}`;
  const border = '─'.repeat(Math.max(header.length, thought.length) + 4);
  return `
┌${border}┐
│ ${header} │
├${border}┤
│ ${thought.padEnd(border.length - 2)} │
└${border}┘`;
}

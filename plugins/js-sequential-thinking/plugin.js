// Corral plugin in JavaScript: `sequentialthinking`, the tool of the MCP
// reference server npm @modelcontextprotocol/server-sequential-thinking
// (2026.8.31), with the same name, input schema, output schema and results.
// tests/reference.rs drives both through the same session and compares them.
//
// The thought history lives in the plugin's wasi:keyvalue store, granted by
// js-sequential-thinking.toml beside the component:
//
//   [state]
//   buckets = ["default"]
//
// This file is the WIT glue; the logic is in thinking.js.

import { log } from 'corral:plugin/host@0.3.0';
import { open } from 'wasi:keyvalue/store@0.2.0-draft';
import { parseArguments, processThought, formatThought } from './thinking.js';

const BUCKET = 'default';

/** The store refused (quota, grant): the host's words are shown as an error result. */
class StoreError extends Error {
  get storeError() {
    return true;
  }
}

function kv(operation) {
  try {
    return operation();
  } catch (err) {
    const error = err && err.payload;
    if (error && error.tag === 'other') throw new StoreError(`the store refused: ${error.val}`);
    if (error && error.tag === 'access-denied') {
      throw new StoreError(`the store refused access to bucket "${BUCKET}"; js-sequential-thinking.toml must grant it`);
    }
    if (error && error.tag === 'no-such-store') throw new StoreError('the store is missing');
    throw err;
  }
}

function openStore() {
  const bucket = kv(() => open(BUCKET));
  return {
    get: (key) => kv(() => bucket.get(key)),
    set: (key, bytes) => kv(() => bucket.set(key, bytes)),
  };
}

const DESCRIPTION = `A detailed tool for dynamic and reflective problem-solving through thoughts.
This tool helps analyze problems through a flexible thinking process that can adapt and evolve.
Each thought can build on, question, or revise previous insights as understanding deepens.

When to use this tool:
- Breaking down complex problems into steps
- Planning and design with room for revision
- Analysis that might need course correction
- Problems where the full scope might not be clear initially
- Problems that require a multi-step solution
- Tasks that need to maintain context over multiple steps
- Situations where irrelevant information needs to be filtered out

Key features:
- You can adjust total_thoughts up or down as you progress
- You can question or revise previous thoughts
- You can add more thoughts even after reaching what seemed like the end
- You can express uncertainty and explore alternative approaches
- Not every thought needs to build linearly - you can branch or backtrack
- Generates a solution hypothesis
- Verifies the hypothesis based on the Chain of Thought steps
- Repeats the process until satisfied
- Provides a correct answer

Parameters explained:
- thought: Your current thinking step, which can include:
  * Regular analytical steps
  * Revisions of previous thoughts
  * Questions about previous decisions
  * Realizations about needing more analysis
  * Changes in approach
  * Hypothesis generation
  * Hypothesis verification
- nextThoughtNeeded: True if you need more thinking, even if at what seemed like the end
- thoughtNumber: Current number in sequence (can go beyond initial total if needed)
- totalThoughts: Current estimate of thoughts needed (can be adjusted up/down)
- isRevision: A boolean indicating if this thought revises previous thinking
- revisesThought: If is_revision is true, which thought number is being reconsidered
- branchFromThought: If branching, which thought number is the branching point
- branchId: Identifier for the current branch (if any)
- needsMoreThoughts: If reaching end but realizing more thoughts needed

You should:
1. Start with an initial estimate of needed thoughts, but be ready to adjust
2. Feel free to question or revise previous thoughts
3. Don't hesitate to add more thoughts if needed, even at the "end"
4. Express uncertainty when present
5. Mark thoughts that revise previous thinking or branch into new paths
6. Ignore information that is irrelevant to the current step
7. Generate a solution hypothesis when appropriate
8. Verify the hypothesis based on the Chain of Thought steps
9. Repeat the process until satisfied with the solution
10. Provide a single, ideally correct answer as the final output
11. Only set nextThoughtNeeded to false when truly done and a satisfactory answer is reached`;

// The reference's schemas exactly as its SDK (zod 4's toJSONSchema) lists them.
const SCHEMA = 'http://json-schema.org/draft-07/schema#';
const MAX = 9007199254740991;
const count = (description) => ({ type: 'integer', minimum: 1, maximum: MAX, description });
const optionalCount = (description) => ({ description, type: 'integer', minimum: 1, maximum: MAX });
const flag = (description) => ({ description, type: ['boolean', 'string'] });

const INPUT_SCHEMA = {
  $schema: SCHEMA,
  type: 'object',
  properties: {
    thought: { type: 'string', description: 'Your current thinking step' },
    nextThoughtNeeded: flag('Whether another thought step is needed'),
    thoughtNumber: count('Current thought number (numeric value, e.g., 1, 2, 3)'),
    totalThoughts: count('Estimated total thoughts needed (numeric value, e.g., 5, 10)'),
    isRevision: flag('Whether this revises previous thinking'),
    revisesThought: optionalCount('Which thought is being reconsidered'),
    branchFromThought: optionalCount('Branching point thought number'),
    branchId: { description: 'Branch identifier', type: 'string' },
    needsMoreThoughts: flag('If more thoughts are needed'),
  },
  required: ['thought', 'nextThoughtNeeded', 'thoughtNumber', 'totalThoughts'],
};

const OUTPUT_SCHEMA = {
  $schema: SCHEMA,
  type: 'object',
  properties: {
    thoughtNumber: { type: 'number' },
    totalThoughts: { type: 'number' },
    nextThoughtNeeded: { type: 'boolean' },
    branches: { type: 'array', items: { type: 'string' } },
    thoughtHistoryLength: { type: 'number' },
  },
  required: ['thoughtNumber', 'totalThoughts', 'nextThoughtNeeded', 'branches', 'thoughtHistoryLength'],
  additionalProperties: false,
};

const TITLE = 'Sequential Thinking';
const textContent = (text) => ({ tag: 'text', val: { text } });
const errorResult = (message) => ({ content: [textContent(message)], isError: true });

export const tools = {
  list() {
    return [
      {
        name: 'sequentialthinking',
        title: TITLE,
        description: DESCRIPTION,
        inputSchema: JSON.stringify(INPUT_SCHEMA),
        outputSchema: JSON.stringify(OUTPUT_SCHEMA),
        // As the reference's: no title among the hints (it is the tool's).
        annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
        icons: [],
      },
    ];
  },

  call(name, argumentsJson) {
    if (name !== 'sequentialthinking') return errorResult(`unknown tool: ${name}`);
    // The host has checked the arguments against INPUT_SCHEMA.
    const parsed = parseArguments(JSON.parse(argumentsJson));
    if (parsed.error !== undefined) return errorResult(parsed.error);
    try {
      const result = processThought(openStore(), parsed.input);
      if (result.isError) return errorResult(result.text);
      log('info', formatThought(result.thought));
      return { content: [textContent(result.text)], structuredContent: JSON.stringify(result.structured), isError: false };
    } catch (err) {
      if (err instanceof StoreError) return errorResult(err.message);
      log('error', `sequentialthinking failed: ${(err && err.stack) || err}`);
      return errorResult(`internal error in sequentialthinking: ${err}`);
    }
  },
};

// One thought processed while the component is built, against a store in
// memory: componentize-js snapshots the engine after this module runs, so
// the functions a call runs are compiled already in every call's fresh
// instance instead of being compiled again at each call (docs/benchmarks.md,
// "Where a call's time goes"). Nothing of it is kept: the store is dropped.
{
  const entries = new Map();
  const store = { get: (key) => entries.get(key), set: (key, bytes) => entries.set(key, bytes) };
  const parsed = parseArguments({ thought: 'warm-up', nextThoughtNeeded: true, thoughtNumber: 1, totalThoughts: 1 });
  const result = processThought(store, parsed.input);
  formatThought(result.thought);
  JSON.stringify(result.structured);
  JSON.parse(JSON.stringify(INPUT_SCHEMA));
}

// Corral example plugin in JavaScript: query, compare, format and convert
// JSON documents. Built by plugins/build-js with componentize-js against
// wit/ (world `plugin`); the only imports are the host's log and progress.
//
// This file is the WIT glue: it describes the tools (`tools.list`) and runs
// them (`tools.call`). The tools themselves are in json-tools.js.

import { log } from 'corral:plugin/host@0.3.0';
import { ToolError, jsonQuery, jsonDiff, jsonFormat, jsonToCsv, QUERY_LIMIT, DIFF_LIMIT } from './json-tools.js';

const jsonText = (what) => ({ type: 'string', description: `${what}, as JSON text.` });

/** Pure functions of their input: safe to call again, change nothing. */
const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

const TOOLS = [
  {
    name: 'json_query',
    title: 'Query JSON',
    description:
      'Select values from a JSON document with a JSONPath expression: $ is the root, .name or ["name"] a ' +
      'property, [0] an array item ([-1] the last), .* or [*] every child, ..name every "name" property at any ' +
      'depth, ..* every value below. Returns each match with its JSON Pointer path (structured), and as text ' +
      `the value itself when there is one match. At most ${QUERY_LIMIT} matches are returned; count is exact.`,
    inputSchema: {
      type: 'object',
      properties: {
        json: jsonText('The document to search'),
        path: { type: 'string', minLength: 1, description: 'A JSONPath expression, e.g. $.items[*].price or $..id.' },
      },
      required: ['json', 'path'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: {
        count: { type: 'integer', minimum: 0, description: 'How many values matched.' },
        truncated: { type: 'boolean', description: `True when more than ${QUERY_LIMIT} matched and only the first are listed.` },
        matches: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              path: { type: 'string', description: 'Where the value is, as a JSON Pointer (RFC 6901); "" is the root.' },
              value: { description: 'The matched value.' },
            },
            required: ['path', 'value'],
          },
        },
      },
      required: ['count', 'truncated', 'matches'],
    },
    run: jsonQuery,
    summary: (args, result) => `json_query ${args.path}: ${result.structured.count} match(es)`,
  },
  {
    name: 'json_diff',
    title: 'Compare JSON',
    description:
      'Compare two JSON documents structurally (key order and whitespace do not matter) and list the changes ' +
      'that turn "before" into "after": add, remove and replace operations at JSON Pointer paths, with the old ' +
      'and new values. Arrays are compared item by item by position. At most ' +
      `${DIFF_LIMIT} changes are listed; the counts are exact.`,
    inputSchema: {
      type: 'object',
      properties: {
        before: jsonText('The original document'),
        after: jsonText('The changed document'),
      },
      required: ['before', 'after'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: {
        equal: { type: 'boolean', description: 'True when the documents are the same.' },
        count: { type: 'integer', minimum: 0, description: 'Total number of changes.' },
        add: { type: 'integer', minimum: 0 },
        remove: { type: 'integer', minimum: 0 },
        replace: { type: 'integer', minimum: 0 },
        changes: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              op: { enum: ['add', 'remove', 'replace'] },
              path: { type: 'string', description: 'JSON Pointer (RFC 6901) of the changed value.' },
              before: { description: 'The old value (remove, replace).' },
              after: { description: 'The new value (add, replace).' },
            },
            required: ['op', 'path'],
          },
        },
      },
      required: ['equal', 'count', 'add', 'remove', 'replace', 'changes'],
    },
    run: jsonDiff,
    summary: (_args, result) => `json_diff: ${result.structured.count} change(s)`,
  },
  {
    name: 'json_format',
    title: 'Format JSON',
    description:
      'Check that text is valid JSON and re-print it: pretty-printed with the given indent, or minified on one ' +
      'line with indent 0; optionally with object keys sorted. Invalid JSON is an error that gives the line and column.',
    inputSchema: {
      type: 'object',
      properties: {
        json: jsonText('The document to format'),
        indent: { type: 'integer', minimum: 0, maximum: 10, default: 2, description: 'Spaces per level; 0 minifies.' },
        sort_keys: { type: 'boolean', default: false, description: 'Sort object keys alphabetically, at every depth.' },
      },
      required: ['json'],
      additionalProperties: false,
    },
    run: jsonFormat,
    summary: (args, result) => `json_format: ${result.text.length} characters`,
  },
  {
    name: 'json_to_csv',
    title: 'JSON to CSV',
    description:
      'Convert a JSON array of objects (rows) to CSV (RFC 4180, CRLF line ends) with a header row. Columns are ' +
      'every key in order of first appearance, or the given columns. Missing values and null are empty; nested ' +
      'objects and arrays are written as JSON text.',
    inputSchema: {
      type: 'object',
      properties: {
        json: jsonText('An array of objects'),
        columns: {
          type: 'array',
          items: { type: 'string' },
          description: 'Which keys to write, in order (optional; default: all keys).',
        },
      },
      required: ['json'],
      additionalProperties: false,
    },
    run: jsonToCsv,
    summary: (_args, result) => `json_to_csv: ${result.text.split('\r\n').length - 2} row(s)`,
  },
];

/**
 * The most characters a result may hold (text and structured content
 * together). componentize-js copies every returned string out of the engine
 * with a JavaScript loop that costs about 2,600 fuel per character, so a
 * bigger result would run out of Corral's default fuel (10^10) mid-copy and
 * fail without saying why.
 */
const RESULT_LIMIT = 1_000_000;

const textContent = (text) => ({ tag: 'text', val: { text } });

const errorResult = (message) => ({ content: [textContent(message)], isError: true });

export const tools = {
  list() {
    return TOOLS.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: JSON.stringify(tool.inputSchema),
      outputSchema: tool.outputSchema && JSON.stringify(tool.outputSchema),
      annotations: { title: tool.title, ...readOnly },
      icons: [],
    }));
  },

  call(name, argumentsJson) {
    const tool = TOOLS.find((t) => t.name === name);
    if (!tool) return errorResult(`unknown tool: ${name}`);
    const args = JSON.parse(argumentsJson);
    try {
      const result = tool.run(args);
      const structured = result.structured && JSON.stringify(result.structured);
      const size = result.text.length + (structured ? structured.length : 0);
      if (size > RESULT_LIMIT) {
        throw new ToolError(
          `the result is too large (${size} characters, at most ${RESULT_LIMIT}): ` +
            'select less (a narrower path, fewer columns) or split the document',
        );
      }
      log('info', tool.summary(args, result));
      return { content: [textContent(result.text)], structuredContent: structured, isError: false };
    } catch (err) {
      // A ToolError is the caller's mistake: tell the model how to fix it.
      // Anything else is a bug here, still reported rather than trapping.
      if (err instanceof ToolError) {
        log('warning', `${name}: ${err.message}`);
        return errorResult(err.message);
      }
      log('error', `${name} failed: ${err && err.stack || err}`);
      return errorResult(`internal error in ${name}: ${err}`);
    }
  },
};

// The js-json tools as plain functions, free of any WIT binding so that
// `node --test` can exercise them directly (see json-tools.test.js).
//
// Every tool takes its arguments object (already validated by the host
// against the tool's input schema) and returns { text, structured? }, or
// throws a ToolError whose message tells the model how to fix its input.

/** A problem with the caller's input: reported as a tool execution error. */
export class ToolError extends Error {}

/** Parses JSON text, naming the argument in the error so the model knows which one to fix. */
function parseArgument(text, argument) {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ToolError(`"${argument}" is not valid JSON: ${err.message}`);
  }
}

const typeName = (value) =>
  value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;

// --- JSON Pointer (RFC 6901), the path syntax every result uses. ---

const escapePointerToken = (token) => String(token).replace(/~/g, '~0').replace(/\//g, '~1');
const pointerOf = (tokens) => tokens.map((t) => '/' + escapePointerToken(t)).join('');

// --- json_query: a JSONPath subset. ---

/**
 * Splits a JSONPath expression into steps:
 *   { kind: 'child', key }     .name  ['name']  ["name"]
 *   { kind: 'index', index }   [3]  [-1] (from the end)
 *   { kind: 'wildcard' }       .*  [*]
 *   { kind: 'descendant', key } ..name  ..*  (key null for *)
 */
export function parsePath(path) {
  const steps = [];
  let i = 0;
  const fail = (why) => {
    throw new ToolError(
      `invalid path ${JSON.stringify(path)} at character ${i + 1}: ${why}. ` +
        'Use JSONPath like $.items[0].name, $.items[*].price, $..id or $["odd key"].',
    );
  };
  const identifier = () => {
    const match = /^[A-Za-z_$][\w$-]*/.exec(path.slice(i));
    if (!match) fail('expected a property name');
    i += match[0].length;
    return match[0];
  };
  if (path[i] === '$') i++;
  while (i < path.length) {
    if (path.startsWith('..', i)) {
      i += 2;
      if (path[i] === '*') {
        i++;
        steps.push({ kind: 'descendant', key: null });
      } else if (path[i] === '[') {
        fail('use ..name or ..* for recursive descent');
      } else {
        steps.push({ kind: 'descendant', key: identifier() });
      }
    } else if (path[i] === '.') {
      i++;
      if (path[i] === '*') {
        i++;
        steps.push({ kind: 'wildcard' });
      } else {
        steps.push({ kind: 'child', key: identifier() });
      }
    } else if (path[i] === '[') {
      const close = path.indexOf(']', i);
      if (close < 0) fail('missing ]');
      const inner = path.slice(i + 1, close).trim();
      if (inner === '*') {
        steps.push({ kind: 'wildcard' });
      } else if (/^-?\d+$/.test(inner)) {
        steps.push({ kind: 'index', index: Number(inner) });
      } else if (/^(['"]).*\1$/.test(inner)) {
        // Quoted keys follow JSON string rules; single quotes are allowed too.
        const body = inner.slice(1, -1);
        try {
          steps.push({ kind: 'child', key: JSON.parse(`"${inner[0] === "'" ? body.replace(/"/g, '\\"') : body}"`) });
        } catch {
          fail('bad escape in quoted key');
        }
      } else {
        fail('expected [number], [*] or ["key"] inside brackets');
      }
      i = close + 1;
    } else {
      fail(`unexpected ${JSON.stringify(path[i])}`);
    }
  }
  return steps;
}

// A match is [tokens, value]: tokens is the path from the root as a linked
// list ({ parent, token } or null) so that stepping down copies nothing; it
// becomes a JSON Pointer only for the matches returned.
const child = (tokens, token) => ({ parent: tokens, token });

function tokenList(tokens) {
  const list = [];
  for (let t = tokens; t !== null; t = t.parent) list.push(t.token);
  return list.reverse();
}

/** The JSON Pointer of a linked token list. */
const pointer = (tokens) => pointerOf(tokenList(tokens));

const isObject = (value) => value !== null && typeof value === 'object';

/** Calls visit(tokens, value) for every value below `value`, itself included, depth first. */
function walk(value, tokens, visit) {
  visit(tokens, value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) walk(value[i], child(tokens, i), visit);
  } else if (isObject(value)) {
    for (const key of Object.keys(value)) walk(value[key], child(tokens, key), visit);
  }
}

/** Applies one step to every current match. */
function applyStep(matches, step) {
  const out = [];
  for (const [tokens, value] of matches) {
    switch (step.kind) {
      case 'child':
        if (isObject(value) && !Array.isArray(value) && Object.hasOwn(value, step.key)) {
          out.push([child(tokens, step.key), value[step.key]]);
        }
        break;
      case 'index':
        if (Array.isArray(value)) {
          const index = step.index < 0 ? value.length + step.index : step.index;
          if (index >= 0 && index < value.length) out.push([child(tokens, index), value[index]]);
        }
        break;
      case 'wildcard':
        if (Array.isArray(value)) {
          for (let i = 0; i < value.length; i++) out.push([child(tokens, i), value[i]]);
        } else if (isObject(value)) {
          for (const key of Object.keys(value)) out.push([child(tokens, key), value[key]]);
        }
        break;
      case 'descendant':
        walk(value, tokens, (at, found) => {
          if (step.key === null) {
            if (at !== tokens) out.push([at, found]);
          } else if (isObject(found) && !Array.isArray(found) && Object.hasOwn(found, step.key)) {
            out.push([child(at, step.key), found[step.key]]);
          }
        });
        break;
    }
  }
  return out;
}

/** The most matches returned; more would flood the model's context. */
export const QUERY_LIMIT = 1000;

export function jsonQuery({ json, path }) {
  const document = parseArgument(json, 'json');
  const steps = parsePath(path);
  let matches = [[null, document]];
  for (const step of steps) matches = applyStep(matches, step);
  const total = matches.length;
  const results = matches.slice(0, QUERY_LIMIT).map(([tokens, value]) => ({ path: pointer(tokens), value }));
  const structured = { count: total, truncated: total > QUERY_LIMIT, matches: results };
  let text;
  if (total === 0) {
    text = `No match for ${path}.`;
  } else if (total === 1) {
    text = JSON.stringify(results[0].value, null, 2);
  } else {
    text = `${total} matches${total > QUERY_LIMIT ? ` (first ${QUERY_LIMIT} shown)` : ''}:\n` +
      results.map((m) => `${m.path}: ${JSON.stringify(m.value)}`).join('\n');
  }
  return { text, structured };
}

// --- json_diff: structural differences as JSON Pointer changes. ---

/** The most changes returned; the count stays exact. */
export const DIFF_LIMIT = 1000;

function diffValues(before, after, tokens, changes) {
  const beforeType = typeName(before);
  const container = beforeType === 'object' || beforeType === 'array';
  if (beforeType !== typeName(after) || !container) {
    // Same-type scalars compare by value (so 0 and -0 are equal, as in JSON).
    if (beforeType !== typeName(after) || before !== after) {
      changes.push({ op: 'replace', at: tokens, before, after });
    }
    return;
  }
  if (beforeType === 'array') {
    const shared = Math.min(before.length, after.length);
    for (let i = 0; i < shared; i++) diffValues(before[i], after[i], child(tokens, i), changes);
    for (let i = shared; i < after.length; i++) changes.push({ op: 'add', at: child(tokens, i), after: after[i] });
    // Removed from the end backwards, so applying the changes in order keeps indexes valid.
    for (let i = before.length - 1; i >= shared; i--) changes.push({ op: 'remove', at: child(tokens, i), before: before[i] });
    return;
  }
  for (const key of Object.keys(before)) {
    if (!Object.hasOwn(after, key)) {
      changes.push({ op: 'remove', at: child(tokens, key), before: before[key] });
    } else {
      diffValues(before[key], after[key], child(tokens, key), changes);
    }
  }
  for (const key of Object.keys(after)) {
    if (!Object.hasOwn(before, key)) changes.push({ op: 'add', at: child(tokens, key), after: after[key] });
  }
}

export function jsonDiff({ before, after }) {
  const changes = [];
  diffValues(parseArgument(before, 'before'), parseArgument(after, 'after'), null, changes);
  const counts = { add: 0, remove: 0, replace: 0 };
  for (const change of changes) counts[change.op]++;
  // Changes hold their place as linked tokens (see child); only the ones
  // returned are spelled out as JSON Pointers.
  const shown = changes.slice(0, DIFF_LIMIT).map(({ op, at, ...values }) => ({ op, path: pointer(at), ...values }));
  const structured = { equal: changes.length === 0, count: changes.length, ...counts, changes: shown };
  const short = (value) => {
    const text = JSON.stringify(value);
    return text.length > 80 ? text.slice(0, 77) + '...' : text;
  };
  const lines = shown.map((c) =>
    c.op === 'add' ? `+ ${c.path}: ${short(c.after)}`
      : c.op === 'remove' ? `- ${c.path}: ${short(c.before)}`
        : `~ ${c.path}: ${short(c.before)} -> ${short(c.after)}`);
  const text = changes.length === 0
    ? 'The documents are equal.'
    : `${changes.length} change(s): ${counts.add} added, ${counts.remove} removed, ${counts.replace} replaced` +
      `${changes.length > DIFF_LIMIT ? ` (first ${DIFF_LIMIT} shown)` : ''}\n` + lines.join('\n');
  return { text, structured };
}

// --- json_format: pretty-print or minify. ---

function sortKeys(value) {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortKeys(value[key])]));
  }
  return value;
}

export function jsonFormat({ json, indent = 2, sort_keys: sort = false }) {
  let value = parseArgument(json, 'json');
  if (sort) value = sortKeys(value);
  return { text: JSON.stringify(value, null, indent) };
}

// --- json_to_csv: an array of objects as an RFC 4180 table. ---

function csvField(value) {
  if (value === undefined || value === null) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function jsonToCsv({ json, columns }) {
  const rows = parseArgument(json, 'json');
  if (!Array.isArray(rows)) {
    throw new ToolError(`"json" must be an array of objects, but it is a${typeName(rows) === 'object' ? 'n' : ''} ${typeName(rows)}`);
  }
  rows.forEach((row, i) => {
    if (typeName(row) !== 'object') {
      throw new ToolError(`"json" must be an array of objects, but item ${i} is ${typeName(row) === 'array' ? 'an array' : typeName(row)}`);
    }
  });
  // Columns in order of first appearance unless the caller chose them.
  let header = columns;
  if (!header || header.length === 0) {
    const seen = new Set();
    for (const row of rows) for (const key of Object.keys(row)) seen.add(key);
    header = [...seen];
  }
  const lines = [header.map(csvField).join(',')];
  for (const row of rows) lines.push(header.map((key) => csvField(row[key])).join(','));
  return { text: lines.join('\r\n') + '\r\n' };
}

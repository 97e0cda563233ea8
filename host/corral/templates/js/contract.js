// The contract's call-result, checked before it leaves the plugin.
//
// componentize-js converts what `call` returns into the contract's types
// (wit/plugin.wit, record call-result) and, when a value has the wrong
// shape, fails with words such as "invalid variant tag value undefined for
// Content", naming no field. `checked` wraps the `tools` export so that such
// a result fails instead with the field that was wrong and what it should
// be. The shapes are in Corral's docs/plugins.md, "The contract in Python
// and JavaScript".

const CONTENT_TAGS = ['text', 'image', 'audio', 'resource-link', 'embedded-resource'];

function show(value) {
  if (value === undefined) return 'undefined';
  if (typeof value === 'bigint') return `${value}n`;
  let text;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function wrong(path, value, wanted) {
  throw new TypeError(`tools.call returned ${path} = ${show(value)}; the contract wants ${wanted} there`);
}

function string(value, path) {
  if (typeof value !== 'string') wrong(path, value, 'a string');
}

function optionalString(value, path) {
  if (value !== undefined && typeof value !== 'string') wrong(path, value, 'a string, or undefined');
}

function bytes(value, path) {
  if (!(value instanceof Uint8Array)) wrong(path, value, 'a Uint8Array');
}

function record(value, path, example) {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) wrong(path, value, `an object ${example}`);
}

function content(item, path) {
  record(item, path, "{ tag: 'text', val: { text } }");
  if (!CONTENT_TAGS.includes(item.tag)) {
    wrong(`${path}.tag`, item.tag, `one of ${CONTENT_TAGS.map((tag) => `'${tag}'`).join(', ')}`);
  }
  const val = item.val;
  const at = `${path}.val`;
  switch (item.tag) {
    case 'text':
      record(val, at, '{ text }');
      string(val.text, `${at}.text`);
      break;
    case 'image':
    case 'audio':
      record(val, at, '{ data, mimeType }');
      bytes(val.data, `${at}.data`);
      string(val.mimeType, `${at}.mimeType`);
      break;
    case 'resource-link':
      record(val, at, '{ uri, name }');
      string(val.uri, `${at}.uri`);
      string(val.name, `${at}.name`);
      break;
    case 'embedded-resource':
      record(val, at, "{ uri, contents: { tag: 'text', val } }");
      string(val.uri, `${at}.uri`);
      record(val.contents, `${at}.contents`, "{ tag: 'text', val: '...' } or { tag: 'blob', val: bytes }");
      if (val.contents.tag === 'text') string(val.contents.val, `${at}.contents.val`);
      else if (val.contents.tag === 'blob') bytes(val.contents.val, `${at}.contents.val`);
      else wrong(`${at}.contents.tag`, val.contents.tag, "'text' or 'blob'");
      break;
  }
}

/// Returns `result` when it has the contract's shape; throws a TypeError
/// naming the first field that does not, otherwise.
export function checkedResult(result) {
  record(result, 'result', "{ content: [...], isError: false }");
  if (!Array.isArray(result.content)) wrong('result.content', result.content, 'an Array of content items');
  result.content.forEach((item, index) => content(item, `result.content[${index}]`));
  if (result.structuredContent !== undefined && typeof result.structuredContent !== 'string') {
    wrong('result.structuredContent', result.structuredContent, 'JSON text (JSON.stringify(value)), or undefined');
  }
  if (typeof result.isError !== 'boolean') wrong('result.isError', result.isError, 'true or false');
  for (const key of Object.keys(result)) {
    if (!['content', 'structuredContent', 'isError'].includes(key)) {
      wrong(`result.${key}`, result[key], 'nothing (a call-result has content, structuredContent and isError)');
    }
  }
  return result;
}

/// The `tools` export with every result of `call` checked.
export function checked(tools) {
  return { ...tools, call: (...args) => checkedResult(tools.call(...args)) };
}

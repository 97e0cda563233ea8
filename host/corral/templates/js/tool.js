// What the `{{name}}` tool does, apart from the plugin contract (plugin.js):
// plain JavaScript that tool.test.js tests with `node --test`.

/** A problem with the caller's input: plugin.js returns it as a tool
 * execution error, whose message the model sees and can act on. */
export class ToolFailure extends Error {}

export function greet(name) {
  const trimmed = name.trim();
  if (trimmed === '') {
    throw new ToolFailure('`name` must not be blank');
  }
  return `Hello, ${trimmed}!`;
}

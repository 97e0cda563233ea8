// What the `{{name}}` tool does, apart from the plugin contract (plugin.ts):
// plain TypeScript that tool.test.ts tests on Node (./test).

/** A problem with the caller's input: plugin.ts returns it as a tool
 * execution error, whose message the model sees and can act on. */
export class ToolFailure extends Error {}

export function greet(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') {
    throw new ToolFailure('`name` must not be blank');
  }
  return `Hello, ${trimmed}!`;
}

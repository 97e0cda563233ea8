// {{name}}: a Corral plugin written in JavaScript, made a WebAssembly
// component by componentize-js (./build). This module speaks the plugin
// contract (wit/plugin.wit: the world `plugin`, or the one ./build picks, see
// README.md); the tool itself is in tool.js.

import { log } from 'corral:plugin/host@0.3.0';
import { checked } from './contract.js';
import { ToolFailure, greet } from './tool.js';

const TOOL_NAME = '{{name}}';

const textResult = (text, isError = false) => ({ content: [{ tag: 'text', val: { text } }], isError });

// `checked`: a result of the wrong shape fails naming the field, not in
// the bindings' words.
export const tools = checked({
  list() {
    return [
      {
        name: TOOL_NAME,
        description: 'Say hello to someone by name.',
        // The host checks every call's arguments against this schema before
        // the plugin runs.
        inputSchema: JSON.stringify({
          type: 'object',
          properties: { name: { type: 'string', description: 'Who to greet.' } },
          required: ['name'],
          additionalProperties: false,
        }),
        annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
        icons: [],
      },
    ];
  },

  call(name, argumentsJson) {
    if (name !== TOOL_NAME) return textResult(`unknown tool: ${name}`, true);
    const args = JSON.parse(argumentsJson);
    try {
      const text = greet(args.name);
      log('info', `${name}: greeted ${JSON.stringify(args.name)}`);
      return textResult(text);
    } catch (err) {
      if (err instanceof ToolFailure) return textResult(err.message, true);
      // Anything else is a bug: let it escape. The call then fails, and its
      // error carries the message and stack the engine prints to stderr.
      throw err;
    }
  },
});

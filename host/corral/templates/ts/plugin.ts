// {{name}}: a Corral plugin written in TypeScript, made a WebAssembly
// component by componentize-js (./build). This module speaks the plugin
// contract (wit/plugin.wit: the world `plugin`, or the one ./build picks, see
// README.md), typed by the declarations
// ./build generates from it into types/ (`jco guest-types`); the tool
// itself is in tool.ts.

import { log } from 'corral:plugin/host@0.3.0';
import type { CallResult, Tool } from 'corral:plugin/tools@0.3.0';
import { ToolFailure, greet } from './tool.js';

const TOOL_NAME = '{{name}}';

/** The tool's arguments, as its input schema declares them: the host
 * checks every call's arguments against the schema before the plugin runs. */
interface Arguments {
  name: string;
}

const textResult = (text: string, isError = false): CallResult => ({
  content: [{ tag: 'text', val: { text } }],
  isError,
});

function list(): Tool[] {
  return [
    {
      name: TOOL_NAME,
      description: 'Say hello to someone by name.',
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
}

function call(name: string, argumentsJson: string): CallResult {
  if (name !== TOOL_NAME) return textResult(`unknown tool: ${name}`, true);
  const args = JSON.parse(argumentsJson) as Arguments;
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
}

/** The world's export, checked against the contract's declaration: a
 * missing function or a wrong signature fails ./build. */
export const tools: typeof import('corral:plugin/tools@0.3.0') = { list, call };

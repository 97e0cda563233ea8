// Calls a tool that asks the user, through the official MCP TypeScript client
// (npm `@modelcontextprotocol/client`) with an `elicitation/create` handler
// that answers as a user would.
//
// Usage: node ts_asks.mjs NODE_PREFIX MODE SERVER TOOL ARGUMENTS ANSWERS EXPECT
//
// MODE is "legacy" (the server sends `elicitation/create` during the call) or
// a pinned modern revision such as "2026-07-28" (the server answers
// `input_required`; the client calls again with the answers). SERVER is a
// Streamable HTTP URL, or `stdio:BINARY:DIR` to start `BINARY serve DIR`.
// ARGUMENTS is the call's JSON object; ANSWERS a JSON list of what the user
// answers, in order. The result's text must contain EXPECT and every answer
// must have been asked for. Exits non-zero on the first mismatch.
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

const [prefix, mode, server, tool, args, answers, expect] = process.argv.slice(2);
const require = createRequire(resolve(prefix, 'package.json'));
const { Client, StreamableHTTPClientTransport } = require('@modelcontextprotocol/client');
const { StdioClientTransport } = require('@modelcontextprotocol/client/stdio');

function fail(message) {
    console.error(`FAIL: ${message}`);
    process.exit(1);
}

const negotiation = mode === 'legacy' ? { mode } : { mode: { pin: mode } };
const client = new Client(
    { name: 'corral-tests', version: '0.0.0' },
    { versionNegotiation: negotiation, capabilities: { elicitation: { form: {} } } },
);
const pending = JSON.parse(answers);
const asked = [];
client.setRequestHandler('elicitation/create', async request => {
    const params = request.params;
    if (pending.length === 0) fail(`asked once more than expected: ${params.message}`);
    if (params.requestedSchema?.type !== 'object') fail(`no object schema: ${JSON.stringify(params)}`);
    asked.push(params.message);
    return pending.shift();
});

let transport;
if (server.startsWith('stdio:')) {
    const [, binary, ...folder] = server.split(':');
    transport = new StdioClientTransport({
        command: binary,
        args: ['serve', folder.join(':')],
        env: { ...process.env },
        stderr: 'inherit',
    });
} else {
    transport = new StreamableHTTPClientTransport(new URL(server));
}
await client.connect(transport);
const version = client.getNegotiatedProtocolVersion();

const result = await client.callTool({ name: tool, arguments: JSON.parse(args) });
const text = (result.content ?? []).filter(c => c.type === 'text').map(c => c.text).join(' ');
if (!text.includes(expect)) fail(`${tool} returned ${JSON.stringify(result)}; expected it to contain ${expect}`);
if (pending.length > 0) fail(`${pending.length} answer(s) never asked for; asked: ${asked}`);
await client.close();
console.log(`ts client (${mode}, ${version}): ${tool} asked ${JSON.stringify(asked)} and said ${JSON.stringify(text)}`);
process.exit(0);

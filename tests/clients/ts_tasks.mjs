// Runs tools as tasks (the `io.modelcontextprotocol/tasks` extension of
// 2026-07-28, SEP-2663) through the official TypeScript task API: the
// MCP project's `@modelcontextprotocol/ext-tasks` package on top of the
// official client (npm `@modelcontextprotocol/client`), over Streamable HTTP.
//
// Usage: node ts_tasks.mjs NODE_PREFIX EXT_TASKS_PREFIX URL PART
//
// NODE_PREFIX holds the pinned client (target/clients/node, made by
// tests/clients/setup-node); EXT_TASKS_PREFIX holds `@modelcontextprotocol/ext-tasks`
// (the MCP Inspector's install, target/clients/inspector, which runs its
// tasks through it). URL serves the conformance fixture with a short
// `task-after`. PART is one of:
//
// - "bare": the client alone, declaring the extension, calls `slow_compute`.
//   It has no 2026-07-28 task API: its 2026 codec rejects the server's
//   `resultType: "task"` with UNSUPPORTED_RESULT_TYPE, which is checked.
// - "slow": ext-tasks calls `slow_compute` (3 s); the call must come back a
//   task (a task handle, `working` seen), polled to its completed result.
// - "confirm": ext-tasks calls `confirm_delete`; the task asks for consent,
//   the session's `onInputRequest` answers it (`tasks/update`), and the
//   task completes with "Deleted".
// - "cancel": ext-tasks calls `slow_compute` (60 s) and cancels the task
//   (`tasks/cancel`); the outcome is `cancelled`.
//
// ext-tasks needs, for a 2026-07-28 server, a host-owned `rawDispatch`
// because the client's codec rejects task-shaped results: here that is a
// second `StreamableHTTPClientTransport` of the same client package, which
// ext-tasks hands the requests it frames itself. Every request it sends is
// counted by method and checked. Exits non-zero on the first mismatch.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [prefix, extPrefix, url, part] = process.argv.slice(2);
const require = createRequire(resolve(prefix, 'package.json'));
const { Client, StreamableHTTPClientTransport, SdkError } = require('@modelcontextprotocol/client');

const TASKS = 'io.modelcontextprotocol/tasks';
const VERSION = '2026-07-28';
const clientInfo = { name: 'corral-tests', version: '0.0.0' };

function fail(message) {
    console.error(`FAIL: ${message}`);
    process.exit(1);
}

function packageVersion(root, name) {
    return JSON.parse(readFileSync(resolve(root, 'node_modules', name, 'package.json'), 'utf8')).version;
}

/** Imports an ESM-only package's subpath export from another npm prefix. */
async function importFrom(root, name, subpath) {
    const dir = resolve(root, 'node_modules', name);
    const manifest = JSON.parse(readFileSync(resolve(dir, 'package.json'), 'utf8'));
    const entry = manifest.exports[subpath]?.import;
    if (typeof entry !== 'string') fail(`${name} exports no ${subpath}`);
    return import(pathToFileURL(resolve(dir, entry)).href);
}

function text(result) {
    return (result?.content ?? []).filter(c => c.type === 'text').map(c => c.text).join(' ');
}

async function connect(options = {}) {
    const client = new Client(clientInfo, { versionNegotiation: { mode: { pin: VERSION } }, ...options });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const version = client.getNegotiatedProtocolVersion();
    if (version !== VERSION) fail(`pinned ${VERSION} but negotiated ${version}`);
    return client;
}

const clientVersion = packageVersion(prefix, '@modelcontextprotocol/client');

if (part === 'bare') {
    // The client declares the extension, as its ClientCapabilities allow...
    const client = await connect({ capabilities: { extensions: { [TASKS]: {} } } });
    const advertised = client.getServerCapabilities()?.extensions?.[TASKS];
    if (advertised === undefined) fail(`the server does not advertise ${TASKS}: ${JSON.stringify(client.getServerCapabilities())}`);
    // ...but cannot take the task the server answers with.
    try {
        const result = await client.callTool({ name: 'slow_compute', arguments: { seconds: 3, label: 'bare' } });
        fail(`callTool returned ${JSON.stringify(result)}; expected the client to reject a task`);
    } catch (error) {
        if (!(error instanceof SdkError) || error.code !== 'UNSUPPORTED_RESULT_TYPE' || error.data?.resultType !== 'task') {
            fail(`expected UNSUPPORTED_RESULT_TYPE for resultType "task", got ${error?.stack ?? error}`);
        }
        console.log(`ts client ${clientVersion} alone: callTool rejects the task: ${error.message}`);
    }
    await client.close();
    process.exit(0);
}

const extVersion = packageVersion(extPrefix, '@modelcontextprotocol/ext-tasks');
const tasks = await importFrom(extPrefix, '@modelcontextprotocol/ext-tasks', './client');
const client = await connect();
const { tools } = await client.listTools();

// The raw request path ext-tasks asks the host for: its framed requests,
// sent as they are through the client package's own HTTP transport (which
// sets MCP-Protocol-Version, Mcp-Method and Mcp-Name from the body).
const sent = {};
const pending = new Map();
let nextId = 0;
const raw = new StreamableHTTPClientTransport(new URL(url));
raw.onmessage = message => {
    const waiter = pending.get(message.id);
    if (waiter === undefined) return;
    pending.delete(message.id);
    waiter(message.error === undefined
        ? { kind: 'result', result: message.result }
        : { kind: 'error', error: message.error });
};
raw.onerror = error => console.error(`raw transport: ${error}`);
await raw.start();
async function rawDispatch(request, options = {}) {
    sent[request.method] = (sent[request.method] ?? 0) + 1;
    const id = `ts-tasks-${++nextId}`;
    const answered = new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
            pending.delete(id);
            reject(new tasks.DispatchError(`${request.method} timed out`));
        }, 60_000);
        pending.set(id, response => {
            clearTimeout(timer);
            resolve(response);
        });
        options.signal?.addEventListener('abort', () => {
            pending.delete(id);
            clearTimeout(timer);
            reject(options.signal.reason ?? new Error('aborted'));
        }, { once: true });
    });
    await raw.send({ ...request, jsonrpc: '2.0', id }, {
        ...(options.context?.headers === undefined ? {} : { headers: options.context.headers }),
    });
    return answered;
}

const asked = [];
const session = tasks.createTaskSessionFromClient(client, {
    endpointId: await tasks.createTaskSessionEndpointId('corral-tests', { url }),
    rawDispatch,
    v2RequestFraming: { protocolVersion: VERSION, clientInfo, clientCapabilities: { elicitation: { form: {} } } },
    onInputRequest: async (request, context) => {
        asked.push({ request, context });
        if (request.kind !== 'elicitation') fail(`asked ${request.kind}: ${JSON.stringify(request)}`);
        return { action: 'accept', content: { confirm: true } };
    },
    onError: error => console.error(`ext-tasks: ${error.stack ?? error}`),
});
if (session.capabilities.execution !== true) fail(`ext-tasks sees no task execution: ${JSON.stringify(session.capabilities)}`);

/** Calls `name` as a task (required, not merely allowed) and settles it. */
async function runTask(name, args, { cancelAfterMs } = {}) {
    const declaration = tasks.toolDeclarationFromMcpTool(tools.find(tool => tool.name === name) ?? fail(`no ${name}`));
    const execution = await session.callTool(name, args, { declaration, task: { preference: 'require' } });
    if (execution.kind !== 'task') fail(`${name} came back ${execution.kind}, not a task`);
    const taskId = execution.handle.taskId;
    const seen = [];
    if (cancelAfterMs !== undefined) setTimeout(() => execution.cancel().catch(e => fail(`cancel: ${e}`)), cancelAfterMs);
    const { outcome } = await execution.settle({
        onEvent: event => {
            const view = tasks.taskViewFromExecutionEvent(event);
            if (view === undefined) return;
            if (view.taskId !== taskId) fail(`an event of task ${view.taskId} on task ${taskId}`);
            if (seen.at(-1) !== view.status) seen.push(view.status);
        },
    });
    console.log(`ts ext-tasks ${extVersion} on client ${clientVersion}: ${name} task ${taskId} went ${seen.join(' -> ')}, ended ${outcome.status}`);
    return { taskId, seen, outcome };
}

if (part === 'slow') {
    const started = Date.now();
    const { seen, outcome } = await runTask('slow_compute', { seconds: 3, label: 'ts' });
    if (!seen.includes('working')) fail(`no working status seen: ${seen}`);
    const result = tasks.resultFromTaskOutcome(outcome);
    if (text(result) !== 'computed ts after 3 s') fail(`the task's result: ${JSON.stringify(result)}`);
    if (Date.now() - started < 3000) fail(`done in ${Date.now() - started} ms, before the tool could have`);
    if (sent['tools/call'] !== 1 || !(sent['tasks/get'] >= 1)) fail(`requests sent: ${JSON.stringify(sent)}`);
} else if (part === 'confirm') {
    const { taskId, seen, outcome } = await runTask('confirm_delete', { filename: 'notes.txt' });
    const result = tasks.resultFromTaskOutcome(outcome);
    if (text(result) !== 'Deleted notes.txt.') fail(`the task's result: ${JSON.stringify(result)}`);
    if (asked.length !== 1) fail(`asked ${asked.length} times: ${JSON.stringify(asked)}`);
    const [{ request, context }] = asked;
    if (request.params.message !== 'Delete notes.txt?') fail(`asked ${JSON.stringify(request.params)}`);
    if (context.scope !== 'task' || context.delivery !== 'task-update' || context.taskId !== taskId) {
        fail(`the question did not come from task ${taskId}: ${JSON.stringify(context)}`);
    }
    if (!seen.includes('input_required')) fail(`no input_required status seen: ${seen}`);
    if (sent['tasks/update'] !== 1) fail(`requests sent: ${JSON.stringify(sent)}`);
} else if (part === 'cancel') {
    const { outcome } = await runTask('slow_compute', { seconds: 60, label: 'never' }, { cancelAfterMs: 1500 });
    if (outcome.status !== 'cancelled') fail(`the cancelled task ended ${JSON.stringify(outcome)}`);
    if (sent['tasks/cancel'] !== 1) fail(`requests sent: ${JSON.stringify(sent)}`);
} else {
    fail(`unknown part ${part}`);
}
console.log(`requests ext-tasks sent: ${JSON.stringify(sent)}`);
await session.close();
await raw.close();
await client.close();
process.exit(0);

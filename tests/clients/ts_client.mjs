// Drives `corral serve` with the official MCP TypeScript client
// (npm `@modelcontextprotocol/client`) over its stdio transport.
//
// Usage: node ts_client.mjs NODE_PREFIX MODE PART CORRAL_BINARY PLUGIN_DIR
//
// NODE_PREFIX is the `npm install --prefix` folder holding the client
// (target/clients/node, made by tests/clients/setup-node).
// MODE is "legacy", "auto" or a pinned modern revision such as "2026-07-28"
// (`versionNegotiation.mode`). PART "calls" lists the tools and calls add,
// analyze_text and mandelbrot; PART "list-changed" serves a copy of PLUGIN_DIR
// holding only calc, copies textstats in while connected and waits for
// `notifications/tools/list_changed` (on a `subscriptions/listen` stream in the
// modern era). Exits non-zero on the first mismatch.
import { createRequire } from 'node:module';
import { copyFileSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const [prefix, mode, part, binary, sourcePlugins] = process.argv.slice(2);
// Resolve the SDK from the prefix, not from this script's folder.
const require = createRequire(resolve(prefix, 'package.json'));
const { Client } = require('@modelcontextprotocol/client');
const { StdioClientTransport } = require('@modelcontextprotocol/client/stdio');

function fail(message) {
    console.error(`FAIL: ${message}`);
    process.exit(1);
}

if (part !== 'calls' && part !== 'list-changed') fail(`unknown part ${part}`);
let plugins = sourcePlugins;
if (part === 'list-changed') {
    plugins = mkdtempSync(join(tmpdir(), 'corral-ts-'));
    copyFileSync(join(sourcePlugins, 'calc.wasm'), join(plugins, 'calc.wasm'));
    process.on('exit', () => rmSync(plugins, { recursive: true, force: true }));
}

const negotiation = mode === 'legacy' || mode === 'auto' ? { mode } : { mode: { pin: mode } };
const client = new Client({ name: 'corral-tests', version: '0.0.0' }, { versionNegotiation: negotiation });
const transport = new StdioClientTransport({
    command: binary,
    args: ['serve', plugins],
    env: { ...process.env },
    stderr: 'inherit',
});
await client.connect(transport);
const version = client.getNegotiatedProtocolVersion();
console.log(`${mode}: negotiated ${version}`);
if (mode === 'legacy' && version.startsWith('2026')) fail(`legacy mode negotiated ${version}`);
if (mode === 'auto' && !version.startsWith('2026')) fail(`auto mode fell back to ${version}; corral speaks server/discover`);
if (mode !== 'legacy' && mode !== 'auto' && version !== mode) fail(`pinned ${mode} but negotiated ${version}`);

if (part === 'list-changed') {
    let changed;
    const heard = new Promise(resolve => (changed = resolve));
    client.setNotificationHandler('notifications/tools/list_changed', () => changed());
    const before = (await client.listTools()).tools.map(tool => tool.name);
    if (before.includes('analyze_text')) fail(`textstats served before it was copied in: ${before}`);
    const subscription = version.startsWith('2026') ? await client.listen({ toolsListChanged: true }) : null;
    // Copy under a name the watcher ignores, then rename: the plugin appears whole.
    copyFileSync(join(sourcePlugins, 'textstats.wasm'), join(plugins, 'textstats.partial'));
    renameSync(join(plugins, 'textstats.partial'), join(plugins, 'textstats.wasm'));
    const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error('no list_changed in 30 s')), 30_000).unref());
    await Promise.race([heard, timeout]).catch(err => fail(err.message));
    console.log('ok notifications/tools/list_changed');
    const after = (await client.listTools()).tools.map(tool => tool.name);
    if (!after.includes('analyze_text')) fail(`analyze_text missing after the change: ${after}`);
    console.log('ok tools/list after the change');
    await subscription?.close();
    await client.close();
    console.log(`ts client (${mode}): list-changed passed`);
    process.exit(0);
}

const { tools } = await client.listTools();
const names = tools.map(tool => tool.name);
for (const name of ['add', 'analyze_text', 'mandelbrot']) {
    if (!names.includes(name)) fail(`${name} missing from tools/list: ${names}`);
}
console.log(`ok tools/list (${names.length} tools)`);

const text = result => result.content.find(c => c.type === 'text')?.text;

const add = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
if (add.isError || text(add) !== '5') fail(`add returned ${JSON.stringify(add)}`);
console.log('ok add');

const stats = await client.callTool({ name: 'analyze_text', arguments: { text: 'Hello world. Hello again.' } });
if (stats.isError) fail(`analyze_text returned ${JSON.stringify(stats)}`);
// structuredContent exists from 2025-06-18 on; older revisions get it as JSON text.
const structured = stats.structuredContent ?? JSON.parse(text(stats));
if (structured.words !== 4 || structured.top_words[0].word !== 'hello') {
    fail(`analyze_text returned ${JSON.stringify(stats)}`);
}
console.log('ok analyze_text');

const image = await client.callTool({ name: 'mandelbrot', arguments: { width: 16, height: 16 } });
const png = image.content.find(c => c.type === 'image');
if (image.isError || !png || png.mimeType !== 'image/png' || Buffer.from(png.data, 'base64').subarray(1, 4).toString() !== 'PNG') {
    fail(`mandelbrot returned ${JSON.stringify(image).slice(0, 500)}`);
}
console.log('ok mandelbrot');

await client.close();
console.log(`ts client (${mode}): 4 checks passed`);

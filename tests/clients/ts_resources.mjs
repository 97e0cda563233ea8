// Lists, reads, subscribes to and completes the resources and prompts of a
// plugin through the official MCP TypeScript client (npm
// `@modelcontextprotocol/client`).
//
// Usage: node ts_resources.mjs NODE_PREFIX MODE SERVER PART
//
// MODE is "legacy" (`initialize`; `resources/subscribe` and a
// `notifications/resources/updated` on the connection) or a pinned modern
// revision such as "2026-07-28" (a `subscriptions/listen` stream with
// `resourceSubscriptions`). SERVER is a Streamable HTTP URL, or
// `stdio:BINARY:DIR` to start `BINARY serve DIR`. PART "fixture" exercises
// the fixture tests/plugins/conformance-resources, and "handbook" the example
// plugins/handbook (checked against its markdown files); DIR must serve that
// plugin, and nothing else with resources or prompts. Exits non-zero on the
// first mismatch.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const [prefix, mode, server, part] = process.argv.slice(2);
if (part !== 'fixture' && part !== 'handbook') {
    console.error(`FAIL: unknown part ${part}: fixture or handbook`);
    process.exit(1);
}
const require = createRequire(resolve(prefix, 'package.json'));
const { Client, ResourceNotFoundError, StreamableHTTPClientTransport } = require('@modelcontextprotocol/client');
const { StdioClientTransport } = require('@modelcontextprotocol/client/stdio');

const WATCHED = 'test://watched-resource';
const TEMPLATE = 'test://template/{id}/data';
const WAIT_MS = 30_000;

function fail(message) {
    console.error(`FAIL: ${message}`);
    process.exit(1);
}

function check(condition, what, got) {
    if (!condition) fail(`${what}: got ${JSON.stringify(got)}`);
    console.log(`ok ${what}`);
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** Resolves when `promise` does, fails the script after WAIT_MS. */
function within(promise, what) {
    const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error(`no ${what} in ${WAIT_MS} ms`)), WAIT_MS).unref());
    return Promise.race([promise, timeout]).catch(err => fail(err.message));
}

/** The error `promise` rejects with; fails the script if it resolves. */
async function refusal(promise, what) {
    try {
        const result = await promise;
        fail(`${what} succeeded: ${JSON.stringify(result)}`);
    } catch (err) {
        return err;
    }
}

const negotiation = mode === 'legacy' ? { mode } : { mode: { pin: mode } };
const client = new Client(
    { name: 'corral-tests', version: '0.0.0' },
    { versionNegotiation: negotiation, capabilities: { elicitation: { form: {} } } },
);
client.setRequestHandler('elicitation/create', async request => {
    if (request.params.message !== 'What context should the prompt use?') fail(`asked something else: ${JSON.stringify(request.params)}`);
    return { action: 'accept', content: { context: 'a tidy room' } };
});
let updated;
const heardUpdate = new Promise(resolve => (updated = resolve));
client.setNotificationHandler('notifications/resources/updated', notification => {
    if (notification.params.uri === WATCHED) updated();
});

let transport;
if (server.startsWith('stdio:')) {
    const [, binary, ...folder] = server.split(':');
    transport = new StdioClientTransport({ command: binary, args: ['serve', folder.join(':')], env: { ...process.env }, stderr: 'inherit' });
} else {
    transport = new StreamableHTTPClientTransport(new URL(server));
}
await client.connect(transport);
const version = client.getNegotiatedProtocolVersion();
console.log(`${mode}: negotiated ${version}`);
const capabilities = client.getServerCapabilities();
check(capabilities?.resources && capabilities?.prompts && capabilities?.completions, 'the resources, prompts and completions capabilities', capabilities);

if (part === 'handbook') {
    await handbook();
    await client.close();
    console.log(`ts client (${mode}, ${version}): the handbook's resources, prompts and completion passed`);
    process.exit(0);
}

// ---- resources ----
const { resources } = await client.listResources();
check(same(resources.map(r => r.uri), ['test://static-text', 'test://static-binary', WATCHED]), 'resources/list', resources);
const { resourceTemplates } = await client.listResourceTemplates();
check(same(resourceTemplates.map(t => t.uriTemplate), [TEMPLATE]), 'resources/templates/list', resourceTemplates);

const text = (await client.readResource({ uri: 'test://static-text' })).contents;
check(text.length === 1 && text[0].text === 'This is the content of the static text resource.' && text[0].mimeType === 'text/plain', 'resources/read of a text resource', text);
const blob = (await client.readResource({ uri: 'test://static-binary' })).contents;
check(blob.length === 1 && Buffer.from(blob[0].blob, 'base64').subarray(1, 4).toString() === 'PNG' && blob[0].mimeType === 'image/png', 'resources/read of a blob', blob);
const data = (await client.readResource({ uri: 'test://template/123/data' })).contents;
check(data.length === 1 && same(JSON.parse(data[0].text), { id: '123', templateTest: true, data: 'Data for ID: 123' }), 'resources/read through a template', data);

// Resource not found, with the URI in `data`. The client reports it as its
// ResourceNotFoundError, code -32602, in every revision (it takes the
// -32002 of 2025-11-25 for the same); tests/resources.rs checks each era's
// code on the wire.
const notFound = await refusal(client.readResource({ uri: 'test://nowhere' }), 'resources/read of an unknown URI');
check(ResourceNotFoundError.isInstance(notFound) && notFound.data?.uri === 'test://nowhere', 'resources/read of an unknown URI is resource-not-found', { code: notFound.code, message: notFound.message, data: notFound.data });

// ---- subscriptions ----
if (mode === 'legacy') {
    await client.subscribeResource({ uri: WATCHED });
    const called = await client.callTool({ name: 'test_update_watched_resource', arguments: {} });
    check(!called.isError, 'test_update_watched_resource', called);
    await within(heardUpdate, 'notifications/resources/updated');
    console.log('ok notifications/resources/updated');
    await client.unsubscribeResource({ uri: WATCHED });
    console.log('ok resources/unsubscribe');
} else {
    const subscription = await client.listen({ resourceSubscriptions: [WATCHED] });
    check(same(subscription.honoredFilter?.resourceSubscriptions, [WATCHED]), 'subscriptions/listen honors the resource', subscription.honoredFilter);
    const called = await client.callTool({ name: 'test_update_watched_resource', arguments: {} });
    check(!called.isError, 'test_update_watched_resource', called);
    await within(heardUpdate, 'notifications/resources/updated on the listen stream');
    console.log('ok notifications/resources/updated on the listen stream');
    await subscription.close();
}

// ---- prompts ----
const texts = result => result.messages.filter(m => m.content.type === 'text').map(m => m.content.text);
const { prompts } = await client.listPrompts();
check(
    same(prompts.map(p => p.name), ['test_simple_prompt', 'test_prompt_with_arguments', 'test_prompt_with_embedded_resource', 'test_prompt_with_image', 'test_input_required_result_prompt']),
    'prompts/list',
    prompts,
);
check(same(prompts[1].arguments.map(a => [a.name, a.required]), [['arg1', true], ['arg2', true]]), "a prompt's arguments", prompts[1]);

const simple = await client.getPrompt({ name: 'test_simple_prompt' });
check(same(texts(simple), ['This is a simple prompt for testing.']), 'prompts/get', simple);
const filled = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'hello', arg2: 'world' } });
check(same(texts(filled), ["Prompt with arguments: arg1='hello', arg2='world'"]), 'prompts/get with arguments', filled);
const embedded = await client.getPrompt({ name: 'test_prompt_with_embedded_resource', arguments: { resourceUri: 'test://example' } });
const resource = embedded.messages[0].content;
check(resource.type === 'resource' && resource.resource.uri === 'test://example' && resource.resource.text === 'Embedded resource content for testing.', 'prompts/get with an embedded resource', embedded);
const image = await client.getPrompt({ name: 'test_prompt_with_image' });
const png = image.messages[0].content;
check(png.type === 'image' && Buffer.from(png.data, 'base64').subarray(1, 4).toString() === 'PNG', 'prompts/get with an image', image);
const missing = await refusal(client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'only one' } }), 'prompts/get without a required argument');
check(missing.code === -32602, 'prompts/get without a required argument is invalid params', { code: missing.code, message: missing.message });
const asked = await client.getPrompt({ name: 'test_input_required_result_prompt' });
check(same(texts(asked), ['Prompt with the context the user gave: a tidy room']), 'a prompt that asks the user', asked);

// ---- completion ----
const argument = await client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'par' } });
check(same(argument.completion.values, ['paris', 'park', 'party']), 'completion of a prompt argument', argument);
const variable = await client.complete({ ref: { type: 'ref/resource', uri: TEMPLATE }, argument: { name: 'id', value: '12' } });
check(same(variable.completion.values, ['123', '124', '125']), 'completion of a template variable', variable);

await client.close();
console.log(`ts client (${mode}, ${version}): resources, prompts and completion passed`);
process.exit(0);

/** The example plugins/handbook, checked against its markdown files. */
async function handbook() {
    const sections = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'plugins', 'handbook', 'src', 'sections');
    const section = name => readFileSync(join(sections, `${name}.md`), 'utf8');
    const names = ['intro', 'install', 'plugins', 'security'];
    const { resources } = await client.listResources();
    check(same(resources.map(r => r.uri), names.map(name => `handbook://${name}`)), "the handbook's resources", resources);
    check(resources.every(r => r.mimeType === 'text/markdown'), 'markdown resources', resources);
    for (const name of names) {
        const { contents } = await client.readResource({ uri: `handbook://${name}` });
        check(contents.length === 1 && contents[0].text === section(name) && contents[0].mimeType === 'text/markdown', `resources/read of handbook://${name}`, contents);
    }
    const { resourceTemplates } = await client.listResourceTemplates();
    check(same(resourceTemplates.map(t => t.uriTemplate), ['handbook://{section}']), "the handbook's template", resourceTemplates);
    const variable = await client.complete({ ref: { type: 'ref/resource', uri: 'handbook://{section}' }, argument: { name: 'section', value: 'in' } });
    check(same(variable.completion.values, ['intro', 'install']), 'section names complete', variable);

    const { prompts } = await client.listPrompts();
    check(same(prompts.map(p => p.name), ['explain_section']), "the handbook's prompt", prompts);
    const explained = await client.getPrompt({ name: 'explain_section', arguments: { section: 'plugins', audience: 'developer' } });
    const first = explained.messages[0].content;
    const embedded = explained.messages[explained.messages.length - 1].content;
    check(
        first.type === 'text' && first.text.includes('developer') && embedded.type === 'resource' && embedded.resource.uri === 'handbook://plugins' && embedded.resource.text === section('plugins'),
        'explain_section embeds the section',
        explained,
    );
    const argument = await client.complete({ ref: { type: 'ref/prompt', name: 'explain_section' }, argument: { name: 'section', value: 's' } });
    check(same(argument.completion.values, ['security']), "the prompt's section completes", argument);
}

// A user's own secret, set through Corral's page, with the official MCP
// TypeScript client (npm `@modelcontextprotocol/client`): the user signs in
// (OAuth, as ts_oauth.mjs) and calls a tool whose plugin needs their own
// secret. Corral asks with a URL-mode elicitation; the client, declaring
// `elicitation: { url: {} }`, accepts, and the user's browser (here: fetch,
// see oauth_user.mjs) opens the page, signs in to it with the same issuer
// and enters the value, which never passes through the client.
//
// Usage: node ts_own_secret.mjs NODE_PREFIX SPEC_JSON
//
// SPEC_JSON is one JSON object:
//   url        Corral's MCP endpoint
//   mode       "legacy" or a pinned revision such as "2026-07-28"
//   user       who signs in to the MCP client
//   browser    who signs in to the page the elicitation names (default:
//              `user`; another user stands for a link passed on)
//   value      what the browser enters on the page
//   calls      [{ "name", "arguments" }] called in order
//
// Prints one JSON line: { protocolVersion, calls: [{ result } or { error }],
// elicitations: [the params of each elicitation/create], completed: [the
// elicitationId of each notifications/elicitation/complete], pages: [the
// last page the browser saw ({ page }) or { error }, per elicitation] }.
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { ConsentingUser, browse } from './oauth_user.mjs';

const [prefix, specJson] = process.argv.slice(2);
const require = createRequire(resolve(prefix, 'package.json'));
const { Client, StreamableHTTPClientTransport, UnauthorizedError } = require('@modelcontextprotocol/client');

const spec = JSON.parse(specJson);
const auth = new ConsentingUser(spec.user);
const negotiation = spec.mode === 'legacy' ? { mode: 'legacy' } : { mode: { pin: spec.mode } };
const elicitations = [];
const completed = [];
const pages = [];
const browsing = [];

function connectClient() {
    const client = new Client(
        { name: 'corral-ts-own-secret', version: '0.0.0' },
        { versionNegotiation: negotiation, capabilities: { elicitation: { url: {} } } },
    );
    client.setRequestHandler('elicitation/create', async request => {
        const params = request.params;
        elicitations.push(params);
        if (params.mode !== 'url') return { action: 'decline' };
        // The user consents; the client answers at once, and the browser
        // opens the page meanwhile, as the spec describes.
        const user = spec.browser ?? spec.user;
        browsing.push(
            browse(new URL(params.url), user, { value: spec.value }).then(
                outcome => pages.push({ page: outcome.page?.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim() }),
                err => pages.push({ error: err.message }),
            ),
        );
        return { action: 'accept' };
    });
    client.setNotificationHandler('notifications/elicitation/complete', notification => {
        completed.push(notification.params.elicitationId);
    });
    return client;
}

let transport = new StreamableHTTPClientTransport(new URL(spec.url), { authProvider: auth });
let client = connectClient();
try {
    await client.connect(transport);
} catch (err) {
    if (!(err instanceof UnauthorizedError) || !auth.callback) throw err;
    await transport.finishAuth(auth.callback);
    transport = new StreamableHTTPClientTransport(new URL(spec.url), { authProvider: auth });
    client = connectClient();
    await client.connect(transport);
}
const protocolVersion = client.getNegotiatedProtocolVersion();

const calls = [];
for (const { name, arguments: args } of spec.calls ?? []) {
    try {
        calls.push({ result: await client.callTool({ name, arguments: args ?? {} }) });
    } catch (err) {
        calls.push({ error: `${err.constructor.name}: ${err.message}` });
    }
}
await Promise.all(browsing);
await client.close();
console.log(JSON.stringify({ protocolVersion, calls, elicitations, completed, pages }));

// The official MCP TypeScript client (npm `@modelcontextprotocol/client`)
// through the OAuth flow of the MCP authorization spec against a Corral that
// only knows its URL: the first request's 401 names the protected resource
// metadata, which names the authorization server (tests/oidc/provider.mjs);
// the SDK discovers it, registers itself (RFC 7591) and asks for a token for
// Corral's resource (RFC 8707), with PKCE. The user's sign-in and consent are
// given here programmatically: the "browser" this script stands in for
// follows the provider's interaction pages with fetch and fills in their
// forms as the user would.
//
// Usage: node ts_oauth.mjs NODE_PREFIX SPEC_JSON
//
// SPEC_JSON is one JSON object:
//   url      Corral's MCP endpoint (http://127.0.0.1:PORT/mcp)
//   mode     "legacy" or a pinned revision such as "2026-07-28"
//   flow     "code" (authorization code + PKCE, signing in as `user`) or
//            "client_credentials" (the pre-registered `client_id` and
//            `client_secret`, asking for `scope`)
//   calls    [{ "name", "arguments" }] called in order after tools/list
//   step_up  when true, a 403 insufficient_scope is answered as the SDK does
//            by default: it asks the user again for the union of the scopes
//            (the user consents here) and the call is retried once; when
//            false the SDK throws InsufficientScopeError
//
// Prints one JSON line: { protocolVersion, tools: [names], calls: [{ result }
// or { error, requiredScope }], tokens: [the claims of each access token the
// SDK obtained], authorizations: [the authorization requests' parameters],
// registrations: how many clients the SDK registered }. Exits non-zero when
// the flow itself fails.
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { ConsentingUser, claims } from './oauth_user.mjs';

const [prefix, specJson] = process.argv.slice(2);
const require = createRequire(resolve(prefix, 'package.json'));
const {
    Client,
    ClientCredentialsProvider,
    InsufficientScopeError,
    StreamableHTTPClientTransport,
    UnauthorizedError,
} = require('@modelcontextprotocol/client');

const spec = JSON.parse(specJson);
const tokens = [];
const authorizations = [];
let registrations = 0;
const record = ({ registered, token, authorization }) => {
    if (registered) registrations += 1;
    if (token) tokens.push(token);
    if (authorization) authorizations.push(authorization);
};

class RecordingClientCredentials extends ClientCredentialsProvider {
    saveTokens(saved) {
        tokens.push(claims(saved.access_token));
        super.saveTokens(saved);
    }
}

const auth =
    spec.flow === 'code'
        ? new ConsentingUser(spec.user, record)
        : new RecordingClientCredentials({
              clientId: spec.client_id,
              clientSecret: spec.client_secret,
              scope: spec.scope,
              expectedIssuer: spec.issuer,
          });
const negotiation = spec.mode === 'legacy' ? { mode: 'legacy' } : { mode: { pin: spec.mode } };
const options = { authProvider: auth, onInsufficientScope: spec.step_up ? 'reauthorize' : 'throw' };

/// Runs `action` on `transport`; when it stopped at the user's authorization
/// (UnauthorizedError after redirectToAuthorization), completes it with the
/// code the browser brought back and returns true so the caller retries.
async function authorized(transport, action) {
    try {
        return { value: await action() };
    } catch (err) {
        if (!(err instanceof UnauthorizedError) || !auth.callback) throw err;
        const callback = auth.callback;
        auth.callback = undefined;
        await transport.finishAuth(callback);
        return { retry: true };
    }
}

let transport = new StreamableHTTPClientTransport(new URL(spec.url), options);
let client = new Client({ name: 'corral-ts-oauth', version: '0.0.0' }, { versionNegotiation: negotiation });
if ((await authorized(transport, () => client.connect(transport))).retry) {
    // A client starts over once it holds a token, on a new transport.
    transport = new StreamableHTTPClientTransport(new URL(spec.url), options);
    client = new Client({ name: 'corral-ts-oauth', version: '0.0.0' }, { versionNegotiation: negotiation });
    await client.connect(transport);
}
const protocolVersion = client.getNegotiatedProtocolVersion();
const tools = (await client.listTools()).tools.map(tool => tool.name);

const calls = [];
for (const { name, arguments: args } of spec.calls ?? []) {
    const call = () => client.callTool({ name, arguments: args ?? {} });
    try {
        let outcome = await authorized(transport, call);
        if (outcome.retry) outcome = { value: await call() };
        calls.push({ result: outcome.value });
    } catch (err) {
        if (!(err instanceof InsufficientScopeError)) console.error(err);
        calls.push({ error: `${err.constructor.name}: ${err.message}`, requiredScope: err.requiredScope });
    }
}
await client.close();
console.log(JSON.stringify({ protocolVersion, tools, calls, tokens, authorizations, registrations }));

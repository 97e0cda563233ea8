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
// Where the authorization server sends the browser back; nothing listens
// there: the browser below stops at it and hands its query to the client.
const REDIRECT = 'http://127.0.0.1:1/callback';

const claims = token => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
const tokens = [];
const authorizations = [];
let registrations = 0;

/// The user agent: from the authorization URL through the provider's sign-in
/// and consent pages (oidc-provider's development interactions) to the
/// redirect back to the client, whose query it returns.
async function browse(authorizationUrl, user) {
    const cookies = new Map();
    let url = authorizationUrl.href;
    let request = { method: 'GET' };
    for (let step = 0; step < 20; step++) {
        if (url.startsWith(REDIRECT)) return new URL(url).searchParams;
        const headers = { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') };
        if (request.body) headers['content-type'] = 'application/x-www-form-urlencoded';
        const response = await fetch(url, { ...request, headers, redirect: 'manual' });
        for (const cookie of response.headers.getSetCookie()) {
            const pair = cookie.split(';')[0];
            const at = pair.indexOf('=');
            const [name, value] = [pair.slice(0, at), pair.slice(at + 1)];
            if (value) cookies.set(name, value);
            else cookies.delete(name);
        }
        if (response.status >= 300 && response.status < 400) {
            url = new URL(response.headers.get('location'), url).href;
            request = { method: 'GET' };
            continue;
        }
        const page = await response.text();
        if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${page.slice(0, 500)}`);
        const action = page.match(/<form[^>]*action="([^"]+)"/)?.[1]?.replaceAll('&amp;', '&');
        const prompt = page.match(/name="prompt" value="([^"]+)"/)?.[1];
        if (!action || !prompt) throw new Error(`no form on ${url}: ${page.slice(0, 500)}`);
        // Sign in as the user (the development pages take any password),
        // then grant what the client asked for.
        const form = prompt === 'login' ? { prompt, login: user, password: 'any' } : { prompt };
        url = new URL(action, url).href;
        request = { method: 'POST', body: new URLSearchParams(form).toString() };
    }
    throw new Error('the authorization did not come back to the client within 20 steps');
}

/// An in-memory OAuthClientProvider for a user who consents to what is asked.
class ConsentingUser {
    constructor(user) {
        this.user = user;
        this.callback = undefined;
    }
    get redirectUrl() {
        return REDIRECT;
    }
    get clientMetadata() {
        return {
            client_name: 'corral ts_oauth.mjs',
            redirect_uris: [REDIRECT],
            grant_types: ['authorization_code', 'refresh_token'],
            response_types: ['code'],
            token_endpoint_auth_method: 'none',
        };
    }
    clientInformation() {
        return this.client;
    }
    saveClientInformation(client) {
        registrations += 1;
        this.client = client;
    }
    tokens() {
        return this.saved;
    }
    saveTokens(saved) {
        tokens.push(claims(saved.access_token));
        this.saved = saved;
    }
    async redirectToAuthorization(url) {
        authorizations.push(Object.fromEntries(url.searchParams));
        this.callback = await browse(url, this.user);
    }
    saveDiscoveryState(state) {
        this.discovered = state;
    }
    discoveryState() {
        return this.discovered;
    }
    saveCodeVerifier(verifier) {
        this.verifier = verifier;
    }
    codeVerifier() {
        return this.verifier;
    }
}

class RecordingClientCredentials extends ClientCredentialsProvider {
    saveTokens(saved) {
        tokens.push(claims(saved.access_token));
        super.saveTokens(saved);
    }
}

const auth =
    spec.flow === 'code'
        ? new ConsentingUser(spec.user)
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

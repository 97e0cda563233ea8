// The authorization server of the OAuth tests: npm `oidc-provider` (an
// OpenID Certified implementation, installed by tests/oidc/setup) on
// 127.0.0.1 with an ephemeral port.
//
// Usage: node provider.mjs NODE_PREFIX CONFIG_JSON
//
// Prints the issuer URL (http://127.0.0.1:PORT) as stdout's first line once it
// listens, and serves until killed. CONFIG_JSON is a file holding:
//   key      the private JWK (EC P-256, with `kid`) that signs every token:
//            the tests keep it to sign crafted tokens with the issuer's key;
//   scopes   the scopes every resource server knows ("mcp files:read ...");
//   clients  pre-registered confidential clients for client_credentials:
//            [{ "client_id", "client_secret", "scope" (what it may ask) }];
//   users    the accounts that can sign in (default ["alice", "bob"]).
//
// Access tokens are JWTs (RFC 9068) for the resource named by the request's
// `resource` parameter (RFC 8707), signed ES256: `aud` is the resource,
// `scope` the granted scopes, `sub` the user (the client for
// client_credentials). Anyone may register a client (RFC 7591), as the MCP
// SDKs do. Sign-in and consent are oidc-provider's development pages at
// /interaction/UID: a form taking any password for a known user, then a
// consent form; the client scripts fill them in with fetch.
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const [prefix, configPath] = process.argv.slice(2);
const require = createRequire(resolve(prefix, 'package.json'));
const { default: Provider } = await import(require.resolve('oidc-provider'));

const config = JSON.parse(readFileSync(configPath, 'utf8'));
const users = new Set(config.users ?? ['alice', 'bob']);
const scopes = config.scopes ?? 'mcp';

const server = createServer();
await new Promise(done => server.listen(0, '127.0.0.1', done));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
    jwks: { keys: [{ alg: 'ES256', use: 'sig', ...config.key }] },
    clients: (config.clients ?? []).map(client => ({
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        ...client,
    })),
    clientDefaults: { id_token_signed_response_alg: 'ES256' },
    // A client registering itself may later ask for any scope the server
    // knows (the user consents to each): the SDKs register with the scope of
    // their first request and widen it on a step-up (403 insufficient_scope).
    // Pre-registered clients keep the `scope` they were given.
    extraClientMetadata: {
        properties: ['scope'],
        validator: (_ctx, key, _value, metadata) => {
            if (key === 'scope' && !metadata.grant_types?.includes('client_credentials')) {
                metadata.scope = undefined;
            }
        },
    },
    scopes: ['openid', 'offline_access', ...scopes.split(' ')],
    findAccount: (_ctx, id) =>
        users.has(id) ? { accountId: id, claims: () => ({ sub: id }) } : undefined,
    features: {
        devInteractions: { enabled: true },
        registration: { enabled: true },
        clientCredentials: { enabled: true },
        resourceIndicators: {
            enabled: true,
            // A request naming no resource gets the one it was granted.
            defaultResource: (_ctx, _client, oneOf) => oneOf,
            useGrantedResource: () => true,
            getResourceServerInfo: (_ctx, resource) => ({
                scope: scopes,
                audience: resource,
                accessTokenTTL: 600,
                accessTokenFormat: 'jwt',
                jwt: { sign: { alg: 'ES256' } },
            }),
        },
    },
    ttl: {
        AccessToken: 600,
        ClientCredentials: 600,
        Grant: 3600,
        IdToken: 600,
        Interaction: 600,
        Session: 3600,
    },
    // Refresh tokens for any client allowed the grant (the SDKs ask for it).
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
});
// A development server on plain HTTP, on loopback.
provider.proxy = false;

server.on('request', provider.callback());
console.log(issuer);

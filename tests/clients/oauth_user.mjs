// The user and their browser, for the official TypeScript client's OAuth
// scripts (ts_oauth.mjs, ts_own_secret.mjs): an in-memory OAuthClientProvider
// for a user who consents to what is asked, and a "browser" that follows
// oidc-provider's development sign-in and consent pages (tests/oidc/
// provider.mjs) with fetch, filling in their forms as the user would, and
// Corral's own secrets page (/corral/secrets), where it enters a value.

// Where the authorization server sends the MCP client's browser back;
// nothing listens there: the browser stops at it and hands its query to
// the client.
export const REDIRECT = 'http://127.0.0.1:1/callback';

export const claims = token => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());

/// Follows `url` through sign-in and consent as `user`, and through Corral's
/// secrets page, where it enters `value`. Returns the query of the redirect
/// back to the MCP client, or { page } with the text of the last page (one
/// without a form: Corral's "Saved"). Throws on a status other than 200 or
/// a redirect, with the page's text.
export async function browse(url, user, { value } = {}) {
    const cookies = new Map();
    url = url.href ?? url;
    let request = { method: 'GET' };
    for (let step = 0; step < 20; step++) {
        if (url.startsWith(REDIRECT)) return new URL(url).searchParams;
        const headers = { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') };
        if (request.body) {
            headers['content-type'] = 'application/x-www-form-urlencoded';
            headers.origin = new URL(url).origin;
        }
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
        if (!action) return { page };
        const hidden = Object.fromEntries(
            [...page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map(([, name, value]) => [
                name,
                value.replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&'),
            ]),
        );
        let form;
        if (hidden.form_token !== undefined) {
            // Corral's page: the user enters the value.
            if (value === undefined) throw new Error(`asked for a value on ${url}, with none to give`);
            form = { ...hidden, value };
        } else {
            const prompt = page.match(/name="prompt" value="([^"]+)"/)?.[1];
            if (!prompt) throw new Error(`no form on ${url}: ${page.slice(0, 500)}`);
            // Sign in as the user (the development pages take any password),
            // then grant what the client asked for.
            form = prompt === 'login' ? { prompt, login: user, password: 'any' } : { prompt };
        }
        url = new URL(action, url).href;
        request = { method: 'POST', body: new URLSearchParams(form).toString() };
    }
    throw new Error('the browser did not arrive within 20 steps');
}

/// An in-memory OAuthClientProvider for `user`, who consents to what is
/// asked. `record` hears of each registration ({ registered }), each token's
/// claims ({ token }) and each authorization request's parameters
/// ({ authorization }).
export class ConsentingUser {
    constructor(user, record = () => {}) {
        this.user = user;
        this.record = record;
        this.callback = undefined;
    }
    get redirectUrl() {
        return REDIRECT;
    }
    get clientMetadata() {
        return {
            client_name: 'corral tests/clients',
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
        this.record({ registered: client });
        this.client = client;
    }
    tokens() {
        return this.saved;
    }
    saveTokens(saved) {
        this.record({ token: claims(saved.access_token) });
        this.saved = saved;
    }
    async redirectToAuthorization(url) {
        this.record({ authorization: Object.fromEntries(url.searchParams) });
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

//! Corral as an OAuth resource server, attacked: the real binary
//! (`corral serve --http --resource … --oauth-issuer …`), a plain HTTP
//! client, and an issuer the tests control (tests/support/issuer.rs), so
//! that tokens can be forged as an attacker would: expired, not yet valid,
//! of another issuer, for another resource, unsigned, "signed" with the
//! issuer's public key as an HMAC secret, naming made-up keys by the
//! hundred, a megabyte long, in the query string, or replayed against
//! another principal's session; and issuers whose JWKS hangs or never ends.
//! Each is refused with the status the spec names, and nothing is served.
//!
//! The real clients' flows against a real authorization server are in
//! tests/oauth.rs.

#[path = "support/http.rs"]
mod http;
#[path = "support/issuer.rs"]
mod issuer;
mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use http::{Client, HttpServer, STATELESS};
use issuer::{Issuer, Jwks, hmac_token, now, unsigned_token};
use support::{example, folder_with};

const RESOURCE: &str = "https://mcp.example.com/mcp";

/// The tally example, whose `tally_reset` only `admin` may see or call,
/// served under OAuth with `issuers` trusted.
fn server(issuers: &[&Issuer], env: &[(&str, &str)]) -> (tempfile::TempDir, HttpServer) {
    let folder = folder_with(&[("tally.wasm", &example("tally"))]);
    std::fs::write(
        folder.path().join("tally.toml"),
        "[state]\nbuckets = [\"default\"]\n\n[access]\ntools = { tally_reset = [\"admin\"] }\n",
    )
    .unwrap();
    let mut args = vec!["--resource", RESOURCE];
    for issuer in issuers {
        args.extend(["--oauth-issuer", &issuer.url]);
    }
    let server = HttpServer::start_on(folder.path(), "127.0.0.1:0", &args, env);
    (folder, server)
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// A stateless `tools/list` with `token`.
fn list_with(client: &mut Client, token: &str) -> http::Response {
    client.default_headers = vec![("Authorization".into(), bearer(token))];
    client.stateless("tools/list", json!({}))
}

/// A response refusing with `status`, serving nothing: no JSON-RPC result,
/// and a challenge pointing at the metadata.
fn assert_refused(response: &http::Response, status: u16, error: &str) {
    assert_eq!(response.status, status, "{}", response.text());
    assert!(
        !response.text().contains("\"result\""),
        "something was served: {}",
        response.text()
    );
    let challenge = response
        .header("www-authenticate")
        .unwrap_or_else(|| panic!("no challenge: {response:?}"));
    assert!(
        challenge.starts_with("Bearer resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource/mcp\""),
        "{challenge}"
    );
    if !error.is_empty() {
        assert!(
            challenge.contains(&format!("error=\"{error}\"")),
            "{challenge}"
        );
    }
}

fn tool_names(response: &http::Response) -> Vec<String> {
    response.answer()["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {}", response.text()))
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_request_without_a_token_is_sent_to_the_metadata_which_names_the_issuer() {
    let issuer = Issuer::start(Jwks::Honest);
    let (_folder, server) = server(&[&issuer], &[]);
    let mut client = server.client();
    let refused = client.stateless("tools/list", json!({}));
    assert_refused(&refused, 401, "");

    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let metadata = client.send("GET", path, &[], b"");
        assert_eq!(metadata.status, 200, "{path}: {}", metadata.text());
        let metadata: Value = serde_json::from_str(&metadata.text()).unwrap();
        assert_eq!(metadata["resource"], RESOURCE);
        assert_eq!(metadata["authorization_servers"], json!([issuer.url]));
        assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));
        assert_eq!(
            metadata["scopes_supported"],
            json!(["admin"]),
            "the scopes the policy uses"
        );
    }
}

#[test]
fn a_valid_token_is_served_in_both_eras_and_the_list_is_private() {
    let issuer = Issuer::start(Jwks::Honest);
    let (_folder, server) = server(&[&issuer], &[]);
    let mut client = server.client();
    let listed = list_with(&mut client, &issuer.token(RESOURCE, "alice", "mcp"));
    assert_eq!(listed.status, 200, "{}", listed.text());
    assert_eq!(listed.answer()["result"]["cacheScope"], "private");
    let names = tool_names(&listed);
    assert!(names.contains(&"tally_add".to_string()), "{names:?}");
    assert!(
        !names.contains(&"tally_reset".to_string()),
        "only admin sees tally_reset: {names:?}"
    );

    let mut legacy = server.client();
    legacy.default_headers = vec![(
        "Authorization".into(),
        bearer(&issuer.token(RESOURCE, "alice", "admin")),
    )];
    legacy.initialize("2025-11-25");
    let listed = legacy.legacy("tools/list", json!({}));
    assert!(tool_names(&listed).contains(&"tally_reset".to_string()));
}

#[test]
fn a_scopeless_token_calling_a_scoped_tool_gets_403_naming_the_scope() {
    let issuer = Issuer::start(Jwks::Honest);
    let (_folder, server) = server(&[&issuer], &[]);
    let mut client = server.client();
    client.default_headers = vec![(
        "Authorization".into(),
        bearer(&issuer.token(RESOURCE, "mallory", "")),
    )];
    let refused = client.stateless(
        "tools/call",
        json!({"name": "tally_reset", "arguments": {"key": "apples"}}),
    );
    assert_refused(&refused, 403, "insufficient_scope");
    let challenge = refused.header("www-authenticate").unwrap();
    assert!(challenge.contains("scope=\"admin\""), "{challenge}");

    // The same in a legacy session: the session stays usable.
    client.initialize("2025-06-18");
    let refused = client.legacy(
        "tools/call",
        json!({"name": "tally_reset", "arguments": {"key": "apples"}}),
    );
    assert_refused(&refused, 403, "insufficient_scope");
    let allowed = client.legacy(
        "tools/call",
        json!({"name": "tally_add", "arguments": {"key": "apples", "by": 1}}),
    );
    assert_eq!(allowed.status, 200, "{}", allowed.text());
}

#[test]
fn forged_and_misdirected_tokens_are_refused() {
    let issuer = Issuer::start(Jwks::Honest);
    let stranger = Issuer::start(Jwks::Honest);
    let (_folder, server) = server(&[&issuer], &[]);
    let mut client = server.client();
    let claims = || issuer.claims(RESOURCE, "mallory", "admin");
    let with = |change: &dyn Fn(&mut Value)| {
        let mut claims = claims();
        change(&mut claims);
        issuer.sign(&issuer.header(), &claims)
    };
    let cases: Vec<(&str, String)> = vec![
        (
            "expired",
            with(&|c| {
                c["exp"] = json!(now() - 600);
                c["iat"] = json!(now() - 4000);
                c["nbf"] = json!(now() - 4000);
            }),
        ),
        ("not yet valid", with(&|c| c["nbf"] = json!(now() + 600))),
        (
            "without expiry",
            with(&|c| drop(c.as_object_mut().unwrap().remove("exp"))),
        ),
        (
            "for another resource",
            with(&|c| c["aud"] = json!("https://other.example.com/mcp")),
        ),
        (
            "of an issuer not trusted",
            stranger.token(RESOURCE, "mallory", "admin"),
        ),
        (
            "naming a trusted issuer but signed by another's key",
            stranger.sign(&issuer.header(), &claims()),
        ),
        ("unsigned (alg none)", unsigned_token(&claims())),
        (
            "HS256 keyed with the issuer's public key",
            hmac_token(
                &json!({"alg": "HS256", "typ": "at+jwt", "kid": issuer.kid}),
                &claims(),
                issuer.public_jwk().to_string().as_bytes(),
            ),
        ),
        ("not a JWT", "opaque-token-nobody-introspects".into()),
    ];
    for (what, token) in cases {
        let refused = list_with(&mut client, &token);
        assert_refused(&refused, 401, "invalid_token");
        let challenge = refused.header("www-authenticate").unwrap();
        println!("{what}: {challenge}");
    }
    // And a good token still works after all that.
    let listed = list_with(&mut client, &issuer.token(RESOURCE, "alice", ""));
    assert_eq!(listed.status, 200, "{}", listed.text());
}

#[test]
fn oversized_tokens_and_tokens_in_the_query_are_refused_unread() {
    let issuer = Issuer::start(Jwks::Honest);
    let (_folder, server) = server(&[&issuer], &[]);
    let mut client = server.client();
    // 9 KiB: past the token limit, within hyper's header limit.
    let long = format!("{}.{}.x", "a".repeat(4608), "b".repeat(4608));
    let refused = list_with(&mut client, &long);
    assert_refused(&refused, 401, "invalid_token");
    assert!(refused.text().contains("longer than 8192 bytes"));

    // 1 MiB: refused by the HTTP layer before the token is looked at.
    let mut fresh = server.client();
    let huge = "a".repeat(1 << 20);
    let refused = list_with(&mut fresh, &huge);
    assert!(
        refused.status == 431 || refused.status == 401,
        "{}",
        refused.status
    );
    assert!(!refused.text().contains("\"result\""));

    let mut client = server.client();
    let token = issuer.token(RESOURCE, "alice", "");
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    let refused = client.send(
        "POST",
        &format!("/mcp?access_token={token}"),
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        body.to_string().as_bytes(),
    );
    assert_refused(&refused, 400, "invalid_request");
    // The server is still there for everyone else.
    let listed = list_with(&mut client, &token);
    assert_eq!(listed.status, 200);
}

#[test]
fn another_principal_presenting_a_session_id_finds_no_session() {
    let issuer = Issuer::start(Jwks::Honest);
    let (_folder, server) = server(&[&issuer], &[]);
    let mut alice = server.client();
    alice.default_headers = vec![(
        "Authorization".into(),
        bearer(&issuer.token(RESOURCE, "alice", "")),
    )];
    alice.initialize("2025-11-25");
    let stolen = alice.session.clone().unwrap();

    let mut bob = server.client();
    bob.default_headers = vec![(
        "Authorization".into(),
        bearer(&issuer.token(RESOURCE, "bob", "admin")),
    )];
    bob.session = Some(stolen.clone());
    bob.session_version = Some("2025-11-25".into());
    let taken = bob.legacy("tools/list", json!({}));
    assert_eq!(taken.status, 404, "{}", taken.text());
    let deleted = bob.send(
        "DELETE",
        "/mcp",
        &[("Mcp-Session-Id", stolen.as_str())],
        b"",
    );
    assert_eq!(deleted.status, 404);

    // Alice's session is untouched, and her new token (more scopes) works in it.
    alice.default_headers = vec![(
        "Authorization".into(),
        bearer(&issuer.token(RESOURCE, "alice", "admin")),
    )];
    let listed = alice.legacy("tools/list", json!({}));
    assert_eq!(listed.status, 200, "{}", listed.text());
    assert!(tool_names(&listed).contains(&"tally_reset".to_string()));
}

#[test]
fn a_flood_of_unknown_key_ids_fetches_the_keys_at_most_once_per_interval() {
    let issuer = Issuer::start(Jwks::Honest);
    let (_folder, server) = server(&[&issuer], &[]);
    let mut client = server.client();
    // The server fetched the keys at start; a good token needs no more.
    let listed = list_with(&mut client, &issuer.token(RESOURCE, "alice", ""));
    assert_eq!(listed.status, 200, "{}", listed.text());
    let before = issuer.jwks_fetches();
    assert!(before >= 1);
    let started = Instant::now();
    for n in 0..200 {
        let header = json!({"alg": "ES256", "typ": "at+jwt", "kid": format!("made-up-{n}")});
        let token = issuer.sign(&header, &issuer.claims(RESOURCE, "mallory", ""));
        let refused = list_with(&mut client, &token);
        assert_refused(&refused, 401, "invalid_token");
    }
    let during = issuer.jwks_fetches() - before;
    assert!(
        during <= 1,
        "{during} fetches of the JWKS for 200 unknown kids in {:?}",
        started.elapsed()
    );
}

#[test]
fn an_issuer_whose_keys_hang_or_never_end_costs_a_bounded_wait_and_nothing_else() {
    for mode in [Jwks::Hangs, Jwks::Huge] {
        let issuer = Issuer::start(mode);
        let (_folder, server) = server(&[&issuer], &[("CORRAL_OAUTH_KEY_REFETCH_SECS", "0")]);
        let mut client = server.client();
        let started = Instant::now();
        let refused = list_with(&mut client, &issuer.token(RESOURCE, "alice", ""));
        assert_refused(&refused, 401, "invalid_token");
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{mode:?}: refused after {:?}",
            started.elapsed()
        );
        // Once it behaves, the same server accepts its tokens.
        issuer.set_mode(Jwks::Honest);
        let listed = list_with(&mut client, &issuer.token(RESOURCE, "alice", ""));
        assert_eq!(listed.status, 200, "{mode:?}: {}", listed.text());
        let stderr = server.server.stderr();
        assert!(
            !stderr.contains("eyJ"),
            "a token reached the log:\n{stderr}"
        );
    }
}

#[test]
fn without_oauth_flags_a_stateless_list_stays_public() {
    let folder = folder_with(&[("calc.wasm", &example("calc"))]);
    let server = HttpServer::start(folder.path(), &[]);
    let mut client = server.client();
    let listed = client.stateless("tools/list", json!({}));
    assert_eq!(listed.answer()["result"]["cacheScope"], "public");
    let metadata = client.send("GET", "/.well-known/oauth-protected-resource", &[], b"");
    assert_eq!(metadata.status, 404);
    let _ = STATELESS;
}

#[test]
fn opaque_tokens_are_introspected_and_held_to_the_same_rules() {
    let issuer = Issuer::start(Jwks::Honest);
    let (client_id, secret) = issuer::INTROSPECTION_CLIENT;
    let folder = folder_with(&[("tally.wasm", &example("tally"))]);
    std::fs::write(
        folder.path().join("tally.toml"),
        "[state]\nbuckets = [\"default\"]\n\n[access]\ntools = { tally_reset = [\"admin\"] }\n",
    )
    .unwrap();
    let server = HttpServer::start_on(
        folder.path(),
        "127.0.0.1:0",
        &[
            "--resource",
            RESOURCE,
            "--oauth-issuer",
            &issuer.url,
            "--oauth-introspection-client",
            client_id,
        ],
        &[("CORRAL_OAUTH_CLIENT_SECRET", secret)],
    );
    let live = || {
        json!({"active": true, "iss": issuer.url, "sub": "carol", "aud": RESOURCE,
            "scope": "admin", "exp": now() + 600, "client_id": "carol-app"})
    };
    issuer.opaque_token("good-opaque", live());
    let mut other_audience = live();
    other_audience["aud"] = json!("https://other.example.com/mcp");
    issuer.opaque_token("foreign-opaque", other_audience);
    let mut other_issuer = live();
    other_issuer["iss"] = json!("https://evil.example.com");
    issuer.opaque_token("misissued-opaque", other_issuer);
    let mut expired = live();
    expired["exp"] = json!(now() - 600);
    issuer.opaque_token("expired-opaque", expired);

    let mut client = server.client();
    let listed = list_with(&mut client, "good-opaque");
    assert_eq!(listed.status, 200, "{}", listed.text());
    assert!(tool_names(&listed).contains(&"tally_reset".to_string()));
    // Asked once, then remembered (for at most a minute).
    let asked = issuer.introspections();
    let again = list_with(&mut client, "good-opaque");
    assert_eq!(again.status, 200);
    assert_eq!(issuer.introspections(), asked);

    for token in [
        "foreign-opaque",
        "misissued-opaque",
        "expired-opaque",
        "never-issued",
    ] {
        let refused = list_with(&mut client, token);
        assert_refused(&refused, 401, "invalid_token");
    }
}

#[test]
fn an_extra_audience_is_accepted_only_when_configured_and_only_exactly() {
    let issuer = Issuer::start(Jwks::Honest);
    let folder = folder_with(&[("calc.wasm", &example("calc"))]);
    let server = HttpServer::start(
        folder.path(),
        &[
            "--resource",
            RESOURCE,
            "--oauth-issuer",
            &issuer.url,
            "--oauth-audience",
            "6e3f1c2a-api-client-id",
        ],
    );
    let mut client = server.client();
    let token_for = |audience: &str| {
        let mut claims = issuer.claims(RESOURCE, "alice", "");
        claims["aud"] = json!(audience);
        issuer.sign(&issuer.header(), &claims)
    };
    let listed = list_with(&mut client, &token_for("6e3f1c2a-api-client-id"));
    assert_eq!(listed.status, 200, "{}", listed.text());
    let listed = list_with(&mut client, &token_for(RESOURCE));
    assert_eq!(listed.status, 200, "{}", listed.text());
    for other in [
        "6E3F1C2A-API-CLIENT-ID",
        "6e3f1c2a",
        "https://other.example.com/mcp",
    ] {
        assert_refused(
            &list_with(&mut client, &token_for(other)),
            401,
            "invalid_token",
        );
    }
}

#[test]
fn the_token_reaches_no_log_and_the_audit_line_names_the_principal() {
    let issuer = Issuer::start(Jwks::Honest);
    let (_folder, server) = server(&[&issuer], &[("CORRAL_LOG", "debug")]);
    let mut client = server.client();
    let token = issuer.token(RESOURCE, "alice", "");
    client.default_headers = vec![("Authorization".into(), bearer(&token))];
    let called = client.stateless(
        "tools/call",
        json!({"name": "tally_add", "arguments": {"key": "apples", "by": 2}}),
    );
    assert_eq!(called.status, 200, "{}", called.text());
    let mut expired = issuer.claims(RESOURCE, "alice", "");
    expired["exp"] = json!(now() - 600);
    let refused = list_with(&mut client, &issuer.sign(&issuer.header(), &expired));
    assert_refused(&refused, 401, "invalid_token");

    let audit = server
        .server
        .stderr_containing(&format!("principal=\"alice at {}\"", issuer.url));
    assert!(audit.contains("tally_add"), "{audit}");
    let stderr = server.server.stderr();
    let signature = token.rsplit('.').next().unwrap();
    assert!(
        !stderr.contains(signature) && !stderr.contains("eyJ"),
        "a token reached the log:\n{stderr}"
    );
}

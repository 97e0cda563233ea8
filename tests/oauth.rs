//! Corral as an OAuth 2.1 resource server (issue 43), end to end.

#[path = "support/http.rs"]
mod http;
mod support;

use support::oidc::{Issuer, OidcClient, decode_claims};

#[test]
fn the_test_issuer_grants_jwt_access_tokens_for_the_resource_asked_for() {
    let alice = OidcClient::new("alice-agent", "mcp files:read");
    let issuer = Issuer::start(std::slice::from_ref(&alice));
    let token = issuer.token(&alice, "mcp files:read", "http://127.0.0.1:1/mcp");
    let claims = decode_claims(&token);
    assert_eq!(claims["aud"], "http://127.0.0.1:1/mcp");
    assert_eq!(claims["iss"], issuer.url());
    assert_eq!(claims["sub"], "alice-agent");
    assert_eq!(claims["scope"], "mcp files:read");
    assert_eq!(support::oidc::decode_header(&token)["kid"], issuer.kid());
    assert!(issuer.signed_by_issuer(&token));
    let crafted = issuer.sign(&issuer.header(), &claims);
    assert!(issuer.signed_by_issuer(&crafted));
    assert!(!issuer.signed_by_issuer(&support::oidc::unsigned(&claims)));
    let (status, refused) = issuer.request_token(
        &alice.id,
        &alice.secret,
        "mcp files:write",
        "http://127.0.0.1:1/mcp",
    );
    assert_eq!(status, 400, "{refused}");
}

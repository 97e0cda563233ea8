//! OAuth on the wire (see `crate::auth`): the Protected Resource Metadata
//! document, the caller of each request, the `WWW-Authenticate` challenges,
//! and the scopes a POST's requests need (403 `insufficient_scope`, naming
//! them all in one challenge, for a client to step up).

use std::sync::Arc;

use http::{HeaderValue, Method, StatusCode, header};
use hyper::body::Incoming as IncomingBody;
use serde_json::{Value, json};

use super::Server;
use super::body::{HttpResponse, json_response, method_not_allowed};
use crate::ToolHost;
use crate::auth::{Authorizer, Refusal};
use crate::jsonrpc::{Frame, Incoming, Request};
use corral_tool::{Principal, Scopes, Target};

impl<H: ToolHost> Server<H> {
    /// The Protected Resource Metadata, if `path` is where it is served.
    /// Public, and readable from any web page (a browser-based client
    /// discovers the issuer with it before it has a token).
    pub(super) async fn metadata_response(
        &self,
        path: &str,
        method: &Method,
    ) -> Option<HttpResponse> {
        let authorizer = self.http.authorizer.as_ref()?;
        if !authorizer
            .metadata_paths()
            .iter()
            .any(|served| served == path)
        {
            return None;
        }
        let mut response = match *method {
            Method::GET | Method::HEAD => json_response(
                StatusCode::OK,
                &authorizer.metadata(&self.known_scopes().await),
            ),
            Method::OPTIONS => http::Response::builder()
                .status(StatusCode::NO_CONTENT)
                .header(header::ACCESS_CONTROL_ALLOW_METHODS, "GET, OPTIONS")
                .body(super::body::ResponseBody::empty())
                .unwrap(),
            _ => method_not_allowed(
                "GET, OPTIONS",
                "method not allowed: the metadata is read with GET",
            ),
        };
        let headers = response.headers_mut();
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
        headers.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=300"),
        );
        Some(response)
    }

    /// Every scope something served needs.
    async fn known_scopes(&self) -> Scopes {
        self.host.ready().await;
        let host = &self.host;
        let mut known = Scopes::default();
        let mut add = |target: Target<'_>| {
            let needed = host.required_scopes(target);
            if !needed.is_empty() {
                known = known.union(&needed);
            }
        };
        host.tools().iter().for_each(|t| add(Target::Tool(&t.name)));
        host.prompts()
            .iter()
            .for_each(|p| add(Target::Prompt(&p.name)));
        host.resources()
            .iter()
            .for_each(|r| add(Target::Resource(&r.uri)));
        host.resource_templates()
            .iter()
            .for_each(|t| add(Target::ResourceTemplate(&t.uri_template)));
        known
    }

    /// Who makes `request`: its principal under OAuth, `None` without it;
    /// or the response refusing it.
    pub(super) async fn caller(
        &self,
        request: &http::Request<IncomingBody>,
    ) -> Result<Option<Arc<Principal>>, HttpResponse> {
        let Some(authorizer) = &self.http.authorizer else {
            return Ok(None);
        };
        if has_token_in_query(request.uri().query()) {
            return Err(refusal_response(authorizer, &authorizer.token_in_query()));
        }
        let mut authorizations = request.headers().get_all(header::AUTHORIZATION).iter();
        let authorization = match (authorizations.next(), authorizations.next()) {
            (None, _) => None,
            (Some(value), None) => Some(value.to_str().unwrap_or("")),
            (Some(_), Some(_)) => {
                let refusal = Refusal {
                    status: 400,
                    error: Some("invalid_request"),
                    description: "more than one Authorization header".into(),
                    scope: authorizer.base_scopes().clone(),
                };
                return Err(refusal_response(authorizer, &refusal));
            }
        };
        authorizer
            .authenticate(authorization)
            .await
            .map(Some)
            .map_err(|refusal| refusal_response(authorizer, &refusal))
    }

    /// 403 for a POST of `frame` by `caller` when its requests reach what
    /// the caller's scopes do not: every scope they need, in one challenge.
    pub(super) async fn scope_refusal(
        &self,
        frame: &Frame,
        caller: &Principal,
    ) -> Option<HttpResponse> {
        let authorizer = self.http.authorizer.as_ref()?;
        let requests: Vec<&Request> = match frame {
            Frame::Single(Incoming::Request(request)) => vec![request],
            Frame::Batch(items) => items
                .iter()
                .filter_map(|item| match item {
                    Incoming::Request(request) => Some(request),
                    _ => None,
                })
                .collect(),
            _ => return None,
        };
        let targets: Vec<Target<'_>> = requests.into_iter().filter_map(target_of).collect();
        if targets.is_empty() {
            return None;
        }
        // What an item needs is known once the catalog is.
        self.host.ready().await;
        let mut needed = Scopes::default();
        for target in targets {
            let more = self.host.required_scopes(target);
            needed = if needed.is_empty() {
                more
            } else {
                needed.union(&more)
            };
        }
        if caller.grants(&needed) {
            return None;
        }
        tracing::info!(
            "refused {}: lacks scope(s) of {}",
            caller.describe(),
            needed.joined()
        );
        Some(refusal_response(
            authorizer,
            &authorizer.insufficient_scope(&needed),
        ))
    }
}

/// What a request reaches, for the scopes it needs: a call's tool, a get's
/// prompt, a read's (or subscription's) resource, a completion's reference.
fn target_of(request: &Request) -> Option<Target<'_>> {
    let param = |name: &str| request.params.get(name).and_then(Value::as_str);
    match request.method.as_str() {
        "tools/call" => param("name").map(Target::Tool),
        "prompts/get" => param("name").map(Target::Prompt),
        "resources/read" | "resources/subscribe" => param("uri").map(Target::Resource),
        "completion/complete" => {
            let reference = request.params.get("ref")?;
            let field = |name: &str| reference.get(name).and_then(Value::as_str);
            match field("type")? {
                "ref/prompt" => field("name").map(Target::Prompt),
                "ref/resource" => field("uri").map(Target::ResourceTemplate),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The response for `refusal`: its status, the challenge, and the same in
/// a JSON body (RFC 6749's error object) for whoever reads it.
pub(super) fn refusal_response(authorizer: &Authorizer, refusal: &Refusal) -> HttpResponse {
    let reason = refusal.error.unwrap_or("missing_token");
    metrics::counter!("corral_authorization_refusals_total", "reason" => reason).increment(1);
    let status = StatusCode::from_u16(refusal.status).unwrap_or(StatusCode::UNAUTHORIZED);
    let body = match refusal.error {
        Some(error) => json!({ "error": error, "error_description": refusal.description }),
        None => json!({ "error": "unauthorized", "error_description": refusal.description }),
    };
    let mut response = json_response(status, &body);
    if let Ok(challenge) = HeaderValue::from_str(&authorizer.challenge(refusal)) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, challenge);
    }
    response
}

/// Whether a query string carries an access token (RFC 6750 2.3), which
/// the MCP spec forbids.
fn has_token_in_query(query: Option<&str>) -> bool {
    query.is_some_and(|query| {
        query
            .split('&')
            .any(|pair| pair.split('=').next() == Some("access_token"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_in_the_query_are_seen() {
        assert!(has_token_in_query(Some("access_token=abc")));
        assert!(has_token_in_query(Some("x=1&access_token=abc")));
        assert!(!has_token_in_query(Some("x=access_token")));
        assert!(!has_token_in_query(None));
    }

    #[test]
    fn each_request_names_what_it_reaches() {
        let request = |method: &str, params: Value| Request {
            id: json!(1),
            method: method.into(),
            params: params.as_object().unwrap().clone(),
        };
        let call = request("tools/call", json!({"name": "write_file"}));
        assert_eq!(target_of(&call), Some(Target::Tool("write_file")));
        let read = request("resources/read", json!({"uri": "file:///a"}));
        assert_eq!(target_of(&read), Some(Target::Resource("file:///a")));
        let complete = request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "p"}}),
        );
        assert_eq!(target_of(&complete), Some(Target::Prompt("p")));
        assert_eq!(target_of(&request("tools/list", json!({}))), None);
    }
}

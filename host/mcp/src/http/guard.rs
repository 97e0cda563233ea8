//! The checks every request passes before it is served: framing (RFC 9112),
//! Host (DNS rebinding), Origin, the bearer token, and CORS.

use std::net::{IpAddr, SocketAddr};

use http::{HeaderMap, HeaderValue, StatusCode, header};

use corral_tool::same_secret;

use super::body::{HttpResponse, ResponseBody, closing_connection, plain};
use super::{ALLOWED_METHODS, HttpOptions, Server};
use crate::ToolHost;

/// The host names accepted in `Host` (lower case): the configured ones, and
/// on a loopback listener the loopback names; empty: any.
pub(super) fn accepted_hosts(http: &HttpOptions, local: SocketAddr) -> Vec<String> {
    let mut hosts: Vec<String> = http
        .allowed_hosts
        .iter()
        .map(|host| host.trim_matches(['[', ']']).to_ascii_lowercase())
        .collect();
    if local.ip().is_loopback() {
        hosts.extend(["localhost", "127.0.0.1", "::1"].map(String::from));
    }
    hosts
}

impl<H: ToolHost> Server<H> {
    /// The request's Origin, if it has one, and whether that origin may read
    /// the answer (CORS).
    pub(super) fn cors_origin(&self, headers: &HeaderMap) -> Option<(HeaderValue, bool)> {
        headers.get(header::ORIGIN).map(|origin| {
            (
                origin.clone(),
                self.cors_allowed(origin.to_str().unwrap_or("")),
            )
        })
    }

    /// Whether a page from `origin` may read the endpoint's answers from a
    /// browser (CORS): only an origin named with `--allowed-origin`. Any
    /// loopback origin passes the Origin check, but a page on some local
    /// port is not thereby trusted to call tools from a browser.
    fn cors_allowed(&self, origin: &str) -> bool {
        self.http
            .allowed_origins
            .iter()
            .any(|allowed| allowed.eq_ignore_ascii_case(origin))
    }

    /// Whether a request from a browser page of `origin` passes the Origin
    /// check: a loopback origin, or one configured with `--allowed-origin`.
    fn origin_allowed(&self, origin: &str) -> bool {
        self.cors_allowed(origin) || origin_host(origin).is_some_and(|host| is_loopback_name(&host))
    }

    /// The Host check (DNS rebinding): the response refusing the request,
    /// if any.
    pub(super) fn host_refusal(&self, headers: &HeaderMap) -> Option<HttpResponse> {
        if self.hosts.is_empty() {
            return None;
        }
        let host = headers
            .get(header::HOST)
            .and_then(|value| value.to_str().ok())
            .map(host_name);
        if !host.as_ref().is_some_and(|host| self.hosts.contains(host)) {
            tracing::warn!("refused a request for host {host:?} (DNS rebinding protection)");
            metrics::counter!("corral_authorization_refusals_total", "reason" => "host")
                .increment(1);
            return Some(plain(
                StatusCode::FORBIDDEN,
                "forbidden: the Host header names a host this server does not serve",
            ));
        }
        None
    }

    /// The Host, Origin and (with `credentials`) bearer token checks: the
    /// response refusing the request, if any.
    pub(super) fn refusal(&self, headers: &HeaderMap, credentials: bool) -> Option<HttpResponse> {
        if let Some(refusal) = self.host_refusal(headers) {
            return Some(refusal);
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("");
            if !self.origin_allowed(origin) {
                tracing::warn!("refused a request from origin {origin:?}");
                metrics::counter!("corral_authorization_refusals_total", "reason" => "origin")
                    .increment(1);
                return Some(plain(
                    StatusCode::FORBIDDEN,
                    "forbidden: requests from this Origin are not allowed",
                ));
            }
        }
        if let Some(token) = self.http.bearer_token.as_ref().filter(|_| credentials) {
            let presented = headers
                .get(header::AUTHORIZATION)
                .and_then(|value| value.to_str().ok())
                .and_then(bearer_credentials);
            if !presented.is_some_and(|presented| same_secret(presented, token)) {
                metrics::counter!("corral_authorization_refusals_total", "reason" => "bearer_token")
                    .increment(1);
                let mut response = plain(
                    StatusCode::UNAUTHORIZED,
                    "unauthorized: a bearer token is required",
                );
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                return Some(response);
            }
        }
        None
    }
}

/// Marks `response` for a request from a browser page: it varies with the
/// Origin, and an origin CORS allows may read it, with the session, version
/// and `WWW-Authenticate` headers.
pub(super) fn add_cors_headers(
    response: &mut HttpResponse,
    cors_origin: Option<(HeaderValue, bool)>,
) {
    if let Some((origin, cors)) = cors_origin {
        let headers = response.headers_mut();
        headers.insert(header::VARY, HeaderValue::from_static("Origin"));
        if cors {
            headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
            headers.insert(
                header::ACCESS_CONTROL_EXPOSE_HEADERS,
                HeaderValue::from_static("Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate"),
            );
        }
    }
}

/// 204 to a CORS preflight (or any `OPTIONS`): the methods served, and the
/// request headers the browser asks to send (each request is still checked
/// when it comes). Browsers may cache the answer for ten minutes.
pub(super) fn preflight_response(headers: &HeaderMap) -> HttpResponse {
    let mut response = http::Response::builder()
        .status(StatusCode::NO_CONTENT)
        .header(header::ALLOW, ALLOWED_METHODS)
        .header(header::ACCESS_CONTROL_ALLOW_METHODS, ALLOWED_METHODS)
        .header(header::ACCESS_CONTROL_MAX_AGE, "600")
        .body(ResponseBody::empty())
        .unwrap();
    if let Some(asked) = headers.get(header::ACCESS_CONTROL_REQUEST_HEADERS) {
        response
            .headers_mut()
            .insert(header::ACCESS_CONTROL_ALLOW_HEADERS, asked.clone());
    }
    response
}

/// A refusal of framing that RFC 9112 forbids or that the server does not
/// implement: a second `Host` header (400: which one names the target?), or
/// a transfer coding other than `chunked` alone (501: the body would be
/// read as if it were plain JSON).
pub(super) fn framing_error(headers: &HeaderMap) -> Option<HttpResponse> {
    if headers.get_all(header::HOST).iter().count() > 1 {
        return Some(closing_connection(plain(
            StatusCode::BAD_REQUEST,
            "bad request: more than one Host header",
        )));
    }
    let codings: Vec<String> = headers
        .get_all(header::TRANSFER_ENCODING)
        .iter()
        .flat_map(|value| value.to_str().unwrap_or("?").split(','))
        .map(|coding| coding.trim().to_ascii_lowercase())
        .filter(|coding| !coding.is_empty())
        .collect();
    if codings.is_empty() || codings == ["chunked"] {
        return None;
    }
    Some(closing_connection(plain(
        StatusCode::NOT_IMPLEMENTED,
        "not implemented: the only transfer coding supported is chunked",
    )))
}

/// The host of a `Host` header value, without port or brackets, lower case.
fn host_name(host: &str) -> String {
    let host = host.trim();
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(name, _)| name)
    };
    name.to_ascii_lowercase()
}

/// The host of an Origin (`scheme://host[:port]`).
fn origin_host(origin: &str) -> Option<String> {
    let (_, rest) = origin.split_once("://")?;
    Some(host_name(rest.split('/').next().unwrap_or("")))
}

fn is_loopback_name(host: &str) -> bool {
    host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The credentials of an `Authorization: Bearer <token>` header value. The
/// scheme is case-insensitive (RFC 9110, section 11.1), so `bearer x` counts.
fn bearer_credentials(value: &str) -> Option<&str> {
    let (scheme, credentials) = value.trim_start().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| credentials.trim())
}

/// Compares secrets without stopping at the first difference, so that the
/// time taken does not tell how much of a guess was right.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_lose_port_and_brackets() {
        assert_eq!(host_name("LocalHost:8080"), "localhost");
        assert_eq!(host_name("[::1]:3000"), "::1");
        assert_eq!(host_name("127.0.0.1"), "127.0.0.1");
        assert_eq!(
            origin_host("http://evil.example.com:80/x").as_deref(),
            Some("evil.example.com")
        );
        assert!(
            is_loopback_name("::1")
                && is_loopback_name("127.0.0.2")
                && is_loopback_name("localhost")
        );
        assert!(!is_loopback_name("evil.example.com"));
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("s3cret", "s3cret"));
        assert!(!same_secret("s3cre", "s3cret"));
        assert!(!same_secret("s3creT", "s3cret"));
    }
}

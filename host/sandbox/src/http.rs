//! Outgoing HTTP (`wasi:http`), allowed only to the hosts a manifest lists.
//!
//! Every request is checked twice: its host (and port) against the
//! `[http] allow` list, then every address the host resolves to. Private,
//! loopback, link-local and other non-public addresses are refused unless the
//! host is listed literally (not through a `*.` wildcard), so that a public
//! name cannot be pointed at the host's own network. Plain-HTTP requests are
//! then sent to the checked address itself, leaving no window for the name to
//! resolve differently (DNS rebinding); HTTPS keeps the name for certificate
//! checks.
//!
//! A refusal is wasi:http's `HTTP-request-denied`; a listed host that cannot
//! be resolved is not a refusal but the DNS error any client would meet
//! (`DNS-error`), so that a plugin tells a typo or an offline network apart
//! from its grant.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use http::uri::{Authority, Scheme};
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

use crate::manifest::HttpGrant;
use crate::plugin_text;

/// The per-call policy handed to wasmtime-wasi-http.
pub struct HttpPolicy {
    pub plugin: Arc<str>,
    /// `None`: every request is refused (the import gate normally keeps such
    /// plugins from loading at all).
    pub grant: Option<HttpGrant>,
}

type Sent = Result<
    (
        http::Response<WasiBody>,
        Box<dyn Future<Output = Result<(), Error>> + Send>,
    ),
    Error,
>;

impl WasiHttpHooks for HttpPolicy {
    fn send_request(
        &mut self,
        mut request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        fut: Box<dyn Future<Output = Result<(), Error>> + Send>,
    ) -> Box<dyn Future<Output = Sent> + Send> {
        drop(fut);
        let grant = self.grant.clone();
        let plugin = self.plugin.clone();
        let span = request_span(&request);
        let traced = span.clone();
        Box::new(tracing::Instrument::instrument(
            async move {
                let address = checked_address(grant.as_ref(), request.uri())
                .await
                .inspect_err(|reason| {
                    let uri = plugin_text::cut(&request.uri().to_string());
                    let reason = plugin_text::cut(&reason.to_string());
                    tracing::warn!(plugin = %plugin, "HTTP request to {uri} not sent: {reason}");
                });
                let address = address.map_err(Refusal::into_error)?;
                if request.uri().scheme() == Some(&Scheme::HTTP) {
                    pin_to_address(&mut request, address)?;
                }
                let uri = plugin_text::cut(&request.uri().to_string());
                tracing::info!(plugin = %plugin, "HTTP {} {uri}", request.method());
                use http_body_util::BodyExt;
                let sent = wasmtime_wasi_http::default_send_request(request, options).await;
                let (response, io) = sent.inspect_err(|_| {
                    traced.record("otel.status_code", "error");
                })?;
                traced.record("http.response.status_code", response.status().as_u16());
                if response.status().is_server_error() {
                    traced.record("otel.status_code", "error");
                }
                Ok((
                    response.map(BodyExt::boxed_unsync),
                    Box::new(io) as Box<dyn Future<Output = _> + Send>,
                ))
            },
            span,
        ))
    }
}

/// The span of an outgoing request, a child of the call's (the current
/// span while the guest runs), named by its method as OpenTelemetry's HTTP
/// conventions name client spans. Never its path or query, where a
/// plugin's secrets may be.
fn request_span(request: &http::Request<WasiBody>) -> tracing::Span {
    let uri = request.uri();
    let span = tracing::info_span!(
        target: "corral_otel",
        "corral.http",
        "otel.name" = request.method().as_str(),
        "otel.kind" = "client",
        "otel.status_code" = tracing::field::Empty,
        "http.request.method" = request.method().as_str(),
        "server.address" = tracing::field::Empty,
        "server.port" = tracing::field::Empty,
        "url.scheme" = tracing::field::Empty,
        "http.response.status_code" = tracing::field::Empty,
    );
    if span.is_disabled() {
        return span;
    }
    if let Some(host) = uri.host() {
        span.record("server.address", host);
    }
    let scheme = uri.scheme_str();
    if let Some(scheme) = scheme {
        span.record("url.scheme", scheme);
    }
    let port = uri.port_u16().or(match scheme {
        Some("https") => Some(443),
        Some("http") => Some(80),
        _ => None,
    });
    if let Some(port) = port {
        span.record("server.port", port);
    }
    span
}

/// Why a request is not sent.
#[derive(Debug)]
enum Refusal {
    /// The grant does not allow it (the reason, for the log).
    Denied(String),
    /// The host is allowed but its name does not resolve (the resolver's
    /// words, for the log and the DNS error's rcode).
    Dns(String),
}

impl Refusal {
    fn into_error(self) -> Error {
        match self {
            Refusal::Denied(_) => Error::HttpRequestDenied,
            Refusal::Dns(reason) => Error::DnsError {
                rcode: Some(reason),
                info_code: None,
            },
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Denied(reason) | Refusal::Dns(reason) => f.write_str(reason),
        }
    }
}

/// The address to connect to, if the grant allows this URI; otherwise why not.
async fn checked_address(
    grant: Option<&HttpGrant>,
    uri: &http::Uri,
) -> Result<SocketAddr, Refusal> {
    let denied = |reason: &str| Refusal::Denied(reason.to_string());
    let grant = grant.ok_or_else(|| denied("the plugin has no [http] grant"))?;
    let host = uri.host().ok_or_else(|| denied("the URI has no host"))?;
    let default_port = if uri.scheme() == Some(&Scheme::HTTPS) {
        443
    } else {
        80
    };
    let port = uri.port_u16().unwrap_or(default_port);
    if !grant.allows(host, port) {
        return Err(Refusal::Denied(format!(
            "{host}:{port} is not in the [http] allow list"
        )));
    }
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addresses: Vec<SocketAddr> = tokio::net::lookup_host((bare, port))
        .await
        .map_err(|err| Refusal::Dns(format!("cannot resolve {host}: {err}")))?
        .collect();
    let literal = grant.lists_exactly(host);
    let mut refused = None;
    for address in addresses {
        if literal || is_public(address.ip()) {
            return Ok(address);
        }
        refused = Some(address.ip());
    }
    match refused {
        Some(ip) => Err(Refusal::Denied(format!(
            "{host} resolves to the non-public address {ip}; list the host exactly to allow it"
        ))),
        None => Err(Refusal::Dns(format!("{host} resolves to no address"))),
    }
}

/// Sends a plain-HTTP request to `address` (the Host header keeps the name).
fn pin_to_address(request: &mut http::Request<WasiBody>, address: SocketAddr) -> Result<(), Error> {
    let mut parts = request.uri().clone().into_parts();
    parts.authority = Some(
        Authority::try_from(address.to_string().as_str())
            .map_err(|_| Error::HttpRequestUriInvalid)?,
    );
    *request.uri_mut() = http::Uri::from_parts(parts).map_err(|_| Error::HttpRequestUriInvalid)?;
    Ok(())
}

/// Whether `ip` is a public unicast address: not loopback, private,
/// link-local, carrier-grade NAT, unspecified, broadcast, multicast,
/// documentation or unique-local.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b)))
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_unicast_addresses_are_public() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in ["93.184.216.34", "1.1.1.1", "2606:4700::1111"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    fn grant(hosts: &[&str]) -> HttpGrant {
        HttpGrant {
            allow: hosts.iter().map(|h| h.to_string()).collect(),
        }
    }

    #[tokio::test]
    async fn requests_outside_the_allow_list_are_refused() {
        let uri: http::Uri = "http://localhost:9/x".parse().unwrap();
        let err = checked_address(None, &uri).await.unwrap_err();
        assert!(
            matches!(&err, Refusal::Denied(reason) if reason.contains("no [http] grant")),
            "{err:?}"
        );
        let err = checked_address(Some(&grant(&["example.com"])), &uri)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, Refusal::Denied(reason) if reason.contains("not in the [http] allow list")),
            "{err:?}"
        );
        assert!(matches!(err.into_error(), Error::HttpRequestDenied));
    }

    #[tokio::test]
    async fn private_addresses_need_the_host_listed_exactly() {
        let uri: http::Uri = "http://127.0.0.1:9/".parse().unwrap();
        assert_eq!(
            checked_address(Some(&grant(&["127.0.0.1:9"])), &uri)
                .await
                .unwrap(),
            "127.0.0.1:9".parse().unwrap()
        );
        let wildcard: http::Uri = "http://a.localhost:9/".parse().unwrap();
        let err = checked_address(Some(&grant(&["*.localhost"])), &wildcard).await;
        // Resolves (to loopback) on most systems; either way it is refused.
        assert!(err.is_err(), "{err:?}");
    }

    #[tokio::test]
    async fn a_listed_host_that_does_not_resolve_is_a_dns_error_not_a_denial() {
        // .invalid never resolves (RFC 6761), with or without a network.
        let uri: http::Uri = "http://nohost.invalid/".parse().unwrap();
        let err = checked_address(Some(&grant(&["nohost.invalid"])), &uri)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, Refusal::Dns(reason) if reason.starts_with("cannot resolve nohost.invalid")),
            "{err:?}"
        );
        match err.into_error() {
            Error::DnsError { rcode, info_code } => {
                assert!(rcode.unwrap().contains("nohost.invalid"));
                assert_eq!(info_code, None);
            }
            other => panic!("not a DNS error: {other:?}"),
        }
    }
}

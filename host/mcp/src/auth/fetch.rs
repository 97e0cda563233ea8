//! The resource server's own HTTP requests to its issuers (metadata, JWKS,
//! introspection), each bounded: no redirects, a whole-request deadline,
//! and a cap on the body, enforced as it arrives (an announced length over
//! it is refused before a byte is read). `http://` is used only for a
//! loopback host.

use std::net::IpAddr;
use std::time::Duration;

use bytes::BytesMut;

/// A bounded client for the issuers' endpoints.
#[derive(Clone)]
pub(super) struct Fetcher {
    client: reqwest::Client,
}

impl Fetcher {
    pub(super) fn new(deadline: Duration) -> anyhow::Result<Fetcher> {
        // reqwest's rustls needs a process-wide crypto provider; ring is the
        // one the rest of the build already has (a second install fails,
        // harmlessly).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(deadline)
            .connect_timeout(deadline)
            .user_agent(concat!("corral/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Fetcher { client })
    }

    /// GETs `url`, a JSON document of at most `limit` bytes.
    pub(super) async fn get_json(&self, url: &str, limit: usize) -> Result<Vec<u8>, String> {
        check_url(url)?;
        let request = self
            .client
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json");
        self.send(request, url, limit).await
    }

    /// POSTs the form `fields` to `url`, authenticated as `client_id` with
    /// `secret` (HTTP Basic, RFC 6749 2.3.1); a JSON answer of at most
    /// `limit` bytes.
    pub(super) async fn post_form(
        &self,
        url: &str,
        fields: &[(&str, &str)],
        (client_id, secret): (&str, &str),
        limit: usize,
    ) -> Result<Vec<u8>, String> {
        check_url(url)?;
        let body: Vec<String> = fields
            .iter()
            .map(|(key, value)| format!("{}={}", form_encode(key), form_encode(value)))
            .collect();
        let request = self
            .client
            .post(url)
            .basic_auth(form_encode(client_id), Some(form_encode(secret)))
            .header(reqwest::header::ACCEPT, "application/json")
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(body.join("&"));
        self.send(request, url, limit).await
    }

    async fn send(
        &self,
        request: reqwest::RequestBuilder,
        url: &str,
        limit: usize,
    ) -> Result<Vec<u8>, String> {
        let mut response = request
            .send()
            .await
            .map_err(|err| format!("{url}: {}", describe(&err)))?;
        if !response.status().is_success() {
            return Err(format!("{url} answered {}", response.status()));
        }
        if response
            .content_length()
            .is_some_and(|length| length > limit as u64)
        {
            return Err(format!("{url} answered more than {limit} bytes"));
        }
        let mut body = BytesMut::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|err| format!("{url}: {}", describe(&err)))?
        {
            if body.len() + chunk.len() > limit {
                return Err(format!("{url} answered more than {limit} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body.to_vec())
    }
}

/// An issuer's endpoint must be `https://`, or `http://` on loopback.
pub(super) fn check_url(url: &str) -> Result<(), String> {
    if url.starts_with("https://") {
        return Ok(());
    }
    let Some(rest) = url.strip_prefix("http://") else {
        return Err(format!("{url:.200} is not an https:// URL"));
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = match authority.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or(""),
        None => authority
            .rsplit_once(':')
            .map_or(authority, |(host, _)| host),
    };
    if host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
    {
        Ok(())
    } else {
        Err(format!(
            "{url:.200} is plain http:// to a host that is not loopback; use https://"
        ))
    }
}

fn describe(err: &reqwest::Error) -> String {
    if err.is_timeout() {
        "no complete answer in time".into()
    } else if err.is_connect() {
        "could not connect".into()
    } else {
        let mut text = err.to_string();
        let mut source = std::error::Error::source(err);
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        text
    }
}

/// `application/x-www-form-urlencoded` (and the encoding RFC 6749 2.3.1
/// asks for the Basic credentials).
pub(crate) fn form_encode(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                encoded.push(byte as char)
            }
            b' ' => encoded.push('+'),
            _ => encoded.push_str(&format!("%{byte:02X}")),
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_only_to_loopback() {
        assert!(check_url("https://login.example.com/x").is_ok());
        assert!(check_url("http://127.0.0.1:9000/jwks").is_ok());
        assert!(check_url("http://[::1]:9000").is_ok());
        assert!(check_url("http://localhost/x").is_ok());
        assert!(check_url("http://login.example.com/x").is_err());
        assert!(check_url("http://127.0.0.1.evil.example/x").is_err());
        assert!(check_url("ftp://127.0.0.1/x").is_err());
    }

    #[test]
    fn forms_are_encoded() {
        assert_eq!(form_encode("a b&c=d/é"), "a+b%26c%3Dd%2F%C3%A9");
    }
}

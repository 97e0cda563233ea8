//! A plugin that imports `wasi:http/outgoing-handler`: the host must refuse
//! it at load unless its manifest grants `[http]`, and then allow requests
//! only to the granted hosts.

use corral_sdk::{Tool, ToolError, plugin};
use schemars::JsonSchema;
use serde::Deserialize;
use wasip2::http::outgoing_handler;
use wasip2::http::types::{Fields, Method, OutgoingBody, OutgoingRequest, Scheme};

/// What to fetch.
#[derive(Deserialize, JsonSchema)]
struct FetchArgs {
    /// An `http://` or `https://` URL.
    url: String,
}

/// Bytes of the body returned at most.
const BODY_PREFIX: u64 = 256;

/// GETs `url`; returns the status and the first bytes of the body.
fn fetch(args: FetchArgs) -> Result<String, ToolError> {
    let (scheme, rest) = if let Some(rest) = args.url.strip_prefix("http://") {
        (Scheme::Http, rest)
    } else if let Some(rest) = args.url.strip_prefix("https://") {
        (Scheme::Https, rest)
    } else {
        return Err(ToolError::new(format!("not an http(s) URL: {}", args.url)));
    };
    let (authority, path) = match rest.find('/') {
        Some(slash) => (&rest[..slash], &rest[slash..]),
        None => (rest, "/"),
    };

    let request = OutgoingRequest::new(Fields::new());
    let fail = |what: &str| ToolError::new(format!("{what} for {}", args.url));
    request
        .set_method(&Method::Get)
        .map_err(|()| fail("bad method"))?;
    request
        .set_scheme(Some(&scheme))
        .map_err(|()| fail("bad scheme"))?;
    request
        .set_authority(Some(authority))
        .map_err(|()| fail("bad authority"))?;
    request
        .set_path_with_query(Some(path))
        .map_err(|()| fail("bad path"))?;
    let body = request.body().map_err(|()| fail("no request body"))?;

    let future = outgoing_handler::handle(request, None)
        .map_err(|err| ToolError::new(format!("GET {}: {err:?}", args.url)))?;
    OutgoingBody::finish(body, None)
        .map_err(|err| ToolError::new(format!("GET {}: {err:?}", args.url)))?;
    future.subscribe().block();
    let response = future
        .get()
        .ok_or_else(|| fail("no response"))?
        .map_err(|()| fail("response already taken"))?
        .map_err(|err| ToolError::new(format!("GET {}: {err:?}", args.url)))?;

    let status = response.status();
    let body = response.consume().map_err(|()| fail("no response body"))?;
    let stream = body
        .stream()
        .map_err(|()| fail("no response body stream"))?;
    let mut bytes = Vec::new();
    while (bytes.len() as u64) < BODY_PREFIX {
        match stream.blocking_read(BODY_PREFIX - bytes.len() as u64) {
            Ok(chunk) => bytes.extend(chunk),
            Err(_closed_or_failed) => break,
        }
    }
    Ok(format!("{status} {}", String::from_utf8_lossy(&bytes)))
}

plugin! {
    Tool::new("fetch", fetch).description("GET a URL; return the status and the first bytes of the body."),
}

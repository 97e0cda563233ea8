//! The page where a signed-in user sets their own secrets (a plugin's
//! `[secrets] NAME = { per = "principal" }`), which a URL-mode elicitation
//! sends them to: `GET /corral/secrets?plugin=P&name=N[&elicitation=ID]`
//! shows a form, its `POST` saves the value, and `/corral/signin` is where
//! the issuer sends the browser back after sign-in (see `auth::signin`).
//!
//! The value goes from the browser to this server only: never through the
//! MCP client, never into a log. The MCP spec's rules for such a page:
//! - **Who opens it is checked.** The page signs the browser in with the
//!   server's own issuer, and the principal that sign-in yields is the one
//!   whose value is kept. A page opened from an elicitation made for
//!   another principal is refused (403), so a link one user sends another
//!   completes nothing for the sender (the phishing the spec describes).
//! - **The URL is not pre-authenticated.** It names the plugin, the secret
//!   and a random elicitation id, nothing of the user; it does nothing
//!   for whoever is not signed in as the user it was made for.
//! - **Forms are the user's.** The POST must come from this origin (its
//!   `Origin`, when the browser sends one) and carry the session's random
//!   form token; the session cookie is HttpOnly, SameSite=Lax, Secure on
//!   https, and scoped to `/corral/`; pages may not be framed.
//!
//! Bounded: at most [`MAX_SESSIONS`] browser sessions of
//! [`SESSION_FOR`] each, forms of at most [`MAX_FORM_BYTES`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use hyper::body::Incoming as IncomingBody;

use super::Server;
use super::body::{BodyFailure, HttpResponse, ResponseBody, read_limited};
use crate::ToolHost;
use crate::auth::{SIGN_IN_FOR, SIGN_IN_PATH, SignIn, form_encode, random_text};
use corral_tool::{Principal, same_secret};

/// Where the page is served.
pub const PAGE_PATH: &str = "/corral/secrets";
/// The browser session's cookie (`__Host-` prefixed on https: see
/// [`Cookies`]).
const SESSION_COOKIE: &str = "corral_page";
/// The cookie of a sign-in under way (see `auth::signin`).
const SIGN_IN_COOKIE: &str = "corral_signin";
/// The longest plugin, secret or elicitation name a page is asked about.
const MAX_FIELD_BYTES: usize = 128;
/// How long a browser stays signed in to the page.
const SESSION_FOR: Duration = Duration::from_secs(30 * 60);
/// The most browser sessions at once.
const MAX_SESSIONS: usize = 10_000;
/// The largest form accepted.
const MAX_FORM_BYTES: usize = 64 * 1024;

/// Browsers signed in to the page, by their cookie.
#[derive(Default)]
pub(super) struct PageSessions(Mutex<HashMap<String, PageSession>>);

#[derive(Clone)]
struct PageSession {
    principal: Arc<Principal>,
    /// The form token every POST of this session must carry.
    form_token: String,
    at: Instant,
}

impl PageSessions {
    fn get(&self, id: Option<&str>) -> Option<PageSession> {
        let id = id?;
        let mut sessions = self.0.lock().unwrap();
        sessions.retain(|_, session| session.at.elapsed() < SESSION_FOR);
        sessions.get(id).cloned()
    }

    fn start(&self, principal: Arc<Principal>) -> Result<String, &'static str> {
        let mut sessions = self.0.lock().unwrap();
        // One session per principal: signing in again replaces it, so no
        // one fills the page's sessions by signing in over and over.
        let key = principal.key();
        sessions.retain(|_, session| {
            session.at.elapsed() < SESSION_FOR && session.principal.key() != key
        });
        if sessions.len() >= MAX_SESSIONS {
            return Err("too many people are signed in to this page: try again later");
        }
        let id = format!("{}{}", random_text(), random_text());
        sessions.insert(
            id.clone(),
            PageSession {
                principal,
                form_token: random_text(),
                at: Instant::now(),
            },
        );
        Ok(id)
    }
}

/// What the page is asked about: the query's or the form's fields.
#[derive(Default)]
struct Fields {
    plugin: String,
    name: String,
    elicitation: Option<String>,
    form_token: String,
    value: String,
    code: String,
    state: String,
    error: Option<String>,
    /// Sign in again (as another account).
    again: bool,
}

impl Fields {
    fn parse(encoded: &str) -> Fields {
        let mut fields = Fields::default();
        for pair in encoded.split('&').filter(|pair| !pair.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = form_decode(value);
            match form_decode(key).as_str() {
                "plugin" => fields.plugin = value,
                "name" => fields.name = value,
                "elicitation" if !value.is_empty() => fields.elicitation = Some(value),
                "form_token" => fields.form_token = value,
                "value" => fields.value = value,
                "code" => fields.code = value,
                "state" => fields.state = value,
                "error" => fields.error = Some(value),
                "again" => fields.again = true,
                _ => {}
            }
        }
        fields
    }

    /// The page these fields name, as a path of this server: only the
    /// fields the page reads, none longer than [`MAX_FIELD_BYTES`].
    fn page_path(&self) -> Option<String> {
        let short = |text: &str| text.len() <= MAX_FIELD_BYTES;
        if !short(&self.plugin)
            || !short(&self.name)
            || !self.elicitation.as_deref().is_none_or(short)
        {
            return None;
        }
        let mut path = format!(
            "{PAGE_PATH}?plugin={}&name={}",
            form_encode(&self.plugin),
            form_encode(&self.name)
        );
        if let Some(id) = &self.elicitation {
            path.push_str(&format!("&elicitation={}", form_encode(id)));
        }
        Some(path)
    }
}

/// The page's cookies: on https `__Host-` prefixed (Secure, Path=/, no
/// Domain, so no sibling host can plant one), on plain http (loopback)
/// scoped to `/corral/`.
struct Cookies {
    secure: bool,
}

impl Cookies {
    fn name(&self, base: &str) -> String {
        if self.secure {
            format!("__Host-{base}")
        } else {
            base.to_string()
        }
    }

    /// A `Set-Cookie` value: `value` for `max_age` (0: remove it).
    fn set(&self, base: &str, value: &str, max_age: Duration) -> String {
        let (path, secure) = if self.secure {
            ("/", "; Secure")
        } else {
            ("/corral/", "")
        };
        format!(
            "{}={value}; Path={path}; HttpOnly; SameSite=Lax; Max-Age={}{secure}",
            self.name(base),
            max_age.as_secs()
        )
    }

    /// The value of the cookie `base` the request carries.
    fn get<'a>(&self, headers: &'a HeaderMap, base: &str) -> Option<&'a str> {
        let name = self.name(base);
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(found, _)| *found == name)
            .map(|(_, value)| value)
    }
}

impl<H: ToolHost> Server<H> {
    fn cookies(&self) -> Cookies {
        let secure = self
            .http
            .authorizer
            .as_ref()
            .is_some_and(|authorizer| authorizer.origin().starts_with("https://"));
        Cookies { secure }
    }

    /// The page's answer, for a request of one of its paths.
    pub(super) async fn page_response(
        &self,
        request: http::Request<IncomingBody>,
    ) -> Option<HttpResponse> {
        let path = request.uri().path();
        if path != PAGE_PATH && path != SIGN_IN_PATH {
            return None;
        }
        // DNS rebinding: the Host check every request passes. (The Origin
        // check of the MCP endpoint is not for a page the browser
        // navigates to; a POST's Origin is checked below.)
        if let Some(refusal) = self.host_refusal(request.headers()) {
            return Some(refusal);
        }
        let signs_in = self
            .http
            .authorizer
            .as_ref()
            .is_some_and(|authorizer| authorizer.signs_in());
        if self.http.secret_page.is_none() || !signs_in {
            return Some(page(
                StatusCode::NOT_FOUND,
                "No page here",
                "<p>This server signs no one in to set their own secrets (its operator starts it with <code>--oauth-web-client</code> and <code>--secrets-key-file</code> for that).</p>",
            ));
        }
        let query = request.uri().query().unwrap_or("").to_string();
        Some(match (request.method().clone(), path) {
            (Method::GET, SIGN_IN_PATH) => {
                self.signed_in(request.headers(), Fields::parse(&query))
                    .await
            }
            (Method::GET, PAGE_PATH) => self.show(request.headers(), &query).await,
            (Method::POST, PAGE_PATH) => self.save(request).await,
            _ => page(
                StatusCode::METHOD_NOT_ALLOWED,
                "Method not allowed",
                "<p>This page is read with GET and its form sent with POST.</p>",
            ),
        })
    }

    /// The form, once the browser is signed in.
    async fn show(&self, headers: &HeaderMap, query: &str) -> HttpResponse {
        let fields = Fields::parse(query);
        let description = match self.granted(&fields) {
            Ok(description) => description,
            Err(response) => return *response,
        };
        let cookies = self.cookies();
        let session = self
            .pages
            .get(cookies.get(headers, SESSION_COOKIE))
            .filter(|_| !fields.again);
        let Some(session) = session else {
            let authorizer = self.http.authorizer.as_ref().expect("checked");
            let Some(return_to) = fields.page_path() else {
                return page(
                    StatusCode::BAD_REQUEST,
                    "Bad link",
                    "<p>The link names a plugin or secret longer than any.</p>",
                );
            };
            return match authorizer.start_sign_in(&return_to, fields.again).await {
                Ok((url, sign_in)) => {
                    let cookie = cookies.set(SIGN_IN_COOKIE, &sign_in.cookie_value(), SIGN_IN_FOR);
                    redirect(&url, &[cookie])
                }
                Err(problem) => {
                    tracing::warn!("secrets page: cannot start a sign-in: {problem}");
                    page(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "Cannot sign you in",
                        &format!("<p>{}</p>", escape(&problem)),
                    )
                }
            };
        };
        if let Err(response) = self.check_elicitation(&fields, &session.principal) {
            return *response;
        }
        let mut body = format!(
            "<p>Plugin <code>{plugin}</code> asks for your own <strong>{name}</strong>: {description}</p>\
             <p>Signed in as {who}. What you enter is kept for you alone, encrypted, and given to this plugin's calls that you make; it never passes through your MCP client.</p>\
             <form method=\"post\" action=\"{PAGE_PATH}\">\
             <input type=\"hidden\" name=\"plugin\" value=\"{plugin}\">\
             <input type=\"hidden\" name=\"name\" value=\"{name}\">\
             <input type=\"hidden\" name=\"form_token\" value=\"{token}\">",
            plugin = escape(&fields.plugin),
            name = escape(&fields.name),
            description = escape(&description),
            who = escape(&session.principal.describe()),
            token = escape(&session.form_token),
        );
        if let Some(id) = &fields.elicitation {
            body.push_str(&format!(
                "<input type=\"hidden\" name=\"elicitation\" value=\"{}\">",
                escape(id)
            ));
        }
        body.push_str(&format!(
            "<label>{} <input type=\"password\" name=\"value\" autocomplete=\"off\" required autofocus></label> \
             <button type=\"submit\">Save</button></form>",
            escape(&fields.name)
        ));
        page(StatusCode::OK, "Set your secret", &body)
    }

    /// The form sent: the value kept for the signed-in principal.
    async fn save(&self, request: http::Request<IncomingBody>) -> HttpResponse {
        let authorizer = self.http.authorizer.as_ref().expect("checked");
        if let Some(origin) = request.headers().get(header::ORIGIN)
            && !origin
                .to_str()
                .is_ok_and(|origin| same_origin(origin, authorizer.origin()))
        {
            tracing::warn!("secrets page: refused a form from origin {origin:?}");
            return page(
                StatusCode::FORBIDDEN,
                "Refused",
                "<p>The form was not sent from this server's page.</p>",
            );
        }
        let is_form = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("application/x-www-form-urlencoded"));
        if !is_form {
            return page(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Refused",
                "<p>The page's form is sent as application/x-www-form-urlencoded.</p>",
            );
        }
        let session = self
            .pages
            .get(self.cookies().get(request.headers(), SESSION_COOKIE));
        let body = match read_form(request.into_body()).await {
            Ok(body) => body,
            Err(response) => return response,
        };
        let fields = Fields::parse(&String::from_utf8_lossy(&body));
        let Some(session) = session else {
            return page(
                StatusCode::UNAUTHORIZED,
                "Signed out",
                "<p>Your sign-in to this page has expired: open the link again.</p>",
            );
        };
        if !same_secret(&fields.form_token, &session.form_token) {
            return page(
                StatusCode::FORBIDDEN,
                "Refused",
                "<p>The form is not this page's: open the link again.</p>",
            );
        }
        if let Err(response) = self.granted(&fields) {
            return *response;
        }
        if let Err(response) = self.check_elicitation(&fields, &session.principal) {
            return *response;
        }
        let value = fields.value.trim();
        if value.is_empty() {
            return page(
                StatusCode::BAD_REQUEST,
                "Nothing to save",
                "<p>The value is empty: go back and enter it.</p>",
            );
        }
        let store = self.http.secret_page.as_ref().expect("checked");
        let saved = store
            .save(
                &session.principal,
                &fields.plugin,
                &fields.name,
                value.to_string(),
            )
            .await;
        match saved {
            Ok(()) => {
                tracing::info!(
                    "secrets page: {} set their own {} of plugin {}",
                    session.principal.describe(),
                    fields.name,
                    fields.plugin
                );
                page(
                    StatusCode::OK,
                    "Saved",
                    &format!(
                        "<p>Your {} for plugin <code>{}</code> is saved. You can close this page and go back to your client.</p>",
                        escape(&fields.name),
                        escape(&fields.plugin)
                    ),
                )
            }
            Err(problem) => page(
                StatusCode::BAD_REQUEST,
                "Not saved",
                &format!("<p>{}</p>", escape(&problem)),
            ),
        }
    }

    /// The issuer sent the browser back: the sign-in is finished, and the
    /// browser goes on to the page it came from.
    async fn signed_in(&self, headers: &HeaderMap, fields: Fields) -> HttpResponse {
        if let Some(error) = &fields.error {
            return page(
                StatusCode::FORBIDDEN,
                "Not signed in",
                &format!(
                    "<p>The sign-in ended with <code>{}</code>.</p>",
                    escape(error)
                ),
            );
        }
        let authorizer = self.http.authorizer.as_ref().expect("checked");
        let cookies = self.cookies();
        let sign_in = cookies
            .get(headers, SIGN_IN_COOKIE)
            .and_then(SignIn::from_cookie);
        let (principal, return_to) = match authorizer
            .finish_sign_in(sign_in, &fields.state, &fields.code)
            .await
        {
            Ok(signed_in) => signed_in,
            Err(problem) => {
                tracing::info!("secrets page: a sign-in failed: {problem}");
                return page(
                    StatusCode::FORBIDDEN,
                    "Not signed in",
                    &format!("<p>{}</p>", escape(&problem)),
                );
            }
        };
        match self.pages.start(principal) {
            Ok(id) => redirect(
                &return_to,
                &[
                    cookies.set(SESSION_COOKIE, &id, SESSION_FOR),
                    cookies.set(SIGN_IN_COOKIE, "", Duration::ZERO),
                ],
            ),
            Err(problem) => page(StatusCode::SERVICE_UNAVAILABLE, "Busy", problem),
        }
    }

    /// The description of the secret `fields` name, when a plugin grants
    /// it per principal.
    fn granted(&self, fields: &Fields) -> Result<String, Box<HttpResponse>> {
        let store = self.http.secret_page.as_ref().expect("checked");
        store.describe(&fields.plugin, &fields.name).ok_or_else(|| {
            Box::new(page(
                StatusCode::NOT_FOUND,
                "No such secret",
                &format!(
                    "<p>No plugin of this server named <code>{}</code> asks each user for <code>{}</code>.</p>",
                    escape(&fields.plugin),
                    escape(&fields.name)
                ),
            ))
        })
    }

    /// Refuses a page opened from an elicitation made for someone else
    /// (or for another secret, or long ago): the link was passed on, and
    /// completing it would complete someone else's request.
    fn check_elicitation(
        &self,
        fields: &Fields,
        principal: &Principal,
    ) -> Result<(), Box<HttpResponse>> {
        let Some(id) = &fields.elicitation else {
            return Ok(());
        };
        let store = self.http.secret_page.as_ref().expect("checked");
        if store.made_for(id, principal, &fields.plugin, &fields.name) {
            return Ok(());
        }
        tracing::warn!(
            "secrets page: {} opened an elicitation not made for them",
            principal.describe()
        );
        let own = format!(
            "{PAGE_PATH}?plugin={}&amp;name={}",
            escape(&form_encode(&fields.plugin)),
            escape(&form_encode(&fields.name))
        );
        Err(Box::new(page(
            StatusCode::FORBIDDEN,
            "Not your request",
            &format!(
                "<p>You are signed in as {who}, but this request was made for another account, or it is over an hour old. Nothing was saved.</p>\
                 <ul><li>If your client gave you this link while you use another account, <a href=\"{own}&amp;elicitation={id}&amp;again=1\">sign in as that account</a>.</li>\
                 <li>If someone sent you this link, do not use it.</li>\
                 <li>To set your own {name} for plugin <code>{plugin}</code> as {who}, <a href=\"{own}\">open this page</a>.</li></ul>",
                who = escape(&principal.describe()),
                id = escape(&form_encode(id)),
                name = escape(&fields.name),
                plugin = escape(&fields.plugin),
            ),
        )))
    }
}

/// Reads a form's body, of at most [`MAX_FORM_BYTES`] (see
/// [`read_limited`]); or the page refusing it.
async fn read_form(body: IncomingBody) -> Result<Bytes, HttpResponse> {
    read_limited(body, MAX_FORM_BYTES)
        .await
        .map_err(|failure| match failure {
            BodyFailure::TooLarge => page(
                StatusCode::PAYLOAD_TOO_LARGE,
                "Too large",
                "<p>The form is larger than this page takes.</p>",
            ),
            BodyFailure::TimedOut => page(
                StatusCode::REQUEST_TIMEOUT,
                "Too slow",
                "<p>The form did not arrive in time.</p>",
            ),
            BodyFailure::Unreadable => page(
                StatusCode::BAD_REQUEST,
                "Bad form",
                "<p>The form could not be read.</p>",
            ),
        })
}

/// An HTML page: `title` and `body` (already escaped), which no other
/// site may frame, script or cache.
fn page(status: StatusCode, title: &str, body: &str) -> HttpResponse {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>Corral: {title}</title>\
         <style>body{{font-family:system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em}}\
         input[type=password]{{width:100%;padding:.4em;margin:.5em 0}}</style></head>\
         <body><h1>{title}</h1>{body}</body></html>",
        title = escape(title)
    );
    let mut response = http::Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
        .body(ResponseBody::full(Bytes::from(html)))
        .unwrap();
    secure_headers(response.headers_mut());
    response
}

/// 303 to `location`, setting `cookies`.
fn redirect(location: &str, cookies: &[String]) -> HttpResponse {
    let mut response = http::Response::builder()
        .status(StatusCode::SEE_OTHER)
        .body(ResponseBody::empty())
        .unwrap();
    let headers = response.headers_mut();
    if let Ok(location) = HeaderValue::from_str(location) {
        headers.insert(header::LOCATION, location);
    }
    for cookie in cookies {
        if let Ok(cookie) = HeaderValue::from_str(cookie) {
            headers.append(header::SET_COOKIE, cookie);
        }
    }
    secure_headers(headers);
    response
}

/// Whether `origin` (a request's `Origin`) is `ours` (the resource's),
/// a default port written or not.
fn same_origin(origin: &str, ours: &str) -> bool {
    let normal = |origin: &str| {
        let origin = origin.to_ascii_lowercase();
        for (scheme, port) in [("https://", ":443"), ("http://", ":80")] {
            if origin.starts_with(scheme) && origin.ends_with(port) {
                return origin[..origin.len() - port.len()].to_string();
            }
        }
        origin
    };
    normal(origin) == normal(ours)
}

fn secure_headers(headers: &mut HeaderMap) {
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // same-origin, not no-referrer: under no-referrer a browser sends a
    // form's POST with `Origin: null`, which the POST's check refuses.
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
}

/// `text` safe in HTML text and attribute values.
fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            c => escaped.push(c),
        }
    }
    escaped
}

/// `application/x-www-form-urlencoded` decoding: `+` is a space, `%XX` a
/// byte; bytes that are not UTF-8 are replaced.
fn form_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |at: usize| bytes.get(at).and_then(|b| (*b as char).to_digit(16));
        match bytes[i] {
            b'+' => decoded.push(b' '),
            b'%' if hex(i + 1).is_some() && hex(i + 2).is_some() => {
                decoded.push((hex(i + 1).unwrap() * 16 + hex(i + 2).unwrap()) as u8);
                i += 2;
            }
            byte => decoded.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_decode_as_browsers_encode_them() {
        assert_eq!(form_decode("a+b%20c%2B%3d%zz%4"), "a b c+=%zz%4");
        let fields = Fields::parse("plugin=gh&name=TOKEN&value=x%26y%3Dz&elicitation=&other=1");
        assert_eq!(
            (
                fields.plugin.as_str(),
                fields.name.as_str(),
                fields.value.as_str()
            ),
            ("gh", "TOKEN", "x&y=z")
        );
        assert_eq!(fields.elicitation, None);
    }

    #[test]
    fn html_is_escaped_and_cookies_are_found() {
        assert_eq!(
            escape("<a href=\"x\">'&"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;"
        );
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("other=1; corral_page=abc; __Host-corral_page=def; x=y"),
        );
        assert_eq!(
            Cookies { secure: false }.get(&headers, SESSION_COOKIE),
            Some("abc")
        );
        assert_eq!(
            Cookies { secure: true }.get(&headers, SESSION_COOKIE),
            Some("def")
        );
        let set = Cookies { secure: true }.set(SESSION_COOKIE, "v", SESSION_FOR);
        assert_eq!(
            set,
            "__Host-corral_page=v; Path=/; HttpOnly; SameSite=Lax; Max-Age=1800; Secure"
        );
        assert!(same_origin(
            "https://MCP.example.com",
            "https://mcp.example.com:443"
        ));
        assert!(!same_origin("null", "https://mcp.example.com"));
        assert!(!same_origin(
            "https://evil.example",
            "https://mcp.example.com"
        ));
    }
}

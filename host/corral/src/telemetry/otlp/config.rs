//! Where traces go: `--otlp-endpoint`, or the OpenTelemetry SDKs' standard
//! environment variables, so that a deployment that configures its other
//! services' exporters configures Corral's the same way.

use anyhow::{Context as _, Result, bail};

/// Where and how spans are exported.
#[derive(Clone, PartialEq, Eq)]
pub struct OtlpConfig {
    /// The full URL spans are POSTed to (ending in `/v1/traces` unless
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` said otherwise).
    pub endpoint: String,
    /// Headers sent with every export (an API key, say): from
    /// `OTEL_EXPORTER_OTLP_HEADERS` and `OTEL_EXPORTER_OTLP_TRACES_HEADERS`.
    pub headers: Vec<(String, String)>,
    /// The resource's `service.name`: `OTEL_SERVICE_NAME`, else `corral`.
    pub service_name: String,
}

impl std::fmt::Debug for OtlpConfig {
    /// Header values are credentials: only their names are shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("OtlpConfig")
            .field("endpoint", &self.endpoint)
            .field("headers", &names)
            .field("service_name", &self.service_name)
            .finish()
    }
}

impl OtlpConfig {
    /// The configuration from `--otlp-endpoint` (`flag`) and the
    /// environment, or `None` when traces are off:
    /// - the endpoint: the flag (a base URL: `/v1/traces` is appended
    ///   unless the path already ends with it), else
    ///   `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as it is), else
    ///   `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL, as the flag); none of
    ///   them: off;
    /// - off all the same with `OTEL_SDK_DISABLED=true` or
    ///   `OTEL_TRACES_EXPORTER=none`;
    /// - `OTEL_SERVICE_NAME`, default `corral`;
    /// - `OTEL_EXPORTER_OTLP_HEADERS` then `OTEL_EXPORTER_OTLP_TRACES_HEADERS`:
    ///   `name=value,name2=value2`, values percent-decoded.
    ///
    /// An endpoint that is not an `http://` or `https://` URL, malformed
    /// headers, or a protocol other than `http/protobuf` (the only one
    /// Corral speaks) are errors: better a clear refusal at startup than
    /// traces silently lost.
    pub fn from_flag_and_env(flag: Option<&str>) -> Result<Option<OtlpConfig>> {
        OtlpConfig::from_lookup(flag, |name| {
            std::env::var(name).ok().filter(|value| !value.is_empty())
        })
    }

    /// [`OtlpConfig::from_flag_and_env`] with the environment read through
    /// `env`.
    fn from_lookup(
        flag: Option<&str>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<OtlpConfig>> {
        if env("OTEL_SDK_DISABLED").is_some_and(|value| value.trim().eq_ignore_ascii_case("true"))
            || env("OTEL_TRACES_EXPORTER").is_some_and(|value| {
                value
                    .split(',')
                    .any(|exporter| exporter.trim().eq_ignore_ascii_case("none"))
            })
        {
            return Ok(None);
        }
        let endpoint = match (
            flag,
            env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
            env("OTEL_EXPORTER_OTLP_ENDPOINT"),
        ) {
            (Some(base), _, _) => {
                traces_url(base).context("--otlp-endpoint is not an http(s) URL")?
            }
            (None, Some(full), _) => checked_url(&full)
                .context("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is not an http(s) URL")?,
            (None, None, Some(base)) => {
                traces_url(&base).context("OTEL_EXPORTER_OTLP_ENDPOINT is not an http(s) URL")?
            }
            (None, None, None) => return Ok(None),
        };
        for variable in [
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            "OTEL_EXPORTER_OTLP_PROTOCOL",
        ] {
            if let Some(protocol) = env(variable) {
                if protocol.trim() != "http/protobuf" {
                    bail!(
                        "{variable}={protocol}: Corral exports traces over http/protobuf only \
                         (an OTLP receiver's HTTP port, 4318 by default)"
                    );
                }
                break;
            }
        }
        let mut headers = Vec::new();
        for variable in [
            "OTEL_EXPORTER_OTLP_HEADERS",
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        ] {
            if let Some(list) = env(variable) {
                for (name, value) in parse_headers(&list).context(variable)? {
                    headers
                        .retain(|(known, _): &(String, String)| !known.eq_ignore_ascii_case(&name));
                    headers.push((name, value));
                }
            }
        }
        let service_name = env("OTEL_SERVICE_NAME").unwrap_or_else(|| "corral".into());
        Ok(Some(OtlpConfig {
            endpoint,
            headers,
            service_name,
        }))
    }
}

/// `base` with `/v1/traces` appended to its path, unless it ends with it.
fn traces_url(base: &str) -> Result<String> {
    let mut url = parse_http(base)?;
    let path = url.path().trim_end_matches('/').to_owned();
    if path.ends_with("/v1/traces") {
        url.set_path(&path);
    } else {
        url.set_path(&format!("{path}/v1/traces"));
    }
    Ok(url.to_string())
}

/// `url`, checked.
fn checked_url(url: &str) -> Result<String> {
    parse_http(url)?;
    Ok(url.trim().to_owned())
}

fn parse_http(text: &str) -> Result<reqwest::Url> {
    let url = reqwest::Url::parse(text.trim()).with_context(|| format!("{text:?}"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        bail!("{text:?} is not an http:// or https:// URL");
    }
    Ok(url)
}

/// `name=value,name2=value2` (W3C Baggage's format, as the OpenTelemetry
/// SDKs read it): names trimmed, values trimmed and percent-decoded.
fn parse_headers(list: &str) -> Result<Vec<(String, String)>> {
    let mut headers = Vec::new();
    for entry in list.split(',') {
        if entry.trim().is_empty() {
            continue;
        }
        // Never the entry itself in the message: its value is a secret.
        let Some((name, value)) = entry.split_once('=') else {
            bail!("an entry without '=' (expected name=value,name2=value2)");
        };
        let name = name.trim();
        let value = percent_decode(value.trim())
            .with_context(|| format!("the value of {name:?} is not valid percent-encoded UTF-8"))?;
        if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
            bail!("{name:?} is not a valid header name");
        }
        if reqwest::header::HeaderValue::from_str(&value).is_err() {
            bail!("the value of {name:?} is not a valid header value");
        }
        headers.push((name.to_owned(), value));
    }
    Ok(headers)
}

/// `%XX` escapes decoded (a `%` not followed by two hex digits is kept).
fn percent_decode(text: &str) -> Result<String> {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |at: usize| {
            bytes
                .get(at)
                .and_then(|&c| (c as char).to_digit(16))
                .map(|d| d as u8)
        };
        match (bytes[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(high), Some(low)) => {
                decoded.push(high << 4 | low);
                i += 3;
            }
            (byte, _, _) => {
                decoded.push(byte);
                i += 1;
            }
        }
    }
    Ok(String::from_utf8(decoded)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(flag: Option<&str>, env: &[(&str, &str)]) -> Result<Option<OtlpConfig>> {
        OtlpConfig::from_lookup(flag, |name| {
            env.iter()
                .find(|(known, _)| *known == name)
                .map(|(_, value)| value.to_string())
        })
    }

    fn endpoint(flag: Option<&str>, env: &[(&str, &str)]) -> String {
        config(flag, env).unwrap().unwrap().endpoint
    }

    #[test]
    fn without_an_endpoint_traces_are_off() {
        assert_eq!(config(None, &[]).unwrap(), None);
        assert_eq!(config(None, &[("OTEL_SERVICE_NAME", "x")]).unwrap(), None);
    }

    #[test]
    fn the_flag_and_the_generic_variable_are_base_urls() {
        for (base, full) in [
            ("http://127.0.0.1:4318", "http://127.0.0.1:4318/v1/traces"),
            ("http://127.0.0.1:4318/", "http://127.0.0.1:4318/v1/traces"),
            (
                "https://otel.example/otlp",
                "https://otel.example/otlp/v1/traces",
            ),
            (
                "https://otel.example/otlp/",
                "https://otel.example/otlp/v1/traces",
            ),
            (
                "http://collector:4318/v1/traces",
                "http://collector:4318/v1/traces",
            ),
            (
                "http://collector:4318/v1/traces/",
                "http://collector:4318/v1/traces",
            ),
        ] {
            assert_eq!(endpoint(Some(base), &[]), full, "{base}");
            assert_eq!(
                endpoint(None, &[("OTEL_EXPORTER_OTLP_ENDPOINT", base)]),
                full,
                "{base}"
            );
        }
    }

    #[test]
    fn the_flag_comes_first_then_the_traces_variable_as_it_is() {
        let env = [
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "http://traces:1/custom",
            ),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://generic:2"),
        ];
        assert_eq!(
            endpoint(Some("http://flag:3"), &env),
            "http://flag:3/v1/traces"
        );
        assert_eq!(endpoint(None, &env), "http://traces:1/custom");
        assert_eq!(endpoint(None, &env[1..]), "http://generic:2/v1/traces");
    }

    #[test]
    fn sdk_disabled_or_exporter_none_turns_traces_off() {
        let on = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://x:1");
        for off in [
            ("OTEL_SDK_DISABLED", "true"),
            ("OTEL_SDK_DISABLED", "TRUE"),
            ("OTEL_TRACES_EXPORTER", "none"),
            ("OTEL_TRACES_EXPORTER", "console, none"),
        ] {
            assert_eq!(
                config(Some("http://y:2"), &[on, off]).unwrap(),
                None,
                "{off:?}"
            );
        }
        for still_on in [
            ("OTEL_SDK_DISABLED", "false"),
            ("OTEL_TRACES_EXPORTER", "otlp"),
        ] {
            assert!(
                config(None, &[on, still_on]).unwrap().is_some(),
                "{still_on:?}"
            );
        }
    }

    #[test]
    fn service_name_and_headers() {
        let config = config(
            Some("http://x:1"),
            &[
                ("OTEL_SERVICE_NAME", "gateway"),
                (
                    "OTEL_EXPORTER_OTLP_HEADERS",
                    " api-key = se%20cret%2C1 ,x-tenant=a,, x-a=100%",
                ),
                ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "X-Tenant=b"),
            ],
        )
        .unwrap()
        .unwrap();
        assert_eq!(config.service_name, "gateway");
        assert_eq!(
            config.headers,
            [
                ("api-key".to_string(), "se cret,1".to_string()),
                ("x-a".to_string(), "100%".to_string()),
                ("X-Tenant".to_string(), "b".to_string()),
            ]
        );
        assert!(!format!("{config:?}").contains("se cret"));
        let default = super::tests::config(Some("http://x:1"), &[])
            .unwrap()
            .unwrap();
        assert_eq!(default.service_name, "corral");
        assert!(default.headers.is_empty());
    }

    #[test]
    fn bad_settings_are_refused_without_showing_values() {
        for (flag, env) in [
            (Some("ftp://x:1"), vec![]),
            (Some("not a url"), vec![]),
            (
                None,
                vec![("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "unix:/x")],
            ),
            (
                Some("http://x:1"),
                vec![("OTEL_EXPORTER_OTLP_HEADERS", "secret-token")],
            ),
            (
                Some("http://x:1"),
                vec![("OTEL_EXPORTER_OTLP_HEADERS", "bad name=secret")],
            ),
            (
                Some("http://x:1"),
                vec![("OTEL_EXPORTER_OTLP_HEADERS", "k=secret%0A")],
            ),
            (
                Some("http://x:1"),
                vec![("OTEL_EXPORTER_OTLP_HEADERS", "k=secret%FF")],
            ),
            (
                Some("http://x:1"),
                vec![("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")],
            ),
            (
                Some("http://x:1"),
                vec![("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json")],
            ),
        ] {
            let err = config(flag, &env).unwrap_err();
            assert!(!format!("{err:#}").contains("secret"), "{err:#}");
        }
        assert!(
            config(
                Some("http://x:1"),
                &[("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")]
            )
            .unwrap()
            .is_some()
        );
    }
}

//! The headers in which a stateless request restates its body, checked
//! against it: `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` (the tool
//! name, prompt name or resource URI) and one `Mcp-Param-{Name}` per tool
//! parameter marked with `x-mcp-header`.
//!
//! Proxies route on these headers without parsing the body, so a server
//! that acted on a body its headers misdescribe would defeat them: a header
//! that is missing, unreadable, or disagrees with the body is a
//! HeaderMismatch. Each check says how, in words for the error message.

use serde_json::{Map, Value};

use super::header_value::mirrored_value;
use crate::jsonrpc::Request;
use corral_tool::header_param::HeaderParam;

const METHOD_HEADER: &str = "mcp-method";
const NAME_HEADER: &str = "mcp-name";

/// How the MCP-Protocol-Version header (`version`) disagrees with the
/// revision the body's `_meta` names (`in_body`), if it does.
pub(super) fn version_mismatch(version: &str, in_body: &Value) -> Option<String> {
    match in_body {
        Value::String(in_body) if in_body != version => Some(format!(
            "the MCP-Protocol-Version header says {version} but _meta says {in_body}"
        )),
        _ => None,
    }
}

/// How the Mcp-Method header disagrees with the body, if it does.
pub(super) fn method_mismatch(headers: &http::HeaderMap, request: &Request) -> Option<String> {
    match mirrored_value(headers, METHOD_HEADER) {
        Err(bad) => Some(format!("the Mcp-Method header is not valid: {bad}")),
        Ok(None) => Some(format!(
            "the Mcp-Method header is missing (the body calls {})",
            request.method
        )),
        Ok(Some(method)) if method != request.method => Some(format!(
            "the Mcp-Method header says {method} but the body calls {}",
            request.method
        )),
        Ok(Some(_)) => None,
    }
}

/// How the Mcp-Name header disagrees with the target the body names, if it
/// does. The header is compared decoded, so a name sent as
/// `=?base64?...?=` matches the name it encodes.
pub(super) fn name_mismatch(headers: &http::HeaderMap, request: &Request) -> Option<String> {
    // The methods whose target the Mcp-Name header restates.
    let named = match request.method.as_str() {
        "tools/call" | "prompts/get" => request.params.get("name"),
        "resources/read" => request.params.get("uri"),
        // The tasks extension's routing header: the task a request is for.
        "tasks/get" | "tasks/update" | "tasks/cancel" => request.params.get("taskId"),
        _ => None,
    };
    let Some(Value::String(in_body)) = named else {
        return None;
    };
    match mirrored_value(headers, NAME_HEADER) {
        Err(bad) => Some(format!("the Mcp-Name header is not valid: {bad}")),
        Ok(None) => Some(format!(
            "the Mcp-Name header is missing (the body names {in_body})"
        )),
        Ok(Some(name)) if name != *in_body => Some(format!(
            "the Mcp-Name header says {name} but the body names {in_body}"
        )),
        Ok(Some(_)) => None,
    }
}

/// How the Mcp-Param headers disagree with the `arguments` of a call to a
/// tool whose marked parameters are `params`, if they do. A parameter that
/// is absent or null has no header; one with a value must have a header
/// that states it. Values are not quoted in messages: a proxy's logs may
/// keep them, and the header may carry anything the argument does.
pub(super) fn params_mismatch(
    headers: &http::HeaderMap,
    params: &[HeaderParam],
    arguments: &Map<String, Value>,
) -> Option<String> {
    params.iter().find_map(|param| {
        let header = format!("Mcp-Param-{}", param.name);
        let path = param.dotted_path();
        let sent = match mirrored_value(headers, &param.header()) {
            Err(bad) => return Some(format!("the {header} header is not valid: {bad}")),
            Ok(sent) => sent,
        };
        match (sent, param.value_in(arguments)) {
            (None, None) => None,
            (None, Some(_)) => Some(format!(
                "the {header} header is missing (argument `{path}` has a value)"
            )),
            (Some(_), None) => Some(format!(
                "the {header} header is sent but argument `{path}` is absent or null"
            )),
            (Some(sent), Some(value)) if !states(&sent, value) => Some(format!(
                "the {header} header does not state the value of argument `{path}`"
            )),
            (Some(_), Some(_)) => None,
        }
    })
}

/// Whether header text `sent` states `value`: a string as itself, a
/// boolean as `true` or `false`, a number as any text of the same number
/// (`42.0` states 42, as the spec suggests comparing numerically). An
/// object or array has no header form.
fn states(sent: &str, value: &Value) -> bool {
    match value {
        Value::String(text) => sent == text,
        Value::Bool(flag) => sent == if *flag { "true" } else { "false" },
        Value::Number(number) => {
            let Ok(Value::Number(stated)) = serde_json::from_str::<Value>(sent) else {
                return false;
            };
            match (stated.as_i64(), number.as_i64()) {
                (Some(stated), Some(number)) => stated == number,
                _ => stated.as_f64().is_some() && stated.as_f64() == number.as_f64(),
            }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::{HeaderMap, HeaderValue};
    use serde_json::json;

    fn call(arguments: Value) -> Map<String, Value> {
        arguments.as_object().unwrap().clone()
    }

    fn region() -> Vec<HeaderParam> {
        vec![HeaderParam {
            name: "Region".into(),
            path: vec!["region".into()],
        }]
    }

    fn with(name: &'static str, value: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.append(name, HeaderValue::from_static(value));
        headers
    }

    #[test]
    fn a_param_header_must_state_its_argument() {
        let region = region();
        let args = call(json!({ "region": "us-west1" }));
        assert_eq!(
            params_mismatch(&with("mcp-param-region", "us-west1"), &region, &args),
            None
        );
        // Header names ignore case; encoded values are compared decoded.
        assert_eq!(
            params_mismatch(
                &with("MCP-PARAM-REGION", "=?base64?dXMtd2VzdDE=?="),
                &region,
                &args
            ),
            None
        );
        let missing = params_mismatch(&HeaderMap::new(), &region, &args).unwrap();
        assert!(
            missing.contains("Mcp-Param-Region header is missing"),
            "{missing}"
        );
        let wrong = params_mismatch(&with("mcp-param-region", "eu-west1"), &region, &args);
        assert!(
            wrong
                .unwrap()
                .contains("does not state the value of argument `region`")
        );
        let bad = params_mismatch(
            &with("mcp-param-region", "=?base64?SGVsbG8?="),
            &region,
            &args,
        );
        assert!(bad.unwrap().contains("is not valid: its =?base64?"));
        // No value, no header; a header for no value is refused.
        let none = call(json!({ "region": null }));
        assert_eq!(params_mismatch(&HeaderMap::new(), &region, &none), None);
        let stray = params_mismatch(&with("mcp-param-region", "x"), &region, &none);
        assert!(
            stray
                .unwrap()
                .contains("argument `region` is absent or null")
        );
    }

    #[test]
    fn values_are_stated_by_their_text_form() {
        assert!(states("us-west1", &json!("us-west1")));
        assert!(!states("us-west1 ", &json!("us-west1")));
        assert!(states("true", &json!(true)) && states("false", &json!(false)));
        assert!(!states("True", &json!(true)) && !states("1", &json!(true)));
        assert!(states("42", &json!(42)) && states("42.0", &json!(42)));
        assert!(states("-7", &json!(-7)) && states("0.5", &json!(0.5)));
        assert!(!states("43", &json!(42)) && !states("42abc", &json!(42)));
        assert!(states(
            "9007199254740991",
            &json!(9_007_199_254_740_991_i64)
        ));
        assert!(!states(
            "9007199254740990",
            &json!(9_007_199_254_740_991_i64)
        ));
        assert!(!states("[]", &json!([])) && !states("{}", &json!({})));
    }

    #[test]
    fn the_name_header_is_compared_decoded() {
        let request = Request {
            id: json!(1),
            method: "tools/call".into(),
            params: call(json!({ "name": "add" })),
        };
        assert_eq!(
            name_mismatch(&with("mcp-name", "=?base64?YWRk?="), &request),
            None
        );
        assert_eq!(name_mismatch(&with("mcp-name", "  add  "), &request), None);
        let wrong = name_mismatch(&with("mcp-name", "=?base64?c3Vi?="), &request).unwrap();
        assert_eq!(wrong, "the Mcp-Name header says sub but the body names add");
    }
}

//! What a client sends to read resources, get prompts and complete
//! arguments, read and bounded before anything of it reaches the host, and
//! the errors those requests answer with.
//!
//! Everything a client sends here is bounded: a URI by the 2,048 bytes the
//! plugin contract allows a served one (no longer one can be served), a
//! prompt's arguments by the 64 a prompt may declare and by their total
//! size, a session's (or a listen stream's) resource subscriptions by 1,000
//! URIs, and a completion's value and context as a prompt's arguments are.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use crate::Revision;
use crate::jsonrpc::{RpcError, code};
use corral_tool::{ArgumentProblem, CompletionRef, CompletionRequest, PromptDef};

/// The longest URI taken (in a read, a subscription, a completion's
/// reference): the longest a plugin may serve.
pub const MAX_URI_BYTES: usize = 2048;

/// The most resource URIs one legacy session, or one listen stream, is
/// subscribed to.
pub const MAX_SUBSCRIPTIONS: usize = 1000;

/// The most arguments one `prompts/get` (or a completion's context) may
/// bring: as many as a prompt may declare.
pub const MAX_ARGUMENTS: usize = 64;

/// The most bytes of names and values one `prompts/get`'s arguments (or a
/// completion's value and context) may bring together.
pub const MAX_ARGUMENT_BYTES: usize = 1 << 20;

/// The string `uri` of `params`, within [`MAX_URI_BYTES`].
pub fn uri(params: &Map<String, Value>, method: &str) -> Result<String, RpcError> {
    match params.get("uri") {
        Some(Value::String(uri)) => bounded_uri(uri).map(str::to_string),
        _ => Err(RpcError::invalid_params(format!(
            "Invalid params: {method} needs a string `uri`"
        ))),
    }
}

fn bounded_uri(uri: &str) -> Result<&str, RpcError> {
    if uri.len() > MAX_URI_BYTES {
        return Err(RpcError::invalid_params(format!(
            "Invalid params: a URI may be at most {MAX_URI_BYTES} bytes long; this one is {}",
            uri.len()
        )));
    }
    Ok(uri)
}

/// The URIs of a listen stream's `resourceSubscriptions`: strings, each
/// within [`MAX_URI_BYTES`], at most [`MAX_SUBSCRIPTIONS`] of them.
pub fn subscriptions(value: Option<&Value>) -> Result<BTreeSet<String>, RpcError> {
    let uris = match value {
        None | Some(Value::Null) => return Ok(BTreeSet::new()),
        Some(Value::Array(uris)) => uris,
        Some(_) => {
            return Err(RpcError::invalid_params(
                "Invalid params: `resourceSubscriptions` must be an array of resource URIs",
            ));
        }
    };
    if uris.len() > MAX_SUBSCRIPTIONS {
        return Err(too_many_subscriptions(uris.len()));
    }
    uris.iter()
        .map(|uri| match uri {
            Value::String(uri) => bounded_uri(uri).map(str::to_string),
            _ => Err(RpcError::invalid_params(
                "Invalid params: `resourceSubscriptions` must hold URI strings only",
            )),
        })
        .collect()
}

/// The error for subscribing to more than [`MAX_SUBSCRIPTIONS`] URIs.
pub fn too_many_subscriptions(count: usize) -> RpcError {
    RpcError::invalid_params(format!(
        "Invalid params: at most {MAX_SUBSCRIPTIONS} resources may be subscribed to at once ({count} asked); unsubscribe from some first"
    ))
}

/// "Resource not found", as `revision` has it: -32002 up to 2025-11-25
/// (their resources page), -32602 from 2026-07-28 on (SEP-2164); both with
/// the URI in `data`.
pub fn resource_not_found(uri: &str, revision: Revision) -> RpcError {
    let code = if revision.is_stateless() {
        code::INVALID_PARAMS
    } else {
        RESOURCE_NOT_FOUND
    };
    RpcError::new(code, format!("Resource not found: {uri}")).with_data(json!({ "uri": uri }))
}

/// The resource-not-found code of the revisions before 2026-07-28.
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// One `prompts/get`, as either era reads it.
pub struct PromptGet {
    pub name: String,
    /// The arguments as the host takes them.
    pub arguments: BTreeMap<String, String>,
    /// The same as JSON, for a stateless state to be bound to.
    pub arguments_json: Map<String, Value>,
    /// The other params: `_meta`, and in the stateless era `requestState`
    /// and `inputResponses`.
    pub params: Map<String, Value>,
}

impl PromptGet {
    /// The `prompts/get` of `params`, or the error for a missing name or
    /// arguments that are not an object of strings within the bounds.
    pub fn from_params(mut params: Map<String, Value>) -> Result<PromptGet, RpcError> {
        let Some(Value::String(name)) = params.remove("name") else {
            return Err(RpcError::invalid_params(
                "Invalid params: prompts/get needs a string `name`",
            ));
        };
        let arguments_json = match params.remove("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(arguments)) => arguments,
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "Invalid params: `arguments` must be an object of strings",
                ));
            }
        };
        let arguments = string_map(&arguments_json, "arguments")?;
        Ok(PromptGet {
            name,
            arguments,
            arguments_json,
            params,
        })
    }

    /// Checks the arguments against the prompt served as `prompt`: every
    /// required one is there, and none it does not declare.
    pub fn check(&self, prompt: &PromptDef) -> Result<(), RpcError> {
        match prompt.argument_problem(&self.arguments) {
            None => Ok(()),
            Some(ArgumentProblem::Missing(missing)) => Err(RpcError::invalid_params(format!(
                "Invalid params: prompt `{}` needs the argument `{missing}`",
                prompt.name
            ))),
            Some(ArgumentProblem::Undeclared(unknown)) => Err(RpcError::invalid_params(format!(
                "Invalid params: prompt `{}` has no argument `{unknown}`",
                prompt.name
            ))),
        }
    }
}

/// `object` as string values by name, within [`MAX_ARGUMENTS`] and
/// [`MAX_ARGUMENT_BYTES`]; `what` names it in errors.
fn string_map(
    object: &Map<String, Value>,
    what: &str,
) -> Result<BTreeMap<String, String>, RpcError> {
    if object.len() > MAX_ARGUMENTS {
        return Err(RpcError::invalid_params(format!(
            "Invalid params: `{what}` may hold at most {MAX_ARGUMENTS} entries; it holds {}",
            object.len()
        )));
    }
    let mut bytes = 0usize;
    let mut strings = BTreeMap::new();
    for (name, value) in object {
        let Value::String(value) = value else {
            return Err(RpcError::invalid_params(format!(
                "Invalid params: `{what}` \"{name}\" must be a string"
            )));
        };
        bytes = bytes.saturating_add(name.len() + value.len());
        if bytes > MAX_ARGUMENT_BYTES {
            return Err(RpcError::invalid_params(format!(
                "Invalid params: `{what}` may hold at most {} KiB of names and values",
                MAX_ARGUMENT_BYTES / 1024
            )));
        }
        strings.insert(name.clone(), value.clone());
    }
    Ok(strings)
}

/// The `completion/complete` of `params`, or the error for a reference,
/// argument or context that is not as the spec has it.
pub fn completion(params: &Map<String, Value>) -> Result<CompletionRequest, RpcError> {
    let bad = |what: &str| RpcError::invalid_params(format!("Invalid params: {what}"));
    let reference = params
        .get("ref")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("completion/complete needs `ref`, an object"))?;
    let reference = match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => match reference.get("name") {
            Some(Value::String(name)) => CompletionRef::Prompt(name.clone()),
            _ => return Err(bad("`ref` of type \"ref/prompt\" needs a string `name`")),
        },
        Some("ref/resource") => match reference.get("uri") {
            Some(Value::String(uri)) => {
                CompletionRef::ResourceTemplate(bounded_uri(uri)?.to_string())
            }
            _ => return Err(bad("`ref` of type \"ref/resource\" needs a string `uri`")),
        },
        _ => {
            return Err(bad(
                "`ref` must have `type` \"ref/prompt\" (with `name`) or \"ref/resource\" (with `uri`)",
            ));
        }
    };
    let argument = params
        .get("argument")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("completion/complete needs `argument`, an object"))?;
    let (Some(Value::String(name)), Some(Value::String(value))) =
        (argument.get("name"), argument.get("value"))
    else {
        return Err(bad("`argument` needs a string `name` and a string `value`"));
    };
    let context = match params.get("context") {
        None | Some(Value::Null) => BTreeMap::new(),
        Some(Value::Object(context)) => match context.get("arguments") {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(Value::Object(arguments)) => string_map(arguments, "context.arguments")?,
            Some(_) => return Err(bad("`context.arguments` must be an object of strings")),
        },
        Some(_) => return Err(bad("`context` must be an object")),
    };
    let context_bytes: usize = context.iter().map(|(k, v)| k.len() + v.len()).sum();
    if name.len() + value.len() + context_bytes > MAX_ARGUMENT_BYTES {
        return Err(bad(&format!(
            "`argument` and `context` may hold at most {} KiB together",
            MAX_ARGUMENT_BYTES / 1024
        )));
    }
    Ok(CompletionRequest {
        reference,
        argument: name.clone(),
        value: value.clone(),
        context,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn prompt_arguments_are_strings_within_bounds() {
        let get = PromptGet::from_params(object(json!({
            "name": "p", "arguments": { "a": "1" }, "_meta": {}
        })))
        .unwrap();
        assert_eq!(get.arguments["a"], "1");
        assert!(get.params.contains_key("_meta"));
        for bad in [
            json!({ "name": "p", "arguments": { "a": 1 } }),
            json!({ "name": "p", "arguments": ["a"] }),
            json!({ "arguments": {} }),
            json!({ "name": "p", "arguments": { "a": "x".repeat(MAX_ARGUMENT_BYTES) } }),
        ] {
            let error = PromptGet::from_params(object(bad)).err().unwrap();
            assert_eq!(error.code, code::INVALID_PARAMS);
        }
        let many: Map<String, Value> = (0..=MAX_ARGUMENTS)
            .map(|i| (format!("a{i}"), json!("v")))
            .collect();
        let error = PromptGet::from_params(object(json!({ "name": "p", "arguments": many })))
            .err()
            .unwrap();
        assert!(error.message.contains("at most 64"), "{}", error.message);
    }

    #[test]
    fn subscriptions_are_bounded() {
        let long = "u".repeat(MAX_URI_BYTES + 1);
        assert!(subscriptions(Some(&json!([long]))).is_err());
        assert!(subscriptions(Some(&json!([1]))).is_err());
        let many: Vec<String> = (0..=MAX_SUBSCRIPTIONS).map(|i| format!("u:{i}")).collect();
        assert!(subscriptions(Some(&json!(many))).is_err());
        assert_eq!(subscriptions(Some(&json!(["a:", "a:"]))).unwrap().len(), 1);
    }

    #[test]
    fn not_found_follows_the_revision() {
        assert_eq!(resource_not_found("a:", Revision::V2025_11_25).code, -32002);
        let error = resource_not_found("a:", Revision::V2026_07_28);
        assert_eq!(error.code, -32602);
        assert_eq!(error.data, Some(json!({ "uri": "a:" })));
    }
}

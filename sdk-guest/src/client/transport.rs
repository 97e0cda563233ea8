//! Where requests go: the host's `client` import in a component, the fake
//! client on native targets (unit tests), where there is no host.

use super::{AskError, Capabilities};
use crate::bindings::corral::plugin::client as wit;

#[cfg(target_arch = "wasm32")]
pub(super) fn capabilities() -> Capabilities {
    let declared = wit::capabilities();
    Capabilities {
        elicitation_form: declared.elicitation_form,
        elicitation_url: declared.elicitation_url,
        sampling: declared.sampling,
        roots: declared.roots,
    }
}

#[cfg(target_arch = "wasm32")]
pub(super) fn ask(requests: Vec<wit::InputRequest>) -> Result<Vec<wit::InputResponse>, AskError> {
    wit::ask(&requests).map_err(from_wit)
}

#[cfg(not(target_arch = "wasm32"))]
pub(super) fn capabilities() -> Capabilities {
    super::fake::capabilities()
}

#[cfg(not(target_arch = "wasm32"))]
pub(super) fn ask(requests: Vec<wit::InputRequest>) -> Result<Vec<wit::InputResponse>, AskError> {
    super::fake::ask(requests)
}

#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
fn from_wit(error: wit::AskError) -> AskError {
    match error {
        wit::AskError::Undeclared(capability) => AskError::Undeclared(capability),
        wit::AskError::Failed(message) => AskError::Failed(message),
        wit::AskError::TimedOut => AskError::TimedOut,
        wit::AskError::Invalid(message) => AskError::Invalid(message),
    }
}

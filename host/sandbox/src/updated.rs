//! The URIs a call said were updated (`host.resource-updated`, at most 100
//! a call), published when the plugin serves them: lists them, or matches
//! them with a template.
//!
//! Both the URIs and the templates are the plugin's: 100 URIs of 2,048
//! bytes against 1,000 templates of 1 KiB would cost the host as much
//! matching as 100 reads. So a call's URIs spend at most
//! [`MATCH_UNITS`] together, counted as a read's are
//! ([`UriTemplate::matches_counting`]), the ones past it dropped with one
//! debug line; and past [`INLINE_MATCH_UNITS`] the matching goes on on a
//! blocking thread, one call's at a time for the whole server (admitted by
//! the sandbox, as heavy schema validations are), so that it
//! never holds up the async workers that answer `ping`.

use std::sync::Arc;

use crate::offerings::CheckedTemplate;
use crate::sandbox::Sandbox;
use crate::uri_template::{INLINE_MATCH_UNITS, MATCH_UNITS};
use corral_tool::ResourceDef;

/// What a plugin serves, shared with the plugin, for matching off the call.
#[derive(Debug, Clone)]
pub(crate) struct Served {
    pub resources: Arc<[ResourceDef]>,
    pub templates: Arc<[CheckedTemplate]>,
}

impl Served {
    /// Marks for publishing the URIs of `uris` that the plugin `plugin`
    /// serves (see the module's documentation).
    pub(crate) fn publish(&self, sandbox: &Arc<Sandbox>, plugin: &str, uris: Vec<String>) {
        if uris.is_empty() {
            return;
        }
        let mut work = 0;
        let mut uris = uris.into_iter();
        let Some(rest) = self.mark(sandbox, &mut uris, &mut work, INLINE_MATCH_UNITS) else {
            return;
        };
        let rest: Vec<String> = std::iter::once(rest).chain(uris).collect();
        let admitting = sandbox.clone();
        let (served, sandbox, plugin) = (self.clone(), sandbox.clone(), plugin.to_owned());
        let finish = move || {
            let mut uris = rest.into_iter();
            if served
                .mark(&sandbox, &mut uris, &mut work, MATCH_UNITS)
                .is_some()
            {
                tracing::debug!(
                    "plugin `{plugin}`: matching the URIs a call said were updated against its templates took more than the budget of {} work units; {} of them dropped",
                    crate::units::group_digits(MATCH_UNITS),
                    1 + uris.len()
                );
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    let _permit = admitting
                        .heavy_matches()
                        .acquire()
                        .await
                        .expect("the semaphore is never closed");
                    // A panic is the blocking task's own: nothing waits on it.
                    let _ = tokio::task::spawn_blocking(finish).await;
                });
            }
            Err(_) => finish(),
        }
    }

    /// Marks the URIs of `uris` the plugin serves, one after the other,
    /// while `work` is at most `budget`: the URI it stopped at, if it did.
    fn mark(
        &self,
        sandbox: &Sandbox,
        uris: &mut std::vec::IntoIter<String>,
        work: &mut u64,
        budget: u64,
    ) -> Option<String> {
        for uri in uris.by_ref() {
            match self.serves(&uri, work, budget) {
                Some(true) => sandbox.resource_updates().mark(uri),
                Some(false) => {}
                None => return Some(uri),
            }
        }
        None
    }

    /// Whether the plugin lists `uri` or has a template that matches it,
    /// adding the work to `work`; `None` once `work` passes `budget`. A
    /// listed URI of the same length costs a unit per 16 bytes compared.
    fn serves(&self, uri: &str, work: &mut u64, budget: u64) -> Option<bool> {
        if *work > budget {
            return None;
        }
        for resource in self.resources.iter() {
            if *work > budget {
                return None;
            }
            *work += 1;
            if resource.uri.len() == uri.len() {
                *work += uri.len() as u64 / 16;
                if resource.uri == uri {
                    return Some(true);
                }
            }
        }
        for checked in self.templates.iter() {
            if *work > budget {
                return None;
            }
            if checked.template.matches_counting(uri, work) {
                return Some(true);
            }
        }
        Some(false)
    }
}

//! What the layer keeps of one span while it is open, and the OTLP span it
//! becomes. A span's fields are read with the conventions of
//! tracing-opentelemetry: `otel.name`, `otel.kind`, `otel.status_code` and
//! `otel.status_message` set the span's own properties, `traceparent` and
//! `tracestate` its remote parent (see [`Fields::remote`]); every other
//! field is an attribute, its type kept (string, integer, float, bool;
//! anything recorded with `Debug` or `Display` as its text).

use std::borrow::Cow;
use std::time::{SystemTime, UNIX_EPOCH};

use tracing::field::{Field, Visit};

use super::context::{RemoteParent, clean_tracestate, parse_traceparent};
use super::proto::{self, SpanKind, StatusCode};

/// The most attributes one span keeps; later ones are counted as dropped.
pub const MAX_ATTRIBUTES: usize = 64;
/// The most bytes of one string attribute; a longer value is cut (at a
/// character boundary). Requests and plugins' names are bounded already;
/// this bounds what a span can hold whatever a field is given.
pub const MAX_VALUE_BYTES: usize = 4096;

/// A typed attribute value.
#[derive(Clone, Debug, PartialEq)]
pub enum AttributeValue {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
}

/// An open span (kept in the registry's extensions of the span) and, once
/// closed, the span handed to the exporter.
#[derive(Debug)]
pub struct SpanRecord {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    /// `None` for a root span.
    pub parent_span_id: Option<[u8; 8]>,
    /// Whether the parent is another process's span (a `traceparent`).
    pub remote_parent: bool,
    pub trace_state: String,
    /// W3C trace flags: bit 0 is `sampled`.
    pub trace_flags: u8,
    /// Whether a `traceparent` recorded after the span started may still
    /// make it a remote child: it is a root span and no child started yet.
    pub adoptable: bool,
    pub name: Cow<'static, str>,
    pub kind: SpanKind,
    pub start_unix_nano: u64,
    pub end_unix_nano: u64,
    pub attributes: Vec<(&'static str, AttributeValue)>,
    pub dropped_attributes: u32,
    pub status: StatusCode,
    pub status_message: String,
}

impl SpanRecord {
    /// Whether the span is exported: only spans of sampled traces are.
    pub fn sampled(&self) -> bool {
        self.trace_flags & 0x01 != 0
    }

    /// Applies the fields of a span's creation or of a later `record`.
    pub fn apply(&mut self, fields: Fields) {
        if let Some(name) = fields.name {
            self.name = Cow::Owned(name);
        }
        if let Some(kind) = fields.kind {
            self.kind = kind;
        }
        if let Some(status) = fields.status {
            self.status = status;
        }
        if let Some(message) = fields.status_message {
            self.status_message = message;
        }
        for (key, value) in fields.attributes {
            let full = self.attributes.len() >= MAX_ATTRIBUTES;
            match self.attributes.iter_mut().find(|(known, _)| *known == key) {
                Some((_, old)) => *old = value,
                None if full => self.dropped_attributes += 1,
                None => self.attributes.push((key, value)),
            }
        }
        self.dropped_attributes += fields.dropped_attributes;
    }

    /// Makes this root span the child of `parent`, another process's span.
    pub fn adopt(&mut self, parent: RemoteParent, trace_state: Option<String>) {
        self.trace_id = parent.trace_id;
        self.parent_span_id = Some(parent.span_id);
        self.remote_parent = true;
        self.trace_flags = parent.flags;
        self.trace_state = trace_state.unwrap_or_default();
        self.adoptable = false;
    }

    /// The OTLP span.
    pub fn into_proto(self) -> proto::Span {
        let remote = if self.remote_parent {
            proto::FLAGS_IS_REMOTE
        } else {
            0
        };
        let has_status = self.status != StatusCode::Unset || !self.status_message.is_empty();
        let status = has_status.then_some(proto::Status {
            message: self.status_message,
            code: self.status as i32,
        });
        proto::Span {
            trace_id: self.trace_id.to_vec(),
            span_id: self.span_id.to_vec(),
            trace_state: self.trace_state,
            parent_span_id: self.parent_span_id.map_or_else(Vec::new, |id| id.to_vec()),
            flags: u32::from(self.trace_flags) | proto::FLAGS_HAS_IS_REMOTE | remote,
            name: self.name.into_owned(),
            kind: self.kind as i32,
            start_time_unix_nano: self.start_unix_nano,
            end_time_unix_nano: self.end_unix_nano,
            attributes: self
                .attributes
                .into_iter()
                .map(|(key, value)| {
                    let value = match value {
                        AttributeValue::Str(text) => proto::Value::StringValue(text),
                        AttributeValue::Int(number) => proto::Value::IntValue(number),
                        AttributeValue::Float(number) => proto::Value::DoubleValue(number),
                        AttributeValue::Bool(flag) => proto::Value::BoolValue(flag),
                    };
                    proto::KeyValue::new(key, value)
                })
                .collect(),
            dropped_attributes_count: self.dropped_attributes,
            status,
        }
    }
}

/// Now, in nanoseconds since the Unix epoch.
pub fn now_unix_nano() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos() as u64)
}

/// The fields of one span creation or `record`, sorted by what they set.
#[derive(Debug, Default)]
pub struct Fields {
    pub name: Option<String>,
    pub kind: Option<SpanKind>,
    pub status: Option<StatusCode>,
    pub status_message: Option<String>,
    pub traceparent: Option<String>,
    pub tracestate: Option<String>,
    pub attributes: Vec<(&'static str, AttributeValue)>,
    /// Attributes past [`MAX_ATTRIBUTES`] in this one batch of fields.
    pub dropped_attributes: u32,
}

impl Fields {
    /// The remote parent the fields name: a valid `traceparent`, with its
    /// `tracestate` when that is clean.
    pub fn remote(&self) -> Option<(RemoteParent, Option<String>)> {
        let parent = parse_traceparent(self.traceparent.as_deref()?)?;
        let state = self.tracestate.as_deref().and_then(clean_tracestate);
        Some((parent, state))
    }

    fn set(&mut self, field: &Field, value: AttributeValue) {
        let text = |value: AttributeValue| match value {
            AttributeValue::Str(text) => text,
            AttributeValue::Int(number) => number.to_string(),
            AttributeValue::Float(number) => number.to_string(),
            AttributeValue::Bool(flag) => flag.to_string(),
        };
        match field.name() {
            "otel.name" => self.name = Some(truncated(text(value))),
            "otel.kind" => self.kind = parse_kind(&text(value)).or(self.kind),
            "otel.status_code" => self.status = parse_status(&text(value)).or(self.status),
            "otel.status_message" => self.status_message = Some(truncated(text(value))),
            "traceparent" => self.traceparent = Some(text(value)),
            "tracestate" => self.tracestate = Some(text(value)),
            name if self.attributes.len() < MAX_ATTRIBUTES => {
                let value = match value {
                    AttributeValue::Str(text) => AttributeValue::Str(truncated(text)),
                    other => other,
                };
                self.attributes.push((name, value));
            }
            _ => self.dropped_attributes += 1,
        }
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        let end = floor_char_boundary(value, MAX_VALUE_BYTES);
        self.set(field, AttributeValue::Str(value[..end].to_owned()));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.set(field, AttributeValue::Int(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        let value = match i64::try_from(value) {
            Ok(number) => AttributeValue::Int(number),
            Err(_) => AttributeValue::Str(value.to_string()),
        };
        self.set(field, value);
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.set(field, AttributeValue::Float(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.set(field, AttributeValue::Bool(value));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.set(field, AttributeValue::Str(format!("{value:?}")));
    }
}

/// `otel.kind`'s values, in any case.
fn parse_kind(text: &str) -> Option<SpanKind> {
    [
        ("server", SpanKind::Server),
        ("client", SpanKind::Client),
        ("internal", SpanKind::Internal),
        ("producer", SpanKind::Producer),
        ("consumer", SpanKind::Consumer),
    ]
    .into_iter()
    .find_map(|(name, kind)| text.eq_ignore_ascii_case(name).then_some(kind))
}

/// `otel.status_code`'s values, in any case.
fn parse_status(text: &str) -> Option<StatusCode> {
    if text.eq_ignore_ascii_case("error") {
        Some(StatusCode::Error)
    } else if text.eq_ignore_ascii_case("ok") {
        Some(StatusCode::Ok)
    } else {
        None
    }
}

/// `text` cut to [`MAX_VALUE_BYTES`].
fn truncated(mut text: String) -> String {
    text.truncate(floor_char_boundary(&text, MAX_VALUE_BYTES));
    text
}

/// The largest character boundary of `text` at or before `at`.
fn floor_char_boundary(text: &str, at: usize) -> usize {
    if at >= text.len() {
        return text.len();
    }
    (0..=at)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fields of an event-less span created with `make`, visited.
    fn fields_of(make: impl FnOnce() -> tracing::Span) -> Fields {
        use tracing_subscriber::layer::SubscriberExt;
        // A subscriber that keeps the fields of the one span created.
        struct Keep(std::sync::Arc<std::sync::Mutex<Option<Fields>>>);
        impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Keep {
            fn on_new_span(
                &self,
                attrs: &tracing::span::Attributes<'_>,
                _: &tracing::span::Id,
                _: tracing_subscriber::layer::Context<'_, S>,
            ) {
                let mut fields = Fields::default();
                attrs.record(&mut fields);
                *self.0.lock().unwrap() = Some(fields);
            }
        }
        let kept = std::sync::Arc::new(std::sync::Mutex::new(None));
        let subscriber = tracing_subscriber::registry().with(Keep(kept.clone()));
        tracing::subscriber::with_default(subscriber, || drop(make()));
        kept.lock().unwrap().take().unwrap()
    }

    #[test]
    fn special_fields_set_the_span_and_the_rest_are_typed_attributes() {
        let fields = fields_of(|| {
            tracing::info_span!(
                "static",
                otel.name = "tools/call add",
                otel.kind = "SERVER",
                otel.status_code = "error",
                otel.status_message = %"it broke",
                traceparent = "tp",
                tracestate = "ts",
                text = "t",
                shown = %42,
                debugged = ?Some(1),
                int = -3i64,
                unsigned = 7u64,
                huge = u64::MAX,
                float = 0.5,
                flag = true,
                empty = tracing::field::Empty,
            )
        });
        assert_eq!(fields.name.as_deref(), Some("tools/call add"));
        assert_eq!(fields.kind, Some(SpanKind::Server));
        assert_eq!(fields.status, Some(StatusCode::Error));
        assert_eq!(fields.status_message.as_deref(), Some("it broke"));
        assert_eq!(fields.traceparent.as_deref(), Some("tp"));
        assert_eq!(fields.tracestate.as_deref(), Some("ts"));
        assert_eq!(
            fields.attributes,
            [
                ("text", AttributeValue::Str("t".into())),
                ("shown", AttributeValue::Str("42".into())),
                ("debugged", AttributeValue::Str("Some(1)".into())),
                ("int", AttributeValue::Int(-3)),
                ("unsigned", AttributeValue::Int(7)),
                ("huge", AttributeValue::Str(u64::MAX.to_string())),
                ("float", AttributeValue::Float(0.5)),
                ("flag", AttributeValue::Bool(true)),
            ]
        );
    }

    #[test]
    fn unknown_kinds_and_statuses_are_ignored() {
        let fields = fields_of(|| {
            tracing::info_span!("s", otel.kind = "sideways", otel.status_code = "meh")
        });
        assert_eq!(fields.kind, None);
        assert_eq!(fields.status, None);
        assert!(fields.attributes.is_empty());
    }

    #[test]
    fn long_values_are_cut_at_a_character_boundary() {
        let long = format!("{}é", "a".repeat(MAX_VALUE_BYTES - 1));
        let fields = fields_of(|| tracing::info_span!("s", text = long.as_str(), shown = %long));
        for (_, value) in &fields.attributes {
            assert_eq!(value, &AttributeValue::Str("a".repeat(MAX_VALUE_BYTES - 1)));
        }
    }

    fn record() -> SpanRecord {
        SpanRecord {
            trace_id: [1; 16],
            span_id: [2; 8],
            parent_span_id: None,
            remote_parent: false,
            trace_state: String::new(),
            trace_flags: 1,
            adoptable: true,
            name: Cow::Borrowed("static"),
            kind: SpanKind::Internal,
            start_unix_nano: 10,
            end_unix_nano: 20,
            attributes: Vec::new(),
            dropped_attributes: 0,
            status: StatusCode::Unset,
            status_message: String::new(),
        }
    }

    #[test]
    fn a_later_record_replaces_an_attribute_and_past_the_cap_counts_it() {
        let mut span = record();
        let many = |from: usize, to: usize| Fields {
            attributes: (from..to)
                .map(|i| {
                    let key: &'static str = Box::leak(format!("k{i}").into_boxed_str());
                    (key, AttributeValue::Int(i as i64))
                })
                .collect(),
            ..Fields::default()
        };
        span.apply(many(0, MAX_ATTRIBUTES));
        span.apply(Fields {
            attributes: vec![("k0", AttributeValue::Str("again".into()))],
            ..Fields::default()
        });
        assert_eq!(span.attributes.len(), MAX_ATTRIBUTES);
        assert_eq!(span.attributes[0].1, AttributeValue::Str("again".into()));
        span.apply(many(MAX_ATTRIBUTES, MAX_ATTRIBUTES + 3));
        assert_eq!(span.attributes.len(), MAX_ATTRIBUTES);
        assert_eq!(span.dropped_attributes, 3);
        assert_eq!(span.into_proto().dropped_attributes_count, 3);
    }

    #[test]
    fn a_root_span_without_status_has_no_status_and_is_not_remote() {
        let span = record().into_proto();
        assert_eq!(span.status, None);
        assert!(span.parent_span_id.is_empty());
        assert_eq!(span.flags, 0x01 | proto::FLAGS_HAS_IS_REMOTE);
    }

    #[test]
    fn an_adopted_span_continues_the_remote_trace() {
        let mut span = record();
        let parent = RemoteParent {
            trace_id: [7; 16],
            span_id: [8; 8],
            flags: 1,
        };
        span.adopt(parent, Some("a=b".into()));
        assert!(!span.adoptable);
        let span = span.into_proto();
        assert_eq!(span.trace_id, [7; 16]);
        assert_eq!(span.parent_span_id, [8; 8]);
        assert_eq!(span.trace_state, "a=b");
        assert_eq!(
            span.flags,
            0x01 | proto::FLAGS_HAS_IS_REMOTE | proto::FLAGS_IS_REMOTE
        );
    }
}

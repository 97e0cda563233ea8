//! The OTLP trace messages Corral sends, written by hand with `prost`'s
//! derive: the subset of opentelemetry-proto's `trace_service.proto`,
//! `trace.proto`, `common.proto` and `resource.proto` an export of spans
//! uses, with their field numbers. Generating them (opentelemetry-proto
//! with tonic, or a protoc step) would build much more than these few
//! structs for one request body; the unit tests decode what these encode
//! with the official crate, field by field.

/// The body of `POST /v1/traces` (`ExportTraceServiceRequest`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ExportTraceServiceRequest {
    #[prost(message, repeated, tag = "1")]
    pub resource_spans: Vec<ResourceSpans>,
}

/// The spans of one resource (this process).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ResourceSpans {
    #[prost(message, optional, tag = "1")]
    pub resource: Option<Resource>,
    #[prost(message, repeated, tag = "2")]
    pub scope_spans: Vec<ScopeSpans>,
    #[prost(string, tag = "3")]
    pub schema_url: String,
}

/// What produced the spans: `service.name` and the other resource
/// attributes.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Resource {
    #[prost(message, repeated, tag = "1")]
    pub attributes: Vec<KeyValue>,
    #[prost(uint32, tag = "2")]
    pub dropped_attributes_count: u32,
}

/// The spans of one instrumentation scope.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ScopeSpans {
    #[prost(message, optional, tag = "1")]
    pub scope: Option<InstrumentationScope>,
    #[prost(message, repeated, tag = "2")]
    pub spans: Vec<Span>,
    #[prost(string, tag = "3")]
    pub schema_url: String,
}

/// The instrumentation library: Corral itself.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InstrumentationScope {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub version: String,
    #[prost(message, repeated, tag = "3")]
    pub attributes: Vec<KeyValue>,
    #[prost(uint32, tag = "4")]
    pub dropped_attributes_count: u32,
}

/// One finished span (events and links are never sent).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Span {
    /// 16 bytes.
    #[prost(bytes = "vec", tag = "1")]
    pub trace_id: Vec<u8>,
    /// 8 bytes.
    #[prost(bytes = "vec", tag = "2")]
    pub span_id: Vec<u8>,
    /// The W3C `tracestate` of the trace, as the remote parent sent it.
    #[prost(string, tag = "3")]
    pub trace_state: String,
    /// 8 bytes, or empty for a root span.
    #[prost(bytes = "vec", tag = "4")]
    pub parent_span_id: Vec<u8>,
    /// The W3C trace flags (bits 0-7) and whether the parent is remote
    /// (bits 8 and 9, [`FLAGS_HAS_IS_REMOTE`] and [`FLAGS_IS_REMOTE`]).
    #[prost(fixed32, tag = "16")]
    pub flags: u32,
    #[prost(string, tag = "5")]
    pub name: String,
    /// A [`SpanKind`].
    #[prost(enumeration = "SpanKind", tag = "6")]
    pub kind: i32,
    #[prost(fixed64, tag = "7")]
    pub start_time_unix_nano: u64,
    #[prost(fixed64, tag = "8")]
    pub end_time_unix_nano: u64,
    #[prost(message, repeated, tag = "9")]
    pub attributes: Vec<KeyValue>,
    #[prost(uint32, tag = "10")]
    pub dropped_attributes_count: u32,
    #[prost(message, optional, tag = "15")]
    pub status: Option<Status>,
}

/// `SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK`: bit 9 of [`Span::flags`] is
/// meaningful.
pub const FLAGS_HAS_IS_REMOTE: u32 = 0x100;
/// `SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK`: the parent span is remote.
pub const FLAGS_IS_REMOTE: u32 = 0x200;

/// `Span.SpanKind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum SpanKind {
    Unspecified = 0,
    Internal = 1,
    Server = 2,
    Client = 3,
    Producer = 4,
    Consumer = 5,
}

/// A span's status (field 1 is reserved).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Status {
    #[prost(string, tag = "2")]
    pub message: String,
    /// A [`StatusCode`].
    #[prost(enumeration = "StatusCode", tag = "3")]
    pub code: i32,
}

/// `Status.StatusCode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum StatusCode {
    Unset = 0,
    Ok = 1,
    Error = 2,
}

/// One attribute.
#[derive(Clone, PartialEq, prost::Message)]
pub struct KeyValue {
    #[prost(string, tag = "1")]
    pub key: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<AnyValue>,
}

/// An attribute's value: the scalar kinds only.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AnyValue {
    #[prost(oneof = "Value", tags = "1, 2, 3, 4")]
    pub value: Option<Value>,
}

/// `AnyValue.value`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Value {
    #[prost(string, tag = "1")]
    StringValue(String),
    #[prost(bool, tag = "2")]
    BoolValue(bool),
    #[prost(int64, tag = "3")]
    IntValue(i64),
    #[prost(double, tag = "4")]
    DoubleValue(f64),
}

impl KeyValue {
    /// An attribute `key` = `value`.
    pub fn new(key: impl Into<String>, value: Value) -> KeyValue {
        KeyValue {
            key: key.into(),
            value: Some(AnyValue { value: Some(value) }),
        }
    }
}

#[cfg(test)]
mod tests {
    //! Each message encoded here, decoded with the official definitions.

    use opentelemetry_proto::tonic::collector::trace::v1 as official_service;
    use opentelemetry_proto::tonic::common::v1 as official_common;
    use opentelemetry_proto::tonic::trace::v1 as official_trace;
    use prost::Message;

    use super::*;

    fn request() -> ExportTraceServiceRequest {
        let span = Span {
            trace_id: (1..=16).collect(),
            span_id: (21..=28).collect(),
            trace_state: "vendor=x".into(),
            parent_span_id: (31..=38).collect(),
            flags: 0x01 | FLAGS_HAS_IS_REMOTE | FLAGS_IS_REMOTE,
            name: "tools/call add".into(),
            kind: SpanKind::Server as i32,
            start_time_unix_nano: 1_700_000_000_123_456_789,
            end_time_unix_nano: u64::MAX - 1,
            attributes: vec![
                KeyValue::new("s", Value::StringValue("text".into())),
                KeyValue::new("b", Value::BoolValue(true)),
                KeyValue::new("i", Value::IntValue(-42)),
                KeyValue::new("d", Value::DoubleValue(2.5)),
            ],
            dropped_attributes_count: 3,
            status: Some(Status {
                message: "it broke".into(),
                code: StatusCode::Error as i32,
            }),
        };
        ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                resource: Some(Resource {
                    attributes: vec![KeyValue::new(
                        "service.name",
                        Value::StringValue("corral".into()),
                    )],
                    dropped_attributes_count: 1,
                }),
                scope_spans: vec![ScopeSpans {
                    scope: Some(InstrumentationScope {
                        name: "corral".into(),
                        version: "1.2.3".into(),
                        attributes: vec![KeyValue::new("k", Value::IntValue(7))],
                        dropped_attributes_count: 2,
                    }),
                    spans: vec![span],
                    schema_url: "https://example.com/scope".into(),
                }],
                schema_url: "https://example.com/resource".into(),
            }],
        }
    }

    fn value(attribute: &official_common::KeyValue) -> &official_common::any_value::Value {
        attribute
            .value
            .as_ref()
            .and_then(|value| value.value.as_ref())
            .unwrap()
    }

    #[test]
    fn every_field_decodes_with_the_official_definitions() {
        let bytes = request().encode_to_vec();
        let decoded =
            official_service::ExportTraceServiceRequest::decode(bytes.as_slice()).unwrap();
        assert_eq!(decoded.resource_spans.len(), 1);
        let resource_spans = &decoded.resource_spans[0];
        assert_eq!(resource_spans.schema_url, "https://example.com/resource");
        let resource = resource_spans.resource.as_ref().unwrap();
        assert_eq!(resource.dropped_attributes_count, 1);
        assert_eq!(resource.attributes[0].key, "service.name");
        assert_eq!(
            value(&resource.attributes[0]),
            &official_common::any_value::Value::StringValue("corral".into())
        );

        let scope_spans = &resource_spans.scope_spans[0];
        assert_eq!(scope_spans.schema_url, "https://example.com/scope");
        let scope = scope_spans.scope.as_ref().unwrap();
        assert_eq!(scope.name, "corral");
        assert_eq!(scope.version, "1.2.3");
        assert_eq!(scope.dropped_attributes_count, 2);
        assert_eq!(scope.attributes[0].key, "k");
        assert_eq!(
            value(&scope.attributes[0]),
            &official_common::any_value::Value::IntValue(7)
        );

        let span = &scope_spans.spans[0];
        assert_eq!(span.trace_id, (1..=16).collect::<Vec<u8>>());
        assert_eq!(span.span_id, (21..=28).collect::<Vec<u8>>());
        assert_eq!(span.trace_state, "vendor=x");
        assert_eq!(span.parent_span_id, (31..=38).collect::<Vec<u8>>());
        assert_eq!(
            span.flags,
            0x01 | official_trace::SpanFlags::ContextHasIsRemoteMask as u32
                | official_trace::SpanFlags::ContextIsRemoteMask as u32
        );
        assert_eq!(span.name, "tools/call add");
        assert_eq!(span.kind, official_trace::span::SpanKind::Server as i32);
        assert_eq!(span.start_time_unix_nano, 1_700_000_000_123_456_789);
        assert_eq!(span.end_time_unix_nano, u64::MAX - 1);
        assert_eq!(span.dropped_attributes_count, 3);
        let status = span.status.as_ref().unwrap();
        assert_eq!(status.message, "it broke");
        assert_eq!(
            status.code,
            official_trace::status::StatusCode::Error as i32
        );
        let attributes: Vec<(&str, &official_common::any_value::Value)> = span
            .attributes
            .iter()
            .map(|attribute| (attribute.key.as_str(), value(attribute)))
            .collect();
        use official_common::any_value::Value as V;
        assert_eq!(
            attributes,
            [
                ("s", &V::StringValue("text".into())),
                ("b", &V::BoolValue(true)),
                ("i", &V::IntValue(-42)),
                ("d", &V::DoubleValue(2.5)),
            ]
        );
        assert!(span.events.is_empty() && span.links.is_empty());
    }

    #[test]
    fn the_enumerations_match_the_official_ones() {
        use official_trace::span::SpanKind as K;
        use official_trace::status::StatusCode as C;
        for (ours, theirs) in [
            (SpanKind::Unspecified, K::Unspecified),
            (SpanKind::Internal, K::Internal),
            (SpanKind::Server, K::Server),
            (SpanKind::Client, K::Client),
            (SpanKind::Producer, K::Producer),
            (SpanKind::Consumer, K::Consumer),
        ] {
            assert_eq!(ours as i32, theirs as i32, "{ours:?}");
        }
        for (ours, theirs) in [
            (StatusCode::Unset, C::Unset),
            (StatusCode::Ok, C::Ok),
            (StatusCode::Error, C::Error),
        ] {
            assert_eq!(ours as i32, theirs as i32, "{ours:?}");
        }
    }

    #[test]
    fn the_official_encoding_decodes_here_too() {
        let ours = request();
        let theirs =
            official_service::ExportTraceServiceRequest::decode(ours.encode_to_vec().as_slice())
                .unwrap();
        let back = ExportTraceServiceRequest::decode(theirs.encode_to_vec().as_slice()).unwrap();
        assert_eq!(back, ours);
    }
}

//! The state API against the fake store.

use std::collections::{BTreeMap, HashMap};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::state::fake::{self, FakeStore};
use crate::state::{Bucket, KeysPage, StateError, in_key_order};
use crate::{CallResult, Content, NoArgs, Tool, ToolError};

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Note {
    text: String,
    tags: Vec<String>,
}

fn text_of(result: &CallResult) -> &str {
    match &result.content[..] {
        [Content::Text { text, .. }] => text,
        other => panic!("expected one text, got {other:?}"),
    }
}

#[test]
fn values_are_stored_as_json() {
    fake::clear();
    let bucket = Bucket::open("default").unwrap();
    assert_eq!(bucket.name(), "default");
    let note = Note {
        text: "buy milk".into(),
        tags: vec!["home".into()],
    };
    bucket.set("note", &note).unwrap();
    assert_eq!(
        bucket.get_bytes("note").unwrap().unwrap(),
        br#"{"text":"buy milk","tags":["home"]}"#
    );
    assert_eq!(bucket.get::<Note>("note").unwrap(), Some(note));
    assert_eq!(bucket.get::<Note>("missing").unwrap(), None);
    // Unsized values, and bytes as they are.
    bucket.set("name", "Ada").unwrap();
    assert_eq!(
        bucket.get::<String>("name").unwrap().as_deref(),
        Some("Ada")
    );
    bucket.set_bytes("raw", &[0, 255]).unwrap();
    assert_eq!(bucket.get_bytes("raw").unwrap(), Some(vec![0, 255]));
    assert_eq!(fake::contents("default").len(), 3);
}

#[test]
fn a_value_of_another_shape_is_a_decode_error_naming_its_key() {
    fake::clear();
    let bucket = Bucket::open("default").unwrap();
    bucket.set_bytes("count", b"not json").unwrap();
    let error = bucket.get::<u32>("count").unwrap_err();
    assert!(matches!(&error, StateError::Decode { key, .. } if key == "count"));
    assert_eq!(
        error.to_string(),
        "the value of `count` is not the JSON expected: expected ident at line 1 column 2"
    );
    bucket.set("count", &"seven").unwrap();
    assert!(matches!(
        bucket.get::<u32>("count"),
        Err(StateError::Decode { .. })
    ));
}

#[test]
fn a_value_json_cannot_hold_is_an_encode_error_and_stores_nothing() {
    fake::clear();
    let bucket = Bucket::open("default").unwrap();
    let map: HashMap<(u8, u8), u8> = HashMap::from([((1, 2), 3)]);
    let error = bucket.set("map", &map).unwrap_err();
    assert_eq!(
        error,
        StateError::Encode {
            key: "map".into(),
            message: "key must be a string".into()
        }
    );
    assert!(!bucket.exists("map").unwrap());
    assert!(matches!(
        bucket.set_many([("ok", HashMap::new()), ("map", map)]),
        Err(StateError::Encode { .. })
    ));
    assert!(fake::contents("default").is_empty());
}

#[test]
fn exists_and_delete() {
    fake::clear();
    let bucket = Bucket::open("default").unwrap();
    assert!(!bucket.exists("k").unwrap());
    bucket.set("k", &1).unwrap();
    assert!(bucket.exists("k").unwrap());
    bucket.delete("k").unwrap();
    assert!(!bucket.exists("k").unwrap());
    // Deleting what is not there is no error.
    bucket.delete("k").unwrap();
}

#[test]
fn buckets_are_apart() {
    fake::clear();
    let a = Bucket::open("a").unwrap();
    let b = Bucket::open("b").unwrap();
    a.set("k", &1).unwrap();
    assert_eq!(b.get::<i32>("k").unwrap(), None);
    assert_eq!(Bucket::open("a").unwrap().get::<i32>("k").unwrap(), Some(1));
}

#[test]
fn counters_are_decimal_text_readable_as_json() {
    fake::clear();
    let bucket = Bucket::open("default").unwrap();
    assert_eq!(bucket.increment("c", 5).unwrap(), 5);
    assert_eq!(bucket.increment("c", 0).unwrap(), 5);
    assert_eq!(bucket.increment("c", 37).unwrap(), 42);
    assert_eq!(bucket.get_bytes("c").unwrap(), Some(b"42".to_vec()));
    assert_eq!(bucket.get::<u64>("c").unwrap(), Some(42));
    // A counter set as JSON goes on counting.
    bucket.set("d", &u64::MAX.wrapping_sub(1)).unwrap();
    assert_eq!(bucket.increment("d", 1).unwrap(), u64::MAX);
    let overflow = bucket.increment("d", 1).unwrap_err();
    assert!(matches!(overflow, StateError::Other(_)), "{overflow:?}");
    assert_eq!(bucket.get::<u64>("d").unwrap(), Some(u64::MAX));
    // What is not decimal text is no counter.
    for value in [
        &b"\"5\""[..],
        b"-1",
        b"1.5",
        b"",
        b" 1",
        b"18446744073709551616",
    ] {
        bucket.set_bytes("e", value).unwrap();
        let error = bucket.increment("e", 1).unwrap_err();
        assert!(
            error.to_string().contains("not a counter"),
            "{value:?}: {error}"
        );
        assert_eq!(bucket.get_bytes("e").unwrap().as_deref(), Some(value));
    }
}

#[test]
fn keys_come_in_pages_and_keys_follows_them_all() {
    fake::clear();
    let bucket = Bucket::open("default").unwrap();
    assert_eq!(bucket.keys().unwrap(), Vec::<String>::new());
    assert_eq!(bucket.keys_page(None).unwrap(), KeysPage::default());
    let all: Vec<String> = (0..2_500).map(|i| format!("k{i:04}")).collect();
    for chunk in all.chunks(1_000) {
        bucket
            .set_many_bytes(chunk.iter().map(|key| (key, b"1")))
            .unwrap();
    }
    let first = bucket.keys_page(None).unwrap();
    assert_eq!(first.keys.len(), 1_000);
    let second = bucket.keys_page(first.cursor).unwrap();
    assert_eq!(second.keys.len(), 1_000);
    let third = bucket.keys_page(second.cursor).unwrap();
    assert_eq!(third.keys.len(), 500);
    assert_eq!(third.cursor, None);
    let before = fake::operations();
    let mut keys = bucket.keys().unwrap();
    assert_eq!(fake::operations() - before, 3, "one operation per page");
    keys.sort();
    assert_eq!(keys, all);
}

#[test]
fn batches_answer_in_the_order_of_their_keys() {
    fake::clear();
    let bucket = Bucket::open("default").unwrap();
    bucket
        .set_many([("a", vec![1]), ("b", vec![2]), ("c", vec![])])
        .unwrap();
    assert_eq!(
        bucket.get_many::<Vec<u8>>(["c", "x", "a", "a"]).unwrap(),
        [Some(vec![]), None, Some(vec![1]), Some(vec![1])]
    );
    assert_eq!(
        bucket.get_many_bytes(vec!["b".to_string()]).unwrap(),
        [Some(b"[2]".to_vec())]
    );
    bucket.delete_many(["a", "c", "nope"]).unwrap();
    assert_eq!(bucket.keys().unwrap(), ["b"]);
    // Empty batches ask the host nothing.
    let before = fake::operations();
    assert_eq!(bucket.get_many::<u8>(Vec::<String>::new()).unwrap(), []);
    bucket.set_many(Vec::<(String, u8)>::new()).unwrap();
    bucket.delete_many(Vec::<&str>::new()).unwrap();
    assert_eq!(fake::operations(), before);
}

#[test]
fn a_get_many_answer_out_of_order_is_matched_by_key() {
    let keys = ["a".to_string(), "b".into(), "c".into()];
    let entry = |key: &str, value: u8| Some((key.to_string(), vec![value]));
    // In order, with a gap.
    assert_eq!(
        in_key_order(&keys, vec![entry("a", 1), None, entry("c", 3)]),
        [Some(vec![1]), None, Some(vec![3])]
    );
    // Out of order, or without the gaps.
    assert_eq!(
        in_key_order(&keys, vec![entry("c", 3), entry("a", 1), None]),
        [Some(vec![1]), None, Some(vec![3])]
    );
    assert_eq!(
        in_key_order(&keys, vec![entry("b", 2)]),
        [None, Some(vec![2]), None]
    );
}

#[test]
fn only_granted_buckets_open() {
    fake::set(FakeStore::new().buckets(["default", "cache"]));
    assert!(Bucket::open("default").is_ok());
    assert!(Bucket::open("cache").is_ok());
    let error = Bucket::open("secrets").unwrap_err();
    assert_eq!(
        error,
        StateError::AccessDenied {
            bucket: "secrets".into()
        }
    );
    assert_eq!(
        error.to_string(),
        "the plugin may not open bucket `secrets`: its manifest's [state] buckets do not name it"
    );
    fake::set(FakeStore::new().buckets(Vec::<String>::new()));
    assert!(Bucket::open("default").is_err());
}

#[test]
fn the_fake_refuses_what_the_host_refuses() {
    fake::clear();
    let bucket = Bucket::open("default").unwrap();
    let refused = |result: Result<(), StateError>| match result {
        Err(StateError::Other(message)) => message,
        other => panic!("expected a refusal, got {other:?}"),
    };
    let long_key = "k".repeat(1025);
    bucket.set_bytes(&"k".repeat(1024), b"").unwrap();
    assert!(refused(bucket.set_bytes(&long_key, b"")).contains("1 KiB"));
    assert!(matches!(
        bucket.get_bytes(&long_key),
        Err(StateError::Other(_))
    ));
    bucket.set_bytes("big", &vec![0; 4 << 20]).unwrap();
    assert!(refused(bucket.set_bytes("big", &vec![0; (4 << 20) + 1])).contains("4 MiB"));
    let many = (0..1_001).map(|i| (i.to_string(), 0));
    assert!(refused(bucket.set_many(many)).contains("1000"));
    assert!(refused(bucket.delete_many((0..1_001).map(|i| i.to_string()))).contains("1000"));
    let heavy = (0..5).map(|i| (i.to_string(), vec![0u8; 4 << 20]));
    assert!(refused(bucket.set_many_bytes(heavy)).contains("16 MiB"));
}

#[test]
fn the_quota_counts_keys_and_values_in_every_bucket() {
    fake::set(FakeStore::new().quota(10));
    let a = Bucket::open("a").unwrap();
    let b = Bucket::open("b").unwrap();
    a.set_bytes("k", b"1234").unwrap(); // 5 bytes
    b.set_bytes("k", b"1234").unwrap(); // 10
    let message = match b.set_bytes("j", b"") {
        Err(StateError::Other(message)) => message,
        other => panic!("{other:?}"),
    };
    assert!(message.contains("quota of 10 bytes"), "{message}");
    // Replacing a value by one as large or smaller is no growth.
    a.set_bytes("k", b"abcd").unwrap();
    a.set_bytes("k", b"").unwrap();
    b.set_bytes("j", b"123").unwrap(); // 1 + 5 + 4 = 10
    assert_eq!(b.increment("j", 1).unwrap(), 124);
    assert!(matches!(b.increment("j", 900), Err(StateError::Other(_))));
    assert!(matches!(a.increment("k2", 5), Err(StateError::Other(_))));
    // Deleting frees room.
    b.delete("k").unwrap();
    assert_eq!(a.increment("k2", 5).unwrap(), 5);
}

#[test]
fn operations_are_counted_per_call() {
    fn busy(_: NoArgs) -> Result<String, ToolError> {
        let bucket = Bucket::open("default")?;
        for _ in 0..9_998 {
            bucket.exists("k")?;
        }
        Ok(bucket.increment("calls", 1)?.to_string())
    }
    fn busier(_: NoArgs) -> Result<String, ToolError> {
        let bucket = Bucket::open("default")?;
        loop {
            bucket.exists("k")?;
        }
    }
    fake::clear();
    let tool = Tool::new("busy", busy);
    assert_eq!(text_of(&tool.call("{}")), "1");
    assert_eq!(fake::operations(), 10_000);
    // The next call counts from zero again, and sees what the last stored.
    assert_eq!(text_of(&tool.call("{}")), "2");
    let result = Tool::new("busier", busier).call("{}");
    assert!(result.is_error);
    assert_eq!(
        text_of(&result),
        "more than 10000 state operations in one call"
    );
}

#[test]
fn state_errors_end_a_tool_with_their_message() {
    #[derive(Deserialize, JsonSchema)]
    struct Args {
        bucket: String,
    }
    fn count(args: Args) -> Result<String, ToolError> {
        let bucket = Bucket::open(&args.bucket)?;
        Ok(format!("{}", bucket.increment("n", 1)?))
    }
    fake::set(FakeStore::new().buckets(["default"]));
    let tool = Tool::new("count", count);
    assert_eq!(text_of(&tool.call(r#"{"bucket": "default"}"#)), "1");
    let denied = tool.call(r#"{"bucket": "other"}"#);
    assert!(denied.is_error);
    assert_eq!(
        text_of(&denied),
        "the plugin may not open bucket `other`: its manifest's [state] buckets do not name it"
    );
    fake::set(FakeStore::new().fail("disk on fire"));
    let failed = tool.call(r#"{"bucket": "default"}"#);
    assert!(failed.is_error);
    assert_eq!(text_of(&failed), "disk on fire");
    let error: ToolError = StateError::NoSuchStore { bucket: "x".into() }.into();
    assert_eq!(error.message(), "there is no bucket `x`");
    // Through `Box<dyn Error>` too.
    let boxed: Box<dyn std::error::Error> = Box::new(StateError::Other("full".into()));
    assert_eq!(ToolError::from(boxed).message(), "full");
}

#[test]
fn a_store_can_start_with_values() {
    fake::set(
        FakeStore::new()
            .entry("default", "visits", "41")
            .entry("default", "name", "\"Ada\""),
    );
    let bucket = Bucket::open("default").unwrap();
    assert_eq!(bucket.increment("visits", 1).unwrap(), 42);
    assert_eq!(
        bucket.get::<String>("name").unwrap().as_deref(),
        Some("Ada")
    );
    assert_eq!(
        fake::contents("default"),
        BTreeMap::from([
            ("name".to_string(), b"\"Ada\"".to_vec()),
            ("visits".to_string(), b"42".to_vec()),
        ])
    );
    assert!(fake::contents("other").is_empty());
}

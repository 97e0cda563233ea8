//! What every [`Backend`] must do, as tests each backend runs against a
//! real store of its kind (`suite!` in its own tests).

use super::{Backend, Entry, Namespace, StateError, Usage};

pub fn ns(plugin: &str, bucket: &str) -> Namespace {
    Namespace {
        plugin: plugin.into(),
        bucket: bucket.into(),
    }
}

pub fn set(
    store: &dyn Backend,
    ns: &Namespace,
    key: &str,
    value: &[u8],
    quota: u64,
) -> Result<(), StateError> {
    store.set_many(ns, &[(key.to_string(), value.to_vec())], quota)
}

fn get(store: &dyn Backend, ns: &Namespace, key: &str) -> Option<Vec<u8>> {
    store
        .get_many(ns, &[key.to_string()], 1 << 20)
        .unwrap()
        .remove(0)
}

/// One `#[test]` per contract function, each on a new store: `$store`
/// gives a pair of what keeps the store alive (a folder, a server) and a
/// fresh, empty backend.
macro_rules! suite {
    ($store:expr) => {
        $crate::state::contract::suite!(@tests $store;
            plugins_and_buckets_are_namespaces_of_their_own,
            the_quota_is_measured_by_the_store,
            counters_are_decimal_text_and_refuse_what_is_not_one,
            listing_pages_see_each_key_once,
            a_batch_read_stops_at_its_budget,
            deleting_gives_bytes_back_and_forgets_empty_plugins,
            listed_entries_show_a_preview_and_the_size,
        );
    };
    (@tests $store:expr; $($name:ident,)*) => {
        $(
            #[test]
            fn $name() {
                let (_keep, store) = $store;
                $crate::state::contract::$name(&store);
            }
        )*
    };
}
pub(crate) use suite;

pub fn plugins_and_buckets_are_namespaces_of_their_own(store: &dyn Backend) {
    let a = ns("alpha", "default");
    set(store, &a, "k", b"from alpha", 1000).unwrap();
    set(store, &ns("beta", "default"), "k", b"from beta", 1000).unwrap();
    set(store, &ns("alpha", "cache"), "k", b"cached", 1000).unwrap();
    assert_eq!(get(store, &a, "k").as_deref(), Some(&b"from alpha"[..]));
    assert_eq!(
        get(store, &ns("beta", "default"), "k").as_deref(),
        Some(&b"from beta"[..])
    );
    assert_eq!(
        get(store, &ns("alpha", "cache"), "k").as_deref(),
        Some(&b"cached"[..])
    );
    assert_eq!(get(store, &ns("gamma", "default"), "k"), None);
    assert!(store.exists(&a, "k").unwrap());
    assert!(!store.exists(&ns("gamma", "default"), "k").unwrap());
    assert_eq!(store.plugins().unwrap(), ["alpha", "beta"]);
    assert_eq!(store.clear("alpha").unwrap(), 2);
    assert_eq!(get(store, &a, "k"), None);
    assert_eq!(
        get(store, &ns("beta", "default"), "k").as_deref(),
        Some(&b"from beta"[..])
    );
    assert_eq!(store.usage("alpha").unwrap(), Usage::default());
    assert_eq!(store.plugins().unwrap(), ["beta"]);
}

/// The quota counts keys and values of every bucket, as stored; a write
/// past it changes nothing, and a write that frees room always passes.
pub fn the_quota_is_measured_by_the_store(store: &dyn Backend) {
    let a = ns("p", "default");
    set(store, &a, "key", &[0; 90], 100).unwrap(); // 93 bytes
    let err = set(store, &ns("p", "other"), "k2", &[0; 10], 100).unwrap_err();
    assert_eq!(
        err,
        StateError::Quota {
            quota: 100,
            used: 93,
            needed: 12
        }
    );
    assert!(err.to_string().contains("[state] quota"), "{err}");
    // Replacing the value counts the difference only.
    set(store, &a, "key", &[1; 97], 100).unwrap();
    assert_eq!(
        store.usage("p").unwrap(),
        Usage {
            keys: 1,
            bytes: 100
        }
    );
    // A batch past the quota writes none of its entries.
    set(store, &a, "key", &[2; 10], 100).unwrap(); // 13 bytes
    let batch = [
        ("a".to_string(), vec![0; 1]),
        ("key".to_string(), vec![0; 12]),
    ];
    store.set_many(&a, &batch, 14).unwrap_err(); // would be 2 + 15
    assert_eq!(get(store, &a, "a"), None);
    assert_eq!(store.usage("p").unwrap(), Usage { keys: 1, bytes: 13 });
    // A key twice in one batch counts once, at its last value.
    let twice = [
        ("b".to_string(), vec![0; 50]),
        ("b".to_string(), vec![0; 5]),
    ];
    store.set_many(&a, &twice, 100).unwrap();
    assert_eq!(store.usage("p").unwrap(), Usage { keys: 2, bytes: 19 });
    store
        .delete_many(
            &a,
            &["key".to_string(), "b".to_string(), "absent".to_string()],
        )
        .unwrap();
    assert_eq!(store.usage("p").unwrap(), Usage::default());
    set(store, &a, "key", &[0; 97], 100).unwrap();
}

pub fn counters_are_decimal_text_and_refuse_what_is_not_one(store: &dyn Backend) {
    let a = ns("p", "default");
    assert_eq!(store.increment(&a, "n", 5, 1000).unwrap(), 5);
    assert_eq!(store.increment(&a, "n", 2, 1000).unwrap(), 7);
    assert_eq!(get(store, &a, "n").as_deref(), Some(&b"7"[..]));
    assert_eq!(store.usage("p").unwrap(), Usage { keys: 1, bytes: 2 });
    // Past 2^53, where a double would lose the last digits.
    set(store, &a, "big", b"9007199254740993", 1000).unwrap();
    assert_eq!(
        store.increment(&a, "big", 10, 1000).unwrap(),
        9_007_199_254_741_003
    );
    set(store, &a, "padded", b"007", 1000).unwrap();
    assert_eq!(store.increment(&a, "padded", 1, 1000).unwrap(), 8);
    set(store, &a, "text", b"seven", 1000).unwrap();
    assert!(matches!(
        store.increment(&a, "text", 1, 1000),
        Err(StateError::NotACounter { .. })
    ));
    set(store, &a, "empty", b"", 1000).unwrap();
    assert!(matches!(
        store.increment(&a, "empty", 1, 1000),
        Err(StateError::NotACounter { .. })
    ));
    set(store, &a, "max", u64::MAX.to_string().as_bytes(), 1000).unwrap();
    assert_eq!(store.increment(&a, "max", 0, 1000).unwrap(), u64::MAX);
    assert!(matches!(
        store.increment(&a, "max", 1, 1000),
        Err(StateError::Overflow { .. })
    ));
    set(store, &a, "huge", b"18446744073709551616", 1000).unwrap();
    assert!(matches!(
        store.increment(&a, "huge", 1, 1000),
        Err(StateError::NotACounter { .. })
    ));
    let used = store.usage("p").unwrap();
    assert!(matches!(
        store.increment(&a, "new", 1, used.bytes + 3),
        Err(StateError::Quota { .. })
    ));
    assert_eq!(store.usage("p").unwrap(), used);
    assert_eq!(store.increment(&a, "new", 1, used.bytes + 4).unwrap(), 1);
}

/// Every key present throughout is listed once, though values change and
/// keys come and go meanwhile.
pub fn listing_pages_see_each_key_once(store: &dyn Backend) {
    let a = ns("p", "default");
    for i in 0..25 {
        set(store, &a, &format!("k{i:02}"), b"v", 10_000).unwrap();
    }
    let mut seen = Vec::new();
    let mut cursor = None;
    let mut added = 0;
    loop {
        let (keys, next) = store.list_keys(&a, cursor, 10).unwrap();
        assert!(keys.len() <= 10);
        seen.extend(keys);
        // Meanwhile: a value rewritten, a key added.
        set(store, &a, "k00", b"changed", 10_000).unwrap();
        set(store, &a, &format!("new{added}"), b"v", 10_000).unwrap();
        added += 1;
        match next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    let expected: Vec<String> = (0..25).map(|i| format!("k{i:02}")).collect();
    assert_eq!(seen[..25], expected);
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), seen.len(), "{seen:?}");
    assert_eq!(
        store.list_keys(&ns("p", "empty"), None, 10).unwrap(),
        (vec![], None)
    );
}

pub fn a_batch_read_stops_at_its_budget(store: &dyn Backend) {
    let a = ns("p", "default");
    set(store, &a, "a", &[0; 60], 1000).unwrap();
    set(store, &a, "b", &[0; 60], 1000).unwrap();
    let keys = ["a".to_string(), "b".to_string(), "c".to_string()];
    assert_eq!(
        store.get_many(&a, &keys, 120).unwrap(),
        [Some(vec![0; 60]), Some(vec![0; 60]), None]
    );
    assert_eq!(
        store.get_many(&a, &keys, 119).unwrap_err(),
        StateError::TooLarge { budget: 119 }
    );
    assert_eq!(
        store.get_many(&a, &[], 0).unwrap(),
        Vec::<Option<Vec<u8>>>::new()
    );
}

pub fn deleting_gives_bytes_back_and_forgets_empty_plugins(store: &dyn Backend) {
    let a = ns("p", "default");
    set(store, &a, "k", b"value", 100).unwrap();
    set(store, &ns("p", "cache"), "c", b"v", 100).unwrap();
    store.delete_many(&a, &["k".to_string()]).unwrap();
    assert_eq!(store.usage("p").unwrap(), Usage { keys: 1, bytes: 2 });
    assert_eq!(store.list_keys(&a, None, 10).unwrap(), (vec![], None));
    store
        .delete_many(&ns("p", "cache"), &["c".to_string()])
        .unwrap();
    assert_eq!(store.usage("p").unwrap(), Usage::default());
    assert_eq!(store.plugins().unwrap(), Vec::<String>::new());
    assert_eq!(store.clear("p").unwrap(), 0);
}

pub fn listed_entries_show_a_preview_and_the_size(store: &dyn Backend) {
    set(store, &ns("p", "b"), "second", b"0123456789", 100).unwrap();
    set(store, &ns("p", "a"), "first", b"xy", 100).unwrap();
    set(store, &ns("p", "b"), "third", b"", 100).unwrap();
    let entry = |bucket: &str, key: &str, value: &[u8], size| Entry {
        bucket: bucket.into(),
        key: key.into(),
        value: value.to_vec(),
        size,
    };
    assert_eq!(
        store.entries("p", 10, 4).unwrap(),
        [
            entry("a", "first", b"xy", 2),
            entry("b", "second", b"0123", 10),
            entry("b", "third", b"", 0),
        ]
    );
    assert_eq!(store.entries("p", 2, 4).unwrap().len(), 2);
    assert_eq!(store.entries("nobody", 10, 4).unwrap(), []);
}

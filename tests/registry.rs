//! Plugin distribution (issue 18): `corral push`, `corral pull` and
//! `corral keygen` against a real OCI registry on loopback (the Distribution
//! registry, Debian's `docker-registry`, installed by
//! tests/registry/setup-registry), with cosign-format signatures checked
//! against an independent implementation of that format
//! (tests/registry/cosign_vectors.py).

#[path = "support/registry.rs"]
mod registry;
mod support;

use registry::{Registry, vectors_ok};

/// The support code itself: a registry starts and answers the API's base
/// endpoint, with and without auth, and the test vectors make a key pair.
#[test]
fn registry_and_vectors_work() {
    let open = Registry::start();
    let (status, _, body) = open.get("/v2/");
    assert_eq!(
        status,
        200,
        "{}\n{}",
        String::from_utf8_lossy(&body),
        open.log()
    );

    let guarded = Registry::start_with_auth("alice", "s3cret");
    assert_eq!(guarded.get("/v2/").0, 200, "{}", guarded.log());
    assert_eq!(guarded.get_anonymous("/v2/").0, 401, "{}", guarded.log());

    let keys = tempfile::tempdir().unwrap();
    let out = keys.path().join("cosign");
    vectors_ok(
        &["keygen", out.to_str().unwrap()],
        &[("COSIGN_PASSWORD", "pw")],
    );
    let public = std::fs::read_to_string(keys.path().join("cosign.pub")).unwrap();
    let opened = vectors_ok(
        &["decrypt", keys.path().join("cosign.key").to_str().unwrap()],
        &[("COSIGN_PASSWORD", "pw")],
    );
    assert_eq!(opened, public);
}

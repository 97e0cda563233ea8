//! What a user names an artifact by, `registry/repository:tag` or
//! `registry/repository@sha256:…`, and which registries may be spoken to
//! without TLS.

use std::net::IpAddr;

pub use oci_client::Reference;

/// Parses `text` as an OCI reference, naming it in the error.
pub fn parse(text: &str) -> Result<Reference, String> {
    text.parse()
        .map_err(|err| format!("`{text}` is not an OCI reference ({err}); write it as REGISTRY/REPOSITORY:TAG or REGISTRY/REPOSITORY@sha256:DIGEST"))
}

/// Whether `registry` (`host`, `host:port`, `[v6]:port`) is this machine:
/// `localhost`, `127.0.0.0/8` or `::1`. Only those may be spoken to in
/// plain HTTP without the user asking: nothing on the network can see or
/// change what travels there.
pub fn is_loopback(registry: &str) -> bool {
    let host = if let Some(rest) = registry.strip_prefix('[') {
        rest.split(']').next().unwrap_or_default()
    } else {
        registry.rsplit_once(':').map_or(registry, |(host, _)| host)
    };
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// `registry/repository`, the name cosign signs as the docker-reference.
pub fn repository_name(reference: &Reference) -> String {
    format!("{}/{}", reference.registry(), reference.repository())
}

/// The signature tag beside `reference`'s repository for `digest`.
pub fn at_tag(reference: &Reference, tag: String) -> Reference {
    Reference::with_tag(
        reference.registry().to_owned(),
        reference.repository().to_owned(),
        tag,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_machine_is_loopback() {
        for registry in [
            "localhost",
            "localhost:5000",
            "127.0.0.1:5000",
            "127.1.2.3",
            "[::1]:5000",
        ] {
            assert!(is_loopback(registry), "{registry}");
        }
        for registry in [
            "ghcr.io",
            "10.0.0.1:5000",
            "localhost.example.com",
            "[::2]:5000",
            "128.0.0.1",
        ] {
            assert!(!is_loopback(registry), "{registry}");
        }
    }

    #[test]
    fn references_parse_with_tags_and_digests() {
        let tagged = parse("127.0.0.1:5000/demo/calc:1.0.0").unwrap();
        assert_eq!(tagged.registry(), "127.0.0.1:5000");
        assert_eq!(tagged.repository(), "demo/calc");
        assert_eq!(tagged.tag(), Some("1.0.0"));
        assert_eq!(repository_name(&tagged), "127.0.0.1:5000/demo/calc");
        let digest = format!("sha256:{}", "a".repeat(64));
        let pinned = parse(&format!("127.0.0.1:5000/demo/calc@{digest}")).unwrap();
        assert_eq!(pinned.digest(), Some(digest.as_str()));
        let err = parse("Not A Reference").unwrap_err();
        assert!(
            err.contains("`Not A Reference` is not an OCI reference"),
            "{err}"
        );
    }
}

//! Plugin distribution: publishing components to OCI registries and
//! installing them from there, pinned by digest and signed.
//!
//! This crate knows nothing of wasmtime, the sandbox or the protocol: it
//! moves bytes and metadata, and `corral` glues it to plugin folders.
//! - [`reference`](mod@reference): `registry/repository:tag@digest`, and which registries
//!   may be spoken to in plain HTTP (loopback only);
//! - [`artifact`]: the CNCF wasm artifact layout (config, manifest, media
//!   types) that `wkg` and `oci-wasm` use;
//! - [`keys`] and [`cosign`]: cosign's key files and its simple-signing
//!   signatures, verified in-process;
//! - [`transport`]: the registry client, with retries, resumed downloads
//!   and credentials;
//! - [`lock`]: `corral.lock`, what a folder's pulled files must hash to
//!   ([`digest`]: content digests, as OCI names them);
//! - [`publish`] and [`install`]: `corral push` and `corral pull` from
//!   those pieces ([`progress`] and [`clock`] are their small helpers).

pub mod artifact;
pub mod clock;
pub mod cosign;
pub mod digest;
pub mod install;
pub mod keys;
pub mod lock;
pub mod progress;
pub mod publish;
pub mod reference;
pub mod transport;

/// The key types of signing and verifying (ECDSA P-256, cosign's default).
pub use p256::ecdsa::{SigningKey, VerifyingKey};

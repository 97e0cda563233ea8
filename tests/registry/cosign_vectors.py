"""An independent implementation of cosign's key-based signing format, used as
test vectors for Corral's own (tests/registry.rs).

cosign itself is not packaged in Debian (and Debian's skopeo is built with
sigstore support disabled), so the tests cannot run the standard tool. This
file writes and reads what `cosign generate-key-pair`, `cosign sign --key`
and `cosign verify --key` do, in the classic layout (a `.sig` tag next to the
signed manifest), using only the Python standard library, `cryptography` and
`pynacl` (installed by tests/registry/setup-python). It shares no code with
Corral.

The format:
  * KEY.key: PEM "ENCRYPTED SIGSTORE PRIVATE KEY" whose body is the JSON of
    go-securesystemslib's `encrypted` package: scrypt (N=65536, r=8, p=1,
    32-byte salt) turns the password into a 32-byte key that seals the
    PKCS#8 DER of an ECDSA P-256 key with NaCl secretbox (24-byte nonce).
    The password comes from COSIGN_PASSWORD (empty when unset), as in cosign.
  * KEY.pub: the public key as a PEM "PUBLIC KEY" (SubjectPublicKeyInfo).
  * A signature of the manifest REPO@sha256:HEX is the ECDSA-P256-SHA256 (DER,
    base64) signature of a "simple signing" JSON payload naming that digest,
    stored as one layer of an OCI image manifest tagged `sha256-HEX.sig` in
    the same repository; the signature is the layer's annotation
    `dev.cosignproject.cosign/signature`. Signing again appends a layer.

Usage (the registry is plain HTTP, e.g. 127.0.0.1:5000; REGISTRY_AUTH=user:pass
for basic auth):
  cosign_vectors.py keygen OUT                          -> OUT.key, OUT.pub
  cosign_vectors.py decrypt KEY                         -> prints the public key PEM
  cosign_vectors.py sign REGISTRY REPO DIGEST KEY [--count N]
  cosign_vectors.py verify REGISTRY REPO DIGEST PUB     -> exit 0 iff a signature verifies
  cosign_vectors.py manifest REGISTRY REPO REF          -> prints the raw manifest
  cosign_vectors.py blob REGISTRY REPO DIGEST           -> writes the blob to stdout
  cosign_vectors.py push-wasm REGISTRY REPO TAG FILE [--plugin-manifest TOML]
      -> pushes FILE in the CNCF wasm artifact layout (as wkg/wasm-pkg-tools
      do), with the text of the file TOML as the manifest's
      `dev.corral.plugin.manifest` annotation if given (unchecked: to push
      what Corral itself would refuse to), prints the manifest digest
"""

import base64
import hashlib
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request

import nacl.exceptions
import nacl.secret
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
SIMPLE_SIGNING = "application/vnd.dev.cosign.simplesigning.v1+json"
SIGNATURE_ANNOTATION = "dev.cosignproject.cosign/signature"
PAYLOAD_TYPE = "cosign container image signature"
WASM_CONFIG = "application/vnd.wasm.config.v0+json"
WASM_LAYER = "application/wasm"
PLUGIN_MANIFEST_ANNOTATION = "dev.corral.plugin.manifest"
KEY_PEM = "ENCRYPTED SIGSTORE PRIVATE KEY"
SCRYPT = {"N": 65536, "r": 8, "p": 1}


class Failure(Exception):
    """A reason to exit 1, printed as is."""


def fail(reason):
    raise Failure(reason)


def b64(data):
    return base64.b64encode(data).decode()


def compact(value):
    """JSON as Go's encoding/json writes it (no spaces, insertion order)."""
    return json.dumps(value, separators=(",", ":")).encode()


def sha256(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def password():
    return os.environ.get("COSIGN_PASSWORD", "").encode()


def secretbox_key(params, salt):
    # maxmem: N=65536, r=8 needs 64 MiB; the default limit (32 MiB) is too small.
    return hashlib.scrypt(password(), salt=salt, n=params["N"], r=params["r"],
                          p=params["p"], maxmem=256 << 20, dklen=32)


# --- keys -------------------------------------------------------------------

def pem(label, body):
    text = b64(body)
    lines = [text[i:i + 64] for i in range(0, len(text), 64)]
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----\n"


def unpem(text, label):
    begin, end = f"-----BEGIN {label}-----", f"-----END {label}-----"
    if begin not in text or end not in text:
        fail(f"not a PEM {label!r}")
    inside = text.split(begin, 1)[1].split(end, 1)[0]
    return base64.b64decode("".join(inside.split()))


def keygen(out):
    key = ec.generate_private_key(ec.SECP256R1())
    der = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    salt, nonce = os.urandom(32), os.urandom(24)
    sealed = nacl.secret.SecretBox(secretbox_key(SCRYPT, salt)).encrypt(der, nonce).ciphertext
    body = compact({
        "kdf": {"name": "scrypt", "params": SCRYPT, "salt": b64(salt)},
        "cipher": {"name": "nacl/secretbox", "nonce": b64(nonce)},
        "ciphertext": b64(sealed),
    })
    with open(out + ".key", "w") as file:
        file.write(pem(KEY_PEM, body))
    with open(out + ".pub", "wb") as file:
        file.write(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                 serialization.PublicFormat.SubjectPublicKeyInfo))
    print(f"wrote {out}.key and {out}.pub")


def load_private_key(path):
    with open(path) as file:
        text = file.read()
    try:
        body = json.loads(unpem(text, KEY_PEM))
        kdf, cipher = body["kdf"], body["cipher"]
        if kdf["name"] != "scrypt" or cipher["name"] != "nacl/secretbox":
            fail(f"unexpected kdf {kdf['name']!r} or cipher {cipher['name']!r}")
        key = secretbox_key(kdf["params"], base64.b64decode(kdf["salt"]))
        der = nacl.secret.SecretBox(key).decrypt(base64.b64decode(body["ciphertext"]),
                                                 base64.b64decode(cipher["nonce"]))
        key = serialization.load_der_private_key(der, None)
    except nacl.exceptions.CryptoError:
        fail(f"{path}: wrong password (the secretbox does not open)")
    except (KeyError, TypeError, ValueError) as err:
        fail(f"{path}: malformed encrypted key: {err!r}")
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
        fail(f"{path}: not an ECDSA P-256 key")
    return key


def load_public_key(path):
    with open(path, "rb") as file:
        key = serialization.load_pem_public_key(file.read())
    if not isinstance(key, ec.EllipticCurvePublicKey):
        fail(f"{path}: not an ECDSA public key")
    return key


def decrypt(path):
    key = load_private_key(path)
    sys.stdout.write(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode())


# --- the registry (OCI distribution API, plain HTTP) ------------------------

# Loopback only: never through a proxy from the environment.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def request(registry, path, method="GET", data=None, headers=None):
    """(status, headers, body); 404 is an answer, other errors fail."""
    url = path if path.startswith("http") else f"http://{registry}{path}"
    headers = dict(headers or {})
    auth = os.environ.get("REGISTRY_AUTH")
    if auth:
        headers["Authorization"] = "Basic " + b64(auth.encode())
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with OPENER.open(req) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as err:
        body = err.read()
        if err.code == 404:
            return 404, err.headers, body
        fail(f"{method} {url}: HTTP {err.code}: {body.decode(errors='replace').strip()}")
    except urllib.error.URLError as err:
        fail(f"{method} {url}: {err.reason}")


def get_manifest(registry, repo, ref):
    status, _, body = request(registry, f"/v2/{repo}/manifests/{ref}",
                              headers={"Accept": OCI_MANIFEST})
    return body if status == 200 else None


def get_blob(registry, repo, digest):
    status, _, body = request(registry, f"/v2/{repo}/blobs/{digest}")
    if status != 200:
        fail(f"blob {digest} is not in {repo}")
    if sha256(body) != digest:
        fail(f"blob {digest} does not hash to its digest")
    return body


def put_blob(registry, repo, data):
    """Monolithic upload (POST then PUT with the digest); returns a descriptor."""
    digest = sha256(data)
    _, headers, _ = request(registry, f"/v2/{repo}/blobs/uploads/", method="POST", data=b"")
    location = headers["Location"]
    separator = "&" if "?" in location else "?"
    request(registry, f"{location}{separator}digest={urllib.parse.quote(digest)}", method="PUT",
            data=data, headers={"Content-Type": "application/octet-stream"})
    return {"size": len(data), "digest": digest}


def put_manifest(registry, repo, ref, manifest):
    body = compact(manifest)
    request(registry, f"/v2/{repo}/manifests/{ref}", method="PUT", data=body,
            headers={"Content-Type": OCI_MANIFEST})
    return sha256(body)


# --- signatures ---------------------------------------------------------------

def sig_tag(digest):
    algorithm, _, hex_digest = digest.partition(":")
    if algorithm != "sha256" or len(hex_digest) != 64:
        fail(f"not a sha256 digest: {digest}")
    return f"sha256-{hex_digest}.sig"


def payload_for(registry, repo, digest):
    return compact({
        "critical": {
            "identity": {"docker-reference": f"{registry}/{repo}"},
            "image": {"docker-manifest-digest": digest},
            "type": PAYLOAD_TYPE,
        },
        "optional": None,
    })


def sign(registry, repo, digest, key_path, count):
    key = load_private_key(key_path)
    tag = sig_tag(digest)
    # As cosign does: a new signature is appended to the layers already there.
    existing = get_manifest(registry, repo, tag)
    layers = json.loads(existing)["layers"] if existing else []
    payload = payload_for(registry, repo, digest)
    for _ in range(count):
        # ECDSA nonces are random, so each signature differs (and about half
        # are "high-S", which verifiers must accept as cosign's do).
        signature = key.sign(payload, ec.ECDSA(hashes.SHA256()))
        layer = {"mediaType": SIMPLE_SIGNING, **put_blob(registry, repo, payload),
                 "annotations": {SIGNATURE_ANNOTATION: b64(signature)}}
        layers.append(layer)
    # cosign's config: go-containerregistry's empty image with the layers
    # appended (one diff_id and one empty history entry per layer).
    config = compact({
        "architecture": "",
        "created": "0001-01-01T00:00:00Z",
        "history": [{"created": "0001-01-01T00:00:00Z"} for _ in layers],
        "os": "",
        "rootfs": {"type": "layers", "diff_ids": [layer["digest"] for layer in layers]},
        "config": {},
    })
    manifest = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": {"mediaType": OCI_CONFIG, **put_blob(registry, repo, config)},
        "layers": layers,
    }
    put_manifest(registry, repo, tag, manifest)
    print(f"{registry}/{repo}:{tag} now holds {len(layers)} signature(s)")


def verify(registry, repo, digest, pub_path):
    public = load_public_key(pub_path)
    tag = sig_tag(digest)
    body = get_manifest(registry, repo, tag)
    if body is None:
        fail(f"no signatures: {registry}/{repo}:{tag} does not exist")
    reasons = []
    for index, layer in enumerate(json.loads(body)["layers"]):
        signature = layer.get("annotations", {}).get(SIGNATURE_ANNOTATION)
        if layer.get("mediaType") != SIMPLE_SIGNING or not signature:
            reasons.append(f"layer {index}: not a cosign signature")
            continue
        payload = get_blob(registry, repo, layer["digest"])
        try:
            public.verify(base64.b64decode(signature), payload, ec.ECDSA(hashes.SHA256()))
        except (InvalidSignature, ValueError):
            reasons.append(f"layer {index}: the signature does not verify with {pub_path}")
            continue
        critical = json.loads(payload).get("critical", {})
        if critical.get("type") != PAYLOAD_TYPE:
            reasons.append(f"layer {index}: payload type {critical.get('type')!r}")
        elif critical.get("image", {}).get("docker-manifest-digest") != digest:
            reasons.append(f"layer {index}: signs another digest")
        else:
            print(f"layer {index} of {tag} verifies: {digest} signed by {pub_path}")
            return
    fail("no signature verifies:\n  " + "\n  ".join(reasons))


# --- the CNCF wasm artifact layout ------------------------------------------------

def push_wasm(registry, repo, tag, path, plugin_manifest=None):
    with open(path, "rb") as file:
        wasm = file.read()
    layer = {"mediaType": WASM_LAYER, **put_blob(registry, repo, wasm)}
    config = compact({
        "created": "1970-01-01T00:00:00Z",
        "architecture": "wasm",
        "os": "wasip2",
        "layerDigests": [layer["digest"]],
    })
    manifest = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": {"mediaType": WASM_CONFIG, **put_blob(registry, repo, config)},
        "layers": [layer],
    }
    if plugin_manifest is not None:
        with open(plugin_manifest, encoding="utf-8") as file:
            manifest["annotations"] = {PLUGIN_MANIFEST_ANNOTATION: file.read()}
    print(put_manifest(registry, repo, tag, manifest))


def main(argv):
    usage = __doc__.split("Usage", 1)[1]
    commands = {
        "keygen": (1, keygen),
        "decrypt": (1, decrypt),
        "verify": (4, verify),
        "manifest": (3, lambda r, repo, ref: sys.stdout.write(
            (get_manifest(r, repo, ref) or fail(f"{r}/{repo}:{ref} does not exist")).decode())),
        "blob": (3, lambda r, repo, d: sys.stdout.buffer.write(get_blob(r, repo, d))),
        "push-wasm": (4, push_wasm),
    }
    if argv and argv[0] == "sign":
        args, count = argv[1:], 1
        if "--count" in args:
            at = args.index("--count")
            count = int(args[at + 1])
            del args[at:at + 2]
        if len(args) == 4 and count >= 1:
            return sign(*args, count)
    elif argv and argv[0] == "push-wasm" and len(argv) == 7 and argv[5] == "--plugin-manifest":
        return push_wasm(*argv[1:5], argv[6])
    elif argv and argv[0] in commands and len(argv) - 1 == commands[argv[0]][0]:
        return commands[argv[0]][1](*argv[1:])
    sys.stderr.write("Usage" + usage)
    sys.exit(2)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except Failure as failure:
        sys.stderr.write(f"cosign_vectors: {failure}\n")
        sys.exit(1)

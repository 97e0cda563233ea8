/*
 * Byte-level algorithms behind the c-hash tools: SHA-256 (FIPS 180-4),
 * HMAC-SHA256 (RFC 2104), CRC-32 (IEEE 802.3, as in zip, gzip and PNG),
 * hex, and base64 in both alphabets (RFC 4648).
 */
#ifndef C_HASH_CODEC_H
#define C_HASH_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"

#define SHA256_DIGEST_SIZE 32
#define SHA256_BLOCK_SIZE 64

typedef struct {
    uint32_t state[8];
    uint64_t total_len; /* bytes absorbed so far */
    uint8_t block[SHA256_BLOCK_SIZE];
    size_t block_len;
} sha256_ctx;

void sha256_init(sha256_ctx *ctx);
void sha256_update(sha256_ctx *ctx, const uint8_t *data, size_t len);
void sha256_final(sha256_ctx *ctx, uint8_t digest[SHA256_DIGEST_SIZE]);
void sha256(const uint8_t *data, size_t len, uint8_t digest[SHA256_DIGEST_SIZE]);
void hmac_sha256(const uint8_t *key, size_t key_len, const uint8_t *message, size_t message_len,
                 uint8_t mac[SHA256_DIGEST_SIZE]);

uint32_t crc32_ieee(const uint8_t *data, size_t len);

/* The text encodings the tools accept and produce for byte strings. */
typedef enum {
    ENCODING_UTF8,
    ENCODING_HEX,
    ENCODING_BASE64,
    ENCODING_BASE64URL,
} byte_encoding;

/* Parses an encoding name ("utf8", "hex", "base64", "base64url"). */
bool encoding_from_name(const char *name, size_t len, byte_encoding *out);
const char *encoding_name(byte_encoding encoding);

/*
 * Decodes `text` in `encoding` into fresh malloc'ed bytes (`*out`, `*out_len`;
 * never NULL on success, even when empty). ASCII whitespace inside hex and
 * base64 is ignored, so that wrapped or grouped input works; base64 padding
 * is optional. On failure returns false and appends a message that names
 * the problem and its position to `error`, starting "not valid <encoding>".
 */
bool decode_bytes(byte_encoding encoding, const char *text, size_t len, uint8_t **out, size_t *out_len,
                  strbuf *error);

/*
 * Encodes bytes as text in `encoding` (fresh, malloc'ed, NUL-terminated).
 * base64 output is padded, base64url output is not (as in JWTs). UTF-8
 * "encoding" copies the bytes and fails if they are not valid UTF-8.
 * Returns NULL on failure and appends a message to `error`.
 */
char *encode_bytes(byte_encoding encoding, const uint8_t *bytes, size_t len, size_t *out_len, strbuf *error);

#endif

/* SHA-256, HMAC-SHA256, CRC-32, hex and base64: see codec.h. */
#include "codec.h"

#include <stdlib.h>
#include <string.h>


/* -------------------------------------------------------------- SHA-256 */

static const uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t rotr(uint32_t x, unsigned n) { return x >> n | x << (32 - n); }

static void sha256_compress(uint32_t state[8], const uint8_t block[SHA256_BLOCK_SIZE]) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++) {
        w[i] = (uint32_t)block[4 * i] << 24 | (uint32_t)block[4 * i + 1] << 16 | (uint32_t)block[4 * i + 2] << 8 |
               (uint32_t)block[4 * i + 3];
    }
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + sha256_k[i] + w[i];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
}

void sha256_init(sha256_ctx *ctx) {
    static const uint32_t initial[8] = {
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    };
    memcpy(ctx->state, initial, sizeof initial);
    ctx->total_len = 0;
    ctx->block_len = 0;
}

void sha256_update(sha256_ctx *ctx, const uint8_t *data, size_t len) {
    ctx->total_len += len;
    while (len > 0) {
        size_t take = SHA256_BLOCK_SIZE - ctx->block_len;
        if (take > len) {
            take = len;
        }
        memcpy(ctx->block + ctx->block_len, data, take);
        ctx->block_len += take;
        data += take;
        len -= take;
        if (ctx->block_len == SHA256_BLOCK_SIZE) {
            sha256_compress(ctx->state, ctx->block);
            ctx->block_len = 0;
        }
    }
}

void sha256_final(sha256_ctx *ctx, uint8_t digest[SHA256_DIGEST_SIZE]) {
    uint64_t total_bits = ctx->total_len * 8;
    /* Pad with 0x80, zeros, then the 64-bit big-endian message length. */
    ctx->block[ctx->block_len++] = 0x80;
    if (ctx->block_len > SHA256_BLOCK_SIZE - 8) {
        memset(ctx->block + ctx->block_len, 0, SHA256_BLOCK_SIZE - ctx->block_len);
        sha256_compress(ctx->state, ctx->block);
        ctx->block_len = 0;
    }
    memset(ctx->block + ctx->block_len, 0, SHA256_BLOCK_SIZE - 8 - ctx->block_len);
    for (int i = 0; i < 8; i++) {
        ctx->block[SHA256_BLOCK_SIZE - 1 - i] = (uint8_t)(total_bits >> (8 * i));
    }
    sha256_compress(ctx->state, ctx->block);
    for (int i = 0; i < 8; i++) {
        digest[4 * i] = (uint8_t)(ctx->state[i] >> 24);
        digest[4 * i + 1] = (uint8_t)(ctx->state[i] >> 16);
        digest[4 * i + 2] = (uint8_t)(ctx->state[i] >> 8);
        digest[4 * i + 3] = (uint8_t)ctx->state[i];
    }
}

void sha256(const uint8_t *data, size_t len, uint8_t digest[SHA256_DIGEST_SIZE]) {
    sha256_ctx ctx;
    sha256_init(&ctx);
    sha256_update(&ctx, data, len);
    sha256_final(&ctx, digest);
}

void hmac_sha256(const uint8_t *key, size_t key_len, const uint8_t *message, size_t message_len,
                 uint8_t mac[SHA256_DIGEST_SIZE]) {
    /* Keys longer than a block are hashed first (RFC 2104, section 2). */
    uint8_t block_key[SHA256_BLOCK_SIZE] = {0};
    if (key_len > SHA256_BLOCK_SIZE) {
        sha256(key, key_len, block_key);
    } else if (key_len > 0) {
        memcpy(block_key, key, key_len);
    }
    uint8_t pad[SHA256_BLOCK_SIZE];
    uint8_t inner[SHA256_DIGEST_SIZE];
    sha256_ctx ctx;

    for (int i = 0; i < SHA256_BLOCK_SIZE; i++) {
        pad[i] = block_key[i] ^ 0x36;
    }
    sha256_init(&ctx);
    sha256_update(&ctx, pad, sizeof pad);
    sha256_update(&ctx, message, message_len);
    sha256_final(&ctx, inner);

    for (int i = 0; i < SHA256_BLOCK_SIZE; i++) {
        pad[i] = block_key[i] ^ 0x5c;
    }
    sha256_init(&ctx);
    sha256_update(&ctx, pad, sizeof pad);
    sha256_update(&ctx, inner, sizeof inner);
    sha256_final(&ctx, mac);
}

/* --------------------------------------------------------------- CRC-32 */

uint32_t crc32_ieee(const uint8_t *data, size_t len) {
    /* Reflected polynomial 0xEDB88320; the table is built on first use (each
     * call runs in a fresh instance, so at most once per call). */
    static uint32_t table[256];
    static bool table_ready = false;
    if (!table_ready) {
        for (uint32_t n = 0; n < 256; n++) {
            uint32_t c = n;
            for (int k = 0; k < 8; k++) {
                c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            }
            table[n] = c;
        }
        table_ready = true;
    }
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++) {
        crc = table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
    }
    return crc ^ 0xFFFFFFFFu;
}

/* ------------------------------------------------------------ encodings */

static const struct {
    const char *name;
    byte_encoding encoding;
} encoding_names[] = {
    {"utf8", ENCODING_UTF8},
    {"hex", ENCODING_HEX},
    {"base64", ENCODING_BASE64},
    {"base64url", ENCODING_BASE64URL},
};

bool encoding_from_name(const char *name, size_t len, byte_encoding *out) {
    for (size_t i = 0; i < sizeof encoding_names / sizeof encoding_names[0]; i++) {
        if (strlen(encoding_names[i].name) == len && memcmp(encoding_names[i].name, name, len) == 0) {
            *out = encoding_names[i].encoding;
            return true;
        }
    }
    return false;
}

const char *encoding_name(byte_encoding encoding) {
    for (size_t i = 0; i < sizeof encoding_names / sizeof encoding_names[0]; i++) {
        if (encoding_names[i].encoding == encoding) {
            return encoding_names[i].name;
        }
    }
    return "?";
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Appends a description of the character at `text[at]` for an error message. */
static void describe_char(strbuf *out, const char *text, size_t len, size_t at) {
    unsigned char c = (unsigned char)text[at];
    if (c >= 0x21 && c < 0x7F) {
        char quoted[4] = {'\'', (char)c, '\'', '\0'};
        strbuf_append_str(out, quoted);
        return;
    }
    if (c >= 0x80) {
        /* Show the whole character when it is well-formed UTF-8. */
        size_t char_len = 1;
        while (char_len < 4 && at + char_len < len && ((unsigned char)text[at + char_len] & 0xC0) == 0x80) {
            char_len++;
        }
        if (utf8_valid_prefix((const uint8_t *)text + at, char_len) == char_len) {
            strbuf_append_str(out, "'");
            strbuf_append(out, text + at, char_len);
            strbuf_append_str(out, "'");
            return;
        }
    }
    strbuf_append_str(out, "byte 0x");
    strbuf_append_hex(out, c, 2, true);
}

static bool decode_hex(const char *text, size_t len, uint8_t *out, size_t *out_len, strbuf *error) {
    size_t used = 0;
    size_t digits = 0;
    int high = 0;
    for (size_t i = 0; i < len; i++) {
        if (is_space(text[i])) {
            continue;
        }
        int digit = hex_digit_value((uint8_t)text[i]);
        if (digit < 0) {
            strbuf_append_str(error, "not valid hex: ");
            describe_char(error, text, len, i);
            strbuf_append_str(error, " at character ");
            strbuf_append_uint(error, i);
            strbuf_append_str(error, " is not a hex digit (0-9, a-f, A-F)");
            return false;
        }
        if (digits++ % 2 == 0) {
            high = digit;
        } else {
            out[used++] = (uint8_t)(high << 4 | digit);
        }
    }
    if (digits % 2 != 0) {
        strbuf_append_str(error, "not valid hex: odd number of hex digits (");
        strbuf_append_uint(error, digits);
        strbuf_append_str(error, "); each byte needs two");
        return false;
    }
    *out_len = used;
    return true;
}

static int base64_value(char c, bool url) {
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    if (c == (url ? '-' : '+')) {
        return 62;
    }
    if (c == (url ? '_' : '/')) {
        return 63;
    }
    return -1;
}

static bool decode_base64(const char *text, size_t len, bool url, uint8_t *out, size_t *out_len,
                          strbuf *error) {
    const char *name = url ? "base64url" : "base64";
    size_t used = 0;
    size_t sextets = 0; /* data characters seen */
    size_t padding = 0; /* '=' characters seen */
    uint32_t group = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (is_space(c)) {
            continue;
        }
        if (c == '=') {
            padding++;
            continue;
        }
        int value = base64_value(c, url);
        if (value < 0 || padding > 0) {
            strbuf_concat(error, "not valid ", name, ": ", NULL);
            describe_char(error, text, len, i);
            strbuf_append_str(error, " at character ");
            strbuf_append_uint(error, i);
            if (padding > 0) {
                strbuf_append_str(error, " follows '=' padding");
            } else if (!url && (c == '-' || c == '_')) {
                strbuf_append_str(error, " belongs to the URL-safe alphabet; use base64url");
            } else if (url && (c == '+' || c == '/')) {
                strbuf_append_str(error, " belongs to the standard alphabet; use base64");
            } else {
                strbuf_concat(error, " is not in the ", name, " alphabet", NULL);
            }
            return false;
        }
        group = group << 6 | (uint32_t)value;
        if (++sextets % 4 == 0) {
            out[used++] = (uint8_t)(group >> 16);
            out[used++] = (uint8_t)(group >> 8);
            out[used++] = (uint8_t)group;
            group = 0;
        }
    }
    size_t tail = sextets % 4;
    if (tail == 1) {
        strbuf_concat(error, "not valid ", name, ": ", NULL);
        strbuf_append_uint(error, sextets);
        strbuf_append_str(error, " characters cannot be base64 (the last group of 4 has just one)");
        return false;
    }
    if (padding > 0 && (tail == 0 || tail + padding != 4)) {
        strbuf_concat(error, "not valid ", name, ": wrong amount of '=' padding (", NULL);
        strbuf_append_uint(error, padding);
        strbuf_append_str(error, ") after ");
        strbuf_append_uint(error, sextets);
        strbuf_append_str(error, " characters");
        return false;
    }
    /* A final group of 2 or 3 characters holds 1 or 2 bytes. */
    if (tail == 2) {
        out[used++] = (uint8_t)(group >> 4);
    } else if (tail == 3) {
        out[used++] = (uint8_t)(group >> 10);
        out[used++] = (uint8_t)(group >> 2);
    }
    *out_len = used;
    return true;
}

bool decode_bytes(byte_encoding encoding, const char *text, size_t len, uint8_t **out, size_t *out_len,
                  strbuf *error) {
    /* Every encoding decodes to at most as many bytes as it has characters. */
    uint8_t *bytes = malloc(len + 1);
    if (bytes == NULL) {
        strbuf_append_str(error, "out of memory for the input");
        return false;
    }
    bool ok;
    switch (encoding) {
    case ENCODING_UTF8:
        /* Already UTF-8: the JSON reader validated it. */
        memcpy(bytes, text, len);
        *out_len = len;
        ok = true;
        break;
    case ENCODING_HEX:
        ok = decode_hex(text, len, bytes, out_len, error);
        break;
    case ENCODING_BASE64:
        ok = decode_base64(text, len, false, bytes, out_len, error);
        break;
    case ENCODING_BASE64URL:
        ok = decode_base64(text, len, true, bytes, out_len, error);
        break;
    default:
        strbuf_append_str(error, "unknown encoding");
        ok = false;
        break;
    }
    if (!ok) {
        free(bytes);
        return false;
    }
    *out = bytes;
    return true;
}

char *encode_bytes(byte_encoding encoding, const uint8_t *bytes, size_t len, size_t *out_len, strbuf *error) {
    static const char hex[] = "0123456789abcdef";
    static const char standard[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    static const char url_safe[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

    size_t capacity;
    switch (encoding) {
    case ENCODING_UTF8:
        capacity = len;
        break;
    case ENCODING_HEX:
        capacity = len > SIZE_MAX / 2 - 1 ? SIZE_MAX : len * 2;
        break;
    default:
        capacity = len / 3 > SIZE_MAX / 4 - 2 ? SIZE_MAX : (len / 3 + 1) * 4;
        break;
    }
    char *text = capacity == SIZE_MAX ? NULL : malloc(capacity + 1);
    if (text == NULL) {
        strbuf_concat(error, "out of memory for the ", encoding_name(encoding), " result", NULL);
        return NULL;
    }
    size_t used = 0;
    switch (encoding) {
    case ENCODING_UTF8: {
        size_t valid = utf8_valid_prefix(bytes, len);
        if (valid != len) {
            strbuf_append_str(error, "the bytes are not valid UTF-8 text (first invalid byte 0x");
            strbuf_append_hex(error, bytes[valid], 2, true);
            strbuf_append_str(error, " at offset ");
            strbuf_append_uint(error, valid);
            strbuf_append_str(error, "); use hex or base64 to see them");
            free(text);
            return NULL;
        }
        memcpy(text, bytes, len);
        used = len;
        break;
    }
    case ENCODING_HEX:
        for (size_t i = 0; i < len; i++) {
            text[used++] = hex[bytes[i] >> 4];
            text[used++] = hex[bytes[i] & 0xF];
        }
        break;
    default: {
        bool url = encoding == ENCODING_BASE64URL;
        const char *alphabet = url ? url_safe : standard;
        size_t i = 0;
        for (; i + 3 <= len; i += 3) {
            uint32_t group = (uint32_t)bytes[i] << 16 | (uint32_t)bytes[i + 1] << 8 | bytes[i + 2];
            text[used++] = alphabet[group >> 18];
            text[used++] = alphabet[(group >> 12) & 0x3F];
            text[used++] = alphabet[(group >> 6) & 0x3F];
            text[used++] = alphabet[group & 0x3F];
        }
        size_t rest = len - i;
        if (rest > 0) {
            uint32_t group = (uint32_t)bytes[i] << 16 | (rest == 2 ? (uint32_t)bytes[i + 1] << 8 : 0);
            text[used++] = alphabet[group >> 18];
            text[used++] = alphabet[(group >> 12) & 0x3F];
            if (rest == 2) {
                text[used++] = alphabet[(group >> 6) & 0x3F];
            }
            if (!url) {
                text[used++] = '=';
                if (rest == 1) {
                    text[used++] = '=';
                }
            }
        }
        break;
    }
    }
    text[used] = '\0';
    *out_len = used;
    return text;
}

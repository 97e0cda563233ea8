/*
 * A small, strict JSON reader and writer (RFC 8259) with no dependencies
 * beyond the C standard library.
 *
 * Reader: json_parse() builds a tree from UTF-8 text. It rejects anything
 * that is not JSON (trailing commas, bad escapes, unpaired surrogates, invalid
 * UTF-8, control characters in strings, trailing garbage) and limits nesting
 * depth, so that malformed or hostile input fails with a message instead of
 * crashing or exhausting the stack. The host validates tool arguments against
 * the input schema before the plugin sees them, but the plugin does not rely
 * on that.
 *
 * Writer: strbuf is a growable text buffer, with helpers that emit JSON
 * tokens, and plain text for messages. Allocation failure is sticky
 * (strbuf.failed) so that callers can write a whole document and check once
 * at the end.
 *
 * Nothing here uses stdio: musl's printf family drags in stdout and its
 * fd_write/fd_seek/fd_close imports, and without them the plugin imports
 * nothing from WASI at all.
 */
#ifndef C_HASH_JSON_H
#define C_HASH_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Deepest nesting json_parse() accepts; deeper input is rejected. Keep the
 * two in step: the text goes into the error message. */
#define JSON_MAX_DEPTH 64
#define JSON_MAX_DEPTH_TEXT "64"

/* A growable text buffer. Zero-initialize it: strbuf buf = {0}; `data` is
 * NUL-terminated whenever it is not NULL. */
typedef struct {
    char *data;
    size_t len;
    size_t cap;
    bool failed; /* an allocation failed; the content is incomplete */
} strbuf;

typedef enum {
    JSON_NULL,
    JSON_BOOL,
    JSON_NUMBER,
    JSON_STRING,
    JSON_ARRAY,
    JSON_OBJECT,
} json_type;

typedef struct json_value json_value;
typedef struct json_member json_member;

struct json_value {
    json_type type;
    union {
        bool boolean;
        double number;
        /* Decoded UTF-8, NUL-terminated for convenience; `len` is
         * authoritative because "\u0000" may put a NUL inside. */
        struct {
            char *bytes;
            size_t len;
        } string;
        struct {
            json_value *items;
            size_t count;
        } array;
        struct {
            json_member *members;
            size_t count;
        } object;
    } as;
};

struct json_member {
    char *key; /* decoded UTF-8, NUL-terminated */
    size_t key_len;
    json_value value;
};

/*
 * Parses `len` bytes of `text` into `*out`. On success returns true and the
 * caller owns `*out` (release it with json_free). On failure returns false,
 * leaves `*out` as JSON_NULL and appends a one-line reason, including the
 * byte offset, to `error`.
 */
bool json_parse(const char *text, size_t len, json_value *out, strbuf *error);

/* Releases everything json_parse allocated under `value` (not `value` itself). */
void json_free(json_value *value);

/*
 * The member of object `object` named `key`, or NULL when `object` is not an
 * object or has no such member. With duplicate keys, the last one wins (as in
 * most JSON libraries, and as the host's validator sees it).
 */
const json_value *json_get(const json_value *object, const char *key);

/* True when `bytes[0..len)` is well-formed UTF-8 (no overlongs, surrogates or
 * code points above U+10FFFF). */
bool utf8_is_valid(const uint8_t *bytes, size_t len);

/* Length of the longest well-formed UTF-8 prefix of `bytes[0..len)`: the
 * offset of the first invalid byte, or `len` when all are valid. */
size_t utf8_valid_prefix(const uint8_t *bytes, size_t len);

/* The value of one hexadecimal digit (either case), or -1. */
int hex_digit_value(uint8_t c);

void strbuf_append(strbuf *buf, const char *bytes, size_t len);
void strbuf_append_str(strbuf *buf, const char *text);
/* Appends every string argument up to a NULL: strbuf_concat(buf, "a", b, NULL). */
void strbuf_concat(strbuf *buf, ...) __attribute__((sentinel));
/* Appends `value` in decimal. */
void strbuf_append_uint(strbuf *buf, uint64_t value);
/* Appends `value` as `digits` uppercase or lowercase hex digits. */
void strbuf_append_hex(strbuf *buf, uint64_t value, int digits, bool upper);

/* Appends `bytes[0..len)` as a quoted JSON string. Invalid UTF-8 sequences are
 * written as U+FFFD so that the output is always valid JSON. */
void json_write_string(strbuf *buf, const char *bytes, size_t len);
void json_write_cstring(strbuf *buf, const char *text);
void json_write_uint(strbuf *buf, uint64_t value);
void json_write_bool(strbuf *buf, bool value);
/*
 * Appends `value` as the shortest JSON number that reads back as exactly
 * `value` (as JavaScript and Python print it: `0.1`, `1e+21`, `5e-324`),
 * without printf, so a plugin need not link stdio. JSON has no infinities
 * or NaN: for those it appends nothing and returns false, so the caller can
 * report the field (the host would refuse the output as invalid JSON).
 */
bool json_write_double(strbuf *buf, double value);

/*
 * Hands the buffer's bytes to the caller (malloc'ed, NUL-terminated) and
 * resets the buffer. Returns NULL (and frees everything) if any append failed.
 */
char *strbuf_take(strbuf *buf, size_t *len_out);

/* Frees the buffer's bytes and resets it. */
void strbuf_free(strbuf *buf);

#endif

/* A small, strict JSON reader and writer: see json.h. */
#include "json.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- UTF-8 */

/*
 * Length of the well-formed UTF-8 sequence at the start of `s` (`n` > 0 bytes
 * available), or 0 when it is malformed: a stray continuation byte, a
 * truncated sequence, an overlong form, a surrogate or a code point above
 * U+10FFFF (RFC 3629, table 3-7 of the Unicode standard).
 */
static size_t utf8_sequence_length(const uint8_t *s, size_t n) {
    uint8_t c = s[0];
    if (c < 0x80) {
        return 1;
    }
    if (c < 0xC2) {
        return 0; /* continuation byte, or overlong 2-byte lead */
    }
    if (c < 0xE0) {
        return n >= 2 && (s[1] & 0xC0) == 0x80 ? 2 : 0;
    }
    if (c < 0xF0) {
        if (n < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80) {
            return 0;
        }
        if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] >= 0xA0)) {
            return 0; /* overlong, or a UTF-16 surrogate */
        }
        return 3;
    }
    if (c < 0xF5) {
        if (n < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80) {
            return 0;
        }
        if ((c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] >= 0x90)) {
            return 0; /* overlong, or above U+10FFFF */
        }
        return 4;
    }
    return 0;
}

size_t utf8_valid_prefix(const uint8_t *bytes, size_t len) {
    size_t i = 0;
    while (i < len) {
        size_t n = utf8_sequence_length(bytes + i, len - i);
        if (n == 0) {
            break;
        }
        i += n;
    }
    return i;
}

bool utf8_is_valid(const uint8_t *bytes, size_t len) { return utf8_valid_prefix(bytes, len) == len; }

/* Writes code point `cp` (a valid scalar value) as UTF-8; returns the length. */
static size_t utf8_encode(uint32_t cp, char *out) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* --------------------------------------------------------------- reader */

typedef struct {
    const uint8_t *text;
    size_t len;
    size_t pos;
    strbuf *error;
} parser;

/*
 * Records why parsing failed at byte `at`; always returns false. Every
 * failure path calls it exactly once, so a caller may append details (a
 * code point, a character) right after it.
 */
static bool fail(parser *ps, size_t at, const char *message) {
    strbuf_append_str(ps->error, "invalid JSON at byte ");
    strbuf_append_uint(ps->error, at);
    strbuf_concat(ps->error, ": ", message, NULL);
    return false;
}

/* fail() with a trailing "\uXXXX" or "U+XXXX" (`prefix`) for code point `cp`. */
static bool fail_code_point(parser *ps, size_t at, const char *message, const char *prefix, uint32_t cp) {
    fail(ps, at, message);
    strbuf_append_str(ps->error, prefix);
    strbuf_append_hex(ps->error, cp, 4, true);
    return false;
}

static void skip_whitespace(parser *ps) {
    while (ps->pos < ps->len) {
        uint8_t c = ps->text[ps->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
            break;
        }
        ps->pos++;
    }
}

int hex_digit_value(uint8_t c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/* Reads the 4 hex digits of a \u escape at `at` (they must end before `end`). */
static bool read_hex4(parser *ps, size_t at, size_t end, uint32_t *out) {
    if (end - at < 4) {
        return fail(ps, at, "\\u escape needs 4 hex digits");
    }
    uint32_t value = 0;
    for (size_t i = 0; i < 4; i++) {
        int digit = hex_digit_value((uint8_t)ps->text[at + i]);
        if (digit < 0) {
            return fail(ps, at + i, "\\u escape needs 4 hex digits");
        }
        value = value << 4 | (uint32_t)digit;
    }
    *out = value;
    return true;
}

/*
 * Parses the string starting at the opening quote into a fresh NUL-terminated
 * buffer. A first pass finds the closing quote, whose distance bounds the
 * decoded size: every escape decodes to fewer bytes than it takes.
 */
static bool parse_string(parser *ps, char **out, size_t *out_len) {
    size_t start = ps->pos + 1;
    size_t end = start;
    for (;;) {
        if (end >= ps->len) {
            return fail(ps, ps->pos, "unterminated string");
        }
        uint8_t c = ps->text[end];
        if (c == '"') {
            break;
        }
        end += c == '\\' ? 2 : 1;
    }

    char *bytes = malloc(end - start + 1);
    if (bytes == NULL) {
        return fail(ps, start, "out of memory");
    }
    size_t used = 0;
    size_t i = start;
    while (i < end) {
        uint8_t c = ps->text[i];
        if (c < 0x20) {
            free(bytes);
            return fail_code_point(ps, i, "unescaped control character in string: ", "U+", c);
        }
        if (c != '\\') {
            size_t n = utf8_sequence_length(ps->text + i, end - i);
            if (n == 0) {
                free(bytes);
                return fail(ps, i, "invalid UTF-8 in string");
            }
            memcpy(bytes + used, ps->text + i, n);
            used += n;
            i += n;
            continue;
        }
        /* The first pass guarantees a byte after every backslash. */
        uint8_t escape = ps->text[i + 1];
        char simple = 0;
        switch (escape) {
        case '"': simple = '"'; break;
        case '\\': simple = '\\'; break;
        case '/': simple = '/'; break;
        case 'b': simple = '\b'; break;
        case 'f': simple = '\f'; break;
        case 'n': simple = '\n'; break;
        case 'r': simple = '\r'; break;
        case 't': simple = '\t'; break;
        case 'u': break;
        default:
            free(bytes);
            fail(ps, i, "invalid escape");
            if (escape >= 0x20 && escape < 0x7F) {
                char shown[4] = {' ', '\\', (char)escape, '\0'};
                strbuf_append_str(ps->error, shown);
            }
            return false;
        }
        if (simple != 0) {
            bytes[used++] = simple;
            i += 2;
            continue;
        }
        uint32_t cp;
        if (!read_hex4(ps, i + 2, end, &cp)) {
            free(bytes);
            return false;
        }
        size_t escape_at = i;
        i += 6;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            /* A high surrogate must be followed by an escaped low one. */
            uint32_t low;
            if (end - i < 2 || ps->text[i] != '\\' || ps->text[i + 1] != 'u') {
                free(bytes);
                return fail_code_point(ps, escape_at, "unpaired UTF-16 surrogate ", "\\u", cp);
            }
            if (!read_hex4(ps, i + 2, end, &low)) {
                free(bytes);
                return false;
            }
            if (low < 0xDC00 || low > 0xDFFF) {
                free(bytes);
                return fail_code_point(ps, escape_at, "unpaired UTF-16 surrogate ", "\\u", cp);
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            i += 6;
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            free(bytes);
            return fail_code_point(ps, escape_at, "unpaired UTF-16 surrogate ", "\\u", cp);
        }
        used += utf8_encode(cp, bytes + used);
    }
    bytes[used] = '\0';
    *out = bytes;
    *out_len = used;
    ps->pos = end + 1;
    return true;
}

static bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

/* Parses a number with the exact JSON grammar, then converts it with strtod. */
static bool parse_number(parser *ps, double *out) {
    size_t start = ps->pos;
    size_t i = start;
    if (i < ps->len && ps->text[i] == '-') {
        i++;
    }
    if (i < ps->len && ps->text[i] == '0') {
        i++;
    } else if (i < ps->len && is_digit(ps->text[i])) {
        while (i < ps->len && is_digit(ps->text[i])) {
            i++;
        }
    } else {
        return fail(ps, start, "invalid number");
    }
    if (i < ps->len && ps->text[i] == '.') {
        i++;
        if (i >= ps->len || !is_digit(ps->text[i])) {
            return fail(ps, i, "a digit must follow the decimal point");
        }
        while (i < ps->len && is_digit(ps->text[i])) {
            i++;
        }
    }
    if (i < ps->len && (ps->text[i] == 'e' || ps->text[i] == 'E')) {
        i++;
        if (i < ps->len && (ps->text[i] == '+' || ps->text[i] == '-')) {
            i++;
        }
        if (i >= ps->len || !is_digit(ps->text[i])) {
            return fail(ps, i, "a digit must follow the exponent");
        }
        while (i < ps->len && is_digit(ps->text[i])) {
            i++;
        }
    }
    /* strtod needs a NUL-terminated copy: the input is not terminated. */
    size_t span = i - start;
    char *copy = malloc(span + 1);
    if (copy == NULL) {
        return fail(ps, start, "out of memory");
    }
    memcpy(copy, ps->text + start, span);
    copy[span] = '\0';
    double value = strtod(copy, NULL);
    free(copy);
    if (!isfinite(value)) {
        return fail(ps, start, "number out of range");
    }
    *out = value;
    ps->pos = i;
    return true;
}

static bool parse_value(parser *ps, json_value *out, int depth);

/* Grows `*items` (of `size`-byte elements) to hold at least `count + 1`. */
static bool grow(void **items, size_t *cap, size_t count, size_t size) {
    if (count < *cap) {
        return true;
    }
    size_t new_cap = *cap == 0 ? 4 : *cap * 2;
    if (new_cap > SIZE_MAX / size) {
        return false;
    }
    void *grown = realloc(*items, new_cap * size);
    if (grown == NULL) {
        return false;
    }
    *items = grown;
    *cap = new_cap;
    return true;
}

static bool parse_array(parser *ps, json_value *out, int depth) {
    size_t open = ps->pos++;
    json_value *items = NULL;
    size_t count = 0, cap = 0;
    skip_whitespace(ps);
    if (ps->pos < ps->len && ps->text[ps->pos] == ']') {
        ps->pos++;
        goto done;
    }
    for (;;) {
        if (!grow((void **)&items, &cap, count, sizeof *items)) {
            fail(ps, ps->pos, "out of memory");
            goto error;
        }
        if (!parse_value(ps, &items[count], depth + 1)) {
            goto error;
        }
        count++;
        skip_whitespace(ps);
        if (ps->pos >= ps->len) {
            fail(ps, open, "unterminated array");
            goto error;
        }
        uint8_t c = ps->text[ps->pos++];
        if (c == ']') {
            break;
        }
        if (c != ',') {
            fail(ps, ps->pos - 1, "expected ',' or ']' in array");
            goto error;
        }
        skip_whitespace(ps);
    }
done:
    out->type = JSON_ARRAY;
    out->as.array.items = items;
    out->as.array.count = count;
    return true;
error:
    for (size_t i = 0; i < count; i++) {
        json_free(&items[i]);
    }
    free(items);
    return false;
}

static bool parse_object(parser *ps, json_value *out, int depth) {
    size_t open = ps->pos++;
    json_member *members = NULL;
    size_t count = 0, cap = 0;
    skip_whitespace(ps);
    if (ps->pos < ps->len && ps->text[ps->pos] == '}') {
        ps->pos++;
        goto done;
    }
    for (;;) {
        if (ps->pos >= ps->len || ps->text[ps->pos] != '"') {
            fail(ps, ps->pos, "expected a string key in object");
            goto error;
        }
        if (!grow((void **)&members, &cap, count, sizeof *members)) {
            fail(ps, ps->pos, "out of memory");
            goto error;
        }
        json_member *member = &members[count];
        if (!parse_string(ps, &member->key, &member->key_len)) {
            goto error;
        }
        skip_whitespace(ps);
        if (ps->pos >= ps->len || ps->text[ps->pos] != ':') {
            free(member->key);
            fail(ps, ps->pos, "expected ':' after object key");
            goto error;
        }
        ps->pos++;
        skip_whitespace(ps);
        if (!parse_value(ps, &member->value, depth + 1)) {
            free(member->key);
            goto error;
        }
        count++;
        skip_whitespace(ps);
        if (ps->pos >= ps->len) {
            fail(ps, open, "unterminated object");
            goto error;
        }
        uint8_t c = ps->text[ps->pos++];
        if (c == '}') {
            break;
        }
        if (c != ',') {
            fail(ps, ps->pos - 1, "expected ',' or '}' in object");
            goto error;
        }
        skip_whitespace(ps);
    }
done:
    out->type = JSON_OBJECT;
    out->as.object.members = members;
    out->as.object.count = count;
    return true;
error:
    for (size_t i = 0; i < count; i++) {
        free(members[i].key);
        json_free(&members[i].value);
    }
    free(members);
    return false;
}

/* Matches the literal `word` at the current position. */
static bool parse_literal(parser *ps, const char *word) {
    size_t n = strlen(word);
    if (ps->len - ps->pos < n || memcmp(ps->text + ps->pos, word, n) != 0) {
        return fail(ps, ps->pos, "unexpected character");
    }
    ps->pos += n;
    return true;
}

/* Parses one value at the current position (no leading whitespace). */
static bool parse_value(parser *ps, json_value *out, int depth) {
    out->type = JSON_NULL;
    if (depth >= JSON_MAX_DEPTH) {
        return fail(ps, ps->pos, "nested too deeply (the limit is " JSON_MAX_DEPTH_TEXT " levels)");
    }
    if (ps->pos >= ps->len) {
        return fail(ps, ps->pos, "unexpected end of input");
    }
    switch (ps->text[ps->pos]) {
    case '{':
        return parse_object(ps, out, depth);
    case '[':
        return parse_array(ps, out, depth);
    case '"': {
        char *bytes;
        size_t len;
        if (!parse_string(ps, &bytes, &len)) {
            return false;
        }
        out->type = JSON_STRING;
        out->as.string.bytes = bytes;
        out->as.string.len = len;
        return true;
    }
    case 't':
        if (!parse_literal(ps, "true")) {
            return false;
        }
        out->type = JSON_BOOL;
        out->as.boolean = true;
        return true;
    case 'f':
        if (!parse_literal(ps, "false")) {
            return false;
        }
        out->type = JSON_BOOL;
        out->as.boolean = false;
        return true;
    case 'n':
        return parse_literal(ps, "null");
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9': {
        double number = 0;
        if (!parse_number(ps, &number)) {
            return false;
        }
        out->type = JSON_NUMBER;
        out->as.number = number;
        return true;
    }
    default:
        return fail(ps, ps->pos, "expected a value");
    }
}

bool json_parse(const char *text, size_t len, json_value *out, strbuf *error) {
    parser ps = {
        .text = (const uint8_t *)text,
        .len = len,
        .pos = 0,
        .error = error,
    };
    out->type = JSON_NULL;
    skip_whitespace(&ps);
    if (!parse_value(&ps, out, 0)) {
        return false;
    }
    skip_whitespace(&ps);
    if (ps.pos != ps.len) {
        json_free(out);
        return fail(&ps, ps.pos, "unexpected data after the value");
    }
    return true;
}

void json_free(json_value *value) {
    switch (value->type) {
    case JSON_STRING:
        free(value->as.string.bytes);
        break;
    case JSON_ARRAY:
        for (size_t i = 0; i < value->as.array.count; i++) {
            json_free(&value->as.array.items[i]);
        }
        free(value->as.array.items);
        break;
    case JSON_OBJECT:
        for (size_t i = 0; i < value->as.object.count; i++) {
            free(value->as.object.members[i].key);
            json_free(&value->as.object.members[i].value);
        }
        free(value->as.object.members);
        break;
    default:
        break;
    }
    value->type = JSON_NULL;
}

const json_value *json_get(const json_value *object, const char *key) {
    if (object == NULL || object->type != JSON_OBJECT) {
        return NULL;
    }
    size_t key_len = strlen(key);
    const json_value *found = NULL;
    for (size_t i = 0; i < object->as.object.count; i++) {
        const json_member *member = &object->as.object.members[i];
        if (member->key_len == key_len && memcmp(member->key, key, key_len) == 0) {
            found = &member->value;
        }
    }
    return found;
}

/* --------------------------------------------------------------- writer */

/* Makes room for `extra` more bytes plus a terminating NUL. */
static bool strbuf_reserve(strbuf *buf, size_t extra) {
    if (buf->failed) {
        return false;
    }
    if (extra > SIZE_MAX - buf->len - 1) {
        buf->failed = true;
        return false;
    }
    size_t needed = buf->len + extra + 1;
    if (needed <= buf->cap) {
        return true;
    }
    size_t new_cap = buf->cap < 64 ? 64 : buf->cap;
    while (new_cap < needed) {
        new_cap = new_cap > SIZE_MAX / 2 ? needed : new_cap * 2;
    }
    char *grown = realloc(buf->data, new_cap);
    if (grown == NULL) {
        buf->failed = true;
        return false;
    }
    buf->data = grown;
    buf->cap = new_cap;
    return true;
}

void strbuf_append(strbuf *buf, const char *bytes, size_t len) {
    if (!strbuf_reserve(buf, len)) {
        return;
    }
    if (len > 0) {
        memcpy(buf->data + buf->len, bytes, len);
    }
    buf->len += len;
    buf->data[buf->len] = '\0';
}

void strbuf_append_str(strbuf *buf, const char *text) { strbuf_append(buf, text, strlen(text)); }

void json_write_string(strbuf *buf, const char *bytes, size_t len) {
    static const char hex[] = "0123456789abcdef";
    const uint8_t *s = (const uint8_t *)bytes;
    strbuf_append(buf, "\"", 1);
    size_t i = 0;
    while (i < len) {
        /* Copy the longest run that needs no escaping in one go. */
        size_t run = i;
        while (run < len && s[run] >= 0x20 && s[run] < 0x80 && s[run] != '"' && s[run] != '\\') {
            run++;
        }
        strbuf_append(buf, bytes + i, run - i);
        i = run;
        if (i >= len) {
            break;
        }
        uint8_t c = s[i];
        if (c >= 0x80) {
            size_t n = utf8_sequence_length(s + i, len - i);
            if (n == 0) {
                strbuf_append_str(buf, "\\ufffd");
                i++;
            } else {
                strbuf_append(buf, bytes + i, n);
                i += n;
            }
            continue;
        }
        switch (c) {
        case '"': strbuf_append_str(buf, "\\\""); break;
        case '\\': strbuf_append_str(buf, "\\\\"); break;
        case '\b': strbuf_append_str(buf, "\\b"); break;
        case '\f': strbuf_append_str(buf, "\\f"); break;
        case '\n': strbuf_append_str(buf, "\\n"); break;
        case '\r': strbuf_append_str(buf, "\\r"); break;
        case '\t': strbuf_append_str(buf, "\\t"); break;
        default: {
            char escape[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xF]};
            strbuf_append(buf, escape, sizeof escape);
            break;
        }
        }
        i++;
    }
    strbuf_append(buf, "\"", 1);
}

void json_write_cstring(strbuf *buf, const char *text) { json_write_string(buf, text, strlen(text)); }

void strbuf_concat(strbuf *buf, ...) {
    va_list args;
    va_start(args, buf);
    for (const char *text = va_arg(args, const char *); text != NULL; text = va_arg(args, const char *)) {
        strbuf_append_str(buf, text);
    }
    va_end(args);
}

void strbuf_append_uint(strbuf *buf, uint64_t value) {
    char digits[20]; /* UINT64_MAX has 20 digits */
    size_t start = sizeof digits;
    do {
        digits[--start] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    strbuf_append(buf, digits + start, sizeof digits - start);
}

void strbuf_append_hex(strbuf *buf, uint64_t value, int digits, bool upper) {
    const char *alphabet = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char text[16];
    if (digits < 1 || digits > 16) {
        return;
    }
    for (int i = digits - 1; i >= 0; i--) {
        text[i] = alphabet[value & 0xF];
        value >>= 4;
    }
    strbuf_append(buf, text, (size_t)digits);
}

void json_write_uint(strbuf *buf, uint64_t value) { strbuf_append_uint(buf, value); }

void json_write_bool(strbuf *buf, bool value) { strbuf_append_str(buf, value ? "true" : "false"); }

/*
 * The exact decimal expansion of a double, as a big number in base 10^9:
 * a double is m * 2^e with an integer m < 2^53, and when e < 0 that is
 * m * 5^-e / 10^-e, so its digits are those of an integer of at most 767
 * digits (m * 5^1074) with the decimal point moved. Exact digits make every
 * rounding below exact, so the shortest digits found read back right.
 */
#define DECIMAL_LIMBS 90 /* 90 * 9 = 810 digits, more than the 767 needed */
#define LIMB_BASE 1000000000u

typedef struct {
    uint32_t limb[DECIMAL_LIMBS]; /* least significant first */
    size_t len;
} decimal_big;

static void big_multiply(decimal_big *n, uint32_t factor) {
    uint64_t carry = 0;
    for (size_t i = 0; i < n->len; i++) {
        uint64_t product = (uint64_t)n->limb[i] * factor + carry;
        n->limb[i] = (uint32_t)(product % LIMB_BASE);
        carry = product / LIMB_BASE;
    }
    while (carry != 0 && n->len < DECIMAL_LIMBS) {
        n->limb[n->len++] = (uint32_t)(carry % LIMB_BASE);
        carry /= LIMB_BASE;
    }
}

/* Writes the digits of `n` (no leading zeros) into `out`; returns how many. */
static size_t big_digits(const decimal_big *n, char *out) {
    size_t count = 0;
    for (size_t i = n->len; i-- > 0;) {
        char limb[9];
        uint32_t value = n->limb[i];
        for (int d = 8; d >= 0; d--) {
            limb[d] = (char)('0' + value % 10);
            value /= 10;
        }
        int start = 0;
        if (count == 0) {
            while (start < 8 && limb[start] == '0') {
                start++;
            }
        }
        memcpy(out + count, limb + start, (size_t)(9 - start));
        count += (size_t)(9 - start);
    }
    return count;
}

/*
 * Rounds the exact digits `digits[0..len)` to `keep` significant digits
 * (half up, exact since the digits are), into `out`; returns the change of
 * the decimal exponent (1 when rounding carried into a new digit, as 9.99
 * to 10.0).
 */
static int round_digits(const char *digits, size_t len, size_t keep, char *out) {
    memcpy(out, digits, keep);
    if (keep >= len || digits[keep] < '5') {
        return 0;
    }
    for (size_t i = keep; i-- > 0;) {
        if (out[i] != '9') {
            out[i]++;
            return 0;
        }
        out[i] = '0';
    }
    memmove(out + 1, out, keep - 1);
    out[0] = '1';
    return 1;
}

/* Appends digits `d[0..n)` with decimal exponent `point` (the value is
 * 0.d * 10^point) as JavaScript's Number#toString writes it. */
static void append_number(strbuf *buf, bool negative, const char *d, size_t n, int point) {
    if (negative) {
        strbuf_append(buf, "-", 1);
    }
    if (point > 21 || point < -5) {
        strbuf_append(buf, d, 1);
        if (n > 1) {
            strbuf_append(buf, ".", 1);
            strbuf_append(buf, d + 1, n - 1);
        }
        int exponent = point - 1;
        strbuf_append_str(buf, exponent < 0 ? "e-" : "e+");
        strbuf_append_uint(buf, (uint64_t)(exponent < 0 ? -exponent : exponent));
    } else if (point <= 0) {
        strbuf_append(buf, "0.", 2);
        for (int i = point; i < 0; i++) {
            strbuf_append(buf, "0", 1);
        }
        strbuf_append(buf, d, n);
    } else if ((size_t)point >= n) {
        strbuf_append(buf, d, n);
        for (size_t i = n; i < (size_t)point; i++) {
            strbuf_append(buf, "0", 1);
        }
    } else {
        strbuf_append(buf, d, (size_t)point);
        strbuf_append(buf, ".", 1);
        strbuf_append(buf, d + point, n - (size_t)point);
    }
}

bool json_write_double(strbuf *buf, double value) {
    if (!isfinite(value)) {
        return false;
    }
    bool negative = signbit(value);
    double magnitude = fabs(value);
    if (magnitude == 0) {
        strbuf_append_str(buf, negative ? "-0" : "0");
        return true;
    }
    int binary_exponent;
    double fraction = frexp(magnitude, &binary_exponent); /* magnitude = fraction * 2^e, fraction in [0.5, 1) */
    uint64_t mantissa = (uint64_t)ldexp(fraction, 53);
    int shift = binary_exponent - 53;                      /* magnitude = mantissa * 2^shift */
    decimal_big big = {{0}, 0};
    big.limb[0] = (uint32_t)(mantissa % LIMB_BASE);
    big.limb[1] = (uint32_t)(mantissa / LIMB_BASE % LIMB_BASE);
    big.limb[2] = (uint32_t)(mantissa / LIMB_BASE / LIMB_BASE);
    big.len = big.limb[2] ? 3 : big.limb[1] ? 2 : 1;
    for (int i = 0; i < shift; i++) {
        big_multiply(&big, 2);
    }
    for (int i = 0; i < -shift; i++) {
        big_multiply(&big, 5);
    }
    char exact[DECIMAL_LIMBS * 9];
    size_t len = big_digits(&big, exact);
    /* The value is 0.exact * 10^point. */
    int point = (int)len + (shift < 0 ? shift : 0);
    while (len > 1 && exact[len - 1] == '0') {
        len--;
    }
    /* The fewest digits that read back as `magnitude`; 17 always do. */
    char digits[18];
    char text[40];
    for (size_t keep = 1; keep <= 17; keep++) {
        size_t n = keep < len ? keep : len;
        int carried = round_digits(exact, len, n, digits);
        while (n > 1 && digits[n - 1] == '0') {
            n--;
        }
        strbuf candidate = {0};
        append_number(&candidate, false, digits, n, point + carried);
        bool same = false;
        if (!candidate.failed && candidate.len < sizeof text) {
            memcpy(text, candidate.data, candidate.len);
            text[candidate.len] = '\0';
            same = strtod(text, NULL) == magnitude;
        }
        strbuf_free(&candidate);
        if (same || keep == 17 || n == len) {
            append_number(buf, negative, digits, n, point + carried);
            return true;
        }
    }
    return true;
}

char *strbuf_take(strbuf *buf, size_t *len_out) {
    if (!strbuf_reserve(buf, 0)) {
        strbuf_free(buf);
        return NULL;
    }
    buf->data[buf->len] = '\0';
    char *data = buf->data;
    if (len_out != NULL) {
        *len_out = buf->len;
    }
    buf->data = NULL;
    buf->len = buf->cap = 0;
    return data;
}

void strbuf_free(strbuf *buf) {
    free(buf->data);
    buf->data = NULL;
    buf->len = buf->cap = 0;
    buf->failed = false;
}

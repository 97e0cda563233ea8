/*
 * c-hash: checksums and byte encodings as Corral tools, written in C.
 *
 * Tools: sha256_hash, hmac_sha256, crc32_checksum and transcode_bytes. Each
 * takes its bytes as text in one of four encodings (utf8, hex, base64,
 * base64url), so that a model can hash or convert binary data it only has in
 * encoded form.
 *
 * The bindings (plugin.h, plugin.c) are generated from wit/ by `wit-bindgen c`
 * at build time (plugins/build-c). Ownership follows the canonical ABI as
 * wit-bindgen's C generator implements it: the arguments of an exported
 * function belong to it (it must free them), and everything it returns must be
 * malloc'ed, because the generated post-return function frees it.
 *
 * Nothing in this plugin uses stdio (the printf family): in wasi-libc it
 * brings in stdout and with it WASI imports (fd_write, fd_seek, fd_close),
 * which the adapter turns into wasi:cli, wasi:io and wasi:filesystem imports.
 * Without them the component imports only the Corral host interface. Messages
 * are built with the strbuf helpers in json.h instead.
 */
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "json.h"
#include "plugin.h"

/* ------------------------------------------------------------- schemas */

/* The `enum` of byte encodings, shared by every input schema. */
#define ENCODING_ENUM "\"enum\":[\"utf8\",\"hex\",\"base64\",\"base64url\"]"

#define ENCODING_PROPERTY(name, what)                                                                              \
    "\"" name "\":{\"type\":\"string\"," ENCODING_ENUM ",\"default\":\"utf8\","                                   \
    "\"description\":\"How " what " is written: utf8 (plain text, the default), hex, base64 or base64url. "       \
    "Whitespace inside hex and base64 is ignored; base64 padding is optional.\"}"

static const char sha256_input_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"data\":{\"type\":\"string\",\"description\":\"The bytes to hash, written in `encoding`.\"},"
    ENCODING_PROPERTY("encoding", "data")
    "},\"required\":[\"data\"],\"additionalProperties\":false}";

static const char sha256_output_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"algorithm\":{\"const\":\"SHA-256\"},"
    "\"hex\":{\"type\":\"string\",\"pattern\":\"^[0-9a-f]{64}$\",\"description\":\"The digest in lowercase hex.\"},"
    "\"base64\":{\"type\":\"string\",\"description\":\"The digest in padded standard base64.\"},"
    "\"byte_length\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"How many bytes were hashed.\"}"
    "},\"required\":[\"algorithm\",\"hex\",\"base64\",\"byte_length\"],\"additionalProperties\":false}";

static const char hmac_input_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"key\":{\"type\":\"string\",\"description\":\"The secret key, written in `key_encoding`.\"},"
    "\"message\":{\"type\":\"string\",\"description\":\"The message to authenticate, written in "
    "`message_encoding`.\"},"
    ENCODING_PROPERTY("key_encoding", "key") ","
    ENCODING_PROPERTY("message_encoding", "message") ","
    "\"expected\":{\"type\":\"string\",\"description\":\"Optional: a MAC to check against, in hex or base64 "
    "(either alphabet). The result then says whether it matches.\"}"
    "},\"required\":[\"key\",\"message\"],\"additionalProperties\":false}";

static const char hmac_output_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"algorithm\":{\"const\":\"HMAC-SHA256\"},"
    "\"hex\":{\"type\":\"string\",\"pattern\":\"^[0-9a-f]{64}$\",\"description\":\"The MAC in lowercase hex.\"},"
    "\"base64\":{\"type\":\"string\",\"description\":\"The MAC in padded standard base64.\"},"
    "\"matches\":{\"type\":\"boolean\",\"description\":\"Present when `expected` was given: whether it equals the "
    "MAC.\"}"
    "},\"required\":[\"algorithm\",\"hex\",\"base64\"],\"additionalProperties\":false}";

static const char crc32_input_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"data\":{\"type\":\"string\",\"description\":\"The bytes to checksum, written in `encoding`.\"},"
    ENCODING_PROPERTY("encoding", "data")
    "},\"required\":[\"data\"],\"additionalProperties\":false}";

static const char crc32_output_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"hex\":{\"type\":\"string\",\"pattern\":\"^[0-9a-f]{8}$\",\"description\":\"The CRC-32 as 8 lowercase hex "
    "digits.\"},"
    "\"decimal\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":4294967295,\"description\":\"The CRC-32 as an "
    "unsigned 32-bit number.\"},"
    "\"byte_length\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"How many bytes were checksummed.\"}"
    "},\"required\":[\"hex\",\"decimal\",\"byte_length\"],\"additionalProperties\":false}";

static const char transcode_input_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"data\":{\"type\":\"string\",\"description\":\"The bytes to convert, written in `from`.\"},"
    "\"from\":{\"type\":\"string\"," ENCODING_ENUM ",\"description\":\"How `data` is written.\"},"
    "\"to\":{\"type\":\"string\"," ENCODING_ENUM ",\"description\":\"How to write the result. utf8 fails when "
    "the bytes are not valid UTF-8 text.\"}"
    "},\"required\":[\"data\",\"from\",\"to\"],\"additionalProperties\":false}";

static const char transcode_output_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"output\":{\"type\":\"string\",\"description\":\"The bytes written in `to`.\"},"
    "\"encoding\":{\"type\":\"string\"," ENCODING_ENUM "},"
    "\"byte_length\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"How many bytes were converted.\"}"
    "},\"required\":[\"output\",\"encoding\",\"byte_length\"],\"additionalProperties\":false}";

/* ------------------------------------------------------------- outcome */

/* What a tool produces before it is turned into a call-result. */
typedef struct {
    strbuf text;       /* the text content the model reads */
    strbuf structured; /* a JSON object, when has_structured */
    bool has_structured;
    bool is_error;
} outcome;

/*
 * Makes the outcome a tool execution error and returns the buffer to write
 * the message into: a sentence that tells the model what to fix.
 */
static strbuf *tool_error(outcome *out) {
    strbuf_free(&out->text);
    strbuf_free(&out->structured);
    out->has_structured = false;
    out->is_error = true;
    return &out->text;
}

/* Sends `message` to the host log (and to the client, at or above the level
 * it asked for). The host borrows the string for the duration of the call. */
static void host_log(corral_plugin_types_log_level_t level, strbuf *message) {
    if (message->data == NULL || message->failed) {
        strbuf_free(message);
        return;
    }
    plugin_string_t text = {(uint8_t *)message->data, message->len};
    corral_plugin_host_log(level, &text);
    strbuf_free(message);
}

/* ----------------------------------------------------------- arguments */

/*
 * The string argument `key`. Returns false (with a tool error) when it is
 * missing but required, or not a string; `*value` is NULL when it is absent
 * and optional.
 */
static bool string_arg(const json_value *args, const char *key, bool required, const json_value **value,
                       outcome *out) {
    const json_value *found = json_get(args, key);
    if (found == NULL) {
        if (required) {
            strbuf_concat(tool_error(out), "missing argument `", key, "`", NULL);
            return false;
        }
        *value = NULL;
        return true;
    }
    if (found->type != JSON_STRING) {
        strbuf_concat(tool_error(out), "argument `", key, "` must be a string", NULL);
        return false;
    }
    *value = found;
    return true;
}

/* The encoding named by argument `key`, or `fallback` when it is absent. */
static bool encoding_arg(const json_value *args, const char *key, bool required, byte_encoding fallback,
                         byte_encoding *encoding, outcome *out) {
    const json_value *name;
    if (!string_arg(args, key, required, &name, out)) {
        return false;
    }
    if (name == NULL) {
        *encoding = fallback;
        return true;
    }
    if (!encoding_from_name(name->as.string.bytes, name->as.string.len, encoding)) {
        strbuf_concat(tool_error(out), "argument `", key, "` must be one of utf8, hex, base64 or base64url",
                      NULL);
        return false;
    }
    return true;
}

/* Decodes argument `key`, written in the encoding named by `encoding_key`
 * (utf8 when absent). On success the caller owns `*bytes`. */
static bool bytes_arg(const json_value *args, const char *key, const char *encoding_key, uint8_t **bytes,
                      size_t *len, outcome *out) {
    const json_value *text;
    byte_encoding encoding;
    if (!string_arg(args, key, true, &text, out) ||
        !encoding_arg(args, encoding_key, false, ENCODING_UTF8, &encoding, out)) {
        return false;
    }
    strbuf error = {0};
    if (!decode_bytes(encoding, text->as.string.bytes, text->as.string.len, bytes, len, &error)) {
        strbuf *message = tool_error(out);
        strbuf_concat(message, "`", key, "` is ", error.data != NULL ? error.data : "not valid", NULL);
        strbuf_concat(message, " (set `", encoding_key, "` if it is written in another encoding)", NULL);
        strbuf_free(&error);
        return false;
    }
    return true;
}

/* Writes `"name":"<bytes in encoding>"` into a JSON object being built. */
static void write_encoded_member(strbuf *buf, const char *name, byte_encoding encoding, const uint8_t *bytes,
                                 size_t len) {
    strbuf error = {0};
    size_t text_len;
    char *text = encode_bytes(encoding, bytes, len, &text_len, &error);
    strbuf_free(&error);
    json_write_cstring(buf, name);
    strbuf_append_str(buf, ":");
    if (text == NULL) {
        /* Only on allocation failure (hex and base64 cannot fail otherwise):
         * make it sticky so that the call reports it. */
        buf->failed = true;
        return;
    }
    json_write_string(buf, text, text_len);
    free(text);
}

static void append_hex_bytes(strbuf *buf, const uint8_t *bytes, size_t len) {
    for (size_t i = 0; i < len; i++) {
        strbuf_append_hex(buf, bytes[i], 2, false);
    }
}

/* --------------------------------------------------------------- tools */

static void run_sha256_hash(const json_value *args, outcome *out) {
    uint8_t *data;
    size_t len;
    if (!bytes_arg(args, "data", "encoding", &data, &len, out)) {
        return;
    }
    uint8_t digest[SHA256_DIGEST_SIZE];
    sha256(data, len, digest);
    free(data);

    strbuf *s = &out->structured;
    strbuf_append_str(s, "{\"algorithm\":\"SHA-256\",");
    write_encoded_member(s, "hex", ENCODING_HEX, digest, sizeof digest);
    strbuf_append_str(s, ",");
    write_encoded_member(s, "base64", ENCODING_BASE64, digest, sizeof digest);
    strbuf_append_str(s, ",\"byte_length\":");
    json_write_uint(s, len);
    strbuf_append_str(s, "}");
    out->has_structured = true;

    strbuf_append_str(&out->text, "SHA-256 of ");
    strbuf_append_uint(&out->text, len);
    strbuf_append_str(&out->text, " bytes: ");
    append_hex_bytes(&out->text, digest, sizeof digest);

    strbuf log = {0};
    strbuf_append_str(&log, "sha256_hash: hashed ");
    strbuf_append_uint(&log, len);
    strbuf_append_str(&log, " bytes");
    host_log(CORRAL_PLUGIN_TYPES_LOG_LEVEL_DEBUG, &log);
}

/*
 * Decodes a MAC given as hex or base64 (either alphabet): the forms a person
 * is likely to paste. Hex is tried first because 64 hex digits are also valid
 * base64 (of 48 bytes, which then fails the length check anyway).
 */
static bool decode_expected_mac(const json_value *expected, uint8_t mac[SHA256_DIGEST_SIZE]) {
    static const byte_encoding tries[] = {ENCODING_HEX, ENCODING_BASE64, ENCODING_BASE64URL};
    for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++) {
        strbuf error = {0};
        uint8_t *bytes;
        size_t len;
        bool decoded = decode_bytes(tries[i], expected->as.string.bytes, expected->as.string.len, &bytes, &len,
                                    &error);
        strbuf_free(&error);
        if (!decoded) {
            continue;
        }
        bool fits = len == SHA256_DIGEST_SIZE;
        if (fits) {
            memcpy(mac, bytes, SHA256_DIGEST_SIZE);
        }
        free(bytes);
        if (fits) {
            return true;
        }
    }
    return false;
}

static void run_hmac_sha256(const json_value *args, outcome *out) {
    uint8_t *key, *message;
    size_t key_len, message_len;
    const json_value *expected;
    if (!string_arg(args, "expected", false, &expected, out)) {
        return;
    }
    uint8_t wanted[SHA256_DIGEST_SIZE];
    if (expected != NULL && !decode_expected_mac(expected, wanted)) {
        strbuf_append_str(tool_error(out), "`expected` must be a 32-byte HMAC-SHA256 written as 64 hex digits "
                                           "or as base64 (44 characters with padding, 43 without)");
        return;
    }
    if (!bytes_arg(args, "key", "key_encoding", &key, &key_len, out)) {
        return;
    }
    if (!bytes_arg(args, "message", "message_encoding", &message, &message_len, out)) {
        free(key);
        return;
    }
    uint8_t mac[SHA256_DIGEST_SIZE];
    hmac_sha256(key, key_len, message, message_len, mac);
    free(key);
    free(message);

    bool matches = false;
    if (expected != NULL) {
        /* Compare every byte so that the time taken does not depend on where
         * the first difference is. */
        uint8_t difference = 0;
        for (size_t i = 0; i < SHA256_DIGEST_SIZE; i++) {
            difference |= (uint8_t)(mac[i] ^ wanted[i]);
        }
        matches = difference == 0;
    }

    strbuf *s = &out->structured;
    strbuf_append_str(s, "{\"algorithm\":\"HMAC-SHA256\",");
    write_encoded_member(s, "hex", ENCODING_HEX, mac, sizeof mac);
    strbuf_append_str(s, ",");
    write_encoded_member(s, "base64", ENCODING_BASE64, mac, sizeof mac);
    if (expected != NULL) {
        strbuf_append_str(s, ",\"matches\":");
        json_write_bool(s, matches);
    }
    strbuf_append_str(s, "}");
    out->has_structured = true;

    strbuf_append_str(&out->text, "HMAC-SHA256: ");
    append_hex_bytes(&out->text, mac, sizeof mac);
    if (expected != NULL) {
        strbuf_append_str(&out->text, matches ? " (matches `expected`)" : " (does NOT match `expected`)");
    }

    strbuf log = {0};
    strbuf_append_str(&log, "hmac_sha256: ");
    strbuf_append_uint(&log, key_len);
    strbuf_append_str(&log, "-byte key, ");
    strbuf_append_uint(&log, message_len);
    strbuf_append_str(&log, "-byte message");
    host_log(CORRAL_PLUGIN_TYPES_LOG_LEVEL_DEBUG, &log);
}

static void run_crc32_checksum(const json_value *args, outcome *out) {
    uint8_t *data;
    size_t len;
    if (!bytes_arg(args, "data", "encoding", &data, &len, out)) {
        return;
    }
    uint32_t crc = crc32_ieee(data, len);
    free(data);

    strbuf *s = &out->structured;
    strbuf_append_str(s, "{\"hex\":\"");
    strbuf_append_hex(s, crc, 8, false);
    strbuf_append_str(s, "\",\"decimal\":");
    json_write_uint(s, crc);
    strbuf_append_str(s, ",\"byte_length\":");
    json_write_uint(s, len);
    strbuf_append_str(s, "}");
    out->has_structured = true;

    strbuf_append_str(&out->text, "CRC-32 of ");
    strbuf_append_uint(&out->text, len);
    strbuf_append_str(&out->text, " bytes: ");
    strbuf_append_hex(&out->text, crc, 8, false);
    strbuf_append_str(&out->text, " (");
    strbuf_append_uint(&out->text, crc);
    strbuf_append_str(&out->text, ")");

    strbuf log = {0};
    strbuf_append_str(&log, "crc32_checksum: ");
    strbuf_append_uint(&log, len);
    strbuf_append_str(&log, " bytes");
    host_log(CORRAL_PLUGIN_TYPES_LOG_LEVEL_DEBUG, &log);
}

static void run_transcode_bytes(const json_value *args, outcome *out) {
    byte_encoding to;
    if (!encoding_arg(args, "to", true, ENCODING_UTF8, &to, out)) {
        return;
    }
    /* `from` is required: check it before bytes_arg defaults it to utf8. */
    const json_value *from;
    if (!string_arg(args, "from", true, &from, out)) {
        return;
    }
    uint8_t *data;
    size_t len;
    if (!bytes_arg(args, "data", "from", &data, &len, out)) {
        return;
    }
    strbuf error = {0};
    size_t text_len;
    char *text = encode_bytes(to, data, len, &text_len, &error);
    free(data);
    if (text == NULL) {
        strbuf_concat(tool_error(out), "cannot write the result as ", encoding_name(to), ": ",
                      error.data != NULL ? error.data : "out of memory", NULL);
        strbuf_free(&error);
        return;
    }
    strbuf_append(&out->text, text, text_len);

    strbuf *s = &out->structured;
    strbuf_append_str(s, "{\"output\":");
    json_write_string(s, text, text_len);
    free(text);
    strbuf_append_str(s, ",\"encoding\":");
    json_write_cstring(s, encoding_name(to));
    strbuf_append_str(s, ",\"byte_length\":");
    json_write_uint(s, len);
    strbuf_append_str(s, "}");
    out->has_structured = true;

    strbuf log = {0};
    strbuf_append_str(&log, "transcode_bytes: ");
    strbuf_append_uint(&log, len);
    strbuf_concat(&log, " bytes from ", from->as.string.bytes, " to ", encoding_name(to), NULL);
    host_log(CORRAL_PLUGIN_TYPES_LOG_LEVEL_DEBUG, &log);
}

/* ------------------------------------------------------------ registry */

typedef struct {
    const char *name;
    const char *title;
    const char *description;
    const char *input_schema;
    const char *output_schema;
    void (*run)(const json_value *args, outcome *out);
} tool_def;

static const tool_def tool_defs[] = {
    {
        "sha256_hash",
        "SHA-256 hash",
        "Compute the SHA-256 digest of some bytes, given as plain text (utf8) or as hex, base64 or base64url. "
        "Returns the digest in hex and base64, and the number of bytes hashed. Fails if `data` is not valid "
        "in the given encoding.",
        sha256_input_schema,
        sha256_output_schema,
        run_sha256_hash,
    },
    {
        "hmac_sha256",
        "HMAC-SHA256",
        "Compute the HMAC-SHA256 message authentication code of a message under a secret key (RFC 2104), e.g. "
        "to check a webhook signature. Key and message may each be utf8, hex, base64 or base64url. Give "
        "`expected` (hex or base64) to check a MAC: the result then says whether it matches.",
        hmac_input_schema,
        hmac_output_schema,
        run_hmac_sha256,
    },
    {
        "crc32_checksum",
        "CRC-32 checksum",
        "Compute the CRC-32 checksum (IEEE 802.3, as used by zip, gzip and PNG) of some bytes given as utf8, "
        "hex, base64 or base64url. Returns it as 8 hex digits and as a number.",
        crc32_input_schema,
        crc32_output_schema,
        run_crc32_checksum,
    },
    {
        "transcode_bytes",
        "Convert between byte encodings",
        "Convert bytes from one text encoding to another: utf8 (plain text), hex, base64 (standard, padded) or "
        "base64url (URL-safe, unpadded). Use it to decode base64 or hex to text, or to encode text. Fails if "
        "`data` is not valid in `from`, or if the bytes are not UTF-8 text when `to` is utf8.",
        transcode_input_schema,
        transcode_output_schema,
        run_transcode_bytes,
    },
};

#define TOOL_COUNT (sizeof tool_defs / sizeof tool_defs[0])

/* ------------------------------------------------------------- exports */

static void set_some_string(plugin_option_string_t *option, const char *text) {
    option->is_some = text != NULL;
    if (text != NULL) {
        plugin_string_dup(&option->val, text);
    }
}

static void set_some_bool(plugin_option_bool_t *option, bool value) {
    option->is_some = true;
    option->val = value;
}

void exports_corral_plugin_tools_list(exports_corral_plugin_tools_list_tool_t *ret) {
    ret->len = TOOL_COUNT;
    ret->ptr = calloc(TOOL_COUNT, sizeof *ret->ptr);
    if (ret->ptr == NULL) {
        /* Out of memory in a fresh instance: nothing sensible to return. */
        abort();
    }
    for (size_t i = 0; i < TOOL_COUNT; i++) {
        const tool_def *def = &tool_defs[i];
        exports_corral_plugin_tools_tool_t *tool = &ret->ptr[i];
        plugin_string_dup(&tool->name, def->name);
        set_some_string(&tool->title, def->title);
        set_some_string(&tool->description, def->description);
        plugin_string_dup(&tool->input_schema, def->input_schema);
        set_some_string(&tool->output_schema, def->output_schema);

        tool->annotations.is_some = true;
        exports_corral_plugin_tools_tool_annotations_t *hints = &tool->annotations.val;
        set_some_string(&hints->title, def->title);
        set_some_bool(&hints->read_only_hint, true);
        set_some_bool(&hints->destructive_hint, false);
        set_some_bool(&hints->idempotent_hint, true);
        set_some_bool(&hints->open_world_hint, false);

        tool->icons.ptr = NULL;
        tool->icons.len = 0;
        tool->task_support.is_some = false;
    }
}

void exports_corral_plugin_tools_call(plugin_string_t *name, plugin_string_t *arguments,
                                      exports_corral_plugin_tools_call_result_t *ret) {
    outcome out = {0};
    const tool_def *def = NULL;
    for (size_t i = 0; i < TOOL_COUNT; i++) {
        if (strlen(tool_defs[i].name) == name->len && memcmp(tool_defs[i].name, name->ptr, name->len) == 0) {
            def = &tool_defs[i];
            break;
        }
    }

    json_value args;
    strbuf parse_error = {0};
    if (def == NULL) {
        /* The host only calls listed tools; this is for completeness. */
        strbuf *message = tool_error(&out);
        strbuf_append_str(message, "unknown tool `");
        strbuf_append(message, (const char *)name->ptr, name->len > 64 ? 64 : name->len);
        strbuf_append_str(message, "`");
    } else if (!json_parse((const char *)arguments->ptr, arguments->len, &args, &parse_error)) {
        strbuf_concat(tool_error(&out), "arguments are not valid JSON: ",
                      parse_error.data != NULL ? parse_error.data : "out of memory", NULL);
    } else {
        if (args.type != JSON_OBJECT) {
            strbuf_append_str(tool_error(&out), "arguments must be a JSON object");
        } else {
            def->run(&args, &out);
        }
        json_free(&args);
    }
    strbuf_free(&parse_error);
    plugin_string_free(name);
    plugin_string_free(arguments);

    if (out.is_error) {
        strbuf log = {0};
        strbuf_concat(&log, def != NULL ? def->name : "call", " failed: ",
                      out.text.data != NULL ? out.text.data : "", NULL);
        host_log(CORRAL_PLUGIN_TYPES_LOG_LEVEL_WARNING, &log);
    }

    size_t text_len;
    char *text = strbuf_take(&out.text, &text_len);
    size_t structured_len = 0;
    char *structured = out.has_structured ? strbuf_take(&out.structured, &structured_len) : NULL;
    strbuf_free(&out.structured);
    if (text == NULL || (out.has_structured && structured == NULL)) {
        /* An append ran out of memory: report that, not a partial result. */
        free(text);
        free(structured);
        structured = NULL;
        static const char message[] = "out of memory while building the result";
        text_len = sizeof message - 1;
        text = malloc(sizeof message);
        if (text == NULL) {
            abort();
        }
        memcpy(text, message, sizeof message);
        out.is_error = true;
    }

    ret->is_error = out.is_error;
    ret->structured_content.is_some = structured != NULL;
    if (structured != NULL) {
        ret->structured_content.val.ptr = (uint8_t *)structured;
        ret->structured_content.val.len = structured_len;
    }
    ret->content.len = 1;
    ret->content.ptr = calloc(1, sizeof *ret->content.ptr);
    if (ret->content.ptr == NULL) {
        abort();
    }
    corral_plugin_types_content_t *content = &ret->content.ptr[0];
    content->tag = CORRAL_PLUGIN_TYPES_CONTENT_TEXT;
    content->val.text.text.ptr = (uint8_t *)text;
    content->val.text.text.len = text_len;
    content->val.text.annotations.is_some = false;
}

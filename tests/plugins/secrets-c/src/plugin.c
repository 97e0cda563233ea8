/*
 * Test fixture: a C plugin, built by plugins/build-c (world
 * plugin-with-secrets), that reads its secrets through wasi:config/store.
 * Tool `secret` answers the value of the secret `name` (or `none`, for a
 * name it is not granted or that has no value); tool `secrets` the names
 * get-all returns, in its order. The input schema allows only names of
 * capitals and `_`, which the host checks before the call, so reading the
 * name needs no JSON library: it is the one string value of the arguments.
 */
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

static const char schema[] =
    "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"pattern\":\"^[A-Z_]{1,64}$\"}},"
    "\"required\":[\"name\"],\"additionalProperties\":false}";

/* A malloc'ed copy of len bytes, as the post-return function frees it. */
static plugin_string_t copy(const uint8_t *bytes, size_t len) {
    plugin_string_t out = {malloc(len ? len : 1), len};
    if (out.ptr == NULL) {
        abort();
    }
    memcpy(out.ptr, bytes, len);
    return out;
}

static void add_tool(exports_corral_plugin_tools_tool_t *tool, const char *name, const char *description,
                     const char *input_schema) {
    plugin_string_dup(&tool->name, name);
    tool->description.is_some = true;
    plugin_string_dup(&tool->description.val, description);
    plugin_string_dup(&tool->input_schema, input_schema);
}

void exports_corral_plugin_tools_list(exports_corral_plugin_tools_list_tool_t *ret) {
    ret->len = 2;
    ret->ptr = calloc(2, sizeof *ret->ptr); /* zeroed: every option none, every list empty */
    if (ret->ptr == NULL) {
        abort();
    }
    add_tool(&ret->ptr[0], "secret", "The value of one secret.", schema);
    add_tool(&ret->ptr[1], "secrets", "The names of the secrets.", "{\"type\":\"object\"}");
}

/* The error's message: wasi:config's error is upstream(string) or io(string). */
static plugin_string_t error_text(wasi_config_store_error_t *err) {
    plugin_string_t *message = err->tag == WASI_CONFIG_STORE_ERROR_UPSTREAM ? &err->val.upstream : &err->val.io;
    plugin_string_t text = copy(message->ptr, message->len);
    wasi_config_store_error_free(err);
    return text;
}

void exports_corral_plugin_tools_call(plugin_string_t *name, plugin_string_t *arguments,
                                      exports_corral_plugin_tools_call_result_t *ret) {
    plugin_string_t text;
    bool ok = true;
    wasi_config_store_error_t err;
    if (name->len == 6 && memcmp(name->ptr, "secret", 6) == 0) {
        /* {"name":"API_TOKEN"}: the bytes between the third and fourth quote. */
        const uint8_t *start = arguments->ptr, *end = arguments->ptr + arguments->len;
        for (int quotes = 0; start < end && quotes < 3; start++) {
            quotes += *start == '"';
        }
        const uint8_t *stop = memchr(start, '"', (size_t)(end - start));
        plugin_string_t key = copy(start, stop ? (size_t)(stop - start) : 0);
        plugin_option_string_t value;
        if (wasi_config_store_get(&key, &value, &err)) {
            text = value.is_some ? copy(value.val.ptr, value.val.len) : copy((const uint8_t *)"none", 4);
            plugin_option_string_free(&value);
        } else {
            text = error_text(&err);
            ok = false;
        }
        plugin_string_free(&key);
    } else {
        plugin_list_tuple2_string_string_t all;
        if (wasi_config_store_get_all(&all, &err)) {
            size_t len = 0;
            for (size_t i = 0; i < all.len; i++) {
                len += all.ptr[i].f0.len + 1;
            }
            text = (plugin_string_t){malloc(len ? len : 1), len ? len - 1 : 0};
            if (text.ptr == NULL) {
                abort();
            }
            uint8_t *at = text.ptr;
            for (size_t i = 0; i < all.len; i++) {
                memcpy(at, all.ptr[i].f0.ptr, all.ptr[i].f0.len);
                at += all.ptr[i].f0.len;
                *at++ = ',';
            }
            plugin_list_tuple2_string_string_free(&all);
        } else {
            text = error_text(&err);
            ok = false;
        }
    }
    plugin_string_free(name);
    plugin_string_free(arguments);
    ret->content.len = 1;
    ret->content.ptr = calloc(1, sizeof *ret->content.ptr);
    if (ret->content.ptr == NULL) {
        abort();
    }
    ret->content.ptr[0].tag = CORRAL_PLUGIN_TYPES_CONTENT_TEXT;
    ret->content.ptr[0].val.text.text = text;
    ret->structured_content.is_some = false;
    ret->is_error = !ok;
}

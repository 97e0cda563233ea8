/*
 * {{name}}: a Corral plugin written in C. This file speaks the plugin contract
 * (wit/plugin.wit, world `plugin`) through the bindings that `wit-bindgen c`
 * generates at build time (plugin.h); the tool itself is in greeting.c, and
 * json.c is a small strict JSON reader and writer.
 *
 * Ownership follows the canonical ABI as wit-bindgen's C generator implements
 * it: the arguments of an exported function belong to it (it frees them), and
 * everything it returns must be malloc'ed, because the generated post-return
 * function frees it.
 *
 * Nothing here uses stdio (the printf family): in wasi-libc it brings in
 * stdout and with it WASI imports, which Corral lists as what the plugin asks
 * for. Messages are built with the strbuf helpers of json.h instead.
 */
#include <stdlib.h>
#include <string.h>

#include "greeting.h"
#include "json.h"
#include "plugin.h"

static const char tool_name[] = "{{name}}";

/* The host checks every call's arguments against this schema before the
 * plugin runs. */
static const char input_schema[] =
    "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"description\":\"Who to greet.\"}},"
    "\"required\":[\"name\"],\"additionalProperties\":false}";

static void set_bool(plugin_option_bool_t *option, bool value) {
    option->is_some = true;
    option->val = value;
}

void exports_corral_plugin_tools_list(exports_corral_plugin_tools_list_tool_t *ret) {
    ret->len = 1;
    ret->ptr = calloc(1, sizeof *ret->ptr); /* zeroed: every option is none, every list empty */
    if (ret->ptr == NULL) {
        abort(); /* out of memory in a fresh instance: nothing sensible to return */
    }
    exports_corral_plugin_tools_tool_t *tool = &ret->ptr[0];
    plugin_string_dup(&tool->name, tool_name);
    tool->description.is_some = true;
    plugin_string_dup(&tool->description.val, "Say hello to someone by name.");
    plugin_string_dup(&tool->input_schema, input_schema);
    tool->annotations.is_some = true;
    set_bool(&tool->annotations.val.read_only_hint, true);
    set_bool(&tool->annotations.val.destructive_hint, false);
    set_bool(&tool->annotations.val.idempotent_hint, true);
    set_bool(&tool->annotations.val.open_world_hint, false);
}

void exports_corral_plugin_tools_call(plugin_string_t *name, plugin_string_t *arguments,
                                      exports_corral_plugin_tools_call_result_t *ret) {
    strbuf text = {0};
    bool ok = false;
    json_value args;
    if (name->len != strlen(tool_name) || memcmp(name->ptr, tool_name, name->len) != 0) {
        strbuf_append_str(&text, "unknown tool"); /* the host calls only listed tools */
    } else if (!json_parse((const char *)arguments->ptr, arguments->len, &args, &text)) {
        /* The host validated the arguments; json_parse said why they are not JSON. */
    } else {
        const json_value *who = json_get(&args, "name");
        if (who == NULL || who->type != JSON_STRING) {
            strbuf_append_str(&text, "`name` must be a string");
        } else {
            ok = greet(who->as.string.bytes, who->as.string.len, &text);
        }
        json_free(&args);
    }
    plugin_string_free(name);
    plugin_string_free(arguments);

    if (ok) {
        /* Borrowed by the host for the call: not freed by it. */
        plugin_string_t message;
        plugin_string_set(&message, "{{name}}: greeted someone");
        corral_plugin_host_log(CORRAL_PLUGIN_TYPES_LOG_LEVEL_INFO, &message);
    }

    size_t len;
    char *bytes = strbuf_take(&text, &len);
    ret->content.len = 1;
    ret->content.ptr = calloc(1, sizeof *ret->content.ptr);
    if (bytes == NULL || ret->content.ptr == NULL) {
        abort(); /* out of memory */
    }
    ret->content.ptr[0].tag = CORRAL_PLUGIN_TYPES_CONTENT_TEXT;
    ret->content.ptr[0].val.text.text = (plugin_string_t){(uint8_t *)bytes, len};
    ret->structured_content.is_some = false;
    ret->is_error = !ok;
}

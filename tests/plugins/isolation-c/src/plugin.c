/*
 * Test fixture: a C plugin, built by plugins/build-c, whose tool `visit`
 * keeps what it was called with in static storage (a counter, the marks
 * written one after another, the last mark) and answers with all of it.
 * Each call runs in an instance no call ran in before, so every answer
 * holds its own call alone: {"calls":1,"marks":["MARK"],"last":null}. It
 * also logs its mark, which must reach the call that made it. The input
 * schema allows only short marks of letters and digits, which the host
 * checks before the call, so reading the mark needs no JSON library: it is
 * the one string value of the arguments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

static const char schema[] =
    "{\"type\":\"object\",\"properties\":{\"mark\":{\"type\":\"string\",\"pattern\":\"^[a-z0-9]{1,16}$\"}},"
    "\"required\":[\"mark\"],\"additionalProperties\":false}";

static int calls;
static char marks[1024];
static char last[17];

void exports_corral_plugin_tools_list(exports_corral_plugin_tools_list_tool_t *ret) {
    ret->len = 1;
    ret->ptr = calloc(1, sizeof *ret->ptr); /* zeroed: every option none, every list empty */
    if (ret->ptr == NULL) {
        abort();
    }
    plugin_string_dup(&ret->ptr[0].name, "visit");
    ret->ptr[0].description.is_some = true;
    plugin_string_dup(&ret->ptr[0].description.val, "Leaves a mark in static storage.");
    plugin_string_dup(&ret->ptr[0].input_schema, schema);
}

void exports_corral_plugin_tools_call(plugin_string_t *name, plugin_string_t *arguments,
                                      exports_corral_plugin_tools_call_result_t *ret) {
    /* {"mark":"m0"}: the bytes between the third and fourth quote. */
    const uint8_t *start = arguments->ptr, *end = arguments->ptr + arguments->len;
    for (int quotes = 0; start < end && quotes < 3; start++) {
        quotes += *start == '"';
    }
    const uint8_t *stop = memchr(start, '"', (size_t)(end - start));
    size_t len = stop ? (size_t)(stop - start) : 0;
    char mark[17] = {0};
    memcpy(mark, start, len < 16 ? len : 16);

    calls++;
    size_t used = strlen(marks);
    snprintf(marks + used, sizeof marks - used, "%s\"%s\"", used ? "," : "", mark);
    char seen[1200];
    if (last[0]) {
        snprintf(seen, sizeof seen, "{\"calls\":%d,\"marks\":[%s],\"last\":\"%s\"}", calls, marks, last);
    } else {
        snprintf(seen, sizeof seen, "{\"calls\":%d,\"marks\":[%s],\"last\":null}", calls, marks);
    }
    memcpy(last, mark, sizeof last);

    char said[64];
    snprintf(said, sizeof said, "visited by %s", mark);
    plugin_string_t message = {(uint8_t *)said, strlen(said)};
    corral_plugin_host_log(CORRAL_PLUGIN_TYPES_LOG_LEVEL_INFO, &message);

    plugin_string_free(name);
    plugin_string_free(arguments);
    ret->content.len = 1;
    ret->content.ptr = calloc(1, sizeof *ret->content.ptr);
    if (ret->content.ptr == NULL) {
        abort();
    }
    ret->content.ptr[0].tag = CORRAL_PLUGIN_TYPES_CONTENT_TEXT;
    plugin_string_dup(&ret->content.ptr[0].val.text.text, seen);
    ret->structured_content.is_some = false;
    ret->is_error = false;
}

/*
 * What the `{{name}}` tool does, apart from the plugin contract (plugin.c):
 * plain C that tests/test_greeting.c tests natively (./test).
 */
#ifndef GREETING_H
#define GREETING_H

#include <stdbool.h>
#include <stddef.h>

#include "json.h"

/*
 * Appends the greeting for `name` (`len` bytes of UTF-8) to `out` and returns
 * true; or, when the name is blank, appends a message for the model and
 * returns false (a tool execution error).
 */
bool greet(const char *name, size_t len, strbuf *out);

#endif

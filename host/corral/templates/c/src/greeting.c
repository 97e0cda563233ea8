#include "greeting.h"

/* Spaces, tabs and line breaks. */
static bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

bool greet(const char *name, size_t len, strbuf *out) {
    while (len > 0 && is_blank(name[0])) {
        name++;
        len--;
    }
    while (len > 0 && is_blank(name[len - 1])) {
        len--;
    }
    if (len == 0) {
        strbuf_append_str(out, "`name` must not be blank");
        return false;
    }
    strbuf_append_str(out, "Hello, ");
    strbuf_append(out, name, len);
    strbuf_append_str(out, "!");
    return true;
}

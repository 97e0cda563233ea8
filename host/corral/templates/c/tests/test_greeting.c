/*
 * Unit tests of greeting.c, compiled natively with the machine's C compiler
 * (no bindings or component needed): ./test
 */
#include <stdio.h>
#include <string.h>

#include "greeting.h"

static int checks = 0;
static int failures = 0;

static void expect(const char *name, bool want_ok, const char *want_text) {
    checks++;
    strbuf out = {0};
    bool ok = greet(name, strlen(name), &out);
    const char *text = out.data != NULL ? out.data : "";
    if (ok != want_ok || strcmp(text, want_text) != 0) {
        fprintf(stderr, "greet(\"%s\"): got %s \"%s\", want %s \"%s\"\n", name, ok ? "ok" : "error", text,
                want_ok ? "ok" : "error", want_text);
        failures++;
    }
    strbuf_free(&out);
}

int main(void) {
    expect("Ada", true, "Hello, Ada!");
    expect("  Ada\n", true, "Hello, Ada!");
    expect(" \t", false, "`name` must not be blank");
    printf("%d passed, %d failed\n", checks - failures, failures);
    return failures == 0 ? 0 : 1;
}

/*
 * json_write_double against the C library's own exact printf: every double
 * it writes reads back as itself, with the fewest significant digits that
 * do, in JavaScript's notation; infinities and NaN are refused. Native only
 * (it uses stdio to check; json.c itself does not).
 */
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

static char *written(double value, bool *ok) {
    strbuf buf = {0};
    *ok = json_write_double(&buf, value);
    size_t len;
    char *text = strbuf_take(&buf, &len);
    return text;
}

static void expect(double value, const char *want) {
    bool ok;
    char *got = written(value, &ok);
    if (!ok || strcmp(got, want) != 0) {
        fprintf(stderr, "json_write_double(%.17g) wrote \"%s\", want \"%s\"\n", value, got, want);
        failures++;
    }
    free(got);
}

/* The fewest significant digits with which printf's exact %e reads back. */
static int shortest_digits(double value) {
    char text[64];
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(text, sizeof text, "%.*e", digits - 1, value);
        if (strtod(text, NULL) == value) {
            return digits;
        }
    }
    return 17;
}

static int significant_digits(const char *text) {
    int count = 0, leading = 1;
    for (const char *c = text; *c && *c != 'e'; c++) {
        if (*c < '0' || *c > '9') {
            continue;
        }
        if (leading && *c == '0') {
            continue;
        }
        leading = 0;
        count++;
    }
    /* Trailing zeros of an integer written out in full are not significant. */
    const char *end = strchr(text, 'e') ? strchr(text, 'e') : text + strlen(text);
    if (!strchr(text, '.') && !strchr(text, 'e')) {
        while (end > text && end[-1] == '0' && count > 1) {
            end--;
            count--;
        }
    }
    return count;
}

static void check_round_trip(double value) {
    bool ok;
    char *got = written(value, &ok);
    if (!ok || strtod(got, NULL) != value || significant_digits(got) != shortest_digits(value)) {
        fprintf(stderr, "json_write_double(%.17g) wrote \"%s\" (%d digits, shortest %d)\n", value,
                got, significant_digits(got), shortest_digits(value));
        failures++;
    }
    free(got);
}

int main(void) {
    expect(0, "0");
    expect(-0.0, "-0");
    expect(1, "1");
    expect(-2.5, "-2.5");
    expect(0.1, "0.1");
    expect(0.1 + 0.2, "0.30000000000000004");
    expect(100, "100");
    expect(1e20, "100000000000000000000");
    expect(1e21, "1e+21");
    expect(123456789012345680000.0, "123456789012345680000");
    expect(1e-6, "0.000001");
    expect(1.5e-7, "1.5e-7");
    expect(5e-324, "5e-324");
    expect(1.7976931348623157e308, "1.7976931348623157e+308");
    expect(2.2250738585072014e-308, "2.2250738585072014e-308");
    expect(9007199254740993.0, "9007199254740992");
    expect(0.000123, "0.000123");
    expect(299792.458, "299792.458");

    const double refused[] = {INFINITY, -INFINITY, NAN};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        strbuf buf = {0};
        if (json_write_double(&buf, refused[i]) || buf.len != 0) {
            fprintf(stderr, "json_write_double(%g) was not refused\n", refused[i]);
            failures++;
        }
        strbuf_free(&buf);
    }

    /* Random bit patterns cover every exponent; random short decimals the
     * values people write. */
    srand(28);
    for (int i = 0; i < 20000; i++) {
        uint64_t bits = 0;
        for (int b = 0; b < 4; b++) {
            bits = bits << 16 | (uint64_t)(rand() & 0xFFFF);
        }
        double value;
        memcpy(&value, &bits, sizeof value);
        if (isfinite(value)) {
            check_round_trip(value);
        }
        check_round_trip((double)(rand() % 100000) / 1000.0);
    }

    if (failures != 0) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("json_write_double: all checks passed\n");
    return 0;
}

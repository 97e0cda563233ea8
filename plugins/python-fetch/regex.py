"""A stand-in for the `regex` package (a C extension, which cannot load in
the component), covering the one call readabilipy makes:
`regex.sub(r"\\s+", " ", text)` in simplifiers/text.py.

`regex`'s `\\s` is Unicode's White_Space property; the standard library's
`re` also counts U+001C..U+001F as space. So `\\s` is spelled out as the
White_Space class (checked against regex 2026.11.19 over every code point),
and the substitution is then `re`'s. Any other use fails loudly.
"""

import re

WHITE_SPACE = "[\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"


def sub(pattern, repl, string, count=0, flags=0):
    if pattern != r"\s+" or flags:
        raise NotImplementedError(f"the regex shim only does sub(r'\\s+', ...), not {pattern!r}")
    return re.sub(WHITE_SPACE + "+", repl, string, count=count)

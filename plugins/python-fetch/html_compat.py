"""The HTML tokenizer the original's markdown depends on, made the same here.

markdownify parses readabilipy's simplified HTML with the standard
library's html.parser, and readabilipy keeps a page's title as
`<title><p>Title</p></title>`. CPython 3.9.23, 3.10.18, 3.11.13, 3.12.11,
3.13.6 and 3.14 (a security fix, gh-135661) tokenize the content of
`<title>` and `<textarea>` as text ("escapable raw text",
`HTMLParser.RCDATA_CONTENT_ELEMENTS`); earlier releases tokenize it as
markup. The plugin's CPython (componentize-py's) is 3.14, the reference's
(tests/reference/fetch/setup, the system python3) 3.11.7: there the
original writes the title as a paragraph, on 3.14 as the literal text
`<p>Title</p>`.

The plugin takes the earlier behaviour, which gives the clean markdown and
matches the reference: no element is tokenized as escapable raw text. (On a
reference Python with the later behaviour the comparison cannot hold: its
driver, tests/reference/fetch/compare.py, refuses to run and says why.)
`script` and `style` stay raw text as in every release (readabilipy
removes them anyway). Importing this module is what applies it; fetcher.py
imports it before markdownify.
"""

import html.parser

html.parser.HTMLParser.RCDATA_CONTENT_ELEMENTS = ()

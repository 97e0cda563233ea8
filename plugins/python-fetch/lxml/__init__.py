"""A stand-in for `lxml` (a C extension, which cannot load in the component).

readabilipy imports `lxml.html` only in extractors/extract_element.py, to
find a page's title and date by XPath for simple_json_from_html_string's
"title" and "date" fields. The fetch tool uses only its "content" field,
which comes from html5lib and BeautifulSoup and never from lxml, so
`lxml.html.fromstring` here returns a document in which every XPath finds
nothing (title and date come out None).

There is deliberately no `lxml.etree`: BeautifulSoup registers its lxml
tree builders only when `from lxml import etree` succeeds, and every parser
the fetch path names ("html5lib", "html.parser") stays the one it asks for.
"""

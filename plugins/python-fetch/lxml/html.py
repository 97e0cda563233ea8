"""`lxml.html.fromstring` for readabilipy's title and date lookups: a
document in which no XPath matches (see lxml/__init__.py)."""


class _Nothing:
    def xpath(self, _path):
        return []


def fromstring(_html):
    return _Nothing()

"""The query's terms marked in a document's text, so a person judging sees at a glance where
the document speaks to the query.  A term is a word of three or more letters or digits that
is not a common function word; a document word is marked when it starts with a term (so
"record" marks "recording"), compared case-insensitively."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)
#: function words never marked (English; a query term in any other language is kept)
STOPWORDS = frozenset("""
about above after again all also and any are because been before being between both but
can could did does doing down during each few for from further had has have having her here
hers him his how into its itself just more most not now off once only other our out over own
same she should some such than that the their them then there these they this those through
too under until very was were what when where which while who whom why will with would you
your discussion discuss summarize summarise""".split())


def terms(query: str) -> list[str]:
    """The query's markable terms, lower-cased, in order, each once."""
    seen: list[str] = []
    for word in _WORD.findall(query.lower()):
        if len(word) >= 3 and word not in STOPWORDS and word not in seen:
            seen.append(word)
    return seen


def segments(text: str, query: str) -> list[tuple[str, bool]]:
    """``text`` cut into ``(piece, marked)`` runs that join back to ``text`` exactly."""
    wanted = terms(query)
    out: list[tuple[str, bool]] = []
    last = 0
    for match in _WORD.finditer(text):
        word = match.group().lower()
        if any(word.startswith(t) for t in wanted):
            if match.start() > last:
                out.append((text[last:match.start()], False))
            out.append((match.group(), True))
            last = match.end()
    if last < len(text):
        out.append((text[last:], False))
    return out

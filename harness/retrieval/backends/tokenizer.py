"""The lexical leg's tokeniser, stated so a BM25 number can be reproduced elsewhere.

Lowercase the text, take regex tokens ``(?u)\\b\\w\\w+\\b`` (runs of two or more Unicode
word characters: single characters and punctuation are dropped), remove Lucene's 33-word
English stop set (``bm25s.stopwords.STOPWORDS_EN``), no stemming.  Queries and documents
go through the same function.
"""

from __future__ import annotations

import re

TOKEN_PATTERN = r"(?u)\b\w\w+\b"
_TOKEN_RE = re.compile(TOKEN_PATTERN)

DESCRIPTION = ("lowercase; regex tokens (?u)\\b\\w\\w+\\b; English stop set "
               "(Lucene's 33 words, bm25s STOPWORDS_EN); no stemming")


#: Lucene's English stop set as bm25s ships it (``bm25s.stopwords.STOPWORDS_EN``), written out
#: so tokenising never imports bm25s (and numba with it); a test keeps the two equal
STOPWORDS_EN = ("a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in",
                "into", "is", "it", "no", "not", "of", "on", "or", "such", "that", "the",
                "their", "then", "there", "these", "they", "this", "to", "was", "will", "with")


def stopwords() -> frozenset[str]:
    return frozenset(STOPWORDS_EN)


class Tokenizer:
    """``tokenize(text) -> list[str]`` with the rules in the module docstring."""

    def __init__(self):
        self.stopwords = stopwords()

    def __call__(self, text: str) -> list[str]:
        stop = self.stopwords
        return [t for t in _TOKEN_RE.findall(text.lower()) if t not in stop]

    def block(self) -> dict:
        return {"lowercase": True, "pattern": TOKEN_PATTERN,
                "stopwords": f"english ({len(self.stopwords)} words)", "stemmer": None,
                "description": DESCRIPTION}

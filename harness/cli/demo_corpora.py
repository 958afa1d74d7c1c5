"""The demo's second synthetic corpus: another configuration of the generator with a
different profile, so corpus agreement (the Agreement page) has two corpora to compare.

It is the generator's corpus for another seed (other teams, people, topics and gold) with
another topic vocabulary: every word of the generator's topic phrases and topic word lists
is spelt backwards (``carrier rate card`` -> ``reirrac etar drac``) in every turn and every
query.  The words stay consistent between queries and transcripts, so BM25 matches as
before, while a dense model meets words it never saw in training: the arms rank
differently on the two corpora, which is what an agreement study measures.  File and query
ids are renamed (``syn`` -> ``alt``) so both corpora share one index, gold spans are turn
indices and survive the rewrite unchanged, and only rank-scored queries are kept (the
aggregation queries are answered on the first corpus).  Its digest is computed from the
rewritten content, so its provenance names exactly what was indexed.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

#: the second corpus's name (and id prefix) in every table
NAME = "synthetic-alt"
ID_PREFIX = "alt"


def _vocabulary() -> dict[str, str]:
    from ingestion.synthetic import vocab

    words = set()
    for phrase, related in vocab.TOPICS.items():
        words.update(re.findall(r"[A-Za-z]+", phrase))
        for word in related:
            words.update(re.findall(r"[A-Za-z]+", word))
    return {w.lower(): w.lower()[::-1] for w in words if len(w) > 2}


def _rewriter():
    table = _vocabulary()
    pattern = re.compile(r"\b(" + "|".join(sorted(map(re.escape, table), key=len,
                                                      reverse=True)) + r")\b", re.IGNORECASE)

    def rewrite(text: str) -> str:
        return pattern.sub(lambda m: table[m.group(0).lower()], text)

    return rewrite


def _rename(value: str) -> str:
    return ID_PREFIX + value[3:] if value.startswith("syn") else value


def alternate_corpus(path: Path):
    """The second corpus (module docstring) from the synthetic corpus at ``path``."""
    from ingestion.attribution import generated_source_info
    from ingestion.corpus import MEETING
    from ingestion.digest import corpus_sha256
    from ingestion.loaders.synthetic import load_synthetic

    base = load_synthetic(path, name=NAME)
    rewrite = _rewriter()
    files = tuple(dataclasses.replace(f, file_id=_rename(f.file_id),
                                      title=rewrite(f.title) if f.title else f.title)
                  for f in base.files)
    turns = tuple(dataclasses.replace(t, file_id=_rename(t.file_id), text=rewrite(t.text))
                  for t in base.turns)
    queries = tuple(dataclasses.replace(
        q, query_id=_rename(q.query_id), text=rewrite(q.text),
        gold_spans=tuple((_rename(f), a, b) for f, a, b in q.gold_spans),
        gold_files=tuple(_rename(f) for f in q.gold_files))
        for q in base.queries if q.scored_on == "rank")
    sha = corpus_sha256(MEETING, files, turns, (), queries)
    version = f"{base.source.version}; topic vocabulary spelt backwards; ids {ID_PREFIX}*"
    return dataclasses.replace(base, source=generated_source_info(NAME, sha, version=version),
                               files=files, turns=turns, queries=queries,
                               notes=(*base.notes, ("derived", "topic vocabulary spelt "
                                                                "backwards (harness demo)")))

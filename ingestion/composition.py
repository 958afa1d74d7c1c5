"""Corpus composition under file-level BM25: how many *other* files look as relevant as the gold.

The methodology's finding: near-duplicate structure (137 Product meetings from one scenario)
moves R@1 more than corpus size does.  For each rank-scored query with gold files, every file
of its group (a domain, or the whole corpus) is scored by BM25 (Robertson & Zaragoza 2009,
Lucene variant as implemented by ``bm25s``, k1=1.5, b=0.75, English stopwords) over its title,
roster and transcript.  Reported per group:

- ``r_at_1``: share of queries whose top file is a gold file;
- ``median_gold_rank``: median over queries of the best gold file's rank, where a non-gold
  file with an *equal* score counts as ranked above it (ties are not resolved in the gold's
  favour);
- ``mean_near_duplicates``: mean number of non-gold files scoring >= ``threshold`` (0.9) x
  the best gold file's score; ``near_duplicate_rate`` divides each count by the number of
  non-gold files first.

A gold score of 0 (no query term in any gold file) makes every other file a near-duplicate.
"""

from __future__ import annotations

import logging
import statistics

from ingestion.corpus import DOCUMENTS, Corpus

THRESHOLD = 0.9
ALL = "all"


def file_texts(corpus: Corpus) -> dict[str, str]:
    """The text BM25 scores for each file: title, roster, then the transcript (or document)."""
    if corpus.kind == DOCUMENTS:
        return {d.doc_id: f"{d.title}\n{d.text}" for d in corpus.documents}
    by_file = corpus.turns_by_file()
    out = {}
    for record in corpus.files:
        head = " ".join(x for x in (record.title or "", " ".join(record.roster)) if x)
        body = "\n".join(t.text for t in by_file.get(record.file_id, []))
        out[record.file_id] = f"{head}\n{body}"
    return out


def _groups(corpus: Corpus) -> dict[str, list[str]]:
    if corpus.kind == DOCUMENTS:
        return {ALL: sorted(d.doc_id for d in corpus.documents)}
    groups: dict[str, list[str]] = {}
    for record in corpus.files:
        groups.setdefault(record.domain or ALL, []).append(record.file_id)
    if len(groups) > 1:
        groups[ALL] = [f.file_id for f in corpus.files]
    return {k: sorted(v) for k, v in sorted(groups.items())}


def _import_bm25s():
    import bm25s

    # bm25s sets its own logger to DEBUG on import and logs every index build there
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    return bm25s


def _bm25(texts: list[str]):
    bm25s = _import_bm25s()

    retriever = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    tokens = bm25s.tokenize(texts, stopwords="en", return_ids=False, show_progress=False)
    retriever.index(tokens, show_progress=False)
    return retriever


def score_group(corpus: Corpus, file_ids: list[str], texts: dict[str, str],
                threshold: float = THRESHOLD) -> dict:
    """Composition figures for the queries whose gold files all lie in ``file_ids``."""
    bm25s = _import_bm25s()

    members = set(file_ids)
    queries = [q for q in sorted(corpus.rank_queries(), key=lambda q: q.query_id)
               if q.gold_files and set(q.gold_files) <= members]
    row = {"files": len(file_ids), "queries": len(queries), "r_at_1": None,
           "median_gold_rank": None, "mean_near_duplicates": None, "near_duplicate_rate": None}
    if not queries or len(file_ids) < 2:
        return row
    retriever = _bm25([texts[f] for f in file_ids])
    hits, ranks, near, rates = 0, [], [], []
    for query in queries:
        tokens = bm25s.tokenize(query.text, stopwords="en", return_ids=False, show_progress=False)[0]
        scores = [float(s) for s in retriever.get_scores(tokens)]
        gold = set(query.gold_files)
        gold_score = max(s for f, s in zip(file_ids, scores) if f in gold)
        others = [s for f, s in zip(file_ids, scores) if f not in gold]
        above = sum(1 for s in others if s >= gold_score)
        hits += above == 0
        ranks.append(above + 1)
        close = sum(1 for s in others if s >= threshold * gold_score)
        near.append(close)
        rates.append(close / len(others) if others else 0.0)
    row.update(r_at_1=hits / len(queries), median_gold_rank=float(statistics.median(ranks)),
               mean_near_duplicates=statistics.fmean(near),
               near_duplicate_rate=statistics.fmean(rates))
    return row


def composition(corpus: Corpus, threshold: float = THRESHOLD) -> dict:
    """Per-group composition report of ``corpus`` (module docstring)."""
    texts = file_texts(corpus)
    groups = {name: score_group(corpus, ids, texts, threshold)
              for name, ids in _groups(corpus).items()}
    return {"corpus": corpus.name, "tier": corpus.source.tier, "threshold": threshold,
            "scoring": "bm25s lucene k1=1.5 b=0.75, English stopwords, file level",
            "groups": groups}

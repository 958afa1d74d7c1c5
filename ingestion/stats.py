"""What a loaded corpus holds, as one JSON-able dict (``python -m ingestion stats``)."""

from __future__ import annotations

from ingestion.corpus import DOCUMENTS, Corpus


def _count(values) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return {k: out[k] for k in sorted(out)}


def corpus_stats(corpus: Corpus) -> dict:
    """Files, turns or documents, words, queries per class, domains, splits, provenance."""
    src = corpus.source
    out = {
        "corpus": corpus.name, "kind": corpus.kind, "licence": src.licence, "tier": src.tier,
        "version": src.version, "sha256": src.sha256, "registry_source": src.registry_source,
        "evidence": src.evidence,
        "queries": len(corpus.queries),
        "queries_per_class": _count(q.query_class or "none" for q in corpus.queries),
        "scored_on": _count(q.scored_on for q in corpus.queries),
        "notes": {k: v for k, v in corpus.notes},
    }
    if corpus.kind == DOCUMENTS:
        out.update(files=len(corpus.documents), documents=len(corpus.documents),
                   words=sum(len(d.text.split()) for d in corpus.documents),
                   judgements=sum(len(q.gold_docs) for q in corpus.queries))
        return out
    out.update(
        files=len(corpus.files), turns=len(corpus.turns),
        words=sum(t.words for t in corpus.turns),
        domains=_count(f.domain for f in corpus.files if f.domain is not None),
        splits=_count(f.split for f in corpus.files if f.split is not None),
        timing=_count(f.timing for f in corpus.files),
        dated_files=sum(1 for f in corpus.files if f.recorded_date),
        gold_spans=sum(len(q.gold_spans) for q in corpus.queries),
    )
    return out

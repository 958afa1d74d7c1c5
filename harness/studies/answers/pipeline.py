"""One answers run: gold queries of the corpora -> answerer over the store -> scores -> document.

Computing is separate from writing: :func:`run_answers` returns the document (and its
Markdown); :mod:`harness.cli.answer` writes them.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass

from harness.studies.answers.answer import Answer
from harness.studies.answers.answerers import NoneAnswerer, describe
from harness.studies.answers.document import build_document, corpus_block, render_markdown
from harness.studies.answers.grading import AnswerPolicy, GoldAnswer, answer_rows, evaluate, gold_from_query

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AnswerRun:
    document: dict
    markdown: str
    #: ``(corpus, query_id) -> Answer`` as the answerer returned them
    answers: dict


def gold_answers(corpus) -> list[GoldAnswer]:
    """The corpus's queries scored on their answer, validated, sorted by query id."""
    return [gold_from_query(q) for q in sorted(corpus.queries, key=lambda q: q.query_id)
            if q.scored_on == "answer"]


def answer_all(answerer, store, golds, *, progress: bool = True) -> dict[tuple[str, str], Answer]:
    """Ask ``answerer`` every gold question (text and corpus only; never the gold)."""
    from tqdm import tqdm

    out = {}
    for g in tqdm(golds, desc=f"answering ({answerer.name})", unit="query", file=sys.stderr,
                  disable=None if progress else True):
        out[(g.corpus, g.query_id)] = answerer.answer(g.question, store, g.corpus)
    return out


def run_answers(corpora, answerer, policy: AnswerPolicy, store=None, *,
                progress: bool = True) -> AnswerRun:
    """Answer and score every aggregation query of ``corpora`` (loaded, and already filled
    into ``store`` when the answerer needs one)."""
    names = [c.name for c in corpora]
    if len(set(names)) != len(names):
        raise ValueError(f"corpus names repeat: {sorted(names)}; name each corpus once")
    bad = sorted(n for n in names if "+" in n or not n)
    if bad:
        raise ValueError(f"corpus names {bad} are empty or contain '+' (it joins pooled names)")
    if answerer.needs_store and store is None:
        raise ValueError(f"the {answerer.name} answerer needs a transcript store")
    golds, blocks = [], []
    for corpus in corpora:
        mine = gold_answers(corpus)
        golds += mine
        blocks.append(corpus_block(corpus, len(mine)))
    if not golds:
        raise ValueError(f"corpora {sorted(names)} hold no query scored on its answer "
                         "(aggregation queries come from the synthetic corpus)")
    tiers = {c.name: c.source.tier for c in corpora}
    prepare = getattr(answerer, "prepare", None)
    if prepare is not None:  # an answerer reading an index of its own builds it first
        prepare(corpora)
    answers = answer_all(answerer, store, golds, progress=progress)
    finish = getattr(answerer, "finish", None)
    if finish is not None:
        finish()
    records = evaluate(golds, answers, policy, tiers)
    floor = NoneAnswerer()
    floor_records = evaluate(golds, {(g.corpus, g.query_id): floor.answer(g.question, None, g.corpus)
                                     for g in golds}, policy, tiers)
    from ingestion.transcripts.schema import SCHEMA_VERSION

    document = build_document(
        blocks, describe(answerer), policy, answer_rows(records), answer_rows(floor_records),
        [{k: v for k, v in r.items()} for r in records],
        SCHEMA_VERSION if answerer.needs_store else None)
    return AnswerRun(document, render_markdown(document), answers)

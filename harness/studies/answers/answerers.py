"""Who answers an aggregation question: a registry of model-free answerers.

An answerer sees only the question text, the transcript store and the corpus the question
is about: never the query's gold or its generator metadata (that would be reading the answer
key).  It returns an :class:`~.answer.Answer` whose ``value`` is None when it declines.

* ``none``: declines everything, the honest floor (0 EM, 0 answered);
* ``reference``: the instrument's control, parsing exactly the synthetic generator's question
  frames (:mod:`harness.studies.answers.reference`); not a production path;
* ``product``: a generic interrogative-frame parser sharing no patterns or code with the
  reference (:mod:`harness.studies.answers.product`);
* ``opensearch``: the reference's parser with R3/R4 answered by phrase aggregations over an
  OpenSearch index, a second mechanism beside SQL (:mod:`harness.studies.answers.opensearch`).

An answerer that reads an index of its own may define ``prepare(corpora)`` (build it),
``finish()`` (refuse answers read from an index that changed) and ``close()``.
"""

from __future__ import annotations

import importlib

from harness.studies.answers.answer import ROW_LIMIT, Answer, declined


class NoneAnswerer:
    """Declines every query: the floor any answerer's EM is read against."""

    name = "none"
    is_production_path = False
    needs_store = False
    description = ("declines every query: the honest floor (no aggregation route), 0.000 EM "
                   "with answered 0.000")

    def __init__(self, row_limit: int = ROW_LIMIT):
        self.row_limit = row_limit

    def answer(self, question: str, store, corpus: str) -> Answer:
        return declined("the none answerer answers nothing")


#: --answerer name -> "module:class"; each class takes ``row_limit`` and has ``name``,
#: ``is_production_path``, ``needs_store``, ``description`` and ``answer(question, store, corpus)``
ANSWERERS: dict[str, str] = {
    "none": "harness.studies.answers.answerers:NoneAnswerer",
    "reference": "harness.studies.answers.reference:ReferenceAnswerer",
    "product": "harness.studies.answers.product:ProductAnswerer",
    "opensearch": "harness.studies.answers.opensearch:OpenSearchAnswerer",
}


def make_answerer(name: str, *, row_limit: int = ROW_LIMIT, **options):
    """The answerer registered as ``name``; ``options`` go to its constructor (e.g. the
    ``opensearch`` answerer's ``url``)."""
    if name not in ANSWERERS:
        raise ValueError(f"unknown answerer {name!r}; expected one of {sorted(ANSWERERS)}")
    if isinstance(row_limit, bool) or not isinstance(row_limit, int) or row_limit < 1:
        raise ValueError(f"row limit must be a positive integer, got {row_limit!r}")
    module, _, cls = ANSWERERS[name].partition(":")
    return getattr(importlib.import_module(module), cls)(row_limit=row_limit, **options)


def describe(answerer) -> dict:
    """The ``answerer`` block of answers.json."""
    return {"name": answerer.name, "is_production_path": answerer.is_production_path,
            "description": answerer.description, "row_limit": answerer.row_limit,
            "model": None}

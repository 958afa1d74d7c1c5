"""The metric engine: ``pytrec_eval_terrier`` (NIST trec_eval), how metrics.json names it,
and its evaluator called directly."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from harness.core.measures import Measure

#: how the metric engine block names Judged@10, which trec_eval does not compute
JUDGED_ENGINE = "harness.evaluation.judged"

ENGINE_NAME = "pytrec_eval_terrier"
SEMANTICS = (
    "trec_eval -c: every qrels query is scored; an unanswered query scores 0 and is counted; "
    "queries without a relevant document are dropped and counted"
)
TIE_BREAK = (
    "sorted by (-score, doc_type, file_id, chunk_index) with ids {file}_{n} -> "
    "(chunk, file, n), {file}_digest -> (digest, file, -1), other -> (doc, id, 0); "
    "scores replaced by rank-derived values (a list without a tie is already in that order)"
)
PRESERVE_ORDER_TIE_BREAK = "list order as given (preserve_order); scores replaced by rank-derived values"


@functools.lru_cache(maxsize=None)
def engine_version() -> str:
    """The installed engine's version: the name of its ``NAME-VERSION.dist-info`` folder
    beside the compiled engine (the installed-package layout; reading it costs nothing
    next to importing ``importlib.metadata``), else the package metadata."""
    try:
        import pytrec_eval_ext

        folders = list(Path(pytrec_eval_ext.__file__).parent.glob(f"{ENGINE_NAME}-*.dist-info"))
        if len(folders) == 1:
            return folders[0].name[len(ENGINE_NAME) + 1:-len(".dist-info")]
    except (ImportError, OSError, TypeError):  # another layout: ask the metadata
        pass
    import importlib.metadata

    try:
        return importlib.metadata.version(ENGINE_NAME)
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - install problem
        return "unknown"


def metric_engine_block(measures: Sequence[Measure], preserve_order: bool = False) -> dict:
    """The ``metric_engine`` block of metrics.json."""
    return {
        "name": ENGINE_NAME,
        "version": engine_version(),
        "semantics": SEMANTICS,
        "tie_break": PRESERVE_ORDER_TIE_BREAK if preserve_order else TIE_BREAK,
        "gain": "linear",
        "measures": {
            m.name: (m.trec_measure + (f" (run cut at {m.run_cutoff})" if m.run_cutoff else "")
                     if m.by_trec_eval else f"{JUDGED_ENGINE} (top {m.run_cutoff})")
            for m in measures
        },
    }


def combined_specs(specs: Iterable[str]) -> set[str]:
    """trec_eval measure specs with one entry per measure: ``ndcg_cut.5`` and
    ``ndcg_cut.10`` become ``ndcg_cut.10,5`` (what pytrec_eval's own wrapper passes on;
    the engine keeps one parameter list per measure)."""
    params: dict[str, set[str]] = {}
    for spec in specs:
        name, _, values = spec.partition(".")
        params.setdefault(name, set()).update(filter(None, values.split(",")))
    return {f"{name}.{','.join(sorted(values))}" if values else name
            for name, values in params.items()}


def relevance_evaluator(qrels: Mapping[str, Mapping[str, int]], specs: Iterable[str]):
    """The engine's evaluator over ``qrels`` for trec_eval measure ``specs``.

    The compiled engine is called directly: pytrec_eval's Python wrapper only combines
    measure specs (:func:`combined_specs`) and drops queries without judgements, and it
    imports numpy, which costs a short ``harness score`` a tenth of its time."""
    try:
        from pytrec_eval_ext import RelevanceEvaluator
    except ImportError:  # a packaging without the bare extension: the wrapper does the same
        from pytrec_eval import RelevanceEvaluator
    return RelevanceEvaluator({q: d for q, d in qrels.items() if d}, combined_specs(specs))

"""``harness.evaluate`` and ``harness.load``: one run's scores as an :class:`Evaluation`.

``evaluate`` calls :func:`harness.evaluation.scored_run.score_run`, the function behind
``harness score``; ``Evaluation.write(dir)`` writes the results directory ``harness score
--out dir`` writes for the same inputs, byte for byte (``runinfo.json``, which is timed,
aside).  Everything an Evaluation shows is read back from the files it would write.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

from harness.api.tables import html_table, tier_note
from harness.claims.metrics import (ALL, METRICS_JSON, METRICS_MD, PER_QUERY, PINNED_FILES, RANKINGS,
                                    MetricsClaim)
from harness.core.canonical import sha256_file
from harness.core.tiers import UNKNOWN_LICENCE
from harness.evaluation.family import RecordedRun, recorded_from_files
from harness.evaluation.inputs import read_classes_input, read_qrels_input, read_run_input
from harness.evaluation.results import load_claim, load_jsonl_rows, load_per_query
from harness.evaluation.scored_run import KEEP_RANKINGS, ScoredRun, score_run

#: the corpus name of in-memory qrels when none is given (a file's stem otherwise)
DEFAULT_CORPUS = "corpus"
#: the run name of an in-memory run when none is given (a file's stem otherwise)
DEFAULT_NAME = "run"


def measure_names(measures) -> list[str] | None:
    """Measure names from a name, names, or objects whose ``str`` is the name
    (ir_measures measures such as ``nDCG@10``)."""
    if measures is None:
        return None
    if isinstance(measures, str):
        return [measures]
    return [m if isinstance(m, str) else str(m) for m in measures]


class Evaluation:
    """One run scored against qrels: the claim of a results directory, in memory.

    * :attr:`means` (per class), :attr:`per_query`, :attr:`judgements`, :attr:`rows`;
    * provenance: :attr:`metric_engine`, :attr:`relevance_policy`, :attr:`tier`,
      :attr:`corpora`;
    * :meth:`to_dataframe`, :meth:`to_markdown`, :meth:`to_latex`, :meth:`write`.
    """

    def __init__(self, scored: ScoredRun, *, named: bool, command: str = "harness.evaluate",
                 elapsed: float | None = None):
        self._scored = scored
        self._named = named
        self._command = command
        self._elapsed = elapsed
        _, files = scored.render()
        self._recorded: RecordedRun = recorded_from_files(files, scored.claim.control_name)
        self._doc = self._recorded.metrics

    # ------------------------------------------------------------------ contents

    @property
    def name(self) -> str:
        """The run's name (``control_name``): given, read back, or the provisional one
        (``write(dir)`` then names it after ``dir``, as ``harness score --out dir`` does)."""
        return self._scored.claim.control_name

    @property
    def claim(self) -> MetricsClaim:
        """The metrics.json claim as it would be written (files pinned)."""
        return MetricsClaim.from_dict(self._recorded.metrics, METRICS_JSON)

    @property
    def metrics(self) -> dict:
        """The metrics.json document as it would be written."""
        return json.loads(json.dumps(self._doc))

    @property
    def measures(self) -> tuple[str, ...]:
        return self._scored.measures

    @property
    def rows(self) -> list[dict]:
        """metrics.json's rows: one per corpus x class, ``all`` per corpus, the pooled row."""
        return json.loads(json.dumps(self._doc["rows"]))

    @property
    def corpora(self) -> list[dict]:
        return json.loads(json.dumps(self._doc["corpora"]))

    @property
    def headline_corpus(self) -> str:
        """The corpus :attr:`means` reports: the only one, or all of them pooled."""
        names = sorted(c["name"] for c in self._doc["corpora"])
        return names[0] if len(names) == 1 else "+".join(names)

    @property
    def means(self) -> dict[str, dict[str, float]]:
        """``{query_class: {measure: mean}}`` of :attr:`headline_corpus` (``all`` included)."""
        corpus = self.headline_corpus
        return {r["query_class"]: dict(r["metrics"]) for r in self._doc["rows"]
                if r["corpus"] == corpus}

    @property
    def per_query(self) -> dict[str, dict[str, float]]:
        """``{query_id: {measure: value}}`` of every scored query (unanswered ones score 0;
        dropped ones are not scored)."""
        out: dict[str, dict[str, float]] = {}
        owner: dict[str, str] = {}
        for row in self._recorded.per_query:
            q = str(row["query_id"])
            if owner.setdefault(q, row["corpus"]) != row["corpus"]:
                raise ValueError(f"query id {q!r} is in corpora {owner[q]!r} and {row['corpus']!r}: "
                                 "use to_dataframe(per_query=True)")
            out.setdefault(q, {})[row["measure"]] = row["value"]
        return out

    def recorded(self) -> RecordedRun:
        """The run as the statistics read its results directory (``harness intervals``)."""
        return self._recorded

    @property
    def per_query_rows(self) -> list[dict]:
        """per_query.jsonl's rows (one per query x measure)."""
        return [dict(r) for r in self._recorded.per_query]

    @property
    def judgements(self) -> dict[str, Any]:
        """metrics.json's judgement counts, with the scored, unanswered and dropped queries
        of :attr:`headline_corpus`."""
        row = next(r for r in self._doc["rows"]
                   if r["corpus"] == self.headline_corpus and r["query_class"] == ALL)
        return {**dict(self._doc.get("judgements") or {}), "queries_scored": row["n"],
                "queries_unanswered": row["queries_unanswered"],
                "queries_dropped_unjudgeable": row["queries_dropped_unjudgeable"]}

    @property
    def metric_engine(self) -> dict:
        return json.loads(json.dumps(self._doc["metric_engine"]))

    @property
    def relevance_policy(self) -> dict:
        return json.loads(json.dumps(self._doc["relevance_policy"]))

    @property
    def tier(self) -> str:
        """The most restrictive licence tier of the run (A: publishable)."""
        return self.claim.claimed_tier()

    # ------------------------------------------------------------------ presenting

    def _table(self) -> tuple[list[str], list[list], list[bool]]:
        head = ["corpus", "tier", "class", "n", *self.measures, "unanswered", "dropped"]
        rows = [[r["corpus"], r["tier"], r["query_class"], r["n"],
                 *[r["metrics"].get(m) for m in self.measures],
                 r["queries_unanswered"], r["queries_dropped_unjudgeable"]] for r in self.rows]
        numeric = [False, False, False, True, *[True] * len(self.measures), True, True]
        return head, rows, numeric

    def to_dataframe(self, per_query: bool = False):
        """The rows as a pandas DataFrame (one per corpus x class, a column per measure), or
        with ``per_query=True`` one row per query (corpus, tier, class, query_id, answered,
        a column per measure)."""
        import pandas as pd

        if not per_query:
            frame = pd.DataFrame([{
                "corpus": r["corpus"], "tier": r["tier"], "query_class": r["query_class"],
                "n": r["n"], **{m: r["metrics"].get(m) for m in self.measures},
                "queries_unanswered": r["queries_unanswered"],
                "queries_dropped_unjudgeable": r["queries_dropped_unjudgeable"]}
                for r in self.rows])
            return frame
        by_query: dict[tuple[str, str], dict] = {}
        for row in self._recorded.per_query:
            entry = by_query.setdefault((row["corpus"], row["query_id"]), {
                "corpus": row["corpus"], "tier": row["tier"], "query_class": row.get("query_class"),
                "query_id": row["query_id"], "answered": row.get("answered")})
            entry[row["measure"]] = row["value"]
        columns = ["corpus", "tier", "query_class", "query_id", "answered", *self.measures]
        return pd.DataFrame(list(by_query.values()), columns=columns)

    def to_markdown(self) -> str:
        """The table of metrics.md (4 decimals)."""
        return self._scored.table()

    def to_latex(self, caption: str | None = None, label: str | None = None, *,
                 measures=None, columns: int = 1, query_class: str | None = None) -> str:
        """The paste-ready LaTeX of this run: the warehouse's one renderer
        (:mod:`warehouse.latex`), the same bytes as ``python -m warehouse export --format
        latex --run NAME`` after :meth:`write` and ingest; its first line names the view."""
        from harness.api.latex import export_of, latex_of

        return latex_of(export_of({self.name: self}, None, None, None, measures=measures,
                                  caption=caption, label=label, columns=columns,
                                  query_class=query_class))

    def _repr_html_(self) -> str:
        head, rows, _ = self._table()
        engine = self.metric_engine
        policy = self.relevance_policy
        caption = (f"{self.name} · {engine.get('name')} {engine.get('version')} · relevance "
                   f"{'binary' if policy.get('binary') else 'graded'} from "
                   f"{policy.get('graded_from')} · {tier_note(self.tier)}")
        return html_table(head, rows, caption=caption)

    def __repr__(self) -> str:
        all_row = self.means.get(ALL, {})
        lead = next(iter(self.measures), None)
        shown = f" {lead}={all_row[lead]:.4f}" if lead in all_row else ""
        return (f"<Evaluation {self.name!r} corpus={self.headline_corpus!r} tier={self.tier} "
                f"queries={self.judgements['queries_scored']}{shown}>")

    # ------------------------------------------------------------------ writing

    def named(self, name: str) -> "Evaluation":
        """The same evaluation under ``name`` (its ``control_name``)."""
        return Evaluation(self._scored.named(name), named=True, command=self._command,
                          elapsed=self._elapsed)

    def scored_run(self, out=None) -> ScoredRun:
        """What :meth:`write` writes into ``out``: named after it unless already named."""
        if self._named or out is None:
            return self._scored
        return self._scored.named(Path(out).name)

    def write(self, out, *, ingest: bool = False, db=None) -> Path:
        """Write the results directory ``out`` (atomically), exactly as ``harness score
        --out out`` does; the run is named after ``out`` unless it was given a name.  With
        ``ingest=True`` it is also stored in the warehouse (``db``: its file)."""
        runinfo = {"command": self._command, "elapsed_seconds": self._elapsed}
        path = self.scored_run(out).write(out, runinfo)
        if ingest:
            from warehouse import ingest_results

            ingest_results(path, db_path=db)
        return path


def evaluate(run, qrels, measures=None, *, query_classes=None, binary_relevance: bool = False,
             preserve_order: bool = False, corpus: str | None = None, licence: str | None = None,
             tier: str | None = None, name: str | None = None,
             keep_rankings: int | None = KEEP_RANKINGS) -> Evaluation:
    """Score ``run`` against ``qrels`` as ``harness score`` does.

    ``run`` and ``qrels``: a path (TREC, BEIR ``.tsv``, ``.jsonl``), a dict of dicts, a
    DataFrame (``query_id, doc_id, score`` / ``relevance``), a ``ranx.Run`` /
    ``ranx.Qrels`` or ir_measures ``ScoredDoc`` / ``Qrel`` records.  ``measures``:
    canonical names (default: ``harness score``'s).  ``query_classes``: a TSV path, a dict
    or a DataFrame (``query_id, query_class``).  ``corpus`` defaults to the qrels file's
    stem; ``licence`` None is ``unknown`` (tier B); ``tier`` may only make it stricter.
    ``name`` is the run's ``control_name`` (default: the directory :meth:`Evaluation.write`
    writes, as ``--out`` names it).
    """
    started = time.perf_counter()
    q = read_qrels_input(qrels)
    r = read_run_input(run)
    classes, classes_label = ({}, "query_classes") if query_classes is None \
        else read_classes_input(query_classes)
    scored = score_run(
        q.judgements, r.run, measure_names(measures), corpus=corpus or q.stem or DEFAULT_CORPUS,
        control_name=name or r.stem or DEFAULT_NAME, qrels_sha256=q.sha256,
        run_sha256=r.sha256, run_source=r.source,
        licence=UNKNOWN_LICENCE if licence is None else licence, tier=tier,
        query_classes=classes, classes_source=classes_label, binary=binary_relevance,
        preserve_order=preserve_order, keep_rankings=keep_rankings)
    return Evaluation(scored, named=name is not None, elapsed=time.perf_counter() - started)


def _measure_order(per_query: Iterable[Mapping], rows: list[dict]) -> tuple[str, ...]:
    """Measures in the order the run scored them (per_query.jsonl keeps it; JSON objects
    are sorted)."""
    order: list[str] = []
    first = None
    for row in per_query:
        key = (row["corpus"], row["query_id"])
        if first is None:
            first = key
        if key != first:
            break
        order.append(str(row["measure"]))
    known = set(order)
    for row in rows:
        order += [m for m in sorted(row["metrics"]) if m not in known and not known.add(m)]
    return tuple(order)


def load(results_dir) -> Evaluation:
    """A results directory read back as an :class:`Evaluation`: its claim validated, and
    every file it pins checked against its sha256."""
    path = Path(results_dir)
    claim = load_claim(path)
    present = {name: sha256_file(path / name) for name in PINNED_FILES if (path / name).is_file()}
    claim.check_pins(present, str(path / METRICS_JSON))
    per_query = load_per_query(path)
    extra = {name: (path / name).read_text(encoding="utf-8")
             for name in PINNED_FILES if name not in (PER_QUERY, RANKINGS) and (path / name).is_file()}
    scored = ScoredRun(
        claim=claim, measures=_measure_order(per_query, claim.rows), per_query=per_query,
        rankings=_rows_if_present(path, RANKINGS), extra_files=extra,
        metrics_md=(path / METRICS_MD).read_text(encoding="utf-8"))
    return Evaluation(scored, named=True, command="harness.load")


def _rows_if_present(path: Path, name: str) -> list[dict] | None:
    file = path / name
    if not file.is_file():
        return None
    return load_jsonl_rows(path, name) if file.stat().st_size else []

"""Exporting the metric table: publishable tables hold tier-A rows only, or nothing.

A ``publishable`` export refuses (with the offending corpora, tiers, licences and runs)
whenever the filters select any row the publishable view withholds, rather than quietly
dropping it: a published table must be the whole table that was asked for.  Every export
carries its provenance: run ids, metric engine and version, embedding model, code
revision, and each corpus's version, licence, tier and checksum.  Exports contain no
timestamps, so the same warehouse and filters give the same bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from harness.core.measures import MEASURES
from harness.claims.metrics import ALL
from warehouse import queries, schema
from warehouse.arms import ARM_COLUMNS, arm_parameters, groups_of
from warehouse.best import BEST, BORDERLINE, NOT_TESTED, NOT_TIED, TIED, best_of
from warehouse.db import connect
from warehouse.errors import ExportRefused
from warehouse.render import INTERNAL_STAMP, RENDERERS

ID_COLUMNS = ("view", "run", "run_id", "corpus", "tier", "class", "n")
COUNT_COLUMNS = ("unanswered", "dropped")
LAYOUTS = ("wide", "long")
#: what the ``view`` column says in each view
VIEW_CELLS = {"publishable": "publishable", "internal": INTERNAL_STAMP}
#: the significance mark of a stored verdict (the Holm-adjusted paired test), as on screen
MARKS = {"significant": "*", "not significant": "n.s.", "cannot be significant": "floor"}
#: the mark of a verdict within Monte Carlo error of its level (neither verdict is safe)
BORDERLINE_MARK = "borderline"
#: per measure in the wide layout: the value, its interval, and (with a control) its delta
INTERVAL_FIELDS = ("lower", "upper", "interval_method")
DELTA_FIELDS = ("delta", "delta_lower", "delta_upper", "p_holm", "mark")


def significance_mark(verdict) -> str:
    """The mark of a stored verdict ('' when no test is stored)."""
    return MARKS.get(verdict if isinstance(verdict, str) else "", "")


@dataclass(frozen=True)
class Export:
    """An export: ``rows`` is the long table (one row per run x corpus x class x measure,
    value, interval and, with a control, delta, its interval, Holm-adjusted p and mark);
    ``table`` is it in the chosen layout; ``labels`` are the short unique run names."""

    view: str
    table: Any  # pandas DataFrame, in ``layout``
    provenance: dict
    rows: Any = None  # pandas DataFrame, long
    layout: str = "wide"
    control: str | None = None  # run id
    labels: dict = field(default_factory=dict)
    caption: str | None = None
    label: str | None = None
    #: LaTeX: 1 (fit an article's text width) or 2 (one column of a two-column article)
    columns: int = 1


def measure_order(names) -> list[str]:
    """Known measures in the harness's order, file-level (``file:``) after their kin,
    unknown names last, alphabetically."""
    known = list(MEASURES)

    def key(name: str):
        base = name.split(":", 1)[1] if name.startswith("file:") else name
        return (base not in MEASURES, name.startswith("file:"),
                known.index(base) if base in MEASURES else 0, name)

    return sorted(set(names), key=key)


def short_labels(runs) -> dict[str, str]:
    """``run_id -> short unique name``: the control name, numbered ``(2)``, ``(3)`` in
    creation order where names repeat, never a hash id.  ``runs``: ``(run_id, name)`` pairs,
    oldest first."""
    runs = list(runs)
    counts: dict[str, int] = {}
    for _, name in runs:
        counts[name] = counts.get(name, 0) + 1
    seen: dict[str, int] = {}
    out = {}
    for rid, name in runs:
        if counts[name] == 1:
            out[rid] = name
            continue
        seen[name] = seen.get(name, 0) + 1
        out[rid] = f"{name} ({seen[name]})"
    return out


def class_order(classes) -> list[str]:
    """``all`` first, then the others alphabetically."""
    return sorted(set(classes), key=lambda c: (c != ALL, c))


def long_rows(intervals, deltas, labels: dict, control: str | None, view: str):
    """One row per run x corpus x class x measure: what the Results page shows, as numbers."""
    import pandas as pd

    frame = intervals.copy()
    frame["run"] = frame["run_id"].map(labels)
    frame["view"] = VIEW_CELLS[view]
    frame["class"] = frame["query_class"]
    frame["_class"] = frame["class"].map(lambda c: (c != ALL, c))
    measures = measure_order(frame["measure"].unique())
    frame["_measure"] = frame["measure"].map(measures.index)
    frame["_corpus"] = frame["corpus"].map(lambda c: ("+" in c, c))
    frame = frame.sort_values(["created_at", "run_id", "_corpus", "_class", "_measure"],
                              kind="stable")
    out = pd.DataFrame({
        "view": frame["view"], "run": frame["run"], "run_id": frame["run_id"],
        "corpus": frame["corpus"], "tier": frame["tier"], "class": frame["class"],
        "n": frame["n"].astype("int64"), "measure": frame["measure"],
        "value": frame["value"].astype("float64"),
        "lower": frame["lower"].astype("float64"), "upper": frame["upper"].astype("float64"),
        "interval_method": frame["interval_method"].astype("object"),
        "confidence": frame["confidence"].astype("float64"),
    })
    if control is not None:
        keys = ["run_id", "corpus", "query_class", "measure"]
        d = deltas.rename(columns={"tier": "delta_tier"}) if deltas is not None else None
        if d is None or d.empty:
            d = pd.DataFrame(columns=[*keys, "delta", "delta_lower", "delta_upper", "p_holm",
                                      "verdict", "comparable", "not_comparable_because",
                                      "paired", "delta_tier"])
        for col in ("p", "alpha", "permutations"):
            if col not in d.columns:
                d = d.assign(**{col: float("nan")})
        merged = frame[keys].merge(d[[*keys, "delta", "delta_lower", "delta_upper", "p_holm",
                                      "verdict", "comparable", "not_comparable_because",
                                      "paired", "delta_tier", "p", "alpha", "permutations"]],
                                   on=keys, how="left")
        comparable = merged["comparable"].fillna(False).astype(bool).to_numpy()
        is_control = (frame["run_id"] == control).to_numpy()
        has = merged["delta"].notna().to_numpy()
        out["control"] = labels.get(control, control)
        for col in ("delta", "delta_lower", "delta_upper", "p_holm"):
            values = merged[col].astype("float64").to_numpy(copy=True)
            # a delta between runs that measured differently is not an effect: no number
            values[~comparable] = float("nan")
            out[col] = values
        marks = []
        for i, verdict in enumerate(merged["verdict"]):
            if is_control[i]:
                marks.append("control")
            elif not has[i]:
                marks.append("")
            elif not comparable[i]:
                marks.append("not comparable")
            elif is_borderline_test(merged.iloc[i]):
                marks.append(BORDERLINE_MARK)
            else:
                marks.append(significance_mark(verdict))
        out["mark"] = marks
        out["not_comparable_because"] = [
            "" if (is_control[i] or not has[i] or comparable[i]) else str(b or "")
            for i, b in enumerate(merged["not_comparable_because"])]
        tiers = [t if isinstance(dt, float) or dt is None else _stricter(t, dt)
                 for t, dt in zip(out["tier"], merged["delta_tier"])]
        out["tier"] = tiers
    out["unanswered"] = frame["queries_unanswered"].astype("int64").to_numpy()
    out["dropped"] = frame["queries_dropped_unjudgeable"].astype("int64").to_numpy()
    return out.reset_index(drop=True)


def is_borderline_test(test) -> bool:
    """A stored verdict within Monte Carlo error of its level
    (:func:`harness.claims.comparisons.is_borderline`)."""
    from harness.claims.comparisons import is_borderline

    def get(key):
        import pandas as pd

        value = test.get(key)
        return None if value is None or pd.isna(value) else value

    p, p_holm, alpha, perms = get("p"), get("p_holm"), get("alpha"), get("permutations")
    if get("verdict") not in ("significant", "not significant") or None in (p, p_holm, alpha):
        return False
    return is_borderline(float(p), float(p_holm), None if perms is None else int(perms),
                         float(alpha))


def with_arms(rows, runs_info: list[dict]):
    """``rows`` with, at the end, each run's comparability ``group`` (granularity and
    relevance policy, :func:`warehouse.arms.groups_of`) and its parameters
    (:data:`warehouse.arms.ARM_COLUMNS`)."""
    groups = groups_of(runs_info)
    params = {r["run_id"]: arm_parameters(r) for r in runs_info}
    out = rows.copy()
    out["group"] = out["run_id"].map(groups)
    for column in ARM_COLUMNS:
        out[column] = [params.get(rid, {}).get(column) for rid in out["run_id"]]
    return out


def mark_ties(rows, per_query, tie_test):
    """``rows`` with ``tie`` (:data:`warehouse.best.TIE_STATES`) and ``tied`` (``tie ==
    'tied'``): per corpus x class x measure with two runs or more, whether ``tie_test``
    finds each run not significantly different from the best, over the queries every run
    of the slice scored (the ``all`` class: every query of the corpus; a pooled ``a+b`` row:
    every query of its member corpora, keyed by corpus and query).  The reference of the
    test is the run the tables mark best (:func:`best_of`, the first such in the rows'
    order), passed as ``reference=``.  A slice whose test cannot run says ``not tested``."""
    import pandas as pd

    tie = pd.Series("", index=rows.index, dtype="object")
    best = best_of(rows)
    keys = ["corpus", "group", "class", "measure"] if "group" in rows.columns else \
        ["corpus", "class", "measure"]
    for key, part in rows.groupby(keys, sort=False):
        corpus, cls, measure = key[0], key[-2], key[-1]
        if len(part) < 2:
            continue
        leaders = [rid for rid, b in zip(part["run_id"], best[part.index]) if b]
        tie[part.index] = NOT_TESTED
        values = _slice_values(per_query, corpus, cls, measure, list(part["run_id"]))
        if values is None or not leaders:
            continue
        result = tie_test({rid: values[rid].to_numpy() for rid in part["run_id"]},
                          reference=leaders[0])
        for index, rid in zip(part.index, part["run_id"]):
            r = result[rid]
            tie[index] = BEST if r.best else BORDERLINE if r.borderline else \
                TIED if r.tied else NOT_TIED
    return rows.assign(tie=tie, tied=tie == TIED)


def _slice_values(per_query, corpus: str, cls: str, measure: str, run_ids: list):
    """The per-query values of one slice (queries x runs) over the queries every run
    scored, or None when there are none."""
    if per_query is None or per_query.empty:
        return None
    members = corpus.split("+")
    pq = per_query[per_query["corpus"].isin(members) & (per_query["measure"] == measure)]
    if cls != ALL:
        pq = pq[pq["query_class"] == cls]
    values = pq.pivot_table(index=["corpus", "query_id"], columns="run_id", values="value",
                            aggfunc="first").reindex(columns=run_ids).dropna().sort_index()
    return None if values.empty else values


def _stricter(a, b):
    from harness.core.tiers import most_restrictive_tier

    if not isinstance(b, str):
        return a
    return most_restrictive_tier([a, b])


def wide(rows, with_control: bool):
    """The long rows pivoted to one row per run x corpus x class: per measure ``M``,
    ``M lower``, ``M upper``, ``M interval_method`` and, with a control, ``M delta``,
    ``M delta_lower``, ``M delta_upper``, ``M p_holm``, ``M mark``; with the tie test,
    ``M tied_with_best`` (empty where it is borderline or was not tested) and ``M tie``."""
    import pandas as pd

    keys = ["view", "run", "run_id", "corpus", "tier", "class", "n"]
    arms = [c for c in ("group", *ARM_COLUMNS) if c in rows.columns]
    tied = "tied" in rows.columns
    if rows.empty:
        return pd.DataFrame(columns=[*keys, *COUNT_COLUMNS, *arms])
    measures = list(dict.fromkeys(rows["measure"]))
    groups: dict = {}
    for r in rows.to_dict("records"):
        key = (r["run_id"], r["corpus"], r["class"])  # a run is in one group
        line = groups.setdefault(key, {k: r[k] for k in keys} | (
            {"control": r["control"]} if with_control else {}))
        # the row's tier is the most restrictive of its cells
        line["tier"] = _stricter(line["tier"], r["tier"])
        m = r["measure"]
        line[m] = r["value"]
        for f in INTERVAL_FIELDS:
            line[f"{m} {f}"] = r[f]
        if with_control:
            for f in DELTA_FIELDS:
                line[f"{m} {f}"] = r[f]
        if tied:
            # unknown (empty) where the test could not decide or did not run: see ``M tie``
            line[f"{m} tied_with_best"] = (None if r["tie"] in (BORDERLINE, NOT_TESTED)
                                           else bool(r["tied"]))
            line[f"{m} tie"] = r["tie"]
        line["unanswered"], line["dropped"] = r["unanswered"], r["dropped"]
        for column in arms:
            line[column] = r[column]
    columns = list(keys) + (["control"] if with_control else [])
    for m in measures:
        columns += [m, *(f"{m} {f}" for f in INTERVAL_FIELDS)]
        if with_control:
            columns += [f"{m} {f}" for f in DELTA_FIELDS]
        if tied:
            columns += [f"{m} tied_with_best", f"{m} tie"]
    columns += list(COUNT_COLUMNS) + arms
    out = pd.DataFrame(list(groups.values())).reindex(columns=columns)
    for m in measures:
        for col in (m, f"{m} lower", f"{m} upper") + ((f"{m} delta", f"{m} delta_lower",
                                                       f"{m} delta_upper", f"{m} p_holm")
                                                      if with_control else ()):
            out[col] = out[col].astype("float64")
        out[f"{m} interval_method"] = out[f"{m} interval_method"].astype("object")
        if tied:
            out[f"{m} tied_with_best"] = out[f"{m} tied_with_best"].astype("boolean")
            out[f"{m} tie"] = out[f"{m} tie"].fillna("").astype("object")
    out["n"] = out["n"].astype("int64")
    return out


def _refusal(withheld, publishable_corpora) -> str:
    parts = []
    for row in withheld.itertuples(index=False):
        listed = [n for n in (row.not_publishable if row.not_publishable is not None else [])
                  if n is not None]
        why = ", ".join(listed) if listed else "a contributing corpus is not recorded as tier A"
        parts.append(f"{row.corpus} (tier {row.tier}; {why}; runs "
                     f"{[r[:12] for r in row.run_ids]})")
    return ("refused: a publishable export may contain tier-A rows only, and these filters "
            f"select rows from corpora that are not, or from runs whose shared index holds a "
            f"corpus that is not: {'; '.join(parts)}. Narrow the export with --corpus to "
            f"tier-A corpora ({publishable_corpora or 'none match'}) and --run to runs whose "
            "every corpus is tier A, or use --view internal (never published).")


def build_export(view: str, runs=None, corpora=None, classes=None, measures=None, *,
                 control=None, layout: str = "wide", caption: str | None = None,
                 label: str | None = None, labels: dict | None = None,
                 columns: int = 1, tie_test=None, db_path=None) -> Export:
    """The table and provenance of an export (one read-only snapshot): values with their
    stored intervals and, with ``control``, each run's delta against it with the stored
    paired test (interval, Holm-adjusted p, mark).  Every number comes from ``view``'s own
    relations; a publishable export refuses unless every row, interval and test is tier A.
    ``labels`` (run id -> name) names the runs as a page shows them; by default
    :func:`short_labels` of the exported runs.  ``tie_test`` (the harness's
    :func:`harness.stats.best.tied_with_best`, passed in by the commands above the
    warehouse) marks, per corpus x class x measure, the runs tied with the best."""
    queries.relation(view, "metric_rows")
    if columns not in (1, 2):
        raise ValueError(f"columns must be 1 or 2, not {columns!r}")
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; expected one of {list(LAYOUTS)}")
    with connect(db_path, read_only=True) as conn:
        resolved = queries.resolve_runs(conn, runs)
        control_id = None
        if control is not None:
            control_id = queries.resolve_runs(conn, [control])[0]
            if resolved is not None and control_id not in resolved:
                resolved = [*resolved, control_id]
        filters = {"runs": resolved, "corpora": corpora, "classes": classes,
                   "measures": measures}
        if view == "publishable":
            withheld = queries.fetch_withheld(conn, resolved, corpora, classes, measures)
            if len(withheld):
                allowed = queries.fetch_metric_table(conn, view, resolved, corpora, classes,
                                                     measures)
                raise ExportRefused(_refusal(withheld, sorted(set(allowed["corpus"]))))
        intervals = queries.fetch_metric_intervals(conn, view, resolved, corpora, classes,
                                                   measures)
        if intervals.empty:
            raise ExportRefused(f"nothing to export: no {view} metric rows match "
                                f"{ {k: v for k, v in filters.items() if v} or 'the warehouse'}")
        deltas = None
        if control_id is not None:
            if control_id not in set(intervals["run_id"]):
                raise ExportRefused(f"the control {control!r} has no {view} metric row "
                                    "under these filters")
            deltas = queries.fetch_deltas_tested(conn, control_id, resolved, view, corpora,
                                                 classes, measures)
        run_ids = sorted(set(intervals["run_id"]))
        runs_info = queries.run_provenance(conn, run_ids)
        ordered = conn.query_all(
            "SELECT run_id, control_name FROM runs WHERE list_contains(?::VARCHAR[], run_id) "
            "ORDER BY created_at, run_id", [run_ids])
        version = schema.check(conn)
        per_query = None
        if tie_test is not None and len(run_ids) > 1:
            per_query = queries.fetch_per_query_runs(conn, view, run_ids, corpora, classes,
                                                     measures)
        documents = claim_documents(conn, view, intervals, deltas, control_id)
    built = assemble(view, intervals, deltas, runs_info, ordered, control_id, filters, version,
                     layout=layout, caption=caption, label=label, labels=labels,
                     columns=columns, per_query=per_query, tie_test=tie_test)
    built.provenance["claims"] = {"metrics": run_ids, "documents": documents}
    return built


def claim_documents(conn, view: str, intervals, deltas, control_id) -> list[str]:
    """The content digests (``document_id``: sha256 of the canonical document) of the
    interval and comparison documents whose values an export's rows carry: for each row
    with an interval (or a paired test), the stored document it was joined from (the
    newest for its key, as :func:`warehouse.queries.metric_intervals` and
    :func:`warehouse.queries.deltas_tested` choose it).  The run ids beside them are the
    digests of the runs' canonical ``metrics.json``."""
    from warehouse.queries.compare import _LATEST_COMPARISONS
    from warehouse.queries.results import _LATEST_INTERVALS

    keys = ["run_id", "corpus", "query_class", "measure", "n"]
    found: set[str] = set()
    shown = intervals[intervals["interval_method"].notna()][keys]
    if len(shown):
        stored = conn.query_df(
            f"SELECT document_id, {', '.join(keys)} FROM "
            f"({_LATEST_INTERVALS.format(rel=queries.relation(view, 'intervals'))}) "
            "WHERE list_contains(?::VARCHAR[], run_id)", [sorted(set(shown["run_id"]))])
        found |= set(shown.merge(stored, on=keys)["document_id"])
    if deltas is not None and len(deltas) and control_id is not None:
        tested = deltas[deltas["p"].notna()][keys].rename(columns={"run_id": "arm_run_id"})
        if len(tested):
            stored = conn.query_df(
                "SELECT document_id, arm_run_id, corpus, query_class, measure, n FROM "
                f"({_LATEST_COMPARISONS.format(rel=queries.relation(view, 'comparisons'))}) "
                "WHERE control_run_id = ?", [control_id])
            found |= set(tested.merge(stored, on=list(tested.columns))["document_id"])
    return sorted(found)


def assemble(view: str, intervals, deltas, runs_info: list[dict], ordered, control_id,
             filters: dict, version, *, layout: str = "wide", caption: str | None = None,
             label: str | None = None, labels: dict | None = None,
             columns: int = 1, per_query=None, tie_test=None) -> Export:
    """An :class:`Export` from what was read: ``intervals`` (rows of
    :func:`warehouse.queries.metric_intervals`), ``deltas`` (of
    :func:`warehouse.queries.deltas_tested`, or None), ``runs_info`` (of
    :func:`warehouse.queries.run_provenance`), ``ordered`` (``(run_id, control_name)``
    oldest first).  The Python API builds its tables through here too, so a table of the
    same runs has the same bytes whichever way it was made.  With ``per_query`` (run_id,
    corpus, query_class, query_id, measure, value) and ``tie_test``, :func:`mark_ties`."""
    run_ids = sorted(set(intervals["run_id"]))
    labels = {**short_labels(ordered), **{k: v for k, v in (labels or {}).items()
                                          if k in run_ids}}
    rows = with_arms(long_rows(intervals, deltas, labels, control_id, view), runs_info)
    if per_query is not None and tie_test is not None:
        rows = mark_ties(rows, per_query, tie_test)
    if view == "publishable" and (set(rows["tier"]) != {"A"} or (
            deltas is not None and len(deltas) and set(deltas["tier"]) != {"A"})):
        raise ExportRefused("refused: a non-A row reached a publishable export")
    names = {name for corpus in set(rows["corpus"]) for name in corpus.split("+")}
    corpora_info = sorted(
        {json.dumps(c, sort_keys=True) for r in runs_info for c in r["corpora"]
         if c["name"] in names})
    table = wide(rows, control_id is not None) if layout == "wide" else rows
    provenance = {
        "view": view,
        "stamp": INTERNAL_STAMP if view != "publishable" else None,
        "layout": layout,
        "rows": int(len(table)),
        "values": int(len(rows)),
        "schema_version": version,
        "filters": {k: queries.as_list(v) or [] for k, v in filters.items()},
        "control": None if control_id is None else {
            "run_id": control_id, "name": labels.get(control_id)},
        "interval_methods": sorted({m for m in rows["interval_method"] if isinstance(m, str)}),
        "run_names": [{"run_id": rid, "name": labels[rid]} for rid, _ in ordered],
        "query_counts": {c: int(rows.loc[(rows["corpus"] == c), "n"].max())
                         for c in sorted(set(rows["corpus"]))},
        "runs": [{
            "run_id": r["run_id"], "control_name": r["control_name"],
            "metric_engine": r["metric_engine"], "metric_engine_version": r["metric_engine_version"],
            "embedding_model": r["embedding_model"] or (
                json.loads(r["embedding_models"]) if r["embedding_models"] else None),
            "backend": r["backend"], "mode": r["mode"], "stage": r["stage"],
            "code_revision": r["code_revision"],
            "relevance_policy": json.loads(r["relevance_policy"]),
        } for r in runs_info],
        "corpora": [json.loads(c) for c in corpora_info],
    }
    return Export(view, table, provenance, rows=rows, layout=layout, control=control_id,
                  labels=labels, caption=caption, label=label, columns=columns)


def render(export: Export, fmt: str):
    """``str`` for csv / md / latex, ``bytes`` for parquet."""
    if fmt not in RENDERERS:
        raise ValueError(f"unknown export format {fmt!r}; expected one of {sorted(RENDERERS)}")
    return RENDERERS[fmt](export)


def export_table(view: str, fmt: str, runs=None, corpora=None, classes=None, measures=None, *,
                 control=None, layout: str = "wide", caption: str | None = None,
                 label: str | None = None, columns: int = 1, tie_test=None, db_path=None):
    """The metric table under ``view`` as ``fmt`` (csv, md, latex: str; parquet: bytes).
    A publishable export raises :class:`~warehouse.errors.ExportRefused` naming the
    corpora it would have to include.  CSV holds the data rows only (its provenance is
    :func:`build_export`'s ``provenance``, the CLI's sidecar)."""
    if fmt not in RENDERERS:
        raise ValueError(f"unknown export format {fmt!r}; expected one of {sorted(RENDERERS)}")
    return render(build_export(view, runs, corpora, classes, measures, control=control,
                               layout=layout, caption=caption, label=label, columns=columns,
                               tie_test=tie_test, db_path=db_path),
                  fmt)

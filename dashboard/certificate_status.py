"""A stored certificate's live status from what the warehouse holds (no files).

``harness.certificates.status`` decides valid / degenerate / expired / alarm; this module
feeds it the fingerprint of the current run (its stored metrics.json) and the bad events
of that run's calibration records as stored (migration 006 keeps their candidate scores),
in the order the run wrote them: by (corpus, query_id).  The caller picks the current run
and its records within one view (:func:`warehouse.queries.certificate_monitoring`), so a
publishable status is computed from tier-A runs only.
"""

from __future__ import annotations

import json
from typing import Mapping

from harness.certificates.data import CalibrationRow
from harness.certificates.fingerprint import fingerprint_from_metrics
from harness.certificates.status import bad_events, status

NO_RUN = "monitor not replayed: no run of this arm is stored (in this view)"
NOT_CERTIFIED = "monitor not run: nothing usable was certified"
NO_RECORDS = "monitor not replayed: the run recorded no calibration data"
NO_SCORES = ("monitor not replayed: the run was ingested before the warehouse kept "
             "calibration scores (migration 006); ingest its results into a new warehouse")


def _missing(value) -> bool:
    """None, NaN or pandas' NA (a NULL the warehouse returned); a list is never missing."""
    if value is None:
        return True
    if isinstance(value, (list, tuple)) or hasattr(value, "__len__") and not isinstance(value, str):
        return False
    import pandas as pd

    return bool(pd.isna(value))


def calibration_rows(frame) -> list | None:
    """``CalibrationRow``s from stored calibration records (a DataFrame with scores,
    relevant, first_relevant_rank ...), or None when any record lacks its scores."""

    rows = []
    for r in frame.itertuples(index=False):
        if _missing(r.scores) or _missing(r.relevant):
            return None
        rank = None if _missing(r.first_relevant_rank) else int(r.first_relevant_rank)
        cls = None if _missing(r.query_class) else str(r.query_class)
        rows.append(CalibrationRow(str(r.corpus), str(r.tier), str(r.query_id), cls,
                                   str(r.stage), tuple(float(x) for x in r.scores),
                                   tuple(bool(x) for x in r.relevant), rank))
    return rows


def live_status(row: Mapping, calibration=None) -> dict:
    """``{state, why, monitor, changes}`` of one :func:`warehouse.queries.certificates` row;
    ``calibration``: the stored calibration records of its current run (or None)."""
    doc = json.loads(row["document"])
    metrics = row.get("current_metrics")
    current = None if _missing(metrics) else fingerprint_from_metrics(json.loads(metrics))
    outcomes, note = None, NO_RUN
    if current is not None:
        if doc.get("status") != "valid":
            note = NOT_CERTIFIED
        elif calibration is None or len(calibration) == 0:
            note = NO_RECORDS
        else:
            rows = calibration_rows(calibration)
            if rows is None:
                note = NO_SCORES
            else:
                outcomes = bad_events(doc, rows)
                note = f"monitor replayed on {len(outcomes)} queries of the current run"
    result = status(doc, current, outcomes=outcomes)
    return {"state": result.state, "why": result.reason, "monitor": note,
            "changes": [c._asdict() for c in result.changes]}


def certificate_statuses(certs, calibration):
    """``certs`` (``warehouse.queries.certificate_monitoring``) with each one's live status:
    ``state`` (valid / degenerate / expired / alarm), ``why``, ``monitor`` (what the monitor
    was replayed on, or why not) and ``changes`` (fingerprint differences, a list of dicts).
    Expiry is judged against the newest run of the same arm visible in the view; the
    monitor is replayed on that run's calibration scores as the warehouse stored them."""
    by_run = {rid: part for rid, part in calibration.groupby("run_id", sort=True)}
    statuses = [live_status(row, by_run.get(row["current_run_id"]))
                for _, row in certs.iterrows()]
    certs = certs.copy()
    for name in ("state", "why", "monitor", "changes"):
        certs[name] = [s[name] for s in statuses]
    return certs


def why_text(state: str, why: str) -> str:
    """``why`` without the state it opens with (``status`` writes "valid: fingerprint
    unchanged", and a degenerate certificate's own reason may repeat "degenerate: "), so a
    page that shows the state beside it does not say it twice."""
    text = str(why).strip()
    while state and text.lower().startswith(state.lower()):
        text = text[len(state):].lstrip(":;, ").strip()
    return text or "no further detail"


def _promise_key(row) -> str:
    if row["type"] == "coverage":
        return f"α {row['alpha']:g}" if not _missing(row.get("alpha")) else "coverage"
    parts = [f"target {row['target']:g}" if not _missing(row.get("target")) else "",
             f"δ {row['delta']:g}" if not _missing(row.get("delta")) else ""]
    return " ".join(p for p in parts if p) or str(row["type"])


def certificate_names(certs, arm_of: Mapping[str, str]) -> list[str]:
    """A readable, unique name per certificate: the arm it was calibrated on (control names
    of its source runs, via ``arm_of``: run id -> control name), its corpus, its type and
    promise (``hybrid-rrf-60 · qmsum · coverage α 0.1``); when two still read alike, the
    issue date and then a short id tell them apart."""
    base = []
    for _, row in certs.iterrows():
        arms = sorted({arm_of.get(r, str(r)[:12]) for r in (row["source_runs"] or [])})
        base.append(f"{', '.join(arms) or 'unknown arm'} · {row['corpus']} · {row['type']} "
                    f"{_promise_key(row)}")
    counts = {n: base.count(n) for n in base}
    names = []
    for name, (_, row) in zip(base, certs.iterrows()):
        if counts[name] > 1:
            name += f" · issued {row['ingested_at']:%Y-%m-%d %H:%M}"
        names.append(name)
    counts = {n: names.count(n) for n in names}
    return [n if counts[n] == 1 else f"{n} · {row['certificate_id'][:8]}"
            for n, (_, row) in zip(names, certs.iterrows())]

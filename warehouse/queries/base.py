"""What every query shares: the tier views, the allow-listed relations they read, the
filters, and how a run is named (its id, a unique id prefix of 6+ characters, or a unique
control name).

Views: ``publishable`` reads only rows whose tier is A and whose every contributing corpus
is recorded as tier A for that run (a run's corpora share one index, so a tier-B corpus
withholds every row of its run); ``internal`` reads everything.  The relation a view reads
for a table follows from the table's name: ``<table>_publishable`` under ``publishable``
(every stored table has one, migration 007 adds ``runs_publishable`` and
``corpora_publishable``); the tables are those the claims declare (:mod:`harness.claims`),
so the only identifiers put into SQL text are derived from code, never from input.
"""

from __future__ import annotations

from harness.claims import ALL_KINDS
from warehouse.db import Connection
from warehouse.errors import UnknownRun


VIEWS = ("publishable", "internal")
#: every table a view can read: what the claims store, and the runs they come from
#: the judging tables (migration 012, :mod:`warehouse.judging`) are not a claim's
JUDGING_TABLES = ("judging_tasks", "task_pairs", "task_texts", "label_batches", "judgments")
TABLES: frozenset[str] = frozenset({"runs", *(t for kind in ALL_KINDS for t in kind.TABLES),
                                    *JUDGING_TABLES})


def relation(view: str, table: str) -> str:
    """The relation ``view`` reads for ``table`` (both allow-listed)."""
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r}; expected one of {sorted(VIEWS)}")
    if table not in TABLES:
        raise ValueError(f"unknown table {table!r}; expected one of {sorted(TABLES)}")
    return table if view == "internal" else f"{table}_publishable"


_FILTERS = {
    "runs": "list_contains(?::VARCHAR[], {a}.run_id)",
    "corpora": "list_contains(?::VARCHAR[], {a}.corpus)",
    "classes": "list_contains(?::VARCHAR[], {a}.query_class)",
    "measures": "list_contains(?::VARCHAR[], {a}.measure)",
    "arm_runs": "list_contains(?::VARCHAR[], {a}.arm_run_id)",
    "answerers": "list_contains(?::VARCHAR[], {a}.answerer)",
}


MIN_PREFIX = 6


PERCENTILES = (0.5, 0.95, 0.99)


def as_list(values) -> list[str] | None:
    """A filter value as a list of strings; None (or empty) means no filter."""
    if values is None:
        return None
    if isinstance(values, str):
        values = [values]
    values = [str(v) for v in values]
    return values or None


def _where(alias: str, **filters) -> tuple[str, list]:
    """`` AND ...`` clauses for the given filters (constant text) and their parameters."""
    clauses, params = [], []
    for name, values in filters.items():
        values = as_list(values)
        if values is None:
            continue
        clauses.append(_FILTERS[name].format(a=alias))
        params.append(values)
    return "".join(f" AND {c}" for c in clauses), params


def resolve_runs(conn: Connection, refs) -> list[str] | None:
    """Full run ids for run references (id, unique id prefix, unique control name)."""
    refs = as_list(refs)
    if refs is None:
        return None
    known = conn.query_all("SELECT run_id, control_name FROM runs ORDER BY created_at, run_id")
    out: list[str] = []
    for ref in refs:
        hits = [r for r, _ in known if r == ref]
        if not hits:
            hits = [r for r, name in known if name == ref]
        if not hits and len(ref) >= MIN_PREFIX:
            hits = [r for r, _ in known if r.startswith(ref)]
        if not hits:
            names = sorted({name for _, name in known})
            raise UnknownRun(f"no run {ref!r} in {conn.path}; control names: {names[:20]}"
                             + (" ..." if len(names) > 20 else ""))
        if len(hits) > 1:
            raise UnknownRun(f"{ref!r} names {len(hits)} runs ({[h[:12] for h in hits]}); "
                             "give a run id")
        if hits[0] not in out:
            out.append(hits[0])
    return out


def _one_run(conn: Connection, ref) -> str:
    if ref is None or isinstance(ref, (list, tuple)):
        raise UnknownRun(f"expected one run reference, got {ref!r}")
    return resolve_runs(conn, [ref])[0]

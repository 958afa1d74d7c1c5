"""``harness.warehouse(path)``: the warehouse's named read-only queries, as DataFrames.

Every method calls a function of :mod:`warehouse.queries` (which opens the file read-only
for one query and closes it), under a tier view: ``publishable`` by default (tier-A rows of
runs whose every corpus is tier A), ``internal`` for everything.  Nothing here writes, and
nothing is imported until a query runs.
"""

from __future__ import annotations

from pathlib import Path

#: the tier views (``warehouse.queries.VIEWS``)
VIEWS = ("publishable", "internal")
DEFAULT_VIEW = "publishable"


def _check_view(view: str) -> str:
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r}; expected one of {sorted(VIEWS)}")
    return view


class Warehouse:
    """Read-only queries over one warehouse file in one tier view (:func:`warehouse`)."""

    def __init__(self, path=None, view: str = DEFAULT_VIEW):
        self.path = None if path is None else Path(path)
        self.view = _check_view(view)

    def _view(self, view: str | None) -> str:
        return self.view if view is None else _check_view(view)

    def runs(self, *, view: str | None = None):
        """The runs the view shows, oldest first: configuration and provenance."""
        from warehouse import queries

        return queries.runs(view=self._view(view), db_path=self.path)

    def metric_rows(self, runs=None, corpora=None, classes=None, measures=None, *,
                    intervals: bool = False, view: str | None = None):
        """Metric rows, one per run x corpus x class x measure (``runs``: ids, id
        prefixes or control names); ``intervals=True`` adds the stored interval."""
        from warehouse import queries

        query = queries.metric_intervals if intervals else queries.metric_table
        return query(self._view(view), runs, corpora, classes, measures, db_path=self.path)

    def per_query(self, run, measures=None, corpora=None, classes=None, *,
                  view: str | None = None):
        """One run's per-query values (corpus, tier, class, query_id, measure, value)."""
        from warehouse import queries

        return queries.per_query_values(run, self._view(view), measures, corpora, classes,
                                        db_path=self.path)

    def comparisons(self, control_run=None, runs=None, corpora=None, classes=None,
                    measures=None, *, view: str | None = None):
        """The stored paired tests (newest per control x arm x slice x measure)."""
        from warehouse import queries

        return queries.comparisons(self._view(view), control_run, runs, corpora, classes,
                                   measures, db_path=self.path)

    def deltas(self, control_run, runs=None, corpora=None, classes=None, measures=None, *,
               view: str | None = None):
        """Each run's rows against the control's, with comparability and stored tests."""
        from warehouse import queries

        return queries.deltas_tested(control_run, runs, self._view(view), corpora, classes,
                                     measures, db_path=self.path)

    def __repr__(self) -> str:
        where = "the default warehouse" if self.path is None else str(self.path)
        return f"<Warehouse {where} view={self.view}>"


def warehouse(path=None, view: str = DEFAULT_VIEW) -> Warehouse:
    """Read-only query helpers over the warehouse at ``path`` (default: the one the
    commands use, ``$HARNESS_WAREHOUSE`` or ``./warehouse.duckdb``), in tier view ``view``."""
    return Warehouse(path, view)

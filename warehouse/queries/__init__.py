"""Named read-only queries: what the dashboard and the exports ask the warehouse, one module
per page it serves (:mod:`.base` holds the views and filters they share).

Each public function opens the warehouse read-only, runs its query, closes, and returns a
pandas DataFrame (or plain data).  Values are bound parameters; the only identifiers put
into SQL text are derived from code (:func:`warehouse.queries.base.relation`).  Filters
that are None or empty mean "no filter".
"""

from __future__ import annotations

from warehouse.queries.base import (TABLES, VIEWS, as_list, relation, resolve_runs)
from warehouse.queries.overview import (choices, corpora, corpus_composition, health,
                                        latest_comparisons, per_query_count, runs, runs_by_corpus)
from warehouse.queries.results import (fetch_metric_intervals, fetch_metric_table, fetch_withheld,
                                       metric_intervals, metric_table, run_provenance,
                                       withheld_summary)
from warehouse.queries.compare import (comparability, comparisons, deltas, deltas_tested,
                                       fetch_deltas_tested, fetch_per_query_runs,
                                       per_query_pair, per_query_runs, per_query_values,
                                       query_texts, rankings)
from warehouse.queries.latency import (latency, latency_distribution, latency_samples)
from warehouse.queries.agreement import (agreement_arms, agreement_documents, agreement_results)
from warehouse.queries.certificates import (calibration, certificate_monitoring, certificates, ppi_results)
from warehouse.queries.answers import (answer_details, answer_runs, answer_table)
from warehouse.queries.migration import (migration_decisions)
from warehouse.queries.judging import (judging_tasks, task_judgments, task_pairs, task_text)

__all__ = [
    "TABLES",
    "VIEWS",
    "agreement_arms",
    "agreement_documents",
    "agreement_results",
    "answer_details",
    "answer_runs",
    "answer_table",
    "as_list",
    "calibration",
    "certificate_monitoring",
    "certificates",
    "choices",
    "comparability",
    "comparisons",
    "corpora",
    "corpus_composition",
    "deltas",
    "deltas_tested",
    "fetch_deltas_tested",
    "fetch_metric_intervals",
    "fetch_metric_table",
    "fetch_withheld",
    "health",
    "judging_tasks",
    "latency",
    "latency_distribution",
    "latency_samples",
    "latest_comparisons",
    "metric_intervals",
    "metric_table",
    "migration_decisions",
    "per_query_count",
    "per_query_pair",
    "per_query_values",
    "fetch_per_query_runs",
    "per_query_runs",
    "ppi_results",
    "query_texts",
    "rankings",
    "relation",
    "resolve_runs",
    "run_provenance",
    "runs",
    "runs_by_corpus",
    "task_judgments",
    "task_pairs",
    "task_text",
    "withheld_summary",
]
